//! Diagnostics: what the lowering refuses, naming the item, the MIR location,
//! the rule and, where rustc printed one, the span in the user's `kernel.rs`.
//!
//! [`Diagnostic::render`] draws one with `codespan-reporting`, the way rustc
//! does: the rule and message, the kernel's line with a caret under the span,
//! and the item and MIR location as notes. Its [`Display`](std::fmt::Display)
//! form is one line, for logs and for diagnostics without a span.

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};
use mir_import::Crate;
use mir_import::model::Span;
use serde::Serialize;

/// The rule a diagnostic enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Rule {
    /// A construct of the user's code that the lowering does not support.
    Unsupported,
    /// A constant the evaluator and rustc's twin could not evaluate.
    ConstEval,
    /// A constant, constant table or static initializer that stores a
    /// relocation and whose type holds a pointer to shared memory.
    SharedPointerInConstant,
    /// A stored pointer to a `SharedArray` or `Barrier` static.
    SharedStaticRelocation,
    /// An interior view whose pointee layout cannot be proven.
    InteriorViewUnprovable,
    /// A typed view that does not match the bytes of its global.
    ViewMismatch,
    /// Interning the constants failed.
    Interning,
    /// The lowered module failed the device-IR verifier.
    Verifier,
    /// One of the lowering's own invariants failed: a bug in this compiler,
    /// not in the kernel. Kept apart from [`Rule::Unsupported`] so that a
    /// user is never told to change code that is fine.
    Internal,
}

impl Rule {
    /// A short stable name for the rule.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Unsupported => "unsupported-construct",
            Rule::ConstEval => "constant-evaluation",
            Rule::SharedPointerInConstant => "shared-pointer-in-constant",
            Rule::SharedStaticRelocation => "shared-static-relocation",
            Rule::InteriorViewUnprovable => "interior-view-unprovable",
            Rule::ViewMismatch => "view-mismatch",
            Rule::Interning => "interning",
            Rule::Verifier => "device-ir-verifier",
            Rule::Internal => "internal-error",
        }
    }

    /// What the caret under the span says.
    fn label(self) -> &'static str {
        match self {
            Rule::Unsupported => "not supported on the device",
            Rule::ConstEval => "this constant could not be evaluated",
            Rule::SharedPointerInConstant => "its type holds a shared-memory pointer",
            Rule::SharedStaticRelocation => "stores the address of a shared-memory static",
            Rule::InteriorViewUnprovable => "the pointee's layout cannot be proven",
            Rule::ViewMismatch => "the typed view does not match the constant's bytes",
            Rule::Interning => "this constant could not be interned",
            Rule::Verifier => "the lowered code is not valid device IR",
            Rule::Internal => "the compiler failed while lowering this",
        }
    }
}

/// One refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("error[{}]: {item}{}: {message}", rule.name(), location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default())]
pub struct Diagnostic {
    /// The rule.
    pub rule: Rule,
    /// The item (`kernel::helper`, `kernel::HOLDER`).
    pub item: String,
    /// The MIR location (`bb2[3]`), if any.
    pub location: Option<String>,
    /// What was refused and why.
    pub message: String,
    /// Where in the kernel's source, if rustc printed a span there: the
    /// statement's own, or the call in the kernel that inlined it; for an
    /// item-level refusal, the item's.
    pub span: Option<Span>,
}

impl Diagnostic {
    /// A diagnostic without a location.
    pub fn new(rule: Rule, item: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            item: item.into(),
            location: None,
            message: message.into(),
            span: None,
        }
    }

    /// The same diagnostic at `location`.
    pub fn at(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// The same diagnostic with the kernel span `span` (none leaves it as is).
    pub fn with_span(mut self, span: Option<Span>) -> Self {
        if span.is_some() {
            self.span = span;
        }
        self
    }

    /// Renders the diagnostic against `source`, the text of the kernel file
    /// its span is in, shown as `file_name`: the rule and message, the line
    /// with a caret under the span, and the item and MIR location as notes.
    ///
    /// Without a span, or with one that does not fit `source` (another
    /// file's text), it is the one-line [`Display`](std::fmt::Display) form.
    pub fn render(&self, source: &str, file_name: &str) -> String {
        let Some(range) = self.span.as_ref().and_then(|s| byte_range(source, s)) else {
            return format!("{self}\n");
        };
        let mut notes = vec![format!("in `{}`", self.item)];
        if let Some(loc) = &self.location {
            notes.push(format!("at MIR location {loc}"));
        }
        if self.rule == Rule::Internal {
            notes.push("this is a bug in the compiler, not in the kernel".into());
        }
        let report = Report::error()
            .with_code(self.rule.name())
            .with_message(&self.message)
            .with_label(Label::primary((), range).with_message(self.rule.label()))
            .with_notes(notes);
        let file = SimpleFile::new(file_name, source);
        let config = Config {
            chars: Chars::ascii(),
            ..Config::default()
        };
        term::emit_into_string(&config, &file, &report).unwrap_or_else(|_| format!("{self}\n"))
    }
}

