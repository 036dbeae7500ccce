//! The kernel's generic items as source: which functions and methods are
//! generic ([`generic_fns`]), and the text of a copy that names some of
//! their type parameters through aliases ([`GenericFn::copy`]), with every
//! line where it was, so that spans in the copy map back.

mod find;

pub use find::generic_fns;

use super::Instance;
use crate::model::{Crate, GenericArg, Path, Ty};
use crate::prelude::KERNEL_MODULE;

/// A generic function of the kernel's file: a free function, or a method
/// of an inherent `impl` block with type parameters (`impl<T> Vec3<T>`),
/// whose parameters are the block's.
#[derive(Clone, Debug)]
pub struct GenericFn {
    /// Its type parameters, in order (a method's: its block's).
    pub params: Vec<String>,
    /// Its const parameters, in order (a method's: its block's): each is
    /// named in every copy, by a const item of the instance's value.
    pub consts: Vec<ConstParam>,
    /// The parameters' declarations and where the item's text holds them.
    generics: Generics,
    /// The item's source text, from its first attribute to its closing
    /// brace, as written; for a method, from the block's `impl` to the
    /// method's closing brace, with the block's other items blanked out.
    text: String,
    /// The line (1-based) of the kernel file where the text starts.
    pub(super) line: u32,
    /// For a method, how its copies and its generic body are found.
    method: Option<Method>,
}

/// A const generic parameter (`const N: usize`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstParam {
    /// Its name.
    pub name: String,
    /// Its type as written.
    pub ty: String,
}

/// What sets a generic `impl` block's method apart from a free function.
#[derive(Clone, Debug)]
struct Method {
    /// Where the method's name is in [`GenericFn::text`].
    name_at: std::ops::Range<usize>,
    /// Its name.
    name: String,
    /// The block's key, `<impl@L:C>` (see [`crate::model::normalize_impl_segment`]).
    block: String,
}

/// An item's generic parameters, and where its text holds them.
#[derive(Clone, Debug)]
struct Generics {
    /// The generic parameter list (`<...>`) and the where clause in the text.
    list: Option<std::ops::Range<usize>>,
    where_clause: Option<std::ops::Range<usize>>,
    /// The lifetime parameters, kept in every copy.
    lifetimes: Vec<String>,
    /// Each type parameter's declaration as written (`F: Fn(T) -> T`).
    declarations: Vec<String>,
    /// The where clause's predicates: the parameter each bounds, when it
    /// bounds a bare parameter, and its text.
    predicates: Vec<(Option<String>, String)>,
}

impl Generics {
    /// Reads `g` from an item whose text is `text`; `range` places a span in
    /// it. `None` when a part cannot be placed.
    fn read(
        g: &syn::Generics,
        text: &str,
        range: &dyn Fn(proc_macro2::Span) -> Option<std::ops::Range<usize>>,
    ) -> Option<Generics> {
        use syn::spanned::Spanned;
        let of_span = |s: proc_macro2::Span| range(s).map(|r| text[r].to_string());
        let lifetimes = g
            .params
            .iter()
            .filter_map(|p| match p {
                syn::GenericParam::Lifetime(l) => Some(l.lifetime.to_string()),
                _ => None,
            })
            .collect();
        let declarations = g
            .params
            .iter()
            .filter(|p| matches!(p, syn::GenericParam::Type(_)))
            .map(|p| of_span(p.span()))
            .collect::<Option<_>>()?;
        let list = g.lt_token.zip(g.gt_token).and_then(|(lt, gt)| {
            let (a, b) = (range(lt.span)?.start, range(gt.span)?.end);
            (a <= b).then_some(a..b)
        });
        let where_clause = g.where_clause.as_ref().and_then(|w| range(w.span()));
        let predicates = g
            .where_clause
            .iter()
            .flat_map(|w| w.predicates.iter())
            .map(|p| {
                let on = match p {
                    syn::WherePredicate::Type(t) => match &t.bounded_ty {
                        syn::Type::Path(tp) if tp.qself.is_none() => {
                            tp.path.get_ident().map(ToString::to_string)
                        }
                        _ => None,
                    },
                    _ => None,
                };
                Some((on, of_span(p.span())?))
            })
            .collect::<Option<_>>()?;
        Some(Generics {
            list,
            where_clause,
            lifetimes,
            declarations,
            predicates,
        })
    }

