//! rustc as the oracle: `static` twins of const items.
//!
//! rustc prints a static's evaluated allocation graph, but never a const's. So
//! for each top-level const `NAME: T` of the kernel, a twin
//! `static mut NAME__TWIN: T = NAME;` is added to a copy of the source, plus one
//! function that takes every twin's address (rustc prints a static's bytes only
//! when a function body refers to it). `static mut` because a twin of a
//! raw-pointer constant must not need `Sync` (DESIGN.md).
//!
//! The twin's graph is then compared with the evaluator's by structure: the same
//! size, alignment and bytes (with the same init mask), the same relocations at
//! the same offsets with the same addends, targets equal recursively, and the
//! same mutability of every nested allocation (rustc marks immutable targets
//! `<imm>`). The same twins let rustc evaluate a const the evaluator cannot:
//! [`import_twin_value`] copies the twin's graph in as the const's value.

use std::collections::BTreeMap;
use std::path::Path;

use quote::ToTokens;

use super::memory::{Alloc, EvalAlloc, Memory, Reloc, Target};
use crate::model::{AllocId, Crate};
use crate::rustc::{RustcError, RustcOptions};

/// The suffix of a twin static's name.
pub const TWIN_SUFFIX: &str = "__TWIN";

/// Why the twin build failed.
#[derive(Debug, thiserror::Error)]
pub enum TwinError {
    /// The kernel source could not be parsed for its consts.
    #[error("twin: cannot parse {0}")]
    Syntax(#[source] syn::Error),
    /// The kernel source could not be read, or the twin source not written.
    #[error("twin: cannot parse {}: {source}", path.display())]
    Io {
        /// The file (or the scratch folder).
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// rustc failed on the twin source, or it could not be imported.
    #[error("twin: {0}")]
    Rustc(#[from] RustcError),
    /// The twin MIR could not be imported.
    #[error("twin: {0}")]
    Import(#[source] Box<crate::ImportError>),
}

/// How rustc's graph for a const differs from the evaluator's, or why it
/// cannot be read: the first difference, at an allocation pair.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TwinMismatch {
    /// rustc's dump names an allocation it did not print.
    #[error("rustc did not print {0}")]
    NotPrinted(AllocId),
    /// One of our allocations corresponds to two of rustc's.
    #[error("{ours} corresponds to both {first} and {second}")]
    Ambiguous {
        /// Ours.
        ours: EvalAlloc,
        /// The rustc allocation paired first.
        first: AllocId,
        /// The other one.
        second: AllocId,
    },
    /// rustc's graph holds a vtable, which the fallback cannot copy: its
    /// layout is rustc's, not the lowering's.
    #[error("rustc's {0} is a vtable, which is not copied")]
    Vtable(AllocId),
    /// The allocations differ: where, and how.
    #[error("{ours} vs rustc's {theirs}: {what}")]
    Differs {
        /// Ours.
        ours: EvalAlloc,
        /// rustc's.
        theirs: AllocId,
        /// The first difference (size, alignment, a byte, a relocation).
        what: String,
    },
}

/// The top-level, non-generic const items of a kernel source: name and type as
/// written.
pub fn const_items(source: &str) -> Result<Vec<(String, String)>, TwinError> {
    let file = syn::parse_file(source).map_err(TwinError::Syntax)?;
    Ok(file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Const(c) if c.generics.params.is_empty() && c.ident != "_" => {
                Some((c.ident.to_string(), c.ty.to_token_stream().to_string()))
            }
            _ => None,
        })
        .collect())
}

/// The kernel source with a twin for each const in `consts`.
pub fn twin_source(source: &str, consts: &[(String, String)]) -> String {
    let twins: Vec<(String, String, String)> = consts
        .iter()
        .map(|(name, ty)| (name.clone(), ty.clone(), name.clone()))
        .collect();
    twins_source(source, &twins)
}

/// The kernel source with a twin `static mut NAME__TWIN: TY = EXPR;` for
/// each `(NAME, TY, EXPR)`, and one function that takes every twin's address.
fn twins_source(source: &str, twins: &[(String, String, String)]) -> String {
    let mut s = source.to_string();
    s.push_str("\n// Twins added by mir-import: rustc prints a static's evaluated bytes.\n");
    for (name, ty, expr) in twins {
        s.push_str(&format!(
            "#[allow(non_upper_case_globals)]\npub static mut {name}{TWIN_SUFFIX}: {ty} = {expr};\n"
        ));
    }
    s.push_str("#[inline(never)]\npub fn __mir_import_twins() -> usize {\n    0");
    for (name, _, _) in twins {
        s.push_str(&format!(" + (&raw const {name}{TWIN_SUFFIX} as usize)"));
    }
    s.push_str("\n}\n");
    s
}

/// The twin's name (without [`TWIN_SUFFIX`]) of the `k`-th dependency
/// constant given to [`build_dependency_twins`].
pub fn dependency_twin_name(k: usize) -> String {
    format!("__mir_import_dep_{k}")
}

/// rustc's evaluation of a kernel's consts: the twin crate's import.
pub struct Twins {
    /// The imported twin crate.
    pub krate: Crate,
    /// The consts that got a twin.
    pub consts: Vec<String>,
}

/// Builds and imports the twin crate of `kernel`. A kernel without a
/// top-level const has no twin to build, and rustc is not run for it.
pub fn build_twins(kernel: &Path, opts: &RustcOptions) -> Result<Twins, TwinError> {
    let source = std::fs::read_to_string(kernel).map_err(|source| TwinError::Io {
        path: kernel.to_path_buf(),
        source,
    })?;
    let consts = const_items(&source)?;
    if consts.is_empty() {
        return Ok(Twins {
            krate: Crate::default(),
            consts: Vec::new(),
        });
    }
    let twin = twin_source(&source, &consts);
    let krate = import_twin_crate(&twin, opts)?;
    Ok(Twins {
        krate,
        consts: consts.into_iter().map(|(n, _)| n).collect(),
    })
}

/// Builds and imports twins of a dependency's constants that the evaluator
/// could not reach (a `const fn` call, `base64::alphabet::STANDARD`):
/// `(path, type)` as source, the path as the kernel's MIR printed it. The
/// `k`-th is named [`dependency_twin_name`]`(k)`.
pub fn build_dependency_twins(
    kernel: &Path,
    opts: &RustcOptions,
    consts: &[(String, String)],
) -> Result<Twins, TwinError> {
    let source = std::fs::read_to_string(kernel).map_err(|source| TwinError::Io {
        path: kernel.to_path_buf(),
        source,
    })?;
    let twins: Vec<(String, String, String)> = consts
        .iter()
        .enumerate()
        .map(|(k, (path, ty))| (dependency_twin_name(k), ty.clone(), path.clone()))
        .collect();
    let krate = import_twin_crate(&twins_source(&source, &twins), opts)?;
    Ok(Twins {
        krate,
        consts: twins.into_iter().map(|(n, _, _)| n).collect(),
    })
}

/// Compiles and imports a twin crate's text.
fn import_twin_crate(twin: &str, opts: &RustcOptions) -> Result<Crate, TwinError> {
    // The twin file sits in a scratch folder of its own: it only needs the
    // prelude, which the crate root mounts. A shared folder would let two
    // imports of the same kernel delete each other's file.
    let scratch = crate::rustc::Scratch::new("twin").map_err(|source| TwinError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let path = scratch.0.join("kernel.rs");
    std::fs::write(&path, twin).map_err(|source| TwinError::Io {
        path: path.clone(),
        source,
    })?;
    let result = crate::import_file(&path, opts);
    drop(scratch);
    result.map_err(|e| TwinError::Import(Box::new(e)))
}

impl Twins {
    /// The allocation id of `NAME__TWIN` (`kernel::NAME` given).
    pub fn twin_alloc(&self, const_path: &str) -> Option<AllocId> {
        let want = format!("{const_path}{TWIN_SUFFIX}");
        self.krate
            .allocs
            .values()
            .find(|a| a.static_path.as_deref() == Some(want.as_str()))
            .map(|a| a.id)
    }
}

/// What a relocation in rustc's dump points to, for comparison.
enum TheirTarget {
    Anon(AllocId),
    Static(String),
    Function(crate::model::Path),
    /// A vtable, by the concrete type and the principal trait.
    Vtable(AllocId, crate::model::Ty, String),
}

fn their_target(k: &Crate, id: AllocId) -> TheirTarget {
    if let Some(p) = k.static_names.get(&id) {
        return TheirTarget::Static(p.clone());
    }
    if let Some(p) = k.fn_names.get(&id) {
        return TheirTarget::Function(p.clone());
    }
    if let Some((t, p)) = k.vtable_names.get(&id) {
        return TheirTarget::Vtable(id, t.clone(), p.clone());
    }
    match k.allocs.get(&id).and_then(|a| a.static_path.clone()) {
        // A static's nested memory (`M::{nested#0}`) is anonymous memory owned by it.
        Some(p) if !p.contains("{nested#") => TheirTarget::Static(p),
        _ => TheirTarget::Anon(id),
    }
}

/// Compares the evaluator's graph at `ours` with rustc's at `theirs`. The root
/// (the twin static itself) is compared by contents; every nested allocation
/// also by mutability, through the pointer that reaches it. Returns a
/// description of the first difference.
///
/// # Errors
///
/// The first difference, as a [`TwinMismatch`].
pub fn compare(
    mem: &Memory,
    ours: EvalAlloc,
    k: &Crate,
    theirs: AllocId,
) -> Result<(), TwinMismatch> {
    let mut pairs: BTreeMap<EvalAlloc, AllocId> = BTreeMap::new();
    compare_rec(mem, ours, k, theirs, &mut pairs)
}

fn compare_rec(
    mem: &Memory,
    ours: EvalAlloc,
    k: &Crate,
    theirs: AllocId,
    pairs: &mut BTreeMap<EvalAlloc, AllocId>,
) -> Result<(), TwinMismatch> {
    if let Some(prev) = pairs.get(&ours) {
        return if *prev == theirs {
            Ok(())
        } else {
            Err(TwinMismatch::Ambiguous {
                ours,
                first: *prev,
                second: theirs,
            })
        };
    }
    pairs.insert(ours, theirs);
    let a = &mem.allocs[ours];
    let d = k
        .allocs
        .get(&theirs)
        .ok_or(TwinMismatch::NotPrinted(theirs))?;
    let at = |what: String| TwinMismatch::Differs { ours, theirs, what };
    if a.size() != d.size {
        return Err(at(format!("size {} vs {}", a.size(), d.size)));
    }
    if a.align != d.align {
        return Err(at(format!("alignment {} vs {}", a.align, d.align)));
    }
    for (i, theirs_b) in d.bytes.iter().enumerate() {
        let ours_b = a.init[i].then_some(a.bytes[i]);
        if ours_b != *theirs_b {
            return Err(at(format!("byte {i}: {ours_b:02x?} vs {theirs_b:02x?}")));
        }
    }
    let ours_offsets: Vec<u64> = a.relocs.keys().copied().collect();
    let theirs_offsets: Vec<u64> = d.relocations.iter().map(|r| r.offset).collect();
    if ours_offsets != theirs_offsets {
        return Err(at(format!(
            "relocations at {ours_offsets:?} vs {theirs_offsets:?}"
        )));
    }
    for r in &d.relocations {
        let o = &a.relocs[&r.offset];
        if o.addend != r.addend {
            return Err(at(format!(
                "addend at {}: {} vs {}",
                r.offset, o.addend, r.addend
            )));
        }
        match (&o.target, their_target(k, r.target)) {
            (Target::Static(s), TheirTarget::Static(t)) if *s == t => {}
            (Target::Function(f), TheirTarget::Function(g)) if *f == g => {}
            // Ours holds the methods called through objects, rustc's every
            // method: the same vtable when made for the same type and trait.
            (Target::Alloc(x), TheirTarget::Vtable(_, t, p))
                if mem.vtables.get(&(t.clone(), p.clone())) == Some(x) => {}
            (Target::Alloc(x), TheirTarget::Anon(y)) => {
                let ours_mutable = mem.allocs[*x].mutable;
                if ours_mutable == r.immutable {
                    return Err(at(format!(
                        "pointer at {} targets {} memory, rustc's {}",
                        r.offset,
                        if ours_mutable { "mutable" } else { "immutable" },
                        if r.immutable { "immutable" } else { "mutable" },
                    )));
                }
                compare_rec(mem, *x, k, y, pairs)?;
            }
            (ot, _) => {
                return Err(at(format!(
                    "pointer at {} targets {ot:?} vs rustc's {}",
                    r.offset, r.target
                )));
            }
        }
    }
    Ok(())
}

/// Copies rustc's twin graph for a const into `mem` (the fallback path) and
/// returns the new value allocation. The root is the const's value, immutable.
///
/// # Errors
///
/// [`TwinMismatch::NotPrinted`] when the graph names an allocation rustc did
/// not print.
pub fn import_twin_value(
    mem: &mut Memory,
    k: &Crate,
    root: AllocId,
) -> Result<EvalAlloc, TwinMismatch> {
    let mut map = BTreeMap::new();
    import_rec(mem, k, root, &mut map)
}

fn import_rec(
    mem: &mut Memory,
    k: &Crate,
    id: AllocId,
    map: &mut BTreeMap<AllocId, EvalAlloc>,
) -> Result<EvalAlloc, TwinMismatch> {
    if let Some(a) = map.get(&id) {
        return Ok(*a);
    }
    let d = k.allocs.get(&id).ok_or(TwinMismatch::NotPrinted(id))?;
    let mut alloc = Alloc::uninit(d.size, d.align);
    for (i, b) in d.bytes.iter().enumerate() {
        alloc.bytes[i] = b.unwrap_or(0);
        alloc.init[i] = b.is_some();
    }
    let me = mem.allocs.push(alloc);
    map.insert(id, me);
    for r in &d.relocations {
        let target = match their_target(k, r.target) {
            TheirTarget::Static(s) => Target::Static(s),
            TheirTarget::Function(f) => Target::Function(f),
            TheirTarget::Vtable(id, ..) => return Err(TwinMismatch::Vtable(id)),
            TheirTarget::Anon(t) => {
                let t = import_rec(mem, k, t, map)?;
                mem.allocs[t].mutable = !r.immutable;
                Target::Alloc(t)
            }
        };
        mem.allocs[me].relocs.insert(
            r.offset,
            Reloc {
                target,
                addend: r.addend,
            },
        );
    }
    Ok(me)
}
