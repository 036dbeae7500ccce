//! Which `core` closures each recogniser names, and the look-alikes it leaves.

use super::super::callable;
use super::super::rewrite::plainly_dropless;
use super::*;
use crate::model::{Mutability, Path, Ty};

const KEY: &str = "{closure@std::iter::Iterator::min_by_key::key<&u32, u32, {closure@/src/kernel.rs:13:39: 13:44}>::{closure#0}}";
const TO_USIZE: &str = "{closure@<std::iter::Filter<I, P> as std::iter::Iterator>::count::to_usize<&u32, {closure@/src/kernel.rs:13:42: 13:47}>::{closure#0}}";
const SUM: &str = "{closure@<usize as std::iter::Sum>::sum<std::iter::Map<std::slice::Iter<'_, u32>, F>>::{closure#0}}";

#[test]
fn wrappers_are_known_by_their_function_and_capture() {
    let kernel = "{closure@/src/kernel.rs:13:39: 13:44}".to_string();
    assert_eq!(wrapper_of(KEY), Some(Wrapper::Key(kernel.clone())));
    let fold = "{closure@std::iter::adapters::copied::copy_fold<u32, u32, {closure@/src/kernel.rs:13:66: 13:72}>::{closure#0}}";
    assert!(matches!(wrapper_of(fold), Some(Wrapper::CopyFold(_))));
    assert!(matches!(wrapper_of(TO_USIZE), Some(Wrapper::ToUsize(_))));
    let for_each = "{closure@std::iter::Iterator::for_each::call<u32, {closure@/src/kernel.rs:13:39: 13:44}>::{closure#0}}";
    assert_eq!(wrapper_of(for_each), Some(Wrapper::ForEach(kernel.clone())));
    let check = |function: &str| {
        wrapper_of(&format!(
            "{{closure@{function}<u32, {{closure@/src/kernel.rs:13:39: 13:44}}>::{{closure#0}}}}"
        ))
    };
    assert_eq!(
        check("std::iter::Iterator::any::check"),
        Some(Wrapper::Check(kernel.clone(), Check::Any))
    );
    assert_eq!(
        check("core::iter::Iterator::all::check"),
        Some(Wrapper::Check(kernel.clone(), Check::All))
    );
    assert_eq!(
        check("std::iter::DoubleEndedIterator::rfind::check"),
        Some(Wrapper::Check(kernel, Check::Find))
    );
    // `position`'s check captures a counter too; `find_map`'s breaks
    // with what `f` found; `try_for_each`'s is another closure.
    assert_eq!(
        check("std::iter::Iterator::position::check"),
        Some(Wrapper::Position(
            "{closure@/src/kernel.rs:13:39: 13:44}".to_string()
        ))
    );
    assert_eq!(
        check("std::iter::Iterator::find_map::check"),
        Some(Wrapper::FindMap(
            "{closure@/src/kernel.rs:13:39: 13:44}".to_string()
        ))
    );
    assert_eq!(check("std::iter::Iterator::try_for_each::call"), None);
    assert_eq!(
        wrapper_of(SUM),
        Some(Wrapper::Accumulate(BinOp::Add, false))
    );
    let product_by_ref = SUM.replace(
        "<usize as std::iter::Sum>::sum",
        "<f32 as core::iter::Product<&f32>>::product",
    );
    assert_eq!(
        wrapper_of(&product_by_ref),
        Some(Wrapper::Accumulate(BinOp::Mul, true))
    );
    // A capture by reference, another closure index.
    let by_ref = KEY.replace(", {closure@/src", ", &mut {closure@/src");
    assert_eq!(wrapper_of(&by_ref), None);
    let other = KEY.replace("::{closure#0}}", "::{closure#1}}");
    assert_eq!(wrapper_of(&other), None);
    // `Sum` of a type whose impl may be anyone's, or by reference.
    assert_eq!(
        wrapper_of(&SUM.replace("<usize as", "<kernel::Money as")),
        None
    );
    assert_eq!(wrapper_of(&SUM.replace("Sum>", "Sum<&u8>>")), None);
    assert_eq!(wrapper_of(&SUM.replace("Sum>::sum", "Sum>::product")), None);
}

