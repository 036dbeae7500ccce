//! Every interleaving, with a happens-before race check: whether a program is
//! data-race-free, and if it is, the set of its final outcomes.
//!
//! This is the source side of the refinement check (the premise of the
//! reference's open theorem). [`explore`] runs the interleaving machine
//! ([`crate::machine`]) depth first over **every** interleaving, not the
//! canonical schedule, and carries vector clocks along each one:
//!
//! - each event of thread `t` advances `t`'s own component;
//! - an acquire load (or an acquire read-modify-write) that reads a release
//!   store joins the store's clock (`sw`); a load reads the last store (the
//!   machine is sequentially consistent), so the store is known; a
//!   read-modify-write continues the release sequence it reads from;
//! - the `k`-th shared barrier joins, into every thread that passes it, the
//!   clocks of all threads as they arrived (`bar`); the legacy barrier is
//!   inert, as in the event layer.
//!
//! Two accesses to one location **race** when at least one writes, at least
//! one is plain (non-atomic), they are on different threads, and neither
//! happens before the other (`hb = (po ∪ sw ∪ bar)+`). Per location and
//! thread it is enough to keep the latest access of each kind (plain or
//! atomic, read or write): a thread's earlier access of the same kind is
//! `po`-before it, so if the latest one happens before an access, so does the
//! earlier. The initializer's stores are the launch's memory, before
//! everything, and never race.
//!
//! A thread whose next access conflicts with nothing that another thread may
//! do before it ([`crate::future`]) runs alone at that state: the orders it
//! skips reach the same states with the same happens-before. States are
//! memoized with their clocks, so each distinct (machine state,
//! happens-before summary) is expanded once; the first race found is returned
//! with the interleaving that reaches it. The outcome of a completed run is its
//! final global memory.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::hash::BuildHasherDefault;
use std::time::{Duration, Instant};

use crate::event::{Action, Event, Who, render_action};
use crate::future::{self, Future};
use crate::lang::{BarrierKind, Loc, Program, Space, Value};
use crate::machine::{FxHasher, ScState};
use crate::thread::ThreadState;

mod hb;

use hb::Hb;

/// The final global memory of one completed run: location → value.
pub type Outcome = BTreeMap<Loc, Value>;

/// How far [`explore`] may go.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most distinct states expanded.
    pub max_states: u64,
    /// The wall-clock time allowed.
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 5_000_000,
            time: Duration::from_secs(60),
        }
    }
}

/// Why [`explore`] stopped without a verdict.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Exhausted {
    /// More states than [`Limits::max_states`].
    #[error("{program}: stopped after {states} states (limit {max})")]
    States {
        /// The program.
        program: String,
        /// States expanded when it stopped.
        states: u64,
        /// The limit.
        max: u64,
    },
    /// The time limit passed.
    #[error("{program}: stopped after {millis} ms (limit {limit_ms} ms) and {states} states")]
    Time {
        /// The program.
        program: String,
        /// States expanded when it stopped.
        states: u64,
        /// Time spent.
        millis: u64,
        /// The limit.
        limit_ms: u64,
    },
}

/// One access of a race, as it appears in the racing interleaving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RacingAccess {
    /// Its index in [`Race::trace`].
    pub index: usize,
    /// The event.
    pub event: Event,
}

/// A data race: an interleaving whose last event races with an earlier one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The interleaving, from the launch to the second access (inclusive).
    pub trace: Vec<Event>,
    /// The earlier access.
    pub first: RacingAccess,
    /// The later access (the last event of the trace).
    pub second: RacingAccess,
}

impl Race {
    /// The race as text: the two accesses, then the interleaving with both marked.
    pub fn render(&self, program: &Program) -> String {
        let mut out = String::new();
        let describe = |a: &RacingAccess| {
            format!(
                "#{} {} {}",
                a.index,
                a.event.who,
                render_action(program, &a.event.action)
            )
        };
        let _ = writeln!(
            out,
            "data race on {}: {}  and  {}, unordered by happens-before",
            self.second
                .event
                .action
                .loc()
                .map_or_else(|| "?".into(), |l| program.loc_name(l)),
            describe(&self.first),
            describe(&self.second)
        );
        let _ = writeln!(out, "interleaving ({} events):", self.trace.len());
        for (i, e) in self.trace.iter().enumerate() {
            let mark = if i == self.first.index || i == self.second.index {
                "  <- race"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  #{i:<4} {:<5} {}{mark}",
                e.who.to_string(),
                render_action(program, &e.action)
            );
        }
        out
    }
}

