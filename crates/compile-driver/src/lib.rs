//! The one compile path of the workspace, from a kernel's `kernel.rs` to the
//! files a GPU loads:
//!
//! ```text
//! kernel.rs ─ import (rustc, twin fallback) ─ lower ─ print NVVM IR
//!           ─ libNVVM verify ─ PTX at -opt=3 and -opt=0 ─ LTOIR
//! ```
//!
//! **Owns:** the target architecture ([`TARGET_ARCH`], `compute_90`), the
//! order of the stages, and [`CompileError`], which names the stage and the
//! kernel file of every failure. Each stage is its own function, so that a
//! caller (the oracle) can time and report them one by one; [`compile`] and
//! [`compile_lowered`] run them all.
//!
//! **Does not own:** what any stage does: rustc and the MIR model
//! (`mir-import`), the lowering and its refusals (`mir-lower`), the NVVM IR
//! printer and the libNVVM bindings (`nvvm-emit`). It adds no option of its
//! own to them, so one kernel compiles the same way everywhere.
//!
//! **Border:** plain functions over those crates' types; no trait.

#![deny(missing_docs)]

use std::path::{Path, PathBuf};

pub use mir_import::Imported;
pub use mir_import::rustc::RustcOptions;
pub use mir_lower::Lowered;
pub use nvvm_emit::Libnvvm;
use nvvm_emit::{CompileOptions, LoadError, NvvmError};

/// The GPU architecture every PTX and LTOIR compile targets (`compute_90`):
/// declared here only, so the oracle, its shape checks and the CLI never
/// compile one kernel for two machines.
pub const TARGET_ARCH: u32 = 90;

/// libNVVM's default optimization level, the one the oracle runs.
pub const OPT_DEFAULT: u8 = 3;

/// No optimization: `#[inline(never)]` helpers survive, so the shape checks
/// can inspect them.
pub const OPT_NONE: u8 = 0;

/// libNVVM's options for PTX at `opt` for [`TARGET_ARCH`].
pub fn ptx_options(opt: u8) -> CompileOptions {
    CompileOptions::ptx(TARGET_ARCH, opt)
}

/// libNVVM's options for LTOIR (at [`OPT_DEFAULT`]) for [`TARGET_ARCH`].
pub fn ltoir_options() -> CompileOptions {
    CompileOptions::ltoir(TARGET_ARCH, OPT_DEFAULT)
}

/// Why a compile failed: one variant per stage, each naming the kernel file.
///
/// The message already contains the cause's message (so `to_string()` alone
/// is a full report); [`std::error::Error::source`] gives the cause itself,
/// typed, for callers that inspect it (the oracle reads the lowering's
/// [`Diagnostics`](mir_lower::Diagnostics) to accept expected refusals).
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// rustc, the MIR reader or the constant evaluator failed.
    #[error("import of {}: {source}", kernel.display())]
    Import {
        /// The kernel file.
        kernel: PathBuf,
        /// What the import found.
        #[source]
        source: mir_import::ImportError,
    },
    /// The lowering refused the kernel, with every refusal.
    #[error("lowering of {}: {source}", kernel.display())]
    Lower {
        /// The kernel file.
        kernel: PathBuf,
        /// The refusals.
        #[source]
        source: mir_lower::Diagnostics,
    },
    /// libNVVM could not be loaded.
    #[error("{source}")]
    Libnvvm {
        /// Why, with the setup command.
        #[source]
        source: LoadError,
    },
    /// libNVVM's verifier rejected the printed NVVM IR.
    #[error("libNVVM verify of {}: {source}", kernel.display())]
    Verify {
        /// The kernel file.
        kernel: PathBuf,
        /// libNVVM's error and log.
        #[source]
        source: NvvmError,
    },
    /// libNVVM could not compile the NVVM IR to PTX.
    #[error("libNVVM PTX -opt={opt} of {}: {source}", kernel.display())]
    Ptx {
        /// The kernel file.
        kernel: PathBuf,
        /// The optimization level.
        opt: u8,
        /// libNVVM's error and log.
        #[source]
        source: NvvmError,
    },
    /// libNVVM could not compile the NVVM IR to LTOIR.
    #[error("libNVVM LTOIR of {}: {source}", kernel.display())]
    Ltoir {
        /// The kernel file.
        kernel: PathBuf,
        /// libNVVM's error and log.
        #[source]
        source: NvvmError,
    },
}

impl CompileError {
    /// The stage that failed, as the oracle's reports name it.
    pub fn stage(&self) -> &'static str {
        match self {
            CompileError::Import { .. } => "import",
            CompileError::Lower { .. } => "lower",
            CompileError::Libnvvm { .. }
            | CompileError::Verify { .. }
            | CompileError::Ptx { .. }
            | CompileError::Ltoir { .. } => "nvvm",
        }
    }
}

/// Runs rustc on `kernel` as `rustc` says, imports its MIR and evaluates its
/// constants, with rustc's `static` twins as the fallback for what the
/// evaluator cannot reach (the oracle's setting everywhere).
pub fn import(kernel: &Path, rustc: &RustcOptions) -> Result<Imported, CompileError> {
    mir_import::import_and_evaluate(kernel, rustc, true).map_err(|source| CompileError::Import {
        kernel: kernel.to_path_buf(),
        source,
    })
}

