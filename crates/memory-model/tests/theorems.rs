//! Every named check of `memory-model theorems`, one test each.

use memory_model::checks;

/// Runs one named check and fails with its full report when it does not hold.
fn holds(name: &str) {
    let check = checks::by_name(name).unwrap_or_else(|| panic!("no check named {name}"));
    let report = checks::run(&check);
    assert!(report.holds, "check {name} fails:\n{report}");
    assert!(
        report.explored > 0,
        "check {name} explored nothing:\n{report}"
    );
}

macro_rules! theorems {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                holds($name);
            }
        )*

        /// A check added to the registry without a test here fails this one.
        #[test]
        fn every_check_has_a_test() {
            let tested = [$($name),*];
            let registered: Vec<&str> = checks::all().iter().map(|c| c.name).collect();
            assert_eq!(registered, tested);
        }
    };
}

theorems! {
    semantics_step_agrees_with_relation => "semantics.step_agrees_with_relation",
    semantics_sc_is_latest_relaxed => "semantics.sc_is_latest_relaxed",
    mp_acq_rel_forbids_weak => "mp.acq_rel_forbids_weak",
    mp_relaxed_permits_weak => "mp.relaxed_permits_weak",
    mp_six_step_schedule => "mp.six_step_schedule",
    mp_good_weak_differ_at_5 => "mp.good_weak_differ_at_5",
    mp_four_raw_candidates => "mp.four_raw_candidates",
    mp_conditioned_good_and_weak => "mp.conditioned_good_and_weak",
    mp_condition_necessary => "mp.condition_necessary",
    mp_sc_is_latest => "mp.sc_is_latest",
    mp_legacy_barrier_inert => "mp.legacy_barrier_inert",
    reduction_unique_trace => "reduction.unique_trace",
    reduction_sum_is_36 => "reduction.sum_is_36",
    reduction_stale_read => "reduction.stale_read",
    reduction_barrier_structure => "reduction.barrier_structure",
    reduction_inclusive_legs_self_edge => "reduction.inclusive_legs_self_edge",
    reduction_pruned_equals_naive => "reduction.pruned_equals_naive",
    reduction_scaling_16_to_1024 => "reduction.scaling_16_to_1024",
}

#[test]
fn counterexamples_are_printed_as_executions() {
    for name in [
        "mp.relaxed_permits_weak",
        "mp.condition_necessary",
        "reduction.stale_read",
    ] {
        let check = checks::by_name(name).expect("registered");
        let report = checks::run(&check);
        let witness = report.witness.unwrap_or_default();
        assert!(
            witness.contains("#0"),
            "{name}: the witness lists events:\n{witness}"
        );
        assert!(
            witness.contains("rf #"),
            "{name}: the witness shows reads-from:\n{witness}"
        );
    }
    let stale = checks::run(&checks::by_name("reduction.stale_read").expect("registered"));
    assert!(
        stale.witness.unwrap_or_default().contains("offending edge"),
        "the stale read names the offending edge"
    );
}

#[test]
fn exact_candidate_counts() {
    // Pinned figures: the naive N = 8 space and the message-passing spaces.
    let counts: Vec<(String, u64)> = checks::all()
        .iter()
        .filter(|c| c.name.starts_with("reduction.unique") || c.name == "mp.four_raw_candidates")
        .map(|c| (c.name.to_string(), checks::run(c).explored))
        .collect();
    assert_eq!(
        counts,
        vec![
            ("mp.four_raw_candidates".to_string(), 4 + 3),
            ("reduction.unique_trace".to_string(), 144)
        ]
    );
}

#[test]
fn json_report_has_the_verdict_the_count_and_the_time() {
    let report = checks::run(&checks::by_name("mp.acq_rel_forbids_weak").expect("registered"));
    let json = serde_json::to_value(&report).expect("serializable");
    assert_eq!(json["verdict"], "holds");
    assert_eq!(json["explored"], 3);
    assert!(json["millis"].as_f64().is_some());
}
