//! Property: no module that the device-IR verifier accepts is rejected by libNVVM
//! (verify, PTX at -opt=0 and -opt=3) or by `ptxas`.
//!
//! Modules are generated from a seed: random globals (some breaking rules) and
//! random instruction sequences whose operands are usually, not always, of the
//! right type. The verifier must refuse the broken ones; whatever it accepts must
//! compile. A share of the cases must be accepted, or the property is vacuous.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use cranelift_entity::EntityRef;
use device_ir::*;
use proptest::prelude::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const SPACES: [AddressSpace; 5] = AddressSpace::ALL;

fn gen_module(seed: u64) -> Module {
    let mut r = Rng(seed | 1);
    let mut m = Module::new();
    // Globals.
    let n_globals = 1 + r.below(4);
    let mut spaces = Vec::new();
    for i in 0..n_globals {
        let space = if !r.chance(MISTAKE) {
            r.pick(&[
                AddressSpace::Global,
                AddressSpace::Constant,
                AddressSpace::Shared,
            ])
        } else {
            r.pick(&SPACES)
        };
        spaces.push(space);
        let size = 8 * (1 + r.below(4) as u64);
        let init = if space == AddressSpace::Shared && !r.chance(MISTAKE) {
            None
        } else {
            let mut relocations = Vec::new();
            let mut spans = Vec::new();
            for w in 0..size / 8 {
                let target = GlobalId::from_u32(r.below(i.max(1)) as u32);
                let target_ok =
                    i > 0 && (spaces[target.index()] != AddressSpace::Shared || r.chance(MISTAKE));
                if target_ok && r.chance(30) {
                    relocations.push(Relocation {
                        offset: w * 8,
                        target: target.into(),
                        addend: r.below(9) as i64,
                    });
                }
                if r.chance(20) {
                    spans.push(Span::Undef(8));
                } else {
                    spans.push(Span::Bytes(r.next().to_le_bytes().to_vec()));
                }
            }
            Some(Initializer { spans, relocations })
        };
        m.add_global(GlobalData {
            symbol: format!("g{i}"),
            space,
            mutable: space == AddressSpace::Shared || r.chance(40),
            linkage: if r.chance(50) {
                Linkage::Internal
            } else {
                Linkage::External
            },
            align: r.pick(&[1, 4, 8, 16]),
            size,
            init,
        });
    }
    // Types.
    let t = &mut m.types;
    let ints = [t.i1(), t.i8(), t.i16(), t.i32(), t.i64(), t.int(128)];
    let floats = [t.f32(), t.f64()];
    let i32t = t.i32();
    let i64t = t.i64();
    let mut ptrs = Vec::new();
    for s in SPACES {
        ptrs.push(t.ptr(i32t, s));
        ptrs.push(t.ptr(i64t, s));
    }
    let pair = t.struct_of(&[i32t, i64t]);
    let arr = t.array(i32t, 4);
    ptrs.push(t.ptr(pair, AddressSpace::Global));
    ptrs.push(t.ptr(arr, AddressSpace::Generic));

    let helper = m.declare_function(
        "helper",
        FunctionKind::Device,
        Linkage::Internal,
        Signature::new(&[i32t, i64t], Some(i32t)),
    );
    {
        let mut b = FunctionBuilder::new(&mut m, helper);
        if r.chance(50) {
            b.add_attrs(FuncAttrs::NOINLINE);
        }
        let ps = b.block_params(b.entry_block());
        let w = b.cast(CastOp::Trunc, ps[1], i32t);
        let s = b.iadd(ps[0], w);
        b.ret(Some(s));
    }
    let params = vec![ptrs[2], ptrs[1], i32t, ptrs[0]];
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::new(&params, None),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let mut pool: Vec<Value> = b.block_params(b.entry_block());
    let pools = Pools {
        ints: &ints,
        floats: &floats,
        ptrs: &ptrs,
        helper,
        n_globals,
    };
    let steps = 4 + r.below(16);
    for _ in 0..steps {
        gen_inst(&mut r, &mut b, &mut pool, &pools);
    }
    // Sometimes a diamond with a block parameter.
    if r.chance(40) {
        let ty = r.pick(&[i32t, i64t, floats[0], ptrs[0], pair]);
        let (a, c, join) = (b.create_block(), b.create_block(), b.create_block());
        let p = b.append_block_param(join, ty);
        let cond = pick_of(&mut r, &mut b, &pool, Some(ints[0]));
        b.brif(cond, a, &[], c, &[]);
        b.switch_to_block(a);
        let x = pick_of(&mut r, &mut b, &pool, Some(ty));
        b.jump(join, &[x]);
        b.switch_to_block(c);
        let y = pick_of(&mut r, &mut b, &pool, Some(ty));
        b.jump(join, &[y]);
        b.switch_to_block(join);
        pool.push(p);
        for _ in 0..r.below(4) {
            gen_inst(&mut r, &mut b, &mut pool, &pools);
        }
    }
    b.ret(None);
    m
}

