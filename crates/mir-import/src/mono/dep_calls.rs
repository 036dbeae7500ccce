//! Calls into a dependency that rustc's MIR inliner left as calls.
//!
//! A dependency's functions reach the device inlined into the kernel's own
//! (`rustc::DEPENDENCY_INLINE_THRESHOLD`): rustc prints a dependency's MIR
//! under its own def paths and generically, so a call left to one has no
//! body here. But the inliner stops five calls deep whatever its
//! thresholds, and generic wrappers are deep: `Sha256::digest` reaches
//! `<CoreWrapper<..> as FixedOutput>::finalize_fixed` below that depth.
//!
//! Such a call, once every type in it can be named in source, becomes a
//! *shim*: a function appended to the kernel's text whose body is the call
//! alone, `#[inline(never)]` so that it stays a device function of its own,
//! in which rustc's inliner starts again at depth zero:
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
//! `<impl at ..>` path) gets no shim, and the lowering refuses it by name.

use std::collections::{BTreeMap, BTreeSet};

use crate::calls;
use crate::model::{BodyId, BodyKind, Crate, GenericArg, Path, Rvalue, StatementKind, Ty};
use crate::prelude::{KERNEL_MODULE, PRELUDE_MODULE};

/// One shim: the callee as an expression, and the call's argument and
/// result types.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DepCall {
    /// The callee as Rust source (`<A as dep::Tr>::m`, `dep::f::<u8>`).
    pub callee: String,
    /// The arguments' types.
    pub params: Vec<Ty>,
    /// The result's type.
    pub ret: Ty,
    /// The call, as printed, that the shim's body must inline to serve it
    /// (one that still calls it would call itself once aliased): an inherent method is written through its self type
    /// (`<dep::T>::m`), which rustc resolves to a trait's method of that
    /// name when the inherent one is not visible here.
    pub must_reach: Option<String>,
}

impl DepCall {
    /// The module that holds the shim, named by the callee's last segment
    /// and a hash of the whole shim (FNV-1a, 32 bits, the same in every
    /// run), so it does not depend on the order calls are found in.
    pub fn module(&self) -> String {
        let name: String = self
            .callee
            .rsplit("::")
            .next()
            .unwrap_or("f")
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let key = self.source_fn();
        let hash = key.bytes().fold(0x811c_9dc5u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        format!("__dep_call_{name}_{hash:08x}")
    }

    /// The def path of the shim's body.
    pub fn body_path(&self) -> String {
        format!("{KERNEL_MODULE}::{}::call", self.module())
    }

    /// The shim function's source. Every reference in its signature shares
    /// one lifetime, so that a returned reference needs no elision rule; the
    /// call sits in an `unsafe` block, since the call it stands for may be
    /// of an `unsafe fn` (made where the caller's code was unsafe).
    fn source_fn(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(k, t)| format!("a{k}: {}", with_lifetime(t)))
            .collect();
        let args: Vec<String> = (0..self.params.len()).map(|k| format!("a{k}")).collect();
        format!(
            "#[inline(never)]\n#[allow(unused_unsafe)]\npub fn call<'a>({}) -> {} {{\n    unsafe {{ {}({}) }}\n}}\n",
            params.join(", "),
            with_lifetime(&self.ret),
            self.callee,
            args.join(", ")
        )
    }
}

/// `t` as source, its outermost references and every elided or erased
/// lifetime argument given the lifetime `'a` (`&'a mut IterMut<'a, f32>`):
/// a shim that returns a borrow must say which argument it borrows from.
/// `'static` stays.
fn with_lifetime(t: &Ty) -> String {
    match t {
        Ty::Ref(m, e) => format!(
            "&'a {}{}",
            if *m == crate::model::Mutability::Mut {
                "mut "
            } else {
                ""
            },
            with_lifetime(e)
        ),
        _ => lifetimes_named(t).to_rust_source(),
    }
}

/// `t` with each lifetime argument but `'static` written `'a`.
fn lifetimes_named(t: &Ty) -> Ty {
    t.replace(&|t| {
        let Ty::Adt(p) = t else { return None };
        let mut p = p.clone();
        for seg in &mut p.segments {
            for a in &mut seg.args {
                match a {
                    GenericArg::Lifetime(l) if l != "static" => *l = "a".into(),
                    GenericArg::Type(inner) => *inner = lifetimes_named(inner),
                    _ => {}
                }
            }
        }
        Some(Ty::Adt(p))
    })
}

