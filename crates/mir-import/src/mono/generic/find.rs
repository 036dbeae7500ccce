//! Finding the kernel's generic items in its source: free functions with
//! type or const parameters, generic functions nested in a body, and the
//! methods of generic inherent `impl` blocks, each with the text and line
//! that [`GenericFn::copy`] rewrites.

use std::collections::{BTreeMap, BTreeSet};

use super::{ConstParam, GenericFn, Generics, Method, blank};
use crate::prelude::KERNEL_MODULE;

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
