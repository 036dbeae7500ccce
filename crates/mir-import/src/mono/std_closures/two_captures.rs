//! The MIR written at the call of a `core` closure with two captures:
//! `Enumerate::fold`'s `enumerate(count, fold)`, `Take::try_fold`'s
//! `check(n, fold)`, `position`'s `check(predicate, acc)`,
//! `Filter::fold`'s `filter_fold(predicate, fold)` and `Map::fold`'s
//! `map_fold(f, g)` with two closures that may capture.
//!
//! Each capture is projected from the environment by the index the
//! closure's aggregate gives it ([`super::KernelClosures::captures`]: a
//! closure lists its captures in the order its body first names them), and
//! the lowering places it where the layout probe measured the closure's
//! proxy struct ([`crate::model::Crate::closure_proxies`]). A closure
//! whose captures are not exactly the two expected types is left as a
//! call.

use super::KernelClosures;
use super::rewrite::plainly_dropless;
use crate::model::{
    AggregateKind, BasicBlock, BinOp, Body, CastKind, ConstOperand, IntTy, Mutability, Operand,
    Place, PlaceElem, Rvalue, Scalar, Statement, TerminatorKind, Ty,
};
use crate::mono::call_site::{
    CallSite, closure_call, control_flow, env_closure, never_short_circuit, new_local, operand_ty,
    option_of, tuple_field, variant_value,
};

/// The environment of a closure with two captures at a call of it: a local
/// that holds the `&mut C` the call passes, and the index of each capture.
struct Env {
    /// The local holding the environment pointer.
    place: Place,
    /// The index of the capture of the expected other type.
    other_at: u32,
    /// The index of the captured closure.
    closure_at: u32,
}

impl Env {
    /// The environment the call passes as `env` (a `&mut C`), if `C`'s
    /// captures are exactly `other` and `closure` (in either order); its
    /// local is new.
    fn of(
        body: &mut Body,
        env: &Operand,
        other: &Ty,
        closure: &Ty,
        kernel: &KernelClosures,
    ) -> Option<Env> {
        let (env_ty, name) = env_closure(body, env)?;
        let (other_at, closure_at) = match (kernel.captures)(&name).as_deref() {
            Some([a, b]) if a == closure && b == other => (1, 0),
            Some([a, b]) if a == other && b == closure => (0, 1),
            _ => return None,
        };
        Some(Env {
            place: new_local(body, env_ty),
            other_at,
            closure_at,
        })
    }

    /// `env = <the call's environment operand>`, at the call.
    fn load(&self, site: &CallSite, env: Operand) -> Statement {
        site.assign(&self.place, Rvalue::Use(env))
    }

    /// `(*env).i`, of type `ty`.
    fn capture(&self, i: u32, ty: Ty) -> Place {
        let mut p = self.place.clone();
        p.projection.push(PlaceElem::Deref);
        p.projection.push(PlaceElem::Field(i, ty));
        p
    }

    /// The capture of the other type.
    fn other(&self, ty: Ty) -> Place {
        self.capture(self.other_at, ty)
    }

    /// The captured closure.
    fn closure(&self, ty: Ty) -> Place {
        self.capture(self.closure_at, ty)
    }
}

/// Where an expansion reaches two captured closures from.
enum Reach {
    /// The environment, each by its index.
    Indexed(Env),
    /// A local holding the environment's pointer, which is one to either
    /// closure when neither takes space.
    Pointer(Place),
}

impl Reach {
    /// Holds the call's environment operand `env`, at the call.
    fn load(&self, site: &CallSite, env: Operand) -> Statement {
        match self {
            Reach::Indexed(e) => e.load(site, env),
            Reach::Pointer(p) => site.assign(p, Rvalue::Use(env)),
        }
    }

