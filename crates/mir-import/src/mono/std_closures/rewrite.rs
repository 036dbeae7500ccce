//! The rewriting of each closure call [`super::expand_calls`] expands:
//! the MIR written at the call for each [`Wrapper`].

use super::two_captures::{self, Counting};
use super::{Check, Keep, Wrapper};
use crate::model::{
    AggregateKind, BasicBlock, Body, Callee, CastKind, Mutability, Operand, Place, PlaceElem,
    Rvalue, TerminatorKind, Ty,
};
use crate::mono::call_site::{
    call_mut_path, closure_call, control_flow, never_short_circuit, new_local, operand_ty,
    tuple_field, variant_value,
};

/// Rewrites the call ending block `bb` of a closure through a mutable
/// reference to it, `<&mut C as FnMut<A>>::call_mut(env, args)` (`Chain`'s
/// `try_fold` passes `&mut f` to each half), into the call of the closure
/// `C` itself, `<C as FnMut<A>>::call_mut(*env, args)`: what `core`'s
/// `impl FnMut<A> for &mut F` does. Whether it did.
pub(super) fn call_through_reference(body: &mut Body, bb: BasicBlock, closure: &str) -> bool {
    let Some(site) = crate::mono::call_site::CallSite::of(body, bb) else {
        return false;
    };
    let TerminatorKind::Call {
        func: Callee::Item(path),
        ..
    } = &body.blocks[bb].terminator.kind
    else {
        return false;
    };
    let mut callee = path.clone();
    let Some(rest) = callee.segments[0].name.strip_prefix("<&mut ") else {
        return false;
    };
    callee.segments[0].name = format!("<{rest}");
    let [Operand::Move(env) | Operand::Copy(env), args] = site.args.as_slice() else {
        return false;
    };
    let closure_ty = Ty::Opaque(closure.to_string());
    let by_ref = Ty::Ref(Mutability::Mut, Box::new(closure_ty));
    let outer = Ty::Ref(Mutability::Mut, Box::new(by_ref.clone()));
    if body.place_ty(env).as_ref() != Some(&outer) {
        return false;
    }
    let mut pointee = env.clone();
    pointee.projection.push(PlaceElem::Deref);
    let inner = new_local(body, by_ref);
    let args = args.clone();
    let block = &mut body.blocks[bb];
    block
        .statements
        .push(site.assign(&inner, Rvalue::Use(Operand::Copy(pointee))));
    block.terminator.kind = site.call_instead(callee, vec![Operand::Move(inner), args]);
    true
}

