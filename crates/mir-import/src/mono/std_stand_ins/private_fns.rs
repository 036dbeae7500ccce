//! Stand-ins for methods of `core`'s private traits and nested functions
//! whose bodies are known (`SpecAssumeCount`, `Flatten::count`'s `count`,
//! `Step`'s steps, checked and unchecked, random access into
//! side-effect-free iterators), and private functions whose results are
//! (`isqrt`'s stages): the part of [`super`] that matches a call by its
//! path (a trait's method, or a function) rather than by a closure's type.

use super::{StandIn, strip_std};
use crate::calls::std_relative;
use crate::model::{IntTy, Mutability, Path, Ty, split_qualified};

/// A method of a private trait or a nested function of `core` whose body
/// is known.
pub(super) fn private_fn_stand_in(path: &Path, params: &[Ty], ret: &Ty) -> Option<StandIn> {
    let names: Vec<&str> = path.segments.iter().map(|s| s.name.as_str()).collect();
    let first = *names.first()?;
    let usize_ty = Ty::Int(IntTy::Usize);
    let (self_ty, trait_path, _) = split_qualified(first).unwrap_or(("", "", ""));
    let trait_path = strip_std(trait_path).unwrap_or("");
    let stand_in = match (trait_path, names.as_slice()) {
        // `Filter::count` checks its count against the size hint's upper
        // bound: `let _ = upper - count;`, overflow-checked as the caller
        // is (the default impl). The `TrustedLen` impl only promises the
        // optimiser `count <= upper`, under which the subtraction cannot
        // overflow; the stand-in keeps the subtraction, not the promise.
        ("iter::adapters::filter::SpecAssumeCount", [_, "assume_count_le_upper_bound"])
            if params == [usize_ty.clone(), usize_ty.clone()] && *ret == Ty::unit() =>
        {
            ("assume_count", "{ let _ = a1 - a0; }".to_string())
        }
        // `Flatten::count` folds each inner iterator with the nested
        // `fn count<U: Iterator>(acc: usize, iter: U) -> usize { acc +
        // iter.count() }`.
        ("iter::Iterator", [_, "count", "count"])
            if std_relative(self_ty)
                .is_some_and(|t| t.starts_with("iter::adapters::flatten::FlattenCompat<"))
                && params.len() == 2
                && params[0] == usize_ty
                && *ret == usize_ty =>
        {
            (
                "flatten_count",
                "a0 + ::core::iter::Iterator::count(a1)".to_string(),
            )
        }
        // `Iterator::last` folds with the nested `fn some<T>(_: Option<T>,
        // x: T) -> Option<T> { Some(x) }`, a function item: rustc leaves
        // the direct call when it does not inline it.
        (
            "",
            ["core" | "std", "iter", "Iterator", "last", "some"]
            | [
                "core" | "std",
                "iter",
                "traits",
                "iterator",
                "Iterator",
                "last",
                "some",
            ],
        ) if matches!(params, [previous, item]
                if previous == ret
                    && crate::mono::call_site::option_of(ret).as_ref() == Some(item)) =>
        {
            ("last_some", "::core::option::Option::Some(a1)".to_string())
        }
        // `Step::forward_unchecked` and `backward_unchecked` of a primitive
        // integer (`Range<usize>`'s `nth` in `skip(..).take(..)`): 1.95's
        // `step_unsigned_methods!` and `step_signed_methods!` bodies, the
        // caller promising no overflow.
        (
            "iter::Step" | "iter::range::Step",
            [_, method @ ("forward_unchecked" | "backward_unchecked")],
        ) if params.len() == 2
            && params[1] == usize_ty
            && params[0] == *ret
            && matches!(ret, Ty::Int(_))
            && ret.to_string() == self_ty =>
        {
            let Ty::Int(int) = ret else { return None };
            let forward = *method == "forward_unchecked";
            let body = if int.is_signed() {
                let unsigned = int.to_unsigned().name();
                let op = if forward {
                    "checked_add_unsigned"
                } else {
                    "checked_sub_unsigned"
                };
                format!("a0.{op}(a1 as {unsigned}).unwrap_unchecked()")
            } else {
                let op = if forward {
                    "unchecked_add"
                } else {
                    "unchecked_sub"
                };
                format!("a0.{op}(a1 as {self_ty})")
            };
            ("step_unchecked", body)
        }
        // `Step::forward` and `backward` of a primitive integer (`zip(0u32..)`
        // stepping its `RangeFrom`): 1.95's `step_identical_methods!`
        // bodies, `start.wrapping_add(n as Self)` (`wrapping_sub`), after a
        // check that panics on overflow only where overflow checks are on,
        // which they never are here.
        ("iter::Step" | "iter::range::Step", [_, method @ ("forward" | "backward")])
            if params.len() == 2
                && params[1] == usize_ty
                && params[0] == *ret
                && matches!(ret, Ty::Int(_))
                && ret.to_string() == self_ty =>
        {
            let op = if *method == "forward" {
                "wrapping_add"
            } else {
                "wrapping_sub"
            };
            ("step_wrapping", format!("a0.{op}(a1 as {self_ty})"))
        }
        // Random access into an iterator that has it (`Skip`'s, `Map`'s
        // and `Enumerate`'s `__iterator_get_unchecked` reach it through
        // `zip::try_get_unchecked`): the item `a1` places after the
        // iterator's position, which `nth` on a clone of it gives too, for
        // the iterators without side effects `random_access` lists. The
        // caller promises that the item exists.
        // `Zip`'s own (`ZipImpl::get_unchecked`, which its `fold` calls)
        // is relative to its position too, and so is the hidden
        // `Iterator::__iterator_get_unchecked` those reach, when rustc
        // leaves that call (`Zip`'s `get_unchecked` of a `Skip`).
        (
            "iter::adapters::zip::SpecTrustedRandomAccess"
            | "iter::adapters::zip::ZipImpl"
            | "iter::Iterator"
            | "iter::traits::iterator::Iterator",
            [
                _,
                "try_get_unchecked" | "get_unchecked" | "__iterator_get_unchecked",
            ],
        ) if crate::parse::parse_type(self_ty).is_ok_and(|t| random_access(&t, false))
            && matches!(
                (trait_path, names[1]),
                (
                    "iter::adapters::zip::SpecTrustedRandomAccess",
                    "try_get_unchecked"
                ) | ("iter::adapters::zip::ZipImpl", "get_unchecked")
                    | (
                        "iter::Iterator" | "iter::traits::iterator::Iterator",
                        "__iterator_get_unchecked"
                    )
            )
            && matches!(params, [Ty::Ref(Mutability::Mut, it), index]
                    if it.to_string() == self_ty && *index == usize_ty) =>
        {
            (
                "get_unchecked",
                "::core::iter::Iterator::nth(&mut ::core::clone::Clone::clone(&*a0), a1)\
                 .unwrap_unchecked()"
                    .to_string(),
            )
        }
        // The length a random-access iterator gives (`Zip`'s and `Take`'s
        // specialised folds ask it): the trait's default, its
        // `size_hint`'s lower bound, which such an iterator keeps exact.
        (
            "iter::adapters::zip::TrustedRandomAccessNoCoerce"
            | "iter::TrustedRandomAccessNoCoerce",
            [_, "size"],
        ) if crate::parse::parse_type(self_ty).is_ok_and(|t| random_access(&t, true))
            && *ret == usize_ty
            && matches!(params, [Ty::Ref(Mutability::Not, it)] if it.to_string() == self_ty) =>
        {
            (
                "random_access_size",
                "::core::iter::Iterator::size_hint(a0).0".to_string(),
            )
        }
        // `isqrt`'s private `u16_stages` .. `u128_stages` (Karatsuba
        // steps that 1.95 leaves out of line for `u64` and wider): the
        // integer square root of a nonzero normalized `n`, a single
        // number, computed here digit by digit. `root + bit` stays below
        // `2^BITS` for every `n` of the type.
        (
            "",
            [
                "core" | "std",
                "num",
                "int_sqrt",
                stages @ ("u16_stages" | "u32_stages" | "u64_stages" | "u128_stages"),
            ],
        ) if params.len() == 1
            && params[0] == *ret
            && matches!(ret, Ty::Int(int) if !int.is_signed()
                && stages.strip_suffix("_stages") == Some(int.name())) =>
        {
            let t = ret.to_string();
            (
                "isqrt_stages",
                format!(
                    "{{ let mut rem = a0; let mut root: {t} = 0; \
                     let mut bit: {t} = 1 << ({t}::BITS - 2); \
                     while bit > rem {{ bit >>= 2; }} \
                     while bit != 0 {{ \
                     if rem >= root + bit {{ rem -= root + bit; root = (root >> 1) + bit; }} \
                     else {{ root >>= 1; }} \
                     bit >>= 2; }} \
                     root }}"
                ),
            )
        }
        _ => return None,
    };
    (params.iter().all(crate::mono::nameable) && crate::mono::nameable(ret))
        .then(|| (stand_in.0, params.to_vec(), stand_in.1))
}

