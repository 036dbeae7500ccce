//! Shims generic over the closures a `core` call takes or its iterator
//! holds, for the calls rustc's inliner left with one: a fold with a
//! closure argument (`<Zip<..> as Iterator>::fold::<usize,
//! {closure@map_fold<..>}>`, in `zip(..).filter(..).count()`), or a method
//! of an iterator whose adapters (`Map`, `Filter`, `Inspect`, ...:
//! [`adapter_gives`]) hold kernel closures (`<Map<Iter<'_, u32>,
//! {closure@..}> as Iterator>::next`).
//!
//! A closure's type has no name in source, so the dependency-call shim of
//! [`super::dep_calls`] cannot be written for such a call. But the shim can
//! take the closure as a type parameter, bounded as the callee needs:
//!
//! ```text
//! #[inline(never)]
//! pub fn call<'a, F: FnMut(usize, <Zip<Iter<'a, u32>, ..> as Iterator>::Item) -> usize>(
//!     a0: Zip<Iter<'a, u32>, ..>, a1: usize, a2: F) -> usize {
//!     unsafe { <Zip<..> as Iterator>::fold(a0, a1, a2) }
//! }
//! ```
//!
//! rustc prints its MIR generic over `F` only, with the callee inlined (its
//! inliner works on generic bodies where the callee resolves), and
//! [`super::closures`] instantiates that MIR at the call's closures, as it
//! does the kernel's own generic functions: the closures' calls become
//! calls of their bodies, or of the `core` wrappers [`super::std_closures`]
//! expands. Served: `Iterator::fold` and `DoubleEndedIterator::rfold`, and
//! `try_fold` and `try_rfold` at a `Try` type whose calls
//! [`super::std_try`] writes (also a parameter, bounded by the unstable
//! `Try`); a few stable methods without generic arguments of their own
//! ([`ADAPTER_METHODS`]); and random access through a `Map`.
//!
//! A function item stands where a closure may (`map(halve)`, `fold(0,
//! u32::wrapping_add)`): a parameter bounded by the signature its printed
//! type gives. A `core` call whose only unnameable arguments are function
//! items (`map_or(Ok(()), Err)`) gets a shim generic over them too
//! ([`fn_item_shim`]).

use super::shims::{DepCall, ShimTypeParam, callee_source, with_lifetime, with_params};
use crate::calls::std_relative;
use crate::model::{Crate, GenericArg, Path, Ty};

/// Which of `core`'s folds a call is, by its method and trait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FoldKind {
    /// `Iterator::fold` or `DoubleEndedIterator::rfold`: `(self, init,
    /// f) -> B`, `f` giving the next `B`.
    Fold,
    /// `Iterator::try_fold` or `DoubleEndedIterator::try_rfold`: `(&mut
    /// self, init, f) -> R`, `f` giving an `R: Try<Output = B>`.
    TryFold,
}

impl FoldKind {
    /// The fold `method` of `trait_path` is, if it is one.
    fn of(method: &str, trait_path: &str) -> Option<FoldKind> {
        match (method, IteratorTrait::of(trait_path)?) {
            ("fold", IteratorTrait::Forward) => Some(FoldKind::Fold),
            ("rfold", IteratorTrait::DoubleEnded) => Some(FoldKind::Fold),
            ("try_fold", IteratorTrait::Forward) => Some(FoldKind::TryFold),
            ("try_rfold", IteratorTrait::DoubleEnded) => Some(FoldKind::TryFold),
            _ => None,
        }
    }
}

/// `Iterator` or `DoubleEndedIterator`, by a trait path as printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IteratorTrait {
    Forward,
    DoubleEnded,
}

impl IteratorTrait {
    fn of(trait_path: &str) -> Option<IteratorTrait> {
        match std_relative(trait_path)? {
            "iter::Iterator" | "iter::traits::iterator::Iterator" => Some(IteratorTrait::Forward),
            "iter::DoubleEndedIterator" | "iter::traits::double_ended::DoubleEndedIterator" => {
                Some(IteratorTrait::DoubleEnded)
            }
            _ => None,
        }
    }
}

/// The methods of `Iterator` and `DoubleEndedIterator` that get a shim
/// generic over the closures their iterator holds, without generic
/// arguments of their own (`Skip::nth` calls `nth`, `Zip`'s fold `next`,
/// `StepBy`'s `nth` over a `Skip` `advance_by`), each with the unstable
/// feature the print enables for it.
const ADAPTER_METHODS: [(&str, Option<&str>); 9] = [
    ("next", None),
    ("next_back", None),
    ("nth", None),
    ("nth_back", None),
    ("size_hint", None),
    ("count", None),
    ("last", None),
    ("advance_by", Some("iter_advance_by")),
    ("advance_back_by", Some("iter_advance_by")),
];

