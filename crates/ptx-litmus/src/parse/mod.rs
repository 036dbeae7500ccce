//! The reader for the PTX litmus format that Dat3M and herd use.
//!
//! It reads the header (`PTX name`, then any quoted descriptions), the
//! initial state, the thread placements (`P0@cta 0,gpu 0 | ...;`), the
//! instruction rows and the final condition. Every error carries the line
//! and column it was found at; a construct that is well formed but outside
//! what the checker models is an `unsupported` error, never an approximation.

mod cond;
mod instr;
mod lex;

use std::collections::BTreeMap;
use std::fmt;

use lex::{constant, is_identifier, register, thread_id};

use super::syntax::{Instr, Line, Loc, Pos, Reg, Test, Thread};

/// What kind of problem a [`ParseError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not a well-formed test.
    Syntax,
    /// The test is well formed but uses something the checker does not model.
    Unsupported,
}

/// A positioned reading error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// Where.
    pub pos: Pos,
    /// Syntax or unsupported.
    pub kind: ErrorKind,
    /// What, naming the construct.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ErrorKind::Syntax => "syntax error",
            ErrorKind::Unsupported => "unsupported",
        };
        write!(f, "{}: {kind}: {}", self.pos, self.message)
    }
}

type Result<T> = std::result::Result<T, ParseError>;

/// Reads a test.
///
/// # Errors
/// A [`ParseError`] with the position and the reason.
pub fn parse(text: &str) -> Result<Test> {
    Reader::new(text).test()
}

/// The text with line starts, so that any byte offset has a position.
struct Reader<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    locations: Vec<(String, i64)>,
    loc_index: BTreeMap<String, Loc>,
}

fn syntax<T>(pos: Pos, message: impl Into<String>) -> Result<T> {
    Err(ParseError {
        pos,
        kind: ErrorKind::Syntax,
        message: message.into(),
    })
}

fn unsupported<T>(pos: Pos, message: impl Into<String>) -> Result<T> {
    Err(ParseError {
        pos,
        kind: ErrorKind::Unsupported,
        message: message.into(),
    })
}

/// A slice of the text with its byte offset.
#[derive(Clone, Copy)]
struct Span<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Span<'a> {
    fn trim(self) -> Span<'a> {
        let start = self.text.len() - self.text.trim_start().len();
        Span {
            text: self.text.trim(),
            at: self.at + start,
        }
    }

    /// Splits on every `sep`, keeping offsets.
    fn split(self, sep: char) -> Vec<Span<'a>> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, c) in self.text.char_indices() {
            if c == sep {
                out.push(Span {
                    text: &self.text[start..i],
                    at: self.at + start,
                });
                start = i + c.len_utf8();
            }
        }
        out.push(Span {
            text: &self.text[start..],
            at: self.at + start,
        });
        out
    }
}

