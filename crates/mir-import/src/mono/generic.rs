//! The kernel's generic items as source: which functions and methods are
//! generic ([`generic_fns`]), and the text of a copy that names some of
//! their type parameters through aliases ([`GenericFn::copy`]), with every
//! line where it was, so that spans in the copy map back.

use std::collections::{BTreeMap, BTreeSet};

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

/// Overwrites `text[range]` with `with`, then spaces, keeping line breaks;
/// `None` (and `text` unchanged) if `with` does not fit in the characters
/// that are not line breaks.
fn blank(text: &mut [u8], range: std::ops::Range<usize>, with: &str) -> Option<()> {
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

/// The kernel's generic functions (see [`GenericFn`]) by def path as calls
/// print it (`kernel::twice`, `kernel::Vec3::dot`): free functions with type
/// or const parameters, and the methods without parameters of their
/// own of inherent `impl` blocks whose self type is a kernel type applied to
/// exactly the block's type parameters (`impl<T> Vec3<T>`). A generic
/// function declared in another function's body is one too
/// (`kernel::launch::helper`): its copy goes beside the others, in the
/// kernel's module, which it cannot tell from its own (a nested item sees
/// its module's items, not its function's locals). A source syn cannot read
/// has none (the attribute recovery reports it).
pub fn generic_fns(source: &str) -> BTreeMap<String, GenericFn> {
    let Ok(file) = syn::parse_file(source) else {
        return BTreeMap::new();
    };
    let offsets = Offsets::new(source);
    let mut out = BTreeMap::new();
    for item in &file.items {
        match item {
            syn::Item::Fn(f) => free_fns(source, &offsets, f, KERNEL_MODULE, &[], &mut out),
            syn::Item::Impl(imp) => {
                for (name, g) in impl_methods(source, &offsets, imp) {
                    out.insert(name, g);
                }
            }
            _ => {}
        }
    }
    // A copy names a const parameter by a const item, which a type of the
    // same name would shadow where the copy writes `Mat<R, C>` (a path
    // argument resolves as a type first): such a function is not copied,
    // and its calls stay refused by name.
    let types: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Trait(t) => Some(t.ident.to_string()),
            item => crate::attrs::declared_type_name(item),
        })
        .collect();
    out.retain(|_, g| g.consts.iter().all(|c| !types.contains(&c.name)));
    out
}

/// Whether a printed const argument is a literal that source reads back
/// as the same value: an integer with or without its suffix (`4`,
/// `-3_i32`), `true`, `false`, or a plain character (`'a'`).
fn literal(text: &str) -> bool {
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

/// A free function's type and const parameters, when it has some.
fn fn_params(
    g: &syn::Generics,
    text_of: &dyn Fn(proc_macro2::Span) -> Option<String>,
) -> Option<(Vec<String>, Vec<ConstParam>)> {
    use syn::spanned::Spanned;
    let (mut types, mut consts) = (Vec::new(), Vec::new());
    for p in &g.params {
        match p {
            syn::GenericParam::Type(t) => types.push(t.ident.to_string()),
            syn::GenericParam::Const(c) => consts.push(ConstParam {
                name: c.ident.to_string(),
                ty: text_of(c.ty.span())?,
            }),
            syn::GenericParam::Lifetime(_) => {}
        }
    }
    (!types.is_empty() || !consts.is_empty()).then_some((types, consts))
}

/// Where the text from `from` places a span: a byte range in it.
fn placer<'a>(
    offsets: &'a Offsets<'a>,
    from: usize,
    len: usize,
) -> impl Fn(proc_macro2::Span) -> Option<std::ops::Range<usize>> + 'a {
    move |s: proc_macro2::Span| {
        let a = offsets.at(s.start())?.checked_sub(from)?;
        let b = offsets.at(s.end())?.checked_sub(from)?;
        (a <= b && b <= len).then_some(a..b)
    }
}

/// `f` at `prefix::f` if it is generic, and the generic functions declared
/// among its body's statements, at `prefix::f::inner`, and so on. `scope`
/// holds the items that the blocks around `f` declare (none for a function
/// of the kernel's module).
fn free_fns(
    source: &str,
    offsets: &Offsets,
    f: &syn::ItemFn,
    prefix: &str,
    scope: &[&syn::Item],
    out: &mut BTreeMap<String, GenericFn>,
) {
    let path = format!("{prefix}::{}", f.sig.ident);
    if let Some(g) = free_fn(source, offsets, f) {
        // A nested function's copy goes to the kernel's module, where the
        // items declared in the blocks around it are out of sight: one
        // that may name them (a `use` there, or such an item's name in its
        // text) is not copied, and its calls stay refused by name.
        if !sees_siblings(&g.text, f, scope) {
            out.insert(path.clone(), g);
        }
    }
    let mut inner_scope = scope.to_vec();
    inner_scope.extend(f.block.stmts.iter().filter_map(|st| match st {
        syn::Stmt::Item(item) => Some(item),
        _ => None,
    }));
    for item in &inner_scope[scope.len()..] {
        if let syn::Item::Fn(inner) = item {
            free_fns(source, offsets, inner, &path, &inner_scope, out);
        }
    }
}

