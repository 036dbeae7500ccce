//! Which `core` closure a closure type is ([`Wrapper`]), read from the
//! function and generic arguments its printed type names: what
//! [`super::expand_calls`] expands and [`super::drops_nothing`] and
//! [`super::callable`] reason about.

use super::two_captures::{Counter, Counting, MapForm};
use crate::calls::std_relative;
use crate::model::{BinOp, top_level_items, trailing_generic_args};

/// What a wrapper does with the closure `f` it captures (a closure type
/// as printed: the kernel's, or another wrapper).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Wrapper {
    /// `move |x| (f(&x), x)`.
    Key(String),
    /// `move |acc, &elt| f(acc, elt)`.
    CopyFold(String),
    /// `move |x| f(&x) as usize`.
    ToUsize(String),
    /// `move |(), item| f(item)`.
    ForEach(String),
    /// `any`'s, `all`'s, `find`'s and `rfind`'s `check(f)`: `move |(), x|`
    /// a `ControlFlow` after `f(x)` (`find`, `rfind`: `f(&x)`).
    Check(String, Check),
    /// `find`'s (`rfind`'s) `check` of a `&mut f` (`Filter::next`'s
    /// `find(&mut self.predicate)`): as [`Check::Find`], `f` behind the
    /// reference the environment holds.
    FindByRef(String),
    /// `move |acc, elt| g(acc, f(elt))` with `g` an [`Wrapper::Accumulate`]
    /// of that operation.
    MapFold(String, BinOp),
    /// `move |acc, elt| g(acc, f(elt))` with `g` (the second) a closure
    /// that captures nothing and is called, not expanded: `min_by`'s or
    /// `max_by`'s `fold(compare)` over a function item (stood in,
    /// [`super::std_stand_ins`]).
    MapFoldThen(String, String),
    /// `|a, b| a + b` (or `*`), capturing nothing; `b` by reference for
    /// `Sum<&T>` (`Product<&T>`).
    Accumulate(BinOp, bool),
    /// `NeverShortCircuit::wrap_mut_2(f)`: `move |a, b|
    /// NeverShortCircuit(f(a, b))`.
    WrapMut2(String),
    /// `NeverShortCircuit::wrap_mut_1(f)`, the struct `Wrapped<T, A, F> {
    /// f, p: PhantomData }` whose `call_mut((a,))` is
    /// `NeverShortCircuit((self.f)(a))` (`[T; N]::map`'s), with `T` as
    /// printed. `f` is its one field that takes space, at offset 0, as a
    /// closure's one capture is.
    WrapMut1(String, String),
    /// `max_by`'s (`min_by`'s) `fold(compare)` with `compare` a closure:
    /// `move |x, y| cmp::max_by(x, y, &mut compare)`.
    ReduceBy(String, Keep),
    /// `Enumerate::fold`'s `enumerate(count, fold)`: `move |acc, item| {
    /// let acc = fold(acc, (count, item)); count += 1; acc }`. Two
    /// captures, at the offsets the layout probe measured
    /// ([`crate::model::Crate::closure_proxies`]).
    Enumerate(String, Counting),
    /// `Take::try_fold`'s `check(n, fold)` with `fold`'s result
    /// `NeverShortCircuit<Acc>` (a `fold` made a `try_fold`),
    /// `ControlFlow<B, Acc>` or `Option<Acc>`: `move |acc, x| { *n -= 1; let r = fold(acc,
    /// x); if *n == 0 { Break(r) } else { ControlFlow::from_try(r) } }`;
    /// or `Skip::try_rfold`'s, the same with `n` its own. Two captures, as
    /// for [`Wrapper::Enumerate`].
    TakeCheck(String, Counter),
    /// `TakeWhile::try_fold`'s `check(flag, p, fold)` (`p` and `fold`),
    /// `fold`'s result read as for [`Wrapper::TakeCheck`]: `move |acc, x|
    /// if p(&x) { ControlFlow::from_try(fold(acc, x)) } else { *flag =
    /// true; Break(try { acc }) }`. Three captures, `&mut P`, `fold` and
    /// `&mut bool`, each found by its type.
    TakeWhileCheck(String, String),
    /// `[T]::sort_by_key(f)`'s comparison (`f` and its key type `K` as
    /// printed): `|a, b| f(a).lt(&f(b))`, capturing `&mut f`.
    SortByKey(String, String),
    /// `position`'s `check(predicate, acc)`: `move |_, x| if predicate(x) {
    /// Break(*acc) } else { *acc += 1; Continue(()) }`. Two captures, as
    /// for [`Wrapper::Enumerate`].
    Position(String),
    /// `Filter::fold`'s `filter_fold(predicate, fold)` (the first and the
    /// second): `move |acc, item| if predicate(&item) { fold(acc, item) }
    /// else { acc }`. Two captures, as for [`Wrapper::Enumerate`].
    FilterFold(String, String),
    /// `find_map`'s `check(f)`: `move |(), x| match f(x) { Some(x) =>
    /// Break(x), None => Continue(()) }`.
    FindMap(String),
    /// `map_fold(f, g)` with `g` any other closure (the first, the second,
    /// and the type of `f`'s result as printed): `move |acc, elt| g(acc,
    /// f(elt))`. Two captures, as for [`Wrapper::Enumerate`].
    MapFoldEach(String, String, String, MapForm),
    /// `FlattenCompat::iter_fold`'s `flatten(&mut fold)` over `fold` (the
    /// first): `fold`'s own `flatten`, or a function item taking the inner
    /// iterator second (`count`'s nested `count`); with the inner iterator
    /// type `U` that `fold` names or takes (the second): `move |acc, iter|
    /// fold(acc, iter.into_iter())`.
    FlattenInto(String, String),
    /// `<FlattenCompat as Iterator>::fold`'s `flatten(g)`: `move |acc,
    /// iter| iter.fold(acc, &mut g)`, `g` its one capture.
    FlattenFold(String),
    /// `StepBy`'s `nth(iter, step_minus_one)` (its `fold`'s and
    /// `try_fold`'s, over `from_fn`), with the iterator's type as printed:
    /// `move || iter.nth(step_minus_one)`, capturing `&mut I` and a
    /// `usize` and no closure. Two captures, as for [`Wrapper::Enumerate`].
    StepNth(String),
}

