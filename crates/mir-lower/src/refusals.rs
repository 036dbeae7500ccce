//! The shared-memory refusals (DESIGN.md, "Address spaces and refusals").
//!
//! Shared memory is per block: no constant or static can hold an address into
//! it. Two rules, both conservative:
//! 1. a constant, constant table or static initializer that stores a
//!    relocation, and whose type holds a pointer to a `SharedArray` or
//!    `Barrier`, is refused, even when that pointer is null;
//! 2. a stored pointer to a `SharedArray` or `Barrier` static is refused, even
//!    when its type was erased (`*const u8`).

use mir_import::eval::{EvalAlloc, Memory, Target};
use mir_import::model::{Body, Crate, GenericArg, Ty};
use mir_import::prelude;

use crate::diag::{Diagnostic, Rule};

/// Whether `ty` is a `SharedArray` or `Barrier`.
pub fn is_shared_type(ty: &Ty) -> bool {
    matches!(ty, Ty::Adt(p) if prelude::is_shared_type(&p.def_path()))
}

/// Whether `ty` is a `ConstantMemory`: host-written constant memory.
pub fn is_constant_memory_type(ty: &Ty) -> bool {
    matches!(ty, Ty::Adt(p) if p.def_path() == prelude::CONSTANT_MEMORY)
}

/// Whether `ty` is laid out with interior mutability, so that its static must
/// be writable: atomics and cells.
pub fn interior_mutable(ty: &Ty) -> bool {
    match ty {
        Ty::Adt(p) => {
            let d = p.def_path();
            d.starts_with("std::sync::atomic::Atomic")
                || d.starts_with("core::sync::atomic::Atomic")
                || d.starts_with("std::cell::")
                || d.starts_with("core::cell::")
                || p.generic_args()
                    .iter()
                    .any(|a| matches!(a, GenericArg::Type(t) if interior_mutable(t)))
        }
        Ty::Array(e, _) | Ty::Slice(e) => interior_mutable(e),
        Ty::Tuple(es) => es.iter().any(interior_mutable),
        _ => false,
    }
}

/// Whether `ty` holds a pointer to shared memory anywhere in it.
pub fn holds_shared_pointer(ty: &Ty) -> bool {
    match ty {
        Ty::Ref(_, p) | Ty::RawPtr(_, p) => is_shared_type(p) || holds_shared_pointer(p),
        Ty::Array(e, _) | Ty::Slice(e) => holds_shared_pointer(e),
        Ty::Tuple(es) => es.iter().any(holds_shared_pointer),
        Ty::Adt(p) => p.segments.iter().flat_map(|s| &s.args).any(|a| match a {
            GenericArg::Type(t) => holds_shared_pointer(t),
            _ => false,
        }),
        _ => false,
    }
}

/// Checks a constant's or static's evaluated value against both rules.
/// `body` is the item's MIR body: its locals show the types that built the
/// value, including the field types of structs, which rustc's layout report
/// does not give.
pub fn check_initializer(
    krate: &Crate,
    body: &Body,
    mem: &Memory,
    value: EvalAlloc,
    item: &str,
) -> Result<(), Diagnostic> {
    let reachable = mem.reachable(value);
    for a in &reachable {
        for (offset, r) in &mem.allocs[*a].relocs {
            if let Target::Static(path) = &r.target
                && let Some(ty) = krate.item_body(path).map(|b| &krate.bodies[b].return_ty)
                && is_shared_type(ty)
            {
                return Err(Diagnostic::new(
                    Rule::SharedStaticRelocation,
                    item,
                    format!(
                        "stores a pointer to the shared-memory static `{path}` (type `{ty}`) at \
                         offset {offset}; shared memory is per block, so no constant or static \
                         can hold its address"
                    ),
                ));
            }
        }
    }
    let stores_relocation = reachable.iter().any(|a| !mem.allocs[*a].relocs.is_empty());
    if !stores_relocation {
        return Ok(());
    }
    if let Some(ty) = std::iter::once(&body.return_ty)
        .chain(body.locals.values().map(|l| &l.ty))
        .find(|t| holds_shared_pointer(t))
    {
        return Err(Diagnostic::new(
            Rule::SharedPointerInConstant,
            item,
            format!(
                "its initializer stores a relocation and its type holds a shared-memory pointer \
                 (`{ty}`); refused even if that pointer is null, since shared memory has no \
                 address a constant could hold"
            ),
        ));
    }
    Ok(())
}