    /// Rewrites the parameter list and the where clause in `text` for a copy
    /// that keeps the parameters marked in `keep` (see [`GenericFn::copy`]).
    fn rewrite(&self, text: &mut [u8], params: &[String], keep: &[bool]) -> Option<()> {
        let kept: Vec<&str> = self
            .lifetimes
            .iter()
            .map(String::as_str)
            .chain(
                self.declarations
                    .iter()
                    .zip(keep)
                    .filter(|(_, k)| **k)
                    .map(|(d, _)| d.as_str()),
            )
            .collect();
        if let Some(r) = &self.list {
            let with = if kept.is_empty() {
                String::new()
            } else {
                format!("<{}>", kept.join(", "))
            };
            blank(text, r.clone(), &with)?;
        }
        if let Some(r) = &self.where_clause {
            let kept_params: Vec<&String> = params
                .iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| p)
                .collect();
            let preds: Vec<&str> = self
                .predicates
                .iter()
                .filter(|(on, _)| on.as_ref().is_some_and(|p| kept_params.contains(&p)))
                .map(|(_, t)| t.as_str())
                .collect();
            let with = if preds.is_empty() {
                String::new()
            } else {
                format!("where {}", preds.join(", "))
            };
            blank(text, r.clone(), &with)?;
        }
        Some(())
    }
}

impl GenericFn {
    /// The item's text for an instance that keeps the parameters marked in
    /// `keep` generic (closure arguments, which source cannot name) and
    /// names every other one through a type alias: the generic parameter
    /// list holds the lifetimes and the kept declarations, the where clause
    /// the kept parameters' predicates. Every other character, and every
    /// line break, stays where it was, so a span in the copy is the
    /// original's, lines shifted. `None` if the kept text would not fit
    /// where the original was (it always does when a parameter is dropped).
    ///
    /// A method's copy is its block with that method alone, renamed (see
    /// [`GenericFn::copy_name`]) so that it does not clash with the generic
    /// block's own method of the same name.
    pub fn copy(&self, keep: &[bool]) -> Option<String> {
        let mut text = self.text.clone().into_bytes();
        self.generics.rewrite(&mut text, &self.params, keep)?;
        if let Some(m) = &self.method {
            let mut t = text[..m.name_at.start].to_vec();
            t.extend_from_slice(self.copy_name().as_bytes());
            t.extend_from_slice(&text[m.name_at.end..]);
            t.extend_from_slice(b"\n}");
            text = t;
        }
        String::from_utf8(text).ok()
    }

    /// The function's name in its copies: a method's is prefixed.
    pub fn copy_name(&self) -> String {
        match &self.method {
            Some(m) => format!("__mono_{}", m.name),
            None => String::new(),
        }
    }