/// A value of type `want` (from the pool, or a new constant) — or, with a small
/// probability, any value from the pool: a deliberate mistake.
fn pick_of(r: &mut Rng, b: &mut FunctionBuilder<'_>, pool: &[Value], want: Option<Ty>) -> Value {
    let Some(want) = want.filter(|_| !r.chance(MISTAKE)) else {
        return r.pick(pool);
    };
    let matching: Vec<Value> = pool
        .iter()
        .copied()
        .filter(|&v| b.value_ty(v) == want)
        .collect();
    if !matching.is_empty() && r.chance(80) {
        return r.pick(&matching);
    }
    let kind = b.types().kind(want).clone();
    match kind {
        TyKind::Int(_) => b.iconst(want, r.next() as i64 as i128),
        TyKind::F32 => b.f32const(f32::from_bits(r.next() as u32)),
        TyKind::F64 => b.f64const(f64::from_bits(r.next())),
        TyKind::Ptr { .. } if !matching.is_empty() => r.pick(&matching),
        TyKind::Ptr { .. } => b.null(want),
        _ => b.undef(want),
    }
}

/// Percent chance of each deliberate mistake.
const MISTAKE: u64 = 2;

/// A (from, to) pair that `op` accepts, or a random pair by mistake.
fn cast_types(
    r: &mut Rng,
    op: CastOp,
    ints: &[Ty],
    floats: &[Ty],
    ptrs: &[Ty],
    t: &Types,
) -> (Ty, Ty) {
    let all: Vec<Ty> = ints.iter().chain(floats).chain(ptrs).copied().collect();
    if r.chance(MISTAKE) {
        return (r.pick(&all), r.pick(&all));
    }
    let bits = |ty: Ty| t.int_bits(ty).unwrap_or(0);
    let narrow_ints: Vec<Ty> = ints.iter().copied().filter(|&i| bits(i) < 128).collect();
    match op {
        CastOp::Trunc | CastOp::ZExt | CastOp::SExt => loop {
            let (a, c) = (r.pick(ints), r.pick(ints));
            if bits(a) > bits(c) {
                return if op == CastOp::Trunc { (a, c) } else { (c, a) };
            }
        },
        CastOp::FpTrunc => (floats[1], floats[0]),
        CastOp::FpExt => (floats[0], floats[1]),
        CastOp::FpToUi | CastOp::FpToSi => (r.pick(floats), r.pick(&narrow_ints)),
        CastOp::UiToFp | CastOp::SiToFp => (r.pick(&narrow_ints), r.pick(floats)),
        CastOp::PtrToInt => (r.pick(ptrs), r.pick(ints)),
        CastOp::IntToPtr => (r.pick(ints), r.pick(ptrs)),
        CastOp::Bitcast => match r.below(3) {
            0 => (ints[3], floats[0]),
            1 => (floats[1], ints[4]),
            _ => {
                let a = r.pick(ptrs);
                let same: Vec<Ty> = ptrs
                    .iter()
                    .copied()
                    .filter(|&p| t.ptr_parts(p).map(|x| x.1) == t.ptr_parts(a).map(|x| x.1))
                    .collect();
                (a, r.pick(&same))
            }
        },
        CastOp::AddrSpaceCast => {
            let a = r.pick(ptrs);
            let (pointee, space) = t.ptr_parts(a).unwrap();
            let other: Vec<Ty> = ptrs
                .iter()
                .copied()
                .filter(|&p| {
                    let (q, s) = t.ptr_parts(p).unwrap();
                    q == pointee
                        && s != space
                        && (s == AddressSpace::Generic || space == AddressSpace::Generic)
                })
                .collect();
            if other.is_empty() {
                (a, a)
            } else {
                (a, r.pick(&other))
            }
        }
    }
}

