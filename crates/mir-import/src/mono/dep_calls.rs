//! Calls into a dependency that rustc's MIR inliner left as calls.
//!
//! A dependency's functions reach the device inlined into the kernel's own
//! (`rustc::DEPENDENCY_INLINE_THRESHOLD`): rustc prints a dependency's MIR
//! under its own def paths and generically, so a call left to one has no
//! body here. But whatever its thresholds, the inliner stops expanding a
//! top-level call once more than five of the bodies it inlined under it
//! held several calls (then it inlines only small single-block ones), and
//! generic wrappers are deep: `Sha256::digest` leaves
//! `<CoreWrapper<..> as FixedOutput>::finalize_fixed` as a call.
//!
//! Such a call, once every type in it can be named in source, becomes a
//! *shim*: a function appended to the kernel's text whose body is the call
//! alone, `#[inline(never)]` so that it stays a device function of its own,
//! in which rustc's inliner starts afresh:
//!
//! ```text
//! pub mod __dep_call_finalize_fixed_5e0c17aa {
//!     #[inline(never)]
//!     pub fn call(a0: sha2::digest::core_api::CoreWrapper<..>) -> sha2::digest::Output<..> {
//!         unsafe { <sha2::digest::core_api::CoreWrapper<..> as sha2::digest::FixedOutput>::finalize_fixed(a0) }
//!     }
//! }
//! ```
//!
//! rustc resolves and type-checks the call, and its MIR of the shim is the
//! callee's body inlined; a call still left inside it gets its own shim in
//! the next round ([`crate::MONO_ROUNDS`]). The printed call is then aliased
//! to the shim's body ([`Crate::call_aliases`]). A call that source cannot
//! write (a closure's or an `impl Trait` type, a type parameter, an
//! `<impl at ..>` path) gets no shim, and the lowering refuses it by name,
//! unless it is one of the few `core` items whose one-line body a shim can
//! say itself ([`super::std_stand_ins`]).
//! The device prelude's generic items (`gpu::DisjointSlice::<u32>::len`)
//! are left the same way in a large kernel body, and get the same shims.
//! The shim's form, and the search for the shims rustc refused, live in
//! [`super::shims`]; this module picks the calls and links them.

use std::collections::{BTreeMap, BTreeSet};

use super::shims::{DepCall, callee_source};
use crate::calls;
use crate::model::{BodyId, BodyKind, Crate, Path, Rvalue, StatementKind, Ty};
use crate::prelude::PRELUDE_MODULE;

/// The calls of the reachable function bodies that go into one of the
/// dependency crates `deps`, have no body, and can be written in source,
/// and the functions of such crates whose address those bodies or the
/// constants they use take ([`reified_dep_fns`]): keyed by the path as
/// printed.
pub fn dep_calls(krate: &Crate, deps: &BTreeSet<String>) -> BTreeMap<String, DepCall> {
    let reachable = krate.reachable_function_bodies();
    let mut out = BTreeMap::new();
    for &id in reachable.values() {
        let body = &krate.bodies[id];
        for (path, args, destination) in body.item_calls() {
            let prelude = is_bodiless_prelude_call(krate, path);
            // A bodiless `core` function is an inherent method (shimmed
            // through its self type) or a free function (private, as
            // `isqrt`'s stages), which gets a stand-in or nothing: a shim
            // calling it by path would only be refused.
            let core_fn = bodiless_core_fn(krate, path);
            let core_free_fn = core_fn == Some(CoreFn::Free);
            if !prelude
                && core_fn.is_none()
                && !is_bodiless_dep_call(krate, path, deps)
                && !is_bodiless_core_trait_call(krate, path)
            {
                continue;
            }
            let printed = path.to_string();
            let params: Option<Vec<Ty>> = args.iter().map(|a| krate.operand_ty(body, a)).collect();
            let (Some(params), Some(ret)) = (params, body.place_ty(destination)) else {
                continue;
            };
            let stand_in = super::std_stand_ins::stand_in(path, &params, &ret);
            if core_free_fn {
                out.extend(stand_in.map(|shim| (printed, shim)));
                continue;
            }
            if let Some(shim) = stand_in
                .or_else(|| super::closure_shims::closure_shim(krate, path, &params, &ret))
                .or_else(|| super::closure_shims::fn_item_shim(path, &params, &ret))
            {
                out.insert(printed, shim);
                continue;
            }
            let Some(callee) = callee_source(path) else {
                continue;
            };
            if !params.iter().chain([&ret]).all(super::nameable) {
                continue;
            }
            let must_reach =
                (prelude || is_inherent(path) || is_core_type_item(path)).then(|| printed.clone());
            out.insert(
                printed,
                DepCall {
                    callee,
                    params,
                    ret,
                    must_reach,
                    stand_in: None,
                    type_params: Vec::new(),
                    features: method_feature(path).into_iter().collect(),
                },
            );
        }
    }
    out.extend(reified_dep_fns(krate, deps, &reachable));
    out
}

