//! Each mutant makes its check fail: the old alloca lowering of reference
//! constants fails `promoted_ref_return` on the virtual device with a
//! stale-frame error naming a helper, and each shape check has a mutant that
//! it catches (for `no-constant-stack-copy`, the old lowering that copied a
//! by-value constant table to the stack, `LowerOptions::copy_constant_aggregates`).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpu_harness::device::virt::{FaultKind, VirtualDevice};
use gpu_harness::device::{Device, DeviceExt, KernelArg, LaunchConfig, Program};
use gpu_harness::mutant;
use gpu_harness::shape::{self, Artifacts, ShapeCheck};

fn kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("kernel.rs")
}

fn lower(name: &str) -> mir_lower::Lowered {
    shape::stable::lower_kernel(&kernel(name), &Default::default()).unwrap()
}

/// Runs `promoted_ref_return` (one block of 32 threads, 20 values) on the
/// virtual device.
fn run_promoted(module: &device_ir::Module) -> Result<Vec<u32>, gpu_harness::device::DeviceError> {
    let mut dev = VirtualDevice::new();
    let h = dev.load(&Program::ir(module))?;
    let out = dev.zeroed::<u32>(20)?;
    dev.launch(
        h,
        "promoted_ref_return",
        LaunchConfig::linear(1, 32),
        &[KernelArg::Buffer(out), KernelArg::U64(20)],
    )?;
    dev.download::<u32>(out)
}

#[test]
fn the_alloca_lowering_fails_promoted_ref_return_with_a_stale_frame() {
    let mut l = lower("promoted_ref_return");
    // The real lowering runs, and its values are the ones the fixture promises.
    let good = run_promoted(&l.module).unwrap();
    assert_eq!(
        &good[..16],
        &[3, 4, 42, 7, 4, 9, 13, 11, 14, 99, 17, 19, 12, 20, 21, 21]
    );
    assert_eq!(&good[16..], &[1, 4, 1, 1]);

    let n = mutant::alloca_constants(&mut l.module, &l.origins);
    assert!(n >= 10, "only {n} uses rewritten");
    device_ir::verify(&l.module).unwrap();
    let e = run_promoted(&l.module).unwrap_err();
    let exec = e
        .exec()
        .unwrap_or_else(|| panic!("not a kernel fault: {e}"));
    assert_eq!(exec.kind, FaultKind::StaleFrame, "{exec}");
    assert!(
        exec.message.contains("dead frame of kernel__named"),
        "the fault should name the first helper called, kernel__named: {exec}"
    );
    assert_eq!(exec.kernel, "promoted_ref_return");
}

