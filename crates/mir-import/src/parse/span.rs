//! The span comments that `-Zmir-include-spans` adds to the MIR text.
//!
//! rustc ends each statement, terminator and declaration line with one:
//!
//! ```text
//! _2 = Gt(copy _1, const 3_u32);   // scope 0 at /src/kernel.rs:2:44: 2:49
//! let mut _0: u32;                 // return place in scope 0 at /src/kernel.rs:2:26: 2:38
//! debug x => _1;                   // in scope 0 at /src/kernel.rs:2:15: 2:16
//! scope 4 (inlined f) {            // at /src/kernel.rs:4:34: 4:40
//! ```
//!
//! They are comments, so a reader may ignore them: MIR printed without the
//! flag (or written by hand) parses the same, only without spans, and a
//! comment that does not read as a span is just a comment. The model has no
//! use for the spans of `debug` lines and locals other than `_0`, so those
//! (`in scope N at`) are not kept: reading them cost the parser time.

use crate::model::Span;

/// What a span comment is attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// `// scope N at ..`: a statement or terminator.
    Scope,
    /// `// return place in scope N at ..`: the declaration of `_0`.
    ReturnPlace,
    /// `// at ..`: the call site of an inlined scope.
    Callsite,
}

/// A span comment, and where it sits among the item's tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanNote {
    /// The index of the token that follows the comment: the comment belongs to
    /// whatever the parser has consumed when it reaches that index.
    pub before: usize,
    /// What it is attached to.
    pub kind: NoteKind,
    /// The scope it names (`Callsite` names none).
    pub scope: Option<u32>,
    /// The span.
    pub span: Span,
}

/// Reads one comment (the text after `//`) as a span comment, if it is one.
pub fn read_note(comment: &str, before: usize) -> Option<SpanNote> {
    let c = comment.trim_start();
    let (kind, rest) = if let Some(r) = c.strip_prefix("scope ") {
        (NoteKind::Scope, r)
    } else if let Some(r) = c.strip_prefix("return place in scope ") {
        (NoteKind::ReturnPlace, r)
    } else if let Some(r) = c.strip_prefix("at ") {
        return Some(SpanNote {
            before,
            kind: NoteKind::Callsite,
            scope: None,
            span: read_span(r)?,
        });
    } else {
        return None;
    };
    let (scope, span) = rest.split_once(" at ")?;
    Some(SpanNote {
        before,
        kind,
        scope: Some(scope.parse().ok()?),
        span: read_span(span)?,
    })
}

