//! Folds over an inclusive range of integers, written in MIR at the call.
//!
//! `(1..=n).sum()`, `.product()`, `.fold(..)`, `.for_each(..)` and
//! `.rev()` of them all reach `RangeInclusive`'s `try_fold` (`try_rfold`)
//! with `NeverShortCircuit::wrap_mut_2(f)`, which calls the private
//! `RangeInclusiveIteratorImpl::spec_try_fold` (`spec_try_rfold`). rustc's
//! inliner leaves that call once past its budget ([`super::shims`]), and
//! no shim can make it: the trait is private and the closure has no name.
//! But its body is short and `core`'s source fixes it (`iter/range.rs`,
//! the same for every integer type):
//!
//! ```text
//! if self.is_empty() { return try { init }; }   // exhausted || !(start <= end)
//! let mut accum = init;
//! while self.start < self.end {
//!     let n = mem::replace(&mut self.start, self.start + 1);   // rfold: end, end - 1
//!     accum = f(accum, n)?;
//! }
//! self.exhausted = true;
//! if self.start == self.end { accum = f(accum, self.start)?; }
//! try { accum }
//! ```
//!
//! With `R = NeverShortCircuit<B>` (`#[repr(transparent)]` over `B`) the
//! `?` never returns early, and `wrap_mut_2(f)` is `move |a, b|
//! NeverShortCircuit(f(a, b))`, whose environment is `f` alone: so the call
//! becomes that loop in the caller's MIR, calling `f` through
//! `FnMut::call_mut` with the wrapper's environment as `f`'s (as
//! [`super::std_closures`] calls a wrapped closure; when `f` is a `&mut`
//! to a closure, as `Chain::fold` passes, the environment holds that
//! reference, which is read and called through), and the result is
//! `NeverShortCircuit(accum)`. `f` is then expanded or pointed at the
//! kernel closure's body like any closure call.
//!
//! Folds that stop early (`all`, `any`, `find`, `rfind` through their
//! `check` closures, `try_fold` with a closure of the kernel's) pass `f`
//! itself and a result type of `core`'s `ControlFlow`, `Option` or
//! `Result`: `?` reads the result's discriminant, goes on with the
//! payload of `Continue` (`Some`, `Ok`), and otherwise returns the
//! result as it is, which is what each of their `FromResidual` impls
//! gives back; the fold's own result is `Continue(accum)` (`Some`, `Ok`).
//! Any other `Try` type or element type (`char`, which skips the
//! surrogates) stays a call, refused by name.

use super::call_site::{CallSite, never_short_circuit, new_local, operand_ty, variant_value};
use super::std_closures::{KernelClosures, callable, closure_function, drops_nothing};
use crate::calls::{RANGE_INCLUSIVE_FIELDS, RANGE_INCLUSIVE_PATHS, std_relative};
use crate::model::split_qualified;
use crate::model::{
    BasicBlock, BinOp, Body, Callee, CastKind, ConstOperand, GenericArg, IntTy, Mutability,
    Operand, Path, Place, PlaceElem, Rvalue, Scalar, TerminatorKind, Ty, top_level_items,
    trailing_generic_args,
};

/// Which end a fold takes its items from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// `spec_try_fold`: from `start` up.
    Forward,
    /// `spec_try_rfold`: from `end` down.
    Backward,
}

/// One call this module expands: the range's element type, the fold's
/// direction, the accumulator's type and the closure `wrap_mut_2` wraps.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RangeFold {
    element: IntTy,
    direction: Direction,
    accumulator: Ty,
    /// What `?` does with the closure's result.
    residual: Residual,
    /// The type of the closure argument: `wrap_mut_2`'s closure, or the
    /// closure itself (or a `&mut` to it) for an enum result.
    wrapper: Ty,
    /// The closure it wraps, or the closure a `&mut` it wraps points to
    /// (`Chain::fold` folds each half with `&mut f`).
    closure: String,
    /// Whether it wraps a `&mut` to `closure`.
    by_mut_ref: bool,
}

