//! The tree reduction: each thread stores `tid + 1` at `sh[tid]`; three rounds
//! (strides 4, 2, 1 for eight threads) add pairs; every phase ends at a shared
//! barrier.

use std::collections::BTreeSet;

use super::{Check, Outcome};
use crate::consistency::{self, Variant};
use crate::event::{Action, EventId, Execution, Who};
use crate::lang::{BarrierKind, Loc, Program, Space, Stmt, StmtId, Ty};
use crate::litmus;
use crate::machine;
use crate::relaxed::{self, Candidate, Search};

/// The reference's thread count.
pub const N: u32 = 8;

/// `sh[0]`, where the sum ends.
pub const SH0: Loc = Loc {
    space: Space::Shared,
    addr: 0,
};

/// The checks of this group.
pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "reduction.unique_trace",
            statement: "N = 8: every completed consistent execution has one and the same trace, of 61 events \
                        (8 + 21 + 32 barrier events)",
            run: unique_trace,
        },
        Check {
            name: "reduction.sum_is_36",
            statement: "N = 8: shared address 0 holds 36 (bit-pattern addition, not IEEE arithmetic)",
            run: sum_is_36,
        },
        Check {
            name: "reduction.stale_read",
            statement: "N = 8: without consistency, a completed stale-read execution gives a different trace and \
                        result (printed)",
            run: stale_read,
        },
        Check {
            name: "reduction.barrier_structure",
            statement: "N = 8: barrier uniformity holds and the rounds have the right structure",
            run: barrier_structure,
        },
        Check {
            name: "reduction.inclusive_legs_self_edge",
            statement: "N = 8: if barrier edges include their endpoints, happens-before has a self-edge in every \
                        complete round (printed)",
            run: inclusive_legs_self_edge,
        },
        Check {
            name: "reduction.pruned_equals_naive",
            statement: "N <= 8 (and the message-passing corpus): the pruned search explores the same consistent \
                        set as naive enumeration filtered by the consistency predicate",
            run: pruned_equals_naive,
        },
        Check {
            name: "reduction.scaling_16_to_1024",
            statement: "N = 16, 32, ..., 1024: a unique consistent trace of N + 3(N-1) + N(log2 N + 1) events, \
                        sh[0] = N(N+1)/2",
            run: scaling_all,
        },
    ]
}

/// The expected event count: N payload stores, 3(N − 1) round actions and
/// N(log2 N + 1) barrier events.
pub fn expected_events(n: u32) -> usize {
    let n = n as usize;
    n + 3 * (n - 1) + n * (n.trailing_zeros() as usize + 1)
}

/// The expected sum, N(N + 1)/2.
pub fn expected_sum(n: u32) -> u32 {
    n * (n + 1) / 2
}

fn naive(n: u32) -> (Program, Vec<Candidate>, u64) {
    let program = litmus::tree_reduction(n);
    let (cands, stats) = relaxed::candidates(&program, Search::Naive);
    (program, cands, stats.complete)
}

fn consistent_of(cands: &[Candidate]) -> Vec<&Candidate> {
    cands
        .iter()
        .filter(|c| consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET))
        .collect()
}

fn count(exec: &Execution, f: impl Fn(&Action) -> bool) -> usize {
    exec.events.iter().filter(|e| f(&e.action)).count()
}

fn unique_trace() -> Outcome {
    let mut o = Outcome::new();
    let (_, cands, explored) = naive(N);
    o.explored(explored);
    let consistent = consistent_of(&cands);
    let traces: BTreeSet<String> = consistent
        .iter()
        .map(|c| format!("{:?}", c.exec.events))
        .collect();
    o.note(format!(
        "{} raw candidates, {} consistent",
        cands.len(),
        consistent.len()
    ));
    o.require(
        !consistent.is_empty() && traces.len() == 1,
        format!("{} distinct consistent trace(s)", traces.len()),
    );
    if let Some(c) = consistent.first() {
        let e = &c.exec;
        let barriers = count(e, |a| matches!(a, Action::Barrier { .. }));
        let payload = e
            .events
            .iter()
            .take_while(|ev| ev.action.is_store())
            .count();
        let rounds = e.len() - barriers - payload;
        o.require(e.len() == 61, format!("{} events", e.len()));
        o.require(
            payload == 8 && rounds == 21 && barriers == 32,
            format!("{payload} + {rounds} + {barriers} barrier events"),
        );
    }
    o
}

