//! Snapshot tests of the printed NVVM IR for hand-built modules. Each module also
//! passes the device-IR verifier and, when libNVVM is present, libNVVM verify,
//! PTX at -opt=3 and -opt=0, LTO IR, and `ptxas -arch=sm_90`.
//!
//! To accept new output: `INSTA_UPDATE=always cargo test -p nvvm-emit`, then review
//! and commit the `.snap` files.

mod modules;

use device_ir::Module;
use nvvm_emit::print_module;

/// Verifies, prints (twice, to check determinism), snapshots and compiles.
fn check(name: &str, build: fn() -> Module) -> Option<nvvm_emit::testing::NvvmOutputs> {
    let module = build();
    if let Err(e) = device_ir::verify(&module) {
        panic!("{name}: the verifier refused the module:\n{e}\n{module}");
    }
    let ir = print_module(&module);
    assert_eq!(
        ir,
        print_module(&build()),
        "{name}: printing is not deterministic"
    );
    insta::assert_snapshot!(name, ir);
    nvvm_emit::testing::check_nvvm(name, &ir, 90)
}

macro_rules! snapshot_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), modules::$name);
            }
        )*
        /// Every module, for the tests below.
        const ALL: &[(&str, fn() -> Module)] = &[$((stringify!($name), modules::$name)),*];
    };
}

snapshot_tests!(
    minimal_kernel,
    special_registers,
    integer_arith,
    float_arith,
    casts,
    control_flow,
    calls_and_recursion,
    function_addresses,
    memory_spaces,
    gep_and_byte_offsets,
    byval_param,
    aggregates,
    nested_relocations,
    function_table,
    typed_views,
    constant_space,
    mutable_statics,
    identifiers_and_linkage,
    shared_barrier,
    atomics,
    message_passing,
    inline_asm,
    warp_collectives,
    warp_reductions,
    convergent_helpers,
    dynamic_shared,
    math_functions,
    int_functions,
);

#[test]
fn host_written_constant() {
    let Some(out) = check("host_written_constant", modules::host_written_constant) else {
        return;
    };
    // Both reads survive -opt=3 as constant-space loads of the symbol the
    // host writes (`cuModuleGetGlobal` finds it by that name).
    assert!(
        out.ptx.contains(".visible .const .align 4 .b8 bank[8]"),
        "{}",
        out.ptx
    );
    assert_eq!(out.ptx.matches("ld.const.u32").count(), 2, "{}", out.ptx);
}

#[test]
fn noinline_helpers() {
    let Some(out) = check("noinline_helpers", modules::noinline_helpers) else {
        return;
    };
    // At -opt=0 the helpers survive as functions; at -opt=3 libNVVM may fold them.
    for helper in ["get_pair", "get_second", "sum_pair"] {
        assert!(
            out.ptx_opt0
                .contains(&format!(".func  (.param .b64 func_retval0) {helper}("))
                || out.ptx_opt0.contains(&format!("{helper}(")),
            "{helper} missing from the -opt=0 PTX:\n{}",
            out.ptx_opt0
        );
    }
    assert!(
        out.ptx.contains("pair_3_4"),
        "the constant global is missing:\n{}",
        out.ptx
    );
}

/// A device function that runs a collective, itself or through a call,
/// is `convergent` (so LLVM moves no call of it under another branch);
/// others and kernels are not.
#[test]
fn collective_helpers_are_convergent() {
    let ir = print_module(&modules::convergent_helpers());
    let define = |name: &str| {
        ir.lines()
            .find(|l| l.starts_with("define") && l.contains(&format!("@{name}(")))
            .unwrap_or_else(|| panic!("no definition of {name}:\n{ir}"))
            .to_owned()
    };
    for name in ["sync_then_read", "lane_broadcast", "outer"] {
        assert!(
            define(name).contains(") convergent noinline {"),
            "{}",
            define(name)
        );
    }
    for name in ["plain_add", "collectives"] {
        assert!(!define(name).contains("convergent"), "{}", define(name));
    }
}