/// The unstable library feature a shim's call of `path` needs, when it is
/// an unstable method of `Iterator` or `DoubleEndedIterator` that rustc
/// leaves as a call (`<Iter<'_, u32> as Iterator>::advance_by`, which
/// `Chain::advance_by` calls in `chain(..).skip(..)`).
pub(super) fn iterator_method_feature(path: &Path) -> Option<&'static str> {
    let [qualified, method] = path.segments.as_slice() else {
        return None;
    };
    let (_, trait_path, _) = crate::model::split_qualified(&qualified.name)?;
    IteratorTrait::of(trait_path)?;
    ADAPTER_METHODS
        .iter()
        .find_map(|(m, f)| (*m == method.name).then_some(*f))
        .flatten()
}

/// The generic shim of a call of `path` with arguments of types `params`
/// and a result of type `ret`, when it is one [`adapter_method_shim`]
/// serves, or a fold with a closure, of an
/// iterator that source can name but for the kernel closures its `Map` and
/// `Filter` adapters hold (each a parameter of its own, bounded by the
/// closure's signature as its body gives it):
///
/// - `fold` or `rfold`, `(self, init, f)` with `init` and the result of
///   one type `B`;
/// - `try_fold` or `try_rfold`, `(&mut self, init, f)` with a result of
///   type `R`, often `core`'s private `NeverShortCircuit<B>`: `R` is a
///   parameter too, bounded by the unstable `Try<Output = B>`, so the
///   shim's print enables `try_trait_v2`.
pub(super) fn closure_shim(krate: &Crate, path: &Path, params: &[Ty], ret: &Ty) -> Option<DepCall> {
    let [qualified, method] = path.segments.as_slice() else {
        return None;
    };
    let (self_text, trait_path, _) = crate::model::split_qualified(&qualified.name)?;
    let Some(kind) = FoldKind::of(&method.name, trait_path) else {
        return adapter_method_shim(krate, path, (self_text, trait_path), params, ret);
    };
    let (acc, closure, try_ty) = match (kind, method.args.as_slice()) {
        (FoldKind::Fold, [GenericArg::Type(acc), GenericArg::Type(closure)]) => {
            (acc, closure, None)
        }
        (
            FoldKind::TryFold,
            [
                GenericArg::Type(acc),
                GenericArg::Type(closure),
                GenericArg::Type(r),
            ],
        ) => (acc, closure, Some(r)),
        _ => return None,
    };
    let [receiver, init, f] = params else {
        return None;
    };
    let self_ty = match (kind, receiver) {
        (FoldKind::Fold, s) => s,
        (FoldKind::TryFold, Ty::Ref(crate::model::Mutability::Mut, s)) => &**s,
        _ => return None,
    };
    let self_parsed = crate::parse::parse_type(self_text).ok()?;
    // A closure, or `&mut` one (`Flatten`'s `iter.fold(acc, &mut fold)`):
    // the parameter stands for the closure, the argument is `&mut F`.
    let closure_arg = closure;
    let closure = match closure {
        Ty::Ref(crate::model::Mutability::Mut, c) if super::is_closure(c) => &**c,
        c => c,
    };
    if !super::is_closure_like(closure)
        || f != closure_arg
        || init != acc
        || ret != try_ty.unwrap_or(acc)
        || self_parsed != *self_ty
        || !super::nameable(acc)
    {
        return None;
    }
    // The adapters' closures first (`F0`, `F1`, ...), then the fold's,
    // then the `Try` type.
    let mut type_params = adapter_closures(krate, self_ty)?;
    let (s, b) = (
        with_lifetime(&with_params(self_ty, &type_params)),
        with_lifetime(acc),
    );
    let step = if try_ty.is_some() { "R" } else { b.as_str() };
    type_params.push(ShimTypeParam {
        name: "F".to_string(),
        bound: format!("FnMut({b}, <{s} as ::core::iter::Iterator>::Item) -> {step}"),
        stands_for: closure.clone(),
    });
    if let Some(r) = try_ty {
        // Only a `Try` type whose calls the instance can write.
        if !super::std_try::is_written_try_type(r) {
            return None;
        }
        type_params.push(ShimTypeParam {
            name: "R".to_string(),
            bound: format!("::core::ops::Try<Output = {b}>"),
            stands_for: r.clone(),
        });
    }
    // The callee with its generic arguments left to inference, its self
    // type written with the parameters.
    let mut callee_path = path.clone();
    callee_path.segments.last_mut()?.args.clear();
    callee_path.segments[0].name = format!("<{s} as {trait_path}>");
    Some(DepCall {
        callee: callee_source(&callee_path)?,
        params: params.to_vec(),
        ret: ret.clone(),
        must_reach: None,
        stand_in: None,
        type_params,
        features: try_ty.map(|_| "try_trait_v2").into_iter().collect(),
    })
}

