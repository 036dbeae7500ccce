//! The time bound on a litmus check (`Deadline`, `--timeout`): a test past
//! it stops soon after with a `Timeout` and how far the search got, never a
//! verdict, and the other tests of a run go on unchanged.
//!
//! The slow test lives in `tests/litmus-slow/`, not `tests/litmus/`, so that
//! runs over `tests/litmus/` (tests/cli.rs) stay fast.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ptx_litmus::budget::Stage;
use ptx_litmus::corpus::{self, Summary};
use ptx_litmus::expect::Expected;
use ptx_litmus::{Deadline, NoVerdict, Options, Timeout, Verdict, check_text_within};

/// Five threads each storing once to `x` and once to `y`: 4,231 coherence
/// orders per location, 17.9 million candidates (13.7 s in release mode).
fn slow_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/litmus-slow/five-writers.litmus")
}

fn fast_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/litmus/{name}.litmus"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks `text` under `limit`; returns the timeout and the wall time taken.
fn timed_out(text: &str, limit: Duration) -> (Timeout, Duration) {
    let start = Instant::now();
    let result = check_text_within(text, &Options::default(), &Deadline::after(limit));
    let wall = start.elapsed();
    match result {
        Err(NoVerdict::Timeout(t)) => (t, wall),
        Ok(o) => panic!("a verdict within {limit:?}: {}", o.line()),
        Err(NoVerdict::Error(e)) => panic!("an error, not a timeout: {e}"),
    }
}

#[test]
fn a_slow_test_stops_with_a_timeout_soon_after_the_bound() {
    let text = read(&slow_path());
    let limit = Duration::from_millis(100);
    let (t, wall) = timed_out(&text, limit);
    assert!(wall >= limit, "{wall:?}");
    // A small multiple of the bound, with room for a loaded debug build.
    assert!(wall < limit * 5, "stopped only after {wall:?}");
    assert_eq!(t.name, "five-writers");
    assert_eq!(t.stage, Stage::Candidates, "{t}");
    assert!((t.limit_millis - 100.0).abs() < 1e-9, "{t}");
    assert!(t.elapsed_millis >= 100.0, "{t}");
    // How far it got: the domains converged, the one path combination was
    // entered, and some candidates (far from all 17.9 million) were examined.
    assert!(t.progress.domain_rounds > 0, "{t}");
    assert_eq!(
        (t.progress.combinations, t.progress.combinations_total),
        (1, Some(1)),
        "{t}"
    );
    assert!(
        t.progress.candidates > 0 && t.progress.candidates < 17_901_361,
        "{t}"
    );
    assert!(
        t.to_string()
            .starts_with("timeout: no verdict within 100 ms")
    );
}

#[test]
fn the_slow_test_really_takes_more_than_a_second_unbounded() {
    // A one-second bound that runs out proves the unbounded check takes
    // longer (13.7 s in release mode, far more in a debug build), without
    // spending that time here.
    let (t, wall) = timed_out(&read(&slow_path()), Duration::from_secs(1));
    assert!(wall < Duration::from_secs(5), "stopped only after {wall:?}");
    assert!(t.progress.candidates > 0, "{t}");
}

#[test]
fn a_zero_bound_never_gives_a_verdict_even_for_a_fast_test() {
    // The bound is checked before the first candidate: no verdict can come
    // from a check whose time is already up.
    let (t, _) = timed_out(&read(&fast_path("MP-rel-acq")), Duration::ZERO);
    assert_eq!(t.stage, Stage::Domains, "{t}");
    assert_eq!(t.progress.candidates, 0, "{t}");
}

