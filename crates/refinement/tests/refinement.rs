//! The refinement check on fixtures, and mutants of their PTX that it must
//! catch. Needs libNVVM (the PTX is the pipeline's, at -opt=3): NOT RUN
//! without it under a bare `cargo test`, a failure under `bash ci/test.sh`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use refinement::mutate::Mutant;
use refinement::{Check, Options, Verdict, check_ptx, compile_fixture, launch};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// Each fixture compiled once for the whole test binary.
fn compiled(fixture: &str) -> Option<&'static (mir_import::Crate, String)> {
    type Cache = Mutex<BTreeMap<String, &'static (mir_import::Crate, String)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    nvvm_emit::testing::libnvvm_or_skip(&format!("refinement {fixture}"))?;
    let cache = CACHE.get_or_init(Cache::default);
    let mut map = cache.lock().expect("no test panicked while compiling");
    let entry = map.entry(fixture.to_string()).or_insert_with(|| {
        let built = compile_fixture(&root().join(fixture)).expect("the fixture compiles");
        Box::leak(Box::new(built))
    });
    Some(*entry)
}

fn check(fixture: &str, mutant: Option<Mutant>) -> Option<Check> {
    let (krate, ptx) = compiled(fixture)?;
    let ptx = match mutant {
        Some(m) => m.apply(ptx).expect("the mutant applies"),
        None => ptx.clone(),
    };
    let launch = launch::launch(fixture, None).expect("a known launch");
    Some(check_ptx(krate, &ptx, &launch, &Options::default()).expect("a verdict"))
}

fn outcome_text(check: &Check) -> String {
    check.render()
}

#[test]
fn atomic_flag_refines_with_the_payload_delivered() {
    let Some(check) = check("atomic_flag", None) else {
        return;
    };
    assert!(check.refines(), "{}", outcome_text(&check));
    let compiled = check.compiled.as_ref().expect("the compiled side ran");
    // Every terminating compiled execution delivers the payload.
    assert_eq!(compiled.outcomes.len(), 1, "{}", outcome_text(&check));
    let only = compiled.outcomes.keys().next().unwrap();
    assert_eq!(only.get("out[0]"), Some(&0x1234_5678));
    assert_eq!(only.get("out[1]"), Some(&1));
    assert!(
        compiled.pruned > 0,
        "the axioms rejected nothing: {compiled}"
    );
}

#[test]
fn shared_reduction_has_the_single_outcome_36() {
    let Some(check) = check("shared_reduction", None) else {
        return;
    };
    assert!(check.refines(), "{}", outcome_text(&check));
    let compiled = check.compiled.as_ref().expect("the compiled side ran");
    let outcomes: Vec<_> = compiled.outcomes.keys().collect();
    assert_eq!(outcomes.len(), 1, "{}", outcome_text(&check));
    assert_eq!(outcomes[0].get("out[0]"), Some(&36));
    let source = check.source.outcomes.as_ref().expect("race-free");
    assert_eq!(source.len(), 1);
}

/// A mutant must be caught with a printed execution that reaches an outcome
/// the source does not have.
fn caught(fixture: &str, mutant: Mutant) -> Option<(refinement::Final, String)> {
    let check = check(fixture, Some(mutant))?;
    match &check.verdict {
        Verdict::NotRefined { outcome, execution } => {
            let text = check.render();
            assert!(text.contains("NOT REFINED"), "{text}");
            assert!(
                execution.contains("rf "),
                "the execution prints rf: {execution}"
            );
            Some((outcome.clone(), execution.clone()))
        }
        other => panic!(
            "{fixture} with `{mutant}` was not caught: {other:?}\n{}",
            check.render()
        ),
    }
}

#[test]
fn a_weakened_acquire_load_is_caught() {
    let Some((outcome, _)) = caught("atomic_flag", Mutant::AcquireToRelaxed) else {
        return;
    };
    // The receiver saw the flag but not the payload.
    assert_eq!(outcome.get("out[1]"), Some(&1), "{outcome:?}");
    assert_eq!(outcome.get("out[0]"), Some(&0), "{outcome:?}");
}

#[test]
fn a_weakened_release_store_is_caught() {
    let Some((outcome, _)) = caught("atomic_flag", Mutant::ReleaseToRelaxed) else {
        return;
    };
    assert_eq!(outcome.get("out[0]"), Some(&0), "{outcome:?}");
}

