//! A time bound on one check, and what a check that runs past it reports.
//!
//! A test inside every static limit of the search (events, paths, writes per
//! location, fences) can still have tens of millions of candidates: five
//! threads that each store once to two locations give 4,231 coherence orders
//! per location, 17.9 million candidates. The static limits cannot see that
//! coming, so each check carries a [`Deadline`] that the loops of
//! [`super::paths`], [`super::domain`] and [`super::search`] consult as they
//! go. Past it they stop with a [`Timeout`], which is never a verdict: the
//! caller reports it as its own outcome, with how far the search got.

use crate::error::CheckError;
use std::fmt;
use std::time::{Duration, Instant};

use serde::Serialize;

/// When a check must stop: a start time and an optional limit.
///
/// Checked cooperatively: the search loops call [`Deadline::check`] (or
/// [`Deadline::tick`] in their tightest loops), so a check stops between two
/// candidates, never in the middle of one, and nothing is left running.
#[derive(Clone, Debug)]
pub struct Deadline {
    start: Instant,
    limit: Option<Duration>,
    /// For [`Deadline::tick`]: how many ticks until the next clock read.
    countdown: std::cell::Cell<u32>,
}

/// How many [`Deadline::tick`]s pass between clock reads. A tick costs a few
/// nanoseconds; the loops that tick do at least that much work per
/// iteration, so 256 ticks stay far below a millisecond.
const TICKS_PER_READ: u32 = 256;

impl Deadline {
    /// No limit: the check runs to its verdict, however long that takes.
    #[must_use]
    pub fn none() -> Self {
        Deadline {
            start: Instant::now(),
            limit: None,
            countdown: std::cell::Cell::new(TICKS_PER_READ),
        }
    }

    /// A limit of `limit` from now.
    #[must_use]
    pub fn after(limit: Duration) -> Self {
        Deadline {
            limit: Some(limit),
            ..Deadline::none()
        }
    }

    /// The limit, if any.
    #[must_use]
    pub fn limit(&self) -> Option<Duration> {
        self.limit
    }

    /// Time since the deadline was set.
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Reads the clock.
    ///
    /// # Errors
    /// A [`Timeout`] at `stage` when the limit has passed; its progress
    /// counts are filled in by the search, which knows them.
    pub fn check(&self, stage: Stage) -> Result<(), Timeout> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let elapsed = self.start.elapsed();
        if elapsed < limit {
            return Ok(());
        }
        Err(Timeout {
            name: String::new(),
            limit_millis: limit.as_secs_f64() * 1e3,
            elapsed_millis: elapsed.as_secs_f64() * 1e3,
            stage,
            progress: Progress::default(),
        })
    }

    /// [`Deadline::check`] every [`TICKS_PER_READ`] calls, for loops whose
    /// iterations cost about as much as reading the clock.
    ///
    /// # Errors
    /// As [`Deadline::check`].
    pub fn tick(&self, stage: Stage) -> Result<(), Timeout> {
        if self.limit.is_none() {
            return Ok(());
        }
        let left = self.countdown.get();
        if left > 1 {
            self.countdown.set(left - 1);
            return Ok(());
        }
        self.countdown.set(TICKS_PER_READ);
        self.check(stage)
    }
}

/// Where a check was when its time ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Stage {
    /// Running threads into paths under the current value domains.
    Paths,
    /// Growing the value domains to their fixed point.
    Domains,
    /// Enumerating candidate executions.
    Candidates,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Paths => "running threads into paths",
            Stage::Domains => "growing the value domains",
            Stage::Candidates => "enumerating candidates",
        })
    }
}

/// How far a check got before it stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Value-domain rounds completed.
    pub domain_rounds: usize,
    /// Combinations of thread paths whose candidates were entered.
    pub combinations: u64,
    /// Combinations of thread paths in all, once the domains have converged.
    pub combinations_total: Option<u64>,
    /// Candidate executions examined (as [`super::Outcome::candidates`]
    /// counts them).
    pub candidates: u64,
    /// Of those, the consistent ones.
    pub consistent: u64,
}

/// A check that ran past its [`Deadline`]: no verdict, and how far it got.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timeout {
    /// The test's name (filled in by the search; empty until then).
    pub name: String,
    /// The limit, in milliseconds.
    pub limit_millis: f64,
    /// Time taken until the search noticed, in milliseconds.
    pub elapsed_millis: f64,
    /// What the search was doing.
    pub stage: Stage,
    /// How far it got.
    pub progress: Progress,
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.progress;
        write!(
            f,
            "timeout: no verdict within {:.0} ms (stopped after {:.0} ms, {}; {} domain rounds, ",
            self.limit_millis, self.elapsed_millis, self.stage, p.domain_rounds
        )?;
        match p.combinations_total {
            Some(total) => write!(f, "{} of {total} path combinations", p.combinations)?,
            None => write!(f, "{} path combinations", p.combinations)?,
        }
        write!(
            f,
            ", {} candidates examined, {} consistent)",
            p.candidates, p.consistent
        )
    }
}

impl Timeout {
    /// One line in the shape of [`super::Outcome::line`], with `timeout` for
    /// the verdict, the counts so far and the time it took to stop.
    #[must_use]
    pub fn line(&self) -> String {
        format!(
            "{:<44} {:<9} {:>9} candidates {:>7} consistent {:>9.2} ms",
            self.name,
            "timeout",
            self.progress.candidates,
            self.progress.consistent,
            self.elapsed_millis
        )
    }
}

impl std::error::Error for Timeout {}

/// Why a check ended without a verdict.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NoVerdict {
    /// The test cannot be read, or is outside what the search handles.
    #[error(transparent)]
    Error(#[from] CheckError),
    /// The time bound ran out first.
    #[error(transparent)]
    Timeout(Timeout),
}

impl NoVerdict {
    /// The timeout, if that is why.
    #[must_use]
    pub fn timeout(&self) -> Option<&Timeout> {
        match self {
            NoVerdict::Timeout(t) => Some(t),
            NoVerdict::Error(_) => None,
        }
    }
}

impl From<Timeout> for NoVerdict {
    fn from(t: Timeout) -> Self {
        NoVerdict::Timeout(t)
    }
}

impl From<crate::paths::RunError> for NoVerdict {
    fn from(e: crate::paths::RunError) -> Self {
        NoVerdict::Error(CheckError::Run(e))
    }
}

impl From<crate::error::Limit> for NoVerdict {
    fn from(e: crate::error::Limit) -> Self {
        NoVerdict::Error(CheckError::Limit(e))
    }
}
