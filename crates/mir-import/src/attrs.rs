//! Attributes that rustc's MIR text drops, recovered from the kernel source with syn.
//!
//! The MIR printer shows neither `#[inline(never)]`, `#[no_mangle]` nor the ABI.
//! Lowering needs them: an `#[inline(never)]` helper must stay a separate
//! `noinline` device function, and a kernel entry point is a
//! `#[unsafe(no_mangle)] pub extern "C" fn` (the CUDA `extern "C" __global__`
//! convention). Enum discriminant values, which `-Zprint-type-sizes` never prints,
//! are recovered here too for the crate's own enums.

use std::collections::BTreeMap;

use quote::ToTokens;

pub use crate::model::{ImplOf, InlineHint, ItemAttrs};

/// The name of the struct, enum, union or type alias `item` declares.
pub(crate) fn declared_type_name(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Union(u) => Some(u.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        _ => None,
    }
}

/// Why the source could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read attributes of {file}: {source}")]
pub struct AttrError {
    /// The file.
    pub file: String,
    /// syn's error: where the source does not parse as Rust.
    pub source: syn::Error,
}

/// Reads `source` (a file mounted as module `module`) and returns the attributes
/// of every fn and enum by def path (`module::helper`, `module::inner::f`).
pub fn recover_attrs(
    source: &str,
    file: &str,
    module: &str,
) -> Result<BTreeMap<String, ItemAttrs>, AttrError> {
    let parsed = syn::parse_file(source).map_err(|source| AttrError {
        file: file.into(),
        source,
    })?;
    let mut out = BTreeMap::new();
    walk(&parsed.items, module, &mut out);
    Ok(out)
}

fn walk(items: &[syn::Item], prefix: &str, out: &mut BTreeMap<String, ItemAttrs>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                let mut a = fn_attrs(&f.attrs, f.sig.abi.as_ref());
                a.kernel = a.no_mangle
                    && a.abi.as_deref() == Some("C")
                    && matches!(f.vis, syn::Visibility::Public(_));
                out.insert(format!("{prefix}::{}", f.sig.ident), a);
                let inner = format!("{prefix}::{}", f.sig.ident);
                walk(&body_items(&f.block), &inner, out);
            }
            syn::Item::Enum(e) => {
                let a = ItemAttrs {
                    discriminants: enum_discriminants(e),
                    ..Default::default()
                };
                let path = format!("{prefix}::{}", e.ident);
                // A struct variant's field names in declaration order, under
                // `Enum::Variant`: MIR names its fields by index
                // (`(_1 as Running).1`), the layout report by name.
                for v in &e.variants {
                    if let syn::Fields::Named(named) = &v.fields {
                        let names = field_idents(named);
                        let va = ItemAttrs {
                            field_names: Some(names),
                            ..Default::default()
                        };
                        out.insert(format!("{path}::{}", v.ident), va);
                    }
                }
                out.insert(path, a);
            }
            syn::Item::Struct(st) => {
                use quote::ToTokens;
                let names = match &st.fields {
                    syn::Fields::Named(named) => Some(field_idents(named)),
                    _ => None,
                };
                let types = st
                    .fields
                    .iter()
                    .map(|f| f.ty.to_token_stream().to_string())
                    .collect();
                let a = ItemAttrs {
                    field_names: names,
                    field_types: Some(types),
                    ..Default::default()
                };
                out.insert(format!("{prefix}::{}", st.ident), a);
            }
            // A union: the layout report prints it as it prints a
            // one-variant enum, so only the source says which it is. Its
            // field names join the report's (every field is at offset 0).
            // A `#[cfg]`-gated one is not recorded: this walk does not
            // evaluate cfgs, and a union switched off beside a one-variant
            // enum of the same name would make the enum read as a union.
            syn::Item::Union(u) if !u.attrs.iter().any(|a| a.path().is_ident("cfg")) => {
                let names = field_idents(&u.fields);
                let a = ItemAttrs {
                    field_names: Some(names),
                    is_union: true,
                    ..Default::default()
                };
                out.insert(format!("{prefix}::{}", u.ident), a);
            }
            syn::Item::Impl(imp) if imp.generics.params.is_empty() => {
                let Some(of) = impl_of(imp) else { continue };
                let key = format!("{prefix}::{}", impl_key(imp.impl_token.span.start()));
                for item in &imp.items {
                    if let syn::ImplItem::Fn(f) = item {
                        let mut a = fn_attrs(&f.attrs, f.sig.abi.as_ref());
                        a.impl_of = Some(of.clone());
                        out.insert(format!("{key}::{}", f.sig.ident), a);
                    }
                }
            }
            // A generic block's methods: their attributes only (an
            // `#[inline(never)]` instance stays a separate function); calls
            // reach their instances through `mono`, not through `impl_of`.
            syn::Item::Impl(imp) => {
                let key = format!("{prefix}::{}", impl_key(imp.impl_token.span.start()));
                for item in &imp.items {
                    if let syn::ImplItem::Fn(f) = item {
                        let a = fn_attrs(&f.attrs, f.sig.abi.as_ref());
                        out.insert(format!("{key}::{}", f.sig.ident), a);
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    walk(inner, &format!("{prefix}::{}", m.ident), out);
                }
            }
            _ => {}
        }
    }
}

