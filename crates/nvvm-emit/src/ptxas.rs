//! The optional `ptxas` check: assembles PTX for a real architecture (`sm_90` by
//! default), which catches what libNVVM passes through unchecked, such as inline
//! PTX.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::locate;

/// A `ptxas` executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptxas {
    path: PathBuf,
}

/// `ptxas` refused the PTX, or could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ptxas {} failed (exit status {status:?}):\n{log}", path.display())]
pub struct PtxasError {
    /// The executable.
    pub path: PathBuf,
    /// The exit status, if it ran.
    pub status: Option<i32>,
    /// Its output (stderr, then stdout), or why it could not run.
    pub log: String,
}

impl Ptxas {
    /// The `ptxas` found by [`crate::locate::find_ptxas`], if any.
    pub fn find() -> Option<Ptxas> {
        locate::find_ptxas().map(|path| Ptxas { path })
    }

    /// The `ptxas` at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Ptxas {
        Ptxas { path: path.into() }
    }

    /// The executable.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Assembles `ptx` for `sm_{arch}` and returns the cubin.
    ///
    /// # Errors
    /// [`PtxasError`] with `ptxas`'s output.
    pub fn assemble(&self, ptx: &[u8], arch: u32) -> Result<Vec<u8>, PtxasError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let stem = std::env::temp_dir().join(format!("nvvm-emit-{}-{n}", std::process::id()));
        let input = stem.with_extension("ptx");
        let output = stem.with_extension("cubin");
        let fail = |status: Option<i32>, log: String| PtxasError {
            path: self.path.clone(),
            status,
            log,
        };
        std::fs::write(&input, ptx)
            .map_err(|e| fail(None, format!("cannot write {}: {e}", input.display())))?;
        let result = Command::new(&self.path)
            .arg(format!("-arch=sm_{arch}"))
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output();
        let _ = std::fs::remove_file(&input);
        let out = result.map_err(|e| fail(None, format!("cannot run: {e}")))?;
        let cubin = std::fs::read(&output);
        let _ = std::fs::remove_file(&output);
        if !out.status.success() {
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            );
            return Err(fail(out.status.code(), log));
        }
        cubin.map_err(|e| fail(out.status.code(), format!("no output file: {e}")))
    }
}
