//! Running untrusted programs confined.
//!
//! **Owns:** how the oracle runs code it did not write: rustc on a user's
//! kernel (MIR, layout probe, twins, the host build, where proc macros,
//! `include_str!` and `env!` run), and the host program built from it.
//!
//! **Does not own:** what is run or how its output is read: callers build a
//! [`Job`] and get its [`Finished`] output back.
//!
//! **Border:** [`Sandbox::run`]. A [`Sandbox`] is either
//! [`Sandbox::Confined`], which runs every job under bubblewrap (`bwrap`, a
//! Debian package, the mechanism Flatpak uses), or [`Sandbox::Unconfined`],
//! chosen explicitly by the user (`--unsandboxed`) and never a silent
//! fallback: [`Sandbox::detect`] fails loudly when bubblewrap cannot be used.
//!
//! Inside the confinement a job sees:
//! - a read-only `/usr` (with the `/bin`, `/lib`, `/lib64`, `/sbin` links),
//!   `/etc/alternatives` and `/etc/ld.so.cache` (so that `cc` and the dynamic
//!   loader work), and nothing else of `/etc` or of any home folder;
//! - the Rust toolchain's sysroot read-only at [`TOOLCHAIN`];
//! - the job's own mounts ([`Job::mounts`]): the fixture read-only, a private
//!   writable work folder;
//! - an empty `/tmp`, its own `/proc` and a minimal `/dev`;
//! - no network (a new network namespace with only loopback), its own PID, IPC
//!   and UTS namespaces, a new session (no terminal injection);
//! - an environment holding only [`Job::env`];
//! - when the harness runs as root, an unprivileged user id of its own
//!   (`setpriv`), so that the process limit counts only this job's processes;
//! - resource limits ([`Limits`]: CPU time, address space, processes, file
//!   size, open files) set with `prlimit` before bubblewrap starts.
//!
//! On timeout the outer bubblewrap process is killed; `--die-with-parent` then
//! kills the sandbox's PID 1, and with it every process in its PID namespace,
//! grandchildren included. Output is drained by threads while the job runs, so
//! a chatty program never blocks on a full pipe, and it is capped.
#![deny(missing_docs)]

mod confined;
mod job;
mod unconfined;

pub use confined::Confinement;
pub use job::{Access, Finished, Job, Limits, Mount, SOURCE_DIR, WORK_DIR};

use std::path::{Path, PathBuf};

/// Where the toolchain's sysroot appears inside the confinement.
pub const TOOLCHAIN: &str = "/toolchain";

/// Why a job could not be run (not: why it failed; that is [`Finished`]).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// bubblewrap or a helper it needs is missing or does not work here.
    #[error(
        "the sandbox cannot be set up: {0}. Install bubblewrap (`apt-get install bubblewrap`; \
         `bash ci/setup-tools.sh` does it), or pass --unsandboxed to run untrusted kernel code \
         without confinement"
    )]
    Unavailable(String),
    /// The Rust toolchain could not be located.
    #[error("cannot locate the Rust toolchain through `{rustc} --print sysroot`: {why}")]
    Toolchain {
        /// The rustc asked.
        rustc: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The job could not be started or its work folder prepared.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A mount's inside path is not absolute or clashes with the layout.
    #[error(
        "bad mount `{0}`: inside paths are absolute and distinct from /usr, /etc, /proc, /dev, /tmp and the toolchain"
    )]
    BadMount(String),
}

/// The Rust toolchain that jobs run: a sysroot holding `bin/rustc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// The sysroot on the host.
    pub sysroot: PathBuf,
}