/// The unstable library feature a shim's call of `path` needs: an
/// unstable method of `Iterator` or `DoubleEndedIterator`
/// ([`super::closure_shims::iterator_method_feature`]), or one of
/// `PartialOrd`'s hidden `__chaining_*` methods, through which a tuple
/// compares field by field (`(x % 7, x) < (y % 7, y)`, a `sort_by_key`
/// with a tuple key).
fn method_feature(path: &Path) -> Option<&'static str> {
    super::closure_shims::iterator_method_feature(path).or_else(|| {
        let [qualified, method] = path.segments.as_slice() else {
            return None;
        };
        let (_, trait_path, _) = crate::model::split_qualified(&qualified.name)?;
        (crate::calls::std_relative(trait_path) == Some("cmp::PartialOrd")
            && method.name.starts_with("__chaining_"))
        .then_some("partial_ord_chaining_methods")
    })
}

/// The dependency functions without a body whose address the kernel takes
/// (`libm::sinf as fn(f32) -> f32`), in a function it reaches or in a
/// constant's or static's body (a table of them): each gets a shim as a
/// call does, whose address stands for the function's (Rust promises no
/// unique address for a function), typed by the `fn` pointer.
///
/// `reachable`: the functions the kernels reach, with their bodies.
fn reified_dep_fns(
    krate: &Crate,
    deps: &BTreeSet<String>,
    reachable: &BTreeMap<String, BodyId>,
) -> BTreeMap<String, DepCall> {
    let reachable: BTreeSet<BodyId> = reachable.values().copied().collect();
    // The functions the constants of reachable bodies hold: a constant no
    // kernel uses gets no shim (nor a rustc round for one).
    let mut constants = crate::model::ConstWalk::new(krate);
    let held: BTreeSet<String> = reachable
        .iter()
        .flat_map(|&id| constants.held_by_constants_of(&krate.bodies[id]))
        .map(|p| p.to_string())
        .collect();
    let mut out = BTreeMap::new();
    for (id, body) in krate.bodies.iter() {
        let in_code = matches!(body.kind, BodyKind::Fn { ctfe: false });
        if in_code && !reachable.contains(&id) {
            continue;
        }
        for st in body.blocks.values().flat_map(|bb| &bb.statements) {
            let StatementKind::Assign(_, rv @ Rvalue::Cast(_, _, Ty::FnPtr(params, ret))) =
                &st.kind
            else {
                continue;
            };
            let Some(path) = crate::model::reified(rv) else {
                continue;
            };
            if !in_code && !held.contains(&path.to_string()) {
                continue;
            }
            if !is_bodiless_dep_call(krate, path, deps)
                || !params.iter().chain([&**ret]).all(super::nameable)
            {
                continue;
            }
            let Some(callee) = callee_source(path) else {
                continue;
            };
            let printed = path.to_string();
            out.insert(
                printed.clone(),
                DepCall {
                    callee,
                    params: params.clone(),
                    ret: (**ret).clone(),
                    must_reach: is_inherent(path).then_some(printed),
                    stand_in: None,
                    type_params: Vec::new(),
                    features: method_feature(path).into_iter().collect(),
                },
            );
        }
    }
    out
}

