//! The oracle behind the service (`gpu-harness serve`) and in front of it
//! (`gpu-harness run --remote`): the [`Runner`] that runs a job through
//! this pipeline, and the client side that turns jobs back into a
//! [`Report`], so a remote run prints the same table and JSON and exits
//! with the same code as a local one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use oracle_service::api::StageProgress;
use oracle_service::client::{Client, ClientError, request_from_dir};
use oracle_service::{RunOutcome, Runner};

use crate::pipeline::{Options, StageSink};
use crate::report::{FailureKind, FixtureReport, Report, Stage};
use crate::run::run_isolated;

/// Runs jobs with this process's options (device, sandbox, result cache).
pub struct OracleRunner {
    opts: Options,
}

impl OracleRunner {
    /// A runner with `opts`.
    pub fn new(opts: Options) -> OracleRunner {
        OracleRunner { opts }
    }
}

impl Runner for OracleRunner {
    fn run(&self, dir: &Path, progress: &(dyn Fn(StageProgress) + Sync)) -> RunOutcome {
        let report = run_with_progress(dir, &self.opts, progress);
        let verdict = serde_json::to_value(report.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "crash".into());
        let stages = report
            .stages
            .iter()
            .map(|s| (s.name.clone(), s.millis))
            .collect();
        let cached = report.cached;
        let report = serde_json::to_value(&report).unwrap_or_else(|e| {
            serde_json::json!({"name": report.name, "verdict": "crash", "stages": [], "values": [],
                               "error": format!("the report does not serialize: {e}")})
        });
        RunOutcome {
            report,
            verdict,
            cached,
            stages,
        }
    }
}

/// [`run_isolated`], telling `progress` each stage as it finishes. The
/// pipeline runs on a thread of its own (which a hang leaves behind), so
/// stages come through a channel that a forwarding thread drains until the
/// report is in.
fn run_with_progress(
    dir: &Path,
    opts: &Options,
    progress: &(dyn Fn(StageProgress) + Sync),
) -> FixtureReport {
    let (tx, rx) = mpsc::channel::<Stage>();
    let opts = Options {
        on_stage: Some(StageSink(std::sync::Arc::new(move |s: &Stage| {
            let _ = tx.send(s.clone());
        }))),
        ..opts.clone()
    };
    let done = AtomicBool::new(false);
    let sent = std::sync::Mutex::new(Vec::new());
    let forward = |s: Stage| {
        if let Ok(mut sent) = sent.lock() {
            sent.push(s.name.clone());
        }
        progress(StageProgress {
            name: s.name,
            status: format!("{:?}", s.status).to_lowercase(),
            millis: s.millis,
        });
    };
    let report = std::thread::scope(|scope| {
        let (done, forward) = (&done, &forward);
        scope.spawn(move || {
            while !done.load(Ordering::Acquire) {
                if let Ok(s) = rx.recv_timeout(Duration::from_millis(50)) {
                    forward(s);
                }
            }
            while let Ok(s) = rx.try_recv() {
                forward(s);
            }
        });
        let report = run_isolated(dir, &opts);
        done.store(true, Ordering::Release);
        report
    });
    // Stages the pipeline never ran (a refused manifest, a crash, a cached
    // report) are told last.
    let told = sent.lock().map(|v| v.clone()).unwrap_or_default();
    for s in report.stages.iter().filter(|s| !told.contains(&s.name)) {
        forward(s.clone());
    }
    report
}

/// A fixture the client could not get a report for, as a failed report.
fn client_failure(name: String, e: &ClientError) -> FixtureReport {
    FixtureReport::crashed(
        name,
        FailureKind::Panic,
        format!("the remote oracle gave no report: {e}"),
    )
}

fn dir_name(d: &Path) -> String {
    d.file_name().map_or_else(
        || d.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Runs `dirs` on the service behind `client`: every fixture is submitted
/// first (the service queues them), then each is awaited, for at most
/// `deadline`; `progress` is told each finished fixture's name.
pub fn run_remote(
    client: &Client,
    dirs: &[PathBuf],
    deadline: Duration,
    progress: &mut dyn FnMut(&FixtureReport),
) -> Report {
    let start = Instant::now();
    let submitted: Vec<(String, Result<u64, ClientError>)> = dirs
        .iter()
        .map(|d| {
            let id = request_from_dir(d)
                .and_then(|r| client.submit(&r))
                .map(|v| v.id);
            (dir_name(d), id)
        })
        .collect();
    let mut fixtures = Vec::new();
    for (name, id) in submitted {
        let report = match id.and_then(|id| client.wait(id, Duration::from_millis(100), deadline)) {
            Ok(view) => match view.report.map(serde_json::from_value::<FixtureReport>) {
                Some(Ok(r)) => r,
                Some(Err(e)) => FixtureReport::crashed(
                    name,
                    FailureKind::Panic,
                    format!("the remote report does not read back: {e}"),
                ),
                None => FixtureReport::crashed(
                    name,
                    FailureKind::Panic,
                    "the remote job is done without a report".into(),
                ),
            },
            Err(e) => client_failure(name, &e),
        };
        progress(&report);
        fixtures.push(report);
    }
    fixtures.sort_by(|a, b| a.name.cmp(&b.name));
    Report {
        device: "remote".into(),
        threads: 1,
        millis: start.elapsed().as_secs_f64() * 1e3,
        fixtures,
    }
}
