//! The `memory-model` binary: text and JSON forms, and argument errors.

use std::process::Command;

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memory-model"))
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
fn theorems_json_lists_every_check_with_verdict_count_and_time() {
    let (code, stdout, stderr) = cli(&["theorems", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let checks = doc["checks"].as_array().expect("a list of checks");
    assert_eq!(checks.len(), memory_model::checks::all().len());
    for c in checks {
        assert_eq!(c["verdict"], "holds", "{c}");
        assert!(c["explored"].as_u64().is_some_and(|n| n > 0), "{c}");
        assert!(c["millis"].as_f64().is_some(), "{c}");
    }
    assert_eq!(doc["failed"], 0);
}

#[test]
fn theorems_text_prints_a_line_per_check_and_a_summary() {
    let (code, stdout, _) = cli(&["theorems", "--only", "mp."]);
    assert_eq!(code, 0);
    assert!(stdout.contains("mp.acq_rel_forbids_weak"));
    assert!(stdout.contains("explored"));
    assert!(
        stdout.lines().any(|l| l.starts_with("9 passed, 0 failed")),
        "{stdout}"
    );
}

#[test]
fn reduction_for_one_thread_count() {
    let (code, stdout, _) = cli(&["reduction", "--threads", "64"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("701 events"), "{stdout}");
    assert!(stdout.contains("sh[0] = Some(2080)"), "{stdout}");
}

#[test]
fn reduction_refuses_a_thread_count_that_is_not_a_power_of_two() {
    let (code, _, stderr) = cli(&["reduction", "--threads", "12"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("power of two"), "{stderr}");
    let (code, _, _) = cli(&["reduction", "--threads", "2048"]);
    assert_eq!(code, 2);
}
