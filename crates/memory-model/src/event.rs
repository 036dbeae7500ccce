//! Events, traces and executions: what the machines produce and the event layer
//! judges.
//!
//! A *trace* is a sequence of (thread, action) pairs: [`Event`]s. An
//! [`Execution`] is a trace plus a reads-from map that names, for every load,
//! the store it read. Events are named by their index in the trace
//! ([`EventId`]), printed `#5`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::lang::{Access, BarrierKind, Loc, Ordering, Program, Ty, Value, barrier_name, mnemonic};

/// The index of an event in its trace.
pub type EventId = u32;

/// Who performed an event: the launch's initializer or a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Who {
    /// The initializer: the zero-initialization stores, before every thread.
    Init,
    /// Thread `tid` of the CTA.
    Thread(u32),
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Init => f.write_str("init"),
            Who::Thread(t) => write!(f, "T{t}"),
        }
    }
}

/// A memory or barrier action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Action {
    /// A store of `val`.
    Store {
        /// Where.
        loc: Loc,
        /// Its type tag.
        ty: Ty,
        /// The value written.
        val: Value,
        /// Plain or atomic with an ordering.
        access: Access,
    },
    /// A load that read `val`.
    Load {
        /// Where.
        loc: Loc,
        /// Its type tag.
        ty: Ty,
        /// The value read.
        val: Value,
        /// Plain or atomic with an ordering.
        access: Access,
    },
    /// An atomic read-modify-write that read `old` and stored `new` (none
    /// for a failed compare-exchange, which only reads).
    Rmw {
        /// Where.
        loc: Loc,
        /// Its type tag.
        ty: Ty,
        /// The value read.
        old: Value,
        /// The value written, if any.
        new: Option<Value>,
        /// The ordering it had (the failure ordering for a failed exchange).
        ordering: Ordering,
    },
    /// The thread's `k`-th barrier of this kind (counted from 1).
    Barrier {
        /// Which barrier.
        kind: BarrierKind,
        /// The per-thread count of barriers of this kind, this one included.
        k: u32,
    },
}

impl Action {
    /// The location of a load or store.
    pub fn loc(&self) -> Option<Loc> {
        match self {
            Action::Store { loc, .. } | Action::Load { loc, .. } | Action::Rmw { loc, .. } => {
                Some(*loc)
            }
            Action::Barrier { .. } => None,
        }
    }

    /// Whether this is a store.
    pub fn is_store(&self) -> bool {
        matches!(self, Action::Store { .. })
    }

    /// The value this action leaves in memory, if it writes.
    pub fn written(&self) -> Option<Value> {
        match *self {
            Action::Store { val, .. } => Some(val),
            Action::Rmw { new, .. } => new,
            Action::Load { .. } | Action::Barrier { .. } => None,
        }
    }

    /// Whether this is a load.
    pub fn is_load(&self) -> bool {
        matches!(self, Action::Load { .. })
    }

    /// The same action with a load's value erased: the *program action*, which
    /// does not depend on what memory answered.
    pub fn shape(&self) -> Action {
        match *self {
            Action::Load {
                loc, ty, access, ..
            } => Action::Load {
                loc,
                ty,
                val: 0,
                access,
            },
            Action::Rmw {
                loc, ty, ordering, ..
            } => Action::Rmw {
                loc,
                ty,
                old: 0,
                new: None,
                ordering,
            },
            other => other,
        }
    }
}

/// One step of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Event {
    /// Who performed it.
    pub who: Who,
    /// What was done.
    pub action: Action,
}

/// A trace with its reads-from map.
///
/// # Invariants
/// `rf.len() == events.len()`; `rf[i]` is `Some` exactly for loads. Whether the
/// named store fits the load is what consistency checks, not an invariant.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Execution {
    /// The events, in the order the machine performed them.
    pub events: Vec<Event>,
    /// For each event that is a load, the store it read.
    pub rf: Vec<Option<EventId>>,
}

impl Execution {
    /// Appends an event; `rf` is the store read, for a load.
    pub fn push(&mut self, who: Who, action: Action, rf: Option<EventId>) -> EventId {
        self.events.push(Event { who, action });
        self.rf.push(rf);
        (self.events.len() - 1) as EventId
    }

    /// The number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the execution has no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The event `id`.
    pub fn event(&self, id: EventId) -> &Event {
        &self.events[id as usize]
    }

    /// The value of the last store to `loc` in trace order: the final memory
    /// in the canonical machines, where coherence follows the trace.
    pub fn final_value(&self, loc: Loc) -> Option<Value> {
        self.events
            .iter()
            .rev()
            .filter(|e| e.action.loc() == Some(loc))
            .find_map(|e| e.action.written())
    }

    /// The values read by `who`'s loads of `loc`, in order.
    pub fn reads(&self, who: Who, loc: Loc) -> Vec<Value> {
        self.events
            .iter()
            .filter(|e| e.who == who)
            .filter_map(|e| match e.action {
                Action::Load { loc: l, val, .. } if l == loc => Some(val),
                _ => None,
            })
            .collect()
    }

    /// The trace alone.
    pub fn trace(&self) -> &[Event] {
        &self.events
    }

    /// One event as text: `#5  T1  ld.global.u32 data -> 0   rf #0`.
    pub fn render_event(&self, program: &Program, id: EventId) -> String {
        let event = self.event(id);
        let text = render_action(program, &event.action);
        let rf = match self.rf[id as usize] {
            Some(w) => format!("   rf #{w}"),
            None => String::new(),
        };
        format!("#{id:<4} {:<5} {text}{rf}", event.who.to_string())
    }

    /// The whole execution as text, one event a line, indented by `indent`.
    pub fn render(&self, program: &Program, indent: &str) -> String {
        let mut out = String::new();
        for id in 0..self.len() as EventId {
            let _ = writeln!(out, "{indent}{}", self.render_event(program, id));
        }
        out
    }
}

/// An action as text: `st.release.global.u32 flag := 1`.
pub fn render_action(program: &Program, action: &Action) -> String {
    match *action {
        Action::Store {
            loc,
            ty,
            val,
            access,
        } => {
            format!(
                "{} {} := {val}",
                mnemonic("st", loc.space, ty, access),
                program.loc_name(loc)
            )
        }
        Action::Load {
            loc,
            ty,
            val,
            access,
        } => {
            format!(
                "{} {} -> {val}",
                mnemonic("ld", loc.space, ty, access),
                program.loc_name(loc)
            )
        }
        Action::Rmw {
            loc,
            ty,
            old,
            new,
            ordering,
        } => {
            let written = new.map_or_else(|| "no store".to_string(), |v| format!(":= {v}"));
            format!(
                "{} {} -> {old}, {written}",
                mnemonic("atom", loc.space, ty, Access::Atomic(ordering)),
                program.loc_name(loc)
            )
        }
        Action::Barrier { kind, k } => format!("{} #{k}", barrier_name(kind)),
    }
}
