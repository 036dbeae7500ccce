//! Imports the MIR that rustc prints for a kernel crate into a typed model.
//!
//! **Owns:** the rustc invocation ([`rustc`]), the MIR text parser ([`parse`]),
//! the typed model ([`model`]), rustc's own layouts from `-Zprint-type-sizes`
//! ([`layout`]), the attributes that the MIR text drops ([`attrs`]), the list
//! of device-prelude paths ([`prelude`]) and the one classifier of calls with a
//! fixed meaning but no printed body ([`calls`]).
//!
//! **Does not own:** lowering, interning or anything about the device. Of
//! this workspace it depends only on `sandbox` (every rustc run is a sandbox
//! job) and on `device-ir`'s data layout, for the one pointer size
//! ([`device_ir::layout::POINTER_SIZE`]) that the evaluator's bytes share
//! with the device's globals.
//!
//! **Border:** [`Crate`], a plain data model (cranelift-entity maps, serde
//! serializable) that later stages read.
#![deny(missing_docs)]

pub mod attrs;
pub mod calls;
pub mod deps;
pub mod eval;
pub mod layout;
pub mod model;
pub mod mono;
pub mod parse;
pub mod prelude;
pub mod rustc;
pub mod rustc_cache;
mod unambiguous;

pub use model::Crate;
pub use parse::{ParseError, Pos};