#[test]
fn short_circuit_wrappers_and_closure_reductions_are_known() {
    let kernel = "{closure@/src/kernel.rs:13:39: 13:44}".to_string();
    let wrap = format!(
        "{{closure@std::ops::try_trait::NeverShortCircuit<u32>::wrap_mut_2<u32, &u32, {kernel}>::{{closure#0}}}}"
    );
    assert_eq!(wrapper_of(&wrap), Some(Wrapper::WrapMut2(kernel.clone())));
    assert_eq!(
        wrapper_of(&wrap.replace("NeverShortCircuit<u32>", "kernel::Wrapped<u32>")),
        None
    );
    let reduce = |function: &str, compare: &str| {
        wrapper_of(&format!(
            "{{closure@{function}<(usize, u32), {compare}>::{{closure#0}}}}"
        ))
    };
    assert_eq!(
        reduce("std::iter::Iterator::max_by::fold", &kernel),
        Some(Wrapper::ReduceBy(kernel.clone(), Keep::Max))
    );
    assert_eq!(
        reduce("core::iter::Iterator::min_by::fold", &kernel),
        Some(Wrapper::ReduceBy(kernel.clone(), Keep::Min))
    );
    // A function item as `compare` is `capture_less_reduction`'s (stood
    // in), a `&mut` closure another type.
    let by_ord =
        "for<'a, 'b> fn(&'a u32, &'b u32) -> std::cmp::Ordering {<u32 as std::cmp::Ord>::cmp}";
    assert_eq!(reduce("std::iter::Iterator::max_by::fold", by_ord), None);
    assert_eq!(
        reduce(
            "std::iter::Iterator::max_by::fold",
            &format!("&mut {kernel}")
        ),
        None
    );
}

#[test]
fn two_capture_wrappers_are_known_by_their_function() {
    let kernel = "{closure@/src/kernel.rs:13:39: 13:44}".to_string();
    let enumerate = format!(
        "{{closure@<std::iter::Enumerate<I> as std::iter::Iterator>::fold::enumerate<&u32, u32, {kernel}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&enumerate),
        Some(Wrapper::Enumerate(kernel.clone(), Counting::Up))
    );
    // `try_rfold`'s counts down from the length.
    let down = enumerate.replace(
        "Iterator>::fold::enumerate",
        "DoubleEndedIterator>::try_rfold::enumerate",
    );
    assert_eq!(
        wrapper_of(&down),
        Some(Wrapper::Enumerate(kernel.clone(), Counting::Down))
    );
    // `try_fold`'s `enumerate` captures `&mut count`; `rfold`'s, never
    // seen left, is not expanded.
    for other in [
        "Iterator>::try_fold::enumerate",
        "DoubleEndedIterator>::rfold::enumerate",
    ] {
        let name = enumerate.replace("Iterator>::fold::enumerate", other);
        assert_eq!(wrapper_of(&name), None, "{name}");
    }
    let check = format!(
        "{{closure@<std::iter::Take<I> as std::iter::Iterator>::try_fold::check<'_, &u32, u32, std::ops::try_trait::NeverShortCircuit<u32>, {kernel}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&check),
        Some(Wrapper::TakeCheck(kernel.clone(), Counter::Borrowed))
    );
    // Over a `ControlFlow` (`find` through `take`) too.
    let over_flow = check.replace(
        ", u32, std::ops::try_trait::NeverShortCircuit<u32>,",
        ", (), std::ops::ControlFlow<&u32>,",
    );
    assert_ne!(over_flow, check);
    assert_eq!(
        wrapper_of(&over_flow),
        Some(Wrapper::TakeCheck(kernel.clone(), Counter::Borrowed))
    );
    // `Skip::try_rfold`'s `check` owns its count.
    let skip_check = check.replace(
        "<std::iter::Take<I> as std::iter::Iterator>::try_fold::check<'_, ",
        "<std::iter::Skip<I> as std::iter::DoubleEndedIterator>::try_rfold::check<",
    );
    assert_eq!(
        wrapper_of(&skip_check),
        Some(Wrapper::TakeCheck(kernel.clone(), Counter::Owned))
    );
    // `Take::for_each`'s `check(action)` is another closure.
    let for_each = check.replace("try_fold::check", "spec_for_each::check");
    assert_eq!(wrapper_of(&for_each), None);
}