    /// `&mut` the closure of type `closure`: the environment's capture of
    /// the other type (`other`) or its captured closure.
    fn borrow(&self, closure: &Ty, other: bool) -> Rvalue {
        match self {
            Reach::Indexed(e) if other => Rvalue::Ref(Mutability::Mut, e.other(closure.clone())),
            Reach::Indexed(e) => Rvalue::Ref(Mutability::Mut, e.closure(closure.clone())),
            Reach::Pointer(p) => Rvalue::Cast(
                CastKind::Transmute,
                Operand::Copy(p.clone()),
                Ty::Ref(Mutability::Mut, Box::new(closure.clone())),
            ),
        }
    }
}

/// A `usize` constant.
fn usize_const(bits: u128) -> Operand {
    Operand::Const(ConstOperand::Scalar(Scalar::Int {
        bits,
        ty: IntTy::Usize,
    }))
}

/// Whether closure `c` takes no space: it is a function item, or each of
/// its captures is a function item, `()` or a closure that takes none
/// (`filter_fold(p, min_by::fold(<u32 as Ord>::cmp))` with `p`
/// capture-less). `min_by`'s or `max_by`'s `fold` over a function item,
/// whose captures no printed body may show, is one.
fn takes_no_space(c: &str, kernel: &KernelClosures) -> bool {
    if super::capture_less_reduction(c) || super::fn_item(c) {
        return true;
    }
    let zero_sized = |t: &Ty| match t {
        Ty::Opaque(name) if name.starts_with("{closure@") => takes_no_space(name, kernel),
        t => t.is_fn_item() || *t == Ty::unit(),
    };
    (kernel.captures)(c).is_some_and(|captures| captures.iter().all(zero_sized))
}

/// `place` behind the reference in `reference`.
fn deref(reference: &Place) -> Place {
    let mut p = reference.clone();
    p.projection.push(PlaceElem::Deref);
    p
}

/// Which way an `enumerate(count, fold)` closure counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Counting {
    /// `Enumerate::fold`'s: `let acc = fold(acc, (count, item)); count +=
    /// 1; acc`.
    Up,
    /// `Enumerate::try_rfold`'s, from the length down: `count -= 1;
    /// fold(acc, (count, item))`. rustc was seen to leave only its `drop`
    /// (its call inlined), which needs it known as a wrapper that drops
    /// nothing but its `fold`; a call of it is not expanded.
    Down,
}

