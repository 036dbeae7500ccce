//! What travels on the wire, and what a request may hold.
//!
//! - `POST /v1/jobs` with a [`JobRequest`] (JSON) → `202` and a [`JobView`].
//! - `GET /v1/jobs/{id}` → `200` and its [`JobView`]; the report is there
//!   once the status is `done`.
//! - `GET /health` → `200` and [`Health`]; `GET /metrics` → Prometheus text.
//!
//! Every refusal is a 4xx with an [`ApiError`] body that names the problem.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most files one fixture may send.
pub const MAX_FILES: usize = 16;
/// The longest fixture or file name.
pub const MAX_NAME: usize = 64;
/// The files every fixture has.
pub const REQUIRED_FILES: [&str; 2] = ["kernel.rs", "manifest.toml"];

/// A fixture to run: its name and its folder's files, by file name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobRequest {
    /// The fixture's name (its folder's): ASCII letters, digits, `_`, `-`.
    pub name: String,
    /// File name → contents (UTF-8 text): `kernel.rs`, `manifest.toml`, and
    /// whatever else the folder holds (a shape script, a README).
    pub files: BTreeMap<String, String>,
}

/// Why a request was refused before it became a job.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// The fixture name is empty, too long, or has other characters.
    #[error("fixture name {0:?}: use 1 to {MAX_NAME} ASCII letters, digits, `_` or `-`")]
    Name(String),
    /// A file name is empty, too long, hidden, or has other characters.
    #[error(
        "file name {0:?}: use 1 to {MAX_NAME} ASCII letters, digits, `_`, `-` or `.`, not starting with `.`"
    )]
    FileName(String),
    /// A file every fixture needs is missing.
    #[error("the fixture has no {0}")]
    Missing(&'static str),
    /// Too many files.
    #[error("{0} files; at most {MAX_FILES}")]
    TooManyFiles(usize),
}

fn name_ok(s: &str, dot: bool) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (dot && b == b'.'))
}

impl JobRequest {
    /// Checks the names and the file list (contents are the oracle's to
    /// judge: its manifest validation and sandbox).
    ///
    /// # Errors
    /// The first [`Invalid`] found.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !name_ok(&self.name, false) {
            return Err(Invalid::Name(self.name.clone()));
        }
        if self.files.len() > MAX_FILES {
            return Err(Invalid::TooManyFiles(self.files.len()));
        }
        if let Some(bad) = self.files.keys().find(|f| !name_ok(f, true)) {
            return Err(Invalid::FileName(bad.clone()));
        }
        for need in REQUIRED_FILES {
            if !self.files.contains_key(need) {
                return Err(Invalid::Missing(need));
            }
        }
        Ok(())
    }
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Accepted, waiting for a worker.
    Queued,
    /// A worker runs it.
    Running,
    /// Finished: the report is there.
    Done,
}

impl JobStatus {
    /// Its name in the store and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
        }
    }

    /// The status named `s`.
    pub fn parse(s: &str) -> Option<JobStatus> {
        match s {
            "queued" => Some(JobStatus::Queued),
            "running" => Some(JobStatus::Running),
            "done" => Some(JobStatus::Done),
            _ => None,
        }
    }
}

/// One finished stage of a running or finished job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageProgress {
    /// The stage (`import`, `lower`, `nvvm`, `host`, `device`, ...).
    pub name: String,
    /// `ok`, `failed` or `skipped`.
    pub status: String,
    /// Its wall time in milliseconds.
    pub millis: f64,
}

/// A job as a client sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobView {
    /// Its id.
    pub id: u64,
    /// The fixture's name.
    pub name: String,
    /// Where it is.
    pub status: JobStatus,
    /// The stages finished so far, in order (while it runs, and after).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<StageProgress>,
    /// The verdict, once done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Whether the report came from the result cache, once done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    /// The oracle's report of the fixture, once done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
}

/// `GET /health`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// Jobs waiting.
    pub queued: u64,
    /// Jobs running.
    pub running: u64,
}

/// The body of every refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// A stable code: `unauthorized`, `too-large`, `malformed`, `invalid`,
    /// `too-many-jobs`, `not-found`.
    pub error: String,
    /// What was wrong, for people.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(name: &str, files: &[&str]) -> JobRequest {
        JobRequest {
            name: name.to_owned(),
            files: files
                .iter()
                .map(|f| ((*f).to_owned(), String::new()))
                .collect(),
        }
    }

    #[test]
    fn names_and_files_are_checked() {
        let ok = ["kernel.rs", "manifest.toml", "README.md"];
        assert_eq!(request("saxpy", &ok).validate(), Ok(()));
        assert_eq!(
            request("../etc", &ok).validate(),
            Err(Invalid::Name("../etc".into()))
        );
        assert_eq!(
            request("a", &["kernel.rs", "manifest.toml", "../x"]).validate(),
            Err(Invalid::FileName("../x".into()))
        );
        assert_eq!(
            request("a", &["kernel.rs", "manifest.toml", ".hidden"]).validate(),
            Err(Invalid::FileName(".hidden".into()))
        );
        assert_eq!(
            request("a", &["kernel.rs"]).validate(),
            Err(Invalid::Missing("manifest.toml"))
        );
        let many: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            request("a", &refs).validate(),
            Err(Invalid::TooManyFiles(20))
        );
    }
}
