//! The whole suite, run locally once for this test binary, and read twice:
//!
//! - the oracle: every fixture passes the whole pipeline on the virtual
//!   device, with expected values from the native host run, and every
//!   fixture not named `race_*` is race-free there (the IR device detects
//!   races on every launch);
//! - the service, driven by its real client over loopback: every fixture
//!   gives the same report remotely as in that local run (timings and the
//!   run's own temporary paths aside), and a second remote run, with
//!   nothing changed, comes wholly from the result cache (the figure, first
//!   run against second, is printed: speed is for the note, not an
//!   assertion).
//!
//! One local run serves both (it was two, one per test binary: some 75 s of
//! CI).

#![allow(clippy::unwrap_used)]

mod service_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gpu_harness::cache::{ResultCache, Toolchain};
use gpu_harness::pipeline::Options;
use gpu_harness::remote::{OracleRunner, run_remote};
use gpu_harness::report::{Report, StageStatus};
use gpu_harness::run::run_all;
use oracle_service::client::Client;
use oracle_service::server::{Config, start};
use service_support::*;

fn fixture_dirs() -> Vec<PathBuf> {
    gpu_harness::fixture::Fixture::discover(&fixtures()).expect("fixtures")
}

/// Every fixture, run locally once (2 threads), with the sandbox the
/// platform has, as `run` does.
fn local_suite() -> &'static Report {
    static RUN: OnceLock<Report> = OnceLock::new();
    RUN.get_or_init(|| {
        let o = Options {
            require_libnvvm: nvvm_emit::testing::libnvvm_required(),
            ..Options::default()
        };
        run_all(&fixture_dirs(), &o, 2, false)
    })
}

#[test]
fn every_fixture_passes_on_the_virtual_device() {
    let dirs = fixture_dirs();
    assert!(dirs.len() >= 10, "{} fixtures", dirs.len());
    let report = local_suite();
    eprintln!("{}", report.table());
    assert!(report.all_passed(), "{}", report.table());
    // An unexpected race is a fixture's own verdict (`oracle.rs`), so
    // passing is being race-free; the kernels the race detector was first
    // checked on are among those that ran.
    for must in ["atomic_flag", "shared_reduction", "saxpy"] {
        assert!(
            report.fixtures.iter().any(|f| f.name == must),
            "{must} did not run"
        );
    }
    let values: usize = report.fixtures.iter().map(|f| f.values.len()).sum();
    assert!(values > 300, "only {values} values were compared");
    let trapping: Vec<String> = dirs
        .iter()
        .filter_map(|d| gpu_harness::fixture::Fixture::load(d).ok())
        .filter(|f| f.manifest.expect_trap)
        .map(|f| f.name)
        .collect();
    assert!(!trapping.is_empty(), "no fixture expects a trap");
    for f in &report.fixtures {
        let refused = f.name.starts_with("error_");
        let racy = f.name.starts_with("race_");
        let traps = trapping.contains(&f.name);
        let device = f.stage("device");
        let host = f.stage("host").map(|s| s.status);
        if refused {
            // A refused kernel never runs, on the device or on the host.
            assert_eq!(
                device.map(|s| s.status),
                Some(StageStatus::Skipped),
                "{}",
                f.name
            );
            assert_eq!(host, Some(StageStatus::Skipped), "{}", f.name);
        } else if racy {
            let device = device.expect("a device stage");
            assert_eq!(device.status, StageStatus::Ok, "{}", f.name);
            assert!(
                device.detail.contains("data race"),
                "{}: {}",
                f.name,
                device.detail
            );
            assert!(
                f.values.is_empty(),
                "{}: a racy kernel's values were compared",
                f.name
            );
        } else if traps {
            // The trap is each stage's pass; nothing is read back after it.
            assert_eq!(host, Some(StageStatus::Ok), "{}", f.name);
            let device = device.expect("a device stage");
            assert!(device.detail.contains("trapped"), "{}", f.name);
            assert!(f.values.is_empty(), "{}", f.name);
        } else {
            assert_eq!(
                device.map(|s| s.status),
                Some(StageStatus::Ok),
                "{}",
                f.name
            );
            assert!(f.values.iter().all(|v| v.ok), "{}", f.name);
            assert!(!f.values.is_empty(), "{} compared no value", f.name);
            assert_eq!(host, Some(StageStatus::Ok), "{}", f.name);
        }
    }
}

