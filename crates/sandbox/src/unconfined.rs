//! The runner the user chose with `--unsandboxed`: the job runs directly, in
//! a process group of its own that is killed whole on timeout, with the same
//! cleared environment and the same output handling, but with the harness's
//! view of the machine and its rights.

use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::SandboxError;
use crate::job::{Finished, Job, execute};

pub(crate) fn run(job: &Job) -> Result<Finished, SandboxError> {
    let mut cmd = Command::new(&job.program);
    cmd.args(&job.args).env_clear().process_group(0);
    for (k, v) in &job.env {
        cmd.env(k, v);
    }
    if let Some(cwd) = &job.cwd {
        cmd.current_dir(cwd);
    }
    execute(cmd, job, |child| {
        // The group's id is the child's pid (process_group(0)).
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status();
        let _ = child.kill();
    })
}
