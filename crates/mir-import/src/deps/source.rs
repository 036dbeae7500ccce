//! What is read from a dependency's source files rather than its MIR: which
//! file holds a module, what a module re-exports, and which types the
//! crate root declares. Re-exports are read from the module's top-level
//! `pub use` items as `syn` parses them; a name they cannot pin to one item
//! (a glob could bring it in, two `cfg`s re-export it) is not followed, so
//! the kernel's use of the name stays refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path as FsPath, PathBuf};

/// The file of module `module` of a crate whose sources are in `src`, by
/// the conventional layout (`a/b.rs` or `a/b/mod.rs`, the root `lib.rs`).
pub(super) fn module_file(src: &FsPath, module: &[String]) -> Option<PathBuf> {
    if module.is_empty() {
        return Some(src.join("lib.rs")).filter(|p| p.is_file());
    }
    let rel: PathBuf = module.iter().collect();
    let flat = src.join(&rel).with_extension("rs");
    if flat.is_file() {
        return Some(flat);
    }
    Some(src.join(rel).join("mod.rs")).filter(|p| p.is_file())
}

/// The module that declares an item printed under `path` (its segments
/// after the crate's name, less the item's own), and its file: `path`
/// itself, or where `path` goes on through functions (`util::
/// transmute_unchecked` for a type declared in that function's body), its
/// longest prefix that is a module.
pub(super) fn declaring_module(src: &FsPath, path: &[String]) -> Option<(Vec<String>, PathBuf)> {
    (0..=path.len())
        .rev()
        .find_map(|n| module_file(src, &path[..n]).map(|f| (path[..n].to_vec(), f)))
}

/// The source text of module `module` of a crate whose sources are in
/// `src`.
pub(super) fn read_module(src: &FsPath, module: &[String]) -> Option<String> {
    std::fs::read_to_string(module_file(src, module)?).ok()
}

/// Which of rustc's namespaces a re-exported name is printed in, which
/// decides the name it is printed under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Namespace {
    /// Constants, statics and functions: rustc prints the re-exporting
    /// module with the item's own name, whatever the `as` rename.
    Value,
    /// Types: rustc prints the re-exporting module with the name the
    /// re-export gives (the alias, when there is one).
    Type,
}

/// One name a top-level `pub use` of a module brings in.
#[derive(Debug, PartialEq, Eq)]
enum PubUse {
    /// `path::own` (the path as written), visible as `visible`.
    Named {
        path: Vec<String>,
        own: String,
        visible: String,
    },
    /// `path::*`: names nobody can list without reading `path`.
    Glob(Vec<String>),
}

/// The def path (from the crate's root, without the crate's name) of the
/// item that module `module`, whose source is `text`, re-exports under the
/// printed name `printed`, read from the module's top-level `pub use`
/// items (groups, nested groups, `as` renames, `self`, `super`, `crate`).
/// `None` when the source does not parse, when no `pub use` brings the
/// name in, when two do (one per `cfg`: which one is compiled in is not
/// guessed), or, for a value, when the module also has a glob re-export
/// (a value is printed by its own name, so `pub use a::T as T1;` beside
/// `pub use b::*;` could be either `T`).
pub(super) fn reexported_item(
    text: &str,
    module: &[String],
    printed: &str,
    namespace: Namespace,
) -> Option<Vec<String>> {
    let file = syn::parse_file(text).ok()?;
    let mut uses = Vec::new();
    for item in &file.items {
        if let syn::Item::Use(u) = item
            && matches!(u.vis, syn::Visibility::Public(_))
            && u.leading_colon.is_none()
        {
            flatten_use(&u.tree, &mut Vec::new(), &mut uses);
        }
    }
    if namespace == Namespace::Value && uses.iter().any(|u| matches!(u, PubUse::Glob(_))) {
        return None;
    }
    let mut found = uses.into_iter().filter_map(|u| match u {
        PubUse::Named { path, own, visible } => {
            let matched = match namespace {
                Namespace::Value => own == printed,
                Namespace::Type => visible == printed,
            };
            matched.then_some((path, own))
        }
        PubUse::Glob(_) => None,
    });
    let (path, own) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let mut out = resolve_use_path(&path, module)?;
    out.push(own);
    Some(out)
}

