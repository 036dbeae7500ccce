//! Rendered diagnostics, pinned by snapshots: every negative fixture
//! (`fixtures/error_*`) as the user sees it, the line of its `kernel.rs` with
//! a caret under the span; a refusal inside a function, at its statement; and
//! a diagnostic without a span, which still renders.

use std::path::{Path, PathBuf};

use mir_import::eval::{TupleLayouts, evaluate};
use mir_lower::{Diagnostic, Diagnostics, Rule};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

#[test]
fn negative_fixtures_render_with_their_kernel_line() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("error_"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no negative fixtures");
    for name in names {
        let kernel = fixtures_dir().join(&name).join("kernel.rs");
        let source = std::fs::read_to_string(&kernel).expect("kernel.rs");
        let rustc = mir_import::rustc::RustcOptions::for_kernel(&kernel)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let imported = mir_import::import_and_evaluate(&kernel, &rustc, true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let d = mir_lower::lower(&imported).expect_err(&name);
        // A stable name, never the path the test happened to read.
        let rendered = d.render(&source, &format!("fixtures/{name}/kernel.rs"));
        for x in &d.0 {
            assert!(x.span.is_some(), "{name}: no span on {x}");
        }
        assert!(rendered.contains('^'), "{name}: no caret:\n{rendered}");
        settings().bind(|| insta::assert_snapshot!(format!("diag_{name}"), rendered));
    }
}

#[test]
fn a_diagnostic_without_a_span_renders_as_one_line() {
    let d = Diagnostic::new(Rule::Verifier, "module", "block0 has no terminator");
    let rendered = d.render("fn k() {}\n", "kernel.rs");
    assert_eq!(rendered, format!("{d}\n"));
    settings().bind(|| insta::assert_snapshot!("diag_without_span", rendered));
}

const KSRC: &str = "#[unsafe(no_mangle)] pub extern \"C\" fn k(p: *mut u32) { let x = 7u32; drop(x); }\n\
    pub struct G(u32);\n\
    impl Drop for G { fn drop(&mut self) {} }\n";

/// `kernel::G`'s layout: a type with drop glue (its `Drop` impl in `KSRC`).
const G_SIZES: &str = "print-type-size type: `kernel::G`: 4 bytes, alignment: 4 bytes\n\
    print-type-size     field `.0`: 4 bytes\n";

/// rustc's shape for `drop(x)` inlined from the standard library: the
/// statement's own span is in `core`, the inlined scope's call site in the
/// kernel (`/src/k.rs`, as the sandbox names it).
const DROP_MIR: &str = "\
fn kernel::k(_1: *mut u32) -> () {
    let mut _0: ();                      // return place in scope 0 at /src/k.rs:1:54: 1:54
    let mut _2: kernel::G;               // in scope 0 at /src/k.rs:1:61: 1:62
    scope 1 (inlined core::mem::drop::<kernel::G>) { // at /src/k.rs:1:71: 1:78
    }

    bb0: {
        drop(_2) -> [return: bb1, unwind unreachable]; // scope 1 at /rustc/x/library/core/src/mem/mod.rs:9:5: 9:10
    }

    bb1: {
        return;                          // scope 0 at /src/k.rs:1:80: 1:80
    }
}
";

fn lower_text(mir: &str) -> Result<mir_lower::Lowered, Diagnostics> {
    let krate = mir_import::import_text(mir, G_SIZES, Some((KSRC, "k.rs"))).expect("imports");
    let tuples = TupleLayouts::default();
    let eval = evaluate(&krate, &tuples);
    let imp = mir_import::Imported {
        krate,
        eval,
        tuples,
    };
    mir_lower::lower(&imp)
}

#[test]
fn a_refused_statement_points_at_the_kernel_call_that_inlined_it() {
    let d = lower_text(DROP_MIR).expect_err("`drop` is refused");
    let x = &d.0[0];
    assert_eq!(x.location.as_deref(), Some("bb0[0]"));
    let span = x.span.as_ref().expect("a span");
    assert_eq!((span.file.as_str(), span.line, span.col), ("k.rs", 1, 71));
    settings().bind(|| insta::assert_snapshot!("diag_inlined_drop", d.render(KSRC, "kernel.rs")));
}

#[test]
fn mir_without_spans_gives_diagnostics_without_spans() {
    let bare: String = DROP_MIR
        .lines()
        .map(|l| l.split("//").next().unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let d = lower_text(&bare).expect_err("`drop` is refused");
    assert!(d.0.iter().all(|x| x.span.is_none()), "{d}");
    assert_eq!(d.render(KSRC, "kernel.rs"), format!("{}\n", d.0[0]));
}
