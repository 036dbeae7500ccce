//! The artifacts the shape checks read, built from a fixture's `kernel.rs`.

use std::path::{Path, PathBuf};

use mir_lower::Lowered;
use nvvm_emit::{CompileOptions, Libnvvm};

use super::ShapeInput;

/// The architecture the checks compile for (`compute_90`).
pub const ARCH: u32 = 90;

/// A lowered fixture with its NVVM IR and both PTX compiles.
#[derive(Debug)]
pub struct Artifacts {
    /// The fixture's `kernel.rs`.
    pub kernel: PathBuf,
    /// The lowering.
    pub lowered: Lowered,
    /// The printed NVVM IR.
    pub nvvm_ir: String,
    /// PTX at `-opt=3`.
    pub ptx_o3: String,
    /// PTX at `-opt=0`.
    pub ptx_o0: String,
    /// How rustc ran (unconfined: these artifacts are built from this
    /// workspace's own fixtures, for tests and mutants).
    pub rustc: mir_import::rustc::RustcOptions,
}

impl Artifacts {
    /// Imports, lowers, prints and compiles `kernel` at `-opt=3` and `-opt=0`.
    pub fn build(kernel: &Path, nvvm: &Libnvvm) -> Result<Artifacts, String> {
        let lowered = super::stable::lower_kernel(kernel, &Default::default())?;
        Self::from_lowered(kernel, lowered, nvvm)
    }

    /// Prints and compiles an already lowered (possibly mutated) module.
    pub fn from_lowered(
        kernel: &Path,
        lowered: Lowered,
        nvvm: &Libnvvm,
    ) -> Result<Artifacts, String> {
        let nvvm_ir = nvvm_emit::print_module(&lowered.module);
        let compile = |opt: u8| {
            nvvm.compile(&nvvm_ir, &CompileOptions::ptx(ARCH, opt))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .map_err(|e| format!("libNVVM -opt={opt} on {}: {e}", kernel.display()))
        };
        Ok(Artifacts {
            kernel: kernel.to_path_buf(),
            ptx_o3: compile(3)?,
            ptx_o0: compile(0)?,
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
            nvvm_ir: &self.nvvm_ir,
            ptx_o3: &self.ptx_o3,
            ptx_o0: &self.ptx_o0,
            rustc: &self.rustc,
        }
    }
}