impl Wrapper {
    /// The closure the wrapper passes the work on to, if any (`filter_fold`
    /// calls its predicate as well: [`Wrapper::captured`]).
    fn callee(&self) -> Option<&str> {
        match self {
            Wrapper::Key(f)
            | Wrapper::CopyFold(f)
            | Wrapper::ToUsize(f)
            | Wrapper::ForEach(f)
            | Wrapper::Check(f, _)
            | Wrapper::FindByRef(f)
            | Wrapper::MapFold(f, _)
            | Wrapper::MapFoldThen(f, _)
            | Wrapper::WrapMut2(f)
            | Wrapper::WrapMut1(f, _)
            | Wrapper::ReduceBy(f, _)
            | Wrapper::Enumerate(f, _)
            | Wrapper::TakeCheck(f, _)
            | Wrapper::TakeWhileCheck(_, f)
            | Wrapper::SortByKey(f, _)
            | Wrapper::Position(f)
            | Wrapper::FilterFold(_, f)
            | Wrapper::MapFoldEach(_, f, ..)
            | Wrapper::FlattenInto(f, _)
            | Wrapper::FlattenFold(f)
            | Wrapper::FindMap(f) => Some(f),
            Wrapper::Accumulate(..) | Wrapper::StepNth(_) => None,
        }
    }

