//! The atomic intrinsics' operations and orderings ([`super::classify`]'s
//! `KnownCall::Atomic`): which operation an intrinsic's name means, and
//! where its memory ordering comes from.

use crate::model::{GenericArg, Path, Ty};

/// An atomic intrinsic's operation, by the intrinsic's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// `atomic_load`
    Load,
    /// `atomic_store`
    Store,
    /// `atomic_cxchg` (strong) or `atomic_cxchgweak`.
    CompareExchange {
        /// Whether it is the weak form.
        weak: bool,
    },
    /// `atomic_xsub`: an add of the negated value.
    Sub,
    /// A read-modify-write with a direct device form.
    Rmw(RmwKind),
    /// `atomic_fence` (`core::sync::atomic::fence`): no pointer, an
    /// ordering.
    Fence,
    /// Another `atomic_*` intrinsic (`atomic_nand`, `atomic_singlethreadfence`): known to
    /// be atomic, with no lowering. The full name, for the diagnostic.
    Other(String),
}

/// The read-modify-writes with a direct device form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwKind {
    /// `atomic_xadd`
    Add,
    /// `atomic_xchg`
    Xchg,
    /// `atomic_and`
    And,
    /// `atomic_or`
    Or,
    /// `atomic_xor`
    Xor,
    /// `atomic_max` (signed)
    Max,
    /// `atomic_min` (signed)
    Min,
    /// `atomic_umax`
    UMax,
    /// `atomic_umin`
    UMin,
}

impl AtomicOp {
    /// The operation of the intrinsic named `name` (`atomic_xadd`), if the
    /// name starts with `atomic_`.
    pub fn from_name(name: &str) -> Option<AtomicOp> {
        let rest = name.strip_prefix("atomic_")?;
        Some(match rest {
            "load" => AtomicOp::Load,
            "store" => AtomicOp::Store,
            "cxchg" => AtomicOp::CompareExchange { weak: false },
            "cxchgweak" => AtomicOp::CompareExchange { weak: true },
            // `core::sync::atomic::atomic_compare_exchange(_weak)`, which the
            // `Atomic*::compare_exchange(_weak)` methods leave after inlining:
            // the orderings are arguments and the result is `Result<T, T>`.
            "compare_exchange" => AtomicOp::CompareExchange { weak: false },
            "compare_exchange_weak" => AtomicOp::CompareExchange { weak: true },
            "xsub" => AtomicOp::Sub,
            "xadd" => AtomicOp::Rmw(RmwKind::Add),
            "xchg" => AtomicOp::Rmw(RmwKind::Xchg),
            "and" => AtomicOp::Rmw(RmwKind::And),
            "or" => AtomicOp::Rmw(RmwKind::Or),
            "xor" => AtomicOp::Rmw(RmwKind::Xor),
            "max" => AtomicOp::Rmw(RmwKind::Max),
            "min" => AtomicOp::Rmw(RmwKind::Min),
            "umax" => AtomicOp::Rmw(RmwKind::UMax),
            "umin" => AtomicOp::Rmw(RmwKind::UMin),
            "fence" => AtomicOp::Fence,
            _ => AtomicOp::Other(name.to_string()),
        })
    }

    /// The intrinsic's name (`atomic_xadd`), for diagnostics.
    pub fn name(&self) -> &str {
        match self {
            AtomicOp::Load => "atomic_load",
            AtomicOp::Store => "atomic_store",
            AtomicOp::CompareExchange { weak: false } => "atomic_cxchg",
            AtomicOp::CompareExchange { weak: true } => "atomic_cxchgweak",
            AtomicOp::Sub => "atomic_xsub",
            AtomicOp::Rmw(RmwKind::Add) => "atomic_xadd",
            AtomicOp::Rmw(RmwKind::Xchg) => "atomic_xchg",
            AtomicOp::Rmw(RmwKind::And) => "atomic_and",
            AtomicOp::Rmw(RmwKind::Or) => "atomic_or",
            AtomicOp::Rmw(RmwKind::Xor) => "atomic_xor",
            AtomicOp::Rmw(RmwKind::Max) => "atomic_max",
            AtomicOp::Rmw(RmwKind::Min) => "atomic_min",
            AtomicOp::Rmw(RmwKind::UMax) => "atomic_umax",
            AtomicOp::Rmw(RmwKind::UMin) => "atomic_umin",
            AtomicOp::Fence => "atomic_fence",
            AtomicOp::Other(name) => name,
        }
    }
}