/// Rewrites a call of `Enumerate::fold`'s `enumerate(count, fold)` ending
/// block `bb`, `(acc, item)`, into the call `fold(acc, (count, item))`,
/// then `count += 1` (wrapping: the build has no overflow checks). Whether
/// it did.
pub(super) fn expand_enumerate(
    body: &mut Body,
    bb: BasicBlock,
    fold: &str,
    kernel: &KernelClosures,
) -> bool {
    let Some((site, env_op, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    // `(acc, item)`, the accumulator of the result's type.
    let [acc_ty, item_ty] = elems.as_slice() else {
        return false;
    };
    let usize_ty = Ty::Int(IntTy::Usize);
    let fold_ty = Ty::Opaque(fold.to_string());
    if *acc_ty != dest_ty {
        return false;
    }
    let Some(env) = Env::of(body, &env_op, &usize_ty, &fold_ty, kernel) else {
        return false;
    };
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let count = env.other(usize_ty.clone());
    let pair_ty = Ty::Tuple(vec![usize_ty, item_ty.clone()]);
    let args_ty = Ty::Tuple(vec![acc_ty.clone(), pair_ty.clone()]);
    let (pair, args, fold_ref) = (
        new_local(body, pair_ty),
        new_local(body, args_ty.clone()),
        new_local(body, Ty::Ref(Mutability::Mut, Box::new(fold_ty.clone()))),
    );
    let counted = site.push_block(
        body,
        vec![stmt(
            &count,
            Rvalue::BinaryOp(BinOp::Add, Operand::Copy(count.clone()), usize_const(1)),
        )],
        TerminatorKind::Goto(site.target),
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        env.load(&site, env_op),
        stmt(
            &pair,
            Rvalue::Aggregate(
                AggregateKind::Tuple,
                vec![Operand::Copy(count), Operand::Move(field(1))],
            ),
        ),
        stmt(
            &args,
            Rvalue::Aggregate(
                AggregateKind::Tuple,
                vec![Operand::Move(field(0)), Operand::Move(pair)],
            ),
        ),
        stmt(
            &fold_ref,
            Rvalue::Ref(Mutability::Mut, env.closure(fold_ty)),
        ),
    ]);
    block.terminator.kind = site.call_mut(
        fold,
        fold_ref,
        (args, &args_ty),
        site.destination.clone(),
        counted,
    );
    true
}

/// Rewrites a call of `StepBy`'s `nth(iter, step_minus_one)` closure
/// ending block `bb`, `()`, into the call `<I as Iterator>::nth(iter,
/// step_minus_one)` of its captures (`iter_ty` is `I`, as printed), which
/// gets a shim of its own. Whether it did.
pub(super) fn expand_step_nth(
    body: &mut Body,
    bb: BasicBlock,
    iter_ty: &str,
    kernel: &KernelClosures,
) -> bool {
    let Some(site) = CallSite::of(body, bb) else {
        return false;
    };
    // `(env, ())`, the unit as a constant or a place.
    let [env_op, unit] = site.args.as_slice() else {
        return false;
    };
    let (env_op, dest_ty) = (env_op.clone(), body.place_ty(&site.destination));
    let (Some(dest_ty), Some(Ty::Tuple(elems))) = (dest_ty, operand_ty(body, unit)) else {
        return false;
    };
    let (Ok(iter), Ok(callee)) = (
        crate::parse::parse_type(iter_ty),
        crate::parse::parse_value_path(&format!("<{iter_ty} as std::iter::Iterator>::nth")),
    ) else {
        return false;
    };
    let usize_ty = Ty::Int(IntTy::Usize);
    let iter_ref = Ty::Ref(Mutability::Mut, Box::new(iter));
    if !elems.is_empty() || crate::mono::call_site::option_of(&dest_ty).is_none() {
        return false;
    }
    // `iter` stands where `Env` expects a closure: a capture of its own type.
    let Some(env) = Env::of(body, &env_op, &usize_ty, &iter_ref, kernel) else {
        return false;
    };
    let (iter_arg, step_arg) = (
        new_local(body, iter_ref.clone()),
        new_local(body, usize_ty.clone()),
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        env.load(&site, env_op),
        site.assign(&iter_arg, Rvalue::Use(Operand::Copy(env.closure(iter_ref)))),
        site.assign(&step_arg, Rvalue::Use(Operand::Copy(env.other(usize_ty)))),
    ]);
    block.terminator.kind = site.call_instead(
        callee,
        vec![Operand::Move(iter_arg), Operand::Move(step_arg)],
    );
    true
}

/// How a `check(n, fold)` closure holds its count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Counter {
    /// `Take::try_fold`'s: `&mut usize`, the adapter's own field.
    Borrowed,
    /// `Skip::try_rfold`'s: a `usize` of its own (`self.len()`).
    Owned,
}

/// How an `R` that `ControlFlow::from_try` reads goes on with `acc_ty`
/// (`Try::branch` giving `Continue`): `Some(None)` for
/// `NeverShortCircuit<Acc>`, through its one field; `Some(Some((variant,
/// discriminant)))` for a `ControlFlow<B, Acc>` or `Option<Acc>`, through
/// the variant that holds the accumulator (any other variant breaks with
/// the `R` itself); `None` for any other `R`.
pub(super) fn goes_on(r_ty: &Ty, acc_ty: &Ty) -> Option<Option<(&'static str, u128)>> {
    match r_ty {
        _ if never_short_circuit(&r_ty.to_string(), &acc_ty.to_string()) => Some(None),
        _ if option_of(r_ty).as_ref() == Some(acc_ty) => Some(Some(("Some", 1))),
        Ty::Adt(r) if control_flow(r).is_some_and(|(_, go_on)| go_on == *acc_ty) => {
            Some(Some(("Continue", 0)))
        }
        _ => None,
    }
}

