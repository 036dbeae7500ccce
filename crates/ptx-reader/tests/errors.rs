//! Malformed PTX is refused with the line and column of the first token that
//! does not fit, and random edits of a real file give an error or a module,
//! never a panic.

#![allow(clippy::unwrap_used)]

use ptx_reader::{ErrorKind, Pos, parse, parse_instruction};

const HEADER: &str = ".version 8.8\n.target sm_90\n.address_size 64\n";

/// The error's line, column (a tab counts as one column) and kind.
fn err_at(text: &str) -> (u32, u32, ErrorKind) {
    let e = parse(text).unwrap_err();
    (e.pos.line, e.pos.col, e.kind)
}

#[test]
fn an_unknown_directive_is_positioned() {
    let text = format!("{HEADER}.visible .entry k()\n{{\n\t.frobnicate 3;\n\tret;\n}}\n");
    assert_eq!(
        err_at(&text),
        (6, 2, ErrorKind::UnknownDirective(".frobnicate".into()))
    );
    assert_eq!(
        parse(&text).unwrap_err().to_string(),
        "PTX 6:2: unknown directive `.frobnicate`"
    );
    // At module scope too.
    assert_eq!(
        err_at(&format!("{HEADER}  .section .debug_info {{ }}\n")),
        (4, 3, ErrorKind::UnknownDirective(".section".into()))
    );
}

#[test]
fn a_bad_operand_is_positioned() {
    let text = format!("{HEADER}.visible .entry k()\n{{\n\tmov.u32 \t%r1, .x;\n}}\n");
    assert_eq!(
        err_at(&text),
        (
            6,
            16,
            ErrorKind::Unexpected {
                found: "`.x`".into(),
                expected: "an operand"
            }
        )
    );
    // A float immediate must have its full hex width.
    let text = format!("{HEADER}.entry k()\n{{\n  add.rn.f32 %f1, %f2, 0f3F80;\n}}\n");
    assert_eq!(
        err_at(&text),
        (6, 24, ErrorKind::BadNumber("0f3F80".into()))
    );
    // An address offset needs a number.
    let e = parse_instruction("ld.global.u32 %r1, [%rd1+];").unwrap_err();
    assert_eq!(e.pos, Pos { line: 1, col: 26 });
}

#[test]
fn an_unterminated_block_points_at_its_brace() {
    let text = format!("{HEADER}.visible .entry k()\n{{\n\tret;\n");
    assert_eq!(err_at(&text), (5, 1, ErrorKind::Unterminated("block")));
    let text = format!("{HEADER}.entry k()\n{{\n\t{{ // callseq\n\tret;\n}}\n");
    assert_eq!(err_at(&text), (5, 1, ErrorKind::Unterminated("block")));
    // An initializer list without its `}`.
    let text = format!("{HEADER}.global .align 4 .b8 x[4] = {{1, 2;\n");
    assert_eq!(
        err_at(&text),
        (
            4,
            34,
            ErrorKind::Unexpected {
                found: "`;`".into(),
                expected: "`,` or `}` in an initializer list"
            }
        )
    );
}

#[test]
fn unknown_opcodes_and_modifiers_are_refused() {
    let e = parse_instruction("frob.u32 %r1, %r2").unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownOpcode("frob".into()));
    let e = parse_instruction("  ld.acquire.sys.u33 %r1, [%rd1]").unwrap_err();
    assert_eq!(e.pos, Pos { line: 1, col: 3 });
    assert_eq!(e.to_string(), "PTX 1:3: unknown modifier `.u33` of `ld`");
}

#[test]
fn a_missing_semicolon_is_positioned() {
    let text = format!("{HEADER}.entry k()\n{{\n\tbar.sync 0\n\tret;\n}}\n");
    assert_eq!(
        err_at(&text),
        (
            7,
            2,
            ErrorKind::Unexpected {
                found: "`ret`".into(),
                expected: "`,` or `;` after an operand"
            }
        )
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!(
        "{HEADER}.entry k()\n{}{}",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(matches!(err_at(&text).2, ErrorKind::TooDeep(_)));
    let text = format!("{HEADER}.global .b8 x[1] = {};", "{".repeat(10_000));
    assert!(matches!(err_at(&text).2, ErrorKind::TooDeep(_)));
}

/// A small real PTX file (from the `atomic_flag` fixture's shape): every
/// single-character deletion, duplication or replacement gives an error or a
/// module.
const REAL: &str = include_str!("data/edits.ptx");

#[test]
fn single_character_edits_never_panic() {
    assert!(parse(REAL).is_ok());
    let chars: Vec<char> = REAL.chars().collect();
    let replacements = [
        '{', '}', '(', ')', '[', ']', ';', ',', '.', '%', '@', '!', '0', 'x', ' ', '\n', '/', '*',
        '"', '\0', 'é', '-', '+', '<', ':',
    ];
    let mut errors = 0;
    for i in 0..chars.len() {
        let mut deleted = chars.clone();
        deleted.remove(i);
        let mut doubled = chars.clone();
        doubled.insert(i, chars[i]);
        let mut texts = vec![deleted, doubled];
        for r in replacements {
            let mut t = chars.clone();
            t[i] = r;
            texts.push(t);
        }
        for t in texts {
            let s: String = t.into_iter().collect();
            if parse(&s).is_err() {
                errors += 1;
            }
        }
    }
    assert!(errors > 0);
}

mod prop {
    use proptest::prelude::*;

    proptest! {
        /// Random text of PTX-ish characters: an error or a module.
        #[test]
        fn random_text_never_panics(s in "[ -~\\n\\t]{0,200}") {
            let _ = ptx_reader::parse(&s);
            let _ = ptx_reader::parse_instruction(&s);
        }

        /// A real file with a random slice replaced by random text.
        #[test]
        fn spliced_real_text_never_panics(at in 0usize..1500, len in 0usize..20, s in "[ -~\\n]{0,20}") {
            let real = super::REAL;
            let at = at.min(real.len());
            let end = (at + len).min(real.len());
            if real.is_char_boundary(at) && real.is_char_boundary(end) {
                let t = format!("{}{}{}", &real[..at], s, &real[end..]);
                let _ = ptx_reader::parse(&t);
            }
        }
    }
}
