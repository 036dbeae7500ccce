//! Malformed MIR gives a positioned error (line, column, the line's text), never
//! a panic and never a guess. One test per kind of damage.

use mir_import::parse::{MAX_NESTING, ParseError, parse_mir};

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
fn function_allocations_name_their_function() {
    let text = format!("{GOOD}\nalloc3 (fn: kernel::scale::<3>)\n\nalloc2 (static: kernel::S)\n");
    let parsed = parse_mir(&text).expect("parses");
    let f = parsed
        .fn_names
        .get(&mir_import::model::AllocId(3))
        .expect("alloc3 names a function");
    assert_eq!(f.to_string(), "kernel::scale<3>");
    assert_eq!(
        parsed
            .static_names
            .get(&mir_import::model::AllocId(2))
            .map(String::as_str),
        Some("kernel::S")
    );
}

#[test]
fn vtable_allocations_name_their_type_and_principal_trait() {
    let text = format!(
        "{GOOD}\nalloc4 (vtable: impl kernel::Shape + std::marker::Sync for kernel::Wrap<u32>)\n"
    );
    let parsed = parse_mir(&text).expect("parses");
    let (concrete, principal) = parsed
        .vtable_names
        .get(&mir_import::model::AllocId(4))
        .expect("alloc4 names a vtable");
    assert_eq!(concrete.to_string(), "kernel::Wrap<u32>");
    assert_eq!(principal, "kernel::Shape");
}

