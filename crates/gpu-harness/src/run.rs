//! Running many fixtures in parallel (rayon). A fixture that fails, panics or
//! hangs is reported and never stops the others: each runs on its own thread
//! under a deadline, inside `catch_unwind`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::fixture::Fixture;
use crate::pipeline::{Options, run_fixture};
use crate::report::{FailureKind, FixtureReport, Report};

/// Runs one fixture folder, isolating panics and hangs; with a result cache
/// in `opts`, an unchanged fixture's report comes from the cache, and a new
/// report that another run would repeat goes into it.
pub fn run_isolated(dir: &Path, opts: &Options) -> FixtureReport {
    let Some(cache) = &opts.cache else {
        return run_uncached(dir, opts);
    };
    let key = match cache.key(dir, &opts.identity()) {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!("{}: not cached: {e}", dir.display());
            return run_uncached(dir, opts);
        }
    };
    if let Some(report) = cache.get(&key) {
        return report;
    }
    let report = run_uncached(dir, opts);
    if let Err(e) = cache.put(&key, &report) {
        tracing::warn!("{}: the report was not cached: {e}", dir.display());
    }
    report
}

/// Runs one fixture folder, isolating panics and hangs.
fn run_uncached(dir: &Path, opts: &Options) -> FixtureReport {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string();
    let fixture = match Fixture::load(dir) {
        Ok(f) => f,
        Err(e) => return FixtureReport::rejected(name, e.to_string()),
    };
    // The whole pipeline's deadline: well past the manifest's per-run limit
    // (saturating: a huge `timeout_s` means no deadline, never a short one).
    let per_run = fixture.manifest.host_timeout();
    let timeout = opts.fixture_timeout.unwrap_or_else(|| {
        per_run
            .saturating_mul(3)
            .saturating_add(Duration::from_secs(60))
    });
    let (tx, rx) = mpsc::channel();
    let opts2 = opts.clone();
    let f2 = fixture.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("fixture-{name}"))
        .spawn(move || {
            let r =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_fixture(&f2, &opts2)));
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return FixtureReport::crashed(
            name,
            FailureKind::Panic,
            format!("cannot start a thread: {e}"),
        );
    }
    let received = match Instant::now().checked_add(timeout) {
        Some(_) => rx.recv_timeout(timeout),
        None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(Ok(report)) => report,
        Ok(Err(panic)) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            FixtureReport::crashed(
                name,
                FailureKind::Panic,
                format!("the pipeline panicked: {msg}"),
            )
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => FixtureReport::crashed(
            name,
            FailureKind::Panic,
            "the pipeline thread ended without a report".into(),
        ),
        // The hung thread is left behind; the process exits without it.
        Err(mpsc::RecvTimeoutError::Timeout) => FixtureReport::crashed(
            name,
            FailureKind::Hang,
            format!("the pipeline did not finish within {timeout:?}"),
        ),
    }
}

/// Runs every fixture in `dirs` on `threads` worker threads, with a progress
/// bar when `progress` is set.
pub fn run_all(dirs: &[PathBuf], opts: &Options, threads: usize, progress: bool) -> Report {
    let start = Instant::now();
    let bar = progress.then(|| {
        let b = indicatif::ProgressBar::new(dirs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} fixtures {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build();
    let work = || -> Vec<FixtureReport> {
        dirs.par_iter()
            .map(|d| {
                let r = run_isolated(d, opts);
                if let Some(b) = &bar {
                    b.set_message(r.name.clone());
                    b.inc(1);
                }
                r
            })
            .collect()
    };
    let mut fixtures = match pool {
        Ok(p) => p.install(work),
        Err(_) => work(),
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !opts.keep_work {
        let _ = std::fs::remove_dir_all(&opts.work_dir);
    }
    fixtures.sort_by(|a, b| a.name.cmp(&b.name));
    let device = format!("{:?}", opts.device).to_lowercase();
    Report {
        device,
        threads,
        millis: start.elapsed().as_secs_f64() * 1e3,
        fixtures,
    }
}
