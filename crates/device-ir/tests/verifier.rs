//! One test per verifier rule: a module that breaks exactly that rule, and the
//! positioned error it gets, pinned by a snapshot.
//!
//! To accept new messages: `INSTA_UPDATE=always cargo test -p device-ir`, then
//! review and commit the `.snap` files.

#![allow(clippy::unwrap_used)]

use device_ir::*;

/// A module with one kernel `k(params)` whose body `body` builds.
fn kernel_module(
    params: impl FnOnce(&mut Types) -> Vec<Ty>,
    body: impl FnOnce(&mut FunctionBuilder<'_>, &[Value]),
) -> Module {
    let mut m = Module::new();
    let ps = params(&mut m.types);
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::new(&ps, None),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let vals = b.block_params(b.entry_block());
    body(&mut b, &vals);
    m
}

fn global(symbol: &str, space: AddressSpace, size: u64, init: Option<Initializer>) -> GlobalData {
    GlobalData {
        symbol: symbol.to_owned(),
        space,
        mutable: false,
        linkage: Linkage::Internal,
        align: 8,
        size,
        init,
    }
}

/// Verifies `m`, expecting only errors of `rule`, and renders them.
fn refuse(m: &Module, rule: Rule) -> String {
    let errs = verify(m).expect_err("the verifier accepted the module");
    assert!(
        errs.0.iter().all(|e| e.rule == rule),
        "expected only [{}] errors:\n{errs}",
        rule.name()
    );
    errs.to_string()
}

fn gptr(t: &mut Types, space: AddressSpace) -> Ty {
    let i32t = t.i32();
    t.ptr(i32t, space)
}

#[test]
fn accepts_a_well_formed_module() {
    let m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Global)],
        |b, ps| {
            let v = b.special_reg(SpecialReg::TidX);
            b.store(v, ps[0]);
            b.ret(None);
        },
    );
    verify(&m).unwrap();
}

// ----- the rules the issue lists

#[test]
fn store_through_constant_space_pointer() {
    let m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Constant)],
        |b, ps| {
            let i32t = b.types().i32();
            let v = b.iconst(i32t, 1);
            b.store(v, ps[0]);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::AccessSpace));
}

#[test]
fn atomic_through_local_pointer() {
    let m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Local)],
        |b, ps| {
            let i32t = b.types().i32();
            b.atomic_load(i32t, ps[0], Ordering::Acquire, Scope::Gpu);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::AccessSpace));
}

#[test]
fn global_addr_in_the_wrong_space() {
    let mut m = Module::new();
    let g = m.add_global(global(
        "g",
        AddressSpace::Global,
        4,
        Some(Initializer::from_bytes([0; 4])),
    ));
    let i32t = m.types.i32();
    let wrong = m.types.ptr(i32t, AddressSpace::Shared);
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::default(),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    b.ins(
        InstData::GlobalAddr {
            global: g,
            ty: wrong,
        },
        Some(wrong),
    );
    b.ret(None);
    insta::assert_snapshot!(refuse(&m, Rule::AccessSpace));
}

#[test]
fn bitcast_that_changes_the_address_space() {
    let m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Global)],
        |b, ps| {
            let i32t = b.types().i32();
            let to = b.types().ptr(i32t, AddressSpace::Generic);
            b.cast(CastOp::Bitcast, ps[0], to);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::BitcastSpace));
}

#[test]
fn addrspacecast_between_two_non_generic_spaces() {
    let m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Global)],
        |b, ps| {
            b.addrspacecast(ps[0], AddressSpace::Shared);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::AddrSpaceCast));
}

#[test]
fn initialized_shared_global() {
    let mut m = Module::new();
    let mut g = global(
        "tile",
        AddressSpace::Shared,
        4,
        Some(Initializer::from_bytes([1, 2, 3, 4])),
    );
    g.mutable = true;
    m.add_global(g);
    insta::assert_snapshot!(refuse(&m, Rule::SharedGlobal));
}

#[test]
fn externally_initialized_shared_global() {
    let mut m = Module::new();
    let mut g = global("tile", AddressSpace::Shared, 4, None);
    g.mutable = true;
    g.linkage = Linkage::ExternallyInitialized;
    m.add_global(g);
    insta::assert_snapshot!(refuse(&m, Rule::SharedGlobal));
}

