//! What a kernel's MIR names of its crates.io dependencies without printing
//! it: their constants and promoteds, and their enums' declarations.
//!
//! rustc inlines a dependency's functions into the kernel
//! ([`crate::rustc::DEPENDENCY_INLINE_THRESHOLD`]), but the inlined code
//! still names the dependency's constants (`const libm::powf::promoted[6]`,
//! `const libm::math::powf::DP_H`), whose bodies only the dependency's own
//! MIR holds, and its enums, whose variant order only its source gives.
//!
//! - **Constants and statics.** Each dependency's MIR text (`kernel-deps` keeps it
//!   beside the rlib) is indexed by item header. A name the kernel uses is
//!   found by its def path without the crate (`math::powf::DP_H`), else,
//!   for a name printed through a public re-export (`libm::powf` for
//!   `math::powf::powf`), by the one item whose path ends the same way; an
//!   ambiguous or missing name is left unresolved, and the lowering refuses
//!   it by name. The item's text is renamed to the kernel's name, its
//!   references to the dependency's own items get the crate's name, and it
//!   is parsed and added; what it names in turn follows.
//! - **Enums and structs.** The module that declares a dependency's type
//!   (`libm::math::generic::sqrt::Exp`) is read from the crate's source
//!   (`src/math/generic/sqrt.rs` or `.../sqrt/mod.rs`), for its variants'
//!   declared discriminants and its fields' names ([`crate::attrs`]).
//! - **Items of generic impl blocks** (`heapless::Vec::<u32, 8>::INIT`, a
//!   method of such a block that rustc left as a call) are instantiated
//!   from the generic text ([`instances`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path as FsPath, PathBuf};

use kernel_deps::BuiltDeps;

use crate::model::{Callee, ConstOperand, Crate, Operand, Path, PathSegment, TerminatorKind, Ty};

mod instances;

/// One dependency's MIR text, indexed by item.
struct DepMir {
    crate_name: String,
    text: String,
    /// Header path (`math::powf::DP_H`, `math::expf::expf::promoted[0]`) →
    /// the item's byte range.
    items: BTreeMap<String, (usize, usize)>,
    /// The first segments of the crate's own item paths (`math`).
    modules: BTreeSet<String>,
    /// The crate's root items that its MIR names by one segment
    /// (`Sha1State`, `DEFAULT_STATE`).
    roots: BTreeSet<String>,
    /// The crate's folder, where the `<impl at ..>` spans of its MIR point.
    src_dir: PathBuf,
}

