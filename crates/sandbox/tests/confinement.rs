//! Hostile jobs under the confined sandbox: each shows that something is
//! *not* reachable or does *not* outlive the job, and each is paired with the
//! same job unconfined, where the effect happens, so that a sandbox switched
//! off fails the test.
//!
//! Without bubblewrap these tests print NOT RUN, unless `REQUIRE_SANDBOX=1`
//! (set by `ci/test.sh`), where a missing sandbox fails.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sandbox::{Job, Sandbox};

fn confined() -> Option<Sandbox> {
    sandbox::testing::confined_or_not_run()
}

fn unconfined() -> Sandbox {
    Sandbox::unconfined().expect("a Rust toolchain")
}

/// A fresh scratch folder, removed by the test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sandbox-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn sh(work: &Path, script: &str) -> Job {
    let mut j = Job::new("/bin/sh").read_write(work, "/work");
    j.args = vec!["-c".into(), script.into()];
    j.cwd = Some(work.to_path_buf());
    j.timeout = Duration::from_secs(20);
    j
}

#[test]
fn writes_outside_the_work_folder_do_not_land() {
    let Some(sb) = confined() else { return };
    let work = scratch("write");
    let victim = std::env::temp_dir().join(format!("sandbox-victim-{}", std::process::id()));
    let _ = std::fs::remove_file(&victim);
    let script = format!("echo pwned > {}; echo ok > /work/inside", victim.display());
    let done = sb.run(&sh(&work, &script)).expect("runs");
    assert!(!victim.exists(), "confined job wrote {}", victim.display());
    assert!(
        work.join("inside").exists(),
        "the work folder must stay writable: {}",
        done.stderr_text()
    );
    // Unconfined, the same job does write: the assertion above can fail.
    unconfined().run(&sh(&work, &script)).expect("runs");
    assert!(victim.exists());
    let _ = std::fs::remove_file(&victim);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn etc_and_home_folders_are_not_visible() {
    let Some(sb) = confined() else { return };
    let work = scratch("read");
    let script = "cat /etc/os-release /etc/passwd; ls /root; echo done";
    let done = sb.run(&sh(&work, script)).expect("runs");
    let out = String::from_utf8_lossy(&done.stdout);
    assert!(!out.contains("ID="), "read /etc/os-release: {out}");
    assert!(!out.contains("root:x:0"), "read /etc/passwd: {out}");
    let open = unconfined().run(&sh(&work, script)).expect("runs");
    assert!(String::from_utf8_lossy(&open.stdout).contains("ID="));
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn the_environment_is_empty_but_for_the_job_s_own() {
    let Some(sb) = confined() else { return };
    let work = scratch("env");
    // SAFETY: no other thread of this test binary reads this variable.
    unsafe { std::env::set_var("SANDBOX_TEST_SECRET", "hunter2") };
    let mut job = sh(&work, "env");
    job.env = vec![("ONLY".into(), "this".into())];
    let done = sb.run(&job).expect("runs");
    let out = String::from_utf8_lossy(&done.stdout);
    assert!(out.contains("ONLY=this"), "{out}");
    assert!(!out.contains("hunter2") && !out.contains("HOME="), "{out}");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn no_network_but_loopback() {
    let Some(sb) = confined() else { return };
    let work = scratch("net");
    // A listener on the host's loopback that the job tries to reach.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected; cat /proc/net/dev | grep -c :"
    );
    let mut job = sh(&work, &script);
    job.program = "/bin/bash".into();
    let done = sb.run(&job).expect("runs");
    assert!(
        listener.accept().is_err(),
        "the confined job reached the host's loopback"
    );
    let out = String::from_utf8_lossy(&done.stdout);
    assert!(!out.contains("connected"), "{out}");
    // Only `lo` in the job's network namespace.
    assert_eq!(out.trim(), "1", "interfaces seen: {out}");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_timeout_kills_grandchildren_that_hold_the_pipe() {
    let Some(sb) = confined() else { return };
    let work = scratch("grandchild");
    let marker = work.join("late");
    // The grandchild keeps stdout open and would write a file after 3 s.
    let mut job = sh(&work, "(sleep 3; echo late > /work/late) & sleep 300");
    job.timeout = Duration::from_millis(500);
    let start = Instant::now();
    let done = sb.run(&job).expect("runs");
    assert!(done.timed_out);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "held for {:?}",
        start.elapsed()
    );
    std::thread::sleep(Duration::from_secs(4));
    assert!(!marker.exists(), "a grandchild outlived the job");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_fork_bomb_is_contained_and_killed() {
    let Some(sb) = confined() else { return };
    let work = scratch("bomb");
    let mut job = sh(&work, "b() { b | b & }; b");
    job.program = "/bin/bash".into();
    job.args = vec!["-c".into(), "b() { b | b & }; b; sleep 60".into()];
    job.limits.processes = 64;
    job.timeout = Duration::from_secs(3);
    let start = Instant::now();
    let done = sb.run(&job).expect("runs");
    assert!(done.timed_out || !done.success());
    assert!(start.elapsed() < Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn large_output_never_blocks_and_is_capped() {
    let Some(sb) = confined() else { return };
    let work = scratch("output");
    let mut job = sh(&work, "head -c 3000000 /dev/zero");
    job.output_cap = 1 << 20;
    let done = sb.run(&job).expect("runs");
    assert!(done.success(), "{}", done.describe(&job));
    assert_eq!(done.stdout.len(), 1 << 20);
    assert!(done.truncated);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_huge_timeout_saturates() {
    let Some(sb) = confined() else { return };
    let work = scratch("huge");
    let mut job = sh(&work, "echo hi");
    job.timeout = Duration::from_secs(u64::MAX);
    let done = sb.run(&job).expect("runs");
    assert!(done.success(), "{}", done.describe(&job));
    assert_eq!(String::from_utf8_lossy(&done.stdout).trim(), "hi");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn rustc_builds_and_runs_inside() {
    let Some(sb) = confined() else { return };
    let work = scratch("rustc");
    std::fs::write(work.join("m.rs"), "fn main() { println!(\"{}\", 6 * 7); }").expect("write");
    let mut build = Job::new(sb.rustc()).read_write(&work, "/work");
    build.cwd = Some(work.clone());
    build.args = ["--edition", "2024", "m.rs", "-o", "m", "-C"]
        .map(Into::into)
        .to_vec();
    build
        .args
        .push(format!("linker={}", sb.linker().display()).into());
    let done = sb.run(&build).expect("runs");
    assert!(
        done.success(),
        "{}: {}",
        done.describe(&build),
        done.stderr_text()
    );
    let mut run = Job::new(sb.path_in(&build, &work.join("m"))).read_write(&work, "/work");
    run.cwd = Some(work.clone());
    let out = sb.run(&run).expect("runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
    let _ = std::fs::remove_dir_all(&work);
}
