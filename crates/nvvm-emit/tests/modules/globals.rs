//! Globals: nested relocations, interior offsets, typed views, constant space,
//! mutable statics, helpers returning constant addresses, identifiers.

use device_ir::*;

use super::*;

fn reloc(offset: u64, target: GlobalId, addend: i64) -> Relocation {
    Relocation {
        offset,
        target: target.into(),
        addend,
    }
}

/// A chain of read-only globals `outer -> middle -> leaf` with interior addends, a
/// one-past-the-end pointer and undefined padding. `outer` comes first and points
/// forward: printing order need not follow the relocations.
pub fn nested_relocations() -> Module {
    let mut m = Module::new();
    let (middle, leaf) = (GlobalId::from_u32(1), GlobalId::from_u32(2));
    // outer: (&middle.2 interior, &leaf)
    let outer = const_global(
        &mut m,
        "outer",
        AddressSpace::Global,
        8,
        vec![Span::Undef(16)],
        vec![reloc(8, leaf, 0), reloc(0, middle, 8)],
    );
    // middle: (u8, pad[7], &leaf[2], &leaf[4] one past the end, u16, pad[6])
    let m_id = const_global(
        &mut m,
        "middle",
        AddressSpace::Global,
        8,
        vec![
            Span::Bytes(vec![0x2a]),
            Span::Undef(7),
            Span::Bytes(vec![8, 0, 0, 0, 0, 0, 0, 0]),
            Span::Undef(8),
            Span::Bytes(vec![0xcd, 0xab]),
            Span::Undef(6),
        ],
        vec![reloc(8, leaf, 8), reloc(16, leaf, 16)],
    );
    // leaf: [u32; 4] = [10, 20, 30, 40]
    let l_id = const_global(
        &mut m,
        "leaf",
        AddressSpace::Global,
        4,
        vec![Span::Bytes(vec![
            10, 0, 0, 0, 20, 0, 0, 0, 30, 0, 0, 0, 40, 0, 0, 0,
        ])],
        vec![],
    );
    assert_eq!((m_id, l_id), (middle, leaf));
    let i32t = m.types.i32();
    let i8t = m.types.i8();
    let gi32 = m.types.ptr(i32t, AddressSpace::Generic);
    let ggi32 = m.types.ptr(gi32, AddressSpace::Generic);
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "follow", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    // outer.0 : &&u32 (points at middle+8) ; *outer.0 : &u32 (leaf+8) ; **outer.0 : u32
    let o = b.global_addr(outer, ggi32);
    let mid = b.load(ggi32, o);
    let lf = b.load(gi32, mid);
    let v = b.load(i32t, lf);
    // middle.0 : u8, read through a typed view of the same symbol
    let mb = b.global_addr(middle, i8t);
    let byte = b.load(i8t, mb);
    let byte32 = b.cast(CastOp::ZExt, byte, i32t);
    let sum = b.iadd(v, byte32);
    store_at(&mut b, p, 0, sum);
    b.ret(None);
    m
}

/// One read-only global holding an `Option<u32>` (`Some(13)`), read through three
/// typed views — `{ i32, i32 }`, `[2 x i32]` and a plain `i32` at byte 4 — that
/// share one symbol; the payload pointers compare equal.
pub fn typed_views() -> Module {
    let mut m = Module::new();
    let opt = const_global(
        &mut m,
        "opt_some_13",
        AddressSpace::Global,
        4,
        vec![Span::Bytes(vec![1, 0, 0, 0, 13, 0, 0, 0])],
        vec![],
    );
    let t = &mut m.types;
    let (i32t, i64t) = (t.i32(), t.i64());
    let pair = t.struct_of(&[i32t, i32t]);
    let arr = t.array(i32t, 2);
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "views", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let as_pair = b.global_addr(opt, pair);
    let payload_a = b.gep(as_pair, &[GepIndex::Const(0), GepIndex::Field(1)]);
    let as_arr = b.global_addr(opt, arr);
    let payload_b = b.gep(as_arr, &[GepIndex::Const(0), GepIndex::Const(1)]);
    let as_u32 = b.global_addr(opt, i32t);
    let four = b.iconst(i64t, 4);
    let payload_c = b.byte_offset(as_u32, four);
    let tag = b.load(i32t, as_u32);
    let a = b.load(i32t, payload_a);
    let c = b.load(i32t, payload_c);
    let eq1 = b.icmp(IntCC::Eq, payload_a, payload_b);
    let gen_a = b.addrspacecast(payload_a, AddressSpace::Generic);
    let gen_c = b.addrspacecast(payload_c, AddressSpace::Generic);
    let eq2 = b.icmp(IntCC::Eq, gen_a, gen_c);
    let both = b.binary(BinaryOp::And, eq1, eq2);
    let both32 = b.cast(CastOp::ZExt, both, i32t);
    store_at(&mut b, p, 0, tag);
    store_at(&mut b, p, 1, a);
    store_at(&mut b, p, 2, c);
    store_at(&mut b, p, 3, both32);
    b.ret(None);
    m
}

