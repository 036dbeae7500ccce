//! What a job is (program, arguments, environment, mounts, limits) and what
//! comes back, with the one executor both runners share: output drained on
//! threads, a saturating deadline, the kill on timeout.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::SandboxError;

/// Where [`Job::in_folders`] shows the source folder (read-only).
pub const SOURCE_DIR: &str = "/src";
/// Where [`Job::in_folders`] shows the work folder (writable).
pub const WORK_DIR: &str = "/work";

/// Whether a job may write to a mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    ReadOnly,
    /// Read and write (the job's private work folder).
    ReadWrite,
}

/// A host folder or file that a job sees at `inside`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The path on the host.
    pub host: PathBuf,
    /// The absolute path inside the confinement.
    pub inside: PathBuf,
    /// Read only or read-write.
    pub access: Access,
}

/// Resource limits of one job (`setrlimit`, through `prlimit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// CPU seconds (all threads of a process together).
    pub cpu_seconds: u64,
    /// Address space of one process, in bytes.
    pub address_space: u64,
    /// Processes and threads of the job's user.
    pub processes: u64,
    /// Largest file a process may write, in bytes.
    pub file_size: u64,
    /// Open file descriptors of one process.
    pub open_files: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_seconds: 600,
            address_space: 8 << 30,
            processes: 256,
            file_size: 4 << 30,
            open_files: 1024,
        }
    }
}

/// A program to run, and everything it may see.
#[derive(Clone, Debug)]
pub struct Job {
    /// The program, as the job sees it ([`crate::Sandbox::rustc`],
    /// [`crate::Sandbox::path_in`]).
    pub program: PathBuf,
    /// Its arguments (paths as the job sees them).
    pub args: Vec<OsString>,
    /// Its whole environment: nothing else is inherited.
    pub env: Vec<(String, String)>,
    /// What it sees of the host's files, besides the system and toolchain.
    pub mounts: Vec<Mount>,
    /// Its working folder, a host path under one of the mounts.
    pub cwd: Option<PathBuf>,
    /// Its resource limits.
    pub limits: Limits,
    /// Wall-clock time before the whole process tree is killed.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr kept; the rest is drained and dropped.
    pub output_cap: usize,
}

impl Job {
    /// A job running `program` with no arguments, mounts or environment, the
    /// default limits and a two-minute timeout.
    pub fn new(program: impl Into<PathBuf>) -> Job {
        Job {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            mounts: Vec::new(),
            cwd: None,
            limits: Limits::default(),
            timeout: Duration::from_secs(120),
            output_cap: 16 << 20,
        }
    }

    /// A job running `program` that sees `source` read-only at
    /// [`SOURCE_DIR`] and `work` writable at [`WORK_DIR`]: the layout every
    /// job of the oracle uses, so that the paths rustc prints are the same
    /// in every run and on every machine.
    pub fn in_folders(program: impl Into<PathBuf>, source: &Path, work: &Path) -> Job {
        Job::new(program)
            .read_only(source, SOURCE_DIR)
            .read_write(work, WORK_DIR)
    }

    /// Adds a read-only mount.
    pub fn read_only(mut self, host: impl Into<PathBuf>, inside: impl Into<PathBuf>) -> Job {
        self.mounts.push(Mount {
            host: host.into(),
            inside: inside.into(),
            access: Access::ReadOnly,
        });
        self
    }

    /// Adds a writable mount (the work folder).
    pub fn read_write(mut self, host: impl Into<PathBuf>, inside: impl Into<PathBuf>) -> Job {
        self.mounts.push(Mount {
            host: host.into(),
            inside: inside.into(),
            access: Access::ReadWrite,
        });
        self
    }

    /// The inside path of `host`, if it lies under a mount (the longest
    /// matching mount wins).
    pub fn inside(&self, host: &Path) -> Option<PathBuf> {
        self.mounts
            .iter()
            .filter_map(|m| host.strip_prefix(&m.host).ok().map(|rest| (m, rest)))
            .max_by_key(|(m, _)| m.host.as_os_str().len())
            .map(|(m, rest)| {
                if rest.as_os_str().is_empty() {
                    m.inside.clone()
                } else {
                    m.inside.join(rest)
                }
            })
    }
}

/// How a job ended.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Its exit status (of the outer process when confined).
    pub status: ExitStatus,
    /// Whether it was killed at its timeout.
    pub timed_out: bool,
    /// Its standard output, up to the cap.
    pub stdout: Vec<u8>,
    /// Its standard error, up to the cap.
    pub stderr: Vec<u8>,
    /// Whether some output was dropped at the cap.
    pub truncated: bool,
    /// Wall time.
    pub elapsed: Duration,
}