#[test]
fn sort_by_keys_comparison_is_known_with_its_key_type() {
    let f = "{closure@/src/kernel.rs:14:49: 14:53}";
    let compare = format!(
        "{{closure@std::slice::<impl [u32]>::sort_by_key<(u32, std::cmp::Reverse<u32>), {f}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&compare),
        Some(Wrapper::SortByKey(
            f.to_string(),
            "(u32, std::cmp::Reverse<u32>)".to_string()
        ))
    );
    // `sort_by_cached_key`'s closures are others.
    let cached = compare.replace("::sort_by_key<", "::sort_by_cached_key<");
    assert_eq!(wrapper_of(&cached), None);
}

#[test]
fn take_whiles_check_is_known_with_its_predicate_and_fold() {
    let p = "{closure@/src/kernel.rs:14:40: 14:45}";
    let count = "{closure@<std::iter::TakeWhile<std::iter::Skip<std::slice::Iter<'_, u32>>, {closure@/src/kernel.rs:14:40: 14:45}> as std::iter::Iterator>::count::{closure#0}}";
    let fold = format!(
        "{{closure@std::ops::try_trait::NeverShortCircuit<usize>::wrap_mut_2<usize, &u32, {count}>::{{closure#0}}}}"
    );
    let check = format!(
        "{{closure@<std::iter::TakeWhile<I, P> as std::iter::Iterator>::try_fold::check<'_, &u32, usize, std::ops::try_trait::NeverShortCircuit<usize>, {p}, {fold}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&check),
        Some(Wrapper::TakeWhileCheck(p.to_string(), fold.clone()))
    );
    // Callable: the predicate has a body, and `count`'s closure inside
    // `wrap_mut_2` a stand-in; another iterator's own `count` closure
    // has neither.
    assert!(stood_in_count(count));
    let has_body = |c: &str| c == p;
    assert!(super::super::callable(&check, &has_body));
    let own = count.replace(
        "<std::iter::TakeWhile<std::iter::Skip<std::slice::Iter<'_, u32>>, {closure@/src/kernel.rs:14:40: 14:45}> as",
        "<kernel::Countdown as",
    );
    assert!(!stood_in_count(&own));
    assert!(!super::super::callable(
        &check.replace(count, &own),
        &has_body
    ));
    // `SkipWhile`'s `check` is another closure.
    let skip_while = check.replace("TakeWhile<I, P>", "SkipWhile<I, P>");
    assert_eq!(wrapper_of(&skip_while), None);
}

#[test]
fn array_maps_wrapped_is_known_by_its_closure_and_result() {
    let f = "{closure@/src/kernel.rs:1:2: 1:3}";
    let wrapped = format!("std::ops::try_trait::Wrapped<u8, u32, {f}>");
    assert_eq!(
        wrapper_of(&wrapped),
        Some(Wrapper::WrapMut1(f.to_string(), "u8".to_string()))
    );
    // Over a function item, or another struct of three arguments, not.
    let over_fn = wrapped.replace(f, "fn(u32) -> u8 {kernel::f}");
    assert_eq!(wrapper_of(&over_fn), None);
    let other = wrapped.replace("try_trait::Wrapped", "try_trait::Other");
    assert_eq!(wrapper_of(&other), None);
}

