//! The PTX memory model of Lustig, Sahasrabuddhe and Giroux (ASPLOS 2019),
//! in the form Dat3M checks it (`cat/ptx-v6.0.cat`): the derived relations
//! and the six axioms, each its own predicate.
//!
//! An [`Execution`] holds one candidate's base relations; [`Derived`] holds
//! the relations the axioms are stated over; [`Axiom::check`] decides one
//! axiom and, when it fails, names the offending edge or cycle.

use std::fmt;

use bitflags::bitflags;
use serde::Serialize;

use crate::rel::{Rel, Set};

/// One of the model's axioms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Axiom {
    /// `cause` between same-location writes agrees with `co`, and `co` orders
    /// every pair of morally strong same-location writes.
    Coherence,
    /// `cause` between `fence.sc`s agrees with the fence-SC order.
    FenceSc,
    /// No morally strong write comes between an RMW's read and its write.
    Atomicity,
    /// `rf | dep` is acyclic.
    NoThinAir,
    /// Morally strong `rf | co | fr`, with `po-loc`, is acyclic.
    ScPerLocation,
    /// `(rf | fr); cause` is irreflexive.
    Causality,
}

impl Axiom {
    /// Every axiom, in the paper's order.
    pub const ALL: [Axiom; 6] = [
        Axiom::Coherence,
        Axiom::FenceSc,
        Axiom::Atomicity,
        Axiom::NoThinAir,
        Axiom::ScPerLocation,
        Axiom::Causality,
    ];

    /// The axiom's name, as the paper writes it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Axiom::Coherence => "Coherence",
            Axiom::FenceSc => "FenceSC",
            Axiom::Atomicity => "Atomicity",
            Axiom::NoThinAir => "No-Thin-Air",
            Axiom::ScPerLocation => "SC-per-Location",
            Axiom::Causality => "Causality",
        }
    }

    /// Reads a name: the paper's, or lower case without punctuation.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Axiom> {
        let key: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        Axiom::ALL.into_iter().find(|a| {
            a.name()
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase()
                == key
        })
    }

    fn flag(self) -> Axioms {
        match self {
            Axiom::Coherence => Axioms::COHERENCE,
            Axiom::FenceSc => Axioms::FENCE_SC,
            Axiom::Atomicity => Axioms::ATOMICITY,
            Axiom::NoThinAir => Axioms::NO_THIN_AIR,
            Axiom::ScPerLocation => Axioms::SC_PER_LOCATION,
            Axiom::Causality => Axioms::CAUSALITY,
        }
    }

    /// Whether `x` satisfies this axiom; if not, what breaks it.
    #[must_use]
    pub fn check(self, x: &Execution, d: &Derived) -> Option<Violation> {
        let pairs = |r: Rel, what: &str| {
            let first = r.pairs().next()?;
            Some(Violation {
                axiom: self,
                what: what.to_string(),
                events: vec![first.0, first.1],
            })
        };
        let cycle = |r: &Rel, what: &str| {
            r.a_cycle().map(|events| Violation {
                axiom: self,
                what: what.to_string(),
                events,
            })
        };
        match self {
            Axiom::Coherence => {
                let ww_cause = d.cause.restrict(x.w, x.w).inter(&x.loc);
                pairs(
                    ww_cause.minus(&x.co),
                    "a `cause` edge between writes that `co` lacks",
                )
                .or_else(|| {
                    let strong = x.ms.restrict(x.w, x.w).inter(&x.loc);
                    pairs(
                        strong.minus(&x.co.union(&x.co.inverse())),
                        "morally strong writes that `co` does not order",
                    )
                })
            }
            Axiom::FenceSc => pairs(
                d.cause.restrict(x.f_sc, x.f_sc).minus(&x.sync_fence),
                "a `cause` edge between fence.sc's that the fence-SC order lacks",
            ),
            Axiom::Atomicity => pairs(
                x.ms.inter(&d.fr).seq(&x.ms.inter(&x.co)).inter(&x.rmw),
                "a morally strong write between an RMW's read and its write",
            ),
            Axiom::NoThinAir => cycle(&x.rf.union(&x.dep), "a cycle in `rf | dep`"),
            Axiom::ScPerLocation => cycle(
                &x.ms.inter(&x.rf.union(&x.co).union(&d.fr)).union(&x.po_loc),
                "a cycle in morally strong `rf | co | fr` with `po-loc`",
            ),
            Axiom::Causality => {
                let r = x.rf.union(&d.fr).seq(&d.cause);
                let at = super::rel::members(r.reflexive_events()).next()?;
                Some(Violation {
                    axiom: self,
                    what: "an event reached from itself by `(rf | fr); cause`".to_string(),
                    events: vec![at],
                })
            }
        }
    }
}

impl fmt::Display for Axiom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

