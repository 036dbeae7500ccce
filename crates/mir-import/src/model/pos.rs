//! Positions in the MIR text. The model records where each body, statement
//! and terminator was printed; the parser, which depends on the model, reports
//! its errors at the same positions.

use serde::Serialize;

/// A 1-based line and column in the MIR text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub col: u32,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}
