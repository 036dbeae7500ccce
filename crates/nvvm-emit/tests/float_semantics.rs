//! Rust's float semantics survive libNVVM: the options every caller gets
//! ([`CompileOptions::ptx`], [`CompileOptions::ltoir`], the default) keep a
//! separate `fmul` and `fadd` separate, keep subnormals, and round `/` and
//! `sqrt` correctly. Each check is paired with the same module compiled with
//! the one option flipped, which must make the check fail; otherwise the check
//! would prove nothing.
//!
//! The PTX is read instruction by instruction ([`opcodes`]), never searched as
//! one string, so a symbol or comment cannot satisfy or break a check.
//!
//! Like every libNVVM test in this crate, these print NOT RUN when libNVVM is
//! missing, and fail instead under `REQUIRE_LIBNVVM=1` (`bash ci/test.sh`).

#![allow(clippy::unwrap_used)]

// The snapshot tests' module builders; only their helpers are used here.
#[allow(unused_imports)]
mod modules;

use device_ir::*;
use modules::{kernel, params, store_at};
use nvvm_emit::{CompileOptions, FloatSemantics, Libnvvm, Stage, print_module, testing};

const ARCH: u32 = 90;

/// The opcode (first word) of every instruction in `ptx`. An instruction is a
/// line that ends in `;` once any `//` comment is cut off and that is not a
/// directive (`.reg`, `.param`, ...); a guard predicate (`@%p1`) is dropped.
fn opcodes(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| l.ends_with(';') && !l.starts_with('.'))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let first = words.next()?;
            if first.starts_with('@') {
                words.next()
            } else {
                Some(first)
            }
        })
        .map(|op| op.trim_end_matches(';'))
        .collect()
}

/// Whether some instruction's opcode is exactly `op`.
fn has(ptx: &str, op: &str) -> bool {
    opcodes(ptx).contains(&op)
}

/// Instructions whose opcode starts with `prefix`.
fn starting_with<'a>(ptx: &'a str, prefix: &str) -> Vec<&'a str> {
    opcodes(ptx)
        .into_iter()
        .filter(|op| op.starts_with(prefix))
        .collect()
}

/// Float `mul`, `add` and `sub` instructions without an explicit rounding
/// modifier. PTX lets the code generator (ptxas, or the driver's JIT) fuse
/// such a `mul` with an `add` into an FMA, so they are as bad as an `fma.`:
/// only `.rn` pins two roundings.
fn unrounded_mul_add(ptx: &str) -> Vec<&str> {
    opcodes(ptx)
        .into_iter()
        .filter(|op| {
            let mut parts = op.split('.');
            let base = parts.next().unwrap_or("");
            let rest: Vec<&str> = parts.collect();
            matches!(base, "mul" | "add" | "sub")
                && rest.last().is_some_and(|t| *t == "f32" || *t == "f64")
                && !rest.iter().any(|m| matches!(*m, "rn" | "rz" | "rm" | "rp"))
        })
        .collect()
}

fn compile(nvvm: &Libnvvm, test: &str, ir: &str, options: &CompileOptions) -> String {
    let bytes = nvvm.compile(ir, options).unwrap_or_else(|e| {
        panic!(
            "{test}: libNVVM {:?} failed:\n{e}\n--- NVVM IR ---\n{ir}",
            options.to_args()
        )
    });
    String::from_utf8(bytes).unwrap()
}

/// Verifies `module` with the device-IR verifier, prints it, and runs it
/// through [`testing::check_nvvm`] (libNVVM verify, PTX at `-opt=3` and
/// `-opt=0`, LTO IR, `ptxas` when present), all with the default options.
/// `None` when libNVVM is missing and not required.
fn printed(test: &str, module: &Module) -> Option<(&'static Libnvvm, String)> {
    if let Err(e) = device_ir::verify(module) {
        panic!("{test}: the verifier refused the module:\n{e}\n{module}");
    }
    let ir = print_module(module);
    testing::check_nvvm(test, &ir, ARCH)?;
    Some((testing::libnvvm_or_skip(test)?, ir))
}

/// `out_f[0] = a * x + y` in f32 and `out_d[0] = ad * xd + yd` in f64: an
/// `fmul` whose only use is an `fadd`, exactly what `-fma=1` contracts. The
/// operands are kernel parameters, so nothing folds.
fn mul_then_add() -> Module {
    let mut m = Module::new();
    let (f32t, f64t) = (m.types.f32(), m.types.f64());
    let out_f = m.types.ptr(f32t, AddressSpace::Global);
    let out_d = m.types.ptr(f64t, AddressSpace::Global);
    let k = kernel(
        &mut m,
        "mul_then_add",
        &[out_f, out_d, f32t, f32t, f32t, f64t, f64t, f64t],
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b);
    for (out, a, x, y) in [(p[0], p[2], p[3], p[4]), (p[1], p[5], p[6], p[7])] {
        let prod = b.binary(BinaryOp::FMul, a, x);
        let sum = b.binary(BinaryOp::FAdd, prod, y);
        store_at(&mut b, out, 0, sum);
    }
    b.ret(None);
    m
}