    /// Every closure the wrapper captures and calls: its callee, and
    /// `filter_fold`'s predicate.
    pub(super) fn captured(&self) -> Vec<&str> {
        match self {
            Wrapper::FilterFold(p, f)
            | Wrapper::MapFoldEach(p, f, ..)
            | Wrapper::TakeWhileCheck(p, f) => vec![p, f],
            _ => self.callee().into_iter().collect(),
        }
    }
}

/// Which of two items a [`Wrapper::ReduceBy`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keep {
    /// `cmp::max_by`'s: the first if it compares `Greater`, else the
    /// second.
    Max,
    /// `cmp::min_by`'s: the second if the first compares `Greater`, else
    /// the first.
    Min,
}

/// Which `check` closure a [`Wrapper::Check`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Check {
    /// `if f(x) { Break(()) } else { Continue(()) }`.
    Any,
    /// `if f(x) { Continue(()) } else { Break(()) }`.
    All,
    /// `if f(&x) { Break(x) } else { Continue(()) }`.
    Find,
}

/// Which of the closures above a closure type (`{closure@DEF}`) is, with
/// the closure it wraps (its function's last generic argument; for
/// `map_fold`, the second to last).
pub(super) fn wrapper_of(closure_ty: &str) -> Option<Wrapper> {
    if let Some(wrapped) = wrapped(closure_ty) {
        return Some(wrapped);
    }
    let (name, args) = closure_function(closure_ty)?;
    if let Some((_, op, by_ref)) = accumulator(name) {
        return Some(Wrapper::Accumulate(op, by_ref));
    }
    let name = std_relative(name).unwrap_or(name);
    let args = top_level_items(args);
    // A closure by value: a shared or mutable reference to one (`&mut F`)
    // is another type, which only `find`'s check is expanded for (what
    // `Filter::next` passes: `self.iter.find(&mut self.predicate)`).
    let closure = |a: &&str| a.starts_with("{closure@") && a.ends_with('}');
    // Or a function passed where a closure is expected (`map(halve)`),
    // called as one: the wrapper's call of it becomes a call of the
    // function. Not as `min_by`'s or `max_by`'s `compare`, which is stood
    // in ([`stood_in_reduction`]) or refused by name.
    let reduction = matches!(
        name,
        "iter::Iterator::max_by::fold" | "iter::Iterator::min_by::fold"
    );
    let callable = |a: &&str| closure(a) || (!reduction && fn_item(a));
    if let Some(f) = args
        .last()
        .and_then(|a| a.strip_prefix("&mut "))
        .filter(closure)
        && matches!(
            name,
            "iter::Iterator::find::check" | "iter::DoubleEndedIterator::rfind::check"
        )
    {
        return Some(Wrapper::FindByRef(f.to_string()));
    }
    if let Some(iter) = step_nth_iter(closure_ty) {
        return Some(Wrapper::StepNth(iter.to_string()));
    }
    let last = args.last().filter(|a| callable(a))?.to_string();
    if name.starts_with("slice::<impl [") && name.ends_with("]>::sort_by_key") {
        return match args.as_slice() {
            [key, _] => Some(Wrapper::SortByKey(last, key.to_string())),
            _ => None,
        };
    }
    match name {
        "iter::Iterator::min_by_key::key" | "iter::Iterator::max_by_key::key" => {
            Some(Wrapper::Key(last))
        }
        "iter::adapters::copied::copy_fold" => Some(Wrapper::CopyFold(last)),
        "iter::Iterator::for_each::call" => Some(Wrapper::ForEach(last)),
        "iter::Iterator::any::check" => Some(Wrapper::Check(last, Check::Any)),
        "iter::Iterator::position::check" => Some(Wrapper::Position(last)),
        "iter::Iterator::find_map::check" => Some(Wrapper::FindMap(last)),
        "iter::Iterator::all::check" => Some(Wrapper::Check(last, Check::All)),
        "iter::Iterator::find::check" | "iter::DoubleEndedIterator::rfind::check" => {
            Some(Wrapper::Check(last, Check::Find))
        }
        "<std::iter::Filter<I, P> as std::iter::Iterator>::count::to_usize" => {
            Some(Wrapper::ToUsize(last))
        }
        "<std::iter::Enumerate<I> as std::iter::Iterator>::fold::enumerate" => {
            Some(Wrapper::Enumerate(last, Counting::Up))
        }
        "<std::iter::Enumerate<I> as std::iter::DoubleEndedIterator>::try_rfold::enumerate" => {
            Some(Wrapper::Enumerate(last, Counting::Down))
        }
        "<std::iter::Take<I> as std::iter::Iterator>::try_fold::check" => {
            Some(Wrapper::TakeCheck(last, Counter::Borrowed))
        }
        "<std::iter::TakeWhile<I, P> as std::iter::Iterator>::try_fold::check" => {
            match args.as_slice() {
                [.., p, _] if callable(p) => Some(Wrapper::TakeWhileCheck(p.to_string(), last)),
                _ => None,
            }
        }
        "<std::iter::Skip<I> as std::iter::DoubleEndedIterator>::try_rfold::check" => {
            Some(Wrapper::TakeCheck(last, Counter::Owned))
        }
        "iter::Iterator::max_by::fold" => Some(Wrapper::ReduceBy(last, Keep::Max)),
        "iter::Iterator::min_by::fold" => Some(Wrapper::ReduceBy(last, Keep::Min)),
        n if n.starts_with("ops::try_trait::NeverShortCircuit<")
            && n.ends_with(">::wrap_mut_2") =>
        {
            Some(Wrapper::WrapMut2(last))
        }
        "iter::adapters::flatten::FlattenCompat<I, U>::iter_fold::flatten" => {
            // Over `fold`'s own `flatten`, which names the inner iterator,
            // or a function taking it second (`count`'s nested `count`).
            let into = match closure_function(&last) {
                Some((inner, inner_args)) => match top_level_items(inner_args).as_slice() {
                    [u, _, _] if inner == FLATTEN_FOLD => u.to_string(),
                    _ => return None,
                },
                None => {
                    let (inputs, _) = crate::parse::parse_type(&last).ok()?.fn_item_signature()?;
                    match inputs.as_slice() {
                        [_, u] => u.to_string(),
                        _ => return None,
                    }
                }
            };
            Some(Wrapper::FlattenInto(last, into))
        }
        FLATTEN_FOLD => Some(Wrapper::FlattenFold(last)),
        "iter::adapters::filter::filter_fold" => match args.as_slice() {
            [_, _, p, _] if callable(p) => Some(Wrapper::FilterFold(p.to_string(), last)),
            _ => None,
        },
        // `map_try_fold<'a, T, B, Acc, R, F, G>`, which holds `&mut f`.
        "iter::adapters::map::map_try_fold" => match args.as_slice() {
            [_, _, b, _, _, f, g] if callable(f) && closure(g) => Some(Wrapper::MapFoldEach(
                f.to_string(),
                g.to_string(),
                b.to_string(),
                MapForm::TryFold,
            )),
            _ => None,
        },
        "iter::adapters::map::map_fold" => {
            let [.., f, g] = args.as_slice() else {
                return None;
            };
            if !callable(f) {
                return None;
            }
            match wrapper_of(g) {
                Some(Wrapper::Accumulate(op, false)) => Some(Wrapper::MapFold(f.to_string(), op)),
                // `map_fold<T, B, Acc, F, G>`: `f`'s result is `g`'s
                // second argument, of the accumulator's type (`max()`).
                _ if closure(g)
                    && capture_less_reduction(g)
                    && matches!(args.as_slice(), [_, b, acc, _, _] if b == acc) =>
                {
                    Some(Wrapper::MapFoldThen(f.to_string(), g.to_string()))
                }
                // `map_fold<T, B, Acc, F, G>`.
                _ => match args.as_slice() {
                    [_, b, _, _, _] if closure(g) => Some(Wrapper::MapFoldEach(
                        f.to_string(),
                        g.to_string(),
                        b.to_string(),
                        MapForm::Fold,
                    )),
                    _ => None,
                },
            }
        }
        _ => None,
    }
}

