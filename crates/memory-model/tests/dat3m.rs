//! The Dat3M PTX litmus suite (`shared/litmus/dat3m-ptx`, read in place) as
//! extra inputs for the small model: every test in the subset that `herd`
//! reads must get Dat3M's recorded verdict, and every other test must be
//! refused with a reason (never approximated).
//!
//! Without the corpus the test fails under `REQUIRE_LITMUS_CORPUS` (which
//! `ci/test.sh` sets where `../shared` exists), and otherwise prints a loud
//! NOT RUN past the test harness's capture.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use memory_model::consistency::Variant;
use memory_model::herd;

/// The recorded verdicts in the corpus.
const RECORDED: usize = 135;

/// The tests inside `herd`'s subset, each with Dat3M's PASS bit: all six get
/// it from the small model.
const IN_SUBSET: &[(&str, bool)] = &[
    ("CoWW-R", true),
    ("CoWW-RR", true),
    ("MP-cta-gpu", true),
    ("MP-gpu", true),
    ("MP-relaxed", true),
    ("MP-sys", true),
];

fn suite() -> Option<PathBuf> {
    // The workspace sits beside `shared/`, both locally and in CI.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus/dat3m-ptx");
    if dir.join("PTXv6_0-expected.csv").exists() {
        return Some(dir);
    }
    let message = format!(
        "the Dat3M PTX corpus is not at {}: the small model's Dat3M verdicts did NOT run",
        dir.display()
    );
    assert!(
        std::env::var_os("REQUIRE_LITMUS_CORPUS").is_none(),
        "{message} (REQUIRE_LITMUS_CORPUS is set)"
    );
    // Straight to the process's stderr, past the harness's capture.
    let _ = writeln!(
        std::io::stderr(),
        "dat3m_verdicts_in_the_subset: NOT RUN: {message}"
    );
    None
}

#[test]
fn dat3m_verdicts_in_the_subset() {
    let Some(dir) = suite() else { return };
    let csv = std::fs::read_to_string(dir.join("PTXv6_0-expected.csv")).expect("readable CSV");
    let (mut verdicts, mut refused, mut problems) = (Vec::new(), 0, Vec::new());
    let mut recorded = 0;
    for line in csv
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.is_empty())
    {
        recorded += 1;
        let Some((path, expected)) = line.split_once(',') else {
            problems.push(format!("`{line}` is not `<path>,<0|1>`"));
            continue;
        };
        let expected = match expected.trim() {
            "1" => true,
            "0" => false,
            other => {
                problems.push(format!("`{line}`: PASS bit `{other}`"));
                continue;
            }
        };
        let rel = path.trim_start_matches("litmus/PTX/");
        let text = match std::fs::read_to_string(dir.join(rel)) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{rel}: cannot read: {e}"));
                continue;
            }
        };
        match herd::parse(&text) {
            Err(why) if why.reason.is_empty() => {
                problems.push(format!("{rel}: refused, no reason"))
            }
            Err(_) => refused += 1,
            Ok(litmus) => {
                let (pass, explored) = herd::verdict(&litmus, &Variant::REFERENCE_SUBSET);
                assert!(explored > 0, "{}: no candidate explored", litmus.name);
                verdicts.push((litmus.name.clone(), expected, pass));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(recorded, RECORDED, "recorded verdicts in the CSV");
    verdicts.sort();
    let mismatched: Vec<String> = verdicts
        .iter()
        .filter(|(_, expected, pass)| expected != pass)
        .map(|(name, expected, pass)| format!("{name}: model says {pass}, Dat3M {expected}"))
        .collect();
    assert!(mismatched.is_empty(), "verdicts differ: {mismatched:#?}");
    let read: Vec<(&str, bool)> = verdicts
        .iter()
        .map(|(name, expected, _)| (name.as_str(), *expected))
        .collect();
    assert_eq!(read, IN_SUBSET, "the tests inside the subset");
    assert_eq!(refused, RECORDED - IN_SUBSET.len(), "refused tests");
}