/// The generic shim of a call of a `core` function whose generic arguments
/// hold function items (`Option::<NonZero<usize>>::map_or::<Result<(),
/// NonZero<usize>>, fn(NonZero<usize>) -> Result<(), NonZero<usize>>
/// {Result::Err}>`, which `advance_by` of a `Chain` calls), every other
/// type nameable: each function item is a parameter `Fi: Fn(..) -> ..`,
/// bounded by the signature its printed type gives (a function item
/// implements `Fn`, which satisfies whichever closure trait the callee
/// asks for), and the callee's own generic arguments are left to
/// inference. An argument that is a function item is the generic
/// argument naming the same function (a function item read as a constant
/// has no printed signature: [`Ty::fn_item_of`]).
pub(super) fn fn_item_shim(path: &Path, params: &[Ty], ret: &Ty) -> Option<DepCall> {
    let mut items: Vec<&Ty> = Vec::new();
    for t in super::all_type_args(path).filter(|t| t.is_fn_item()) {
        if !items.contains(&t) {
            items.push(t);
        }
    }
    if items.is_empty() {
        return None;
    }
    let mut type_params = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let (inputs, output) = item.fn_item_signature()?;
        if !inputs.iter().all(super::nameable) || !super::nameable(&output) {
            return None;
        }
        let inputs: Vec<String> = inputs.iter().map(Ty::to_rust_source).collect();
        type_params.push(ShimTypeParam {
            name: format!("F{i}"),
            bound: format!("Fn({}) -> {}", inputs.join(", "), output.to_rust_source()),
            stands_for: (*item).clone(),
        });
    }
    // Each argument that is a function item is the generic argument naming
    // the same function.
    let name = |t: &Ty| t.fn_item_name().map(|p| p.to_string());
    let params: Vec<Ty> = params
        .iter()
        .map(|t| match name(t) {
            Some(function) => items
                .iter()
                .find(|item| name(item).as_ref() == Some(&function))
                .map(|item| (*item).clone()),
            None if t.is_fn_item() => None,
            None => Some(t.clone()),
        })
        .collect::<Option<_>>()?;
    // And each parameter is an argument's type.
    if !items.iter().all(|item| params.contains(item)) {
        return None;
    }
    // All else nameable.
    let rest = |t: &Ty| super::nameable(&t.replace(&|t| items.contains(&t).then(Ty::unit)));
    if !params.iter().chain([ret]).all(rest) {
        return None;
    }
    let mut callee_path = path.clone();
    callee_path.segments.last_mut()?.args.clear();
    Some(DepCall {
        callee: callee_source(&callee_path)?,
        params,
        ret: ret.clone(),
        must_reach: None,
        stand_in: None,
        type_params,
        features: Vec::new(),
    })
}

/// The generic shim of a call on an iterator that holds kernel closures in
/// its adapters ([`adapter_gives`]), the other arguments and the result
/// nameable, generic over those closures as [`closure_shim`]'s is:
///
/// - one of [`ADAPTER_METHODS`], taking the iterator by value or by
///   reference (`&mut`, or `&` for `size_hint`);
/// - `core`'s random access into an iterator that has it
///   (`SpecTrustedRandomAccess::try_get_unchecked`, which `Zip`'s fold and
///   the random access of `Skip`, `Map` and `Enumerate` call, and the
///   hidden `Iterator::__iterator_get_unchecked` it stands for, which
///   `Take`'s fold calls), through that hidden method: the print enables
///   `trusted_random_access`. Only for the iterators
///   [`super::std_stand_ins::random_access`] lists, `Map`s anywhere in
///   them, whose random access runs the closure on the one item it gives,
///   as `next` would.
///
/// `path` is the call's, `<SELF as TRAIT>::method`, with its qualified
/// segment already split.
fn adapter_method_shim(
    krate: &Crate,
    path: &Path,
    (self_text, trait_path): (&str, &str),
    params: &[Ty],
    ret: &Ty,
) -> Option<DepCall> {
    let [_, method] = path.segments.as_slice() else {
        return None;
    };
    let self_ty = crate::parse::parse_type(self_text).ok()?;
    let iterator = IteratorTrait::of(trait_path);
    let random_access = match (std_relative(trait_path)?, method.name.as_str()) {
        ("iter::adapters::zip::SpecTrustedRandomAccess", "try_get_unchecked") => true,
        (_, "__iterator_get_unchecked") => iterator == Some(IteratorTrait::Forward),
        _ => false,
    };
    let usize_ty = Ty::Int(crate::model::IntTy::Usize);
    let by_mut_ref =
        |t: &Ty| matches!(t, Ty::Ref(crate::model::Mutability::Mut, s) if **s == self_ty);
    let fits = match params {
        [receiver, index] if random_access => {
            by_mut_ref(receiver)
                && *index == usize_ty
                && super::std_stand_ins::random_access(&self_ty, true)
        }
        [receiver, rest @ ..] if iterator.is_some() => {
            ADAPTER_METHODS.iter().any(|(m, _)| *m == method.name)
                && (by_mut_ref(receiver)
                    || *receiver == self_ty
                    || matches!(receiver, Ty::Ref(_, s) if **s == self_ty))
                && rest.iter().all(super::nameable)
        }
        _ => false,
    };
    if !fits || !method.args.is_empty() || !super::nameable(ret) {
        return None;
    }
    let type_params = adapter_closures(krate, &self_ty)?;
    if type_params.is_empty() {
        return None;
    }
    let (callee, features) = if random_access {
        (
            "::core::iter::Iterator::__iterator_get_unchecked".to_string(),
            vec!["trusted_random_access"],
        )
    } else {
        // The callee through the self type as the signature writes it.
        let mut callee_path = path.clone();
        callee_path.segments[0].name = format!(
            "<{} as {trait_path}>",
            with_lifetime(&with_params(&self_ty, &type_params))
        );
        let feature = iterator_method_feature(path);
        (callee_source(&callee_path)?, feature.into_iter().collect())
    };
    Some(DepCall {
        callee,
        params: params.to_vec(),
        ret: ret.clone(),
        must_reach: None,
        stand_in: None,
        type_params,
        features,
    })
}

