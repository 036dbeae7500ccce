//! The theorems of the reference development, each one a named check over a
//! complete, finite candidate space.
//!
//! A check is a function that enumerates its space and records assertions in
//! an [`Outcome`]; it *holds* when every assertion does. Each check reports how
//! many executions (or machine states) it explored and, where the reference
//! shows that a premise is necessary, the counterexample as a concrete
//! execution.
//!
//! - [`semantics`]: the step function against the relation; the sequentially
//!   consistent run against the relaxed run that picks the latest stores.
//! - [`mp`]: message passing.
//! - [`reduction`]: the tree reduction, at N = 8 and beyond.
//!
//! The checks over kernels extracted from the fixtures live in the
//! `kernel-extract` crate (they run rustc), and use [`Outcome`] and
//! [`report`] from here.

use std::time::Instant;

use serde::Serialize;

pub mod mp;
pub mod reduction;
pub mod semantics;

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Whether every assertion held.
    pub holds: bool,
    /// Executions (or machine states) explored.
    pub explored: u64,
    /// One line per assertion and per figure worth printing.
    pub details: Vec<String>,
    /// A concrete execution: the counterexample or witness, when there is one.
    pub witness: Option<String>,
}

impl Outcome {
    /// An outcome with no assertion yet (it holds).
    pub fn new() -> Outcome {
        Outcome {
            holds: true,
            ..Outcome::default()
        }
    }

    /// Records an assertion: the check fails (but goes on, to record the
    /// rest) when `ok` is false. It never panics, which is why it is not
    /// called `expect`.
    pub fn require(&mut self, ok: bool, what: impl Into<String>) {
        let what = what.into();
        if ok {
            self.details.push(format!("ok: {what}"));
        } else {
            self.holds = false;
            self.details.push(format!("FAILED: {what}"));
        }
    }

    /// Records a figure.
    pub fn note(&mut self, what: impl Into<String>) {
        self.details.push(what.into());
    }

    /// Adds to the count of executions explored.
    pub fn explored(&mut self, n: u64) {
        self.explored += n;
    }

    /// Sets the witness (keeps the first one).
    pub fn witness(&mut self, text: impl Into<String>) {
        if self.witness.is_none() {
            self.witness = Some(text.into());
        }
    }
}

/// A named check.
#[derive(Clone, Copy)]
pub struct Check {
    /// The name, `group.what`.
    pub name: &'static str,
    /// The statement checked.
    pub statement: &'static str,
    /// The check itself.
    pub run: fn() -> Outcome,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A check's result, with its time.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The check's name.
    pub name: String,
    /// The statement.
    pub statement: String,
    /// `holds` or `FAILS`.
    pub verdict: &'static str,
    /// Whether it holds.
    pub holds: bool,
    /// Executions (or states) explored.
    pub explored: u64,
    /// Wall time, in milliseconds.
    pub millis: f64,
    /// The assertions and figures.
    pub details: Vec<String>,
    /// The counterexample or witness.
    pub witness: Option<String>,
}

/// Every check, in the order of the issue.
pub fn all() -> Vec<Check> {
    let mut checks = semantics::checks();
    checks.extend(mp::checks());
    checks.extend(reduction::checks());
    checks
}

/// Finds a check by name.
pub fn by_name(name: &str) -> Option<Check> {
    all().into_iter().find(|c| c.name == name)
}

/// Runs one check and times it.
pub fn run(check: &Check) -> Report {
    let start = Instant::now();
    let outcome = (check.run)();
    let millis = start.elapsed().as_secs_f64() * 1e3;
    report(check.name, check.statement, outcome, millis)
}

/// Wraps an outcome as a report.
pub fn report(name: &str, statement: &str, outcome: Outcome, millis: f64) -> Report {
    Report {
        name: name.to_string(),
        statement: statement.to_string(),
        verdict: if outcome.holds { "holds" } else { "FAILS" },
        holds: outcome.holds,
        explored: outcome.explored,
        millis,
        details: outcome.details,
        witness: outcome.witness,
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{:<40} {:<6} explored {:>8}  {:>9.3} ms",
            self.name, self.verdict, self.explored, self.millis
        )?;
        writeln!(f, "    {}", self.statement)?;
        for line in &self.details {
            writeln!(f, "    - {line}")?;
        }
        if let Some(w) = &self.witness {
            for line in w.lines() {
                writeln!(f, "      | {line}")?;
            }
        }
        Ok(())
    }
}

/// Prints check reports as the command lines do (one line each and a
/// summary, or JSON with `--json`), and the exit code they call for: failure
/// if any check fails.
pub fn print_reports(reports: &[Report], json: bool, total_ms: f64) -> std::process::ExitCode {
    let failed = reports.iter().filter(|r| !r.holds).count();
    if json {
        let doc = serde_json::json!({
            "checks": reports,
            "passed": reports.len() - failed,
            "failed": failed,
            "total_millis": total_ms,
        });
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: cannot print JSON: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    } else {
        for r in reports {
            println!("{r}");
        }
        println!(
            "{} passed, {} failed ({total_ms:.1} ms)",
            reports.len() - failed,
            failed
        );
    }
    if failed == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
