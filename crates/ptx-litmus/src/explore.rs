//! Operational exploration of a test's consistent executions, for the set of
//! its final outcomes: the compiled side of a refinement check.
//!
//! [`super::search`] enumerates every candidate (paths by guessed values,
//! then every reads-from map and coherence order) and judges each; that is
//! complete, and it is exponential in the loads, which a compiled kernel of
//! eight threads has dozens of. This module builds executions **event by
//! event** instead, and judges every prefix:
//!
//! - a thread runs its silent instructions, then adds one event;
//! - a read chooses its write among the writes already in the graph (the
//!   initial ones included), which fixes its value: nothing is guessed;
//! - a write chooses its place in coherence among the writes to its
//!   location already there: before, after or (when the two are not
//!   morally strong) unordered with each, kept only if the result is a
//!   strict partial order that leaves the earlier writes' order as it was;
//! - a thread at a barrier waits until every thread of its CTA has reached
//!   its barrier of the same count;
//! - after each event the six axioms are checked on the graph, and an
//!   inconsistent graph is dropped with everything that would extend it.
//!   Every relation of the model grows with the graph and every axiom
//!   forbids something (an edge, a cycle, a reflexive pair), so a violation
//!   stays one in every extension: the pruning loses no execution.
//!
//! **What is covered.** Every consistent execution whose `po ∪ rf` is
//! acyclic (reads read writes that exist when they run). The PTX model also
//! allows some executions with a `po ∪ rf` cycle (load buffering without
//! dependencies); those are not explored, and the crate README says so.
//! `tests/explore.rs` compares the two engines on the Dat3M corpus.
//!
//! **Reduction.** A thread whose next event can conflict with no event that
//! another thread may take before it (by the locations each thread's code
//! can reach before its next barrier, or at all for a thread of another CTA)
//! is the only one expanded at that state: such a step commutes with every
//! step the others could take first, so the other orders reach the same
//! graphs (a persistent set of one thread). Graphs reached twice are
//! expanded once.
//!
//! A `fence.sc` takes every place in the total fence-SC order among those
//! already there (restricted, as in [`super::search`], to the pairs whose
//! scopes include each other). Named barriers with a quorum are refused
//! ([`Limit::Exploration`]), never approximated.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::time::Instant;

use serde::Serialize;

use crate::budget::{Deadline, NoVerdict, Stage};
use crate::error::{CheckError, Limit};
use crate::model::Derived;
use crate::paths::{self, Flow, State, Tags, exec, labels};
use crate::rel::{MAX_EVENTS, Rel};
use crate::report::{Verdict, Witness};
use crate::search::{Base, Options};
use crate::syntax::{CondValue, Instr, Label, Loc, Quantifier, Test};

/// A final outcome: the final value of each observed location, by name.
pub type Final = BTreeMap<String, i64>;

/// What [`outcomes_within`] found.
#[derive(Clone, Debug, Serialize)]
pub struct Explored {
    /// The test's name.
    pub name: String,
    /// Every final outcome of a consistent, terminating execution, each with
    /// the first execution found that has it.
    pub outcomes: BTreeMap<Final, Witness>,
    /// Distinct graphs expanded.
    pub states: u64,
    /// Graphs dropped because a prefix broke an axiom.
    pub pruned: u64,
    /// Complete consistent executions (distinct graphs).
    pub executions: u64,
    /// Complete consistent executions that reach the test's target: its
    /// condition (`exists`, `~exists`) or its negation (`forall`).
    pub reaching: u64,
    /// Graphs where a thread was cut by the loop bound.
    pub cut: u64,
    /// Graphs where no thread could go on and some had not finished (a
    /// barrier that some thread of the CTA never reaches).
    pub blocked: u64,
    /// Whether the exploration stopped at an outcome the caller asked it to
    /// stop at ([`outcomes_until`]): the outcomes are then a subset.
    pub stopped: bool,
    /// Time taken.
    pub millis: f64,
}

impl Explored {
    /// The verdict on the test's condition over the explored executions (the
    /// same reading as [`crate::search`]'s).
    #[must_use]
    pub fn verdict(&self, quantifier: Quantifier) -> Verdict {
        match (quantifier, self.reaching > 0) {
            (Quantifier::Exists, true) => Verdict::Allowed,
            (Quantifier::Exists, false) => Verdict::Forbidden,
            (Quantifier::NotExists | Quantifier::Forall, true) => Verdict::Fails,
            (Quantifier::NotExists | Quantifier::Forall, false) => Verdict::Holds,
        }
    }
}

