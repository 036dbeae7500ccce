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
mod tests;