bitflags! {
    /// A set of axioms: the model checks exactly these.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Axioms: u8 {
        /// [`Axiom::Coherence`].
        const COHERENCE = 1;
        /// [`Axiom::FenceSc`].
        const FENCE_SC = 1 << 1;
        /// [`Axiom::Atomicity`].
        const ATOMICITY = 1 << 2;
        /// [`Axiom::NoThinAir`].
        const NO_THIN_AIR = 1 << 3;
        /// [`Axiom::ScPerLocation`].
        const SC_PER_LOCATION = 1 << 4;
        /// [`Axiom::Causality`].
        const CAUSALITY = 1 << 5;
    }
}

impl Axioms {
    /// Whether `axiom` is in the set.
    #[must_use]
    pub fn has(self, axiom: Axiom) -> bool {
        self.contains(axiom.flag())
    }

    /// The set without `axiom`.
    #[must_use]
    pub fn without(self, axiom: Axiom) -> Axioms {
        self - axiom.flag()
    }

    /// The axioms in the set, in the paper's order.
    pub fn iter_axioms(self) -> impl Iterator<Item = Axiom> {
        Axiom::ALL.into_iter().filter(move |a| self.has(*a))
    }
}

/// Why a candidate breaks an axiom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The axiom.
    pub axiom: Axiom,
    /// What is wrong, in words.
    pub what: String,
    /// The offending edge (two events), cycle, or event, as event indices.
    pub events: Vec<usize>,
}

/// One candidate execution's events and base relations.
#[derive(Clone, Debug)]
pub struct Execution {
    /// Reads.
    pub r: Set,
    /// Writes, initial ones included.
    pub w: Set,
    /// Fences and barriers.
    pub f: Set,
    /// Strong writes: `W & (RLX | REL)`.
    pub strong_w: Set,
    /// Strong reads: `R & (RLX | ACQ)`.
    pub strong_r: Set,
    /// Release writes: `W & REL`.
    pub w_rel: Set,
    /// Acquire reads: `R & ACQ`.
    pub r_acq: Set,
    /// `F & ACQ_REL`.
    pub f_acq_rel: Set,
    /// `F & SC`.
    pub f_sc: Set,
    /// Program order.
    pub po: Rel,
    /// Same location, between memory events.
    pub loc: Rel,
    /// `po & loc`.
    pub po_loc: Rel,
    /// Read-modify-write pairs.
    pub rmw: Rel,
    /// `addr | data | ctrl`.
    pub dep: Rel,
    /// Morally strong pairs.
    pub ms: Rel,
    /// Reads-from.
    pub rf: Rel,
    /// Coherence, transitively closed.
    pub co: Rel,
    /// The fence-SC order between morally strong `fence.sc`s.
    pub sync_fence: Rel,
    /// `syncbar & scta`: barrier synchronization.
    pub sync_barrier: Rel,
}

/// The relations the axioms are stated over.
#[derive(Clone, Debug)]
pub struct Derived {
    /// `rf^-1; co`.
    pub fr: Rel,
    /// `observation`, the least fixed point of `(ms & rf) | (obs; rmw; obs)`.
    pub observation: Rel,
    /// `sync`: release pattern, observation, acquire pattern, morally strong.
    pub sync: Rel,
    /// `cause-base`.
    pub cause_base: Rel,
    /// `cause`.
    pub cause: Rel,
}

impl Derived {
    /// The relations that do not depend on `co`; `fr` is left empty for
    /// [`Derived::with_co`].
    #[must_use]
    pub fn without_co(x: &Execution) -> Derived {
        let n = x.po.len();
        let mut observation = x.ms.inter(&x.rf);
        loop {
            let next = observation.union(&observation.seq(&x.rmw).seq(&observation));
            if next == observation {
                break;
            }
            observation = next;
        }
        let release = x
            .po_loc
            .opt()
            .restrict(x.w_rel, x.strong_w)
            .union(&x.po.restrict(x.f_acq_rel, x.strong_w));
        let acquire = x
            .po_loc
            .opt()
            .restrict(x.strong_r, x.r_acq)
            .union(&x.po.restrict(x.strong_r, x.f_acq_rel));
        let sync = x.ms.inter(&release.seq(&observation).seq(&acquire));
        let po_opt = x.po.opt();
        let step = sync
            .union(&x.sync_fence)
            .union(&x.sync_barrier)
            .seq(&po_opt);
        let cause_base = po_opt.seq(&step.plus());
        let cause = cause_base.union(&observation.seq(&cause_base.union(&x.po_loc)));
        Derived {
            fr: Rel::empty(n),
            observation,
            sync,
            cause_base,
            cause,
        }
    }

    /// Adds `fr` for the execution's `co`.
    pub fn with_co(&mut self, x: &Execution) {
        self.fr = x.rf.inverse().seq(&x.co);
    }
}
