//! A kernel's dependencies on crates from crates.io.
//!
//! **Owns:** the fixture's `[dependencies]` table ([`spec`]), and turning it
//! into built crates ([`cargo_build`]): pinned by the fixture's lock file,
//! vendored, compiled confined with each crate's MIR text beside its rlib,
//! checked (no `std`, no generated code), and kept in a cache folder keyed
//! by everything that decides the build.
//!
//! **Does not own:** reading the dependencies' MIR (`mir-import`), or the
//! host twin's build (`gpu-harness`); both take a [`BuiltDeps`].
//!
//! **Border:** [`cargo_build::build`] → [`BuiltDeps`]: the rlibs that
//! rustc's `--extern` takes, and per crate its MIR text and its source.
#![deny(missing_docs)]

pub mod cargo_build;
pub mod spec;
mod vetting;

pub use cargo_build::{INLINE_THRESHOLD, Obtained, build, default_cache_dir};
pub use spec::{DependencyTable, SpecError, manifest_dependencies};

use std::path::{Path, PathBuf};

/// Why dependencies could not be built or were refused.
#[derive(Debug, thiserror::Error)]
pub enum DepsError {
    /// The table is not acceptable.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A file or folder could not be read or written.
    #[error("{0}")]
    Io(String),
    /// A tool (cargo, rustc) could not be run.
    #[error("{0}")]
    Tool(String),
    /// A cargo step failed; its output is kept whole.
    #[error("cargo {step} failed:\n{stderr}")]
    Cargo {
        /// `generate-lockfile`, `vendor` or `build`.
        step: String,
        /// What cargo printed.
        stderr: String,
    },
    /// A crate needs `std`, which the device does not have.
    #[error(
        "dependency crate `{krate}` ({package}) links `std`: only `no_std` crates (or their \
         `no_std` features) can run on the device"
    )]
    NeedsStd {
        /// The crate.
        krate: String,
        /// Its package id.
        package: String,
    },
    /// A crate compiles code that its build script generated.
    #[error(
        "dependency crate `{krate}` compiles `{generated}`, which its build script wrote \
         (named in {file}): that code cannot be reviewed or shown in a diagnostic"
    )]
    GeneratedCode {
        /// The crate's vendored folder (`name-version`).
        krate: String,
        /// The crate's own file that names `OUT_DIR`.
        file: String,
        /// The generated file, below `OUT_DIR`.
        generated: String,
    },
    /// A file a crate compiled differs from the one its package shipped.
    #[error(
        "dependency crate `{krate}` compiled {file}, which was changed after it was vendored \
         (by a build script): only the sources crates.io shipped are compiled for the device"
    )]
    ModifiedSource {
        /// The crate's vendored folder (`name-version`).
        krate: String,
        /// The changed file.
        file: String,
    },
    /// A dependency of the table produced no library.
    #[error("dependency `{0}` produced no library")]
    Missing(String),
}

/// One built crate. Paths are relative to [`BuiltDeps::root`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DepCrate {
    /// The crate name as rustc knows it (`libm`, `num_traits`).
    pub name: String,
    /// cargo's package id (name, version, source).
    pub package: String,
    /// The rlib.
    pub rlib: PathBuf,
    /// Its MIR text (`--emit=mir`).
    pub mir: PathBuf,
    /// The package's folder (its `Cargo.toml` and sources).
    pub src_dir: PathBuf,
    /// Whether the fixture names it (else another dependency pulls it in).
    pub direct: bool,
}

/// A built dependency table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuiltDeps {
    /// The folder everything lives in (not recorded: a kept build may be
    /// read from another path).
    #[serde(skip)]
    pub root: PathBuf,
    /// Every library crate of the build, direct or not, by name.
    pub crates: Vec<DepCrate>,
}

impl BuiltDeps {
    /// The record a finished build leaves in its folder.
    pub const RECORD: &'static str = "built.json";

    /// Reads the build kept in `root`.
    pub fn load(root: &Path) -> Result<BuiltDeps, DepsError> {
        let record = root.join(Self::RECORD);
        let text = std::fs::read_to_string(&record)
            .map_err(|e| DepsError::Io(format!("{}: {e}", record.display())))?;
        let mut built: BuiltDeps = serde_json::from_str(&text)
            .map_err(|e| DepsError::Io(format!("{}: {e}", record.display())))?;
        built.root = root.to_path_buf();
        Ok(built)
    }