impl fmt::Display for Explored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} outcomes from {} executions ({} graphs, {} pruned, {} cut, {} blocked, {:.1} ms)",
            self.name,
            self.outcomes.len(),
            self.executions,
            self.states,
            self.pruned,
            self.cut,
            self.blocked,
            self.millis
        )
    }
}

/// Renders an outcome as `{out[0]=36, x=1}`.
pub fn render_final(outcome: &Final) -> String {
    let items: Vec<String> = outcome.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", items.join(", "))
}

/// An event of the graph: an initial write (by location) or a thread's `i`-th.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Ev {
    Init(u32),
    At(u32, u32),
}

/// Where an earlier write goes relative to a new one in coherence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Before,
    After,
    Unordered,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Status {
    Running,
    Done,
}

/// One thread's part of a graph.
#[derive(Clone)]
struct Th {
    s: State,
    status: Status,
}

/// A partial execution: each thread's state and events, `rf` and `co`.
#[derive(Clone)]
struct Graph {
    threads: Vec<Th>,
    /// `(write, read)`.
    rf: Vec<(Ev, Ev)>,
    /// Coherence between non-initial writes, transitively closed.
    co: BTreeSet<(Ev, Ev)>,
    /// The `fence.sc`s in their total order.
    sc: Vec<Ev>,
}

fn accesses(instr: &Instr) -> Option<(Loc, bool)> {
    match *instr {
        Instr::Load { loc, .. } => Some((loc, false)),
        Instr::Store { loc, .. } | Instr::Atom { loc, .. } | Instr::Red { loc, .. } => {
            Some((loc, true))
        }
        _ => None,
    }
}

fn successors(instr: &Instr, at: usize, labels: &BTreeMap<Label, usize>) -> Vec<usize> {
    match instr {
        Instr::Goto(l) => labels.get(l).copied().into_iter().collect(),
        Instr::Branch { target, .. } => {
            let mut out = vec![at + 1];
            out.extend(labels.get(target).copied());
            out
        }
        _ => vec![at + 1],
    }
}

struct Explorer<'a> {
    test: &'a Test,
    options: &'a Options,
    labels: Vec<BTreeMap<Label, usize>>,
    observe: Vec<Loc>,
    barriers: BarrierMatching,
    stop: &'a dyn Fn(&Final) -> bool,
    seen: HashSet<Vec<i64>>,
    out: Explored,
    start: Instant,
}

/// Explores the consistent executions of `test` and collects the final
/// values of `observe` (every location when `None`).
///
/// # Errors
/// [`NoVerdict::Error`] for a run error (a division by zero), an execution
/// past the event limit, or a construct this engine refuses;
/// [`NoVerdict::Timeout`] when `deadline` passes first.
pub fn outcomes_within(
    test: &Test,
    options: &Options,
    observe: Option<&[Loc]>,
    deadline: &Deadline,
) -> Result<Explored, NoVerdict> {
    let exploration = Exploration {
        observe,
        barriers: BarrierMatching::ByInstruction,
        stop: &|_| false,
    };
    outcomes_until(test, options, &exploration, deadline)
}

/// Which barriers of a CTA synchronize with each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierMatching {
    /// Barrier instructions of one instance (and id) are one barrier, as the
    /// litmus format and Dat3M read them: a thread waits until every one of
    /// them in its CTA has been reached.
    ByInstruction,
    /// The `k`-th barrier each thread executes is one barrier (`bar.sync 0`
    /// in a kernel): a thread at its `k`-th waits until every thread of its
    /// CTA has executed `k`. The program's instances must be those counts,
    /// as the refinement translation writes them; the same count may then
    /// be written on several paths of a thread.
    ByCount,
}

/// What [`outcomes_until`] collects, and how.
pub struct Exploration<'a> {
    /// The locations whose final values make an outcome (all when `None`).
    pub observe: Option<&'a [Loc]>,
    /// How barriers match.
    pub barriers: BarrierMatching,
    /// Stop at the first outcome for which this holds ([`Explored::stopped`]).
    pub stop: &'a dyn Fn(&Final) -> bool,
}