/// The kernel closures that adapters inside iterator type `ty` hold
/// ([`adapter_gives`]), each as a parameter bounded by its signature:
/// `Map<I, C>`'s `C: FnMut(<I as Iterator>::Item) -> O`, `Filter<I, P>`'s
/// `P: FnMut(&<I as Iterator>::Item) -> bool`, `O` the closure body's
/// result.
/// `None` if `ty` holds any other closure, or a type source cannot name.
fn adapter_closures(krate: &Crate, ty: &Ty) -> Option<Vec<ShimTypeParam>> {
    let mut found: Vec<ShimTypeParam> = Vec::new();
    collect_adapters(krate, ty, &mut found)?;
    // Every closure in the type is one of them, and all else is nameable.
    let rest = ty.replace(&|t| found.iter().any(|c| c.stands_for == *t).then(Ty::unit));
    super::nameable(&rest).then_some(found)
}

/// Adds to `found` the closures of the adapters in `ty`
/// ([`adapter_gives`]), innermost first; `None` for a closure elsewhere.
fn collect_adapters(krate: &Crate, ty: &Ty, found: &mut Vec<ShimTypeParam>) -> Option<()> {
    let Ty::Adt(path) = ty else {
        return Some(());
    };
    let args: Vec<&Ty> = crate::mono::all_type_args(path).collect();
    let def = path.def_path();
    if matches!(
        std_relative(&def),
        Some("iter::FromFn" | "iter::sources::from_fn::FromFn")
    ) {
        return collect_step_nth(krate, &args, found);
    }
    let adapter = std_relative(&def).and_then(adapter_gives);
    match (adapter, args.as_slice()) {
        (Some(gives), [inner, closure]) if super::is_closure_like(closure) => {
            collect_adapters(krate, inner, found)?;
            let Ty::Opaque(name) = closure else {
                return None;
            };
            // The closure's own signature, its lifetimes elided (an
            // associated type in a closure bound is not normalised there),
            // or the one a function item's type prints.
            let (inputs, output) = match closure.fn_item_signature() {
                Some(signature) => signature,
                None => closure_signature(krate, name)?,
            };
            if !inputs.iter().all(super::nameable) || !super::nameable(&output) {
                return None;
            }
            let [input] = inputs.as_slice() else {
                return None;
            };
            if gives.is_some_and(|t| output != t) {
                return None;
            }
            let bound = format!(
                "FnMut({}) -> {}",
                input.to_rust_source(),
                output.to_rust_source()
            );
            if !found.iter().any(|c| c.stands_for == **closure) {
                found.push(ShimTypeParam {
                    name: format!("F{}", found.len()),
                    bound,
                    stands_for: (*closure).clone(),
                });
            }
            Some(())
        }
        _ => {
            for a in args {
                if super::is_closure_like(a) {
                    return None;
                }
                collect_adapters(krate, a, found)?;
            }
            Some(())
        }
    }
}