/// Rewrites the wrapper call ending block `bb` into what the wrapper
/// does: the call of the closure it captures, with its work before and
/// after, or the accumulator's operation. Whether it did.
pub(super) fn expand(
    body: &mut Body,
    bb: BasicBlock,
    wrapper: &Wrapper,
    kernel: &super::KernelClosures,
) -> bool {
    // Called with `()`, which MIR passes as a constant.
    if let Wrapper::StepNth(iter) = wrapper {
        return two_captures::expand_step_nth(body, bb, iter, kernel);
    }
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let (destination, target, unwind) = (&site.destination, &site.target, &site.unwind);
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    // The accumulator: its operation on the two arguments, no call.
    let closure = match wrapper {
        Wrapper::Accumulate(op, by_ref) => {
            let operand_ty = if *by_ref {
                Ty::Ref(Mutability::Not, Box::new(dest_ty.clone()))
            } else {
                dest_ty.clone()
            };
            if elems.len() != 2 || elems[0] != dest_ty || elems[1] != operand_ty {
                return false;
            }
            let mut stmts = Vec::new();
            let mut assign = |place: Place, rv: Rvalue| stmts.push(site.assign(&place, rv));
            // `*b` read through a local, as rustc reads a field's pointee.
            let b = if *by_ref {
                let r = new_local(body, operand_ty);
                assign(r.clone(), Rvalue::Use(Operand::Copy(field(1))));
                let mut pointee = r;
                pointee.projection.push(PlaceElem::Deref);
                let v = new_local(body, dest_ty.clone());
                assign(v.clone(), Rvalue::Use(Operand::Copy(pointee)));
                v
            } else {
                field(1)
            };
            let value = Rvalue::BinaryOp(*op, Operand::Move(field(0)), Operand::Move(b));
            assign(destination.clone(), value);
            let block = &mut body.blocks[bb];
            block.statements.extend(stmts);
            block.terminator.kind = TerminatorKind::Goto(*target);
            return true;
        }
        Wrapper::Key(f)
        | Wrapper::CopyFold(f)
        | Wrapper::ToUsize(f)
        | Wrapper::ForEach(f)
        | Wrapper::MapFold(f, _)
        | Wrapper::WrapMut2(f)
        | Wrapper::WrapMut1(f, _) => f,
        Wrapper::MapFoldThen(f, g) => return expand_map_fold_then(body, bb, f, g),
        Wrapper::ReduceBy(f, which) => return expand_reduce_by(body, bb, f, *which),
        Wrapper::Enumerate(f, Counting::Up) => {
            return two_captures::expand_enumerate(body, bb, f, kernel);
        }
        Wrapper::Enumerate(_, Counting::Down) => return false,
        Wrapper::TakeCheck(f, counter) => {
            return two_captures::expand_take_check(body, bb, f, *counter, kernel);
        }
        Wrapper::SortByKey(f, key) => {
            return super::sort_key::expand_sort_by_key(body, bb, f, key);
        }
        Wrapper::TakeWhileCheck(p, f) => {
            return super::take_while::expand_take_while_check(body, bb, (p, f), kernel);
        }
        Wrapper::Position(f) => return two_captures::expand_position(body, bb, f, kernel),
        Wrapper::FilterFold(p, f) => {
            return two_captures::expand_filter_fold(body, bb, p, f, kernel);
        }
        Wrapper::FindMap(f) => return super::find_map::expand_find_map_check(body, bb, f),
        Wrapper::FlattenInto(fold, into) => {
            return super::flatten::expand_flatten_into(body, bb, fold, into);
        }
        Wrapper::FlattenFold(g) => return super::flatten::expand_flatten_fold(body, bb, g),
        // Expanded above.
        Wrapper::StepNth(_) => return false,
        Wrapper::MapFoldEach(f, g, mapped, form) => {
            return two_captures::expand_map_fold_each(body, bb, (f, g, mapped), *form, kernel);
        }
        Wrapper::Check(f, check) => return expand_check(body, bb, f, *check, false),
        Wrapper::FindByRef(f) => return expand_check(body, bb, f, Check::Find, true),
    };
    let closure_ty = Ty::Opaque(closure.to_string());
    let mut stmts = Vec::new();
    let mut assign = |place: &Place, rv: Rvalue| stmts.push(site.assign(place, rv));
    // The environment is the kernel's closure.
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(closure_ty.clone()));
    let f = new_local(body, f_ref_ty.clone());
    assign(&f, Rvalue::Cast(CastKind::Transmute, env.clone(), f_ref_ty));
    // The closure's arguments, and where its result goes: the call's
    // destination, or a local the wrapper's result is made from after it.
    let borrowed_item = |body: &mut Body, assign: &mut dyn FnMut(&Place, Rvalue)| {
        let item = elems.first()?.clone();
        let r = new_local(body, Ty::Ref(Mutability::Not, Box::new(item)));
        assign(&r, Rvalue::Ref(Mutability::Not, field(0)));
        Some(Operand::Move(r))
    };
    let (inputs, result, after): (Vec<Operand>, Place, Option<Rvalue>) = match wrapper {
        Wrapper::Key(_) => {
            let Ty::Tuple(out) = &dest_ty else {
                return false;
            };
            let (Some(key_ty), [_]) = (out.first(), elems.as_slice()) else {
                return false;
            };
            let Some(x) = borrowed_item(body, &mut assign) else {
                return false;
            };
            let key = new_local(body, key_ty.clone());
            let pair = Rvalue::Aggregate(
                AggregateKind::Tuple,
                vec![Operand::Move(key.clone()), Operand::Move(field(0))],
            );
            (vec![x], key, Some(pair))
        }
        Wrapper::CopyFold(_) => {
            let [_, Ty::Ref(_, item)] = elems.as_slice() else {
                return false;
            };
            // `&elt` read through a local, as rustc reads a field's pointee.
            let r = new_local(body, elems[1].clone());
            assign(&r, Rvalue::Use(Operand::Copy(field(1))));
            let mut pointee = r;
            pointee.projection.push(PlaceElem::Deref);
            let elt = new_local(body, (**item).clone());
            assign(&elt, Rvalue::Use(Operand::Copy(pointee)));
            (
                vec![Operand::Move(field(0)), Operand::Move(elt)],
                destination.clone(),
                None,
            )
        }
        Wrapper::ToUsize(_) => {
            // `to_usize` drops `x` after `p(&x)`, which the expansion does
            // not: only for items whose drop does nothing.
            let [item] = elems.as_slice() else {
                return false;
            };
            if !plainly_dropless(item) {
                return false;
            }
            let Some(x) = borrowed_item(body, &mut assign) else {
                return false;
            };
            let keep = new_local(body, Ty::Bool);
            let count = Rvalue::Cast(
                CastKind::IntToInt,
                Operand::Move(keep.clone()),
                dest_ty.clone(),
            );
            (vec![x], keep, Some(count))
        }
        Wrapper::ForEach(_) => {
            if elems.len() != 2 || elems[0] != Ty::unit() || dest_ty != Ty::unit() {
                return false;
            }
            (vec![Operand::Move(field(1))], destination.clone(), None)
        }
        // `g(acc, f(elt))`, `g` the accumulator: `f`'s result is of the
        // accumulator's type (`Sum<B> for B`).
        Wrapper::MapFold(_, op) => {
            if elems.len() != 2 || elems[0] != dest_ty {
                return false;
            }
            let mapped = new_local(body, dest_ty.clone());
            let fold =
                Rvalue::BinaryOp(*op, Operand::Move(field(0)), Operand::Move(mapped.clone()));
            (vec![Operand::Move(field(1))], mapped, Some(fold))
        }
        // `NeverShortCircuit(f(a, b))`: `f`'s result is the wrapper's one
        // field, of the accumulator's type.
        Wrapper::WrapMut2(_) => {
            let inner = elems.first().map_or(String::new(), Ty::to_string);
            if elems.len() != 2 || !never_short_circuit(&dest_ty.to_string(), &inner) {
                return false;
            }
            let mut wrapped = destination.clone();
            wrapped
                .projection
                .push(PlaceElem::Field(0, elems[0].clone()));
            (
                vec![Operand::Move(field(0)), Operand::Move(field(1))],
                wrapped,
                None,
            )
        }
        // `NeverShortCircuit(f(a))`, `T` its one field.
        Wrapper::WrapMut1(_, t) => {
            let ([_], Ok(t)) = (elems.as_slice(), crate::parse::parse_type(t)) else {
                return false;
            };
            if !never_short_circuit(&dest_ty.to_string(), &t.to_string()) {
                return false;
            }
            let mut wrapped = destination.clone();
            wrapped.projection.push(PlaceElem::Field(0, t));
            (vec![Operand::Move(field(0))], wrapped, None)
        }
        Wrapper::Accumulate(..)
        | Wrapper::MapFoldThen(..)
        | Wrapper::Check(..)
        | Wrapper::FindByRef(..)
        | Wrapper::ReduceBy(..)
        | Wrapper::Enumerate(..)
        | Wrapper::TakeCheck(..)
        | Wrapper::TakeWhileCheck(..)
        | Wrapper::SortByKey(..)
        | Wrapper::Position(..)
        | Wrapper::FilterFold(..)
        | Wrapper::MapFoldEach(..)
        | Wrapper::FindMap(..)
        | Wrapper::FlattenInto(..)
        | Wrapper::FlattenFold(_)
        | Wrapper::StepNth(_) => return false,
    };
    let input_tys: Option<Vec<Ty>> = inputs.iter().map(|o| operand_ty(body, o)).collect();
    let Some(input_tys) = input_tys else {
        return false;
    };
    let args_tuple_ty = Ty::Tuple(input_tys);
    let args_tuple = new_local(body, args_tuple_ty.clone());
    assign(&args_tuple, Rvalue::Aggregate(AggregateKind::Tuple, inputs));
    let call_path = call_mut_path(closure, &args_tuple_ty);
    // What the wrapper does after the call, in a block of its own.
    let next = match after {
        None => *target,
        Some(rv) => site.push_block(
            body,
            vec![site.assign(destination, rv)],
            TerminatorKind::Goto(*target),
        ),
    };
    let block = &mut body.blocks[bb];
    block.statements.extend(stmts);
    block.terminator.kind = TerminatorKind::Call {
        func: Callee::Item(call_path),
        args: vec![Operand::Move(f), Operand::Move(args_tuple)],
        destination: result,
        target: Some(next),
        unwind: unwind.clone(),
    };
    true
}

