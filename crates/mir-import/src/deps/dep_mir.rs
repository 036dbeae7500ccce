//! One dependency's MIR text, indexed by item header, and the lookups
//! that find the item a kernel's printed name means: by def path, through
//! a re-export, or among the impl blocks whose source header matches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path as FsPath, PathBuf};

use super::instances::ImplHeader;
use super::source;

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

    /// The body of the inherent method a call prints as `m::Ty::method`
    /// (the crate's name stripped): the crate's MIR prints it under the
    /// impl block (`m::<impl at src/m.rs:30:1: 30:8>::method`), and the one
    /// block of module `m` whose source header reads `impl Ty` is it.
    fn find_inherent_method(&self, rest: &str) -> Option<&str> {
        // `Ty::m`, or an item of the method's own (`Ty::m::promoted[0]`, a
        // `const` declared in its body, `Ty::m::JUMP`), which the block
        // holds as `m::promoted[0]`, `m::JUMP`.
        self.find_inherent_item(rest, 1)
            .or_else(|| self.find_inherent_item(rest, 2))
    }

    /// [`Self::find_inherent_method`] with the item's last `depth` segments
    /// under the block.
    fn find_inherent_item(&self, rest: &str, depth: usize) -> Option<&str> {
        let segments: Vec<&str> = rest.split("::").collect();
        let at = segments.len().checked_sub(depth)?;
        let owner = segments[..at].join("::");
        let method = &segments[at..].join("::");
        let own_method = segments[at];
        let (module, ty_name) = owner.rsplit_once("::").unwrap_or(("", owner.as_str()));
        if ty_name.contains('<') || own_method.contains(['<', '[', '{']) {
            return None;
        }
        let in_module = |module: &str, ty_name: &str| {
            self.find_in_impl_blocks(module, method, ty_name, |h| {
                h.params.is_empty() && h.trait_name.is_none() && h.self_args.is_empty()
            })
        };
        if let Some(found) = in_module(module, ty_name) {
            return Some(found);
        }
        // A type printed through a re-export (`ethnum::U256`, which
        // `lib.rs` re-exports from `uint`): its impl blocks are in the
        // declaring module.
        let (module, text) = self.module_source(module)?;
        let declared = source::reexported_item(&text, &module, ty_name, source::Namespace::Type)?;
        let (own_name, declaring) = declared.split_last()?;
        in_module(&declaring.join("::"), own_name)
    }

    /// The one item `method` (`new`, or `new::promoted[1]`) of an impl
    /// block of `module` for the type named `self_name` whose source header
    /// `is_it` accepts (see [`Self::impl_block_candidates`]).
    fn find_in_impl_blocks(
        &self,
        module: &str,
        method: &str,
        self_name: &str,
        is_it: impl Fn(&ImplHeader) -> bool,
    ) -> Option<&str> {
        match self.impl_block_candidates(module, method, self_name, is_it)[..] {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The items `method` of the impl blocks of `module` for the type named
    /// `self_name` whose source header `is_it` accepts. A block a macro
    /// writes for a metavariable (`impl VariableOutputCore for $name`) is
    /// printed once per expansion under the same span; such a block counts
    /// only when the metavariable is its header's one, and only through the
    /// expansion whose item's signature shows `self_name` where the self
    /// type goes ([`Self::signature_shows_self`]). A promoted or closure
    /// follows its owner's expansion.
    fn impl_block_candidates(
        &self,
        module: &str,
        method: &str,
        self_name: &str,
        is_it: impl Fn(&ImplHeader) -> bool,
    ) -> Vec<&str> {
        let prefix = if module.is_empty() {
            "<impl at ".to_string()
        } else {
            format!("{module}::<impl at ")
        };
        let suffix = format!(">::{method}");
        self.items
            .keys()
            .filter(|k| {
                let Some(span) = k
                    .strip_prefix(&prefix)
                    .and_then(|rest| rest.strip_suffix(&suffix))
                    .filter(|span| !span.contains('>'))
                else {
                    return false;
                };
                let Some(text) = self.impl_header(span) else {
                    return false;
                };
                ImplHeader::parse(&text).is_some_and(|h| {
                    is_it(&h)
                        && (h.self_name == self_name
                            || (h.self_name.starts_with('$')
                                && metavariables(&text) == 1
                                && self.signature_shows_self(k, self_name)))
                })
            })
            .map(String::as_str)
            .collect()
    }

    /// Whether the signature of the impl item `key` belongs to shows the
    /// type named `ty_name` (no arguments) where a macro-written block's
    /// self type goes: a constant's type (`ZERO: u32`), a method's first
    /// parameter (`_1: u32`, `_1: &mut T`), or its result or the result's
    /// first argument (`-> Result<Blake2sVarCore, ..>`).
    fn signature_shows_self(&self, key: &str, ty_name: &str) -> bool {
        let Some(&(from, to)) = impl_item(key).and_then(|owner| self.items.get(owner)) else {
            return false;
        };
        let line = self.text[from..to].lines().next().unwrap_or("");
        let Some((_, rest)) = item_keyword(line) else {
            return false;
        };
        let signature = &rest[header_path(rest).len()..];
        // The type's last segment, with no arguments of its own.
        let is_it = |t: &str| {
            let t = t.trim();
            let t = t
                .strip_prefix("&mut ")
                .or_else(|| t.strip_prefix('&'))
                .unwrap_or(t)
                .trim_start();
            !t.contains(['<', '[', '(', ' ']) && t.rsplit("::").next() == Some(ty_name)
        };
        if let Some(ty) = signature.strip_prefix(": ") {
            // `ZERO: u32 = const 0_u32;` or `ZERO: u32 = {`.
            return ty.split(" = ").next().is_some_and(is_it);
        }
        let Some(params) = signature.strip_prefix('(') else {
            return false;
        };
        let first_param = params
            .split_once(": ")
            .map(|(_, t)| t.split([',', ')']).next().unwrap_or(t));
        let result = signature
            .split_once(") -> ")
            .map(|(_, r)| r.trim_end_matches(['{', ' ']));
        let result_arg = result
            .and_then(|r| r.split_once('<'))
            .map(|(_, a)| a.split([',', '>']).next().unwrap_or(a));
        [first_param, result, result_arg]
            .into_iter()
            .flatten()
            .any(is_it)
    }

    /// The item `item` of the one inherent impl block, in any module, whose
    /// header names the self type `owner` (its last segment), with that
    /// header: the generic item an instance names (`Vec::<u32, 8>::INIT`).
    pub(super) fn find_generic(&self, owner: &str, item: &str) -> Option<(&str, ImplHeader)> {
        let suffix = format!(">::{item}");
        let mut found = self.items.keys().filter_map(|k| {
            let span = k.strip_suffix(&suffix)?.rsplit_once("<impl at ")?.1;
            if span.contains('>') {
                return None;
            }
            let h = ImplHeader::parse(&self.impl_header(span)?)?;
            (h.trait_name.is_none() && h.self_name == owner).then_some((k.as_str(), h))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// The body of the trait method the kernel calls `<A as T>::m`, with `A`
    /// a type of this crate. Its own MIR prints the method under the impl
    /// block's position (`rngs::xoshiro256plusplus::<impl at src/..:28:1:
    /// 28:40>::from_seed`), and the trait by its defining crate where the
    /// kernel prints a re-export (`rand_core::SeedableRng` for
    /// `rand::SeedableRng`). So the candidates are the blocks of `A`'s module
    /// with a method `m`, and the one whose source reads `impl .. T .. for A`
    /// is it; none or several leave the call unresolved. `m` may name an
    /// item of the method's own (`new::promoted[1]`).
    ///
    /// A primitive `A` (`<f32 as ryu::buffer::Sealed>::format_nonfinite`, a
    /// sealed trait of this crate) has no module here: the blocks of the
    /// trait's module are the candidates. They are also where a type's
    /// block is looked for last (`impl Sealed for super::Lazy` in
    /// block_buffer's `sealed`).
    fn find_trait_method(&self, name: &str) -> Option<&str> {
        let (self_ty, trait_name, method) = crate::model::impls::trait_call(name)?;
        let own = format!("{}::", self.crate_name);
        // `m`, or an item of its own (`m::promoted[1]`).
        let own_method = method.split("::").next().unwrap_or(method);
        if self_ty.contains('<') || own_method.contains(['<', '[', '{']) {
            return None;
        }
        let trait_path = name.split_once(" as ")?.1.split('>').next()?;
        let trait_module = trait_path
            .strip_prefix(&own)
            .map(|t| t.rsplit_once("::").map_or("", |(m, _)| m));
        let (module, ty_name) = match self_ty.strip_prefix(&own) {
            Some(ty) => ty.rsplit_once("::").unwrap_or(("", ty)),
            None if is_primitive(self_ty) => (trait_module?, self_ty),
            None => return None,
        };
        let is_it =
            |h: &ImplHeader| h.params.is_empty() && h.trait_name.as_deref() == Some(trait_name);
        let in_module = self.impl_block_candidates(module, method, ty_name, is_it);
        match in_module[..] {
            [only] => return Some(only),
            [] => {}
            _ => return None,
        }
        // A sealed trait's impls sit beside the trait (`impl Sealed for
        // super::Lazy` in `sealed`): a block there counts when its header's
        // self path, read from that module, is the type's own.
        let trait_module = trait_module.filter(|m| *m != module)?;
        let own_path: Vec<String> = module
            .split("::")
            .filter(|m| !m.is_empty())
            .chain([ty_name])
            .map(str::to_string)
            .collect();
        let trait_segments: Vec<String> = trait_module.split("::").map(str::to_string).collect();
        self.find_in_impl_blocks(trait_module, method, ty_name, |h| {
            let written: Vec<String> = h.self_path.split("::").map(str::to_string).collect();
            is_it(h)
                && written.len() > 1
                && source::resolve_use_path(&written, &trait_segments).as_ref() == Some(&own_path)
        })
    }

    /// The generic parameters of method `method`, whose item (or one of
    /// its promoteds) has key `key` under an `<impl at ..>` span, as its
    /// block's source declares them.
    pub(super) fn method_params(
        &self,
        key: &str,
        method: &str,
    ) -> Option<Vec<(String, Option<String>)>> {
        let open = key.rfind("<impl at ")?;
        let span = &key[open + "<impl at ".len()..];
        let span = span_site(&span[..span.find('>')?]);
        let (file, rest) = span.split_once(".rs:")?;
        let text = std::fs::read_to_string(self.source_file(file)?).ok()?;
        let (line, column) = rest.split_once(": ")?.0.split_once(':')?;
        source::impl_method_params(&text, line.parse().ok()?, column.parse().ok()?, method)
    }

    /// The file of this crate that a span's path (without `.rs`) names.
    fn source_file(&self, printed: &str) -> Option<PathBuf> {
        let dir_name = self.src_dir.file_name()?.to_str()?;
        let rel = printed.split_once(&format!("/{dir_name}/"))?.1;
        Some(self.src_dir.join(format!("{rel}.rs")))
    }

    /// The source text an `<impl at FILE:L:C: L2:C2>` span covers (the
    /// impl's header), read from the crate's folder.
    fn impl_header(&self, span: &str) -> Option<String> {
        let (file, rest) = span_site(span).split_once(".rs:")?;
        let text = std::fs::read_to_string(self.source_file(file)?).ok()?;
        let (start, end) = rest.split_once(": ")?;
        let pos = |p: &str| -> Option<(usize, usize)> {
            let (l, c) = p.split_once(':')?;
            Some((l.parse().ok()?, c.parse().ok()?))
        };
        let ((l1, c1), (l2, c2)) = (pos(start)?, pos(end)?);
        let lines: Vec<&str> = text.lines().collect();
        let mut out = String::new();
        for l in l1..=l2 {
            let line = lines.get(l.checked_sub(1)?)?;
            let from = if l == l1 { c1.saturating_sub(1) } else { 0 };
            let to = if l == l2 {
                c2.saturating_sub(1)
            } else {
                line.len()
            };
            out.push_str(line.get(from..to)?);
            out.push(' ');
        }
        Some(out)
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

/// Whether `ty` is a primitive type's name (`f32`, `u64`, `bool`).
pub(super) fn is_primitive(ty: &str) -> bool {
    matches!(ty, "bool" | "char" | "str")
        || crate::model::IntTy::from_name(ty).is_some()
        || matches!(ty, "f16" | "f32" | "f64" | "f128")
}

/// The keyword an item's first line starts with (`const `, `static mut `,
/// `static `, `fn `), and the rest of the line after it.
fn item_keyword(line: &str) -> Option<(&'static str, &str)> {
    ["const ", "static mut ", "static ", "fn "]
        .into_iter()
        .find_map(|kw| Some((kw, line.strip_prefix(kw)?)))
}

/// How many distinct macro metavariables (`$name`) an impl header's text
/// holds.
fn metavariables(header: &str) -> usize {
    let mut names = BTreeSet::new();
    for (at, _) in header.match_indices('$') {
        let rest = &header[at + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        names.insert(&rest[..end]);
    }
    names.len()
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
    fn dep_tree(
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

    /// `rand`'s MIR prints trait methods under their impl block's position
    /// and the trait by its defining crate; the kernel prints the type and a
    /// re-export of the trait.
    #[test]
    fn trait_methods_are_found_by_the_impl_header_their_span_covers() {
        let body = |block: &str, m: &str| {
            format!(
                "fn rngs::xo::<impl at /work/vendor/rand-0.8.8/src/rngs/xo.rs:{block}>::{m}(_1: u64) -> rngs::xo::Xo {{\n    let mut _0: rngs::xo::Xo;\n\n    bb0: {{\n        _0 = rngs::xo::Xo;\n        return;\n    }}\n}}\n\n"
            )
        };
        let text = [
            body("2:1: 2:25", "seed_from_u64"),
            body("4:1: 5:11", "seed_from_u64"),
            body("4:1: 5:11", "next"),
            body("7:1: 7:8", "new"),
        ]
        .concat();
        let source = "pub struct Xo;\nimpl SeedableRng for Xo {\n}\nimpl RngCore\n    for Xo {\n}\nimpl Xo {\n}\n";
        let (_tmp, d) = dep_tree("rand", "rand-0.8.8", &text, &[("src/rngs/xo.rs", source)]);
        let name = "<rand::rngs::xo::Xo as rand::SeedableRng>::seed_from_u64";
        let header = d.find(name).expect("found");
        assert_eq!(
            header,
            "rngs::xo::<impl at /work/vendor/rand-0.8.8/src/rngs/xo.rs:2:1: 2:25>::seed_from_u64"
        );
        // The other block's header spans two lines.
        assert!(
            d.find("<rand::rngs::xo::Xo as rand_core::RngCore>::next")
                .is_some()
        );
        assert_eq!(
            d.find("<rand::rngs::xo::Xo as rand::Other>::seed_from_u64"),
            None
        );
        // An inherent method: printed by its type in the call, under its
        // block in the crate's MIR; a trait's block does not count.
        assert_eq!(
            d.find("rand::rngs::xo::Xo::new"),
            Some("rngs::xo::<impl at /work/vendor/rand-0.8.8/src/rngs/xo.rs:7:1: 7:8>::new")
        );
        assert_eq!(d.find("rand::rngs::xo::Xo::next"), None);
        let renamed = d.item_text(header, name).expect("text");
        assert!(
            renamed.starts_with(&format!("fn {name}(_1: u64) -> rand::rngs::xo::Xo {{")),
            "{renamed}"
        );
        let parsed = crate::parse::parse_mir_named(&renamed, "gpu").expect("parses");
        assert_eq!(parsed.bodies[0].path.def_path(), name);
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

    /// `ethnum::U256::ZERO`: the type is re-exported at the root from
    /// `uint`, where its impl block (and so the constant's MIR) lives.
    #[test]
    fn an_inherent_item_of_a_reexported_type_is_found_in_the_declaring_module() {
        let mir = "const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::ZERO: uint::U256 = uint::U256([const 0_u128, const 0_u128]);\n\
                   const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::promoted[0]: &[u64; 1] = const 7_u64;\n\
                   const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::JUMP: [u64; 1] = const 7_u64;\n\
                   const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:3:1: 3:16>::ZERO: uint::U256 = uint::U256([const 1_u128, const 0_u128]);\n";
        let lib = "mod uint;\npub use uint::U256;\n";
        let uint = "pub struct U256(pub [u128; 2]);\nimpl U256 {}\nimpl Other for U256 {}\n";
        let (_tmp, d) = dep_tree(
            "ethnum",
            "ethnum-1.5.3",
            mir,
            &[("src/lib.rs", lib), ("src/uint.rs", uint)],
        );
        assert_eq!(
            d.find("ethnum::U256::ZERO"),
            Some("uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::ZERO")
        );
        assert_eq!(d.find("ethnum::I256::ZERO"), None);
        // An inherent method's promoted (rand_xoshiro's `jump`'s table).
        assert_eq!(
            d.find("ethnum::U256::jump::promoted[0]"),
            Some(
                "uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::promoted[0]"
            )
        );
        assert_eq!(
            d.find("ethnum::uint::U256::jump::JUMP"),
            Some("uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::JUMP")
        );
        assert_eq!(d.find("ethnum::U256::jump::promoted[1]"), None);
    }

    /// blake2's `impl VariableOutputCore for $name`, expanded for
    /// `Blake2bVarCore` and then `Blake2sVarCore`: both expansions print
    /// their items, promoteds included, under the macro's one span.
    #[test]
    fn a_macro_expanded_block_is_told_apart_by_its_signatures() {
        let span = "/work/vendor/blake2-0.10.6/src/macros.rs:3:9: 3:42";
        let expansion = |ty: &str, len: u32| {
            format!(
                "fn <impl at {span}>::new(_1: usize) -> Result<{ty}, E> {{\n    bb0: {{\n        return;\n    }}\n}}\n\n\
                 const <impl at {span}>::new::promoted[1]: &[u8; {len}] = {{\n    let mut _0: &[u8; {len}];\n    let mut _1: [u8; {len}];\n\n    bb0: {{\n        _1 = [const 0_u8; {len}];\n        _0 = &_1;\n        return;\n    }}\n}}\n\n"
            )
        };
        let mir = [
            expansion("Blake2bVarCore", 2),
            expansion("Blake2sVarCore", 3),
        ]
        .concat();
        let macros = "macro_rules! blake2_impl {\n    ($name:ident) => {\n        impl VariableOutputCore for $name {\n        }\n    };\n}\n";
        let (_tmp, d) = dep_tree(
            "blake2",
            "blake2-0.10.6",
            &mir,
            &[("src/macros.rs", macros)],
        );
        let name =
            "<blake2::Blake2sVarCore as digest::core_api::VariableOutputCore>::new::promoted[1]";
        let key = d.find(name).expect("the second expansion's promoted");
        let text = d.item_text(key, name).expect("text");
        assert!(text.contains("[u8; 3]"), "{text}");
        let parsed = crate::parse::parse_mir_named(&text, "gpu").expect("parses");
        assert_eq!(parsed.bodies.len(), 1);
        let b = d
            .find("<blake2::Blake2bVarCore as digest::core_api::VariableOutputCore>::new")
            .expect("the first expansion's method");
        assert!(
            d.item_text(b, "x")
                .expect("text")
                .contains("Blake2bVarCore")
        );
        // The first expansion's promoted follows the first expansion.
        let b1 = d
            .find("<blake2::Blake2bVarCore as digest::core_api::VariableOutputCore>::new::promoted[1]")
            .expect("the first expansion's promoted");
        assert!(d.item_text(b1, "x").expect("text").contains("[u8; 2]"));
        // A type no expansion's signature names, or another trait.
        assert_eq!(
            d.find("<blake2::Other as digest::core_api::VariableOutputCore>::new"),
            None
        );
        assert_eq!(
            d.find("<blake2::Blake2sVarCore as digest::Other>::new"),
            None
        );
    }

    /// block_buffer's `impl Sealed for super::Lazy` sits in `sealed`, beside
    /// the trait, not in the type's module; its generic method's promoted
    /// is found there, with the method's parameters.
    #[test]
    fn a_sealed_traits_impl_is_found_in_the_traits_module() {
        let span = "/work/vendor/block-buffer-0.10.4/src/sealed.rs:2:1: 2:28";
        let mir = format!(
            "const sealed::<impl at {span}>::split::promoted[1]: &[Block<N>; 0] = {{\n    let mut _0: &[Block<N>; 0];\n    let mut _1: [Block<N>; 0];\n\n    bb0: {{\n        _1 = [];\n        _0 = &_1;\n        return;\n    }}\n}}\n"
        );
        let sealed = "pub trait Sealed {}\nimpl Sealed for super::Lazy {\n    fn split<N: Len>(d: &[u8]) {}\n}\n";
        let (_tmp, d) = dep_tree(
            "block_buffer",
            "block-buffer-0.10.4",
            &mir,
            &[
                ("src/lib.rs", "mod sealed;\npub struct Lazy;\n"),
                ("src/sealed.rs", sealed),
            ],
        );
        let name = "<block_buffer::Lazy as block_buffer::sealed::Sealed>::split::promoted[1]";
        let key = d.find(name).expect("found beside the trait");
        assert_eq!(
            d.method_params(key, "split"),
            Some(vec![("N".to_string(), None)])
        );
        assert_eq!(
            d.find("<block_buffer::Eager as block_buffer::sealed::Sealed>::split::promoted[1]"),
            None
        );
        // A bare self name beside the trait may be any `Lazy` the module
        // imports: not taken.
        let bare = sealed.replace("super::Lazy", "Lazy");
        let (_tmp2, d) = dep_tree(
            "block_buffer",
            "block-buffer-0.10.4",
            &mir,
            &[
                ("src/lib.rs", "mod sealed;\npub struct Lazy;\n"),
                ("src/sealed.rs", &bare),
            ],
        );
        assert_eq!(d.find(name), None);
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
        assert_eq!(metavariables("impl From<$a> for $b where $b: X"), 2);
        assert_eq!(metavariables("impl Tr for $t"), 1);
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

    /// Blocks a macro writes are refused where the expansion cannot be
    /// told from the signature: two metavariables in the header, a self
    /// type with arguments of its own, the type only in a parameter after
    /// the first.
    #[test]
    fn macro_blocks_are_refused_where_the_signature_does_not_tell() {
        let mir = "const <impl at /work/vendor/w-1.0.0/src/lib.rs:3:9: 3:30>::X: Wrapper<u8> = const 1_u8;\n\
                   fn <impl at /work/vendor/w-1.0.0/src/lib.rs:4:9: 4:34>::from(_1: u8, _2: Other) -> Y {\n    bb0: {\n        return;\n    }\n}\n\n\
                   fn <impl at /work/vendor/w-1.0.0/src/lib.rs:5:9: 5:22>::f(_1: u16, _2: Other) -> u32 {\n    bb0: {\n        return;\n    }\n}\n";
        let lib = "macro_rules! m {\n    ($t:ty, $u:ty) => {\n        impl Konst for $t {\n        impl From<$u> for $t {\n        impl Tr for $t {\n    };\n}\n";
        let (_tmp, d) = dep_tree("w", "w-1.0.0", mir, &[("src/lib.rs", lib)]);
        assert_eq!(d.find("<w::Wrapper as w::Konst>::X"), None);
        assert_eq!(d.find("<w::Y as w::From>::from"), None);
        assert_eq!(d.find("<w::Other as w::Tr>::f"), None);
        assert!(d.find("<u16 as w::Tr>::f").is_some());
    }
}