#[test]
fn step_bys_nth_closure_is_known_by_its_iterator() {
    let iter = "std::iter::Skip<std::slice::Iter<'_, u32>>";
    let fold = format!(
        "{{closure@<std::iter::StepBy<I> as std::iter::adapters::step_by::StepByImpl<I>>::spec_fold::nth<{iter}>::{{closure#0}}}}"
    );
    assert_eq!(wrapper_of(&fold), Some(Wrapper::StepNth(iter.to_string())));
    let try_fold = fold.replace("spec_fold::nth", "spec_try_fold::nth");
    assert_eq!(
        wrapper_of(&try_fold),
        Some(Wrapper::StepNth(iter.to_string()))
    );
    // It captures no closure: callable, and dropping nothing to check.
    assert!(callable(&fold, &|_| false));
    // `size_hint`'s closures are stood in, not expanded.
    let size = fold.replace("spec_fold::nth", "spec_size_hint::other_size");
    assert_eq!(wrapper_of(&size), None);
}

#[test]
fn filter_fold_and_find_of_a_reference_are_known() {
    let (p, f) = (
        "{closure@/src/kernel.rs:1:2: 1:3}".to_string(),
        "{closure@/src/kernel.rs:4:5: 4:6}".to_string(),
    );
    let filter_fold = format!(
        "{{closure@std::iter::adapters::filter::filter_fold<u32, u32, {p}, {f}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&filter_fold),
        Some(Wrapper::FilterFold(p.clone(), f.clone()))
    );
    // Both closures must have bodies and drop nothing.
    let only_f = |c: &str| c == f;
    assert!(!callable(&filter_fold, &only_f));
    assert!(callable(&filter_fold, &|c| c == p || c == f));
    let find =
        format!("{{closure@std::iter::Iterator::find::check<&[u32], &mut {p}>::{{closure#0}}}}");
    assert_eq!(wrapper_of(&find), Some(Wrapper::FindByRef(p.clone())));
    // Only `find`'s (`rfind`'s) check of a reference.
    let any = find.replace("find::check", "any::check");
    assert_eq!(wrapper_of(&any), None);
}

#[test]
fn items_plainly_without_drop_glue_are_numbers_references_and_their_groups() {
    let u32_ty = Ty::Int(crate::model::IntTy::U32);
    let by_ref = Ty::Ref(Mutability::Not, Box::new(u32_ty.clone()));
    assert!(plainly_dropless(&Ty::Tuple(vec![by_ref, Ty::Bool])));
    assert!(plainly_dropless(&Ty::Array(
        Box::new(u32_ty.clone()),
        crate::model::ArrayLen::Known(4)
    )));
    // A type whose definition would have to be read, or a closure.
    let own = Ty::Adt(Path::plain("kernel::Tally"));
    assert!(!plainly_dropless(&own));
    assert!(!plainly_dropless(&Ty::Tuple(vec![u32_ty, own])));
    assert!(!plainly_dropless(&Ty::Opaque(
        "{closure@k.rs:1:2: 1:3}".into()
    )));
    // `core`'s plain wrappers of such values are, of others not.
    let ty = |t: &str| crate::parse::parse_type(t).expect("a type");
    assert!(plainly_dropless(&ty("(u32, std::cmp::Reverse<u32>)")));
    assert!(plainly_dropless(&ty(
        "std::option::Option<std::num::Wrapping<u8>>"
    )));
    assert!(!plainly_dropless(&ty("std::cmp::Reverse<kernel::Tally>")));
    assert!(!plainly_dropless(&ty("std::cell::Cell<u32>")));
}

