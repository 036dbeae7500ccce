//! The MIR written at a call of `TakeWhile::try_fold`'s `check(flag, p,
//! fold)` (1.95's `core::iter::adapters::take_while`), through which
//! `take_while(..)` folds whenever rustc leaves the closure's call (after
//! `map(..)`, under `max`, inside an adapter's fold it did not inline):
//!
//! ```text
//! move |acc, x| if p(&x) { ControlFlow::from_try(fold(acc, x)) }
//!               else { *flag = true; ControlFlow::Break(try { acc }) }
//! ```
//!
//! Three captures, `p: &mut P`, `fold` and `flag: &mut bool`, each found in
//! the environment by its type and placed where the layout probe measured
//! the closure's proxy struct ([`crate::model::Crate::closure_proxies`]).

use super::KernelClosures;
use super::rewrite::plainly_dropless;
use super::two_captures::{from_try_blocks, goes_on};
use crate::model::{
    AggregateKind, BasicBlock, Body, ConstOperand, Mutability, Operand, Place, PlaceElem, Rvalue,
    Scalar, TerminatorKind, Ty,
};
use crate::mono::call_site::{
    closure_call, control_flow, env_closure, new_local, tuple_field, variant_value,
};

/// Where `check`'s three captures are in its environment.
struct Captures {
    /// `p`, a `&mut P`.
    predicate: u32,
    /// `fold`, by value.
    fold: u32,
    /// `flag`, a `&mut bool`.
    flag: u32,
}

impl Captures {
    /// The indices of `p_ref_ty`, `fold_ty` and `&mut bool` among
    /// `captures`, which must hold exactly those three.
    fn find(captures: &[Ty], p_ref_ty: &Ty, fold_ty: &Ty) -> Option<Captures> {
        let flag_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Bool));
        let at = |want: &Ty| {
            let mut found = captures.iter().enumerate().filter(|(_, t)| *t == want);
            match (found.next(), found.next()) {
                (Some((i, _)), None) => u32::try_from(i).ok(),
                _ => None,
            }
        };
        (captures.len() == 3).then_some(())?;
        Some(Captures {
            predicate: at(p_ref_ty)?,
            fold: at(fold_ty)?,
            flag: at(&flag_ty)?,
        })
    }
}

/// `(*env).i`, of type `ty`.
fn capture(env: &Place, i: u32, ty: Ty) -> Place {
    let mut p = env.clone();
    p.projection.push(PlaceElem::Deref);
    p.projection.push(PlaceElem::Field(i, ty));
    p
}

