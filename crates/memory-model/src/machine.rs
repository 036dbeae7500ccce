//! The interleaving machine: sequentially consistent, one event at a time.
//!
//! Its state holds every thread's [`ThreadState`] and two separate memories,
//! global and CTA-shared. The launch's explicit zero-initialization stores run
//! first, as steps of the initializer ([`Who::Init`]); a load from a location
//! that no store has written (or whose last store has another type) cannot
//! step, so every load reads an actual store.
//!
//! Barriers: a thread at its `k`-th CTA-shared barrier may pass it once every
//! thread of its CTA ([`Program::cta_of`]) has passed its `k`-th barrier or is
//! waiting at it. Each CTA has its own shared memory ([`Program::loc_of`]). Threads
//! are released one at a time, in any order. A thread that finishes with fewer
//! barriers leaves the others waiting forever (a deadlock, not a completed run).
//! The legacy global barrier neither blocks nor orders: it is an inert event.
//!
//! The machine has two transition functions: [`ScState::step`] (executable,
//! built on [`thread::step`]) and [`ScState::successors`] (relational, built on
//! [`relation::successors`]). [`reachable`] explores every interleaving.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use crate::event::{Action, Event, EventId, Execution, Who};
use crate::lang::{BarrierKind, Loc, Program, Space, Ty, Value};
use crate::relation;
use crate::thread::{self, Pending, ThreadState};

/// One memory: address → (type of the last store, value).
pub type Memory = BTreeMap<Value, (Ty, Value)>;

/// A state of the interleaving machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScState {
    /// How many initialization stores have run.
    pub init_done: usize,
    /// Every thread's state, shared between the states that did not change it.
    pub threads: Vec<Rc<ThreadState>>,
    /// Global memory.
    pub global: Memory,
    /// CTA-shared memory.
    pub shared: Memory,
}

impl ScState {
    /// The state at launch: nothing initialized yet, every thread at its start.
    pub fn start(program: &Program) -> ScState {
        ScState {
            init_done: 0,
            threads: (0..program.threads())
                .map(|t| Rc::new(ThreadState::start(program, t)))
                .collect(),
            global: Memory::new(),
            shared: Memory::new(),
        }
    }

    fn memory(&self, space: Space) -> &Memory {
        match space {
            Space::Global => &self.global,
            Space::Shared => &self.shared,
        }
    }

    fn memory_mut(&mut self, space: Space) -> &mut Memory {
        match space {
            Space::Global => &mut self.global,
            Space::Shared => &mut self.shared,
        }
    }

    /// What a load of `loc` at type `ty` reads: the last store, if it has that type.
    pub fn read(&self, loc: Loc, ty: Ty) -> Option<Value> {
        match self.memory(loc.space).get(&loc.addr) {
            Some(&(t, v)) if t == ty => Some(v),
            _ => None,
        }
    }

    /// The value at `loc`, whatever its type.
    pub fn value(&self, loc: Loc) -> Option<Value> {
        self.memory(loc.space).get(&loc.addr).map(|&(_, v)| v)
    }

    fn apply_store(&mut self, action: &Action) {
        match *action {
            Action::Store { loc, ty, val, .. }
            | Action::Rmw {
                loc,
                ty,
                new: Some(val),
                ..
            } => {
                self.memory_mut(loc.space).insert(loc.addr, (ty, val));
            }
            _ => {}
        }
    }

    /// Whether the initializer has finished.
    pub fn initialized(&self, program: &Program) -> bool {
        self.init_done == program.init.len()
    }

    /// Whether every thread has finished.
    pub fn finished(&self, program: &Program) -> bool {
        self.initialized(program)
            && self.threads.iter().enumerate().all(|(t, ts)| {
                let mut ts = ThreadState::clone(ts);
                thread::next_action(program, t as u32, &mut ts) == Pending::Done
            })
    }

    /// The executable step function: `who` performs its next event, if it can.
    pub fn step(&self, program: &Program, who: Who) -> Option<(Event, ScState)> {
        match who {
            Who::Init => {
                let init = program.init.get(self.init_done)?;
                let action = Action::Store {
                    loc: init.loc,
                    ty: init.ty,
                    val: init.val,
                    access: crate::lang::Access::Plain,
                };
                let mut next = self.clone();
                next.init_done += 1;
                next.apply_store(&action);
                Some((Event { who, action }, next))
            }
            Who::Thread(t) => {
                if !self.initialized(program) {
                    return None;
                }
                let ts = &self.threads[t as usize];
                let (action, after) = thread::step(program, t, ts, |loc, ty| self.read(loc, ty))?;
                if let Action::Barrier {
                    kind: BarrierKind::Shared,
                    k,
                } = action
                    && !self.barrier_open(program, t, k)
                {
                    return None;
                }
                let mut next = self.clone();
                next.threads[t as usize] = Rc::new(after);
                next.apply_store(&action);
                Some((Event { who, action }, next))
            }
        }
    }

