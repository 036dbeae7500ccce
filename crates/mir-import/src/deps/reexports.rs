//! What dependencies re-export at their roots, and the names printed
//! through it.
//!
//! hmac's root says `pub use digest;` and digest's `pub use block_buffer;`,
//! so a kernel that reaches block_buffer through hmac has its items printed
//! as `hmac::digest::block_buffer::Lazy`. The item's MIR is in
//! block_buffer's, under `Lazy`: [`CrateReexports::canonical`] rewrites the
//! printed name to `block_buffer::Lazy` before it is looked up. Likewise
//! wyz's root re-exports `comu::*`, so bitvec's MIR prints `wyz::Address`
//! where the kernel's prints `wyz::comu::Address`: both become the
//! declaring path.

use std::collections::{BTreeMap, BTreeSet};

use kernel_deps::BuiltDeps;

use crate::layout::{LayoutTable, TypeLayout};

use super::source;

/// Each dependency's re-exported crates: crate → visible name → the path
/// it stands for (starting with a crate's name).
#[derive(Debug, Default)]
pub(super) struct CrateReexports {
    by_crate: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// How many re-exports one path may pass through (a cycle would go on).
const MAX_HOPS: usize = 16;

impl CrateReexports {
    /// Reads the root file of each of `deps`' crates.
    pub(super) fn read(deps: &BuiltDeps, crates: &BTreeSet<String>) -> CrateReexports {
        // Two versions of one crate (`digest` 0.9 and 0.10) share a name
        // that rustc tells apart by the path it prints: no path through or
        // to such a name is respelled.
        let mut seen = BTreeSet::new();
        let twice: BTreeSet<&str> = deps
            .crates
            .iter()
            .filter(|c| !seen.insert(c.name.as_str()))
            .map(|c| c.name.as_str())
            .collect();
        let mut by_crate = BTreeMap::new();
        for c in deps
            .crates
            .iter()
            .filter(|c| !twice.contains(c.name.as_str()))
        {
            let src = deps.path(&c.src_dir).join("src");
            let Some(text) = source::read_module(&src, &[]) else {
                continue;
            };
            let mut found = source::root_reexports(&text, &c.name, &src, crates);
            found.retain(|_, target| !twice.contains(target[0].as_str()));
            if !found.is_empty() {
                by_crate.insert(c.name.clone(), found);
            }
        }
        CrateReexports { by_crate }
    }