fn sum_is_36() -> Outcome {
    let mut o = Outcome::new();
    let (program, cands, explored) = naive(N);
    o.explored(explored);
    let sums: BTreeSet<Option<u32>> = consistent_of(&cands)
        .iter()
        .map(|c| c.exec.final_value(SH0))
        .collect();
    o.require(
        sums == BTreeSet::from([Some(36)]),
        format!("sh[0] in every consistent execution: {sums:?}"),
    );
    let sc = machine::run_canonical(&program).and_then(|r| r.state.value(SH0));
    o.require(
        sc == Some(36),
        format!("the interleaving machine's memory agrees: sh[0] = {sc:?}"),
    );
    o.note("values are u32 bit patterns and `+` is wrapping addition on them; no IEEE rounding is modelled");
    o
}

fn stale_read() -> Outcome {
    let mut o = Outcome::new();
    let (program, cands, explored) = naive(N);
    o.explored(explored);
    let good = consistent_of(&cands).first().map(|c| c.exec.clone());
    let stale: Vec<&Candidate> = cands
        .iter()
        .filter(|c| !consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET))
        .collect();
    o.note(format!(
        "{} of {} completed candidates are inconsistent",
        stale.len(),
        cands.len()
    ));
    let Some(good) = good else {
        o.require(false, "a consistent execution exists");
        return o;
    };
    let different = stale
        .iter()
        .find(|c| c.exec.events != good.events && c.exec.final_value(SH0) != good.final_value(SH0));
    o.require(
        different.is_some(),
        "a completed stale-read execution has a different trace and a different sh[0]",
    );
    if let Some(c) = different {
        let verdict = consistency::check(&c.exec, &Variant::REFERENCE_SUBSET);
        let why: Vec<String> = verdict
            .violations
            .iter()
            .take(3)
            .map(|v| consistency::explain(&program, &c.exec, &verdict.graph, v))
            .collect();
        o.note(format!(
            "stale execution: sh[0] = {:?} instead of 36",
            c.exec.final_value(SH0)
        ));
        o.witness(format!(
            "completed, inconsistent execution (sh[0] = {:?}):\n{}{}{}",
            c.exec.final_value(SH0),
            c.exec.render(&program, ""),
            why.join("\n"),
            if verdict.violations.len() > 3 {
                format!(
                    "\n... and {} more violation(s)",
                    verdict.violations.len() - 3
                )
            } else {
                String::new()
            }
        ));
    }
    o
}