/// The names `tree`, under the path `prefix`, brings in.
fn flatten_use(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<PubUse>) {
    let mut named = |prefix: &[String], ident: &syn::Ident, alias: Option<&syn::Ident>| {
        let ident = ident.to_string();
        // `a::{self}` names the module `a` itself.
        let (path, own) = if ident == "self" {
            let Some((own, path)) = prefix.split_last() else {
                return;
            };
            (path.to_vec(), own.clone())
        } else {
            (prefix.to_vec(), ident)
        };
        let visible = alias.map_or_else(|| own.clone(), ToString::to_string);
        if visible != "_" {
            out.push(PubUse::Named { path, own, visible });
        }
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => named(prefix, &n.ident, None),
        syn::UseTree::Rename(r) => named(prefix, &r.ident, Some(&r.rename)),
        syn::UseTree::Glob(_) => out.push(PubUse::Glob(prefix.clone())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, out);
            }
        }
    }
}

/// A `use` path of module `module` as a path from the crate's root.
pub(super) fn resolve_use_path(path: &[String], module: &[String]) -> Option<Vec<String>> {
    let mut out = module.to_vec();
    let mut segments = path.iter().map(String::as_str).peekable();
    match segments.peek() {
        Some(&"crate") => {
            out.clear();
            segments.next();
        }
        Some(&"self") => {
            segments.next();
        }
        _ => {}
    }
    for segment in segments {
        match segment {
            "super" => {
                out.pop()?;
            }
            "crate" | "self" => return None,
            s => out.push(s.to_string()),
        }
    }
    Some(out)
}

/// What crate `krate`'s root file `text` (its sources in `src`)
/// re-exports, as paths that start with a crate's name: other crates
/// (`pub use digest;` in hmac, `pub use crypto_common::rand_core;` in
/// digest), their items (`pub use digest::Mac;`), and its own modules'
/// items, named (`pub use self::m::X;`) or through a glob (`pub use
/// self::comu::*;` in wyz, read from `comu`'s own `pub` items). rustc
/// prints an item through such a path where that is how the printing
/// crate sees it (the kernel prints `hmac::digest::block_buffer::Lazy`,
/// bitvec's MIR `wyz::Address` for `wyz::comu::Address`); the declaring
/// path is one spelling for all.
pub(super) fn root_reexports(
    text: &str,
    krate: &str,
    src: &FsPath,
    crates: &BTreeSet<String>,
) -> BTreeMap<String, Vec<String>> {
    let Ok(file) = syn::parse_file(text) else {
        return BTreeMap::new();
    };
    // Each `pub use`'s names, and whether it starts with `::` (a crate).
    let mut uses: Vec<(PubUse, bool)> = Vec::new();
    for item in &file.items {
        if let syn::Item::Use(u) = item
            && matches!(u.vis, syn::Visibility::Public(_))
        {
            let mut flat = Vec::new();
            flatten_use(&u.tree, &mut Vec::new(), &mut flat);
            uses.extend(flat.into_iter().map(|f| (f, u.leading_colon.is_some())));
        }
    }
    // Every name the root declares hides what a glob brings in, and a
    // macro invoked at the root may declare names nobody can list.
    let declared: BTreeSet<String> = file.items.iter().flat_map(root_item_names).collect();
    let opaque_macro = file.items.iter().any(|i| {
        matches!(i, syn::Item::Macro(m) if m.ident.is_none() && !m.mac.path.is_ident("macro_rules"))
    });
    let modules: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    // A local path (`self::comu`, `crate::comu`, `comu`) as the module
    // path it names, when its first module is one the root declares.
    let local = |path: &[String], crate_path: bool| {
        if crate_path {
            return None;
        }
        let resolved = resolve_use_path(path, &[])?;
        modules.contains(resolved.first()?).then_some(resolved)
    };
    // Each visible name's possible targets; `None` for one not read (a
    // `pub use` of something else, a glob that cannot be listed).
    let mut targets: BTreeMap<String, BTreeSet<Option<Vec<String>>>> = BTreeMap::new();
    let mut unlisted_glob = opaque_macro;
    let mut from_globs = BTreeSet::new();
    for (u, crate_path) in uses {
        match u {
            PubUse::Named { path, own, visible } => {
                let first = path.first().unwrap_or(&own);
                let target = if crates.contains(first) && !declared.contains(first) {
                    let mut target = path;
                    target.push(own.clone());
                    Some(target)
                } else if let Some(module) = local(&path, crate_path) {
                    let mut target = vec![krate.to_string()];
                    target.extend(module);
                    target.push(own.clone());
                    Some(target)
                } else {
                    None
                };
                // rustc prints a renamed value by its own name: that name
                // is taken too, and not followed.
                if own != visible {
                    targets.entry(own).or_default().insert(None);
                }
                targets.entry(visible).or_default().insert(target);
            }
            PubUse::Glob(path) => {
                let Some(m_text) = local(&path, crate_path)
                    .and_then(|module| Some((read_module(src, &module)?, module)))
                else {
                    unlisted_glob = true;
                    continue;
                };
                let (m_text, module) = m_text;
                for name in public_items(&m_text) {
                    let mut target = vec![krate.to_string()];
                    target.extend(module.iter().cloned());
                    target.push(name.clone());
                    from_globs.insert(name.clone());
                    targets.entry(name).or_default().insert(Some(target));
                }
            }
        }
    }
    // A name the root declares, that two re-exports may mean (one `pub
    // use` per `cfg`, two globs), or that an unlisted glob may also bring
    // in, is not followed: which one is meant is not guessed.
    targets
        .into_iter()
        .filter(|(name, _)| !declared.contains(name))
        .filter(|(name, _)| !(unlisted_glob && from_globs.contains(name)))
        .filter_map(
            |(name, t)| match t.into_iter().collect::<Vec<_>>().as_slice() {
                [Some(target)] => Some((name, target.clone())),
                _ => None,
            },
        )
        .collect()
}

