//! Enumeration of candidate executions and the verdict.
//!
//! A candidate is one complete path per thread, a set of synchronizing named
//! barriers, a fence-SC order, a reads-from map and a coherence order. Only
//! candidates in which every thread terminates are counted: a thread blocked
//! at a barrier, or cut by the loop bound, has no final state to test (this
//! is how Dat3M treats non-terminating executions).
//!
//! - **Reads-from** maps each read to a write of the same location with the
//!   value the read guessed (initial writes included).
//! - **Coherence** is, per location, any strict partial order of the
//!   non-initial writes, with the initial write before all of them: PTX's
//!   `co` need not be total (Dat3M's `co = co+`); the Coherence axiom then
//!   demands the edges the model needs.
//! - **Fence-SC order**: every total order of the executed `fence.sc`s,
//!   restricted to the morally strong pairs, each distinct restriction once.
//! - **Barriers**: a plain barrier, or a named one without quorum, executes
//!   when every barrier of its instance in its CTA (with its id) is reached,
//!   and synchronizes with all of them. A named barrier with quorum `q`
//!   executes when at least `q` are reached, and then any set of at least `q`
//!   of them synchronizes (the encoding of Dat3M's `ProgramEncoder`).

use std::collections::{BTreeSet, HashSet};
use std::time::Instant;

use crate::budget::{Deadline, NoVerdict, Progress, Stage, Timeout};
use crate::domain::next_choice;
use crate::error::Limit;
use crate::model::{Axiom, Axioms, Derived, Execution, Violation};
use crate::orders::{permutations, posets};
use crate::paths::{self, Path, Tags};
use crate::rel::{MAX_EVENTS, Rel, Set, bit, members};
use crate::report::{EventView, Outcome, Verdict, Witness};
use crate::syntax::{Cond, CondValue, Instr, Quantifier, Test};

/// How to check a test.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Loop bound: each loop body runs at most this many times (Dat3M's
    /// `--bound`; its litmus tests use 1).
    pub bound: u32,
    /// The axioms the model checks (all six unless an experiment drops one).
    pub axioms: Axioms,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bound: 1,
            axioms: Axioms::all(),
        }
    }
}

/// The most non-initial writes to one location (posets grow fast: 4,231 on 5).
pub(crate) const MAX_WRITES_PER_LOCATION: usize = 5;
/// The most `fence.sc`s in one execution (their orders grow as n!).
const MAX_SC_FENCES: usize = 8;
/// The most named barriers with a quorum (their subsets grow as 2^n).
const MAX_QUORUM_BARRIERS: usize = 16;

/// Checks a parsed test, however long it takes.
///
/// # Errors
/// [`NoVerdict::Error`] when the test is outside what the enumeration
/// handles (too many events, paths, values or writes to one location).
/// Without a deadline there is no [`NoVerdict::Timeout`].
pub fn check(test: &Test, options: &Options) -> Result<Outcome, NoVerdict> {
    check_within(test, options, &Deadline::none())
}

/// Checks a parsed test, stopping when `deadline` passes.
///
/// # Errors
/// [`NoVerdict::Error`] when the test is outside what the enumeration
/// handles; [`NoVerdict::Timeout`] when the deadline passes first, with how
/// far the search got. A timeout is never turned into a verdict.
pub fn check_within(
    test: &Test,
    options: &Options,
    deadline: &Deadline,
) -> Result<Outcome, NoVerdict> {
    let start = Instant::now();
    let bound = options.bound.max(1);
    let fixed = super::domain::fixed_point(test, bound, deadline).map_err(|e| match e {
        NoVerdict::Timeout(t) => NoVerdict::Timeout(Timeout {
            name: test.name.clone(),
            ..t
        }),
        e @ NoVerdict::Error(_) => e,
    })?;
    let threads = &fixed.threads;
    let mut tally = Tally::new(options.axioms);
    tally.cut_paths = threads.iter().map(|t| t.cut.len()).sum();
    let mut combinations = 0u64;
    let searched = super::domain::for_each_combination(threads, &mut |combo| {
        deadline.check(Stage::Candidates)?;
        combinations += 1;
        let base = Base::new(test, combo)?;
        base.enumerate(&mut tally, deadline)
    });
    match searched {
        Ok(()) => Ok(tally.finish(test, start)),
        Err(NoVerdict::Timeout(t)) => Err(NoVerdict::Timeout(Timeout {
            name: test.name.clone(),
            progress: Progress {
                domain_rounds: fixed.rounds,
                combinations,
                combinations_total: Some(super::domain::combination_count(threads)),
                candidates: tally.candidates,
                consistent: tally.consistent,
            },
            ..t
        })),
        Err(e) => Err(e),
    }
}