#[test]
fn externally_initialized_constant_memory_is_accepted() {
    let mut m = Module::new();
    let mut g = global(
        "bank",
        AddressSpace::Constant,
        4,
        Some(Initializer::from_bytes([0; 4])),
    );
    g.linkage = Linkage::ExternallyInitialized;
    m.add_global(g);
    verify(&m).expect("constant memory the host writes");
}

#[test]
fn externally_initialized_function() {
    let mut m = Module::new();
    m.declare_function(
        "f",
        FunctionKind::Device,
        Linkage::ExternallyInitialized,
        Signature::new(&[], None),
    );
    let errs = verify(&m).expect_err("a function is no global");
    assert!(
        errs.to_string()
            .contains("a function cannot be externally initialized"),
        "{errs}"
    );
}

#[test]
fn relocation_outside_its_global() {
    let mut m = Module::new();
    let target = m.add_global(global(
        "t",
        AddressSpace::Global,
        4,
        Some(Initializer::from_bytes([0; 4])),
    ));
    let init = Initializer {
        spans: vec![Span::Bytes(vec![0; 12])],
        relocations: vec![Relocation {
            offset: 8,
            target: target.into(),
            addend: 0,
        }],
    };
    m.add_global(global("holder", AddressSpace::Global, 12, Some(init)));
    insta::assert_snapshot!(refuse(&m, Rule::RelocationBounds));
}

#[test]
fn type_mismatch() {
    let m = kernel_module(
        |t| {
            let f32t = t.f32();
            vec![
                gptr(t, AddressSpace::Global),
                t.ptr(f32t, AddressSpace::Global),
            ]
        },
        |b, ps| {
            let i32t = b.types().i32();
            let x = b.load(i32t, ps[1]);
            let f = b.f32const(1.0);
            b.binary(BinaryOp::Add, x, f);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Type));
}

// ----- the other rules

#[test]
fn handle_out_of_bounds() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            b.ins(
                InstData::Call {
                    func: FuncId::from_u32(9),
                    args: vec![],
                },
                None,
            );
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Handle));
}

#[test]
fn invalid_and_duplicate_symbols() {
    let mut m = Module::new();
    m.add_global(global(
        "a.b",
        AddressSpace::Global,
        0,
        Some(Initializer::default()),
    ));
    m.add_global(global(
        "_",
        AddressSpace::Global,
        0,
        Some(Initializer::default()),
    ));
    m.add_global(global(
        "k",
        AddressSpace::Global,
        0,
        Some(Initializer::default()),
    ));
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::default(),
    );
    FunctionBuilder::new(&mut m, k).ret(None);
    insta::assert_snapshot!(refuse(&m, Rule::Symbol));
}

#[test]
fn unsupported_integer_width() {
    let mut m = Module::new();
    m.types.int(37);
    insta::assert_snapshot!(refuse(&m, Rule::Type));
}

#[test]
fn global_in_local_space() {
    let mut m = Module::new();
    m.add_global(global(
        "g",
        AddressSpace::Local,
        4,
        Some(Initializer::from_bytes([0; 4])),
    ));
    insta::assert_snapshot!(refuse(&m, Rule::GlobalSpace));
}

#[test]
fn alignment_not_a_power_of_two() {
    let mut m = Module::new();
    let mut g = global(
        "g",
        AddressSpace::Global,
        4,
        Some(Initializer::from_bytes([0; 4])),
    );
    g.align = 3;
    m.add_global(g);
    insta::assert_snapshot!(refuse(&m, Rule::Alignment));
}

#[test]
fn initializer_size_mismatch() {
    let mut m = Module::new();
    m.add_global(global(
        "g",
        AddressSpace::Global,
        8,
        Some(Initializer::from_bytes([0; 4])),
    ));
    insta::assert_snapshot!(refuse(&m, Rule::InitializerSize));
}

