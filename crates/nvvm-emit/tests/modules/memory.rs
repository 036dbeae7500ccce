//! Memory in every address space, GEPs, byte offsets, aggregates.

use device_ir::*;

use super::*;

/// Loads and stores in the generic, global, shared, constant and local spaces,
/// with `alloca`, `addrspacecast` and volatile accesses.
pub fn memory_spaces() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let arr = m.types.array(i32t, 64);
    let shared = m.add_global(GlobalData {
        symbol: "tile".to_owned(),
        space: AddressSpace::Shared,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 256,
        init: None,
    });
    let table = const_global(
        &mut m,
        "table",
        AddressSpace::Constant,
        4,
        vec![Span::Bytes(vec![
            1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0,
        ])],
        vec![],
    );
    let counter = m.add_global(GlobalData {
        symbol: "counter".to_owned(),
        space: AddressSpace::Global,
        mutable: true,
        linkage: Linkage::External,
        align: 4,
        size: 4,
        init: Some(Initializer::from_bytes([7, 0, 0, 0])),
    });
    let gp = m.types.ptr(i32t, AddressSpace::Global);
    let generic = m.types.ptr(i32t, AddressSpace::Generic);
    let i64t = m.types.i64();
    let k = kernel(&mut m, "memory_spaces", &[gp, generic]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let (out, gen_in) = (ps[0], ps[1]);
    let tid = b.special_reg(SpecialReg::TidX);
    let tid64 = b.cast(CastOp::ZExt, tid, i64t);
    // Generic parameter.
    let from_generic = b.load(i32t, gen_in);
    // Stack: generic alloca, then the local view.
    let slot = b.alloca(i32t);
    b.store(from_generic, slot);
    let local = b.addrspacecast(slot, AddressSpace::Local);
    let l = b.load(i32t, local);
    let l2 = b.iadd(l, tid);
    b.store(l2, local);
    let back = b.load(i32t, slot);
    // Shared array, through its typed view and through generic.
    let tile = b.global_addr(shared, arr);
    let elem = b.gep(tile, &[GepIndex::Const(0), GepIndex::Value(tid64)]);
    b.store(back, elem);
    let elem_generic = b.addrspacecast(elem, AddressSpace::Generic);
    let sh = b.load(i32t, elem_generic);
    // Constant table.
    let tab = b.global_addr(table, i32t);
    let three = b.iconst(i64t, 3);
    let t3 = b.gep(tab, &[GepIndex::Value(three)]);
    let c = b.load(i32t, t3);
    // Mutable global, volatile.
    let ctr = b.global_addr(counter, i32t);
    let v = b.load_with(i32t, ctr, 4, MemFlags::VOLATILE);
    let sum = b.iadd(sh, c);
    let sum = b.iadd(sum, v);
    b.store_with(sum, ctr, 4, MemFlags::VOLATILE);
    let dst = b.gep(out, &[GepIndex::Value(tid64)]);
    b.store(sum, dst);
    b.ret(None);
    m
}