struct Pools<'a> {
    ints: &'a [Ty],
    floats: &'a [Ty],
    ptrs: &'a [Ty],
    helper: FuncId,
    n_globals: usize,
}

fn gen_inst(r: &mut Rng, b: &mut FunctionBuilder<'_>, pool: &mut Vec<Value>, p: &Pools<'_>) {
    let (ints, floats, ptrs) = (p.ints, p.floats, p.ptrs);
    let i32t = ints[3];
    let i64t = ints[4];
    let i1t = ints[0];
    // Pointers to i32/i64 that atomics and stores accept.
    let atomic_ptrs: Vec<Ty> = ptrs
        .iter()
        .copied()
        .filter(|&q| {
            let (pt, s) = b.types().ptr_parts(q).unwrap();
            (pt == i32t || pt == i64t)
                && matches!(
                    s,
                    AddressSpace::Generic | AddressSpace::Global | AddressSpace::Shared
                )
        })
        .collect();
    let load_orderings = [Ordering::Relaxed, Ordering::Acquire, Ordering::SeqCst];
    let store_orderings = [Ordering::Relaxed, Ordering::Release, Ordering::SeqCst];
    let all_orderings = [
        Ordering::Relaxed,
        Ordering::Acquire,
        Ordering::Release,
        Ordering::AcqRel,
        Ordering::SeqCst,
    ];
    let scopes = [Scope::Cta, Scope::Gpu, Scope::Sys];
    let v: Option<Value> = match r.below(20) {
        0 => {
            let g = GlobalId::from_u32(r.below(p.n_globals) as u32);
            let pointee = r.pick(&[i32t, i64t]);
            Some(b.global_addr(g, pointee))
        }
        1 => Some(b.alloca(r.pick(&[i32t, i64t]))),
        2 | 3 => {
            let want = r.pick(ptrs);
            let q = pick_of(r, b, pool, Some(want));
            let pt = b.value_ty(q);
            let ty = b.types().ptr_parts(pt).map_or(i32t, |(t, _)| t);
            Some(b.load(ty, q))
        }
        4 => {
            let want = r.pick(&atomic_ptrs);
            let q = pick_of(r, b, pool, Some(want));
            let pt = b.value_ty(q);
            let pointee = b.types().ptr_parts(pt).map(|(t, _)| t);
            let v = pick_of(r, b, pool, pointee);
            b.store(v, q);
            None
        }
        5 => {
            let want = r.pick(ptrs);
            let q = pick_of(r, b, pool, Some(want));
            let idx_ty = r.pick(&[i64t, i32t, ints[2]]);
            let idx = pick_of(r, b, pool, Some(idx_ty));
            Some(b.gep(q, &[GepIndex::Value(idx)]))
        }
        6 => {
            let want = r.pick(ptrs);
            let q = pick_of(r, b, pool, Some(want));
            let off = pick_of(r, b, pool, Some(i64t));
            Some(b.byte_offset(q, off))
        }
        7 | 8 => {
            let op = r.pick(&CastOp::ALL);
            let (from, to) = cast_types(r, op, ints, floats, ptrs, b.types());
            let v = pick_of(r, b, pool, Some(from));
            Some(b.cast(op, v, to))
        }
        9 | 10 => {
            let op = r.pick(&BinaryOp::ALL);
            let ty = if op.is_float() {
                r.pick(floats)
            } else {
                r.pick(ints)
            };
            let x = pick_of(r, b, pool, Some(ty));
            let y = pick_of(r, b, pool, Some(ty));
            Some(b.binary(op, x, y))
        }
        11 => {
            let ty = r.pick(floats);
            let x = pick_of(r, b, pool, Some(ty));
            Some(b.unary(UnaryOp::FNeg, x))
        }
        12 => {
            if r.chance(50) {
                let ty = if r.chance(70) {
                    r.pick(ints)
                } else {
                    r.pick(ptrs)
                };
                let x = pick_of(r, b, pool, Some(ty));
                let y = pick_of(r, b, pool, Some(ty));
                Some(b.icmp(r.pick(&IntCC::ALL), x, y))
            } else {
                let ty = r.pick(floats);
                let x = pick_of(r, b, pool, Some(ty));
                let y = pick_of(r, b, pool, Some(ty));
                Some(b.fcmp(r.pick(&FloatCC::ALL), x, y))
            }
        }
        13 => {
            let c = pick_of(r, b, pool, Some(i1t));
            let x = r.pick(pool);
            let xt = b.value_ty(x);
            let y = pick_of(r, b, pool, Some(xt));
            Some(b.select(c, x, y))
        }
        14 => {
            let a = pick_of(r, b, pool, Some(i32t));
            let c = pick_of(r, b, pool, Some(i64t));
            b.call(p.helper, &[a, c])
        }
        15 => Some(b.special_reg(r.pick(&SpecialReg::ALL))),
        16 => {
            if r.chance(50) {
                b.barrier();
            } else {
                let o = r.pick(&all_orderings[1..]);
                b.fence(o, r.pick(&scopes));
            }
            None
        }
        17 => {
            let want = r.pick(&atomic_ptrs);
            let q = pick_of(r, b, pool, Some(want));
            let pt = b.value_ty(q);
            let ty = b.types().ptr_parts(pt).map_or(i32t, |(t, _)| t);
            Some(b.atomic_load(ty, q, r.pick(&load_orderings), r.pick(&scopes)))
        }
        18 => {
            let want = r.pick(&atomic_ptrs);
            let q = pick_of(r, b, pool, Some(want));
            let pt = b.value_ty(q);
            let pointee = b.types().ptr_parts(pt).map(|(t, _)| t);
            let v = pick_of(r, b, pool, pointee);
            match r.below(3) {
                0 => {
                    b.atomic_store(v, q, r.pick(&store_orderings), r.pick(&scopes));
                    None
                }
                1 => {
                    let op = r.pick(&RmwOp::ALL[..]);
                    let op = if op == RmwOp::FAdd && !r.chance(MISTAKE) {
                        RmwOp::Add
                    } else {
                        op
                    };
                    Some(b.atomic_rmw(op, q, v, r.pick(&all_orderings), r.pick(&scopes)))
                }
                _ => {
                    let w = pick_of(r, b, pool, pointee);
                    Some(b.atomic_cas(q, v, w, r.pick(&all_orderings), r.pick(&scopes)))
                }
            }
        }
        _ => {
            let side = r.chance(50);
            match r.below(6) {
                0 => {
                    let x = pick_of(r, b, pool, Some(i32t));
                    b.inline_asm("add.s32 $0, $1, 1;", "=r,r", &[x], Some(i32t), side)
                }
                1 => {
                    let want = r.pick(ptrs);
                    let x = pick_of(r, b, pool, Some(want));
                    b.inline_asm("mov.b64 $0, $1;", "=l,l", &[x], Some(i64t), side)
                }
                2 => {
                    let x = pick_of(r, b, pool, Some(floats[0]));
                    b.inline_asm(
                        "mov.f32 $0, $1;",
                        "=f,f,~{memory}",
                        &[x],
                        Some(floats[0]),
                        side,
                    )
                }
                3 => {
                    let x = pick_of(r, b, pool, Some(floats[1]));
                    b.inline_asm("mov.f64 $0, $1;", "=d,d", &[x], Some(floats[1]), side)
                }
                4 => {
                    let x = pick_of(r, b, pool, Some(ints[2]));
                    b.inline_asm("mov.b16 $0, $1;", "=h,h", &[x], Some(ints[2]), side)
                }
                _ => {
                    let x = pick_of(r, b, pool, Some(i32t));
                    let k = b.iconst(i32t, 5);
                    b.inline_asm("add.s32 $0, $1, $2;", "=r,r,n", &[x, k], Some(i32t), side)
                }
            }
        }
    };
    if let Some(v) = v {
        pool.push(v);
    }
}