/// What the enumeration has seen so far.
struct Tally {
    axioms: Axioms,
    candidates: u64,
    consistent: u64,
    /// Consistent candidates that satisfy the target (the condition for
    /// `exists`/`~exists`, its negation for `forall`).
    reaching: u64,
    blocked: u64,
    cut_paths: usize,
    witness: Option<Witness>,
    closest: Option<(usize, Witness)>,
}

impl Tally {
    fn new(axioms: Axioms) -> Self {
        Tally {
            axioms,
            candidates: 0,
            consistent: 0,
            reaching: 0,
            blocked: 0,
            cut_paths: 0,
            witness: None,
            closest: None,
        }
    }

    fn finish(self, test: &Test, start: Instant) -> Outcome {
        let reachable = self.reaching > 0;
        let verdict = match (test.quantifier, reachable) {
            (Quantifier::Exists, true) => Verdict::Allowed,
            (Quantifier::Exists, false) => Verdict::Forbidden,
            (Quantifier::NotExists | Quantifier::Forall, true) => Verdict::Fails,
            (Quantifier::NotExists | Quantifier::Forall, false) => Verdict::Holds,
        };
        Outcome {
            name: test.name.clone(),
            quantifier: test.quantifier,
            verdict,
            candidates: self.candidates,
            consistent: self.consistent,
            reaching: self.reaching,
            blocked: self.blocked,
            cut_paths: self.cut_paths,
            axioms: self.axioms.iter_axioms().collect(),
            millis: start.elapsed().as_secs_f64() * 1e3,
            witness: if reachable { self.witness } else { None },
            closest: if reachable {
                None
            } else {
                self.closest.map(|(_, w)| w)
            },
        }
    }
}

/// One combination of thread paths: the events and every relation that does
/// not depend on the choices made later.
pub(crate) struct Base<'a> {
    pub(crate) test: &'a Test,
    /// For each event: its thread (`None` for initial writes) and the event.
    pub(crate) events: Vec<(Option<usize>, paths::Event)>,
    /// The paths, for final register values.
    pub(crate) combo: &'a [&'a Path],
    pub(crate) x: Execution,
    /// Named barriers with a quorum: they may or may not synchronize.
    pub(crate) free_barriers: Vec<usize>,
    /// Named barriers without a quorum: they always synchronize.
    pub(crate) forced_barriers: Set,
    /// Each quorum barrier with its quorum and its group (same CTA, instance, id).
    pub(crate) quorums: Vec<(usize, i64, Set)>,
    /// Whether some barrier is blocked: no terminating candidate.
    pub(crate) blocked: bool,
}