#[test]
fn each_removed_barrier_of_the_reduction_is_caught() {
    // The last barrier orders only the final read of sums[0] by thread 0,
    // after its own last write: removing it changes nothing, and the check
    // must say so rather than invent a counterexample.
    for n in 0..3 {
        let Some((outcome, _)) = caught("shared_reduction", Mutant::DropBarrier(n)) else {
            return;
        };
        assert_ne!(
            outcome.get("out[0]"),
            Some(&36),
            "bar.sync #{n}: {outcome:?}"
        );
    }
    let Some(check) = check("shared_reduction", Some(Mutant::DropBarrier(3))) else {
        return;
    };
    assert!(check.refines(), "{}", check.render());
}

#[test]
fn narrowing_scopes_inside_one_cta_is_still_correct() {
    // Both threads of atomic_flag are in one CTA: `.cta` scope suffices.
    let Some(check) = check("atomic_flag", Some(Mutant::NarrowScope)) else {
        return;
    };
    assert!(check.refines(), "{}", check.render());
}

#[test]
fn the_spin_lock_across_two_ctas_counts_exactly() {
    let Some(check) = check("spin_lock", None) else {
        return;
    };
    assert!(check.refines(), "{}", check.render());
    let compiled = check.compiled.as_ref().expect("the compiled side ran");
    let counts: Vec<_> = compiled.outcomes.keys().map(|o| o["counter[0]"]).collect();
    assert_eq!(counts, [2], "{}", check.render());
    // The source's lock is a bounded loop of compare-exchanges, not a first
    // test: no run where a thread gives up and skips its increment.
    let source = check.source.outcomes.as_ref().expect("race-free");
    assert!(
        source.iter().all(|o| o["counter[0]"] == 2),
        "{}",
        check.render()
    );
}

#[test]
fn the_lock_narrowed_to_cta_scope_across_ctas_is_caught() {
    // `.cta` acquire and release do not order the two CTAs' increments: one
    // is lost.
    let Some((outcome, _)) = caught("spin_lock", Mutant::NarrowScope) else {
        return;
    };
    assert_eq!(outcome.get("counter[0]"), Some(&1), "{outcome:?}");
}

#[test]
fn every_known_kernel_refines_with_outcomes_on_both_sides() {
    for fixture in launch::KERNELS {
        let Some(check) = check(fixture, None) else {
            return;
        };
        assert!(check.refines(), "{}", check.render());
        let compiled = check.compiled.as_ref().expect("the compiled side ran");
        let source = check.source.outcomes.as_ref().expect("race-free");
        assert!(
            !compiled.outcomes.is_empty() && !source.is_empty(),
            "{}",
            check.render()
        );
        assert!(!compiled.stopped, "{}", check.render());
    }
}

#[test]
fn the_new_kernels_reach_their_one_outcome() {
    for (fixture, location, value) in [
        ("mp_across_ctas", "out[0]", 0xC0FF_EE00),
        ("ticket_lock", "counter[0]", 2),
        ("spsc_ring", "out[2]", 12),
        ("atomic_slice_histogram", "bins[1]", 2),
    ] {
        let Some(check) = check(fixture, None) else {
            return;
        };
        let compiled = check.compiled.as_ref().expect("the compiled side ran");
        let values: Vec<i64> = compiled.outcomes.keys().map(|o| o[location]).collect();
        assert_eq!(values, [value], "{fixture}: {}", check.render());
    }
}

#[test]
fn message_passing_narrowed_to_cta_scope_across_ctas_is_caught() {
    let Some((outcome, _)) = caught("mp_across_ctas", Mutant::NarrowScope) else {
        return;
    };
    assert_eq!(outcome.get("out[0]"), Some(&0), "{outcome:?}");
}

#[test]
fn a_racy_source_fails_the_premise_and_is_not_checked() {
    let Some(check) = check("race_message_passing", None) else {
        return;
    };
    let Verdict::Racy { race } = &check.verdict else {
        panic!("not reported as racy: {}", check.render());
    };
    assert!(
        check.compiled.is_none(),
        "the refinement must not be checked"
    );
    assert!(race.contains("data race on data"), "{race}");
    assert!(race.matches("<- race").count() == 2, "{race}");
    let text = check.render();
    assert!(
        text.contains("premise fails") && text.contains("not checked"),
        "{text}"
    );
}
