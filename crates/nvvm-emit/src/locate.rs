//! Finding libNVVM and `ptxas` on this machine, without a CUDA toolkit at build
//! time.
//!
//! libNVVM, in order:
//! 1. `LIBNVVM_PATH`, the path of the library file. When set, it is the only
//!    candidate: a wrong explicit path is an error, never silently skipped.
//! 2. `CUDA_HOME`: `$CUDA_HOME/nvvm/lib64/libnvvm.so`, if that file exists.
//! 3. The workspace's git-ignored tools folder, filled by `bash ci/setup-tools.sh`:
//!    `<workspace>/tools/cuda/nvvm/lib64/libnvvm.so`, where the workspace is found
//!    from this crate's manifest directory at build time, then by walking up from
//!    the current directory.
//!
//! `ptxas`: `PTXAS_PATH`; `$CUDA_HOME/bin/ptxas`; `bin/ptxas` beside the libNVVM
//! that `LIBNVVM_PATH` names (`<root>/nvvm/lib64/libnvvm.so` → `<root>/bin/ptxas`);
//! the tools folder; then `ptxas` on `PATH`.

use std::env;
use std::path::{Path, PathBuf};

/// The command that installs libNVVM and `ptxas` into the tools folder.
pub const SETUP_COMMAND: &str = "bash ci/setup-tools.sh";

/// The library file's path under a CUDA root.
const LIB_UNDER_ROOT: &str = "nvvm/lib64/libnvvm.so";

/// Where a libNVVM candidate came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The `LIBNVVM_PATH` variable.
    LibnvvmPath,
    /// The `CUDA_HOME` variable.
    CudaHome,
    /// The workspace's tools folder.
    ToolsFolder,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::LibnvvmPath => "LIBNVVM_PATH",
            Source::CudaHome => "CUDA_HOME",
            Source::ToolsFolder => "tools folder",
        })
    }
}

fn var(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.is_empty())
}

/// The tools folders (`<workspace>/tools/cuda`) to look in, most specific first.
pub fn tools_folders() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(ws) = manifest.parent().and_then(Path::parent) {
        out.push(ws.join("tools/cuda"));
    }
    if let Ok(cwd) = env::current_dir() {
        for dir in cwd.ancestors() {
            let p = dir.join("tools/cuda");
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The libNVVM candidates in lookup order, with their sources. When
/// `LIBNVVM_PATH` is set, it is the only one.
pub fn libnvvm_candidates() -> Vec<(Source, PathBuf)> {
    if let Some(p) = var("LIBNVVM_PATH") {
        return vec![(Source::LibnvvmPath, PathBuf::from(p))];
    }
    let mut out = Vec::new();
    if let Some(home) = var("CUDA_HOME") {
        out.push((Source::CudaHome, Path::new(&home).join(LIB_UNDER_ROOT)));
    }
    for t in tools_folders() {
        out.push((Source::ToolsFolder, t.join(LIB_UNDER_ROOT)));
    }
    out
}

/// The `ptxas` to use, if one is found.
pub fn find_ptxas() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = var("PTXAS_PATH") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    if let Some(home) = var("CUDA_HOME") {
        candidates.push(Path::new(&home).join("bin/ptxas"));
    }
    if let Some(lib) = var("LIBNVVM_PATH")
        && let Some(root) = Path::new(&lib).ancestors().nth(3)
    {
        candidates.push(root.join("bin/ptxas"));
    }
    for t in tools_folders() {
        candidates.push(t.join("bin/ptxas"));
    }
    if let Some(path) = env::var_os("PATH") {
        for dir in env::split_paths(&path) {
            candidates.push(dir.join("ptxas"));
        }
    }
    candidates.into_iter().find(|p| p.is_file())
}
