//! The `ptx-litmus` binary: text and JSON forms, recorded verdicts, and
//! argument errors.

use std::process::Command;

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
fn litmus_prints_one_line_per_test_and_exits_non_zero_on_disagreement() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/litmus");
    let (code, stdout, stderr) = cli(&[dir, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let tests = doc["tests"].as_array().expect("a list of tests");
    assert_eq!(tests.len(), 6);
    for t in tests {
        let o = &t["outcome"]["Ok"];
        assert_eq!(o["verdict"], "Forbidden", "{t}");
        assert!(o["candidates"].as_u64().is_some_and(|n| n > 0), "{t}");
        assert!(
            o["closest"]["violations"]
                .as_array()
                .is_some_and(|v| !v.is_empty()),
            "{t}"
        );
    }
    assert_eq!(doc["summary"]["checked"], 6);

    // A recorded verdict that says MP-rel-acq is allowed: the run disagrees.
    let csv = std::env::temp_dir().join(format!("mm-expect-{}.csv", std::process::id()));
    std::fs::write(
        &csv,
        "// test\nlitmus/PTX/MP-rel-acq.litmus,1\nlitmus/PTX/LB-ctrl.litmus,0\n",
    )
    .expect("writable temp dir");
    let (code, stdout, _) = cli(&[dir, "--expect", csv.to_str().expect("utf-8 path")]);
    let _ = std::fs::remove_file(&csv);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("DISAGREES: Dat3M records 1"), "{stdout}");
    assert!(stdout.contains("1 agree and 1 disagree"), "{stdout}");

    let (code, _, stderr) = cli(&[dir, "--without", "Causality", "--explain"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = cli(&[dir, "--without", "Nonsense"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no such axiom"), "{stderr}");
}