/// Rewrites a call of `map_fold(f, g)` (`g` capturing nothing, see
/// [`Wrapper::MapFoldThen`]) ending block `bb` into two calls: `mapped =
/// f(elt)` through the environment, which holds `f` at offset 0 (`g` takes
/// no space), then `g(acc, mapped)` into the call's destination, with the
/// same environment pointer as `g`'s (any non-null pointer is one for a
/// closure that takes no space). Whether it did.
fn expand_map_fold_then(body: &mut Body, bb: BasicBlock, f: &str, g: &str) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let (destination, target) = (&site.destination, &site.target);
    let Some(env_ty) = operand_ty(body, &env) else {
        return false;
    };
    // `(acc, elt)`, the accumulator of the result's type.
    let [acc_ty, _] = elems.as_slice() else {
        return false;
    };
    if *acc_ty != dest_ty {
        return false;
    }
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    // `f`'s result is `g`'s second argument: the accumulator's type
    // (`min()` of `map(f)` folds `f`'s items).
    let mapped = new_local(body, dest_ty.clone());
    let env_copy = new_local(body, env_ty);
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(f.to_string())));
    let g_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(g.to_string())));
    let (f_ref, g_ref) = (
        new_local(body, f_ref_ty.clone()),
        new_local(body, g_ref_ty.clone()),
    );
    let f_args_ty = Ty::Tuple(vec![elems[1].clone()]);
    let g_args_ty = Ty::Tuple(vec![dest_ty.clone(), dest_ty.clone()]);
    let (f_args, g_args) = (
        new_local(body, f_args_ty.clone()),
        new_local(body, g_args_ty.clone()),
    );
    let then = site.push_block(
        body,
        vec![
            stmt(
                &g_ref,
                Rvalue::Cast(
                    CastKind::Transmute,
                    Operand::Copy(env_copy.clone()),
                    g_ref_ty,
                ),
            ),
            stmt(
                &g_args,
                Rvalue::Aggregate(
                    AggregateKind::Tuple,
                    vec![Operand::Move(field(0)), Operand::Move(mapped.clone())],
                ),
            ),
        ],
        site.call_mut(g, g_ref, (g_args, &g_args_ty), destination.clone(), *target),
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        stmt(&env_copy, Rvalue::Use(env.clone())),
        stmt(
            &f_ref,
            Rvalue::Cast(CastKind::Transmute, Operand::Copy(env_copy), f_ref_ty),
        ),
        stmt(
            &f_args,
            Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(field(1))]),
        ),
    ]);
    block.terminator.kind = site.call_mut(f, f_ref, (f_args, &f_args_ty), mapped, then);
    true
}