impl DepMir {
    fn read(crate_name: &str, path: &FsPath, src_dir: PathBuf) -> Option<DepMir> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut items = BTreeMap::new();
        let mut modules = BTreeSet::new();
        let mut roots = BTreeSet::new();
        let mut offset = 0;
        let mut open: Option<(String, usize)> = None;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            let l = line.trim_end();
            if let Some((name, from)) = &open {
                if l == "}" {
                    items.insert(name.clone(), (*from, offset));
                    open = None;
                }
                continue;
            }
            let Some(rest) = l
                .strip_prefix("const ")
                .or_else(|| l.strip_prefix("static mut "))
                .or_else(|| l.strip_prefix("static "))
                .or_else(|| l.strip_prefix("fn "))
            else {
                continue;
            };
            let path = header_path(rest);
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
                open = Some((path.to_string(), start));
            } else {
                items.insert(path.to_string(), (start, offset));
            }
        }
        Some(DepMir {
            crate_name: crate_name.to_string(),
            text,
            items,
            modules,
            roots,
            src_dir,
        })
    }

    /// The header path of the item the kernel calls `name` (a path that
    /// starts with this crate's name).
    fn find(&self, name: &str) -> Option<&str> {
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
    /// crate::engine::general_purpose::STANDARD as BASE64_STANDARD;`): the
    /// one `use crate::..::NAME` of that module's source whose path is an
    /// item here. rustc prints the module of the re-export and the item's
    /// own name.
    fn find_reexport(&self, rest: &str) -> Option<&str> {
        let (module, name) = rest.rsplit_once("::")?;
        let segs: Vec<String> = module.split("::").map(str::to_string).collect();
        let text = std::fs::read_to_string(module_file(&self.src_dir.join("src"), &segs)?).ok()?;
        let mut found = text.lines().filter_map(|l| {
            let used = l.trim().strip_prefix("pub ")?.trim_start();
            let used = used.strip_prefix("use crate::")?;
            let path = used.split([' ', ';']).next()?;
            (path.rsplit("::").next() == Some(name))
                .then(|| self.items.get_key_value(path))
                .flatten()
                .map(|(k, _)| k.as_str())
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// The body of the inherent method a call prints as `m::Ty::method`
    /// (the crate's name stripped): the crate's MIR prints it under the
    /// impl block (`m::<impl at src/m.rs:30:1: 30:8>::method`), and the one
    /// block of module `m` whose source header reads `impl Ty` is it.
    fn find_inherent_method(&self, rest: &str) -> Option<&str> {
        let (owner, method) = rest.rsplit_once("::")?;
        let (module, ty_name) = owner.rsplit_once("::").unwrap_or(("", owner));
        if ty_name.contains('<') || method.contains('<') {
            return None;
        }
        self.find_in_impl_blocks(module, method, |header| {
            let Some(ty) = header.trim().strip_prefix("impl ") else {
                return false;
            };
            !ty.contains(" for ") && ty.trim() == ty_name
        })
    }

    /// The one method `method` of an impl block of `module` whose source
    /// header `is_it` accepts.
    fn find_in_impl_blocks(
        &self,
        module: &str,
        method: &str,
        is_it: impl Fn(&str) -> bool,
    ) -> Option<&str> {
        let prefix = if module.is_empty() {
            "<impl at ".to_string()
        } else {
            format!("{module}::<impl at ")
        };
        let suffix = format!(">::{method}");
        let mut found = self.items.keys().filter(|k| {
            k.strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(&suffix))
                .is_some_and(|span| {
                    !span.contains('>') && self.impl_header(span).is_some_and(|h| is_it(&h))
                })
        });
        let first = found.next()?;
        found.next().is_none().then_some(first.as_str())
    }

    /// The item `item` of the one inherent impl block, in any module, whose
    /// header names the self type `owner` (its last segment), with that
    /// header: the generic item an instance names (`Vec::<u32, 8>::INIT`).
    fn find_generic(&self, owner: &str, item: &str) -> Option<(&str, instances::ImplHeader)> {
        let suffix = format!(">::{item}");
        let mut found = self.items.keys().filter_map(|k| {
            let span = k.strip_suffix(&suffix)?.rsplit_once("<impl at ")?.1;
            if span.contains('>') {
                return None;
            }
            let h = instances::ImplHeader::parse(&self.impl_header(span)?)?;
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
    /// is it; none or several leave the call unresolved.
    ///
    /// A primitive `A` (`<f32 as ryu::buffer::Sealed>::format_nonfinite`, a
    /// sealed trait of this crate) has no module here: the blocks of the
    /// trait's module are the candidates.
    fn find_trait_method(&self, name: &str) -> Option<&str> {
        let (self_ty, trait_name, method) = crate::model::impls::trait_call(name)?;
        let own = format!("{}::", self.crate_name);
        if self_ty.contains('<') || method.contains(['<', ':']) {
            return None;
        }
        let (module, ty_name) = match self_ty.strip_prefix(&own) {
            Some(ty) => ty.rsplit_once("::").unwrap_or(("", ty)),
            None if is_primitive(self_ty) => {
                let trait_path = name.split_once(" as ")?.1.split('>').next()?;
                let in_crate = trait_path.strip_prefix(&own)?;
                (in_crate.rsplit_once("::").map_or("", |(m, _)| m), self_ty)
            }
            None => return None,
        };
        self.find_in_impl_blocks(module, method, |h| impl_is(h, trait_name, ty_name))
    }

    /// The source text an `<impl at FILE:L:C: L2:C2>` span covers (the
    /// impl's header), read from the crate's folder.
    fn impl_header(&self, span: &str) -> Option<String> {
        let (file, rest) = span.split_once(".rs:")?;
        let dir_name = self.src_dir.file_name()?.to_str()?;
        let rel = file.split_once(&format!("/{dir_name}/"))?.1;
        let text = std::fs::read_to_string(self.src_dir.join(format!("{rel}.rs"))).ok()?;
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
    fn item_text(&self, header: &str, name: &str) -> Option<String> {
        let &(from, to) = self.items.get(header)?;
        let text = &self.text[from..to];
        let mut out = String::with_capacity(text.len() + 64);
        let bytes = text.as_bytes();
        let mut i = 0;
        // The header: its path becomes the kernel's name.
        let kw = ["const ", "static mut ", "static ", "fn "]
            .into_iter()
            .find(|k| text.starts_with(k))?;
        out.push_str(kw);
        out.push_str(name);
        i += kw.len() + header.len();
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
        Some(out)
    }
}

/// Whether `ty` is a primitive type's name (`f32`, `u64`, `bool`).
fn is_primitive(ty: &str) -> bool {
    matches!(ty, "bool" | "char" | "str")
        || crate::model::IntTy::from_name(ty).is_some()
        || matches!(ty, "f16" | "f32" | "f64" | "f128")
}

/// Whether an impl block's header (`impl SeedableRng for Xoshiro256PlusPlus`)
/// implements trait `trait_name` for the type named `ty_name`, both by their
/// last segment without generic arguments.
fn impl_is(header: &str, trait_name: &str, ty_name: &str) -> bool {
    let Some((tr, ty)) = header
        .trim()
        .strip_prefix("impl ")
        .and_then(|h| h.split_once(" for "))
    else {
        return false;
    };
    let last = |p: &str| {
        let p = p.trim();
        let p = p.split('<').next().unwrap_or(p);
        p.rsplit("::").next().unwrap_or(p).trim().to_string()
    };
    last(tr) == trait_name && last(ty) == ty_name
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

/// The constant items and promoteds that `krate`'s bodies name and that no
/// body of `krate` defines, with a dependency crate's name first.
fn missing_items(krate: &Crate, crates: &BTreeSet<String>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for body in krate.bodies.values() {
        body.for_each_operand(|op| {
            let Operand::Const(c) = op else { return };
            let name = match c {
                ConstOperand::Item(p) | ConstOperand::StaticRef(p) => p.def_path(),
                ConstOperand::Promoted { owner, index } => {
                    format!("{}::promoted[{index}]", owner.def_path())
                }
                _ => return,
            };
            if name
                .split("::")
                .next()
                .is_some_and(|first| crates.contains(first))
            {
                named.insert(name);
            }
        });
    }
    // Functions the kernel calls that rustc neither inlined nor printed
    // (a trait method of a dependency's private type, which no shim can
    // name): their bodies are in the dependency's MIR.
    for body in krate.bodies.values() {
        for bb in body.blocks.values() {
            let TerminatorKind::Call {
                func: Callee::Item(path),
                ..
            } = &bb.terminator.kind
            else {
                continue;
            };
            let name = path.def_path();
            if path.generic_args().is_empty()
                && crate::mono::dep_calls::is_bodiless_dep_call(krate, path, crates)
                && dependency_of(&name).is_some_and(|c| crates.contains(c))
            {
                named.insert(name);
            }
        }
    }
    // Statics that the kernel's MIR points at without dumping their bytes.
    let dumped = krate.allocs.values().filter_map(|a| a.static_path.as_ref());
    for name in krate.static_names.values().chain(dumped) {
        if name
            .split("::")
            .next()
            .is_some_and(|first| crates.contains(first))
        {
            named.insert(name.clone());
        }
    }
    named.retain(|n| !has_body(krate, n));
    named
}

/// The crate a name belongs to: its first segment, or for a trait method
/// `<A as T>::m` the first segment of `A`, or of `T` when `A` is a
/// primitive type.
fn dependency_of(name: &str) -> Option<&str> {
    let Some(qualified) = name.strip_prefix('<') else {
        return name.split("::").next();
    };
    match qualified.split_once(" as ") {
        Some((self_ty, tr)) if is_primitive(self_ty) => tr.split("::").next(),
        _ => qualified.split("::").next(),
    }
}

fn has_body(krate: &Crate, name: &str) -> bool {
    if krate.fn_body(name).is_some() {
        return true;
    }
    match name.rsplit_once("::promoted[") {
        Some((owner, idx)) => idx
            .trim_end_matches(']')
            .parse()
            .is_ok_and(|i| krate.promoted(owner, i).is_some()),
        None => krate.item_body(name).is_some(),
    }
}

/// Adds to `krate` the bodies of the dependencies' constants it names (and
/// what those name in turn), and the attributes of the dependencies' types
/// it uses. Names that cannot be found stay unresolved (the lowering
/// refuses them, naming them).
pub fn link_dependency_items(krate: &mut Crate, deps: &BuiltDeps) {
    let crates: BTreeSet<String> = deps.crates.iter().map(|c| c.name.clone()).collect();
    let mut mirs: BTreeMap<String, Option<DepMir>> = BTreeMap::new();
    let mut tried = BTreeSet::new();
    loop {
        let missing: Vec<String> = missing_items(krate, &crates)
            .into_iter()
            .filter(|n| !tried.contains(n))
            .collect();
        let generic: Vec<(Path, bool)> = generic_uses(krate, &crates)
            .into_iter()
            .filter(|(p, _)| !tried.contains(&p.to_string()))
            .collect();
        if missing.is_empty() && generic.is_empty() {
            break;
        }
        for (printed, is_call) in generic {
            tried.insert(printed.to_string());
            let Some(krate_name) = printed.segments.first().map(|s| s.name.clone()) else {
                continue;
            };
            let mir = mirs
                .entry(krate_name.clone())
                .or_insert_with(|| read_dep_mir(deps, &krate_name));
            let Some(mir) = mir else { continue };
            match instantiate(mir, &printed) {
                Some((name, text)) => {
                    match crate::parse::parse_mir_named(&text, crate::prelude::PRELUDE_MODULE) {
                        Ok(parsed) => {
                            for body in parsed.bodies {
                                krate.bodies.push(body);
                            }
                            link_instance(krate, &printed, &name, is_call);
                        }
                        Err(e) => tracing::debug!("instance `{printed}`: {e}"),
                    }
                }
                None => tracing::debug!("no generic item for `{printed}` in its crate's MIR"),
            }
        }
        for name in missing {
            tried.insert(name.clone());
            let krate_name = dependency_of(&name).unwrap_or_default().to_string();
            let mir = mirs
                .entry(krate_name.clone())
                .or_insert_with(|| read_dep_mir(deps, &krate_name));
            let Some(mir) = mir else { continue };
            mir.roots.extend(root_types(krate, &krate_name));
            let Some(header) = mir.find(&name) else {
                tracing::debug!("dependency item `{name}` not found in its crate's MIR");
                continue;
            };
            let declared = format!("{krate_name}::{header}");
            if declared != name && !header.contains(['<', '{', '[']) {
                krate.dependency_paths.insert(name.clone(), declared);
            }
            let Some(text) = mir.item_text(header, &name) else {
                continue;
            };
            if text.contains("{alloc") {
                // A constant that points at the dependency's own
                // allocations: their ids are the dependency's, not ours.
                tracing::debug!("dependency item `{name}` points at allocations");
                continue;
            }
            match crate::parse::parse_mir_named(&text, crate::prelude::PRELUDE_MODULE) {
                Ok(parsed) => {
                    for body in parsed.bodies {
                        krate.bodies.push(body);
                    }
                }
                Err(e) => tracing::debug!("dependency item `{name}`: {e}"),
            }
        }
    }
    link_type_attrs(krate, deps, &crates);
}

/// Dependency `name`'s MIR, indexed, with the types its root file declares.
fn read_dep_mir(deps: &BuiltDeps, name: &str) -> Option<DepMir> {
    let c = deps.krate(name)?;
    let mut mir = DepMir::read(name, &deps.path(&c.mir), deps.path(&c.src_dir))?;
    mir.roots
        .extend(root_type_decls(&deps.path(&c.src_dir).join("src")));
    Some(mir)
}

/// The constants and calls of `krate`'s bodies that name an item of a
/// dependency's generic impl block at arguments (`heapless::Vec::<u32,
/// 8>::INIT`) and have no body: each printed path, and whether it is a
/// call. Only paths of the form `crate::..::Owner<args>::item`.
fn generic_uses(krate: &Crate, crates: &BTreeSet<String>) -> BTreeSet<(Path, bool)> {
    // `krate::..::Owner<args>::item`, or `krate::..::f<args>` (a call).
    let instance_of = |p: &Path, call: bool| {
        let n = p.segments.len();
        if n == 0 {
            return false;
        }
        let plain = |segs: &[PathSegment]| segs.iter().all(|s| s.args.is_empty());
        let of_impl = n >= 3
            && p.segments[n - 1].args.is_empty()
            && !p.segments[n - 2].args.is_empty()
            && plain(&p.segments[..n - 2]);
        let own =
            call && n >= 2 && !p.segments[n - 1].args.is_empty() && plain(&p.segments[..n - 1]);
        crates.contains(&p.segments[0].name)
            && (of_impl || own)
            && !p.segments.iter().any(|s| s.name.starts_with(['<', '{']))
    };
    let mut out = BTreeSet::new();
    for body in krate.bodies.values() {
        body.for_each_operand(|op| {
            if let Operand::Const(ConstOperand::Item(p)) = op
                && instance_of(p, false)
                && krate.item_body(&p.def_path()).is_none()
            {
                out.insert((p.clone(), false));
            }
        });
        for bb in body.blocks.values() {
            if let TerminatorKind::Call {
                func: Callee::Item(p),
                ..
            } = &bb.terminator.kind
                && instance_of(p, true)
                && crate::mono::dep_calls::is_bodiless_dep_call(krate, p, crates)
            {
                out.insert((p.clone(), true));
            }
        }
    }
    out
}

/// The instance of the generic item `printed` names: its name and its
/// MIR text, the block's parameters replaced by the printed arguments.
fn instantiate(mir: &DepMir, printed: &Path) -> Option<(String, String)> {
    let n = printed.segments.len();
    let (owner, item) = (&printed.segments[n - 2], &printed.segments[n - 1]);
    let (key, binds) = if item.args.is_empty() {
        let (key, header) = mir.find_generic(&owner.name, &item.name)?;
        (key, header.bind(&owner.args)?)
    } else {
        // A generic function: its parameters from its module's source.
        let key = mir.find(&printed.def_path())?;
        let module: Vec<String> = key.split("::").map(str::to_string).collect();
        let file = module_file(&mir.src_dir.join("src"), &module[..module.len() - 1])?;
        let text = std::fs::read_to_string(file).ok()?;
        (
            key,
            instances::fn_generics(&text, &item.name)?.bind(&item.args)?,
        )
    };
    // `item_text` prefixes the crate's own root names and modules: a
    // parameter named like one (`pub type T`) would be hidden from the
    // substitution, so such an instance is not made.
    if binds
        .iter()
        .any(|b| mir.roots.contains(b.name()) || mir.modules.contains(b.name()))
    {
        return None;
    }
    let name = instances::instance_name(&printed.def_path(), printed);
    let text = mir.item_text(key, &name)?;
    if text.contains("{alloc") {
        return None;
    }
    Some((name.clone(), instances::substitute(&text, &binds)))
}

/// Points the kernel's uses of `printed` at its instance `name`: a call
/// through [`Crate::call_aliases`], a constant by renaming the operand.
fn link_instance(krate: &mut Crate, printed: &Path, name: &str, is_call: bool) {
    if is_call {
        krate
            .call_aliases
            .insert(printed.to_string(), name.to_string());
        return;
    }
    let renamed = Path {
        segments: name
            .split("::")
            .map(|s| PathSegment {
                name: s.to_string(),
                args: Vec::new(),
            })
            .collect(),
    };
    for body in krate.bodies.values_mut() {
        body.for_each_operand_mut(|op| {
            if let Operand::Const(ConstOperand::Item(p)) = op
                && p == printed
            {
                *p = renamed.clone();
            }
        });
    }
}

/// The types that a crate declares in its root file (`src/lib.rs`): its
/// own MIR names them by one segment (`const DEFAULT_STATE: Sha1State`),
/// also where the kernel never holds one in a local of its own.
fn root_type_decls(src: &FsPath) -> BTreeSet<String> {
    let Some(text) = module_file(src, &[]).and_then(|f| std::fs::read_to_string(f).ok()) else {
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

/// The crate-root types of dependency `name` that `krate`'s bodies use
/// (`sha1_smol::Sha1State` gives `Sha1State`): its own MIR names them by
/// that one segment.
fn root_types(krate: &Crate, name: &str) -> BTreeSet<String> {
    let mut types = BTreeSet::new();
    for body in krate.bodies.values() {
        for l in body.locals.values() {
            adt_paths(&l.ty, &mut types);
        }
    }
    let prefix = format!("{name}::");
    types
        .iter()
        .filter_map(|t| t.strip_prefix(&prefix))
        .filter(|rest| !rest.contains("::"))
        .map(str::to_string)
        .collect()
}

fn adt_paths(ty: &Ty, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Adt(p) => {
            out.insert(p.def_path());
            for a in p.generic_args() {
                if let crate::model::GenericArg::Type(t) = a {
                    adt_paths(t, out);
                }
            }
        }
        Ty::Tuple(ts) => ts.iter().for_each(|t| adt_paths(t, out)),
        Ty::Array(t, _) | Ty::Slice(t) | Ty::Ref(_, t) | Ty::RawPtr(_, t) => adt_paths(t, out),
        _ => {}
    }
}

/// Reads the declarations of the dependencies' types that `krate`'s bodies
/// use from the modules that declare them.
fn link_type_attrs(krate: &mut Crate, deps: &BuiltDeps, crates: &BTreeSet<String>) {
    let mut types = BTreeSet::new();
    for body in krate.bodies.values() {
        for l in body.locals.values() {
            adt_paths(&l.ty, &mut types);
        }
    }
    let mut modules: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    for t in &types {
        let segs: Vec<String> = t.split("::").map(str::to_string).collect();
        if segs.len() >= 2 && crates.contains(&segs[0]) && !krate.attrs.contains_key(t) {
            modules.insert((segs[0].clone(), segs[1..segs.len() - 1].to_vec()));
        }
    }
    // A type printed through a re-export (`base64::engine::GeneralPurpose`,
    // which `engine/mod.rs` re-exports with `pub use
    // general_purpose::{GeneralPurpose, ..}`): read the declaring module
    // too, and give the printed name its attributes.
    let mut renamed: Vec<(String, String)> = Vec::new();
    for t in &types {
        let segs: Vec<String> = t.split("::").map(str::to_string).collect();
        let Some((ty_name, module)) = segs[1..].split_last() else {
            continue;
        };
        if !crates.contains(&segs[0]) || krate.attrs.contains_key(t) {
            continue;
        }
        let Some(c) = deps.krate(&segs[0]) else {
            continue;
        };
        let src = deps.path(&c.src_dir).join("src");
        let Some(text) = module_file(&src, module).and_then(|f| std::fs::read_to_string(f).ok())
        else {
            continue;
        };
        if let Some(declaring) = instances::reexporting_module(&text, module, ty_name) {
            let real = std::iter::once(segs[0].clone())
                .chain(declaring.iter().cloned())
                .chain(std::iter::once(ty_name.clone()))
                .collect::<Vec<_>>()
                .join("::");
            modules.insert((segs[0].clone(), declaring));
            renamed.push((real, t.clone()));
        }
    }
    for (name, module) in modules {
        let Some(c) = deps.krate(&name) else { continue };
        let src = deps.path(&c.src_dir).join("src");
        let Some(file) = module_file(&src, &module) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let prefix = std::iter::once(name.as_str())
            .chain(module.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("::");
        match crate::attrs::recover_attrs(&text, &file.display().to_string(), &prefix) {
            Ok(attrs) => {
                for (k, mut a) in attrs {
                    // Types only: a dependency's functions never reach the
                    // device as functions of their own. Field types as
                    // written name the dependency's scope, not the
                    // kernel's: they are not kept.
                    if a.discriminants.is_some() || a.field_names.is_some() {
                        a.field_types = None;
                        krate.attrs.entry(k).or_insert(a);
                    }
                }
            }
            Err(e) => tracing::debug!("{e}"),
        }
    }
    for (real, printed) in renamed {
        if let Some(a) = krate.attrs.get(&real).cloned() {
            krate.attrs.entry(printed).or_insert(a);
        }
    }
}

/// The file of module `module` of a crate whose sources are in `src`, by
/// the conventional layout (`a/b.rs` or `a/b/mod.rs`, the root `lib.rs`).
fn module_file(src: &FsPath, module: &[String]) -> Option<PathBuf> {
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

    fn dep(text: &str) -> DepMir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("deps-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let f = dir.join(format!("d{n}.mir"));
        std::fs::write(&f, text).expect("write");
        DepMir::read("libm", &f, dir.join("libm-0.2.0")).expect("read")
    }

    /// `rand`'s MIR prints trait methods under their impl block's position
    /// and the trait by its defining crate; the kernel prints the type and a
    /// re-export of the trait.
    #[test]
    fn trait_methods_are_found_by_the_impl_header_their_span_covers() {
        let dir = std::env::temp_dir().join(format!("deps-impls-{}", std::process::id()));
        let src = dir.join("rand-0.8.8/src/rngs");
        std::fs::create_dir_all(&src).expect("dir");
        std::fs::write(
            src.join("xo.rs"),
            "pub struct Xo;\nimpl SeedableRng for Xo {\n}\nimpl RngCore\n    for Xo {\n}\nimpl Xo {\n}\n",
        )
        .expect("write");
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
        let f = dir.join("rand.mir");
        std::fs::write(&f, text).expect("write");
        let d = DepMir::read("rand", &f, dir.join("rand-0.8.8")).expect("read");
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
        let d = dep(
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
    fn root_type_declarations_are_read_from_lib_rs() {
        let dir = std::env::temp_dir().join(format!("deps-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
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
        let roots = root_type_decls(&dir);
        let want: BTreeSet<String> = ["E", "Sha1", "Sha1State", "T"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(roots, want);
        assert!(root_type_decls(&dir.join("missing")).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_printed_through_a_reexporting_module_follows_its_use() {
        let dir = std::env::temp_dir().join(format!("deps-reexport-{}", std::process::id()));
        let src = dir.join("base64-0.22.1/src");
        std::fs::create_dir_all(&src).expect("dir");
        std::fs::write(
            src.join("prelude.rs"),
            "pub use crate::engine::general_purpose::STANDARD as BASE64_STANDARD;\npub use crate::engine::Engine;\n",
        )
        .expect("write");
        let f = dir.join("base64.mir");
        std::fs::write(
            &f,
            "const alphabet::STANDARD: u8 = const 1_u8;\nconst engine::general_purpose::STANDARD: u32 = const 2_u32;\n",
        )
        .expect("write");
        let d = DepMir::read("base64", &f, dir.join("base64-0.22.1")).expect("read");
        // Two items end in `STANDARD`; the prelude's `use` says which.
        assert_eq!(
            d.find("base64::prelude::STANDARD"),
            Some("engine::general_purpose::STANDARD")
        );
        assert_eq!(d.find("base64::prelude::OTHER"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_ambiguous_reexport_is_not_guessed() {
        let d = dep(
            "const a::f::f::promoted[0]: u32 = const 1_u32;\nconst b::f::f::promoted[0]: u32 = const 2_u32;\n",
        );
        assert_eq!(d.find("libm::f::promoted[0]"), None);
        assert_eq!(
            d.find("libm::a::f::f::promoted[0]"),
            Some("a::f::f::promoted[0]")
        );
    }
}