/// Two blocks that end a `core` check closure's call, whose destination
/// is a `ControlFlow<R, Acc>` (`flow`), with the `R` at `r` (giving
/// `acc_ty`, as [`goes_on`] says): the first writes `Break(r)`, the second
/// `ControlFlow::from_try(r)`: `Continue` of the accumulator `r` holds,
/// or `Break(r)` where `r` breaks. Both then go to the call's target.
pub(super) fn from_try_blocks(
    body: &mut Body,
    site: &CallSite,
    flow: &crate::model::Path,
    (r, acc_ty): (&Place, &Ty),
    goes_on: Option<(&'static str, u128)>,
) -> (BasicBlock, BasicBlock) {
    // `r.0`, or `(r as Continue).0` (`(r as Some).0`).
    let mut inner = r.clone();
    if let Some((variant, _)) = goes_on {
        inner
            .projection
            .push(PlaceElem::Downcast(variant.to_string()));
    }
    inner.projection.push(PlaceElem::Field(0, acc_ty.clone()));
    let ends = |body: &mut Body, variant: &str, payload: Place| {
        site.push_block(
            body,
            vec![site.assign(
                &site.destination,
                variant_value(flow, variant, Operand::Move(payload)),
            )],
            TerminatorKind::Goto(site.target),
        )
    };
    let (stop, mut go_on) = (
        ends(body, "Break", r.clone()),
        ends(body, "Continue", inner),
    );
    if let Some((_, discriminant)) = goes_on {
        // A break stops with `r` itself.
        let tag = new_local(body, Ty::Int(IntTy::Isize));
        go_on = site.push_block(
            body,
            vec![site.assign(&tag, Rvalue::Discriminant(r.clone()))],
            TerminatorKind::SwitchInt {
                discr: Operand::Move(tag),
                targets: vec![(discriminant, go_on)],
                otherwise: stop,
            },
        );
    }
    (stop, go_on)
}

/// Rewrites a call of `Take::try_fold`'s or `Skip::try_rfold`'s `check(n,
/// fold)` ending block `bb`, `(acc, x)`, with `fold` giving an `R` and the
/// call `ControlFlow<R, Acc>`: `n -= 1` (through the reference for
/// `Take`'s), `r = fold(acc, x)`, then `Break(r)` if `n` is 0 and
/// `ControlFlow::from_try(r)` otherwise. `R` is `NeverShortCircuit<Acc>`,
/// whose `from_try(r)` is `Continue(r.0)`, or `ControlFlow<B, Acc>` or
/// `Option<Acc>`, whose is `Continue(c)` for `Continue(c)` (`Some(c)`) and
/// `Break(r)` for a break (`from_residual` gives the break, or `None`,
/// back). Whether it did.
pub(super) fn expand_take_check(
    body: &mut Body,
    bb: BasicBlock,
    fold: &str,
    counter: Counter,
    kernel: &KernelClosures,
) -> bool {
    let Some((site, env_op, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let Ty::Adt(flow) = dest_ty else {
        return false;
    };
    let [acc_ty, _] = elems.as_slice() else {
        return false;
    };
    // `ControlFlow<R, Acc>`, `R` giving `Acc` when it goes on.
    let Some((r_ty, c)) = control_flow(&flow) else {
        return false;
    };
    let Some(goes_on) = goes_on(&r_ty, acc_ty) else {
        return false;
    };
    if c != *acc_ty {
        return false;
    }
    let usize_ty = Ty::Int(IntTy::Usize);
    let n_ref_ty = Ty::Ref(Mutability::Mut, Box::new(usize_ty.clone()));
    let counter_ty = match counter {
        Counter::Borrowed => n_ref_ty.clone(),
        Counter::Owned => usize_ty.clone(),
    };
    let fold_ty = Ty::Opaque(fold.to_string());
    let Some(env) = Env::of(body, &env_op, &counter_ty, &fold_ty, kernel) else {
        return false;
    };
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let args_ty = Ty::Tuple(elems.clone());
    let (n_ref, fold_ref, r, done) = (
        new_local(body, n_ref_ty.clone()),
        new_local(body, Ty::Ref(Mutability::Mut, Box::new(fold_ty.clone()))),
        new_local(body, r_ty),
        new_local(body, Ty::Bool),
    );
    // `*n`, or the count the environment holds.
    let n = match counter {
        Counter::Borrowed => deref(&n_ref),
        Counter::Owned => env.other(usize_ty),
    };
    let (stop, go_on) = from_try_blocks(body, &site, &flow, (&r, acc_ty), goes_on);
    let branch = site.push_branch(
        body,
        vec![stmt(
            &done,
            Rvalue::BinaryOp(BinOp::Eq, Operand::Copy(n.clone()), usize_const(0)),
        )],
        &done,
        stop,
        go_on,
    );
    let args = new_local(body, args_ty.clone());
    let block = &mut body.blocks[bb];
    block.statements.push(env.load(&site, env_op));
    if counter == Counter::Borrowed {
        block.statements.push(stmt(
            &n_ref,
            Rvalue::Use(Operand::Copy(env.other(n_ref_ty))),
        ));
    }
    block.statements.extend([
        stmt(
            &n,
            Rvalue::BinaryOp(BinOp::Sub, Operand::Copy(n.clone()), usize_const(1)),
        ),
        stmt(
            &fold_ref,
            Rvalue::Ref(Mutability::Mut, env.closure(fold_ty)),
        ),
        stmt(
            &args,
            Rvalue::Aggregate(
                AggregateKind::Tuple,
                vec![Operand::Move(field(0)), Operand::Move(field(1))],
            ),
        ),
    ]);
    block.terminator.kind = site.call_mut(fold, fold_ref, (args, &args_ty), r, branch);
    true
}

/// Rewrites a call of `position`'s `check(predicate, acc)` ending block
/// `bb`, `((), x)`, with the call `ControlFlow<usize, ()>`: `keep =
/// predicate(x)`, then `Break(*acc)` if it holds, else `*acc += 1`
/// (wrapping: the build has no overflow checks) and `Continue(())`.
/// Whether it did.
pub(super) fn expand_position(
    body: &mut Body,
    bb: BasicBlock,
    predicate: &str,
    kernel: &KernelClosures,
) -> bool {
    let Some((site, env_op, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let Ty::Adt(flow) = dest_ty else {
        return false;
    };
    let usize_ty = Ty::Int(IntTy::Usize);
    // `((), x)` and `ControlFlow<usize>`.
    let [unit, item] = elems.as_slice() else {
        return false;
    };
    if *unit != Ty::unit() || control_flow(&flow) != Some((usize_ty.clone(), Ty::unit())) {
        return false;
    }
    let acc_ref_ty = Ty::Ref(Mutability::Mut, Box::new(usize_ty));
    let predicate_ty = Ty::Opaque(predicate.to_string());
    let Some(env) = Env::of(body, &env_op, &acc_ref_ty, &predicate_ty, kernel) else {
        return false;
    };
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let args_ty = Ty::Tuple(vec![item.clone()]);
    let (acc_ref, predicate_ref, args, keep) = (
        new_local(body, acc_ref_ty.clone()),
        new_local(
            body,
            Ty::Ref(Mutability::Mut, Box::new(predicate_ty.clone())),
        ),
        new_local(body, args_ty.clone()),
        new_local(body, Ty::Bool),
    );
    let acc = deref(&acc_ref);
    let stop = site.push_block(
        body,
        vec![stmt(
            &site.destination,
            variant_value(&flow, "Break", Operand::Copy(acc.clone())),
        )],
        TerminatorKind::Goto(site.target),
    );
    let go_on = site.push_block(
        body,
        vec![
            stmt(
                &acc,
                Rvalue::BinaryOp(BinOp::Add, Operand::Copy(acc.clone()), usize_const(1)),
            ),
            stmt(
                &site.destination,
                variant_value(&flow, "Continue", Operand::Const(ConstOperand::Unit)),
            ),
        ],
        TerminatorKind::Goto(site.target),
    );
    let branch = site.push_branch(body, Vec::new(), &keep, stop, go_on);
    let block = &mut body.blocks[bb];
    block.statements.extend([
        env.load(&site, env_op),
        stmt(&acc_ref, Rvalue::Use(Operand::Copy(env.other(acc_ref_ty)))),
        stmt(
            &predicate_ref,
            Rvalue::Ref(Mutability::Mut, env.closure(predicate_ty)),
        ),
        stmt(
            &args,
            Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(field(1))]),
        ),
    ]);
    block.terminator.kind = site.call_mut(predicate, predicate_ref, (args, &args_ty), keep, branch);
    true
}

/// Rewrites a call of `Filter::fold`'s `filter_fold(predicate, fold)`
/// ending block `bb`, `(acc, item)`: `keep = predicate(&item)`, then
/// `fold(acc, item)` if it holds, else `acc`, which drops `item`: only for
/// items plainly without drop glue. Whether it did.
pub(super) fn expand_filter_fold(
    body: &mut Body,
    bb: BasicBlock,
    predicate: &str,
    fold: &str,
    kernel: &KernelClosures,
) -> bool {
    let Some((site, env_op, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let [acc_ty, item_ty] = elems.as_slice() else {
        return false;
    };
    if *acc_ty != dest_ty || !plainly_dropless(item_ty) {
        return false;
    }
    let predicate_ty = Ty::Opaque(predicate.to_string());
    let fold_ty = Ty::Opaque(fold.to_string());
    let Some(env) = Env::of(body, &env_op, &predicate_ty, &fold_ty, kernel) else {
        return false;
    };
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let item_ref_ty = Ty::Ref(Mutability::Not, Box::new(item_ty.clone()));
    let test_args_ty = Ty::Tuple(vec![item_ref_ty.clone()]);
    let fold_args_ty = Ty::Tuple(elems.clone());
    let (item_ref, test_args, keep, predicate_ref, fold_ref, fold_args) = (
        new_local(body, item_ref_ty),
        new_local(body, test_args_ty.clone()),
        new_local(body, Ty::Bool),
        new_local(
            body,
            Ty::Ref(Mutability::Mut, Box::new(predicate_ty.clone())),
        ),
        new_local(body, Ty::Ref(Mutability::Mut, Box::new(fold_ty.clone()))),
        new_local(body, fold_args_ty.clone()),
    );
    let taken = site.push_block(
        body,
        vec![
            stmt(
                &fold_ref,
                Rvalue::Ref(Mutability::Mut, env.closure(fold_ty)),
            ),
            stmt(
                &fold_args,
                Rvalue::Aggregate(
                    AggregateKind::Tuple,
                    vec![Operand::Move(field(0)), Operand::Move(field(1))],
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
    let skipped = site.push_block(
        body,
        vec![stmt(
            &site.destination,
            Rvalue::Use(Operand::Move(field(0))),
        )],
        TerminatorKind::Goto(site.target),
    );
    let branch = site.push_branch(body, Vec::new(), &keep, taken, skipped);
    let block = &mut body.blocks[bb];
    block.statements.extend([
        env.load(&site, env_op),
        stmt(
            &predicate_ref,
            Rvalue::Ref(Mutability::Mut, env.other(predicate_ty)),
        ),
        stmt(&item_ref, Rvalue::Ref(Mutability::Not, field(1))),
        stmt(
            &test_args,
            Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(item_ref)]),
        ),
    ]);
    block.terminator.kind = site.call_mut(
        predicate,
        predicate_ref,
        (test_args, &test_args_ty),
        keep,
        branch,
    );
    true
}

/// Which of `Map`'s folds a `map_fold`-like closure is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MapForm {
    /// `map_fold(f, g)`: captures `f` and `g`, `g` gives the accumulator.
    Fold,
    /// `map_try_fold(f, g)`: captures `&mut f` and `g`, `g` gives an `R`.
    TryFold,
}

/// Rewrites a call of `Map::fold`'s `map_fold(f, g)` (or `Map::try_fold`'s
/// `map_try_fold(&mut f, g)`) ending block `bb`,
/// `(acc, elt)`, with `f` giving a `mapped` (its text as printed), into
/// `mapped = f(elt)` and then `g(acc, mapped)` into the call's
/// destination, each closure borrowed from the environment where its
/// index puts it. When neither takes space ([`takes_no_space`]), neither
/// does the environment, and no printed body may build it (so no index is
/// known): each is then borrowed through the environment's own pointer, as
/// any non-null pointer is one to a closure that takes no space. Whether
/// it did.
pub(super) fn expand_map_fold_each(
    body: &mut Body,
    bb: BasicBlock,
    (f, g, mapped): (&str, &str, &str),
    form: MapForm,
    kernel: &KernelClosures,
) -> bool {
    let Some((site, env_op, tuple, elems, dest_ty)) = closure_call(body, bb) else {
        return false;
    };
    let Ok(mapped_ty) = crate::parse::parse_type(mapped) else {
        return false;
    };
    let [acc_ty, elt_ty] = elems.as_slice() else {
        return false;
    };
    // `map_fold`'s `g` gives the accumulator, `map_try_fold`'s an `R`.
    if form == MapForm::Fold && *acc_ty != dest_ty {
        return false;
    }
    let (f_ty, g_ty) = (Ty::Opaque(f.to_string()), Ty::Opaque(g.to_string()));
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(f_ty.clone()));
    let f_capture_ty = match form {
        MapForm::Fold => f_ty.clone(),
        MapForm::TryFold => f_ref_ty.clone(),
    };
    // Where the two closures are reached from: by index, or, when neither
    // takes space, through the environment's pointer itself.
    let reach = match Env::of(body, &env_op, &f_capture_ty, &g_ty, kernel) {
        Some(env) => Reach::Indexed(env),
        None if form == MapForm::Fold && takes_no_space(f, kernel) && takes_no_space(g, kernel) => {
            let Some(env_ty) = operand_ty(body, &env_op) else {
                return false;
            };
            Reach::Pointer(new_local(body, env_ty))
        }
        None => return false,
    };
    // `&mut f`, or the `&mut f` `map_try_fold` holds.
    let f_borrow = match (&reach, form) {
        (Reach::Indexed(env), MapForm::TryFold) => {
            Rvalue::Use(Operand::Copy(env.other(f_ref_ty.clone())))
        }
        _ => reach.borrow(&f_ty, true),
    };
    let field = |i: usize| tuple_field(&tuple, &elems, i);
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let f_args_ty = Ty::Tuple(vec![elt_ty.clone()]);
    let g_args_ty = Ty::Tuple(vec![acc_ty.clone(), mapped_ty.clone()]);
    let (f_ref, g_ref, f_args, g_args, mapped) = (
        new_local(body, f_ref_ty),
        new_local(body, Ty::Ref(Mutability::Mut, Box::new(g_ty.clone()))),
        new_local(body, f_args_ty.clone()),
        new_local(body, g_args_ty.clone()),
        new_local(body, mapped_ty),
    );
    let folded = site.push_block(
        body,
        vec![
            stmt(&g_ref, reach.borrow(&g_ty, false)),
            stmt(
                &g_args,
                Rvalue::Aggregate(
                    AggregateKind::Tuple,
                    vec![Operand::Move(field(0)), Operand::Move(mapped.clone())],
                ),
            ),
        ],
        site.call_mut(
            g,
            g_ref,
            (g_args, &g_args_ty),
            site.destination.clone(),
            site.target,
        ),
    );
    let block = &mut body.blocks[bb];
    block.statements.extend([
        reach.load(&site, env_op),
        stmt(&f_ref, f_borrow),
        stmt(
            &f_args,
            Rvalue::Aggregate(AggregateKind::Tuple, vec![Operand::Move(field(1))]),
        ),
    ]);
    block.terminator.kind = site.call_mut(f, f_ref, (f_args, &f_args_ty), mapped, folded);
    true
}
