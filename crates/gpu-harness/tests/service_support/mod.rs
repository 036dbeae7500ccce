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
