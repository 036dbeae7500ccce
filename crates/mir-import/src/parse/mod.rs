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
use std::collections::{BTreeMap, HashMap, HashSet};

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
    /// Allocations that stand for a function (`allocN (fn: PATH)`): the
    /// targets of `fn` pointers stored in constants.
    pub fn_names: BTreeMap<crate::model::AllocId, crate::model::Path>,
    /// Allocations that stand for a vtable (`allocN (vtable: impl Tr for
    /// T)`): the concrete type and the principal trait.
    pub vtable_names: BTreeMap<crate::model::AllocId, (crate::model::Ty, String)>,
}

/// Parses the whole text that `rustc --emit=mir` printed.
pub fn parse_mir(text: &str) -> Result<ParsedMir, ParseError> {
    parse_inner(text, &HashSet::new()).map_err(|e| e.with_source(text))
}

/// Parses one type as rustc prints it (`u32`, `[core::mem::MaybeUninit<u8>;
/// 4]`): the self type of a qualified path segment, which the path keeps
/// as text.
pub fn parse_type(text: &str) -> Result<crate::model::Ty, ParseError> {
    parse_whole(text, "text after the type", ty::parse_ty)
}

/// Parses one path as rustc prints a value's (`kernel::f`,
/// `core::num::<impl u32>::wrapping_add`, `f::<u32>`): the function a
/// function item's type names.
pub fn parse_value_path(text: &str) -> Result<crate::model::Path, ParseError> {
    parse_whole(text, "text after the path", |c| {
        ty::parse_path(c, ty::PathStyle::Expr)
    })
}

/// Parses all of `text`, on one line, with `parse`; `trailing` is the
/// error when text is left after it.
fn parse_whole<T>(
    text: &str,
    trailing: &str,
    parse: impl FnOnce(&mut cursor::Cursor) -> Result<T, ParseError>,
) -> Result<T, ParseError> {
    let start = crate::model::Pos { line: 1, col: 1 };
    let (toks, _) = lexer::tokenize_with_notes(text, start)?;
    let end = crate::model::Pos {
        line: 1,
        col: text.chars().count() as u32 + 1,
    };
    let mut c = cursor::Cursor::new(toks, Vec::new(), text, end);
    let value = parse(&mut c)?;
    if !c.at_end() {
        return Err(c.err(trailing));
    }
    Ok(value)
}

/// Parses the text that `rustc --emit=mir` printed, except the bodies of
/// functions of module `prelude` that no other item names (see
/// [`unnamed_prelude_fns`]): rustc prints every function of the prelude in
/// every crate, and a kernel reaches few of them. Everything else, and every
/// allocation, is parsed as [`parse_mir`] parses it.
pub fn parse_mir_named(text: &str, prelude: &str) -> Result<ParsedMir, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let skip = unnamed_prelude_fns(&lines, prelude);
    parse_inner(text, &skip).map_err(|e| e.with_source(text))
}

