//! The MIR text parser: splits rustc's `--emit=mir` output into items and reads
//! each into the model. It never guesses: a line it cannot read is a
//! [`ParseError`] with its line, column and text.

mod alloc;
mod body;
mod cursor;
mod error;
mod lexer;
mod operand;
mod rvalue;
mod span;
mod ty;

pub use cursor::MAX_NESTING;
pub use error::{ParseError, Pos};

use crate::model::{AllocDump, Body};
use std::collections::BTreeMap;

/// What one MIR file holds: its bodies in print order and its allocations.
#[derive(Debug, Default)]
pub struct ParsedMir {
    /// The bodies.
    pub bodies: Vec<Body>,
    /// The allocation dumps, by id.
    pub allocs: BTreeMap<crate::model::AllocId, AllocDump>,
    /// Allocations printed only as a name (`allocN (static: S)`): ids that stand
    /// for a static whose bytes are not dumped at that point.
    pub static_names: BTreeMap<crate::model::AllocId, String>,
}

/// Parses the whole text that `rustc --emit=mir` printed.
pub fn parse_mir(text: &str) -> Result<ParsedMir, ParseError> {
    parse_inner(text).map_err(|e| e.with_source(text))
}

fn parse_inner(text: &str) -> Result<ParsedMir, ParseError> {
    let mut out = ParsedMir::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut ctfe_next = false;
    while i < lines.len() {
        let line = lines[i];
        let pos = Pos {
            line: i as u32 + 1,
            col: 1,
        };
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if line.starts_with("// MIR FOR CTFE") {
            ctfe_next = true;
            i += 1;
            continue;
        }
        if line.starts_with("//") {
            i += 1;
            continue;
        }
        if line.starts_with("alloc") && !line.trim_end().ends_with('{') {
            let (id, path) = alloc::parse_static_name(line, pos)?;
            out.static_names.insert(id, path);
            i += 1;
            continue;
        }
        if line.starts_with("alloc") {
            let end = find_item_end(&lines, i, pos)?;
            let dump = parse_alloc(&lines[i..end], i)?;
            match out.allocs.get(&dump.id) {
                Some(prev) if *prev != dump => {
                    return Err(ParseError::new(
                        pos,
                        format!("{} is dumped twice with different contents", dump.id),
                        line,
                    ));
                }
                _ => {
                    out.allocs.insert(dump.id, dump);
                }
            }
            i = end + 1;
            continue;
        }
        // Anonymous consts (array lengths in generic positions) print with no
        // keyword: `m::X::{constant#1}: usize = { ... }`.
        let anon_const = line
            .split(": ")
            .next()
            .is_some_and(|h| h.contains("{constant#"));
        if anon_const
            || ["fn ", "const ", "static "]
                .iter()
                .any(|p| line.starts_with(p))
        {
            let end = if line.trim_end().ends_with(';') {
                i
            } else if line.trim_end().ends_with('{') {
                find_item_end(&lines, i, pos)?
            } else {
                return Err(ParseError::new(
                    pos,
                    "item header ends with neither `{` nor `;`",
                    line,
                ));
            };
            let item_text = lines[i..=end].join("\n");
            let (toks, notes) = lexer::tokenize_with_notes(&item_text, pos)?;
            let end_pos = Pos {
                line: end as u32 + 1,
                col: lines[end].chars().count() as u32 + 1,
            };
            let mut c = cursor::Cursor::new(toks, notes, &item_text, end_pos);
            let parsed = body::parse_item(&mut c, ctfe_next)?;
            crate::model::check_handles(&parsed)?;
            out.bodies.push(parsed);
            ctfe_next = false;
            i = end + 1;
            continue;
        }
        return Err(ParseError::new(
            pos,
            "unexpected line at the top level",
            line,
        ));
    }
    if ctfe_next {
        let pos = Pos {
            line: lines.len() as u32,
            col: 1,
        };
        return Err(ParseError::new(
            pos,
            "`// MIR FOR CTFE` is not followed by a body",
            "",
        ));
    }
    Ok(out)
}

/// The index of the line `}` that closes the item starting at `start`.
fn find_item_end(lines: &[&str], start: usize, pos: Pos) -> Result<usize, ParseError> {
    for (j, l) in lines.iter().enumerate().skip(start + 1) {
        if *l == "}" {
            return Ok(j);
        }
        let top_level = !l.starts_with(' ') && !l.trim().is_empty();
        if top_level {
            return Err(ParseError::new(
                Pos {
                    line: j as u32 + 1,
                    col: 1,
                },
                "truncated item: a new top-level item starts before the closing `}`",
                *l,
            ));
        }
    }
    Err(ParseError::new(
        pos,
        "truncated item: no closing `}`",
        lines[start],
    ))
}

fn parse_alloc(lines: &[&str], first: usize) -> Result<AllocDump, ParseError> {
    let pos_of = |k: usize| Pos {
        line: (first + k) as u32 + 1,
        col: 1,
    };
    let mut dump = alloc::parse_alloc_header(lines[0], pos_of(0))?;
    for (k, row) in lines.iter().enumerate().skip(1) {
        alloc::parse_alloc_row(&mut dump, row, pos_of(k))?;
    }
    alloc::finish_alloc(&dump, pos_of(0))?;
    Ok(dump)
}
