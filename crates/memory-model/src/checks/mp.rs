//! Message passing: `data := 1 (relaxed); flag := 1 (release)` against
//! `r1 := flag (acquire); if r1 = 1 { r2 := data }`.

use std::collections::BTreeSet;

use super::{Check, Outcome};
use crate::consistency::{self, Variant};
use crate::event::{Action, Event, Execution, Who};
use crate::lang::{Access, BarrierKind, Program, Ty};
use crate::litmus::{self, DATA, FLAG, MpReader, MpSync};
use crate::machine;
use crate::relaxed::{self, Candidate, Search};

/// The checks of this group.
pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "mp.acq_rel_forbids_weak",
            statement: "acquire/release: no consistent execution has flag = 1, data = 0",
            run: || acq_rel_forbids_weak(&Variant::REFERENCE_SUBSET),
        },
        Check {
            name: "mp.relaxed_permits_weak",
            statement: "all relaxed: some consistent execution has flag = 1, data = 0 (printed)",
            run: relaxed_permits_weak,
        },
        Check {
            name: "mp.six_step_schedule",
            statement: "the six-step machine schedule (initializer, writer, reader) realizes exactly the good trace",
            run: six_step_schedule,
        },
        Check {
            name: "mp.good_weak_differ_at_5",
            statement: "the good and weak traces have the same program actions and differ only in the data-load \
                        value at event 5",
            run: good_weak_differ_at_5,
        },
        Check {
            name: "mp.four_raw_candidates",
            statement: "the relaxed machine yields exactly 4 raw completed candidates (flag/data 0/0, 0/1, 1/0, 1/1)",
            run: four_raw_candidates,
        },
        Check {
            name: "mp.conditioned_good_and_weak",
            statement: "conditioned on the acquire reading the release store, exactly the good and weak candidates \
                        remain, both reachable; consistency leaves only the good one",
            run: conditioned_good_and_weak,
        },
        Check {
            name: "mp.condition_necessary",
            statement: "without that condition the statement is false (counterexample printed)",
            run: condition_necessary,
        },
        Check {
            name: "mp.sc_is_latest",
            statement: "the sequentially consistent run is the relaxed run that picks the latest stores",
            run: sc_is_latest,
        },
        Check {
            name: "mp.legacy_barrier_inert",
            statement: "a legacy global barrier is inert: message passing through it permits data = 0, through \
                        the shared barrier it does not",
            run: legacy_barrier_inert,
        },
    ]
}

fn mp() -> Program {
    litmus::message_passing(MpSync::AcquireRelease, MpReader::Conditional)
}

fn store(who: Who, loc: crate::lang::Loc, val: u32, access: Access) -> Event {
    Event {
        who,
        action: Action::Store {
            loc,
            ty: Ty::U32,
            val,
            access,
        },
    }
}

fn load(who: Who, loc: crate::lang::Loc, val: u32, access: Access) -> Event {
    Event {
        who,
        action: Action::Load {
            loc,
            ty: Ty::U32,
            val,
            access,
        },
    }
}

/// The good trace of the reference, written out: events 0..=5.
pub fn good_trace() -> Vec<Event> {
    trace_with_data(1)
}

/// The weak trace: the good one with data read as 0 at event 5.
pub fn weak_trace() -> Vec<Event> {
    trace_with_data(0)
}

fn trace_with_data(data: u32) -> Vec<Event> {
    let (w, r) = (Who::Thread(0), Who::Thread(1));
    vec![
        store(Who::Init, DATA, 0, Access::Plain),
        store(Who::Init, FLAG, 0, Access::Plain),
        store(w, DATA, 1, Access::RELAXED),
        store(w, FLAG, 1, Access::RELEASE),
        load(r, FLAG, 1, Access::ACQUIRE),
        load(r, DATA, data, Access::Plain),
    ]
}

