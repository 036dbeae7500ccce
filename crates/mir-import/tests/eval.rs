//! Constant evaluation: the oracle comparison can fail, unsupported constructs
//! give diagnostics that name the constant and the construct, and the rustc
//! twin fallback evaluates what the evaluator cannot and says so.

use std::path::{Path, PathBuf};

use mir_import::eval::{EvaluatedBy, TupleLayouts, evaluate, twin};
use mir_import::rustc::RustcOptions;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("kernel.rs")
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name)
}

#[test]
fn a_planted_wrong_byte_fails_the_twin_comparison() {
    let file = corpus("named_tuple_ref.rs");
    let opts = RustcOptions::default();
    let mut imported = mir_import::import_and_evaluate(&file, &opts, false).expect("imports");
    let twins = twin::build_twins(&file, &opts).expect("twins");
    let name = twins
        .consts
        .first()
        .map(|c| format!("kernel::{c}"))
        .expect("a const");
    let ours = imported.eval.value(&name).expect("evaluated");
    let theirs = twins.twin_alloc(&name).expect("twin printed");
    twin::compare(&imported.eval.memory, ours, &twins.krate, theirs).expect("equal before");

    // Plant one wrong byte in the deepest allocation the const reaches.
    let target = *imported
        .eval
        .memory
        .reachable(ours)
        .last()
        .expect("reachable");
    let alloc = &mut imported.eval.memory.allocs[target];
    let at =
        (0..alloc.bytes.len()).find(|i| alloc.init[*i] && !alloc.relocs.contains_key(&(*i as u64)));
    let at = at.expect("a plain initialized byte");
    alloc.bytes[at] ^= 0x40;
    let err = twin::compare(&imported.eval.memory, ours, &twins.krate, theirs)
        .expect_err("a wrong byte must be caught");
    assert!(err.to_string().contains(&format!("byte {at}")), "{err}");
}

#[test]
fn a_wrong_relocation_target_fails_the_comparison() {
    let file = corpus("static_slice.rs");
    let opts = RustcOptions::default();
    let mut imported = mir_import::import_and_evaluate(&file, &opts, false).expect("imports");
    let (item, dump) = imported
        .eval
        .items
        .keys()
        .find_map(|k| {
            imported
                .krate
                .static_alloc(k)
                .filter(|d| !d.relocations.is_empty())
                .map(|d| (k.clone(), d.id))
        })
        .expect("a static with a pointer");
    let ours = imported.eval.value(&item).expect("evaluated");
    twin::compare(&imported.eval.memory, ours, &imported.krate, dump).expect("equal before");
    let reloc = imported.eval.memory.allocs[ours]
        .relocs
        .values_mut()
        .next()
        .expect("reloc");
    reloc.addend += 4;
    let err =
        twin::compare(&imported.eval.memory, ours, &imported.krate, dump).expect_err("caught");
    assert!(err.to_string().contains("addend"), "{err}");
}

/// A table of functions evaluates to pointers to the functions, equal to
/// rustc's twin entry by entry; swapping two entries is caught.
#[test]
fn a_table_of_functions_matches_its_twin_and_a_swapped_entry_fails() {
    use mir_import::eval::Target;
    let file = fixture("fn_pointer_tables");
    let opts = RustcOptions::default();
    let mut imported = mir_import::import_and_evaluate(&file, &opts, false).expect("imports");
    let twins = twin::build_twins(&file, &opts).expect("twins");
    let ours = imported.eval.value("kernel::OPS").expect("evaluated");
    assert_eq!(
        imported.eval.items["kernel::OPS"].by,
        EvaluatedBy::Evaluator
    );
    let theirs = twins.twin_alloc("kernel::OPS").expect("twin printed");
    twin::compare(&imported.eval.memory, ours, &twins.krate, theirs).expect("equal before");
    let entries: Vec<String> = imported.eval.memory.allocs[ours]
        .relocs
        .values()
        .map(|r| match &r.target {
            Target::Function(f) => f.to_string(),
            t => panic!("a table entry that is no function: {t:?}"),
        })
        .collect();
    assert_eq!(
        entries,
        [
            "kernel::double",
            "kernel::square",
            "kernel::rotate",
            "kernel::mix"
        ]
    );
    let relocs = &mut imported.eval.memory.allocs[ours].relocs;
    let second = relocs[&8].target.clone();
    relocs.get_mut(&0).expect("entry 0").target = second;
    let err = twin::compare(&imported.eval.memory, ours, &twins.krate, theirs)
        .expect_err("a swapped entry must be caught");
    assert!(err.to_string().contains("pointer at 0 targets"), "{err}");
}