    fn save(&self) -> Result<(), DepsError> {
        let record = self.root.join(Self::RECORD);
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&record, text)
            .map_err(|e| DepsError::Io(format!("{}: {e}", record.display())))
    }

    /// The crates the kernel names, for `--extern`.
    pub fn direct(&self) -> impl Iterator<Item = &DepCrate> {
        self.crates.iter().filter(|c| c.direct)
    }

    /// The crates given to rustc with `--extern`: the direct ones, and
    /// each other crate whose name no other crate of the build has. The
    /// indirect ones are there for the dependency-call shims: deep in a
    /// dependency's generic code rustc leaves calls into the crates it
    /// uses (`<i64 as num_traits::One>::set_one` under `num_rational`),
    /// and a shim must name them. Two crates of one name (two versions) are
    /// left out: `--extern` cannot tell them apart.
    pub fn nameable(&self) -> impl Iterator<Item = &DepCrate> {
        self.crates
            .iter()
            .filter(|c| c.direct || self.crates.iter().filter(|o| o.name == c.name).count() == 1)
    }

    /// The crate called `name`.
    pub fn krate(&self, name: &str) -> Option<&DepCrate> {
        self.crates.iter().find(|c| c.name == name)
    }

    /// An absolute path of a crate's file.
    pub fn path(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    /// The folder of the rlibs, for `-L dependency=`.
    pub fn lib_dir(&self) -> Option<PathBuf> {
        self.crates
            .first()
            .and_then(|c| self.path(&c.rlib).parent().map(Path::to_path_buf))
    }

    /// The folder of the proc macros (and build scripts' dependencies),
    /// built for the host, when the build has one. A target crate's
    /// metadata names the proc macros it was built with (`zerocopy` names
    /// `zerocopy_derive`), and rustc refuses to load the crate without them.
    pub fn macro_dir(&self) -> Option<PathBuf> {
        Some(self.path(Path::new(cargo_build::HOST_LIB_DIR))).filter(|d| d.is_dir())
    }

    /// rustc's arguments to compile against these crates, with paths as
    /// `seen` maps them (the sandbox's view of [`BuiltDeps::root`]).
    pub fn rustc_args(&self, seen: &dyn Fn(&Path) -> PathBuf) -> Vec<std::ffi::OsString> {
        let mut args = Vec::new();
        for dir in self.lib_dir().into_iter().chain(self.macro_dir()) {
            let mut l = std::ffi::OsString::from("dependency=");
            l.push(seen(&dir));
            args.push("-L".into());
            args.push(l);
        }
        for c in self.nameable() {
            let mut e = std::ffi::OsString::from(format!("{}=", c.name));
            e.push(seen(&self.path(&c.rlib)));
            args.push("--extern".into());
            args.push(e);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn krate(name: &str, version: &str, direct: bool) -> DepCrate {
        DepCrate {
            name: name.into(),
            package: format!("{name} {version}"),
            rlib: PathBuf::from(format!("lib/lib{name}-{version}.rlib")),
            mir: PathBuf::from(format!("mir/{name}-{version}.mir")),
            src_dir: PathBuf::from(format!("src/{name}-{version}")),
            direct,
        }
    }

    #[test]
    fn extern_crates_are_the_direct_ones_and_the_unambiguous_others() {
        let deps = BuiltDeps {
            root: PathBuf::from("/deps"),
            crates: vec![
                krate("num_rational", "0.4.2", true),
                krate("num_traits", "0.2.19", false),
                krate("rand_core", "0.5.1", false),
                krate("rand_core", "0.6.4", false),
            ],
        };
        let names: Vec<&str> = deps.nameable().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["num_rational", "num_traits"]);
        let args: Vec<String> = deps
            .rustc_args(&|p: &Path| p.to_path_buf())
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-L",
                "dependency=/deps/lib",
                "--extern",
                "num_rational=/deps/lib/libnum_rational-0.4.2.rlib",
                "--extern",
                "num_traits=/deps/lib/libnum_traits-0.2.19.rlib",
            ]
        );
    }

    #[test]
    fn the_proc_macro_folder_is_searched_when_there_is_one() {
        let root = std::env::temp_dir().join(format!("kernel-deps-macros-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let deps = BuiltDeps {
            root: root.clone(),
            crates: vec![krate("half", "2.7.1", true)],
        };
        let searched = |deps: &BuiltDeps| -> Vec<String> {
            let args = deps.rustc_args(&|p: &Path| p.to_path_buf());
            args.iter()
                .map(|a| a.to_string_lossy().into_owned())
                .filter(|a| a.starts_with("dependency="))
                .collect()
        };
        assert_eq!(
            searched(&deps),
            [format!("dependency={}/lib", root.display())]
        );
        std::fs::create_dir_all(root.join(cargo_build::HOST_LIB_DIR)).expect("macro dir");
        assert_eq!(
            searched(&deps),
            [
                format!("dependency={}/lib", root.display()),
                format!("dependency={}/target/release/deps", root.display())
            ]
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