/// `<FlattenCompat as Iterator>::fold`'s nested `flatten`, as printed.
const FLATTEN_FOLD: &str =
    "<std::iter::adapters::flatten::FlattenCompat<I, U> as std::iter::Iterator>::fold::flatten";

/// Whether `ty` (as printed) is a function item's type.
pub(super) fn fn_item(ty: &str) -> bool {
    crate::parse::parse_type(ty).is_ok_and(|t| t.is_fn_item())
}

/// For a closure type that is `Sum`'s or `Product`'s closure of a
/// primitive number: the number type, the operation, and whether the
/// second operand is a reference (`Sum<&T>`).
pub(in crate::mono) fn accumulator_closure(closure_ty: &str) -> Option<(String, BinOp, bool)> {
    let (name, _) = closure_function(closure_ty)?;
    let (number, op, by_ref) = accumulator(name)?;
    Some((number.to_string(), op, by_ref))
}

/// Whether `closure_ty` is `min_by`'s or `max_by`'s `fold(compare)`
/// closure with `compare` a function item (`for<'a, 'b> fn(&'a u32, &'b
/// u32) -> Ordering {<u32 as Ord>::cmp}`, what `min()`, `max()` and the
/// key methods pass): its one capture is zero-sized, so it captures
/// nothing that takes space. A function pointer (no `{item}`) or a closure
/// as `compare` may.
pub(super) fn capture_less_reduction(closure_ty: &str) -> bool {
    let Some((name, args)) = closure_function(closure_ty) else {
        return false;
    };
    let reduction = matches!(
        std_relative(name),
        Some("iter::Iterator::min_by::fold" | "iter::Iterator::max_by::fold")
    );
    let items = top_level_items(args);
    reduction && matches!(items.as_slice(), [_, compare] if fn_item(compare))
}

