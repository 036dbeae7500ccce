//! The tokenizer for MIR text.
//!
//! rustc's MIR printer is not a grammar anyone publishes, so the lexer keeps to the
//! handful of token shapes the printer really emits. A few composite shapes are
//! single tokens because splitting them would make the parser guess:
//! `<impl at file.rs:1:2: 3:4>` (an impl path segment), `{closure@file.rs:1:2}`
//! (an opaque closure or coroutine type) and `{constant#0}` (a disambiguated path
//! segment). Comments (`// ...`) are skipped; those that carry a span
//! (`-Zmir-include-spans`) are kept aside as [`SpanNote`]s.

use super::error::{ParseError, Pos};
use super::span::{SpanNote, read_note};

/// One token with the position of its first character.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: Tok,
    /// Where it starts.
    pub pos: Pos,
    /// Byte offset of its first character in the tokenized text.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier or keyword (`_3`, `bb0`, `u32`, `mut`).
    Ident(String),
    /// An integer literal with its optional type suffix (`3_u32` is `3`, `u32`).
    Int {
        digits: String,
        suffix: Option<String>,
    },
    /// A float literal with its suffix (`1.5f32`).
    Float { text: String, suffix: String },
    /// A string literal, unescaped.
    Str(String),
    /// A byte-string literal, unescaped.
    ByteStr(Vec<u8>),
    /// A character literal.
    Char(char),
    /// A lifetime such as `'_` or `'static`.
    Lifetime(String),
    /// `<impl at ...>`: its inner text.
    ImplAt(String),
    /// `<static(DefId(21:101 ~ ryu[7648]::digit_table::DIGIT_TABLE))>`, a
    /// reference to another crate's static: its path
    /// (`ryu::digit_table::DIGIT_TABLE`).
    StaticRef(String),
    /// `{closure@...}` and friends: the whole text.
    Opaque(String),
    /// `{constant#0}`: the whole text.
    Disambiguator(String),
    /// Punctuation, possibly two characters (`::`, `->`, `=>`, `..`).
    Punct(&'static str),
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Int { digits, suffix } => match suffix {
                Some(sfx) => write!(f, "`{digits}_{sfx}`"),
                None => write!(f, "`{digits}`"),
            },
            Tok::Float { text, suffix } => write!(f, "`{text}{suffix}`"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::ByteStr(b) => write!(f, "b{:?}", String::from_utf8_lossy(b)),
            Tok::Char(c) => write!(f, "{c:?}"),
            Tok::Lifetime(s) => write!(f, "`'{s}`"),
            Tok::ImplAt(s) => write!(f, "`<impl at {s}>`"),
            Tok::StaticRef(s) => write!(f, "`<static({s})>`"),
            Tok::Opaque(s) | Tok::Disambiguator(s) => write!(f, "`{s}`"),
            Tok::Punct(p) => write!(f, "`{p}`"),
        }
    }
}

const PUNCT2: [&str; 4] = ["::", "->", "=>", ".."];
const PUNCT1: [&str; 21] = [
    "(", ")", "[", "]", "{", "}", "<", ">", ",", ";", ":", "=", "&", "*", ".", "#", "!", "@", "+",
    "-", "|",
];

/// The path in a static reference's `static(DefId(N:M ~ krate[hash]::a::B))`:
/// `krate::a::B`, the crate's disambiguating hash dropped; `a::B` for crate
/// 0, the crate being compiled.
fn static_def_path(inner: &str) -> Option<String> {
    let def = inner.strip_prefix("static(DefId(")?.strip_suffix("))")?;
    let (id, path) = def.split_once(" ~ ")?;
    let (krate, rest) = path.split_once("::")?;
    // Crate 0 is the crate being compiled, whose items MIR names without
    // the crate (`kernel::FIRST`, not `root::kernel::FIRST`).
    if id.split(':').next() == Some("0") {
        return Some(rest.to_owned());
    }
    let name = krate.split('[').next()?;
    Some(format!("{name}::{rest}"))
}

/// The tokens of `text` alone (see [`tokenize_with_notes`]).
#[cfg(test)]
pub fn tokenize(text: &str, base: Pos) -> Result<Vec<Token>, ParseError> {
    tokenize_with_notes(text, base).map(|(toks, _)| toks)
}

/// Splits `text` into tokens, and returns with them its span comments in
/// order. `base` is the position of `text`'s first character in the whole
/// input, so errors point into the original file.
pub fn tokenize_with_notes(
    text: &str,
    base: Pos,
) -> Result<(Vec<Token>, Vec<SpanNote>), ParseError> {
    Lexer {
        chars: text.char_indices().peekable(),
        text,
        pos: base,
        out: Vec::new(),
        notes: Vec::new(),
    }
    .run()
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    text: &'a str,
    pos: Pos,
    out: Vec<Token>,
    notes: Vec<SpanNote>,
}