#[test]
fn the_alloca_lowering_leaves_other_fixtures_verified() {
    for name in [
        "array_const_identity",
        "kernel_reference_validity",
        "disjoint_slice_const_ref",
    ] {
        let mut l = lower(name);
        let n = mutant::alloca_constants(&mut l.module, &l.origins);
        assert!(n > 0, "{name}: nothing rewritten");
        device_ir::verify(&l.module).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // A fixture without reference constants has nothing to rewrite.
    let mut l = lower("saxpy");
    assert_eq!(mutant::alloca_constants(&mut l.module, &l.origins), 0);
}

fn artifacts(l: mir_lower::Lowered, name: &str) -> Option<Artifacts> {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip(name)?;
    device_ir::verify(&l.module).unwrap();
    Some(Artifacts::from_lowered(&kernel(name), l, nvvm).unwrap())
}

#[test]
fn a_helper_alloca_fails_no_helper_alloca_in_the_ir_and_the_ptx() {
    let l = lower("promoted_ref_return");
    let Some(clean) = artifacts(l, "promoted_ref_return") else {
        return;
    };
    assert_eq!(shape::no_helper_alloca(&clean.input()), vec![]);
    let mut l = lower("promoted_ref_return");
    let helper = mutant::helper_alloca(&mut l.module).unwrap();
    let Some(bad) = artifacts(l, "promoted_ref_return") else {
        return;
    };
    let failures = shape::no_helper_alloca(&bad.input());
    assert!(
        failures
            .iter()
            .all(|f| f.check == ShapeCheck::NoHelperAlloca)
    );
    assert!(
        failures.iter().any(|f| f
            .message
            .starts_with(&format!("helper {helper} has an alloca in its device IR"))),
        "{failures:?}"
    );
    // The PTX half on its own: the clean device IR with the mutant's -opt=0 PTX.
    let mut input = clean.input();
    input.ptx_o0 = &bad.ptx_o0;
    let failures = shape::no_helper_alloca(&input);
    assert!(
        failures.iter().any(|f| f.message.starts_with(&format!(
            "helper {helper} declares .local storage in the -opt=0 PTX: __local_depot"
        ))),
        "{failures:?}"
    );
}

#[test]
fn a_mutable_constant_fails_constants_read_only() {
    let mut l = lower("promoted_ref_return");
    let g = mutant::constant_mutable(&mut l.module, &l.origins).unwrap();
    let symbol = l.module.globals[g].symbol.clone();
    let Some(bad) = artifacts(l, "promoted_ref_return") else {
        return;
    };
    let failures = shape::constants_read_only(&bad.input());
    assert!(
        failures
            .iter()
            .any(|f| f.message == format!("constant global {symbol} ({g}) is mutable")),
        "{failures:?}"
    );
    assert!(
        failures.iter().any(|f| f.message.contains(&format!(
            "{symbol} is defined as `addrspace(1) global` in the NVVM IR"
        ))),
        "{failures:?}"
    );
}

#[test]
fn a_duplicated_constant_fails_constants_read_only() {
    let mut l = lower("promoted_ref_return");
    let (g, dup) = mutant::duplicate_constant(&mut l.module, &mut l.origins).unwrap();
    let (a, b) = (
        l.module.globals[g].symbol.clone(),
        l.module.globals[dup].symbol.clone(),
    );
    let Some(bad) = artifacts(l, "promoted_ref_return") else {
        return;
    };
    let failures = shape::constants_read_only(&bad.input());
    assert_eq!(
        failures
            .iter()
            .map(|f| f.message.as_str())
            .collect::<Vec<_>>(),
        vec![format!(
            "constant globals {a} and {b} hold the same allocation: one global per allocation"
        )]
    );
}

#[test]
fn a_renamed_constant_in_the_perturbed_build_fails_stable_keys() {
    let original = lower("promoted_ref_return");
    let k = kernel("promoted_ref_return");
    assert_eq!(
        shape::stable_keys_for(&original, &k, &Default::default()),
        Ok(())
    );
    let renamed = std::cell::RefCell::new(None);
    let f = shape::stable_keys_with(&original, &k, &Default::default(), &|l| {
        *renamed.borrow_mut() = mutant::rename_constant(&mut l.module, &l.origins);
    })
    .unwrap_err();
    let (old, new) = renamed.into_inner().unwrap();
    assert_eq!(f.check, ShapeCheck::StableKeys);
    assert!(
        f.message.contains(&format!("only in the original [{old}]"))
            && f.message
                .contains(&format!("only in the perturbed [{new}]")),
        "{f}"
    );
}

#[test]
fn the_perturbation_is_real() {
    let source = std::fs::read_to_string(kernel("saxpy")).unwrap();
    let p = shape::stable::perturb_source(&source);
    let first_item = p.find("pub const ZZ_PERTURB_PAIR").unwrap();
    assert!(first_item < p.find("extern \"C\" fn saxpy").unwrap());
    assert!(p.find("use crate::gpu::*;").unwrap() < first_item);
}

#[test]
fn the_copying_lowering_of_constant_tables_fails_no_constant_stack_copy() {
    let Some(clean) = artifacts(lower("lookup_table"), "lookup_table") else {
        return;
    };
    assert_eq!(shape::no_constant_stack_copy(&clean.input()), vec![]);
    // The old lowering: each by-value table copied into a stack array.
    let imported = compile_driver::import(&kernel("lookup_table"), &Default::default()).unwrap();
    let old = mir_lower::lower_with(
        &imported,
        mir_lower::LowerOptions {
            copy_constant_aggregates: true,
        },
    )
    .unwrap();
    let Some(bad) = artifacts(old, "lookup_table") else {
        return;
    };
    let failures = shape::no_constant_stack_copy(&bad.input());
    assert!(
        failures
            .iter()
            .all(|f| f.check == ShapeCheck::NoConstantStackCopy),
        "{failures:?}"
    );
    // At -opt=3 crc_step is inlined into crc32_word, so the -opt=0 PTX shows
    // both helpers' depots.
    for helper in ["kernel__crc_step", "kernel__lut_sum"] {
        for what in [
            "-byte alloca with 256 stores in its device IR",
            "bytes of .local storage (__local_depot",
        ] {
            assert!(
                failures
                    .iter()
                    .any(|f| f.message.starts_with(helper) && f.message.contains(what)),
                "{helper}, {what}: {failures:?}"
            );
        }
    }
    // The PTX half on its own: the clean device IR with the old -opt=0 PTX.
    let mut input = clean.input();
    input.ptx_o0 = &bad.ptx_o0;
    assert!(
        shape::no_constant_stack_copy(&input)
            .iter()
            .any(|f| f.message.contains("in the -opt=0 PTX")),
        "the -opt=0 PTX of the old lowering"
    );
}