/// Rewrites a call of `max_by`'s (`min_by`'s) `fold(compare)` ending
/// block `bb`, `(x, y)`, into the call `compare(&x, &y)` through the
/// environment (`compare` is its one capture) and a branch on the
/// `Ordering` to the one `cmp::max_by` keeps: `x` when it is `Greater`,
/// else `y` (`cmp::min_by`: `x` unless it is `Greater`). Whether it did.
fn expand_reduce_by(body: &mut Body, bb: BasicBlock, compare: &str, which: Keep) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let (destination, target) = (&site.destination, &site.target);
    // `(T, T) -> T`; the one not kept is dropped, which the expansion
    // does not do: only for items whose drop does nothing.
    let [x_ty, y_ty] = elems.as_slice() else {
        return false;
    };
    if *x_ty != dest_ty || *y_ty != dest_ty || !plainly_dropless(&dest_ty) {
        return false;
    }
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let item_ref_ty = Ty::Ref(Mutability::Not, Box::new(dest_ty.clone()));
    let (x_ref, y_ref) = (
        new_local(body, item_ref_ty.clone()),
        new_local(body, item_ref_ty.clone()),
    );
    let compare_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(compare.to_string())));
    let compare_ref = new_local(body, compare_ref_ty.clone());
    let args_ty = Ty::Tuple(vec![item_ref_ty.clone(), item_ref_ty]);
    let args = new_local(body, args_ty.clone());
    let ordering = Ty::Adt(crate::model::Path::plain("std::cmp::Ordering"));
    let order = new_local(body, ordering);
    let tag = new_local(body, Ty::Int(crate::model::IntTy::I8));
    let keep = |body: &mut Body, i: usize| {
        site.push_block(
            body,
            vec![stmt(destination, Rvalue::Use(Operand::Move(field(i))))],
            TerminatorKind::Goto(*target),
        )
    };
    let (first, second) = (keep(body, 0), keep(body, 1));
    // `Greater` is 1.
    let (greater, otherwise) = match which {
        Keep::Max => (first, second),
        Keep::Min => (second, first),
    };
    let branch = site.push_block(
        body,
        vec![stmt(&tag, Rvalue::Discriminant(order.clone()))],
        TerminatorKind::SwitchInt {
            discr: Operand::Move(tag),
            targets: vec![(1, greater)],
            otherwise,
        },
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        stmt(
            &compare_ref,
            Rvalue::Cast(CastKind::Transmute, env, compare_ref_ty),
        ),
        stmt(&x_ref, Rvalue::Ref(Mutability::Not, field(0))),
        stmt(&y_ref, Rvalue::Ref(Mutability::Not, field(1))),
        stmt(
            &args,
            Rvalue::Aggregate(
                AggregateKind::Tuple,
                vec![Operand::Move(x_ref), Operand::Move(y_ref)],
            ),
        ),
    ]);
    block.terminator.kind = site.call_mut(compare, compare_ref, (args, &args_ty), order, branch);
    true
}

