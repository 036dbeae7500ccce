//! Positioned parse errors.

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

/// A line the parser could not read: where, why, and the text of that line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("MIR parse error at {pos}: {message}\n  | {line_text}")]
pub struct ParseError {
    /// Where reading failed.
    pub pos: Pos,
    /// What was expected or what was wrong.
    pub message: String,
    /// The whole source line at `pos`, for the user.
    pub line_text: String,
}

impl ParseError {
    /// An error at `pos`; `line_text` may be filled in later by [`ParseError::with_source`].
    pub fn new(pos: Pos, message: impl Into<String>, line_text: impl Into<String>) -> Self {
        ParseError {
            pos,
            message: message.into(),
            line_text: line_text.into(),
        }
    }

    /// Fills in the text of the offending line from the whole input.
    pub fn with_source(mut self, source: &str) -> Self {
        if self.line_text.is_empty() {
            let idx = (self.pos.line as usize).saturating_sub(1);
            self.line_text = source.lines().nth(idx).unwrap_or("").trim_end().to_string();
        }
        self
    }
}