/// `out_f[0] = x / y` in f32 and `out_d[0] = xd / yd` in f64.
fn division() -> Module {
    let mut m = Module::new();
    let (f32t, f64t) = (m.types.f32(), m.types.f64());
    let out_f = m.types.ptr(f32t, AddressSpace::Global);
    let out_d = m.types.ptr(f64t, AddressSpace::Global);
    let k = kernel(&mut m, "division", &[out_f, out_d, f32t, f32t, f64t, f64t]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b);
    for (out, x, y) in [(p[0], p[2], p[3]), (p[1], p[4], p[5])] {
        let q = b.binary(BinaryOp::FDiv, x, y);
        store_at(&mut b, out, 0, q);
    }
    b.ret(None);
    m
}

/// Every f32 float operator of the device IR (each binary operator, `fneg`,
/// every comparison), on kernel parameters, each result stored: the module
/// the `.ftz` check reads.
fn f32_ops() -> Module {
    let mut m = Module::new();
    let f32t = m.types.f32();
    let i32t = m.types.i32();
    let out = m.types.ptr(f32t, AddressSpace::Global);
    let flags = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "f32_ops", &[out, flags, f32t, f32t]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b);
    let (x, y) = (p[2], p[3]);
    let mut slot = 0;
    for op in BinaryOp::ALL.into_iter().filter(|op| op.is_float()) {
        let r = b.binary(op, x, y);
        store_at(&mut b, p[0], slot, r);
        slot += 1;
    }
    let n = b.unary(UnaryOp::FNeg, x);
    store_at(&mut b, p[0], slot, n);
    for (i, cc) in FloatCC::ALL.into_iter().enumerate() {
        let c = b.fcmp(cc, x, y);
        let wide = b.cast(CastOp::ZExt, c, i32t);
        store_at(&mut b, p[1], i as i64, wide);
    }
    b.ret(None);
    m
}

/// Hand-written NVVM IR: the device IR has no square root yet, so this module
/// calls both forms a lowering of `f32::sqrt` could use. `llvm.nvvm.sqrt.f` is
/// the form `-prec-sqrt` governs; `llvm.sqrt.f32` is LLVM's generic one (this
/// libNVVM makes `sqrt.rn.f32` of it under either setting, but the check does
/// not rely on that). An f64 root rides along.
fn sqrt_ir() -> String {
    format!(
        "target datalayout = \"{}\"\ntarget triple = \"{}\"\n{SQRT_BODY}",
        device_ir::layout::DATALAYOUT,
        nvvm_emit::TRIPLE
    )
}

const SQRT_BODY: &str = r#"
declare float @llvm.nvvm.sqrt.f(float)
declare float @llvm.sqrt.f32(float)
declare double @llvm.sqrt.f64(double)

define void @roots(float addrspace(1)* %out, double addrspace(1)* %out_d, float %x, double %xd) {
entry:
  %a = call float @llvm.nvvm.sqrt.f(float %x)
  store float %a, float addrspace(1)* %out, align 4
  %b = call float @llvm.sqrt.f32(float %x)
  %p1 = getelementptr inbounds float, float addrspace(1)* %out, i64 1
  store float %b, float addrspace(1)* %p1, align 4
  %d = call double @llvm.sqrt.f64(double %xd)
  store double %d, double addrspace(1)* %out_d, align 8
  ret void
}

!nvvm.annotations = !{!1}
!1 = !{void (float addrspace(1)*, double addrspace(1)*, float, double)* @roots, !"kernel", i32 1}
!nvvmir.version = !{!0}
!0 = !{i32 2, i32 0}
"#;

#[test]
fn mul_then_add_is_never_contracted() {
    let test = "mul_then_add_is_never_contracted";
    let Some((nvvm, ir)) = printed(test, &mul_then_add()) else {
        return;
    };
    // Every opt level a caller uses, through the constructors callers use.
    for opt in [3, 0] {
        let ptx = compile(nvvm, test, &ir, &CompileOptions::ptx(ARCH, opt));
        let fused = starting_with(&ptx, "fma.");
        assert!(fused.is_empty(), "-opt={opt}: contracted: {fused:?}\n{ptx}");
        let loose = unrounded_mul_add(&ptx);
        assert!(
            loose.is_empty(),
            "-opt={opt}: mul/add without .rn, which ptxas may fuse: {loose:?}\n{ptx}"
        );
        for op in ["mul.rn.f32", "add.rn.f32", "mul.rn.f64", "add.rn.f64"] {
            assert!(has(&ptx, op), "-opt={opt}: no {op}\n{ptx}");
        }
    }
}

