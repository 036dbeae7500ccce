//! The test oracle as a service: one machine with the devices (a GPU, or
//! the CPU devices) runs fixtures for many clients that have none.
//!
//! **Owns:** the HTTP API ([`api`]: a job is a fixture's files; its view is
//! its status and, when done, the oracle's JSON report), the durable job
//! queue ([`store`], SQLite: an accepted job survives the service), the
//! server ([`server`]: bearer tokens, request size and per-client limits, a
//! deadline per job, worker tasks, `/health` and Prometheus `/metrics`), and
//! the blocking client ([`client`]) that `gpu-harness run --remote` uses.
//!
//! **Does not own:** running a fixture. The service is given a [`Runner`]
//! (`gpu-harness` passes its pipeline, with its sandbox and result cache),
//! so this crate knows reports only as JSON with a verdict.
//!
//! **Border:** [`Runner`] in, [`api`] types on the wire.

#![deny(missing_docs)]

pub mod api;
pub mod client;
pub mod metrics;
pub mod server;
pub mod store;

use std::path::Path;

/// What a finished run gives the service.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The oracle's report of the fixture, as JSON.
    pub report: serde_json::Value,
    /// Its verdict (`pass`, `fail`, `crash`, `race`).
    pub verdict: String,
    /// Whether the report came from the result cache.
    pub cached: bool,
    /// Each stage's name and wall time in milliseconds.
    pub stages: Vec<(String, f64)>,
}

/// Runs one fixture whose files are in a folder; the oracle implements it.
/// It is called on a blocking thread, one job at a time per worker.
pub trait Runner: Send + Sync + 'static {
    /// Runs the fixture in `dir` (a folder named as the fixture, holding
    /// its files) and returns its report, telling `progress` each stage as
    /// it finishes.
    fn run(&self, dir: &Path, progress: &(dyn Fn(api::StageProgress) + Sync)) -> RunOutcome;
}