    /// Whether the `k`-th shared barrier of thread `t`'s CTA lets threads
    /// through: every thread of the CTA has passed it or waits at it.
    fn barrier_open(&self, program: &Program, t: u32, k: u32) -> bool {
        self.threads.iter().enumerate().all(|(u, ts)| {
            program.cta_of(u as u32) != program.cta_of(t)
                || ts.shared_barriers >= k
                || (ts.shared_barriers + 1 == k && {
                    let mut ts = ThreadState::clone(ts);
                    thread::next_action(program, u as u32, &mut ts)
                        == Pending::Barrier(BarrierKind::Shared)
                })
        })
    }

    /// The relational semantics: every `(who, event, state')` the rules allow.
    pub fn successors(&self, program: &Program) -> Vec<(Who, Event, ScState)> {
        let mut out = Vec::new();
        // Rule init: the initializer stores, in order, before any thread.
        if let Some(init) = program.init.get(self.init_done) {
            let action = Action::Store {
                loc: init.loc,
                ty: init.ty,
                val: init.val,
                access: crate::lang::Access::Plain,
            };
            let mut next = self.clone();
            next.init_done += 1;
            next.apply_store(&action);
            out.push((
                Who::Init,
                Event {
                    who: Who::Init,
                    action,
                },
                next,
            ));
            return out;
        }
        let read = |loc: Loc, ty: Ty| self.read(loc, ty);
        // Rule thread: a thread-local derivation, with the barrier premise.
        let derived: Vec<Vec<(Action, ThreadState)>> = self
            .threads
            .iter()
            .enumerate()
            .map(|(t, ts)| relation::successors(program, t as u32, ts, &read))
            .collect();
        let waiting_at = |u: usize, k: u32| {
            derived[u].iter().any(|(a, _)| {
                *a == Action::Barrier {
                    kind: BarrierKind::Shared,
                    k,
                }
            })
        };
        for (t, successors) in derived.iter().enumerate() {
            for (action, after) in successors {
                if let Action::Barrier {
                    kind: BarrierKind::Shared,
                    k,
                } = *action
                {
                    let open = (0..self.threads.len()).all(|u| {
                        program.cta_of(u as u32) != program.cta_of(t as u32)
                            || self.threads[u].shared_barriers >= k
                            || waiting_at(u, k)
                    });
                    if !open {
                        continue;
                    }
                }
                let mut next = self.clone();
                next.threads[t] = Rc::new(after.clone());
                next.apply_store(action);
                let who = Who::Thread(t as u32);
                out.push((
                    who,
                    Event {
                        who,
                        action: *action,
                    },
                    next,
                ));
            }
        }
        out
    }

    /// Everyone who may step: the initializer, then the threads.
    pub fn actors(&self) -> impl Iterator<Item = Who> {
        std::iter::once(Who::Init).chain((0..self.threads.len() as u32).map(Who::Thread))
    }
}

/// A small multiplicative hasher (the rustc "Fx" hash): states are hashed
/// once per transition, and SipHash dominated the exploration's time.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The sizes of an exploration of every interleaving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reachable {
    /// Distinct states reached.
    pub states: u64,
    /// Transitions taken.
    pub transitions: u64,
    /// States where every thread has finished.
    pub finished: u64,
    /// States with no successor where some thread has not finished.
    pub stuck: u64,
}

/// Explores every state reachable by the relational semantics, calling
/// `visit` on each (breadth first, each state once).
pub fn reachable(
    program: &Program,
    mut visit: impl FnMut(&ScState, &[(Who, Event, ScState)]),
) -> Reachable {
    let start = ScState::start(program);
    let mut seen: HashSet<ScState, BuildHasherDefault<FxHasher>> = HashSet::default();
    let mut queue = VecDeque::new();
    seen.insert(start.clone());
    queue.push_back(start);
    let mut stats = Reachable::default();
    while let Some(state) = queue.pop_front() {
        stats.states += 1;
        let successors = state.successors(program);
        visit(&state, &successors);
        if successors.is_empty() {
            if state.finished(program) {
                stats.finished += 1;
            } else {
                stats.stuck += 1;
            }
        }
        for (_, _, next) in successors {
            stats.transitions += 1;
            if !seen.contains(&next) {
                seen.insert(next.clone());
                queue.push_back(next);
            }
        }
    }
    stats
}