/// `flag/data` as read by T1: `1/0`, or `0/-` when data is not read.
fn outcome(exec: &Execution) -> String {
    let reader = Who::Thread(1);
    let show = |v: Vec<u32>| v.first().map_or("-".to_string(), u32::to_string);
    format!(
        "{}/{}",
        show(exec.reads(reader, FLAG)),
        show(exec.reads(reader, DATA))
    )
}

fn is_weak(exec: &Execution) -> bool {
    outcome(exec) == "1/0"
}

/// Check 1, under any model: the tests run it under a broken one too.
pub fn acq_rel_forbids_weak(model: &Variant) -> Outcome {
    let mut o = Outcome::new();
    let program = mp();
    let (cands, stats) = relaxed::candidates(&program, Search::Naive);
    o.explored(stats.complete);
    let consistent: Vec<&Candidate> = cands
        .iter()
        .filter(|c| consistency::consistent(&c.exec, model))
        .collect();
    o.note(format!(
        "{} candidates, {} consistent",
        cands.len(),
        consistent.len()
    ));
    o.require(
        !consistent.is_empty(),
        "some execution is consistent (the statement is not vacuous)",
    );
    let weak: Vec<&&Candidate> = consistent.iter().filter(|c| is_weak(&c.exec)).collect();
    o.require(
        weak.is_empty(),
        "no consistent execution reads flag = 1, data = 0",
    );
    if let Some(c) = weak.first() {
        o.witness(format!(
            "consistent weak execution:\n{}",
            c.exec.render(&program, "")
        ));
    }
    o
}

fn relaxed_permits_weak() -> Outcome {
    let mut o = Outcome::new();
    let program = litmus::message_passing(MpSync::Relaxed, MpReader::Conditional);
    let (cands, stats) = relaxed::candidates(&program, Search::Naive);
    o.explored(stats.complete);
    let found = cands
        .iter()
        .find(|c| is_weak(&c.exec) && consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET));
    o.require(
        found.is_some(),
        "a consistent execution reads flag = 1, data = 0",
    );
    if let Some(c) = found {
        let graph = consistency::EventGraph::build(&c.exec, &Variant::REFERENCE_SUBSET);
        let sw = graph.sw.len();
        o.witness(format!(
            "consistent execution with flag = 1, data = 0 (no synchronizes-with edge: {sw}; #0 is not \
             overwritten in happens-before before #5):\n{}",
            c.exec.render(&program, "")
        ));
    }
    o
}

fn six_step() -> [Who; 6] {
    [
        Who::Init,
        Who::Init,
        Who::Thread(0),
        Who::Thread(0),
        Who::Thread(1),
        Who::Thread(1),
    ]
}

fn six_step_schedule() -> Outcome {
    let mut o = Outcome::new();
    let program = mp();
    let run = machine::run_schedule(&program, &six_step());
    o.explored(1);
    match run {
        Some(run) => {
            o.require(
                run.exec.events == good_trace(),
                "the schedule's trace is the good trace",
            );
            o.require(
                run.state.finished(&program),
                "every thread has finished after six steps",
            );
            o.require(
                run.state.threads[1].regs == vec![1, 1],
                format!(
                    "the reader ends with r1 = 1, r2 = 1 (got {:?})",
                    run.state.threads[1].regs
                ),
            );
            o.witness(run.exec.render(&program, ""));
        }
        None => o.require(false, "the schedule runs to its end"),
    }
    o
}

