//! The shim: a function appended to the kernel's text whose body is one
//! call (or a stand-in's one line), `#[inline(never)]` so that it stays a
//! device function of its own, in which rustc's MIR inliner starts afresh
//! (its budget is per top-level call). Three kinds of call rustc leaves
//! without a body get one: a call into a dependency, into a generic item
//! of the device prelude or into a `core` trait ([`super::dep_calls`],
//! which gives a few `core` items no source can call a body of their own,
//! [`super::std_stand_ins`]), drop glue ([`super::drop_glue`]), and a
//! method reached through a vtable ([`super::vtable_shims`]). This module
//! writes a shim's source and the module that holds it, names its body,
//! and finds the shims rustc refused; each kind decides which calls get
//! one and links the calls to the bodies rustc printed.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{GenericArg, Ty};
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
    /// The body's expression in place of the call, over the parameters
    /// `a0`, `a1`, ...: set for an item of the standard library that no
    /// source can call but whose body is known ([`super::std_stand_ins`]).
    pub stand_in: Option<String>,
    /// The type parameters that stand for types in the call which source
    /// cannot name, closures and `core`'s private `Try` types
    /// ([`super::closure_shims`]): the shim is then printed generic over
    /// them, and instantiated at those types from its MIR
    /// ([`super::closures`]).
    pub type_params: Vec<ShimTypeParam>,
    /// The unstable library features the shim names, in its bounds
    /// (`try_trait_v2` for a `try_fold`'s `Try`) or its callee
    /// (`trusted_random_access` for `__iterator_get_unchecked`), which the
    /// print of the shims enables.
    pub features: Vec<&'static str>,
}

/// A shim's type parameter for a type that source cannot name: a closure,
/// or the `Try` type of a `try_fold` (`NeverShortCircuit<u32>`, private to
/// `core`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ShimTypeParam {
    /// The parameter's name (`F`).
    pub name: String,
    /// Its bound as source (`FnMut(u32, <S as Iterator>::Item) -> u32`),
    /// with the shim's lifetime `'a`.
    pub bound: String,
    /// The type it stands for.
    pub stands_for: Ty,
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

    /// `t` with each type that a [`ShimTypeParam`] stands for written as
    /// that parameter.
    pub(super) fn named(&self, t: &Ty) -> Ty {
        with_params(t, &self.type_params)
    }

    /// The shim function's source. Every reference in its signature shares
    /// one lifetime, so that a returned reference needs no elision rule; the
    /// call sits in an `unsafe` block, since the call it stands for may be
    /// of an `unsafe fn` (made where the caller's code was unsafe).
    pub(super) fn source_fn(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(k, t)| format!("a{k}: {}", with_lifetime(&self.named(t))))
            .collect();
        let generics: String = self
            .type_params
            .iter()
            .map(|c| format!(", {}: {}", c.name, c.bound))
            .collect();
        let generics = format!("<'a{generics}>");
        let args: Vec<String> = (0..self.params.len()).map(|k| format!("a{k}")).collect();
        let body = self
            .stand_in
            .clone()
            .unwrap_or_else(|| format!("{}({})", self.callee, args.join(", ")));
        format!(
            "#[inline(never)]\n#[allow(unused_unsafe)]\npub fn call{generics}({}) -> {} {{\n    unsafe {{ {body} }}\n}}\n",
            params.join(", "),
            with_lifetime(&self.named(&self.ret)),
        )
    }
}

/// `t` with each type that one of `params` stands for written as that
/// parameter.
pub(super) fn with_params(t: &Ty, params: &[ShimTypeParam]) -> Ty {
    t.replace(&|t| {
        params
            .iter()
            .find(|c| c.stands_for == *t)
            .map(|c| Ty::Adt(crate::model::Path::plain(&c.name)))
    })
}

/// `t` as source, its references (through references, tuples and type
/// arguments) and every elided or erased lifetime argument
/// given the lifetime `'a` (`&'a mut IterMut<'a, f32>`, `(u32, &'a u32)`,
/// `Option<&'a u32>`): a shim that returns a borrow must say which
/// argument it borrows from. `'static` stays.
pub(super) fn with_lifetime(t: &Ty) -> String {
    match t {
        Ty::Tuple(elems)
            if elems
                .iter()
                .any(|e| matches!(e, Ty::Ref(..) | Ty::Tuple(_))) =>
        {
            let inner: Vec<String> = elems.iter().map(with_lifetime).collect();
            let comma = if inner.len() == 1 { "," } else { "" };
            format!("({}{comma})", inner.join(", "))
        }
        Ty::Adt(p) => p.to_rust_source_with(&|a| match a {
            GenericArg::Lifetime(l) if l != "static" => "'a".to_string(),
            GenericArg::Type(t) => with_lifetime(t),
            other => other.to_rust_source(),
        }),

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

/// The unstable features `shims` name, each once, in order:
/// what the run that prints them enables.
pub fn shim_features(shims: &BTreeMap<String, DepCall>) -> Vec<&'static str> {
    let features: BTreeSet<&'static str> = shims
        .values()
        .flat_map(|d| d.features.iter().copied())
        .collect();
    features.into_iter().collect()
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
        if i == 0 && seg.name == PRELUDE_MODULE {
            out.push_str("crate::");
            out.push_str(PRELUDE_MODULE);
        } else if let Some(self_ty) = seg.name.strip_prefix("<impl ") {
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
            stand_in: None,
            type_params: Vec::new(),
            features: Vec::new(),
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
            stand_in: None,
            type_params: Vec::new(),
            features: Vec::new(),
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
    fn references_inside_tuples_share_the_shims_lifetime() {
        let r = Ty::Ref(crate::model::Mutability::Not, Box::new(Ty::Int(IntTy::U32)));
        let pair = Ty::Tuple(vec![Ty::Int(IntTy::U32), r.clone()]);
        assert_eq!(with_lifetime(&pair), "(u32, &'a u32)");
        assert_eq!(with_lifetime(&Ty::Tuple(vec![r])), "(&'a u32,)");
        assert_eq!(
            with_lifetime(&Ty::Tuple(vec![pair.clone(), pair])),
            "((u32, &'a u32), (u32, &'a u32))"
        );
        // A tuple without references prints as before.
        let plain = Ty::Tuple(vec![Ty::Int(IntTy::U8), Ty::Bool]);
        assert_eq!(with_lifetime(&plain), plain.to_rust_source());
    }

    #[test]
    fn references_inside_type_arguments_share_the_shims_lifetime() {
        // `Iterator::last`'s `some(_: Option<&u32>, x: &u32) -> Option<&u32>`
        // needs the lifetime named in its result.
        let option = crate::parse::parse_type("std::option::Option<&u32>").expect("a type");
        assert_eq!(with_lifetime(&option), "std::option::Option<&'a u32>");
        let nested =
            crate::parse::parse_type("std::option::Option<(u32, &mut std::slice::Iter<'_, u8>)>")
                .expect("a type");
        assert_eq!(
            with_lifetime(&nested),
            "std::option::Option<(u32, &'a mut std::slice::Iter<'a, u8>)>"
        );
        // An argument without references prints as before.
        let plain = crate::parse::parse_type("std::option::Option<u32>").expect("a type");
        assert_eq!(with_lifetime(&plain), plain.to_rust_source());
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

    #[test]
    fn kernel_paths_become_crate_relative_at_path_boundaries() {
        assert_eq!(
            crate_relative("<kernel::A<gpu::B> as dep::kernel::Tr>"),
            "<crate::kernel::A<crate::gpu::B> as dep::kernel::Tr>"
        );
    }
}