/// A const whose promoted calls a `const fn`: the evaluator refuses it with a
/// diagnostic naming the constant and the call, and the twin fallback has rustc
/// evaluate it instead.
#[test]
fn const_fn_call_falls_back_to_the_rustc_twin() {
    let file = fixture("disjoint_slice_const_ref");
    let opts = RustcOptions::default();
    let plain = mir_import::import_and_evaluate(&file, &opts, false).expect("imports");
    let why = plain.eval.items["kernel::EMPTY"]
        .value
        .as_ref()
        .expect_err("needs a call");
    let text = why.to_string();
    assert!(text.contains("kernel::EMPTY"), "{text}");
    assert!(
        text.contains("call to `gpu::DisjointSlice<'_, u32>::empty`"),
        "{text}"
    );

    let with = mir_import::import_and_evaluate(&file, &opts, true).expect("imports");
    let item = &with.eval.items["kernel::EMPTY"];
    assert_eq!(item.by, EvaluatedBy::RustcTwin);
    let v = item.value.as_ref().expect("rustc evaluated it");
    // `&DisjointSlice::empty()`: a pointer to 16 bytes (null pointer, length 0).
    let root = &with.eval.memory.allocs[*v];
    assert_eq!(root.relocs.len(), 1, "the reference itself");
    let inner = match &root.relocs[&0].target {
        mir_import::eval::Target::Alloc(a) => &with.eval.memory.allocs[*a],
        t => panic!("unexpected target {t:?}"),
    };
    assert_eq!(inner.bytes, vec![0; 16]);
    assert!(inner.relocs.is_empty());
}

fn eval_text(mir: &str) -> mir_import::eval::Evaluation {
    let k = mir_import::import_text(mir, "", None).expect("parses");
    evaluate(&k, &TupleLayouts::default())
}

#[test]
fn call_in_a_promoted_is_a_diagnostic() {
    let ev = eval_text(
        "const kernel::X::promoted[0]: &u32 = {\n    let mut _0: &u32;\n    let mut _1: u32;\n\n    bb0: {\n        _1 = kernel::f() -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        _0 = &_1;\n        return;\n    }\n}\n",
    );
    let e = ev.items["kernel::X::promoted[0]"]
        .value
        .as_ref()
        .expect_err("unsupported");
    assert_eq!(e.item, "kernel::X::promoted[0]");
    assert_eq!(e.location.as_deref(), Some("bb0[0]"));
    assert!(e.reason.to_string().contains("call to `kernel::f`"), "{e}");
}

#[test]
fn unknown_tuple_layout_is_a_diagnostic_not_a_guess() {
    let ev = eval_text(
        "const kernel::T: (u8, u32) = {\n    let mut _0: (u8, u32);\n\n    bb0: {\n        _0 = (const 1_u8, const 2_u32);\n        return;\n    }\n}\n",
    );
    let e = ev.items["kernel::T"]
        .value
        .as_ref()
        .expect_err("unsupported");
    assert!(
        e.reason
            .to_string()
            .contains("layout of tuple `(u8, u32)` is unknown"),
        "{e}"
    );
}

/// `enum Either { Left(&u32), Right(u64, &u8) }` keeps `Left` in the null of
/// `Right`'s reference, a niche only rustc's layout report gives: with the
/// report the constant evaluates to rustc's bytes; without it, it is refused
/// by name.
#[test]
fn a_niche_only_rustc_reports_is_proven_by_the_report() {
    let file = corpus("pointer_fields_aggregates.rs");
    let imported =
        mir_import::import_and_evaluate(&file, &RustcOptions::default(), false).expect("imports");
    let mem = &imported.eval.memory;
    let l = imported
        .eval
        .value("kernel::EITHER_L")
        .expect("EITHER_L evaluates");
    let reloc = mem.read_pointer(l, 0).expect("a reference");
    let mir_import::eval::Target::Alloc(either) = reloc.target else {
        panic!("EITHER_L points at {:?}", reloc.target);
    };
    let a = &mem.allocs[either];
    assert_eq!(&a.bytes[0..8], &[0; 8], "Left is a null at offset 0");
    assert!(a.relocs.contains_key(&8), "Left's reference is at offset 8");
    let unprobed = mir_import::eval::evaluate(&imported.krate, &TupleLayouts::default());
    let e = unprobed.items["kernel::EITHER_L"]
        .value
        .as_ref()
        .expect_err("unproven");
    assert!(
        e.to_string()
            .contains("niche encoding of `kernel::Either` is not proven"),
        "{e}"
    );
}

/// `fn kernel::double(x) = x * 2`, or with `recursive`, a function that
/// calls itself forever, and `const kernel::X: u32 = kernel::double(21)`.
fn calling_const(recursive: bool) -> String {
    let body = if recursive {
        "        _0 = kernel::double(copy _1) -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        return;\n"
    } else {
        "        _0 = Mul(copy _1, const 2_u32);\n        return;\n"
    };
    format!(
        "fn kernel::double(_1: u32) -> u32 {{\n    let mut _0: u32;\n\n    bb0: {{\n{body}    }}\n}}\n\n\
         const kernel::X: u32 = {{\n    let mut _0: u32;\n\n    bb0: {{\n        _0 = kernel::double(const 21_u32) -> [return: bb1, unwind unreachable];\n    }}\n\n    bb1: {{\n        return;\n    }}\n}}\n"
    )
}

