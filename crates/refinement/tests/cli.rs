//! The `refinement` binary: argument errors (no libNVVM needed), and with
//! libNVVM the JSON form and the exit status of a caught mutant.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_refinement"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_mutant_is_an_argument_error() {
    let (code, _, stderr) = cli(&["atomic_flag", "--mutant", "sideways"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--mutant"), "{stderr}");
}

#[test]
fn an_unknown_fixture_has_no_verdict_and_names_the_known_ones() {
    let (code, stdout, _) = cli(&["no_such_kernel"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("no launch is known for fixture `no_such_kernel`"),
        "{stdout}"
    );
    assert!(stdout.contains("spin_lock"), "{stdout}");
}

#[test]
fn json_reports_the_verdict_and_a_caught_mutant_fails_the_run() {
    if nvvm_emit::testing::libnvvm_or_skip("refinement cli --json").is_none() {
        return;
    }
    let (code, stdout, stderr) = cli(&["atomic_flag", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let check = &doc["checks"][0];
    assert_eq!(check["verdict"], "refines", "{check}");
    assert!(
        check["compiled"]["graphs"].as_u64().is_some_and(|n| n > 0),
        "{check}"
    );
    assert_eq!(check["source"]["race_free"], true, "{check}");
    let (code, stdout, _) = cli(&["atomic_flag", "--json", "--mutant", "acquire"]);
    assert_eq!(code, 1, "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    assert_eq!(doc["checks"][0]["verdict"], "not-refined");
    assert_eq!(doc["checks"][0]["detail"]["outcome"]["out[0]"], 0);
}