impl Toolchain {
    /// The toolchain of `rustc` (the rustup proxy or a real rustc): asks it
    /// for its sysroot, so that the sandbox runs the real compiler, not the
    /// proxy (which needs a home folder and the network).
    pub fn of(rustc: &Path) -> Result<Toolchain, SandboxError> {
        let fail = |why: String| SandboxError::Toolchain {
            rustc: rustc.to_path_buf(),
            why,
        };
        let out = std::process::Command::new(rustc)
            .args(["--print", "sysroot"])
            .output()
            .map_err(|e| fail(e.to_string()))?;
        if !out.status.success() {
            return Err(fail(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !sysroot.join("bin/rustc").is_file() {
            return Err(fail(format!("no bin/rustc under {}", sysroot.display())));
        }
        Ok(Toolchain { sysroot })
    }

    /// The toolchain of `$RUSTC`, else of `rustc` on the `PATH`, found once
    /// per process.
    pub fn current() -> Result<Toolchain, SandboxError> {
        static CURRENT: std::sync::OnceLock<Result<Toolchain, String>> = std::sync::OnceLock::new();
        let rustc = std::env::var_os("RUSTC").map_or_else(|| PathBuf::from("rustc"), PathBuf::from);
        CURRENT
            .get_or_init(|| Toolchain::of(&rustc).map_err(|e| e.to_string()))
            .clone()
            .map_err(|why| SandboxError::Toolchain { rustc, why })
    }
}

/// How jobs run.
#[derive(Clone, Debug)]
pub enum Sandbox {
    /// Under bubblewrap, with limits.
    Confined(Confinement),
    /// Directly, as the user asked (`--unsandboxed`): still with a private
    /// work folder, output draining and the process group killed on timeout,
    /// but the job sees the whole machine.
    Unconfined(Toolchain),
}

impl Sandbox {
    /// The confined sandbox, checked by running a trivial job in it once per
    /// process; a clear error when it cannot be set up.
    pub fn detect() -> Result<Sandbox, SandboxError> {
        Ok(Sandbox::Confined(Confinement::detect()?))
    }

    /// The unconfined runner, for trusted code (our own test corpus) or when
    /// the user opts out.
    pub fn unconfined() -> Result<Sandbox, SandboxError> {
        Ok(Sandbox::Unconfined(Toolchain::current()?))
    }

    /// Whether jobs are confined.
    pub fn is_confined(&self) -> bool {
        matches!(self, Sandbox::Confined(_))
    }

    /// The toolchain jobs use.
    pub fn toolchain(&self) -> &Toolchain {
        match self {
            Sandbox::Confined(c) => &c.toolchain,
            Sandbox::Unconfined(t) => t,
        }
    }

    /// The path of the toolchain's `rustc` as a job sees it.
    pub fn rustc(&self) -> PathBuf {
        match self {
            Sandbox::Confined(_) => Path::new(TOOLCHAIN).join("bin/rustc"),
            Sandbox::Unconfined(t) => t.sysroot.join("bin/rustc"),
        }
    }

    /// The path of the toolchain's `cargo` as a job sees it (dependency
    /// builds of kernels: their build scripts are user code).
    pub fn cargo(&self) -> PathBuf {
        match self {
            Sandbox::Confined(_) => Path::new(TOOLCHAIN).join("bin/cargo"),
            Sandbox::Unconfined(t) => t.sysroot.join("bin/cargo"),
        }
    }

    /// The C compiler that rustc links with (`-C linker=`): jobs get no
    /// `PATH`, so rustc cannot look `cc` up itself.
    pub fn linker(&self) -> PathBuf {
        let usr = PathBuf::from("/usr/bin/cc");
        match self {
            Sandbox::Confined(_) => usr,
            Sandbox::Unconfined(_) => std::env::var_os("PATH")
                .and_then(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join("cc"))
                        .find(|c| c.is_file())
                })
                .unwrap_or(usr),
        }
    }

    /// The path a job sees for `host`, a file or folder under one of `job`'s
    /// mounts: the inside path when confined, `host` itself when not.
    pub fn path_in(&self, job: &Job, host: &Path) -> PathBuf {
        match self {
            Sandbox::Unconfined(_) => host.to_path_buf(),
            Sandbox::Confined(_) => job.inside(host).unwrap_or_else(|| host.to_path_buf()),
        }
    }

    /// Runs `job` to completion or its timeout.
    pub fn run(&self, job: &Job) -> Result<Finished, SandboxError> {
        match self {
            Sandbox::Confined(c) => c.run(job),
            Sandbox::Unconfined(_) => unconfined::run(job),
        }
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        match self {
            Sandbox::Confined(c) => c.describe(),
            Sandbox::Unconfined(_) => {
                "UNSANDBOXED (--unsandboxed): kernel code runs with the harness's rights".into()
            }
        }
    }
}

/// For tests: the rule that tests needing the sandbox share.
pub mod testing {
    use super::Sandbox;

    /// Whether this run demands the sandbox (`REQUIRE_SANDBOX=1`, set by
    /// `ci/test.sh`).
    pub fn sandbox_required() -> bool {
        std::env::var_os("REQUIRE_SANDBOX").is_some_and(|v| v == "1")
    }

    /// The confined sandbox; `None` after printing NOT RUN where it cannot be
    /// set up, unless [`sandbox_required`], where that is a failure.
    ///
    /// # Panics
    /// When the sandbox is required and unavailable.
    pub fn confined_or_not_run() -> Option<Sandbox> {
        match Sandbox::detect() {
            Ok(s) => Some(s),
            Err(e) if sandbox_required() => panic!("REQUIRE_SANDBOX=1 but {e}"),
            Err(e) => {
                eprintln!("NOT RUN: {e}");
                None
            }
        }
    }
}
