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
//!   from the generic text ([`instances`]).

use std::collections::{BTreeMap, BTreeSet};

use kernel_deps::BuiltDeps;

use crate::model::{
    Callee, ConstOperand, Crate, Operand, Path, PathSegment, TerminatorKind, VisitMut,
};
use dep_mir::DepMir;

mod dep_mir;
mod instances;
mod source;
mod type_attrs;

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
            mir.roots.extend(type_attrs::root_types(krate, &krate_name));
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
    type_attrs::link_type_attrs(krate, deps, &crates);
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