/// Points every shimmed call at its shim's body, where rustc printed one
/// that reaches what the call meant ([`DepCall::must_reach`]).
pub fn link_dep_calls(krate: &mut Crate, shims: &BTreeMap<String, DepCall>) {
    for (call, d) in shims {
        // A shim generic over a closure is instantiated at it instead
        // (`closures::instantiate`).
        if !d.type_params.is_empty() {
            continue;
        }
        let path = d.body_path();
        let Some(id) = krate.fn_body(&path) else {
            continue;
        };
        if let Some(callee) = &d.must_reach
            && !reaches(&krate.bodies[id], callee)
        {
            tracing::debug!("the shim of `{call}` calls another function; refused");
            continue;
        }
        // rustc left the call in the shim (an `#[inline(never)]` callee):
        // aliased, the shim would call itself forever. A call left inside
        // the callee's inlined body is the callee's own recursion
        // (rand_xoshiro's `from_seed` calls `seed_from_u64(0)` for an
        // all-zero seed), which the shim, being that function, serves.
        let body = &krate.bodies[id];
        if calls(body, call) && !inlined(body, call) {
            tracing::debug!("the shim of `{call}` still calls it; refused");
            continue;
        }
        krate.call_aliases.insert(call.clone(), path);
    }
}

/// Whether `path` names an inherent method (`dep::m::<impl dep::T>::f`).
fn is_inherent(path: &Path) -> bool {
    path.segments
        .iter()
        .any(|s| s.name.starts_with("<impl ") && !s.name.starts_with("<impl at "))
}

/// Whether `path` names a function under one of `core`'s types or traits
/// by its path, as a function item passed where a closure is expected
/// prints: a method by the type's path (`std::result::Result::<u32,
/// E>::ok`, from `map(Result::ok)`), or a function nested in a trait's
/// default method (`std::iter::Iterator::last::some`, which `last` folds
/// with). A segment between the crate and the function is capitalised, as
/// `core`'s type and trait names are and its module names are not. Its
/// constructors build values instead
/// ([`crate::model::Body::call_fn_items_directly`]); a private nested
/// function gets a shim only where one stands in for it. A
/// `#[track_caller]` method among them (`Option::unwrap`) called through a
/// shim reports the shim's location if it panics; only `core::panic`'s,
/// whose result is the location, are left out.
fn is_core_type_item(path: &Path) -> bool {
    let [first, inner @ .., function] = path.segments.as_slice() else {
        return false;
    };
    // `Location::caller` reads its caller's location (`#[track_caller]`):
    // a shim would give its own.
    let module = inner.first().map_or("", |s| s.name.as_str());
    matches!(first.name.as_str(), "core" | "std")
        && module != "panic"
        && inner
            .iter()
            .any(|s| s.name.starts_with(|c: char| c.is_ascii_uppercase()))
        && function
            .name
            .starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
}

/// Whether `body` calls `callee` (as printed).
fn calls(body: &crate::model::Body, callee: &str) -> bool {
    body.called_items().any(|p| p.to_string() == callee)
}

/// Whether `body` calls `callee` (as printed) or inlined it.
fn reaches(body: &crate::model::Body, callee: &str) -> bool {
    calls(body, callee) || inlined(body, callee)
}

/// Whether rustc inlined `callee` (as printed) into `body`. A scope
/// prints the inlined item as an expression (`gpu::DisjointSlice::<'_,
/// u32>::len`), a [`Path`] displays as a type (`gpu::DisjointSlice<'_,
/// u32>::len`): read back, they compare alike.
fn inlined(body: &crate::model::Body, callee: &str) -> bool {
    fn names(inlined: &str, callee: &str) -> bool {
        // A `#[track_caller]` function's scope says so first.
        let inlined = inlined.strip_prefix("#[track_caller] ").unwrap_or(inlined);
        inlined == callee
            || crate::parse::parse_value_path(inlined).is_ok_and(|p| p.to_string() == callee)
    }
    fn in_scopes(scopes: &[crate::model::Scope], callee: &str) -> bool {
        scopes.iter().any(|s| {
            s.inlined.as_deref().is_some_and(|i| names(i, callee)) || in_scopes(&s.children, callee)
        })
    }
    in_scopes(&body.scopes, callee)
}

/// Whether printed path `p` names an item of one of `deps` (at a path
/// boundary: `libm::` but not `my_libm::`).
/// Whether a call to `path` goes into one of the dependency crates `deps`
/// and has no body in `krate`: not a call with a fixed meaning
/// ([`calls::classify`]) and not one an instance, shim or imported body
/// already serves.
pub fn is_bodiless_dep_call(krate: &Crate, path: &Path, deps: &BTreeSet<String>) -> bool {
    calls::classify(path).is_none()
        && names_a_dependency(&path.to_string(), deps)
        && krate.fn_body(&krate.resolve_callee(path)).is_none()
}