/// [`outcomes_within`] with the choices of `exploration`: barriers matched
/// by count, and a stop at the first outcome a refinement check rejects
/// (it needs one outcome outside the source's, not all of them).
///
/// # Errors
/// As [`outcomes_within`].
pub fn outcomes_until(
    test: &Test,
    options: &Options,
    exploration: &Exploration<'_>,
    deadline: &Deadline,
) -> Result<Explored, NoVerdict> {
    let (observe, stop) = (exploration.observe, exploration.stop);
    for thread in &test.threads {
        for line in &thread.code {
            if let Instr::Barrier {
                quorum: Some(_), ..
            } = line.instr
            {
                return Err(CheckError::Limit(Limit::Exploration {
                    what: "named barriers with a quorum",
                })
                .into());
            }
        }
    }
    let observe = observe.map_or_else(
        || (0..test.locations.len() as u32).map(Loc).collect(),
        <[Loc]>::to_vec,
    );
    let mut explorer = Explorer {
        test,
        options,
        labels: test.threads.iter().map(|t| labels(&t.code)).collect(),
        observe,
        barriers: exploration.barriers,
        stop,
        seen: HashSet::new(),
        out: Explored {
            name: test.name.clone(),
            outcomes: BTreeMap::new(),
            states: 0,
            pruned: 0,
            executions: 0,
            reaching: 0,
            cut: 0,
            blocked: 0,
            stopped: false,
            millis: 0.0,
        },
        start: Instant::now(),
    };
    let root = Graph {
        threads: (0..test.threads.len())
            .map(|t| Th {
                s: State::start(test, t),
                status: Status::Running,
            })
            .collect(),
        rf: Vec::new(),
        co: BTreeSet::new(),
        sc: Vec::new(),
    };
    explorer.seen.insert(explorer.key(&root));
    let mut stack = vec![root];
    while let Some(g) = stack.pop() {
        deadline.tick(Stage::Candidates)?;
        explorer.out.states += 1;
        explorer.expand(g, &mut stack, deadline)?;
        if explorer.out.stopped {
            break;
        }
    }
    explorer.out.millis = explorer.start.elapsed().as_secs_f64() * 1e3;
    Ok(explorer.out)
}

/// A thread's next step, found by running its silent instructions.
enum Next {
    /// The thread has finished.
    Done,
    /// A backward jump past the loop bound: no terminating execution.
    Cut,
    /// Waiting at a barrier for the rest of its CTA.
    Waiting,
    /// Its next instruction adds an event: the state just before it.
    Event(State),
}

