//! The lexer: PTX text into tokens with positions. Comments (`//`, `/* */`)
//! are dropped here, so the parser never sees them.
//!
//! A word keeps its dots (`ld.acquire.sys.u32`, `%tid.x`, `.version`) and
//! `::` (`shared::cta`): the parser splits an opcode from its modifiers, and a
//! directive is a word that starts with a dot.

use crate::error::{ErrorKind, ParseError, Pos};

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier, opcode, register or directive, dots included.
    Word(String),
    /// A number as written (`12`, `0xFF00`, `0f3F800000`, `8.8`).
    Num(String),
    /// A string literal, without its quotes.
    Str(String),
    /// One punctuation character.
    Punct(char),
}

impl Tok {
    /// The token as written, for error messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Num(n) => format!("number `{n}`"),
            Tok::Str(s) => format!("string \"{s}\""),
            Tok::Punct(c) => format!("`{c}`"),
        }
    }
}

/// A token with where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) pos: Pos,
}

const PUNCT: &str = "{}()[];,:+-@!=<>|";

fn word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%' | '.')
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.')
}

/// Splits `text` into tokens.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let advance = |i: &mut usize, line: &mut u32, col: &mut u32| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, col };
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col);
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                advance(&mut i, &mut line, &mut col);
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            advance(&mut i, &mut line, &mut col);
            advance(&mut i, &mut line, &mut col);
            loop {
                if i >= chars.len() {
                    return Err(ParseError::new(pos, ErrorKind::Unterminated("comment")));
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    advance(&mut i, &mut line, &mut col);
                    advance(&mut i, &mut line, &mut col);
                    break;
                }
                advance(&mut i, &mut line, &mut col);
            }
        } else if c == '"' {
            advance(&mut i, &mut line, &mut col);
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(ParseError::new(pos, ErrorKind::Unterminated("string")));
                    }
                    Some('"') => break,
                    Some(&ch) => s.push(ch),
                }
                advance(&mut i, &mut line, &mut col);
            }
            advance(&mut i, &mut line, &mut col);
            out.push(Token {
                tok: Tok::Str(s),
                pos,
            });
        } else if c.is_ascii_digit() {
            let mut s = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                s.push(chars[i]);
                advance(&mut i, &mut line, &mut col);
            }
            out.push(Token {
                tok: Tok::Num(s),
                pos,
            });
        } else if word_start(c) {
            let mut s = String::new();
            s.push(c);
            advance(&mut i, &mut line, &mut col);
            loop {
                match chars.get(i) {
                    Some(&ch) if word_char(ch) => s.push(ch),
                    Some(':')
                        if chars.get(i + 1) == Some(&':')
                            && chars.get(i + 2).is_some_and(|&n| word_char(n)) =>
                    {
                        s.push_str("::");
                        advance(&mut i, &mut line, &mut col);
                    }
                    _ => break,
                }
                advance(&mut i, &mut line, &mut col);
            }
            out.push(Token {
                tok: Tok::Word(s),
                pos,
            });
        } else if PUNCT.contains(c) {
            advance(&mut i, &mut line, &mut col);
            out.push(Token {
                tok: Tok::Punct(c),
                pos,
            });
        } else {
            return Err(ParseError::new(pos, ErrorKind::BadChar(c)));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_dots_and_double_colons() {
        let t = lex("ld.shared::cta.u32 %r1, [%rd1+-4]; // c\n/* x\n */ $L__BB0_1:").unwrap();
        let toks: Vec<Tok> = t.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(toks[0], Tok::Word("ld.shared::cta.u32".into()));
        assert_eq!(toks[5], Tok::Punct('+'));
        assert_eq!(toks[6], Tok::Punct('-'));
        assert_eq!(toks[7], Tok::Num("4".into()));
        let label = &t[t.len() - 2];
        assert_eq!(label.tok, Tok::Word("$L__BB0_1".into()));
        assert_eq!(label.pos, Pos { line: 3, col: 5 });
    }

    #[test]
    fn unterminated_comment_is_positioned() {
        let e = lex("ret;\n  /* open").unwrap_err();
        assert_eq!(e.to_string(), "PTX 2:3: unterminated comment");
    }
}
