//! Positioned parse errors.

pub use crate::model::Pos;

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

impl From<crate::model::HandleError> for ParseError {
    fn from(e: crate::model::HandleError) -> Self {
        ParseError::new(e.pos(), e.to_string(), "")
    }
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