impl Explorer<'_> {
    fn run_error(&self, t: usize, pc: usize, message: String) -> NoVerdict {
        let line = &self.test.threads[t].code[pc];
        CheckError::from(paths::RunError {
            pos: line.pos,
            message: format!("`{}`: {message}", line.text),
        })
        .into()
    }

    /// Whether `t` has just executed a barrier (`sync`, not `arrive`) that
    /// some barrier instruction of its instance, in its CTA and with its id,
    /// has not reached: it waits there. The instruction-level reading of
    /// [`crate::search`]: barriers of one instance in one CTA are one barrier.
    fn waiting(&self, g: &Graph, t: usize) -> bool {
        let Some(ua) = g.threads[t].s.path.events.last().and_then(|e| e.barrier) else {
            return false;
        };
        if ua.arrive {
            return false;
        }
        let me = &self.test.threads[t];
        if self.barriers == BarrierMatching::ByCount {
            let k = usize::try_from(ua.instance).unwrap_or(usize::MAX);
            return g.threads.iter().enumerate().any(|(u, other)| {
                me.shares(&self.test.threads[u], crate::syntax::Scope::Cta)
                    && barrier_count(&other.s) < k
            });
        }
        self.test.threads.iter().enumerate().any(|(u, other)| {
            me.shares(other, crate::syntax::Scope::Cta)
                && other.code.iter().enumerate().any(|(line, l)| {
                    let Instr::Barrier { instance, id, .. } = l.instr else {
                        return false;
                    };
                    let same_id = match (id, ua.id) {
                        (None, None) => true,
                        (Some(crate::syntax::Operand::Const(v)), Some(x)) => v == x,
                        _ => false,
                    };
                    instance == ua.instance
                        && same_id
                        && !g.threads[u]
                            .s
                            .path
                            .events
                            .iter()
                            .any(|e| e.line == line && e.barrier.is_some())
                })
        })
    }

    /// Runs `t`'s silent instructions up to its next event.
    fn next(&self, g: &Graph, t: usize) -> Result<Next, NoVerdict> {
        let th = &g.threads[t];
        if th.status == Status::Done {
            return Ok(Next::Done);
        }
        if self.waiting(g, t) {
            return Ok(Next::Waiting);
        }
        let code = &self.test.threads[t].code;
        let mut s = th.s.clone();
        loop {
            let Some(line) = code.get(s.pc) else {
                return Ok(Next::Done);
            };
            if line.instr.read_location().is_some() || accesses(&line.instr).is_some() {
                return Ok(Next::Event(s));
            }
            if matches!(line.instr, Instr::Barrier { .. } | Instr::Fence { .. }) {
                return Ok(Next::Event(s));
            }
            let at = s.pc;
            match exec(
                &mut s,
                &line.instr,
                at,
                &self.labels[t],
                self.options.bound.max(1),
                None,
            )
            .map_err(|m| self.run_error(t, at, m))?
            {
                Flow::Next => {}
                Flow::Cut => return Ok(Next::Cut),
            }
        }
    }

    /// Whether `t`'s next instruction conflicts with nothing that another
    /// thread may do before it.
    fn independent(&self, g: &Graph, t: usize, s: &State) -> bool {
        let Some((loc, write)) = accesses(&self.test.threads[t].code[s.pc].instr) else {
            return true;
        };
        (0..g.threads.len()).all(|u| {
            u == t || g.threads[u].status == Status::Done || !self.may_conflict(g, t, u, loc, write)
        })
    }

    /// Whether `t` still has to reach a `sync` barrier instruction of
    /// `instance` with the id `id` (an operand, compared as `search` does):
    /// then no barrier of that instance in `t`'s CTA completes before `t`'s
    /// next event.
    fn holds_back(&self, g: &Graph, t: usize, instance: i64, id: Option<Option<i64>>) -> bool {
        let path = &g.threads[t].s.path;
        if self.barriers == BarrierMatching::ByCount {
            return (barrier_count(&g.threads[t].s) as i64) < instance;
        }
        self.test.threads[t]
            .code
            .iter()
            .enumerate()
            .any(|(line, l)| {
                let Instr::Barrier {
                    arrive: false,
                    instance: i,
                    id: mine,
                    ..
                } = l.instr
                else {
                    return false;
                };
                let same = match (mine, id) {
                    (None, None) => true,
                    (Some(crate::syntax::Operand::Const(v)), Some(Some(x))) => v == x,
                    _ => false,
                };
                i == instance
                    && same
                    && !path
                        .events
                        .iter()
                        .any(|e| e.line == line && e.barrier.is_some())
            })
    }

    /// Whether thread `u` may access `loc` in conflict with `t` (one of the
    /// two writes) before `t`'s next event: along `u`'s code from where it
    /// is, up to a barrier that `t` holds back when both share a CTA.
    fn may_conflict(&self, g: &Graph, t: usize, u: usize, loc: Loc, write: bool) -> bool {
        let same_cta =
            self.test.threads[t].shares(&self.test.threads[u], crate::syntax::Scope::Cta);
        let held = |instr: &Instr| match *instr {
            Instr::Barrier {
                arrive: false,
                instance,
                id,
                ..
            } => {
                let id = id.map(|op| match op {
                    crate::syntax::Operand::Const(v) => Some(v),
                    crate::syntax::Operand::Reg(_) => None,
                });
                same_cta && self.holds_back(g, t, instance, id)
            }
            _ => false,
        };
        // Waiting at a barrier that `t` holds back: `u` cannot move.
        if let Some(b) = g.threads[u].s.path.events.last().and_then(|e| e.barrier)
            && self.waiting(g, u)
            && !b.arrive
            && same_cta
            && self.holds_back(g, t, b.instance, b.id.map(Some))
        {
            return false;
        }
        let code = &self.test.threads[u].code;
        let mut seen = vec![false; code.len()];
        let mut stack = vec![g.threads[u].s.pc];
        while let Some(pc) = stack.pop() {
            if pc >= code.len() || seen[pc] {
                continue;
            }
            seen[pc] = true;
            let instr = &code[pc].instr;
            if held(instr) {
                continue;
            }
            if let Some((l, w)) = accesses(instr)
                && l == loc
                && (w || write)
            {
                return true;
            }
            stack.extend(successors(instr, pc, &self.labels[u]));
        }
        false
    }

    fn expand(
        &mut self,
        g: Graph,
        stack: &mut Vec<Graph>,
        deadline: &Deadline,
    ) -> Result<(), NoVerdict> {
        let n = g.threads.len();
        let mut ready = Vec::new();
        let mut all_done = true;
        for t in 0..n {
            match self.next(&g, t)? {
                Next::Done => {}
                Next::Cut => {
                    self.out.cut += 1;
                    return Ok(());
                }
                Next::Waiting => all_done = false,
                Next::Event(s) => {
                    all_done = false;
                    ready.push((t, s));
                }
            }
        }
        if all_done {
            self.complete(&g);
            return Ok(());
        }
        if ready.is_empty() {
            self.out.blocked += 1;
            return Ok(());
        }
        let chosen: Vec<(usize, State)> =
            match ready.iter().position(|(t, s)| self.independent(&g, *t, s)) {
                Some(i) => vec![ready.swap_remove(i)],
                None => ready,
            };
        for (t, s) in chosen {
            for child in self.step(&g, t, s)? {
                deadline.tick(Stage::Candidates)?;
                // Each distinct graph is judged once and expanded once.
                if !self.seen.insert(self.key(&child)) {
                    continue;
                }
                if self.consistent(&child)? {
                    stack.push(child);
                } else {
                    self.out.pruned += 1;
                }
            }
        }
        Ok(())
    }

    /// Every graph `t`'s next instruction can make from `g`.
    fn step(&self, g: &Graph, t: usize, s: State) -> Result<Vec<Graph>, NoVerdict> {
        let line = &self.test.threads[t].code[s.pc];
        let at = s.pc;
        let events_before = s.path.events.len();
        let bound = self.options.bound.max(1);
        let run = |s: &mut State, read: Option<i64>| {
            exec(s, &line.instr, at, &self.labels[t], bound, read)
                .map_err(|m| self.run_error(t, at, m))
        };
        let mut made = Vec::new();
        match line.instr.read_location() {
            Some(loc) => {
                for (w, value) in self.writes_to(g, loc) {
                    let mut s = s.clone();
                    let before = s.path.events.len();
                    if run(&mut s, Some(value))? == Flow::Cut {
                        continue;
                    }
                    let mut child = g.clone();
                    child.rf.push((w, Ev::At(t as u32, before as u32)));
                    child.threads[t].s = s;
                    made.push(child);
                }
            }
            None => {
                let mut s = s;
                if run(&mut s, None)? == Flow::Cut {
                    return Ok(Vec::new());
                }
                let mut child = g.clone();
                child.threads[t].s = s;
                made.push(child);
            }
        }
        // A write just added (a store, or an RMW's write) takes its place in `co`.
        let mut out = Vec::new();
        for child in made {
            let events = &child.threads[t].s.path.events;
            if events.len() >= MAX_EVENTS {
                return Err(CheckError::Limit(Limit::Events {
                    events: events.len(),
                    max: MAX_EVENTS,
                })
                .into());
            }
            match events.last() {
                Some(e) if e.tags.contains(Tags::W) && events.len() > events_before => {
                    let w = Ev::At(t as u32, (events.len() - 1) as u32);
                    out.extend(self.place_in_co(&child, w));
                }
                // A fence.sc takes every place in the fence-SC order.
                Some(e) if e.tags.contains(Tags::F | Tags::SC) && events.len() > events_before => {
                    let f = Ev::At(t as u32, (events.len() - 1) as u32);
                    for at in 0..=child.sc.len() {
                        let mut placed = child.clone();
                        placed.sc.insert(at, f);
                        out.push(placed);
                    }
                }
                _ => out.push(child),
            }
        }
        Ok(out)
    }

    fn event<'g>(&self, g: &'g Graph, e: Ev) -> Option<&'g paths::Event> {
        match e {
            Ev::Init(_) => None,
            Ev::At(t, i) => g.threads[t as usize].s.path.events.get(i as usize),
        }
    }

    /// The writes to `loc` in `g` with their values, the initial one first.
    fn writes_to(&self, g: &Graph, loc: Loc) -> Vec<(Ev, i64)> {
        let init = self
            .test
            .locations
            .get(loc.0 as usize)
            .map_or(0, |(_, v)| *v);
        let mut out = vec![(Ev::Init(loc.0), init)];
        for (t, th) in g.threads.iter().enumerate() {
            for (i, e) in th.s.path.events.iter().enumerate() {
                if e.tags.contains(Tags::W) && e.loc == Some(loc) {
                    out.push((Ev::At(t as u32, i as u32), e.value));
                }
            }
        }
        out
    }

    /// Every placement of the new write `w` in its location's coherence: for
    /// each earlier write, before `w`, after `w`, or (when the two are not
    /// morally strong) unordered with it, such that the result is a strict
    /// partial order that leaves the earlier writes' order as it was. The
    /// writes are decided in an order compatible with `co`, and a choice
    /// that transitivity would contradict is never made, so every placement
    /// comes out once and none is built to be thrown away.
    fn place_in_co(&self, g: &Graph, w: Ev) -> Vec<Graph> {
        let Some(loc) = self.event(g, w).and_then(|e| e.loc) else {
            return vec![g.clone()];
        };
        let mut others: Vec<Ev> = self
            .writes_to(g, loc)
            .into_iter()
            .map(|(e, _)| e)
            .filter(|&e| e != w && !matches!(e, Ev::Init(_)))
            .collect();
        // `co` is transitively closed: fewer predecessors first is a
        // topological order.
        let all = others.clone();
        let preds = |e: Ev| -> Vec<Ev> {
            all.iter()
                .copied()
                .filter(|&p| g.co.contains(&(p, e)))
                .collect()
        };
        others.sort_by_key(|&e| preds(e).len());
        let preds: Vec<Vec<Ev>> = others.iter().map(|&e| preds(e)).collect();
        let strong: Vec<bool> = others
            .iter()
            .map(|&e| self.morally_strong(g, e, w))
            .collect();
        let mut out = Vec::new();
        let mut side = vec![Side::Unordered; others.len()];
        self.place_from(g, w, &others, &preds, &strong, 0, &mut side, &mut out);
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn place_from(
        &self,
        g: &Graph,
        w: Ev,
        others: &[Ev],
        preds: &[Vec<Ev>],
        strong: &[bool],
        i: usize,
        side: &mut Vec<Side>,
        out: &mut Vec<Graph>,
    ) {
        if i == others.len() {
            let mut child = g.clone();
            for (k, &e) in others.iter().enumerate() {
                match side[k] {
                    Side::Before => {
                        child.co.insert((e, w));
                    }
                    Side::After => {
                        child.co.insert((w, e));
                    }
                    Side::Unordered => {}
                }
            }
            debug_assert!(close(&child.co, &g.co, w).is_some_and(|c| c == child.co));
            out.push(child);
            return;
        }
        let e = others[i];
        let of = |x: Ev| others.iter().position(|&o| o == x).map(|k| side[k]);
        let any_after = side[..i].contains(&Side::After);
        let pred_after = preds[i].iter().any(|&p| of(p) == Some(Side::After));
        let preds_before = preds[i].iter().all(|&p| of(p) == Some(Side::Before));
        // Before `w`: nothing decided is after `w` (it would have to follow
        // `e`, and it comes earlier in the order), and `e`'s predecessors are
        // before `w` too.
        let mut options = Vec::new();
        if !any_after && preds_before {
            options.push(Side::Before);
        }
        // After `w`: every write before `w` precedes `e` already.
        let befores_precede = others[..i]
            .iter()
            .enumerate()
            .filter(|(k, _)| side[*k] == Side::Before)
            .all(|(_, &b)| g.co.contains(&(b, e)));
        if befores_precede {
            options.push(Side::After);
        }
        // Unordered: only writes that are not morally strong, and not after
        // a write that is after `w`.
        if !strong[i] && !pred_after {
            options.push(Side::Unordered);
        }
        if pred_after {
            options.retain(|s| *s == Side::After);
        }
        for choice in options {
            side[i] = choice;
            self.place_from(g, w, others, preds, strong, i + 1, side, out);
        }
        side[i] = Side::Unordered;
    }

    /// Whether two events are morally strong: in program order, or both
    /// strong (not `.weak`) with each one's scope including the other's
    /// thread.
    fn morally_strong(&self, g: &Graph, a: Ev, b: Ev) -> bool {
        let (Ev::At(ta, _), Ev::At(tb, _)) = (a, b) else {
            return false;
        };
        if ta == tb {
            return true;
        }
        let (Some(ea), Some(eb)) = (self.event(g, a), self.event(g, b)) else {
            return false;
        };
        let (pa, pb) = (
            &self.test.threads[ta as usize],
            &self.test.threads[tb as usize],
        );
        match (ea.scope, eb.scope) {
            (Some(sa), Some(sb)) => pa.shares(pb, sa) && pb.shares(pa, sb),
            _ => false,
        }
    }

    /// Whether the graph breaks none of the checked axioms.
    fn consistent(&self, g: &Graph) -> Result<bool, NoVerdict> {
        let combo: Vec<&paths::Path> = g.threads.iter().map(|th| &th.s.path).collect();
        let base = Base::new(self.test, &combo).map_err(CheckError::Limit)?;
        let (x, d) = self.execution(&base, g);
        Ok(self
            .options
            .axioms
            .iter_axioms()
            .all(|a| a.check(&x, &d).is_none()))
    }

    fn index(&self, g: &Graph, e: Ev) -> usize {
        match e {
            Ev::Init(l) => l as usize,
            Ev::At(t, i) => {
                self.test.locations.len()
                    + g.threads[..t as usize]
                        .iter()
                        .map(|th| th.s.path.events.len())
                        .sum::<usize>()
                    + i as usize
            }
        }
    }

    fn execution(&self, base: &Base<'_>, g: &Graph) -> (crate::model::Execution, Derived) {
        let mut x = base.x.clone();
        let n = base.events.len();
        let mut rf = Rel::empty(n);
        for &(w, r) in &g.rf {
            rf.insert(self.index(g, w), self.index(g, r));
        }
        let mut co = Rel::empty(n);
        for (l, _) in self.test.locations.iter().enumerate() {
            for (e, _) in self.writes_to(g, Loc(l as u32)) {
                if e != Ev::Init(l as u32) {
                    co.insert(l, self.index(g, e));
                }
            }
        }
        for &(a, b) in &g.co {
            co.insert(self.index(g, a), self.index(g, b));
        }
        // The fence-SC order, restricted to the pairs whose scopes include
        // each other's thread (as `search` restricts each total order).
        let mut sync_fence = Rel::empty(n);
        for (i, &a) in g.sc.iter().enumerate() {
            for &b in &g.sc[i + 1..] {
                let (Ev::At(ta, _), Ev::At(tb, _)) = (a, b) else {
                    continue;
                };
                let (Some(ea), Some(eb)) = (self.event(g, a), self.event(g, b)) else {
                    continue;
                };
                let (pa, pb) = (
                    &self.test.threads[ta as usize],
                    &self.test.threads[tb as usize],
                );
                if let (Some(sa), Some(sb)) = (ea.scope, eb.scope)
                    && pa.shares(pb, sa)
                    && pb.shares(pa, sb)
                {
                    sync_fence.insert(self.index(g, a), self.index(g, b));
                }
            }
        }
        x.rf = rf;
        x.co = co;
        x.sync_fence = sync_fence;
        x.sync_barrier = base.sync_barrier(base.forced_barriers);
        let mut d = Derived::without_co(&x);
        d.with_co(&x);
        (x, d)
    }

    /// Records a complete graph's outcomes: with `co` partial, a location's
    /// final value is that of any `co`-maximal write.
    fn complete(&mut self, g: &Graph) {
        self.out.executions += 1;
        if self.reaches(g) {
            self.out.reaching += 1;
        }
        let mut finals: Vec<(String, Vec<i64>)> = Vec::new();
        for &loc in &self.observe {
            let name = self.test.loc_name(loc).to_string();
            finals.push((name, self.last_values(g, loc)));
        }
        let mut pick = vec![0usize; finals.len()];
        loop {
            let outcome: Final = finals
                .iter()
                .zip(&pick)
                .map(|((name, values), &i)| (name.clone(), values[i]))
                .collect();
            if !self.out.outcomes.contains_key(&outcome) {
                let combo: Vec<&paths::Path> = g.threads.iter().map(|th| &th.s.path).collect();
                if let Ok(base) = Base::new(self.test, &combo) {
                    let (x, d) = self.execution(&base, g);
                    let mut witness = base.witness(&x, &d, Vec::new());
                    witness.registers = g
                        .threads
                        .iter()
                        .enumerate()
                        .flat_map(|(t, th)| {
                            let id = self.test.threads[t].id;
                            th.s.regs
                                .iter()
                                .map(move |(r, v)| (format!("P{id}:{r}"), *v))
                        })
                        .collect();
                    if (self.stop)(&outcome) {
                        self.out.stopped = true;
                    }
                    self.out.outcomes.insert(outcome, witness);
                }
            }
            if !crate::domain::next_choice(&mut pick, finals.iter().map(|(_, v)| v.len())) {
                break;
            }
        }
    }

    /// The final values a location may hold: those of its `co`-maximal
    /// writes, or its initial value when nothing writes it.
    fn last_values(&self, g: &Graph, loc: Loc) -> Vec<i64> {
        let writes = self.writes_to(g, loc);
        if writes.len() == 1 {
            return vec![writes[0].1];
        }
        let last: BTreeSet<i64> = writes
            .iter()
            .filter(|(e, _)| !matches!(e, Ev::Init(_)))
            .filter(|(e, _)| !g.co.iter().any(|(a, _)| a == e))
            .map(|(_, v)| *v)
            .collect();
        last.into_iter().collect()
    }

    /// Whether a complete graph reaches the target: some choice of final
    /// values makes the condition hold (`exists`) or fail (`forall`).
    fn reaches(&self, g: &Graph) -> bool {
        let want = self.test.quantifier != Quantifier::Forall;
        let finals: Vec<Vec<i64>> = (0..self.test.locations.len() as u32)
            .map(|l| self.last_values(g, Loc(l)))
            .collect();
        let mut pick = vec![0usize; finals.len()];
        loop {
            let value = |v: CondValue| match v {
                CondValue::Const(c) => c,
                CondValue::Reg(t, r) => g
                    .threads
                    .get(t as usize)
                    .and_then(|th| th.s.regs.get(&r).copied())
                    .unwrap_or(0),
                CondValue::Loc(l) => finals[l.0 as usize][pick[l.0 as usize]],
            };
            if self.test.cond.eval(&value) == want {
                return true;
            }
            if !crate::domain::next_choice(&mut pick, finals.iter().map(Vec::len)) {
                return false;
            }
        }
    }

    /// A canonical key of the graph: equal graphs reached in different
    /// orders have equal keys.
    fn key(&self, g: &Graph) -> Vec<i64> {
        let mut k = Vec::new();
        let ev = |e: Ev| match e {
            Ev::Init(l) => -1 - i64::from(l),
            Ev::At(t, i) => (i64::from(t) << 32) | i64::from(i),
        };
        for th in &g.threads {
            k.push(th.s.pc as i64);
            k.push(i64::from(th.status == Status::Done));
            k.push(th.s.regs.len() as i64);
            for (r, v) in &th.s.regs {
                k.extend([i64::from(r.0), *v]);
            }
            k.push(th.s.back_jumps.len() as i64);
            for (at, n) in &th.s.back_jumps {
                k.extend([*at as i64, i64::from(*n)]);
            }
            k.push(th.s.path.events.len() as i64);
            for e in &th.s.path.events {
                k.extend([
                    i64::from(e.tags.bits()),
                    e.loc.map_or(-1, |l| i64::from(l.0)),
                    e.value,
                    e.line as i64,
                ]);
            }
        }
        let mut rf: Vec<(i64, i64)> = g.rf.iter().map(|&(w, r)| (ev(w), ev(r))).collect();
        rf.sort_unstable();
        k.push(rf.len() as i64);
        for (w, r) in rf {
            k.extend([w, r]);
        }
        k.push(g.co.len() as i64);
        for &(a, b) in &g.co {
            k.extend([ev(a), ev(b)]);
        }
        k.push(g.sc.len() as i64);
        k.extend(g.sc.iter().map(|&f| ev(f)));
        k
    }
}

