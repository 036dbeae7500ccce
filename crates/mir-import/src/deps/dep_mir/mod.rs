//! One dependency's MIR text, indexed by item header, and the lookups
//! that find the item a kernel's printed name means: by def path, through
//! a re-export, or among the impl blocks whose source header matches
//! ([`impl_blocks`], which reads headers through [`spans`]).

mod impl_blocks;
mod spans;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path as FsPath, PathBuf};

use super::source;

pub(super) use impl_blocks::is_primitive;

/// One dependency's MIR text, indexed by item.
pub(super) struct DepMir {
    crate_name: String,
    text: String,
    /// Header path (`math::powf::DP_H`, `math::expf::expf::promoted[0]`) →
    /// the item's byte range. An impl block that a macro expands several
    /// times prints its items under one span each time: the later
    /// expansions' keys are marked ([`expansion_key`]).
    items: BTreeMap<String, (usize, usize)>,
    /// The first segments of the crate's own item paths (`math`).
    pub(super) modules: BTreeSet<String>,
    /// The crate's root items that its MIR names by one segment
    /// (`Sha1State`, `DEFAULT_STATE`).
    pub(super) roots: BTreeSet<String>,
    /// The crate's folder, where the `<impl at ..>` spans of its MIR point.
    pub(super) src_dir: PathBuf,
    /// Allocation id → the byte range of its first dump (`allocN (..) {`
    /// to its `}`; rustc prints an allocation after each body that uses
    /// it, the same each time).
    allocs: BTreeMap<u32, (usize, usize)>,
}

