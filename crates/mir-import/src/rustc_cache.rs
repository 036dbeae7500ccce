//! An opt-in cache of rustc's successful outputs, shared by processes.
//!
//! The test suite compiles every fixture once per test binary (the oracle,
//! the shape checks, the race checks, the snapshots, the service), each
//! with the same rustc on the same text: the same MIR every time, since the
//! printed output does not depend on the run (the sandbox and the path
//! remapping fix every path rustc prints). With `MIR_IMPORT_RUSTC_CACHE`
//! naming a folder, [`crate::rustc`] keeps each successful output there
//! under a SHA-256 of everything that decides it, and a later run with the
//! same inputs reads it instead of running rustc. `ci/test.sh` sets it to
//! a folder under `target/`; nothing else does, so a bare `cargo test`, the
//! CLI and the service always run rustc. Failures are never kept (a timeout
//! is not a property of the input).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// The variable that names the cache folder.
pub const CACHE_VAR: &str = "MIR_IMPORT_RUSTC_CACHE";

/// What one rustc run prints that the import reads.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Cached {
    pub mir: String,
    pub type_sizes: String,
}

/// The inputs of one run, hashed into its key.
pub(crate) struct Inputs<'a> {
    /// The kernel's folder: every file in it, since a kernel may
    /// `include!` its neighbours.
    pub folder: &'a Path,
    /// The crate root as written, with its features and extra module.
    pub root: &'a str,
    /// The text appended to the kernel's (the kernel itself is in `folder`).
    pub appended: Option<&'a str>,
    pub args: Vec<String>,
    pub deps: Option<&'a Path>,
    /// The compiler.
    pub rustc: &'a Path,
    /// Whether rustc runs confined. A confined rustc sees only the kernel's
    /// folder and the dependencies, so its output is decided by the inputs
    /// above; an unconfined one may also read other files or the
    /// environment (`include_str!("/etc/..")`), and the two never share
    /// an entry, so a kernel the sandbox refuses is never served what the
    /// unconfined run printed.
    pub confined: bool,
}

fn folder() -> Option<PathBuf> {
    std::env::var_os(CACHE_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `rustc -vV` of the compiler at `rustc`, asked once per process: a
/// different compiler prints other MIR.
fn rustc_version(rustc: &Path) -> String {
    static SEEN: OnceLock<Mutex<BTreeMap<PathBuf, String>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let mut seen = seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    seen.entry(rustc.to_path_buf())
        .or_insert_with(|| {
            std::process::Command::new(rustc)
                .arg("-vV")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default()
        })
        .clone()
}

/// The key of `inputs`, or `None` when the cache is off.
pub(crate) fn key(inputs: &Inputs) -> Option<String> {
    folder()?;
    digest(inputs)
}

/// The SHA-256 of `inputs`, as hex; `None` when a file of the kernel's
/// folder cannot be read.
fn digest(inputs: &Inputs) -> Option<String> {
    let mut h = Sha256::new();
    let mut field = |name: &str, bytes: &[u8]| {
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field("version", b"mir-import-rustc-cache 1");
    field("rustc", inputs.rustc.display().to_string().as_bytes());
    field("rustc -vV", rustc_version(inputs.rustc).as_bytes());
    field("confined", &[u8::from(inputs.confined)]);
    field("prelude", crate::rustc::PRELUDE_SOURCE.as_bytes());
    field("root", inputs.root.as_bytes());
    field("appended", inputs.appended.unwrap_or("").as_bytes());
    for a in &inputs.args {
        field("arg", a.as_bytes());
    }
    let deps = inputs
        .deps
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    field("deps", deps.as_bytes());
    let mut files: Vec<PathBuf> = std::fs::read_dir(inputs.folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in files {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        field("file", name.unwrap_or_default().as_bytes());
        field("content", &std::fs::read(&f).ok()?);
    }
    Some(hex::encode(h.finalize()))
}

/// The output kept under `key`, if any.
pub(crate) fn load(key: &str) -> Option<Cached> {
    load_from(&folder()?, key)
}

fn load_from(dir: &Path, key: &str) -> Option<Cached> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps `out` under `key`: written to a temporary name and renamed, so a
/// reader sees a whole file or none. Failing to keep it loses nothing.
pub(crate) fn store(key: &str, out: &Cached) {
    if let Some(dir) = folder() {
        store_in(&dir, key, out);
    }
}

fn store_in(dir: &Path, key: &str, out: &Cached) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_string(out) else {
        return;
    };
    let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, dir.join(format!("{key}.json")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_covers_every_input_and_a_kept_output_reads_back() {
        let dir = std::env::temp_dir().join(format!("rustc-cache-test-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(&src).expect("dir");
        std::fs::write(src.join("kernel.rs"), "fn k() {}").expect("write");
        let inputs = |appended, confined| Inputs {
            folder: &src,
            root: "root",
            appended,
            args: vec!["-C".into(), "opt-level=3".into()],
            deps: None,
            rustc: Path::new("rustc"),
            confined,
        };
        let a = digest(&inputs(None, true)).expect("key");
        assert_eq!(digest(&inputs(None, true)).as_deref(), Some(a.as_str()));
        assert_ne!(
            digest(&inputs(Some("mod m {}"), true)).as_deref(),
            Some(a.as_str())
        );
        // A confined and an unconfined run never share an entry.
        assert_ne!(digest(&inputs(None, false)).as_deref(), Some(a.as_str()));
        // A neighbour the kernel may include changes the key too.
        std::fs::write(src.join("table.rs"), "[1, 2]").expect("write");
        assert_ne!(digest(&inputs(None, true)).as_deref(), Some(a.as_str()));

        let cache = dir.join("cache");
        assert!(load_from(&cache, &a).is_none());
        store_in(
            &cache,
            &a,
            &Cached {
                mir: "fn k() -> () {}".into(),
                type_sizes: "print-type-size".into(),
            },
        );
        let back = load_from(&cache, &a).expect("kept");
        assert_eq!(
            (back.mir.as_str(), back.type_sizes.as_str()),
            ("fn k() -> () {}", "print-type-size")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