/// Reads `file:line:col: end_line:end_col` (the file may hold `:` itself).
fn read_span(text: &str) -> Option<Span> {
    let (start, end) = text.trim_end().rsplit_once(": ")?;
    let mut it = start.rsplitn(3, ':');
    let col = it.next()?.parse().ok()?;
    let line = it.next()?.parse().ok()?;
    let file = it.next().filter(|f| !f.is_empty())?;
    let (end_line, end_col) = end.split_once(':')?;
    Some(Span {
        file: file.to_string(),
        line,
        col,
        end_line: end_line.parse().ok()?,
        end_col: end_col.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(file: &str, line: u32, col: u32, end_line: u32, end_col: u32) -> Span {
        Span {
            file: file.into(),
            line,
            col,
            end_line,
            end_col,
        }
    }

    #[test]
    fn reads_each_kind() {
        let n = read_note(" scope 3 at /src/kernel.rs:12:5: 12:17", 7).expect("a note");
        assert_eq!(
            (n.before, n.kind, n.scope, n.span),
            (
                7,
                NoteKind::Scope,
                Some(3),
                span("/src/kernel.rs", 12, 5, 12, 17)
            )
        );
        let n = read_note(" return place in scope 0 at k.rs:3:34: 3:34", 0).expect("a note");
        assert_eq!(n.kind, NoteKind::ReturnPlace);
        let n = read_note(
            " at /rustc/abc/library/core/src/ub_checks.rs:77:35: 77:42",
            0,
        )
        .expect("a note");
        assert_eq!(
            (n.kind, n.scope, n.span),
            (
                NoteKind::Callsite,
                None,
                span("/rustc/abc/library/core/src/ub_checks.rs", 77, 35, 77, 42)
            )
        );
    }

    /// rustc's output for `x * x` inlined from `sq` into `f`, trimmed.
    const INLINED: &str = "\
fn f(_1: u32) -> u32 {
    debug a => _1;                       // in scope 0 at /src/k.rs:3:6: 3:7
    let mut _0: u32;                     // return place in scope 0 at /src/k.rs:3:17: 3:20
    scope 1 (inlined sq) {               // at /src/k.rs:4:5: 4:10
        scope 2 (inlined core::num::mul) { // at /src/k.rs:2:24: 2:29
        }
    }

    bb0: {
        _0 = Mul(copy _1, copy _1);      // scope 2 at /rustc/x/library/core/src/num.rs:9:9: 9:14
                                         // mir::ConstOperand
                                         // + span: no-location
        return;                          // scope 0 at /src/k.rs:5:2: 5:2
    }
}

const C: u32 = {
    let mut _0: u32;                     // return place in scope 0 at /src/k.rs:6:10: 6:13

    bb0: {
        _0 = const 5_u32;                // scope 0 at /src/k.rs:6:16: 6:17
        return;                          // scope 0 at /src/k.rs:6:1: 6:18
    }
}
";

    #[test]
    fn statements_terminators_scopes_and_bodies_carry_spans() {
        let parsed = crate::parse::parse_mir(INLINED).expect("parses");
        let (f, c) = (&parsed.bodies[0], &parsed.bodies[1]);
        let bb = &f.blocks[crate::model::BasicBlock::from_u32(0)];
        let st = bb.statements[0].source.as_ref().expect("statement span");
        assert_eq!(st.scope, 2);
        assert_eq!(st.span.file, "/rustc/x/library/core/src/num.rs");
        let ret = bb.terminator.source.as_ref().expect("terminator span");
        assert_eq!(ret.span, span("/src/k.rs", 5, 2, 5, 2));
        assert_eq!(f.scopes[0].callsite, Some(span("/src/k.rs", 4, 5, 4, 10)));
        // The library statement stands for the kernel's call of `sq`: the
        // innermost inlined call site in the kernel's file.
        assert_eq!(
            f.span_in(st, "/src/k.rs"),
            Some(&span("/src/k.rs", 2, 24, 2, 29))
        );
        assert_eq!(f.span_in(st, "/elsewhere.rs"), None);
        // A function's span is its return type; a const's, the whole item.
        assert_eq!(f.span, Some(span("/src/k.rs", 3, 17, 3, 20)));
        assert_eq!(c.span, Some(span("/src/k.rs", 6, 1, 6, 18)));
    }

    #[test]
    fn mir_without_spans_parses_the_same_without_them() {
        let bare: String = INLINED
            .lines()
            .map(|l| l.split("//").next().unwrap_or(l).trim_end())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let with = crate::parse::parse_mir(INLINED).expect("parses");
        let without = crate::parse::parse_mir(&bare).expect("parses");
        for (a, b) in with.bodies.iter().zip(&without.bodies) {
            assert_eq!(b.span, None);
            assert!(b.scopes.iter().all(|s| s.callsite.is_none()));
            for (x, y) in a.blocks.values().zip(b.blocks.values()) {
                assert_eq!(y.terminator.source, None);
                assert_eq!(x.terminator.kind, y.terminator.kind);
                for (s, t) in x.statements.iter().zip(&y.statements) {
                    assert_eq!((&s.kind, &t.source), (&t.kind, &None));
                }
            }
        }
    }

    #[test]
    fn other_comments_are_only_comments() {
        for c in [
            " mir::ConstOperand",
            " in scope 0 at k.rs:2:15: 2:16",
            " + span: k.rs:2:52: 2:55",
            " scope 0 at no-location",
            " scope x at k.rs:1:1: 1:2",
            " at k.rs:1: 1:2",
            " at :1:1: 1:2",
            " scope 0 at k.rs:1:1: 1:99999999999",
        ] {
            assert_eq!(read_note(c, 0), None, "{c:?}");
        }
    }
}