impl DepMir {
    pub(super) fn read(crate_name: &str, path: &FsPath, src_dir: PathBuf) -> Option<DepMir> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut items = BTreeMap::new();
        let mut modules = BTreeSet::new();
        let mut roots = BTreeSet::new();
        let mut offset = 0;
        let mut open: Option<(String, usize)> = None;
        let mut allocs = BTreeMap::new();
        let mut open_alloc: Option<(u32, usize)> = None;
        // Impl item (`m::<impl at S>::new`) → the expansions seen so far.
        let mut expansions: BTreeMap<String, usize> = BTreeMap::new();
        let mut ctfe_copy = false;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            let l = line.trim_end();
            let after_ctfe_marker = std::mem::replace(&mut ctfe_copy, l == "// MIR FOR CTFE");
            if let Some((id, from)) = open_alloc {
                if l == "}" {
                    allocs.entry(id).or_insert((from, offset));
                    open_alloc = None;
                }
                continue;
            }
            if open.is_none()
                && let Some(id) = dump_id(l)
            {
                if l.ends_with('{') {
                    open_alloc = Some((id, start));
                } else {
                    allocs.entry(id).or_insert((start, offset));
                }
                continue;
            }
            if let Some((name, from)) = &open {
                if l == "}" {
                    items.insert(name.clone(), (*from, offset));
                    open = None;
                }
                continue;
            }
            let Some((_, rest)) = item_keyword(l) else {
                continue;
            };
            let path = header_path(rest);
            let key = match impl_item(path) {
                Some(item) => {
                    let seen = expansions.entry(item.to_string()).or_default();
                    // A const fn's CTFE copy follows its body and replaces
                    // it (outside impl blocks, an item printed twice keeps
                    // its last printing).
                    if item == path && !after_ctfe_marker {
                        *seen += 1;
                    }
                    expansion_key(path, seen.saturating_sub(1))
                }
                None => path.to_string(),
            };
            if let Some(first) = path.split("::").next()
                && path.contains("::")
                && !first.starts_with('<')
            {
                modules.insert(first.to_string());
            }
            if !path.contains("::") && !path.contains('<') {
                roots.insert(path.to_string());
            }
            if l.ends_with('{') {
                open = Some((key, start));
            } else {
                items.insert(key, (start, offset));
            }
        }
        Some(DepMir {
            crate_name: crate_name.to_string(),
            text,
            items,
            modules,
            roots,
            src_dir,
            allocs,
        })
    }

    /// The dump of allocation `id` as the crate printed it, with the
    /// crate's own paths given the crate's name (`static:
    /// table::CRC32_TABLE` becomes `crc32fast::table::CRC32_TABLE`).
    pub(super) fn alloc_dump(&self, id: u32) -> Option<String> {
        let &(from, to) = self.allocs.get(&id)?;
        let mut out = String::with_capacity(to - from + 16);
        self.qualify(&self.text[from..to], &mut out);
        Some(out)
    }

    /// The header path of the item the kernel calls `name` (a path that
    /// starts with this crate's name).
    pub(super) fn find(&self, name: &str) -> Option<&str> {
        if name.starts_with('<') {
            return self.find_trait_method(name);
        }
        let rest = name.strip_prefix(&format!("{}::", self.crate_name))?;
        if let Some((k, _)) = self.items.get_key_value(rest) {
            return Some(k);
        }
        // Printed through a re-export: the one item whose path ends with
        // the printed one's last two segments (`powf::promoted[6]`).
        let segs: Vec<&str> = rest.split("::").collect();
        let tail = segs[segs.len().saturating_sub(2)..].join("::");
        let suffix = format!("::{tail}");
        let mut found = self
            .items
            .keys()
            .filter(|k| k.ends_with(&suffix) && !k.contains('<'));
        match (found.next(), found.next()) {
            (Some(only), None) => Some(only.as_str()),
            (Some(_), Some(_)) => self.find_reexport(rest),
            (None, _) => self
                .find_reexport(rest)
                .or_else(|| self.find_inherent_method(rest)),
        }
    }

    /// The item a name printed through a re-exporting module names
    /// (`prelude::STANDARD`, which `prelude.rs` re-exports as `pub use
    /// crate::engine::general_purpose::STANDARD as BASE64_STANDARD;`):
    /// rustc prints the module of the re-export and the item's own name.
    fn find_reexport(&self, rest: &str) -> Option<&str> {
        let (module, name) = rest.rsplit_once("::").unwrap_or(("", rest));
        let (module, text) = self.module_source(module)?;
        let declared =
            source::reexported_item(&text, &module, name, source::Namespace::Value)?.join("::");
        self.items.get_key_value(&declared).map(|(k, _)| k.as_str())
    }

    /// Module `module` (`a::b`, empty for the root) as segments, with its
    /// source text.
    fn module_source(&self, module: &str) -> Option<(Vec<String>, String)> {
        let module: Vec<String> = module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let text = source::read_module(&self.src_dir.join("src"), &module)?;
        Some((module, text))
    }

    /// The text of item `header`, renamed to `name` and with the crate's
    /// own paths given the crate's name.
    pub(super) fn item_text(&self, header: &str, name: &str) -> Option<String> {
        let &(from, to) = self.items.get(header)?;
        let text = &self.text[from..to];
        let mut out = String::with_capacity(text.len() + 64);
        // The header: its path becomes the kernel's name.
        let (kw, rest) = item_keyword(text)?;
        out.push_str(kw);
        out.push_str(name);
        // The printed header, which an expansion's key does not spell.
        self.qualify(&rest[header_path(rest).len()..], &mut out);
        Some(out)
    }

    /// Copies `text` to `out`, each path that starts with one of the
    /// crate's own modules or root items given the crate's name.
    fn qualify(&self, text: &str, out: &mut String) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let boundary = i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b':');
            if boundary && (c.is_ascii_alphabetic() || c == b'_') {
                let end = text[i..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .map_or(text.len(), |e| i + e);
                let word = &text[i..end];
                let module = text[end..].starts_with("::") && self.modules.contains(word);
                if module || self.roots.contains(word) {
                    out.push_str(&self.crate_name);
                    out.push_str("::");
                }
                out.push_str(word);
                i = end;
                continue;
            }
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
}

/// The keyword an item's first line starts with (`const `, `static mut `,
/// `static `, `fn `), and the rest of the line after it.
fn item_keyword(line: &str) -> Option<(&'static str, &str)> {
    ["const ", "static mut ", "static ", "fn "]
        .into_iter()
        .find_map(|kw| Some((kw, line.strip_prefix(kw)?)))
}

/// The impl item a header path belongs to: the path up to the segment
/// after its last `<impl at ..>` span (`m::<impl at S>::new` for
/// `m::<impl at S>::new::promoted[1]` and for itself); `None` outside
/// impl blocks. A promoted or a closure is printed right after its owner.
fn impl_item(path: &str) -> Option<&str> {
    let open = path.rfind("<impl at ")?;
    let close = open + path[open..].find('>')?;
    let rest = path[close + 1..].strip_prefix("::")?;
    let after = path.len() - rest.len();
    let end = rest.find("::").map_or(path.len(), |e| after + e);
    Some(&path[..end])
}