    /// The type arguments a call gives the parameters: a free function's on
    /// its last segment, a method's on its type's (`kernel::Vec3::<f32>::dot`).
    pub fn args_of(&self, call: &Path) -> Vec<Ty> {
        let n = call.segments.len();
        let seg = match self.method {
            Some(_) if n >= 2 => &call.segments[n - 2],
            _ => match call.segments.last() {
                Some(s) => s,
                None => return Vec::new(),
            },
        };
        seg.args
            .iter()
            .filter_map(|a| match a {
                GenericArg::Type(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    /// The const arguments a call gives the const parameters, as printed: a
    /// free function's on its last segment (`kernel::fill::<4>`), a
    /// method's on its type's (`kernel::Mat::<2, 3>::zero`); `None` unless
    /// there is one per parameter and each is a literal that source can
    /// write as it is printed (an integer, `true`, `false`, a character).
    pub fn const_args_of(&self, call: &Path) -> Option<Vec<String>> {
        let n = call.segments.len();
        let seg = match self.method {
            Some(_) if n >= 2 => &call.segments[n - 2],
            _ => call.segments.last()?,
        };
        let args: Vec<String> = seg
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArg::Const(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        (args.len() == self.consts.len() && args.iter().all(|a| literal(a))).then_some(args)
    }

    /// The body rustc printed for the generic item itself: a free
    /// function's at `def`, a method's under its block
    /// (`kernel::<impl at kernel.rs:7:1: 7:80>::dot`).
    pub fn generic_body(&self, krate: &Crate, def: &str) -> Option<crate::model::BodyId> {
        let Some(m) = &self.method else {
            return krate.fn_body(def);
        };
        krate.bodies.iter().find_map(|(id, b)| {
            let segs = &b.path.segments;
            (matches!(b.kind, crate::model::BodyKind::Fn { ctfe: false })
                && segs.len() == 3
                && segs[0].name == KERNEL_MODULE
                && crate::model::normalize_impl_segment(&segs[1].name).as_deref()
                    == Some(m.block.as_str())
                && segs[2].name == m.name)
                .then_some(id)
        })
    }

    /// The def path of an instance's body: a free function's copy is
    /// `kernel::<module>::<fn>`; a method's is under its copied block, found
    /// by its module and copy name.
    pub fn instance_body(&self, krate: &Crate, i: &Instance) -> Option<String> {
        let module = i.module();
        if self.method.is_none() {
            let path = i.body_path();
            return krate.fn_body(&path).map(|_| path);
        }
        let name = self.copy_name();
        krate.bodies.values().find_map(|b| {
            let segs = &b.path.segments;
            (matches!(b.kind, crate::model::BodyKind::Fn { ctfe: false })
                && segs.len() == 4
                && segs[0].name == KERNEL_MODULE
                && segs[1].name == module
                && segs[3].name == name)
                .then(|| b.path.def_path())
        })
    }
}

/// Overwrites `text[range]` with `with`, then spaces, keeping line breaks;
/// `None` (and `text` unchanged) if `with` does not fit in the characters
/// that are not line breaks.
pub(super) fn blank(text: &mut [u8], range: std::ops::Range<usize>, with: &str) -> Option<()> {
    let room = text
        .get(range.clone())?
        .iter()
        .filter(|b| **b != b'\n')
        .count();
    if with.len() > room {
        return None;
    }
    let mut fill = with.bytes();
    for b in &mut text[range] {
        if *b != b'\n' {
            *b = fill.next().unwrap_or(b' ');
        }
    }
    Some(())
}

/// Whether a printed const argument is a literal that source reads back
/// as the same value: an integer with or without its suffix (`4`,
/// `-3_i32`), `true`, `false`, or a plain character (`'a'`).
pub(super) fn literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let integer = digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    let character = text.len() == 3
        && text.starts_with('\'')
        && text.ends_with('\'')
        && text.as_bytes()[1].is_ascii_graphic()
        && !matches!(text.as_bytes()[1], b'\\' | b'\'');
    integer || character || text == "true" || text == "false"
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A kernel with a generic function, a const-generic one and a plain
    /// one, which is not generic.
    pub(in crate::mono) const SRC: &str = "use crate::gpu::*;\n\
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
        assert_eq!(
            g.keys().collect::<Vec<_>>(),
            ["kernel::sized", "kernel::twice"]
        );
        assert_eq!(g["kernel::sized"].params, [""; 0]);
        assert_eq!(
            g["kernel::sized"].consts,
            [ConstParam {
                name: "N".into(),
                ty: "usize".into()
            }]
        );
        let t = &g["kernel::twice"];
        assert_eq!(t.params, ["O"]);
        assert_eq!(t.line, 3, "from the attribute on");
        let t = t.copy(&[false]).expect("the copy naming every parameter");
        assert!(t.starts_with("#[inline(never)]\npub fn twice<'a>"), "{t}");
        assert!(!t.contains("O: Op") && !t.contains("where"), "{t}");
        // Every line break is where it was.
        assert_eq!(t.matches('\n').count(), 6, "{t}");
        assert!(t.ends_with("op.apply(op.apply(x)) + O::ID\n}"), "{t}");
    }

    #[test]
    fn a_generic_function_nested_in_a_body_is_found_under_its_function() {
        const NESTED: &str = "pub extern \"C\" fn launch(x: u32) -> u32 {\n\
            #[inline(never)]\n\
            fn id<T: Copy>(v: T) -> T { v }\n\
            fn plain() {\n\
                fn deeper<U>(u: U) -> U { u }\n\
            }\n\
            id(x)\n\
            }\n";
        let g = generic_fns(NESTED);
        assert_eq!(
            g.keys().collect::<Vec<_>>(),
            ["kernel::launch::id", "kernel::launch::plain::deeper"]
        );
        // One that names an item declared beside it is not copied: the
        // kernel's module, where copies go, does not see that item.
        const SIBLING: &str = "pub extern \"C\" fn launch(x: u32) -> u32 {\n\
            const K: u32 = 3;\n\
            fn scaled<T: Into<u32>>(v: T) -> u32 { v.into() * K }\n\
            fn alone<T: Copy>(v: T) -> T { v }\n\
            scaled(x) + alone(x)\n\
            }\n";
        assert_eq!(
            generic_fns(SIBLING).keys().collect::<Vec<_>>(),
            ["kernel::launch::alone"]
        );
        let with_use = "fn launch() {\n use core::mem::size_of;\n fn f<T>() -> usize { 0 }\n}\n";
        assert!(generic_fns(with_use).is_empty());
        let id = &g["kernel::launch::id"];
        assert_eq!(id.line, 2);
        let t = id.copy(&[false]).expect("the copy");
        // The parameter list is blanked out, its columns kept.
        assert!(t.starts_with("#[inline(never)]\nfn id "), "{t}");
        assert!(t.contains(" (v: T) -> T { v }") && !t.contains('<'), "{t}");
    }

    #[test]
    fn a_copy_keeps_closure_parameters_and_their_predicates() {
        const MIXED: &str = "#[inline(never)]\n\
            fn apply_unary<T: Copy, F>(f: F, x: T) -> T\n\
            where\n\
                F: FnOnce(T) -> T,\n\
                T: Default,\n\
            {\n\
                f(x)\n\
            }\n";
        let g = generic_fns(MIXED);
        let g = &g["kernel::apply_unary"];
        assert_eq!(g.params, ["T", "F"]);
        let t = g.copy(&[false, true]).expect("a copy keeping F");
        assert!(t.contains("fn apply_unary<F> "), "{t}");
        assert!(t.contains(" (f: F, x: T) -> T"), "{t}");
        assert!(
            t.contains("where") && t.contains("F: FnOnce(T) -> T"),
            "{t}"
        );
        assert!(!t.contains("T: Default") && !t.contains("T: Copy"), "{t}");
        assert_eq!(t.matches('\n').count(), 7, "{t}");
        assert!(syn::parse_str::<syn::ItemFn>(&t).is_ok(), "{t}");
        // Naming both: no generics, no where clause.
        let t = g.copy(&[false, false]).expect("a copy naming both");
        assert!(t.contains("fn apply_unary "), "{t}");
        assert!(!t.contains("where"), "{t}");
    }

    #[test]
    fn a_generic_blocks_method_is_copied_alone_and_renamed() {
        const BLOCK: &str = "pub struct V<T>(T);\n\
            impl<T: Copy> V<T>\n\
            where\n\
                T: Default,\n\
            {\n\
                pub fn first(&self) -> T { self.0 }\n\
                #[inline(never)]\n\
                pub fn get(&self) -> T {\n\
                    self.first()\n\
                }\n\
                fn own<U>(&self, u: U) -> U { u }\n\
            }\n\
            impl<T> Clone for V<T> where T: Clone { fn clone(&self) -> Self { V(self.0.clone()) } }\n";
        let g = generic_fns(BLOCK);
        // Methods with parameters of their own, and trait blocks, are not
        // instantiated.
        assert_eq!(
            g.keys().collect::<Vec<_>>(),
            ["kernel::V::first", "kernel::V::get"]
        );
        let get = &g["kernel::V::get"];
        assert_eq!(get.params, ["T"]);
        assert_eq!(get.line, 2, "from the block's `impl`");
        let t = get.copy(&[false]).expect("a copy naming T");
        assert!(t.starts_with("impl ") && t.contains(" V<T>\n"), "{t}");
        assert!(!t.contains("where") && !t.contains("Default"), "{t}");
        assert!(!t.contains("fn first"), "the block's other items go: {t}");
        assert!(t.contains("pub fn __mono_get(&self) -> T {"), "{t}");
        assert!(t.ends_with("}\n}"), "{t}");
        // Every line break of the block up to the method is kept.
        assert_eq!(t.matches('\n').count(), 9, "{t}");
        assert!(syn::parse_str::<syn::ItemImpl>(&t).is_ok(), "{t}");
        let call = Path {
            segments: ["kernel", "V", "get"]
                .iter()
                .enumerate()
                .map(|(i, n)| crate::model::PathSegment {
                    name: n.to_string(),
                    args: if i == 1 {
                        vec![GenericArg::Type(Ty::Int(crate::model::IntTy::U32))]
                    } else {
                        vec![]
                    },
                })
                .collect(),
        };
        assert_eq!(get.args_of(&call), [Ty::Int(crate::model::IntTy::U32)]);
    }

    #[test]
    fn a_const_parameter_named_like_a_kernel_type_is_not_copied() {
        let src = "pub struct Buf<const N: usize> { b: [u32; N] }\n\
            impl<const N: usize> Buf<N> { pub fn len(&self) -> usize { N } }\n\
            pub struct Wide { x: u32 }\n\
            pub struct Grid<const Wide: usize> { g: [u32; Wide] }\n\
            impl<const Wide: usize> Grid<Wide> { pub fn cells(&self) -> usize { Wide } }\n\
            fn fill<const N: usize>() -> [u32; N] { [0; N] }\n";
        let g = generic_fns(src);
        assert!(g.contains_key("kernel::Buf::len"), "{:?}", g.keys());
        assert!(g.contains_key("kernel::fill"), "{:?}", g.keys());
        // A copy's `Grid<Wide>` would name the struct `Wide`.
        assert!(!g.contains_key("kernel::Grid::cells"), "{:?}", g.keys());
        assert_eq!(g["kernel::Buf::len"].consts[0].name, "N");
    }
}