/// The header lines of the functions of module `prelude` whose name (the
/// last segment of the path) no item outside their own name group mentions,
/// and of the closures inside them. A body can only be reached through a
/// path that names it (a call, a function pointer, a closure's parent), so
/// these are never reached. Conservative: a name that also occurs elsewhere
/// (`new`, `len`) keeps its bodies.
pub fn unnamed_prelude_fns(lines: &[&str], prelude: &str) -> HashSet<usize> {
    let head = format!("fn {prelude}::");
    // Items: (header line, last line, path) for every top-level `fn`.
    let mut items: Vec<(usize, usize, &str)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(rest) = l.strip_prefix("fn ") {
            let path = rest.split('(').next().unwrap_or("");
            let end = if l.trim_end().ends_with('{') {
                (i + 1..lines.len())
                    .find(|&j| lines[j] == "}")
                    .unwrap_or(lines.len() - 1)
            } else {
                i
            };
            items.push((i, end, path));
            i = end + 1;
        } else {
            i += 1;
        }
    }
    let name_of = |path: &str| path.rsplit("::").next().unwrap_or(path).to_string();
    let mut candidates: HashSet<String> = HashSet::new();
    for &(_, _, path) in &items {
        let name = name_of(path);
        if path.starts_with(&head[3..]) && !name.starts_with('{') {
            candidates.insert(name);
        }
    }
    if candidates.is_empty() {
        return HashSet::new();
    }
    // Which line belongs to which candidate group's item, if any.
    let mut owner: Vec<Option<&str>> = vec![None; lines.len()];
    let names: Vec<String> = items.iter().map(|&(_, _, p)| name_of(p)).collect();
    // A closure's lines belong to its parent's group: its header names the
    // parent (`gpu::shfl::{closure#0}`).
    let group: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(k, &(_, _, path))| match path.rsplit_once("::") {
            Some((parent, last)) if last.starts_with('{') => name_of(parent),
            _ => names[k].clone(),
        })
        .collect();
    for (k, &(a, b, path)) in items.iter().enumerate() {
        if path.starts_with(&head[3..]) && candidates.contains(&group[k]) {
            for o in &mut owner[a..=b] {
                *o = Some(group[k].as_str());
            }
        }
    }
    // The groups named by the rest of the text, then by the groups named so
    // far, transitively. Only the lines of reached groups are read: most of
    // the prelude is never scanned.
    let mut group_lines: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, o) in owner.iter().enumerate() {
        if let Some(g) = o {
            group_lines.entry(g).or_default().push(j);
        }
    }
    // Word lengths of the candidates, to skip hashing most words.
    let lengths: u128 = candidates
        .iter()
        .fold(0, |m, c| m | (1u128 << c.len().min(127)));
    let mut reached: HashSet<&str> = HashSet::new();
    let mut todo: Vec<&str> = Vec::new();
    for j in (0..lines.len()).filter(|&j| owner[j].is_none()) {
        scan_line(lines[j], None, lengths, &candidates, &mut todo);
    }
    while let Some(g) = todo.pop() {
        if reached.insert(g) {
            for &j in group_lines.get(g).into_iter().flatten() {
                scan_line(lines[j], owner[j], lengths, &candidates, &mut todo);
            }
        }
    }
    let unnamed: HashSet<&str> = candidates
        .iter()
        .map(String::as_str)
        .filter(|n| !reached.contains(n))
        .collect();
    let mut skip = HashSet::new();
    let mut skipped_paths: Vec<&str> = Vec::new();
    for (k, &(a, _, path)) in items.iter().enumerate() {
        if path.starts_with(&head[3..]) && unnamed.contains(names[k].as_str()) {
            skip.insert(a);
            skipped_paths.push(path);
        }
    }
    // Closures (and their CTFE copies) follow their parent.
    for &(a, _, path) in &items {
        if let Some((parent, last)) = path.rsplit_once("::")
            && last.starts_with('{')
            && skipped_paths.contains(&parent)
        {
            skip.insert(a);
        }
    }
    skip
}

/// Pushes onto `todo` every candidate that `line` (of group `own`) names,
/// other than `own` itself. `lengths` has bit `n` set when a candidate is `n`
/// bytes long, so most words are never hashed.
fn scan_line<'c>(
    line: &str,
    own: Option<&str>,
    lengths: u128,
    candidates: &'c HashSet<String>,
    todo: &mut Vec<&'c str>,
) {
    for w in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if w.len() < 128
            && lengths >> w.len() & 1 == 1
            && own != Some(w)
            && let Some(c) = candidates.get(w)
        {
            todo.push(c.as_str());
        }
    }
}

