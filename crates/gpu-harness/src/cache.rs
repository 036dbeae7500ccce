//! The result cache: a fixture's report, stored under the SHA-256 of
//! everything that decides it, and returned at once when that is unchanged.
//! `run` and the oracle service share it.
//!
//! **The key** hashes, in order and length-prefixed:
//! - the cache format's version;
//! - the toolchain ([`Toolchain`]): this program's own executable (so any
//!   change to the compiler, the prelude it embeds or the devices is a new
//!   key), rustc's `-vV`, libNVVM's version, and the GPU with its driver
//!   (or why there is none);
//! - the run's options that change a report (device, compile-only, limits,
//!   deadlines, confinement);
//! - the fixture folder's name (the report's name), and every file in it,
//!   by name and contents (`kernel.rs`,
//!   `manifest.toml`, a shape script, anything the kernel `include_str!`s).
//!
//! **What is stored:** only reports that another run would repeat. A crash,
//! a hang, a timeout, a missing tool or sandbox, or a failure of the
//! machine (a host job's sandbox) is never stored, so the cache cannot
//! keep an accident.
//!
//! **The store** is one JSON file per key under the cache folder, written to
//! a temporary name and renamed, so concurrent runs never read half a file;
//! an unreadable entry is a miss.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use build_cache::KeyHasher;

use crate::report::{FailureKind, FixtureReport, Verdict};

/// The cache format; a new one misses every old entry.
const FORMAT: &str = "gpu-harness result cache v1";

/// The most bytes of one fixture folder the key reads: a folder past this is
/// never cached (it still runs).
const MAX_FIXTURE_BYTES: u64 = 64 << 20;

/// What decides a report besides the fixture and the options: the programs
/// that produce it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// A digest of the running executable.
    pub oracle: String,
    /// `rustc -vV`.
    pub rustc: String,
    /// libNVVM's version, or why there is none.
    pub libnvvm: String,
    /// The GPU and its driver (name, architecture, driver version), or why
    /// there is none: `--device auto` runs on whichever there is.
    pub gpu: String,
}

impl Toolchain {
    /// The toolchain of this process.
    ///
    /// # Errors
    /// When the executable cannot be read or rustc cannot run.
    pub fn detect() -> io::Result<Toolchain> {
        let exe = std::fs::read(std::env::current_exe()?)?;
        let oracle = hex::encode(Sha256::digest(&exe));
        let rustc = rustc_version().map_err(io::Error::other)?.to_owned();
        let libnvvm = match compile_driver::libnvvm() {
            Ok(n) => format!("{:?} at {}", n.version(), n.path().display()),
            Err(e) => format!("none: {e}"),
        };
        let gpu = match crate::device::cuda::probe() {
            crate::device::cuda::Probe::Gpu(g) => {
                use crate::device::Device as _;
                g.describe()
            }
            crate::device::cuda::Probe::NoGpu(n) => format!("no GPU: {n}"),
        };
        Ok(Toolchain {
            oracle,
            rustc,
            libnvvm,
            gpu,
        })
    }
}

/// A cache key: the SHA-256 of everything that decides a report, in hex.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub String);

/// The on-disk result cache.
#[derive(Clone, Debug)]
pub struct ResultCache {
    dir: PathBuf,
    toolchain: Toolchain,
}

/// `rustc -vV`, run once per process (the result key and the host-build
/// key both hold it), or why it failed.
pub(crate) fn rustc_version() -> Result<&'static str, String> {
    static VERSION: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            let out = std::process::Command::new("rustc")
                .arg("-vV")
                .output()
                .map_err(|e| format!("cannot run rustc -vV: {e}"))?;
            if !out.status.success() {
                return Err(format!("rustc -vV failed: {}", out.status));
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        })
        .as_deref()
        .map_err(Clone::clone)
}

impl ResultCache {
    /// A cache in `dir` (created if missing) for reports made by `toolchain`.
    ///
    /// # Errors
    /// When the folder cannot be created.
    pub fn open(dir: impl Into<PathBuf>, toolchain: Toolchain) -> io::Result<ResultCache> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(ResultCache { dir, toolchain })
    }

    /// The default folder: `$GPU_HARNESS_CACHE`, else
    /// `$XDG_CACHE_HOME/gpu-harness`, else `~/.cache/gpu-harness`, else
    /// under the system's temporary folder.
    pub fn default_dir() -> PathBuf {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(d) = env("GPU_HARNESS_CACHE") {
            return PathBuf::from(d);
        }
        if let Some(d) = env("XDG_CACHE_HOME") {
            return PathBuf::from(d).join("gpu-harness");
        }
        if let Some(h) = env("HOME") {
            return PathBuf::from(h).join(".cache/gpu-harness");
        }
        std::env::temp_dir().join("gpu-harness-cache")
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of the fixture in `fixture_dir` run with options described
    /// by `options` (their identity, see `Options::identity`).
    ///
    /// # Errors
    /// When the folder cannot be read, holds something other than plain
    /// files, or is larger than the cache reads: the fixture is then run,
    /// not cached.
    pub fn key(&self, fixture_dir: &Path, options: &str) -> io::Result<Key> {
        let mut h = KeyHasher::new(FORMAT);
        h.field(self.toolchain.oracle.as_bytes());
        h.field(self.toolchain.rustc.as_bytes());
        h.field(self.toolchain.libnvvm.as_bytes());
        h.field(self.toolchain.gpu.as_bytes());
        h.field(options.as_bytes());
        // The folder's name is the fixture's name in its report.
        let name = fixture_dir
            .file_name()
            .map(|n| n.as_encoded_bytes())
            .unwrap_or_default();
        h.field(name);
        let mut files = Vec::new();
        for entry in std::fs::read_dir(fixture_dir)? {
            let entry = entry?;
            let ty = entry.file_type()?;
            if !ty.is_file() {
                return Err(io::Error::other(format!(
                    "{} is not a plain file",
                    entry.path().display()
                )));
            }
            files.push(entry.path());
        }
        files.sort();
        let mut total = 0u64;
        for path in files {
            let bytes = std::fs::read(&path)?;
            total += bytes.len() as u64;
            if total > MAX_FIXTURE_BYTES {
                return Err(io::Error::other("the fixture folder is too large to cache"));
            }
            let name = path
                .file_name()
                .map(|n| n.as_encoded_bytes())
                .unwrap_or_default();
            h.field(name);
            h.field(&bytes);
        }
        Ok(Key(h.finish()))
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.json", key.0))
    }

    /// The stored report for `key`, marked as cached, if there is one that
    /// reads back.
    pub fn get(&self, key: &Key) -> Option<FixtureReport> {
        let text = std::fs::read(self.path(key)).ok()?;
        let mut report: FixtureReport = serde_json::from_slice(&text).ok()?;
        report.cached = true;
        Some(report)
    }

    /// Stores `report` under `key` when another run would repeat it
    /// ([`cacheable`]); returns whether it did.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn put(&self, key: &Key, report: &FixtureReport) -> io::Result<bool> {
        if !cacheable(report) {
            return Ok(false);
        }
        let text = serde_json::to_vec(report).map_err(io::Error::other)?;
        let tmp = self.dir.join(format!(
            ".{}.{}.{:?}.tmp",
            key.0,
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, self.path(key))?;
        Ok(true)
    }
}

