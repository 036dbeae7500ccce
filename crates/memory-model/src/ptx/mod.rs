//! A litmus checker for the PTX memory model (Lustig, Sahasrabuddhe and
//! Giroux, ASPLOS 2019), as Dat3M states it in `cat/ptx-v6.0.cat`.
//!
//! The pipeline has one job per module:
//!
//! - [`parse`] reads the litmus format into [`syntax`], with positioned
//!   errors, and refuses what it does not model as `unsupported`;
//! - [`paths`] gives each thread's code a meaning: its paths, with loads
//!   guessing values from a value domain grown to a fixed point;
//! - [`search`] enumerates candidate executions (paths, barrier
//!   synchronization, fence-SC order, reads-from, coherence) and counts them;
//! - [`model`] holds the derived relations and the six axioms, each its own
//!   predicate, over the bit relations of [`rel`];
//! - [`budget`] bounds each check in time: the loops above consult a
//!   [`Deadline`] and stop with a [`Timeout`], never a verdict;
//! - [`report`] prints the verdict and its evidence, and [`expect`] reads
//!   Dat3M's recorded verdicts.
//!
//! This is separate from the seed's small model ([`crate::model`]), which
//! stays as it is; the crate README says how the two relate.

pub mod budget;
pub mod corpus;
pub mod domain;
pub mod expect;
pub mod model;
pub mod parse;
pub mod paths;
pub mod rel;
pub mod report;
pub mod search;
pub mod syntax;

pub use budget::{Deadline, NoVerdict, Timeout};
pub use model::{Axiom, Axioms};
pub use report::{Outcome, Verdict};
pub use search::{CheckError, Options};

/// Reads and checks one test.
///
/// # Errors
/// The reading error, or why the test could not be enumerated, as text that
/// starts with the position where there is one.
pub fn check_text(text: &str, options: &Options) -> Result<Outcome, String> {
    let test = parse::parse(text).map_err(|e| e.to_string())?;
    search::check(&test, options).map_err(|e| e.to_string())
}

/// Reads and checks one test, stopping when `deadline` passes.
///
/// # Errors
/// [`NoVerdict::Error`] with the reading error (positioned) or why the test
/// could not be enumerated; [`NoVerdict::Timeout`] when the deadline passes
/// before the verdict.
pub fn check_text_within(
    text: &str,
    options: &Options,
    deadline: &Deadline,
) -> Result<Outcome, NoVerdict> {
    let test = parse::parse(text).map_err(|e| NoVerdict::Error(e.to_string()))?;
    search::check_within(&test, options, deadline)
}