/// What the fold's `?` does with each result of the closure.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Residual {
    /// `NeverShortCircuit<B>`: the closure, wrapped by `wrap_mut_2`, gives
    /// the accumulator itself, and the fold never stops early.
    Never,
    /// An enum `R` whose `variant` (discriminant `discr`) holds the next
    /// accumulator (`ControlFlow::Continue`, `Option::Some`,
    /// `Result::Ok`): `?` goes on with it, and otherwise returns the
    /// result as it is (each `FromResidual` of these three gives back the
    /// same value). The fold's own result is `variant(accum)`.
    Enum {
        /// The result type's path (`std::option::Option<u32>`).
        ty: Path,
        variant: &'static str,
        discr: u128,
    },
}

/// Expands the call ending block `bb` if it is such a fold whose closure
/// will have a body (see [`callable`]) and whose drop does nothing;
/// whether it did.
pub(super) fn expand_range_fold(body: &mut Body, bb: BasicBlock, kernel: &KernelClosures) -> bool {
    let TerminatorKind::Call {
        func: Callee::Item(path),
        ..
    } = &body.blocks[bb].terminator.kind
    else {
        return false;
    };
    match range_fold(path) {
        // `core` drops the wrapper, which holds `f` by value, at the end;
        // the expansion does not, so it is made only where that does
        // nothing (a `&mut` to `f` has no drop).
        Some(fold) if callable(&fold.closure, kernel.has_body) => {
            if fold.by_mut_ref || drops_nothing(&fold.closure, kernel) {
                expand(body, bb, &fold)
            } else {
                kernel.left.borrow_mut().insert(
                    path.to_string(),
                    "a fold over an inclusive range whose closure captures a value with drop glue is not supported (`core` drops the closure when the fold ends, which the fold written at the call would not; capture such values by reference)".to_string(),
                );
                false
            }
        }
        _ => false,
    }
}

/// The fold a callee path names: `<std::ops::RangeInclusive<A> as
/// std::iter::range::RangeInclusiveIteratorImpl>::spec_try_fold::<B, F, R>`
/// (or `spec_try_rfold`), `A` an integer type, and either `R =
/// std::ops::try_trait::NeverShortCircuit<B>` with `F` the closure
/// `NeverShortCircuit<B>::wrap_mut_2<B, A, G>::{closure#0}` of a closure
/// `G` (or a `&mut` to one), or `R` one of [`Residual::Enum`]'s with `F`
/// a closure (or a `&mut` to one).
fn range_fold(path: &Path) -> Option<RangeFold> {
    let [qualified, method] = path.segments.as_slice() else {
        return None;
    };
    let direction = match method.name.as_str() {
        "spec_try_fold" => Direction::Forward,
        "spec_try_rfold" => Direction::Backward,
        _ => return None,
    };
    let (self_ty, trait_path, rest) = split_qualified(&qualified.name)?;
    if !rest.is_empty()
        || std_relative(trait_path) != Some("iter::range::RangeInclusiveIteratorImpl")
    {
        return None;
    }
    let (range, element) = trailing_generic_args(self_ty)?;
    if !RANGE_INCLUSIVE_PATHS.contains(&range) {
        return None;
    }
    let element = IntTy::from_name(element)?;
    let [
        GenericArg::Type(accumulator),
        GenericArg::Type(wrapper),
        GenericArg::Type(result),
    ] = method.args.as_slice()
    else {
        return None;
    };
    // A closure, or a `&mut` to one.
    let closure_of = |f: &str| -> Option<(bool, String)> {
        let (by_mut_ref, f) = match f.strip_prefix("&mut ") {
            Some(pointee) => (true, pointee),
            None => (false, f),
        };
        (f.starts_with("{closure@") && f.ends_with('}')).then(|| (by_mut_ref, f.to_string()))
    };
    let (residual, (by_mut_ref, closure)) =
        if never_short_circuit(&result.to_string(), &accumulator.to_string()) {
            // `wrap_mut_2<B, A, G>`'s closure.
            let Ty::Opaque(wrap) = wrapper else {
                return None;
            };
            let (function, args) = closure_function(wrap)?;
            let (owner, name) = function.rsplit_once("::")?;
            let items = top_level_items(args);
            let [b, a, g] = items.as_slice() else {
                return None;
            };
            // Compared as types, not as text that might be spelled otherwise.
            let same = |text: &str, ty: &Ty| crate::parse::parse_type(text).is_ok_and(|t| t == *ty);
            if name != "wrap_mut_2"
                || !never_short_circuit(owner, b)
                || !same(b, accumulator)
                || !same(a, &Ty::Int(element))
            {
                return None;
            }
            (Residual::Never, closure_of(g)?)
        } else {
            // `f` itself: not `wrap_mut_2`'s closure, whose result is
            // `NeverShortCircuit`.
            let (by_mut_ref, f) = closure_of(&wrapper.to_string())?;
            let wraps = closure_function(&f).is_some_and(|(function, _)| {
                function
                    .rsplit_once("::")
                    .is_some_and(|(_, name)| name == "wrap_mut_2")
            });
            if wraps {
                return None;
            }
            (enum_residual(result, accumulator)?, (by_mut_ref, f))
        };
    Some(RangeFold {
        element,
        direction,
        accumulator: accumulator.clone(),
        residual,
        wrapper: wrapper.clone(),
        closure,
        by_mut_ref,
    })
}

