//! Drop glue: what a `drop(place)` runs for a type that has some.
//!
//! rustc prints no MIR for drop glue (`core::ptr::drop_in_place::<T>` is a
//! shim it builds while generating code), so a `drop` of a value with a
//! `Drop` impl somewhere inside it (`arrayvec::ArrayVec<u32, 8>`, a kernel
//! type that implements `Drop`) had no body. And `Drop::drop` cannot be
//! called from source (E0040). But `drop_in_place` can, and rustc's inliner
//! inlines the glue into its caller. So each such type gets a shim of the
//! same form as a dependency call's ([`super::dep_calls`]):
//!
//! ```text
//! #[inline(never)]
//! pub fn call<'a>(a0: *mut arrayvec::ArrayVec<u32, 8>) -> () {
//!     unsafe { core::ptr::drop_in_place::<arrayvec::ArrayVec<u32, 8>>(a0) }
//! }
//! ```
//!
//! whose MIR is the glue with the type's `Drop::drop` inlined; drops of its
//! fields that are left in it get their own shims in the next round. Once
//! the shim has a body, each `drop(place) -> bb` at that type becomes
//! `_p = &raw mut place; _u = glue(move _p) -> bb` ([`link_drop_glue`]), an
//! ordinary call that every later stage handles.
//!
//! A type that source cannot name (a closure, a type parameter) gets no
//! glue, and its `drop` stays refused by the lowering, naming the type.

use std::collections::BTreeMap;

use super::shims::DepCall;
use crate::model::{
    BodyId, Callee, Crate, GenericArg, LocalDecl, Mutability, Operand, Path, PathSegment, Place,
    Rvalue, Statement, StatementKind, TerminatorKind, Ty,
};

/// The name under which a drop's call of its glue is aliased to the shim's
/// body (`{drop_glue}<T>`): a segment rustc never prints, so that no call
/// rustc printed (a `drop_in_place` it did not inline) can resolve to the
/// glue of itself.
const GLUE_SEGMENT: &str = "{drop_glue}";

/// The path the call that replaces a `drop` of `ty` names.
pub fn glue_path(ty: &Ty) -> Path {
    Path {
        segments: vec![PathSegment {
            name: GLUE_SEGMENT.into(),
            args: vec![GenericArg::Type(ty.clone())],
        }],
    }
}

/// The shim that runs the drop glue of `ty`.
fn glue_shim(ty: &Ty) -> DepCall {
    DepCall {
        callee: format!("core::ptr::drop_in_place::<{}>", ty.to_rust_source()),
        params: vec![Ty::RawPtr(Mutability::Mut, Box::new(ty.clone()))],
        ret: Ty::Tuple(Vec::new()),
        must_reach: None,
        stand_in: None,
        type_params: Vec::new(),
        features: Vec::new(),
    }
}

/// The types the reachable function bodies drop that may have drop glue and
/// that source can name, with the shim of each, keyed by [`glue_path`]'s
/// text (the key [`Crate::call_aliases`] maps).
pub fn glue_calls(krate: &Crate) -> BTreeMap<String, DepCall> {
    let mut out = BTreeMap::new();
    for &id in krate.reachable_function_bodies().values() {
        for (_, ty) in drops_needing_glue(krate, id) {
            if super::nameable(&ty) {
                out.insert(glue_path(&ty).to_string(), glue_shim(&ty));
            }
        }
    }
    out
}

/// The blocks of body `id` that end in a `drop` of a type that may have
/// drop glue, with that type. Cleanup blocks run only while unwinding,
/// which the device never does (the lowering leaves them out).
fn drops_needing_glue(krate: &Crate, id: BodyId) -> Vec<(crate::model::BasicBlock, Ty)> {
    let body = &krate.bodies[id];
    body.blocks
        .iter()
        .filter(|(_, data)| !data.cleanup)
        .filter_map(|(bb, data)| {
            let TerminatorKind::Drop { place, .. } = &data.terminator.kind else {
                return None;
            };
            let ty = body.place_ty(place)?;
            (!krate.trivially_dropped(&ty)).then_some((bb, ty))
        })
        .collect()
}

