//! Stand-ins for small standard-library items that rustc's inliner left as
//! calls and that no source can call.
//!
//! Past its budget for one top-level call ([`super::shims`]), rustc's
//! inliner leaves calls deep inside `core`'s iterator code: to a closure
//! `core` defines (`[u32]::contains`' `|x| *x == *self`), or to a method
//! of a private trait (`SpecAssumeCount`). A shim cannot call them (a
//! closure's type has no name, a private trait cannot be named), and
//! `core`'s MIR is never printed. But a few are one line whose meaning the
//! standard library's source fixes, and which the shim can say itself: its
//! body is that line ([`DepCall::stand_in`]), compiled by rustc like any
//! shim, with the kernel's overflow-check setting where `core`'s item
//! inherits the caller's (`#[rustc_inherit_overflow_checks]`).
//!
//! One more kind of call gets a stand-in: a nameable function called with
//! `Sum`'s or `Product`'s closure as an argument (`Iter::fold` in
//! `flatten().sum()`), which the shim calls with a closure of its own that
//! does the same, the generic arguments that name the closure left to
//! inference.
//!
//! A closure's environment reaches the call as a reference to it: the
//! stand-in takes it as a reference to what the closure captured, its only
//! field, at offset 0 (the environment of `|x| *x == *self` is one `&T`),
//! or to `()` where it captured nothing. An environment passed by value is
//! stood in for only when it is empty: one with a capture travels as the
//! closure's aggregate, which the capture's type would not describe.
//!
//! Each `core` item is matched by its printed path, closure index and
//! signature (the call with an accumulator, by the closure's); any other
//! call stays refused, by name. The fixture `std_stand_ins` runs each one
//! against the host's `core`. (Calls *of* `Sum`'s and `Product`'s
//! closures, and of closures that wrap the kernel's, are expanded in MIR
//! instead, in every import after its shims are linked, since the
//! expansions make new calls of them: [`super::std_closures`].)

mod private_fns;

use private_fns::private_fn_stand_in;
pub(super) use private_fns::random_access;

use super::shims::DepCall;
use crate::calls::std_relative;
use crate::model::{FloatTy, IntTy, Mutability, Path, Ty, closing_bracket, split_qualified};

/// The stand-in shim of the call of `path` with arguments of types
/// `params` and a result of type `ret`, when it is one of the items this
/// module knows; `None` for any other call.
pub(super) fn stand_in(path: &Path, params: &[Ty], ret: &Ty) -> Option<DepCall> {
    let printed = path.to_string();
    let (name, params, body) = closure_stand_in(&printed, params, ret)
        .or_else(|| private_fn_stand_in(path, params, ret))
        .or_else(|| local_accumulator_stand_in(path, params, ret))?;
    Some(DepCall {
        callee: name.to_string(),
        params,
        ret: ret.clone(),
        must_reach: None,
        stand_in: Some(body),
        type_params: Vec::new(),
        features: Vec::new(),
    })
}