/// Whether a report is what any run of the same key would give: not a
/// crash or hang, and no stage failed for a reason outside the fixture
/// (a deadline, a missing tool, sandbox or GPU, the host job's machinery).
pub fn cacheable(report: &FixtureReport) -> bool {
    if report.verdict == Verdict::Crash || report.cached {
        return false;
    }
    !report.stages.iter().any(|s| {
        matches!(
            s.kind,
            Some(
                FailureKind::HostTimeout
                    | FailureKind::HostSandbox
                    | FailureKind::SandboxUnavailable
                    | FailureKind::Dependencies
                    | FailureKind::NoGpu
                    | FailureKind::LibnvvmMissing
                    | FailureKind::Panic
                    | FailureKind::Hang
                    | FailureKind::Device
            )
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Stage, StageStatus};

    fn toolchain() -> Toolchain {
        Toolchain {
            oracle: "exe".into(),
            rustc: "rustc 1.95".into(),
            libnvvm: "12.9".into(),
            gpu: "no GPU".into(),
        }
    }

    fn report(kind: Option<FailureKind>) -> FixtureReport {
        let status = if kind.is_some() {
            StageStatus::Failed
        } else {
            StageStatus::Ok
        };
        FixtureReport::new(
            "k".into(),
            vec![Stage {
                name: "host".into(),
                status,
                kind,
                millis: 1.0,
                detail: String::new(),
            }],
            Vec::new(),
        )
    }

    #[test]
    fn the_key_follows_every_input_and_only_repeatable_reports_are_kept() {
        let root = std::env::temp_dir().join(format!("cache-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let fixture = root.join("k");
        std::fs::create_dir_all(&fixture).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(fixture.join("kernel.rs"), "a").unwrap_or_else(|e| panic!("{e}"));
        let cache =
            ResultCache::open(root.join("c"), toolchain()).unwrap_or_else(|e| panic!("{e}"));
        let key =
            |c: &ResultCache, opts: &str| c.key(&fixture, opts).unwrap_or_else(|e| panic!("{e}"));
        let k0 = key(&cache, "o");
        assert_eq!(k0, key(&cache, "o"), "the same inputs, the same key");
        assert_ne!(k0, key(&cache, "p"), "options");
        let mut other = toolchain();
        other.libnvvm = "12.8".into();
        let c2 = ResultCache::open(root.join("c"), other).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(k0, key(&c2, "o"), "toolchain");
        let mut gpu = toolchain();
        gpu.gpu = "NVIDIA H200 (sm_90), driver 12.9".into();
        let c3 = ResultCache::open(root.join("c"), gpu).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(k0, key(&c3, "o"), "the GPU");
        std::fs::write(fixture.join("kernel.rs"), "b").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(k0, key(&cache, "o"), "a file's contents");
        std::fs::write(fixture.join("kernel.rs"), "a").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(fixture.join("extra.txt"), "").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(k0, key(&cache, "o"), "a new file");

        assert!(cache.get(&k0).is_none());
        assert!(
            cache
                .put(&k0, &report(None))
                .unwrap_or_else(|e| panic!("{e}"))
        );
        let back = cache.get(&k0).unwrap_or_else(|| panic!("stored"));
        assert!(back.cached);
        assert_eq!(back.verdict, Verdict::Pass);
        // A cached report is not stored again, nor are accidents.
        assert!(!cacheable(&back));
        for kind in [
            FailureKind::HostTimeout,
            FailureKind::SandboxUnavailable,
            FailureKind::NoGpu,
        ] {
            assert!(!cacheable(&report(Some(kind))), "{kind:?}");
        }
        assert!(cacheable(&report(Some(FailureKind::ComparisonMismatch))));
        // A corrupt entry is a miss.
        std::fs::write(cache.dir().join(format!("{}.json", k0.0)), "{")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(cache.get(&k0).is_none());
        let _ = std::fs::remove_dir_all(&root);
    }
}
