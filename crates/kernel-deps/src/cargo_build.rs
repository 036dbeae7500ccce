//! Building a dependency table with cargo: vendored, built confined, kept.
//!
//! 1. **Lock.** The fixture's `Cargo.lock` pins every version. Without one,
//!    cargo writes it (`generate-lockfile`, which runs no crate code) and it
//!    is copied into the fixture folder, where it stays, as cargo itself does.
//! 2. **Vendor.** `cargo vendor --locked` copies the locked sources out of
//!    crates.io (the only step that needs the network; it runs no crate code).
//! 3. **Build.** `cargo build --offline --locked` in the sandbox (build
//!    scripts and proc macros are user code), for the host target named
//!    explicitly so that the flags below reach the dependencies only, not
//!    build scripts or proc macros: `--emit=mir,link` (each crate's MIR text
//!    beside its rlib) and `-Zcross-crate-inline-threshold=always` (every
//!    function's MIR in the metadata, so that the kernel's rustc can inline
//!    it). The panic strategy stays `unwind`, so that the same rlibs serve
//!    the kernel (`panic=abort`, MIR only) and its host twin.
//! 4. **Vet.** Every file a crate built for the target compiled must be one
//!    crates.io shipped, unchanged ([`crate::vetting`]): code a build
//!    script wrote is refused by name. Crates for other targets, and files
//!    no `mod` or `include!` reaches, are not held against the build.
//! 5. **Check.** A crate linked against `std` is refused by name
//!    (`rustc -Zls=root` lists each rlib's own dependencies).
//! 6. **Keep.** Everything lives in `<cache>/<key>/`, where the key covers
//!    the generated manifest, the lock file, rustc's version and the flags;
//!    the folder is built under a private name and renamed into place, so a
//!    second run, or a concurrent one, reuses it whole.

use std::path::{Path, PathBuf};
use std::time::Duration;

use build_cache::KeyHasher;
use sandbox::{Job, Sandbox, WORK_DIR};

use crate::spec::DependencyTable;
use crate::{BuiltDeps, DepCrate, DepsError};

/// The MIR inliner's thresholds, for the dependencies and for a kernel that
/// uses them. A dependency's functions reach the device inlined into the
/// kernel's own, and rustc's inliner stops five calls deep whatever the
/// thresholds (`TOP_DOWN_DEPTH_LIMIT`): a closure that `sha2` passes down
/// through `block-buffer` is called below that depth when the kernel
/// inlines `Digest::finalize`. Compiled with the kernel's thresholds, each
/// dependency's own MIR has inlined what it calls already, so the kernel
/// inlines one body instead of a chain.
pub const INLINE_THRESHOLD: u32 = 100_000;

/// The flags every dependency is compiled with (see the module's doc); the
/// inliner's thresholds are [`INLINE_THRESHOLD`].
pub const DEP_RUSTFLAGS: [&str; 8] = [
    "-Copt-level=3",
    "--emit=mir,link",
    "-Zcross-crate-inline-threshold=always",
    "-Zinline-mir-threshold=100000",
    "-Zinline-mir-hint-threshold=100000",
    "-Zinline-mir-forwarder-threshold=100000",
    "-Ztrim-diagnostic-paths=false",
    "-Cdebuginfo=0",
];

/// Where cargo puts what it builds for the host when the target is named
/// (`--target`): build scripts, proc macros and their dependencies, relative
/// to the build's folder (whose `target` is the target dir).
pub(crate) const HOST_LIB_DIR: &str = "target/release/deps";