#[test]
fn a_const_fn_call_runs_in_a_frame_of_its_own() {
    let ev = eval_text(&calling_const(false));
    let v = ev.value("kernel::X").expect("evaluated");
    assert_eq!(ev.memory.allocs[v].bytes, 42u32.to_le_bytes());
    // The callee's two locals were freed when it returned: with the items
    // alone evaluated (not yet the functions' constant operands), only the
    // constant's own value keeps bytes.
    let k = mir_import::import_text(&calling_const(false), "", None).expect("parses");
    let items = mir_import::eval::evaluate_items(&k, &TupleLayouts::default());
    let v = items.value("kernel::X").expect("evaluated");
    let live: Vec<_> = items
        .memory
        .allocs
        .iter()
        .filter(|(_, a)| a.size() > 0)
        .map(|(id, _)| id)
        .collect();
    assert_eq!(live, [v]);
}

/// A pointer to a callee's local, read after the call returned, is a
/// dangling read: an error, never the stale value.
#[test]
fn a_pointer_into_a_returned_frame_dangles() {
    let ev = eval_text(
        "fn kernel::addr() -> *const u32 {\n    let mut _0: *const u32;\n    let mut _1: u32;\n\n    bb0: {\n        _1 = const 5_u32;\n        _0 = &raw const _1;\n        return;\n    }\n}\n\n\
         const kernel::D: u32 = {\n    let mut _0: u32;\n    let mut _1: *const u32;\n\n    bb0: {\n        _1 = kernel::addr() -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        _0 = copy (*_1);\n        return;\n    }\n}\n",
    );
    let e = ev.items["kernel::D"].value.as_ref().expect_err("dangles");
    assert!(e.reason.to_string().contains("outside"), "{e}");
}

#[test]
fn a_recursive_const_fn_stops_at_the_call_depth_limit() {
    let ev = eval_text(&calling_const(true));
    let e = ev.items["kernel::X"].value.as_ref().expect_err("recurses");
    assert_eq!(e.item, "kernel::X");
    let text = e.reason.to_string();
    assert!(
        text.starts_with("in `kernel::double` at bb0[0]: in `kernel::double`"),
        "{text}"
    );
    assert!(text.contains("calls nested deeper than 64"), "{text}");
}

#[test]
fn looping_constant_hits_the_step_limit() {
    let ev = eval_text(
        "const kernel::L: u32 = {\n    let mut _0: u32;\n\n    bb0: {\n        _0 = const 1_u32;\n        goto -> bb0;\n    }\n}\n",
    );
    let e = ev.items["kernel::L"].value.as_ref().expect_err("loops");
    assert!(e.reason.to_string().contains("step limit"), "{e}");
}

#[test]
fn const_naming_const_shares_its_allocation() {
    let file = fixture("array_const_identity");
    let imported =
        mir_import::import_and_evaluate(&file, &RustcOptions::default(), false).expect("imports");
    let mem = &imported.eval.memory;
    let a = imported.eval.value("kernel::A").expect("A");
    let e = imported.eval.value("kernel::E").expect("E");
    let (ra, re) = (&mem.allocs[a].relocs[&0], &mem.allocs[e].relocs[&0]);
    assert_eq!(
        ra.target, re.target,
        "E points into A's allocation, not a copy"
    );
    assert_eq!((ra.addend, re.addend), (0, 0));
}

/// Float arithmetic in a constant: `-(x / 3.0)` flips the quotient's sign
/// bit, and `0.0 / 0.0` (libm's `force_eval!`) is the preferred NaN rustc's
/// evaluator gives, not the host's.
#[test]
fn float_arithmetic_and_negation_in_a_constant() {
    let ev = eval_text(
        "const kernel::Q: f64 = {\n    let mut _0: f64;\n    let mut _1: f64;\n\n    bb0: {\n        _1 = Div(const 1f64, const 3f64);\n        _0 = Neg(move _1);\n        return;\n    }\n}\n\n\
         const kernel::N: f32 = {\n    let mut _0: f32;\n\n    bb0: {\n        _0 = Div(const 0f32, const 0f32);\n        return;\n    }\n}\n",
    );
    let q = ev.value("kernel::Q").expect("evaluated");
    assert_eq!(ev.memory.allocs[q].bytes, (-(1.0f64 / 3.0)).to_le_bytes());
    let n = ev.value("kernel::N").expect("evaluated");
    assert_eq!(ev.memory.allocs[n].bytes, 0x7fc0_0000u32.to_le_bytes());
    // Negation is a bit operation: an `f32`'s sign flips, and a NaN keeps
    // its payload.
    let ev = eval_text(
        "const kernel::M: f32 = {\n    let mut _0: f32;\n\n    bb0: {\n        _0 = Neg(const 2.5f32);\n        return;\n    }\n}\n\n\
         const kernel::P: f32 = {\n    let mut _0: f32;\n    let mut _1: f32;\n\n    bb0: {\n        _1 = Div(const 0f32, const 0f32);\n        _0 = Neg(move _1);\n        return;\n    }\n}\n",
    );
    let m = ev.value("kernel::M").expect("evaluated");
    assert_eq!(ev.memory.allocs[m].bytes, (-2.5f32).to_le_bytes());
    let p = ev.value("kernel::P").expect("evaluated");
    assert_eq!(ev.memory.allocs[p].bytes, 0xffc0_0000u32.to_le_bytes());
}
