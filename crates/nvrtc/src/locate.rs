//! Finding NVRTC and `ptxas` on this machine, without a CUDA toolkit at build
//! time (the same order as libNVVM's, so one `CUDA_HOME` serves both).
//!
//! NVRTC, in order:
//! 1. `NVRTC_PATH`, the path of the library file. When set, it is the only
//!    candidate: a wrong explicit path is an error, never silently skipped.
//! 2. `CUDA_HOME`: `$CUDA_HOME/lib64/libnvrtc.so*`, the first that exists.
//! 3. The workspace's git-ignored tools folder, filled by
//!    `bash ci/setup-tools.sh`: `<workspace>/tools/nvrtc/lib/libnvrtc.so.12`,
//!    where the workspace is found from this crate's manifest directory at build
//!    time, then by walking up from the current directory.
//!
//! `ptxas`: `PTXAS_PATH`; `$CUDA_HOME/bin/ptxas`; `<workspace>/tools/cuda/bin/ptxas`;
//! then `ptxas` on `PATH`.

use std::env;
use std::path::{Path, PathBuf};

/// The command that installs NVRTC (and libNVVM, `ptxas`) into the tools folder.
pub const SETUP_COMMAND: &str = "bash ci/setup-tools.sh";

/// Where an NVRTC candidate came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The `NVRTC_PATH` variable.
    NvrtcPath,
    /// The `CUDA_HOME` variable.
    CudaHome,
    /// The workspace's tools folder.
    ToolsFolder,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::NvrtcPath => "NVRTC_PATH",
            Source::CudaHome => "CUDA_HOME",
            Source::ToolsFolder => "tools folder",
        })
    }
}

fn var(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.is_empty())
}

/// The workspace `tools` folders to look in, most specific first.
pub fn tools_folders() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(ws) = manifest.parent().and_then(Path::parent) {
        out.push(ws.join("tools"));
    }
    if let Ok(cwd) = env::current_dir() {
        for dir in cwd.ancestors() {
            let p = dir.join("tools");
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// `libnvrtc.so*` files in `dir`, the plain `libnvrtc.so` first, then the
/// versioned names sorted; never the `.alt` or builtins libraries.
fn libs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n == "libnvrtc.so" || n.starts_with("libnvrtc.so."))
        .collect();
    names.sort();
    names.into_iter().map(|n| dir.join(n)).collect()
}

/// The NVRTC candidates in lookup order, with their sources. When `NVRTC_PATH`
/// is set, it is the only one.
pub fn nvrtc_candidates() -> Vec<(Source, PathBuf)> {
    if let Some(p) = var("NVRTC_PATH") {
        return vec![(Source::NvrtcPath, PathBuf::from(p))];
    }
    let mut out = Vec::new();
    if let Some(home) = var("CUDA_HOME") {
        let lib64 = Path::new(&home).join("lib64");
        let found = libs_in(&lib64);
        if found.is_empty() {
            out.push((Source::CudaHome, lib64.join("libnvrtc.so")));
        }
        out.extend(found.into_iter().map(|p| (Source::CudaHome, p)));
    }
    for t in tools_folders() {
        out.push((Source::ToolsFolder, t.join("nvrtc/lib/libnvrtc.so.12")));
    }
    out
}

/// The `ptxas` to use, if one is found.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = var("PTXAS_PATH") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let mut candidates = Vec::new();
    if let Some(home) = var("CUDA_HOME") {
        candidates.push(Path::new(&home).join("bin/ptxas"));
    }
    for t in tools_folders() {
        candidates.push(t.join("cuda/bin/ptxas"));
    }
    if let Some(path) = env::var_os("PATH") {
        for dir in env::split_paths(&path) {
            candidates.push(dir.join("ptxas"));
        }
    }
    candidates.into_iter().find(|p| p.is_file())
}