use std::path::Path;

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// rustc could not be run or rejected the source.
    #[error(transparent)]
    Rustc(#[from] rustc::RustcError),
    /// The MIR text could not be read.
    #[error("{file}: {source}")]
    Parse {
        /// The file (or `<mir text>`).
        file: String,
        /// The positioned error.
        source: ParseError,
    },
    /// The layout report could not be read.
    #[error(transparent)]
    Layout(#[from] layout::LayoutError),
    /// The kernel source could not be read for attributes.
    #[error(transparent)]
    Attrs(#[from] attrs::AttrError),
    /// The layout probe failed.
    #[error(transparent)]
    Probe(#[from] eval::probe::ProbeError),
    /// The twin build (rustc evaluating consts) failed.
    #[error(transparent)]
    Twin(#[from] eval::twin::TwinError),
    /// The kernel's dependencies could not be built.
    #[error(transparent)]
    Dependencies(#[from] kernel_deps::DepsError),
}

/// A kernel's import with its constants evaluated: every const, static and
/// promoted, and every constant operand of the functions its kernels reach.
/// Later stages only read it.
#[derive(Debug, serde::Serialize)]
pub struct Imported {
    /// The MIR model.
    pub krate: Crate,
    /// Every const, static and promoted, evaluated.
    pub eval: eval::Evaluation,
    /// rustc's tuple layouts used by the evaluation.
    pub tuples: eval::TupleLayouts,
}

/// Compiles `kernel`, imports it and evaluates its constants. Tuple layouts
/// come from the layout probe. With `twin_fallback`, a named const that the
/// evaluator cannot reach is evaluated by rustc through its `static` twin
/// instead, a static it cannot reach takes the bytes rustc printed for it, and
/// [`eval::ItemEval::by`] records which.
pub fn import_and_evaluate(
    kernel: &Path,
    opts: &rustc::RustcOptions,
    twin_fallback: bool,
) -> Result<Imported, ImportError> {
    let mut krate = import_file(kernel, opts)?;
    if let Some(deps) = &opts.deps
        && twin_fallback
    {
        deps::add_trait_constant_shells(&mut krate, deps);
    }
    eval::unprinted::print_unprinted_layouts(kernel, &mut krate, opts)?;
    let tuples = eval::probe::probe_tuples(kernel, &mut krate, opts)?;
    krate.record_closure_offsets(&tuples);
    let mut ev = eval::evaluate_items(&krate, &tuples);
    let failed: Vec<String> = ev
        .items
        .iter()
        .filter(|(name, i)| {
            i.kind == eval::ItemKind::Const && i.value.is_err() && name.starts_with("kernel::")
        })
        .map(|(n, _)| n.clone())
        .collect();
    if twin_fallback && !failed.is_empty() {
        let twins = eval::twin::build_twins(kernel, opts)?;
        for name in failed {
            let Some(root) = twins.twin_alloc(&name) else {
                continue;
            };
            if let Ok(v) = eval::twin::import_twin_value(&mut ev.memory, &twins.krate, root) {
                ev.set_fallback(&krate, &name, v, eval::EvaluatedBy::RustcTwin);
            }
        }
    }
    // A dependency's constant the evaluator could not reach (it calls a
    // `const fn`): rustc evaluates it through a twin too, named by the path
    // the kernel printed. Built apart from the kernel's twins, so that a
    // twin rustc refuses (a path or type source cannot reach) costs only
    // the dependencies' twins (all of them: one crate), never the
    // kernel's; the lowering then refuses those constants by name.
    let dep_crates: std::collections::BTreeSet<&str> = opts
        .deps
        .iter()
        .flat_map(|d| d.crates.iter().map(|c| c.name.as_str()))
        .collect();
    let failed_deps: Vec<(String, String)> = ev
        .items
        .iter()
        .filter(|(name, i)| {
            twin_fallback
                && i.kind == eval::ItemKind::Const
                && i.value.is_err()
                && (krate.dependency_paths.contains_key(*name)
                    || (name
                        .split("::")
                        .next()
                        .is_some_and(|c| dep_crates.contains(c))
                        && !name.contains(['<', '{'])
                        && !name.contains("::__mono_")))
                && !name.contains("::promoted[")
        })
        .filter_map(|(name, _)| {
            let ty = &krate.bodies[krate.item_body(name)?].return_ty;
            mono::nameable(ty).then(|| (name.clone(), ty.to_rust_source()))
        })
        .collect();
    // Named as declared where the printed name is a re-export's module.
    let twin_paths: Vec<(String, String)> = failed_deps
        .iter()
        .map(|(name, ty)| {
            let path = krate.dependency_paths.get(name).unwrap_or(name);
            if !path.starts_with('<') {
                // From the crate root: a kernel item named like the crate
                // must not capture the path.
                return (format!("::{path}"), ty.clone());
            }
            // A qualified path is written from the root already
            // (`<::c::Uint<4>>::ZERO`, `<u32 as ::c::Trait>::MAX`). An
            // inherent instance's type is often its owner (`ZERO: Self`),
            // which the dependency's MIR spells through a private module
            // (`crypto_bigint::uint::Uint<4>`): the owner as printed names
            // it. rustc checks the twin's type, so a wrong guess costs that
            // twin, never a value.
            let owner = path
                .strip_prefix("<::")
                .and_then(|p| p.rsplit_once(">::"))
                .map(|(owner, _)| owner)
                .filter(|owner| !owner.contains(" as "));
            match owner {
                Some(owner) if same_last_segment(owner, ty) => (path.clone(), format!("::{owner}")),
                _ => (path.clone(), ty.clone()),
            }
        })
        .collect();
    if !failed_deps.is_empty() {
        // All in one crate; when rustc refuses that (one twin it cannot
        // name), each on its own, so that one costs only itself.
        let batches: Vec<Vec<usize>> =
            match eval::twin::build_dependency_twins(kernel, opts, &twin_paths) {
                Ok(twins) => {
                    take_dependency_twins(&mut ev, &krate, &twins, &failed_deps, &[]);
                    Vec::new()
                }
                Err(e) => {
                    tracing::debug!("twins of dependency constants: {e}");
                    (0..failed_deps.len()).map(|k| vec![k]).collect()
                }
            };
        for batch in batches {
            let one: Vec<(String, String)> = batch.iter().map(|&k| twin_paths[k].clone()).collect();
            match eval::twin::build_dependency_twins(kernel, opts, &one) {
                Ok(twins) => take_dependency_twins(&mut ev, &krate, &twins, &failed_deps, &batch),
                Err(e) => tracing::debug!("twin of `{}`: {e}", failed_deps[batch[0]].0),
            }
        }
    }
    // A static the evaluator could not reach: rustc printed its bytes itself
    // whenever a function refers to it.
    let failed_statics: Vec<String> = ev
        .items
        .iter()
        .filter(|(_, i)| twin_fallback && i.kind == eval::ItemKind::Static && i.value.is_err())
        .map(|(n, _)| n.clone())
        .collect();
    for name in failed_statics {
        let Some(dump) = krate.static_alloc(&name) else {
            continue;
        };
        if let Ok(v) = eval::twin::import_twin_value(&mut ev.memory, &krate, dump.id) {
            let mutable = krate.item_body(&name).is_some_and(|b| {
                krate.bodies[b].kind == model::BodyKind::Static(model::Mutability::Mut)
            });
            ev.memory.allocs[v].mutable = mutable;
            ev.set_fallback(&krate, &name, v, eval::EvaluatedBy::RustcStatic);
        }
    }
    // Last, with every item's value final: the constants the code uses, so
    // that lowering never evaluates (it takes `&Imported`).
    ev.evaluate_operands(&krate, &tuples);
    Ok(Imported {
        krate,
        eval: ev,
        tuples,
    })
}

/// How many rounds of instantiation an import runs (instances found inside
/// instances) before it gives up: deeper chains are polymorphic recursion.
pub const MONO_ROUNDS: usize = 4;

/// Compiles `kernel` with rustc and imports the result. Generic functions
/// that rustc left as calls are instantiated ([`mono`]): rustc runs again on
/// the kernel with the instances appended, until no new instance appears.
pub fn import_file(kernel: &Path, opts: &rustc::RustcOptions) -> Result<Crate, ImportError> {
    print_kernel(kernel, opts).map(|(_, krate)| krate)
}

/// What rustc printed for a kernel in the last round of [`print_kernel`]:
/// its output, and the instances appended to the kernel's text, if any.
#[derive(Debug)]
pub struct Printed {
    /// rustc's MIR and layout report, and the kernel's own source.
    pub out: rustc::RustcOutput,
    /// The instances' source (appended to the kernel's text) and the calls
    /// they serve, when the kernel has generic functions left as calls.
    pub instances: Option<(
        mono::InstanceSource,
        std::collections::BTreeMap<String, mono::Instance>,
    )>,
    /// The shims of dependency calls rustc left (appended after the
    /// instances), keyed by the call they serve.
    pub dep_calls: std::collections::BTreeMap<String, mono::shims::DepCall>,
}

impl Printed {
    /// The text appended to the kernel for its last rustc run, if any.
    pub fn appended(&self) -> Option<&str> {
        self.instances.as_ref().map(|(s, _)| s.text.as_str())
    }

    /// The unstable features the run that printed the appended text
    /// enabled (a `try_fold` shim's `Try` bound).
    pub fn features(&self) -> Vec<&'static str> {
        mono::shims::shim_features(&self.dep_calls)
    }
}

/// Runs rustc on `kernel` (again, with the instances of its generic
/// functions and the shims of dependency calls appended, while new ones
/// appear; at most [`MONO_ROUNDS`]), and imports the last output.
pub fn print_kernel(
    kernel: &Path,
    opts: &rustc::RustcOptions,
) -> Result<(Printed, Crate), ImportError> {
    let out = rustc::run_rustc(kernel, opts)?;
    let name = kernel.display().to_string();
    let mut printed = Printed {
        out,
        instances: None,
        dep_calls: Default::default(),
    };
    let mut krate = import_printed(&printed, &name)?;
    let generics = mono::generic_fns(&printed.out.source);
    let dep_crates: std::collections::BTreeSet<String> = opts
        .deps
        .iter()
        .flat_map(|d| d.crates.iter().map(|c| c.name.clone()))
        .collect();
    // Nothing to instantiate or shim: the first output is the last.
    if generics.is_empty()
        && dep_crates.is_empty()
        && mono::drop_glue::glue_calls(&krate).is_empty()
        && mono::vtable_shims::vtable_shims(&krate).is_empty()
        && mono::dep_calls::dep_calls(&krate, &dep_crates).is_empty()
    {
        return Ok((printed, krate));
    }
    let mut known = std::collections::BTreeMap::new();
    let mut shims = std::collections::BTreeMap::new();
    // Shims rustc refused (a type the printer named that source cannot
    // reach, such as a dependency's private type): not offered again.
    let mut refused = std::collections::BTreeSet::new();
    // Public paths rustc suggested for private ones the shims named
    // (`mono::visible_paths`): the shims are written with them.
    let mut visible = std::collections::BTreeMap::new();
    'rounds: for _ in 0..MONO_ROUNDS {
        let before = (known.len(), shims.len());
        known.extend(mono::instances(&krate, &generics));
        shims.extend(
            mono::dep_calls::dep_calls(&krate, &dep_crates)
                .into_iter()
                .chain(mono::drop_glue::glue_calls(&krate))
                .chain(mono::vtable_shims::vtable_shims(&krate))
                .filter(|(k, _)| !refused.contains(k)),
        );
        if (known.len(), shims.len()) == before {
            break;
        }
        let (appended, out) = loop {
            let mut appended = mono::instance_source(&known, &generics);
            appended.text.push_str(&mono::visible_paths::rewrite(
                &mono::shims::dep_call_source(&shims),
                &visible,
            ));
            let features = mono::shims::shim_features(&shims);
            match rustc::run_rustc_appended(kernel, opts, &appended.text, &features) {
                Ok(out) => break (appended, out),
                // The new shims rustc names in its errors are dropped and
                // the round runs again without them; if it names none, the
                // last round stands and the lowering refuses its calls by
                // name.
                Err(rustc::RustcError::Failed { stderr, .. }) if shims.len() > before.1 => {
                    // A private path rustc says how to reach: the same
                    // shims again, written with it.
                    let learned = mono::visible_paths::suggested_paths(&stderr);
                    if mono::visible_paths::learn(&mut visible, learned) {
                        tracing::debug!("public paths rustc suggested: {visible:?}");
                        continue;
                    }
                    let first = rustc::appended_first_line(&printed.out.source);
                    let file = kernel.file_name().and_then(|f| f.to_str()).unwrap_or("");
                    let bad =
                        mono::shims::refused_shims(&shims, &appended.text, first, file, &stderr);
                    tracing::debug!("dependency call shims refused by rustc: {bad:?}");
                    tracing::trace!("rustc's errors on the shims:\n{stderr}");
                    if bad.is_empty() {
                        break 'rounds;
                    }
                    for k in bad {
                        shims.remove(&k);
                        refused.insert(k);
                    }
                    if shims.len() == before.1 && known.len() == before.0 {
                        break 'rounds;
                    }
                }
                Err(e) => return Err(e.into()),
            }
        };
        printed = Printed {
            out,
            instances: Some((appended, known.clone())),
            dep_calls: shims.clone(),
        };
        krate = import_printed(&printed, &name)?;
    }
    // New instances still appearing after the last round: their calls stay
    // unresolved, and the lowering refuses them.
    if let Some(deps) = &opts.deps {
        deps::link_dependency_items(&mut krate, deps);
    }
    Ok((printed, krate))
}

/// Imports what [`print_kernel`] printed, the kernel read as `file`: the
/// MIR, and the instances' spans and call aliases.
pub fn import_printed(p: &Printed, file: &str) -> Result<Crate, ImportError> {
    let out = &p.out;
    let generics = mono::generic_fns(&out.source);
    let Some((appended, known)) = &p.instances else {
        let mut krate = import_text(&out.mir, &out.type_sizes, Some((&out.source, file)))?;
        mono::closures::instantiate(
            &mut krate,
            &generics,
            &Default::default(),
            &Default::default(),
        );
        mono::closures::link_dyn_closures(&mut krate);
        return Ok(krate);
    };
    let text = format!("{}\n{}", out.source, appended.text);
    let mut krate = import_text(&out.mir, &out.type_sizes, Some((&text, file)))?;
    let kernel_lines = out.source.matches('\n').count() as u32;
    mono::map_instance_spans(&mut krate, appended, file, kernel_lines);
    mono::link_instances(&mut krate, known, &generics);
    mono::dep_calls::link_dep_calls(&mut krate, &p.dep_calls);
    mono::closures::instantiate(&mut krate, &generics, known, &p.dep_calls);
    mono::closures::link_dyn_closures(&mut krate);
    mono::drop_glue::link_drop_glue(&mut krate, &p.dep_calls);
    Ok(krate)
}

/// Imports MIR text directly (for tests and for MIR saved elsewhere).
/// `source` is the kernel source and its file name, for attribute recovery;
/// the spans rustc printed for the kernel (`/src/<its name>`) are renamed to
/// that file name, which [`Crate::source_file`] records.
pub fn import_text(
    mir: &str,
    type_sizes: &str,
    source: Option<(&str, &str)>,
) -> Result<Crate, ImportError> {
    let parsed = parse::parse_mir_named(mir, prelude::PRELUDE_MODULE).map_err(|source| {
        ImportError::Parse {
            file: "<mir text>".into(),
            source,
        }
    })?;
    let mut krate = Crate {
        layouts: layout::LayoutTable::parse(type_sizes)?,
        allocs: parsed.allocs,
        static_names: parsed.static_names,
        fn_names: parsed.fn_names,
        vtable_names: parsed.vtable_names,
        ..Crate::default()
    };
    let mut bodies = parsed.bodies;
    model::reify_closure_fn_pointers(&mut bodies);
    for mut body in bodies {
        body.devirtualize_fn_pointers();
        body.call_fn_items_directly();
        krate.bodies.push(body);
    }
    krate.record_closure_captures();
    krate.expand_std_guard_drops();
    krate.materialize_std_promoteds();
    if let Some((text, file)) = source {
        // rustc named the kernel by its sandbox path; spans name the file read.
        let printed = rustc::printed_kernel_path(Path::new(file));
        for body in krate.bodies.values_mut() {
            body.rename_span_file(&printed, file);
        }
        krate.source_file = Some(file.to_string());
        krate.attrs = attrs::recover_attrs(text, file, prelude::KERNEL_MODULE)?;
        krate.kernel_implements_drop = attrs::implements_drop(text);
        krate.trait_object_impls = attrs::traits_implemented_for_trait_objects(text);
        // The prelude's own structs (field names of `DisjointSlice`, ...).
        krate.attrs.extend(prelude_attrs()?);
        krate.link_impl_methods(&attrs::resolve_source_type);
    }
    Ok(krate)
}

/// The attributes of the prelude's items. The prelude is compiled into this
/// crate, so syn reads it once per process, not once per import.
fn prelude_attrs() -> Result<std::collections::BTreeMap<String, attrs::ItemAttrs>, attrs::AttrError>
{
    static CACHE: std::sync::OnceLock<std::collections::BTreeMap<String, attrs::ItemAttrs>> =
        std::sync::OnceLock::new();
    if let Some(a) = CACHE.get() {
        return Ok(a.clone());
    }
    let a = attrs::recover_attrs(
        rustc::PRELUDE_SOURCE,
        "prelude/gpu.rs",
        prelude::PRELUDE_MODULE,
    )?;
    Ok(CACHE.get_or_init(|| a).clone())
}

/// Gives the constants of `failed` their values from dependency twins built
/// for the indices `batch` (all of `failed`, in order, when empty).
fn take_dependency_twins(
    ev: &mut eval::Evaluation,
    krate: &model::Crate,
    twins: &eval::twin::Twins,
    failed: &[(String, String)],
    batch: &[usize],
) {
    let all: Vec<usize> = (0..failed.len()).collect();
    let batch = if batch.is_empty() { &all[..] } else { batch };
    for (k, &index) in batch.iter().enumerate() {
        let twin = format!("kernel::{}", eval::twin::dependency_twin_name(k));
        let Some(root) = twins.twin_alloc(&twin) else {
            continue;
        };
        if let Ok(v) = eval::twin::import_twin_value(&mut ev.memory, &twins.krate, root) {
            ev.set_fallback(krate, &failed[index].0, v, eval::EvaluatedBy::RustcTwin);
        }
    }
}

/// Whether two type paths as source (`a::Uint<4>`, `a::b::Uint<4>`) end in
/// the same segment, arguments included, in the same crate.
fn same_last_segment(a: &str, b: &str) -> bool {
    let split = |t: &str| -> (String, String) {
        let name_end = t.find('<').unwrap_or(t.len());
        let (path, args) = t.split_at(name_end);
        let krate = path.split("::").next().unwrap_or("").to_string();
        let last = path.rsplit("::").next().unwrap_or("");
        (krate, format!("{last}{args}"))
    };
    split(a) == split(b)
}

#[cfg(test)]
mod tests {
    use super::same_last_segment;

    #[test]
    fn a_type_is_matched_by_its_crate_and_last_segment() {
        assert!(same_last_segment("c::Uint<4>", "c::uint::Uint<4>"));
        assert!(!same_last_segment("c::Uint<4>", "c::uint::Uint<8>"));
        assert!(!same_last_segment("c::Uint<4>", "d::Uint<4>"));
        assert!(!same_last_segment("c::Uint<4>", "u32"));
    }
}
