//! Monomorphisation of the kernel's generic functions that rustc left as
//! calls (`#[inline(never)]`, or too large to inline).
//!
//! rustc prints one polymorphic MIR body per generic function (`fn twice(_1:
//! &O, ...)`), and calls to it with their type arguments
//! (`kernel::twice::<kernel::AddN>`). We have no `rustc_private` to
//! instantiate the body, and we write no trait solver: rustc stays the
//! authority on types, trait resolution and layouts. So each instance
//! becomes source that rustc compiles like any other function: a module
//! appended to the kernel's text, holding the generic function's item with its
//! type parameters removed and each one declared as a type alias of the
//! instance's argument:
//!
//! ```text
//! pub mod __mono_twice__kernel_AddN_8c1f03a2 {
//!     use super::*;
//!     pub(super) type O = crate::kernel::AddN;
//!     #[inline(never)]
//!     pub fn twice(op: &O, x: u32) -> u32 { op.apply(op.apply(x)) + O::ID }
//! }
//! ```
//!
//! The module sits inside the kernel's own module, so the body sees what the
//! generic one saw (private items, the prelude's glob import); its MIR is the
//! instance's, with rustc's inlining and layouts; `#[inline(never)]` is kept,
//! so the instance stays a `noinline` device function. A call printed as
//! `kernel::twice::<kernel::AddN>` then resolves to
//! `kernel::__mono_twice__kernel_AddN_8c1f03a2::twice` through
//! [`Crate::call_aliases`].
//! Instances inside instances are found in the next round (a bounded
//! number: polymorphic recursion is refused).
//!
//! A closure argument cannot be named either: the copy keeps its parameter
//! generic (`GenericFn::copy`), and [`closures`] instantiates the copy's MIR
//! at each closure (or the generic function's own MIR, when every argument
//! is a closure).
//!
//! A method of a generic inherent `impl` block (`impl<T> Vec3<T>`, called as
//! `kernel::Vec3::<f32>::dot`) is copied the same way: the block with that
//! method alone, its parameters aliased, the method renamed
//! (`__mono_dot`) so that it does not clash with the generic block's own.
//!
//! A free function's const parameter is named the same way, by a const
//! item of the instance's value (`pub(super) const N: usize = 4;`), when
//! the call prints the value as a literal.
//!
//! A method a trait object's vtable needs that rustc printed only
//! generically (a trait's default method, a generic impl block's) gets a
//! shim of a dependency call's form ([`vtable_shims`]).
//!
//! Not instantiated (the call stays refused, with its diagnostic): other type
//! arguments that source cannot name (`impl Trait`, anything opaque), const
//! arguments that are not literals, const parameters of methods and impl
//! blocks, methods of generic trait impl blocks, and methods with type
//! parameters of their own.

mod call_site;
mod closure_shims;
pub mod closures;
pub mod dep_calls;
pub mod drop_glue;
mod generic;
pub mod shims;
mod std_closures;
mod std_range_folds;
mod std_stand_ins;
mod std_try;
pub mod visible_paths;
pub mod vtable_shims;

pub use generic::GenericFn;
pub use generic::generic_fns;

use std::collections::BTreeMap;

use crate::model::{Crate, GenericArg, Path, PathSegment, Ty};
use crate::prelude::KERNEL_MODULE;

/// One instance written as source: a generic function and its type
/// arguments. An argument that is `None` is a closure, which source cannot
/// name: the copy keeps that parameter generic, and [`closures`] makes the
/// instance of the copy's MIR for each closure.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instance {
    /// The generic function's def path (`kernel::twice`).
    pub def: String,
    /// Its type arguments; `None` for a parameter kept generic.
    pub args: Vec<Option<Ty>>,
    /// Its const arguments, as printed (`4`, `true`): literals
    /// ([`GenericFn::const_args_of`]).
    pub consts: Vec<String>,
}

