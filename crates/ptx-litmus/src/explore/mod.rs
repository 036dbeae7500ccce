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

mod coherence;
mod independence;
mod judge;

use independence::accesses;

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
