//! Branches, loops with block parameters, switches, select, calls, recursion.

use device_ir::*;

use super::*;

/// A counted loop with block parameters (phis), a two-way branch, a switch with
/// two cases to one block, an `unreachable` default, and a block nothing branches
/// to.
pub fn control_flow() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let f = device(&mut m, "sum_below", Linkage::Internal, &[i32t], Some(i32t));
    let mut b = FunctionBuilder::new(&mut m, f);
    let n = params(&b)[0];
    let header = b.create_block();
    let i = b.append_block_param(header, i32t);
    let acc = b.append_block_param(header, i32t);
    let body = b.create_block();
    let exit = b.create_block();
    let result = b.append_block_param(exit, i32t);
    let zero = b.iconst(i32t, 0);
    b.jump(header, &[zero, zero]);

    b.switch_to_block(header);
    let more = b.icmp(IntCC::Slt, i, n);
    b.brif(more, body, &[], exit, &[acc]);

    b.switch_to_block(body);
    let one = b.iconst(i32t, 1);
    let acc2 = b.iadd(acc, i);
    let i2 = b.iadd(i, one);
    b.jump(header, &[i2, acc2]);

    b.switch_to_block(exit);
    b.ret(Some(result));

    // A block nothing branches to, with a parameter: never runs.
    let dead = b.create_block();
    let dp = b.append_block_param(dead, i32t);
    b.switch_to_block(dead);
    let d2 = b.iadd(dp, dp);
    b.ret(Some(d2));

    let classify = device(&mut m, "classify", Linkage::Internal, &[i32t], Some(i32t));
    let mut b = FunctionBuilder::new(&mut m, classify);
    let x = params(&b)[0];
    let small = b.create_block();
    let big = b.create_block();
    let join = b.create_block();
    let r = b.append_block_param(join, i32t);
    let trap = b.create_block();
    let ten = b.iconst(i32t, 10);
    let twenty = b.iconst(i32t, 20);
    b.switch(
        x,
        BlockCall::new(trap, &[]),
        vec![
            (0, BlockCall::new(small, &[])),
            (1, BlockCall::new(small, &[])),
            (2, BlockCall::new(join, &[ten])),
            ((-1i32) as u32 as u128, BlockCall::new(big, &[])),
            (7, BlockCall::new(join, &[ten])),
        ],
    );
    b.switch_to_block(small);
    let neg = b.icmp(IntCC::Eq, x, ten);
    let pick = b.select(neg, ten, twenty);
    b.jump(join, &[pick]);
    b.switch_to_block(big);
    b.jump(join, &[twenty]);
    b.switch_to_block(join);
    b.ret(Some(r));
    b.switch_to_block(trap);
    b.unreachable();

    let out = out_i32(&mut m);
    let k = kernel(&mut m, "control_flow", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let tid = b.special_reg(SpecialReg::TidX);
    let s = b.call(f, &[tid]).unwrap();
    let three = b.iconst(i32t, 3);
    let sel = b.binary(BinaryOp::URem, tid, three);
    let c = b.call(classify, &[sel]).unwrap();
    let both = b.iadd(s, c);
    store_at(&mut b, p, 0, both);
    b.ret(None);
    m
}