/// Whether `source` implements `Drop` for some type, in any module. A source
/// syn cannot read counts as implementing it (its drops are then refused).
pub fn implements_drop(source: &str) -> bool {
    fn walk(items: &[syn::Item]) -> bool {
        items.iter().any(|item| match item {
            syn::Item::Impl(imp) => imp
                .trait_
                .as_ref()
                .is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "Drop")),
            syn::Item::Mod(m) => m.content.as_ref().is_some_and(|(_, inner)| walk(inner)),
            _ => false,
        })
    }
    syn::parse_file(source).map_or(true, |f| walk(&f.items))
}

/// The traits (by last segment) that `source` implements for a trait
/// object type (`impl Describe for dyn Shape`), anywhere in it: a call
/// `<dyn Shape as Describe>::d` is then that impl's method, not a call
/// through the object. A source syn cannot read gives
/// [`ANY_TRAIT`]: any trait may be so implemented.
pub fn traits_implemented_for_trait_objects(source: &str) -> std::collections::BTreeSet<String> {
    struct Finder(std::collections::BTreeSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_item_impl(&mut self, imp: &'ast syn::ItemImpl) {
            if let (Some((_, path, _)), syn::Type::TraitObject(_)) = (&imp.trait_, &*imp.self_ty)
                && let Some(last) = path.segments.last()
            {
                self.0.insert(last.ident.to_string());
            }
            syn::visit::visit_item_impl(self, imp);
        }
    }
    match syn::parse_file(source) {
        Ok(file) => {
            let mut finder = Finder(Default::default());
            syn::visit::Visit::visit_file(&mut finder, &file);
            finder.0
        }
        Err(_) => [ANY_TRAIT.to_string()].into(),
    }
}

/// In [`traits_implemented_for_trait_objects`]: every trait.
pub const ANY_TRAIT: &str = "*";

/// The key an impl block's methods are recorded under, from where its
/// `impl` keyword starts: `<impl@17:1>` (line, 1-based column), the part of
/// rustc's `<impl at kernel.rs:17:1: 17:35>` that names the block (see
/// [`crate::model::normalize_impl_segment`]).
fn impl_key(start: proc_macro2::LineColumn) -> String {
    format!("<impl@{}:{}>", start.line, start.column + 1)
}

/// What `imp` is for, when its self type is a plain path or a reference
/// to one.
fn impl_of(imp: &syn::ItemImpl) -> Option<ImplOf> {
    let (ty, self_ref) = match &*imp.self_ty {
        syn::Type::Reference(r) => (&*r.elem, Some(r.mutability.is_some())),
        ty => (ty, None),
    };
    let syn::Type::Path(tp) = ty else {
        return None;
    };
    let last = |p: &syn::Path| p.segments.last().map(|s| s.ident.to_string());
    let self_ty_args = match &tp.path.segments.last()?.arguments {
        syn::PathArguments::AngleBracketed(a) => Some(
            a.args
                .iter()
                .map(|arg| arg.to_token_stream().to_string())
                .collect(),
        ),
        _ => None,
    };
    Some(ImplOf {
        self_ty: last(&tp.path)?,
        self_ref,
        trait_name: match &imp.trait_ {
            Some((_, path, _)) => Some(last(path)?),
            None => None,
        },
        self_ty_args,
        self_ty_qualified: tp.path.segments.len() > 1,
    })
}

