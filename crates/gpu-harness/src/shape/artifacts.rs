//! The artifacts the shape checks read, built from a fixture's `kernel.rs`
//! through [`compile_driver`].

use std::path::{Path, PathBuf};

use compile_driver::{CompileError, Libnvvm, OPT_DEFAULT, OPT_NONE};
use mir_lower::Lowered;

use super::ShapeInput;

/// A lowered fixture with its NVVM IR and both PTX compiles.
#[derive(Debug)]
pub struct Artifacts {
    /// The fixture's `kernel.rs`.
    pub kernel: PathBuf,
    /// The imported MIR, when these artifacts were built from the source
    /// (not from an already lowered, possibly mutated, module).
    pub mir: Option<mir_import::Crate>,
    /// The lowering.
    pub lowered: Lowered,
    /// The printed NVVM IR.
    pub nvvm_ir: String,
    /// PTX at `-opt=3`.
    pub ptx_o3: String,
    /// PTX at `-opt=0`.
    pub ptx_o0: String,
    /// How rustc ran ([`mir_import::rustc::RustcOptions::for_kernel`]:
    /// these artifacts are built from this workspace's own fixtures, for
    /// tests and mutants).
    pub rustc: mir_import::rustc::RustcOptions,
}

impl Artifacts {
    /// Imports, lowers, prints and compiles `kernel` at `-opt=3` and `-opt=0`.
    pub fn build(kernel: &Path, nvvm: &Libnvvm) -> Result<Artifacts, CompileError> {
        let rustc =
            compile_driver::RustcOptions::for_kernel(kernel).map_err(|e| CompileError::Import {
                kernel: kernel.to_path_buf(),
                source: mir_import::ImportError::Dependencies(e),
            })?;
        let (imported, lowered) = compile_driver::import_and_lower(kernel, &rustc)?;
        let mut a = Self::from_lowered(kernel, lowered, nvvm)?;
        a.mir = Some(imported.krate);
        a.rustc = rustc;
        Ok(a)
    }

    /// Prints and compiles an already lowered (possibly mutated) module. No
    /// libNVVM verify: a mutant's PTX is what the checks must see fail.
    pub fn from_lowered(
        kernel: &Path,
        lowered: Lowered,
        nvvm: &Libnvvm,
    ) -> Result<Artifacts, CompileError> {
        let nvvm_ir = compile_driver::print(&lowered);
        Ok(Artifacts {
            kernel: kernel.to_path_buf(),
            mir: None,
            ptx_o3: compile_driver::ptx(kernel, nvvm, &nvvm_ir, OPT_DEFAULT)?,
            ptx_o0: compile_driver::ptx(kernel, nvvm, &nvvm_ir, OPT_NONE)?,
            nvvm_ir,
            lowered,
            rustc: Default::default(),
        })
    }

    /// The checks' view of these artifacts.
    pub fn input(&self) -> ShapeInput<'_> {
        ShapeInput {
            kernel: &self.kernel,
            lowered: &self.lowered,
            mir: self.mir.as_ref(),
            nvvm_ir: &self.nvvm_ir,
            ptx_o3: &self.ptx_o3,
            ptx_o0: &self.ptx_o0,
            rustc: &self.rustc,
        }
    }
}