/// Rewrites a call of `any`'s, `all`'s or `find`'s `check(f)` ending
/// block `bb`, `((), x)`, into the call `f(x)` (`f(&x)`) through the
/// environment (`f` is its one capture), and a branch on its result to
/// the `ControlFlow` variant the check gives. Whether it did.
fn expand_check(body: &mut Body, bb: BasicBlock, f: &str, check: Check, by_ref: bool) -> bool {
    let Some((site, env, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let (destination, target) = (&site.destination, &site.target);
    let Ty::Adt(flow) = dest_ty else {
        return false;
    };
    // `((), x)`, and `ControlFlow<B>` (`C = ()` left out when printed) of
    // `B = ()`, or of `B = T` for `find`.
    let [unit, item] = elems.as_slice() else {
        return false;
    };
    let break_ty = match check {
        Check::Any | Check::All => Ty::unit(),
        Check::Find => item.clone(),
    };
    // `find`'s check drops `x` when it goes on, which the expansion does
    // not: only for items whose drop does nothing.
    if check == Check::Find && !plainly_dropless(item) {
        return false;
    }
    if *unit != Ty::unit() || control_flow(&flow) != Some((break_ty, Ty::unit())) {
        return false;
    }
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let variant = |name: &str, payload: Operand| variant_value(&flow, name, payload);
    let unit_value = || Operand::Const(crate::model::ConstOperand::Unit);
    let (when_true, when_false) = match check {
        Check::Any => (
            variant("Break", unit_value()),
            variant("Continue", unit_value()),
        ),
        Check::All => (
            variant("Continue", unit_value()),
            variant("Break", unit_value()),
        ),
        Check::Find => (
            variant("Break", Operand::Move(field(1))),
            variant("Continue", unit_value()),
        ),
    };
    let mut stmts = Vec::new();
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(f.to_string())));
    let f_ref = new_local(body, f_ref_ty.clone());
    if by_ref {
        // The environment holds `&mut f`: read it through the environment.
        let holder_ty = Ty::Ref(Mutability::Mut, Box::new(f_ref_ty.clone()));
        let holder = new_local(body, holder_ty.clone());
        stmts.push(stmt(
            &holder,
            Rvalue::Cast(CastKind::Transmute, env.clone(), holder_ty),
        ));
        let mut held = holder;
        held.projection.push(PlaceElem::Deref);
        stmts.push(stmt(&f_ref, Rvalue::Use(Operand::Copy(held))));
    } else {
        stmts.push(stmt(
            &f_ref,
            Rvalue::Cast(CastKind::Transmute, env.clone(), f_ref_ty),
        ));
    }
    // `x`, or `&x` for `find`'s predicate.
    let input = match check {
        Check::Any | Check::All => Operand::Move(field(1)),
        Check::Find => {
            let r = new_local(body, Ty::Ref(Mutability::Not, Box::new(item.clone())));
            stmts.push(stmt(&r, Rvalue::Ref(Mutability::Not, field(1))));
            Operand::Move(r)
        }
    };
    let Some(input_ty) = operand_ty(body, &input) else {
        return false;
    };
    let f_args_ty = Ty::Tuple(vec![input_ty]);
    let f_args = new_local(body, f_args_ty.clone());
    stmts.push(stmt(
        &f_args,
        Rvalue::Aggregate(AggregateKind::Tuple, vec![input]),
    ));
    let keep = new_local(body, Ty::Bool);
    let block_with = |body: &mut Body, rv: Rvalue| {
        site.push_block(
            body,
            vec![stmt(destination, rv)],
            TerminatorKind::Goto(*target),
        )
    };
    let (yes, no) = (block_with(body, when_true), block_with(body, when_false));
    let branch = site.push_branch(body, Vec::new(), &keep, yes, no);
    let block = &mut body.blocks[bb];
    block.statements.extend(stmts);
    block.terminator.kind = site.call_mut(f, f_ref, (f_args, &f_args_ty), keep, branch);
    true
}