/// The key of header `path` in its impl block's `expansion`-th expansion
/// (from 0): the path itself for the first, else the last span marked
/// (`<impl at S #2>`), which [`span_site`] takes off again.
fn expansion_key(path: &str, expansion: usize) -> String {
    if expansion == 0 {
        return path.to_string();
    }
    let Some(close) = path
        .rfind("<impl at ")
        .and_then(|open| path[open..].find('>').map(|c| open + c))
    else {
        return path.to_string();
    };
    format!("{} #{expansion}{}", &path[..close], &path[close..])
}

/// A span as printed (`FILE:L:C: L2:C2`), without the expansion mark of
/// [`expansion_key`].
fn span_site(span: &str) -> &str {
    span.rsplit_once(" #")
        .filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit()))
        .map_or(span, |(site, _)| site)
}

/// The id of an allocation dump's first line (`alloc8 (static: S, size:
/// 16384, align: 4) {`).
fn dump_id(line: &str) -> Option<u32> {
    let rest = line.strip_prefix("alloc")?;
    let (digits, after) = rest.split_once(' ')?;
    if !after.starts_with('(') {
        return None;
    }
    digits.parse().ok()
}

/// The first path of a header after its keyword: up to the `:` of the type
/// (for a const or static) or the `(` of the parameters, outside `<..>`.
fn header_path(rest: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => return &rest[..i],
            ':' if depth == 0 && !rest[i..].starts_with("::") && !rest[..i].ends_with(':') => {
                return &rest[..i];
            }
            _ => {}
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_paths_stop_at_the_type_outside_impl_spans() {
        assert_eq!(
            header_path("math::powf::DP_H: [f32; 2] = {"),
            "math::powf::DP_H"
        );
        assert_eq!(
            header_path("math::expf::expf::promoted[0]: &[f32; 2] = {"),
            "math::expf::expf::promoted[0]"
        );
        assert_eq!(
            header_path("m::<impl at /s/b.rs:55:1: 55:21>::BITS: u32 = const 256_u32;"),
            "m::<impl at /s/b.rs:55:1: 55:21>::BITS"
        );
        assert_eq!(
            header_path("math::sinf::sinf(_1: f32) -> f32 {"),
            "math::sinf::sinf"
        );
    }

    /// Dependency `krate`, with MIR `mir` and the source files `files`
    /// (paths below its folder `folder`), in a temporary folder that lives
    /// as long as the returned guard.
    pub(super) fn dep_tree(
        krate: &str,
        folder: &str,
        mir: &str,
        files: &[(&str, &str)],
    ) -> (tempfile::TempDir, DepMir) {
        let tmp = tempfile::tempdir().expect("temporary folder");
        let root = tmp.path().join(folder);
        for (rel, text) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("dir");
            std::fs::write(path, text).expect("write");
        }
        let mir_file = tmp.path().join(format!("{krate}.mir"));
        std::fs::write(&mir_file, mir).expect("write");
        let dep = DepMir::read(krate, &mir_file, root).expect("read");
        (tmp, dep)
    }

    /// `libm`, with MIR `text` and no source.
    fn dep(text: &str) -> (tempfile::TempDir, DepMir) {
        dep_tree("libm", "libm-0.2.0", text, &[])
    }

    #[test]
    fn items_are_found_by_def_path_or_through_a_reexport_and_renamed() {
        let (_tmp, d) = dep(
            "const math::powf::DP_H: [f32; 2] = {\n    let mut _0: [f32; 2];\n\n    bb0: {\n        _0 = [const 0f32, const 1f32];\n        return;\n    }\n}\n\n\
             const math::powf::powf::promoted[1]: &[f32; 2] = {\n    let mut _0: &[f32; 2];\n    let mut _1: [f32; 2];\n\n    bb0: {\n        _1 = const math::powf::DP_H;\n        _0 = &_1;\n        return;\n    }\n}\n\n\
             const math::sinf::K: u32 = const 3_u32;\n",
        );
        assert_eq!(d.find("libm::math::powf::DP_H"), Some("math::powf::DP_H"));
        assert_eq!(
            d.find("libm::powf::promoted[1]"),
            Some("math::powf::powf::promoted[1]")
        );
        assert_eq!(d.find("libm::K"), Some("math::sinf::K"));
        assert_eq!(d.find("libm::nothing"), None);
        assert_eq!(d.find("other::math::powf::DP_H"), None);
        let text = d
            .item_text("math::powf::powf::promoted[1]", "libm::powf::promoted[1]")
            .expect("text");
        assert!(
            text.starts_with("const libm::powf::promoted[1]: &[f32; 2] = {"),
            "{text}"
        );
        assert!(
            text.contains("_1 = const libm::math::powf::DP_H;"),
            "{text}"
        );
        let parsed = crate::parse::parse_mir_named(&text, "gpu").expect("parses");
        assert_eq!(parsed.bodies.len(), 1);
    }

    #[test]
    fn a_name_printed_through_a_reexporting_module_follows_its_use() {
        let (_tmp, d) = dep_tree(
            "base64",
            "base64-0.22.1",
            "const alphabet::STANDARD: u8 = const 1_u8;\nconst engine::general_purpose::STANDARD: u32 = const 2_u32;\n",
            &[(
                "src/prelude.rs",
                "pub use crate::engine::general_purpose::STANDARD as BASE64_STANDARD;\npub use crate::engine::Engine;\n",
            )],
        );
        // Two items end in `STANDARD`; the prelude's `use` says which.
        assert_eq!(
            d.find("base64::prelude::STANDARD"),
            Some("engine::general_purpose::STANDARD")
        );
        assert_eq!(d.find("base64::prelude::OTHER"), None);
    }

    #[test]
    fn an_ambiguous_reexport_is_not_guessed() {
        let (_tmp, d) = dep(
            "const a::f::f::promoted[0]: u32 = const 1_u32;\nconst b::f::f::promoted[0]: u32 = const 2_u32;\n",
        );
        assert_eq!(d.find("libm::f::promoted[0]"), None);
        assert_eq!(
            d.find("libm::a::f::f::promoted[0]"),
            Some("a::f::f::promoted[0]")
        );
    }

    #[test]
    fn expansion_keys_mark_the_last_span_and_come_off_again() {
        let item = "m::<impl at /s/a.rs:1:1: 1:9>::new";
        assert_eq!(impl_item(&format!("{item}::promoted[1]")), Some(item));
        assert_eq!(impl_item(&format!("{item}::{{closure#0}}")), Some(item));
        assert_eq!(impl_item(item), Some(item));
        assert_eq!(impl_item("m::f::promoted[0]"), None);
        let marked = expansion_key(&format!("{item}::promoted[1]"), 2);
        assert_eq!(marked, "m::<impl at /s/a.rs:1:1: 1:9 #2>::new::promoted[1]");
        assert_eq!(expansion_key(item, 0), item);
        assert_eq!(span_site("/s/a.rs:1:1: 1:9 #2"), "/s/a.rs:1:1: 1:9");
        assert_eq!(span_site("/s/a.rs:1:1: 1:9"), "/s/a.rs:1:1: 1:9");
    }

    /// A const fn is printed twice, its CTFE copy after its body: one
    /// item, not two expansions.
    #[test]
    fn a_const_fns_ctfe_copy_is_not_an_expansion() {
        let span = "/work/vendor/funty-2.0.0/src/lib.rs:2:1: 2:18";
        let f = |body: &str| {
            format!(
                "fn <impl at {span}>::get(_1: Wide) -> u32 {{\n    bb0: {{\n        {body}\n        return;\n    }}\n}}\n\n"
            )
        };
        let mir = [
            f("_0 = const 1_u32;"),
            "// MIR FOR CTFE\n".to_string(),
            f("_0 = const 2_u32;"),
        ]
        .concat();
        let lib = "pub struct Wide;\nimpl Get for Wide {}\n";
        let (_tmp, d) = dep_tree("funty", "funty-2.0.0", &mir, &[("src/lib.rs", lib)]);
        let key = d
            .find("<funty::Wide as funty::Get>::get")
            .expect("one item");
        assert!(!key.contains('#'), "{key}");
    }
}
