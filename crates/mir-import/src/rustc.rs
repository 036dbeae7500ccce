//! Running rustc on a kernel source to get its MIR text and layout report.
//!
//! The kernel file is mounted as module `kernel` next to the device prelude as
//! module `gpu`, in a generated crate root. One rustc call prints both the
//! optimized MIR (`--emit=mir`, `-C panic=abort`, `-O`) and the layout report
//! (`-Zprint-type-sizes`, on stdout). `-Ztrim-diagnostic-paths=false` makes the
//! MIR print full paths (`std::option::Option`, not `Option`), so that nothing
//! downstream recognises a type by a trimmed name. `RUSTC_BOOTSTRAP=1` is set
//! on this one call only, for those `-Z` flags.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::prelude::{DEVICE_CFG, KERNEL_MODULE, PRELUDE_MODULE};

/// The prelude's source, embedded so that an installed binary needs no checkout.
pub const PRELUDE_SOURCE: &str = include_str!("../../../prelude/gpu.rs");

/// How to call rustc.
#[derive(Clone, Debug)]
pub struct RustcOptions {
    /// The rustc binary: `$RUSTC` if set, else `rustc`.
    pub rustc: PathBuf,
    /// Whether to build the device side (`--cfg gpu_device`). The host side is
    /// only useful for tests of the prelude itself.
    pub device: bool,
}

impl Default for RustcOptions {
    fn default() -> Self {
        let rustc = std::env::var_os("RUSTC").map_or_else(|| PathBuf::from("rustc"), PathBuf::from);
        RustcOptions {
            rustc,
            device: true,
        }
    }
}

/// What rustc printed for a kernel.
#[derive(Clone, Debug)]
pub struct RustcOutput {
    /// The MIR text.
    pub mir: String,
    /// The `-Zprint-type-sizes` report.
    pub type_sizes: String,
    /// The kernel source as read.
    pub source: String,
}

/// Why rustc could not produce MIR.
#[derive(Debug, thiserror::Error)]
pub enum RustcError {
    /// The kernel file could not be read.
    #[error("cannot read kernel source {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// rustc could not be started, or its scratch directory not written.
    #[error("cannot run {rustc}: {source}")]
    Spawn {
        /// The rustc binary.
        rustc: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// rustc ran and failed; its own diagnostics are kept whole.
    #[error("rustc failed on {path} ({status}):\n{stderr}")]
    Failed {
        /// The kernel file.
        path: PathBuf,
        /// rustc's exit status.
        status: String,
        /// Everything rustc printed on stderr.
        stderr: String,
    },
}

/// A scratch directory that removes itself.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mir-import-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The crate root that mounts the prelude and the kernel. `#[path]` takes the
/// kernel's absolute path, so rustc's diagnostics point at the user's file.
pub fn crate_root(prelude: &Path, kernel: &Path) -> String {
    format!(
        "#![allow(improper_ctypes_definitions, dead_code, unused)]\n\
         #[path = {prelude:?}] pub mod {PRELUDE_MODULE};\n\
         #[path = {kernel:?}] pub mod {KERNEL_MODULE};\n"
    )
}

/// Runs rustc on `kernel` and captures its MIR and layout report.
pub fn run_rustc(kernel: &Path, opts: &RustcOptions) -> Result<RustcOutput, RustcError> {
    run_rustc_with_module(kernel, opts, None)
}

/// Like [`run_rustc`], with one extra inline module `(name, source)` in the
/// crate root (the layout probe uses this).
pub fn run_rustc_with_module(
    kernel: &Path,
    opts: &RustcOptions,
    extra: Option<(&str, &str)>,
) -> Result<RustcOutput, RustcError> {
    let source = std::fs::read_to_string(kernel).map_err(|source| RustcError::Read {
        path: kernel.into(),
        source,
    })?;
    let abs = std::path::absolute(kernel).map_err(|source| RustcError::Read {
        path: kernel.into(),
        source,
    })?;
    let spawn = |source| RustcError::Spawn {
        rustc: opts.rustc.clone(),
        source,
    };
    let scratch = Scratch::new().map_err(spawn)?;
    let prelude = scratch.0.join("gpu.rs");
    std::fs::write(&prelude, PRELUDE_SOURCE).map_err(spawn)?;
    let root = scratch.0.join("root.rs");
    let mut root_src = crate_root(&prelude, &abs);
    if let Some((name, src)) = extra {
        root_src.push_str(&format!("pub mod {name} {{\n{src}\n}}\n"));
    }
    std::fs::write(&root, root_src).map_err(spawn)?;
    let mir_path = scratch.0.join("kernel.mir");
    let mut cmd = Command::new(&opts.rustc);
    cmd.env("RUSTC_BOOTSTRAP", "1")
        .args([
            "--edition",
            "2024",
            "--crate-type",
            "lib",
            "--crate-name",
            "kernel",
        ])
        .args(["-C", "panic=abort", "-C", "opt-level=3", "--emit=mir"])
        .args(["-Zprint-type-sizes", "-Ztrim-diagnostic-paths=false"])
        .arg("-o")
        .arg(&mir_path)
        .arg(&root);
    if opts.device {
        cmd.args(["--cfg", DEVICE_CFG]);
    }
    let out = cmd.output().map_err(spawn)?;
    if !out.status.success() {
        return Err(RustcError::Failed {
            path: kernel.into(),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let mir = std::fs::read_to_string(&mir_path).map_err(spawn)?;
    let type_sizes = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(RustcOutput {
        mir,
        type_sizes,
        source,
    })
}
