//! What is read from a dependency's source files rather than its MIR: which
//! file holds a module, what a module re-exports, and which types the
//! crate root declares. Source is read line by line, not parsed as a
//! whole: a form this does not know (a `pub use` over several lines, a
//! glob) is not followed, so the kernel's use of the name stays refused.

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

/// The def path (from the crate's root, without the crate's name) of the
/// item that module `module`, whose source is `text`, re-exports under the
/// item's own name `name`, as rustc prints it (the re-exporting module and
/// the item's name). Follows one-line `pub use`s of a path (`pub use
/// crate::a::Name as Alias;`) or a brace list (`pub use a::{Name, Other};`),
/// relative to the module, to `self::`, `super::` or `crate::`. `None` when
/// no line re-exports `name`, or two do (one per `cfg`: which one is
/// compiled in is not guessed).
pub(super) fn reexported_item(text: &str, module: &[String], name: &str) -> Option<Vec<String>> {
    let mut found = text.lines().filter_map(|line| {
        let used = line.trim().strip_prefix("pub use ")?.strip_suffix(';')?;
        let path = match used.split_once("::{") {
            Some((path, list)) => {
                let listed = list
                    .strip_suffix('}')?
                    .split(',')
                    .any(|entry| own_name(entry) == name);
                listed.then_some(path)?
            }
            None => {
                let (path, last) = used.rsplit_once("::")?;
                (own_name(last) == name).then_some(path)?
            }
        };
        let mut out = resolve_use_path(path, module)?;
        out.push(name.to_string());
        Some(out)
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// The name a `use` entry imports, before any `as` rename.
fn own_name(entry: &str) -> &str {
    let entry = entry.trim();
    entry
        .split_once(" as ")
        .map_or(entry, |(own, _)| own.trim())
}

/// A `use` path of module `module` as a path from the crate's root.
fn resolve_use_path(path: &str, module: &[String]) -> Option<Vec<String>> {
    let mut out = module.to_vec();
    let mut segments = path.split("::").peekable();
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
            "crate" | "self" | "" => return None,
            s if s.contains(['{', '}', '*', ' ']) => return None,
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

    #[test]
    fn reexports_name_the_declaring_item() {
        let engine = module("engine");
        let text = "mod general_purpose;\npub use general_purpose::{GeneralPurpose, GeneralPurposeConfig as Config};\npub use crate::alphabet::Alphabet;\npub use self::x::Y as Renamed;\n";
        assert_eq!(
            reexported_item(text, &engine, "GeneralPurpose"),
            Some(module("engine::general_purpose::GeneralPurpose"))
        );
        // A renamed entry is found by its own name, not by the alias.
        assert_eq!(
            reexported_item(text, &engine, "GeneralPurposeConfig"),
            Some(module("engine::general_purpose::GeneralPurposeConfig"))
        );
        assert_eq!(reexported_item(text, &engine, "Config"), None);
        assert_eq!(
            reexported_item(text, &engine, "Alphabet"),
            Some(module("alphabet::Alphabet"))
        );
        assert_eq!(
            reexported_item(text, &engine, "Y"),
            Some(module("engine::x::Y"))
        );
        assert_eq!(reexported_item(text, &engine, "General"), None);
    }

    #[test]
    fn reexports_through_super_stop_at_the_root() {
        let text = "pub use super::tables::TABLE;\n";
        assert_eq!(
            reexported_item(text, &module("a::b"), "TABLE"),
            Some(module("a::tables::TABLE"))
        );
        assert_eq!(reexported_item(text, &[], "TABLE"), None);
    }

    #[test]
    fn an_ambiguous_or_unknown_form_is_not_followed() {
        let m = module("m");
        let twice = "#[cfg(a)]\npub use a::E;\n#[cfg(not(a))]\npub use b::E;\n";
        assert_eq!(reexported_item(twice, &m, "E"), None);
        assert_eq!(reexported_item("pub use a::*;\n", &m, "E"), None);
        assert_eq!(reexported_item("pub use a::{b::{E}};\n", &m, "E"), None);
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
