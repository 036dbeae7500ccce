//! An opt-in cache of rustc's successful outputs, shared by processes.
//!
//! The test suite compiles every fixture once per test binary (the oracle,
//! the shape checks, the race checks, the snapshots, the service), each
//! with the same rustc on the same text: the same MIR every time, since the
//! printed output does not depend on the run (the sandbox and the path
//! remapping fix every path rustc prints). While [`build_cache::CACHE_VAR`]
//! names a folder, [`crate::rustc`] keeps each successful output in its
//! `rustc` store under a SHA-256 of everything that decides it, and a later
//! run with the same inputs reads it instead of running rustc. `ci/test.sh`
//! sets it to a folder under `target/`; nothing else does, so a bare
//! `cargo test`, the CLI and the service always run rustc. Failures are
//! never kept (a timeout is not a property of the input).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use build_cache::{KeyHasher, Store};

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
    /// The compiler, as this process runs it (its `-vV` is asked).
    pub rustc: &'a Path,
    /// Whether rustc runs confined. A confined rustc sees only the kernel's
    /// folder and the dependencies, so its output is decided by the inputs
    /// above; an unconfined one may also read other files or the
    /// environment (`include_str!("/etc/..")`), and the two never share
    /// an entry, so a kernel the sandbox refuses is never served what the
    /// unconfined run printed.
    pub confined: bool,
}

/// The test run's store, or `None` when the cache is off.
fn store() -> Option<Store> {
    Store::from_env("rustc")
}

/// `rustc -vV` of the compiler at `rustc`, asked once per process: a
/// different compiler prints other MIR; the empty text when it does not
/// answer.
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
    store()?;
    digest(inputs)
}

/// The SHA-256 of `inputs`, as hex; `None` when a file of the kernel's
/// folder cannot be read or the compiler does not tell its version.
fn digest(inputs: &Inputs) -> Option<String> {
    // A compiler whose version is unknown gets no key: its output is not kept.
    let version = rustc_version(inputs.rustc);
    if version.is_empty() {
        return None;
    }
    let mut h = KeyHasher::new("mir-import rustc output v2");
    h.field(inputs.rustc.display().to_string().as_bytes());
    h.field(version.as_bytes());
    h.field(&[u8::from(inputs.confined)]);
    h.field(crate::rustc::PRELUDE_SOURCE.as_bytes());
    h.field(inputs.root.as_bytes());
    // An absent appended module is not an empty one.
    match inputs.appended {
        Some(text) => {
            h.field(b"appended");
            h.field(text.as_bytes());
        }
        None => h.field(b"nothing appended"),
    }
    h.field(&(inputs.args.len() as u64).to_le_bytes());
    for a in &inputs.args {
        h.field(a.as_bytes());
    }
    let deps = inputs
        .deps
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    h.field(deps.as_bytes());
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
        h.field(name.unwrap_or_default().as_bytes());
        h.field(&std::fs::read(&f).ok()?);
    }
    Some(h.finish())
}

/// The output kept under `key`, if any.
pub(crate) fn load(key: &str) -> Option<Cached> {
    load_from(&store()?, key)
}

fn load_from(store: &Store, key: &str) -> Option<Cached> {
    serde_json::from_slice(&store.read(key)?).ok()
}

/// Keeps `out` under `key`. Failing to keep it loses nothing.
pub(crate) fn store_output(key: &str, out: &Cached) {
    if let Some(s) = store() {
        store_in(&s, key, out);
    }
}

fn store_in(store: &Store, key: &str, out: &Cached) {
    if let Ok(text) = serde_json::to_vec(out) {
        let _ = store.write(key, &text);
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

        let cache = Store::at(dir.join("cache"));
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