    /// `name` with each path that starts with a re-exported crate
    /// (`hmac::digest::block_buffer::Lazy`, also inside `<A as T>`) spelled
    /// from the crate that declares it (`block_buffer::Lazy`).
    pub(super) fn canonical(&self, name: &str) -> String {
        if self.by_crate.is_empty() {
            return name.to_string();
        }
        let mut out = String::with_capacity(name.len());
        let mut rest = name;
        while !rest.is_empty() {
            // A string or char literal is copied as it is.
            if let Some(len) = super::literals::literal_len(rest) {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
            let path_start = out
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'));
            if path_start && let Some(skip) = self.rewrite_at(rest, &mut out) {
                rest = &rest[skip..];
                continue;
            }
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// Gives each layout of `table` whose type is printed through a
    /// re-exported crate (`blake2::digest::generic_array::GenericArray<u8,
    /// ..>`) a second entry under its declaring spelling
    /// (`generic_array::GenericArray<u8, ..>`), the one an instance made
    /// from a dependency's MIR is written in: both name the same type.
    pub(super) fn alias_layouts(&self, table: &mut LayoutTable) {
        let aliases: Vec<(String, TypeLayout)> = table
            .types
            .iter()
            .filter_map(|(name, layout)| {
                let declared = self.canonical(name);
                (declared != *name).then(|| (declared, layout.clone()))
            })
            .collect();
        // Two printed types of one spelling would be one type; if their
        // layouts differ, the spelling was not what it seemed, and it gets
        // none.
        let mut conflicting = BTreeSet::new();
        let mut added: BTreeMap<String, TypeLayout> = BTreeMap::new();
        for (name, layout) in aliases {
            if table.types.contains_key(&name) {
                if table.types[&name] != layout {
                    conflicting.insert(name);
                }
                continue;
            }
            match added.get(&name) {
                Some(other) if *other != layout => {
                    conflicting.insert(name);
                }
                Some(_) => {}
                None => {
                    added.insert(name, layout);
                }
            }
        }
        for name in &conflicting {
            added.remove(name);
            table.types.remove(name);
        }
        table.types.extend(added);
    }

    /// When `text` starts with a path through a re-exported crate
    /// (`hmac::digest::block_buffer::Lazy`), pushes its declaring spelling
    /// (`block_buffer::Lazy`) to `out` and returns how many bytes of `text`
    /// it stands for.
    fn rewrite_at(&self, text: &str, out: &mut String) -> Option<usize> {
        let word = |s: &str| {
            s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(s.len())
        };
        let mut segments = Vec::new();
        let mut used = 0;
        loop {
            let w = word(&text[used..]);
            if w == 0 {
                break;
            }
            segments.push(&text[used..used + w]);
            used += w;
            if !text[used..].starts_with("::") || word(&text[used + 2..]) == 0 {
                break;
            }
            used += 2;
        }
        let declared = self.declared(&segments)?;
        out.push_str(&declared.join("::"));
        Some(used)
    }

    /// `segments` with its leading re-exported crates replaced by what
    /// they stand for, until none is left; `None` when there was none.
    fn declared(&self, segments: &[&str]) -> Option<Vec<String>> {
        let mut path: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        let mut changed = false;
        for _ in 0..MAX_HOPS {
            let [krate, visible, ..] = path.as_slice() else {
                break;
            };
            let Some(target) = self.by_crate.get(krate).and_then(|m| m.get(visible)) else {
                break;
            };
            path.splice(..2, target.iter().cloned());
            changed = true;
        }
        changed.then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reexports(pairs: &[(&str, &str, &str)]) -> CrateReexports {
        let mut by_crate: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for (krate, visible, target) in pairs {
            by_crate.entry(krate.to_string()).or_default().insert(
                visible.to_string(),
                target.split("::").map(str::to_string).collect(),
            );
        }
        CrateReexports { by_crate }
    }

    #[test]
    fn paths_through_reexported_crates_are_spelled_from_the_declaring_crate() {
        let r = reexports(&[
            ("hmac", "digest", "digest"),
            ("digest", "block_buffer", "block_buffer"),
            ("digest", "rand_core", "crypto_common::rand_core"),
            ("crypto_common", "rand_core", "rand_core"),
        ]);
        assert_eq!(
            r.canonical(
                "<hmac::digest::block_buffer::Lazy as hmac::digest::block_buffer::sealed::Sealed>::split_blocks::promoted[1]"
            ),
            "<block_buffer::Lazy as block_buffer::sealed::Sealed>::split_blocks::promoted[1]"
        );
        assert_eq!(r.canonical("hmac::digest::Mac::f"), "digest::Mac::f");
        assert_eq!(
            r.canonical("digest::rand_core::RngCore"),
            "rand_core::RngCore"
        );
        // Not at a path's start, or not a crate the root re-exports.
        assert_eq!(r.canonical("x::hmac::digest::T"), "x::hmac::digest::T");
        assert_eq!(r.canonical("hmac::Hmac::new"), "hmac::Hmac::new");
        // Not inside a string literal.
        assert_eq!(
            r.canonical(r#"const "hmac::digest::x \" hmac::digest::y" hmac::digest::z"#),
            r#"const "hmac::digest::x \" hmac::digest::y" digest::z"#
        );
        assert_eq!(r.canonical("'\"' hmac::digest::z"), "'\"' digest::z");
        // A turbofish ends the path.
        assert_eq!(
            r.canonical("hmac::digest::f::<hmac::digest::T>"),
            "digest::f::<digest::T>"
        );
    }

    #[test]
    fn layouts_are_filed_under_the_declaring_spelling_unless_two_disagree() {
        let r = reexports(&[("hmac", "digest", "digest"), ("blake2", "digest", "digest")]);
        let layout = |size: u64| TypeLayout {
            size,
            align: 1,
            shape: crate::layout::TypeShape::Struct { fields: Vec::new() },
        };
        let mut table = LayoutTable::default();
        table.types.insert("hmac::digest::A".into(), layout(4));
        table.types.insert("hmac::digest::B".into(), layout(4));
        table.types.insert("blake2::digest::B".into(), layout(8));
        r.alias_layouts(&mut table);
        assert_eq!(table.types.get("digest::A"), Some(&layout(4)));
        // One spelling, two layouts: not one type after all, so neither.
        assert_eq!(table.types.get("digest::B"), None);
        assert_eq!(table.types.get("hmac::digest::B"), Some(&layout(4)));
    }
}