#[test]
fn overlapping_relocations() {
    let mut m = Module::new();
    let t = m.add_global(global(
        "t",
        AddressSpace::Global,
        4,
        Some(Initializer::from_bytes([0; 4])),
    ));
    let init = Initializer {
        spans: vec![Span::Undef(16)],
        relocations: vec![
            Relocation {
                offset: 0,
                target: t.into(),
                addend: 0,
            },
            Relocation {
                offset: 4,
                target: t.into(),
                addend: 0,
            },
        ],
    };
    m.add_global(global("h", AddressSpace::Global, 16, Some(init)));
    insta::assert_snapshot!(refuse(&m, Rule::RelocationOverlap));
}

#[test]
fn relocation_to_shared_memory_or_out_of_range() {
    let mut m = Module::new();
    let mut tile = global("tile", AddressSpace::Shared, 4, None);
    tile.mutable = true;
    let tile = m.add_global(tile);
    let t = m.add_global(global(
        "t",
        AddressSpace::Global,
        4,
        Some(Initializer::from_bytes([0; 4])),
    ));
    let init = Initializer {
        spans: vec![Span::Undef(16)],
        relocations: vec![
            Relocation {
                offset: 0,
                target: tile.into(),
                addend: 0,
            },
            Relocation {
                offset: 8,
                target: t.into(),
                addend: 5,
            },
        ],
    };
    m.add_global(global("h", AddressSpace::Global, 16, Some(init)));
    insta::assert_snapshot!(refuse(&m, Rule::RelocationTarget));
}

#[test]
fn relocation_cycle() {
    let mut m = Module::new();
    let (a, b) = (GlobalId::from_u32(0), GlobalId::from_u32(1));
    let points_to = |target: GlobalId| Initializer {
        spans: vec![Span::Undef(8)],
        relocations: vec![Relocation {
            offset: 0,
            target: target.into(),
            addend: 0,
        }],
    };
    m.add_global(global("a", AddressSpace::Global, 8, Some(points_to(b))));
    m.add_global(global("b", AddressSpace::Global, 8, Some(points_to(a))));
    insta::assert_snapshot!(refuse(&m, Rule::RelocationCycle));
}

#[test]
fn kernel_that_returns_a_value() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::Internal,
        Signature::new(&[], Some(i32t)),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let v = b.iconst(i32t, 0);
    b.ret(Some(v));
    insta::assert_snapshot!(refuse(&m, Rule::FunctionShape));
}

#[test]
fn branch_to_the_entry_block() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let entry = b.entry_block();
            b.jump(entry, &[]);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::EntryBlock));
}

#[test]
fn block_without_terminator() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            b.barrier();
            b.ret(None);
            b.barrier();
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Terminator));
}

#[test]
fn branch_arguments_that_do_not_match() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let i32t = b.types().i32();
            let i64t = b.types().i64();
            let next = b.create_block();
            b.append_block_param(next, i32t);
            let v = b.iconst(i64t, 1);
            b.jump(next, &[v]);
            b.switch_to_block(next);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::BranchArgs));
}

#[test]
fn use_not_dominated_by_its_definition() {
    let m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Global)],
        |b, ps| {
            let i32t = b.types().i32();
            let left = b.create_block();
            let right = b.create_block();
            let join = b.create_block();
            let tid = b.special_reg(SpecialReg::TidX);
            let zero = b.iconst(i32t, 0);
            let c = b.icmp(IntCC::Eq, tid, zero);
            b.brif(c, left, &[], right, &[]);
            b.switch_to_block(left);
            let only_left = b.iadd(tid, tid);
            b.jump(join, &[]);
            b.switch_to_block(right);
            b.jump(join, &[]);
            b.switch_to_block(join);
            b.store(only_left, ps[0]);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Dominance));
}

#[test]
fn store_into_a_read_only_global() {
    let mut m = Module::new();
    let g = m.add_global(global(
        "konst",
        AddressSpace::Global,
        8,
        Some(Initializer::from_bytes([0; 8])),
    ));
    let i32t = m.types.i32();
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::default(),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.global_addr(g, i32t);
    let generic = b.addrspacecast(p, AddressSpace::Generic);
    let four = b.types().i64();
    let four = b.iconst(four, 4);
    let q = b.byte_offset(generic, four);
    let v = b.iconst(i32t, 1);
    b.store(v, q);
    b.ret(None);
    insta::assert_snapshot!(refuse(&m, Rule::ReadOnly));
}