/// Whether an iterator type has random access (`__iterator_get_unchecked`)
/// without side effects, which gives what `nth` on a clone gives: a
/// slice's `Iter`, `Windows`, `Chunks`, `ChunksExact`, `RChunks`, and
/// `Copied`, `Enumerate`, `Skip` and `Zip` of such iterators (not `Take`,
/// which `core` does not give random access: its fold uses its inner
/// iterator's).
/// With `through_map`, `Map` of one too, whose random access runs its
/// closure on the one item it gives, as `next` does (and `nth` on a clone
/// would not: it runs the closure on each item it skips).
pub(in crate::mono) fn random_access(ty: &Ty, through_map: bool) -> bool {
    let Ty::Adt(path) = ty else {
        return false;
    };
    let inner: Vec<&Ty> = path
        .segments
        .last()
        .map(|s| s.type_args().collect())
        .unwrap_or_default();
    let all_inner =
        |n: usize| inner.len() == n && inner.iter().all(|t| random_access(t, through_map));
    match std_relative(&path.def_path()) {
        Some(
            "slice::Iter"
            | "slice::iter::Iter"
            | "slice::Windows"
            | "slice::iter::Windows"
            | "slice::Chunks"
            | "slice::iter::Chunks"
            | "slice::ChunksExact"
            | "slice::iter::ChunksExact"
            | "slice::RChunks"
            | "slice::iter::RChunks",
        ) => true,
        Some(
            "iter::Copied"
            | "iter::adapters::copied::Copied"
            | "iter::Enumerate"
            | "iter::adapters::enumerate::Enumerate"
            | "iter::Skip"
            | "iter::adapters::skip::Skip",
        ) => all_inner(1),
        Some("iter::Zip" | "iter::adapters::zip::Zip") => all_inner(2),
        Some("iter::Map" | "iter::adapters::map::Map") if through_map => {
            matches!(inner.as_slice(), [i, _] if random_access(i, through_map))
        }
        _ => false,
    }
}
