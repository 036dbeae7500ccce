//! Calls of small closures `core` defines, expanded at the call.
//!
//! `core`'s iterator methods wrap the caller's closure in one of their own
//! (`min_by_key`'s `key(f)` is `move |x| (f(&x), x)`) and fold with it,
//! or fold with a closure of their own (`Sum`'s `|a, b| a + b`). Past its
//! budget for one top-level call ([`super::shims`]), rustc's inliner
//! leaves a call of such a closure, whose body `core` never prints, and
//! whose type no source can name, so no shim can serve it. But each one
//! here does one fixed thing: the call becomes that thing, written in MIR
//! at the call. A wrapper's call of the closure it captures is written
//! through `FnMut::call_mut`, which [`super::closures`] then points at the
//! kernel closure's body as it does any call that names a closure. A
//! wrapper with one capture that takes space has it at offset 0, so a
//! reference to the environment is a reference to it; the wrappers with
//! two captures project each from the environment by its index
//! ([`two_captures`]).
//!
//! Expanded (each `call_mut` of the `{closure#0}` of):
//!
//! - `Iterator::min_by_key::key`, `max_by_key::key`: `(x,)` gives
//!   `(f(&x), x)`;
//! - `adapters::copied::copy_fold`: `(acc, &elt)` gives `f(acc, elt)`;
//! - `Filter::count`'s `to_usize`: `(x,)` gives `f(&x) as usize`;
//! - `Iterator::for_each`'s `call`: `((), item)` gives `f(item)`;
//! - `any`'s, `all`'s, `find`'s and `rfind`'s `check`: `((), x)` gives
//!   `f(x)` (`f(&x)`) and the `ControlFlow` the check makes of it
//!   (`Break(())`, `Continue(())`, `Break(x)`); `find`'s of a `&mut f`
//!   (`Filter::next`) the same through the reference it holds;
//! - `find_map`'s `check(f)`: `((), x)` gives `Break(b)` if `f(x)` is
//!   `Some(b)`, else `Continue(())` (`find_map`);
//! - `adapters::map::map_fold(f, g)` where `g` is `Sum`'s or `Product`'s
//!   closure of a primitive number (as in `.filter(..).count()` and
//!   `.map(..).sum()`), taking its items by value: `(acc, elt)` gives
//!   `acc + f(elt)` (or `*`). Its environment holds `f` and `g`, but `g`
//!   captures nothing, so `f` is at offset 0 whatever order rustc chose;
//! - `map_fold(f, g)` where `g` is `min_by`'s or `max_by`'s `fold(compare)`
//!   over a function item (`map(..).max()`, `max_by_key`), which takes no
//!   space either: `(acc, elt)` gives `g(acc, f(elt))`, two calls, `g`'s
//!   stood in ([`super::std_stand_ins`]);
//! - `NeverShortCircuit::wrap_mut_2(f)` (a `try_fold` made a `fold`):
//!   `(a, b)` gives `NeverShortCircuit(f(a, b))`;
//! - `min_by`'s or `max_by`'s `fold(compare)` with `compare` a closure:
//!   `(x, y)` gives `compare(&x, &y)` and the one of the two `cmp::min_by`
//!   (`max_by`) keeps, for items plainly without drop glue (the other one
//!   is dropped);
//! - `Enumerate::fold`'s `enumerate(count, fold)`: `(acc, item)` gives
//!   `fold(acc, (count, item))`, then `count += 1`; its two captures are
//!   read where the layout probe measured them, by the index its
//!   aggregate gives each;
//! - `Take::try_fold`'s `check(n, fold)` (and `Skip::try_rfold`'s, whose
//!   `n` is its own `usize`) over a `fold` giving
//!   `NeverShortCircuit<Acc>`, `ControlFlow<B, Acc>` or `Option<Acc>`:
//!   `(acc, x)` gives `*n -= 1`, `r = fold(acc, x)`, then `Break(r)` if
//!   `*n` is 0 and `ControlFlow::from_try(r)` otherwise (`Continue(r.0)`;
//!   for the others, `Break(r)` if it broke); its captures as
//!   `enumerate`'s (`Enumerate::try_rfold`'s own `enumerate`, which counts
//!   down, is known only for its drop: rustc was not seen to leave its
//!   call);
//! - `TakeWhile::try_fold`'s `check(flag, p, fold)` over the same `fold`s:
//!   `(acc, x)` gives `fold(acc, x)` read as above if `p(&x)`, else
//!   `*flag = true` and `Break(try { acc })` (for items plainly without
//!   drop glue); its three captures found by type ([`take_while`]);
//! - `[T]::sort_by_key(f)`'s comparison: `(a, b)` gives `f(a).lt(&f(b))`
//!   through the `&mut f` it captures ([`sort_key`]);
//! - `position`'s `check(predicate, acc)`: `((), x)` gives `Break(*acc)`
//!   if `predicate(x)`, else `*acc += 1` and `Continue(())`; its captures
//!   as `enumerate`'s;
//! - `Filter::fold`'s `filter_fold(predicate, fold)`: `(acc, item)` gives
//!   `fold(acc, item)` if `predicate(&item)`, else `acc` (for items plainly
//!   without drop glue, which it drops); its captures as `enumerate`'s;
//! - `map_fold(f, g)` with `g` any other closure (`map(..).filter(..)
//!   .count()`, whose `g` is `map_fold(to_usize(p), sum)`), and
//!   `Map::try_fold`'s `map_try_fold(&mut f, g)`: `(acc, elt)` gives
//!   `g(acc, f(elt))`, two calls; its captures as `enumerate`'s;
//! - `FlattenCompat::iter_fold`'s `flatten(&mut fold)` over `fold`'s own
//!   `flatten(g)` (`flat_map(..)` folded): `(acc, iter)` gives
//!   `fold(acc, iter.into_iter())`, and that `flatten`'s `(acc, iter)`
//!   gives `iter.fold(acc, &mut g)`, a call with its own shim
//!   ([`flatten`]); or over a function item taking the inner iterator
//!   second (`flat_map(..).count()`'s nested `count`): `fold(acc,
//!   iter.into_iter())`, the call of the function;
//! - `Sum`'s and `Product`'s closure of a primitive number, `|a, b| a +
//!   b` (by value or `Sum<&T>`'s by reference), wherever rustc or an
//!   expansion above left a call of it: `a + b` (`*`), which wraps, as
//!   `core`'s inherited overflow check does in a build without overflow
//!   checks (the kernel's, its dependencies' and the host twin's, which
//!   the lowering assumes for every optional overflow check too:
//!   `calls::is_optional_overflow_check`).
//!
//! A wrapper's closure may be a function item instead (`map(halve)`),
//! whose call is then the function's.
//!
//! `f` may itself be a wrapper (`map_fold(to_usize(p), ..)`): expansion
//! repeats, up to [`EXPANSION_PASSES`] times. Only `call_mut` with its
//! arguments in a place is expanded. Any other wrapper stays a call,
//! refused by name: one this module was never seen to need.

