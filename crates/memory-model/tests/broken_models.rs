//! Deliberately broken models and semantics: each must make a check fail.
//! A check that cannot fail proves nothing.

use memory_model::checks::reduction::compare_searches;
use memory_model::checks::semantics::{agreement, agreement_with};
use memory_model::checks::{mp, reduction};
use memory_model::consistency::{BarrierLegs, Variant};
use memory_model::event::{Event, Who};
use memory_model::lang::Program;
use memory_model::litmus::{self, DATA, FLAG, MpReader, MpSync};
use memory_model::machine::ScState;
use memory_model::relaxed::{self, Search};
use memory_model::thread;

#[test]
fn removing_synchronizes_with_breaks_acquire_release_message_passing() {
    let sound = mp::acq_rel_forbids_weak(&Variant::REFERENCE_SUBSET);
    assert!(sound.holds, "{:?}", sound.details);
    let broken = mp::acq_rel_forbids_weak(&Variant::NO_SW);
    assert!(
        !broken.holds,
        "without synchronizes-with the weak outcome must be consistent: {:?}",
        broken.details
    );
    let witness = broken
        .witness
        .expect("the failing check prints the weak execution");
    assert!(
        witness.contains("flag -> 1") && witness.contains("data -> 0"),
        "{witness}"
    );
}

#[test]
fn pruned_search_under_the_broken_model_finds_the_weak_outcome() {
    let program = litmus::message_passing(MpSync::AcquireRelease, MpReader::Conditional);
    let weak = |model: Variant| {
        let (cands, _) = relaxed::candidates(&program, Search::Pruned(model));
        cands.iter().any(|c| {
            c.exec.reads(Who::Thread(1), FLAG) == [1] && c.exec.reads(Who::Thread(1), DATA) == [0]
        })
    };
    assert!(!weak(Variant::REFERENCE_SUBSET));
    assert!(weak(Variant::NO_SW));
}

#[test]
fn removing_barrier_edges_breaks_the_reduction() {
    let program = litmus::tree_reduction(8);
    let no_bar = Variant {
        barrier_legs: BarrierLegs::None,
        ..Variant::REFERENCE_SUBSET
    };
    let (cands, _) = relaxed::candidates(&program, Search::Pruned(no_bar));
    let sums: std::collections::BTreeSet<Option<u32>> = cands
        .iter()
        .map(|c| c.exec.final_value(reduction::SH0))
        .collect();
    assert!(
        cands.len() > 1,
        "without barrier edges stale reads are consistent"
    );
    assert!(sums.len() > 1 && sums.contains(&Some(36)), "{sums:?}");
    // The pruned search and the reference predicate still agree on the broken model.
    let (ok, naive, pruned, _) = compare_searches(&program, &no_bar);
    assert!(ok && naive == pruned && naive > 1, "{naive} vs {pruned}");
}

#[test]
fn comparing_searches_detects_a_different_set() {
    // Naive-filtered under one model against pruned under another: the
    // comparison must notice.
    let program = litmus::message_passing(MpSync::AcquireRelease, MpReader::Conditional);
    let (all, _) = relaxed::candidates(&program, Search::Naive);
    let filtered = all
        .iter()
        .filter(|c| memory_model::consistency::consistent(&c.exec, &Variant::NO_SW))
        .count();
    let (pruned, _) = relaxed::candidates(&program, Search::Pruned(Variant::REFERENCE_SUBSET));
    assert_ne!(filtered, pruned.len());
}

/// The executable step function with the barrier premise dropped.
fn step_ignoring_barriers(program: &Program, state: &ScState) -> Vec<(Who, Event, ScState)> {
    let mut out = Vec::new();
    for who in state.actors() {
        match who {
            Who::Init => out.extend(state.step(program, who).map(|(e, s)| (who, e, s))),
            Who::Thread(t) => {
                if !state.initialized(program) {
                    continue;
                }
                let ts = &state.threads[t as usize];
                if let Some((action, after)) =
                    thread::step(program, t, ts, |loc, ty| state.read(loc, ty))
                {
                    let mut next = state.clone();
                    next.threads[t as usize] = std::rc::Rc::new(after);
                    if let memory_model::event::Action::Store { .. } = action {
                        // Re-run the real step for the memory update.
                        let (_, real) = state.step(program, who).expect("stores always step");
                        next = real;
                    }
                    out.push((who, Event { who, action }, next));
                }
            }
        }
    }
    out
}

#[test]
fn the_agreement_check_catches_a_step_function_without_the_barrier_premise() {
    let program = litmus::tree_reduction(2);
    assert!(agreement(&program).1.is_none());
    let (_, disagreement) = agreement_with(&program, &step_ignoring_barriers);
    let text =
        disagreement.expect("a thread passing a closed barrier is a successor the relation lacks");
    assert!(text.contains("only in the step function"), "{text}");
}

#[test]
fn inclusive_legs_reject_every_reduction() {
    for n in [2, 4, 8] {
        let (cands, stats) = relaxed::candidates(
            &litmus::tree_reduction(n),
            Search::Pruned(Variant::INCLUSIVE_BARRIERS),
        );
        assert!(cands.is_empty() && stats.rejected > 0, "N = {n}");
    }
}