/// Lowers an import of `kernel` to a verified device-IR module.
pub fn lower(kernel: &Path, imported: &Imported) -> Result<Lowered, CompileError> {
    mir_lower::lower(imported).map_err(|source| CompileError::Lower {
        kernel: kernel.to_path_buf(),
        source,
    })
}

/// [`import`] then [`lower`], keeping the import (its MIR is what the
/// lowering is checked against).
pub fn import_and_lower(
    kernel: &Path,
    rustc: &RustcOptions,
) -> Result<(Imported, Lowered), CompileError> {
    let imported = import(kernel, rustc)?;
    let lowered = lower(kernel, &imported)?;
    Ok((imported, lowered))
}

/// The NVVM IR text of a lowered module.
pub fn print(lowered: &Lowered) -> String {
    nvvm_emit::print_module(&lowered.module)
}

/// The process's shared libNVVM.
pub fn libnvvm() -> Result<&'static Libnvvm, CompileError> {
    Libnvvm::shared().map_err(|source| CompileError::Libnvvm { source })
}

/// libNVVM's verifier on `kernel`'s NVVM IR.
pub fn verify(kernel: &Path, nvvm: &Libnvvm, ir: &str) -> Result<(), CompileError> {
    nvvm.verify(ir).map_err(|source| CompileError::Verify {
        kernel: kernel.to_path_buf(),
        source,
    })
}

/// PTX text at `-opt=opt` for [`TARGET_ARCH`].
pub fn ptx(kernel: &Path, nvvm: &Libnvvm, ir: &str, opt: u8) -> Result<String, CompileError> {
    nvvm.compile(ir, &ptx_options(opt))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|source| CompileError::Ptx {
            kernel: kernel.to_path_buf(),
            opt,
            source,
        })
}

/// LTOIR bytes for [`TARGET_ARCH`].
pub fn ltoir(kernel: &Path, nvvm: &Libnvvm, ir: &str) -> Result<Vec<u8>, CompileError> {
    nvvm.compile(ir, &ltoir_options())
        .map_err(|source| CompileError::Ltoir {
            kernel: kernel.to_path_buf(),
            source,
        })
}

/// What libNVVM makes of one lowered kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Artifacts {
    /// The NVVM IR text.
    pub nvvm_ir: String,
    /// PTX at libNVVM's default `-opt=3`: what the GPU runs.
    pub ptx_o3: String,
    /// PTX at `-opt=0`, where `noinline` helpers survive for the shape checks.
    pub ptx_o0: String,
    /// The LTOIR size in bytes (the bytes themselves are not kept: the proof
    /// is that libNVVM made them).
    pub ltoir_bytes: usize,
}

/// Prints `lowered`, verifies it and compiles it to PTX at `-opt=3` and
/// `-opt=0` and to LTOIR, in that order.
pub fn compile_lowered(
    kernel: &Path,
    lowered: &Lowered,
    nvvm: &Libnvvm,
) -> Result<Artifacts, CompileError> {
    let nvvm_ir = print(lowered);
    verify(kernel, nvvm, &nvvm_ir)?;
    let ptx_o3 = ptx(kernel, nvvm, &nvvm_ir, OPT_DEFAULT)?;
    let ptx_o0 = ptx(kernel, nvvm, &nvvm_ir, OPT_NONE)?;
    let ltoir_bytes = ltoir(kernel, nvvm, &nvvm_ir)?.len();
    Ok(Artifacts {
        nvvm_ir,
        ptx_o3,
        ptx_o0,
        ltoir_bytes,
    })
}

/// One kernel through every stage.
#[derive(Debug)]
pub struct Compiled {
    /// The import, with the MIR the lowering is checked against.
    pub imported: Imported,
    /// The lowering.
    pub lowered: Lowered,
    /// What libNVVM made of it.
    pub artifacts: Artifacts,
}

/// Every stage on `kernel`: [`import_and_lower`], then [`compile_lowered`].
pub fn compile(
    kernel: &Path,
    rustc: &RustcOptions,
    nvvm: &Libnvvm,
) -> Result<Compiled, CompileError> {
    let (imported, lowered) = import_and_lower(kernel, rustc)?;
    let artifacts = compile_lowered(kernel, &lowered, nvvm)?;
    Ok(Compiled {
        imported,
        lowered,
        artifacts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compile_targets_the_one_architecture() {
        for args in [
            ptx_options(OPT_DEFAULT).to_args(),
            ltoir_options().to_args(),
        ] {
            assert!(args.iter().any(|a| a.contains("compute_90")), "{args:?}");
        }
    }

    #[test]
    fn errors_name_the_stage_and_the_kernel() {
        let e = CompileError::Lower {
            kernel: PathBuf::from("fixtures/x/kernel.rs"),
            source: mir_lower::Diagnostics(Vec::new()),
        };
        assert_eq!(e.stage(), "lower");
        assert!(
            e.to_string()
                .starts_with("lowering of fixtures/x/kernel.rs")
        );
        assert!(std::error::Error::source(&e).is_some());
    }
}