mod find_map;
mod flatten;
mod rewrite;
mod sort_key;
mod take_while;
mod two_captures;
mod wrappers;

use crate::model::{BasicBlock, Body, Callee, TerminatorKind, closure_trait_call};
use rewrite::expand;
use wrappers::{
    Check, Keep, Wrapper, capture_less_reduction, fn_item, stood_in_advance_by, stood_in_count,
    stood_in_reduction, wrapper_of,
};
pub(super) use wrappers::{accumulator_closure, closure_function, step_nth_iter};

/// What expansion asks of the kernel's closures (by type, as printed).
pub(super) struct KernelClosures<'a> {
    /// Whether a call of the closure will have a body (rustc printed one).
    pub has_body: &'a dyn Fn(&str) -> bool,
    /// Whether dropping the closure does nothing (no capture has drop
    /// glue).
    pub drops_nothing: &'a dyn Fn(&str) -> bool,
    /// Calls recognised but left as they are, with the reason
    /// ([`crate::model::Crate::left_calls`]).
    pub left: &'a std::cell::RefCell<std::collections::BTreeMap<String, String>>,
    /// The capture types of a closure (any, `core`'s too), in the order
    /// its aggregate lists them ([`crate::model::Crate::closure_captures`]).
    pub captures: &'a dyn Fn(&str) -> Option<Vec<crate::model::Ty>>,
}

