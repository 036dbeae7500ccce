//! Compare-exchange and `mem::swap` lowering (issue: refused real kernels):
//! the CAS carries the ordering strong enough for both of Rust's orderings,
//! at system scope, and a swap is two loads and two crosswise stores.

use std::path::Path;

use device_ir::{InstData, Module, Ordering, Scope};

fn lowered() -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/cas_orderings.rs");
    let imp = mir_import::import_and_evaluate(&path, &Default::default(), true)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match mir_lower::lower(&imp) {
        Ok(l) => l.module,
        Err(d) => panic!("{d}"),
    }
}

/// The instructions of the device function for `kernel::<name>`.
fn insts(m: &Module, name: &str) -> Vec<InstData> {
    let f = m
        .function_by_name(&format!("kernel__{name}"))
        .unwrap_or_else(|| panic!("no function {name}"));
    let body = m.functions[f].body.as_ref().expect("a body");
    body.insts.values().cloned().collect()
}

/// The (ordering, scope) of each compare-and-swap in `name`.
fn cas_orderings(m: &Module, name: &str) -> Vec<(Ordering, Scope)> {
    insts(m, name)
        .iter()
        .filter_map(|i| match i {
            InstData::AtomicCas {
                ordering, scope, ..
            } => Some((*ordering, *scope)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_cas_is_as_strong_as_its_success_and_failure_orderings() {
    let m = lowered();
    assert_eq!(
        cas_orderings(&m, "acq_relaxed"),
        [(Ordering::Acquire, Scope::Sys)]
    );
    assert_eq!(
        cas_orderings(&m, "rel_acq"),
        [(Ordering::AcqRel, Scope::Sys)]
    );
    assert_eq!(
        cas_orderings(&m, "relaxed_seqcst_weak"),
        [(Ordering::SeqCst, Scope::Sys)]
    );
}

#[test]
fn a_swap_is_loads_then_crosswise_stores() {
    let m = lowered();
    let count = |name: &str| {
        let is = insts(&m, name);
        let loads = is
            .iter()
            .filter(|i| matches!(i, InstData::Load { .. }))
            .count();
        let stores = is
            .iter()
            .filter(|i| matches!(i, InstData::Store { .. }))
            .count();
        let allocas = is
            .iter()
            .filter(|i| matches!(i, InstData::Alloca { .. }))
            .count();
        (loads, stores, allocas)
    };
    assert_eq!(count("swap_scalar"), (2, 2, 0));
    // `[u32; 3]`: three 4-byte chunks, no stack slot.
    assert_eq!(count("swap_triple"), (6, 6, 0));
}