/// A run of the machine, with the reads-from that memory implied.
#[derive(Clone, Debug)]
pub struct Run {
    /// The trace, and for every load the store whose value it found.
    pub exec: Execution,
    /// The final state.
    pub state: ScState,
}

/// Records a run: tracks the last store to each location, for reads-from.
struct Recorder {
    exec: Execution,
    last_store: HashMap<Loc, EventId>,
}

impl Recorder {
    fn record(&mut self, event: Event) {
        let rf = match event.action {
            Action::Load { loc, .. } | Action::Rmw { loc, .. } => {
                self.last_store.get(&loc).copied()
            }
            _ => None,
        };
        let id = self.exec.push(event.who, event.action, rf);
        if let Some(loc) = event
            .action
            .loc()
            .filter(|_| event.action.written().is_some())
        {
            self.last_store.insert(loc, id);
        }
    }
}

/// Runs `schedule` (one actor per step) with the executable step function.
/// `None` when some scheduled actor cannot step.
pub fn run_schedule(program: &Program, schedule: &[Who]) -> Option<Run> {
    let mut state = ScState::start(program);
    let mut rec = Recorder {
        exec: Execution::default(),
        last_store: HashMap::new(),
    };
    for &who in schedule {
        let (event, next) = state.step(program, who)?;
        rec.record(event);
        state = next;
    }
    Some(Run {
        exec: rec.exec,
        state,
    })
}

/// Runs the machine under the canonical schedule of [`crate::relaxed`]: the
/// initializer, then round by round each thread in order up to its next shared
/// barrier, then the barriers released in thread order. Without shared
/// barriers this is the plain schedule: each thread to completion, in order.
/// `None` when the run deadlocks or a load finds nothing to read.
pub fn run_canonical(program: &Program) -> Option<Run> {
    let mut state = ScState::start(program);
    let mut rec = Recorder {
        exec: Execution::default(),
        last_store: HashMap::new(),
    };
    while let Some((event, next)) = state.step(program, Who::Init) {
        rec.record(event);
        state = next;
    }
    let n = program.threads();
    loop {
        for t in 0..n {
            loop {
                let mut ts = ThreadState::clone(&state.threads[t as usize]);
                match thread::next_action(program, t, &mut ts) {
                    Pending::Done | Pending::Barrier(BarrierKind::Shared) => break,
                    _ => {}
                }
                let (event, next) = state.step(program, Who::Thread(t))?;
                rec.record(event);
                state = next;
            }
        }
        if state.finished(program) {
            return Some(Run {
                exec: rec.exec,
                state,
            });
        }
        for t in 0..n {
            let (event, next) = state.step(program, Who::Thread(t))?;
            rec.record(event);
            state = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus;

    #[test]
    fn shared_barrier_blocks_until_every_thread_arrives() {
        let program = litmus::barrier_message_passing(BarrierKind::Shared);
        // init, then T1 tries its barrier first: T0 has not arrived.
        let run = run_schedule(&program, &[Who::Init]).expect("init runs");
        assert!(run.state.step(&program, Who::Thread(1)).is_none());
        // T0 stores and waits at its barrier; now both may pass, in any order.
        let schedule = [Who::Init, Who::Thread(0), Who::Thread(1), Who::Thread(0)];
        let run = run_schedule(&program, &schedule).expect("the barrier opens");
        let load = run
            .state
            .step(&program, Who::Thread(1))
            .map(|(e, _)| e.action);
        assert!(
            matches!(load, Some(Action::Load { val: 1, .. })),
            "{load:?}"
        );
    }

    #[test]
    fn legacy_barrier_does_not_block() {
        let program = litmus::barrier_message_passing(BarrierKind::LegacyGlobal);
        let run = run_schedule(&program, &[Who::Init, Who::Thread(1), Who::Thread(1)])
            .expect("no blocking");
        assert_eq!(run.exec.reads(Who::Thread(1), litmus::DATA), vec![0]);
    }

    #[test]
    fn threads_wait_for_the_initializer() {
        let program = litmus::store_buffering();
        let start = ScState::start(&program);
        assert!(start.step(&program, Who::Thread(0)).is_none());
        assert_eq!(start.successors(&program).len(), 1);
    }

    #[test]
    fn divergent_barrier_deadlocks() {
        let program = litmus::divergent_barrier();
        let stats = reachable(&program, |_, _| {});
        assert_eq!((stats.finished, stats.stuck), (0, 1));
        assert!(run_canonical(&program).is_none());
    }
}