/// Dynamic shared memory is one `extern` shared array of the module, at
/// the largest alignment any use asks for; its uses are its start.
#[test]
fn dynamic_shared_memory_is_one_extern_shared_array() {
    let ir = print_module(&modules::dynamic_shared());
    assert_eq!(
        ir.matches("@__dynamic_shared = external addrspace(3) global [0 x i8], align 128")
            .count(),
        1,
        "{ir}"
    );
    let Some(out) = check_quiet(modules::dynamic_shared) else {
        return;
    };
    for ptx in [&out.ptx, &out.ptx_opt0] {
        assert!(
            ptx.contains(".extern .shared .align 128 .b8 __dynamic_shared[];"),
            "{ptx}"
        );
    }
}

/// The reserved symbol cannot name a global of the module.
#[test]
fn the_dynamic_shared_symbol_is_reserved() {
    let mut m = modules::dynamic_shared();
    let g = m.globals.keys().next();
    assert!(g.is_none(), "the module has no globals of its own");
    m.add_global(device_ir::GlobalData {
        symbol: device_ir::DYNAMIC_SHARED_SYMBOL.to_owned(),
        space: device_ir::AddressSpace::Shared,
        mutable: true,
        linkage: device_ir::Linkage::Internal,
        align: 4,
        size: 4,
        init: None,
    });
    let e = device_ir::verify(&m).expect_err("a reserved symbol");
    assert!(e.to_string().contains("reserved"), "{e}");
}

#[test]
fn byval_param_is_a_param_array_read_in_place() {
    let Some(out) = check_quiet(modules::byval_param) else {
        return;
    };
    // The launch's layout of the bytes: the aggregate's alignment and size.
    assert!(
        out.ptx
            .contains(".param .align 4 .b8 byval_param_param_1[12]"),
        "{}",
        out.ptx
    );
    // Read where the launch put it, not copied to a local depot first.
    assert!(out.ptx.contains("ld.param.u32"), "{}", out.ptx);
    assert!(!out.ptx.contains(".local"), "{}", out.ptx);
}

#[test]
fn atomics_lower_to_exact_ptx() {
    let Some(out) = check_quiet(modules::message_passing) else {
        return;
    };
    assert!(out.ptx.contains("st.release.sys.global.u32"), "{}", out.ptx);
    assert!(out.ptx.contains("ld.acquire.sys.global.u32"), "{}", out.ptx);
}

#[test]
fn typed_views_share_one_symbol() {
    let ir = print_module(&modules::typed_views());
    assert_eq!(ir.matches("@opt_some_13 = ").count(), 1);
    let Some(out) = check_quiet(modules::typed_views) else {
        return;
    };
    assert_eq!(
        out.ptx_opt0
            .matches(".global .align 4 .b8 opt_some_13[8]")
            .count(),
        1,
        "{}",
        out.ptx_opt0
    );
}

#[test]
fn relocations_become_generic_addresses() {
    let Some(out) = check_quiet(modules::nested_relocations) else {
        return;
    };
    for needle in [
        "generic(leaf)+8",
        "generic(leaf)+16",
        "generic(middle)+8",
        "generic(leaf)",
    ] {
        assert!(
            out.ptx_opt0.contains(needle),
            "{needle} missing:\n{}",
            out.ptx_opt0
        );
    }
}

fn check_quiet(build: fn() -> Module) -> Option<nvvm_emit::testing::NvvmOutputs> {
    let ir = print_module(&build());
    nvvm_emit::testing::check_nvvm("ptx shape", &ir, 90)
}

#[test]
fn every_module_together_is_one_valid_module_per_arch() {
    // Older virtual architectures that still have the PTX features used (sm_70+
    // for the scoped atomics).
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("every_module_per_arch") else {
        return;
    };
    for (name, build) in ALL {
        let ir = print_module(&build());
        for arch in [70, 80, 90] {
            let opts = nvvm_emit::CompileOptions::ptx(arch, 3);
            if let Err(e) = nvvm.compile(&ir, &opts) {
                panic!("{name} for compute_{arch}: {e}");
            }
        }
    }
}