static ACCEPTED: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicUsize = AtomicUsize::new(0);

#[test]
fn verified_modules_compile() {
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("verified_modules_compile") else {
        return;
    };
    let ptxas = nvvm_emit::testing::ptxas_or_skip("verified_modules_compile");
    let config = ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&any::<u64>(), |seed| {
        let module = gen_module(seed);
        if device_ir::verify(&module).is_err() {
            REFUSED.fetch_add(1, AtomicOrdering::Relaxed);
            return Ok(());
        }
        ACCEPTED.fetch_add(1, AtomicOrdering::Relaxed);
        let ir = nvvm_emit::print_module(&module);
        let fail = |what: &str, e: &dyn std::fmt::Display| -> TestCaseError {
            TestCaseError::fail(format!(
                "seed {seed}: the verifier accepted a module that {what} refused:\n{e}\n{ir}"
            ))
        };
        nvvm.verify(&ir).map_err(|e| fail("libNVVM verify", &e))?;
        for opt in [0, 3] {
            let ptx = nvvm
                .compile(&ir, &nvvm_emit::CompileOptions::ptx(90, opt))
                .map_err(|e| fail("libNVVM compile", &e))?;
            if let Some(ptxas) = ptxas {
                ptxas.assemble(&ptx, 90).map_err(|e| fail("ptxas", &e))?;
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (ok, bad) = (
        ACCEPTED.load(AtomicOrdering::Relaxed),
        REFUSED.load(AtomicOrdering::Relaxed),
    );
    assert!(
        ok > 0,
        "no generated module was accepted ({bad} refused): the property is vacuous"
    );
}

#[test]
fn generator_produces_both_kinds() {
    let (mut ok, mut bad) = (0, 0);
    for seed in 0..400u64 {
        if device_ir::verify(&gen_module(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))).is_ok() {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    eprintln!("generator: {ok} accepted, {bad} refused of 400");
    assert!(ok >= 40 && bad >= 40, "{ok} accepted, {bad} refused");
}

/// `SEED=... cargo test -p nvvm-emit --test verifier_soundness replay -- --ignored --nocapture`
#[test]
#[ignore]
fn replay() {
    let seed: u64 = std::env::var("SEED").unwrap().parse().unwrap();
    let module = gen_module(seed);
    eprintln!("{module}");
    eprintln!(
        "verify: {:?}",
        device_ir::verify(&module).map_err(|e| e.to_string())
    );
    let ir = nvvm_emit::print_module(&module);
    eprintln!("{ir}");
    let nvvm = nvvm_emit::Libnvvm::load().unwrap();
    for opt in [0, 3] {
        match nvvm.compile(&ir, &nvvm_emit::CompileOptions::ptx(90, opt)) {
            Ok(_) => eprintln!("-opt={opt}: ok"),
            Err(e) => eprintln!("-opt={opt}: {e}"),
        }
    }
}
