//! `kernel-extract`: real kernels, imported by `mir-import`, turned into the
//! memory model's [`Program`]s, and the checks over them ([`checks`]).
//!
//! **What this crate owns:** the translation from `mir-import`'s typed model
//! to `memory_model::lang`, the launch parameters of the fixtures it knows
//! ([`fixtures`]), and the `extract.*` checks. **What it does not own:**
//! reading MIR (`mir-import`), the recognition of known std/core paths
//! (`mir-import`, shared with the lowering), and the semantics of the
//! extracted programs (`memory-model`'s machines and consistency
//! predicate). **The border:** [`extract_file`] and [`extract_crate`] in,
//! an [`Extraction`] holding a verified [`Program`] out.
//!
//! The input is `mir-import`'s typed model of rustc's optimized MIR, never the
//! MIR text. The kernel's control-flow graph is flattened with every crate
//! function inlined ([`flat`]), then rebuilt as structured statements
//! ([`structure`]): a two-way `switchInt` with a join becomes an `if`, a loop
//! whose induction variable starts at a constant and is updated by a constant
//! step becomes a counted `for` with the trip count computed here, and a
//! bounds check that holds for every thread of the launch is folded away.
//!
//! Nothing is dropped silently. Every construct that is not translated
//! exactly (a loop without a constant bound, a panic arm that cannot be folded,
//! float arithmetic, a launch index the model does not have) becomes a
//! [`Warning`] that names the function, the block and the construct. Decisions
//! that are exact (a folded bounds check, a recognised counted loop) become
//! [`Extraction::notes`].
//!
//! [`outline`] compares the typed shared-memory action outline of two
//! programs, for the check that the extracted reduction is the verified one.

#![deny(missing_docs)]

mod branch;
mod calls;
pub mod checks;
pub mod fixtures;
pub mod flat;
pub mod handles;
mod live;
mod loops;
pub mod outline;
pub mod structure;
pub mod value;

use std::fmt;
use std::path::Path;

use serde::Serialize;

use memory_model::lang::Program;

pub use fixtures::Launch;

/// Why a kernel could not be extracted at all.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// `mir-import` could not import the kernel.
    #[error("import failed: {0}")]
    Import(#[from] mir_import::ImportError),
    /// No launch is known for the fixture (its thread count and buffer
    /// lengths are not in the MIR, and [`fixtures::launch`] has no entry).
    #[error("no launch is known for fixture `{fixture}` (known: {known:?})")]
    NoLaunch {
        /// The fixture asked for.
        fixture: String,
        /// The fixtures with a known launch.
        known: &'static [&'static str],
    },
    /// The crate has no kernel of that name.
    #[error("no kernel `{name}` in the crate (kernels: {known:?})")]
    NoKernel {
        /// The name asked for.
        name: String,
        /// The kernels the crate has.
        known: Vec<String>,
    },
    /// A function calls itself, directly or not.
    #[error("{function}: recursion cannot be inlined")]
    Recursion {
        /// The function found again on the call stack.
        function: String,
    },
    /// Inlining nested too deep.
    #[error("{function}: inlining nests too deep")]
    TooDeep {
        /// The function.
        function: String,
    },
    /// The structured program failed the language's verifier (a bug here):
    /// every error the verifier found.
    #[error("extracted program is ill-formed")]
    Verify(#[source] memory_model::lang::IllFormed),
    /// A construct that extraction cannot even approximate.
    #[error("{function} {block}: {message}")]
    Unsupported {
        /// The function.
        function: String,
        /// The block.
        block: String,
        /// What it is.
        message: String,
    },
}

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum WarningKind {
    /// Control flow that is not translated exactly.
    ControlFlow,
    /// A value that the model does not track, abstracted.
    Value,
    /// An action or statement that has no counterpart in the language.
    Action,
}

/// A construct that is not translated exactly.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Warning {
    /// What it is about.
    pub kind: WarningKind,
    /// The function (def path).
    pub function: String,
    /// The block (`bb3`).
    pub block: String,
    /// The construct, short (`spin loop`, `f32 Mul`).
    pub construct: String,
    /// What extraction did instead.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            WarningKind::ControlFlow => "control flow",
            WarningKind::Value => "value",
            WarningKind::Action => "action",
        };
        write!(
            f,
            "{} {}: {kind}: {}: {}",
            self.function, self.block, self.construct, self.message
        )
    }
}

/// An extracted kernel.
#[derive(Clone, Debug)]
pub struct Extraction {
    /// The kernel's name.
    pub kernel: String,
    /// The program, one body repeated for every thread of the launch.
    pub program: Program,
    /// What was not translated exactly.
    pub warnings: Vec<Warning>,
    /// Exact decisions worth knowing: folded checks, counted loops.
    pub notes: Vec<String>,
}

/// Imports `kernel_rs` with `mir-import` and extracts its kernel `name`.
///
/// # Errors
/// The import failing, or the kernel not being extractable at all.
pub fn extract_file(
    kernel_rs: &Path,
    name: &str,
    launch: &Launch,
) -> Result<Extraction, ExtractError> {
    let krate = mir_import::import_file(kernel_rs, &mir_import::rustc::RustcOptions::default())?;
    extract_crate(&krate, name, launch)
}

/// Extracts the kernel `name` (its bare name, `saxpy`) from an imported crate.
///
/// # Errors
/// No such kernel, recursion, or a construct that cannot be approximated.
pub fn extract_crate(
    krate: &mir_import::Crate,
    name: &str,
    launch: &Launch,
) -> Result<Extraction, ExtractError> {
    let def_path = format!("{}::{name}", mir_import::prelude::KERNEL_MODULE);
    let is_kernel = krate.attrs.get(&def_path).is_some_and(|a| a.kernel);
    let body = krate.fn_body(&def_path).filter(|_| is_kernel);
    let Some(body) = body else {
        return Err(ExtractError::NoKernel {
            name: name.to_string(),
            known: krate
                .attrs
                .iter()
                .filter(|(_, a)| a.kernel)
                .map(|(p, _)| p.clone())
                .collect(),
        });
    };
    let flat = flat::Flat::build(krate, body)?;
    structure::Extractor::new(&flat, launch, name).run()
}