#[test]
fn tests_within_the_bound_get_the_same_verdicts() {
    for name in ["MP-rel-acq", "CoWW-final", "LB-ctrl"] {
        let text = read(&fast_path(name));
        let bounded = check_text_within(
            &text,
            &Options::default(),
            &Deadline::after(Duration::from_secs(30)),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let unbounded = check_text_within(&text, &Options::default(), &Deadline::none())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(bounded.verdict, Verdict::Forbidden, "{name}");
        assert_eq!(
            (bounded.verdict, bounded.candidates, bounded.consistent),
            (
                unbounded.verdict,
                unbounded.candidates,
                unbounded.consistent
            ),
            "{name}"
        );
    }
}

#[test]
fn a_run_goes_on_after_a_timeout_and_counts_it_as_a_disagreement() {
    let files = vec![slow_path(), fast_path("MP-rel-acq")];
    let expected = Expected::parse("five-writers.litmus,1\nMP-rel-acq.litmus,0\n").expect("CSV");
    let start = Instant::now();
    let results = corpus::run_within(
        &files,
        &Options::default(),
        Some(Duration::from_millis(200)),
        Some(&expected),
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let t = results[0].timeout().expect("the slow test times out");
    assert_eq!(t.name, "five-writers");
    assert!(
        results[0].disagrees(),
        "a timeout has no verdict to agree with"
    );
    let fast = results[1]
        .outcome
        .as_ref()
        .expect("the fast test is checked");
    assert_eq!(fast.verdict, Verdict::Forbidden);
    assert!(!results[1].disagrees());
    let summary = Summary::of(&results, true);
    assert_eq!(
        (
            summary.checked,
            summary.errors,
            summary.timed_out,
            summary.agree,
            summary.disagree
        ),
        (1, 0, 1, 1, 1)
    );
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptx-litmus"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_reports_a_timeout_in_the_table_and_in_json() {
    let slow = slow_path();
    let fast = fast_path("MP-rel-acq");
    let (slow, fast) = (
        slow.to_str().expect("utf-8 path"),
        fast.to_str().expect("utf-8 path"),
    );

    let start = Instant::now();
    let (code, stdout, stderr) = cli(&[slow, fast, "--timeout", "0.3", "--json"]);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(code, 1, "a timeout fails the run: {stdout}{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let tests = doc["tests"].as_array().expect("a list of tests");
    assert_eq!(tests.len(), 2);
    // The run sorts its files; find each by its path.
    let by_path = |tail: &str| {
        tests
            .iter()
            .find(|t| t["path"].as_str().is_some_and(|p| p.ends_with(tail)))
            .unwrap_or_else(|| panic!("no {tail} in {stdout}"))
    };
    let t = &by_path("five-writers.litmus")["outcome"]["Timeout"];
    assert_eq!(t["name"], "five-writers", "{t}");
    assert_eq!(t["stage"], "Candidates", "{t}");
    assert!(
        t["elapsed_millis"].as_f64().is_some_and(|ms| ms >= 300.0),
        "{t}"
    );
    assert!(
        t["progress"]["candidates"].as_u64().is_some_and(|n| n > 0),
        "{t}"
    );
    assert_eq!(
        by_path("MP-rel-acq.litmus")["outcome"]["Ok"]["verdict"],
        "Forbidden"
    );
    assert_eq!(doc["summary"]["timed_out"], 1);
    assert_eq!(doc["summary"]["checked"], 1);
    assert_eq!(doc["summary"]["errors"], 0);

    // Text, with a recorded verdict for the slow test: it disagrees.
    let csv = std::env::temp_dir().join(format!("mm-timeout-{}.csv", std::process::id()));
    std::fs::write(&csv, "five-writers.litmus,1\nMP-rel-acq.litmus,0\n").expect("temp dir");
    let csv_arg = csv.to_str().expect("utf-8 path");
    let (code, stdout, _) = cli(&[slow, fast, "--timeout", "0.3", "--expect", csv_arg]);
    let _ = std::fs::remove_file(&csv);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("five-writers") && l.contains(" timeout ")),
        "{stdout}"
    );
    assert!(
        stdout.contains("timeout: no verdict within 300 ms"),
        "{stdout}"
    );
    assert!(
        stdout.contains("DISAGREES: no verdict, Dat3M records 1"),
        "{stdout}"
    );
    assert!(stdout.contains("1 timed out"), "{stdout}");
    assert!(stdout.contains("1 agree and 1 disagree"), "{stdout}");

    let (code, _, stderr) = cli(&[fast, "--timeout", "0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("positive number of seconds"), "{stderr}");
}