/// A kernel calling `noinline` helpers that return generic pointers to read-only
/// globals (the dangling-constant pattern, done right), plus an external helper.
pub fn noinline_helpers() -> Module {
    let mut m = Module::new();
    let pair_g = const_global(
        &mut m,
        "pair_3_4",
        AddressSpace::Global,
        4,
        vec![Span::Bytes(vec![3, 0, 0, 0, 4, 0, 0, 0])],
        vec![],
    );
    let t = &mut m.types;
    let (i32t, i64t) = (t.i32(), t.i64());
    let pair = t.struct_of(&[i32t, i32t]);
    let pair_ref = t.ptr(pair, AddressSpace::Generic);
    let u32_ref = t.ptr(i32t, AddressSpace::Generic);
    let get_pair = device(&mut m, "get_pair", Linkage::Internal, &[], Some(pair_ref));
    let mut b = FunctionBuilder::new(&mut m, get_pair);
    b.add_attrs(FuncAttrs::NOINLINE);
    let g = b.global_addr(pair_g, pair);
    let r = b.addrspacecast(g, AddressSpace::Generic);
    b.ret(Some(r));

    let get_second = device(
        &mut m,
        "get_second",
        Linkage::Internal,
        &[pair_ref],
        Some(u32_ref),
    );
    let mut b = FunctionBuilder::new(&mut m, get_second);
    b.add_attrs(FuncAttrs::NOINLINE);
    let pr = params(&b)[0];
    let f = b.gep(pr, &[GepIndex::Const(0), GepIndex::Field(1)]);
    b.ret(Some(f));

    let ext = device(
        &mut m,
        "sum_pair",
        Linkage::External,
        &[pair_ref],
        Some(i32t),
    );
    let mut b = FunctionBuilder::new(&mut m, ext);
    b.add_attrs(FuncAttrs::NOINLINE);
    let pr = params(&b)[0];
    let v = b.load(pair, pr);
    let _ = v;
    let f0 = b.gep(pr, &[GepIndex::Const(0), GepIndex::Field(0)]);
    let f1 = b.gep(pr, &[GepIndex::Const(0), GepIndex::Field(1)]);
    let a = b.load(i32t, f0);
    let c = b.load(i32t, f1);
    let s = b.iadd(a, c);
    b.ret(Some(s));

    let out = out_i32(&mut m);
    let k = kernel(&mut m, "uses_helpers", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let pr = b.call(get_pair, &[]).unwrap();
    let second = b.call(get_second, &[pr]).unwrap();
    let v = b.load(i32t, second);
    let s = b.call(ext, &[pr]).unwrap();
    let addr = b.cast(CastOp::PtrToInt, second, i64t);
    let addr32 = b.cast(CastOp::Trunc, addr, i32t);
    store_at(&mut b, p, 0, v);
    store_at(&mut b, p, 1, s);
    store_at(&mut b, p, 2, addr32);
    b.ret(None);
    m
}

/// Constant-space (4) globals with relocations to global space and back.
pub fn constant_space() -> Module {
    let mut m = Module::new();
    let data = const_global(
        &mut m,
        "data",
        AddressSpace::Global,
        8,
        vec![Span::Bytes(vec![0x11; 16])],
        vec![],
    );
    let in_const = const_global(
        &mut m,
        "const_table",
        AddressSpace::Constant,
        8,
        vec![Span::Bytes(vec![5, 0, 0, 0, 6, 0, 0, 0]), Span::Undef(16)],
        vec![reloc(8, data, 0), reloc(16, data, 12)],
    );
    let back = const_global(
        &mut m,
        "to_const",
        AddressSpace::Global,
        8,
        vec![Span::Undef(8)],
        vec![reloc(0, in_const, 4)],
    );
    let i32t = m.types.i32();
    let gi32 = m.types.ptr(i32t, AddressSpace::Generic);
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "constant_space", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let c = b.global_addr(in_const, i32t);
    let first = b.load(i32t, c);
    let slots = b.global_addr(in_const, gi32);
    let i64t = b_i64(&mut b);
    let one = b.iconst(i64t, 1);
    let slot1 = b.gep(slots, &[GepIndex::Value(one)]);
    let ptr = b.load(gi32, slot1);
    let v = b.load(i32t, ptr);
    let t = b.global_addr(back, gi32);
    let p2 = b.load(gi32, t);
    let w = b.load(i32t, p2);
    let s = b.iadd(first, v);
    let s = b.iadd(s, w);
    store_at(&mut b, p, 0, s);
    b.ret(None);
    m
}

fn b_i64(b: &mut FunctionBuilder<'_>) -> Ty {
    b.types().i64()
}

/// A `static mut` with a pointer to mutable anonymous memory (`&mut [u32]` in a
/// static initializer), updated by the kernel.
pub fn mutable_statics() -> Module {
    let mut m = Module::new();
    let backing = m.add_global(GlobalData {
        symbol: "backing".to_owned(),
        space: AddressSpace::Global,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 12,
        init: Some(Initializer::from_bytes([
            1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
        ])),
    });
    let slice = m.add_global(GlobalData {
        symbol: "SLICE".to_owned(),
        space: AddressSpace::Global,
        mutable: true,
        linkage: Linkage::External,
        align: 8,
        size: 16,
        init: Some(Initializer {
            spans: vec![Span::Undef(8), Span::Bytes(vec![3, 0, 0, 0, 0, 0, 0, 0])],
            relocations: vec![reloc(0, backing, 0)],
        }),
    });
    let t = &mut m.types;
    let (i32t, i64t) = (t.i32(), t.i64());
    let gi32 = t.ptr(i32t, AddressSpace::Generic);
    let fat = t.struct_of(&[gi32, i64t]);
    let k = kernel(&mut m, "bump", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let s = b.global_addr(slice, fat);
    let data_p = b.gep(s, &[GepIndex::Const(0), GepIndex::Field(0)]);
    let len_p = b.gep(s, &[GepIndex::Const(0), GepIndex::Field(1)]);
    let data = b.load(gi32, data_p);
    let len = b.load(i64t, len_p);
    let one = b.iconst(i64t, 1);
    let last = b.binary(BinaryOp::Sub, len, one);
    let elem = b.gep(data, &[GepIndex::Value(last)]);
    let v = b.load(i32t, elem);
    let one32 = b.iconst(i32t, 1);
    let v2 = b.iadd(v, one32);
    b.store(v2, elem);
    b.ret(None);
    m
}

/// Symbols with `$`, leading `_` and digits; internal and external linkage; a
/// zero-size global; an uninitialized global-space global; a module-level
/// function with no kernel caller.
pub fn identifiers_and_linkage() -> Module {
    let mut m = Module::new();
    let zst = m.add_global(GlobalData {
        symbol: "_ZN4core3fmt5EMPTY17h0123456789abcdefE".to_owned(),
        space: AddressSpace::Global,
        mutable: false,
        linkage: Linkage::Internal,
        align: 1,
        size: 0,
        init: Some(Initializer::default()),
    });
    let buf = m.add_global(GlobalData {
        symbol: "buf$1".to_owned(),
        space: AddressSpace::Global,
        mutable: true,
        linkage: Linkage::External,
        align: 16,
        size: 32,
        init: None,
    });
    let key = const_global(
        &mut m,
        "__rcc_const_9f86d081884c7d65",
        AddressSpace::Global,
        1,
        vec![Span::Bytes(b"hi \"there\"\\\n\0".to_vec())],
        vec![],
    );
    let t = &mut m.types;
    let (i8t, i32t) = (t.i8(), t.i32());
    let lonely = device(&mut m, "$helper_9", Linkage::External, &[i32t], Some(i32t));
    let mut b = FunctionBuilder::new(&mut m, lonely);
    let x = params(&b)[0];
    b.ret(Some(x));
    let k = kernel(&mut m, "k_1$", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let s = b.global_addr(key, i8t);
    let c = b.load(i8t, s);
    let z = b.global_addr(zst, i8t);
    let _ = z;
    let d = b.global_addr(buf, i8t);
    b.store(c, d);
    b.ret(None);
    m
}

/// Constant memory the host writes between launches (`ConstantMemory`):
/// an externally initialized `addrspace(4)` global of zeros, read through
/// its own space and through a generic pointer. Printed as an LLVM
/// `constant`, both reads would fold to 0.
pub fn host_written_constant() -> Module {
    let mut m = Module::new();
    let bank = const_global(
        &mut m,
        "bank",
        AddressSpace::Constant,
        4,
        vec![Span::Bytes(vec![0; 8])],
        vec![],
    );
    m.globals[bank].linkage = Linkage::ExternallyInitialized;
    let i32t = m.types.i32();
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "host_written_constant", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let c = b.global_addr(bank, i32t);
    let first = b.load(i32t, c);
    store_at(&mut b, p, 0, first);
    let g = b.addrspacecast(c, AddressSpace::Generic);
    let second = b.gep(g, &[GepIndex::Const(1)]);
    let second = b.load(i32t, second);
    store_at(&mut b, p, 1, second);
    b.ret(None);
    m
}

/// A read-only table of two function pointers (`[fn(i32) -> i32; 2]`, a
/// Rust `const` of functions): each thread loads entry `tid & 1` and calls
/// through it (`out[tid]`), so the table stays a global of function
/// addresses and the call an indirect one.
pub fn function_table() -> Module {
    let mut m = Module::new();
    let (i8t, i32t, i64t) = (m.types.i8(), m.types.i32(), m.types.i64());
    let helper = |m: &mut Module, name: &str, op: BinaryOp| {
        let f = device(m, name, Linkage::Internal, &[i32t], Some(i32t));
        let mut b = FunctionBuilder::new(m, f);
        let x = params(&b)[0];
        let seven = b.iconst(i32t, 7);
        let r = b.binary(op, x, seven);
        b.ret(Some(r));
        f
    };
    let add = helper(&mut m, "add7", BinaryOp::Add);
    let mul = helper(&mut m, "mul7", BinaryOp::Mul);
    let slot = |offset: u64, f: FuncId| Relocation {
        offset,
        target: f.into(),
        addend: 0,
    };
    let table = const_global(
        &mut m,
        "table",
        AddressSpace::Global,
        8,
        vec![Span::Undef(16)],
        vec![slot(0, add), slot(8, mul)],
    );
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "call_from_table", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let tid = b.special_reg(SpecialReg::TidX);
    let one = b.iconst(i32t, 1);
    let entry = b.binary(BinaryOp::And, tid, one);
    let entry = b.cast(CastOp::ZExt, entry, i64t);
    let eight = b.iconst(i64t, 8);
    let offset = b.binary(BinaryOp::Mul, entry, eight);
    let base = b.global_addr(table, i8t);
    let at = b.byte_offset(base, offset);
    let fn_ptr = b.types().ptr(i8t, AddressSpace::Generic);
    let at = b.ptr_bitcast(at, fn_ptr);
    let f = b.load(fn_ptr, at);
    let sig = Signature::new(&[i32t], Some(i32t));
    let r = b
        .call_indirect(f, sig, &[tid])
        .expect("the call returns a value");
    let at = b.gep(p, &[GepIndex::Value(tid)]);
    b.store(r, at);
    b.ret(None);
    m
}
