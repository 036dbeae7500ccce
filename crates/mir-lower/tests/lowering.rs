//! Unit tests of the lowering's rules (issue: mir-lower): typed views sharing
//! one global in either order, rejected views, the shared-memory refusals,
//! read-only `*mut` constants, the `&[T; N]` identity, and diagnostics for
//! unsupported constructs.

use std::path::{Path, PathBuf};

mod common;

use device_ir::{InstData, Module, RelocTarget};
use mir_import::eval::{TupleLayouts, evaluate};
use mir_lower::{Diagnostics, Lowered, Rule};

fn here(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn lower_file(path: &Path) -> Result<Lowered, Diagnostics> {
    let imp = mir_import::import_and_evaluate(path, &Default::default(), true)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mir_lower::lower(&imp)
}

fn fixture(name: &str) -> Result<Lowered, Diagnostics> {
    lower_file(&here(&format!("../../fixtures/{name}/kernel.rs")))
}

/// Lowers hand-written MIR text (with a source for the attributes).
fn lower_text(mir: &str, source: &str) -> Result<Lowered, Diagnostics> {
    lower_text_with_layouts(mir, "", source)
}

/// Lowers hand-written MIR with a hand-written layout report.
fn lower_text_with_layouts(mir: &str, sizes: &str, source: &str) -> Result<Lowered, Diagnostics> {
    lower_crate(mir_import::import_text(mir, sizes, Some((source, "k.rs"))).expect("imports"))
}

/// Lowers an imported crate, with no probed tuple layouts.
fn lower_crate(krate: mir_import::model::Crate) -> Result<Lowered, Diagnostics> {
    let tuples = TupleLayouts::default();
    let eval = evaluate(&krate, &tuples);
    let imp = mir_import::Imported {
        krate,
        eval,
        tuples,
    };
    mir_lower::lower(&imp)
}

/// The globals a function takes the address of, by symbol.
fn globals_used(m: &Module, func: &str) -> Vec<String> {
    let f = m
        .function_by_name(func)
        .unwrap_or_else(|| panic!("no function {func}"));
    let body = m.functions[f].body.as_ref().expect("body");
    let mut out: Vec<String> = body
        .insts
        .values()
        .filter_map(|i| match i {
            InstData::GlobalAddr { global, .. } => Some(m.globals[*global].symbol.clone()),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn typed_views_share_one_global_in_either_order() {
    let a = lower_file(&here("tests/kernels/views_whole_first.rs")).expect("lowers");
    let b = lower_file(&here("tests/kernels/views_payload_first.rs")).expect("lowers");
    let (ia, ib) = (
        nvvm_emit::print_module(&a.module),
        nvvm_emit::print_module(&b.module),
    );
    assert_eq!(
        ia, ib,
        "the order in which views are declared changed the module"
    );
    let whole = globals_used(&a.module, "kernel__whole");
    let payload = globals_used(&a.module, "kernel__payload");
    assert_eq!(whole.len(), 1, "{whole:?}");
    assert!(
        payload.contains(&whole[0]),
        "the payload view uses another global: {payload:?} vs {whole:?}"
    );
}

const SRC: &str = r#"
#[inline(never)] pub fn g() -> &'static bool { &true }
#[unsafe(no_mangle)] pub extern "C" fn k(p: *mut bool) {}
"#;

fn view_mir(byte: &str) -> String {
    format!(
        "fn kernel::g() -> &bool {{\n    let mut _0: &bool;\n\n    bb0: {{\n        _0 = const {{alloc1: &bool}};\n        return;\n    }}\n}}\n\n\
         fn kernel::k(_1: *mut bool) -> () {{\n    let mut _0: ();\n    let mut _2: &bool;\n    let mut _3: bool;\n\n    bb0: {{\n        _2 = kernel::g() -> [return: bb1, unwind unreachable];\n    }}\n\n    bb1: {{\n        _3 = copy (*_2);\n        (*_1) = move _3;\n        return;\n    }}\n}}\n\n\
         alloc1 (size: 1, align: 1) {{\n    {byte}                                              │ .\n}}\n"
    )
}

#[test]
fn a_view_that_does_not_match_its_bytes_is_rejected() {
    lower_text(&view_mir("01"), SRC).expect("a bool 1 is a valid view");
    let d = lower_text(&view_mir("07"), SRC).expect_err("7 is not a bool");
    let v =
        d.0.iter()
            .find(|x| x.rule == Rule::ViewMismatch)
            .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(v.item, "kernel::g");
    assert!(v.message.contains("offset 0"), "{v}");
}

#[test]
fn an_unprovable_interior_view_is_rejected() {
    let d = fixture("error_interior_view_unprovable").expect_err("refused");
    let v =
        d.0.iter()
            .find(|x| x.rule == Rule::InteriorViewUnprovable)
            .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(v.item, "kernel::inner");
    assert!(
        v.message.contains("offset 4") && v.message.contains("kernel::Tri"),
        "{v}"
    );
}

/// A kernel whose helper returns the constant `FLOW`, a one-variant enum
/// (`ControlFlow<&T, Infallible>`, held in a register as its pointer),
/// declared as `flow_ty = flow_value` over the tables `PAIR` and `WORDS`.
fn one_variant_flow_kernel(flow_ty: &str, flow_value: &str, read: &str) -> String {
    format!(
        "use crate::gpu::*;\n\
         use core::convert::Infallible;\n\
         use core::ops::ControlFlow;\n\
         #[derive(Clone, Copy)]\n\
         pub struct Tri<const YES: bool>(u16);\n\
         const PAIR: &(u32, (u8, Tri<true>)) = &(7, (5, Tri(300)));\n\
         const WORDS: &[u32; 4] = &[1, 2, 3, 4];\n\
         const FLOW: ControlFlow<{flow_ty}, Infallible> = ControlFlow::Break({flow_value});\n\
         #[inline(never)]\n\
         fn flow() -> ControlFlow<{flow_ty}, Infallible> {{ FLOW }}\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) {{\n\
             let t = thread_idx_x() as usize;\n\
             if t < out.len() {{\n\
                 let v = match flow() {{ ControlFlow::Break(r) => {read}, ControlFlow::Continue(n) => match n {{}} }};\n\
                 out.set(t, v + PAIR.0 + WORDS[0]);\n\
             }}\n\
         }}\n"
    )
}

/// The pointer a one-variant enum constant is held as is validated at its
/// payload's type, as any reference constant's: an interior view that
/// cannot be proven is refused where the constant is read (`flow` passed
/// unchecked, the enum's own type giving no view), and a provable one
/// lowers.
#[test]
fn a_one_variant_enums_pointer_is_a_typed_view() {
    let unprovable = one_variant_flow_kernel(
        "&'static (u8, Tri<true>)",
        "&PAIR.1",
        "u32::from(r.1.0) + u32::from(r.0)",
    );
    let d = common::lower_source("flow-view", &unprovable).expect_err("refused");
    let v =
        d.0.iter()
            .find(|x| x.rule == Rule::InteriorViewUnprovable)
            .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(v.item, "kernel::flow");
    assert!(v.message.contains("kernel::Tri"), "{v}");
    let provable = one_variant_flow_kernel("&'static u32", "&WORDS[2]", "*r");
    common::lower_source("flow-word", &provable).unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn a_shared_pointer_in_a_static_initializer_is_refused() {
    let d = fixture("error_shared_pointer_constant").expect_err("refused");
    let v =
        d.0.iter()
            .find(|x| x.rule == Rule::SharedPointerInConstant)
            .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(v.item, "kernel::HOLDER");
    assert!(v.message.contains("gpu::SharedArray"), "{v}");
}

#[test]
fn a_stored_pointer_to_a_shared_static_is_refused() {
    let d = fixture("error_shared_static_relocation").expect_err("refused");
    let items: Vec<&str> =
        d.0.iter()
            .filter(|x| x.rule == Rule::SharedStaticRelocation)
            .map(|x| x.item.as_str())
            .collect();
    assert!(
        items.contains(&"kernel::P") && items.contains(&"kernel::Q"),
        "{d}"
    );
}

#[test]
fn a_mut_pointer_constant_into_read_only_storage_stays_read_only() {
    let l = fixture("promoted_ref_return").expect("lowers");
    let used = globals_used(&l.module, "kernel__mut_const");
    assert_eq!(used, vec!["kernel__V".to_string()]);
    let g = l.module.global_by_symbol("kernel__V").expect("V");
    let g = &l.module.globals[g];
    assert!(
        !g.mutable,
        "the static behind a *mut constant became writable"
    );
    assert_eq!(g.space, device_ir::AddressSpace::Global);
}

#[test]
fn array_constant_identity_holds() {
    let l = fixture("array_const_identity").expect("lowers");
    let first = globals_used(&l.module, "kernel__first");
    let whole = globals_used(&l.module, "kernel__whole");
    let second = globals_used(&l.module, "kernel__second");
    assert_eq!(first.len(), 1);
    assert_eq!(first, whole, "&A[0] and A must point into one global");
    assert_eq!(
        first, second,
        "&A[1] must be an offset into the same global"
    );
}

#[test]
fn no_helper_keeps_an_alloca_and_constants_are_read_only_globals() {
    for name in [
        "promoted_ref_return",
        "array_const_identity",
        "kernel_reference_validity",
        "disjoint_slice_const_ref",
    ] {
        let l = fixture(name).expect(name);
        for (_, f) in l.module.functions.iter() {
            if f.kind == device_ir::FunctionKind::Kernel {
                continue;
            }
            let body = f.body.as_ref().expect("body");
            let allocas = body
                .insts
                .values()
                .filter(|i| matches!(i, InstData::Alloca { .. }))
                .count();
            assert_eq!(
                allocas, 0,
                "{name}: helper {} keeps {allocas} allocas",
                f.name
            );
        }
        for (id, origin) in &l.origins {
            if *origin == mir_lower::GlobalOrigin::Constant {
                let g = &l.module.globals[*id];
                assert!(
                    !g.mutable && g.space == device_ir::AddressSpace::Global,
                    "{name}: {}",
                    g.symbol
                );
                assert!(g.symbol.starts_with("__const_"), "{}", g.symbol);
            }
        }
    }
}

// ---- diagnostics for unsupported constructs: item, location, reason ----

fn one_fn(body: &str, locals: &str) -> String {
    format!(
        "fn kernel::k(_1: *mut u32) -> () {{\n    let mut _0: ();\n{locals}\n    bb0: {{\n{body}\n    }}\n}}\n"
    )
}

const KSRC: &str = "#[unsafe(no_mangle)] pub extern \"C\" fn k(p: *mut u32) {}";

fn diag(mir: &str) -> mir_lower::Diagnostic {
    let d = lower_text(mir, KSRC).expect_err("unsupported");
    assert!(d.0.iter().all(|x| x.rule == Rule::Unsupported), "{d}");
    d.0[0].clone()
}

#[test]
fn call_without_mir_is_a_diagnostic() {
    let d = diag(&one_fn(
        "        _2 = kernel::missing() -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        return;",
        "    let mut _2: u32;\n",
    ));
    assert_eq!(
        (d.item.as_str(), d.location.as_deref()),
        ("kernel::k", Some("bb0[0]"))
    );
    assert!(
        d.message
            .starts_with("calls to functions without a device body are not supported")
            && d.message.contains("`kernel::missing`"),
        "{d}"
    );
}

/// A kernel type with a `Drop` impl, and its layout report.
const DROP_SRC: &str = "#[unsafe(no_mangle)] pub extern \"C\" fn k(p: *mut u32) {}\n\
    pub struct G(u32);\n\
    impl Drop for G { fn drop(&mut self) {} }\n";
const G_SIZES: &str = "print-type-size type: `kernel::G`: 4 bytes, alignment: 4 bytes\n\
    print-type-size     field `.0`: 4 bytes\n";

#[test]
fn drop_with_drop_glue_is_a_diagnostic_and_without_it_a_jump() {
    let body = "        drop(_2) -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        return;";
    let d = lower_text_with_layouts(
        &one_fn(body, "    let mut _2: kernel::G;\n"),
        G_SIZES,
        DROP_SRC,
    )
    .expect_err("a drop with drop glue");
    let d = &d.0[0];
    assert!(
        d.message.contains("`drop` of `kernel::G`") && d.message.contains("not supported"),
        "{d}"
    );
    assert_eq!(d.location.as_deref(), Some("bb0[0]"));
    // Without the `Drop` impl, `G` and a `u32` have no drop glue.
    lower_text_with_layouts(&one_fn(body, "    let mut _2: kernel::G;\n"), G_SIZES, KSRC)
        .expect("a drop of a type without drop glue does nothing");
    lower_text(&one_fn(body, "    let mut _2: u32;\n"), KSRC).expect("a drop of a u32");
}

#[test]
fn f16_is_a_diagnostic() {
    let d = diag(&one_fn("        return;", "    let mut _2: f16;\n"));
    assert!(d.message.contains("`f16` is not supported"), "{d}");
}

#[test]
fn function_pointer_call_is_an_indirect_call() {
    let call = "        _3 = move _2() -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        return;";
    let l = lower_text(
        &one_fn(call, "    let mut _2: fn() -> u32;\n    let mut _3: u32;\n"),
        KSRC,
    )
    .expect("a call through a fn pointer");
    let text = l.module.to_string();
    assert!(text.contains("as fn() -> i32"), "{text}");
    // Hostile MIR calling through something else is refused by name.
    let d = diag(&one_fn(
        call,
        "    let mut _2: u32;\n    let mut _3: u32;\n",
    ));
    assert!(
        d.message
            .contains("a call through `u32`, which is not a function pointer"),
        "{d}"
    );
}

#[test]
fn aggregate_kernel_parameter_is_passed_by_value() {
    let mir = "fn kernel::k(_1: [u32; 4]) -> () {\n    let mut _0: ();\n\n    bb0: {\n        return;\n    }\n}\n";
    let l = lower_text(mir, KSRC).expect("an array by value is a kernel parameter");
    let k = l.module.function_by_name("k").expect("kernel");
    let sig = l.module.to_string();
    let sig = sig.lines().find(|l| l.contains("@k(")).expect("signature");
    assert!(sig.contains("@k([4 x i32]* byval)"), "{sig}");
    assert_eq!(
        l.module.functions[k].param_attrs,
        [device_ir::ParamAttrs::BYVAL]
    );
    assert_eq!(l.kernel_params["k"][0].by_value_size, Some(16));
}

#[test]
fn unknown_atomic_ordering_is_a_diagnostic() {
    let d = diag(&one_fn(
        "        _2 = std::sync::atomic::atomic_load::<u32>(copy _1, copy _3) -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        return;",
        "    let mut _2: u32;\n    let mut _3: u32;\n",
    ));
    assert!(d.message.contains("ordering"), "{d}");
}

#[test]
fn every_stack_slot_is_made_in_the_entry_block() {
    // A slot made where a call happens would grow the stack on every trip of
    // a loop; the lowering prepares them all on entry.
    for name in [
        "promoted_ref_return",
        "kernel_reference_validity",
        "saxpy",
        "shared_reduction",
    ] {
        let l = fixture(name).expect(name);
        for (_, f) in l.module.functions.iter() {
            let body = f.body.as_ref().expect("body");
            let entry = body.entry();
            for (b, data) in body.blocks.iter() {
                for inst in &data.insts {
                    if matches!(body.insts[*inst], InstData::Alloca { .. }) {
                        assert_eq!(b, entry, "{name}: {} makes a stack slot in {b}", f.name);
                    }
                }
            }
        }
    }
}

fn struct_view_mir(row: &str) -> String {
    format!(
        "fn kernel::g() -> &kernel::S {{\n    let mut _0: &kernel::S;\n\n    bb0: {{\n        _0 = const {{alloc1: &kernel::S}};\n        return;\n    }}\n}}\n\n\
         fn kernel::k(_1: *mut u64) -> () {{\n    let mut _0: ();\n    let mut _2: &kernel::S;\n\n    bb0: {{\n        _2 = kernel::g() -> [return: bb1, unwind unreachable];\n    }}\n\n    bb1: {{\n        return;\n    }}\n}}\n\n\
         alloc1 (size: 16, align: 8) {{\n    {row}\n}}\n\n\
         alloc2 (size: 4, align: 4) {{\n    07 00 00 00                                     │ ....\n}}\n"
    )
}

#[test]
fn struct_views_check_the_field_types_the_source_states() {
    let sizes = "print-type-size type: `kernel::S`: 16 bytes, alignment: 8 bytes\n\
                 print-type-size     field `.a`: 8 bytes\n\
                 print-type-size     field `.b`: 8 bytes\n";
    let src = "pub struct S { pub a: u64, pub b: &'static u32 }\n\
               #[inline(never)] pub fn g() -> &'static S { loop {} }\n\
               #[unsafe(no_mangle)] pub extern \"C\" fn k(p: *mut u64) {}";
    // The pointer in `b`, where the source puts a reference: accepted.
    let good = "05 00 00 00 00 00 00 00 ╾───────alloc2────────╼ │ ........╾──────╼";
    lower_text_with_layouts(&struct_view_mir(good), sizes, src).expect("a valid view");
    // A pointer in `a`, which the source says is a u64: refused, although the
    // report alone would leave room for a pointer there.
    let bad = "╾───────alloc2────────╼ 05 00 00 00 00 00 00 00 │ ╾──────╼........";
    let d =
        lower_text_with_layouts(&struct_view_mir(bad), sizes, src).expect_err("pointer in a u64");
    let v =
        d.0.iter()
            .find(|x| x.rule == Rule::ViewMismatch)
            .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(v.item, "kernel::g");
}

/// mir-import evaluates every constant the code uses up front, so lowering
/// only reads the import: lowering it twice prints the same module.
#[test]
fn lowering_reads_the_import_only() {
    let path = here("../../fixtures/promoted_ref_return/kernel.rs");
    let imp = mir_import::import_and_evaluate(&path, &Default::default(), true)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let first = mir_lower::lower(&imp).expect("lowers");
    let second = mir_lower::lower(&imp).expect("lowers again");
    assert_eq!(
        nvvm_emit::print_module(&first.module),
        nvvm_emit::print_module(&second.module)
    );
}

/// A kernel's `&[T]` and `&T` over memory without interior mutability are
/// `noalias readonly` (on the data pointer, not the length); atomics, raw
/// pointers, `DisjointSlice` and every device function's parameters get
/// nothing.
#[test]
fn only_frozen_shared_references_of_kernels_are_noalias_readonly() {
    use device_ir::ParamAttrs;
    let l = lower_file(&here("tests/kernels/param_promises.rs")).expect("lowers");
    let m = &l.module;
    let k = m.function_by_name("promises").expect("kernel");
    let promised = ParamAttrs::NOALIAS | ParamAttrs::READONLY;
    let none = ParamAttrs::empty();
    assert_eq!(
        m.functions[k].param_attrs,
        [
            promised, none, // floats: &[f32]
            promised, none, // pairs: &[(u32, f32)]
            promised, none,     // words: &[[u8; 4]]
            promised, // one: &u32
            none, none, // counters: &[AtomicU32]
            none, // counter: &AtomicU32
            none, // raw: *const f32
            none, none, // out: DisjointSlice<f32>
        ]
    );
    let helper = m
        .functions
        .values()
        .find(|f| f.name.ends_with("first"))
        .expect("helper");
    assert!(
        helper.param_attrs.iter().all(|a| a.is_empty()),
        "{:?}",
        helper.param_attrs
    );
    let text = m.to_string();
    let sig = text
        .lines()
        .find(|l| l.contains("@promises("))
        .expect("signature line");
    assert!(sig.contains("noalias readonly, i64"), "{sig}");
}

/// `k(p)` with one checked operation on `*p` and its assertion `msg`.
fn checked_kernel(op: &str, msg: &str) -> String {
    one_fn(
        &format!(
            "        _2 = copy (*_1);\n        _3 = {op}(copy _2, const 3_u32);\n        assert(!move (_3.1: bool), \"{msg}\", copy _2, const 3_u32) -> [success: bb1, unwind unreachable];\n    }}\n\n    bb1: {{\n        (*_1) = move (_3.0: u32);\n        return;"
        ),
        "    let mut _2: u32;\n    let mut _3: (u32, bool);\n",
    )
}

#[test]
fn optional_overflow_checks_wrap_and_the_others_trap() {
    let traps = |op: &str, msg: &str| {
        let krate = mir_import::import_text(&checked_kernel(op, msg), "", Some((KSRC, "k.rs")))
            .expect("imports");
        let mut tuples = TupleLayouts::default();
        tuples
            .by_type
            .insert("(u32, bool)".into(), (8, 4, vec![0, 4]));
        let eval = evaluate(&krate, &tuples);
        let imp = mir_import::Imported {
            krate,
            eval,
            tuples,
        };
        let l = mir_lower::lower(&imp).unwrap_or_else(|e| panic!("{e}"));
        nvvm_emit::print_module(&l.module).matches("trap;").count()
    };
    // Overflow checks are off: rustc's codegen drops these, and so do we.
    assert_eq!(
        traps(
            "AddWithOverflow",
            "attempt to compute `{} + {}`, which would overflow"
        ),
        0
    );
    assert_eq!(
        traps(
            "MulWithOverflow",
            "attempt to compute `{} * {}`, which would overflow"
        ),
        0
    );
    // Not an optional check: it stays.
    assert_eq!(
        traps(
            "AddWithOverflow",
            "attempt to compute `{} / {}`, which would overflow"
        ),
        1
    );
}

/// The kernel source of the struct-DST tests: field names in declaration order.
const DST_SRC: &str = "pub struct Packet<T: ?Sized> { n: u32, data: T }\n\
                       pub struct Boxed { n: u32, data: dyn core::fmt::Debug }\n\
                       #[unsafe(no_mangle)] pub extern \"C\" fn k(p: *mut u32) {}";

#[test]
fn a_pointer_to_a_struct_ending_in_a_slice_is_fat_where_the_table_says_so() {
    let locals = "    let mut _2: *const [u32];\n    let mut _3: *const kernel::Packet<[u32]>;\n    let mut _4: *const [u32];\n    let mut _5: usize;\n    let mut _6: *const u32;\n";
    // rustc prints the sized prefix of `Packet<[u32]>` as its layout.
    let sizes = "print-type-size type: `kernel::Packet<[u32]>`: 4 bytes, alignment: 4 bytes\n\
                 print-type-size     field `.n`: 4 bytes\n\
                 print-type-size     field `.data`: 0 bytes\n";
    let mir = one_fn(
        "        _3 = copy _2 as *const kernel::Packet<[u32]> (PtrToPtr);\n        _4 = &raw const ((*_3).1: [u32]);\n        _5 = PtrMetadata(copy _4);\n        return;",
        locals,
    );
    let lower = |unsized_packet: bool| {
        let mut krate =
            mir_import::import_text(&mir, sizes, Some((DST_SRC, "k.rs"))).expect("imports");
        if unsized_packet {
            krate
                .layouts
                .unsized_adts
                .insert("kernel::Packet<[u32]>".into());
        }
        lower_crate(krate)
    };
    // Known to be unsized (the probe or the tail's use says so), the
    // pointer keeps the slice's length and the tail takes it.
    let m = lower(true).unwrap_or_else(|e| panic!("{e}")).module;
    assert!(m.function_by_name("k").is_some());
    // Of unknown sizedness, the cast would drop the length the tail then
    // lacks: refused, not read as undefined.
    let d = lower(false).expect_err("refused");
    assert!(d.0[0].message.contains("may be unsized"), "{d}");
    // To a sized pointee, dropping the length is right.
    lower_text(
        &one_fn(
            "        _6 = copy _2 as *const u32 (PtrToPtr);\n        return;",
            locals,
        ),
        KSRC,
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn pointers_to_a_struct_of_unknown_sizedness_are_not_compared_or_made_fat() {
    let sizes = "print-type-size type: `kernel::Packet<[u32]>`: 4 bytes, alignment: 4 bytes\n\
                 print-type-size     field `.n`: 4 bytes\n\
                 print-type-size     field `.data`: 0 bytes\n";
    let locals = "    let mut _2: *const kernel::Packet<[u32]>;\n    let mut _3: bool;\n    let mut _4: *const [u32];\n";
    let lower = |body: &str, sized: bool| {
        let mut krate =
            mir_import::import_text(&one_fn(body, locals), sizes, Some((DST_SRC, "k.rs")))
                .expect("imports");
        if sized {
            krate
                .layouts
                .sized_adts
                .insert("kernel::Packet<[u32]>".into());
        }
        lower_crate(krate)
    };
    // A fat pointer's length would compare too.
    let compare = "        _3 = Eq(copy _2, copy _2);\n        return;";
    let d = lower(compare, false).expect_err("refused");
    assert!(d.0[0].message.contains("whose sizedness"), "{d}");
    lower(compare, true).unwrap_or_else(|e| panic!("{e}"));
    // With an unsized type argument, the struct may end in it.
    let thin = "        _2 = copy _4 as *const kernel::Packet<[u32]> (PtrToPtr);\n        return;";
    let d = lower(thin, false).expect_err("refused");
    assert!(d.0[0].message.contains("may be unsized"), "{d}");
    // A pointer taken for thin cannot become fat again.
    let fat = "        _4 = copy _2 as *const [u32] (PtrToPtr);\n        return;";
    let d = lower(fat, true).expect_err("refused");
    assert!(d.0[0].message.contains("taken for a thin pointer"), "{d}");
}

#[test]
fn a_dyn_tail_and_the_size_of_a_struct_ending_in_a_slice_are_diagnostics() {
    let sizes = "print-type-size type: `kernel::Packet<[u32]>`: 4 bytes, alignment: 4 bytes\n\
                 print-type-size     field `.n`: 4 bytes\n\
                 print-type-size     field `.data`: 0 bytes\n\
                 print-type-size type: `kernel::Boxed`: 8 bytes, alignment: 8 bytes\n\
                 print-type-size     field `.n`: 4 bytes\n\
                 print-type-size     field `.data`: 0 bytes\n";
    let lower = |body: &str, locals: &str| {
        let mut krate =
            mir_import::import_text(&one_fn(body, locals), sizes, Some((DST_SRC, "k.rs")))
                .expect("imports");
        krate
            .layouts
            .unsized_adts
            .extend(["kernel::Packet<[u32]>".into(), "kernel::Boxed".into()]);
        lower_crate(krate).expect_err("refused")
    };
    // A `dyn` tail's offset depends on the alignment its vtable gives.
    let d = lower(
        "        _3 = &raw const ((*_2).1: dyn std::fmt::Debug);\n        return;",
        "    let mut _2: *const kernel::Boxed;\n    let mut _3: *const dyn std::fmt::Debug;\n",
    );
    assert!(
        d.0[0]
            .message
            .contains("the dynamically sized field `dyn std::fmt::Debug`"),
        "{d}"
    );
    let d = lower(
        "        _3 = std::intrinsics::size_of_val::<kernel::Packet<[u32]>>(copy _2) -> [return: bb1, unwind unreachable];\n    }\n\n    bb1: {\n        return;",
        "    let mut _2: *const kernel::Packet<[u32]>;\n    let mut _3: usize;\n",
    );
    assert!(d.0[0].message.contains("`size_of_val`"), "{d}");
}

/// Lowers `source` written to a scratch `kernel.rs` named by `tag`.
fn lower_kernel_source(tag: &str, source: &str) -> Result<Lowered, Diagnostics> {
    let dir = std::env::temp_dir().join(format!("lowering-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kernel = dir.join("kernel.rs");
    std::fs::write(&kernel, source).expect("kernel");
    let lowered = lower_file(&kernel);
    let _ = std::fs::remove_dir_all(&dir);
    lowered
}

/// A named function's address is a value (`func_addr`), and so is a
/// closure's turned into a `fn` pointer (the address of the shim that calls
/// its body, mir-import's `model::closure_fn_pointers`); a kernel's address
/// is refused by name, never lowered to an undefined pointer.
#[test]
fn function_pointers_as_values() {
    let kernel = |body: &str| {
        format!(
            "use crate::gpu::*;\nfn inc(x: u32) -> u32 {{ x + 1 }}\n\
             #[unsafe(no_mangle)]\npub extern \"C\" fn k(out: DisjointSlice<u32>) {{\n{body}\n}}\n"
        )
    };
    let named = kernel(
        "    let f: fn(u32) -> u32 = inc;\n    \
         out.set(0, (f as usize != 0) as u32);\n    \
         out.set(1, (f as usize as u32) & 1);",
    );
    let l = lower_kernel_source("fn-named", &named).expect("a named function's address");
    let addresses = l
        .module
        .functions
        .values()
        .flat_map(|f| f.body.iter().flat_map(|b| b.insts.values()))
        .filter(|i| matches!(i, InstData::FuncAddr { .. }))
        .count();
    assert!(addresses > 0, "no func_addr in\n{}", l.module);
    let closure = kernel(
        "    let f: fn(u32) -> u32 = |x| x + 2;\n    \
         out.set(0, (f as usize != 0) as u32);",
    );
    let l = lower_kernel_source("fn-closure", &closure).expect("a closure's address");
    let shims: Vec<_> = l
        .module
        .functions
        .values()
        .filter(|f| f.name.contains("__fn_pointer"))
        .collect();
    assert_eq!(shims.len(), 1, "{}", l.module);
    let text = l.module.to_string();
    assert!(
        text.contains(&format!("@{} as i8*", shims[0].name)) && text.contains("func_addr"),
        "{text}"
    );
    let kernel_address = "use crate::gpu::*;\n\
        #[unsafe(no_mangle)]\npub extern \"C\" fn other(out: DisjointSlice<u32>) { out.set(0, 1); }\n\
        #[unsafe(no_mangle)]\npub extern \"C\" fn k(out: DisjointSlice<u32>) {\n    \
        let f: extern \"C\" fn(DisjointSlice<u32>) = other;\n    \
        out.set(0, (f as usize != 0) as u32);\n}\n";
    let e = lower_kernel_source("fn-kernel", kernel_address).expect_err("a kernel's address");
    assert!(
        e.to_string()
            .contains("the address of kernel `kernel::other`: kernels are launched"),
        "{e}"
    );
}

/// A call through a `fn` pointer that only the caller knows is an indirect
/// call with the pointer type's signature; a kernel parameter holding a
/// function pointer (a host address at launch) is refused by name.
#[test]
fn calls_through_function_pointers() {
    let source = "use crate::gpu::*;\n\
        #[inline(never)]\nfn apply(f: fn(u32) -> u32, x: u32) -> u32 { f(x) }\n\
        fn inc(x: u32) -> u32 { x + 1 }\n\
        #[unsafe(no_mangle)]\npub extern \"C\" fn k(out: DisjointSlice<u32>) {\n    \
        out.set(0, apply(inc, 41));\n}\n";
    let l = lower_kernel_source("fn-indirect", source).expect("an indirect call");
    let text = l.module.to_string();
    assert!(
        text.contains("call_indirect") && text.contains("as fn(i32) -> i32"),
        "{text}"
    );
    for (tag, param, field) in [
        ("fn-param", "f: fn(u32) -> u32", None),
        ("fn-param-slice", "f: &[fn(u32) -> u32]", None),
        ("fn-param-option", "f: Option<fn(u32) -> u32>", None),
        ("fn-param-field", "s: Stage", Some("`f`")),
        ("fn-param-nested-field", "p: &Pipeline", Some("`first.f`")),
        ("fn-param-option-field", "s: &[Hook]", Some("`f`")),
    ] {
        let source = format!(
            "use crate::gpu::*;\n\
             #[derive(Clone, Copy)]\npub struct Stage {{ pub k: u32, pub f: fn(u32) -> u32 }}\n\
             pub struct Pipeline {{ pub first: Stage, pub n: u32 }}\n\
             pub struct Hook {{ pub f: Option<fn(u32) -> u32> }}\n\
             #[unsafe(no_mangle)]\n\
             pub extern \"C\" fn k({param}, out: DisjointSlice<u32>) {{ out.set(0, 1); }}\n"
        );
        let e = lower_kernel_source(tag, &source).expect_err("a function pointer parameter");
        let e = e.to_string();
        assert!(
            e.contains("kernel parameter 1 of type `") && e.contains("holds a function pointer"),
            "{tag}: {e}"
        );
        if let Some(field) = field {
            assert!(e.contains(&format!("in field {field}")), "{tag}: {e}");
        }
    }
    // A `PhantomData<fn() -> T>` field marks variance and holds nothing.
    let marker = "use crate::gpu::*;\n\
        #[derive(Clone, Copy)]\n\
        pub struct Marker { pub k: u32, pub m: core::marker::PhantomData<fn() -> u32> }\n\
        #[unsafe(no_mangle)]\n\
        pub extern \"C\" fn k(s: Marker, out: DisjointSlice<u32>) { out.set(0, s.k); }\n";
    lower_kernel_source("fn-phantom", marker).expect("a PhantomData<fn()> field holds nothing");
}

/// `fn` pointers held by constants: each table is one read-only global
/// whose slots point to the functions (device functions though no body
/// names them), two tables of the same functions share one global, and a
/// table holding a kernel is refused by name.
#[test]
fn tables_of_functions_in_constants() {
    let source = "use crate::gpu::*;\n\
        fn inc(x: u32) -> u32 { x + 1 }\n\
        fn dec(x: u32) -> u32 { x - 1 }\n\
        const A: [fn(u32) -> u32; 2] = [inc, dec];\n\
        const B: [fn(u32) -> u32; 2] = [inc, dec];\n\
        static S: [fn(u32) -> u32; 2] = [dec, inc];\n\
        #[unsafe(no_mangle)]\npub extern \"C\" fn k(out: DisjointSlice<u32>) {\n    \
        let i = thread_idx_x() as usize;\n    \
        out.set(i, A[i % 2](1) + B[(i + 1) % 2](2) + S[i % 2](3));\n}\n";
    let l = lower_kernel_source("fn-tables", source).expect("tables of functions");
    let m = &l.module;
    let name = |t: RelocTarget| match t {
        RelocTarget::Func(f) => m.functions[f].name.clone(),
        RelocTarget::Global(g) => m.globals[g].symbol.clone(),
    };
    let tables: Vec<(String, bool, Vec<String>)> = m
        .globals
        .values()
        .filter_map(|g| {
            let init = g.init.as_ref()?;
            let slots = init
                .sorted_relocations()
                .into_iter()
                .map(|r| name(r.target));
            Some((g.symbol.clone(), g.mutable, slots.collect()))
        })
        .collect();
    let want = |fs: [&str; 2]| fs.map(String::from).to_vec();
    assert_eq!(tables.len(), 2, "A and B share one global:\n{m}");
    assert!(
        tables
            .iter()
            .any(|(s, mutable, fs)| s.starts_with("__const_")
                && !mutable
                && *fs == want(["kernel__inc", "kernel__dec"])),
        "{tables:?}"
    );
    assert!(
        tables.contains(&(
            "kernel__S".into(),
            false,
            want(["kernel__dec", "kernel__inc"])
        )),
        "{tables:?}"
    );
    let taken: Vec<String> = m
        .address_taken_functions()
        .into_iter()
        .map(|f| m.functions[f].name.clone())
        .collect();
    assert_eq!(taken, want(["kernel__dec", "kernel__inc"]));

    let kernel_in_table = "use crate::gpu::*;\n\
        #[unsafe(no_mangle)]\npub extern \"C\" fn other(out: DisjointSlice<u32>) { out.set(0, 1); }\n\
        const KS: [extern \"C\" fn(DisjointSlice<u32>); 2] = [other, other];\n\
        #[unsafe(no_mangle)]\npub extern \"C\" fn k(out: DisjointSlice<u32>) {\n    \
        let i = thread_idx_x() as usize;\n    \
        out.set(i, (KS[i % 2] as usize != 0) as u32);\n}\n";
    let e = lower_kernel_source("fn-table-kernel", kernel_in_table).expect_err("a kernel");
    assert!(
        e.to_string()
            .contains("a constant holds the address of kernel `kernel::other`"),
        "{e}"
    );
}

/// A field read without a downcast of a type the report prints as one
/// variant whose fields all start at 0 is a union's (a dependency's union
/// whose declaration was not read): it reads offset 0. A one-variant enum
/// of several fields, which do not all start at 0, stays refused, and so
/// does a field index past the union's fields.
#[test]
fn an_undeclared_union_is_read_at_offset_zero_and_a_one_variant_enum_is_not() {
    let union_sizes = "print-type-size type: `dep::U`: 4 bytes, alignment: 4 bytes\n\
        print-type-size     variant `U`: 4 bytes\n\
        print-type-size         field `.a`: 4 bytes\n\
        print-type-size         field `.b`: 4 bytes, offset: 0 bytes, alignment: 2 bytes\n";
    let enum_sizes = "print-type-size type: `dep::U`: 8 bytes, alignment: 4 bytes\n\
        print-type-size     variant `U`: 6 bytes\n\
        print-type-size         field `.0`: 4 bytes\n\
        print-type-size         field `.1`: 2 bytes\n\
        print-type-size     end padding: 2 bytes\n";
    let mir = one_fn(
        "        _3 = copy (_2.1: [u16; 2]);\n        (*_1) = const 7_u32;\n        return;",
        "    let mut _2: dep::U;\n    let mut _3: [u16; 2];\n",
    );
    lower_text_with_layouts(&mir, union_sizes, KSRC).expect("a union's field is at offset 0");
    let d = lower_text_with_layouts(&mir, enum_sizes, KSRC).expect_err("an enum's field");
    assert!(
        d.0.iter()
            .any(|x| x.message.contains("reading field `1` of `dep::U`")),
        "{d}"
    );
    let past = mir.replace("(_2.1: [u16; 2])", "(_2.2: [u16; 2])");
    let d = lower_text_with_layouts(&past, union_sizes, KSRC).expect_err("no third field");
    assert!(
        d.0.iter()
            .any(|x| x.message.contains("reading field `2` of `dep::U`")),
        "{d}"
    );
}