/// Recursion, multiple returns, void device functions with pointer parameters, an
/// external device function, and a declaration.
pub fn calls_and_recursion() -> Module {
    let mut m = Module::new();
    let i64t = m.types.i64();
    let i32t = m.types.i32();
    let fact = device(&mut m, "factorial", Linkage::Internal, &[i64t], Some(i64t));
    let mut b = FunctionBuilder::new(&mut m, fact);
    let n = params(&b)[0];
    let base = b.create_block();
    let rec = b.create_block();
    let one = b.iconst(i64t, 1);
    let le = b.icmp(IntCC::Ule, n, one);
    b.brif(le, base, &[], rec, &[]);
    b.switch_to_block(base);
    b.ret(Some(one));
    b.switch_to_block(rec);
    let nm1 = b.binary(BinaryOp::Sub, n, one);
    let r = b.call(fact, &[nm1]).unwrap();
    let prod = b.imul(n, r);
    b.ret(Some(prod));

    let gp = m.types.ptr(i32t, AddressSpace::Generic);
    let put = device(&mut m, "put", Linkage::External, &[gp, i32t], None);
    let mut b = FunctionBuilder::new(&mut m, put);
    let ps = params(&b);
    b.store(ps[1], ps[0]);
    b.ret(None);

    // Defined elsewhere; declared, not called.
    let i8t = m.types.i8();
    let i8p = m.types.ptr(i8t, AddressSpace::Generic);
    device(
        &mut m,
        "vprintf",
        Linkage::External,
        &[i8p, i8p],
        Some(i32t),
    );

    let out = out_i32(&mut m);
    let out64 = m.types.ptr(i64t, AddressSpace::Global);
    let k = kernel(&mut m, "calls", &[out, out64]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let tid = b.special_reg(SpecialReg::TidX);
    let t64 = b.cast(CastOp::ZExt, tid, i64t);
    let f = b.call(fact, &[t64]).unwrap();
    b.store(f, ps[1]);
    let g = b.addrspacecast(ps[0], AddressSpace::Generic);
    b.call(put, &[g, tid]);
    b.ret(None);
    m
}

/// Function addresses as values (Rust's `fn` pointers): `inc`'s address
/// taken twice and `dec`'s once, compared (`out[0]`: equal, `out[1]`:
/// distinct), and `inc`'s stored (`out64[0]`), so that one survives
/// libNVVM's folding as a `mov` of the function's symbol; then a call
/// through `inc`'s or `dec`'s address, chosen by the thread's parity
/// (`out[4]`), which stays an indirect call.
pub fn function_addresses() -> Module {
    let mut m = Module::new();
    let (i8t, i32t, i64t) = (m.types.i8(), m.types.i32(), m.types.i64());
    let helper = |m: &mut Module, name: &str, op: BinaryOp| {
        let f = device(m, name, Linkage::Internal, &[i32t], Some(i32t));
        let mut b = FunctionBuilder::new(m, f);
        b.add_attrs(FuncAttrs::NOINLINE);
        let x = params(&b)[0];
        let one = b.iconst(i32t, 1);
        let r = b.binary(op, x, one);
        b.ret(Some(r));
        f
    };
    let inc = helper(&mut m, "inc", BinaryOp::Add);
    let dec = helper(&mut m, "dec", BinaryOp::Sub);
    let out = out_i32(&mut m);
    let out64 = m.types.ptr(i64t, AddressSpace::Global);
    let k = kernel(&mut m, "fn_addresses", &[out, out64]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let addr = |b: &mut FunctionBuilder<'_>, f| {
        let p = b.func_addr(f, i8t);
        b.cast(CastOp::PtrToInt, p, i64t)
    };
    let (a, again, other) = (addr(&mut b, inc), addr(&mut b, inc), addr(&mut b, dec));
    let same = b.icmp(IntCC::Eq, a, again);
    let same = b.cast(CastOp::ZExt, same, i32t);
    store_at(&mut b, ps[0], 0, same);
    let differ = b.icmp(IntCC::Ne, a, other);
    let differ = b.cast(CastOp::ZExt, differ, i32t);
    store_at(&mut b, ps[0], 1, differ);
    let five = b.iconst(i32t, 5);
    let six = b.call(inc, &[five]).unwrap();
    let four = b.call(dec, &[five]).unwrap();
    store_at(&mut b, ps[0], 2, six);
    store_at(&mut b, ps[0], 3, four);
    b.store(a, ps[1]);
    let tid = b.special_reg(SpecialReg::TidX);
    let one = b.iconst(i32t, 1);
    let odd = b.binary(BinaryOp::And, tid, one);
    let zero = b.iconst(i32t, 0);
    let odd = b.icmp(IntCC::Ne, odd, zero);
    let (to_inc, to_dec) = (b.func_addr(inc, i8t), b.func_addr(dec, i8t));
    let chosen = b.select(odd, to_dec, to_inc);
    let sig = device_ir::Signature::new(&[i32t], Some(i32t));
    let r = b.call_indirect(chosen, sig, &[tid]).unwrap();
    store_at(&mut b, ps[0], 4, r);
    b.ret(None);
    m
}