/// Whether a call to `path` is a method of one of `core`'s traits
/// (`<i64 as std::ops::Sub>::sub`) that rustc's inliner left as a call, as
/// it does deep in a dependency's generic code: it has no body here, but a
/// shim, whose body rustc inlines it into, gives it one.
fn is_bodiless_core_trait_call(krate: &Crate, path: &Path) -> bool {
    let first = path.segments.first().map_or("", |s| s.name.as_str());
    first.starts_with('<')
        && (first.contains(" as std::") || first.contains(" as core::"))
        && calls::classify(path).is_none()
        && krate.fn_body(&krate.resolve_callee(path)).is_none()
}

/// A function of `core` without a body that rustc's inliner left as a
/// call ([`bodiless_core_fn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CoreFn {
    /// An inherent method of a `core` type
    /// (`core::slice::<impl [u32]>::split_at`, which `Chunks::next` calls,
    /// or `std::result::Result::<u32, E>::ok`, printed by the type's path:
    /// [`is_core_type_item`]): a shim written through the self type
    /// (`<[u32]>::split_at`) gives it a body, if rustc inlined it there
    /// ([`DepCall::must_reach`]).
    Method,
    /// A free function (`core::num::int_sqrt::u64_stages`, private): a
    /// stand-in or nothing.
    Free,
}

/// What a call to `path` is when it names a function of `core` (not a
/// trait's method) without a body, nor one of the primitives the lowering
/// knows ([`calls::classify`]); `None` for any other call.
fn bodiless_core_fn(krate: &Crate, path: &Path) -> Option<CoreFn> {
    let first = path.segments.first().map_or("", |s| s.name.as_str());
    let bodiless = matches!(first, "core" | "std")
        && calls::classify(path).is_none()
        && krate.fn_body(&krate.resolve_callee(path)).is_none();
    bodiless.then(|| {
        if is_inherent(path) || is_core_type_item(path) {
            CoreFn::Method
        } else {
            CoreFn::Free
        }
    })
}

/// Whether a call to `path` is a generic item of the device prelude
/// (`gpu::DisjointSlice::<'_, u32>::len`, `<gpu::DisjointSlice<'_, u32> as
/// core::ops::Index<usize>>::index`) that rustc's inliner left as a call,
/// as it does past some size of the kernel's body: rustc printed its body
/// only generically, and a shim, in which the inliner starts afresh, gives
/// it one. The prelude's primitives ([`calls::classify`]) are not shimmed.
fn is_bodiless_prelude_call(krate: &Crate, path: &Path) -> bool {
    let first = path.segments.first().map_or("", |s| s.name.as_str());
    // `<SELF as TRAIT>`: the prelude's trait, or a prelude type's impl (not
    // a `core` impl at a type that merely holds one, `Option<gpu::X>`).
    let of_prelude = |text: &str| text.starts_with(&format!("{PRELUDE_MODULE}::"));
    let in_prelude = first == PRELUDE_MODULE
        || crate::model::split_qualified(first)
            .is_some_and(|(self_ty, trait_path, _)| of_prelude(self_ty) || of_prelude(trait_path));
    in_prelude
        && calls::classify(path).is_none()
        && krate.fn_body(&krate.resolve_callee(path)).is_none()
}