/// Whether the nested function `f`, whose text is `text`, may name an item
/// of `items` (those the blocks around it declare): there is a `use` or a
/// macro among them, or another item's name appears in `text` as a word.
fn sees_siblings(text: &str, f: &syn::ItemFn, items: &[&syn::Item]) -> bool {
    let words: BTreeSet<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    items.iter().any(|item| {
        let name = match item {
            syn::Item::Use(_) | syn::Item::Macro(_) => return true,
            syn::Item::Fn(g) if g.sig.ident == f.sig.ident => return false,
            syn::Item::Fn(g) => g.sig.ident.to_string(),
            syn::Item::Const(c) => c.ident.to_string(),
            syn::Item::Static(c) => c.ident.to_string(),
            syn::Item::Struct(c) => c.ident.to_string(),
            syn::Item::Enum(c) => c.ident.to_string(),
            syn::Item::Union(c) => c.ident.to_string(),
            syn::Item::Type(c) => c.ident.to_string(),
            syn::Item::Trait(c) => c.ident.to_string(),
            syn::Item::Mod(c) => c.ident.to_string(),
            // An `impl` declares no name of its own.
            _ => return false,
        };
        words.contains(name.as_str())
    })
}

fn free_fn(source: &str, offsets: &Offsets, f: &syn::ItemFn) -> Option<GenericFn> {
    use syn::spanned::Spanned;
    let first = f
        .attrs
        .first()
        .map_or_else(|| f.span().start(), |a| a.span().start());
    let from = offsets.at(first)?;
    let to = offsets.at(f.block.brace_token.span.close().end())?;
    let text = source.get(from..to)?.to_string();
    let range = placer(offsets, from, text.len());
    let (params, consts) = fn_params(&f.sig.generics, &|sp| {
        range(sp).map(|r| text[r].to_string())
    })?;
    let generics = Generics::read(&f.sig.generics, &text, &range)?;
    let g = GenericFn {
        params,
        consts,
        generics,
        text,
        line: first.line as u32,
        method: None,
    };
    // The copy with every parameter named must exist.
    g.copy(&vec![false; g.params.len()])?;
    Some(g)
}

/// The methods of an inherent generic `impl` block (see [`generic_fns`]).
fn impl_methods(source: &str, offsets: &Offsets, imp: &syn::ItemImpl) -> Vec<(String, GenericFn)> {
    use syn::spanned::Spanned;
    let mut out = Vec::new();
    if imp.trait_.is_some() || !imp.attrs.is_empty() {
        return out;
    }
    // Type and const parameters (`impl<const R: usize, const C: usize>
    // Mat<R, C>`): each copy names a const by a const item of its value.
    let whole = |sp: proc_macro2::Span| {
        let (a, b) = (offsets.at(sp.start())?, offsets.at(sp.end())?);
        source.get(a..b).map(str::to_string)
    };
    let Some((params, consts)) = fn_params(&imp.generics, &whole) else {
        return out;
    };
    // The block's parameters in declaration order, as its type applies them.
    let declared: Vec<String> = imp
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) => Some(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    // `Vec3<T>`: one segment, applied to exactly the block's parameters.
    let syn::Type::Path(tp) = &*imp.self_ty else {
        return out;
    };
    let [seg] = tp.path.segments.iter().collect::<Vec<_>>()[..] else {
        return out;
    };
    let args: Option<Vec<String>> = match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter(|a| !matches!(a, syn::GenericArgument::Lifetime(_)))
            .map(|a| match a {
                syn::GenericArgument::Type(syn::Type::Path(p)) if p.qself.is_none() => {
                    p.path.get_ident().map(ToString::to_string)
                }
                _ => None,
            })
            .collect(),
        _ => None,
    };
    if tp.qself.is_some() || args.as_ref() != Some(&declared) {
        return out;
    }
    let start = imp.impl_token.span.start();
    let Some(from) = offsets.at(start) else {
        return out;
    };
    let block = format!("<impl@{}:{}>", start.line, start.column + 1);
    for (at, item) in imp.items.iter().enumerate() {
        let syn::ImplItem::Fn(f) = item else { continue };
        if f.sig
            .generics
            .params
            .iter()
            .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
        {
            continue;
        }
        let Some(to) = offsets.at(f.block.brace_token.span.close().end()) else {
            continue;
        };
        let Some(text) = source.get(from..to) else {
            continue;
        };
        let mut bytes = text.as_bytes().to_vec();
        let range = placer(offsets, from, bytes.len());
        // The block's other items before the method go; those after it are
        // past the text's end.
        let mut ok = true;
        for other in &imp.items[..at] {
            match range(other.span()) {
                Some(r) => ok &= blank(&mut bytes, r, "").is_some(),
                None => ok = false,
            }
        }
        let (Ok(text), Some(name_at), Some(generics)) = (
            String::from_utf8(bytes),
            range(f.sig.ident.span()),
            Generics::read(&imp.generics, text, &range),
        ) else {
            continue;
        };
        if !ok {
            continue;
        }
        let g = GenericFn {
            params: params.clone(),
            consts: consts.clone(),
            generics,
            text,
            line: start.line as u32,
            method: Some(Method {
                name_at,
                name: f.sig.ident.to_string(),
                block: block.clone(),
            }),
        };
        if g.copy(&vec![false; g.params.len()]).is_none() {
            continue;
        }
        out.push((
            format!("{KERNEL_MODULE}::{}::{}", seg.ident, f.sig.ident),
            g,
        ));
    }
    out
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
