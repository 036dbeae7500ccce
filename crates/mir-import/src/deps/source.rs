//! What is read from a dependency's source files rather than its MIR: which
//! file holds a module, what a module re-exports, and which types the
//! crate root declares. Re-exports are read from the module's top-level
//! `pub use` items as `syn` parses them; a name they cannot pin to one item
//! (a glob could bring it in, two `cfg`s re-export it) is not followed, so
//! the kernel's use of the name stays refused.

use std::collections::BTreeSet;
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
    Glob,
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
    if namespace == Namespace::Value && uses.contains(&PubUse::Glob) {
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
        PubUse::Glob => None,
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
        syn::UseTree::Glob(_) => out.push(PubUse::Glob),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, out);
            }
        }
    }
}

/// A `use` path of module `module` as a path from the crate's root.
fn resolve_use_path(path: &[String], module: &[String]) -> Option<Vec<String>> {
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
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            syn::Item::Union(u) => Some(u.ident.to_string()),
            syn::Item::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
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
}
