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
//!   beside the rlib) is indexed by item header ([`dep_mir`]). A name the kernel uses is
//!   found by its def path without the crate (`math::powf::DP_H`), else,
//!   for a name printed through a public re-export (`libm::powf` for
//!   `math::powf::powf`), by the one item whose path ends the same way or
//!   that the printed module's `pub use` names ([`source`]); an
//!   ambiguous or missing name is left unresolved, and the lowering refuses
//!   it by name. The item's text is renamed to the kernel's name, its
//!   references to the dependency's own items get the crate's name, and it
//!   is parsed and added; what it names in turn follows.
//! - **Enums and structs.** The module that declares a dependency's type
//!   (`libm::math::generic::sqrt::Exp`) is read from the crate's source
//!   (`src/math/generic/sqrt.rs` or `.../sqrt/mod.rs`), for its variants'
//!   declared discriminants and its fields' names ([`type_attrs`]).
//! - **Items of generic impl blocks** (`heapless::Vec::<u32, 8>::INIT`, a
//!   method of such a block that rustc left as a call) are instantiated
//!   from the generic text ([`instances`]), and so are the promoteds of
//!   generic functions and methods (`<Lazy as Sealed>::split_blocks::
//!   <U64>::promoted[1]`), their parameters read from the source.
//! - **Names printed through a re-exported crate**
//!   (`hmac::digest::block_buffer::Lazy`) are spelled from the declaring
//!   crate before they are looked up ([`reexports`]).

use std::collections::{BTreeMap, BTreeSet};

use kernel_deps::BuiltDeps;

use crate::model::{
    AllocDump, AllocId, Callee, ConstOperand, Crate, Operand, Path, PathSegment, TerminatorKind,
    VisitMut,
};
use dep_mir::DepMir;
use reexports::CrateReexports;

mod dep_mir;
mod instances;
mod literals;
mod reexports;
mod shells;
mod source;
mod type_attrs;

pub(crate) use shells::add_trait_constant_shells;