/// The names of named fields, in declaration order.
fn field_idents(named: &syn::FieldsNamed) -> Vec<String> {
    named
        .named
        .iter()
        .filter_map(|f| f.ident.as_ref().map(|i| i.to_string()))
        .collect()
}

fn fn_attrs(attrs: &[syn::Attribute], abi: Option<&syn::Abi>) -> ItemAttrs {
    let mut a = ItemAttrs {
        abi: abi.map(|abi| abi.name.as_ref().map_or("C".to_string(), |n| n.value())),
        ..Default::default()
    };
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("inline") {
            a.inline = Some(match &attr.meta {
                syn::Meta::List(l) => match l.tokens.to_string().as_str() {
                    "never" => InlineHint::Never,
                    "always" => InlineHint::Always,
                    _ => InlineHint::Hint,
                },
                _ => InlineHint::Hint,
            });
        } else if path.is_ident("no_mangle") {
            a.no_mangle = true;
        } else if path.is_ident("unsafe")
            && let syn::Meta::List(l) = &attr.meta
            && l.tokens.to_string() == "no_mangle"
        {
            a.no_mangle = true;
        }
    }
    a
}

/// Discriminants in declaration order: explicit integer literals, otherwise one
/// more than the previous. `None` when an explicit value is not a plain literal.
/// The items declared inside a function's body, in any of its blocks,
/// which rustc names under the function (`kernel::k::E`), as items of a
/// module of that name; not those inside a closure, which rustc names
/// under the closure. Two items of one name (in two blocks) are left out:
/// rustc tells them apart and the path does not.
fn body_items(block: &syn::Block) -> Vec<syn::Item> {
    use syn::visit::Visit;
    /// Collects the items directly in a body; a nested function's own
    /// items are [`walk`]'s, under that function's name.
    struct Items(Vec<syn::Item>);
    impl<'ast> Visit<'ast> for Items {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            self.0.push(item.clone());
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut items = Items(Vec::new());
    items.visit_block(block);
    let name = |item: &syn::Item| match item {
        syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
        other => declared_type_name(other),
    };
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for n in items.0.iter().filter_map(name) {
        *seen.entry(n).or_default() += 1;
    }
    items
        .0
        .into_iter()
        .filter(|item| name(item).is_none_or(|n| seen[&n] == 1))
        .collect()
}

fn enum_discriminants(e: &syn::ItemEnum) -> Option<Vec<(String, i128)>> {
    let mut next: i128 = 0;
    let mut out = Vec::new();
    for v in &e.variants {
        if let Some((_, expr)) = &v.discriminant {
            next = literal_value(expr)?;
        }
        out.push((v.ident.to_string(), next));
        next = next.checked_add(1)?;
    }
    Some(out)
}

fn literal_value(expr: &syn::Expr) -> Option<i128> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => literal_value(expr).map(|v| -v),
        _ => None,
    }
}

/// Whether a type as the source writes it holds a `fn` pointer anywhere
/// (`fn(u32) -> u32`, `Option<fn()>`, `[fn(f32) -> f32; 2]`): what a
/// struct's field types say that rustc's layout report does not.
/// `PhantomData<fn() -> T>` holds no pointer (it marks variance), and an
/// array's length expression (`[u8; size_of::<fn()>()]`) holds nothing.
pub fn source_type_holds_fn_pointer(src: &str) -> bool {
    source_type_holds(src, Held::FnPointer)
}

/// Whether a type as the source writes it holds a trait object anywhere
/// (`&'a dyn Shape`, `Option<&dyn Fn(u32) -> u32>`), read as
/// [`source_type_holds_fn_pointer`] reads types.
pub fn source_type_holds_trait_object(src: &str) -> bool {
    source_type_holds(src, Held::TraitObject)
}