/// Whether dropping a value of `ty` plainly does nothing, with no need to
/// know the kernel's types: scalars, references, pointers, and tuples and
/// arrays of them (what iterators over numbers and slices yield), and
/// `core`'s [`PLAIN_WRAPPERS`] of them (a sort key's `Reverse<u32>`).
pub(super) fn plainly_dropless(ty: &Ty) -> bool {
    match ty {
        Ty::Bool | Ty::Char | Ty::Int(_) | Ty::Float(_) | Ty::Never => true,
        Ty::Ref(..) | Ty::RawPtr(..) | Ty::FnPtr(..) => true,
        Ty::Tuple(items) => items.iter().all(plainly_dropless),
        Ty::Array(item, _) => plainly_dropless(item),
        Ty::Adt(p) => {
            crate::calls::std_relative(&p.def_path()).is_some_and(|d| PLAIN_WRAPPERS.contains(&d))
                && p.segments
                    .iter()
                    .all(|s| s.type_args().all(plainly_dropless))
        }
        _ => false,
    }
}

/// `core`'s types without a `Drop` impl that hold only values of their
/// type arguments, by their path under `std`.
const PLAIN_WRAPPERS: [&str; 4] = [
    "cmp::Reverse",
    "num::Wrapping",
    "num::Saturating",
    "option::Option",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A body whose `bb0` calls the closure through `&mut`, `env` of type
    /// `env_ty`.
    fn through_reference(env_ty: &str) -> Body {
        let closure = "{closure@/src/kernel.rs:1:2: 1:3}";
        let mir = format!(
            "fn kernel::k(_1: {env_ty}, _2: u32) -> u32 {{
    let mut _0: u32;
    let mut _3: (u32,);

    bb0: {{
        _3 = (copy _2,);
        _0 = <&mut {closure} as std::ops::FnMut<(u32,)>>::call_mut(move _1, move _3) -> [return: bb1, unwind unreachable];
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
    fn a_closure_called_through_a_reference_is_called_itself() {
        let closure = "{closure@/src/kernel.rs:1:2: 1:3}";
        let mut body = through_reference(&format!("&mut &mut {closure}"));
        let start = body.blocks.keys().next().expect("bb0");
        assert!(call_through_reference(&mut body, start, closure));
        let block = &body.blocks[start];
        let TerminatorKind::Call {
            func: Callee::Item(callee),
            args,
            ..
        } = &block.terminator.kind
        else {
            panic!("a call");
        };
        assert_eq!(
            callee.to_string(),
            format!("<{closure} as std::ops::FnMut<(u32,)>>::call_mut")
        );
        // The receiver is the reference the environment points at.
        let Some(crate::model::Statement {
            kind: crate::model::StatementKind::Assign(inner, Rvalue::Use(Operand::Copy(pointee))),
            ..
        }) = block.statements.last()
        else {
            panic!("the reference read");
        };
        assert_eq!(pointee.projection, [PlaceElem::Deref]);
        assert!(matches!(&args[0], Operand::Move(p) if p == inner));
        // An environment of another type stays a call.
        let mut other = through_reference(&format!("&mut {closure}"));
        assert!(!call_through_reference(&mut other, start, closure));
    }
}