#[test]
fn map_fold_is_expanded_into_an_accumulator_or_a_capture_less_reduction() {
    let map_fold = |g: &str| {
        format!(
            "{{closure@std::iter::adapters::map::map_fold<&u32, usize, usize, {TO_USIZE}, {g}>::{{closure#0}}}}"
        )
    };
    assert_eq!(
        wrapper_of(&map_fold(SUM)),
        Some(Wrapper::MapFold(TO_USIZE.to_string(), BinOp::Add))
    );
    // `max()` after a map: `max_by`'s fold over a function item takes
    // no space, so `f` is at offset 0 and `g` is called.
    let max_by = |compare: &str| {
        format!("{{closure@std::iter::Iterator::max_by::fold<u32, {compare}>::{{closure#0}}}}")
    };
    let by_ord = max_by(
        "for<'a, 'b> fn(&'a u32, &'b u32) -> std::cmp::Ordering {<u32 as std::cmp::Ord>::cmp}",
    );
    assert_eq!(
        wrapper_of(&map_fold(&by_ord)),
        Some(Wrapper::MapFoldThen(TO_USIZE.to_string(), by_ord.clone()))
    );
    assert!(capture_less_reduction(&by_ord.replace("max_by", "min_by")));
    // A function pointer, or a closure, as `compare` takes space.
    let pointer = max_by("for<'a, 'b> fn(&'a u32, &'b u32) -> std::cmp::Ordering");
    assert!(!capture_less_reduction(&pointer));
    // Such a `g` is read by its index, but nothing can call it.
    assert!(matches!(
        wrapper_of(&map_fold(&pointer)),
        Some(Wrapper::MapFoldEach(..))
    ));
    assert!(!callable(&map_fold(&pointer), &|c| {
        c == "{closure@/src/kernel.rs:13:42: 13:47}"
    }));
    // `f`'s items must be the accumulator's for that; otherwise `g`
    // is read from the environment by its index like any capture.
    let other_items = map_fold(&by_ord).replace("<&u32, usize, usize,", "<&u32, u8, usize,");
    assert_eq!(
        wrapper_of(&other_items),
        Some(Wrapper::MapFoldEach(
            TO_USIZE.to_string(),
            by_ord.clone(),
            "u8".to_string(),
            MapForm::Fold
        ))
    );
    let closure = max_by("{closure@/src/kernel.rs:1:2: 1:3}");
    assert!(!capture_less_reduction(&closure));
    assert!(!capture_less_reduction(
        &by_ord.replace("max_by::fold", "max_by::other")
    ));
    // Two closures that may both capture: each read by its index,
    // `f`'s result of the type `map_fold`'s second argument names.
    let g = "{closure@/src/kernel.rs:1:2: 1:3}";
    assert_eq!(
        wrapper_of(&map_fold(g)),
        Some(Wrapper::MapFoldEach(
            TO_USIZE.to_string(),
            g.to_string(),
            "usize".to_string(),
            MapForm::Fold
        ))
    );
    // `Map::try_fold`'s `map_try_fold`, which holds `&mut f`.
    let try_fold = format!(
        "{{closure@std::iter::adapters::map::map_try_fold<'_, &u32, u32, (), std::ops::ControlFlow<usize>, {TO_USIZE}, {g}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&try_fold),
        Some(Wrapper::MapFoldEach(
            TO_USIZE.to_string(),
            g.to_string(),
            "u32".to_string(),
            MapForm::TryFold
        ))
    );
    // Callable only if both are.
    let to_usize_kernel = |c: &str| c == "{closure@/src/kernel.rs:13:42: 13:47}";
    assert!(!callable(&map_fold(g), &to_usize_kernel));
    assert!(callable(&map_fold(g), &|c| to_usize_kernel(c) || c == g));
    // `max_by`'s fold over `Ord::cmp` is stood in: callable; over
    // another function item it is not.
    assert!(callable(&by_ord, &|_| false));
    let by_total = max_by(
        "for<'a, 'b> fn(&'a f32, &'b f32) -> std::cmp::Ordering {core::f32::<impl f32>::total_cmp}",
    );
    assert!(capture_less_reduction(&by_total));
    assert!(!callable(&by_total, &|_| false));
    // The kernel closure `to_usize` wraps must have a body.
    let kernel = |c: &str| c == "{closure@/src/kernel.rs:13:42: 13:47}";
    assert!(callable(&map_fold(SUM), &kernel));
    assert!(!callable(&map_fold(SUM), &|_| false));
}