/// The source of every shim, appended to the kernel's text.
pub fn dep_call_source(shims: &BTreeMap<String, DepCall>) -> String {
    let mut by_module: BTreeMap<String, &DepCall> = BTreeMap::new();
    for d in shims.values() {
        by_module.insert(d.module(), d);
    }
    let mut s = String::new();
    for (module, d) in by_module {
        s.push_str(&format!(
            "// Shim of a call rustc left without a body (mir-import's mono shims).\n\
             #[doc(hidden)]\npub mod {module} {{\n#[allow(unused_imports)]\nuse super::*;\n{}}}\n",
            d.source_fn()
        ));
    }
    s
}

/// The shims (keys of `shims`) whose lines rustc's errors point at:
/// `appended` is the text appended to the kernel, whose shim source starts
/// on line `first` of the compiled copy, printed under the kernel's file
/// name `file`. Lines outside the shims name none.
pub fn refused_shims(
    shims: &BTreeMap<String, DepCall>,
    appended: &str,
    first: usize,
    file: &str,
    stderr: &str,
) -> Vec<String> {
    let lines: Vec<&str> = appended.lines().collect();
    let shim_start = lines.len() - dep_call_source(shims).lines().count();
    let mut modules = BTreeSet::new();
    for l in stderr.lines() {
        let Some(at) = l.trim_start().strip_prefix("--> ") else {
            continue;
        };
        let mut parts = at.rsplitn(3, ':');
        let (_col, line, path) = (parts.next(), parts.next(), parts.next());
        let (Some(line), Some(path)) = (line.and_then(|n| n.parse::<usize>().ok()), path) else {
            continue;
        };
        if !path.ends_with(file) {
            continue;
        }
        let Some(index) = line.checked_sub(first) else {
            continue;
        };
        if index < shim_start || index >= lines.len() {
            continue;
        }
        let module = lines[shim_start..=index]
            .iter()
            .rev()
            .find_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(" {"));
        if let Some(m) = module {
            modules.insert(m.to_string());
        }
    }
    shims
        .iter()
        .filter(|(_, d)| modules.contains(&d.module()))
        .map(|(k, _)| k.clone())
        .collect()
}

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
            if !is_bodiless_dep_call(krate, path, deps) && !is_bodiless_core_trait_call(krate, path)
            {
                continue;
            }
            let printed = path.to_string();
            let Some(callee) = callee_source(path) else {
                continue;
            };
            let params: Option<Vec<Ty>> = args.iter().map(|a| krate.operand_ty(body, a)).collect();
            let (Some(params), Some(ret)) = (params, body.place_ty(destination)) else {
                continue;
            };
            if !params.iter().chain([&ret]).all(super::nameable) {
                continue;
            }
            let must_reach = is_inherent(path).then(|| printed.clone());
            out.insert(
                printed,
                DepCall {
                    callee,
                    params,
                    ret,
                    must_reach,
                },
            );
        }
    }
    out.extend(reified_dep_fns(krate, deps, &reachable));
    out
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

/// Whether `body` calls `callee` (as printed).
fn calls(body: &crate::model::Body, callee: &str) -> bool {
    body.called_items().any(|p| p.to_string() == callee)
}

/// Whether `body` calls `callee` (as printed) or inlined it.
fn reaches(body: &crate::model::Body, callee: &str) -> bool {
    calls(body, callee) || inlined(body, callee)
}