/// The byte range of `span` in `source`: its lines count from 1, its columns
/// are characters from 1 and its end is exclusive. `None` when the span does
/// not fit the text.
fn byte_range(source: &str, span: &Span) -> Option<Range<usize>> {
    let start = byte_offset(source, span.line, span.col)?;
    let end = byte_offset(source, span.end_line, span.end_col)?;
    (start <= end).then_some(start..end)
}

/// The byte offset of 1-based `line` and character column `col`; the column
/// may be one past the line's last character.
fn byte_offset(source: &str, line: u32, col: u32) -> Option<usize> {
    let line_idx = usize::try_from(line.checked_sub(1)?).ok()?;
    let col_idx = usize::try_from(col.checked_sub(1)?).ok()?;
    let mut start = 0;
    for (i, text) in source.split_inclusive('\n').enumerate() {
        if i == line_idx {
            let body = text.trim_end_matches(['\n', '\r']);
            return match body.char_indices().nth(col_idx) {
                Some((b, _)) => Some(start + b),
                None => (body.chars().count() == col_idx).then_some(start + body.len()),
            };
        }
        start += text.len();
    }
    None
}

/// Gives each diagnostic that has no span its item's span in the kernel
/// (a static's or const's whole item, a function's signature; see
/// [`mir_import::model::Body::span`]), where there is one.
pub(crate) fn item_spans(krate: &Crate, diags: &mut [Diagnostic]) {
    let Some(file) = krate.source_file.as_deref() else {
        return;
    };
    for d in diags.iter_mut().filter(|d| d.span.is_none()) {
        let body = krate.fn_body(&d.item).or_else(|| krate.item_body(&d.item));
        d.span = body
            .and_then(|b| krate.bodies[b].span.as_ref())
            .filter(|s| s.file == file)
            .cloned();
    }
}

/// Every refusal of one lowering, in a stable order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Renders every diagnostic (see [`Diagnostic::render`]), one after the
    /// other.
    pub fn render(&self, source: &str, file_name: &str) -> String {
        self.0.iter().map(|d| d.render(source, file_name)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "pub fn k(p: *mut u32) {\n    let x = é(p);\n}\n";

    fn span(line: u32, col: u32, end_line: u32, end_col: u32) -> Span {
        Span {
            file: "kernel.rs".into(),
            line,
            col,
            end_line,
            end_col,
        }
    }

    #[test]
    fn columns_are_characters() {
        // `é` is two bytes: the column after it is one character on.
        assert_eq!(byte_range(SRC, &span(2, 13, 2, 16)), Some(36..40));
        assert_eq!(&SRC[36..40], "é(p");
        // One past the line's end is the end of the line.
        assert_eq!(byte_range(SRC, &span(3, 1, 3, 2)), Some(43..44));
        assert_eq!(byte_range(SRC, &span(3, 2, 3, 2)), Some(44..44));
    }

    #[test]
    fn spans_that_do_not_fit_are_none() {
        for s in [
            span(0, 1, 1, 1),
            span(1, 0, 1, 1),
            span(9, 1, 9, 2),
            span(1, 40, 1, 41),
            span(2, 5, 1, 1),
        ] {
            assert_eq!(byte_range(SRC, &s), None, "{s:?}");
        }
    }

    #[test]
    fn an_empty_span_still_gets_a_caret() {
        // A function returning `()`: its span is empty, after the parameters.
        let d = Diagnostic::new(Rule::Unsupported, "kernel::k", "kernel parameter 1")
            .with_span(Some(span(1, 22, 1, 22)));
        let text = d.render(SRC, "kernel.rs");
        assert!(text.contains("1 | pub fn k(p: *mut u32) {"), "{text}");
        assert!(text.contains("^"), "{text}");
    }

    #[test]
    fn a_span_that_does_not_fit_renders_as_display() {
        let d = Diagnostic::new(Rule::Unsupported, "kernel::k", "`drop` is not supported")
            .with_span(Some(span(40, 1, 40, 2)));
        assert_eq!(d.render(SRC, "kernel.rs"), format!("{d}\n"));
    }
}