fn good_weak_differ_at_5() -> Outcome {
    let mut o = Outcome::new();
    let program = mp();
    // The good trace as the machine produces it, the weak one as the relaxed
    // machine does: the check compares what the machines made.
    let good = machine::run_schedule(&program, &six_step()).map(|r| r.exec.events);
    let (cands, stats) = relaxed::candidates(&program, Search::Naive);
    o.explored(stats.complete + 1);
    let weak = cands
        .iter()
        .find(|c| is_weak(&c.exec))
        .map(|c| c.exec.events.clone());
    let (Some(good), Some(weak)) = (good, weak) else {
        o.require(false, "both traces exist");
        return o;
    };
    o.require(
        good == good_trace() && weak == weak_trace(),
        "the machines produce the reference's two traces",
    );
    o.require(
        good.len() == weak.len(),
        format!("same length ({})", good.len()),
    );
    let same_actions = good
        .iter()
        .zip(&weak)
        .all(|(a, b)| a.who == b.who && a.action.shape() == b.action.shape());
    o.require(
        same_actions,
        "same program actions (thread, kind, location, type, ordering), in the same order",
    );
    let differ: Vec<usize> = (0..good.len()).filter(|&i| good[i] != weak[i]).collect();
    o.require(
        differ == vec![5],
        format!("they differ exactly at events {differ:?}"),
    );
    let at5 = (good.get(5).map(|e| e.action), weak.get(5).map(|e| e.action));
    o.require(
        matches!(
            at5,
            (
                Some(Action::Load {
                    loc: DATA,
                    val: 1,
                    ..
                }),
                Some(Action::Load {
                    loc: DATA,
                    val: 0,
                    ..
                })
            )
        ),
        "event 5 is the data load: 1 in the good trace, 0 in the weak one",
    );
    o
}

fn four_raw_candidates() -> Outcome {
    let mut o = Outcome::new();
    let straight = litmus::message_passing(MpSync::AcquireRelease, MpReader::Unconditional);
    let (cands, stats) = relaxed::candidates(&straight, Search::Naive);
    o.explored(stats.complete);
    let outcomes: BTreeSet<String> = cands.iter().map(|c| outcome(&c.exec)).collect();
    let expected: BTreeSet<String> = ["0/0", "0/1", "1/0", "1/1"].map(String::from).into();
    o.require(
        cands.len() == 4,
        format!(
            "reader `r1 := flag; r2 := data`: {} raw completed candidates",
            cands.len()
        ),
    );
    o.require(
        outcomes == expected,
        format!("flag/data outcomes {outcomes:?}"),
    );
    // The reader guards the data load: flag = 0 makes no data load, so
    // 0/0 and 0/1 collapse into one candidate.
    let (cands, stats) = relaxed::candidates(&mp(), Search::Naive);
    o.explored(stats.complete);
    let outcomes: BTreeSet<String> = cands.iter().map(|c| outcome(&c.exec)).collect();
    let expected: BTreeSet<String> = ["0/-", "1/0", "1/1"].map(String::from).into();
    o.require(
        cands.len() == 3 && outcomes == expected,
        format!(
            "reader `if r1 = 1 {{ r2 := data }}`: {} raw candidates, outcomes {outcomes:?} (no data load when \
             flag = 0)",
            cands.len()
        ),
    );
    o
}

/// The writer's release store to the flag: event 3 in the canonical order.
const RELEASE_STORE: u32 = 3;

fn reads_release(c: &Candidate) -> bool {
    c.exec.events.iter().enumerate().any(|(i, e)| {
        matches!(
            e.action,
            Action::Load {
                loc: FLAG,
                access: Access::ACQUIRE,
                ..
            }
        ) && c.exec.rf[i] == Some(RELEASE_STORE)
    })
}

