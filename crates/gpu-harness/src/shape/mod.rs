//! Code-shape checks on a lowered fixture: its device IR, its NVVM IR and the
//! PTX libNVVM makes of it at `-opt=3` and `-opt=0`.
//!
//! Each check is structural, never a text search over a whole file: the device
//! IR is walked as a [`device_ir::Module`], and PTX is read into a typed module
//! by [`ptx_reader`], the workspace's one PTX reader.
//!
//! - [`ShapeCheck::NoHelperAlloca`]: no helper keeps an alloca or a `.local`
//!   depot ([`checks::no_helper_alloca`]).
//! - [`ShapeCheck::ConstantsReadOnly`]: reference constants live in read-only
//!   `addrspace(1)` globals, one per shared allocation
//!   ([`checks::constants_read_only`]).
//! - [`ShapeCheck::StableKeys`]: a perturbed copy of the fixture, with extra
//!   kernels and constants placed before the originals, keeps every helper's
//!   globals under the same symbols ([`stable`]).
//! - [`ShapeCheck::PtxForms`]: the PTX holds the instruction forms the memory
//!   model assumes: acquire loads and release stores as `ld.acquire.sys.u32` /
//!   `st.release.sys.u32`, volatile accesses as `ld.volatile` /
//!   `st.volatile`, and as many `bar.sync` as the kernel's barriers
//!   ([`ptx_forms`]).
//! - [`ShapeCheck::NoConstantStackCopy`]: no function copies a constant
//!   table it reads (a by-value `const` table of 64 bytes or more) to the
//!   stack: no stack slot that large filled by stores of constants, in the
//!   device IR or either PTX ([`checks::no_constant_stack_copy`]).
//! - A fixture's own `verify-code-shape.sh`, run with the artifact paths
//!   ([`run_verify_script`]).
//!
//! The PTX checks read the `-opt=0` PTX: at `-opt=3` libNVVM folds calls to
//! helpers that return constant addresses, and the helpers vanish, so a check on
//! optimized PTX alone would inspect nothing. Each check fails when a function
//! or global it must inspect is missing. The module is pure: it prints nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use mir_lower::Lowered;

pub mod artifacts;
pub mod checks;
pub mod ptx_forms;
pub mod ptx_stores;
pub mod stable;

pub use artifacts::Artifacts;
pub use checks::{constants_read_only, no_constant_stack_copy, no_helper_alloca};
pub use stable::{compare_keys, stable_keys, stable_keys_for, stable_keys_with};

/// A shape check, as a fixture manifest names it.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeCheck {
    /// `no-helper-alloca`: no helper keeps an alloca (device IR) or a `.local`
    /// depot (`-opt=0` PTX).
    NoHelperAlloca,
    /// `constants-read-only`: reference constants are read-only `addrspace(1)`
    /// globals with content-key symbols, one per allocation, `.global` in PTX.
    ConstantsReadOnly,
    /// `stable-keys`: a perturbed build keeps every helper's global symbols.
    StableKeys,
    /// `ptx-forms`: the PTX holds the acquire, release, volatile and barrier
    /// forms the kernel's device IR asks for, as many as it implies.
    PtxForms,
    /// `no-constant-stack-copy`: a function that reads a constant table (64
    /// bytes or more) does not copy it to the stack: no alloca as large,
    /// filled by stores of immediates or of values loaded from a table, and
    /// no `.local` variable as large with as many `st.local`s in its PTX at
    /// `-opt=0` or `-opt=3`. The table is read from its global.
    NoConstantStackCopy,
    /// `verify-code-shape`: the fixture's own `verify-code-shape.sh`. It runs
    /// whenever the file exists, listed or not.
    VerifyCodeShape,
}

impl ShapeCheck {
    /// The five built-in checks, in the order [`check_all`] runs them.
    pub const BUILT_IN: [ShapeCheck; 5] = [
        ShapeCheck::NoHelperAlloca,
        ShapeCheck::ConstantsReadOnly,
        ShapeCheck::StableKeys,
        ShapeCheck::PtxForms,
        ShapeCheck::NoConstantStackCopy,
    ];

    /// The manifest name.
    pub fn name(self) -> &'static str {
        match self {
            ShapeCheck::NoHelperAlloca => "no-helper-alloca",
            ShapeCheck::ConstantsReadOnly => "constants-read-only",
            ShapeCheck::StableKeys => "stable-keys",
            ShapeCheck::PtxForms => "ptx-forms",
            ShapeCheck::NoConstantStackCopy => "no-constant-stack-copy",
            ShapeCheck::VerifyCodeShape => "verify-code-shape",
        }
    }
}

impl fmt::Display for ShapeCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed shape check, with what it found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("shape check {check}: {message}")]
pub struct ShapeFailure {
    /// The check that failed.
    pub check: ShapeCheck,
    /// What it found, naming the function or global.
    pub message: String,
}

impl ShapeFailure {
    /// A failure of `check`.
    pub fn new(check: ShapeCheck, message: impl Into<String>) -> Self {
        ShapeFailure {
            check,
            message: message.into(),
        }
    }
}

