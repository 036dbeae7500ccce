//! The happens-before summary carried along an interleaving: one vector
//! clock per thread, the latest access of each kind per location and
//! thread, the clocks of release stores (and their release sequences), and
//! each CTA's barrier clock. [`Hb::step`] applies one event and names the
//! earlier access it races with, if any.

use std::collections::BTreeMap;

use crate::event::Action;
use crate::lang::{Access, BarrierKind, Loc, Ordering, Program};

/// A vector clock: one component per thread.
type Clock = Vec<u32>;

/// The latest access of each kind, per thread and location: epochs (the
/// thread's own clock component at the access).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Latest {
    plain_write: Option<u32>,
    atomic_write: Option<u32>,
    plain_read: Option<u32>,
    atomic_read: Option<u32>,
}

impl Latest {
    /// The accesses that conflict with an access of the given kind:
    /// `(epoch, is_write, is_atomic)`.
    fn conflicts(&self, write: bool, atomic: bool) -> impl Iterator<Item = (u32, bool, bool)> {
        [
            (self.plain_write, true, false),
            (self.atomic_write, true, true),
            (self.plain_read, false, false),
            (self.atomic_read, false, true),
        ]
        .into_iter()
        .filter_map(move |(epoch, w, a)| {
            let conflicting = (write || w) && (!atomic || !a);
            epoch.filter(|_| conflicting).map(|e| (e, w, a))
        })
    }

    fn record(&mut self, epoch: u32, write: bool, atomic: bool) {
        let slot = match (write, atomic) {
            (true, false) => &mut self.plain_write,
            (true, true) => &mut self.atomic_write,
            (false, false) => &mut self.plain_read,
            (false, true) => &mut self.atomic_read,
        };
        *slot = Some(epoch);
    }
}

/// The happens-before summary carried with a machine state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Hb {
    clocks: Vec<Clock>,
    latest: BTreeMap<Loc, Vec<Latest>>,
    /// The clock of the last store to a location, when it was a release.
    release: BTreeMap<Loc, Clock>,
    /// Per CTA, the clock of the barrier being passed: its count and the join
    /// of the clocks of every thread of the CTA as it arrived.
    barrier: BTreeMap<u32, (u32, Clock)>,
}

fn join(into: &mut Clock, other: &Clock) {
    for (a, b) in into.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}

/// The earlier access that a new one races with: its thread and epoch.
pub(super) struct Conflict {
    pub(super) thread: u32,
    pub(super) epoch: u32,
}

impl Hb {
    pub(super) fn new(threads: usize) -> Hb {
        Hb {
            clocks: vec![vec![0; threads]; threads],
            latest: BTreeMap::new(),
            release: BTreeMap::new(),
            barrier: BTreeMap::new(),
        }
    }

    /// Applies one thread event; the first earlier access it races with, if any.
    pub(super) fn step(&mut self, program: &Program, t: u32, action: &Action) -> Option<Conflict> {
        let ti = t as usize;
        match *action {
            Action::Barrier {
                kind: BarrierKind::Shared,
                k,
            } => {
                let cta = program.cta_of(t);
                if self.barrier.get(&cta).is_none_or(|(bk, _)| *bk != k) {
                    let mut all = vec![0; self.clocks.len()];
                    for (u, c) in self.clocks.iter().enumerate() {
                        if program.cta_of(u as u32) == cta {
                            join(&mut all, c);
                        }
                    }
                    self.barrier.insert(cta, (k, all));
                }
                if let Some((_, b)) = self.barrier.get(&cta) {
                    let b = b.clone();
                    join(&mut self.clocks[ti], &b);
                }
                self.clocks[ti][ti] += 1;
                None
            }
            Action::Barrier {
                kind: BarrierKind::LegacyGlobal,
                ..
            } => {
                self.clocks[ti][ti] += 1;
                None
            }
            Action::Load { loc, access, .. } => {
                if access == Access::Atomic(Ordering::Acquire)
                    && let Some(c) = self.release.get(&loc)
                {
                    let c = c.clone();
                    join(&mut self.clocks[ti], &c);
                }
                self.clocks[ti][ti] += 1;
                self.access(t, loc, false, access != Access::Plain)
            }
            Action::Rmw {
                loc, new, ordering, ..
            } => {
                // The read part synchronizes like an acquire load, the write
                // part like a release store (a failed exchange only reads).
                if matches!(ordering, Ordering::Acquire | Ordering::AcqRel)
                    && let Some(c) = self.release.get(&loc)
                {
                    let c = c.clone();
                    join(&mut self.clocks[ti], &c);
                }
                self.clocks[ti][ti] += 1;
                let conflict = self.access(t, loc, new.is_some(), true);
                // An RMW continues the release sequence it reads from: the
                // clock of the release it extends stays, joined with its own
                // when it releases too.
                if new.is_some() && matches!(ordering, Ordering::Release | Ordering::AcqRel) {
                    let mut c = self.clocks[ti].clone();
                    if let Some(before) = self.release.get(&loc) {
                        join(&mut c, before);
                    }
                    self.release.insert(loc, c);
                }
                conflict
            }
            Action::Store { loc, access, .. } => {
                self.clocks[ti][ti] += 1;
                let conflict = self.access(t, loc, true, access != Access::Plain);
                if access == Access::Atomic(Ordering::Release) {
                    self.release.insert(loc, self.clocks[ti].clone());
                } else {
                    self.release.remove(&loc);
                }
                conflict
            }
        }
    }

    fn access(&mut self, t: u32, loc: Loc, write: bool, atomic: bool) -> Option<Conflict> {
        let threads = self.clocks.len();
        let latest = self
            .latest
            .entry(loc)
            .or_insert_with(|| vec![Latest::default(); threads]);
        let clock = &self.clocks[t as usize];
        let mut conflict = None;
        for (u, l) in latest.iter().enumerate() {
            if u == t as usize {
                continue;
            }
            if let Some((epoch, _, _)) = l.conflicts(write, atomic).find(|(e, _, _)| *e > clock[u])
            {
                conflict = Some(Conflict {
                    thread: u as u32,
                    epoch,
                });
                break;
            }
        }
        let epoch = clock[t as usize];
        latest[t as usize].record(epoch, write, atomic);
        conflict
    }
}