#[test]
fn libnvvm_compiles_concurrently() {
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("libnvvm_compiles_concurrently") else {
        return;
    };
    let irs: Vec<String> = ALL.iter().map(|(_, b)| print_module(&b())).collect();
    let expected: Vec<Vec<u8>> = irs
        .iter()
        .map(|ir| nvvm.compile(ir, &Default::default()).expect("compiles"))
        .collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for (ir, want) in irs.iter().zip(&expected) {
                    let got = nvvm.compile(ir, &Default::default()).expect("compiles");
                    assert_eq!(&got, want, "concurrent compiles differ");
                }
            });
        }
    });
}

/// The snapshot modules together use every instruction kind, every cast, every
/// binary operator and every address space.
#[test]
fn modules_cover_every_instruction_kind() {
    use device_ir::{AddressSpace, InstData, TyKind};
    use std::collections::BTreeSet;
    let mut kinds = BTreeSet::new();
    let mut casts = BTreeSet::new();
    let mut binops = BTreeSet::new();
    let mut spaces = BTreeSet::new();
    let mut all: Vec<fn() -> Module> = ALL.iter().map(|(_, b)| *b).collect();
    all.push(modules::noinline_helpers);
    for build in all {
        let m = build();
        for (_, kind) in m.types.iter() {
            if let TyKind::Ptr { space, .. } = kind {
                spaces.insert(space.number());
            }
        }
        for (_, f) in m.functions.iter() {
            for (_, inst) in f.body.iter().flat_map(|b| b.insts.iter()) {
                let name = match inst {
                    InstData::Iconst { .. } => "iconst",
                    InstData::Fconst { .. } => "fconst",
                    InstData::Null { .. } => "null",
                    InstData::Undef { .. } => "undef",
                    InstData::GlobalAddr { .. } => "global_addr",
                    InstData::FuncAddr { .. } => "func_addr",
                    InstData::Alloca { .. } => "alloca",
                    InstData::Load { .. } => "load",
                    InstData::Store { .. } => "store",
                    InstData::Gep { .. } => "gep",
                    InstData::ByteOffset { .. } => "byte_offset",
                    InstData::Cast { op, .. } => {
                        casts.insert(op.name());
                        "cast"
                    }
                    InstData::Binary { op, .. } => {
                        binops.insert(op.name());
                        "binary"
                    }
                    InstData::Unary { .. } => "unary",
                    InstData::Icmp { .. } => "icmp",
                    InstData::Fcmp { .. } => "fcmp",
                    InstData::Select { .. } => "select",
                    InstData::Call { .. } => "call",
                    InstData::CallIndirect { .. } => "call_indirect",
                    InstData::Jump { .. } => "jump",
                    InstData::Brif { .. } => "brif",
                    InstData::Switch { .. } => "switch",
                    InstData::Return { .. } => "return",
                    InstData::Unreachable => "unreachable",
                    InstData::SpecialReg { .. } => "sreg",
                    InstData::Barrier => "barrier",
                    InstData::AtomicLoad { .. } => "atomic_load",
                    InstData::AtomicStore { .. } => "atomic_store",
                    InstData::AtomicRmw { .. } => "atomic_rmw",
                    InstData::AtomicCas { .. } => "atomic_cas",
                    InstData::Fence { .. } => "fence",
                    InstData::InlineAsm { .. } => "inline_asm",
                    InstData::Shuffle { .. } => "shuffle",
                    InstData::Vote { .. } => "vote",
                    InstData::WarpReduce { .. } => "warp_reduce",
                    InstData::WarpMatch { .. } => "warp_match",
                    InstData::WarpSync { .. } => "warp_sync",
                    InstData::ActiveMask => "active_mask",
                    InstData::DynamicShared { .. } => "dynamic_shared",
                    InstData::Math { .. } => "math",
                    InstData::IntFn { .. } => "int_fn",
                };
                kinds.insert(name);
            }
        }
    }
    assert_eq!(kinds.len(), 41, "instruction kinds used: {kinds:?}");
    assert_eq!(
        casts.len(),
        device_ir::CastOp::ALL.len(),
        "casts used: {casts:?}"
    );
    assert_eq!(
        binops.len(),
        device_ir::BinaryOp::ALL.len(),
        "operators used: {binops:?}"
    );
    let want: BTreeSet<u32> = AddressSpace::ALL.iter().map(|s| s.number()).collect();
    assert_eq!(spaces, want);
}
