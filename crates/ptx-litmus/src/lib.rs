//! `ptx-litmus`: a litmus checker for the full PTX memory model (Lustig, Sahasrabuddhe and
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
//! - [`explore`] builds executions event by event instead, pruning each
//!   inconsistent prefix, for the set of final outcomes (the compiled side
//!   of a refinement check);
//! - [`report`] prints the verdict and its evidence, and [`expect`] reads
//!   Dat3M's recorded verdicts.
//!
//! - [`error`] holds the typed errors: a test without a verdict says why as a
//!   [`CheckError`] (positioned where the text is at fault) or a [`Timeout`].
//!
//! **What this crate owns:** the PTX litmus format, the full axiomatic model
//! (scopes, fences, RMWs, named barriers, coherence) and its verdicts.
//! **What it does not own:** the reference development's small model, which
//! is the `memory-model` crate (its `consistency` module); the two share no
//! code, and this crate depends on no other crate of the workspace.
//! **The border:** [`check_text`] and [`check_text_within`]: litmus text in,
//! an [`Outcome`] or a [`NoVerdict`] out.

#![deny(missing_docs)]

pub mod budget;
pub mod corpus;
pub mod domain;
pub mod error;
pub mod expect;
pub mod explore;
pub mod model;
mod orders;
pub mod parse;
pub mod paths;
pub mod rel;
pub mod report;
pub mod search;
pub mod syntax;

pub use budget::{Deadline, NoVerdict, Timeout};
pub use error::{CheckError, Limit};
pub use model::{Axiom, Axioms};
pub use report::{Outcome, Verdict};
pub use search::Options;

/// Reads and checks one test, however long it takes.
///
/// # Errors
/// [`NoVerdict::Error`] with the reading error (a [`CheckError::Parse`],
/// positioned) or why the test could not be enumerated. Without a deadline
/// there is no [`NoVerdict::Timeout`].
pub fn check_text(text: &str, options: &Options) -> Result<Outcome, NoVerdict> {
    check_text_within(text, options, &Deadline::none())
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
    let test = parse::parse(text).map_err(CheckError::from)?;
    search::check_within(&test, options, deadline)
}
