//! The stand-ins each know, and the calls they leave alone.

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
    let own = std_iter.replace(
        "<std::iter::SkipWhile<std::slice::Iter<'_, u32>, {closure@/src/kernel.rs:1:2: 1:3}> as",
        "<kernel::Countdown as",
    );
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
    let option =
        |t: &str| crate::parse::parse_type(&format!("std::option::Option<{t}>")).expect("a type");
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
    let some =
        crate::parse::parse_value_path("std::iter::Iterator::last::some::<u32>").expect("a path");
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
    let other = crate::parse::parse_value_path("dep::Iterator::last::some::<u32>").expect("a path");
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

#[test]
fn isqrts_private_stages_stand_in_at_their_own_width_only() {
    let stages = |name: &str, ty: IntTy| {
        let t = int(ty);
        let p = crate::parse::parse_value_path(&format!("core::num::int_sqrt::{name}"))
            .expect("parses");
        stand_in(&p, std::slice::from_ref(&t), &t).and_then(|s| s.stand_in)
    };
    let u64_body = stages("u64_stages", IntTy::U64).expect("u64_stages has a stand-in");
    assert!(u64_body.contains("let mut root: u64 = 0;"), "{u64_body}");
    assert!(u64_body.contains("1 << (u64::BITS - 2)"), "{u64_body}");
    assert!(stages("u128_stages", IntTy::U128).is_some());
    assert!(stages("u16_stages", IntTy::U16).is_some());
    // Another width, a signed type, or another private function of the
    // module.
    assert!(stages("u64_stages", IntTy::U32).is_none());
    assert!(stages("u64_stages", IntTy::I64).is_none());
    assert!(stages("u8", IntTy::U8).is_none());
}