/// The constant items and promoteds that `krate`'s bodies name and that no
/// body of `krate` defines, with a dependency crate's name first.
fn missing_items(krate: &Crate, crates: &BTreeSet<String>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for body in krate.bodies.values() {
        body.for_each_operand(|op| {
            let Operand::Const(c) = op else { return };
            let name = match c {
                ConstOperand::Item(p) | ConstOperand::StaticRef(p) => p.def_path(),
                // A generic owner's promoted is instantiated instead
                // ([`generic_promoteds`]).
                ConstOperand::Promoted { owner, .. } if has_own_args(owner) => return,
                ConstOperand::Promoted { owner, index } => {
                    format!("{}::promoted[{index}]", owner.def_path())
                }
                _ => return,
            };
            if dependency_of(&name).is_some_and(|c| crates.contains(c)) {
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
        Some((self_ty, tr)) if dep_mir::is_primitive(self_ty) => tr.split("::").next(),
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
    // A dependency's allocation id → the id it has in `krate`.
    let mut fresh_ids: BTreeMap<(String, u32), u32> = BTreeMap::new();
    let reexports = CrateReexports::read(deps, &crates);
    loop {
        let missing: Vec<String> = missing_items(krate, &crates)
            .into_iter()
            .filter(|n| !tried.contains(n))
            .collect();
        let generic: Vec<(Path, bool)> = generic_uses(krate, &crates)
            .into_iter()
            .filter(|(p, _)| !tried.contains(&p.to_string()))
            .collect();
        let promoteds: Vec<(Path, u32)> = generic_promoteds(krate, &crates)
            .into_iter()
            .filter(|(owner, index)| !tried.contains(&format!("{owner}::promoted[{index}]")))
            .collect();
        if missing.is_empty() && generic.is_empty() && promoteds.is_empty() {
            break;
        }
        for (owner, index) in promoteds {
            tried.insert(format!("{owner}::promoted[{index}]"));
            let lookup = reexports.canonical(&format!("{}::promoted[{index}]", owner.def_path()));
            let Some(krate_name) = dependency_of(&lookup).map(str::to_string) else {
                continue;
            };
            let mir = mirs
                .entry(krate_name.clone())
                .or_insert_with(|| read_dep_mir(deps, &krate_name));
            let Some(mir) = mir else { continue };
            let Some((instance, text)) =
                instantiate_promoted(mir, &krate_name, &lookup, &owner, index)
            else {
                tracing::debug!("no instance of `{owner}::promoted[{index}]` in its crate's MIR");
                continue;
            };
            // Its types in one spelling, which the kernel's layouts are
            // also found under ([`CrateReexports::alias_layouts`]).
            let text = reexports.canonical(&text);
            match crate::parse::parse_mir_named(&text, crate::prelude::PRELUDE_MODULE) {
                Ok(parsed) => {
                    krate.bodies.extend(parsed.bodies);
                    link_promoted_instance(krate, &owner, index, &instance);
                }
                Err(e) => tracing::debug!("instance of `{owner}::promoted[{index}]`: {e}"),
            }
        }
        for (printed, is_call) in generic {
            tried.insert(printed.to_string());
            // Looked up in its declaring crate (`crypto_bigint::subtle::
            // black_box::<u8>` is `subtle::black_box::<u8>`); the kernel's
            // spelling is what the instance is linked under.
            let declared =
                match crate::parse::parse_type(&reexports.canonical(&printed.to_string())) {
                    Ok(crate::model::Ty::Adt(p)) => p,
                    _ => printed.clone(),
                };
            let Some(krate_name) = declared.segments.first().map(|s| s.name.clone()) else {
                continue;
            };
            let mir = mirs
                .entry(krate_name.clone())
                .or_insert_with(|| read_dep_mir(deps, &krate_name));
            let Some(mir) = mir else { continue };
            match instantiate(mir, &declared) {
                Some((name, text)) => {
                    // Its types in one spelling, as for a promoted's.
                    let text = reexports.canonical(&text);
                    match crate::parse::parse_mir_named(&text, crate::prelude::PRELUDE_MODULE) {
                        Ok(parsed) => {
                            for body in parsed.bodies {
                                krate.bodies.push(body);
                            }
                            link_instance(krate, &printed, &name, is_call);
                            // A constant instance rustc can evaluate when
                            // the interpreter cannot (a `const fn` call):
                            // source names it as a qualified path.
                            if !is_call && let Some(source) = shells::instance_source(&printed) {
                                krate.dependency_paths.insert(name.clone(), source);
                            }
                        }
                        Err(e) => tracing::debug!("instance `{printed}`: {e}"),
                    }
                }
                None => tracing::debug!("no generic item for `{printed}` in its crate's MIR"),
            }
        }
        for name in missing {
            tried.insert(name.clone());
            let lookup = reexports.canonical(&name);
            let krate_name = dependency_of(&lookup).unwrap_or_default().to_string();
            let mir = mirs
                .entry(krate_name.clone())
                .or_insert_with(|| read_dep_mir(deps, &krate_name));
            let Some(mir) = mir else { continue };
            mir.roots.extend(type_attrs::root_types(krate, &krate_name));
            let Some(header) = mir.find(&lookup) else {
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
            let Some(with) = with_allocations(krate, mir, &fresh_ids, &krate_name, &text) else {
                tracing::debug!(
                    "dependency item `{name}` points at allocations its MIR does not dump"
                );
                continue;
            };
            match crate::parse::parse_mir_named(&with.text, crate::prelude::PRELUDE_MODULE) {
                Ok(parsed) => {
                    for body in parsed.bodies {
                        krate.bodies.push(body);
                    }
                    krate
                        .allocs
                        .extend(with.allocs.into_iter().map(|a| (a.id, a)));
                    krate.static_names.extend(with.static_names);
                    fresh_ids.extend(with.given);
                }
                Err(e) => tracing::debug!("dependency item `{name}`: {e}"),
            }
        }
    }
    reexports.alias_layouts(&mut krate.layouts);
    type_attrs::link_type_attrs(krate, deps, &crates);
}

/// A dependency item's text with the allocations it brings, renumbered
/// into the kernel's ids ([`with_allocations`]).
struct WithAllocations {
    /// The item's text, its `{allocN` references renumbered.
    text: String,
    /// The dumps it brings, ids and relocation targets renumbered.
    allocs: Vec<AllocDump>,
    /// Allocations printed only as a static's name.
    static_names: Vec<(AllocId, String)>,
    /// The ids given here, to keep once the item is imported.
    given: BTreeMap<(String, u32), u32>,
}

/// `text`, an item of dependency `krate_name` whose MIR is `mir`, with the
/// allocations it points at (`const {alloc8: &[[u32; 256]; 16]}`, a
/// static's table) and those they point at: their dumps (rustc prints one
/// after each body that uses it) parsed and given ids above every id
/// `krate` uses, since the dependency's ids are its own and clash with the
/// kernel's. An allocation `fresh_ids` already gave an id keeps it. The
/// dumps are renumbered as parsed data, not as text, so that the fixed
/// width of a relocation's box and its short `a12` form do not matter.
/// `None` when the dependency's MIR has no readable dump of one of them.
fn with_allocations(
    krate: &Crate,
    mir: &DepMir,
    fresh_ids: &BTreeMap<(String, u32), u32>,
    krate_name: &str,
    text: &str,
) -> Option<WithAllocations> {
    let key = |id: u32| (krate_name.to_string(), id);
    let mut next = krate
        .allocs
        .keys()
        .chain(krate.static_names.keys())
        .chain(krate.fn_names.keys())
        .chain(krate.vtable_names.keys())
        .map(|a| a.0 + 1)
        .chain(fresh_ids.values().map(|v| v + 1))
        .max()
        .unwrap_or(0);
    let mut given: BTreeMap<(String, u32), u32> = BTreeMap::new();
    let mut dumps: Vec<AllocDump> = Vec::new();
    let mut names: Vec<(AllocId, String)> = Vec::new();
    let mut pending: Vec<u32> = alloc_refs(text);
    while let Some(id) = pending.pop() {
        if fresh_ids.contains_key(&key(id)) || given.contains_key(&key(id)) {
            continue;
        }
        let parsed = crate::parse::parse_mir(&mir.alloc_dump(id)?).ok()?;
        given.insert(key(id), next);
        next += 1;
        if let Some(dump) = parsed.allocs.get(&AllocId(id)) {
            pending.extend(dump.relocations.iter().map(|r| r.target.0));
            dumps.push(dump.clone());
        } else {
            names.push((AllocId(id), parsed.static_names.get(&AllocId(id))?.clone()));
        }
    }
    let new_id = |id: u32| -> Option<u32> {
        given
            .get(&key(id))
            .or_else(|| fresh_ids.get(&key(id)))
            .copied()
    };
    let mut allocs = Vec::with_capacity(dumps.len());
    for mut dump in dumps {
        dump.id = AllocId(new_id(dump.id.0)?);
        for r in &mut dump.relocations {
            r.target = AllocId(new_id(r.target.0)?);
        }
        allocs.push(dump);
    }
    let static_names = names
        .into_iter()
        .map(|(id, name)| Some((AllocId(new_id(id.0)?), name)))
        .collect::<Option<Vec<_>>>()?;
    let text = renumber_allocs(text, &new_id)?;
    Some(WithAllocations {
        text,
        allocs,
        static_names,
        given,
    })
}

/// The byte offsets of `{alloc` in `text` outside string literals: where
/// a body points at an allocation (`const {alloc8: &T}`, the only form a
/// body prints them in).
fn alloc_ref_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // Only at a quote: `i` moves by bytes here, so not every `i` is a
        // char boundary.
        if matches!(bytes[i], b'"' | b'\'')
            && let Some(len) = literals::literal_len(&text[i..])
        {
            i += len;
            continue;
        }
        match bytes[i] {
            b'{' if text[i..].starts_with("{alloc") => {
                out.push(i);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The allocation ids a body's text points at (see [`alloc_ref_starts`]).
fn alloc_refs(text: &str) -> Vec<u32> {
    alloc_ref_starts(text)
        .into_iter()
        .filter_map(|at| {
            let digits: String = text[at + 6..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

/// `text` with the id of each `{allocN` replaced by `new_id(N)`; `None`
/// when one has no new id.
fn renumber_allocs(text: &str, new_id: &dyn Fn(u32) -> Option<u32>) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for at in alloc_ref_starts(text) {
        let start = at + 6;
        let end = text[start..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(text.len(), |e| start + e);
        let Ok(id) = text[start..end].parse::<u32>() else {
            continue;
        };
        out.push_str(&text[rest..start]);
        out.push_str(&new_id(id)?.to_string());
        rest = end;
    }
    out.push_str(&text[rest..]);
    Some(out)
}

/// Dependency `name`'s MIR, indexed, with the types its root file declares.
fn read_dep_mir(deps: &BuiltDeps, name: &str) -> Option<DepMir> {
    let c = deps.krate(name)?;
    let mut mir = DepMir::read(name, &deps.path(&c.mir), deps.path(&c.src_dir))?;
    mir.roots
        .extend(source::root_type_decls(&deps.path(&c.src_dir).join("src")));
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
        let text = source::read_module(&mir.src_dir.join("src"), &module[..module.len() - 1])?;
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
    let def = printed.def_path();
    let name = instances::instance_name(&printed.segments[0].name, &def, printed);
    let text = mir.item_text(key, &name)?;
    if text.contains("{alloc") {
        return None;
    }
    Some((name.clone(), instances::substitute(&text, &binds)))
}

/// Whether a promoted's owner is printed at arguments of its own
/// (`<Lazy as Sealed>::split_blocks::<U64>`), the rest of its path plain.
fn has_own_args(owner: &Path) -> bool {
    match owner.segments.split_last() {
        Some((last, rest)) => !last.args.is_empty() && rest.iter().all(|s| s.args.is_empty()),
        None => false,
    }
}

/// The promoteds of a dependency's generic functions and methods that
/// `krate`'s bodies use at arguments (inlined code keeps `const
/// <Lazy as Sealed>::split_blocks::<U64>::promoted[1]`, whose body the
/// dependency prints once, generically): each owner as printed, and the
/// index.
fn generic_promoteds(krate: &Crate, crates: &BTreeSet<String>) -> BTreeSet<(Path, u32)> {
    let mut out = BTreeSet::new();
    for body in krate.bodies.values() {
        body.for_each_operand(|op| {
            if let Operand::Const(ConstOperand::Promoted { owner, index }) = op
                && has_own_args(owner)
                && dependency_of(&owner.def_path()).is_some_and(|c| crates.contains(c))
            {
                out.insert((owner.clone(), *index));
            }
        });
    }
    out
}

/// The instance of promoted `index` of the generic function that `owner`
/// prints at arguments, `lookup` being its name spelled from crate
/// `krate_name` (see [`CrateReexports::canonical`]): the instance owner's
/// name and the promoted's text, the function's own parameters (read from
/// its impl block or module in the source) replaced by the arguments.
fn instantiate_promoted(
    mir: &DepMir,
    krate_name: &str,
    lookup: &str,
    owner: &Path,
    index: u32,
) -> Option<(String, String)> {
    let key = mir.find(lookup)?;
    let (method, args) = owner.segments.last().map(|s| (s.name.as_str(), &s.args))?;
    let params = if key.contains("<impl at ") {
        mir.method_params(key, method)?
    } else {
        // `module::f::promoted[1]`: `f`'s parameters from its module.
        let segments: Vec<String> = key.split("::").map(str::to_string).collect();
        let module = &segments[..segments.len().checked_sub(2)?];
        let text = source::read_module(&mir.src_dir.join("src"), module)?;
        instances::fn_generics(&text, method)?.params
    };
    let binds = instances::own_params_header(method, params).bind(args)?;
    if binds
        .iter()
        .any(|b| mir.roots.contains(b.name()) || mir.modules.contains(b.name()))
    {
        return None;
    }
    let def = lookup.strip_suffix(&format!("::promoted[{index}]"))?;
    let instance = instances::instance_name(krate_name, def, owner);
    let text = mir.item_text(key, &format!("{instance}::promoted[{index}]"))?;
    if text.contains("{alloc") {
        return None;
    }
    Some((instance, instances::substitute(&text, &binds)))
}

/// Points the kernel's uses of promoted `index` of `printed` at the
/// promoted of its instance `instance`.
fn link_promoted_instance(krate: &mut Crate, printed: &Path, index: u32, instance: &str) {
    struct Renaming<'a> {
        printed: &'a Path,
        index: u32,
        renamed: Path,
    }
    impl VisitMut for Renaming<'_> {
        fn visit_const(&mut self, constant: &mut ConstOperand) {
            if let ConstOperand::Promoted { owner, index } = constant
                && owner == self.printed
                && *index == self.index
            {
                *owner = self.renamed.clone();
            }
        }
    }
    let mut renaming = Renaming {
        printed,
        index,
        renamed: Path::plain(instance),
    };
    for body in krate.bodies.values_mut() {
        body.visit_mut(&mut renaming);
    }
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
    let renamed = Path::plain(name);
    struct Renaming<'a> {
        printed: &'a Path,
        renamed: Path,
    }
    impl VisitMut for Renaming<'_> {
        fn visit_const(&mut self, constant: &mut ConstOperand) {
            if let ConstOperand::Item(p) = constant
                && p == self.printed
            {
                *p = self.renamed.clone();
            }
        }
    }
    let mut renaming = Renaming { printed, renamed };
    for body in krate.bodies.values_mut() {
        body.visit_mut(&mut renaming);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AllocId;

    /// `dep::lookup` reads the static `dep::table::T` through `alloc3`,
    /// which points at `alloc1` with a box of rustc's fixed width; the
    /// kernel already uses ids up to 99, so the new ids have more digits.
    #[test]
    fn a_dependency_body_brings_its_allocations_under_fresh_ids() {
        let mir = "fn table::lookup(_1: usize) -> u32 {\n    let mut _0: u32;\n    let mut _2: &&[u32; 2];\n    let mut _3: &str;\n\n    bb0: {\n        _2 = const {alloc3: &&[u32; 2]};\n        _3 = const \"alloc1 {alloc1\";\n        _0 = const 7_u32;\n        return;\n    }\n}\n\n\
alloc3 (static: table::T, size: 16, align: 8) {\n    ╾─────alloc1<imm>─────╼ 02 00 00 00 00 00 00 00 │ ╾──────╼........\n}\n\n\
alloc1 (size: 8, align: 4) {\n    01 00 00 00 02 00 00 00                         │ ........\n}\n\n\
fn table::other() -> () {\n    let mut _0: ();\n\n    bb0: {\n        return;\n    }\n}\n";
        let tmp = tempfile::tempdir().expect("temporary folder");
        let path = tmp.path().join("dep.mir");
        std::fs::write(&path, mir).expect("write");
        let dep = DepMir::read("dep", &path, tmp.path().to_path_buf()).expect("read");
        let mut krate = Crate::default();
        krate.static_names.insert(AllocId(99), "kernel::S".into());
        let text = dep
            .item_text("table::lookup", "dep::table::lookup")
            .expect("item");
        let mut fresh = BTreeMap::new();
        let with = with_allocations(&krate, &dep, &fresh, "dep", &text).expect("dumped");
        assert!(
            with.text.contains("const {alloc100: &&[u32; 2]}"),
            "{}",
            with.text
        );
        // A string that merely spells an allocation is left alone.
        assert!(with.text.contains("\"alloc1 {alloc1\""), "{}", with.text);
        let ids: Vec<(u32, Vec<u32>)> = with
            .allocs
            .iter()
            .map(|a| (a.id.0, a.relocations.iter().map(|r| r.target.0).collect()))
            .collect();
        assert_eq!(ids, [(100, vec![101]), (101, vec![])]);
        assert_eq!(with.allocs[0].relocations[0].size, 8);
        assert_eq!(with.allocs[0].static_path.as_deref(), Some("dep::table::T"));
        let parsed = crate::parse::parse_mir(&with.text).expect("parses");
        assert_eq!(parsed.bodies.len(), 1);
        fresh.extend(with.given);
        // A second item that names alloc3 keeps its id and brings nothing.
        let again =
            with_allocations(&krate, &dep, &fresh, "dep", "const {alloc3: &u8}").expect("known");
        assert_eq!(again.text, "const {alloc100: &u8}");
        assert!(again.allocs.is_empty() && again.given.is_empty());
        // An allocation the dependency never dumped is refused.
        assert!(with_allocations(&krate, &dep, &fresh, "dep", "const {alloc9: &u8}").is_none());
        assert_eq!(
            alloc_refs(
                "dealloc3 alloc4 {alloc12: &u8} {alloc::x} \"{alloc5\\\" {alloc6\" '\"' {alloc7"
            ),
            [12, 7]
        );
    }
}