/// For an adapter `core` defines as `Adapter<I, F>`, holding an iterator
/// and a closure it calls on each item, what the closure must give: `Some`
/// of the one type (`Filter`'s, `TakeWhile`'s and `SkipWhile`'s `bool`,
/// `Inspect`'s `()`), or `None` for any (`Map`'s, `FilterMap`'s,
/// `MapWhile`'s). Outer `None`: not such an adapter (`def`, relative to
/// `std`).
fn adapter_gives(def: &str) -> Option<Option<Ty>> {
    match def {
        "iter::Map" | "iter::adapters::map::Map" => Some(None),
        "iter::FilterMap" | "iter::adapters::filter_map::FilterMap" => Some(None),
        "iter::MapWhile" | "iter::adapters::map_while::MapWhile" => Some(None),
        "iter::Filter" | "iter::adapters::filter::Filter" => Some(Some(Ty::Bool)),
        "iter::TakeWhile" | "iter::adapters::take_while::TakeWhile" => Some(Some(Ty::Bool)),
        "iter::SkipWhile" | "iter::adapters::skip_while::SkipWhile" => Some(Some(Ty::Bool)),
        "iter::Inspect" | "iter::adapters::inspect::Inspect" => Some(Some(Ty::unit())),
        _ => None,
    }
}

/// Adds to `found` the closure of a `FromFn` (its type arguments `args`)
/// when it is `StepBy`'s `nth(iter, step_minus_one)` closure, over an
/// iterator source can name but for the kernel closures of its own
/// adapters (added first): a parameter bounded by `FnMut() ->
/// Option<<I as Iterator>::Item>`, which the instance's call of it is
/// expanded from ([`super::std_closures`]). `None` for another closure.
fn collect_step_nth(krate: &Crate, args: &[&Ty], found: &mut Vec<ShimTypeParam>) -> Option<()> {
    let [closure @ Ty::Opaque(name)] = args else {
        return None;
    };
    let iter = super::std_closures::step_nth_iter(name)?;
    let iter = crate::parse::parse_type(iter).ok()?;
    collect_adapters(krate, &iter, found)?;
    let item = format!(
        "<{} as ::core::iter::Iterator>::Item",
        with_lifetime(&with_params(&iter, found))
    );
    if !found.iter().any(|c| c.stands_for == **closure) {
        found.push(ShimTypeParam {
            name: format!("F{}", found.len()),
            bound: format!("FnMut() -> ::core::option::Option<{item}>"),
            stands_for: (*closure).clone(),
        });
    }
    Some(())
}