const CONDITION_WORDS: &[&str] = &["exists", "~exists", "~", "not", "forall"];
const REFUSED_SECTIONS: &[&str] = &["locations", "filter", "final"];

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Reader {
            text,
            line_starts,
            locations: Vec::new(),
            loc_index: BTreeMap::new(),
        }
    }

    fn pos(&self, offset: usize) -> Pos {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line.saturating_sub(1)];
        let col = self.text[start..offset.min(self.text.len())]
            .chars()
            .count()
            + 1;
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
        }
    }

    fn location(&mut self, name: &str) -> Loc {
        if let Some(&loc) = self.loc_index.get(name) {
            return loc;
        }
        let loc = Loc(u32::try_from(self.locations.len()).unwrap_or(u32::MAX));
        self.locations.push((name.to_string(), 0));
        self.loc_index.insert(name.to_string(), loc);
        loc
    }

    fn test(mut self) -> Result<Test> {
        let text = self.text;
        let head_start = text.len() - text.trim_start().len();
        let head_end = text[head_start..]
            .find('\n')
            .map_or(text.len(), |i| head_start + i);
        let header = &text[head_start..head_end];
        let mut words = header.split_whitespace();
        if !matches!(words.next(), Some("PTX" | "ptx")) {
            return syntax(
                self.pos(head_start),
                "a PTX litmus test starts with `PTX <name>`",
            );
        }
        let name = words.collect::<Vec<_>>().join(" ");
        if name.is_empty() {
            return syntax(self.pos(head_start), "the test has no name");
        }
        // Quoted descriptions may hold anything but `"` until the init block.
        let mut open = None;
        let mut quoted = false;
        for (i, c) in text[head_end..].char_indices() {
            match c {
                '"' => quoted = !quoted,
                '{' if !quoted => {
                    open = Some(head_end + i);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else {
            return syntax(self.pos(head_end), "no initial state `{ ... }`");
        };
        let Some(close) = text[open..].find('}').map(|i| open + i) else {
            return syntax(self.pos(open), "the initial state is not closed by `}`");
        };
        let registers = self.init(Span {
            text: &text[open + 1..close],
            at: open + 1,
        })?;

        let mut rest = Span {
            text: &text[close + 1..],
            at: close + 1,
        }
        .trim();
        if let Some(stripped) = rest.text.strip_prefix(';') {
            rest = Span {
                text: stripped,
                at: rest.at + 1,
            }
            .trim();
        }
        let Some(header_end) = rest.text.find(';') else {
            return syntax(
                self.pos(rest.at),
                "no thread header `P0@cta 0,gpu 0 | ...;`",
            );
        };
        let mut threads = self.placements(Span {
            text: &rest.text[..header_end],
            at: rest.at,
        })?;
        let mut body = Span {
            text: &rest.text[header_end + 1..],
            at: rest.at + header_end + 1,
        };
        loop {
            let trimmed = body.trim();
            if trimmed.text.is_empty() {
                return syntax(self.pos(trimmed.at), "no final condition");
            }
            if let Some(word) = REFUSED_SECTIONS
                .iter()
                .find(|w| starts_with_word(trimmed.text, w))
            {
                return unsupported(self.pos(trimmed.at), format!("the `{word}` section"));
            }
            if CONDITION_WORDS
                .iter()
                .any(|w| starts_with_word(trimmed.text, w))
            {
                let (quantifier, cond) = self.condition(trimmed, &threads)?;
                self.check_labels(&threads)?;
                let registers = registers
                    .into_iter()
                    .map(|(id, reg, value, pos)| {
                        threads
                            .iter()
                            .position(|t| t.id == id)
                            .map(|t| (u32::try_from(t).unwrap_or(u32::MAX), reg, value))
                            .map_or_else(
                                || syntax(pos, format!("no thread P{id} for its register {reg}")),
                                Ok,
                            )
                    })
                    .collect::<Result<Vec<_>>>()?;
                return Ok(Test {
                    name,
                    locations: self.locations,
                    registers,
                    threads,
                    quantifier,
                    cond,
                });
            }
            let Some(end) = body.text.find(';') else {
                return syntax(self.pos(trimmed.at), "an instruction row must end with `;`");
            };
            let row = Span {
                text: &body.text[..end],
                at: body.at,
            };
            self.row(row, &mut threads)?;
            body = Span {
                text: &body.text[end + 1..],
                at: body.at + end + 1,
            };
        }
    }

    /// The initial state: `loc = value` and `P<n>:r<k> = value` entries.
    fn init(&mut self, block: Span<'_>) -> Result<Vec<(u32, Reg, i64, Pos)>> {
        let mut registers = Vec::new();
        for entry in block.split(';') {
            let entry = entry.trim();
            if entry.text.is_empty() {
                continue;
            }
            let pos = self.pos(entry.at);
            if entry.text.contains('@') {
                return unsupported(pos, format!("proxy aliases `{}`", entry.text));
            }
            let Some((lhs, rhs)) = entry.text.split_once('=') else {
                return syntax(pos, format!("`{}` is not `name = value`", entry.text));
            };
            let (lhs, rhs) = (lhs.trim(), rhs.trim());
            let Some(value) = constant(rhs) else {
                if rhs.starts_with('&') || is_identifier(rhs) {
                    return unsupported(pos, format!("pointer initial value `{}`", entry.text));
                }
                return syntax(pos, format!("`{rhs}` is not a constant"));
            };
            if let Some((thread, reg)) = lhs.split_once(':') {
                let Some(id) = thread_id(thread.trim()) else {
                    return syntax(pos, format!("`{thread}` is not a thread"));
                };
                let Some(reg) = register(reg.trim()) else {
                    return syntax(pos, format!("`{reg}` is not a register `r<n>`"));
                };
                registers.push((id, reg, value, pos));
            } else if is_identifier(lhs) && register(lhs).is_none() {
                let loc = self.location(lhs);
                self.locations[loc.0 as usize].1 = value;
            } else {
                return unsupported(pos, format!("initial state entry `{}`", entry.text));
            }
        }
        Ok(registers)
    }

    /// The placement row: `P0@cta 0,gpu 0 | P1@cta 1,gpu 0`.
    fn placements(&self, row: Span<'_>) -> Result<Vec<Thread>> {
        let mut threads: Vec<Thread> = Vec::new();
        for col in row.split('|') {
            let col = col.trim();
            let pos = self.pos(col.at);
            let Some((id, placement)) = col.text.split_once('@') else {
                return syntax(
                    pos,
                    format!("`{}` is not a placement `P<n>@cta <c>,gpu <g>`", col.text),
                );
            };
            let Some(id) = thread_id(id.trim()) else {
                return syntax(pos, format!("`{id}` is not a thread `P<n>`"));
            };
            // Dat3M gives column i to thread P<i>; any other order would be
            // read differently here and there.
            if id as usize != threads.len() {
                return syntax(
                    pos,
                    format!(
                        "thread P{id} in column {}: the header lists P0, P1, ... in order",
                        threads.len()
                    ),
                );
            }
            let (mut cta, mut gpu) = (None, None);
            for part in placement.split(',') {
                let mut words = part.split_whitespace();
                let (Some(kind), Some(n), None) = (words.next(), words.next(), words.next()) else {
                    return syntax(pos, format!("`{}` is not `cta <c>,gpu <g>`", part.trim()));
                };
                let Ok(n) = n.parse::<u32>() else {
                    return syntax(pos, format!("`{n}` is not a scope id"));
                };
                match kind {
                    "cta" => cta = Some(n),
                    "gpu" => gpu = Some(n),
                    other => return unsupported(pos, format!("placement level `{other}`")),
                }
            }
            let (Some(cta), Some(gpu)) = (cta, gpu) else {
                return syntax(pos, "a placement names both its cta and its gpu");
            };
            threads.push(Thread {
                id,
                cta,
                gpu,
                code: Vec::new(),
            });
        }
        Ok(threads)
    }

    /// One instruction row, one column per thread.
    fn row(&mut self, row: Span<'_>, threads: &mut [Thread]) -> Result<()> {
        let cols = row.split('|');
        if cols.len() != threads.len() {
            return syntax(
                self.pos(row.trim().at),
                format!(
                    "the row has {} columns for {} threads",
                    cols.len(),
                    threads.len()
                ),
            );
        }
        for (thread, col) in threads.iter_mut().zip(cols) {
            let col = col.trim();
            if col.text.is_empty() {
                continue;
            }
            let pos = self.pos(col.at);
            let instr = self.instruction(col.text, pos)?;
            thread.code.push(Line {
                instr,
                pos,
                text: col.text.to_string(),
            });
        }
        Ok(())
    }

    /// Every branch names a label of its own thread, and no label is defined twice.
    fn check_labels(&self, threads: &[Thread]) -> Result<()> {
        for t in threads {
            let mut defined = BTreeMap::new();
            for line in &t.code {
                if let Instr::Mark(l) = line.instr
                    && defined.insert(l, line.pos).is_some()
                {
                    return syntax(line.pos, format!("label {l} is defined twice in P{}", t.id));
                }
            }
            for line in &t.code {
                if let Instr::Branch { target, .. } | Instr::Goto(target) = line.instr
                    && !defined.contains_key(&target)
                {
                    return syntax(
                        line.pos,
                        format!("`{}`: no label {target} in P{}", line.text, t.id),
                    );
                }
            }
        }
        Ok(())
    }
}

fn starts_with_word(text: &str, word: &str) -> bool {
    text.strip_prefix(word).is_some_and(|rest| {
        word == "~"
            || rest.is_empty()
            || !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}
