//! Running many tests: collecting `.litmus` files, checking each, comparing
//! with recorded verdicts, and summarizing.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::expect::Expected;
use super::report::Outcome;
use super::search::Options;

/// One file's result.
#[derive(Clone, Debug, Serialize)]
pub struct FileResult {
    /// The file.
    pub path: PathBuf,
    /// The outcome, or why the test could not be checked.
    pub outcome: Result<Outcome, String>,
    /// The recorded PASS bit, if an expectation file lists the test.
    pub expected: Option<bool>,
}

impl FileResult {
    /// Whether the outcome disagrees with the recorded verdict.
    #[must_use]
    pub fn disagrees(&self) -> bool {
        match (&self.outcome, self.expected) {
            (Ok(o), Some(e)) => o.verdict.dat3m_pass() != e,
            _ => false,
        }
    }
}

/// Every `.litmus` file under the given files and folders, sorted.
///
/// # Errors
/// A path that does not exist or cannot be listed.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        walk(p, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(p: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    if meta.is_dir() {
        let entries = std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", p.display()))?;
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

/// Checks every file, in order.
#[must_use]
pub fn run(files: &[PathBuf], options: &Options, expected: Option<&Expected>) -> Vec<FileResult> {
    files
        .iter()
        .map(|path| {
            let outcome = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|text| super::check_text(&text, options));
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
    /// Tests checked.
    pub checked: usize,
    /// Tests that could not be read or enumerated.
    pub errors: usize,
    /// Tests with a recorded verdict that agree with it.
    pub agree: usize,
    /// Tests with a recorded verdict that disagree.
    pub disagree: usize,
    /// Tests without a recorded verdict (when an expectation file is given).
    pub unrecorded: usize,
    /// Sum of the per-test times, in milliseconds.
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
        Summary {
            checked: ok.len(),
            errors: results.len() - ok.len(),
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
            total_millis: ok.iter().map(|o| o.millis).sum(),
            slowest: ok
                .iter()
                .max_by(|a, b| a.millis.total_cmp(&b.millis))
                .map(|o| (o.name.clone(), o.millis)),
        }
    }
}