/// The input and result types of the kernel closure `name`, from its body;
/// `None` unless exactly one body takes that closure.
fn closure_signature(krate: &Crate, name: &str) -> Option<(Vec<Ty>, Ty)> {
    let mut bodies = krate
        .bodies
        .values()
        .filter(|b| b.closure_receiver().is_some_and(|(_, n)| n == name));
    let body = bodies.next()?;
    if bodies.next().is_some() {
        return None;
    }
    Some((body.closure_inputs()?, body.return_ty.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(text: &str) -> Path {
        crate::parse::parse_value_path(text).expect("a printed call")
    }

    #[test]
    fn a_fold_with_a_closure_gets_a_shim_generic_over_it() {
        let zip =
            "std::iter::Zip<std::slice::Iter<'_, u32>, std::iter::Rev<std::slice::Iter<'_, u32>>>";
        let closure = "{closure@std::iter::adapters::map::map_fold<(&u32, &u32), usize, usize, {closure@/src/kernel.rs:1:2: 1:3}, {closure@/src/kernel.rs:1:4: 1:5}>::{closure#0}}";
        let path = call(&format!(
            "<{zip} as std::iter::Iterator>::fold::<usize, {closure}>"
        ));
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let usize_ty = ty("usize");
        let params = [ty(zip), usize_ty.clone(), ty(closure)];
        let krate = Crate::default();
        let shim = closure_shim(&krate, &path, &params, &usize_ty).expect("a generic shim");
        let source = shim.source_fn();
        assert!(
            source.contains(
                "pub fn call<'a, F: FnMut(usize, <std::iter::Zip<std::slice::Iter<'a, u32>, std::iter::Rev<std::slice::Iter<'a, u32>>> as ::core::iter::Iterator>::Item) -> usize>("
            ),
            "{source}"
        );
        assert!(source.contains(", a2: F) -> usize {"), "{source}");
        // The callee through the self type as the signature writes it.
        let zip_a = zip.replace("'_", "'a");
        assert!(
            source.contains(&format!(
                "<{zip_a} as std::iter::Iterator>::fold(a0, a1, a2)"
            )),
            "{source}"
        );
        // `rfold` of `DoubleEndedIterator` too; another method, a result
        // of another type, or a self type holding a closure get none.
        let rfold = call(&format!(
            "<{zip} as std::iter::DoubleEndedIterator>::rfold::<usize, {closure}>"
        ));
        assert!(closure_shim(&krate, &rfold, &params, &usize_ty).is_some());
        // `try_fold` takes a third, `Try` type argument and `&mut self`.
        let try_fold = call(&format!(
            "<{zip} as std::iter::Iterator>::try_fold::<usize, {closure}>"
        ));
        assert!(closure_shim(&krate, &try_fold, &params, &usize_ty).is_none());
        let position = call(&format!(
            "<{zip} as std::iter::Iterator>::position::<usize, {closure}>"
        ));
        assert!(closure_shim(&krate, &position, &params, &usize_ty).is_none());
        assert!(closure_shim(&krate, &path, &params, &ty("u32")).is_none());
        let mapped = format!("std::iter::Map<std::slice::Iter<'_, u32>, {closure}>");
        let over_map = call(&format!(
            "<{mapped} as std::iter::Iterator>::fold::<usize, {closure}>"
        ));
        let params = [ty(&mapped), usize_ty.clone(), ty(closure)];
        assert!(closure_shim(&krate, &over_map, &params, &usize_ty).is_none());
    }

    #[test]
    fn a_try_fold_gets_a_shim_generic_over_its_try_type_too() {
        let take = "std::iter::Take<std::iter::Rev<std::slice::Iter<'_, u32>>>";
        let never = "std::ops::try_trait::NeverShortCircuit<u32>";
        let closure = "{closure@std::ops::try_trait::NeverShortCircuit<u32>::wrap_mut_2<u32, &u32, {closure@/src/kernel.rs:1:2: 1:3}>::{closure#0}}";
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let path = call(&format!(
            "<{take} as std::iter::Iterator>::try_fold::<u32, {closure}, {never}>"
        ));
        let by_ref = ty(&format!("&mut {take}"));
        let params = [by_ref.clone(), ty("u32"), ty(closure)];
        let krate = Crate::default();
        let shim = closure_shim(&krate, &path, &params, &ty(never)).expect("a generic shim");
        let source = shim.source_fn();
        let take_a = take.replace("'_", "'a");
        assert!(
            source.contains(&format!(
                "pub fn call<'a, F: FnMut(u32, <{take_a} as ::core::iter::Iterator>::Item) -> R, R: ::core::ops::Try<Output = u32>>(a0: &'a mut {take_a}, a1: u32, a2: F) -> R {{"
            )),
            "{source}"
        );
        // `Try` is unstable: the print enables it.
        assert_eq!(shim.features, ["try_trait_v2"]);
        // By value, or with a result of another type, it is no `try_fold`.
        let by_value = [ty(take), ty("u32"), ty(closure)];
        assert!(closure_shim(&krate, &path, &by_value, &ty(never)).is_none());
        assert!(closure_shim(&krate, &path, &params, &ty("u32")).is_none());
        // `try_rfold` of `DoubleEndedIterator` too.
        let rfold = call(&format!(
            "<{take} as std::iter::DoubleEndedIterator>::try_rfold::<u32, {closure}, {never}>"
        ));
        assert!(closure_shim(&krate, &rfold, &params, &ty(never)).is_some());
    }

    #[test]
    fn a_method_of_an_iterator_holding_a_kernel_closure_gets_a_shim_generic_over_it() {
        let closure = "{closure@/src/kernel.rs:1:2: 1:3}";
        let mir = format!(
            "fn kernel::k::{{closure#0}}(_1: &mut {closure}, _2: &u32) -> u32 {{
    let mut _0: u32;

    bb0: {{
        _0 = copy (*_2);
        return;
    }}
}}
"
        );
        let krate = crate::import_text(&mir, "", None).expect("the MIR imports");
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let map = format!("std::iter::Map<std::slice::Iter<'_, u32>, {closure}>");
        let map_a = "std::iter::Map<std::slice::Iter<'a, u32>, F0>";
        let by_ref = ty(&format!("&mut {map}"));
        let option = ty("std::option::Option<u32>");
        let next = call(&format!("<{map} as std::iter::Iterator>::next"));
        let shim = closure_shim(&krate, &next, std::slice::from_ref(&by_ref), &option)
            .expect("a shim generic over the closure");
        let source = shim.source_fn();
        assert!(
            source.contains(&format!(
                "pub fn call<'a, F0: FnMut(&u32) -> u32>(a0: &'a mut {map_a}) -> std::option::Option<u32> {{"
            )),
            "{source}"
        );
        assert!(
            source.contains(&format!("<{map_a} as std::iter::Iterator>::next(a0)")),
            "{source}"
        );
        assert!(shim.features.is_empty());
        // Random access through the `Map`: the hidden method, unstable.
        let usize_ty = ty("usize");
        let get = call(&format!(
            "<{map} as std::iter::adapters::zip::SpecTrustedRandomAccess>::try_get_unchecked"
        ));
        let params = [by_ref.clone(), usize_ty.clone()];
        let shim = closure_shim(&krate, &get, &params, &ty("u32")).expect("a random-access shim");
        assert!(
            shim.source_fn()
                .contains("::core::iter::Iterator::__iterator_get_unchecked(a0, a1)")
        );
        assert_eq!(shim.features, ["trusted_random_access"]);
        // Not through an iterator without random access, nor with another
        // index type; and an iterator holding no closure gets none here.
        let rev = format!("std::iter::Map<std::iter::Rev<std::slice::Iter<'_, u32>>, {closure}>");
        let rev_get = call(&format!(
            "<{rev} as std::iter::adapters::zip::SpecTrustedRandomAccess>::try_get_unchecked"
        ));
        let rev_params = [ty(&format!("&mut {rev}")), usize_ty.clone()];
        assert!(closure_shim(&krate, &rev_get, &rev_params, &ty("u32")).is_none());
        let by_u32 = [by_ref.clone(), ty("u32")];
        assert!(closure_shim(&krate, &get, &by_u32, &ty("u32")).is_none());
        // An unstable method names its feature.
        let advance = call(&format!("<{map} as std::iter::Iterator>::advance_by"));
        let advance_params = [by_ref, usize_ty];
        let result = ty("std::result::Result<(), std::num::NonZero<usize>>");
        let shim = closure_shim(&krate, &advance, &advance_params, &result).expect("a shim");
        assert_eq!(shim.features, ["iter_advance_by"]);
        let plain = call("<std::slice::Iter<'_, u32> as std::iter::Iterator>::next");
        let plain_params = [ty("&mut std::slice::Iter<'_, u32>")];
        assert!(
            closure_shim(
                &krate,
                &plain,
                &plain_params,
                &ty("std::option::Option<&u32>")
            )
            .is_none()
        );
    }

    #[test]
    fn a_function_in_a_map_or_filter_is_a_parameter_bounded_by_its_printed_signature() {
        let krate = crate::import_text("", "", None).expect("nothing imports");
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let halve = "fn(u32) -> u32 {kernel::halve}";
        let odd = "for<'a> fn(&'a u32) -> bool {kernel::odd}";
        let iter = format!(
            "std::iter::Filter<std::iter::Map<std::iter::Copied<std::slice::Iter<'_, u32>>, {halve}>, {odd}>"
        );
        let next = call(&format!("<{iter} as std::iter::Iterator>::next"));
        let by_ref = ty(&format!("&mut {iter}"));
        let shim = closure_shim(
            &krate,
            &next,
            std::slice::from_ref(&by_ref),
            &ty("std::option::Option<u32>"),
        )
        .expect("a shim generic over both functions");
        let source = shim.source_fn();
        assert!(
            source.contains("F0: FnMut(u32) -> u32, F1: FnMut(&u32) -> bool"),
            "{source}"
        );
        assert_eq!(shim.type_params[1].stands_for, ty(odd));
        // A `Filter`'s function must give a `bool`.
        let not_a_predicate = iter.replace("-> bool {kernel::odd}", "-> u32 {kernel::odd}");
        let next = call(&format!("<{not_a_predicate} as std::iter::Iterator>::next"));
        let by_ref = ty(&format!("&mut {not_a_predicate}"));
        assert!(
            closure_shim(
                &krate,
                &next,
                std::slice::from_ref(&by_ref),
                &ty("std::option::Option<u32>")
            )
            .is_none()
        );
    }

    #[test]
    fn inspect_and_take_while_hold_parameters_giving_what_they_need() {
        let krate = crate::import_text("", "", None).expect("nothing imports");
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let note = "for<'a> fn(&'a u32) {kernel::note}";
        let large = "for<'a> fn(&'a u32) -> bool {kernel::large}";
        let iter = format!(
            "std::iter::TakeWhile<std::iter::Inspect<std::slice::Iter<'_, u32>, {note}>, {large}>"
        );
        let shim_of = |iter: &str| {
            let last = call(&format!("<{iter} as std::iter::Iterator>::last"));
            closure_shim(&krate, &last, &[ty(iter)], &ty("std::option::Option<&u32>"))
        };
        let source = shim_of(&iter)
            .expect("a shim generic over both")
            .source_fn();
        assert!(
            source.contains("F0: FnMut(&u32) -> (), F1: FnMut(&u32) -> bool"),
            "{source}"
        );
        // `Inspect`'s function gives nothing, `TakeWhile`'s a `bool`.
        assert!(
            shim_of(&iter.replace("&'a u32) {kernel::note}", "&'a u32) -> u32 {kernel::note}"))
                .is_none()
        );
        assert!(
            shim_of(&iter.replace("-> bool {kernel::large}", "-> u8 {kernel::large}")).is_none()
        );
        // Nor does any other adapter hold a parameter.
        assert!(shim_of(&iter.replace("std::iter::TakeWhile<", "std::iter::Foo<")).is_none());
        assert_eq!(adapter_gives("iter::Peekable"), None);
    }

    #[test]
    fn a_core_call_taking_a_function_item_is_generic_over_it() {
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let nz = "std::num::NonZero<usize>";
        let result = format!("std::result::Result<(), {nz}>");
        let err = format!("fn({nz}) -> {result} {{std::result::Result::<(), {nz}>::Err}}");
        let map_or = call(&format!(
            "std::option::Option::<{nz}>::map_or::<{result}, {err}>"
        ));
        // The argument is a constant: its type names the function only.
        let item_path =
            crate::parse::parse_value_path(&format!("std::result::Result::<(), {nz}>::Err"))
                .expect("a path");
        let params = [
            ty(&format!("std::option::Option<{nz}>")),
            ty(&result),
            Ty::fn_item_of(&item_path),
        ];
        let shim = fn_item_shim(&map_or, &params, &ty(&result)).expect("a shim generic over `Err`");
        let source = shim.source_fn();
        assert!(
            source.contains(&format!(
                "F0: Fn(std::num::NonZero<usize>) -> std::result::Result<(), std::num::NonZero<usize>>>(a0: std::option::Option<{nz}>, a1: {result}, a2: F0)"
            )),
            "{source}"
        );
        assert!(source.contains("map_or(a0, a1, a2)"), "{source}");
        assert!(!source.contains("map_or::<"), "inferred: {source}");
        assert_eq!(shim.type_params[0].stands_for, ty(&err));
        // No argument naming the function, or one naming another: none.
        assert!(fn_item_shim(&map_or, &params[..2], &ty(&result)).is_none());
        let ok_path =
            crate::parse::parse_value_path(&format!("std::result::Result::<(), {nz}>::Ok"))
                .expect("a path");
        let other = [
            params[0].clone(),
            params[1].clone(),
            Ty::fn_item_of(&ok_path),
        ];
        assert!(fn_item_shim(&map_or, &other, &ty(&result)).is_none());
        let plain = call(&format!("std::option::Option::<{nz}>::is_some"));
        assert!(fn_item_shim(&plain, &params[..1], &Ty::Bool).is_none());
    }

    #[test]
    fn unstable_iterator_methods_name_their_feature() {
        let advance = call("<std::slice::Iter<'_, u32> as std::iter::Iterator>::advance_by");
        assert_eq!(iterator_method_feature(&advance), Some("iter_advance_by"));
        let next = call("<std::slice::Iter<'_, u32> as std::iter::Iterator>::next");
        assert_eq!(iterator_method_feature(&next), None);
        // Another trait's method of that name.
        let other = call("<std::slice::Iter<'_, u32> as dep::Advance>::advance_by");
        assert_eq!(iterator_method_feature(&other), None);
    }

    #[test]
    fn a_from_fn_of_step_bys_nth_is_generic_over_that_closure() {
        let nth = "{closure@<std::iter::StepBy<I> as std::iter::adapters::step_by::StepByImpl<I>>::spec_fold::nth<std::slice::Iter<'_, u32>>::{closure#0}}";
        let from_fn = format!("std::iter::FromFn<{nth}>");
        let sum = "{closure@<u32 as std::iter::Sum<&u32>>::sum<std::iter::FromFn<F>>::{closure#0}}";
        let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
        let fold = call(&format!(
            "<{from_fn} as std::iter::Iterator>::fold::<u32, {sum}>"
        ));
        let params = [ty(&from_fn), ty("u32"), ty(sum)];
        let krate = Crate::default();
        let shim = closure_shim(&krate, &fold, &params, &ty("u32")).expect("a generic shim");
        let source = shim.source_fn();
        assert!(
            source.contains("F0: FnMut() -> ::core::option::Option<<std::slice::Iter<'a, u32> as ::core::iter::Iterator>::Item>"),
            "{source}"
        );
        assert!(source.contains("a0: std::iter::FromFn<F0>"), "{source}");
        // Another closure in a `FromFn` is not known.
        let other = from_fn.replace("spec_fold::nth", "spec_fold::next");
        let other_fold = call(&format!(
            "<{other} as std::iter::Iterator>::fold::<u32, {sum}>"
        ));
        let other_params = [ty(&other), ty("u32"), ty(sum)];
        assert!(closure_shim(&krate, &other_fold, &other_params, &ty("u32")).is_none());
    }
}