/// Everything the checks read about one fixture.
#[derive(Clone, Copy, Debug)]
pub struct ShapeInput<'a> {
    /// The fixture's `kernel.rs`: the stable-keys check rebuilds a perturbed
    /// copy of it, and `verify-code-shape.sh` is looked for beside it.
    pub kernel: &'a Path,
    /// The lowered module with its global origins.
    pub lowered: &'a Lowered,
    /// The imported MIR the module was lowered from, when the caller has it:
    /// `ptx-forms` counts the barrier call sites in it (and fails without it).
    pub mir: Option<&'a mir_import::Crate>,
    /// The NVVM IR printed from `lowered.module`.
    pub nvvm_ir: &'a str,
    /// libNVVM's PTX at `-opt=3`.
    pub ptx_o3: &'a str,
    /// libNVVM's PTX at `-opt=0`, where helpers survive.
    pub ptx_o0: &'a str,
    /// How rustc runs (confined for user kernels): stable-keys rebuilds the
    /// kernel, and `verify-code-shape.sh` runs in the same sandbox.
    pub rustc: &'a mir_import::rustc::RustcOptions,
}

/// Runs `which` (in [`ShapeCheck::BUILT_IN`] order, each once), then the
/// fixture's `verify-code-shape.sh` if it exists. Returns every failure; an
/// empty vector means every check passed.
pub fn check_all(input: &ShapeInput<'_>, which: &[ShapeCheck]) -> Vec<ShapeFailure> {
    let mut failures = Vec::new();
    for check in ShapeCheck::BUILT_IN {
        if !which.contains(&check) {
            continue;
        }
        match check {
            ShapeCheck::NoHelperAlloca => failures.extend(no_helper_alloca(input)),
            ShapeCheck::ConstantsReadOnly => failures.extend(constants_read_only(input)),
            ShapeCheck::StableKeys => {
                if let Err(f) = stable_keys_for(input.lowered, input.kernel, input.rustc) {
                    failures.push(f);
                }
            }
            ShapeCheck::PtxForms => failures.extend(ptx_forms::ptx_forms(input)),
            ShapeCheck::NoConstantStackCopy => failures.extend(no_constant_stack_copy(input)),
            ShapeCheck::VerifyCodeShape => {}
        }
    }
    if let Some(Err(f)) = verify_code_shape(input) {
        failures.push(f);
    }
    failures
}

/// The fixture's `verify-code-shape.sh`, beside its `kernel.rs`, if any.
pub fn verify_script(kernel: &Path) -> Option<PathBuf> {
    let script = kernel.parent()?.join("verify-code-shape.sh");
    script.is_file().then_some(script)
}

/// Writes the artifacts to a temporary folder and runs the fixture's
/// `verify-code-shape.sh` on them; `None` when the fixture has no script.
pub fn verify_code_shape(input: &ShapeInput<'_>) -> Option<Result<(), ShapeFailure>> {
    let script = verify_script(input.kernel)?;
    let fail = |m: String| ShapeFailure::new(ShapeCheck::VerifyCodeShape, m);
    let run = || -> Result<(), ShapeFailure> {
        let dir = TempDir::new("verify-code-shape").map_err(|e| fail(e.to_string()))?;
        let paths = [
            ("kernel.ll", input.nvvm_ir),
            ("kernel.opt3.ptx", input.ptx_o3),
            ("kernel.opt0.ptx", input.ptx_o0),
        ]
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text)
                .map(|()| path.clone())
                .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))
        });
        let [ir, o3, o0] = paths;
        run_verify_script(&script, &ir?, &o3?, &o0?, input.rustc)
    };
    Some(run())
}

/// Runs `script` with `bash` and the artifact paths as arguments: the NVVM IR
/// file, the `-opt=3` PTX file, the `-opt=0` PTX file. The script is the
/// fixture's own code, so it runs in the sandbox of `rustc` (its folder
/// read-only, the artifacts' folder writable). A nonzero exit is a failure
/// carrying the script's output.
pub fn run_verify_script(
    script: &Path,
    nvvm_ir: &Path,
    ptx_o3: &Path,
    ptx_o0: &Path,
    rustc: &mir_import::rustc::RustcOptions,
) -> Result<(), ShapeFailure> {
    let fail = |m: String| ShapeFailure::new(ShapeCheck::VerifyCodeShape, m);
    let sandbox = match &rustc.sandbox {
        Some(s) => s.clone(),
        None => sandbox::Sandbox::unconfined().map_err(|e| fail(e.to_string()))?,
    };
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (script, nvvm_ir, ptx_o3, ptx_o0) = (
        &absolute(script),
        &absolute(nvvm_ir),
        &absolute(ptx_o3),
        &absolute(ptx_o0),
    );
    let folder = script.parent().unwrap_or(Path::new("/"));
    let artifacts = nvvm_ir.parent().unwrap_or(Path::new("/"));
    let mut job = sandbox::Job::in_folders("/bin/bash", folder, artifacts);
    job.args = [script, nvvm_ir, ptx_o3, ptx_o0]
        .iter()
        .map(|p| sandbox.path_in(&job, p).into_os_string())
        .collect();
    job.cwd = Some(folder.to_path_buf());
    job.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    job.timeout = std::time::Duration::from_secs(120);
    let out = sandbox
        .run(&job)
        .map_err(|e| fail(format!("cannot run {}: {e}", script.display())))?;
    if out.success() {
        Ok(())
    } else {
        Err(fail(format!(
            "{} ended with {}:\n{}{}",
            script.display(),
            out.describe(&job),
            String::from_utf8_lossy(&out.stdout),
            out.stderr_text()
        )))
    }
}

/// A uniquely named folder under the system's temporary folder, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(what: &str) -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "gpu-harness-{what}-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
