//! What the service tests share: the fixtures, a scratch folder, the
//! options, the tokens, and a report's run-independent essence.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpu_harness::pipeline::Options;
use gpu_harness::report::FixtureReport;
use oracle_service::server::Tokens;
use sandbox::Sandbox;

/// The token the tests' clients present.
pub const TOKEN: &str = "ci-0123456789abcdef01234";

/// The project's fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// A fresh scratch folder for `tag`, per process.
pub fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("service-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The oracle's options with `sandbox`, libNVVM required where CI asks.
pub fn opts(sandbox: Sandbox) -> Options {
    Options {
        require_libnvvm: nvvm_emit::testing::libnvvm_required(),
        sandbox: Ok(sandbox),
        ..Options::default()
    }
}

/// The tokens file's content, with [`TOKEN`] for `ci`.
pub fn tokens() -> Tokens {
    Tokens::parse(&format!("ci:{TOKEN}\n")).unwrap()
}

/// A fixture's report without what differs from run to run: stage times
/// and details that name the run's own folders.
pub fn essence(r: &FixtureReport) -> serde_json::Value {
    let stages: Vec<_> = r
        .stages
        .iter()
        .map(|s| serde_json::json!([s.name, s.status, s.kind]))
        .collect();
    serde_json::json!({
        "name": r.name,
        "verdict": r.verdict,
        "stages": stages,
        "values": serde_json::to_value(&r.values).unwrap(),
    })
}

/// What differs between two reports of one fixture whose essences differ:
/// each stage whose outcome differs, with both details (a host run's
/// stderr, a sandbox's status), and the first values that differ, instead
/// of two whole reports (hundreds of kilobytes for a large fixture).
pub fn difference(a: &FixtureReport, b: &FixtureReport) -> String {
    let mut out = format!("{}: {:?} against {:?}", a.name, a.verdict, b.verdict);
    let outcome = |s: &gpu_harness::report::Stage| serde_json::json!([s.status, s.kind]);
    let names: std::collections::BTreeSet<&str> = a
        .stages
        .iter()
        .chain(&b.stages)
        .map(|s| s.name.as_str())
        .collect();
    for name in names {
        let find = |r: &'_ FixtureReport| r.stages.iter().find(|s| s.name == name).cloned();
        let (sa, sb) = (find(a), find(b));
        if sa.as_ref().map(outcome) != sb.as_ref().map(outcome) {
            let show = |s: Option<gpu_harness::report::Stage>| match s {
                Some(s) => format!("{} {}: {}", outcome(&s), s.name, s.detail),
                None => "absent".to_string(),
            };
            out += &format!("\n  stage {name}:\n    {}\n    {}", show(sa), show(sb));
        }
    }
    let value = |v: &gpu_harness::report::ValueReport| serde_json::to_value(v).unwrap();
    let differing: Vec<String> = a
        .values
        .iter()
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(b.values.iter().map(Some).chain(std::iter::repeat(None)))
        .take(a.values.len().max(b.values.len()))
        .filter(|(x, y)| x.map(value) != y.map(value))
        .map(|(x, y)| format!("{:?} against {:?}", x.map(value), y.map(value)))
        .collect();
    if !differing.is_empty() {
        out += &format!(
            "\n  {} of {} / {} values differ, the first: {}",
            differing.len(),
            a.values.len(),
            b.values.len(),
            differing[..differing.len().min(3)].join("; ")
        );
    }
    out
}