#[test]
fn call_to_a_kernel() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let me = b.func();
            b.call(me, &[]);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Call));
}

/// Declares device function `inc(i32) -> i32` (returning its argument)
/// and an empty-bodied kernel `k()` for the caller to fill.
fn inc_and_kernel(m: &mut Module) -> (FuncId, FuncId) {
    let i32t = m.types.i32();
    let inc = m.declare_function(
        "inc",
        FunctionKind::Device,
        Linkage::Internal,
        Signature::new(&[i32t], Some(i32t)),
    );
    let mut b = FunctionBuilder::new(m, inc);
    let x = b.block_params(b.entry_block())[0];
    b.ret(Some(x));
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::default(),
    );
    (inc, k)
}

/// A module whose kernel takes the address of device function `inc`
/// (and of itself, when `of_kernel`) and compares the two, storing through
/// `inc`'s address when `store`.
fn function_address_module(of_kernel: bool, store: bool) -> Module {
    let mut m = Module::new();
    let (inc, k) = inc_and_kernel(&mut m);
    let mut b = FunctionBuilder::new(&mut m, k);
    let i8t = b.types().i8();
    let a = b.func_addr(inc, i8t);
    let other = if of_kernel { k } else { inc };
    let c = b.func_addr(other, i8t);
    let i64t = b.types().i64();
    let ai = b.cast(CastOp::PtrToInt, a, i64t);
    let ci = b.cast(CastOp::PtrToInt, c, i64t);
    b.icmp(IntCC::Eq, ai, ci);
    if store {
        let one = b.iconst(i8t, 1);
        b.store(one, a);
    }
    b.ret(None);
    m
}

/// A device function's address is a value; a kernel's is not (kernels are
/// launched), and nothing is written through a function's address.
#[test]
fn function_addresses() {
    let m = function_address_module(false, false);
    verify(&m).expect("the address of a device function, compared");
    let text = m.to_string();
    assert!(text.contains("func_addr fn0 @inc as i8*"), "{text}");
    insta::assert_snapshot!(
        "address_of_a_kernel",
        refuse(&function_address_module(true, false), Rule::Call)
    );
    insta::assert_snapshot!(
        "store_through_a_function_address",
        refuse(&function_address_module(false, true), Rule::ReadOnly)
    );
}

/// How [`indirect_call_module`]'s kernel calls `inc` (`fn(i32) -> i32`).
#[derive(Clone, Copy)]
enum Indirect {
    /// Through its address, as `fn(i32) -> i32`.
    Matching,
    /// Through its address, as `fn(i64) -> i32`.
    OtherSignature,
    /// As `fn(i32) -> i32`, with two arguments.
    ExtraArgument,
    /// Through a global pointer.
    GlobalPointer,
}

fn indirect_call_module(how: Indirect) -> Module {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let (inc, k) = inc_and_kernel(&mut m);
    let mut b = FunctionBuilder::new(&mut m, k);
    let i8t = b.types().i8();
    let callee = match how {
        Indirect::GlobalPointer => {
            let global = b.types().ptr(i8t, AddressSpace::Global);
            b.null(global)
        }
        _ => b.func_addr(inc, i8t),
    };
    let one = b.iconst(i32t, 1);
    let wide = b.iconst(i64t, 1);
    let (sig, args) = match how {
        Indirect::OtherSignature => (Signature::new(&[i64t], Some(i32t)), vec![wide]),
        Indirect::ExtraArgument => (Signature::new(&[i32t], Some(i32t)), vec![one, one]),
        _ => (Signature::new(&[i32t], Some(i32t)), vec![one]),
    };
    b.call_indirect(callee, sig, &args);
    b.ret(None);
    m
}

/// A call through a function's address takes the callee's signature and
/// matching arguments, through a generic pointer.
#[test]
fn indirect_calls() {
    let m = indirect_call_module(Indirect::Matching);
    verify(&m).expect("a call through inc's address as its own signature");
    let text = m.to_string();
    assert!(text.contains("call_indirect v"), "{text}");
    assert!(text.contains("as fn(i32) -> i32"), "{text}");
    insta::assert_snapshot!(
        "indirect_call_of_another_signature",
        refuse(&indirect_call_module(Indirect::OtherSignature), Rule::Call)
    );
    insta::assert_snapshot!(
        "indirect_call_with_an_extra_argument",
        refuse(&indirect_call_module(Indirect::ExtraArgument), Rule::Call)
    );
    insta::assert_snapshot!(
        "indirect_call_through_a_global_pointer",
        refuse(&indirect_call_module(Indirect::GlobalPointer), Rule::Call)
    );
}