/// The shared barriers that sit under an `if`: none in a uniform program.
pub fn barriers_under_if(program: &Program) -> Vec<StmtId> {
    fn walk(program: &Program, id: StmtId, under_if: bool, out: &mut Vec<StmtId>) {
        match program.stmt(id) {
            Stmt::Barrier(BarrierKind::Shared) if under_if => out.push(id),
            Stmt::Seq(items) => items.iter().for_each(|s| walk(program, *s, under_if, out)),
            Stmt::If { then, els, .. } => {
                walk(program, *then, true, out);
                walk(program, *els, true, out);
            }
            Stmt::For { body, .. } => walk(program, *body, under_if, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let bodies: BTreeSet<StmtId> = program.bodies.iter().copied().collect();
    for body in bodies {
        walk(program, body, false, &mut out);
    }
    out
}

/// Checks the phase structure of a reduction trace for `n` threads; returns
/// the problems found.
pub fn round_structure(exec: &Execution, n: u32) -> Vec<String> {
    let mut problems = Vec::new();
    let rounds = n.trailing_zeros();
    for t in 0..n {
        let mine: Vec<Action> = exec
            .events
            .iter()
            .filter(|e| e.who == Who::Thread(t))
            .map(|e| e.action)
            .collect();
        let mut phases: Vec<Vec<Action>> = vec![Vec::new()];
        let mut ks = Vec::new();
        for a in mine {
            match a {
                Action::Barrier {
                    kind: BarrierKind::Shared,
                    k,
                } => {
                    ks.push(k);
                    phases.push(Vec::new());
                }
                other => {
                    if let Some(phase) = phases.last_mut() {
                        phase.push(other);
                    }
                }
            }
        }
        let expected_ks: Vec<u32> = (1..=rounds + 1).collect();
        if ks != expected_ks {
            problems.push(format!(
                "T{t} passes shared barriers {ks:?}, not {expected_ks:?}"
            ));
            continue;
        }
        let sh = |addr| Loc {
            space: Space::Shared,
            addr,
        };
        let is_load =
            |a: &Action, l: Loc| matches!(a, Action::Load { loc, ty: Ty::U32, .. } if *loc == l);
        let is_store =
            |a: &Action, l: Loc| matches!(a, Action::Store { loc, ty: Ty::U32, .. } if *loc == l);
        let p0 = &phases[0];
        if !(p0.len() == 1
            && matches!(p0[0], Action::Store { loc, val, .. } if loc == sh(t) && val == t + 1))
        {
            problems.push(format!(
                "T{t}: phase 0 is not the payload store sh[{t}] := {}",
                t + 1
            ));
        }
        for r in 1..=rounds {
            let stride = n >> r;
            let p = &phases[r as usize];
            let ok = if t < stride {
                p.len() == 3
                    && is_load(&p[0], sh(t))
                    && is_load(&p[1], sh(t + stride))
                    && is_store(&p[2], sh(t))
            } else {
                p.is_empty()
            };
            if !ok {
                problems.push(format!(
                    "T{t}: round {r} (stride {stride}) has the wrong shape: {p:?}"
                ));
            }
        }
        if !phases[rounds as usize + 1].is_empty() {
            problems.push(format!("T{t} acts after its last barrier"));
        }
    }
    // Count-matched rounds: all k-th barriers come after every action before
    // any k-th barrier, in the canonical order.
    for k in 1..=rounds + 1 {
        let at: Vec<EventId> = (0..exec.len() as EventId)
            .filter(|&i| matches!(exec.event(i).action, Action::Barrier { kind: BarrierKind::Shared, k: kk } if kk == k))
            .collect();
        if at.len() != n as usize {
            problems.push(format!(
                "barrier {k} has {} participants, not {n}",
                at.len()
            ));
        }
    }
    problems
}

fn barrier_structure() -> Outcome {
    let mut o = Outcome::new();
    let (program, cands, explored) = naive(N);
    o.explored(explored);
    let under_if = barriers_under_if(&program);
    o.require(
        under_if.is_empty(),
        format!("no shared barrier under a conditional (found {under_if:?})"),
    );
    let consistent = consistent_of(&cands);
    let mut problems = Vec::new();
    for c in &consistent {
        problems.extend(round_structure(&c.exec, N));
    }
    o.require(
        !consistent.is_empty(),
        "there is a consistent execution to inspect",
    );
    o.require(
        problems.is_empty(),
        "every thread passes barriers 1..=4; phase 0 is its payload store; round r (stride 8 >> r) is \
         load sh[tid], load sh[tid + stride], store sh[tid] for tid < stride and nothing otherwise",
    );
    for p in problems.iter().take(5) {
        o.note(p.clone());
    }
    // Also on every completed candidate, consistent or not: the shape does not
    // depend on what loads read.
    let all_ok = cands.iter().all(|c| round_structure(&c.exec, N).is_empty());
    o.require(
        all_ok,
        "the same structure holds in every completed candidate",
    );
    o
}

fn inclusive_legs_self_edge() -> Outcome {
    let mut o = Outcome::new();
    let (program, cands, explored) = naive(N);
    o.explored(explored);
    let Some(c) = consistent_of(&cands).first().map(|c| (*c).clone()) else {
        o.require(false, "a consistent execution exists");
        return o;
    };
    let strict = consistency::EventGraph::build(&c.exec, &Variant::REFERENCE_SUBSET);
    o.require(
        strict.self_edges().is_empty(),
        "with strict legs, happens-before is irreflexive",
    );
    let inclusive = consistency::EventGraph::build(&c.exec, &Variant::INCLUSIVE_BARRIERS);
    let looped = inclusive.self_edges();
    let mut lines = Vec::new();
    for round in &inclusive.rounds {
        let complete = round.barriers.len() == N as usize;
        let hit: Vec<EventId> = round
            .barriers
            .iter()
            .copied()
            .filter(|b| looped.contains(b))
            .collect();
        o.require(
            complete && hit.len() == round.barriers.len(),
            format!(
                "round {}: complete, and all {} barrier events have a self-edge",
                round.k,
                hit.len()
            ),
        );
        if let Some(&b) = hit.first() {
            let v = consistency::Violation::HbCycle { event: b };
            lines.push(format!(
                "round {}: {}",
                round.k,
                consistency::explain(&program, &c.exec, &inclusive, &v)
            ));
        }
    }
    o.require(
        inclusive.rounds.len() == 4,
        format!("{} complete rounds", inclusive.rounds.len()),
    );
    o.require(
        !consistency::consistent(&c.exec, &Variant::INCLUSIVE_BARRIERS),
        "so the execution is inconsistent there",
    );
    o.witness(lines.join("\n"));
    o
}

fn same_set(a: &[Candidate], b: &[Candidate]) -> bool {
    let key = |c: &Candidate| format!("{:?}|{:?}", c.exec.events, c.exec.rf);
    let a: BTreeSet<String> = a.iter().map(key).collect();
    let b: BTreeSet<String> = b.iter().map(key).collect();
    a == b
}

/// Compares the pruned search with naive enumeration filtered by the reference
/// predicate on `program`, under `model`.
pub fn compare_searches(program: &Program, model: &Variant) -> (bool, usize, usize, u64) {
    let (all, naive_stats) = relaxed::candidates(program, Search::Naive);
    let filtered: Vec<Candidate> = all
        .into_iter()
        .filter(|c| consistency::consistent(&c.exec, model))
        .collect();
    let (pruned, pruned_stats) = relaxed::candidates(program, Search::Pruned(*model));
    let ok = same_set(&filtered, &pruned)
        && pruned
            .iter()
            .all(|c| consistency::consistent(&c.exec, model));
    (
        ok,
        filtered.len(),
        pruned.len(),
        naive_stats.complete + pruned_stats.complete,
    )
}

fn pruned_equals_naive() -> Outcome {
    let mut o = Outcome::new();
    let mut programs: Vec<Program> = [1, 2, 4, 8]
        .into_iter()
        .map(litmus::tree_reduction)
        .collect();
    programs.extend(
        litmus::corpus()
            .into_iter()
            .filter(|p| !p.name.starts_with("reduction")),
    );
    for program in &programs {
        for model in [
            Variant::REFERENCE_SUBSET,
            Variant::NO_SW,
            Variant::INCLUSIVE_BARRIERS,
        ] {
            let (ok, naive, pruned, explored) = compare_searches(program, &model);
            o.explored(explored);
            let which = if model == Variant::REFERENCE_SUBSET {
                "model".to_string()
            } else if model == Variant::NO_SW {
                "no sw".to_string()
            } else {
                "inclusive legs".to_string()
            };
            o.require(
                ok,
                format!(
                    "{} ({which}): naive-then-filter {naive}, pruned {pruned}",
                    program.name
                ),
            );
        }
    }
    o
}

/// The scaling theorem for one `n`: the pruned search finds a unique consistent execution,
/// with the expected size and sum, and the reference predicate accepts it.
pub fn scaling(n: u32) -> Outcome {
    let mut o = Outcome::new();
    let program = litmus::tree_reduction(n);
    let start = std::time::Instant::now();
    let (cands, stats) = relaxed::candidates(&program, Search::Pruned(Variant::REFERENCE_SUBSET));
    o.explored(stats.complete);
    o.note(format!(
        "pruned search: {} completed, {} choices rejected, {} loads, {:.1} ms; the naive space is 10^{:.1} \
         candidates",
        stats.complete,
        stats.rejected,
        stats.loads,
        start.elapsed().as_secs_f64() * 1e3,
        stats.log10_naive_space
    ));
    o.require(
        cands.len() == 1,
        format!("N = {n}: {} consistent execution(s)", cands.len()),
    );
    if let Some(c) = cands.first() {
        let events = c.exec.len();
        o.require(
            events == expected_events(n),
            format!("{events} events (expected {})", expected_events(n)),
        );
        let sum = c.exec.final_value(SH0);
        o.require(
            sum == Some(expected_sum(n)),
            format!("sh[0] = {sum:?} (expected {})", expected_sum(n)),
        );
        let problems = round_structure(&c.exec, n);
        o.require(
            problems.is_empty(),
            "round structure and barrier uniformity",
        );
        let start = std::time::Instant::now();
        let verdict = consistency::check(&c.exec, &Variant::REFERENCE_SUBSET);
        o.require(
            verdict.consistent(),
            format!(
                "the reference consistency predicate accepts it ({:.1} ms)",
                start.elapsed().as_secs_f64() * 1e3
            ),
        );
    }
    o
}

fn scaling_all() -> Outcome {
    let mut o = Outcome::new();
    let mut n = 16;
    while n <= 1024 {
        let one = scaling(n);
        o.explored(one.explored);
        o.require(
            one.holds,
            format!(
                "N = {n}: {} events, sh[0] = {}",
                expected_events(n),
                expected_sum(n)
            ),
        );
        if !one.holds {
            o.details.extend(one.details);
        }
        n *= 2;
    }
    o
}