/// What [`source_type_holds`] looks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    FnPointer,
    TraitObject,
}

fn source_type_holds(src: &str, wanted: Held) -> bool {
    struct Finder {
        wanted: Held,
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_bare_fn(&mut self, f: &'ast syn::TypeBareFn) {
            self.found |= self.wanted == Held::FnPointer;
            syn::visit::visit_type_bare_fn(self, f);
        }
        fn visit_type_trait_object(&mut self, t: &'ast syn::TypeTraitObject) {
            self.found |= self.wanted == Held::TraitObject;
            syn::visit::visit_type_trait_object(self, t);
        }
        fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
            if p.path
                .segments
                .last()
                .is_some_and(|s| s.ident == "PhantomData")
            {
                return;
            }
            syn::visit::visit_type_path(self, p);
        }
        fn visit_expr(&mut self, _: &'ast syn::Expr) {}
    }
    let Ok(ty) = syn::parse_str::<syn::Type>(src) else {
        return false;
    };
    let mut finder = Finder {
        wanted,
        found: false,
    };
    syn::visit::Visit::visit_type(&mut finder, &ty);
    finder.found
}

/// A field type as written in the kernel source, as the MIR type rustc would
/// print, when that is certain: primitives, references, raw pointers, arrays
/// with literal lengths, slices, tuples, and paths naming a type whose layout
/// rustc printed under `kernel::` or `gpu::`. `None` when unsure (generic
/// arguments, aliases, other crates' paths): callers then check less, never
/// guess.
pub fn resolve_source_type(src: &str, krate: &crate::Crate) -> Option<crate::model::Ty> {
    let ty: syn::Type = syn::parse_str(src).ok()?;
    convert(&ty, krate)
}

