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
mod tests {
    use super::*;
    use crate::model::PathSegment;

    /// The path `<SELF as TRAIT>::rest::of::it` as rustc's MIR names it.
    fn path(qualified: &str, rest: &[&str]) -> Path {
        let segment = |n: &str| PathSegment {
            name: n.to_string(),
            args: Vec::new(),
        };
        Path {
            segments: std::iter::once(segment(qualified))
                .chain(rest.iter().map(|n| segment(n)))
                .collect(),
        }
    }

    fn int(i: IntTy) -> Ty {
        Ty::Int(i)
    }

    fn env() -> Ty {
        Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque("{closure@..}".into())))
    }

    #[test]
    fn counting_a_std_iterator_adds_one() {
        let usize_ty = int(IntTy::Usize);
        let item = Ty::Ref(Mutability::Not, Box::new(int(IntTy::U32)));
        let args = Ty::Tuple(vec![usize_ty.clone(), item]);
        let std_iter = "<{closure@<std::iter::SkipWhile<std::slice::Iter<'_, u32>, {closure@/src/kernel.rs:1:2: 1:3}> as std::iter::Iterator>::count::{closure#0}} as std::ops::FnMut<(usize, &u32)>>";
        let shim = stand_in(
            &path(std_iter, &["call_mut"]),
            &[env(), args.clone()],
            &usize_ty,
        )
        .expect("the default count's closure has a stand-in");
        assert!(shim.stand_in.is_some_and(|b| b.ends_with("a1.0 + 1 }")));
        // A kernel iterator may override `count` with a closure of its own.
        let own = std_iter.replace("<std::iter::SkipWhile<std::slice::Iter<'_, u32>, {closure@/src/kernel.rs:1:2: 1:3}> as", "<kernel::Countdown as");
        assert!(stand_in(&path(&own, &["call_mut"]), &[env(), args], &usize_ty).is_none());
    }

    #[test]
    fn step_by_sizes_and_advance_by_count_as_core_does() {
        let usize_ty = int(IntTy::Usize);
        let size = |f: &str| {
            let closure = format!(
                "<{{closure@<std::iter::StepBy<I> as std::iter::adapters::step_by::StepByImpl<I>>::spec_size_hint::{f}::{{closure#0}}}} as std::ops::FnMut<(usize,)>>"
            );
            stand_in(
                &path(&closure, &["call_mut"]),
                &[env(), Ty::Tuple(vec![usize_ty.clone()])],
                &usize_ty,
            )
        };
        let first = size("first_size").expect("first_size has a stand-in");
        assert_eq!(
            first.stand_in.as_deref(),
            Some("if a1.0 == 0 { 0 } else { 1 + (a1.0 - 1) / a0.get() }")
        );
        // The environment is a reference to the captured step.
        assert_eq!(
            first.params[0].to_string(),
            "&mut core::num::NonZero<usize>"
        );
        let other = size("other_size").expect("other_size has a stand-in");
        assert_eq!(other.stand_in.as_deref(), Some("a1.0 / a0.get()"));
        assert!(size("third_size").is_none());
        // `advance_by`'s counting closure over `Option<NonZero<usize>>`.
        let nonzero = crate::parse::parse_type("std::num::NonZero<usize>").expect("a type");
        let counting = "<{closure@<std::iter::Map<std::slice::Iter<'_, u32>, {closure@/src/kernel.rs:1:2: 1:3}> as std::iter::Iterator::advance_by::SpecAdvanceBy>::spec_advance_by::{closure#0}} as std::ops::FnMut<(std::num::NonZero<usize>, u32)>>";
        let args = Ty::Tuple(vec![nonzero.clone(), int(IntTy::U32)]);
        let option = |t: &str| {
            crate::parse::parse_type(&format!("std::option::Option<{t}>")).expect("a type")
        };
        let step = stand_in(
            &path(counting, &["call_mut"]),
            &[env(), args.clone()],
            &option("std::num::NonZero<usize>"),
        )
        .expect("advance_by's closure has a stand-in");
        assert!(
            step.stand_in
                .is_some_and(|b| b.contains("NonZero::new(a1.0.get() - 1)"))
        );
        // Another result type is another closure.
        assert!(
            stand_in(
                &path(counting, &["call_mut"]),
                &[env(), args],
                &option("usize")
            )
            .is_none()
        );
    }

    #[test]
    fn contains_compares_with_the_captured_needle() {
        let qualified = "<{closure@<u32 as core::slice::cmp::SliceContains>::slice_contains::{closure#0}} as std::ops::FnMut<(bool, &u32)>>";
        let r = Ty::Ref(Mutability::Not, Box::new(int(IntTy::U32)));
        let args = Ty::Tuple(vec![Ty::Bool, r.clone()]);
        let shim = stand_in(&path(qualified, &["call_mut"]), &[env(), args], &Ty::Bool)
            .expect("contains' fold closure has a stand-in");
        assert_eq!(shim.stand_in.as_deref(), Some("a1.0 | (*a1.1 == **a0)"));
        assert_eq!(shim.params[0], Ty::Ref(Mutability::Mut, Box::new(r)));
    }

    #[test]
    fn key_reductions_keep_the_first_minimum_and_the_last_maximum() {
        let min = "<{closure@std::iter::Iterator::min_by::fold<(u32, &u32), for<'a, 'b> fn(&'a (u32, &u32), &'b (u32, &u32)) -> std::cmp::Ordering {std::iter::Iterator::min_by_key::compare::<&u32, u32>}>::{closure#0}} as std::ops::FnMut<((u32, &u32), (u32, &u32))>>";
        let pair = Ty::Tuple(vec![
            int(IntTy::U32),
            Ty::Ref(Mutability::Not, Box::new(int(IntTy::U32))),
        ]);
        let args = Ty::Tuple(vec![pair.clone(), pair.clone()]);
        let shim = stand_in(&path(min, &["call_mut"]), &[env(), args.clone()], &pair)
            .expect("min_by_key's reduction has a stand-in");
        assert!(
            shim.stand_in
                .is_some_and(|b| b.contains(".is_le() { x } else { y }"))
        );
        let max = min.replace("min_by", "max_by");
        let shim = stand_in(&path(&max, &["call_mut"]), &[env(), args.clone()], &pair)
            .expect("max_by_key's reduction has a stand-in");
        assert!(
            shim.stand_in
                .is_some_and(|b| b.contains(".is_gt() { x } else { y }"))
        );
        // `max()`: the reduction over `<u32 as Ord>::cmp`, whole values.
        let max_ord = "<{closure@std::iter::Iterator::max_by::fold<u32, for<'a, 'b> fn(&'a u32, &'b u32) -> std::cmp::Ordering {<u32 as std::cmp::Ord>::cmp}>::{closure#0}} as std::ops::FnMut<(u32, u32)>>";
        let u = int(IntTy::U32);
        let shim = stand_in(
            &path(max_ord, &["call_mut"]),
            &[env(), Ty::Tuple(vec![u.clone(), u.clone()])],
            &u,
        )
        .expect("max()'s reduction has a stand-in");
        assert!(
            shim.stand_in
                .is_some_and(|b| b.contains("cmp(&x, &y).is_gt() { x } else { y }"))
        );
        // Another type's `cmp` is not this one's.
        let other = max_ord.replace("{<u32 as", "{<u64 as");
        let two = Ty::Tuple(vec![u.clone(), u.clone()]);
        assert!(stand_in(&path(&other, &["call_mut"]), &[env(), two], &u).is_none());
        // `min_by` with another comparison is the kernel's closure's.
        let user = min.replace(
            "{std::iter::Iterator::min_by_key::compare::<&u32, u32>}",
            "{kernel::by_key}",
        );
        assert!(stand_in(&path(&user, &["call_mut"]), &[env(), args], &pair).is_none());
    }

    #[test]
    fn contains_closures_are_matched_by_index_shape_and_receiver() {
        let r = Ty::Ref(Mutability::Not, Box::new(int(IntTy::U32)));
        let fold = "<{closure@<u32 as core::slice::cmp::SliceContains>::slice_contains::{closure#0}} as std::ops::FnMut<(bool, &u32)>>";
        let any = fold
            .replace("{closure#0}}", "{closure#1}}")
            .replace("(bool, &u32)", "(&u32,)");
        let by_ref = Ty::Tuple(vec![r.clone()]);
        let with_acc = Ty::Tuple(vec![Ty::Bool, r.clone()]);
        let call = |p: &str, m: &str, env: Ty, args: &Ty| {
            stand_in(&path(p, &[m]), &[env, args.clone()], &Ty::Bool)
        };
        assert!(call(&any, "call_mut", env(), &by_ref).is_some());
        // Closure 1 never takes an accumulator, and closure 0 of the
        // chunked impl always does.
        let swapped = any.replace("(&u32,)", "(bool, &u32)");
        assert!(call(&swapped, "call_mut", env(), &with_acc).is_none());
        let zero_plain = fold.replace("(bool, &u32)", "(&u32,)");
        assert!(call(&zero_plain, "call_mut", env(), &by_ref).is_none());
        // A capture passed by value is the closure's aggregate, not a `&T`.
        let once = any.replace("FnMut", "FnOnce");
        let by_value = Ty::Opaque("{closure@..}".into());
        assert!(call(&once, "call_once", by_value, &by_ref).is_none());
        // A closure nested in the method's closure is another body.
        let nested = any.replace("{closure#1}}", "{closure#1}::{closure#0}}");
        assert!(call(&nested, "call_mut", env(), &by_ref).is_none());
        let nested = any.replace(
            "contains::{closure#1}}",
            "contains<T>::{closure#1}::{closure#0}}",
        );
        assert!(call(&nested, "call_mut", env(), &by_ref).is_none());
    }

    #[test]
    fn private_count_helpers_have_stand_ins() {
        let usize_ty = int(IntTy::Usize);
        let assume = path(
            "<std::slice::Windows<'_, u32> as std::iter::adapters::filter::SpecAssumeCount>",
            &["assume_count_le_upper_bound"],
        );
        let shim = stand_in(&assume, &[usize_ty.clone(), usize_ty.clone()], &Ty::unit())
            .expect("SpecAssumeCount has a stand-in");
        assert_eq!(shim.stand_in.as_deref(), Some("{ let _ = a1 - a0; }"));
        let inner = Ty::Adt(Path::plain("std::array::IntoIter"));
        let count = path(
            "<std::iter::adapters::flatten::FlattenCompat<I, U> as std::iter::Iterator>",
            &["count", "count"],
        );
        let shim = stand_in(&count, &[usize_ty.clone(), inner], &usize_ty)
            .expect("Flatten's count has a stand-in");
        assert_eq!(
            shim.stand_in.as_deref(),
            Some("a0 + ::core::iter::Iterator::count(a1)")
        );
        // Nor a `FlattenCompat` of another crate.
        let other = path(
            "<dep::flatten::FlattenCompat<I, U> as std::iter::Iterator>",
            &["count", "count"],
        );
        let inner = Ty::Adt(Path::plain("std::array::IntoIter"));
        assert!(stand_in(&other, &[usize_ty.clone(), inner], &usize_ty).is_none());
        // Iterator::count itself is not one.
        let plain = path(
            "<std::iter::adapters::flatten::FlattenCompat<I, U> as std::iter::Iterator>",
            &["count"],
        );
        assert!(stand_in(&plain, std::slice::from_ref(&usize_ty), &usize_ty).is_none());
    }

    #[test]
    fn lasts_nested_some_is_some_of_the_item() {
        let some = crate::parse::parse_value_path("std::iter::Iterator::last::some::<u32>")
            .expect("a path");
        let option = crate::parse::parse_type("std::option::Option<u32>").expect("a type");
        let u32_ty = int(IntTy::U32);
        let shim = stand_in(&some, &[option.clone(), u32_ty.clone()], &option)
            .expect("`last`'s `some` has a stand-in");
        assert_eq!(
            shim.stand_in.as_deref(),
            Some("::core::option::Option::Some(a1)")
        );
        // The item must be the option's.
        assert!(stand_in(&some, &[option.clone(), int(IntTy::U8)], &option).is_none());
        // Nor a function of that name elsewhere.
        let other =
            crate::parse::parse_value_path("dep::Iterator::last::some::<u32>").expect("a path");
        assert!(stand_in(&other, &[option.clone(), u32_ty], &option).is_none());
    }

    #[test]
    fn random_access_into_side_effect_free_iterators_is_nth_on_a_clone() {
        let usize_ty = int(IntTy::Usize);
        let access = |self_ty: &str, trait_path: &str, method: &str| {
            let it = crate::parse::parse_type(self_ty).expect("an iterator type");
            let item = Ty::Ref(Mutability::Not, Box::new(int(IntTy::U32)));
            stand_in(
                &path(&format!("<{self_ty} as {trait_path}>"), &[method]),
                &[Ty::Ref(Mutability::Mut, Box::new(it)), usize_ty.clone()],
                &item,
            )
        };
        let spec = "std::iter::adapters::zip::SpecTrustedRandomAccess";
        let zip_impl = |a: &str, b: &str| format!("std::iter::adapters::zip::ZipImpl<{a}, {b}>");
        let iter = "std::slice::Iter<'_, u32>";
        let shim = access(iter, spec, "try_get_unchecked").expect("a slice iterator's");
        assert_eq!(
            shim.stand_in.as_deref(),
            Some(
                "::core::iter::Iterator::nth(&mut ::core::clone::Clone::clone(&*a0), a1)\
                 .unwrap_unchecked()"
            )
        );
        let skipped = format!("std::iter::Skip<std::iter::Copied<{iter}>>");
        assert!(access(&skipped, spec, "try_get_unchecked").is_some());
        let zip = format!("std::iter::Zip<{iter}, std::iter::Skip<{iter}>>");
        assert!(access(&zip, &zip_impl(iter, iter), "get_unchecked").is_some());
        // `Iterator`'s hidden method, which `Zip`'s `get_unchecked` of a
        // `Skip` calls.
        let iterator = "std::iter::Iterator";
        assert!(access(&skipped, iterator, "__iterator_get_unchecked").is_some());
        // Each trait's own method only.
        assert!(access(&zip, spec, "get_unchecked").is_none());
        assert!(access(iter, &zip_impl(iter, iter), "try_get_unchecked").is_none());
        assert!(access(iter, iterator, "try_get_unchecked").is_none());
        assert!(access(iter, spec, "__iterator_get_unchecked").is_none());
        // A mutable iterator has no clone, a `Map` may have side effects
        // (and its closure no name), a `Rev` no random access, and another
        // crate's iterator may do anything.
        for other in [
            "std::slice::IterMut<'_, u32>".to_string(),
            format!("std::iter::Map<{iter}, {{closure@/src/kernel.rs:1:2: 1:3}}>"),
            format!("std::iter::Rev<{iter}>"),
            format!("std::iter::Take<{iter}>"),
            format!("std::iter::Enumerate<dep::Walk<{iter}>>"),
            format!("std::iter::Zip<{iter}, std::iter::Rev<{iter}>>"),
        ] {
            assert!(
                access(&other, spec, "try_get_unchecked").is_none(),
                "{other}"
            );
        }
    }

    #[test]
    fn a_primitive_integers_steps_are_cores_bodies() {
        let usize_ty = int(IntTy::Usize);
        let step = |ty: IntTy, method: &str| {
            let t = int(ty);
            stand_in(
                &path(&format!("<{} as std::iter::Step>", ty.name()), &[method]),
                &[t.clone(), usize_ty.clone()],
                &t,
            )
            .and_then(|s| s.stand_in)
        };
        assert_eq!(
            step(IntTy::Usize, "forward_unchecked").as_deref(),
            Some("a0.unchecked_add(a1 as usize)")
        );
        assert_eq!(
            step(IntTy::U8, "backward_unchecked").as_deref(),
            Some("a0.unchecked_sub(a1 as u8)")
        );
        assert_eq!(
            step(IntTy::I32, "forward_unchecked").as_deref(),
            Some("a0.checked_add_unsigned(a1 as u32).unwrap_unchecked()")
        );
        // The checked steps wrap: overflow checks are off.
        assert_eq!(
            step(IntTy::U32, "forward").as_deref(),
            Some("a0.wrapping_add(a1 as u32)")
        );
        assert_eq!(
            step(IntTy::I8, "backward").as_deref(),
            Some("a0.wrapping_sub(a1 as i8)")
        );
        // Another method, or a result of another type.
        assert!(step(IntTy::U32, "forward_checked").is_none());
        let other = stand_in(
            &path("<u32 as std::iter::Step>", &["forward_unchecked"]),
            &[int(IntTy::U32), usize_ty.clone()],
            &int(IntTy::U64),
        );
        assert!(other.is_none());
    }

    #[test]
    fn a_random_access_iterators_size_is_its_exact_size_hint() {
        let usize_ty = int(IntTy::Usize);
        let size = |self_ty: &str| {
            let it = crate::parse::parse_type(self_ty).expect("an iterator type");
            stand_in(
                &path(
                    &format!("<{self_ty} as std::iter::TrustedRandomAccessNoCoerce>"),
                    &["size"],
                ),
                &[Ty::Ref(Mutability::Not, Box::new(it))],
                &usize_ty,
            )
            .and_then(|s| s.stand_in)
        };
        assert_eq!(
            size("std::slice::Iter<'_, u32>").as_deref(),
            Some("::core::iter::Iterator::size_hint(a0).0")
        );
        // Not for an iterator without random access.
        assert_eq!(size("std::ops::Range<u32>"), None);
    }

    #[test]
    fn a_fold_with_sums_closure_gets_a_closure_of_its_own() {
        let sum = "{closure@<u32 as std::iter::Sum<&u32>>::sum<std::iter::Flatten<std::slice::Iter<'_, [u32; 2]>>>::{closure#0}}";
        let closure = |c: &str| Ty::Ref(Mutability::Mut, Box::new(Ty::Opaque(c.into())));
        let fold = |c: &str| {
            let mut p = path(
                "<std::slice::Iter<'_, u32> as std::iter::Iterator>",
                &["fold"],
            );
            if let Some(last) = p.segments.last_mut() {
                last.args = vec![
                    crate::model::GenericArg::Type(int(IntTy::U32)),
                    crate::model::GenericArg::Type(closure(c)),
                ];
            }
            p
        };
        let iter = Ty::Adt(Path::plain("std::slice::Iter"));
        let params = |c: &str| vec![iter.clone(), int(IntTy::U32), closure(c)];
        let shim = stand_in(&fold(sum), &params(sum), &int(IntTy::U32))
            .expect("a fold with Sum's closure has a stand-in");
        assert_eq!(
            shim.stand_in.as_deref(),
            Some(
                "{ let _ = a2; <std::slice::Iter<'_, u32> as std::iter::Iterator>::fold(a0, a1, \
                 &mut |a: u32, b: &u32| ::core::ops::Add::add(a, *b)) }"
            )
        );
        assert_eq!(
            shim.params[2],
            Ty::Ref(Mutability::Mut, Box::new(Ty::unit()))
        );
        // The kernel's closure is not one whose body is known.
        let kernel = "{closure@/src/kernel.rs:3:9: 3:12}";
        assert!(stand_in(&fold(kernel), &params(kernel), &int(IntTy::U32)).is_none());
        // An inherent method, whose name through its self type may reach a
        // trait's method instead.
        let mut inherent = fold(sum);
        inherent.segments[0].name = "<impl dep::Bag>".into();
        assert!(stand_in(&inherent, &params(sum), &int(IntTy::U32)).is_none());
    }

    #[test]
    fn qualified_paths_split_at_their_own_brackets() {
        assert_eq!(
            split_qualified("<u32 as std::iter::Sum<&u32>>::sum<I>::{closure#0}"),
            Some(("u32", "std::iter::Sum<&u32>", "sum<I>::{closure#0}"))
        );
        assert_eq!(
            split_qualified("<fn(u8) -> u8 as Tr>::m"),
            Some(("fn(u8) -> u8", "Tr", "m"))
        );
        assert_eq!(
            closure_def("<{closure@a<{closure@b}>::{closure#0}} as X>"),
            Some(("a<{closure@b}>::{closure#0}", " as X>"))
        );
        assert_eq!(closure_def("<u32 as X>"), None);
    }
}
