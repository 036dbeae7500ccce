//! Shared memory with barriers, atomics as inline PTX, fences, inline asm.

use device_ir::*;

use super::*;

/// A block-wide tree reduction over a shared `[256 x i32]`, with barriers.
pub fn shared_barrier() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let i64t = m.types.i64();
    let arr = m.types.array(i32t, 256);
    let sdata = m.add_global(GlobalData {
        symbol: "sdata".to_owned(),
        space: AddressSpace::Shared,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 1024,
        init: None,
    });
    let gp = out_i32(&mut m);
    let k = kernel(&mut m, "reduce", &[gp, gp]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let (input, out) = (ps[0], ps[1]);
    let tid = b.special_reg(SpecialReg::TidX);
    let ctaid = b.special_reg(SpecialReg::CtaidX);
    let ntid = b.special_reg(SpecialReg::NtidX);
    let base = b.imul(ctaid, ntid);
    let gid = b.iadd(base, tid);
    let gid64 = b.cast(CastOp::ZExt, gid, i64t);
    let tid64 = b.cast(CastOp::ZExt, tid, i64t);
    let src = b.gep(input, &[GepIndex::Value(gid64)]);
    let x = b.load(i32t, src);
    let tile = b.global_addr(sdata, arr);
    let mine = b.gep(tile, &[GepIndex::Const(0), GepIndex::Value(tid64)]);
    b.store(x, mine);
    b.barrier();
    let head = b.create_block();
    let s = b.append_block_param(head, i32t);
    let step = b.create_block();
    let add = b.create_block();
    let sync = b.create_block();
    let done = b.create_block();
    let first = b.iconst(i32t, 128);
    b.jump(head, &[first]);

    b.switch_to_block(head);
    let zero = b.iconst(i32t, 0);
    let go = b.icmp(IntCC::Ugt, s, zero);
    b.brif(go, step, &[], done, &[]);

    b.switch_to_block(step);
    let active = b.icmp(IntCC::Ult, tid, s);
    b.brif(active, add, &[], sync, &[]);

    b.switch_to_block(add);
    let other = b.iadd(tid, s);
    let other64 = b.cast(CastOp::ZExt, other, i64t);
    let op = b.gep(tile, &[GepIndex::Const(0), GepIndex::Value(other64)]);
    let a = b.load(i32t, mine);
    let c = b.load(i32t, op);
    let sum = b.iadd(a, c);
    b.store(sum, mine);
    b.jump(sync, &[]);

    b.switch_to_block(sync);
    b.barrier();
    let one = b.iconst(i32t, 1);
    let half = b.binary(BinaryOp::LShr, s, one);
    b.jump(head, &[half]);

    b.switch_to_block(done);
    let is0 = b.icmp(IntCC::Eq, tid, zero);
    let write = b.create_block();
    let exit = b.create_block();
    b.brif(is0, write, &[], exit, &[]);
    b.switch_to_block(write);
    let total = b.load(i32t, mine);
    let ctaid64 = b.cast(CastOp::ZExt, ctaid, i64t);
    let dst = b.gep(out, &[GepIndex::Value(ctaid64)]);
    b.store(total, dst);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

/// Every atomic form as inline PTX: loads and stores at every scope and valid
/// ordering, every read-modify-write, compare-and-swap and fences, through global,
/// shared and generic pointers, on i32, i64, f32 and f64.
pub fn atomics() -> Module {
    let mut m = Module::new();
    let t = &mut m.types;
    let (i32t, i64t, f32t, f64t) = (t.i32(), t.i64(), t.f32(), t.f64());
    let g32 = t.ptr(i32t, AddressSpace::Global);
    let g64 = t.ptr(i64t, AddressSpace::Global);
    let gf32 = t.ptr(f32t, AddressSpace::Global);
    let n32 = t.ptr(i32t, AddressSpace::Generic);
    let gf64 = t.ptr(f64t, AddressSpace::Global);
    let flag = m.add_global(GlobalData {
        symbol: "flag".to_owned(),
        space: AddressSpace::Shared,
        mutable: true,
        linkage: Linkage::Internal,
        align: 8,
        size: 8,
        init: None,
    });
    let k = kernel(&mut m, "atomics", &[g32, g64, gf32, n32, gf64]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let (p32, p64, pf, pn, pd) = (ps[0], ps[1], ps[2], ps[3], ps[4]);
    let s32 = b.global_addr(flag, i32t);
    let s64 = b.global_addr(flag, i64t);
    let one = b.iconst(i32t, 1);
    let one64 = b.iconst(i64t, 1);
    let mut acc = b.iconst(i32t, 0);
    let scopes = [Scope::Cta, Scope::Gpu, Scope::Sys];
    for scope in scopes {
        for ordering in [Ordering::Relaxed, Ordering::Acquire, Ordering::SeqCst] {
            for ptr in [p32, s32, pn] {
                let v = b.atomic_load(i32t, ptr, ordering, scope);
                acc = b.iadd(acc, v);
            }
            let w = b.atomic_load(i64t, p64, ordering, scope);
            let w32 = b.cast(CastOp::Trunc, w, i32t);
            acc = b.iadd(acc, w32);
        }
        for ordering in [Ordering::Relaxed, Ordering::Release, Ordering::SeqCst] {
            for ptr in [p32, s32, pn] {
                b.atomic_store(acc, ptr, ordering, scope);
            }
            b.atomic_store(one64, s64, ordering, scope);
        }
        for ordering in [
            Ordering::Acquire,
            Ordering::Release,
            Ordering::AcqRel,
            Ordering::SeqCst,
        ] {
            b.fence(ordering, scope);
        }
    }
    let orderings = [
        Ordering::Relaxed,
        Ordering::Acquire,
        Ordering::Release,
        Ordering::AcqRel,
        Ordering::SeqCst,
    ];
    for (i, op) in RmwOp::ALL.into_iter().enumerate() {
        let ordering = orderings[i % orderings.len()];
        let scope = scopes[i % scopes.len()];
        if op == RmwOp::FAdd {
            let x = b.f32const(0.5);
            let old = b.atomic_rmw(op, pf, x, ordering, scope);
            let y = b.f64const(0.25);
            let old_d = b.atomic_rmw(op, pd, y, ordering, scope);
            let bits = b.cast(CastOp::Bitcast, old, i32t);
            let dbits = b.cast(CastOp::FpToSi, old_d, i32t);
            acc = b.iadd(acc, bits);
            acc = b.iadd(acc, dbits);
            continue;
        }
        let old = b.atomic_rmw(op, p32, one, ordering, scope);
        let old_s = b.atomic_rmw(op, s32, acc, ordering, scope);
        let old_64 = b.atomic_rmw(op, p64, one64, ordering, scope);
        let old_n = b.atomic_rmw(op, pn, old, ordering, scope);
        let t64 = b.cast(CastOp::Trunc, old_64, i32t);
        acc = b.iadd(acc, old_s);
        acc = b.iadd(acc, t64);
        acc = b.iadd(acc, old_n);
    }
    for (i, ordering) in orderings.into_iter().enumerate() {
        let scope = scopes[i % scopes.len()];
        let old = b.atomic_cas(p32, acc, one, ordering, scope);
        let old_s = b.atomic_cas(s32, old, acc, ordering, scope);
        let old_64 = b.atomic_cas(s64, one64, one64, ordering, scope);
        let t64 = b.cast(CastOp::Trunc, old_64, i32t);
        acc = b.iadd(acc, old_s);
        acc = b.iadd(acc, t64);
    }
    b.store(acc, p32);
    b.ret(None);
    m
}

/// A release/acquire message-passing pair at system scope, as a real kernel would
/// write it: producer publishes data then sets a flag; consumer spins on the flag.
pub fn message_passing() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let g32 = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "message_passing", &[g32, g32, g32]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let (data, flag, out) = (ps[0], ps[1], ps[2]);
    let tid = b.special_reg(SpecialReg::TidX);
    let zero = b.iconst(i32t, 0);
    let one = b.iconst(i32t, 1);
    let is_producer = b.icmp(IntCC::Eq, tid, zero);
    let produce = b.create_block();
    let spin = b.create_block();
    let consume = b.create_block();
    let exit = b.create_block();
    b.brif(is_producer, produce, &[], spin, &[]);
    b.switch_to_block(produce);
    let v = b.iconst(i32t, 42);
    b.store(v, data);
    b.atomic_store(one, flag, Ordering::Release, Scope::Sys);
    b.jump(exit, &[]);
    b.switch_to_block(spin);
    let f = b.atomic_load(i32t, flag, Ordering::Acquire, Scope::Sys);
    let ready = b.icmp(IntCC::Ne, f, zero);
    b.brif(ready, consume, &[], spin, &[]);
    b.switch_to_block(consume);
    let got = b.load(i32t, data);
    b.store(got, out);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

/// General inline PTX: a clock read with side effects, a pure two-input add, a
/// multi-line template, and a void statement with a memory clobber.
pub fn inline_asm() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let i64t = m.types.i64();
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "inline_asm", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let clock = b
        .inline_asm("mov.u32 $0, %clock;", "=r", &[], Some(i32t), true)
        .unwrap();
    let tid = b.special_reg(SpecialReg::TidX);
    let sum = b
        .inline_asm(
            "add.s32 $0, $1, $2;",
            "=r,r,r",
            &[clock, tid],
            Some(i32t),
            false,
        )
        .unwrap();
    let seven = b.iconst(i64t, 7);
    let wide = b
        .inline_asm(
            "{\n\t.reg .u64 t;\n\tmov.u64 t, %globaltimer;\n\tadd.u64 $0, t, $1;\n\t}",
            "=l,l",
            &[seven],
            Some(i64t),
            true,
        )
        .unwrap();
    b.inline_asm("membar.gl;", "~{memory}", &[], None, true);
    let w32 = b.cast(CastOp::Trunc, wide, i32t);
    let all = b.iadd(sum, w32);
    b.store(all, p);
    b.ret(None);
    m
}

/// Every warp collective: the four shuffles, the three votes, `__syncwarp`
/// and `__activemask`, each result stored to `out[k]` by lane order.
pub fn warp_collectives() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let i64t = m.types.i64();
    let gp = out_i32(&mut m);
    let k = kernel(&mut m, "warp", &[gp]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = params(&b)[0];
    let lane = b.special_reg(SpecialReg::LaneId);
    let full = b.iconst(i32t, 0xffff_ffff);
    let one = b.iconst(i32t, 1);
    let mut results = Vec::new();
    for mode in ShuffleMode::ALL {
        results.push(b.shuffle(mode, full, lane, one));
    }
    let odd = b.binary(BinaryOp::And, lane, one);
    let zero = b.iconst(i32t, 0);
    let pred = b.icmp(IntCC::Ne, odd, zero);
    for mode in VoteMode::ALL {
        let v = b.vote(mode, full, pred);
        let v = if mode == VoteMode::Ballot {
            v
        } else {
            b.cast(CastOp::ZExt, v, i32t)
        };
        results.push(v);
    }
    b.warp_sync(full);
    results.push(b.active_mask());
    for (i, v) in results.into_iter().enumerate() {
        let at = b.iconst(i64t, i as i128);
        let dst = b.gep(out, &[GepIndex::Value(at)]);
        b.store(v, dst);
    }
    b.ret(None);
    m
}

/// The warp reductions, matches (32- and 64-bit) and lane-mask registers,
/// each result stored to `out[k]`: `redux.sync` and `match.sync` are inline
/// PTX marked `convergent`, which libNVVM and `ptxas` must accept.
pub fn warp_reductions() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let i64t = m.types.i64();
    let gp = out_i32(&mut m);
    let k = kernel(&mut m, "reduce", &[gp]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = params(&b)[0];
    let lane = b.special_reg(SpecialReg::LaneId);
    let full = b.iconst(i32t, 0xffff_ffff);
    let mut results = Vec::new();
    for op in ReduceOp::ALL {
        results.push(b.warp_reduce(op, full, lane));
    }
    let wide = b.cast(CastOp::ZExt, lane, i64t);
    for mode in MatchMode::ALL {
        results.push(b.warp_match(mode, full, lane));
        results.push(b.warp_match(mode, full, wide));
    }
    for reg in [
        SpecialReg::LaneMaskLt,
        SpecialReg::LaneMaskLe,
        SpecialReg::LaneMaskEq,
        SpecialReg::LaneMaskGe,
        SpecialReg::LaneMaskGt,
    ] {
        results.push(b.special_reg(reg));
    }
    for (i, v) in results.into_iter().enumerate() {
        let at = b.iconst(i64t, i as i128);
        let dst = b.gep(out, &[GepIndex::Value(at)]);
        b.store(v, dst);
    }
    b.ret(None);
    m
}

/// Device functions that run a collective, directly (`sync_then_read`: a
/// barrier; `lane_broadcast`: a shuffle) or through a call (`outer`), are
/// `convergent`; `plain_add` and the kernel are not.
pub fn convergent_helpers() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let gp = out_i32(&mut m);

    let sync = device(
        &mut m,
        "sync_then_read",
        Linkage::Internal,
        &[gp],
        Some(i32t),
    );
    let mut b = FunctionBuilder::new(&mut m, sync);
    b.add_attrs(FuncAttrs::NOINLINE);
    let p = params(&b)[0];
    b.barrier();
    let v = b.load(i32t, p);
    b.ret(Some(v));

    let bcast = device(
        &mut m,
        "lane_broadcast",
        Linkage::Internal,
        &[i32t],
        Some(i32t),
    );
    let mut b = FunctionBuilder::new(&mut m, bcast);
    b.add_attrs(FuncAttrs::NOINLINE);
    let x = params(&b)[0];
    let all = b.iconst(i32t, -1);
    let zero = b.iconst(i32t, 0);
    let v = b.shuffle(ShuffleMode::Idx, all, x, zero);
    b.ret(Some(v));

    let outer = device(&mut m, "outer", Linkage::Internal, &[gp], Some(i32t));
    let mut b = FunctionBuilder::new(&mut m, outer);
    b.add_attrs(FuncAttrs::NOINLINE);
    let p = params(&b)[0];
    let v = b.call(sync, &[p]).unwrap();
    b.ret(Some(v));

    let plain = device(
        &mut m,
        "plain_add",
        Linkage::Internal,
        &[i32t, i32t],
        Some(i32t),
    );
    let mut b = FunctionBuilder::new(&mut m, plain);
    b.add_attrs(FuncAttrs::NOINLINE);
    let ps = params(&b);
    let s = b.iadd(ps[0], ps[1]);
    b.ret(Some(s));

    let k = kernel(&mut m, "collectives", &[gp]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = params(&b)[0];
    let a = b.call(outer, &[out]).unwrap();
    let c = b.call(bcast, &[a]).unwrap();
    let s = b.call(plain, &[a, c]).unwrap();
    store_at(&mut b, out, 0, s);
    b.ret(None);
    m
}

/// Each thread writes its slot of the block's dynamic shared memory (as
/// `i32`s from the start, 16-aligned) and, after a barrier, reads its
/// neighbour's through a second, 128-aligned use of the same memory.
pub fn dynamic_shared() -> Module {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let gp = out_i32(&mut m);
    let k = kernel(&mut m, "neighbours", &[gp]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = params(&b)[0];
    let tid = b.special_reg(SpecialReg::TidX);
    let ntid = b.special_reg(SpecialReg::NtidX);
    let tid64 = b.cast(CastOp::ZExt, tid, i64t);
    let base = b.dynamic_shared(16);
    let words = b.ptr_bitcast(base, i32t);
    let mine = b.gep(words, &[GepIndex::Value(tid64)]);
    b.store(tid, mine);
    b.barrier();
    let one = b.iconst(i32t, 1);
    let next = b.iadd(tid, one);
    let wrapped = b.binary(BinaryOp::URem, next, ntid);
    let wrapped64 = b.cast(CastOp::ZExt, wrapped, i64t);
    let again = b.dynamic_shared(128);
    let words = b.ptr_bitcast(again, i32t);
    let theirs = b.gep(words, &[GepIndex::Value(wrapped64)]);
    let v = b.load(i32t, theirs);
    let dst = b.gep(out, &[GepIndex::Value(tid64)]);
    b.store(v, dst);
    b.ret(None);
    m
}
