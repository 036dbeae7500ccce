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
//! Not instantiated (the call stays refused, with its diagnostic): type
//! arguments that source cannot name (closures, `impl Trait`, anything
//! opaque), const generic parameters, and generic methods of `impl` blocks.

use std::collections::BTreeMap;

use crate::model::{Callee, Crate, GenericArg, Path, TerminatorKind, Ty};
use crate::prelude::KERNEL_MODULE;

/// A free generic function of the kernel's file.
#[derive(Clone, Debug)]
pub struct GenericFn {
    /// Its type parameters, in order.
    pub params: Vec<String>,
    /// The item's source text, from its first attribute to its closing
    /// brace, with the generic parameter list (lifetimes kept) and the where
    /// clause blanked out: every other character, and every line break, where
    /// it was, so that a span in the copy is the original's, lines shifted.
    text: String,
    /// The line (1-based) of the kernel file where the item starts.
    line: u32,
}

/// Byte offsets of `(line, column)` positions (proc-macro2's: lines
/// 1-based, columns in characters, 0-based) in `source`.
struct Offsets<'s> {
    source: &'s str,
    line_starts: Vec<usize>,
}

impl<'s> Offsets<'s> {
    fn new(source: &'s str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        Offsets {
            source,
            line_starts,
        }
    }

    fn at(&self, p: proc_macro2::LineColumn) -> Option<usize> {
        let start = *self.line_starts.get(p.line.checked_sub(1)?)?;
        let line = &self.source[start..];
        let col = line
            .char_indices()
            .nth(p.column)
            .map_or(line.len(), |(i, _)| i);
        Some(start + col)
    }
}

/// Overwrites `text[range]` with `with`, then spaces, keeping line breaks.
fn blank(text: &mut [u8], range: std::ops::Range<usize>, with: &str) {
    let mut fill = with.bytes();
    for b in &mut text[range] {
        if *b != b'\n' {
            *b = fill.next().unwrap_or(b' ');
        }
    }
}

/// The kernel's free functions with type parameters (and no const ones), by
/// def path (`kernel::twice`). A source syn cannot read has none (the
/// attribute recovery reports it).
pub fn generic_fns(source: &str) -> BTreeMap<String, GenericFn> {
    use syn::spanned::Spanned;
    let Ok(file) = syn::parse_file(source) else {
        return BTreeMap::new();
    };
    let offsets = Offsets::new(source);
    let mut out = BTreeMap::new();
    for item in &file.items {
        let syn::Item::Fn(f) = item else { continue };
        let g = &f.sig.generics;
        let params: Vec<String> = g
            .params
            .iter()
            .filter_map(|p| match p {
                syn::GenericParam::Type(t) => Some(t.ident.to_string()),
                _ => None,
            })
            .collect();
        let has_const = g
            .params
            .iter()
            .any(|p| matches!(p, syn::GenericParam::Const(_)));
        if params.is_empty() || has_const {
            continue;
        }
        let first = f
            .attrs
            .first()
            .map_or_else(|| f.span().start(), |a| a.span().start());
        let (Some(from), Some(to)) = (
            offsets.at(first),
            offsets.at(f.block.brace_token.span.close().end()),
        ) else {
            continue;
        };
        let mut text = source.as_bytes()[from..to].to_vec();
        let local = |p: proc_macro2::LineColumn| offsets.at(p).map(|o| o.saturating_sub(from));
        let lifetimes: Vec<String> = g
            .params
            .iter()
            .filter_map(|p| match p {
                syn::GenericParam::Lifetime(l) => Some(l.lifetime.to_string()),
                _ => None,
            })
            .collect();
        let keep = if lifetimes.is_empty() {
            String::new()
        } else {
            format!("<{}>", lifetimes.join(", "))
        };
        if let (Some(lt), Some(gt)) = (&g.lt_token, &g.gt_token)
            && let (Some(a), Some(b)) = (local(lt.span.start()), local(gt.span.end()))
            && a <= b
            && b <= text.len()
        {
            blank(&mut text, a..b, &keep);
        }
        if let Some(w) = &g.where_clause
            && let (Some(a), Some(b)) = (local(w.span().start()), local(w.span().end()))
            && a <= b
            && b <= text.len()
        {
            blank(&mut text, a..b, "");
        }
        let Ok(text) = String::from_utf8(text) else {
            continue;
        };
        out.insert(
            format!("{KERNEL_MODULE}::{}", f.sig.ident),
            GenericFn {
                params,
                text,
                line: first.line as u32,
            },
        );
    }
    out
}

/// One instance: a generic function and its type arguments.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instance {
    /// The generic function's def path (`kernel::twice`).
    pub def: String,
    /// Its type arguments.
    pub args: Vec<Ty>,
}