#[test]
fn flat_maps_two_nested_folds_are_wrappers() {
    let g = "{closure@std::iter::adapters::map::map_fold<u32, u32, u32, {closure@/src/kernel.rs:1:2: 1:3}, {closure@<u32 as std::iter::Sum>::sum<F>::{closure#0}}>::{closure#0}}";
    let fold = format!(
        "{{closure@<std::iter::adapters::flatten::FlattenCompat<I, U> as std::iter::Iterator>::fold::flatten<std::ops::Range<u32>, u32, {g}>::{{closure#0}}}}"
    );
    assert_eq!(wrapper_of(&fold), Some(Wrapper::FlattenFold(g.to_string())));
    let into = format!(
        "{{closure@std::iter::adapters::flatten::FlattenCompat<I, U>::iter_fold::flatten<std::ops::Range<u32>, u32, {fold}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&into),
        Some(Wrapper::FlattenInto(
            fold.clone(),
            "std::ops::Range<u32>".to_string()
        ))
    );
    // `iter_fold`'s over another closure names no inner iterator here;
    // over a function (`count`'s nested `count`), its second input does.
    let other = into.replace("::fold::flatten<", "::count::flatten<");
    assert_eq!(wrapper_of(&other), None);
    let count = "fn(usize, std::ops::Range<u32>) -> usize {<std::iter::adapters::flatten::FlattenCompat<I, U> as std::iter::Iterator>::count::count::<std::ops::Range<u32>>}";
    let counting = format!(
        "{{closure@std::iter::adapters::flatten::FlattenCompat<I, U>::iter_fold::flatten<std::ops::Range<u32>, usize, {count}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&counting),
        Some(Wrapper::FlattenInto(
            count.to_string(),
            "std::ops::Range<u32>".to_string()
        ))
    );
}

#[test]
fn a_function_passed_as_a_closure_is_wrapped_and_called_like_one() {
    // `map(halve).sum()`: the function is `f`, and callable as it is.
    let halve = "fn(u32) -> u32 {kernel::halve}";
    let map_fold = format!(
        "{{closure@std::iter::adapters::map::map_fold<u32, usize, usize, {halve}, {SUM}>::{{closure#0}}}}"
    );
    assert!(matches!(wrapper_of(&map_fold), Some(Wrapper::MapFold(f, BinOp::Add)) if f == halve));
    assert!(callable(&map_fold, &|_| false));
    // `filter(odd)`: the predicate.
    let odd = "for<'a> fn(&'a u32) -> bool {kernel::odd}";
    let filter_fold = format!(
        "{{closure@std::iter::adapters::filter::filter_fold<u32, u32, {odd}, {map_fold}>::{{closure#0}}}}"
    );
    assert_eq!(
        wrapper_of(&filter_fold),
        Some(Wrapper::FilterFold(odd.to_string(), map_fold.clone()))
    );
    // Not as `max_by`'s `compare`, which is stood in or refused.
    let by_ord = "{closure@std::iter::Iterator::max_by::fold<u32, for<'a, 'b> fn(&'a u32, &'b u32) -> std::cmp::Ordering {<u32 as std::cmp::Ord>::cmp}>::{closure#0}}";
    assert_eq!(wrapper_of(by_ord), None);
    // A function pointer is not a function item.
    let pointer = map_fold.replace(halve, "fn(u32) -> u32");
    assert_eq!(wrapper_of(&pointer), None);
}