impl Instance {
    /// The module that holds the instance (`__mono_twice__kernel_AddN_8c1f03a2`):
    /// made of its function and arguments only, so it does not depend on the
    /// order instances are found in. The readable part folds punctuation
    /// (`a::b_c` and `a_b::c` read alike), so a hash of the whole instance
    /// (FNV-1a, 32 bits, the same in every run) keeps two instances apart.
    pub fn module(&self) -> String {
        module_name(
            &self.def,
            self.args
                .iter()
                .map(|a| a.as_ref().map_or_else(|| "_".to_string(), Ty::to_string))
                .chain(self.consts.iter().cloned()),
        )
    }

    /// The def path of the instance's body (`kernel::__mono_twice__AddN::twice`).
    pub fn body_path(&self) -> String {
        let name = self.def.rsplit("::").next().unwrap_or("f");
        format!("{KERNEL_MODULE}::{}::{name}", self.module())
    }

    /// Which parameters the copy keeps generic.
    pub fn kept(&self) -> Vec<bool> {
        self.args.iter().map(Option::is_none).collect()
    }
}

/// The module that holds an instance of `def` at `args` (their printed
/// text): made of its function and arguments only, so it does not depend on
/// the order instances are found in. The readable part folds punctuation
/// (`a::b_c` and `a_b::c` read alike), so a hash of the whole instance
/// (FNV-1a, 32 bits, the same in every run) keeps two instances apart.
pub fn module_name(def: &str, args: impl IntoIterator<Item = String>) -> String {
    let name = def.rsplit("::").next().unwrap_or("f");
    let mut m = format!("__mono_{name}");
    let mut key = def.to_string();
    for text in args {
        m.push_str("__");
        key.push('|');
        key.push_str(&text);
        let mut last = '_';
        for c in text.chars() {
            let c = if c.is_ascii_alphanumeric() { c } else { '_' };
            if !(c == '_' && last == '_') {
                m.push(c);
            }
            last = c;
        }
    }
    let hash = key.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{}_{hash:08x}", m.trim_end_matches('_'))
}

/// Whether `t` is a closure's type (`{closure@kernel.rs:12:20: 12:23}`).
pub fn is_closure(t: &Ty) -> bool {
    t.is_closure()
}

/// Whether `t` is called as a closure is: a closure's type, or a function
/// item's, the type of a function passed where a closure is expected
/// (`map(u32::count_ones)`, `filter(is_odd)`), zero-sized like a closure
/// that captures nothing. A function item's calls through the closure
/// traits become calls of the function
/// ([`crate::model::Body::call_fn_items_directly`]), after the
/// substitution or expansion that names it in them.
pub fn is_closure_like(t: &Ty) -> bool {
    t.is_closure() || t.is_fn_item()
}

/// Whether `t` can be written in source outside the generic body: no
/// closure, coroutine or other opaque type, no type parameter left.
pub(crate) fn nameable(t: &Ty) -> bool {
    match t {
        Ty::Opaque(_) => false,
        Ty::Tuple(v) => v.iter().all(nameable),
        Ty::Array(e, _) | Ty::Slice(e) | Ty::Ref(_, e) | Ty::RawPtr(_, e) => nameable(e),
        Ty::FnPtr(a, r) => a.iter().all(nameable) && nameable(r),
        // A one-segment path is a type parameter (the kernel's own types
        // print as `kernel::T`).
        Ty::Adt(p) => {
            p.segments.len() > 1
                && p.segments.iter().all(|s| {
                    s.args.iter().all(|a| match a {
                        GenericArg::Type(t) => nameable(t),
                        _ => true,
                    })
                })
        }
        _ => true,
    }
}

/// Every type argument anywhere in a call's path.
pub fn all_type_args(path: &Path) -> impl Iterator<Item = &Ty> {
    path.segments.iter().flat_map(PathSegment::type_args)
}