fn convert(ty: &syn::Type, krate: &crate::Crate) -> Option<crate::model::Ty> {
    use crate::model::{ArrayLen, FloatTy, IntTy, Mutability, Path, PathSegment, Ty};
    let mutbl = |m: bool| if m { Mutability::Mut } else { Mutability::Not };
    Some(match ty {
        syn::Type::Reference(r) => Ty::Ref(
            mutbl(r.mutability.is_some()),
            Box::new(convert(&r.elem, krate)?),
        ),
        syn::Type::Ptr(p) => Ty::RawPtr(
            mutbl(p.mutability.is_some()),
            Box::new(convert(&p.elem, krate)?),
        ),
        syn::Type::Slice(s) => Ty::Slice(Box::new(convert(&s.elem, krate)?)),
        syn::Type::Array(a) => {
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) = &a.len
            else {
                return None;
            };
            Ty::Array(
                Box::new(convert(&a.elem, krate)?),
                ArrayLen::Known(n.base10_parse().ok()?),
            )
        }
        syn::Type::Tuple(t) => Ty::Tuple(
            t.elems
                .iter()
                .map(|e| convert(e, krate))
                .collect::<Option<_>>()?,
        ),
        syn::Type::Paren(p) => convert(&p.elem, krate)?,
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            let seg = &p.path.segments[0];
            if !matches!(seg.arguments, syn::PathArguments::None) {
                return None;
            }
            let name = seg.ident.to_string();
            match name.as_str() {
                "bool" => Ty::Bool,
                "char" => Ty::Char,
                "str" => Ty::Str,
                n => IntTy::from_name(n)
                    .map(Ty::Int)
                    .or_else(|| FloatTy::from_name(n).map(Ty::Float))
                    .or_else(|| {
                        ["kernel", "gpu"].iter().find_map(|m| {
                            let full = format!("{m}::{n}");
                            krate.layouts.get(&full).map(|_| {
                                Ty::Adt(Path {
                                    segments: vec![
                                        PathSegment {
                                            name: (*m).to_string(),
                                            args: Vec::new(),
                                        },
                                        PathSegment {
                                            name: n.to_string(),
                                            args: Vec::new(),
                                        },
                                    ],
                                })
                            })
                        })
                    })?,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unions_without_a_cfg_are_recorded_as_unions() {
        // The switched-off union comes last, where it would overwrite the
        // enum's entry.
        let src = "pub union Bits { word: u32, bytes: [u8; 4] }\n\
                   #[cfg(not(feature = \"x\"))]\n\
                   pub enum One { One { word: u32 } }\n\
                   #[cfg(feature = \"x\")]\n\
                   pub union One { word: u32 }\n";
        let a = recover_attrs(src, "k.rs", "kernel").expect("parses");
        let bits = &a["kernel::Bits"];
        assert!(bits.is_union);
        assert_eq!(
            bits.field_names.as_deref(),
            Some(["word".to_string(), "bytes".to_string()].as_slice())
        );
        assert!(a.get("kernel::One").is_none_or(|one| !one.is_union));
    }

    #[test]
    fn impl_methods_are_recorded_under_their_block_position() {
        let src = "pub struct C(f32);\n\
                   impl core::ops::Mul for C {\n\
                   \x20   type Output = C;\n\
                   \x20   #[inline(never)] fn mul(self, r: C) -> C { C(self.0 * r.0) }\n\
                   }\n\
                   \x20 impl C { pub fn get(&self) -> f32 { self.0 } }\n\
                   impl<T: Copy> Clone for W<T> { fn clone(&self) -> Self { *self } }\n";
        let a = recover_attrs(src, "k.rs", "kernel").expect("parses");
        let mul = &a["kernel::<impl@2:1>::mul"];
        assert_eq!(mul.inline, Some(InlineHint::Never));
        assert_eq!(
            mul.impl_of,
            Some(ImplOf {
                self_ty: "C".into(),
                self_ref: None,
                trait_name: Some("Mul".into()),
                self_ty_args: None,
                self_ty_qualified: false,
            })
        );
        // Columns are 1-based, as rustc prints them.
        let get = &a["kernel::<impl@6:3>::get"];
        assert_eq!(
            get.impl_of.as_ref().map(|o| o.trait_name.clone()),
            Some(None)
        );
        // A generic block's methods keep their attributes but no `impl_of`:
        // no call names them by their self type (`mono` instantiates them).
        let clone = &a["kernel::<impl@7:1>::clone"];
        assert_eq!(clone.impl_of, None);
    }

    #[test]
    fn kernel_and_noinline_helper_are_recovered() {
        let src = r#"
            #[inline(never)] fn helper() -> &'static u32 { &42 }
            #[unsafe(no_mangle)] pub extern "C" fn k() {}
            pub enum E { A = 3, B, C = -1 }
        "#;
        let a = recover_attrs(src, "k.rs", "kernel").expect("parses");
        assert_eq!(a["kernel::helper"].inline, Some(InlineHint::Never));
        assert!(!a["kernel::helper"].kernel);
        assert!(a["kernel::k"].kernel);
        assert_eq!(
            a["kernel::E"].discriminants,
            Some(vec![("A".into(), 3), ("B".into(), 4), ("C".into(), -1)])
        );
    }

    #[test]
    fn items_inside_a_function_are_named_under_it() {
        let src = r#"
            pub fn k() -> u32 {
                enum E { A = 2, B }
                let v = { enum F { X = 7 } F::X as u32 };
                fn helper() { enum G { P = 5 } }
                let c = || { enum H { Q = 9 } };
                { enum D { M = 1 } }
                { enum D { M = 4 } }
                v
            }
        "#;
        let a = recover_attrs(src, "k.rs", "kernel").expect("parses");
        assert_eq!(
            a["kernel::k::E"].discriminants,
            Some(vec![("A".into(), 2), ("B".into(), 3)])
        );
        assert_eq!(a["kernel::k::F"].discriminants, Some(vec![("X".into(), 7)]));
        assert_eq!(
            a["kernel::k::helper::G"].discriminants,
            Some(vec![("P".into(), 5)])
        );
        // Not a closure's item, nor two of one name.
        assert!(!a.contains_key("kernel::k::H"));
        assert!(!a.contains_key("kernel::k::D"));
    }
}
