//! The declarations of the dependencies' types that the kernel uses: their
//! variants' discriminants and their fields' names, read from the module
//! that declares each type ([`crate::attrs`]), also where the kernel's MIR
//! prints the type through a re-export.

use std::collections::BTreeSet;

use kernel_deps::BuiltDeps;

use super::source;
use crate::model::{Crate, Ty};

/// The crate-root types of dependency `name` that `krate`'s bodies use
/// (`sha1_smol::Sha1State` gives `Sha1State`): its own MIR names them by
/// that one segment.
pub(super) fn root_types(krate: &Crate, name: &str) -> BTreeSet<String> {
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
pub(super) fn link_type_attrs(krate: &mut Crate, deps: &BuiltDeps, crates: &BTreeSet<String>) {
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
        let Some(text) = source::read_module(&deps.path(&c.src_dir).join("src"), module) else {
            continue;
        };
        if let Some(mut declared) =
            source::reexported_item(&text, module, ty_name, source::Namespace::Type)
        {
            let real = format!("{}::{}", segs[0], declared.join("::"));
            declared.pop();
            modules.insert((segs[0].clone(), declared));
            renamed.push((real, t.clone()));
        }
    }
    let mut read = BTreeSet::new();
    for (name, module) in modules {
        let Some(c) = deps.krate(&name) else { continue };
        let src = deps.path(&c.src_dir).join("src");
        // A type declared in a function's body (`zerocopy::util::
        // transmute_unchecked::Transmute`, a union) is printed under the
        // function: the longest prefix that is a module declares it, and
        // the walk names it under the function.
        let Some((module, file)) = source::declaring_module(&src, &module) else {
            continue;
        };
        // Two functions of one module (or modules the reader does not
        // find, falling back to one file): the file is read once.
        if !read.insert(file.clone()) {
            continue;
        }
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
