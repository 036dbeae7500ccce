//! Every non-error fixture passes every shape check, and the PTX-side checks
//! fail when the function or global they inspect is missing.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpu_harness::shape::{self, Artifacts, ShapeCheck};
use rayon::prelude::*;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// Every fixture folder whose name does not start with `error_`.
fn positive_fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("kernel.rs").is_file())
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("error_"))
        })
        .collect();
    out.sort();
    out
}

fn build(name: &str) -> Option<Artifacts> {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip(name)?;
    Some(Artifacts::build(&fixtures_dir().join(name).join("kernel.rs"), nvvm).unwrap())
}

/// What one fixture's shape checks found: its failures, and whether it has
/// an out-of-line helper for the helper checks to inspect.
struct ShapeResult {
    failures: Vec<String>,
    has_helper: bool,
}

/// Builds `dir`'s kernel and runs every built-in check on it but the
/// manifest's recorded gaps, each of which must really fail.
fn check_fixture(dir: &Path, nvvm: &nvvm_emit::Libnvvm) -> ShapeResult {
    let a = Artifacts::build(&dir.join("kernel.rs"), nvvm).unwrap();
    let manifest = gpu_harness::fixture::Fixture::load(dir).unwrap().manifest;
    // A fixture that asks for the helper check must give it a helper to
    // inspect; ported kernels without `#[inline(never)]` helpers need not.
    let has_helper = !shape::checks::helpers(&a.lowered.module).is_empty();
    assert!(
        has_helper || !manifest.shape.iter().any(|c| c == "no-helper-alloca"),
        "{}: asks for no-helper-alloca but has no helper",
        dir.display()
    );
    // A fixture's recorded gaps (manifest `shape_known_failures`) are
    // skipped, and each must name a real check and really fail.
    let known = manifest.shape_known_failures;
    let (gaps, checks): (Vec<ShapeCheck>, Vec<ShapeCheck>) = ShapeCheck::BUILT_IN
        .into_iter()
        .partition(|c| known.iter().any(|k| k == c.name()));
    assert_eq!(
        gaps.len(),
        known.len(),
        "{}: unknown check in {known:?}",
        dir.display()
    );
    let failures = shape::check_all(&a.input(), &checks)
        .into_iter()
        .map(|f| format!("{}: {f}", dir.display()))
        .collect();
    for gap in gaps {
        assert!(
            !shape::check_all(&a.input(), &[gap]).is_empty(),
            "{}: `{}` is listed as a known failure but passes: remove it",
            dir.display(),
            gap.name()
        );
    }
    ShapeResult {
        failures,
        has_helper,
    }
}

#[test]
fn every_positive_fixture_passes_every_shape_check() {
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("shape checks") else {
        return;
    };
    let fixtures = positive_fixtures();
    assert!(fixtures.len() >= 7, "{fixtures:?}");
    // One fixture per core at a time; the results keep the fixtures' order.
    let results: Vec<ShapeResult> = fixtures
        .par_iter()
        .map(|dir| check_fixture(dir, nvvm))
        .collect();
    let failures: Vec<String> = results.iter().flat_map(|r| r.failures.clone()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The helper checks are not vacuous over the suite.
    let with_helpers = results.iter().filter(|r| r.has_helper).count();
    assert!(
        with_helpers >= 20,
        "only {with_helpers} fixtures have a helper"
    );
}

#[test]
fn helpers_missing_from_the_ptx_fail_the_alloca_check() {
    // At -opt=3 libNVVM folds promoted_ref_return's helpers away: reading that
    // PTX as if it were the -opt=0 one must fail, not pass vacuously.
    let Some(a) = build("promoted_ref_return") else {
        return;
    };
    let ptx = ptx_reader::parse(&a.ptx_o3).unwrap();
    assert!(
        ptx.definition("kernel__named").is_none(),
        "the fact this test relies on"
    );
    let mut input = a.input();
    input.ptx_o0 = &a.ptx_o3;
    let failures = shape::no_helper_alloca(&input);
    assert!(
        failures.iter().any(|f| f
            .message
            .contains("kernel__named is not defined in the -opt=0 PTX")),
        "{failures:?}"
    );
}

#[test]
fn constants_missing_from_the_ptx_fail_the_read_only_check() {
    let Some(a) = build("promoted_ref_return") else {
        return;
    };
    let mut input = a.input();
    input.ptx_o0 = ".version 8.8\n.target sm_90\n.address_size 64\n";
    let failures = shape::constants_read_only(&input);
    assert!(!failures.is_empty());
    assert!(
        failures
            .iter()
            .all(|f| f.message.contains("is not declared in the -opt=0 PTX")),
        "{failures:?}"
    );
}

#[test]
fn a_fixture_script_runs_with_the_artifact_paths() {
    let Some(a) = build("saxpy") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("shape-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("verify-code-shape.sh");
    // A script that checks its three arguments structurally enough to fail.
    std::fs::write(
        &script,
        "set -e\ngrep -q 'define' \"$1\"\ngrep -q '.entry saxpy' \"$2\"\ngrep -q '.entry saxpy' \"$3\"\n\
         [ \"$#\" = 3 ]\n",
    )
    .unwrap();
    let kernel = dir.join("kernel.rs");
    std::fs::write(&kernel, "").unwrap();
    let mut input = a.input();
    input.kernel = &kernel;
    assert_eq!(shape::verify_code_shape(&input), Some(Ok(())));
    std::fs::write(&script, "echo 'no good shape here'\nexit 3\n").unwrap();
    let f = shape::verify_code_shape(&input).unwrap().unwrap_err();
    assert_eq!(f.check, ShapeCheck::VerifyCodeShape);
    assert!(f.message.contains("no good shape here"), "{f}");
    assert_eq!(shape::check_all(&input, &[]), vec![f]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn manifest_names_are_kebab_case() {
    #[derive(serde::Deserialize)]
    struct M {
        shape: Vec<ShapeCheck>,
    }
    let m: M = serde_json::from_str(
        r#"{"shape": ["no-helper-alloca", "constants-read-only", "stable-keys", "ptx-forms", "no-constant-stack-copy"]}"#,
    )
    .unwrap();
    assert_eq!(m.shape, ShapeCheck::BUILT_IN);
    assert!(serde_json::from_str::<M>(r#"{"shape": ["no_helper_alloca"]}"#).is_err());
}
