//! The reader for the PTX litmus format that Dat3M and herd use.
//!
//! It reads the header (`PTX name`, then any quoted descriptions), the
//! initial state, the thread placements (`P0@cta 0,gpu 0 | ...;`), the
//! instruction rows and the final condition. Every error carries the line
//! and column it was found at; a construct that is well formed but outside
//! what the checker models is an `unsupported` error, never an approximation.

use std::collections::BTreeMap;
use std::fmt;

use super::syntax::{
    AtomOp, BinOp, CmpOp, Cond, CondValue, Instr, Label, Line, Loc, Operand, Order, Pos,
    Quantifier, Reg, Scope, Test, Thread,
};

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

    fn instruction(&mut self, text: &str, pos: Pos) -> Result<Instr> {
        let (opcode, operands) = text
            .split_once(char::is_whitespace)
            .map_or((text, ""), |(o, rest)| (o, rest.trim()));
        if let Some(label) = opcode.strip_suffix(':') {
            if !operands.is_empty() {
                return syntax(pos, format!("`{text}`: a label stands alone"));
            }
            return label_of(label).map(Instr::Mark).map_or_else(
                || syntax(pos, format!("`{label}` is not a label `LC<n>`")),
                Ok,
            );
        }
        let args: Vec<&str> = if operands.is_empty() {
            Vec::new()
        } else {
            operands.split(',').map(str::trim).collect()
        };
        let parts: Vec<&str> = opcode.split('.').collect();
        let ops = Operands {
            args: &args,
            pos,
            text,
        };
        match parts[0] {
            "ld" if parts.len() == 1 => {
                ops.count(2)?;
                Ok(Instr::Move {
                    dst: ops.reg(0)?,
                    value: ops.value(1)?,
                })
            }
            "st" if parts.len() == 1 => {
                syntax(pos, format!("`{text}`: a store names its memory order"))
            }
            "ld" | "st" => {
                let is_load = parts[0] == "ld";
                let order = order(parts[1], pos)?;
                let allowed = if is_load {
                    [Order::Weak, Order::Relaxed, Order::Acquire]
                } else {
                    [Order::Weak, Order::Relaxed, Order::Release]
                };
                if !allowed.contains(&order) {
                    return unsupported(pos, format!("`{opcode}`: {} .{order}", parts[0]));
                }
                let scope = match (order, parts.get(2)) {
                    (Order::Weak, None) => None,
                    (Order::Weak, Some(s)) => {
                        return syntax(
                            pos,
                            format!("`{opcode}`: a weak access has no scope (.{s})"),
                        );
                    }
                    (_, Some(s)) => Some(scope(s, pos)?),
                    (_, None) => {
                        return syntax(pos, format!("`{opcode}`: a .{order} access needs a scope"));
                    }
                };
                if parts.len() > 3 || (order == Order::Weak && parts.len() > 2) {
                    return unsupported(
                        pos,
                        format!("`{opcode}`: qualifiers beyond order and scope"),
                    );
                }
                ops.count(2)?;
                if is_load {
                    Ok(Instr::Load {
                        order,
                        scope,
                        dst: ops.reg(0)?,
                        loc: self.loc_operand(&ops, 1)?,
                    })
                } else {
                    Ok(Instr::Store {
                        order,
                        scope,
                        loc: self.loc_operand(&ops, 0)?,
                        value: ops.value(1)?,
                    })
                }
            }
            "atom" | "red" => {
                let is_atom = parts[0] == "atom";
                if parts.len() != 4 {
                    return syntax(
                        pos,
                        format!("`{opcode}` is not `{}.<order>.<scope>.<op>`", parts[0]),
                    );
                }
                let order = order(parts[1], pos)?;
                if !matches!(
                    order,
                    Order::Relaxed | Order::Acquire | Order::Release | Order::AcqRel
                ) {
                    return unsupported(pos, format!("`{opcode}`: {} .{order}", parts[0]));
                }
                let scope = scope(parts[2], pos)?;
                let op = match (parts[3], is_atom) {
                    ("cas", true) => None,
                    ("exch", true) => Some(AtomOp::Exch),
                    (other, _) => match bin_op(other) {
                        Some(op) => Some(AtomOp::Bin(op)),
                        None => {
                            return unsupported(pos, format!("`{opcode}`: operation .{other}"));
                        }
                    },
                };
                if !is_atom {
                    ops.count(2)?;
                    let Some(AtomOp::Bin(op)) = op else {
                        return unsupported(pos, format!("`{opcode}`"));
                    };
                    return Ok(Instr::Red {
                        order,
                        scope,
                        op,
                        loc: self.loc_operand(&ops, 0)?,
                        value: ops.value(1)?,
                    });
                }
                let (op, value) = match op {
                    None => {
                        ops.count(4)?;
                        (
                            AtomOp::Cas {
                                expected: ops.value(2)?,
                            },
                            ops.value(3)?,
                        )
                    }
                    Some(op) => {
                        ops.count(3)?;
                        (op, ops.value(2)?)
                    }
                };
                Ok(Instr::Atom {
                    order,
                    scope,
                    op,
                    dst: ops.reg(0)?,
                    loc: self.loc_operand(&ops, 1)?,
                    value,
                })
            }
            "fence" => {
                if parts.get(1) == Some(&"proxy") {
                    return unsupported(pos, format!("`{opcode}`: proxy fences (PTX 7.5)"));
                }
                if parts.len() != 3 {
                    return syntax(
                        pos,
                        format!("`{opcode}` is not `fence.<sc|acq_rel>.<scope>`"),
                    );
                }
                let order = order(parts[1], pos)?;
                if !matches!(order, Order::Sc | Order::AcqRel) {
                    return unsupported(pos, format!("`{opcode}`: fence .{order}"));
                }
                ops.count(0)?;
                Ok(Instr::Fence {
                    order,
                    scope: scope(parts[2], pos)?,
                })
            }
            "bar" => {
                let arrive = match parts.as_slice() {
                    [_, "cta", "sync"] => false,
                    [_, "cta", "arrive"] => true,
                    _ => {
                        return unsupported(
                            pos,
                            format!("`{opcode}`: only bar.cta.sync and bar.cta.arrive"),
                        );
                    }
                };
                if args.is_empty() || args.len() > 3 {
                    return syntax(
                        pos,
                        format!("`{text}` is not `{opcode} <instance>[, <id>[, <quorum>]]`"),
                    );
                }
                let Some(instance) = constant(args[0]) else {
                    return syntax(pos, format!("`{text}`: the instance is a constant"));
                };
                if instance.to_string() != args[0] {
                    // Dat3M tells instances apart by their text.
                    return unsupported(
                        pos,
                        format!(
                            "`{text}`: barrier instance `{}` is not written as a plain number",
                            args[0]
                        ),
                    );
                }
                Ok(Instr::Barrier {
                    arrive,
                    instance,
                    id: args.get(1).map(|_| ops.value(1)).transpose()?,
                    quorum: args.get(2).map(|_| ops.value(2)).transpose()?,
                })
            }
            "add" | "sub" | "mul" | "div" if parts.len() == 1 => {
                ops.count(3)?;
                Ok(Instr::Local {
                    op: bin_op(parts[0]).unwrap_or(BinOp::Add),
                    dst: ops.reg(0)?,
                    lhs: ops.value(1)?,
                    rhs: ops.value(2)?,
                })
            }
            "beq" | "bne" | "blt" | "bgt" | "ble" | "bge" if parts.len() == 1 => {
                ops.count(3)?;
                let cmp = match parts[0] {
                    "beq" => CmpOp::Eq,
                    "bne" => CmpOp::Ne,
                    "blt" => CmpOp::Lt,
                    "bgt" => CmpOp::Gt,
                    "ble" => CmpOp::Le,
                    _ => CmpOp::Ge,
                };
                Ok(Instr::Branch {
                    cmp,
                    lhs: ops.value(0)?,
                    rhs: ops.value(1)?,
                    target: ops.label(2)?,
                })
            }
            "goto" if parts.len() == 1 => {
                ops.count(1)?;
                Ok(Instr::Goto(ops.label(0)?))
            }
            "tld" | "suld" | "cold" | "sust" | "suatom" | "sured" => unsupported(
                pos,
                format!("`{opcode}`: texture, surface and constant proxies (PTX 7.5)"),
            ),
            _ => unsupported(pos, format!("instruction `{opcode}`")),
        }
    }

    fn loc_operand(&mut self, ops: &Operands<'_>, i: usize) -> Result<Loc> {
        let name = ops.args[i];
        if !is_identifier(name) || register(name).is_some() {
            return syntax(
                ops.pos,
                format!("`{}`: `{name}` is not a location", ops.text),
            );
        }
        Ok(self.location(name))
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

    fn condition(&mut self, span: Span<'_>, threads: &[Thread]) -> Result<(Quantifier, Cond)> {
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

/// The operands of one instruction, with what to say when one is wrong.
struct Operands<'t> {
    args: &'t [&'t str],
    pos: Pos,
    text: &'t str,
}