/// The target the dependencies are built for: the host's, which is also the
/// target of the kernel's MIR and of its host twin.
fn host_triple() -> Result<String, DepsError> {
    let out = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| DepsError::Tool(format!("cannot run rustc -vV: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .ok_or_else(|| DepsError::Tool("rustc -vV names no host".into()))
}

fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// How a build was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Obtained {
    /// cargo built it now.
    Built,
    /// A build kept from an earlier run was reused.
    Reused,
}

/// Where the builds are kept: `$KERNEL_DEPS_CACHE`, else
/// `$XDG_CACHE_HOME/kernel-deps`, else `~/.cache/kernel-deps`, else under
/// the system's temporary folder. One folder for every tool and test of
/// the machine, so a table is built once whoever asks first.
pub fn default_cache_dir() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = env("KERNEL_DEPS_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("kernel-deps");
    }
    if let Some(h) = env("HOME") {
        return PathBuf::from(h).join(".cache/kernel-deps");
    }
    std::env::temp_dir().join("kernel-deps")
}

fn io(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> DepsError {
    let what = format!("{what} {}", path.display());
    move |e| DepsError::Io(format!("{what}: {e}"))
}

/// Runs cargo outside the sandbox for a step that runs no crate code
/// (`generate-lockfile`, `vendor`), with the machine's cargo home (its
/// registry cache) and network.
fn cargo_unconfined(project: &Path, args: &[&str]) -> Result<String, DepsError> {
    let out = std::process::Command::new("cargo")
        .args(args)
        .current_dir(project)
        .output()
        .map_err(|e| DepsError::Tool(format!("cannot run cargo: {e}")))?;
    if !out.status.success() {
        return Err(DepsError::Cargo {
            step: args.first().copied().unwrap_or("cargo").to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The lock file of `table`: the fixture's own (`lock`), else one cargo
/// writes now and that is copied to `lock`.
fn lock_text(table: &DependencyTable, lock: &Path, scratch: &Path) -> Result<String, DepsError> {
    if let Ok(text) = std::fs::read_to_string(lock) {
        return Ok(text);
    }
    let project = scratch.join("lock-project");
    write_project(table, &project)?;
    cargo_unconfined(&project, &["generate-lockfile", "--quiet"])?;
    let made = project.join("Cargo.lock");
    let text = std::fs::read_to_string(&made).map_err(io("cannot read", &made))?;
    std::fs::write(lock, &text).map_err(io("cannot write", lock))?;
    tracing::info!("wrote {} (pin it with the fixture)", lock.display());
    Ok(text)
}

fn write_project(table: &DependencyTable, project: &Path) -> Result<(), DepsError> {
    let src = project.join("src");
    std::fs::create_dir_all(&src).map_err(io("cannot create", &src))?;
    let manifest = project.join("Cargo.toml");
    std::fs::write(&manifest, table.cargo_manifest()).map_err(io("cannot write", &manifest))?;
    let lib = src.join("lib.rs");
    std::fs::write(&lib, "#![no_std]\n").map_err(io("cannot write", &lib))
}

/// The key of a build: everything that decides its output.
fn build_key(table: &DependencyTable, lock: &str, triple: &str) -> String {
    let mut h = KeyHasher::new("kernel-deps build v2");
    h.field(rustc_version().as_bytes());
    h.field(triple.as_bytes());
    h.field(table.cargo_manifest().as_bytes());
    h.field(lock.as_bytes());
    for f in DEP_RUSTFLAGS {
        h.field(f.as_bytes());
    }
    h.finish()
}

/// Builds `table` (pinned by the lock file at `lock`, created there if
/// missing) in `cache`, or reuses the build kept there.
pub fn build(
    table: &DependencyTable,
    lock: &Path,
    cache: &Path,
    sandbox: &Sandbox,
) -> Result<(BuiltDeps, Obtained), DepsError> {
    std::fs::create_dir_all(cache).map_err(io("cannot create", cache))?;
    let cache = std::path::absolute(cache).map_err(io("cannot resolve", cache))?;
    let scratch = tempdir(&cache)?;
    let result = (|| {
        let lock_text = lock_text(table, lock, &scratch)?;
        let triple = host_triple()?;
        let key = build_key(table, &lock_text, &triple);
        let dir = cache.join(&key);
        if let Ok(kept) = BuiltDeps::load(&dir) {
            // Judged again: a build kept before a rule changed meets it too.
            crate::vetting::refuse_unvetted_sources(&kept)?;
            return Ok((kept, Obtained::Reused));
        }
        let staging = scratch.join("build");
        build_into(table, &lock_text, &triple, &staging, sandbox)?;
        // Into place whole; a concurrent run that got there first wins.
        if std::fs::rename(&staging, &dir).is_err() && !dir.join(BuiltDeps::RECORD).is_file() {
            return Err(DepsError::Io(format!(
                "cannot keep the build in {}",
                dir.display()
            )));
        }
        Ok((BuiltDeps::load(&dir)?, Obtained::Built))
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn tempdir(cache: &Path) -> Result<PathBuf, DepsError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = cache.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    Ok(dir)
}

/// Vendors, checks and builds `table` into `dir`, and records the result.
fn build_into(
    table: &DependencyTable,
    lock: &str,
    triple: &str,
    dir: &Path,
    sandbox: &Sandbox,
) -> Result<(), DepsError> {
    let project = dir.join("project");
    write_project(table, &project)?;
    let lock_path = project.join("Cargo.lock");
    std::fs::write(&lock_path, lock).map_err(io("cannot write", &lock_path))?;
    let vendor = dir.join("vendor");
    cargo_unconfined(
        &project,
        &[
            "vendor",
            "--locked",
            "--versioned-dirs",
            "--quiet",
            vendor.to_str().unwrap_or("vendor"),
        ],
    )?;
    make_readable(&vendor)?;

    // cargo, confined: it sees `dir` only, at /work, and the vendored
    // sources read-only (a build script may not rewrite a package; what
    // was compiled is vetted against the packages' checksums anyway).
    let mut job = Job::new(sandbox.cargo())
        .read_write(dir, WORK_DIR)
        .read_only(&vendor, Path::new(WORK_DIR).join("vendor"));
    let view = job.clone();
    let seen = |p: &Path| sandbox.path_in(&view, p);
    let config_dir = project.join(".cargo");
    std::fs::create_dir_all(&config_dir).map_err(io("cannot create", &config_dir))?;
    let mut config = toml::Table::new();
    let mut crates_io = toml::Table::new();
    crates_io.insert("replace-with".into(), "vendored".into());
    let mut vendored = toml::Table::new();
    vendored.insert(
        "directory".into(),
        seen(&vendor).to_string_lossy().into_owned().into(),
    );
    let mut source = toml::Table::new();
    source.insert("crates-io".into(), crates_io.into());
    source.insert("vendored".into(), vendored.into());
    config.insert("source".into(), source.into());
    let config_path = config_dir.join("config.toml");
    std::fs::write(&config_path, toml::to_string(&config).unwrap_or_default())
        .map_err(io("cannot write", &config_path))?;
    let home = dir.join("cargo-home");
    std::fs::create_dir_all(&home).map_err(io("cannot create", &home))?;
    let target = dir.join("target");
    job.args = [
        "build",
        "--release",
        "--offline",
        "--locked",
        "--jobs",
        "2",
        "--message-format=json",
        "--target",
        triple,
    ]
    .map(Into::into)
    .to_vec();
    job.args.push("--target-dir".into());
    job.args.push(seen(&target).into_os_string());
    let rustc = sandbox.rustc();
    let bin = rustc.parent().map(Path::to_path_buf).unwrap_or_default();
    // The dependencies' spans name `/work/vendor/<crate>-<version>/..`
    // however the build ran: confined, that is the folder's own path;
    // unconfined, rustc maps the build folder there (a diagnostic that points
    // into a dependency is then the same on every machine).
    let mut rustflags: Vec<String> = DEP_RUSTFLAGS.iter().map(|f| f.to_string()).collect();
    if seen(dir) != Path::new(WORK_DIR) {
        rustflags.push(format!("--remap-path-prefix={}={WORK_DIR}", dir.display()));
    }
    job.env = vec![
        (
            "CARGO_HOME".into(),
            seen(&home).to_string_lossy().into_owned(),
        ),
        ("HOME".into(), seen(dir).to_string_lossy().into_owned()),
        ("RUSTC".into(), rustc.to_string_lossy().into_owned()),
        (
            "PATH".into(),
            format!("{}:/usr/bin:/bin", bin.to_string_lossy()),
        ),
        ("RUSTC_BOOTSTRAP".into(), "1".into()),
        ("CARGO_ENCODED_RUSTFLAGS".into(), rustflags.join("\u{1f}")),
        ("CARGO_TERM_COLOR".into(), "never".into()),
        ("CARGO_INCREMENTAL".into(), "0".into()),
    ];
    job.cwd = Some(project.clone());
    job.timeout = Duration::from_secs(600);
    job.limits.processes = 1024;
    job.limits.cpu_seconds = 1200;
    let out = sandbox
        .run(&job)
        .map_err(|e| DepsError::Tool(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let messages: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if !out.success() {
        // With JSON messages, rustc's diagnostics come on stdout.
        let mut stderr: String = messages
            .iter()
            .filter(|m| m["reason"] == "compiler-message")
            .filter_map(|m| m["message"]["rendered"].as_str())
            .collect();
        stderr.push_str(&out.stderr_text());
        return Err(DepsError::Cargo {
            step: "build".into(),
            stderr,
        });
    }
    let inside = seen(dir);
    let to_host = |p: &str| -> PathBuf {
        match Path::new(p).strip_prefix(&inside) {
            Ok(rest) => rest.to_path_buf(),
            Err(_) => PathBuf::from(p),
        }
    };
    let mut crates = Vec::new();
    for msg in &messages {
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let kinds = msg["target"]["kind"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !kinds.iter().any(|k| k == "lib" || k == "rlib") {
            continue;
        }
        let name = msg["target"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if name == crate::spec::PROJECT_NAME.replace('-', "_") {
            continue;
        }
        let Some(rlib) = msg["filenames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .find(|f| f.ends_with(".rlib"))
        else {
            continue;
        };
        let rlib = to_host(rlib);
        // Build scripts, proc macros and their dependencies are built for
        // the host (`target/release`), and may use `std`; only what is
        // built for the target (`target/<triple>/release`) reaches the kernel.
        if !rlib.starts_with(Path::new("target").join(triple)) {
            continue;
        }
        let mir = rlib.with_file_name(
            rlib.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("lib"))
                .and_then(|n| n.strip_suffix(".rlib"))
                .map(|stem| format!("{stem}.mir"))
                .unwrap_or_default(),
        );
        let manifest = to_host(msg["manifest_path"].as_str().unwrap_or_default());
        let package_id = msg["package_id"].as_str().unwrap_or_default();
        crates.push(DepCrate {
            name,
            package: package_id.to_string(),
            rlib,
            mir,
            src_dir: manifest.parent().map(Path::to_path_buf).unwrap_or_default(),
            direct: false,
        });
    }
    // Direct by package name: a package's library may be named otherwise
    // (`md-5` builds `md5`).
    for c in &mut crates {
        c.direct = table.names_package(package_name(&c.package));
    }
    crates.sort_by(|a, b| a.name.cmp(&b.name));
    let built = BuiltDeps {
        root: dir.to_path_buf(),
        crates,
    };
    for package in table.package_names() {
        if !built
            .crates
            .iter()
            .any(|c| package_name(&c.package) == package)
        {
            return Err(DepsError::Missing(package.to_string()));
        }
    }
    crate::vetting::refuse_unvetted_sources(&built)?;
    refuse_std(&built, sandbox)?;
    built.save()
}

/// The package name in a cargo package id: `md-5` in
/// `registry+https://github.com/rust-lang/crates.io-index#md-5@0.10.6`, or
/// in the older `md-5 0.10.6 (registry+..)`.
fn package_name(id: &str) -> &str {
    match id.rsplit_once('#') {
        Some((_, rest)) => rest.split('@').next().unwrap_or(rest),
        None => id.split(' ').next().unwrap_or(id),
    }
}

/// Makes every vendored file readable and every folder searchable by all:
/// cargo vendor keeps a package's file modes, and some packages ship their
/// sources without read permission for others (fnv 1.0.7's `lib.rs` is
/// 0640), which the confined cargo, running as another user, cannot read.
fn make_readable(vendor: &Path) -> Result<(), DepsError> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![vendor.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).map_err(io("cannot read", &p))?;
        if meta.file_type().is_symlink() {
            continue;
        }
        let extra = if meta.is_dir() { 0o555 } else { 0o444 };
        let mut perms = meta.permissions();
        if perms.mode() & extra != extra {
            perms.set_mode(perms.mode() | extra);
            std::fs::set_permissions(&p, perms).map_err(io("cannot make readable", &p))?;
        }
        if meta.is_dir() {
            let entries = std::fs::read_dir(&p).map_err(io("cannot read", &p))?;
            stack.extend(entries.flatten().map(|e| e.path()));
        }
    }
    Ok(())
}

/// Refuses a crate of the build whose rlib depends on `std`: the device has
/// none.
fn refuse_std(built: &BuiltDeps, sandbox: &Sandbox) -> Result<(), DepsError> {
    for c in &built.crates {
        let rlib = built.root.join(&c.rlib);
        let mut job = Job::new(sandbox.rustc()).read_write(&built.root, WORK_DIR);
        job.args = vec![
            "-Zls=root".into(),
            sandbox.path_in(&job, &rlib).into_os_string(),
        ];
        job.env = vec![("RUSTC_BOOTSTRAP".into(), "1".into())];
        job.timeout = Duration::from_secs(60);
        let out = sandbox
            .run(&job)
            .map_err(|e| DepsError::Tool(e.to_string()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let deps = text
            .split("=External Dependencies=")
            .nth(1)
            .unwrap_or_default();
        let links_std = deps.lines().any(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|n| n == "std" || n.starts_with("std-"))
        });
        if !out.success() {
            return Err(DepsError::Tool(format!(
                "rustc -Zls=root {}: {}",
                c.rlib.display(),
                out.stderr_text()
            )));
        }
        if links_std {
            return Err(DepsError::NeedsStd {
                krate: c.name.clone(),
                package: c.package.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_are_read_from_package_ids() {
        assert_eq!(
            package_name("registry+https://github.com/rust-lang/crates.io-index#md-5@0.10.6"),
            "md-5"
        );
        assert_eq!(
            package_name("md-5 0.10.6 (registry+https://github.com/rust-lang/crates.io-index)"),
            "md-5"
        );
    }

    #[test]
    fn vendored_files_become_readable_by_everyone() {
        use std::os::unix::fs::PermissionsExt;
        let vendor = std::env::temp_dir().join(format!("kernel-deps-modes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&vendor);
        let krate = vendor.join("fnv-1.0.7");
        std::fs::create_dir_all(&krate).expect("dir");
        let lib = krate.join("lib.rs");
        std::fs::write(&lib, "").expect("write");
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        std::fs::set_permissions(&krate, std::fs::Permissions::from_mode(0o750)).expect("chmod");
        make_readable(&vendor).expect("readable");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&lib), 0o644);
        assert_eq!(mode(&krate), 0o755);
        let _ = std::fs::remove_dir_all(&vendor);
    }

    #[test]
    fn dependencies_are_inlined_with_the_kernels_thresholds() {
        for flag in ["threshold", "hint-threshold", "forwarder-threshold"] {
            let want = format!("-Zinline-mir-{flag}={INLINE_THRESHOLD}");
            assert!(DEP_RUSTFLAGS.contains(&want.as_str()), "{want}");
        }
    }
}
