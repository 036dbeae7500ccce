//! The bubblewrap runner: the command line that confines a job, the probe
//! that proves it works on this machine, and a user id per job when the
//! harness runs as root.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::job::{Access, Finished, Job, execute};
use crate::{SandboxError, TOOLCHAIN, Toolchain};

/// First user id handed to jobs when the harness runs as root: far above
/// the ids of real accounts, so no job owns anything of anyone else's.
const FIRST_JOB_UID: u64 = 3_000_000;
/// Distinct job user ids before they repeat.
const JOB_UIDS: u64 = 1_000_000;

/// Paths that mounts may not shadow.
const RESERVED: [&str; 7] = ["/usr", "/etc", "/proc", "/dev", "/tmp", TOOLCHAIN, "/"];

/// A working bubblewrap set-up.
#[derive(Clone, Debug)]
pub struct Confinement {
    bwrap: PathBuf,
    prlimit: PathBuf,
    /// `setpriv`, used when the harness is root to give each job its own
    /// unprivileged user (so that the process limit is the job's own).
    setpriv: Option<PathBuf>,
    /// The toolchain mounted read-only at [`TOOLCHAIN`].
    pub toolchain: Toolchain,
}

fn find(name: &str, env: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

impl Confinement {
    /// bubblewrap, `prlimit` and (as root) `setpriv`, proven by running
    /// `/usr/bin/true` confined; the probe runs once per process.
    pub fn detect() -> Result<Confinement, SandboxError> {
        static PROBED: OnceLock<Result<Confinement, String>> = OnceLock::new();
        PROBED
            .get_or_init(|| Confinement::probe().map_err(|e| e.to_string()))
            .clone()
            .map_err(SandboxError::Unavailable)
    }

    fn probe() -> Result<Confinement, String> {
        let bwrap = find("bwrap", "BWRAP").ok_or("`bwrap` (bubblewrap) is not installed")?;
        let prlimit =
            find("prlimit", "PRLIMIT").ok_or("`prlimit` (util-linux) is not installed")?;
        let setpriv = if running_as_root() {
            let p = find("setpriv", "SETPRIV")
                .ok_or("`setpriv` (util-linux) is not installed; it is needed as root")?;
            if !p.starts_with("/usr") {
                return Err(format!(
                    "`setpriv` at {} is outside /usr, where jobs cannot see it",
                    p.display()
                ));
            }
            Some(p)
        } else {
            None
        };
        let toolchain = Toolchain::current().map_err(|e| e.to_string())?;
        let c = Confinement {
            bwrap,
            prlimit,
            setpriv,
            toolchain,
        };
        let mut job = Job::new("/usr/bin/true");
        job.timeout = Duration::from_secs(30);
        let done = c.run(&job).map_err(|e| e.to_string())?;
        if !done.success() {
            return Err(format!(
                "bubblewrap fails on this machine ({}): {}",
                done.describe(&job),
                done.stderr_text().trim()
            ));
        }
        Ok(c)
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        format!(
            "bubblewrap ({}): no network, empty environment, read-only toolchain, private work folder{}",
            self.bwrap.display(),
            if self.setpriv.is_some() {
                ", own user id"
            } else {
                ", user namespace"
            }
        )
    }

    /// Runs `job` confined.
    pub fn run(&self, job: &Job) -> Result<Finished, SandboxError> {
        let uid = self.setpriv.as_ref().map(|_| next_job_uid());
        if let Some(uid) = uid {
            for m in job.mounts.iter().filter(|m| m.access == Access::ReadWrite) {
                std::os::unix::fs::chown(&m.host, Some(uid), Some(uid)).map_err(|source| {
                    SandboxError::Spawn {
                        program: format!("chown of {}", m.host.display()),
                        source,
                    }
                })?;
            }
        }
        let mut cmd = Command::new(&self.prlimit);
        let l = job.limits;
        let cpu = l
            .cpu_seconds
            .min(job.timeout.as_secs().saturating_add(1).max(1));
        cmd.arg(format!("--cpu={cpu}"))
            .arg(format!("--as={}", l.address_space))
            .arg(format!("--nproc={}", l.processes))
            .arg(format!("--fsize={}", l.file_size))
            .arg(format!("--nofile={}", l.open_files))
            .arg("--")
            .arg(&self.bwrap)
            .args(self.bwrap_args(job, uid)?)
            .env_clear();
        execute(cmd, job, |child| {
            // The outer bwrap; --die-with-parent takes the sandbox's PID 1,
            // and the kernel every process of its PID namespace.
            let _ = child.kill();
        })
    }

    fn bwrap_args(&self, job: &Job, uid: Option<u32>) -> Result<Vec<OsString>, SandboxError> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(OsString::from));
        if uid.is_some() {
            // As root: no user namespace (its only mapped id would be root),
            // setpriv drops to the job's own user below.
            push(&[
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--cap-add",
                "CAP_SETUID",
                "--cap-add",
                "CAP_SETGID",
            ]);
        } else {
            push(&["--unshare-all"]);
        }
        push(&["--die-with-parent", "--new-session", "--clearenv"]);
        push(&["--ro-bind", "/usr", "/usr"]);
        for d in ["/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"] {
            let p = Path::new(d);
            if let Ok(target) = std::fs::read_link(p) {
                a.extend([
                    OsString::from("--symlink"),
                    target.into_os_string(),
                    d.into(),
                ]);
            } else if p.is_dir() {
                a.extend(["--ro-bind", d, d].map(OsString::from));
            }
        }
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(OsString::from));
        push(&["--perms", "0755", "--dir", "/etc"]);
        push(&["--ro-bind-try", "/etc/alternatives", "/etc/alternatives"]);
        push(&["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]);
        push(&[
            "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
        ]);
        a.extend([
            "--ro-bind".into(),
            self.toolchain.sysroot.clone().into_os_string(),
            TOOLCHAIN.into(),
        ]);
        for m in &job.mounts {
            let inside = &m.inside;
            let bad = || SandboxError::BadMount(inside.display().to_string());
            if !inside.is_absolute()
                || RESERVED
                    .iter()
                    .any(|r| inside == Path::new(r) || (*r != "/" && inside.starts_with(r)))
            {
                return Err(bad());
            }
            // bubblewrap makes missing parents 0700; make them 0755 so that
            // the job's user can pass through.
            let mut parents: Vec<&Path> = inside.ancestors().skip(1).collect();
            parents.reverse();
            for p in parents.into_iter().filter(|p| *p != Path::new("/")) {
                a.extend([
                    "--perms".into(),
                    "0755".into(),
                    "--dir".into(),
                    p.as_os_str().to_owned(),
                ]);
            }
            let flag = match m.access {
                Access::ReadOnly => "--ro-bind",
                Access::ReadWrite => "--bind",
            };
            a.extend([
                flag.into(),
                m.host.clone().into_os_string(),
                inside.clone().into_os_string(),
            ]);
        }
        for (k, v) in &job.env {
            a.extend(["--setenv".into(), k.into(), v.into()]);
        }
        if let Some(cwd) = &job.cwd {
            let inside = job
                .inside(cwd)
                .ok_or_else(|| SandboxError::BadMount(cwd.display().to_string()))?;
            a.extend(["--chdir".into(), inside.into_os_string()]);
        }
        if let (Some(uid), Some(setpriv)) = (uid, &self.setpriv) {
            a.push(setpriv.clone().into_os_string());
            a.extend(
                [
                    format!("--reuid={uid}"),
                    format!("--regid={uid}"),
                    "--clear-groups".into(),
                    "--inh-caps=-all".into(),
                    "--".into(),
                ]
                .map(OsString::from),
            );
        }
        a.push(job.program.clone().into_os_string());
        a.extend(job.args.iter().cloned());
        Ok(a)
    }
}

/// A user id no other job of this process has used lately, and unlikely to
/// be used by another harness process at the same time.
fn next_job_uid() -> u32 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let seed = u64::from(std::process::id()).wrapping_mul(7919);
    let uid = FIRST_JOB_UID + seed.wrapping_add(n) % JOB_UIDS;
    u32::try_from(uid).unwrap_or(u32::MAX - 1)
}
