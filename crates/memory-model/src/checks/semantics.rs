//! Whole-semantics checks over the corpus.

use std::collections::HashSet;

use super::{Check, Outcome};
use crate::event::{Event, Who};
use crate::lang::Program;
use crate::litmus;
use crate::machine::{self, ScState};
use crate::relaxed::{self, Search};

/// The checks of this group.
pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "semantics.step_agrees_with_relation",
            statement: "on every state reachable in every corpus program, the executable step function and \
                        the relational semantics give the same successors, both ways",
            run: step_agrees_with_relation,
        },
        Check {
            name: "semantics.sc_is_latest_relaxed",
            statement: "in every corpus program, the sequentially consistent run under the canonical schedule \
                        is the relaxed run that picks the latest stores",
            run: sc_is_latest_relaxed,
        },
    ]
}

/// The successors the step function gives, for every actor.
pub fn step_successors(program: &Program, state: &ScState) -> Vec<(Who, Event, ScState)> {
    state
        .actors()
        .filter_map(|who| state.step(program, who).map(|(e, s)| (who, e, s)))
        .collect()
}

/// Successors of a state under some transition function.
pub type Successors = dyn Fn(&Program, &ScState) -> Vec<(Who, Event, ScState)>;

/// Compares the two semantics on every reachable state of `program`.
/// Returns the number of states and the first disagreement, if any.
pub fn agreement(program: &Program) -> (machine::Reachable, Option<String>) {
    agreement_with(program, &step_successors)
}

/// Compares `step` (the executable semantics, or a mutant of it in the tests)
/// with the relational semantics on every state the relation reaches.
pub fn agreement_with(
    program: &Program,
    step: &Successors,
) -> (machine::Reachable, Option<String>) {
    let mut first = None;
    let stats = machine::reachable(program, |state, relational| {
        if first.is_some() {
            return;
        }
        let functional = step(program, state);
        if functional.as_slice() == relational {
            return; // the common case: same successors, in the same order
        }
        let rel: HashSet<&(Who, Event, ScState)> = relational.iter().collect();
        let fun: HashSet<&(Who, Event, ScState)> = functional.iter().collect();
        let missing_in_step = rel.difference(&fun).count();
        let missing_in_relation = fun.difference(&rel).count();
        if missing_in_step + missing_in_relation > 0 || rel.len() != relational.len() {
            first = Some(format!(
                "{}: {} successor(s) only in the relation, {} only in the step function, {} duplicate \
                 derivation(s), at {state:?}",
                program.name,
                missing_in_step,
                missing_in_relation,
                relational.len() - rel.len()
            ));
        }
    });
    (stats, first)
}

fn step_agrees_with_relation() -> Outcome {
    let mut o = Outcome::new();
    for program in litmus::corpus() {
        let (stats, disagreement) = agreement(&program);
        o.explored(stats.states);
        o.require(
            disagreement.is_none(),
            format!(
                "{}: {} states, {} transitions, {} finished, {} stuck",
                program.name, stats.states, stats.transitions, stats.finished, stats.stuck
            ),
        );
        if let Some(d) = disagreement {
            o.witness(d);
        }
    }
    o
}

fn sc_is_latest_relaxed() -> Outcome {
    let mut o = Outcome::new();
    for program in litmus::corpus() {
        let sc = machine::run_canonical(&program);
        let (latest, stats) = relaxed::candidates(&program, Search::Latest);
        o.explored(stats.complete + 1);
        match (sc, latest.as_slice()) {
            (Some(run), [one]) => o.require(
                run.exec == one.exec,
                format!(
                    "{}: one run of {} events, same trace and reads-from",
                    program.name,
                    run.exec.len()
                ),
            ),
            (None, []) => o.require(
                true,
                format!(
                    "{}: both stuck (a deadlock or a load with nothing to read)",
                    program.name
                ),
            ),
            (sc, latest) => o.require(
                false,
                format!(
                    "{}: SC run {}, {} latest-store candidate(s)",
                    program.name,
                    if sc.is_some() { "completed" } else { "stuck" },
                    latest.len()
                ),
            ),
        }
    }
    o
}
