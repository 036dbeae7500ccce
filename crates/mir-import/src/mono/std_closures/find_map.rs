//! The MIR written at a call of `find_map`'s `check(f)` closure: `move
//! |(), x| match f(x) { Some(x) => ControlFlow::Break(x), None =>
//! ControlFlow::Continue(()) }` (1.95's `core::iter::traits::iterator`).
//! Its one capture, `f`, is at offset 0, so the environment pointer is a
//! pointer to it.

use crate::model::{BasicBlock, Body, CastKind, Mutability, Operand, Path, PlaceElem};
use crate::model::{GenericArg, IntTy, Rvalue, TerminatorKind, Ty};
use crate::mono::call_site::{closure_call, control_flow, new_local, tuple_field, variant_value};

/// Rewrites the call of `find_map`'s `check(f)` ending block `bb`, `((),
/// x)`, with the call `ControlFlow<B>`: `found = f(x)`, then `Break(b)` for
/// `Some(b)` and `Continue(())` for `None`. Whether it did.
pub(super) fn expand_find_map_check(body: &mut Body, bb: BasicBlock, f: &str) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let Ty::Adt(flow) = dest_ty else {
        return false;
    };
    let [unit, item] = elems.as_slice() else {
        return false;
    };
    let Some((found_ty, Ty::Tuple(go_on))) = control_flow(&flow) else {
        return false;
    };
    if *unit != Ty::unit() || !go_on.is_empty() {
        return false;
    }
    // `Option<B>`, under the root `ControlFlow` is printed with.
    let root = flow.segments.first().map_or("core", |s| s.name.as_str());
    let mut option = Path::plain(&format!("{root}::option::Option"));
    if let Some(last) = option.segments.last_mut() {
        last.args = vec![GenericArg::Type(found_ty.clone())];
    }
    let option_ty = Ty::Adt(option);
    let stmt = |place: &crate::model::Place, rv: Rvalue| site.assign(place, rv);
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(f.to_string())));
    let f_args_ty = Ty::Tuple(vec![item.clone()]);
    let (f_ref, f_args, found, tag) = (
        new_local(body, f_ref_ty.clone()),
        new_local(body, f_args_ty.clone()),
        new_local(body, option_ty),
        new_local(body, Ty::Int(IntTy::Isize)),
    );
    let unit_value = || Operand::Const(crate::model::ConstOperand::Unit);
    let mut payload = found.clone();
    payload
        .projection
        .push(PlaceElem::Downcast("Some".to_string()));
    payload.projection.push(PlaceElem::Field(0, found_ty));
    let ends = |body: &mut Body, rv: Rvalue| {
        site.push_block(
            body,
            vec![stmt(&site.destination, rv)],
            TerminatorKind::Goto(site.target),
        )
    };
    let stop = ends(body, variant_value(&flow, "Break", Operand::Move(payload)));
    let go = ends(body, variant_value(&flow, "Continue", unit_value()));
    // `None` is variant 0, `Some` 1.
    let branch = site.push_block(
        body,
        vec![stmt(&tag, Rvalue::Discriminant(found.clone()))],
        TerminatorKind::SwitchInt {
            discr: Operand::Move(tag),
            targets: vec![(1, stop)],
            otherwise: go,
        },
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        stmt(&f_ref, Rvalue::Cast(CastKind::Transmute, env, f_ref_ty)),
        stmt(
            &f_args,
            Rvalue::Aggregate(
                crate::model::AggregateKind::Tuple,
                vec![Operand::Move(tuple_field(&tuple, &elems, 1))],
            ),
        ),
    ]);
    block.terminator.kind = site.call_mut(f, f_ref, (f_args, &f_args_ty), found, branch);
    true
}
