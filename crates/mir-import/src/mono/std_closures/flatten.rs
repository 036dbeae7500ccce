//! The MIR written at a call of `Flatten`'s and `FlatMap`'s two nested
//! fold closures (1.95's `core::iter::adapters::flatten`), through which
//! `flat_map(..).sum()` folds:
//!
//! - `FlattenCompat::iter_fold`'s `flatten(&mut fold)`: `move |acc, iter|
//!   fold(acc, iter.into_iter())`, capturing `&mut fold`, a closure or a
//!   function item (`count`'s nested `count`);
//! - `<FlattenCompat as Iterator>::fold`'s `flatten(fold)`: `move |acc,
//!   iter| iter.fold(acc, &mut fold)`, capturing `fold`.
//!
//! Each has one capture, at offset 0, so the environment pointer is a
//! pointer to it.

use crate::model::{
    AggregateKind, BasicBlock, Body, CastKind, GenericArg, Mutability, Operand, PlaceElem, Rvalue,
    TerminatorKind, Ty,
};
use crate::mono::call_site::{closure_call, new_local, trait_method, tuple_field};

/// Rewrites the call of `iter_fold`'s `flatten(&mut fold)` ending block
/// `bb`, `(acc, iter)`, into `it = <T as IntoIterator>::into_iter(iter)`
/// and then `fold(acc, it)` through the reference the environment holds,
/// `it` of type `into` (the `U` that `fold`, `fold`'s own `flatten`, names
/// as printed, or that `fold`, a function item, takes second). Left alone
/// unless the call's destination is the accumulator's type, as `fold`'s
/// result must be. Whether it did.
pub(super) fn expand_flatten_into(body: &mut Body, bb: BasicBlock, fold: &str, into: &str) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let ([acc_ty, iterable_ty], Ok(into_ty)) = (elems.as_slice(), crate::parse::parse_type(into))
    else {
        return false;
    };
    if *acc_ty != dest_ty {
        return false;
    }
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &crate::model::Place, rv: Rvalue| site.assign(place, rv);
    let fold_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(fold.to_string())));
    let holder_ty = Ty::Ref(Mutability::Mut, Box::new(fold_ref_ty.clone()));
    let fold_args_ty = Ty::Tuple(vec![acc_ty.clone(), into_ty.clone()]);
    let (holder, fold_ref, it, fold_args) = (
        new_local(body, holder_ty.clone()),
        new_local(body, fold_ref_ty),
        new_local(body, into_ty),
        new_local(body, fold_args_ty.clone()),
    );
    let mut held = holder.clone();
    held.projection.push(PlaceElem::Deref);
    let folded = site.push_block(
        body,
        vec![
            stmt(&holder, Rvalue::Cast(CastKind::Transmute, env, holder_ty)),
            stmt(&fold_ref, Rvalue::Use(Operand::Copy(held))),
            stmt(
                &fold_args,
                Rvalue::Aggregate(
                    AggregateKind::Tuple,
                    vec![Operand::Move(field(0)), Operand::Move(it.clone())],
                ),
            ),
        ],
        site.call_mut(
            fold,
            fold_ref,
            (fold_args, &fold_args_ty),
            site.destination.clone(),
            site.target,
        ),
    );
    let into_iter = trait_method(
        iterable_ty,
        "std::iter::IntoIterator",
        "into_iter",
        Vec::new(),
    );
    // Should `into_iter` unwind, the accumulator, moved into the closure's
    // call, is not dropped; on the device a panic traps, and no cleanup
    // block runs.
    body.blocks[bb].terminator.kind = TerminatorKind::Call {
        func: crate::model::Callee::Item(into_iter),
        args: vec![Operand::Move(field(1))],
        destination: it,
        target: Some(folded),
        unwind: site.unwind.clone(),
    };
    true
}

/// Rewrites the call of `fold`'s `flatten(fold)` ending block `bb`, `(acc,
/// iter)`, into `<U as Iterator>::fold::<Acc, &mut G>(iter, acc, &mut g)`,
/// `g` (of type `inner`) the environment's one capture: a fold that gets a
/// shim generic over `g` in the next round
/// ([`crate::mono::closure_shims`]). Whether it did.
pub(super) fn expand_flatten_fold(body: &mut Body, bb: BasicBlock, inner: &str) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let [acc_ty, iter_ty] = elems.as_slice() else {
        return false;
    };
    if *acc_ty != dest_ty {
        return false;
    }
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let g_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(inner.to_string())));
    let g_ref = new_local(body, g_ref_ty.clone());
    let fold = trait_method(
        iter_ty,
        "std::iter::Iterator",
        "fold",
        vec![
            GenericArg::Type(acc_ty.clone()),
            GenericArg::Type(g_ref_ty.clone()),
        ],
    );
    let load = site.assign(&g_ref, Rvalue::Cast(CastKind::Transmute, env, g_ref_ty));
    let block = &mut body.blocks[bb];
    block.statements.push(load);
    block.terminator.kind = site.call_instead(
        fold,
        vec![
            Operand::Move(field(1)),
            Operand::Move(field(0)),
            Operand::Move(g_ref),
        ],
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Callee;
    use cranelift_entity::EntityRef;

    /// A body whose `bb0` calls `iter_fold`'s `flatten` closure on `(acc,
    /// iter)`, a `u32` and a `Range<u32>`, into a destination of `dest_ty`.
    fn flatten_call(dest_ty: &str) -> Body {
        let closure = "{closure@/src/kernel.rs:1:2: 1:3}";
        let mir = format!(
            "fn kernel::k(_1: &mut {closure}, _2: u32, _3: std::ops::Range<u32>) -> {dest_ty} {{
    let mut _0: {dest_ty};
    let mut _4: (u32, std::ops::Range<u32>);

    bb0: {{
        _4 = (copy _2, move _3);
        _0 = <&mut {closure} as std::ops::FnMut<(u32, std::ops::Range<u32>)>>::call_mut(move _1, move _4) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
"
        );
        let krate = crate::import_text(&mir, "", None).expect("the MIR imports");
        krate.bodies.values().next().expect("one body").clone()
    }

    #[test]
    fn flatten_into_calls_into_iter_then_the_fold_only_into_the_accumulator() {
        let fold = "{closure@/src/kernel.rs:5:6: 5:7}";
        let into = "std::ops::Range<u32>";
        let mut body = flatten_call("u32");
        let start = body.blocks.keys().next().expect("bb0");
        assert!(expand_flatten_into(&mut body, start, fold, into));
        let TerminatorKind::Call {
            func: Callee::Item(callee),
            target: Some(folded),
            ..
        } = &body.blocks[start].terminator.kind
        else {
            panic!("a call of into_iter");
        };
        assert_eq!(
            callee.to_string(),
            "<std::ops::Range<u32> as std::iter::IntoIterator>::into_iter"
        );
        let TerminatorKind::Call {
            func: Callee::Item(call_fold),
            destination,
            ..
        } = &body.blocks[*folded].terminator.kind
        else {
            panic!("a call of the fold");
        };
        assert!(call_fold.to_string().starts_with(&format!("<{fold} as")));
        assert_eq!(destination.local, crate::model::Local::new(0));
        // `fold` returns the accumulator: a destination of another type is
        // not this closure's call and stays as it is.
        let mut other = flatten_call("u64");
        assert!(!expand_flatten_into(&mut other, start, fold, into));
    }
}
