//! Prints a module of 10,000 globals and 1,000 functions, and compiles the same
//! module with libNVVM in the same run, to compare the two costs.
//!
//! `cargo bench -p nvvm-emit --bench print_vs_compile`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use device_ir::*;
use nvvm_emit::{CompileOptions, Libnvvm, print_module};

const GLOBALS: usize = 10_000;
const FUNCTIONS: usize = 1_000;

/// A deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Globals: read-only byte images with undefined padding and relocations to
/// earlier globals (some interior), mutable statics, and a few shared arrays.
/// Functions: 1 kernel per 10; the rest are device helpers that read globals
/// through typed views, loop, and call earlier helpers.
fn big_module() -> Module {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut m = Module::new();
    let mut readable = Vec::new();
    for i in 0..GLOBALS {
        if i % 500 == 499 {
            m.add_global(GlobalData {
                symbol: format!("shared_{i}"),
                space: AddressSpace::Shared,
                mutable: true,
                linkage: Linkage::Internal,
                align: 16,
                size: 1024,
                init: None,
            });
            continue;
        }
        let words = 2 + rng.below(6) as usize;
        let mut spans = Vec::new();
        let mut relocations = Vec::new();
        for w in 0..words {
            let off = (w * 8) as u64;
            if w % 3 == 1 && !readable.is_empty() {
                let (target, size): (GlobalId, u64) =
                    readable[rng.below(readable.len() as u64) as usize];
                relocations.push(Relocation {
                    offset: off,
                    target: target.into(),
                    addend: (rng.below(size / 4 + 1) * 4) as i64,
                });
                spans.push(Span::Undef(8));
            } else if w % 5 == 4 {
                spans.push(Span::Bytes(vec![rng.next() as u8; 4]));
                spans.push(Span::Undef(4));
            } else {
                spans.push(Span::Bytes(rng.next().to_le_bytes().to_vec()));
            }
        }
        let init = Initializer { spans, relocations };
        let size = init.len();
        let id = m.add_global(GlobalData {
            symbol: format!("__rcc_const_{i:05}_{:016x}", rng.next()),
            space: if i % 97 == 0 {
                AddressSpace::Constant
            } else {
                AddressSpace::Global
            },
            mutable: i % 50 == 7,
            linkage: if i % 50 == 7 {
                Linkage::External
            } else {
                Linkage::Internal
            },
            align: 8,
            size,
            init: Some(init),
        });
        readable.push((id, size));
    }
    let t = &mut m.types;
    let (i32t, i64t) = (t.i32(), t.i64());
    let out = t.ptr(i32t, AddressSpace::Global);
    let pair = t.struct_of(&[i32t, i32t]);
    let mut helpers: Vec<FuncId> = Vec::new();
    for f in 0..FUNCTIONS {
        let is_kernel = f % 10 == 9;
        let id = if is_kernel {
            m.declare_function(
                format!("kernel_{f}"),
                FunctionKind::Kernel,
                Linkage::External,
                Signature::new(&[out], None),
            )
        } else {
            m.declare_function(
                format!("helper_{f}"),
                FunctionKind::Device,
                Linkage::Internal,
                Signature::new(&[i32t], Some(i32t)),
            )
        };
        let mut b = FunctionBuilder::new(&mut m, id);
        if f % 7 == 0 && !is_kernel {
            b.add_attrs(FuncAttrs::NOINLINE);
        }
        let arg = b.block_params(b.entry_block())[0];
        let x = if is_kernel {
            b.special_reg(SpecialReg::TidX)
        } else {
            arg
        };
        let mut acc = x;
        for _ in 0..4 {
            let (g, size) = readable[rng.below(readable.len() as u64) as usize];
            let view = b.global_addr(g, pair);
            let field = b.gep(view, &[GepIndex::Const(0), GepIndex::Field(1)]);
            let v = b.load(i32t, field);
            acc = b.iadd(acc, v);
            let _ = size;
        }
        // A counted loop with block parameters.
        let head = b.create_block();
        let i = b.append_block_param(head, i32t);
        let s = b.append_block_param(head, i32t);
        let body = b.create_block();
        let exit = b.create_block();
        let zero = b.iconst(i32t, 0);
        b.jump(head, &[zero, acc]);
        b.switch_to_block(head);
        let n = b.iconst(i32t, 8);
        let more = b.icmp(IntCC::Slt, i, n);
        b.brif(more, body, &[], exit, &[]);
        b.switch_to_block(body);
        let k = b.iconst(i32t, 0x9e37);
        let mixed = b.imul(s, k);
        let s2 = b.binary(BinaryOp::Xor, mixed, i);
        let one = b.iconst(i32t, 1);
        let i2 = b.iadd(i, one);
        b.jump(head, &[i2, s2]);
        b.switch_to_block(exit);
        let mut r = s;
        for _ in 0..2 {
            if !helpers.is_empty() {
                let h = helpers[rng.below(helpers.len() as u64) as usize];
                r = b.call(h, &[r]).expect("helpers return i32");
            }
        }
        if is_kernel {
            let idx = b.cast(CastOp::ZExt, x, i64t);
            let p = b.gep(arg, &[GepIndex::Value(idx)]);
            b.store(r, p);
            b.ret(None);
        } else {
            b.ret(Some(r));
            helpers.push(id);
        }
    }
    m
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let t = Instant::now();
    let module = big_module();
    let build = t.elapsed();
    let t = Instant::now();
    if let Err(e) = verify(&module) {
        panic!("the benchmark module does not verify:\n{e}");
    }
    let verify_time = t.elapsed();

    let mut c = Criterion::default().configure_from_args().sample_size(20);
    c.bench_function("print_module/10k_globals_1k_functions", |b| {
        b.iter(|| print_module(black_box(&module)))
    });

    let mut prints = Vec::new();
    let mut ir = String::new();
    for _ in 0..11 {
        let t = Instant::now();
        ir = print_module(black_box(&module));
        prints.push(t.elapsed());
    }
    let print = median(prints);
    println!();
    println!(
        "module: {GLOBALS} globals, {FUNCTIONS} functions, {} bytes of NVVM IR",
        ir.len()
    );
    println!("build (FunctionBuilder):       {:9.1} ms", ms(build));
    println!("device-ir verify:              {:9.1} ms", ms(verify_time));
    println!("print_module (median of 11):   {:9.1} ms", ms(print));
    match Libnvvm::load() {
        Err(e) => println!("libNVVM compile: NOT RUN: {e}"),
        Ok(nvvm) => {
            let t = Instant::now();
            nvvm.verify(&ir).expect("libNVVM verify");
            let v = t.elapsed();
            println!("libNVVM verify:                {:9.1} ms", ms(v));
            for (name, opts) in [
                ("libNVVM compile PTX -opt=3:", CompileOptions::ptx(90, 3)),
                ("libNVVM compile PTX -opt=0:", CompileOptions::ptx(90, 0)),
                (
                    "libNVVM compile LTOIR -opt=3:",
                    CompileOptions::ltoir(90, 3),
                ),
            ] {
                let t = Instant::now();
                let out = nvvm.compile(&ir, &opts).expect("libNVVM compile");
                let d = t.elapsed();
                println!(
                    "{name:30} {:9.1} ms ({} bytes out; {:.0}x the print time)",
                    ms(d),
                    out.len(),
                    d.as_secs_f64() / print.as_secs_f64()
                );
            }
        }
    }
}