/// The [`Residual::Enum`] of a fold's result type `result` with
/// accumulator `accumulator`: `ControlFlow<_, B>`, `Option<B>` or
/// `Result<B, _>` of `core`.
fn enum_residual(result: &Ty, accumulator: &Ty) -> Option<Residual> {
    let Ty::Adt(path) = result else {
        return None;
    };
    let last = path.segments.last()?;
    let def = path.def_path();
    let args: Vec<&Ty> = last.type_args().collect();
    let unit = Ty::unit();
    let (variant, discr, held) = match std_relative(&def)? {
        // `ControlFlow<B>` prints without its default `C = ()`.
        "ops::ControlFlow" | "ops::control_flow::ControlFlow" => match args.as_slice() {
            [_] => ("Continue", 0, Some(&&unit)),
            _ => ("Continue", 0, args.get(1)),
        },
        "option::Option" => ("Some", 1, args.first()),
        "result::Result" => ("Ok", 0, args.first()),
        _ => return None,
    };
    (*held? == accumulator).then(|| Residual::Enum {
        ty: path.clone(),
        variant,
        discr,
    })
}

/// Rewrites the call ending block `bb` into the loop of the module's
/// documentation; whether it did (it leaves a call whose arguments or
/// destination are not as `core`'s signature gives them).
fn expand(body: &mut Body, bb: BasicBlock, fold: &RangeFold) -> bool {
    let Some(site) = CallSite::of(body, bb) else {
        return false;
    };
    let (destination, target) = (&site.destination, &site.target);
    let [range_arg, init, wrapper_arg] = site.args.as_slice() else {
        return false;
    };
    let element = Ty::Int(fold.element);
    let range_ref_ty = match operand_ty(body, range_arg) {
        Some(Ty::Ref(Mutability::Mut, range))
            if trailing_generic_args(&range.to_string()).is_some_and(|(path, arg)| {
                RANGE_INCLUSIVE_PATHS.contains(&path) && arg == element.to_string()
            }) =>
        {
            Ty::Ref(Mutability::Mut, range)
        }
        _ => return false,
    };
    let wrapper_ty = fold.wrapper.clone();
    if operand_ty(body, wrapper_arg).is_some_and(|t| t != wrapper_ty) {
        return false;
    }
    if operand_ty(body, init).is_some_and(|t| t != fold.accumulator) {
        return false;
    }
    let Some(result_ty) = body.place_ty(destination) else {
        return false;
    };
    let result_fits = match &fold.residual {
        Residual::Never => {
            never_short_circuit(&result_ty.to_string(), &fold.accumulator.to_string())
        }
        Residual::Enum { ty, .. } => result_ty == Ty::Adt(ty.clone()),
    };
    if !result_fits {
        return false;
    }

    let range = new_local(body, range_ref_ty);
    let accum = new_local(body, fold.accumulator.clone());
    let env = new_local(body, wrapper_ty.clone());
    let field = |i: usize, ty: &Ty| {
        let mut p = range.clone();
        p.projection.push(PlaceElem::Deref);
        p.projection.push(PlaceElem::Field(i as u32, ty.clone()));
        p
    };
    debug_assert_eq!(RANGE_INCLUSIVE_FIELDS, ["start", "end", "exhausted"]);
    let (start, end, exhausted) = (field(0, &element), field(1, &element), field(2, &Ty::Bool));
    let stmt = |place: &Place, rv: Rvalue| site.assign(place, rv);
    let terminator = |kind| site.terminator(kind);
    // Blocks are made first and filled in once every target is known.
    let make = |body: &mut Body| site.push_block(body, Vec::new(), TerminatorKind::Unreachable);
    let (check_exhausted, check_order, head, step, last, last_call, done) = (
        make(body),
        make(body),
        make(body),
        make(body),
        make(body),
        make(body),
        make(body),
    );
    // A test of a new `bool` local: `otherwise` when true, `if_false` else.
    let branch = |body: &mut Body, block: BasicBlock, rv: Rvalue, if_false, otherwise| {
        let flag = new_local(body, Ty::Bool);
        body.blocks[block].statements.push(stmt(&flag, rv));
        body.blocks[block].terminator = terminator(TerminatorKind::SwitchInt {
            discr: Operand::Move(flag),
            targets: vec![(0, if_false)],
            otherwise,
        });
    };
    // `accum = f(accum, item)?` through the wrapper's environment, ending
    // `block` and going on at `next` (or returning `f`'s result when `?`
    // stops).
    let call_f = |body: &mut Body, block: BasicBlock, item: Operand, next: BasicBlock| {
        let f_ty = Ty::Opaque(fold.closure.clone());
        let env_ref = new_local(body, Ty::Ref(Mutability::Mut, Box::new(wrapper_ty.clone())));
        let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(f_ty));
        let f_ref = new_local(body, f_ref_ty.clone());
        let args_ty = Ty::Tuple(vec![fold.accumulator.clone(), element.clone()]);
        let args = new_local(body, args_ty.clone());
        // The environment is `f`, or a `&mut` to it, which is read.
        let through = if fold.by_mut_ref {
            let ptr_ty = Ty::Ref(Mutability::Mut, Box::new(f_ref_ty.clone()));
            Some((new_local(body, ptr_ty.clone()), ptr_ty))
        } else {
            None
        };
        let statements = &mut body.blocks[block].statements;
        statements.push(stmt(&env_ref, Rvalue::Ref(Mutability::Mut, env.clone())));
        match through {
            None => statements.push(stmt(
                &f_ref,
                Rvalue::Cast(CastKind::Transmute, Operand::Move(env_ref), f_ref_ty),
            )),
            Some((ptr, ptr_ty)) => {
                statements.push(stmt(
                    &ptr,
                    Rvalue::Cast(CastKind::Transmute, Operand::Move(env_ref), ptr_ty),
                ));
                let mut pointee = ptr;
                pointee.projection.push(PlaceElem::Deref);
                statements.push(stmt(&f_ref, Rvalue::Use(Operand::Copy(pointee))));
            }
        }
        statements.push(stmt(
            &args,
            Rvalue::Aggregate(
                crate::model::AggregateKind::Tuple,
                vec![Operand::Move(accum.clone()), item],
            ),
        ));
        // The result: the accumulator itself, or an enum that `?` reads.
        let (result, after) = match &fold.residual {
            Residual::Never => (accum.clone(), next),
            Residual::Enum { variant, discr, .. } => {
                let result = new_local(body, result_ty.clone());
                let (check, go_on, stop) = (make(body), make(body), make(body));
                let tag = new_local(body, Ty::Int(IntTy::Isize));
                body.blocks[check]
                    .statements
                    .push(stmt(&tag, Rvalue::Discriminant(result.clone())));
                body.blocks[check].terminator = terminator(TerminatorKind::SwitchInt {
                    discr: Operand::Move(tag),
                    targets: vec![(*discr, go_on)],
                    otherwise: stop,
                });
                let mut held = result.clone();
                held.projection
                    .push(PlaceElem::Downcast(variant.to_string()));
                held.projection
                    .push(PlaceElem::Field(0, fold.accumulator.clone()));
                body.blocks[go_on]
                    .statements
                    .push(stmt(&accum, Rvalue::Use(Operand::Move(held))));
                body.blocks[go_on].terminator = terminator(TerminatorKind::Goto(next));
                body.blocks[stop].statements.push(stmt(
                    destination,
                    Rvalue::Use(Operand::Move(result.clone())),
                ));
                body.blocks[stop].terminator = terminator(TerminatorKind::Goto(*target));
                (result, check)
            }
        };
        body.blocks[block].terminator =
            terminator(site.call_mut(&fold.closure, f_ref, (args, &args_ty), result, after));
    };

    // The call's block: the arguments into locals of their own.
    let entry = &mut body.blocks[bb];
    entry.statements.extend([
        stmt(&range, Rvalue::Use(range_arg.clone())),
        stmt(&accum, Rvalue::Use(init.clone())),
        stmt(&env, Rvalue::Use(wrapper_arg.clone())),
    ]);
    entry.terminator = terminator(TerminatorKind::Goto(check_exhausted));
    // `is_empty`: `exhausted || !(start <= end)`.
    branch(
        body,
        check_exhausted,
        Rvalue::Use(Operand::Copy(exhausted.clone())),
        check_order,
        done,
    );
    branch(
        body,
        check_order,
        Rvalue::BinaryOp(
            BinOp::Le,
            Operand::Copy(start.clone()),
            Operand::Copy(end.clone()),
        ),
        done,
        head,
    );
    // `while start < end`.
    branch(
        body,
        head,
        Rvalue::BinaryOp(
            BinOp::Lt,
            Operand::Copy(start.clone()),
            Operand::Copy(end.clone()),
        ),
        last,
        step,
    );
    // The item, and its end moved one step (which cannot overflow: `start
    // < end`).
    let (moved, op) = match fold.direction {
        Direction::Forward => (&start, BinOp::Add),
        Direction::Backward => (&end, BinOp::Sub),
    };
    let item = new_local(body, element.clone());
    let one = Operand::Const(ConstOperand::Scalar(Scalar::Int {
        bits: 1,
        ty: fold.element,
    }));
    body.blocks[step].statements.extend([
        stmt(&item, Rvalue::Use(Operand::Copy(moved.clone()))),
        stmt(
            moved,
            Rvalue::BinaryOp(op, Operand::Copy(item.clone()), one),
        ),
    ]);
    call_f(body, step, Operand::Move(item), head);
    // `exhausted = true`, and the last item when `start == end`.
    body.blocks[last].statements.push(stmt(
        &exhausted,
        Rvalue::Use(Operand::Const(ConstOperand::Scalar(Scalar::Bool(true)))),
    ));
    branch(
        body,
        last,
        Rvalue::BinaryOp(
            BinOp::Eq,
            Operand::Copy(start.clone()),
            Operand::Copy(end.clone()),
        ),
        done,
        last_call,
    );
    call_f(body, last_call, Operand::Copy(start), done);
    // `NeverShortCircuit(accum)`, or the enum's variant holding it.
    let finished = match &fold.residual {
        Residual::Never => {
            let mut wrapped = destination.clone();
            wrapped
                .projection
                .push(PlaceElem::Field(0, fold.accumulator.clone()));
            stmt(&wrapped, Rvalue::Use(Operand::Move(accum.clone())))
        }
        Residual::Enum { ty, variant, .. } => stmt(
            destination,
            variant_value(ty, variant, Operand::Move(accum.clone())),
        ),
    };
    body.blocks[done].statements.push(finished);
    body.blocks[done].terminator = terminator(TerminatorKind::Goto(*target));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUM: &str =
        "{closure@<u32 as std::iter::Sum>::sum<std::ops::RangeInclusive<u32>>::{closure#0}}";

    /// The callee as rustc prints it, with `element`, `method`, the wrapped
    /// closure `f` and the `Try` type `result` (`B` is `u32`).
    fn callee(element: &str, method: &str, f: &str, result: &str) -> Path {
        callee_wrapping("u32", element, method, f, result)
    }

    /// [`callee`] whose wrapper's accumulator is `wrapped`.
    fn callee_wrapping(wrapped: &str, element: &str, method: &str, f: &str, result: &str) -> Path {
        let text = callee_text(wrapped, element, method, f, result);
        crate::parse::parse_value_path(&text).expect("a printed callee parses")
    }

    /// The text of [`callee_wrapping`]'s path, as rustc prints a call's.
    fn callee_text(wrapped: &str, element: &str, method: &str, f: &str, result: &str) -> String {
        format!(
            "<std::ops::RangeInclusive<{element}> as std::iter::range::RangeInclusiveIteratorImpl>::{method}::<u32, \
             {{closure@std::ops::try_trait::NeverShortCircuit<{wrapped}>::wrap_mut_2<{wrapped}, {element}, {f}>::{{closure#0}}}}, {result}>"
        )
    }

    const NEVER: &str = "std::ops::try_trait::NeverShortCircuit<u32>";

    #[test]
    fn a_fold_is_known_by_its_trait_its_wrapper_and_its_result() {
        let fold = range_fold(&callee("u32", "spec_try_fold", SUM, NEVER))
            .expect("`(1..=n).sum()`'s fold");
        assert_eq!(fold.element, IntTy::U32);
        assert_eq!(fold.direction, Direction::Forward);
        assert_eq!(fold.accumulator, Ty::Int(IntTy::U32));
        assert_eq!(fold.closure, SUM);
        let kernel = "{closure@/src/kernel.rs:3:4: 3:9}";
        let rfold = range_fold(&callee("i8", "spec_try_rfold", kernel, NEVER))
            .expect("`(lo..=hi).rev().fold(..)`'s fold");
        assert_eq!(rfold.element, IntTy::I8);
        assert_eq!(rfold.direction, Direction::Backward);
        assert_eq!(rfold.closure, kernel);
        assert!(!rfold.by_mut_ref);
        // The same items spelled through `core`.
        let text = callee_text("u32", "u32", "spec_try_fold", SUM, NEVER)
            .replace("std::ops::", "core::ops::")
            .replace("std::iter::range::", "core::iter::range::");
        let core_spelling = crate::parse::parse_value_path(&text).expect("parses");
        assert!(range_fold(&core_spelling).is_some(), "{text}");
        // `Chain::fold` folds each half with `&mut f`.
        let chained = range_fold(&callee(
            "u32",
            "spec_try_fold",
            &format!("&mut {SUM}"),
            NEVER,
        ))
        .expect("a fold of `&mut f`");
        assert_eq!(chained.closure, SUM);
        assert!(chained.by_mut_ref);
    }

    #[test]
    fn folds_that_stop_early_are_known_by_their_result_enum() {
        let ty = |t: &str| crate::parse::parse_type(t).expect("a printed type parses");
        let unit = Ty::unit();
        let u32_ty = Ty::Int(IntTy::U32);
        let variant = |r: Option<Residual>| match r {
            Some(Residual::Enum { variant, discr, .. }) => Some((variant, discr)),
            _ => None,
        };
        // `ControlFlow<B>` prints without its `C = ()`.
        let flow = ty("std::ops::ControlFlow<u32>");
        assert_eq!(variant(enum_residual(&flow, &unit)), Some(("Continue", 0)));
        assert_eq!(variant(enum_residual(&flow, &u32_ty)), None);
        let both = ty("core::ops::ControlFlow<(), u32>");
        assert_eq!(
            variant(enum_residual(&both, &u32_ty)),
            Some(("Continue", 0))
        );
        let option = ty("std::option::Option<u32>");
        assert_eq!(variant(enum_residual(&option, &u32_ty)), Some(("Some", 1)));
        let result = ty("std::result::Result<u32, u8>");
        assert_eq!(variant(enum_residual(&result, &u32_ty)), Some(("Ok", 0)));
        assert_eq!(variant(enum_residual(&result, &Ty::Int(IntTy::U8))), None);
        // Any other enum may be anyone's `Try`.
        let own = ty("kernel::Option<u32>");
        assert_eq!(variant(enum_residual(&own, &u32_ty)), None);
        // The fold then calls the closure argument itself.
        let kernel = "{closure@/src/kernel.rs:3:4: 3:9}";
        let text = format!(
            "<std::ops::RangeInclusive<u32> as std::iter::range::RangeInclusiveIteratorImpl>::spec_try_fold::<u32, {kernel}, std::option::Option<u32>>"
        );
        let fold = range_fold(&crate::parse::parse_value_path(&text).expect("parses"))
            .expect("`try_fold` with `Option`");
        assert_eq!(fold.closure, kernel);
        assert_eq!(fold.wrapper, Ty::Opaque(kernel.to_string()));
        assert!(matches!(
            fold.residual,
            Residual::Enum {
                variant: "Some",
                ..
            }
        ));
        let not_a_closure = text.replace(
            kernel,
            "fn(u32, u32) -> std::option::Option<u32> {kernel::f}",
        );
        assert_eq!(
            range_fold(&crate::parse::parse_value_path(&not_a_closure).expect("parses")),
            None
        );
    }

    #[test]
    fn other_folds_stay_calls() {
        // `wrap_mut_2`'s closure with an enum result whose payload is the
        // accumulator.
        let control_flow = "std::ops::ControlFlow<(), u32>";
        assert_eq!(
            range_fold(&callee("u32", "spec_try_fold", SUM, control_flow)),
            None
        );
        // `char` steps over the surrogates.
        assert_eq!(
            range_fold(&callee("char", "spec_try_fold", SUM, NEVER)),
            None
        );
        // A shared reference to a closure, or a function item.
        let by_ref = format!("&{SUM}");
        assert_eq!(
            range_fold(&callee("u32", "spec_try_fold", &by_ref, NEVER)),
            None
        );
        let item = "fn(u32, u32) -> u32 {kernel::add}";
        assert_eq!(
            range_fold(&callee("u32", "spec_try_fold", item, NEVER)),
            None
        );
        // A kernel's own trait of that name, and another method.
        let own = callee("u32", "spec_try_fold", SUM, NEVER);
        let mut renamed = own.clone();
        renamed.segments[0].name = renamed.segments[0]
            .name
            .replace("std::iter::range::", "kernel::");
        assert_eq!(range_fold(&renamed), None);
        let mut other = own;
        other.segments[1].name = "spec_try_fold_back".into();
        assert_eq!(range_fold(&other), None);
        // The wrapper's accumulator must be the fold's.
        let mismatched = callee_wrapping("u64", "u32", "spec_try_fold", SUM, NEVER);
        assert_eq!(range_fold(&mismatched), None);
        // And its item the range's element.
        let text = callee_text("u32", "u32", "spec_try_fold", SUM, NEVER)
            .replace("wrap_mut_2<u32, u32,", "wrap_mut_2<u32, i32,");
        let other_item = crate::parse::parse_value_path(&text).expect("parses");
        assert_eq!(range_fold(&other_item), None, "{text}");
        assert!(range_fold(&callee_wrapping("u32", "u32", "spec_try_fold", SUM, NEVER)).is_some());
    }
}