/// GEPs through structs and arrays (fields, constant and run-time indices), and
/// byte offsets.
pub fn gep_and_byte_offsets() -> Module {
    let mut m = Module::new();
    let t = &mut m.types;
    let (i8t, i16t, i32t, i64t) = (t.i8(), t.i16(), t.i32(), t.i64());
    let quad = t.array(i16t, 4);
    let rec = t.struct_of(&[i32t, quad, i64t]);
    let recs = t.array(rec, 8);
    let packed = t.packed_struct_of(&[i8t, i32t]);
    let recs_p = t.ptr(recs, AddressSpace::Global);
    let packed_p = t.ptr(packed, AddressSpace::Global);
    let out = t.ptr(i64t, AddressSpace::Global);
    let k = kernel(&mut m, "geps", &[recs_p, packed_p, out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let tid = b.special_reg(SpecialReg::TidX);
    let seven = b.iconst(i32t, 7);
    let i = b.binary(BinaryOp::And, tid, seven);
    let j16 = b.cast(CastOp::Trunc, tid, i16t);
    // recs[0][i].1[j] : i16
    let q = b.gep(
        ps[0],
        &[
            GepIndex::Const(0),
            GepIndex::Value(i),
            GepIndex::Field(1),
            GepIndex::Value(j16),
        ],
    );
    let qv = b.load(i16t, q);
    // recs[0][i].2 : i64
    let w = b.gep(
        ps[0],
        &[GepIndex::Const(0), GepIndex::Value(i), GepIndex::Field(2)],
    );
    let wv = b.load(i64t, w);
    // packed.1 : i32 at offset 1, align 1
    let pf = b.gep(ps[1], &[GepIndex::Const(0), GepIndex::Field(1)]);
    let pv = b.load_with(i32t, pf, 1, MemFlags::empty());
    // Byte offsets: the second record's i64, by bytes; then a run-time offset.
    let first = b.gep(
        ps[0],
        &[GepIndex::Const(0), GepIndex::Const(0), GepIndex::Field(2)],
    );
    let off = b.iconst(i64t, 24);
    let second = b.byte_offset(first, off);
    let sv = b.load(i64t, second);
    let dyn_off = b.cast(CastOp::SExt, i, i64t);
    let moved = b.byte_offset(ps[2], dyn_off);
    let q64 = b.cast(CastOp::SExt, qv, i64t);
    let p64 = b.cast(CastOp::ZExt, pv, i64t);
    let mut acc = b.iadd(q64, wv);
    acc = b.iadd(acc, p64);
    acc = b.iadd(acc, sv);
    b.store_with(acc, moved, 1, MemFlags::empty());
    b.ret(None);
    m
}

/// Whole-aggregate loads and stores, undef aggregates, and an aggregate block
/// parameter.
pub fn aggregates() -> Module {
    let mut m = Module::new();
    let t = &mut m.types;
    let (i32t, f64t) = (t.i32(), t.f64());
    let pair = t.struct_of(&[i32t, f64t]);
    let arr = t.array(pair, 2);
    let arr_p = t.ptr(arr, AddressSpace::Global);
    let k = kernel(&mut m, "aggregates", &[arr_p]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let whole = b.load(arr, p);
    let e0 = b.gep(p, &[GepIndex::Const(0), GepIndex::Const(0)]);
    let e1 = b.gep(p, &[GepIndex::Const(0), GepIndex::Const(1)]);
    let first = b.load(pair, e0);
    let tid = b.special_reg(SpecialReg::TidX);
    let zero = b.iconst(i32t, 0);
    let c = b.icmp(IntCC::Eq, tid, zero);
    let copy = b.create_block();
    let done = b.create_block();
    let picked = b.append_block_param(done, pair);
    let u = b.undef(pair);
    b.brif(c, copy, &[], done, &[u]);
    b.switch_to_block(copy);
    b.jump(done, &[first]);
    b.switch_to_block(done);
    b.store(picked, e1);
    b.store(whole, p);
    b.ret(None);
    m
}

/// A kernel taking an aggregate by value (`byval`): the `.param .align 4
/// .b8 p[12]` form a launch fills with the aggregate's bytes. The kernel
/// reads two of its words and stores their sum.
pub fn byval_param() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let words = m.types.array(i32t, 3);
    let by_value = m.types.ptr(words, AddressSpace::Generic);
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "byval_param", &[out, by_value]);
    m.functions[k].param_attrs = vec![ParamAttrs::empty(), ParamAttrs::BYVAL];
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let first = b.gep(ps[1], &[GepIndex::Const(0), GepIndex::Const(0)]);
    let third = b.gep(ps[1], &[GepIndex::Const(0), GepIndex::Const(2)]);
    let a = b.load(i32t, first);
    let c = b.load(i32t, third);
    let sum = b.iadd(a, c);
    b.store(sum, ps[0]);
    b.ret(None);
    m
}