impl Finished {
    /// Whether it exited with status 0 in time.
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.success()
    }

    /// Standard error as text.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// "exit status 1", "killed by signal 9", "timed out after 2s", with a
    /// hint when the signal is one that a limit sends. A confined job's
    /// signal reaches us as bubblewrap's exit status 128 + N, so such a
    /// status also names the signal it stands for ("exit status 139, as a
    /// sandbox reports SIGSEGV").
    pub fn describe(&self, job: &Job) -> String {
        use std::os::unix::process::ExitStatusExt;
        if self.timed_out {
            return format!(
                "timed out after {:?}; the whole process tree was killed",
                job.timeout
            );
        }
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => match c.checked_sub(128).filter(|s| (1..32).contains(s)) {
                Some(s) => format!(
                    "exit status {c}, as a sandbox reports {}",
                    signal_death(s, job)
                ),
                None => format!("exit status {c}"),
            },
            (None, Some(s)) => format!("killed by {}", signal_death(s, job)),
            (None, None) => self.status.to_string(),
        }
    }
}

/// Signal `s` by name, with the limit that sends it where one does.
fn signal_death(s: i32, job: &Job) -> String {
    match s {
        9 => "SIGKILL (a limit, or out of memory)".into(),
        24 => format!(
            "SIGXCPU: over its CPU limit of {} s",
            job.limits.cpu_seconds
        ),
        25 => format!(
            "SIGXFSZ: a file over the limit of {} bytes",
            job.limits.file_size
        ),
        4 => "SIGILL".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        11 => "SIGSEGV".into(),
        15 => "SIGTERM".into(),
        s => format!("signal {s}"),
    }
}

/// A deadline `timeout` from now, or none if that is past what an `Instant`
/// can hold: deadlines saturate, they never wrap.
pub fn deadline(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

fn drain(mut from: impl Read + Send + 'static, cap: usize) -> mpsc::Receiver<(Vec<u8>, bool)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut truncated = false;
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match from.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                    truncated |= n > room;
                }
            }
        }
        let _ = tx.send((kept, truncated));
    });
    rx
}

/// Spawns `cmd` (stdin closed, output piped), drains its output while it
/// runs, and on timeout calls `kill` on it. After it ends, waits a little for
/// the pipes to close: a process that escaped the kill and keeps a pipe open
/// loses its output, never blocks the caller.
pub(crate) fn execute(
    mut cmd: Command,
    job: &Job,
    kill: impl Fn(&mut Child),
) -> Result<Finished, SandboxError> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SandboxError::Spawn {
            program: job.program.display().to_string(),
            source,
        })?;
    let out = child.stdout.take().map(|o| drain(o, job.output_cap));
    let err = child.stderr.take().map(|e| drain(e, job.output_cap));
    let end = deadline(job.timeout);
    let mut timed_out = false;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if end.is_some_and(|e| Instant::now() >= e) => {
                timed_out = true;
                kill(&mut child);
                match child.wait() {
                    Ok(s) => break s,
                    Err(source) => {
                        return Err(SandboxError::Spawn {
                            program: job.program.display().to_string(),
                            source,
                        });
                    }
                }
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(source) => {
                kill(&mut child);
                return Err(SandboxError::Spawn {
                    program: job.program.display().to_string(),
                    source,
                });
            }
        }
    };
    let grace = Duration::from_secs(2);
    let collect = |rx: Option<mpsc::Receiver<(Vec<u8>, bool)>>| {
        rx.and_then(|r| r.recv_timeout(grace).ok())
            .unwrap_or((Vec::new(), false))
    };
    let (stdout, t1) = collect(out);
    let (stderr, t2) = collect(err);
    Ok(Finished {
        status,
        timed_out,
        stdout,
        stderr,
        truncated: t1 || t2,
        elapsed: start.elapsed(),
    })
}

#[cfg(test)]
mod describe_tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;
    use std::time::Duration;

    use super::*;

    fn finished(raw: i32) -> Finished {
        Finished {
            status: ExitStatus::from_raw(raw),
            timed_out: false,
            stdout: Vec::new(),
            stderr: Vec::new(),
            truncated: false,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn statuses_and_signals_are_named() {
        let job = Job::new("/bin/true");
        // Raw wait statuses: an exit code sits in the second byte.
        assert_eq!(finished(1 << 8).describe(&job), "exit status 1");
        assert_eq!(
            finished(139 << 8).describe(&job),
            "exit status 139, as a sandbox reports SIGSEGV"
        );
        assert!(
            finished(152 << 8)
                .describe(&job)
                .contains("SIGXCPU: over its CPU limit of 600 s"),
        );
        assert_eq!(finished(11).describe(&job), "killed by SIGSEGV");
        assert_eq!(
            finished(9).describe(&job),
            "killed by SIGKILL (a limit, or out of memory)"
        );
        assert_eq!(finished(200 << 8).describe(&job), "exit status 200");
    }
}
