//! The MIR written at a call of `[T]::sort_by_key`'s comparison closure
//! (1.95's `core::slice`): `|a, b| f(a).lt(&f(b))`, capturing `&mut f`,
//! which the stable sort calls as its `is_less`. rustc leaves that call
//! where the key is a composite whose `lt` it does not inline (a tuple
//! key, `(x % 7, x)`).

use super::rewrite::plainly_dropless;
use crate::model::{
    AggregateKind, BasicBlock, Body, CastKind, Mutability, Operand, PlaceElem, Rvalue,
    TerminatorKind, Ty,
};
use crate::mono::call_site::{closure_call, new_local, trait_method, tuple_field};

/// Rewrites the call of `sort_by_key(f)`'s closure ending block `bb`, `(a,
/// b)`, two `&T`, into `ka = f(a)`, `kb = f(b)` and `<K as
/// PartialOrd>::lt(&ka, &kb)` into the call's `bool`, `f` reached through
/// the `&mut F` the environment holds at offset 0 and `K` (as printed) its
/// result, a key plainly without drop glue. Whether it did.
pub(super) fn expand_sort_by_key(body: &mut Body, bb: BasicBlock, f: &str, key: &str) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let (Ok(key_ty), [item_ref_ty, other]) = (crate::parse::parse_type(key), elems.as_slice())
    else {
        return false;
    };
    // The keys are dropped after the comparison: only keys whose drop does
    // nothing.
    if dest_ty != Ty::Bool
        || item_ref_ty != other
        || !matches!(item_ref_ty, Ty::Ref(..))
        || !plainly_dropless(&key_ty)
    {
        return false;
    }
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &crate::model::Place, rv: Rvalue| site.assign(place, rv);
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(f.to_string())));
    let holder_ty = Ty::Ref(Mutability::Mut, Box::new(f_ref_ty.clone()));
    let args_ty = Ty::Tuple(vec![item_ref_ty.clone()]);
    let key_ref_ty = Ty::Ref(Mutability::Not, Box::new(key_ty.clone()));
    let holder = new_local(body, holder_ty.clone());
    let [f_a, f_b] = [(); 2].map(|_| new_local(body, f_ref_ty.clone()));
    let [args_a, args_b] = [(); 2].map(|_| new_local(body, args_ty.clone()));
    let [key_a, key_b] = [(); 2].map(|_| new_local(body, key_ty.clone()));
    let [ref_a, ref_b] = [(); 2].map(|_| new_local(body, key_ref_ty.clone()));
    let mut held = holder.clone();
    held.projection.push(PlaceElem::Deref);
    let lt = trait_method(&key_ty, "std::cmp::PartialOrd", "lt", Vec::new());
    let compared = site.push_block(
        body,
        vec![
            stmt(&ref_a, Rvalue::Ref(Mutability::Not, key_a.clone())),
            stmt(&ref_b, Rvalue::Ref(Mutability::Not, key_b.clone())),
        ],
        TerminatorKind::Call {
            func: crate::model::Callee::Item(lt),
            args: vec![Operand::Move(ref_a), Operand::Move(ref_b)],
            destination: site.destination.clone(),
            target: Some(site.target),
            unwind: site.unwind.clone(),
        },
    );
    let second = site.push_block(
        body,
        vec![
            stmt(&f_b, Rvalue::Use(Operand::Copy(held.clone()))),
            stmt(
                &args_b,
                Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(field(1))]),
            ),
        ],
        site.call_mut(f, f_b, (args_b, &args_ty), key_b, compared),
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        stmt(&holder, Rvalue::Cast(CastKind::Transmute, env, holder_ty)),
        stmt(&f_a, Rvalue::Use(Operand::Copy(held))),
        stmt(
            &args_a,
            Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(field(0))]),
        ),
    ]);
    block.terminator.kind = site.call_mut(f, f_a, (args_a, &args_ty), key_a, second);
    true
}
