//! Running rustc on a kernel source to get its MIR text and layout report.
//!
//! The kernel file is mounted as module `kernel` next to the device prelude as
//! module `gpu`, in a generated crate root. One rustc call prints both the
//! optimized MIR (`--emit=mir`, `-C panic=abort`, `-O`) and the layout report
//! (`-Zprint-type-sizes`, on stdout). `-Ztrim-diagnostic-paths=false` makes the
//! MIR print full paths (`std::option::Option`, not `Option`), so that nothing
//! downstream recognises a type by a trimmed name. `-Zmir-include-spans`
//! ends each statement, terminator and declaration with a comment naming its
//! scope and source span (`// scope 0 at /src/kernel.rs:12:5: 12:17`), so that
//! a refusal can point at the user's line; the kernel's spans name it as
//! [`printed_kernel_path`] says. `RUSTC_BOOTSTRAP=1` is set on this one call
//! only, for those `-Z` flags.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sandbox::{Job, Sandbox, SandboxError};

use crate::prelude::{DEVICE_CFG, KERNEL_MODULE, PRELUDE_MODULE};

/// The prelude's source, embedded so that an installed binary needs no checkout.
pub const PRELUDE_SOURCE: &str = include_str!("../../../prelude/gpu.rs");

/// The name the printed MIR's spans give the kernel file `kernel`: rustc
/// sees the kernel's folder at `/src` (confined, or through its path
/// remapping unconfined), so `fixtures/saxpy/kernel.rs` is
/// `/src/kernel.rs`. The import maps it back to the file it read.
pub fn printed_kernel_path(kernel: &Path) -> String {
    let name = kernel.file_name().unwrap_or(kernel.as_os_str());
    format!("{}/{}", sandbox::SOURCE_DIR, name.to_string_lossy())
}

/// How to call rustc.
#[derive(Clone, Debug)]
pub struct RustcOptions {
    /// How rustc runs. rustc runs the kernel's proc macros, `include_str!`
    /// and `env!`, so on a user's kernel this is the confined sandbox; `None`
    /// runs it unconfined, for trusted sources (this workspace's own corpus
    /// and tests).
    pub sandbox: Option<Sandbox>,
    /// Whether to build the device side (`--cfg gpu_device`). The host side is
    /// only useful for tests of the prelude itself.
    pub device: bool,
    /// Wall-clock limit of one rustc call.
    pub timeout: Duration,
    /// The kernel's crates.io dependencies, built (`kernel-deps`): rustc
    /// sees them read-only at [`DEPS_DIR`] and takes the direct ones with
    /// `--extern`.
    pub deps: Option<std::sync::Arc<kernel_deps::BuiltDeps>>,
}

/// The dependencies that the `manifest.toml` beside `kernel` declares,
/// built by `sandbox` (or reused) in `cache`; `None` when it declares none
/// or there is no manifest (a kernel compiled on its own).
pub fn kernel_dependencies(
    kernel: &Path,
    sandbox: &Sandbox,
    cache: &Path,
) -> Result<Option<kernel_deps::BuiltDeps>, kernel_deps::DepsError> {
    let folder = kernel.parent().unwrap_or(Path::new("."));
    let Ok(text) = std::fs::read_to_string(folder.join("manifest.toml")) else {
        return Ok(None);
    };
    let table = kernel_deps::manifest_dependencies(&text)?;
    if table.is_empty() {
        return Ok(None);
    }
    let (built, _) = kernel_deps::build(&table, &folder.join("Cargo.lock"), cache, sandbox)?;
    Ok(Some(built))
}

/// Where rustc sees a kernel's built dependencies when confined.
pub const DEPS_DIR: &str = "/deps";

/// The MIR inliner's thresholds for a kernel with dependencies, the same as
/// its dependencies were built with ([`kernel_deps::INLINE_THRESHOLD`]).
/// Their functions reach the device only inlined into the kernel's own:
/// rustc prints a dependency's MIR under its own paths and generically, so
/// a call left to one has no body here (the lowering refuses it by name).
/// With these thresholds rustc inlines every non-recursive one.
pub const DEPENDENCY_INLINE_THRESHOLD: u32 = kernel_deps::INLINE_THRESHOLD;