impl<'a> Lexer<'a> {
    fn bump(&mut self) -> Option<char> {
        let (_, c) = self.chars.next()?;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.col = 1;
        } else {
            self.pos.col += 1;
        }
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    fn offset(&mut self) -> usize {
        self.chars.peek().map_or(self.text.len(), |&(i, _)| i)
    }

    fn rest(&mut self) -> &'a str {
        let at = self.offset();
        &self.text[at..]
    }

    fn push(&mut self, kind: Tok, pos: Pos, start: usize) {
        let end = self.offset();
        self.out.push(Token {
            kind,
            pos,
            start,
            end,
        });
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError::new(pos, message, "")
    }

    fn run(mut self) -> Result<(Vec<Token>, Vec<SpanNote>), ParseError> {
        while let Some(c) = self.peek() {
            let start = self.pos;
            let at = self.offset();
            if c == ' ' {
                // Runs of spaces pad every line out to its span comment.
                while self.chars.next_if(|&(_, c)| c == ' ').is_some() {
                    self.pos.col += 1;
                }
            } else if c.is_whitespace() {
                self.bump();
            } else if self.rest().starts_with("//") {
                self.comment(at);
            } else if c.is_ascii_alphabetic() || c == '_' {
                let mut word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
                // A raw identifier (`r#gen`, a keyword of edition 2024) is one
                // name, kept raw so that it reads back as source.
                let raw = self.rest().strip_prefix('#').and_then(|r| r.chars().next());
                if word == "r" && raw.is_some_and(|c| c.is_ascii_alphabetic() || c == '_') {
                    self.bump();
                    word.push('#');
                    word.push_str(&self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'));
                }
                if word == "b" && self.peek() == Some('"') {
                    let s = self.string(start)?;
                    self.push(Tok::ByteStr(s.into_bytes()), start, at);
                } else {
                    self.push(Tok::Ident(word), start, at);
                }
            } else if c.is_ascii_digit() {
                let tok = self.number();
                self.push(tok, start, at);
            } else if c == '"' {
                let s = self.string(start)?;
                self.push(Tok::Str(s), start, at);
            } else if c == '\'' {
                let tok = self.quote(start)?;
                self.push(tok, start, at);
            } else if self.rest().starts_with("<impl at ") {
                let inner = self.delimited(start, '<', '>')?;
                let inner = inner.trim_start_matches("impl at ").to_string();
                self.push(Tok::ImplAt(inner), start, at);
            } else if self.rest().starts_with("<static(DefId(") {
                let inner = self.delimited(start, '<', '>')?;
                let path = static_def_path(&inner).ok_or_else(|| {
                    self.err(start, format!("unreadable static reference `<{inner}>`"))
                })?;
                self.push(Tok::StaticRef(path), start, at);
            } else if c == '{' && self.brace_word() {
                let whole = self.delimited(start, '{', '}')?;
                let word_end = whole.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
                let kind = if word_end.is_some_and(|i| whole[i..].starts_with('#')) {
                    Tok::Disambiguator(format!("{{{whole}}}"))
                } else {
                    Tok::Opaque(format!("{{{whole}}}"))
                };
                self.push(kind, start, at);
            } else if let Some(p) = PUNCT2.iter().find(|p| self.rest().starts_with(**p)) {
                self.bump();
                self.bump();
                self.push(Tok::Punct(p), start, at);
            } else if let Some(p) = PUNCT1.iter().find(|p| p.starts_with(c)) {
                self.bump();
                self.push(Tok::Punct(p), start, at);
            } else {
                return Err(self.err(start, format!("unexpected character {c:?}")));
            }
        }
        Ok((self.out, self.notes))
    }

    /// Skips a `//` comment up to (not including) its line's end, keeping it
    /// as a note when it carries a span. A comment holds no newline, so the
    /// column advances by its characters without a per-character check.
    fn comment(&mut self, at: usize) {
        let rest = &self.text[at..];
        let len = rest.find('\n').unwrap_or(rest.len());
        let comment = &rest[..len];
        if let Some(note) = read_note(&comment[2..], self.out.len()) {
            self.notes.push(note);
        }
        let chars = comment.chars().count();
        self.pos.col = self.pos.col.saturating_add(chars as u32);
        if chars > 0 {
            self.chars.nth(chars - 1);
        }
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek().filter(|&c| keep(c)) {
            s.push(c);
            self.bump();
        }
        s
    }

    /// Whether a `{` opens `{word#N}`, `{word@...}` or `{async fn body of ...}`
    /// rather than a block.
    fn brace_word(&mut self) -> bool {
        let rest = self.rest();
        let word_len = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(0);
        let after = rest[1 + word_len..].chars().next();
        let word = &rest[1..1 + word_len];
        // `{async fn body of f()}`, `{coroutine@..}`, `{closure@..}`, `{constant#0}`.
        word_len > 0
            && (matches!(after, Some('#' | '@'))
                || (after == Some(' ') && matches!(word, "async" | "coroutine" | "static")))
    }

    /// Consumes a balanced `open ... close` run and returns the text inside.
    fn delimited(&mut self, start: Pos, open: char, close: char) -> Result<String, ParseError> {
        let mut depth = 0usize;
        let mut inner = String::new();
        // Composite tokens never span lines; stopping at the line's end keeps a
        // damaged one from swallowing the rest of the item.
        while let Some(c) = self.peek().filter(|&c| c != '\n') {
            self.bump();
            if c == open {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return Ok(inner);
                }
            }
            inner.push(c);
        }
        Err(self.err(start, format!("unbalanced `{open}`: no closing `{close}`")))
    }

    fn number(&mut self) -> Tok {
        let mut digits = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        // A fraction: `1.5f32`. A `.` followed by a digit right after a number can
        // only be a float; field projections follow identifiers or `)`.
        let mut is_float = false;
        let rest = self.rest();
        if rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
            self.bump();
            digits.push('.');
            digits.push_str(&self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'));
            is_float = true;
        }
        // An exponent: rustc prints floats outside [1e-4, 1e16) in scientific
        // form, `9.99999974E-6f32`, `1.0E+4f32`. The mantissa's alphanumeric run
        // stops at the exponent's `E` because its sign is punctuation; a sign
        // followed by a digit right after `E` can only be an exponent (a hex
        // integer such as `0x1E` is never followed by a digit after `-`).
        if !digits.starts_with("0x") && digits.ends_with(['E', 'e']) {
            let rest = self.rest();
            if rest.starts_with(['+', '-']) && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
                if let Some(sign) = self.bump() {
                    digits.push(sign);
                }
                digits.push_str(&self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'));
                is_float = true;
            }
        }
        for sfx in ["f16", "f32", "f64", "f128"] {
            if let Some(text) = digits.strip_suffix(sfx)
                && !digits.starts_with("0x")
            {
                let text = text.trim_end_matches('_').to_string();
                return Tok::Float {
                    text,
                    suffix: sfx.to_string(),
                };
            }
        }
        if is_float {
            return Tok::Float {
                text: digits,
                suffix: String::new(),
            };
        }
        match digits.find('_') {
            Some(i) if digits[i + 1..].starts_with(['u', 'i']) => Tok::Int {
                digits: digits[..i].to_string(),
                suffix: Some(digits[i + 1..].to_string()),
            },
            _ => Tok::Int {
                digits: digits.replace('_', ""),
                suffix: None,
            },
        }
    }

    fn escape(&mut self, start: Pos) -> Result<char, ParseError> {
        let bad = |lx: &Self| lx.err(start, "bad escape in literal");
        match self.bump().ok_or_else(|| bad(self))? {
            'n' => Ok('\n'),
            't' => Ok('\t'),
            'r' => Ok('\r'),
            '0' => Ok('\0'),
            '\\' => Ok('\\'),
            '\'' => Ok('\''),
            '"' => Ok('"'),
            'x' => {
                let hex: String = (0..2).filter_map(|_| self.bump()).collect();
                u8::from_str_radix(&hex, 16)
                    .map(char::from)
                    .map_err(|_| bad(self))
            }
            'u' => {
                if self.bump() != Some('{') {
                    return Err(bad(self));
                }
                let hex = self.take_while(|c| c.is_ascii_hexdigit());
                if self.bump() != Some('}') {
                    return Err(bad(self));
                }
                u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| bad(self))
            }
            _ => Err(bad(self)),
        }
    }

    fn string(&mut self, start: Pos) -> Result<String, ParseError> {
        self.bump();
        let mut s = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(start, "unterminated string literal")),
                Some('"') => return Ok(s),
                Some('\\') => s.push(self.escape(start)?),
                Some(c) => s.push(c),
            }
        }
    }

    /// A char literal or a lifetime, both of which start with `'`.
    fn quote(&mut self, start: Pos) -> Result<Tok, ParseError> {
        let rest = self.rest();
        let mut it = rest.chars().skip(1);
        let first = it.next();
        let closes = match first {
            Some('\\') => true,
            Some(_) => it.next() == Some('\''),
            None => false,
        };
        self.bump();
        if closes {
            let c = match self.bump() {
                Some('\\') => self.escape(start)?,
                Some(c) => c,
                None => return Err(self.err(start, "unterminated char literal")),
            };
            if self.bump() != Some('\'') {
                return Err(self.err(start, "unterminated char literal"));
            }
            Ok(Tok::Char(c))
        } else {
            let name = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
            if name.is_empty() {
                return Err(self.err(start, "a lone `'`"));
            }
            Ok(Tok::Lifetime(name))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        tokenize(s, Pos { line: 1, col: 1 })
            .expect("lexes")
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn raw_identifiers_are_one_name() {
        assert_eq!(
            kinds("Rng>::r#gen::<u32> r # x"),
            vec![
                Tok::Ident("Rng".into()),
                Tok::Punct(">"),
                Tok::Punct("::"),
                Tok::Ident("r#gen".into()),
                Tok::Punct("::"),
                Tok::Punct("<"),
                Tok::Ident("u32".into()),
                Tok::Punct(">"),
                Tok::Ident("r".into()),
                Tok::Punct("#"),
                Tok::Ident("x".into()),
            ]
        );
    }

    #[test]
    fn suffixed_literals_split_digits_and_type() {
        assert_eq!(
            kinds("3_u32 1.5f32 -5_i32"),
            vec![
                Tok::Int {
                    digits: "3".into(),
                    suffix: Some("u32".into())
                },
                Tok::Float {
                    text: "1.5".into(),
                    suffix: "f32".into()
                },
                Tok::Punct("-"),
                Tok::Int {
                    digits: "5".into(),
                    suffix: Some("i32".into())
                },
            ]
        );
    }

    #[test]
    fn scientific_floats_are_one_token() {
        let float = |text: &str, suffix: &str| Tok::Float {
            text: text.into(),
            suffix: suffix.into(),
        };
        assert_eq!(
            kinds("9.99999974E-6f32 1.0E+4f64 4.9406564584124654E-324f64 0x1E - 5_u8"),
            vec![
                float("9.99999974E-6", "f32"),
                float("1.0E+4", "f64"),
                float("4.9406564584124654E-324", "f64"),
                Tok::Int {
                    digits: "0x1E".into(),
                    suffix: None
                },
                Tok::Punct("-"),
                Tok::Int {
                    digits: "5".into(),
                    suffix: Some("u8".into())
                },
            ]
        );
        assert_eq!(
            kinds("+Inf_f32 NaN_f64"),
            vec![
                Tok::Punct("+"),
                Tok::Ident("Inf_f32".into()),
                Tok::Ident("NaN_f64".into())
            ]
        );
    }

    #[test]
    fn a_static_of_this_crate_is_its_path_without_the_crate() {
        assert_eq!(
            kinds("const <static(DefId(0:12 ~ kernel[8d1c]::kernel::FIRST))>"),
            vec![
                Tok::Ident("const".into()),
                Tok::StaticRef("kernel::FIRST".into()),
            ]
        );
    }

    #[test]
    fn a_static_of_another_crate_is_its_path() {
        assert_eq!(
            kinds("const <static(DefId(21:101 ~ ryu[7648]::digit_table::DIGIT_TABLE))> as"),
            vec![
                Tok::Ident("const".into()),
                Tok::StaticRef("ryu::digit_table::DIGIT_TABLE".into()),
                Tok::Ident("as".into()),
            ]
        );
        // Without the `~ path` part, it is an error, not a guess.
        assert!(tokenize("const <static(DefId(21:101))>", Pos { line: 1, col: 1 }).is_err());
    }

    #[test]
    fn composite_tokens_stay_whole() {
        assert_eq!(
            kinds("<impl at k.rs:5:10: 5:15>::clone {constant#0} {closure@k.rs:1:2}"),
            vec![
                Tok::ImplAt("k.rs:5:10: 5:15".into()),
                Tok::Punct("::"),
                Tok::Ident("clone".into()),
                Tok::Disambiguator("{constant#0}".into()),
                Tok::Opaque("{closure@k.rs:1:2}".into()),
            ]
        );
    }

    #[test]
    fn lifetimes_and_chars_differ() {
        assert_eq!(
            kinds("'_ 'x' 'static"),
            vec![
                Tok::Lifetime("_".into()),
                Tok::Char('x'),
                Tok::Lifetime("static".into())
            ]
        );
    }

    #[test]
    fn field_projection_after_ident_is_not_a_float() {
        assert_eq!(
            kinds("_5.0"),
            vec![
                Tok::Ident("_5".into()),
                Tok::Punct("."),
                Tok::Int {
                    digits: "0".into(),
                    suffix: None
                }
            ]
        );
    }

    #[test]
    fn unbalanced_impl_is_an_error() {
        let err = tokenize("<impl at k.rs", Pos { line: 3, col: 7 }).expect_err("unbalanced");
        assert_eq!(err.pos, Pos { line: 3, col: 7 });
    }
}