/// The names a module's own `pub` items declare (not its re-exports).
fn public_items(text: &str) -> Vec<String> {
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new();
    };
    let public = |v: &syn::Visibility| matches!(v, syn::Visibility::Public(_));
    file.items
        .iter()
        .filter_map(|item| {
            let (vis, ident) = match item {
                syn::Item::Struct(i) => (&i.vis, &i.ident),
                syn::Item::Enum(i) => (&i.vis, &i.ident),
                syn::Item::Union(i) => (&i.vis, &i.ident),
                syn::Item::Type(i) => (&i.vis, &i.ident),
                syn::Item::Trait(i) => (&i.vis, &i.ident),
                syn::Item::Fn(i) => (&i.vis, &i.sig.ident),
                syn::Item::Const(i) => (&i.vis, &i.ident),
                syn::Item::Static(i) => (&i.vis, &i.ident),
                _ => return None,
            };
            public(vis).then(|| ident.to_string())
        })
        .collect()
}

/// The names a root item declares, in any namespace (a `macro_rules!`
/// name is a macro's, which hides nothing).
fn root_item_names(item: &syn::Item) -> Vec<String> {
    let one = |i: &syn::Ident| vec![i.to_string()];
    match item {
        syn::Item::Mod(m) => one(&m.ident),
        syn::Item::Struct(s) => one(&s.ident),
        syn::Item::Enum(e) => one(&e.ident),
        syn::Item::Union(u) => one(&u.ident),
        syn::Item::Type(t) => one(&t.ident),
        syn::Item::Trait(t) => one(&t.ident),
        syn::Item::TraitAlias(t) => one(&t.ident),
        syn::Item::Fn(f) => one(&f.sig.ident),
        syn::Item::Const(c) => one(&c.ident),
        syn::Item::Static(s) => one(&s.ident),
        syn::Item::ExternCrate(c) => one(c.rename.as_ref().map_or(&c.ident, |(_, r)| r)),
        syn::Item::ForeignMod(f) => f
            .items
            .iter()
            .filter_map(|i| match i {
                syn::ForeignItem::Fn(f) => Some(f.sig.ident.to_string()),
                syn::ForeignItem::Static(s) => Some(s.ident.to_string()),
                syn::ForeignItem::Type(t) => Some(t.ident.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The type and const parameters (in order, each const one with its type)
/// of method `method` of the non-generic impl block whose `impl` keyword
/// `text` has at `line`:`column` (1-based, as rustc's spans count), read
/// with `syn`: what binds a generic method's promoted to the arguments its
/// owner is printed with. `None` when no such block or method is found, or
/// when the block has parameters of its own.
pub(super) fn impl_method_params(
    text: &str,
    line: usize,
    column: usize,
    method: &str,
) -> Option<Vec<(String, Option<String>)>> {
    use syn::visit::Visit;
    struct Find<'a> {
        at: (usize, usize),
        found: Option<&'a syn::ItemImpl>,
    }
    impl<'a> Visit<'a> for Find<'a> {
        fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
            let start = i.impl_token.span.start();
            if (start.line, start.column + 1) == self.at {
                self.found = Some(i);
            }
            syn::visit::visit_item_impl(self, i);
        }
    }
    let file = syn::parse_file(text).ok()?;
    let mut find = Find {
        at: (line, column),
        found: None,
    };
    find.visit_file(&file);
    let block = find.found?;
    if block
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
    {
        return None;
    }
    // One `fn method` (two, one per `cfg`, could order their parameters
    // differently).
    let mut sigs = block.items.iter().filter_map(|item| match item {
        syn::ImplItem::Fn(f) if f.sig.ident == method => Some(&f.sig),
        _ => None,
    });
    let sig = sigs.next()?;
    if sigs.next().is_some() {
        return None;
    }
    Some(
        sig.generics
            .params
            .iter()
            .filter_map(|p| match p {
                syn::GenericParam::Type(t) => Some((t.ident.to_string(), None)),
                syn::GenericParam::Const(c) => {
                    let ty = &c.ty;
                    Some((c.ident.to_string(), Some(quote::quote!(#ty).to_string())))
                }
                syn::GenericParam::Lifetime(_) => None,
            })
            .collect(),
    )
}

/// The types that a crate declares in its root file (`src/lib.rs`): its
/// own MIR names them by one segment (`const DEFAULT_STATE: Sha1State`),
/// also where the kernel never holds one in a local of its own.
pub(super) fn root_type_decls(src: &FsPath) -> BTreeSet<String> {
    let Some(text) = read_module(src, &[]) else {
        return BTreeSet::new();
    };
    let Ok(file) = syn::parse_file(&text) else {
        return BTreeSet::new();
    };
    file.items
        .iter()
        .filter_map(crate::attrs::declared_type_name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(path: &str) -> Vec<String> {
        path.split("::").map(str::to_string).collect()
    }

    use Namespace::{Type, Value};

    #[test]
    fn a_type_declared_in_a_functions_body_is_read_from_the_enclosing_module() {
        let src = std::env::temp_dir().join(format!("mir-import-declaring-{}", std::process::id()));
        std::fs::create_dir_all(src.join("util")).expect("creates the crate's folders");
        std::fs::write(src.join("lib.rs"), "mod util;").expect("writes lib.rs");
        std::fs::write(src.join("util/mod.rs"), "pub fn f() {}").expect("writes util");
        let found = |p: &str| declaring_module(&src, &module(p)).map(|(m, f)| (m.join("::"), f));
        assert_eq!(
            found("util::transmute_unchecked"),
            Some(("util".to_string(), src.join("util/mod.rs")))
        );
        assert_eq!(
            found("util"),
            Some(("util".to_string(), src.join("util/mod.rs")))
        );
        // A function at the crate root: lib.rs declares its items.
        assert_eq!(found("helper"), Some((String::new(), src.join("lib.rs"))));
        std::fs::remove_dir_all(&src).expect("removes the crate");
    }

    #[test]
    fn reexports_name_the_declaring_item() {
        let engine = module("engine");
        let text = "mod general_purpose;\npub use general_purpose::{GeneralPurpose, GeneralPurposeConfig as Config};\npub use crate::alphabet::Alphabet;\npub use self::x::Y as Renamed;\n";
        assert_eq!(
            reexported_item(text, &engine, "GeneralPurpose", Type),
            Some(module("engine::general_purpose::GeneralPurpose"))
        );
        // A renamed type is printed under its alias, a renamed value under
        // its own name.
        assert_eq!(
            reexported_item(text, &engine, "Config", Type),
            Some(module("engine::general_purpose::GeneralPurposeConfig"))
        );
        assert_eq!(
            reexported_item(text, &engine, "GeneralPurposeConfig", Type),
            None
        );
        assert_eq!(
            reexported_item(text, &engine, "GeneralPurposeConfig", Value),
            Some(module("engine::general_purpose::GeneralPurposeConfig"))
        );
        assert_eq!(reexported_item(text, &engine, "Config", Value), None);
        assert_eq!(
            reexported_item(text, &engine, "Alphabet", Value),
            Some(module("alphabet::Alphabet"))
        );
        assert_eq!(
            reexported_item(text, &engine, "Y", Value),
            Some(module("engine::x::Y"))
        );
        assert_eq!(reexported_item(text, &engine, "General", Value), None);
    }

    #[test]
    fn nested_and_multi_line_groups_are_followed_whole() {
        let m = module("m");
        let text = "pub use a::{b::{X, F as G, Y}, c::F};\n";
        assert_eq!(
            reexported_item(text, &m, "Y", Value),
            Some(module("m::a::b::Y"))
        );
        assert_eq!(
            reexported_item(text, &m, "G", Type),
            Some(module("m::a::b::F"))
        );
        // Printed by its own name, `F` could be either: not followed.
        assert_eq!(reexported_item(text, &m, "F", Value), None);
        let lines = "pub use fast::{\n    TABLE,\n    OTHER,\n};\n";
        assert_eq!(
            reexported_item(lines, &m, "OTHER", Value),
            Some(module("m::fast::OTHER"))
        );
        let module_itself = "pub use crate::tables::{self as t};\n";
        assert_eq!(
            reexported_item(module_itself, &m, "t", Type),
            Some(module("tables"))
        );
    }

    #[test]
    fn reexports_through_super_stop_at_the_root() {
        let text = "pub use super::tables::TABLE;\n";
        assert_eq!(
            reexported_item(text, &module("a::b"), "TABLE", Value),
            Some(module("a::tables::TABLE"))
        );
        assert_eq!(reexported_item(text, &[], "TABLE", Value), None);
    }

    #[test]
    fn an_ambiguous_or_unknown_form_is_not_followed() {
        let m = module("m");
        let twice = "#[cfg(a)]\npub use a::E;\n#[cfg(not(a))]\npub use b::E;\n";
        assert_eq!(reexported_item(twice, &m, "E", Value), None);
        let multi_line_twice = "#[cfg(fast)]\npub use fast::{\n    TABLE,\n};\n#[cfg(not(fast))] pub use slow::TABLE;\n";
        assert_eq!(reexported_item(multi_line_twice, &m, "TABLE", Value), None);
        assert_eq!(reexported_item("pub use a::*;\n", &m, "E", Value), None);
        // A value printed by its own name may come through the glob.
        let glob = "pub use v1::TABLE as TABLE_V1;\npub use v2::*;\n";
        assert_eq!(reexported_item(glob, &m, "TABLE", Value), None);
        // A type is printed by its visible name, which the glob cannot
        // shadow: an explicit re-export wins over a glob.
        let glob_type = "pub use v1::State as StateV1;\npub use v2::*;\n";
        assert_eq!(
            reexported_item(glob_type, &m, "StateV1", Type),
            Some(module("m::v1::State"))
        );
        assert_eq!(reexported_item(glob_type, &m, "State", Type), None);
        // Not the module's own re-exports: those of an inline module, a
        // comment, a private or `pub(crate)` use, an extern path.
        let hidden = "mod inner { pub use a::E; }\n/* pub use b::E; */\nuse c::E;\npub(crate) use d::E;\npub use ::e::E;\n";
        assert_eq!(reexported_item(hidden, &m, "E", Value), None);
        assert_eq!(reexported_item("pub use a::{E", &m, "E", Value), None);
    }

    #[test]
    fn root_type_declarations_are_read_from_lib_rs() {
        let tmp = tempfile::tempdir().expect("temporary folder");
        let dir = tmp.path();
        std::fs::write(
            dir.join("lib.rs"),
            "pub struct Sha1 { state: Sha1State }
struct Sha1State { s: [u32; 5] }
             pub enum E { A }
pub type T = u8;
const DEFAULT_STATE: u8 = 0;
mod inner { pub struct Deep; }
",
        )
        .expect("write");
        let roots = root_type_decls(dir);
        let want: BTreeSet<String> = ["E", "Sha1", "Sha1State", "T"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(roots, want);
        assert!(root_type_decls(&dir.join("missing")).is_empty());
    }

    #[test]
    fn reexports_are_read_from_the_root() {
        let crates: BTreeSet<String> = ["digest", "crypto_common", "rand_core", "hmac"]
            .into_iter()
            .map(str::to_string)
            .collect();
        let tmp = tempfile::tempdir().expect("temporary folder");
        std::fs::write(
            tmp.path().join("comu.rs"),
            "pub struct Address;\npub(crate) struct Hidden;\npub use x::Y;\n",
        )
        .expect("write");
        std::fs::write(tmp.path().join("other.rs"), "pub fn f() {}\n").expect("write");
        let text = "mod comu;\nmod other;\npub use digest;\npub use crypto_common::rand_core as rng;\npub use digest::Mac;\nuse rand_core;\npub use self::{comu::*, other::*};\npub use crate::comu::Address as Addr;\n#[cfg(a)]\npub use hmac as h;\n#[cfg(not(a))]\npub use rand_core as h;\npub use rand_core as local;\nmod local {}\n";
        let found = root_reexports(text, "wyz", tmp.path(), &crates);
        let path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            found,
            BTreeMap::from([
                ("digest".to_string(), path("digest")),
                ("rng".to_string(), path("crypto_common::rand_core")),
                ("Mac".to_string(), path("digest::Mac")),
                ("f".to_string(), path("wyz::other::f")),
                ("Addr".to_string(), path("wyz::comu::Address")),
            ])
        );
        // A root item hides a globbed name, whatever its namespace; a
        // renamed re-export takes its own name too; a re-export nobody
        // reads takes its name; a root macro invocation or a crate's glob
        // may declare anything.
        let hiding = [
            "const f: u32 = 1;",
            "pub use self::comu::f as g;",
            "pub use core::num::f;",
        ];
        for extra in hiding {
            let found = root_reexports(&format!("{text}{extra}\n"), "wyz", tmp.path(), &crates);
            assert!(!found.contains_key("f"), "{extra}: {found:?}");
        }
        let found = root_reexports(
            &format!("{text}pub use self::comu::f as g;\n"),
            "wyz",
            tmp.path(),
            &crates,
        );
        assert_eq!(found.get("g"), Some(&path("wyz::comu::f")));
        // Without the rename, the glob's `Address` is followed, unless a
        // root macro invocation or a crate's glob may declare anything.
        let plain = text.replace("pub use crate::comu::Address as Addr;\n", "");
        let found = root_reexports(&plain, "wyz", tmp.path(), &crates);
        assert_eq!(found.get("Address"), Some(&path("wyz::comu::Address")));
        for opaque in ["make_items! {}", "pub use digest::*;"] {
            let found = root_reexports(&format!("{plain}{opaque}\n"), "wyz", tmp.path(), &crates);
            assert!(!found.contains_key("Address"), "{opaque}: {found:?}");
            assert!(found.contains_key("Mac"), "{opaque}: {found:?}");
        }
        // `::m` is a crate, not the root's module `m`.
        let found = root_reexports(
            "mod comu;\npub use ::comu::Address;\n",
            "wyz",
            tmp.path(),
            &crates,
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_methods_own_parameters_come_from_its_impl_block() {
        let text = "impl Sealed for Eager {\n    fn split<N: Len<u8>>(d: &[u8]) {}\n}\n\nimpl Sealed for super::Lazy {\n    #[inline(always)]\n    fn split<M: Len<u8>, const K: usize>(d: &[u8]) {}\n}\nimpl<T> Sealed for Wrap<T> {\n    fn split<N>(d: &[u8]) {}\n}\n";
        assert_eq!(
            impl_method_params(text, 5, 1, "split"),
            Some(vec![
                ("M".to_string(), None),
                ("K".to_string(), Some("usize".to_string()))
            ])
        );
        assert_eq!(
            impl_method_params(text, 1, 1, "split"),
            Some(vec![("N".to_string(), None)])
        );
        // No block there, no such method, a generic block.
        assert_eq!(impl_method_params(text, 2, 1, "split"), None);
        assert_eq!(impl_method_params(text, 5, 1, "other"), None);
        assert_eq!(impl_method_params(text, 9, 1, "split"), None);
    }
}