/// The source instance a call names, when it is a call of a generic
/// function of the kernel whose type arguments source can name, closures
/// aside (kept generic), and at least one is not a closure. A call whose
/// arguments are all closures needs no copy: [`closures`] instantiates the
/// generic body itself.
pub fn instance_of(path: &Path, generics: &BTreeMap<String, GenericFn>) -> Option<Instance> {
    let def = path.def_path();
    let g = generics.get(&def)?;
    let args = g.args_of(path);
    if args.len() != g.params.len() {
        return None;
    }
    let consts = g.const_args_of(path)?;
    let args: Vec<Option<Ty>> = args
        .into_iter()
        .map(|t| match t {
            t if is_closure(&t) => Some(None),
            t if nameable(&t) => Some(Some(t)),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (args.iter().any(Option::is_some) || !consts.is_empty()).then_some(Instance {
        def,
        args,
        consts,
    })
}

/// Every instance that the function bodies reachable from the kernels call
/// or take the address of (`scale::<3> as fn(u32) -> u32`, in the body or
/// in a constant it uses), keyed by the path as printed (what
/// [`Crate::call_aliases`] maps). The generic bodies themselves are
/// skipped: their calls name type parameters, not instances.
pub fn instances(
    krate: &Crate,
    generics: &BTreeMap<String, GenericFn>,
) -> BTreeMap<String, Instance> {
    let mut out = BTreeMap::new();
    let mut constants = crate::model::ConstWalk::new(krate);
    for (path, &id) in &krate.reachable_function_bodies() {
        if generics.contains_key(path) {
            continue;
        }
        let body = &krate.bodies[id];
        let held = constants.held_by_constants_of(body);
        for c in body.called_items().chain(body.reified_fns()).chain(held) {
            if let Some(i) = instance_of(c, generics) {
                out.insert(c.to_string(), i);
            }
        }
    }
    out
}

/// The instances' modules, as source appended to the kernel's text, and
/// where each copy of a generic function starts in it.
#[derive(Clone, Debug)]
pub struct InstanceSource {
    /// The text to append.
    pub text: String,
    /// For each instance module: the line (0-based, in `text`) where the
    /// copy starts, and the kernel line (1-based) it was copied from.
    pub lines: BTreeMap<String, (u32, u32)>,
}

/// The source of the instances' modules, appended to the kernel's text.
pub fn instance_source(
    instances: &BTreeMap<String, Instance>,
    generics: &BTreeMap<String, GenericFn>,
) -> InstanceSource {
    let mut by_module: BTreeMap<String, &Instance> = BTreeMap::new();
    for i in instances.values() {
        by_module.insert(i.module(), i);
    }
    let mut s = String::from(
        "// Instances of the generic functions above (mir-import's monomorphisation).\n",
    );
    let mut lines = BTreeMap::new();
    for (module, i) in by_module {
        let Some(g) = generics.get(&i.def) else {
            continue;
        };
        // The copy first: a module is written whole or not at all.
        let Some(text) = g.copy(&i.kept()) else {
            continue;
        };
        s.push_str(&format!(
            "#[doc(hidden)]\npub mod {module} {{\n#[allow(unused_imports)]\nuse super::*;\n"
        ));
        for (p, t) in g.params.iter().zip(&i.args) {
            if let Some(t) = t {
                s.push_str(&format!("pub(super) type {p} = {};\n", t.to_rust_source()));
            }
        }
        for (p, value) in g.consts.iter().zip(&i.consts) {
            s.push_str(&format!(
                "pub(super) const {}: {} = {value};\n",
                p.name, p.ty
            ));
        }
        lines.insert(module, (s.matches('\n').count() as u32, g.line));
        s.push_str(&text);
        s.push_str("\n}\n");
    }
    InstanceSource { text: s, lines }
}

/// Moves the spans of the instances' bodies from the appended copy back to
/// the generic function's lines in the kernel's file, whose text ends at
/// line `kernel_lines` (the copy starts at `kernel_lines + 2`).
pub fn map_instance_spans(krate: &mut Crate, src: &InstanceSource, file: &str, kernel_lines: u32) {
    let first_appended = kernel_lines + 2;
    for body in krate.bodies.values_mut() {
        let segs = &body.path.segments;
        let Some(module) = segs.get(1).map(|s| s.name.clone()) else {
            continue;
        };
        if segs.first().is_none_or(|s| s.name != KERNEL_MODULE) {
            continue;
        }
        let Some(&(copy_line, orig_line)) = src.lines.get(&module) else {
            continue;
        };
        let copy_abs = first_appended + copy_line;
        body.map_spans(|sp| {
            if sp.file == file && sp.line >= copy_abs {
                let delta = copy_abs - orig_line;
                sp.line -= delta;
                sp.end_line = sp.end_line.saturating_sub(delta);
            }
        });
    }
}

/// Points every call of an instance at its body.
pub fn link_instances(
    krate: &mut Crate,
    instances: &BTreeMap<String, Instance>,
    generics: &BTreeMap<String, GenericFn>,
) {
    for (call, i) in instances {
        if let Some(body) = generics.get(&i.def).and_then(|g| g.instance_body(krate, i)) {
            krate.call_aliases.insert(call.clone(), body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::generic::tests::SRC;
    use super::*;

    #[test]
    fn an_instance_module_is_named_by_its_function_and_arguments() {
        let i = Instance {
            def: "kernel::twice".into(),
            args: vec![Some(Ty::Adt(Path {
                segments: vec![
                    crate::model::PathSegment {
                        name: "kernel".into(),
                        args: vec![],
                    },
                    crate::model::PathSegment {
                        name: "AddN".into(),
                        args: vec![],
                    },
                ],
            }))],
            consts: vec![],
        };
        let m = i.module();
        assert!(
            m.starts_with("__mono_twice__kernel_AddN_") && m.len() == 34,
            "{m}"
        );
        assert_eq!(i.body_path(), format!("kernel::{m}::twice"));
        // Paths that fold to the same readable name still differ.
        let mut other = i.clone();
        other.args = vec![Some(Ty::Adt(Path {
            segments: vec![crate::model::PathSegment {
                name: "kernel_AddN".into(),
                args: vec![],
            }],
        }))];
        assert_ne!(other.module(), m);
        let mut all = BTreeMap::new();
        all.insert("kernel::twice::<kernel::AddN>".to_string(), i);
        let src = instance_source(&all, &generic_fns(SRC));
        assert!(
            src.text
                .contains("pub(super) type O = crate::kernel::AddN;"),
            "{}",
            src.text
        );
        assert!(src.text.contains(&format!("pub mod {m} ")), "{}", src.text);
        assert!(syn::parse_file(&src.text).is_ok(), "{}", src.text);
        // The copy starts on the line the map says.
        let (at, orig) = src.lines[&m];
        assert_eq!(src.text.lines().nth(at as usize), Some("#[inline(never)]"));
        assert_eq!(orig, 3);
    }

    fn call(text: &str) -> Path {
        match crate::parse::parse_type(text) {
            Ok(Ty::Adt(p)) => p,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_const_parameter_is_named_by_a_const_item_of_the_instance_value() {
        let generics = generic_fns(SRC);
        let i = instance_of(&call("kernel::sized::<4>"), &generics).expect("an instance");
        assert_eq!(i.consts, ["4"]);
        let eight = instance_of(&call("kernel::sized::<8>"), &generics).expect("an instance");
        assert_ne!(i.module(), eight.module(), "one module per value");
        let mut all = BTreeMap::new();
        all.insert("kernel::sized::<4>".to_string(), i);
        let src = instance_source(&all, &generic_fns(SRC));
        assert!(
            src.text.contains("pub(super) const N: usize = 4;"),
            "{}",
            src.text
        );
        assert!(
            src.text.contains("fn sized ") && src.text.contains(" () -> usize { N }"),
            "{}",
            src.text
        );
        assert!(syn::parse_file(&src.text).is_ok(), "{}", src.text);
        // A value source could not write back is no instance.
        assert!(instance_of(&call("kernel::sized::<N>"), &generics).is_none());
    }
}