/// Replaces each `drop` whose type's glue has a body with a call of it:
/// the place's address in a new local, the call's unit result in another.
/// Only the glue shims (keyed under [`GLUE_SEGMENT`]) are aliased here:
/// the other shims are [`super::dep_calls::link_dep_calls`]'s, which
/// refuses one whose body still calls what it stands for.
pub fn link_drop_glue(krate: &mut Crate, shims: &BTreeMap<String, DepCall>) {
    for (key, shim) in shims {
        if !key.starts_with(GLUE_SEGMENT) {
            continue;
        }
        let path = shim.body_path();
        if krate.fn_body(&path).is_some() {
            krate.call_aliases.insert(key.clone(), path);
        }
    }
    let ids: Vec<BodyId> = krate.bodies.keys().collect();
    for id in ids {
        let drops = drops_needing_glue(krate, id);
        let drops: Vec<_> = drops
            .into_iter()
            .filter(|(_, ty)| krate.call_aliases.contains_key(&glue_path(ty).to_string()))
            .collect();
        let body = &mut krate.bodies[id];
        for (bb, ty) in drops {
            let data = &mut body.blocks[bb];
            let TerminatorKind::Drop {
                place,
                target,
                unwind,
            } = data.terminator.kind.clone()
            else {
                continue;
            };
            let ptr = body.locals.push(LocalDecl {
                ty: Ty::RawPtr(Mutability::Mut, Box::new(ty.clone())),
                mutable: false,
                is_arg: false,
            });
            let unit = body.locals.push(LocalDecl {
                ty: Ty::Tuple(Vec::new()),
                mutable: false,
                is_arg: false,
            });
            let data = &mut body.blocks[bb];
            data.statements.push(Statement {
                kind: StatementKind::Assign(
                    Place::local(ptr),
                    Rvalue::RawPtr(Mutability::Mut, place),
                ),
                pos: data.terminator.pos,
                source: data.terminator.source.clone(),
            });
            data.terminator.kind = TerminatorKind::Call {
                func: Callee::Item(glue_path(&ty)),
                args: vec![Operand::Move(Place::local(ptr))],
                destination: Place::local(unit),
                target: Some(target),
                unwind,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that drops a `dep::W` on return and while unwinding, and
    /// (when `with_glue`) the glue shim's body.
    fn krate(with_glue: bool) -> (Crate, BTreeMap<String, DepCall>) {
        let w = Ty::Adt(Path {
            segments: ["dep", "W"]
                .iter()
                .map(|n| PathSegment {
                    name: n.to_string(),
                    args: vec![],
                })
                .collect(),
        });
        let shim = glue_shim(&w);
        let mut mir = String::from(
            "fn kernel::f(_1: dep::W) -> () {\n    let mut _0: ();\n\n    bb0: {\n        drop(_1) -> [return: bb1, unwind: bb2];\n    }\n\n    bb1: {\n        return;\n    }\n\n    bb2 (cleanup): {\n        drop(_1) -> [return: bb3, unwind terminate(cleanup)];\n    }\n\n    bb3 (cleanup): {\n        resume;\n    }\n}\n",
        );
        if with_glue {
            mir.push_str(&format!(
                "\nfn {}(_1: *mut dep::W) -> () {{\n    let mut _0: ();\n\n    bb0: {{\n        return;\n    }}\n}}\n",
                shim.body_path()
            ));
        }
        let krate = crate::import_text(&mir, "", None).expect("imports");
        let mut shims = BTreeMap::new();
        shims.insert(glue_path(&w).to_string(), shim);
        (krate, shims)
    }

    fn f(k: &Crate) -> &crate::model::Body {
        &k.bodies[k.fn_body("kernel::f").expect("f")]
    }

    #[test]
    fn a_drop_with_glue_becomes_a_call_of_its_shim() {
        let (mut k, shims) = krate(true);
        let src = super::super::shims::dep_call_source(&shims);
        assert!(
            src.contains("pub fn call<'a>(a0: *mut dep::W) -> () {\n    unsafe { core::ptr::drop_in_place::<dep::W>(a0) }\n}"),
            "{src}"
        );
        link_drop_glue(&mut k, &shims);
        let body = f(&k);
        let bb0 = &body.blocks[crate::model::BasicBlock::from_u32(0)];
        let TerminatorKind::Call {
            func: Callee::Item(p),
            args,
            ..
        } = &bb0.terminator.kind
        else {
            panic!("bb0 still ends in {:?}", bb0.terminator.kind);
        };
        assert_eq!(
            k.resolve_callee(p),
            shims.values().next().expect("the shim").body_path()
        );
        let Operand::Move(arg) = &args[0] else {
            panic!("{args:?}")
        };
        assert!(matches!(
            &bb0.statements.last().expect("the address").kind,
            StatementKind::Assign(dest, Rvalue::RawPtr(Mutability::Mut, place))
                if dest == arg && *place == Place::local(crate::model::Local::from_u32(1))
        ));
        // The cleanup block's drop is left alone: the device never unwinds.
        let bb2 = &body.blocks[crate::model::BasicBlock::from_u32(2)];
        assert!(matches!(bb2.terminator.kind, TerminatorKind::Drop { .. }));
    }

    #[test]
    fn a_drop_whose_glue_has_no_body_stays() {
        let (mut k, shims) = krate(false);
        assert_eq!(
            glue_calls(&k).len(),
            0,
            "f is no kernel: nothing reaches it"
        );
        link_drop_glue(&mut k, &shims);
        let bb0 = &f(&k).blocks[crate::model::BasicBlock::from_u32(0)];
        assert!(matches!(bb0.terminator.kind, TerminatorKind::Drop { .. }));
    }
}
