//! The evaluator's errors: why one step failed ([`EvalError`]) and which item
//! it failed for, where ([`Unsupported`]).
//!
//! The messages are the ones the evaluator has always printed: lowering pins
//! them in its diagnostics' snapshots. A wrapping error keeps the wrapped one
//! as its [`std::error::Error::source`], so a renderer can show the chain.

use serde::Serialize;

use super::layout::UnknownLayout;
use super::memory::MemError;
use crate::model::Ty;

/// Why one evaluation step failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A memory access faulted.
    #[error(transparent)]
    Memory(#[from] MemError),
    /// A type's layout is not known.
    #[error(transparent)]
    Layout(#[from] UnknownLayout),
    /// A const, static or promoted that this value copies could not be
    /// evaluated itself.
    #[error("{0}")]
    Item(#[source] Box<Unsupported>),
    /// The body runs in a cycle (`const A: u32 = B; const B: u32 = A;`).
    #[error("cyclic constant")]
    Cyclic,
    /// The body ran more steps (statements and terminators, its calls'
    /// included) than [`super::interp`] allows.
    #[error("step limit reached (does the constant loop?)")]
    StepLimit,
    /// An `Assert` terminator failed: rustc would reject the constant.
    #[error("assertion failed during evaluation: {0}")]
    AssertFailed(String),
    /// A division or remainder by zero.
    #[error("division by zero during evaluation")]
    DivisionByZero,
    /// A call the evaluator does not run: a function pointer, a generic
    /// function, or one rustc printed no body for (the twin fallback runs
    /// it).
    #[error("call to `{0}` is not evaluated here")]
    Call(String),
    /// A step of a called function failed.
    #[error("in `{callee}`{at}: {source}")]
    InCall {
        /// The function.
        callee: String,
        /// Where in it (` at bb2[1]`), or nothing.
        at: String,
        /// What failed.
        source: Box<EvalError>,
    },
    /// Calls nested deeper than the evaluator follows (recursion).
    #[error("calls nested deeper than {0}")]
    CallDepth(usize),
    /// A place or value of a type that the operation does not apply to.
    #[error("{what} `{ty}`")]
    WrongType {
        /// The operation (`deref of`, `index into`).
        what: &'static str,
        /// The type it met.
        ty: Ty,
    },
    /// An index past the end of an array or slice.
    #[error("index {index} out of bounds (length {len})")]
    OutOfBounds {
        /// The index.
        index: u64,
        /// The length.
        len: u64,
    },
    /// rustc printed no body (or no allocation) for something the value names.
    #[error("{0}")]
    NotPrinted(String),
    /// A MIR construct the evaluator does not implement, described.
    #[error("{0}")]
    Construct(String),
}

impl From<String> for EvalError {
    fn from(construct: String) -> Self {
        EvalError::Construct(construct)
    }
}

impl From<&str> for EvalError {
    fn from(construct: &str) -> Self {
        EvalError::Construct(construct.to_string())
    }
}

/// Why a body could not be evaluated: the item, where, and the step that
/// failed (also its [`source`](std::error::Error::source)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("cannot evaluate `{item}`{}: {reason}", .location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default())]
pub struct Unsupported {
    /// The body's path.
    pub item: String,
    /// The MIR location (`bb0[2]`), if inside a block.
    pub location: Option<String>,
    /// What could not be evaluated.
    #[source]
    #[serde(serialize_with = "as_text")]
    pub reason: EvalError,
}

/// The JSON of `mir-dump` shows a reason as its message.
fn as_text<S: serde::Serializer>(e: &EvalError, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(e)
}
