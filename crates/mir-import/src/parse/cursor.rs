//! A cursor over the tokens of one item, with the small helpers every parser uses.

use super::error::{ParseError, Pos};
use super::lexer::{Tok, Token};
use super::span::{NoteKind, SpanNote};

/// How deep the recursive descents may nest (types in types, places in
/// places, values in values, scopes in scopes), counted together.
///
/// Each level costs stack: past a few thousand levels the parser (and the
/// derived `Drop`, `Debug` and serializers that walk what it builds) would
/// overflow a thread's stack and abort the process instead of reporting
/// an error. rustc's MIR never comes near this; a hand-made or damaged file
/// can.
pub const MAX_NESTING: usize = 256;

/// Reads tokens front to back. Every failure is a positioned [`ParseError`].
pub struct Cursor<'a> {
    toks: Vec<Token>,
    idx: usize,
    text: &'a str,
    end: Pos,
    /// The recursive descents now open, against [`MAX_NESTING`].
    depth: usize,
    /// The span comments, in token order.
    notes: Vec<SpanNote>,
}

impl<'a> Cursor<'a> {
    /// A cursor over `toks`, lexed from `text`, with its span comments
    /// `notes`; `end` is where the text ends.
    pub fn new(toks: Vec<Token>, notes: Vec<SpanNote>, text: &'a str, end: Pos) -> Self {
        Cursor {
            toks,
            idx: 0,
            text,
            end,
            depth: 0,
            notes,
        }
    }

    /// The span comment of kind `kind` that sits right before the next token,
    /// that is, right after what was just consumed; `None` when there is none
    /// (MIR printed without spans).
    pub fn note(&self, kind: NoteKind) -> Option<&SpanNote> {
        let i = self.notes.partition_point(|n| n.before < self.idx);
        self.notes[i..]
            .iter()
            .take_while(|n| n.before == self.idx)
            .find(|n| n.kind == kind)
    }

    /// Runs one level of a recursive descent (`what` is the construct, for
    /// the message), refusing to go deeper than [`MAX_NESTING`] levels.
    ///
    /// # Errors
    /// The error `parse` returns, or a positioned "nesting deeper than"
    /// error at the token that would open one level too many.
    pub fn nested<T>(
        &mut self,
        what: &str,
        parse: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(format!(
                "nesting deeper than {MAX_NESTING} levels (at {what}); \
                 the parser stops here rather than exhaust its stack"
            )));
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    /// The next token, if any.
    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.idx).map(|t| &t.kind)
    }

    /// The token `n` places ahead.
    pub fn peek_nth(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.idx + n).map(|t| &t.kind)
    }

    /// Where the next token starts (or the end of the text).
    pub fn pos(&self) -> Pos {
        self.toks.get(self.idx).map_or(self.end, |t| t.pos)
    }

    /// Whether all tokens are consumed.
    pub fn at_end(&self) -> bool {
        self.idx >= self.toks.len()
    }

    /// Takes the next token.
    pub fn bump(&mut self) -> Result<Tok, ParseError> {
        match self.toks.get(self.idx) {
            Some(t) => {
                self.idx += 1;
                Ok(t.kind.clone())
            }
            None => Err(self.err("unexpected end of input (truncated item?)")),
        }
    }

    /// An error at the next token.
    pub fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError::new(self.pos(), message, "")
    }

    /// An "expected X, found Y" error at the next token.
    pub fn expected(&self, what: &str) -> ParseError {
        match self.peek() {
            Some(t) => self.err(format!("expected {what}, found {t}")),
            None => self.err(format!("expected {what}, found the end of the item")),
        }
    }

    /// Whether the next token is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    /// Whether the next token is the identifier or keyword `w`.
    pub fn is_ident(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(q)) if q == w)
    }

    /// Consumes `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> bool {
        let hit = self.is_punct(p);
        if hit {
            self.idx += 1;
        }
        hit
    }

    /// Consumes the keyword `w` if it is next.
    pub fn eat_ident(&mut self, w: &str) -> bool {
        let hit = self.is_ident(w);
        if hit {
            self.idx += 1;
        }
        hit
    }

    /// Requires the punctuation `p`.
    pub fn expect_punct(&mut self, p: &str) -> Result<(), ParseError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    /// Requires the keyword `w`.
    pub fn expect_keyword(&mut self, w: &str) -> Result<(), ParseError> {
        if self.eat_ident(w) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{w}`")))
        }
    }

    /// Requires an identifier and returns it.
    pub fn expect_ident(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.idx += 1;
                Ok(s)
            }
            _ => Err(self.expected("an identifier")),
        }
    }

    /// Requires an unsuffixed or suffixed integer literal and returns its value.
    pub fn expect_u64(&mut self) -> Result<u64, ParseError> {
        match self.peek() {
            Some(Tok::Int { digits, .. }) => {
                let v = digits
                    .parse::<u64>()
                    .map_err(|_| self.err("integer out of range"))?;
                self.idx += 1;
                Ok(v)
            }
            _ => Err(self.expected("an integer")),
        }
    }

    /// Requires a numbered name such as `_3` or `bb4` and returns the number.
    pub fn expect_numbered(&mut self, prefix: &str) -> Result<u32, ParseError> {
        let n = match self.peek() {
            Some(Tok::Ident(s)) => s
                .strip_prefix(prefix)
                .and_then(|d| d.parse::<u32>().ok().filter(|_| !d.is_empty())),
            _ => None,
        };
        match n {
            Some(n) => {
                self.idx += 1;
                Ok(n)
            }
            None => Err(self.expected(&format!("`{prefix}N`"))),
        }
    }

    /// Consumes tokens up to (not including) the `close` that balances the
    /// current nesting level, and returns the source text they cover.
    pub fn raw_until_close(&mut self, close: &str) -> Result<String, ParseError> {
        let first = self.idx;
        let mut depth = 0i32;
        loop {
            match self.peek() {
                None => return Err(self.err(format!("unbalanced brackets: no closing `{close}`"))),
                Some(Tok::Punct(p)) if depth == 0 && *p == close => break,
                Some(Tok::Punct("(" | "[" | "{" | "<")) => depth += 1,
                Some(Tok::Punct(")" | "]" | "}" | ">")) => depth -= 1,
                _ => {}
            }
            self.idx += 1;
        }
        Ok(self.text_between(first, self.idx))
    }

    /// The source text covered by tokens `from..to`.
    pub fn text_between(&self, from: usize, to: usize) -> String {
        if from >= to {
            return String::new();
        }
        let start = self.toks[from].start;
        let end = self.toks[to - 1].end;
        self.text.get(start..end).unwrap_or("").to_string()
    }

    /// Goes back to a position taken with [`Cursor::mark`].
    pub fn reset(&mut self, mark: usize) {
        self.idx = mark;
    }

    /// The index of the next token, for [`Cursor::text_between`].
    pub fn mark(&self) -> usize {
        self.idx
    }
}
