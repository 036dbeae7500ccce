//! The final condition: quantifier, then `/\`, `\/`, `~` over comparisons.

use super::lex::{constant, is_identifier, register, thread_id};
use super::{Reader, Result, Span, syntax, unsupported};
use crate::syntax::{CmpOp, Cond, CondValue, Pos, Quantifier, Thread};

impl Reader<'_> {
    /// Reads the quantifier and the condition after it.
    pub(super) fn condition(
        &mut self,
        span: Span<'_>,
        threads: &[Thread],
    ) -> Result<(Quantifier, Cond)> {
        let text = span.text;
        let (quantifier, skip) = if let Some(rest) = text.strip_prefix("forall") {
            (Quantifier::Forall, text.len() - rest.len())
        } else if let Some(rest) = text.strip_prefix("exists") {
            (Quantifier::Exists, text.len() - rest.len())
        } else {
            let after_not = text
                .strip_prefix('~')
                .or_else(|| text.strip_prefix("not"))
                .unwrap_or(text);
            let trimmed = after_not.trim_start();
            match trimmed.strip_prefix("exists") {
                Some(rest) => (Quantifier::NotExists, text.len() - rest.len()),
                None => {
                    return syntax(
                        self.pos(span.at),
                        "expected `exists`, `~exists` or `forall`",
                    );
                }
            }
        };
        let mut tokens = Vec::new();
        let body = &text[skip..];
        let base = span.at + skip;
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let at = base + i;
            match c {
                c if c.is_whitespace() => {}
                '(' | ')' | '~' => tokens.push((Tok::Punct(c), at)),
                ';' => {
                    if body[i + 1..].trim().is_empty() {
                        break;
                    }
                    return syntax(self.pos(at), "text after the condition");
                }
                '/' | '\\' => {
                    let next = chars.next().map(|(_, n)| n);
                    match (c, next) {
                        ('/', Some('\\')) => tokens.push((Tok::And, at)),
                        ('\\', Some('/')) => tokens.push((Tok::Or, at)),
                        _ => return syntax(self.pos(at), "expected `/\\` or `\\/`"),
                    }
                }
                '=' | '!' | '<' | '>' => {
                    let two = chars.peek().is_some_and(|&(_, n)| n == '=');
                    if two {
                        chars.next();
                    }
                    let op = match (c, two) {
                        ('=', _) => CmpOp::Eq,
                        ('!', true) => CmpOp::Ne,
                        ('<', false) => CmpOp::Lt,
                        ('<', true) => CmpOp::Le,
                        ('>', false) => CmpOp::Gt,
                        ('>', true) => CmpOp::Ge,
                        _ => return syntax(self.pos(at), "expected `!=`"),
                    };
                    tokens.push((Tok::Cmp(op), at));
                }
                _ => {
                    let mut end = i + c.len_utf8();
                    while let Some(&(j, n)) = chars.peek() {
                        if n.is_alphanumeric() || n == '_' || n == ':' || n == '-' {
                            end = j + n.len_utf8();
                            chars.next();
                        } else if n.is_whitespace() && body[i..j].ends_with(':') {
                            // `P3: r0`: a space after the thread's colon.
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    let word: String = body[i..end].split_whitespace().collect();
                    tokens.push((Tok::Word(word), at));
                }
            }
        }
        let mut parser = CondParser {
            tokens,
            next: 0,
            end: span.at + text.len(),
            reader: self,
            threads,
        };
        let cond = parser.or()?;
        if let Some((_, at)) = parser.tokens.get(parser.next) {
            return syntax(parser.reader.pos(*at), "text after the condition");
        }
        Ok((quantifier, cond))
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Punct(char),
    And,
    Or,
    Cmp(CmpOp),
    Word(String),
}

struct CondParser<'r, 'a> {
    tokens: Vec<(Tok, usize)>,
    next: usize,
    end: usize,
    reader: &'r mut Reader<'a>,
    threads: &'r [Thread],
}

impl CondParser<'_, '_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.next).map(|(t, _)| t)
    }

    fn here(&self) -> Pos {
        let at = self.tokens.get(self.next).map_or(self.end, |(_, at)| *at);
        self.reader.pos(at)
    }

    fn or(&mut self) -> Result<Cond> {
        let mut lhs = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.next += 1;
            lhs = Cond::Or(Box::new(lhs), Box::new(self.and()?));
        }
        Ok(lhs)
    }

    fn and(&mut self) -> Result<Cond> {
        let mut lhs = self.unary()?;
        while self.peek() == Some(&Tok::And) {
            self.next += 1;
            lhs = Cond::And(Box::new(lhs), Box::new(self.unary()?));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Cond> {
        match self.peek() {
            Some(Tok::Punct('~')) => {
                self.next += 1;
                Ok(Cond::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Word(w)) if w == "not" => {
                self.next += 1;
                Ok(Cond::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Punct('(')) => {
                self.next += 1;
                let inner = self.or()?;
                if self.peek() != Some(&Tok::Punct(')')) {
                    return syntax(self.here(), "expected `)`");
                }
                self.next += 1;
                Ok(inner)
            }
            _ => {
                let lhs = self.value()?;
                let Some(Tok::Cmp(op)) = self.peek().cloned() else {
                    return syntax(self.here(), "expected a comparison");
                };
                self.next += 1;
                let at = self.here();
                let rhs = self.value()?;
                if matches!(rhs, CondValue::Loc(_)) {
                    // Dat3M reads a location on the right as its address.
                    return unsupported(at, "a location on the right of a comparison");
                }
                Ok(Cond::Cmp(lhs, op, rhs))
            }
        }
    }

    fn value(&mut self) -> Result<CondValue> {
        let pos = self.here();
        let Some(Tok::Word(word)) = self.peek().cloned() else {
            return syntax(pos, "expected a register, a location or a constant");
        };
        self.next += 1;
        if let Some(v) = constant(&word) {
            return Ok(CondValue::Const(v));
        }
        if let Some((thread, reg)) = word.split_once(':') {
            let Some(id) = thread_id(thread) else {
                return syntax(pos, format!("`{thread}` is not a thread"));
            };
            let Some(reg) = register(reg) else {
                return syntax(pos, format!("`{reg}` is not a register"));
            };
            let Some(index) = self.threads.iter().position(|t| t.id == id) else {
                return syntax(
                    pos,
                    format!("the condition names P{id}, which has no column"),
                );
            };
            return Ok(CondValue::Reg(
                u32::try_from(index).unwrap_or(u32::MAX),
                reg,
            ));
        }
        if is_identifier(&word) && register(&word).is_none() {
            if !self.reader.loc_index.contains_key(&word) {
                return syntax(
                    pos,
                    format!("the condition names `{word}`, which is no location"),
                );
            }
            return Ok(CondValue::Loc(self.reader.location(&word)));
        }
        unsupported(pos, format!("condition value `{word}`"))
    }
}
