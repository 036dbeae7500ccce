//! The service over real HTTP on loopback, with a runner that echoes the
//! fixture instead of running it: every refusal has its status and code, a
//! job runs once and its report comes back, jobs are per client, and a job
//! accepted by a service that stops comes back with the next one.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oracle_service::api::{JobRequest, JobStatus};
use oracle_service::client::{Client, ClientError};
use oracle_service::server::{Config, Service, Tokens, start};
use oracle_service::{RunOutcome, Runner};

const TOKEN_A: &str = "alpha-0123456789abcdef";
const TOKEN_B: &str = "beta-0123456789abcdef0";

/// Echoes the kernel's first line as the report; sleeps `delay` first.
struct Echo {
    runs: AtomicU64,
    delay: Duration,
    seen: Mutex<Vec<String>>,
}

impl Runner for Echo {
    fn run(
        &self,
        dir: &Path,
        progress: &(dyn Fn(oracle_service::api::StageProgress) + Sync),
    ) -> RunOutcome {
        progress(oracle_service::api::StageProgress {
            name: "import".into(),
            status: "ok".into(),
            millis: 1.0,
        });
        std::thread::sleep(self.delay);
        self.runs.fetch_add(1, Ordering::SeqCst);
        let kernel = std::fs::read_to_string(dir.join("kernel.rs")).unwrap_or_default();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        self.seen.lock().unwrap().push(name.clone());
        RunOutcome {
            report: serde_json::json!({ "name": name, "verdict": "pass", "kernel": kernel }),
            verdict: "pass".into(),
            cached: false,
            stages: vec![("host".into(), 12.0)],
        }
    }
}

fn echo(delay: Duration) -> Arc<Echo> {
    Arc::new(Echo {
        runs: AtomicU64::new(0),
        delay,
        seen: Mutex::new(Vec::new()),
    })
}