/// Where an atomic intrinsic's ordering comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderingArg {
    /// The trailing arguments (`atomic_load(p, Ordering::Acquire)`; a
    /// compare-exchange takes two, success then failure).
    Arguments,
    /// A generic argument (`atomic_xadd::<u32, u32, AtomicOrdering::Relaxed>`),
    /// which stands for every ordering the operation takes.
    Generic(AtomicOrdering),
}

/// A memory ordering, as `core::sync::atomic::Ordering` and the intrinsics'
/// `AtomicOrdering` both name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOrdering {
    /// `Relaxed`
    Relaxed,
    /// `Acquire`
    Acquire,
    /// `Release`
    Release,
    /// `AcqRel`
    AcqRel,
    /// `SeqCst`
    SeqCst,
}

impl AtomicOrdering {
    /// The ordering a variant name (`Relaxed`, the last segment of
    /// `Ordering::Relaxed`) stands for.
    pub fn from_name(name: &str) -> Option<AtomicOrdering> {
        Some(match name {
            "Relaxed" => AtomicOrdering::Relaxed,
            "Acquire" => AtomicOrdering::Acquire,
            "Release" => AtomicOrdering::Release,
            "AcqRel" => AtomicOrdering::AcqRel,
            "SeqCst" => AtomicOrdering::SeqCst,
            _ => return None,
        })
    }
}

impl AtomicOrdering {
    /// The weakest ordering at least as strong as both: what one instruction
    /// must carry to honour a compare-exchange's success and failure
    /// orderings (`Release` with `Acquire` is `AcqRel`).
    pub fn join(self, other: AtomicOrdering) -> AtomicOrdering {
        use AtomicOrdering::*;
        match (self, other) {
            (SeqCst, _) | (_, SeqCst) => SeqCst,
            (Relaxed, o) | (o, Relaxed) => o,
            (a, b) if a == b => a,
            _ => AcqRel,
        }
    }
}

/// The ordering named by the generic arguments of `path` (a type or a const
/// `AtomicOrdering::X`): with two (`atomic_cxchg::<T, Release, Acquire>`,
/// success then failure), their [join](AtomicOrdering::join), since the one
/// instruction must honour both.
pub(super) fn generic_ordering(path: &Path) -> Option<AtomicOrdering> {
    path.generic_args()
        .iter()
        .filter_map(|a| match a {
            GenericArg::Type(Ty::Adt(p)) if p.def_path().contains("AtomicOrdering") => {
                AtomicOrdering::from_name(p.last_name())
            }
            GenericArg::Const(c) if c.contains("AtomicOrdering::") => {
                c.rsplit("::").next().and_then(AtomicOrdering::from_name)
            }
            _ => None,
        })
        .reduce(AtomicOrdering::join)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intrinsic_names_give_their_operations_and_back() {
        for name in [
            "atomic_load",
            "atomic_xadd",
            "atomic_umin",
            "atomic_fence",
            "atomic_cxchgweak",
        ] {
            let op = AtomicOp::from_name(name).expect("an atomic intrinsic");
            assert_eq!(op.name(), name);
        }
        assert_eq!(AtomicOp::from_name("atomic_fence"), Some(AtomicOp::Fence));
        // A compiler fence is not a fence the device runs.
        assert_eq!(
            AtomicOp::from_name("atomic_singlethreadfence"),
            Some(AtomicOp::Other("atomic_singlethreadfence".to_string()))
        );
        assert_eq!(AtomicOp::from_name("fence"), None);
    }
}