/// Whether rustc inlined `callee` (as printed) into `body`.
fn inlined(body: &crate::model::Body, callee: &str) -> bool {
    fn in_scopes(scopes: &[crate::model::Scope], callee: &str) -> bool {
        scopes
            .iter()
            .any(|s| s.inlined.as_deref() == Some(callee) || in_scopes(&s.children, callee))
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

/// The callee as an expression: each segment's generic arguments in
/// turbofish form (`ArrayBuilder::<u8, N>::new`), a qualified segment
/// (`<A as Tr>`) kept as printed with the kernel's own paths made
/// crate-relative. `None` when source cannot name it: a closure, an
/// `<impl at ..>` block, an anonymous constant or a type parameter.
pub(super) fn callee_source(path: &crate::model::Path) -> Option<String> {
    let printed = path.to_string();
    let first = path.segments.first().map_or("", |s| s.name.as_str());
    if [
        "{closure",
        "{impl",
        "<impl at",
        "{constant",
        "{opaque",
        "{coroutine",
    ]
    .iter()
    .any(|bad| printed.contains(bad))
        // The kernel's own generic functions are `mono`'s; intrinsics
        // cannot be called from stable source.
        || first == KERNEL_MODULE
        || first == PRELUDE_MODULE
        || printed.starts_with("core::intrinsics::")
        || printed.starts_with("std::intrinsics::")
        // Drop glue rustc did not inline is final (its glue has a shim of
        // its own, see `drop_glue`), and `Drop::drop` cannot be called
        // from source (E0040).
        || path.def_path().ends_with("ptr::drop_in_place")
        || printed.contains(" as std::ops::Drop>::drop")
        || printed.contains(" as core::ops::Drop>::drop")
        || path.segments.len() < 2
        || !super::all_type_args(path).all(super::nameable)
    {
        return None;
    }
    // An inherent method (`nalgebra::geometry::rotation_construction::<impl
    // nalgebra::Rotation<f32, 3>>::identity`) is named through its self
    // type, `<nalgebra::Rotation<f32, 3>>::identity`: the module that holds
    // the impl block may be private.
    let inherent = path
        .segments
        .iter()
        .rposition(|s| s.name.starts_with("<impl "))
        .unwrap_or(0);
    let mut out = String::new();
    for (i, seg) in path.segments.iter().enumerate().skip(inherent) {
        if i > inherent {
            out.push_str("::");
        }
        if let Some(self_ty) = seg.name.strip_prefix("<impl ") {
            out.push('<');
            out.push_str(&crate_relative(self_ty));
        } else if seg.name.starts_with('<') {
            out.push_str(&crate_relative(&seg.name));
        } else {
            out.push_str(&seg.name);
        }
        if !seg.args.is_empty() {
            // Lifetimes are not written in a call's turbofish.
            let args: Vec<String> = seg
                .args
                .iter()
                .filter(|a| !matches!(a, crate::model::GenericArg::Lifetime(_)))
                .map(crate::model::GenericArg::to_rust_source)
                .collect();
            if !args.is_empty() {
                out.push_str(&format!("::<{}>", args.join(", ")));
            }
        }
    }
    Some(out)
}

/// Printed text with the kernel's and the prelude's paths (`kernel::Pair`)
/// made crate-relative (`crate::kernel::Pair`), as source inside the kernel
/// crate names them.
fn crate_relative(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while !rest.is_empty() {
        let at_boundary = out
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'));
        let local = [KERNEL_MODULE, PRELUDE_MODULE]
            .iter()
            .find(|m| rest.starts_with(&format!("{m}::")));
        if at_boundary && let Some(m) = local {
            out.push_str("crate::");
            out.push_str(m);
            rest = &rest[m.len()..];
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GenericArg, IntTy, Path, PathSegment};

    fn seg(name: &str, args: Vec<GenericArg>) -> PathSegment {
        PathSegment {
            name: name.into(),
            args,
        }
    }

    fn adt(path: &str) -> Ty {
        Ty::Adt(Path::plain(path))
    }

    #[test]
    fn refused_shims_are_the_ones_rustc_points_at() {
        let shim = |callee: &str| DepCall {
            callee: callee.into(),
            params: vec![Ty::Int(IntTy::U64)],
            ret: Ty::Int(IntTy::U32),
            must_reach: None,
        };
        let mut shims = BTreeMap::new();
        shims.insert("a".to_string(), shim("dep::public::f"));
        shims.insert("b".to_string(), shim("dep::private::g"));
        let appended = format!("mod instance {{}}\n{}", dep_call_source(&shims));
        // The compiled copy: 10 kernel lines, a blank one, then `appended`.
        let first = 12;
        let g_line = appended
            .lines()
            .position(|l| l.contains("dep::private::g"))
            .expect("g's call")
            + first;
        let stderr = format!(
            "error[E0603]: module `private` is private\n  --> /src/kernel.rs:{g_line}:20\n\
             note: the module `private` is defined here\n  --> /work/vendor/dep/src/lib.rs:{g_line}:1\n"
        );
        assert_eq!(
            refused_shims(&shims, &appended, first, "kernel.rs", &stderr),
            ["b"]
        );
        // A line in the instances, or another file's, names no shim.
        let elsewhere = format!("  --> /src/kernel.rs:{first}:1\n  --> /src/other.rs:{g_line}:1\n");
        assert!(refused_shims(&shims, &appended, first, "kernel.rs", &elsewhere).is_empty());
    }

    #[test]
    fn callees_are_written_as_expressions() {
        let builder = Path {
            segments: vec![
                seg("dep", vec![]),
                seg("ArrayBuilder", vec![GenericArg::Type(Ty::Int(IntTy::U8))]),
                seg("new", vec![]),
            ],
        };
        assert_eq!(
            callee_source(&builder).as_deref(),
            Some("dep::ArrayBuilder::<u8>::new")
        );
        // A lifetime argument is left out; the others stay.
        let with_lifetime = Path {
            segments: vec![
                seg("dep", vec![]),
                seg(
                    "View",
                    vec![
                        GenericArg::Lifetime("{erased}".into()),
                        GenericArg::Type(Ty::Int(IntTy::U8)),
                    ],
                ),
                seg("get", vec![]),
            ],
        };
        assert_eq!(
            callee_source(&with_lifetime).as_deref(),
            Some("dep::View::<u8>::get")
        );
        // The kernel's own functions are instantiated by `mono`, and
        // intrinsics are not callable from source.
        let own = Path {
            segments: vec![
                seg("kernel", vec![]),
                seg("f", vec![GenericArg::Type(adt("dep::W"))]),
            ],
        };
        assert_eq!(callee_source(&own), None);
        let intrinsic = Path {
            segments: vec![
                seg("core", vec![]),
                seg("intrinsics", vec![]),
                seg("black_box", vec![GenericArg::Type(adt("dep::W"))]),
            ],
        };
        assert_eq!(callee_source(&intrinsic), None);
        let qualified = Path {
            segments: vec![seg("<kernel::Pair as dep::Tr>", vec![]), seg("m", vec![])],
        };
        assert_eq!(
            callee_source(&qualified).as_deref(),
            Some("<crate::kernel::Pair as dep::Tr>::m")
        );
        // A type parameter (one segment) and an impl block cannot be named.
        let generic = Path {
            segments: vec![
                seg("dep", vec![]),
                seg("f", vec![GenericArg::Type(adt("T"))]),
            ],
        };
        assert_eq!(callee_source(&generic), None);
        let in_impl = Path {
            segments: vec![
                seg("dep", vec![]),
                seg("<impl at /v/dep/src/lib.rs:3:1: 3:9>", vec![]),
                seg("m", vec![]),
            ],
        };
        assert_eq!(callee_source(&in_impl), None);
        // An inherent method, through its self type: its module may be
        // private.
        let inherent = Path {
            segments: vec![
                seg("dep", vec![]),
                seg("rotation_construction", vec![]),
                seg("<impl dep::Rotation<f32, 3>>", vec![]),
                seg("identity", vec![]),
            ],
        };
        assert_eq!(
            callee_source(&inherent).as_deref(),
            Some("<dep::Rotation<f32, 3>>::identity")
        );
    }

    #[test]
    fn dependency_names_are_matched_at_path_boundaries() {
        let deps: BTreeSet<String> = ["sha2".to_string()].into();
        assert!(names_a_dependency("sha2::digest::f", &deps));
        assert!(names_a_dependency("<[u8] as sha2::digest::Tr>::m", &deps));
        assert!(!names_a_dependency("my_sha2::f", &deps));
        assert!(!names_a_dependency("kernel::sha2_like::f", &deps));
        assert_eq!(
            crate_relative("<kernel::A<gpu::B> as dep::kernel::Tr>"),
            "<crate::kernel::A<crate::gpu::B> as dep::kernel::Tr>"
        );
    }

    #[test]
    fn a_shim_names_its_call_and_shares_one_lifetime() {
        let d = DepCall {
            callee: "<dep::W as dep::Tr>::finalize".into(),
            params: vec![
                Ty::Ref(crate::model::Mutability::Mut, Box::new(adt("dep::W"))),
                Ty::Int(IntTy::U64),
            ],
            ret: Ty::Ref(
                crate::model::Mutability::Not,
                Box::new(Ty::Slice(Box::new(Ty::Int(IntTy::U8)))),
            ),
            must_reach: None,
        };
        let m = d.module();
        assert!(m.starts_with("__dep_call_finalize_"), "{m}");
        assert_eq!(d.body_path(), format!("kernel::{m}::call"));
        let mut all = BTreeMap::new();
        all.insert("<dep::W as dep::Tr>::finalize".to_string(), d.clone());
        let src = dep_call_source(&all);
        assert!(
            src.contains(
                "pub fn call<'a>(a0: &'a mut dep::W, a1: u64) -> &'a [u8] {\n    unsafe { <dep::W as dep::Tr>::finalize(a0, a1) }\n}"
            ),
            "{src}"
        );
        assert!(syn::parse_file(&src).is_ok(), "{src}");
        // Another result type is another shim.
        let mut other = d;
        other.ret = Ty::Int(IntTy::U8);
        assert_ne!(other.module(), m);
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

    #[test]
    fn elided_lifetimes_in_a_shim_become_its_own() {
        let iter = |l: &str| {
            Ty::Adt(Path {
                segments: vec![
                    seg("std", vec![]),
                    seg("slice", vec![]),
                    seg(
                        "IterMut",
                        vec![
                            GenericArg::Lifetime(l.into()),
                            GenericArg::Type(Ty::Int(IntTy::U32)),
                        ],
                    ),
                ],
            })
        };
        let param = Ty::Ref(crate::model::Mutability::Mut, Box::new(iter("_")));
        assert_eq!(
            with_lifetime(&param),
            "&'a mut std::slice::IterMut<'a, u32>"
        );
        assert_eq!(
            with_lifetime(&iter("static")),
            "std::slice::IterMut<'static, u32>"
        );
    }
}