fn conditioned_good_and_weak() -> Outcome {
    let mut o = Outcome::new();
    let program = mp();
    let (cands, stats) = relaxed::candidates(&program, Search::Naive);
    o.explored(stats.complete);
    o.require(
        cands
            .first()
            .is_some_and(|c| c.exec.events[RELEASE_STORE as usize] == good_trace()[3]),
        "event 3 is the release store flag := 1",
    );
    let conditioned: Vec<&Candidate> = cands.iter().filter(|c| reads_release(c)).collect();
    let traces: Vec<&Vec<Event>> = conditioned.iter().map(|c| &c.exec.events).collect();
    let (good, weak) = (good_trace(), weak_trace());
    o.require(
        traces.len() == 2,
        format!("{} candidates read the release store", traces.len()),
    );
    o.require(traces.contains(&&good), "the good trace is reachable");
    o.require(traces.contains(&&weak), "the weak trace is reachable");
    o.require(
        traces.iter().all(|t| **t == good || **t == weak),
        "no other trace remains",
    );
    let consistent: Vec<&&Candidate> = conditioned
        .iter()
        .filter(|c| consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET))
        .collect();
    o.require(
        consistent.len() == 1 && consistent[0].exec.events == good,
        format!(
            "consistency leaves {} candidate(s): only the good one",
            consistent.len()
        ),
    );
    if let Some(w) = conditioned.iter().find(|c| c.exec.events == weak) {
        let verdict = consistency::check(&w.exec, &Variant::REFERENCE_SUBSET);
        let why: Vec<String> = verdict
            .violations
            .iter()
            .map(|v| consistency::explain(&program, &w.exec, &verdict.graph, v))
            .collect();
        o.witness(format!(
            "the weak candidate is inconsistent:\n{}{}",
            w.exec.render(&program, ""),
            why.join("\n")
        ));
    }
    o
}

fn condition_necessary() -> Outcome {
    let mut o = Outcome::new();
    let program = mp();
    let (cands, stats) = relaxed::candidates(&program, Search::Naive);
    o.explored(stats.complete);
    let (good, weak) = (good_trace(), weak_trace());
    // The unconditioned statement: every candidate is good or weak, and
    // consistency leaves only the good one. A consistent candidate with another
    // trace refutes both halves.
    let counter = cands.iter().find(|c| {
        c.exec.events != good
            && c.exec.events != weak
            && consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET)
    });
    o.require(
        counter.is_some(),
        "a consistent candidate that is neither good nor weak exists",
    );
    if let Some(c) = counter {
        o.note(format!(
            "counterexample: flag/data {}, the acquire reads #{:?}",
            outcome(&c.exec),
            c.exec.rf[4]
        ));
        o.witness(format!(
            "consistent candidate outside {{good, weak}} (the acquire reads the initial flag):\n{}",
            c.exec.render(&program, "")
        ));
    }
    o
}

fn sc_is_latest() -> Outcome {
    let mut o = Outcome::new();
    let program = mp();
    let sc = machine::run_canonical(&program);
    let (latest, stats) = relaxed::candidates(&program, Search::Latest);
    o.explored(stats.complete + 1);
    o.require(
        latest.len() == 1,
        format!("{} latest-store candidate(s)", latest.len()),
    );
    match (sc, latest.first()) {
        (Some(run), Some(c)) => {
            o.require(run.exec == c.exec, "same trace and same reads-from");
            o.require(run.exec.events == good_trace(), "and it is the good trace");
        }
        _ => o.require(false, "both runs complete"),
    }
    o
}

fn legacy_barrier_inert() -> Outcome {
    let mut o = Outcome::new();
    let mut reads = |kind: BarrierKind| {
        let program = litmus::barrier_message_passing(kind);
        let (cands, stats) = relaxed::candidates(&program, Search::Naive);
        o.explored(stats.complete);
        let consistent: Vec<Candidate> = cands
            .into_iter()
            .filter(|c| consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET))
            .collect();
        let values: BTreeSet<u32> = consistent
            .iter()
            .flat_map(|c| c.exec.reads(Who::Thread(1), DATA))
            .collect();
        (program, consistent, values)
    };
    let (_, _, shared) = reads(BarrierKind::Shared);
    let (legacy_program, legacy, legacy_values) = reads(BarrierKind::LegacyGlobal);
    o.require(
        shared == BTreeSet::from([1]),
        format!("through bar.sync, data reads {shared:?}"),
    );
    o.require(
        legacy_values == BTreeSet::from([0, 1]),
        format!("through the legacy barrier, data reads {legacy_values:?}"),
    );
    if let Some(c) = legacy
        .iter()
        .find(|c| c.exec.reads(Who::Thread(1), DATA) == vec![0])
    {
        o.witness(format!(
            "consistent, data = 0:\n{}",
            c.exec.render(&legacy_program, "")
        ));
    }
    o
}