impl Operands<'_> {
    fn count(&self, n: usize) -> Result<()> {
        if self.args.len() == n {
            Ok(())
        } else {
            syntax(
                self.pos,
                format!("`{}` has {} operands, not {n}", self.text, self.args.len()),
            )
        }
    }

    fn reg(&self, i: usize) -> Result<Reg> {
        register(self.args[i]).map_or_else(
            || {
                syntax(
                    self.pos,
                    format!("`{}`: `{}` is not a register", self.text, self.args[i]),
                )
            },
            Ok,
        )
    }

    fn value(&self, i: usize) -> Result<Operand> {
        let a = self.args[i];
        if let Some(r) = register(a) {
            return Ok(Operand::Reg(r));
        }
        constant(a).map(Operand::Const).map_or_else(
            || {
                syntax(
                    self.pos,
                    format!("`{}`: `{a}` is not a constant or a register", self.text),
                )
            },
            Ok,
        )
    }

    fn label(&self, i: usize) -> Result<Label> {
        label_of(self.args[i]).map_or_else(
            || {
                syntax(
                    self.pos,
                    format!("`{}`: `{}` is not a label `LC<n>`", self.text, self.args[i]),
                )
            },
            Ok,
        )
    }
}

fn starts_with_word(text: &str, word: &str) -> bool {
    text.strip_prefix(word).is_some_and(|rest| {
        word == "~"
            || rest.is_empty()
            || !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

fn order(s: &str, pos: Pos) -> Result<Order> {
    Ok(match s {
        "weak" => Order::Weak,
        "relaxed" => Order::Relaxed,
        "acquire" => Order::Acquire,
        "release" => Order::Release,
        "acq_rel" => Order::AcqRel,
        "sc" => Order::Sc,
        "volatile" | "relaxed_sys" | "mmio" => {
            return unsupported(pos, format!("memory order .{s}"));
        }
        other => return syntax(pos, format!("`.{other}` is not a memory order")),
    })
}

fn scope(s: &str, pos: Pos) -> Result<Scope> {
    Ok(match s {
        "cta" => Scope::Cta,
        "gpu" => Scope::Gpu,
        "sys" => Scope::Sys,
        "cluster" => return unsupported(pos, "scope .cluster"),
        other => return syntax(pos, format!("`.{other}` is not a scope")),
    })
}

fn bin_op(s: &str) -> Option<BinOp> {
    Some(match s {
        "add" => BinOp::Add,
        "sub" => BinOp::Sub,
        "mul" => BinOp::Mul,
        "div" => BinOp::Div,
        "and" => BinOp::And,
        "or" => BinOp::Or,
        "xor" => BinOp::Xor,
        _ => return None,
    })
}

fn constant(s: &str) -> Option<i64> {
    let (neg, digits) = s.strip_prefix('-').map_or((false, s), |d| (true, d));
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A register `r<n>`. Dat3M compares register names as text, so a number
/// with a leading zero (`r01`) is not read: it would silently be `r1`.
fn register(s: &str) -> Option<Reg> {
    let n = s.strip_prefix('r')?;
    let canonical = n == "0" || (!n.starts_with('0') && !n.is_empty());
    (canonical && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok().map(Reg))
        .flatten()
}

fn thread_id(s: &str) -> Option<u32> {
    let n = s.strip_prefix('P').unwrap_or(s);
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

fn label_of(s: &str) -> Option<Label> {
    let n = s.strip_prefix("LC")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Label {
        number: n.parse().ok()?,
        digits: u8::try_from(n.len()).ok()?,
    })
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
