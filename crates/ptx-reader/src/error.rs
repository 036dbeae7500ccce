//! Positioned errors: every refusal names the line and column of the token
//! that could not be read, so that a reader of a failing shape check can open
//! the PTX at the spot.

use std::fmt;

/// A 1-based line and column (in characters) in the PTX text.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, counted in characters.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// What was wrong at a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// A character no PTX token starts with.
    #[error("unexpected character {0:?}")]
    BadChar(char),
    /// A `/*` comment or a string without its end.
    #[error("unterminated {0}")]
    Unterminated(&'static str),
    /// A token other than the one the grammar needs here.
    #[error("unexpected {found}, expected {expected}")]
    Unexpected {
        /// The token found, as written (or `end of input`).
        found: String,
        /// What the grammar allows here.
        expected: &'static str,
    },
    /// A directive this reader does not accept at this place.
    #[error("unknown directive `{0}`")]
    UnknownDirective(String),
    /// An opcode outside the PTX instruction set this reader knows.
    #[error("unknown opcode `{0}`")]
    UnknownOpcode(String),
    /// A modifier (`.xyz` after an opcode) this reader does not know.
    #[error("unknown modifier `.{modifier}` of `{opcode}`")]
    UnknownModifier {
        /// The opcode it follows.
        opcode: String,
        /// The modifier, without its dot.
        modifier: String,
    },
    /// A number that does not fit or is not written as PTX writes numbers.
    #[error("bad number `{0}`")]
    BadNumber(String),
    /// Braces, brackets or parentheses nested deeper than the reader allows.
    #[error("nesting deeper than {0}")]
    TooDeep(usize),
}

/// PTX text the reader refuses, with where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PTX {pos}: {kind}")]
pub struct ParseError {
    /// Where the offending token starts.
    pub pos: Pos,
    /// What was wrong.
    pub kind: ErrorKind,
}

impl ParseError {
    pub(crate) fn new(pos: Pos, kind: ErrorKind) -> Self {
        ParseError { pos, kind }
    }
}