fn names_a_dependency(p: &str, deps: &BTreeSet<String>) -> bool {
    deps.iter().any(|d| {
        p.match_indices(&format!("{d}::")).any(|(i, _)| {
            i == 0
                || !p[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntTy;

    #[test]
    fn dependency_names_are_matched_at_path_boundaries() {
        let deps: BTreeSet<String> = ["sha2".to_string()].into();
        assert!(names_a_dependency("sha2::digest::f", &deps));
        assert!(names_a_dependency("<[u8] as sha2::digest::Tr>::m", &deps));
        assert!(!names_a_dependency("my_sha2::f", &deps));
        assert!(!names_a_dependency("kernel::sha2_like::f", &deps));
    }

    #[test]
    fn functions_under_cores_types_and_traits_are_told_by_a_capitalised_segment() {
        let item =
            |text: &str| is_core_type_item(&crate::parse::parse_value_path(text).expect("a path"));
        assert!(item(
            "std::result::Result::<u32, std::num::TryFromIntError>::ok"
        ));
        assert!(item("core::option::Option::<u32>::map_or::<u32, F>"));
        assert!(item("std::iter::Iterator::last::some::<u32>"));
        // A free function of a module, a dependency's method, a type, and
        // `Location::caller`, which reads where it is called from.
        assert!(!item("core::hint::black_box::<u32>"));
        assert!(!item("core::panic::Location::<'_>::caller"));
        assert!(!item("sha2::Sha256::new"));
        assert!(!item("std::option::Option::<u32>"));
    }

    /// A kernel `kernel::k` whose body calls `callee` on its argument, a
    /// `&gpu::DisjointSlice<'_, u32>`, for a `usize`.
    fn kernel_calling(callee: &str) -> Crate {
        let mir = format!(
            "fn kernel::k(_1: &gpu::DisjointSlice<'_, u32>) -> usize {{
    let mut _0: usize;

    bb0: {{
        _0 = {callee}(copy _1) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
"
        );
        let mut krate = crate::import_text(&mir, "", None).expect("the MIR imports");
        krate.attrs.insert(
            "kernel::k".into(),
            crate::model::ItemAttrs {
                kernel: true,
                ..Default::default()
            },
        );
        krate
    }

    #[test]
    fn a_prelude_generic_left_as_a_call_gets_a_shim_that_must_inline_it() {
        let left = kernel_calling("gpu::DisjointSlice::<'_, u32>::len");
        let shims = dep_calls(&left, &BTreeSet::new());
        let d = &shims["gpu::DisjointSlice<'_, u32>::len"];
        assert_eq!(d.callee, "crate::gpu::DisjointSlice::<u32>::len");
        assert_eq!(
            d.must_reach.as_deref(),
            Some("gpu::DisjointSlice<'_, u32>::len")
        );
        // A trait method of the prelude's, qualified, the same way.
        let qualified = kernel_calling("<gpu::DisjointSlice<'_, u32> as gpu::Len>::len");
        let shims = dep_calls(&qualified, &BTreeSet::new());
        assert_eq!(
            shims["<gpu::DisjointSlice<'_, u32> as gpu::Len>::len"].callee,
            "<crate::gpu::DisjointSlice<'_, u32> as crate::gpu::Len>::len",
        );
        // The prelude's primitives have fixed meanings, and a core item
        // merely at a prelude type is not the prelude's.
        for other in [
            "gpu::thread_idx_x",
            "core::mem::size_of::<gpu::DisjointSlice<'_, u32>>",
            "<core::option::Option<gpu::DisjointSlice<'_, u32>> as core::clone::Clone>::clone",
        ] {
            let k = kernel_calling(other);
            let path = crate::parse::parse_value_path(other).expect("a printed call");
            assert!(!is_bodiless_prelude_call(&k, &path), "{other}");
        }
        // The first two get no shim at all (the third is a `core` trait's
        // call, shimmed as such).
        for other in [
            "gpu::thread_idx_x",
            "core::mem::size_of::<gpu::DisjointSlice<'_, u32>>",
        ] {
            let k = kernel_calling(other);
            assert!(dep_calls(&k, &BTreeSet::new()).is_empty(), "{other}");
        }
    }

    #[test]
    fn a_core_inherent_method_left_as_a_call_gets_a_shim_through_its_self_type() {
        let k = kernel_calling("core::slice::<impl [u32]>::split_at");
        let shims = dep_calls(&k, &BTreeSet::new());
        let d = &shims["core::slice::<impl [u32]>::split_at"];
        assert_eq!(d.callee, "<[u32]>::split_at");
        assert_eq!(
            d.must_reach.as_deref(),
            Some("core::slice::<impl [u32]>::split_at")
        );
        // Its scope in the shim, a `#[track_caller]` function's, says so
        // first: still the call.
        let shim = crate::import_text(
            &format!(
                "fn {}() -> () {{
    let mut _0: ();
    scope 1 (inlined #[track_caller] core::slice::<impl [u32]>::split_at) {{
    }}

    bb0: {{
        return;
    }}
}}
",
                d.body_path()
            ),
            "",
            None,
        )
        .expect("the MIR imports");
        let body = shim.bodies.values().next().expect("the shim");
        assert!(super::inlined(body, "core::slice::<impl [u32]>::split_at"));
    }

    #[test]
    fn a_scope_that_prints_the_call_in_expression_form_inlined_it() {
        let d = DepCall {
            callee: "crate::gpu::DisjointSlice::<u32>::len".into(),
            params: vec![],
            ret: Ty::Int(IntTy::Usize),
            must_reach: Some("gpu::DisjointSlice<'_, u32>::len".into()),
            stand_in: None,
            type_params: Vec::new(),
            features: Vec::new(),
        };
        let mut shims = BTreeMap::new();
        shims.insert("gpu::DisjointSlice<'_, u32>::len".to_string(), d.clone());
        let shim = |inlined: &str| {
            format!(
                "fn {}() -> usize {{
    let mut _0: usize;
    scope 1 (inlined {inlined}) {{
    }}

    bb0: {{
        _0 = const 7_usize;
        return;
    }}
}}
",
                d.body_path()
            )
        };
        let mut turbofish =
            crate::import_text(&shim("gpu::DisjointSlice::<'_, u32>::len"), "", None)
                .expect("the MIR imports");
        link_dep_calls(&mut turbofish, &shims);
        assert_eq!(turbofish.call_aliases.len(), 1);
        let mut other = crate::import_text(&shim("gpu::DisjointSlice::<'_, u64>::len"), "", None)
            .expect("the MIR imports");
        link_dep_calls(&mut other, &shims);
        assert!(other.call_aliases.is_empty(), "{:?}", other.call_aliases);
    }

    #[test]
    fn a_shim_serves_an_inherent_call_only_if_it_inlined_it() {
        // The shim of `dep::m::<impl dep::T>::len`, written `<dep::T>::len`,
        // whose body rustc resolved to a trait's `len` instead.
        let d = DepCall {
            callee: "<dep::T>::len".into(),
            params: vec![],
            ret: Ty::Int(IntTy::U32),
            must_reach: Some("dep::m::<impl dep::T>::len".into()),
            stand_in: None,
            type_params: Vec::new(),
            features: Vec::new(),
        };
        let shim = |callee: &str| {
            format!(
                "fn {}() -> u32 {{
    let mut _0: u32;

    bb0: {{
        _0 = {callee}() -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
",
                d.body_path()
            )
        };
        let mut shims = BTreeMap::new();
        shims.insert("dep::m::<impl dep::T>::len".to_string(), d.clone());
        let mut wrong = crate::import_text(&shim("<dep::T as dep::Len>::len"), "", None)
            .expect("the MIR imports");
        link_dep_calls(&mut wrong, &shims);
        assert!(wrong.call_aliases.is_empty(), "{:?}", wrong.call_aliases);
        // A shim that still calls the method would, once aliased, call
        // itself: refused too.
        let mut itself = crate::import_text(&shim("dep::m::<impl dep::T>::len"), "", None)
            .expect("the MIR imports");
        link_dep_calls(&mut itself, &shims);
        assert!(itself.call_aliases.is_empty(), "{:?}", itself.call_aliases);
        // The method inlined into the shim: it serves the call.
        let inlined = format!(
            "fn {}() -> u32 {{
    let mut _0: u32;
    scope 1 (inlined dep::m::<impl dep::T>::len) {{
    }}

    bb0: {{
        _0 = const 7_u32;
        return;
    }}
}}
",
            d.body_path()
        );
        let mut right = crate::import_text(&inlined, "", None).expect("the MIR imports");
        link_dep_calls(&mut right, &shims);
        assert_eq!(right.call_aliases.len(), 1);
        // Inlined, and calling itself inside: the method's own recursion,
        // which the shim (the method) serves.
        let recursive = format!(
            "fn {}() -> u32 {{
    let mut _0: u32;
    scope 1 (inlined dep::m::<impl dep::T>::len) {{
    }}

    bb0: {{
        _0 = dep::m::<impl dep::T>::len() -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
",
            d.body_path()
        );
        let mut recursion = crate::import_text(&recursive, "", None).expect("the MIR imports");
        link_dep_calls(&mut recursion, &shims);
        assert_eq!(recursion.call_aliases.len(), 1);
    }
}