/// A stand-in: its name, its parameter types and its body's expression.
type StandIn = (&'static str, Vec<Ty>, String);

/// `<{closure@DEF} as std::ops::FnMut<(..)>>::call_mut` (or `Fn`,
/// `FnOnce`) of a closure `core` defines whose body is known.
fn closure_stand_in(printed: &str, params: &[Ty], ret: &Ty) -> Option<StandIn> {
    let (def, rest) = closure_def(printed)?;
    let fn_trait = [
        "std::ops::FnMut<",
        "core::ops::FnMut<",
        "std::ops::Fn<",
        "core::ops::Fn<",
        "std::ops::FnOnce<",
        "core::ops::FnOnce<",
    ];
    let tail = rest.strip_prefix(" as ")?;
    if !fn_trait.iter().any(|t| tail.starts_with(t))
        || !["call_mut", "call", "call_once"]
            .iter()
            .any(|m| tail.ends_with(&format!(">>::{m}")))
    {
        return None;
    }
    let [env, Ty::Tuple(args)] = params else {
        return None;
    };
    if let Some(stand_in) = key_compare_stand_in(def, env, args, ret) {
        return Some(stand_in);
    }
    let (self_ty, trait_path, after) = split_qualified(def)?;
    // The closure's own index is the last (a generic argument may name
    // other closures).
    let (method, index) = after.rsplit_once("::{closure#")?;
    // The method's own closure, not one nested in another closure
    // (`m<I>::{closure#0}::{closure#0}`): what precedes the index is a
    // name and, at its end only, generic arguments.
    let base = method.split('<').next().unwrap_or(method);
    let args_last =
        base.len() == method.len() || closing_bracket(method, base.len()) == Some(method.len() - 1);
    if base.contains("{closure#") || !args_last {
        return None;
    }
    let method = base;
    let index = index.strip_suffix('}')?;
    // The environment: by reference (`call_mut`, `call`), or a capture-less
    // one by value (`call_once`); a capture passed by value travels as the
    // closure's aggregate, not as the capture, so none is taken.
    let env_as = |captured: Ty| match env {
        Ty::Ref(m, _) => Some(Ty::Ref(*m, Box::new(captured))),
        _ => (captured == Ty::unit()).then_some(captured),
    };
    let stand_in = match (strip_std(trait_path)?, method, index) {
        // `Iterator::count`'s default, `self.fold(0, |count, _| count +
        // 1)`, for a std iterator (none of which overrides `count` with
        // another closure of this signature).
        ("iter::Iterator", "count", "0")
            if (self_ty.starts_with("std::") || self_ty.starts_with("core::"))
                && matches!(args.as_slice(), [Ty::Int(IntTy::Usize), _])
                && *ret == Ty::Int(IntTy::Usize) =>
        {
            (
                "count",
                vec![env_as(Ty::unit())?, params[1].clone()],
                "{ let _ = a0; let _ = &a1.1; a1.0 + 1 }".to_string(),
            )
        }
        // `[T]::contains` (libcore's `SliceContains`): for the number
        // types, `chunk.iter().fold(false, |acc, x| acc | (*x == *self))`
        // (closure 0) and `remainder.iter().any(|x| *x == *self)` (closure
        // 1); for other `T` but bytes, the latter alone (closure 0). Each
        // captures `self`, a `&T`, and is called through a reference.
        ("slice::cmp::SliceContains", "slice_contains", _)
            if *ret == Ty::Bool && matches!(env, Ty::Ref(..)) =>
        {
            let chunked = CHUNKED_CONTAINS.contains(&self_ty);
            let (element, body) = match (args.as_slice(), index, chunked) {
                ([Ty::Bool, Ty::Ref(_, e)], "0", true) => (e, "a1.0 | (*a1.1 == **a0)"),
                ([Ty::Ref(_, e)], "1", true) | ([Ty::Ref(_, e)], "0", false) => {
                    (e, "*a1.0 == **a0")
                }
                _ => return None,
            };
            if element.to_string() != self_ty || ["u8", "i8"].contains(&self_ty) {
                return None;
            }
            let capture = Ty::Ref(Mutability::Not, element.clone());
            (
                "slice_contains",
                vec![env_as(capture)?, params[1].clone()],
                body.to_string(),
            )
        }
        // `StepBy::size_hint`'s `first_size(step)` and `other_size(step)`
        // (`zip` of a `step_by`): `move |n| if n == 0 { 0 } else { 1 + (n -
        // 1) / step }` and `move |n| n / step`, capturing `step:
        // NonZero<usize>` (the division cannot fail, nor the sum overflow).
        (
            "iter::adapters::step_by::StepByImpl",
            method @ ("spec_size_hint::first_size" | "spec_size_hint::other_size"),
            "0",
        ) if args.as_slice() == [Ty::Int(IntTy::Usize)]
            && *ret == Ty::Int(IntTy::Usize)
            && matches!(env, Ty::Ref(..)) =>
        {
            let step = crate::parse::parse_type("core::num::NonZero<usize>").ok()?;
            let body = if method.ends_with("first_size") {
                "if a1.0 == 0 { 0 } else { 1 + (a1.0 - 1) / a0.get() }"
            } else {
                "a1.0 / a0.get()"
            };
            (
                "step_by_size",
                vec![env_as(step)?, params[1].clone()],
                body.to_string(),
            )
        }
        // `advance_by`'s for an iterator without a faster one (`Map`'s, in
        // `map(..).skip(..)`): `self.try_fold(n, |n, _| NonZero::new(n.get()
        // - 1))`, counting down from `n >= 1`, so the subtraction cannot
        // overflow.
        ("iter::Iterator::advance_by::SpecAdvanceBy", "spec_advance_by", "0")
            if matches!(args.as_slice(), [count, _]
                    if nonzero_usize(count)
                        && super::call_site::option_of(ret).as_ref() == Some(count)) =>
        {
            (
                "advance_by_step",
                vec![env_as(Ty::unit())?, params[1].clone()],
                "{ let _ = a0; let _ = &a1.1; ::core::num::NonZero::new(a1.0.get() - 1) }"
                    .to_string(),
            )
        }
        _ => return None,
    };
    (stand_in.1.iter().all(super::nameable) && super::nameable(ret)).then_some(stand_in)
}

/// The reductions of `min`, `max`, `min_by_key` and `max_by_key`:
/// `min_by`'s (`max_by`'s) `fold(compare)` closure, `move |x, y|
/// cmp::min_by(x, y, &mut compare)`, with `compare` a function item, so
/// that the environment is empty: `<T as Ord>::cmp` (`min`, `max`), or the
/// key methods' nested `fn compare((x_p, _): &(B, T), (y_p, _): &(B, T))
/// -> Ordering { x_p.cmp(y_p) }`. `cmp::min_by` keeps the first of two
/// equal values (`is_le`), `cmp::max_by` the second (`is_gt` keeps the
/// first).
fn key_compare_stand_in(def: &str, env: &Ty, args: &[Ty], ret: &Ty) -> Option<StandIn> {
    let def = std_relative(def)?;
    let (min, rest) = match def.strip_prefix("iter::Iterator::min_by::fold<") {
        Some(rest) => (true, rest),
        None => (false, def.strip_prefix("iter::Iterator::max_by::fold<")?),
    };
    let compare = rest.strip_suffix(">::{closure#0}")?;
    let item = compare.rsplit_once('{')?.1.strip_suffix('}')?;
    let [first, second] = args else {
        return None;
    };
    if first != second || first != ret || !matches!(env, Ty::Ref(..)) {
        return None;
    }
    let by_key = {
        let key_fn = if min {
            "iter::Iterator::min_by_key::compare::<"
        } else {
            "iter::Iterator::max_by_key::compare::<"
        };
        std_relative(item).is_some_and(|i| i.starts_with(key_fn))
            && matches!(ret, Ty::Tuple(f) if f.len() == 2)
    };
    let by_ord = ["std::cmp::Ord", "core::cmp::Ord"]
        .iter()
        .any(|o| item == format!("<{ret} as {o}>::cmp"));
    let (name, field) = match (by_key, by_ord, min) {
        (true, _, true) => ("min_by_key", ".0"),
        (true, _, false) => ("max_by_key", ".0"),
        (false, true, true) => ("min", ""),
        (false, true, false) => ("max", ""),
        (false, false, _) => return None,
    };
    let select = if min { "is_le" } else { "is_gt" };
    let env = match env {
        Ty::Ref(m, _) => Ty::Ref(*m, Box::new(Ty::unit())),
        _ => return None,
    };
    let body = format!(
        "{{ let _ = a0; let (x, y) = a1; \
         if ::core::cmp::Ord::cmp(&x{field}, &y{field}).{select}() {{ x }} else {{ y }} }}"
    );
    let params = vec![env, Ty::Tuple(args.to_vec())];
    (params.iter().all(super::nameable) && super::nameable(ret)).then_some((name, params, body))
}

/// A call of a nameable function with `Sum`'s or `Product`'s closure as
/// an argument (`<Iter<'_, u32> as Iterator>::fold::<u32, &mut {closure@<u32
/// as Sum<&u32>>::sum<..>::{closure#0}}>`, what `flatten().sum()` leaves):
/// the closure captures nothing and its body is `|a, b| a + b`, so the shim
/// calls the function with a closure of its own that does the same, and
/// rustc infers the generic arguments the source cannot write.
fn local_accumulator_stand_in(path: &Path, params: &[Ty], ret: &Ty) -> Option<StandIn> {
    // An inherent method is written through its self type, which may
    // reach a trait's method of that name instead; a dependency call's
    // shim checks that it did not (`DepCall::must_reach`), which this one,
    // calling with another closure, cannot.
    if path.segments.iter().any(|s| s.name.starts_with("<impl ")) {
        return None;
    }
    let closure_of = |t: &Ty| -> Option<(bool, String)> {
        match t {
            Ty::Ref(Mutability::Mut, inner) => match &**inner {
                Ty::Opaque(c) => Some((true, c.clone())),
                _ => None,
            },
            Ty::Opaque(c) => Some((false, c.clone())),
            _ => None,
        }
    };
    // Exactly one argument is a closure, and it is an accumulator.
    let mut closures = params
        .iter()
        .enumerate()
        .filter(|(_, t)| super::all_type_args(path).any(|a| a == *t) && closure_of(t).is_some());
    let (at, closure_param) = closures.next()?;
    if closures.next().is_some() {
        return None;
    }
    let (by_mut_ref, closure) = closure_of(closure_param)?;
    let (number, op, by_ref) = super::std_closures::accumulator_closure(&closure)?;
    // Every other type must be nameable, and the callee too once its
    // generic arguments, which name the closure, are left to inference.
    let mut callee_path = path.clone();
    callee_path.segments.last_mut()?.args.clear();
    let callee = super::shims::callee_source(&callee_path)?;
    let env = if by_mut_ref {
        Ty::Ref(Mutability::Mut, Box::new(Ty::unit()))
    } else {
        Ty::unit()
    };
    let mut shim_params = params.to_vec();
    shim_params[at] = env;
    if !shim_params.iter().all(super::nameable) || !super::nameable(ret) {
        return None;
    }
    let (item, read) = if by_ref {
        (format!("&{number}"), "*b")
    } else {
        (number.clone(), "b")
    };
    let method = match op {
        crate::model::BinOp::Add => "Add::add",
        crate::model::BinOp::Mul => "Mul::mul",
        _ => return None,
    };
    let local = format!("|a: {number}, b: {item}| ::core::ops::{method}(a, {read})");
    let args: Vec<String> = (0..params.len())
        .map(|k| {
            if k != at {
                format!("a{k}")
            } else if by_mut_ref {
                format!("&mut {local}")
            } else {
                local.clone()
            }
        })
        .collect();
    let body = format!("{{ let _ = a{at}; {callee}({}) }}", args.join(", "));
    Some(("accumulate_with", shim_params, body))
}

/// The definition inside `<{closure@DEF} as ..` and the text after its
/// closing brace.
fn closure_def(printed: &str) -> Option<(&str, &str)> {
    if !printed.starts_with("<{closure@") {
        return None;
    }
    let close = closing_bracket(printed, 1)?;
    Some((&printed["<{closure@".len()..close], &printed[close + 1..]))
}

/// Whether `ty` is `core`'s `NonZero<usize>`.
fn nonzero_usize(ty: &Ty) -> bool {
    matches!(ty, Ty::Adt(p)
        if std_relative(&p.def_path()) == Some("num::NonZero")
            && matches!(p.generic_args(), [crate::model::GenericArg::Type(Ty::Int(IntTy::Usize))]))
}

/// A path of `std` or `core` without its crate (`iter::Sum` for
/// `std::iter::Sum<&u32>`: generic arguments dropped).
fn strip_std(path: &str) -> Option<&str> {
    let rest = std_relative(path)?;
    Some(rest.split('<').next().unwrap_or(rest))
}

/// The element types whose `SliceContains` is libcore's chunked one
/// (`impl_slice_contains!`), with two closures.
const CHUNKED_CONTAINS: [&str; 11] = [
    "u16", "u32", "u64", "i16", "i32", "i64", "f32", "f64", "usize", "isize", "char",
];

/// Whether `ty` (as printed) is a primitive integer or float, whose `Sum`
/// and `Product` are `core`'s.
pub(super) fn primitive_number(ty: &str) -> bool {
    let ints = [
        IntTy::I8,
        IntTy::I16,
        IntTy::I32,
        IntTy::I64,
        IntTy::I128,
        IntTy::Isize,
        IntTy::U8,
        IntTy::U16,
        IntTy::U32,
        IntTy::U64,
        IntTy::U128,
        IntTy::Usize,
    ];
    ints.iter().any(|i| Ty::Int(*i).to_string() == ty)
        || [FloatTy::F32, FloatTy::F64]
            .iter()
            .any(|f| Ty::Float(*f).to_string() == ty)
}

#[cfg(test)]
mod tests;
