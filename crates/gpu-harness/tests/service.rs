//! The oracle as a service, driven by its real client over loopback:
//!
//! - (the whole suite remotely against the same local run as the oracle's,
//!   and from the cache the second time, is `suite.rs`);
//! - changing one fixture's grid runs that fixture again, and only it,
//!   reusing its host build;
//! - `gpu-harness serve` killed with SIGKILL, jobs queued and running,
//!   finishes every accepted job after a restart;
//! - a kernel writing files stays confined, and a manifest that tries to
//!   inject code is refused, through the service as through `run`; each
//!   job's progress names its stages as they finish.

#![allow(clippy::unwrap_used)]

mod service_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_harness::cache::{ResultCache, Toolchain};
use gpu_harness::pipeline::Options;
use gpu_harness::remote::OracleRunner;
use gpu_harness::report::{FixtureReport, Verdict};
use oracle_service::client::Client;
use oracle_service::server::{Config, start};
use service_support::*;

/// Copies fixture `name` into `root`, with `edit` applied to its manifest.
fn copy_fixture(root: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let from = fixtures().join(name);
    let to = root.join(name);
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        let text = std::fs::read_to_string(e.path()).unwrap();
        let text = if e.file_name() == "manifest.toml" {
            edit(&text)
        } else {
            text
        };
        std::fs::write(to.join(e.file_name()), text).unwrap();
    }
    to
}

