//! Runs that share a machine: four `gpu-harness run` processes at once, and
//! one run holding the same fixture eight times under `--threads 8`, give
//! identical reports (timings aside), and leave nothing in their temporary
//! folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// The report without its timings, which differ from run to run.
fn normalized(json: &[u8]) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("millis");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_slice(json).expect("a JSON report");
    strip(&mut v);
    v
}

fn harness(tmp: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpu-harness"));
    // The result cache would answer the repeated runs: these compare runs.
    c.arg("run")
        .arg("--no-cache")
        .arg("--json")
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[test]
fn concurrent_runs_agree_and_leave_no_files() {
    if sandbox::testing::confined_or_not_run().is_none() {
        return;
    }
    let tmp = std::env::temp_dir().join(format!("concurrency-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("tmp");
    let names = [
        "saxpy",
        "shared_reduction",
        "atomic_flag",
        "promoted_ref_return",
    ];
    let dirs: Vec<String> = names
        .iter()
        .map(|n| fixtures().join(n).display().to_string())
        .collect();
    let args: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let children: Vec<_> = (0..4)
        .map(|_| {
            harness(&tmp, &[&["--threads", "2"], args.as_slice()].concat())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let reports: Vec<serde_json::Value> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().expect("wait");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            normalized(&out.stdout)
        })
        .collect();
    for r in &reports[1..] {
        assert_eq!(r, &reports[0], "concurrent runs disagree");
    }
    // The same fixture eight times over, on eight threads.
    let saxpy = fixtures().join("saxpy").display().to_string();
    let mut eight = vec!["--threads", "8"];
    eight.extend(std::iter::repeat_n(saxpy.as_str(), 8));
    let out = harness(&tmp, &eight).output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = normalized(&out.stdout);
    let fixtures = r["fixtures"].as_array().expect("fixtures");
    assert_eq!(fixtures.len(), 8);
    for f in fixtures {
        assert_eq!(f, &fixtures[0], "identical fixtures gave different reports");
    }
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left in the temporary folder: {left:?}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `compile --emit mir` prints the same bytes in every run: confined, rustc
/// sees the kernel at `/src` and its scratch folder at `/work`, so no
/// process id or temporary path reaches the closure and impl names.
#[test]
fn emit_mir_is_the_same_in_every_run() {
    if sandbox::testing::confined_or_not_run().is_none() {
        return;
    }
    let kernel = fixtures().join("promoted_ref_return/kernel.rs");
    let emit = || {
        let out = Command::new(env!("CARGO_BIN_EXE_gpu-harness"))
            .args(["compile", "--emit", "mir"])
            .arg(&kernel)
            .output()
            .expect("compile");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let (a, b) = (emit(), emit());
    assert!(!a.is_empty());
    assert!(a == b, "two runs of --emit mir differ");
    let text = String::from_utf8_lossy(&a);
    // Scratch folders are named `mir-import-<what>-<pid>-<n>`; none may show
    // (the kernel's own path may: spans name the file the user gave).
    assert!(
        !text.contains("mir-import-"),
        "a scratch path in the MIR model"
    );
}

/// Without a working sandbox the oracle refuses, says why and how to opt
/// out; it never falls back silently.
#[test]
fn a_missing_sandbox_refuses_loudly() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-harness"))
        .args(["run", "--no-cache"])
        .arg(fixtures().join("saxpy"))
        .env("BWRAP", "/nonexistent/bwrap")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran without its sandbox: {err}");
    assert!(err.contains("sandbox cannot be set up"), "{err}");
    assert!(err.contains("--unsandboxed"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-harness"))
        .args(["run", "--no-cache", "--unsandboxed"])
        .arg(fixtures().join("saxpy"))
        .env("BWRAP", "/nonexistent/bwrap")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("NOT confined"));
}