#[test]
fn forcing_fma_back_on_contracts() {
    // The counterpart: with libNVVM's own default (-fma=1) the checks above fail,
    // at -opt=3 by an explicit fma, at -opt=0 by a mul.f32 that ptxas may fuse.
    let test = "forcing_fma_back_on_contracts";
    let Some((nvvm, ir)) = printed(test, &mul_then_add()) else {
        return;
    };
    let ptx = compile(
        nvvm,
        test,
        &ir,
        &CompileOptions::ptx(ARCH, 3).with_fma(true),
    );
    for op in ["fma.rn.f32", "fma.rn.f64"] {
        assert!(has(&ptx, op), "-fma=1 -opt=3: no {op}\n{ptx}");
    }
    assert!(!has(&ptx, "mul.rn.f32"), "{ptx}");
    let ptx0 = compile(
        nvvm,
        test,
        &ir,
        &CompileOptions::ptx(ARCH, 0).with_fma(true),
    );
    let loose = unrounded_mul_add(&ptx0);
    assert!(
        loose.contains(&"mul.f32") && loose.contains(&"add.f32"),
        "-fma=1 -opt=0: expected unrounded mul.f32/add.f32, got {loose:?}\n{ptx0}"
    );
}

#[test]
fn f32_division_is_correctly_rounded() {
    let test = "f32_division_is_correctly_rounded";
    let Some((nvvm, ir)) = printed(test, &division()) else {
        return;
    };
    for opt in [3, 0] {
        let ptx = compile(nvvm, test, &ir, &CompileOptions::ptx(ARCH, opt));
        assert_eq!(
            starting_with(&ptx, "div."),
            ["div.rn.f32", "div.rn.f64"],
            "-opt={opt}\n{ptx}"
        );
        let rcp = starting_with(&ptx, "rcp.");
        assert!(rcp.is_empty(), "-opt={opt}: reciprocal {rcp:?}\n{ptx}");
    }
    // The counterpart: -prec-div=0 makes the f32 division approximate.
    let ptx = compile(
        nvvm,
        test,
        &ir,
        &CompileOptions::ptx(ARCH, 3).with_prec_div(false),
    );
    let divs = starting_with(&ptx, "div.");
    assert!(
        !divs.contains(&"div.rn.f32")
            && divs
                .iter()
                .any(|d| d.starts_with("div.full.") || d.starts_with("div.approx.")),
        "-prec-div=0: expected an approximate f32 division, got {divs:?}\n{ptx}"
    );
}

#[test]
fn f32_sqrt_is_correctly_rounded() {
    let test = "f32_sqrt_is_correctly_rounded";
    let Some(nvvm) = testing::libnvvm_or_skip(test) else {
        return;
    };
    let sqrt_ir = sqrt_ir();
    testing::check_nvvm(test, &sqrt_ir, ARCH);
    for opt in [3, 0] {
        let ptx = compile(nvvm, test, &sqrt_ir, &CompileOptions::ptx(ARCH, opt));
        assert_eq!(
            starting_with(&ptx, "sqrt."),
            ["sqrt.rn.f32", "sqrt.rn.f32", "sqrt.rn.f64"],
            "-opt={opt}\n{ptx}"
        );
    }
    // The counterpart: -prec-sqrt=0 makes llvm.nvvm.sqrt.f approximate.
    let ptx = compile(
        nvvm,
        test,
        &sqrt_ir,
        &CompileOptions::ptx(ARCH, 3).with_prec_sqrt(false),
    );
    assert!(
        has(&ptx, "sqrt.approx.f32"),
        "-prec-sqrt=0: no sqrt.approx.f32\n{ptx}"
    );
}

#[test]
fn f32_arithmetic_keeps_subnormals() {
    let test = "f32_arithmetic_keeps_subnormals";
    let Some((nvvm, ops_ir)) = printed(test, &f32_ops()) else {
        return;
    };
    let ftz = |ptx: &str| -> Vec<String> {
        opcodes(ptx)
            .into_iter()
            .filter(|op| op.split('.').any(|m| m == "ftz"))
            .map(str::to_owned)
            .collect()
    };
    let sqrt_ir = sqrt_ir();
    for ir in [ops_ir.as_str(), sqrt_ir.as_str()] {
        for opt in [3, 0] {
            let ptx = compile(nvvm, test, ir, &CompileOptions::ptx(ARCH, opt));
            assert!(
                opcodes(&ptx).iter().any(|op| op.ends_with(".f32")),
                "-opt={opt}: no f32 instruction to inspect\n{ptx}"
            );
            let flushed = ftz(&ptx);
            assert!(flushed.is_empty(), "-opt={opt}: {flushed:?}\n{ptx}");
        }
        // The counterpart: -ftz=1 puts .ftz on the f32 instructions.
        let ptx = compile(nvvm, test, ir, &CompileOptions::ptx(ARCH, 3).with_ftz(true));
        assert!(!ftz(&ptx).is_empty(), "-ftz=1: no .ftz instruction\n{ptx}");
    }
}