impl Instance {
    /// The module that holds the instance (`__mono_twice__kernel_AddN_8c1f03a2`):
    /// made of its function and arguments only, so it does not depend on the
    /// order instances are found in. The readable part folds punctuation
    /// (`a::b_c` and `a_b::c` read alike), so a hash of the whole instance
    /// (FNV-1a, 32 bits, the same in every run) keeps two instances apart.
    pub fn module(&self) -> String {
        let name = self.def.rsplit("::").next().unwrap_or("f");
        let mut m = format!("__mono_{name}");
        let mut key = self.def.clone();
        for a in &self.args {
            m.push_str("__");
            let text = a.to_string();
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

    /// The def path of the instance's body (`kernel::__mono_twice__AddN::twice`).
    pub fn body_path(&self) -> String {
        let name = self.def.rsplit("::").next().unwrap_or("f");
        format!("{KERNEL_MODULE}::{}::{name}", self.module())
    }
}

/// Whether `t` can be written in source outside the generic body: no
/// closure, coroutine or other opaque type, no type parameter left.
fn nameable(t: &Ty) -> bool {
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

/// The instance a call names, when it is a call of a generic function of
/// the kernel with type arguments that source can name.
pub fn instance_of(path: &Path, generics: &BTreeMap<String, GenericFn>) -> Option<Instance> {
    let def = path.def_path();
    let g = generics.get(&def)?;
    let args: Vec<Ty> = path
        .segments
        .last()?
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArg::Type(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    (args.len() == g.params.len() && args.iter().all(nameable)).then_some(Instance { def, args })
}

/// Every instance that the function bodies reachable from the kernels call,
/// keyed by the call path as printed (what [`Crate::call_aliases`] maps).
/// The generic bodies themselves are skipped: their calls name type
/// parameters, not instances.
pub fn instances(
    krate: &Crate,
    generics: &BTreeMap<String, GenericFn>,
) -> BTreeMap<String, Instance> {
    let mut out = BTreeMap::new();
    for (path, &id) in &krate.reachable_function_bodies() {
        if generics.contains_key(path) {
            continue;
        }
        for bb in krate.bodies[id].blocks.values() {
            if let TerminatorKind::Call {
                func: Callee::Item(c),
                ..
            } = &bb.terminator.kind
                && let Some(i) = instance_of(c, generics)
            {
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
        s.push_str(&format!(
            "#[doc(hidden)]\npub mod {module} {{\n#[allow(unused_imports)]\nuse super::*;\n"
        ));
        for (p, t) in g.params.iter().zip(&i.args) {
            s.push_str(&format!("pub(super) type {p} = {};\n", t.to_rust_source()));
        }
        lines.insert(module, (s.matches('\n').count() as u32, g.line));
        s.push_str(&g.text);
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
pub fn link_instances(krate: &mut Crate, instances: &BTreeMap<String, Instance>) {
    for (call, i) in instances {
        let body = i.body_path();
        if krate.fn_body(&body).is_some() {
            krate.call_aliases.insert(call.clone(), body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "use crate::gpu::*;\n\
        pub trait Op { const ID: u32; fn apply(&self, x: u32) -> u32; }\n\
        #[inline(never)]\n\
        pub fn twice<'a, O: Op>(op: &'a O, x: u32) -> u32\n\
        where\n\
            O: Sized,\n\
        {\n\
            op.apply(op.apply(x)) + O::ID\n\
        }\n\
        fn sized<const N: usize>() -> usize { N }\n\
        fn plain(x: u32) -> u32 { x }\n";

    #[test]
    fn a_copy_keeps_lines_and_lifetimes_and_loses_type_parameters() {
        let g = generic_fns(SRC);
        assert_eq!(g.keys().collect::<Vec<_>>(), ["kernel::twice"]);
        let t = &g["kernel::twice"];
        assert_eq!(t.params, ["O"]);
        assert_eq!(t.line, 3, "from the attribute on");
        assert!(
            t.text.starts_with("#[inline(never)]\npub fn twice<'a>"),
            "{}",
            t.text
        );
        assert!(
            !t.text.contains("O: Op") && !t.text.contains("where"),
            "{}",
            t.text
        );
        // Every line break is where it was.
        assert_eq!(t.text.matches('\n').count(), 6, "{}", t.text);
        assert!(
            t.text.ends_with("op.apply(op.apply(x)) + O::ID\n}"),
            "{}",
            t.text
        );
    }

    #[test]
    fn an_instance_module_is_named_by_its_function_and_arguments() {
        let i = Instance {
            def: "kernel::twice".into(),
            args: vec![Ty::Adt(Path {
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
            })],
        };
        let m = i.module();
        assert!(
            m.starts_with("__mono_twice__kernel_AddN_") && m.len() == 34,
            "{m}"
        );
        assert_eq!(i.body_path(), format!("kernel::{m}::twice"));
        // Paths that fold to the same readable name still differ.
        let mut other = i.clone();
        other.args = vec![Ty::Adt(Path {
            segments: vec![crate::model::PathSegment {
                name: "kernel_AddN".into(),
                args: vec![],
            }],
        })];
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
}