#[test]
fn remote_reports_equal_local_ones_and_the_cache_answers_the_second_run() {
    let Some(sb) = sandbox::testing::confined_or_not_run() else {
        return;
    };
    if nvvm_emit::testing::libnvvm_or_skip("remote_reports_equal_local_ones").is_none() {
        return;
    }
    let root = scratch("suite");
    // The suite, but of the kernels on crates.io dependencies only
    // `siphash_vectors` (the service's dependency builds, compared too):
    // libm and sha2 take minutes of this test's two remote runs, and the
    // local run above runs them.
    let (dirs, left_out): (Vec<PathBuf>, Vec<PathBuf>) =
        fixture_dirs().into_iter().partition(|d| {
            let f = gpu_harness::fixture::Fixture::load(d).unwrap();
            f.manifest.dependencies.is_empty() || d.ends_with("siphash_vectors")
        });
    assert!(dirs.iter().any(|d| d.ends_with("siphash_vectors")));
    eprintln!(
        "service: left out (the oracle's tests run them): {:?}",
        left_out
            .iter()
            .filter_map(|d| d.file_name())
            .collect::<Vec<_>>()
    );
    // The local reports of those fixtures, in their order.
    let by_name: BTreeMap<&str, &gpu_harness::report::FixtureReport> = local_suite()
        .fixtures
        .iter()
        .map(|f| (f.name.as_str(), f))
        .collect();
    let local: Vec<&gpu_harness::report::FixtureReport> = dirs
        .iter()
        .map(|d| {
            let name = d.file_name().and_then(|n| n.to_str()).unwrap();
            by_name[name]
        })
        .collect();

    let cache = ResultCache::open(root.join("cache"), Toolchain::detect().unwrap()).unwrap();
    let runner = OracleRunner::new(Options {
        cache: Some(Arc::new(cache)),
        ..opts(sb)
    });
    let mut config = Config::new(root.join("state"), tokens());
    config.workers = 2;
    let svc = start("127.0.0.1:0".parse().unwrap(), config, Arc::new(runner)).unwrap();
    let client = Client::new(&svc.url(), TOKEN);
    let deadline = Duration::from_secs(1800);

    let t0 = Instant::now();
    let first = run_remote(&client, &dirs, deadline, &mut |_| {});
    let first_time = t0.elapsed();
    assert_eq!(first.fixtures.len(), local.len());
    for (l, r) in local.iter().zip(&first.fixtures) {
        assert!(!r.cached, "{}: cached on the first run", r.name);
        assert!(
            essence(l) == essence(r),
            "remote differs from local: {}",
            difference(l, r)
        );
    }
    assert_eq!(
        first.all_passed(),
        local
            .iter()
            .all(|f| f.verdict == gpu_harness::report::Verdict::Pass)
    );

    let t1 = Instant::now();
    let second = run_remote(&client, &dirs, deadline, &mut |_| {});
    let second_time = t1.elapsed();
    for (a, b) in first.fixtures.iter().zip(&second.fixtures) {
        assert!(
            essence(a) == essence(b),
            "the second remote run differs from the first: {}",
            difference(a, b)
        );
        // Every report that another run would repeat is served from the
        // cache; the rest (none in the project's suite) run again.
        assert_eq!(
            b.cached,
            gpu_harness::cache::cacheable(a),
            "{}: cached {} on the second run",
            a.name,
            b.cached
        );
    }
    let cached = second.fixtures.iter().filter(|f| f.cached).count();
    assert_eq!(
        cached,
        second.fixtures.len(),
        "the whole suite is cacheable"
    );
    eprintln!(
        "service: {} fixtures; first run {:.1} s, second (cached) {:.3} s = {:.2}% of the first",
        dirs.len(),
        first_time.as_secs_f64(),
        second_time.as_secs_f64(),
        100.0 * second_time.as_secs_f64() / first_time.as_secs_f64()
    );
    svc.stop();
    let _ = std::fs::remove_dir_all(&root);
}
