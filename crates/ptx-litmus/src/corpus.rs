//! Running many tests: collecting `.litmus` files, checking each, comparing
//! with recorded verdicts, and summarizing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::budget::{Deadline, NoVerdict, Timeout};
use crate::error::{CheckError, CollectError, chain};
use crate::expect::Expected;
use crate::report::Outcome;
use crate::search::Options;

/// One file's result.
#[derive(Clone, Debug, Serialize)]
pub struct FileResult {
    /// The file.
    pub path: PathBuf,
    /// The outcome, or why the test has none: it could not be checked, or it
    /// ran out of time. In JSON: `{"Ok": outcome}`, `{"Err": "why"}` or
    /// `{"Timeout": {...}}`.
    #[serde(serialize_with = "outcome_json")]
    pub outcome: Result<Outcome, NoVerdict>,
    /// The recorded PASS bit, if an expectation file lists the test.
    pub expected: Option<bool>,
}

/// The JSON form of [`FileResult::outcome`]: an error is its whole chain as
/// one line of text (the form it always had), and a timeout is its own case.
fn outcome_json<S: Serializer>(
    outcome: &Result<Outcome, NoVerdict>,
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    enum Json<'a> {
        Ok(&'a Outcome),
        Err(String),
        Timeout(&'a Timeout),
    }
    match outcome {
        Ok(o) => Json::Ok(o),
        Err(NoVerdict::Error(e)) => Json::Err(chain(e)),
        Err(NoVerdict::Timeout(t)) => Json::Timeout(t),
    }
    .serialize(s)
}

impl FileResult {
    /// Whether the outcome disagrees with the recorded verdict. A test that
    /// timed out has no verdict to agree with, so with a recorded one it
    /// disagrees.
    #[must_use]
    pub fn disagrees(&self) -> bool {
        match (&self.outcome, self.expected) {
            (Ok(o), Some(e)) => o.verdict.dat3m_pass() != e,
            (Err(NoVerdict::Timeout(_)), Some(_)) => true,
            _ => false,
        }
    }

    /// The timeout, if the test ran out of time.
    #[must_use]
    pub fn timeout(&self) -> Option<&Timeout> {
        self.outcome.as_ref().err().and_then(NoVerdict::timeout)
    }
}

/// Every `.litmus` file under the given files and folders, sorted.
///
/// # Errors
/// A path that does not exist or cannot be listed.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CollectError> {
    let mut out = Vec::new();
    for p in paths {
        walk(p, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(p: &Path, out: &mut Vec<PathBuf>) -> Result<(), CollectError> {
    let at = |source| CollectError {
        path: p.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(p).map_err(at)?;
    if meta.is_dir() {
        let entries = std::fs::read_dir(p).map_err(at)?;
        for entry in entries {
            let entry = entry.map_err(at)?;
            let path = entry.path();
            if path.is_dir() || path.extension().is_some_and(|x| x == "litmus") {
                walk(&path, out)?;
            }
        }
    } else {
        out.push(p.to_path_buf());
    }
    Ok(())
}

/// Checks every file, in order, however long each takes.
#[must_use]
pub fn run(files: &[PathBuf], options: &Options, expected: Option<&Expected>) -> Vec<FileResult> {
    run_within(files, options, None, expected)
}

/// Checks every file, in order, each within `limit` when one is given: a
/// test past it gets a [`NoVerdict::Timeout`] and the next one starts.
#[must_use]
pub fn run_within(
    files: &[PathBuf],
    options: &Options,
    limit: Option<Duration>,
    expected: Option<&Expected>,
) -> Vec<FileResult> {
    files
        .iter()
        .map(|path| {
            let deadline = limit.map_or_else(Deadline::none, Deadline::after);
            let outcome = std::fs::read_to_string(path)
                .map_err(|e| {
                    NoVerdict::Error(CheckError::Read {
                        path: path.clone(),
                        source: Arc::new(e),
                    })
                })
                .and_then(|text| crate::check_text_within(&text, options, &deadline));
            FileResult {
                path: path.clone(),
                outcome,
                expected: expected.and_then(|e| e.lookup(path)),
            }
        })
        .collect()
}

/// Totals over a run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Tests that got a verdict.
    pub checked: usize,
    /// Tests that could not be read or enumerated.
    pub errors: usize,
    /// Tests that ran out of time (not counted in `errors`; with a recorded
    /// verdict, counted in `disagree`).
    pub timed_out: usize,
    /// Tests with a recorded verdict that agree with it.
    pub agree: usize,
    /// Tests with a recorded verdict that disagree.
    pub disagree: usize,
    /// Tests without a recorded verdict (when an expectation file is given).
    pub unrecorded: usize,
    /// Sum of the per-test times, in milliseconds (tests that timed out
    /// included, at the time they took to stop).
    pub total_millis: f64,
    /// The slowest test and its time.
    pub slowest: Option<(String, f64)>,
}

impl Summary {
    /// Totals `results`.
    #[must_use]
    pub fn of(results: &[FileResult], with_expectations: bool) -> Self {
        let ok: Vec<&Outcome> = results
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok())
            .collect();
        let timed_out = results.iter().filter(|r| r.timeout().is_some()).count();
        Summary {
            checked: ok.len(),
            errors: results.len() - ok.len() - timed_out,
            timed_out,
            agree: results
                .iter()
                .filter(|r| r.expected.is_some() && r.outcome.is_ok() && !r.disagrees())
                .count(),
            disagree: results.iter().filter(|r| r.disagrees()).count(),
            unrecorded: if with_expectations {
                results.iter().filter(|r| r.expected.is_none()).count()
            } else {
                0
            },
            total_millis: ok.iter().map(|o| o.millis).sum::<f64>()
                + results
                    .iter()
                    .filter_map(FileResult::timeout)
                    .map(|t| t.elapsed_millis)
                    .sum::<f64>(),
            slowest: ok
                .iter()
                .max_by(|a, b| a.millis.total_cmp(&b.millis))
                .map(|o| (o.name.clone(), o.millis)),
        }
    }
}