#[test]
fn unknown_allocation_kinds_and_bad_function_paths() {
    let vtable = err(&format!(
        "{GOOD}\nalloc9 (vtable: <kernel::S as kernel::T>)\n"
    ));
    assert_eq!(vtable.pos.line, 14, "{vtable}");
    assert!(
        vtable
            .message
            .contains("the vtable of allocation alloc9 (`<kernel::S as kernel::T>`) is not `impl TRAIT for TYPE`"),
        "{vtable}"
    );
    let other = err(&format!("{GOOD}\nalloc9 (type_id: kernel::S)\n"));
    assert!(
        other
            .message
            .contains("allocation alloc9 is a `type_id` allocation, which is not supported"),
        "{other}"
    );
    let path = err(&format!("{GOOD}\nalloc9 (fn: kernel::f::<)\n"));
    assert!(
        path.message
            .contains("the function of allocation alloc9 (`kernel::f::<`) is not a path"),
        "{path}"
    );
    let shim = err(&format!("{GOOD}\nalloc9 (fn: kernel::f - shim(reify))\n"));
    assert!(
        shim.message
            .contains("points to `kernel::f - shim(reify)`, a shim rustc generates"),
        "{shim}"
    );
    let closure = "<{closure@/src/kernel.rs:3:38: 3:41} as FnOnce<(u32,)>>::call_once - shim";
    let shim = err(&format!("{GOOD}\nalloc9 (fn: {closure})\n"));
    assert!(shim.message.contains("a shim rustc generates"), "{shim}");
    let shape = err(&format!("{GOOD}\nalloc9 fn kernel::f\n"));
    assert!(
        shape.message.contains("bad allocation name line"),
        "{shape}"
    );
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

// Nesting: every recursive descent of the parser stops at `MAX_NESTING`
// levels with a positioned error. Each test runs on a thread with a 2 MiB
// stack, the default for test threads, so a recursion without the limit
// would overflow it and abort the test binary instead of failing an assert.

/// Runs `f` on a thread with a 2 MiB stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// A body whose one local has type `ty` and whose one statement assigns
/// `rvalue`; the `let` is on line 2 and the statement on line 5.
fn body_with(ty: &str, rvalue: &str) -> String {
    format!(
        "fn f() -> () {{\n    let _1: {ty};\n\n    bb0: {{\n        _1 = {rvalue};\n        return;\n    }}\n}}\n"
    )
}

/// `depth` levels of type: `&&…&u8` has `depth - 1` references.
fn deep_ref_ty(depth: usize) -> String {
    format!("{}u8", "&".repeat(depth - 1))
}

/// `depth` levels of constant value: `((…(1_u8,)…,),)`.
fn deep_tuple_const(depth: usize) -> String {
    format!(
        "const {}1_u8{}",
        "(".repeat(depth - 1),
        ",)".repeat(depth - 1)
    )
}

/// The column of the token that opens level `level` when level 1 starts at
/// column `first` and each level adds one character.
fn col_of_level(first: u32, level: usize) -> u32 {
    first + u32::try_from(level - 1).expect("small")
}

#[test]
fn a_type_nested_20000_deep_is_a_positioned_error_not_a_stack_overflow() {
    let e = on_small_stack(|| err(&body_with(&deep_ref_ty(20_000), "const 0_u8")));
    assert!(
        e.message
            .contains(&format!("nesting deeper than {MAX_NESTING} levels")),
        "{e}"
    );
    assert!(e.message.contains("a type"), "{e}");
    // Line 2 `    let _1: `: the first `&` is column 13; the error points at
    // the one that would open level MAX_NESTING + 1.
    assert_eq!(
        (e.pos.line, e.pos.col),
        (2, col_of_level(13, MAX_NESTING + 1)),
        "{e}"
    );
    assert!(e.line_text.starts_with("    let _1: &&&"), "{e}");
}

#[test]
fn generic_arguments_nested_20000_deep_are_a_positioned_error() {
    let depth = 20_000;
    let ty = format!("{}u8{}", "Option<".repeat(depth - 1), ">".repeat(depth - 1));
    let e = on_small_stack(move || err(&body_with(&ty, "const 0_u8")));
    assert!(e.message.contains("nesting deeper than"), "{e}");
    // `Option<` is 7 characters; level 1 is the first `Option` at column 13.
    let col = 13 + 7 * u32::try_from(MAX_NESTING).expect("small");
    assert_eq!((e.pos.line, e.pos.col), (2, col), "{e}");
}

#[test]
fn a_constant_nested_20000_deep_is_a_positioned_error_not_a_stack_overflow() {
    let e = on_small_stack(|| err(&body_with("u8", &deep_tuple_const(20_000))));
    assert!(
        e.message
            .contains(&format!("nesting deeper than {MAX_NESTING} levels")),
        "{e}"
    );
    assert!(e.message.contains("a constant value"), "{e}");
    // Line 5 `        _1 = const `: the first `(` is column 20.
    assert_eq!(
        (e.pos.line, e.pos.col),
        (5, col_of_level(20, MAX_NESTING + 1)),
        "{e}"
    );
}

#[test]
fn a_place_nested_20000_deep_is_a_positioned_error_not_a_stack_overflow() {
    let depth = 20_000;
    let place = format!("{}_1{}", "(*".repeat(depth - 1), ")".repeat(depth - 1));
    let e = on_small_stack(move || err(&body_with("u8", &format!("copy {place}"))));
    assert!(e.message.contains("nesting deeper than"), "{e}");
    assert!(e.message.contains("a place"), "{e}");
    // `        _1 = copy `: the first `(*` is column 19, two characters a level.
    let col = 19 + 2 * u32::try_from(MAX_NESTING).expect("small");
    assert_eq!((e.pos.line, e.pos.col), (5, col), "{e}");
}

#[test]
fn scopes_nested_20000_deep_are_a_positioned_error() {
    let depth = 20_000;
    let mut text = String::from("fn f() -> () {\n    let mut _0: ();\n");
    for i in 0..depth {
        text.push_str(&format!("    scope {i} {{\n"));
    }
    for _ in 0..depth {
        text.push_str("    }\n");
    }
    text.push_str("\n    bb0: {\n        return;\n    }\n}\n");
    let e = on_small_stack(move || err(&text));
    assert!(e.message.contains("nesting deeper than"), "{e}");
    assert!(e.message.contains("a scope"), "{e}");
    // Scope `i` is on line 3 + i; the one that opens a level too many is
    // scope MAX_NESTING.
    let line = 3 + u32::try_from(MAX_NESTING).expect("small");
    assert_eq!((e.pos.line, e.pos.col), (line, 5), "{e}");
}

#[test]
fn nesting_at_the_limit_still_parses_and_prints() {
    // Exactly MAX_NESTING levels parse, and what they build can be printed,
    // serialized and dropped on the same small stack; one more level is the
    // error above.
    let (ty, json_len) = on_small_stack(|| {
        let text = body_with(&deep_ref_ty(MAX_NESTING), &deep_tuple_const(MAX_NESTING));
        let parsed = parse_mir(&text).expect("MAX_NESTING levels parse");
        let body = &parsed.bodies[0];
        let ty = body
            .locals
            .values()
            .nth(1)
            .map(|l| l.ty.to_string())
            .expect("_1");
        let json = serde_json::to_string(&parsed.bodies).expect("serializes");
        let debug = format!("{parsed:?}");
        assert!(!debug.is_empty());
        (ty, json.len())
    });
    assert_eq!(ty, deep_ref_ty(MAX_NESTING));
    assert!(json_len > 0);
    for text in [
        body_with(&deep_ref_ty(MAX_NESTING + 1), "const 0_u8"),
        body_with("u8", &deep_tuple_const(MAX_NESTING + 1)),
    ] {
        let e = on_small_stack(move || err(&text));
        assert!(e.message.contains("nesting deeper than"), "{e}");
    }
}

/// After a `dyn` bound, only the `Fn` traits take parenthesized arguments: the
/// parenthesis in `_2 as &dyn Debug (PointerCoercion(..))` is the cast's kind
/// (arrayvec's `Result::unwrap` prints one).
#[test]
fn dyn_bound_before_a_cast_kind_is_not_fn_sugar() {
    let text = "\
fn kernel::f(_1: &u32, _2: &dyn Fn(u32) -> u32) -> &dyn std::fmt::Debug {
    let mut _0: &dyn std::fmt::Debug;

    bb0: {
        _0 = copy _1 as &dyn std::fmt::Debug (PointerCoercion(Unsize, Implicit));
        return;
    }
}
";
    let parsed = parse_mir(text).unwrap_or_else(|e| panic!("{e}"));
    let body = &parsed.bodies[0];
    let entry = body.blocks.values().next().expect("one block");
    let rendered = format!("{:?}", entry.statements[0]);
    assert!(
        rendered.contains("PointerCoercion(\"Unsize, Implicit\")"),
        "{rendered}"
    );
}

/// A higher-ranked function pointer (`for<'a, 'b> fn(&'a [u8], ..)`,
/// xxhash-rust's `xxh3` keeps one in a local) is the function pointer; the
/// binder's lifetimes are dropped like the others.
#[test]
fn higher_ranked_fn_pointers_parse() {
    let text = "\
fn kernel::f(_1: u64) -> u64 {
    let mut _0: u64;
    let mut _2: for<'a, 'b> fn(&'a [u8], u64, &'b [u8]) -> u64;

    bb0: {
        _0 = copy _1;
        return;
    }
}
";
    let parsed = parse_mir(text).unwrap_or_else(|e| panic!("{e}"));
    let ty = &parsed.bodies[0].locals.values().nth(2).expect("_2").ty;
    assert_eq!(ty.to_string(), "fn(&[u8], u64, &[u8]) -> u64");
    // A binder with anything but lifetimes is an error, not a guess.
    let bad = text.replace("for<'a, 'b>", "for<T>");
    assert!(parse_mir(&bad).is_err());
}