/// How many barriers a thread has executed.
fn barrier_count(s: &State) -> usize {
    s.path
        .events
        .iter()
        .filter(|e| e.tags.contains(Tags::BAR))
        .count()
}

/// The transitive closure of `co`, if it is a strict partial order that
/// relates the writes other than `w` exactly as `before` did.
fn close(
    co: &BTreeSet<(Ev, Ev)>,
    before: &BTreeSet<(Ev, Ev)>,
    w: Ev,
) -> Option<BTreeSet<(Ev, Ev)>> {
    let mut closed = co.clone();
    loop {
        let mut added = Vec::new();
        for &(a, b) in &closed {
            for &(c, d) in &closed {
                if b == c && !closed.contains(&(a, d)) {
                    added.push((a, d));
                }
            }
        }
        if added.is_empty() {
            break;
        }
        closed.extend(added);
    }
    if closed.iter().any(|(a, b)| a == b) {
        return None;
    }
    let old_changed = closed
        .iter()
        .any(|&(a, b)| a != w && b != w && !before.contains(&(a, b)));
    (!old_changed).then_some(closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explore(text: &str) -> Explored {
        let test = crate::parse::parse(text).expect("test parses");
        outcomes_within(&test, &Options::default(), None, &Deadline::none()).expect("explores")
    }

    const MP: &str = r#"PTX MP
{
x=0; y=0;
}
 P0@cta 0,gpu 0           | P1@cta 1,gpu 0             ;
 st.weak x, 1             | ld.acquire.gpu r0, y       ;
 st.release.gpu y, 1      | ld.weak r1, x              ;
exists (P1:r0 == 1 /\ P1:r1 == 0)
"#;

    #[test]
    fn message_passing_outcomes() {
        let explored = explore(MP);
        // Final memory is x = 1, y = 1 whatever the reader saw.
        assert_eq!(explored.outcomes.len(), 1, "{explored}");
        assert!(explored.executions >= 3, "{explored}");
    }

    #[test]
    fn pruning_drops_the_stale_read_after_acquire() {
        let weak = MP.replace("ld.acquire.gpu r0, y", "ld.relaxed.gpu r0, y");
        let strong = explore(MP);
        let weakened = explore(&weak);
        // The weakened reader has one more execution: r0 = 1, r1 = 0.
        assert_eq!(
            weakened.executions,
            strong.executions + 1,
            "{strong}\n{weakened}"
        );
        assert!(strong.pruned > 0, "{strong}");
    }
}