#[test]
fn duplicate_switch_case() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let i8t = b.types().i8();
            let v = b.iconst(i8t, 3);
            let a = b.create_block();
            b.switch(
                v,
                BlockCall::new(a, &[]),
                vec![
                    (1, BlockCall::new(a, &[])),
                    (1, BlockCall::new(a, &[])),
                    (256, BlockCall::new(a, &[])),
                ],
            );
            b.switch_to_block(a);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Switch));
}

#[test]
fn atomic_with_an_impossible_ordering_or_type() {
    let m = kernel_module(
        |t| {
            let i16t = t.i16();
            vec![
                gptr(t, AddressSpace::Global),
                t.ptr(i16t, AddressSpace::Global),
            ]
        },
        |b, ps| {
            let i32t = b.types().i32();
            let i16t = b.types().i16();
            b.atomic_load(i32t, ps[0], Ordering::Release, Scope::Gpu);
            let v = b.iconst(i16t, 1);
            b.atomic_rmw(RmwOp::Add, ps[1], v, Ordering::Relaxed, Scope::Cta);
            b.fence(Ordering::Relaxed, Scope::Sys);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Atomic));
}

#[test]
fn inline_asm_constraints_that_do_not_match() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let i32t = b.types().i32();
            let x = b.iconst(i32t, 1);
            b.inline_asm("mov.u32 $0, $1;", "=r,r,r", &[x], Some(i32t), false);
            let i128t = b.types().int(128);
            let i64t = b.types().i64();
            let w = b.iconst(i64t, 1);
            b.inline_asm("mov.u32 $0, $1;", "=l,r,~{memory}", &[w], Some(i128t), true);
            b.inline_asm("exit;", "m,memory", &[x, x], None, true);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::InlineAsm));
}

#[test]
fn operations_nvvm_cannot_compile() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let i128t = b.types().int(128);
            let f64t = b.types().f64();
            let x = b.iconst(i128t, 1);
            b.cast(CastOp::SiToFp, x, f64t);
            let i1t = b.types().i1();
            let t = b.iconst(i1t, 1);
            b.binary(BinaryOp::UDiv, t, t);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Unsupported));
}

#[test]
fn collects_every_error_not_only_the_first() {
    let mut m = Module::new();
    let mut tile = global(
        "tile",
        AddressSpace::Shared,
        4,
        Some(Initializer::from_bytes([0; 4])),
    );
    tile.mutable = false;
    m.add_global(tile);
    let i32t = m.types.i32();
    let cp = m.types.ptr(i32t, AddressSpace::Constant);
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::new(&[cp], None),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block())[0];
    let f = b.f32const(2.0);
    b.store(f, p);
    b.addrspacecast(p, AddressSpace::Global);
    b.ret(None);
    let errs = verify(&m).unwrap_err();
    assert!(errs.0.len() >= 4, "{errs}");
    insta::assert_snapshot!(errs.to_string());
}

#[test]
fn parameter_attributes_on_a_non_pointer_or_of_the_wrong_count() {
    let mut m = kernel_module(
        |t| vec![gptr(t, AddressSpace::Global), t.i64()],
        |b, _| {
            b.ret(None);
        },
    );
    let k = m.function_by_name("k").unwrap();
    let promised = ParamAttrs::NOALIAS | ParamAttrs::READONLY;
    m.functions[k].param_attrs = vec![promised, ParamAttrs::empty()];
    verify(&m).unwrap();
    m.functions[k].param_attrs = vec![promised, ParamAttrs::READONLY];
    insta::assert_snapshot!("param_attrs_on_an_integer", refuse(&m, Rule::FunctionShape));
    m.functions[k].param_attrs = vec![promised];
    insta::assert_snapshot!("param_attrs_count", refuse(&m, Rule::FunctionShape));
}