/// Whether `closure_ty` is a [`capture_less_reduction`] that a shim stands
/// in for ([`super::std_stand_ins`]): its `compare` is `<T as Ord>::cmp`
/// (`min()`, `max()`) or the key methods' nested `compare`.
pub(super) fn stood_in_reduction(closure_ty: &str) -> bool {
    let Some((_, args)) = closure_function(closure_ty) else {
        return false;
    };
    let compare_item = top_level_items(args)
        .last()
        .and_then(|c| c.rsplit_once(" {"))
        .and_then(|(_, item)| item.strip_suffix('}'));
    let known = compare_item.is_some_and(|item| {
        item.ends_with(" as std::cmp::Ord>::cmp")
            || item.ends_with(" as core::cmp::Ord>::cmp")
            || std_relative(item).is_some_and(|i| {
                i.starts_with("iter::Iterator::min_by_key::compare::<")
                    || i.starts_with("iter::Iterator::max_by_key::compare::<")
            })
    });
    capture_less_reduction(closure_ty) && known
}

/// The iterator type (as printed) of `StepBy`'s `nth(iter, step)`
/// closure, `spec_fold`'s or `spec_try_fold`'s, when `closure_ty` is one.
pub(in crate::mono) fn step_nth_iter(closure_ty: &str) -> Option<&str> {
    let (function, args) = closure_function(closure_ty)?;
    let (_, trait_path, method) = crate::model::split_qualified(function)?;
    let step_by = std_relative(trait_path)
        .is_some_and(|t| t.starts_with("iter::adapters::step_by::StepByImpl<"))
        && matches!(method, "spec_fold::nth" | "spec_try_fold::nth");
    match top_level_items(args).as_slice() {
        [iter] if step_by => Some(iter),
        _ => None,
    }
}