impl<'a> Base<'a> {
    pub(crate) fn new(test: &'a Test, combo: &'a [&'a Path]) -> Result<Self, Limit> {
        let mut events: Vec<(Option<usize>, paths::Event)> = test
            .locations
            .iter()
            .enumerate()
            .map(|(l, (_, v))| {
                (
                    None,
                    paths::Event {
                        tags: Tags::W | Tags::INIT,
                        loc: Some(super::syntax::Loc(u32::try_from(l).unwrap_or(u32::MAX))),
                        value: *v,
                        scope: None,
                        line: 0,
                        barrier: None,
                    },
                )
            })
            .collect();
        let mut offsets = Vec::new();
        for (t, path) in combo.iter().enumerate() {
            offsets.push(events.len());
            events.extend(path.events.iter().map(|e| (Some(t), e.clone())));
        }
        let n = events.len();
        if n > MAX_EVENTS {
            return Err(Limit::Events {
                events: n,
                max: MAX_EVENTS,
            });
        }
        let set = |pred: &dyn Fn(Tags) -> bool| -> Set {
            events
                .iter()
                .enumerate()
                .filter(|(_, (_, e))| pred(e.tags))
                .fold(0, |acc, (i, _)| acc | bit(i))
        };
        let r = set(&|t| t.contains(Tags::R));
        let w = set(&|t| t.contains(Tags::W));
        let f = set(&|t| t.contains(Tags::F));
        let m = r | w;
        let strong_w = set(&|t| t.contains(Tags::W) && t.intersects(Tags::RLX | Tags::REL));
        let strong_r = set(&|t| t.contains(Tags::R) && t.intersects(Tags::RLX | Tags::ACQ));
        let mut po = Rel::empty(n);
        let mut loc = Rel::empty(n);
        let mut rmw = Rel::empty(n);
        let mut dep = Rel::empty(n);
        for (t, path) in combo.iter().enumerate() {
            let o = offsets[t];
            for i in 0..path.events.len() {
                for j in i + 1..path.events.len() {
                    po.insert(o + i, o + j);
                }
                for d in members(path.deps[i]) {
                    dep.insert(o + d, o + i);
                }
            }
            for &(a, b) in &path.rmw {
                rmw.insert(o + a, o + b);
            }
        }
        for a in 0..n {
            for b in 0..n {
                if events[a].1.loc.is_some() && events[a].1.loc == events[b].1.loc {
                    loc.insert(a, b);
                }
            }
        }
        // Morally strong: related in program order, or both strong with each
        // one's scope including the other's thread; same location if both
        // are memory events.
        let strong = strong_w | strong_r | f;
        let mut ms1 = po.union(&po.inverse());
        for a in members(strong) {
            for b in members(strong) {
                if let (Some(ta), Some(tb), Some(sa), Some(sb)) = (
                    events[a].0,
                    events[b].0,
                    events[a].1.scope,
                    events[b].1.scope,
                ) {
                    let (ta, tb) = (&test.threads[ta], &test.threads[tb]);
                    if ta.shares(tb, sa) && tb.shares(ta, sb) {
                        ms1.insert(a, b);
                    }
                }
            }
        }
        let all = Rel::product(n, set(&|_| true), set(&|_| true));
        let ms2 = loc.union(&all.minus(&Rel::product(n, m, m)));
        let ms = ms1.inter(&ms2).without_id();
        let po_loc = po.inter(&loc);
        let x = Execution {
            r,
            w,
            f,
            strong_w,
            strong_r,
            w_rel: set(&|t| t.contains(Tags::W | Tags::REL)),
            r_acq: set(&|t| t.contains(Tags::R | Tags::ACQ)),
            f_acq_rel: set(&|t| t.contains(Tags::F | Tags::ACQ_REL)),
            f_sc: set(&|t| t.contains(Tags::F | Tags::SC)),
            po,
            loc,
            po_loc,
            rmw,
            dep,
            ms,
            rf: Rel::empty(n),
            co: Rel::empty(n),
            sync_fence: Rel::empty(n),
            sync_barrier: Rel::empty(n),
        };
        let mut base = Base {
            test,
            events,
            combo,
            x,
            free_barriers: Vec::new(),
            forced_barriers: 0,
            quorums: Vec::new(),
            blocked: false,
        };
        base.barriers();
        Ok(base)
    }

    fn thread(&self, e: usize) -> Option<&super::syntax::Thread> {
        self.events[e].0.map(|t| &self.test.threads[t])
    }

    /// Decides which barriers block, and which may choose to synchronize.
    fn barriers(&mut self) {
        let bars: Vec<usize> = (0..self.events.len())
            .filter(|&e| self.events[e].1.barrier.is_some())
            .collect();
        for &a in &bars {
            let (Some(ta), Some(ua)) = (self.events[a].0, self.events[a].1.barrier) else {
                continue;
            };
            let thread_a = &self.test.threads[ta];
            // Every barrier instruction of the same instance in the same CTA.
            for (tb, thread_b) in self.test.threads.iter().enumerate() {
                if !thread_a.shares(thread_b, super::syntax::Scope::Cta) {
                    continue;
                }
                for (line, l) in thread_b.code.iter().enumerate() {
                    let Instr::Barrier { instance, id, .. } = l.instr else {
                        continue;
                    };
                    if instance != ua.instance || id.is_some() != ua.id.is_some() {
                        continue;
                    }
                    let reached = self.combo[tb]
                        .events
                        .iter()
                        .any(|e| e.line == line && e.barrier.is_some());
                    if reached || ua.quorum.is_some() {
                        continue;
                    }
                    // Not reached: it blocks a plain barrier always, and a
                    // named one when its id is known to be the same.
                    let same_id = match (id, ua.id) {
                        (None, None) => true,
                        (Some(super::syntax::Operand::Const(v)), Some(u)) => v == u,
                        _ => false,
                    };
                    if same_id {
                        self.blocked = true;
                    }
                }
            }
            if ua.id.is_some() {
                match ua.quorum {
                    None => self.forced_barriers |= bit(a),
                    Some(q) => {
                        let group = self.barrier_group(a);
                        if (group.count_ones() as i64) < q {
                            self.blocked = true;
                        }
                        self.free_barriers.push(a);
                        self.quorums.push((a, q, group));
                    }
                }
            }
        }
    }

    /// The reached named barriers that `a` can synchronize with: same CTA,
    /// same instance, same id (itself included).
    fn barrier_group(&self, a: usize) -> Set {
        let Some(ua) = self.events[a].1.barrier else {
            return 0;
        };
        let Some(ta) = self.thread(a) else { return 0 };
        (0..self.events.len())
            .filter(|&b| {
                self.events[b].1.barrier.is_some_and(|ub| {
                    ub.instance == ua.instance && ub.id.is_some() && ub.id == ua.id
                }) && self
                    .thread(b)
                    .is_some_and(|tb| ta.shares(tb, super::syntax::Scope::Cta))
            })
            .fold(0, |acc, b| acc | bit(b))
    }

    /// Every set of synchronizing named barriers the quorums allow.
    fn sync_choices(&self) -> Result<Vec<Set>, Limit> {
        let free = &self.free_barriers;
        if free.len() > MAX_QUORUM_BARRIERS {
            return Err(Limit::QuorumBarriers {
                barriers: free.len(),
                max: MAX_QUORUM_BARRIERS,
            });
        }
        let mut out = Vec::new();
        for mask in 0u64..(1u64 << free.len()) {
            let chosen = free
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .fold(self.forced_barriers, |acc, (_, &b)| acc | bit(b));
            if self
                .quorums
                .iter()
                .all(|&(_, q, group)| i64::from((chosen & group).count_ones()) >= q)
            {
                out.push(chosen);
            }
        }
        Ok(out)
    }

    /// `syncbar & scta` for the synchronizing set `sync`.
    pub(crate) fn sync_barrier(&self, sync: Set) -> Rel {
        let n = self.events.len();
        let mut rel = Rel::empty(n);
        for a in 0..n {
            let Some(ua) = self.events[a].1.barrier else {
                continue;
            };
            if ua.id.is_some() && sync & bit(a) == 0 {
                continue;
            }
            for b in 0..n {
                let Some(ub) = self.events[b].1.barrier else {
                    continue;
                };
                let same_cta = match (self.thread(a), self.thread(b)) {
                    (Some(ta), Some(tb)) => ta.shares(tb, super::syntax::Scope::Cta),
                    _ => false,
                };
                if same_cta && ua.instance == ub.instance && !ub.arrive && ua.id == ub.id {
                    rel.insert(a, b);
                }
            }
        }
        rel
    }

    /// Every fence-SC order: total orders of the `fence.sc`s, restricted to
    /// the pairs whose scopes include each other's thread, each once.
    fn fence_orders(&self) -> Result<Vec<Rel>, Limit> {
        let n = self.events.len();
        let fences: Vec<usize> = members(self.x.f_sc).collect();
        if fences.len() > MAX_SC_FENCES {
            return Err(Limit::ScFences {
                fences: fences.len(),
                max: MAX_SC_FENCES,
            });
        }
        let compatible = |a: usize, b: usize| match (
            self.thread(a),
            self.thread(b),
            self.events[a].1.scope,
            self.events[b].1.scope,
        ) {
            (Some(ta), Some(tb), Some(sa), Some(sb)) => ta.shares(tb, sa) && tb.shares(ta, sb),
            _ => false,
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        permutations(&fences, &mut |order| {
            let mut rel = Rel::empty(n);
            for (i, &a) in order.iter().enumerate() {
                for &b in &order[i + 1..] {
                    if compatible(a, b) {
                        rel.insert(a, b);
                    }
                }
            }
            if seen.insert(rel.clone()) {
                out.push(rel);
            }
        });
        Ok(out)
    }

    /// For each location with writes: the non-initial writes and the
    /// initial one.
    fn co_shapes(&self) -> Result<Vec<(usize, Vec<usize>)>, Limit> {
        let mut out = Vec::new();
        for (l, (name, _)) in self.test.locations.iter().enumerate() {
            let init = l;
            let writes: Vec<usize> = members(self.x.w)
                .filter(|&e| e != init && self.events[e].1.loc == self.events[init].1.loc)
                .collect();
            if writes.len() > MAX_WRITES_PER_LOCATION {
                return Err(Limit::WritesPerLocation {
                    location: name.clone(),
                    writes: writes.len(),
                    max: MAX_WRITES_PER_LOCATION,
                });
            }
            if !writes.is_empty() {
                out.push((init, writes));
            }
        }
        Ok(out)
    }

    fn enumerate(&self, tally: &mut Tally, deadline: &Deadline) -> Result<(), NoVerdict> {
        if self.blocked {
            tally.blocked += 1;
            return Ok(());
        }
        let n = self.events.len();
        // Reads-from options: same location, same value.
        let mut rf_options: Vec<(usize, Vec<usize>)> = Vec::new();
        for read in members(self.x.r) {
            let e = &self.events[read].1;
            let writes: Vec<usize> = members(self.x.w)
                .filter(|&w| self.events[w].1.loc == e.loc && self.events[w].1.value == e.value)
                .collect();
            if writes.is_empty() {
                return Ok(());
            }
            rf_options.push((read, writes));
        }
        let shapes = self.co_shapes()?;
        let co_options: Vec<Vec<Rel>> = shapes
            .iter()
            .map(|(init, writes)| {
                posets(writes.len())
                    .iter()
                    .map(|order| {
                        let mut rel = Rel::empty(n);
                        for &w in writes {
                            rel.insert(*init, w);
                        }
                        for &(a, b) in order {
                            rel.insert(writes[a], writes[b]);
                        }
                        rel
                    })
                    .collect()
            })
            .collect();
        let co_count: u64 = co_options.iter().map(|o| o.len() as u64).product();
        let reg_target = if self.test.cond.reads_memory() {
            None
        } else {
            Some(self.target(&self.test.cond, &Rel::empty(n)))
        };
        let mut x = self.x.clone();
        let fence_orders = self.fence_orders()?;
        for sync in self.sync_choices()? {
            x.sync_barrier = self.sync_barrier(sync);
            for sf in fence_orders.iter().cloned() {
                x.sync_fence = sf;
                let mut rf_choice = vec![0usize; rf_options.len()];
                loop {
                    deadline.tick(Stage::Candidates)?;
                    let mut rf = Rel::empty(n);
                    for (k, (read, writes)) in rf_options.iter().enumerate() {
                        rf.insert(writes[rf_choice[k]], *read);
                    }
                    x.rf = rf;
                    x.co = Rel::empty(n);
                    let mut d = Derived::without_co(&x);
                    let early = [Axiom::NoThinAir, Axiom::FenceSc]
                        .into_iter()
                        .filter(|a| tally.axioms.has(*a))
                        .find_map(|a| a.check(&x, &d));
                    if reg_target == Some(false) && early.is_some() {
                        // Inconsistent whatever `co` is, and not a target.
                        tally.candidates += co_count;
                    } else {
                        self.each_co(&co_options, &mut x, &mut d, reg_target, tally, deadline)?;
                    }
                    if !next_choice(&mut rf_choice, rf_options.iter().map(|(_, w)| w.len())) {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    fn each_co(
        &self,
        co_options: &[Vec<Rel>],
        x: &mut Execution,
        d: &mut Derived,
        reg_target: Option<bool>,
        tally: &mut Tally,
        deadline: &Deadline,
    ) -> Result<(), Timeout> {
        let n = self.events.len();
        let mut co_choice = vec![0usize; co_options.len()];
        loop {
            deadline.tick(Stage::Candidates)?;
            let mut co = Rel::empty(n);
            for (k, options) in co_options.iter().enumerate() {
                co = co.union(&options[co_choice[k]]);
            }
            x.co = co;
            d.with_co(x);
            tally.candidates += 1;
            let target = reg_target.unwrap_or_else(|| self.target(&self.test.cond, &x.co));
            if target {
                let (violations, dropped): (Vec<Violation>, Vec<Violation>) = Axiom::ALL
                    .into_iter()
                    .filter_map(|a| a.check(x, d))
                    .partition(|v| tally.axioms.has(v.axiom));
                if violations.is_empty() {
                    tally.consistent += 1;
                    tally.reaching += 1;
                    if tally.witness.is_none() {
                        let mut w = self.witness(x, d, Vec::new());
                        w.breaks_dropped = dropped.into_iter().map(|v| v.axiom).collect();
                        tally.witness = Some(w);
                    }
                } else if tally
                    .closest
                    .as_ref()
                    .is_none_or(|(best, _)| violations.len() < *best)
                {
                    let k = violations.len();
                    tally.closest = Some((k, self.witness(x, d, violations)));
                }
            } else if tally.axioms.iter_axioms().all(|a| a.check(x, d).is_none()) {
                tally.consistent += 1;
            }
            if !next_choice(&mut co_choice, co_options.iter().map(Vec::len)) {
                return Ok(());
            }
        }
    }

    /// The final value of a register.
    fn register(&self, t: u32, reg: super::syntax::Reg) -> i64 {
        self.combo
            .get(t as usize)
            .and_then(|p| p.regs.get(&reg).copied())
            .unwrap_or(0)
    }

    /// Whether the candidate with coherence `co` is a target: it satisfies
    /// the condition (`exists`, `~exists`) or breaks it (`forall`). With a
    /// partial `co`, a location's final value is that of any `co`-maximal
    /// write, so the target holds if some choice of them makes it hold.
    fn target(&self, cond: &Cond, co: &Rel) -> bool {
        let want = self.test.quantifier != Quantifier::Forall;
        let finals: Vec<Vec<i64>> = (0..self.test.locations.len())
            .map(|l| {
                let writes: Vec<usize> = members(self.x.w)
                    .filter(|&w| w != l && self.events[w].1.loc == self.events[l].1.loc)
                    .collect();
                let last: BTreeSet<i64> = writes
                    .iter()
                    .filter(|&&w| co.row(w) & self.x.w == 0)
                    .map(|&w| self.events[w].1.value)
                    .collect();
                if writes.is_empty() || last.is_empty() {
                    vec![self.events[l].1.value]
                } else {
                    last.into_iter().collect()
                }
            })
            .collect();
        let mut pick = vec![0usize; finals.len()];
        loop {
            let value = |v: CondValue| match v {
                CondValue::Const(c) => c,
                CondValue::Reg(t, r) => self.register(t, r),
                CondValue::Loc(l) => finals[l.0 as usize][pick[l.0 as usize]],
            };
            if cond.eval(&value) == want {
                return true;
            }
            if !next_choice(&mut pick, finals.iter().map(Vec::len)) {
                return false;
            }
        }
    }

    pub(crate) fn witness(
        &self,
        x: &Execution,
        d: &Derived,
        violations: Vec<Violation>,
    ) -> Witness {
        let events = self
            .events
            .iter()
            .enumerate()
            .map(|(i, (t, e))| EventView::new(self.test, i, *t, e))
            .collect();
        let named = |rel: &Rel, skip_init: bool| -> Vec<(usize, usize)> {
            rel.pairs()
                .filter(|&(a, b)| {
                    a != b
                        && !(skip_init
                            && (self.events[a].1.tags.contains(Tags::INIT)
                                || self.events[b].1.tags.contains(Tags::INIT)))
                })
                .collect()
        };
        // `co` from the initial writes is implied; show the rest.
        let co = x.co.minus(&Rel::product(
            x.co.len(),
            (0..self.test.locations.len()).fold(0, |acc, l| acc | bit(l)),
            x.w,
        ));
        Witness {
            events,
            relations: vec![
                ("rf".to_string(), named(&x.rf, false)),
                ("co".to_string(), named(&co, false)),
                ("fr".to_string(), named(&d.fr, false)),
                ("rmw".to_string(), named(&x.rmw, false)),
                ("dep".to_string(), named(&x.dep, false)),
                ("observation".to_string(), named(&d.observation, false)),
                ("sync".to_string(), named(&d.sync, false)),
                ("sync_fence".to_string(), named(&x.sync_fence, false)),
                ("sync_barrier".to_string(), named(&x.sync_barrier, false)),
                ("cause".to_string(), named(&d.cause, true)),
            ],
            registers: self
                .combo
                .iter()
                .enumerate()
                .flat_map(|(t, p)| {
                    p.regs
                        .iter()
                        .map(move |(r, v)| (format!("P{}:{r}", self.test.threads[t].id), *v))
                })
                .collect(),
            violations,
            breaks_dropped: Vec::new(),
        }
    }
}