#[test]
fn byval_only_on_a_kernels_generic_pointer_to_an_array_and_alone() {
    let mut m = kernel_module(
        |t| {
            let i32t = t.i32();
            let arr = t.array(i32t, 3);
            let empty = t.array(i32t, 0);
            vec![
                t.ptr(arr, AddressSpace::Generic),
                t.ptr(arr, AddressSpace::Global),
                gptr(t, AddressSpace::Generic),
                t.ptr(empty, AddressSpace::Generic),
            ]
        },
        |b, _| {
            b.ret(None);
        },
    );
    let k = m.function_by_name("k").expect("the kernel");
    let none = ParamAttrs::empty();
    m.functions[k].param_attrs = vec![ParamAttrs::BYVAL, none, none, none];
    verify(&m).expect("a byval array parameter of a kernel");
    let promised = ParamAttrs::BYVAL | ParamAttrs::READONLY;
    m.functions[k].param_attrs = vec![
        promised,
        ParamAttrs::BYVAL,
        ParamAttrs::BYVAL,
        ParamAttrs::BYVAL,
    ];
    insta::assert_snapshot!("byval_malformed", refuse(&m, Rule::FunctionShape));
    m.functions[k].param_attrs = vec![ParamAttrs::BYVAL, none, none, none];
    m.functions[k].kind = FunctionKind::Device;
    insta::assert_snapshot!(
        "byval_on_a_device_function",
        refuse(&m, Rule::FunctionShape)
    );
}

/// `match.sync` compares 32- or 64-bit values, `redux.sync` reduces 32-bit
/// ones: an `i16` match and an `i64` reduction are type errors.
#[test]
fn warp_match_and_reduction_operand_widths() {
    let m = kernel_module(
        |_| vec![],
        |b, _| {
            let (i16t, i32t, i64t) = (b.types().int(16), b.types().i32(), b.types().i64());
            let full = b.iconst(i32t, -1);
            let narrow = b.iconst(i16t, 3);
            let wide = b.iconst(i64t, 3);
            b.warp_match(MatchMode::Any, full, narrow);
            b.warp_reduce(ReduceOp::Add, full, wide);
            b.ret(None);
        },
    );
    insta::assert_snapshot!(refuse(&m, Rule::Type));
}

/// A module whose global `table` holds, at 0 and 8, pointers to what
/// `targets` picks from (`inc`, `k`), each plus its addend.
fn function_table_module(targets: impl Fn(FuncId, FuncId) -> [(RelocTarget, i64); 2]) -> Module {
    let mut m = Module::new();
    let (inc, k) = inc_and_kernel(&mut m);
    FunctionBuilder::new(&mut m, k).ret(None);
    let relocations = targets(inc, k)
        .into_iter()
        .zip([0, 8])
        .map(|((target, addend), offset)| Relocation {
            offset,
            target,
            addend,
        })
        .collect();
    let init = Initializer {
        spans: vec![Span::Undef(16)],
        relocations,
    };
    m.add_global(global("table", AddressSpace::Global, 16, Some(init)));
    m
}

#[test]
fn a_table_of_device_functions_is_valid() {
    let m = function_table_module(|inc, _| [(inc.into(), 0), (inc.into(), 0)]);
    verify(&m).expect("a constant table of device functions is valid");
    let inc = FuncId::from_u32(0);
    // The table takes `inc`'s address: an indirect call may reach it.
    assert_eq!(m.address_taken_functions(), [inc]);
    let text = m.to_string();
    assert!(
        text.contains("reloc @0 fn0+0 (@inc)"),
        "the table's slot names the function:\n{text}"
    );
}

#[test]
fn a_table_entry_that_is_a_kernel_or_inside_a_function() {
    let kernel = function_table_module(|inc, k| [(inc.into(), 0), (k.into(), 0)]);
    insta::assert_snapshot!(refuse(&kernel, Rule::RelocationTarget));
    let inside = function_table_module(|inc, _| [(inc.into(), 4), (inc.into(), 0)]);
    insta::assert_snapshot!(refuse(&inside, Rule::RelocationTarget));
    let missing =
        function_table_module(|inc, _| [(inc.into(), 0), (FuncId::from_u32(7).into(), 0)]);
    insta::assert_snapshot!(refuse(&missing, Rule::Handle));
}
