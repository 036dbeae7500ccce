//! Malformed MIR gives a positioned error (line, column, the line's text), never
//! a panic and never a guess. One test per kind of damage.

use mir_import::parse::{ParseError, parse_mir};

const GOOD: &str = "\
fn kernel::helper() -> &u32 {
    let mut _0: &u32;

    bb0: {
        _0 = const kernel::helper::promoted[0];
        return;
    }
}

alloc6 (size: 8, align: 4) {
    01 00 00 00 02 00 00 00                         │ ........
}
";

fn err(text: &str) -> ParseError {
    parse_mir(text).expect_err("malformed MIR must not parse")
}

#[test]
fn the_good_input_parses() {
    let parsed = parse_mir(GOOD).expect("parses");
    assert_eq!(parsed.bodies.len(), 1);
    assert_eq!(parsed.allocs.len(), 1);
}

#[test]
fn truncated_body() {
    let text = GOOD.lines().take(6).collect::<Vec<_>>().join("\n");
    let e = err(&text);
    assert_eq!((e.pos.line, e.pos.col), (1, 1), "{e}");
    assert!(e.message.contains("truncated"), "{e}");
    assert_eq!(e.line_text, "fn kernel::helper() -> &u32 {");
}

#[test]
fn truncated_block_inside_a_complete_item() {
    let text = "fn f() -> () {\n    let mut _0: ();\n\n    bb0: {\n        _0 = const ();\n}\n";
    let e = err(text);
    assert!(
        e.message.contains("truncated block bb0") || e.message.contains("terminator"),
        "{e}"
    );
    assert_eq!(e.pos.line, 6, "{e}");
}

#[test]
fn unknown_statement() {
    let text = GOOD.replace(
        "        return;",
        "        Frobnicate(_0);\n        return;",
    );
    let e = err(&text);
    assert_eq!((e.pos.line, e.pos.col), (6, 9), "{e}");
    assert!(e.message.contains("unknown statement `Frobnicate`"), "{e}");
    assert_eq!(e.line_text.trim(), "Frobnicate(_0);");
}

#[test]
fn bad_allocation_row() {
    let text = GOOD.replace("01 00 00 00 02", "01 00 zz 00 02");
    let e = err(&text);
    assert_eq!(e.pos.line, 11, "{e}");
    assert!(e.message.contains("`zz`"), "{e}");
    assert!(e.line_text.contains("01 00 zz"), "{e}");
}

#[test]
fn allocation_with_missing_bytes() {
    let text = GOOD.replace("01 00 00 00 02 00 00 00", "01 00 00 00 02 00 00   ");
    let e = err(&text);
    assert_eq!(e.pos.line, 10, "{e}");
    assert!(
        e.message.contains("declares 8 bytes but its rows hold 7"),
        "{e}"
    );
}

#[test]
fn unbalanced_brackets() {
    let text = GOOD.replace(
        "-> &u32 {\n    let mut _0: &u32;",
        "-> &u32 {\n    let mut _0: &(u32;",
    );
    let e = err(&text);
    assert_eq!(e.pos.line, 2, "{e}");
    assert!(
        e.message.contains("expected `)`") || e.message.contains("unbalanced"),
        "{e}"
    );
}

#[test]
fn unbalanced_impl_segment() {
    let text = GOOD.replace(
        "fn kernel::helper() -> &u32 {",
        "fn <impl at k.rs:1:1::helper() {",
    );
    let e = err(&text);
    assert_eq!((e.pos.line, e.pos.col), (1, 4), "{e}");
    assert!(e.message.contains("unbalanced"), "{e}");
}

#[test]
fn unknown_top_level_line() {
    let e = err("what is this\n");
    assert_eq!((e.pos.line, e.pos.col), (1, 1));
    assert!(e.message.contains("top level"), "{e}");
}

#[test]
fn rendered_error_names_line_column_and_text() {
    let text = GOOD.replace(
        "        return;",
        "        Frobnicate(_0);\n        return;",
    );
    insta::assert_snapshot!(err(&text).to_string(), @r"
    MIR parse error at 6:9: unknown statement `Frobnicate`
      |         Frobnicate(_0);
    ");
}

#[test]
fn undeclared_local_is_a_positioned_error() {
    let text = GOOD.replace(
        "_0 = const kernel::helper::promoted[0];",
        "_7 = const kernel::helper::promoted[0];",
    );
    let e = err(&text);
    assert_eq!(e.pos.line, 5, "{e}");
    assert!(e.message.contains("_7 is used"), "{e}");
}

#[test]
fn jump_to_a_missing_block_is_a_positioned_error() {
    let text = GOOD.replace(
        "        return;\n    }\n}\n\nalloc6",
        "        goto -> bb3;\n    }\n}\n\nalloc6",
    );
    let e = err(&text);
    assert_eq!(e.pos.line, 6, "{e}");
    assert!(e.message.contains("jump to bb3"), "{e}");
}
