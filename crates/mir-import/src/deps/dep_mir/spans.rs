//! The source a dependency's `<impl at FILE:L:C: L2:C2>` spans point at:
//! the impl header a lookup matches, and the position a method's generic
//! parameters are read from.

use std::path::PathBuf;

use super::{DepMir, span_site};

/// A span as an impl item's path prints it, parsed: the file without its
/// `.rs`, and the first and last positions, 1-based line and column.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct SourceSpan<'a> {
    pub(super) file: &'a str,
    pub(super) start: (usize, usize),
    pub(super) end: (usize, usize),
}

impl<'a> SourceSpan<'a> {
    /// Parses `FILE.rs:L:C: L2:C2`, with or without an expansion mark
    /// (` #2`).
    pub(super) fn parse(span: &'a str) -> Option<SourceSpan<'a>> {
        let (file, rest) = span_site(span).split_once(".rs:")?;
        let (start, end) = rest.split_once(": ")?;
        let position = |p: &str| -> Option<(usize, usize)> {
            let (line, column) = p.split_once(':')?;
            Some((line.parse().ok()?, column.parse().ok()?))
        };
        Some(SourceSpan {
            file,
            start: position(start)?,
            end: position(end)?,
        })
    }
}

impl DepMir {
    /// The file of this crate that a span's path (without `.rs`) names.
    fn source_file(&self, printed: &str) -> Option<PathBuf> {
        let dir_name = self.src_dir.file_name()?.to_str()?;
        let rel = printed.split_once(&format!("/{dir_name}/"))?.1;
        Some(self.src_dir.join(format!("{rel}.rs")))
    }

    /// The text of the file `span` points into, with the span parsed.
    pub(super) fn span_source<'a>(&self, span: &'a str) -> Option<(String, SourceSpan<'a>)> {
        let span = SourceSpan::parse(span)?;
        let text = std::fs::read_to_string(self.source_file(span.file)?).ok()?;
        Some((text, span))
    }

    /// The source text an `<impl at ..>` span covers (the impl's header),
    /// read from the crate's folder, its lines joined by spaces.
    pub(super) fn impl_header(&self, span: &str) -> Option<String> {
        let (text, span) = self.span_source(span)?;
        let ((l1, c1), (l2, c2)) = (span.start, span.end);
        let lines: Vec<&str> = text.lines().collect();
        let mut out = String::new();
        for l in l1..=l2 {
            let line = lines.get(l.checked_sub(1)?)?;
            let from = if l == l1 { c1.saturating_sub(1) } else { 0 };
            let to = if l == l2 {
                c2.saturating_sub(1)
            } else {
                line.len()
            };
            out.push_str(line.get(from..to)?);
            out.push(' ');
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_read_with_or_without_its_expansion_mark() {
        let want = SourceSpan {
            file: "/work/vendor/x-1.0.0/src/a/b",
            start: (3, 5),
            end: (4, 10),
        };
        let plain = "/work/vendor/x-1.0.0/src/a/b.rs:3:5: 4:10";
        assert_eq!(SourceSpan::parse(plain), Some(want));
        let marked = "/work/vendor/x-1.0.0/src/a/b.rs:3:5: 4:10 #2";
        assert_eq!(SourceSpan::parse(marked).map(|s| s.end), Some((4, 10)));
        assert_eq!(SourceSpan::parse("/work/src/a.rs:3: 4:10"), None);
        assert_eq!(SourceSpan::parse("no span"), None);
    }
}
