//! Why a test gets no verdict: the checker's typed errors.
//!
//! Every error here is a value a caller can match on, not flattened text:
//! a reading error keeps its [`ParseError`] (line, column, syntax or
//! unsupported), a thread that cannot run keeps its [`RunError`] (the
//! instruction's position), a test past an enumeration limit names the
//! [`Limit`], and a file that cannot be read keeps its `io::Error` as its
//! [`source`](std::error::Error::source). A wrapper that adds nothing to a
//! message is `transparent`, so that a chain never prints a cause twice;
//! [`chain`] renders a whole chain on one line, as the CLI and the JSON do.

use std::path::PathBuf;
use std::sync::Arc;

use crate::parse::ParseError;
use crate::paths::RunError;

/// Why one test could not be checked (a timeout is [`crate::NoVerdict`]'s
/// other case, not an error of the test).
#[derive(Clone, Debug, thiserror::Error)]
pub enum CheckError {
    /// The file could not be read; the cause is the `io::Error`.
    #[error("cannot read")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (shared, so that a result can be cloned).
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The text is not a test, or uses what the checker does not model.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A thread cannot be run (division by zero, too many paths or events).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The test is past one of the enumeration's static limits.
    #[error("unsupported: {0}")]
    Limit(#[from] Limit),
}

/// The enumeration's static limits. Past one, the test is refused rather
/// than approximated: each limit keeps a candidate space that would take
/// hours (or not fit a bit relation) from being started at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Limit {
    /// An execution has more events than a bit relation holds.
    #[error("an execution of {events} events (at most {max})")]
    Events {
        /// The events of the execution.
        events: usize,
        /// The limit.
        max: usize,
    },
    /// Too many named barriers with a quorum (their subsets grow as 2^n).
    #[error("{barriers} barriers with a quorum in one execution (at most {max})")]
    QuorumBarriers {
        /// The barriers.
        barriers: usize,
        /// The limit.
        max: usize,
    },
    /// Too many `fence.sc`s (their orders grow as n!).
    #[error("{fences} fence.sc's in one execution (at most {max})")]
    ScFences {
        /// The fences.
        fences: usize,
        /// The limit.
        max: usize,
    },
    /// Too many writes to one location (coherence posets grow fast).
    #[error("{writes} writes to `{location}` in one execution (at most {max})")]
    WritesPerLocation {
        /// The location.
        location: String,
        /// The writes.
        writes: usize,
        /// The limit.
        max: usize,
    },
    /// A location's value domain grew past its limit.
    #[error("location `{location}` can hold more than {max} values")]
    Domain {
        /// The location.
        location: String,
        /// The limit.
        max: usize,
    },
    /// A construct that the operational exploration (`explore`) does not
    /// handle: it is refused, never approximated.
    #[error("the exploration does not handle {what}")]
    Exploration {
        /// The construct.
        what: &'static str,
    },
    /// The value domains did not reach a fixed point.
    #[error("the stored values do not converge in {rounds} rounds")]
    NoFixedPoint {
        /// The rounds tried.
        rounds: usize,
    },
}

/// Reading the recorded verdicts failed: the line is not `<path>,<0|1>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: `{text}` is not `<path>,<0|1>`")]
pub struct ExpectError {
    /// The line number, from 1.
    pub line: usize,
    /// The line's text.
    pub text: String,
}

/// Collecting `.litmus` files failed: a path that does not exist or cannot
/// be listed.
#[derive(Debug, thiserror::Error)]
#[error("{}", path.display())]
pub struct CollectError {
    /// The path.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// An error and its causes on one line, joined by `: ` (the form the CLI and
/// the JSON print).
#[must_use]
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}