/// Whether dropping closure `f` does nothing: a kernel closure whose
/// `drops_nothing`, `min_by`'s or `max_by`'s over a function item (which
/// captures only that), `advance_by`'s or `count`'s counting closure
/// (which capture nothing), or a wrapper whose captured closures are such
/// closures (its other captures, a count or a `&mut usize`, and `Sum`'s
/// closure, have no drop glue).
pub(super) fn drops_nothing(f: &str, kernel: &KernelClosures) -> bool {
    match wrapper_of(f) {
        Some(w) => w.captured().into_iter().all(|g| drops_nothing(g, kernel)),
        None => {
            (kernel.drops_nothing)(f)
                || capture_less_reduction(f)
                || stood_in_advance_by(f)
                || stood_in_count(f)
                || fn_item(f)
        }
    }
}

/// How many times expansion goes over a body: each pass expands the
/// wrappers the previous one made calls of. The deepest seen takes three:
/// a range fold, then its `map_fold(to_usize(p), sum)`, then `to_usize`;
/// a call through `&mut` (`Chain`'s) takes one more.
const EXPANSION_PASSES: usize = 5;

/// Expands, in `body`, every call of one of the closures above whose
/// callee will have a body: a kernel closure that `has_body`, or a wrapper
/// of one (a closure without a usable body is left to be refused).
pub(super) fn expand_calls(body: &mut Body, kernel: &KernelClosures) {
    let has_body = kernel.has_body;
    for _ in 0..EXPANSION_PASSES {
        let mut expanded = false;
        let blocks: Vec<BasicBlock> = body.blocks.keys().collect();
        for bb in blocks {
            let TerminatorKind::Call {
                func: Callee::Item(path),
                ..
            } = &body.blocks[bb].terminator.kind
            else {
                continue;
            };
            let Some((self_ty, "call_mut")) = closure_trait_call(path) else {
                expanded |= super::std_range_folds::expand_range_fold(body, bb, kernel)
                    || super::std_try::expand_branch(body, bb)
                    || super::std_try::expand_option_branch(body, bb)
                    || super::std_try::expand_try_call(body, bb);
                continue;
            };
            if let Some(closure) = self_ty
                .strip_prefix("&mut ")
                .filter(|c| c.starts_with("{closure@"))
            {
                let closure = closure.to_string();
                expanded |= rewrite::call_through_reference(body, bb, &closure);
                continue;
            }
            let Some(wrapper) = wrapper_of(self_ty) else {
                continue;
            };
            if wrapper
                .captured()
                .into_iter()
                .all(|f| callable(f, has_body))
            {
                expanded |= expand(body, bb, &wrapper, kernel);
            }
        }
        if !expanded {
            return;
        }
    }
}

/// Whether a call of closure type `f` will have a body: the kernel's
/// closure with one, a wrapper of one, or a capture-less closure of `core`
/// that a shim stands in for (`min_by`'s or `max_by`'s `fold(compare)`
/// over a function item, `advance_by`'s counting closure, `count`'s).
pub(super) fn callable(f: &str, has_body: &dyn Fn(&str) -> bool) -> bool {
    has_body(f)
        || fn_item(f)
        || stood_in_reduction(f)
        || stood_in_advance_by(f)
        || stood_in_count(f)
        || wrapper_of(f).is_some_and(|w| w.captured().into_iter().all(|g| callable(g, has_body)))
}