/// What [`explore`] found.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// No interleaving has a race; the final outcomes of the completed runs.
    RaceFree {
        /// Every distinct final global memory of a completed run.
        outcomes: BTreeSet<Outcome>,
    },
    /// A race, with the interleaving that shows it.
    Race(Box<Race>),
}

/// The verdict with the size of the exploration.
#[derive(Clone, Debug)]
pub struct Report {
    /// The program's name.
    pub program: String,
    /// Race-free with outcomes, or a race.
    pub verdict: Verdict,
    /// Distinct states expanded (machine state with its clocks).
    pub states: u64,
    /// Transitions taken.
    pub transitions: u64,
    /// Completed runs reached (distinct final states).
    pub completed: u64,
    /// States where no thread can step and some has not finished (a
    /// deadlock at a barrier, or a load with nothing to read).
    pub stuck: u64,
    /// Time taken.
    pub elapsed: Duration,
}

impl Report {
    /// Whether the program is data-race-free.
    pub fn race_free(&self) -> bool {
        matches!(self.verdict, Verdict::RaceFree { .. })
    }

    /// The outcomes, when the program is race-free.
    pub fn outcomes(&self) -> Option<&BTreeSet<Outcome>> {
        match &self.verdict {
            Verdict::RaceFree { outcomes } => Some(outcomes),
            Verdict::Race(_) => None,
        }
    }
}