fn parse_inner(text: &str, skip: &HashSet<usize>) -> Result<ParsedMir, ParseError> {
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
        if skip.contains(&i) {
            i = if line.trim_end().ends_with('{') {
                find_item_end(&lines, i, pos)? + 1
            } else {
                i + 1
            };
            ctfe_next = false;
            continue;
        }
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
        // A zero-sized allocation is dumped on one line: `allocN (size: 0,
        // align: 1) {}` (the empty byte string `b""`).
        let one_line_dump = line.trim_end().ends_with(") {}");
        if line.starts_with("alloc") && !line.trim_end().ends_with('{') && !one_line_dump {
            match alloc::parse_alloc_name(line, pos)? {
                (id, alloc::AllocName::Static(path)) => {
                    out.static_names.insert(id, path);
                }
                (id, alloc::AllocName::Function(path)) => {
                    out.fn_names.insert(id, path);
                }
                (
                    id,
                    alloc::AllocName::Vtable {
                        concrete,
                        principal,
                    },
                ) => {
                    out.vtable_names.insert(id, (concrete, principal));
                }
            }
            i += 1;
            continue;
        }
        if line.starts_with("alloc") {
            let end = if one_line_dump {
                i + 1
            } else {
                find_item_end(&lines, i, pos)?
            };
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
            i = if one_line_dump { end } else { end + 1 };
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

#[cfg(test)]
mod named_tests {
    use super::*;

    /// A body that calls `callee` (a path), or returns when `None`.
    fn f(path: &str, callee: Option<&str>) -> String {
        let call = callee.map_or(String::new(), |c| {
            format!(
                "        _0 = {c}() -> [return: bb1, unwind unreachable];\n    }}\n\n    bb1: {{\n"
            )
        });
        format!(
            "fn {path}() -> () {{\n    let mut _0: ();\n\n    bb0: {{\n{call}        return;\n    }}\n}}\n\n"
        )
    }

    fn text() -> String {
        [
            f("gpu::used", None),
            f("gpu::unused", Some("gpu::chain")),
            f("gpu::unused::{closure#0}", None),
            f("gpu::chain", None),
            f("gpu::via_used", None),
            f("gpu::caller", Some("gpu::via_used")),
            f("kernel::k", Some("gpu::used")),
            f("kernel::m", Some("gpu::caller")),
        ]
        .concat()
    }

    fn paths(text: &str, named: bool) -> Vec<String> {
        let p = if named {
            parse_mir_named(text, "gpu")
        } else {
            parse_mir(text)
        };
        p.expect("parses")
            .bodies
            .iter()
            .map(|b| b.path.def_path())
            .collect()
    }

    #[test]
    fn prelude_functions_no_other_item_names_are_not_parsed() {
        let text = text();
        assert_eq!(paths(&text, false).len(), 8);
        // `unused` is named by nobody; `chain` only by `unused`; the closure
        // follows its parent. `via_used` is named by `caller`, which a kernel
        // function names.
        assert_eq!(
            paths(&text, true),
            [
                "gpu::used",
                "gpu::via_used",
                "gpu::caller",
                "kernel::k",
                "kernel::m"
            ]
        );
    }

    #[test]
    fn a_kernel_item_of_the_same_name_keeps_the_prelude_one() {
        let text = format!("{}{}", text(), f("kernel::unused", None));
        assert!(paths(&text, true).contains(&"gpu::unused".to_string()));
    }

    #[test]
    fn inline_assembly_is_a_terminator_with_its_template_and_target() {
        let text = "fn m::sqrt(_1: f32) -> f32 {\n    let mut _0: f32;\n\n    bb0: {\n        \
                    asm!(\"sqrtss {0}, {0}\", inout(xmm_reg) copy _1 => _1, options(PURE | NOMEM | NOSTACK)) -> [return: bb1, unwind unreachable];\n    }\n\n    \
                    bb1: {\n        _0 = copy _1;\n        return;\n    }\n}\n";
        let parsed = parse_mir(text).expect("parses");
        let body = &parsed.bodies[0];
        let first = body.blocks.values().next().expect("bb0");
        match &first.terminator.kind {
            crate::model::TerminatorKind::InlineAsm { text, target } => {
                assert!(text.starts_with("\"sqrtss {0}, {0}\""), "{text}");
                assert_eq!(target.map(|t| t.as_u32()), Some(1));
            }
            other => panic!("not inline assembly: {other:?}"),
        }
    }
}

#[cfg(test)]
mod operand_tests {
    use super::*;
    use crate::model::{ConstOperand, Operand, Rvalue, Statement, StatementKind};

    /// The first statement of the first body's first block.
    fn first_statement(krate: &ParsedMir) -> &Statement {
        &krate.bodies[0]
            .blocks
            .values()
            .next()
            .expect("bb0")
            .statements[0]
    }

    #[test]
    fn a_function_item_operand_is_printed_without_const() {
        let text = "fn k() -> () {\n    let mut _0: ();\n    let mut _1: S<fn(char) -> bool {core::char::methods::<impl char>::is_whitespace}>;\n\n    bb0: {\n        _1 = S::<fn(char) -> bool {core::char::methods::<impl char>::is_whitespace}> { f: core::char::methods::<impl char>::is_whitespace, n: const 3_u8 };\n        return;\n    }\n}\n";
        let krate = parse_mir(text).expect("parses");
        let st = first_statement(&krate);
        let StatementKind::Assign(_, Rvalue::Aggregate(_, ops)) = &st.kind else {
            panic!("not an aggregate: {st:?}");
        };
        let Operand::Const(ConstOperand::FnItem(path)) = &ops[0] else {
            panic!("not a function item: {:?}", ops[0]);
        };
        assert_eq!(path.last_name(), "is_whitespace");
        assert!(matches!(ops[1], Operand::Const(ConstOperand::Scalar(_))));
    }

    /// `&raw const (fake) p`, a raw borrow made only to read `p`'s
    /// metadata, reads as `&raw const p`.
    #[test]
    fn a_fake_raw_borrow_reads_as_a_raw_borrow() {
        let text = "fn k(_1: *const [u32]) -> () {\n    let mut _0: ();\n    let mut _2: *const [u32];\n\n    bb0: {\n        _2 = &raw const (fake) (*_1);\n        return;\n    }\n}\n";
        let krate = parse_mir(text).expect("parses");
        let StatementKind::Assign(_, Rvalue::RawPtr(m, p)) = &first_statement(&krate).kind else {
            panic!("not a raw borrow");
        };
        assert_eq!(*m, crate::model::Mutability::Not);
        assert_eq!(p.projection, [crate::model::PlaceElem::Deref]);
    }

    /// Each of rustc's five printings of a slice pattern's projections
    /// (`let [first, init @ .., last] = s`) reads back as what it prints.
    #[test]
    fn slice_pattern_projections_read_back_in_each_printed_form() {
        use crate::model::PlaceElem;
        let sub = |from, to, from_end| PlaceElem::Subslice { from, to, from_end };
        let cases = [
            ("(*_1)[:-1]", sub(0, 1, true)),
            ("(*_1)[1:]", sub(1, 0, true)),
            ("(*_1)[1:-2]", sub(1, 2, true)),
            ("_2[1..3]", sub(1, 3, false)),
            (
                "(*_1)[-1 of 2]",
                PlaceElem::ConstantIndex {
                    offset: 1,
                    min_length: 2,
                    from_end: true,
                },
            ),
        ];
        for (place, want) in cases {
            let text = format!(
                "fn k(_1: &[u32]) -> () {{\n    let mut _0: ();\n    let mut _2: [u32; 4];\n    let mut _3: &[u32];\n\n    bb0: {{\n        _3 = &{place};\n        return;\n    }}\n}}\n"
            );
            let krate = parse_mir(&text).unwrap_or_else(|e| panic!("{place}: {e}"));
            let st = first_statement(&krate);
            let StatementKind::Assign(_, Rvalue::Ref(_, p)) = &st.kind else {
                panic!("{place}: not a reference: {st:?}");
            };
            assert_eq!(p.projection.last(), Some(&want), "{place}");
        }
    }
}