#[test]
fn changing_one_fixtures_grid_runs_only_that_fixture_again() {
    let Some(sb) = sandbox::testing::confined_or_not_run() else {
        return;
    };
    if nvvm_emit::testing::libnvvm_or_skip("changing_one_fixtures_grid").is_none() {
        return;
    }
    let root = scratch("grid");
    let keep = |m: &str| m.to_owned();
    let a = copy_fixture(&root, "saxpy", keep);
    let b = copy_fixture(&root, "shared_reduction", keep);
    let cache =
        Arc::new(ResultCache::open(root.join("cache"), Toolchain::detect().unwrap()).unwrap());
    let o = Options {
        cache: Some(cache),
        ..opts(sb)
    };
    let dirs = [a.clone(), b.clone()];
    let first = gpu_harness::run::run_all(&dirs, &o, 1, false);
    assert!(first.all_passed(), "{}", first.table());
    // saxpy on one block of 256 threads instead of two of 128.
    copy_fixture(&root, "saxpy", |m| {
        m.replace("grid = [2, 1]", "grid = [1, 1]")
            .replace("block = [128, 1]", "block = [256, 1]")
    });
    let second = gpu_harness::run::run_all(&dirs, &o, 1, false);
    assert!(second.all_passed(), "{}", second.table());
    let by = |n: &str| second.fixtures.iter().find(|f| f.name == n).unwrap();
    assert!(!by("saxpy").cached, "the changed fixture runs again");
    assert!(by("shared_reduction").cached, "the unchanged one is cached");
    // Its host program holds no number of the manifest: the build is reused.
    let host = by("saxpy").stage("host").unwrap();
    assert!(host.detail.contains("build reused"), "{host:?}");
    let first_host = first.fixtures.iter().find(|f| f.name == "saxpy").unwrap();
    assert!(!first_host.stage("host").unwrap().detail.contains("reused"));
    // A new scalar too reaches the reused build (a stale `a` would make
    // the host's values differ from the device's).
    copy_fixture(&root, "saxpy", |m| {
        m.replace("{ f32 = 2.0 }", "{ f32 = 3.0 }")
    });
    let third = gpu_harness::run::run_all(&dirs[..1], &o, 1, false);
    assert!(third.all_passed(), "{}", third.table());
    let host = third.fixtures[0].stage("host").unwrap();
    assert!(host.detail.contains("build reused"), "{host:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// `gpu-harness serve` as a child process.
fn serve(state: &Path, tokens: &Path, cache: &Path, port: u16) -> Child {
    Command::new(env!("CARGO_BIN_EXE_gpu-harness"))
        .args(["serve", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--state")
        .arg(state)
        .arg("--tokens")
        .arg(tokens)
        .arg("--cache-dir")
        .arg(cache)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_healthy(client: &Client) {
    let start = Instant::now();
    while client.health().is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the service never answered"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_killed_service_finishes_every_accepted_job_after_a_restart() {
    if sandbox::testing::confined_or_not_run().is_none() {
        return;
    }
    if nvvm_emit::testing::libnvvm_or_skip("a_killed_service").is_none() {
        return;
    }
    let root = scratch("kill");
    let tokens = root.join("tokens");
    std::fs::write(&tokens, format!("ci:{TOKEN}\n")).unwrap();
    let (state, cache) = (root.join("state"), root.join("cache"));
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let client = Client::new(&url, TOKEN);
    let mut child = serve(&state, &tokens, &cache, port);
    wait_healthy(&client);
    let names = [
        "saxpy",
        "shared_reduction",
        "atomic_flag",
        "promoted_ref_return",
    ];
    let ids: Vec<u64> = names
        .iter()
        .map(|n| {
            let req = oracle_service::client::request_from_dir(&fixtures().join(n)).unwrap();
            client.submit(&req).unwrap().id
        })
        .collect();
    // Kill it once a job is running and others wait.
    let start = Instant::now();
    loop {
        let h = client.health().unwrap();
        if h.running >= 1 {
            assert!(h.queued >= 1, "{h:?}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no job started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let mut child = serve(&state, &tokens, &cache, port);
    wait_healthy(&client);
    for (n, id) in names.iter().zip(&ids) {
        let view = client
            .wait(*id, Duration::from_millis(100), Duration::from_secs(600))
            .unwrap();
        let report: FixtureReport = serde_json::from_value(view.report.unwrap()).unwrap();
        assert_eq!(report.name, *n);
        assert_eq!(report.verdict, Verdict::Pass, "{n}: {report:?}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn hostile_jobs_are_confined_or_refused_through_the_service() {
    let Some(sb) = sandbox::testing::confined_or_not_run() else {
        return;
    };
    let root = scratch("hostile");
    let svc = start(
        "127.0.0.1:0".parse().unwrap(),
        Config::new(root.join("state"), tokens()),
        Arc::new(OracleRunner::new(opts(sb))),
    )
    .unwrap();
    let client = Client::new(&svc.url(), TOKEN);
    let victim = root.join("pwned");
    let kernel = format!(
        "use crate::gpu::*;\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) {{\n\
         \x20   #[cfg(not(gpu_device))]\n\
         \x20   {{ let _ = std::fs::write({:?}, b\"x\"); }}\n\
         \x20   let i = global_idx_x() as usize;\n\
         \x20   if i < out.len() {{ out.set(i, i as u32); }}\n\
         }}\n",
        victim.display().to_string()
    );
    let manifest = "[[buffer]]\nname = \"out\"\nty = \"u32\"\nlen = 4\nreadback = 4\n\n\
                    [[launch]]\nkernel = \"k\"\ngrid = [1, 1]\nblock = [4, 1]\n\
                    args = [{ buffer = \"out\" }]\n";
    let job = |name: &str, manifest: &str| oracle_service::api::JobRequest {
        name: name.into(),
        files: [
            ("kernel.rs".to_owned(), kernel.clone()),
            ("manifest.toml".to_owned(), manifest.to_owned()),
        ]
        .into(),
    };
    let wait = |name: &str, manifest: &str| -> FixtureReport {
        let id = client.submit(&job(name, manifest)).unwrap().id;
        let view = client
            .wait(id, Duration::from_millis(50), Duration::from_secs(600))
            .unwrap();
        let report: FixtureReport = serde_json::from_value(view.report.unwrap()).unwrap();
        // The job's progress named each stage as it finished.
        let progress: Vec<&str> = view.progress.iter().map(|p| p.name.as_str()).collect();
        let stages: Vec<&str> = report.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(progress, stages, "{name}");
        report
    };
    // The host run writes nowhere outside its sandbox.
    let _ = wait("writes_file", manifest);
    assert!(!victim.exists(), "a kernel wrote outside the sandbox");
    // A buffer name that is code is refused before anything runs.
    let evil = manifest.replace(
        "\"out\"",
        "\"y: Vec<f32> = { std::fs::write(\\\"/tmp/x\\\", b\\\"x\\\").ok(); vec![] }; let mut b_z\"",
    );
    let r = wait("injects", &evil);
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(
        r.stage("manifest")
            .is_some_and(|s| s.detail.contains("not an identifier")),
        "{r:?}"
    );
    svc.stop();
    let _ = std::fs::remove_dir_all(&root);
}

/// A remote report that differs from the local one is explained by the
/// stage that differs, with its detail (a crashed host run's stderr), and
/// by the values that differ: not by two whole reports.
#[test]
fn a_difference_names_the_stage_its_detail_and_the_values() {
    use gpu_harness::report::{FailureKind, FixtureReport, Stage, StageStatus, ValueReport};
    let stage = |status, kind, detail: &str| Stage {
        name: "host".into(),
        status,
        kind,
        millis: 1.0,
        detail: detail.into(),
    };
    let value = |got: &str| ValueReport {
        buffer: "out".into(),
        index: 3,
        expected: "7".into(),
        got: got.into(),
        ok: got == "7",
        within: None,
        device: None,
    };
    let local = FixtureReport::new(
        "k".into(),
        vec![stage(StageStatus::Ok, None, "built")],
        vec![value("7"), value("7")],
    );
    let remote = FixtureReport::new(
        "k".into(),
        vec![stage(
            StageStatus::Failed,
            Some(FailureKind::HostRun),
            "exit status 139, as a sandbox reports SIGSEGV",
        )],
        Vec::new(),
    );
    let text = difference(&local, &remote);
    assert!(text.contains("stage host"), "{text}");
    assert!(text.contains("SIGSEGV"), "{text}");
    assert!(text.contains("2 of 2 / 0 values differ"), "{text}");
    assert_eq!(
        difference(&local, &local),
        "k: Pass against Pass",
        "equal reports"
    );
}