/// `core`'s `Wrapped<T, A, F>` over a closure `F` (a type as printed):
/// [`Wrapper::WrapMut1`].
fn wrapped(ty: &str) -> Option<Wrapper> {
    let (name, args) = trailing_generic_args(ty)?;
    if std_relative(name) != Some("ops::try_trait::Wrapped") {
        return None;
    }
    match top_level_items(args).as_slice() {
        [t, _, f] if f.starts_with("{closure@") && f.ends_with('}') => {
            Some(Wrapper::WrapMut1(f.to_string(), t.to_string()))
        }
        _ => None,
    }
}

/// Whether `closure_ty` is `advance_by`'s counting closure (`|n, _|
/// NonZero::new(n.get() - 1)`, over an iterator without a faster
/// `advance_by`), which captures nothing and which a shim stands in for
/// ([`super::super::std_stand_ins`]).
pub(super) fn stood_in_advance_by(closure_ty: &str) -> bool {
    closure_ty
        .strip_prefix("{closure@")
        .and_then(|def| def.strip_suffix("::{closure#0}}"))
        .and_then(crate::model::split_qualified)
        .is_some_and(|(_, trait_path, method)| {
            std_relative(trait_path) == Some("iter::Iterator::advance_by::SpecAdvanceBy")
                && method == "spec_advance_by"
        })
}

/// Whether `closure_ty` is `Iterator::count`'s default closure (`|count,
/// _| count + 1`) for a `core` iterator, which captures nothing and which
/// a shim stands in for ([`super::super::std_stand_ins`]).
pub(super) fn stood_in_count(closure_ty: &str) -> bool {
    closure_ty
        .strip_prefix("{closure@")
        .and_then(|def| def.strip_suffix("::{closure#0}}"))
        .and_then(crate::model::split_qualified)
        .is_some_and(|(self_ty, trait_path, method)| {
            std_relative(trait_path) == Some("iter::Iterator")
                && method == "count"
                && std_relative(self_ty).is_some()
        })
}

/// The function a closure `core` defines is the `{closure#0}` of, as
/// printed in its type (`{closure@FUNCTION<ARGS>::{closure#0}}`): its name
/// and its generic arguments' text.
pub(in crate::mono) fn closure_function(closure_ty: &str) -> Option<(&str, &str)> {
    let def = closure_ty.strip_prefix("{closure@")?.strip_suffix('}')?;
    trailing_generic_args(def.strip_suffix("::{closure#0}")?)
}

/// The operation of `Sum`'s or `Product`'s closure of a primitive number
/// (`<u32 as std::iter::Sum>::sum`, `<u32 as std::iter::Sum<&u32>>::sum`:
/// the function the closure is defined in), and whether it takes its
/// second operand by reference. `core`'s impls for the primitive numbers
/// are all `iter.fold(zero, |a, b| a + b)` (`*`, one); other types' may be
/// anyone's.
fn accumulator(function: &str) -> Option<(&str, BinOp, bool)> {
    let (self_ty, trait_path, method) = crate::model::split_qualified(function)?;
    if !crate::mono::std_stand_ins::primitive_number(self_ty) {
        return None;
    }
    let (op, expected) = match method {
        "sum" => (BinOp::Add, "iter::Sum"),
        "product" => (BinOp::Mul, "iter::Product"),
        _ => return None,
    };
    let trait_path = std_relative(trait_path)?;
    let by_ref = if trait_path == expected {
        false
    } else if trait_path == format!("{expected}<&{self_ty}>") {
        true
    } else {
        return None;
    };
    Some((self_ty, op, by_ref))
}

#[cfg(test)]
mod tests {
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
        let find = format!(
            "{{closure@std::iter::Iterator::find::check<&[u32], &mut {p}>::{{closure#0}}}}"
        );
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
        assert!(
            matches!(wrapper_of(&map_fold), Some(Wrapper::MapFold(f, BinOp::Add)) if f == halve)
        );
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
}