fn state(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("oracle-service-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn config(dir: &Path) -> Config {
    let tokens = Tokens::parse(&format!("a:{TOKEN_A}\n# comment\nb:{TOKEN_B}\n")).unwrap();
    let mut c = Config::new(dir.to_path_buf(), tokens);
    c.max_request_bytes = 64 << 10;
    c.per_client_jobs = 3;
    c
}

fn serve(dir: &Path, runner: Arc<Echo>) -> Service {
    start("127.0.0.1:0".parse().unwrap(), config(dir), runner).unwrap()
}

fn job(name: &str, kernel: &str) -> JobRequest {
    JobRequest {
        name: name.into(),
        files: [
            ("kernel.rs".to_owned(), kernel.to_owned()),
            ("manifest.toml".to_owned(), String::new()),
        ]
        .into(),
    }
}

fn refused(r: Result<impl std::fmt::Debug, ClientError>) -> (u16, String) {
    match r {
        Err(ClientError::Refused { status, error }) => (status, error.error),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_job_runs_once_and_its_report_comes_back_to_its_client_only() {
    let dir = state("roundtrip");
    let runner = echo(Duration::ZERO);
    let svc = serve(&dir, runner.clone());
    let a = Client::new(&svc.url(), TOKEN_A);
    assert_eq!(a.health().unwrap().status, "ok");
    let view = a.submit(&job("saxpy", "// saxpy")).unwrap();
    assert_eq!(view.status, JobStatus::Queued);
    let done = a
        .wait(view.id, Duration::from_millis(20), Duration::from_secs(20))
        .unwrap();
    assert_eq!(done.verdict.as_deref(), Some("pass"));
    assert_eq!(done.progress.len(), 1);
    assert_eq!(done.progress[0].name, "import");
    assert_eq!(done.report.unwrap()["kernel"], "// saxpy");
    assert_eq!(runner.runs.load(Ordering::SeqCst), 1);
    // Client b cannot see a's job: as absent as a job that never was.
    let b = Client::new(&svc.url(), TOKEN_B);
    assert_eq!(refused(b.job(view.id)), (404, "not-found".into()));
    assert_eq!(refused(a.job(999_999)), (404, "not-found".into()));
    let metrics = ureq::get(&format!("{}/metrics", svc.url()))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(
        metrics.contains("oracle_jobs_total{verdict=\"pass\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("oracle_stage_seconds_count{stage=\"host\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("oracle_requests_refused_total{code=\"not-found\"} 2"),
        "{metrics}"
    );
    svc.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_requests_get_a_4xx_naming_the_problem_never_a_5xx() {
    let dir = state("refusals");
    let runner = echo(Duration::from_secs(2));
    let svc = serve(&dir, runner.clone());
    let url = format!("{}/v1/jobs", svc.url());
    let raw = |token: Option<&str>, body: &[u8]| -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut req = agent.post(&url).header("Content-Type", "application/json");
        if let Some(t) = token {
            req = req.header("Authorization", &format!("Bearer {t}"));
        }
        let mut r = req.send(body).unwrap();
        let status = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status} {text}: {e}"));
        (status, v["error"].as_str().unwrap().to_owned())
    };
    let good = serde_json::to_vec(&job("k", "")).unwrap();
    assert_eq!(raw(None, &good), (401, "unauthorized".into()));
    assert_eq!(
        raw(Some("not-a-token-at-all"), &good),
        (401, "unauthorized".into())
    );
    assert_eq!(raw(Some(TOKEN_A), b"{not json"), (400, "malformed".into()));
    assert_eq!(
        raw(Some(TOKEN_A), br#"{"name":"k","files":{},"extra":1}"#),
        (400, "malformed".into())
    );
    let hostile = serde_json::to_vec(&job("../../etc", "")).unwrap();
    assert_eq!(raw(Some(TOKEN_A), &hostile), (400, "invalid".into()));
    let mut traversal = job("k", "");
    traversal.files.insert("../escape.rs".into(), String::new());
    let traversal = serde_json::to_vec(&traversal).unwrap();
    assert_eq!(raw(Some(TOKEN_A), &traversal), (400, "invalid".into()));
    let huge = serde_json::to_vec(&job("k", &"x".repeat(100 << 10))).unwrap();
    assert_eq!(raw(Some(TOKEN_A), &huge), (413, "too-large".into()));
    // Three unfinished jobs per client (the runner is slow): the fourth waits.
    let a = Client::new(&svc.url(), TOKEN_A);
    for i in 0..3 {
        a.submit(&job(&format!("k{i}"), "")).unwrap();
    }
    assert_eq!(
        refused(a.submit(&job("k3", ""))),
        (429, "too-many-jobs".into())
    );
    // Another client has its own limit.
    Client::new(&svc.url(), TOKEN_B)
        .submit(&job("b0", ""))
        .unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let r = agent.get(&format!("{}/nowhere", svc.url())).call().unwrap();
    assert_eq!(r.status().as_u16(), 404);
    drop(svc);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jobs_accepted_by_a_stopped_service_run_after_a_restart() {
    let dir = state("restart");
    let slow = echo(Duration::from_millis(600));
    let svc = serve(&dir, slow.clone());
    let a = Client::new(&svc.url(), TOKEN_A);
    let ids: Vec<u64> = (0..3)
        .map(|i| {
            a.submit(&job(&format!("j{i}"), &format!("// {i}")))
                .unwrap()
                .id
        })
        .collect();
    // Let the first start, then stop the service with it running and two
    // queued.
    std::thread::sleep(Duration::from_millis(200));
    svc.stop();
    let runner = echo(Duration::ZERO);
    let svc = serve(&dir, runner.clone());
    let a = Client::new(&svc.url(), TOKEN_A);
    for (i, id) in ids.iter().enumerate() {
        let done = a
            .wait(*id, Duration::from_millis(20), Duration::from_secs(20))
            .unwrap();
        assert_eq!(done.report.unwrap()["kernel"], format!("// {i}"));
    }
    let seen = runner.seen.lock().unwrap().clone();
    assert_eq!(seen, ["j0", "j1", "j2"], "every accepted job, in order");
    svc.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