/// Renders an outcome as `{data=1, flag=1, out=7}`.
pub fn render_outcome(program: &Program, outcome: &Outcome) -> String {
    let items: Vec<String> = outcome
        .iter()
        .map(|(l, v)| format!("{}={v}", program.loc_name(*l)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = match &self.verdict {
            Verdict::RaceFree { outcomes } => {
                format!("data-race-free, {} outcomes", outcomes.len())
            }
            Verdict::Race(_) => "data race".to_string(),
        };
        write!(
            f,
            "{}: {verdict} ({} states, {} transitions, {} completed, {} stuck, {:.1} ms)",
            self.program,
            self.states,
            self.transitions,
            self.completed,
            self.stuck,
            self.elapsed.as_secs_f64() * 1e3
        )
    }
}

/// The event of thread `thread` with own-clock `epoch` in `trace` (the
/// thread's `epoch`-th event, counted from 1).
fn nth_event_of(trace: &[Event], thread: u32, epoch: u32) -> Option<usize> {
    trace
        .iter()
        .enumerate()
        .filter(|(_, e)| e.who == Who::Thread(thread))
        .nth(epoch.checked_sub(1)? as usize)
        .map(|(i, _)| i)
}

type Seen = HashSet<(ScState, Hb), BuildHasherDefault<FxHasher>>;

/// [`future::accesses`] by thread, state and walk kind: threads that have
/// not moved keep their answer.
type FutureCache = HashMap<(u32, ThreadState, bool, bool), Future, BuildHasherDefault<FxHasher>>;

/// The successors to explore from `state`: the one step of a thread whose
/// next action conflicts with nothing another thread may do before it, when
/// there is such a thread (that step commutes with every other order, which
/// reaches the same states with the same happens-before); otherwise all.
/// A barrier step accesses nothing. Another thread of the same CTA is
/// looked at up to its next barrier (past the one it is about to pass), one
/// of another CTA to its end.
fn reduce(
    program: &Program,
    state: &ScState,
    successors: Vec<(Who, Event, ScState)>,
    cache: &mut FutureCache,
) -> Vec<(Who, Event, ScState)> {
    if successors.len() <= 1 {
        return successors;
    }
    let passing: BTreeSet<u32> = successors
        .iter()
        .filter_map(|(who, e, _)| match (who, e.action) {
            (
                Who::Thread(t),
                Action::Barrier {
                    kind: BarrierKind::Shared,
                    ..
                },
            ) => Some(*t),
            _ => None,
        })
        .collect();
    let pick = successors.iter().position(|(who, event, _)| {
        let Who::Thread(t) = *who else {
            return false;
        };
        let Some(loc) = event.action.loc() else {
            return true;
        };
        let write = event.action.written().is_some();
        (0..state.threads.len() as u32)
            .filter(|&u| u != t)
            .all(|u| {
                let ts = ThreadState::clone(&state.threads[u as usize]);
                let same_cta = program.cta_of(u) == program.cta_of(t);
                let past = passing.contains(&u);
                let key = (u, ts, same_cta, past);
                if let Some(f) = cache.get(&key) {
                    return !f.conflicts(loc, write);
                }
                let f = future::accesses(program, u, &key.1, same_cta, past);
                let independent = !f.conflicts(loc, write);
                cache.insert(key, f);
                independent
            })
    });
    match pick {
        Some(i) => vec![successors[i].clone()],
        None => successors,
    }
}

/// A state on the depth-first stack, with its successors and the next one
/// to take.
struct Frame {
    hb: Hb,
    successors: Vec<(Who, Event, ScState)>,
    next: usize,
}

/// Explores every interleaving of `program` with the race check.
///
/// # Errors
/// [`Exhausted`] when the state or time limit passes before the verdict.
pub fn explore(program: &Program, limits: &Limits) -> Result<Report, Exhausted> {
    let start = Instant::now();
    let threads = program.threads() as usize;
    let mut report = Report {
        program: program.name.clone(),
        verdict: Verdict::RaceFree {
            outcomes: BTreeSet::new(),
        },
        states: 0,
        transitions: 0,
        completed: 0,
        stuck: 0,
        elapsed: Duration::ZERO,
    };
    let mut outcomes = BTreeSet::new();
    let mut seen = Seen::default();
    let root = (ScState::start(program), Hb::new(threads));
    seen.insert(root.clone());
    // Depth first; each frame holds a state, its successors and the next one
    // to take. `path` is the trace from the launch to the top frame.
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<Event> = Vec::new();
    let mut futures = FutureCache::default();
    let mut expand = |state: &ScState, report: &mut Report, outcomes: &mut BTreeSet<Outcome>| {
        report.states += 1;
        let successors = reduce(program, state, state.successors(program), &mut futures);
        if successors.is_empty() {
            if state.finished(program) {
                report.completed += 1;
                outcomes.insert(
                    state
                        .global
                        .iter()
                        .map(|(&addr, &(_, v))| {
                            (
                                Loc {
                                    space: Space::Global,
                                    addr,
                                },
                                v,
                            )
                        })
                        .collect(),
                );
            } else {
                report.stuck += 1;
            }
        }
        successors
    };
    let successors = expand(&root.0, &mut report, &mut outcomes);
    stack.push(Frame {
        hb: root.1,
        successors,
        next: 0,
    });
    while let Some(top) = stack.last_mut() {
        let Some((who, event, after)) = top.successors.get(top.next).cloned() else {
            stack.pop();
            path.pop();
            continue;
        };
        top.next += 1;
        report.transitions += 1;
        if report.states >= limits.max_states {
            return Err(Exhausted::States {
                program: program.name.clone(),
                states: report.states,
                max: limits.max_states,
            });
        }
        if report.states.is_multiple_of(4096) && start.elapsed() > limits.time {
            return Err(Exhausted::Time {
                program: program.name.clone(),
                states: report.states,
                millis: start.elapsed().as_millis() as u64,
                limit_ms: limits.time.as_millis() as u64,
            });
        }
        let mut hb_after = top.hb.clone();
        if let Who::Thread(t) = who
            && let Some(conflict) = hb_after.step(program, t, &event.action)
        {
            let mut trace = path.clone();
            trace.push(event);
            let first = nth_event_of(&trace, conflict.thread, conflict.epoch)
                .expect("a recorded access is an event of the trace");
            let second = trace.len() - 1;
            report.verdict = Verdict::Race(Box::new(Race {
                first: RacingAccess {
                    index: first,
                    event: trace[first],
                },
                second: RacingAccess {
                    index: second,
                    event,
                },
                trace,
            }));
            report.elapsed = start.elapsed();
            return Ok(report);
        }
        let key = (after, hb_after);
        if seen.contains(&key) {
            continue;
        }
        seen.insert(key.clone());
        let (after, hb_after) = key;
        let successors = expand(&after, &mut report, &mut outcomes);
        path.push(event);
        stack.push(Frame {
            hb: hb_after,
            successors,
            next: 0,
        });
    }
    report.verdict = Verdict::RaceFree { outcomes };
    report.elapsed = start.elapsed();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Ordering;
    use crate::lang::{Access, Builder, Ty};
    use crate::litmus::{self, MpReader, MpSync};

    fn run(program: &Program) -> Report {
        explore(program, &Limits::default()).expect("small programs finish")
    }

    #[test]
    fn release_acquire_message_passing_is_race_free() {
        // The reader's plain load of data is guarded by the acquire load.
        let report = run(&litmus::message_passing(
            MpSync::AcquireRelease,
            MpReader::Conditional,
        ));
        let outcomes = report.outcomes().expect("race-free");
        // data = 1 and flag = 1 in every completed run.
        assert_eq!(outcomes.len(), 1, "{report}");
        assert!(report.states > 5, "{report}");
    }

    #[test]
    fn relaxed_message_passing_races_on_data() {
        let program = litmus::message_passing(MpSync::Relaxed, MpReader::Conditional);
        let report = run(&program);
        let Verdict::Race(race) = &report.verdict else {
            panic!("relaxed flags do not order data: {report}");
        };
        assert_eq!(race.first.event.action.loc(), Some(litmus::DATA));
        assert_eq!(race.second.event.action.loc(), Some(litmus::DATA));
        assert_ne!(race.first.event.who, race.second.event.who);
        let text = race.render(&program);
        assert!(text.contains("data race on data"), "{text}");
        assert!(text.contains("<- race"), "{text}");
    }

    #[test]
    fn reduction_is_race_free_with_one_outcome() {
        for n in [2u32, 4, 8] {
            let program = litmus::tree_reduction(n);
            let report = run(&program);
            let Verdict::RaceFree { outcomes } = &report.verdict else {
                panic!("{report}");
            };
            // Shared memory is not part of an outcome; global memory is empty.
            assert_eq!(outcomes.len(), 1, "{report}");
            assert!(report.completed >= 1 && report.stuck == 0, "{report}");
        }
    }

    #[test]
    fn the_reduction_without_its_round_barrier_races_at_every_size() {
        use crate::lang::Stmt;
        for n in [4u32, 8, 32] {
            let mut program = litmus::tree_reduction(n);
            // The last barrier in the arena is the one inside the rounds.
            let at = program
                .stmts
                .iter()
                .rposition(|s| matches!(s, Stmt::Barrier(BarrierKind::Shared)))
                .expect("a barrier");
            program.stmts[at] = Stmt::Seq(Vec::new());
            let report = run(&program);
            let Verdict::Race(race) = &report.verdict else {
                panic!("n = {n}: the rounds race without their barrier: {report}");
            };
            assert_eq!(
                race.first.event.action.loc().map(|l| l.space),
                Some(Space::Shared)
            );
            // And with it, race-free on one path through the reduction.
            let whole = run(&litmus::tree_reduction(n));
            assert!(whole.race_free(), "{whole}");
        }
    }

    #[test]
    fn a_missing_barrier_is_a_race() {
        // Two threads: T0 writes sh[0] plain, T1 reads it, with no barrier.
        let mut b = Builder::new();
        let r = b.reg("r");
        let st = b.store(Space::Shared, 0, Ty::U32, 1, Access::Plain);
        let ld = b.load(r, Space::Shared, 0, Ty::U32, Access::Plain);
        let seed = b.store(Space::Shared, 0, Ty::U32, 0, Access::Plain);
        let bar = b.barrier(BarrierKind::Shared);
        let t0 = b.seq([seed, bar, st]);
        let bar1 = b.barrier(BarrierKind::Shared);
        let t1 = b.seq([bar1, ld]);
        let program = b.finish("no_second_barrier", vec![t0, t1], vec![], &[]);
        let report = run(&program);
        assert!(!report.race_free(), "{report}");
        // With a second barrier between the store and the load, no race.
        let mut b = Builder::new();
        let r = b.reg("r");
        let seed = b.store(Space::Shared, 0, Ty::U32, 0, Access::Plain);
        let bar = b.barrier(BarrierKind::Shared);
        let st = b.store(Space::Shared, 0, Ty::U32, 1, Access::Plain);
        let bar2 = b.barrier(BarrierKind::Shared);
        let t0 = b.seq([seed, bar, st, bar2]);
        let bar1 = b.barrier(BarrierKind::Shared);
        let bar3 = b.barrier(BarrierKind::Shared);
        let ld = b.load(r, Space::Shared, 0, Ty::U32, Access::Plain);
        let t1 = b.seq([bar1, bar3, ld]);
        let program = b.finish("two_barriers", vec![t0, t1], vec![], &[]);
        assert!(run(&program).race_free());
    }

    /// Two threads increment a plain counter under a spin lock:
    /// `loop { r := cas(lock, 0, 1); if r == 0 break }; c := counter;
    /// counter := c + 1; lock := 0`.
    fn spin_lock(acquire: Ordering, release: Access) -> Program {
        use crate::lang::{Expr, InitStore, RmwOp, Stmt};
        let lock = 0;
        let counter = 1;
        let mut b = Builder::new();
        let r = b.reg("r");
        let c = b.reg("c");
        let cas = b.push(Stmt::Rmw {
            dst: r,
            space: Space::Global,
            addr: Expr::Const(lock),
            ty: Ty::U32,
            op: RmwOp::Cas {
                expected: Expr::Const(0),
                new: Expr::Const(1),
                failure: Ordering::Relaxed,
            },
            ordering: acquire,
        });
        let brk = b.brk();
        let out = b.if_then(Expr::Reg(r).equals(0), brk);
        let body = b.seq([cas, out]);
        let spin = b.bounded_loop(body, 3);
        let ld = b.load(c, Space::Global, counter, Ty::U32, Access::Plain);
        let st = b.store(
            Space::Global,
            counter,
            Ty::U32,
            Expr::Reg(c) + 1,
            Access::Plain,
        );
        let unlock = b.store(Space::Global, lock, Ty::U32, 0, release);
        let main = b.seq([spin, ld, st, unlock]);
        let zero = |addr| InitStore {
            loc: Loc {
                space: Space::Global,
                addr,
            },
            ty: Ty::U32,
            val: 0,
        };
        b.finish(
            "spin_lock",
            vec![main, main],
            vec![zero(lock), zero(counter)],
            &[(0, "lock"), (1, "counter")],
        )
    }

    #[test]
    fn a_release_acquire_spin_lock_is_race_free_and_counts_exactly() {
        let program = spin_lock(Ordering::Acquire, Access::RELEASE);
        let report = run(&program);
        if let Verdict::Race(race) = &report.verdict {
            panic!("{}", race.render(&program));
        }
        let outcomes = report.outcomes().expect("race-free");
        let counter = Loc {
            space: Space::Global,
            addr: 1,
        };
        let counts: BTreeSet<Value> = outcomes.iter().map(|o| o[&counter]).collect();
        assert_eq!(counts, BTreeSet::from([2]), "{report}");
        // A thread that spins past the bound is cut: those runs are stuck.
        assert!(report.stuck > 0, "{report}");
    }

    #[test]
    fn a_relaxed_spin_lock_races_on_the_counter() {
        for (acquire, release) in [
            (Ordering::Relaxed, Access::RELEASE),
            (Ordering::Acquire, Access::RELAXED),
        ] {
            let program = spin_lock(acquire, release);
            let report = run(&program);
            let Verdict::Race(race) = &report.verdict else {
                panic!("{acquire:?}/{release:?}: {report}");
            };
            assert_eq!(race.second.event.action.loc().map(|l| l.addr), Some(1));
        }
    }

    #[test]
    fn atomic_accesses_never_race_with_each_other() {
        let program = litmus::store_buffering();
        assert!(run(&program).race_free());
    }

    #[test]
    fn limits_are_reported_not_turned_into_verdicts() {
        let program = litmus::tree_reduction(8);
        let err = explore(
            &program,
            &Limits {
                max_states: 10,
                time: Duration::from_secs(60),
            },
        )
        .expect_err("10 states are not enough");
        assert!(matches!(err, Exhausted::States { states: 10, .. }), "{err}");
    }
}
