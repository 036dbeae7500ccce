//! Atomics and fences as inline PTX.
//!
//! libNVVM 2.0 refuses `load atomic ... acquire` ("unsupported operation"), and
//! lowers `atomicrmw` to a plain `atom` whatever its ordering and `syncscope`
//! (measured: `atomicrmw add ... syncscope("block") acq_rel` becomes
//! `atom.global.add.u32`). So every atomic is printed as an inline PTX call that
//! names its semantics and scope exactly, per the standard C++-to-PTX mapping:
//!
//! | device IR | PTX |
//! |---|---|
//! | load relaxed / acquire | `ld.relaxed.S` / `ld.acquire.S` |
//! | load seq_cst | `fence.sc.S; ld.acquire.S` |
//! | store relaxed / release | `st.relaxed.S` / `st.release.S` |
//! | store seq_cst | `fence.sc.S; st.release.S` |
//! | rmw, cas with ordering O | `atom.O.S`; seq_cst: `fence.sc.S; atom.acq_rel.S` |
//! | fence acquire, release, acq_rel / seq_cst | `fence.acq_rel.S` / `fence.sc.S` |
//!
//! The state space is `.global` or `.shared` for pointers in those spaces and is
//! left out (generic addressing) for generic pointers. These forms need `sm_70`.

use device_ir::{AddressSpace, Ordering, RmwOp, Scope};

/// The PTX state-space suffix for an access through a pointer in `space`.
pub(crate) fn space_suffix(space: AddressSpace) -> &'static str {
    match space {
        AddressSpace::Global => ".global",
        AddressSpace::Shared => ".shared",
        AddressSpace::Constant => ".const",
        AddressSpace::Local => ".local",
        AddressSpace::Generic => "",
    }
}

fn sc_prefix(ordering: Ordering, scope: Scope) -> String {
    if ordering == Ordering::SeqCst {
        format!("fence.sc.{};\n\t", scope.name())
    } else {
        String::new()
    }
}

/// The inline-asm template of an atomic load into `$0` from `[$1]`.
pub(crate) fn load(ordering: Ordering, scope: Scope, space: AddressSpace, bits: u32) -> String {
    let sem = if ordering == Ordering::Relaxed {
        "relaxed"
    } else {
        "acquire"
    };
    format!(
        "{}ld.{sem}.{}{}.u{bits} $0, [$1];",
        sc_prefix(ordering, scope),
        scope.name(),
        space_suffix(space)
    )
}

/// The inline-asm template of an atomic store of `$1` to `[$0]`.
pub(crate) fn store(ordering: Ordering, scope: Scope, space: AddressSpace, bits: u32) -> String {
    let sem = if ordering == Ordering::Relaxed {
        "relaxed"
    } else {
        "release"
    };
    format!(
        "{}st.{sem}.{}{}.u{bits} [$0], $1;",
        sc_prefix(ordering, scope),
        scope.name(),
        space_suffix(space)
    )
}

fn rmw_sem(ordering: Ordering) -> &'static str {
    match ordering {
        Ordering::Relaxed => "relaxed",
        Ordering::Acquire => "acquire",
        Ordering::Release => "release",
        Ordering::AcqRel | Ordering::SeqCst => "acq_rel",
    }
}

/// The inline-asm template of `$0 = atom.op [$1], $2`. `float` says whether the
/// operand is a float (for `fadd`).
pub(crate) fn rmw(
    op: RmwOp,
    ordering: Ordering,
    scope: Scope,
    space: AddressSpace,
    bits: u32,
) -> String {
    let (name, kind) = match op {
        RmwOp::Xchg => ("exch", "b"),
        RmwOp::Add => ("add", "u"),
        RmwOp::FAdd => ("add", "f"),
        RmwOp::And => ("and", "b"),
        RmwOp::Or => ("or", "b"),
        RmwOp::Xor => ("xor", "b"),
        RmwOp::SMax => ("max", "s"),
        RmwOp::SMin => ("min", "s"),
        RmwOp::UMax => ("max", "u"),
        RmwOp::UMin => ("min", "u"),
    };
    format!(
        "{}atom.{}.{}{}.{name}.{kind}{bits} $0, [$1], $2;",
        sc_prefix(ordering, scope),
        rmw_sem(ordering),
        scope.name(),
        space_suffix(space)
    )
}

/// The inline-asm template of `$0 = atom.cas [$1], $2, $3`.
pub(crate) fn cas(ordering: Ordering, scope: Scope, space: AddressSpace, bits: u32) -> String {
    format!(
        "{}atom.{}.{}{}.cas.b{bits} $0, [$1], $2, $3;",
        sc_prefix(ordering, scope),
        rmw_sem(ordering),
        scope.name(),
        space_suffix(space)
    )
}

/// The inline-asm template of a fence.
pub(crate) fn fence(ordering: Ordering, scope: Scope) -> String {
    let sem = if ordering == Ordering::SeqCst {
        "sc"
    } else {
        "acq_rel"
    };
    format!("fence.{sem}.{};", scope.name())
}

/// The register constraint for a value of `bits` bits (`float` for floats).
pub(crate) fn reg_constraint(bits: u32, float: bool) -> &'static str {
    match (float, bits) {
        (true, 32) => "f",
        (true, _) => "d",
        (false, 64) => "l",
        (false, 16) => "h",
        _ => "r",
    }
}