/// Rewrites a call of `TakeWhile::try_fold`'s `check(flag, p, fold)`
/// ending block `bb`, `(acc, x)`, with `fold` giving an `R` and the call a
/// `ControlFlow<R, Acc>`: `keep = p(&x)`; if it holds, `r = fold(acc, x)`
/// and `ControlFlow::from_try(r)`; otherwise `*flag = true` and
/// `Break(R::from_output(acc))`, which drops `x`: only for items plainly
/// without drop glue. `R` is one [`goes_on`] reads. Whether it did.
pub(super) fn expand_take_while_check(
    body: &mut Body,
    bb: BasicBlock,
    (predicate, fold): (&str, &str),
    kernel: &KernelClosures,
) -> bool {
    let Some((site, env_op, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let Ty::Adt(flow) = dest_ty else {
        return false;
    };
    let ([acc_ty, item_ty], Some((r_ty, c))) = (elems.as_slice(), control_flow(&flow)) else {
        return false;
    };
    let Some(goes_on) = goes_on(&r_ty, acc_ty) else {
        return false;
    };
    let Some(output) = from_output(&r_ty, goes_on) else {
        return false;
    };
    if c != *acc_ty || !plainly_dropless(item_ty) {
        return false;
    }
    let predicate_ty = Ty::Opaque(predicate.to_string());
    let p_ref_ty = Ty::Ref(Mutability::Mut, Box::new(predicate_ty));
    let fold_ty = Ty::Opaque(fold.to_string());
    let Some((env_ty, closure)) = env_closure(body, &env_op) else {
        return false;
    };
    let Some(at) =
        (kernel.captures)(&closure).and_then(|c| Captures::find(&c, &p_ref_ty, &fold_ty))
    else {
        return false;
    };
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let item_ref_ty = Ty::Ref(Mutability::Not, Box::new(item_ty.clone()));
    let test_args_ty = Ty::Tuple(vec![item_ref_ty.clone()]);
    let fold_args_ty = Ty::Tuple(elems.clone());
    let flag_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Bool));
    let (env, p_ref, item_ref, test_args, keep) = (
        new_local(body, env_ty.clone()),
        new_local(body, p_ref_ty.clone()),
        new_local(body, item_ref_ty),
        new_local(body, test_args_ty.clone()),
        new_local(body, Ty::Bool),
    );
    let (fold_ref, fold_args, r, flag_ref, kept) = (
        new_local(body, Ty::Ref(Mutability::Mut, Box::new(fold_ty.clone()))),
        new_local(body, fold_args_ty.clone()),
        new_local(body, r_ty.clone()),
        new_local(body, flag_ref_ty.clone()),
        new_local(body, r_ty.clone()),
    );
    // `p` held: `ControlFlow::from_try(fold(acc, x))`.
    let (_, converted) = from_try_blocks(body, &site, &flow, (&r, acc_ty), goes_on);
    let taken = site.push_block(
        body,
        vec![
            stmt(
                &fold_ref,
                Rvalue::Ref(Mutability::Mut, capture(&env, at.fold, fold_ty)),
            ),
            stmt(
                &fold_args,
                Rvalue::Aggregate(
                    AggregateKind::Tuple,
                    vec![Operand::Move(field(0)), Operand::Move(field(1))],
                ),
            ),
        ],
        site.call_mut(fold, fold_ref, (fold_args, &fold_args_ty), r, converted),
    );
    // `p` failed: `*flag = true; Break(try { acc })`.
    let mut flag = flag_ref.clone();
    flag.projection.push(PlaceElem::Deref);
    let stopped = site.push_block(
        body,
        vec![
            stmt(
                &flag_ref,
                Rvalue::Use(Operand::Copy(capture(&env, at.flag, flag_ref_ty))),
            ),
            stmt(
                &flag,
                Rvalue::Use(Operand::Const(ConstOperand::Scalar(Scalar::Bool(true)))),
            ),
            stmt(&kept, output(Operand::Move(field(0)))),
            stmt(
                &site.destination,
                variant_value(&flow, "Break", Operand::Move(kept)),
            ),
        ],
        TerminatorKind::Goto(site.target),
    );
    let branch = site.push_branch(body, Vec::new(), &keep, taken, stopped);
    let block = &mut body.blocks[bb];
    block.statements.extend([
        stmt(&env, Rvalue::Use(env_op)),
        stmt(
            &p_ref,
            Rvalue::Use(Operand::Copy(capture(&env, at.predicate, p_ref_ty))),
        ),
        stmt(&item_ref, Rvalue::Ref(Mutability::Not, field(1))),
        stmt(
            &test_args,
            Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(item_ref)]),
        ),
    ]);
    block.terminator.kind =
        site.call_mut(predicate, p_ref, (test_args, &test_args_ty), keep, branch);
    true
}

/// `R::from_output(acc)` (`try { acc }`) for an `R` that goes on as
/// `goes_on` says ([`goes_on`]): `NeverShortCircuit(acc)`, `Some(acc)` or
/// `Continue(acc)`.
fn from_output(
    r_ty: &Ty,
    goes_on: Option<(&'static str, u128)>,
) -> Option<impl Fn(Operand) -> Rvalue> {
    let Ty::Adt(r) = r_ty else { return None };
    let r = r.clone();
    Some(move |acc: Operand| match goes_on {
        Some((variant, _)) => variant_value(&r, variant, acc),
        None => Rvalue::Aggregate(
            AggregateKind::Adt {
                path: r.clone(),
                field_names: Vec::new(),
            },
            vec![acc],
        ),
    })
}