#[test]
fn every_f32_op_is_rounded_and_unfused() {
    // The whole f32 operator set (frem included, which libNVVM expands into a
    // multiply and a subtract) obeys the no-contraction rule too.
    let test = "every_f32_op_is_rounded_and_unfused";
    let Some((nvvm, ir)) = printed(test, &f32_ops()) else {
        return;
    };
    for opt in [3, 0] {
        let ptx = compile(nvvm, test, &ir, &CompileOptions::ptx(ARCH, opt));
        let fused = starting_with(&ptx, "fma.");
        assert!(fused.is_empty(), "-opt={opt}: {fused:?}\n{ptx}");
        let loose = unrounded_mul_add(&ptx);
        assert!(loose.is_empty(), "-opt={opt}: {loose:?}\n{ptx}");
    }
    let ptx = compile(
        nvvm,
        test,
        &ir,
        &CompileOptions::ptx(ARCH, 3).with_fma(true),
    );
    assert!(
        !unrounded_mul_add(&ptx).is_empty() || !starting_with(&ptx, "fma.").is_empty(),
        "-fma=1: expected a fusible or fused multiply-add\n{ptx}"
    );
}

#[test]
fn extra_cannot_override_a_float_option() {
    // `extra` is passed after the float options; libNVVM refuses a repeated
    // option rather than letting the last one win, so `extra` can never undo
    // Rust's semantics silently.
    let test = "extra_cannot_override_a_float_option";
    let Some(nvvm) = testing::libnvvm_or_skip(test) else {
        return;
    };
    let ir = print_module(&mul_then_add());
    for (extra, name) in [
        ("-fma=1", "-fma"),
        ("-ftz=1", "-ftz"),
        ("-prec-div=0", "-prec-div"),
        ("-prec-sqrt=0", "-prec-sqrt"),
    ] {
        let options = CompileOptions {
            extra: vec![extra.to_owned()],
            ..CompileOptions::ptx(ARCH, 3)
        };
        let e = nvvm
            .compile(&ir, &options)
            .expect_err("a repeated float option was accepted");
        assert_eq!(e.stage, Stage::Compile, "{e}");
        assert!(e.log.contains(name), "{extra}: {e}");
    }
}

#[test]
fn ltoir_does_not_record_the_float_options() {
    // LTO IR comes out byte-identical under every float setting: the options
    // take effect when nvJitLink generates code, so whoever links our LTO IR
    // must pass `FloatSemantics::RUST.to_args()` to the linker. If this starts
    // failing, libNVVM began recording them: update the crate docs.
    let test = "ltoir_does_not_record_the_float_options";
    let Some((nvvm, ir)) = printed(test, &mul_then_add()) else {
        return;
    };
    let rust = nvvm.compile(&ir, &CompileOptions::ltoir(ARCH, 3)).unwrap();
    let lax = FloatSemantics {
        fma: true,
        ftz: true,
        prec_div: false,
        prec_sqrt: false,
    };
    let other = nvvm
        .compile(&ir, &CompileOptions::ltoir(ARCH, 3).with_float(lax))
        .unwrap();
    assert!(!rust.is_empty());
    assert_eq!(
        rust, other,
        "LTO IR now depends on the float options; revise the LTO note in the crate docs"
    );
}

#[test]
fn opcodes_reads_instructions_only() {
    let ptx = "//\n.visible .entry k(\n\t.param .f32 k_param_0\n)\n{\n\t.reg .f32 %f<3>;\n$L__BB0_1:\n\t@%p1 bra $L__BB0_2;\n\tfma.rn.f32 \t%f1, %f2, %f3, %f4;\n\tmul.f32 %f1, %f2, %f3;\n\t// fma.rn.f32 in a comment\n\tret;\n}\n";
    assert_eq!(opcodes(ptx), ["bra", "fma.rn.f32", "mul.f32", "ret"]);
    assert_eq!(unrounded_mul_add(ptx), ["mul.f32"]);
    assert!(
        unrounded_mul_add("\tmul.rn.f32 %f1, %f2, %f3;\n\tmul.lo.s32 %r1, %r2, %r3;\n").is_empty()
    );
}