impl Default for RustcOptions {
    fn default() -> Self {
        RustcOptions {
            sandbox: None,
            device: true,
            timeout: Duration::from_secs(300),
            deps: None,
        }
    }
}

impl RustcOptions {
    /// The options for a kernel of this workspace's own corpus, with the
    /// dependencies that the `manifest.toml` beside it declares, built (or
    /// reused) in [`kernel_deps::default_cache_dir`]. rustc and the
    /// dependency build run confined where this machine has the sandbox,
    /// as the oracle runs them, so that a test run's build cache
    /// (`build_cache`) serves the oracle's suites and these alike; elsewhere
    /// unconfined, which is why this is for trusted sources only.
    pub fn for_kernel(kernel: &Path) -> Result<RustcOptions, kernel_deps::DepsError> {
        let sandbox = Sandbox::detect()
            .or_else(|_| Sandbox::unconfined())
            .map_err(|e| kernel_deps::DepsError::Tool(e.to_string()))?;
        Ok(RustcOptions {
            deps: kernel_dependencies(kernel, &sandbox, &kernel_deps::default_cache_dir())?
                .map(std::sync::Arc::new),
            sandbox: sandbox.is_confined().then_some(sandbox),
            ..RustcOptions::default()
        })
    }

    /// The options for an untrusted kernel: rustc confined in `sandbox`.
    pub fn confined(sandbox: Sandbox) -> Self {
        RustcOptions {
            sandbox: Some(sandbox),
            ..RustcOptions::default()
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
    /// The scratch folder could not be written or read.
    #[error("rustc's scratch folder: {0}")]
    Scratch(#[source] std::io::Error),
    /// The sandbox could not run rustc.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// rustc ran and failed (or ran past its time); its own diagnostics are
    /// kept whole.
    #[error("rustc failed on {path} ({status}):\n{stderr}")]
    Failed {
        /// The kernel file.
        path: PathBuf,
        /// rustc's exit status, or its timeout.
        status: String,
        /// Everything rustc printed on stderr.
        stderr: String,
    },
}

/// A scratch directory of its own, removed when dropped.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new(tag: &str) -> std::io::Result<Scratch> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mir-import-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The crate root that mounts the prelude and the kernel (paths as rustc
/// sees them).
pub fn crate_root(prelude: &Path, kernel: &Path) -> String {
    format!(
        "#![allow(improper_ctypes_definitions, dead_code, unused)]\n\
         #[path = {prelude:?}] pub mod {PRELUDE_MODULE};\n\
         #[path = {kernel:?}] pub mod {KERNEL_MODULE};\n"
    )
}

/// The line of the crate root (1-based) on which an extra module's source
/// (`run_rustc_with_module`) starts: after the root's own lines and the
/// module's `pub mod name {` line. rustc's errors in that module point there.
pub fn extra_module_first_line() -> usize {
    crate_root(Path::new("p"), Path::new("k"))
        .matches('\n')
        .count()
        + 2
}

/// Runs rustc on `kernel` and captures its MIR and layout report.
pub fn run_rustc(kernel: &Path, opts: &RustcOptions) -> Result<RustcOutput, RustcError> {
    run_rustc_with_module(kernel, opts, None)
}

/// Like [`run_rustc`], with one extra inline module `(name, source)` in the
/// crate root (the layout probe uses this).
///
/// Confined, rustc sees the kernel's folder read-only at `/src` and its
/// scratch folder at `/work`, so the paths it prints (in closure and impl
/// names) are the same in every run.
pub fn run_rustc_with_module(
    kernel: &Path,
    opts: &RustcOptions,
    extra: Option<(&str, &str)>,
) -> Result<RustcOutput, RustcError> {
    run(kernel, opts, extra, None, &[])
}

/// rustc's own account of the layouts of the types the module `(name,
/// source)` marks with `#[rustc_layout(debug)]` (the niche probe's last
/// resort): that attribute reports each layout as an error, so this returns
/// the stderr of the run that fails with them. The crate root enables
/// `rustc_attrs` on its first line, so the module's lines are where
/// [`extra_module_first_line`] says.
pub fn run_rustc_layout_report(
    kernel: &Path,
    opts: &RustcOptions,
    module: (&str, &str),
) -> Result<String, RustcError> {
    match run(kernel, opts, Some(module), None, &["rustc_attrs"]) {
        Ok(_) => Ok(String::new()),
        Err(RustcError::Failed { stderr, .. }) => Ok(stderr),
        Err(e) => Err(e),
    }
}

/// The line of the compiled copy (1-based) on which the text appended by
/// [`run_rustc_appended`] to the kernel's `source` starts: after the
/// kernel's lines and the one newline the copy adds.
pub fn appended_first_line(source: &str) -> usize {
    source.matches('\n').count() + 2
}

/// Like [`run_rustc`], on the kernel's text with `appended` added at its
/// end, inside the kernel's module (monomorphisation's instances, which call
/// the kernel's private items). The copy is printed under the kernel's own
/// name, and the kernel's lines keep their numbers, so spans are unchanged.
/// The unstable library `features` that the appended text names (a shim
/// bounded by `Try`) are enabled on the crate root's first line: the
/// kernel's own code compiles the same with them, as on the host without.
pub fn run_rustc_appended(
    kernel: &Path,
    opts: &RustcOptions,
    appended: &str,
    features: &[&str],
) -> Result<RustcOutput, RustcError> {
    run(kernel, opts, None, Some(appended), features)
}

fn run(
    kernel: &Path,
    opts: &RustcOptions,
    extra: Option<(&str, &str)>,
    appended: Option<&str>,
    features: &[&str],
) -> Result<RustcOutput, RustcError> {
    let read = |source| RustcError::Read {
        path: kernel.into(),
        source,
    };
    let source = std::fs::read_to_string(kernel).map_err(read)?;
    let abs = std::path::absolute(kernel).map_err(read)?;
    let folder = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
    let sandbox = match &opts.sandbox {
        Some(s) => s.clone(),
        None => Sandbox::unconfined()?,
    };
    let scratch = Scratch::new("rustc").map_err(RustcError::Scratch)?;
    let mut job = Job::in_folders(sandbox.rustc(), &folder, &scratch.0);
    if let Some(deps) = &opts.deps {
        job = job.read_only(&deps.root, DEPS_DIR);
    }
    let seen = |p: &Path| sandbox.path_in(&job, p);
    let prelude = scratch.0.join("gpu.rs");
    std::fs::write(&prelude, PRELUDE_SOURCE).map_err(RustcError::Scratch)?;
    let root = scratch.0.join("root.rs");
    // With appended text, rustc reads a copy in the scratch folder's `src/`,
    // which the remapping below prints as the kernel's own folder.
    let copy_dir = scratch.0.join("src");
    let compiled = match appended {
        Some(more) => {
            let name = abs.file_name().unwrap_or(abs.as_os_str());
            std::fs::create_dir_all(&copy_dir).map_err(RustcError::Scratch)?;
            let copy = copy_dir.join(name);
            std::fs::write(&copy, format!("{source}\n{more}")).map_err(RustcError::Scratch)?;
            copy
        }
        None => abs.clone(),
    };
    // Features go on the root's first line, so that no line moves.
    let mut root_src: String = features
        .iter()
        .map(|f| format!("#![feature({f})] "))
        .collect();
    root_src.push_str(&crate_root(&seen(&prelude), &seen(&compiled)));
    if let Some((name, src)) = extra {
        root_src.push_str(&format!("pub mod {name} {{\n{src}\n}}\n"));
    }
    std::fs::write(&root, &root_src).map_err(RustcError::Scratch)?;
    let mir_path = scratch.0.join("kernel.mir");
    let mut args: Vec<std::ffi::OsString> = [
        "--edition",
        "2024",
        "--crate-type",
        "lib",
        "--crate-name",
        "kernel",
        "-C",
        "panic=abort",
        "-C",
        "opt-level=3",
        "--emit=mir",
        "-Zprint-type-sizes",
        "-Ztrim-diagnostic-paths=false",
        "-Zmir-include-spans",
        "-Zcross-crate-inline-threshold=always",
    ]
    .map(Into::into)
    .to_vec();
    let threshold = if opts.deps.is_some() {
        DEPENDENCY_INLINE_THRESHOLD
    } else {
        1000
    };
    for flag in ["threshold", "hint-threshold", "forwarder-threshold"] {
        args.push(format!("-Zinline-mir-{flag}={threshold}").into());
    }
    if let Some(deps) = &opts.deps {
        args.extend(deps.rustc_args(&|p: &Path| seen(p)));
    }
    // Unconfined, the same fixed names through rustc's own path remapping,
    // so that the printed MIR is the same in every run either way.
    for (host, inside) in [
        (&scratch.0, sandbox::WORK_DIR),
        (&folder, sandbox::SOURCE_DIR),
    ] {
        let mut remap = std::ffi::OsString::from("--remap-path-prefix=");
        remap.push(host.as_os_str());
        remap.push("=");
        remap.push(inside);
        args.push(remap);
    }
    if appended.is_some() {
        // Last, so that it wins over the scratch folder's own mapping.
        let mut remap = std::ffi::OsString::from("--remap-path-prefix=");
        remap.push(seen(&copy_dir).as_os_str());
        remap.push("=");
        remap.push(sandbox::SOURCE_DIR);
        args.push(remap);
    }
    args.extend([
        "-o".into(),
        seen(&mir_path).into_os_string(),
        seen(&root).into_os_string(),
    ]);
    if opts.device {
        args.extend(["--cfg".into(), DEVICE_CFG.into()]);
    }
    // The cache's key names the scratch and kernel folders by role: they
    // differ between runs (unconfined, rustc sees the host's paths) and
    // rustc prints neither (both are remapped).
    let by_role = |text: &str| {
        text.replace(&scratch.0.display().to_string(), "<scratch>")
            .replace(&folder.display().to_string(), "<source>")
    };
    let cache_key = crate::rustc_cache::key(&crate::rustc_cache::Inputs {
        folder: &folder,
        root: &by_role(&root_src),
        appended,
        args: args.iter().map(|a| by_role(&a.to_string_lossy())).collect(),
        deps: opts.deps.as_ref().map(|d| d.root.as_path()),
        // The compiler as this process runs it (a confined job's path is
        // the sandbox's own), so that its `-vV` is in the key.
        rustc: &sandbox.toolchain().sysroot.join("bin/rustc"),
        confined: sandbox.is_confined(),
    });
    if let Some(hit) = cache_key.as_deref().and_then(crate::rustc_cache::load) {
        return Ok(RustcOutput {
            mir: hit.mir,
            type_sizes: hit.type_sizes,
            source,
        });
    }
    job.args = args;
    job.env = vec![("RUSTC_BOOTSTRAP".into(), "1".into())];
    job.cwd = Some(scratch.0.clone());
    job.timeout = opts.timeout;
    let out = sandbox.run(&job)?;
    if !out.success() {
        return Err(RustcError::Failed {
            path: kernel.into(),
            status: out.describe(&job),
            stderr: out.stderr_text(),
        });
    }
    let mir = std::fs::read_to_string(&mir_path).map_err(RustcError::Scratch)?;
    let type_sizes = String::from_utf8_lossy(&out.stdout).into_owned();
    let kept = crate::rustc_cache::Cached { mir, type_sizes };
    if let Some(k) = &cache_key {
        crate::rustc_cache::store_output(k, &kept);
    }
    Ok(RustcOutput {
        mir: kept.mir,
        type_sizes: kept.type_sizes,
        source,
    })
}
