//! Instruction semantics on the virtual device: launch shapes, layouts,
//! conversions, globals that persist, compare-and-swap loops, integer pointers.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use device_ir::*;
use gpu_harness::device::{Device, DeviceExt, KernelArg, LaunchConfig};

#[test]
fn two_dimensional_launch_sees_every_index() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "ids", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let r: Vec<Value> = [
        SpecialReg::TidX,
        SpecialReg::TidY,
        SpecialReg::CtaidX,
        SpecialReg::CtaidY,
        SpecialReg::NtidX,
        SpecialReg::NtidY,
        SpecialReg::NctaidX,
    ]
    .into_iter()
    .map(|reg| b.special_reg(reg))
    .collect();
    let (tx, ty, bx, by, nx, ny, gx) = (r[0], r[1], r[2], r[3], r[4], r[5], r[6]);
    // index = (by * gx + bx) * (nx * ny) + ty * nx + tx
    let blk = b.imul(by, gx);
    let blk = b.iadd(blk, bx);
    let per = b.imul(nx, ny);
    let base = b.imul(blk, per);
    let row = b.imul(ty, nx);
    let idx = b.iadd(base, row);
    let idx = b.iadd(idx, tx);
    // value = tx + 10 ty + 100 bx + 1000 by
    let c = |b: &mut FunctionBuilder<'_>, v| b.iconst(i32t, v);
    let (c10, c100, c1000) = (c(&mut b, 10), c(&mut b, 100), c(&mut b, 1000));
    let v1 = b.imul(ty, c10);
    let v2 = b.imul(bx, c100);
    let v3 = b.imul(by, c1000);
    let v = b.iadd(tx, v1);
    let v = b.iadd(v, v2);
    let v = b.iadd(v, v3);
    let dst = b.gep(out, &[GepIndex::Value(idx)]);
    b.store(v, dst);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.alloc(24 * 4).unwrap();
    dev.launch(
        h,
        "ids",
        LaunchConfig::xy((2, 2), (3, 2)),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    let mut want = Vec::new();
    for by in 0..2 {
        for bx in 0..2 {
            for ty in 0..2 {
                for tx in 0..3 {
                    want.push(tx + 10 * ty + 100 * bx + 1000 * by);
                }
            }
        }
    }
    assert_eq!(dev.download::<i32>(out).unwrap(), want);
}

#[test]
fn struct_fields_and_aggregate_copies_follow_the_layout() {
    let mut m = Module::new();
    let (i8t, i32t, i64t) = (m.types.i8(), m.types.i32(), m.types.i64());
    let st = m.types.struct_of(&[i8t, i32t, i64t]);
    let pst = m.types.ptr(st, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[pst]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let slot = b.alloca(st);
    for (field, ty, v) in [(0u32, i8t, -2i128), (1, i32t, 0x01020304), (2, i64t, -5)] {
        let p = b.gep(slot, &[GepIndex::Const(0), GepIndex::Field(field)]);
        let c = b.iconst(ty, v);
        b.store(c, p);
    }
    let whole = b.load(st, slot);
    b.store(whole, out);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<u8>(16).unwrap();
    dev.launch(
        h,
        "k",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    let bytes = dev.read(out).unwrap();
    let mut want = vec![0xfe, 0, 0, 0, 4, 3, 2, 1];
    want.extend_from_slice(&(-5i64).to_le_bytes());
    assert_eq!(bytes, want);
}

#[test]
fn conversions_and_wide_integers() {
    let mut m = Module::new();
    let (i8t, i32t, i64t, i128t) = (m.types.i8(), m.types.i32(), m.types.i64(), m.types.int(128));
    let (f32t, f64t) = (m.types.f32(), m.types.f64());
    let pg = m.types.ptr(i64t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let mut results = Vec::new();
    // sext(i8 -3) to i64
    let x = b.iconst(i8t, -3);
    results.push(b.cast(CastOp::SExt, x, i64t));
    // zext(i8 -3) to i64 = 253
    results.push(b.cast(CastOp::ZExt, x, i64t));
    // fptosi(-7.9f64) = -7
    let f = b.f64const(-7.9);
    results.push(b.cast(CastOp::FpToSi, f, i64t));
    // sitofp(i32 -9) to f32, bitcast to i32, zext
    let n = b.iconst(i32t, -9);
    let g = b.cast(CastOp::SiToFp, n, f32t);
    let gb = b.cast(CastOp::Bitcast, g, i32t);
    results.push(b.cast(CastOp::ZExt, gb, i64t));
    // fptrunc(0.1f64) bits
    let t = b.f64const(0.1);
    let t32 = b.cast(CastOp::FpTrunc, t, f32t);
    let tb = b.cast(CastOp::Bitcast, t32, i32t);
    results.push(b.cast(CastOp::ZExt, tb, i64t));
    // (2^64 + 5) * 3 >> 64 in i128 = 3, via trunc of lshr
    let big = b.iconst(i128t, (1i128 << 64) + 5);
    let three = b.iconst(i128t, 3);
    let prod = b.imul(big, three);
    let sixty_four = b.iconst(i128t, 64);
    let hi = b.binary(BinaryOp::LShr, prod, sixty_four);
    results.push(b.cast(CastOp::Trunc, hi, i64t));
    // f64 division and fpext round trip: (1.5f32 as f64) / 4.0 as bits
    let h = b.f32const(1.5);
    let hd = b.cast(CastOp::FpExt, h, f64t);
    let four = b.f64const(4.0);
    let q = b.binary(BinaryOp::FDiv, hd, four);
    results.push(b.cast(CastOp::Bitcast, q, i64t));
    for (i, v) in results.iter().enumerate() {
        let p = b.gep(out, &[GepIndex::Const(i as i64)]);
        b.store(*v, p);
    }
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<u64>(7).unwrap();
    dev.launch(
        h,
        "k",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    let want: Vec<u64> = vec![
        -3i64 as u64,
        253,
        -7i64 as u64,
        u64::from((-9.0f32).to_bits()),
        u64::from((0.1f64 as f32).to_bits()),
        3,
        (1.5f64 / 4.0).to_bits(),
    ];
    assert_eq!(dev.download::<u64>(out).unwrap(), want);
}

#[test]
fn mutable_globals_persist_and_cas_loops_count_exactly() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let counter = m.add_global(GlobalData {
        symbol: "counter".to_owned(),
        space: AddressSpace::Global,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 4,
        init: Some(Initializer::from_bytes([0, 0, 0, 0])),
    });
    // bump: do { old = *c; } while cas(c, old, old + 1) != old
    let k = kernel(&mut m, "bump", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let c = b.global_addr(counter, i32t);
    let retry = b.create_block();
    let done = b.create_block();
    b.jump(retry, &[]);
    b.switch_to_block(retry);
    let old = b.atomic_load(i32t, c, Ordering::Relaxed, Scope::Gpu);
    let one = b.iconst(i32t, 1);
    let new = b.iadd(old, one);
    let seen = b.atomic_cas(c, old, new, Ordering::AcqRel, Scope::Gpu);
    let ok = b.icmp(IntCC::Eq, seen, old);
    b.brif(ok, done, &[], retry, &[]);
    b.switch_to_block(done);
    b.ret(None);
    let k = kernel(&mut m, "get", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let c = b.global_addr(counter, i32t);
    let v = b.load(i32t, c);
    b.store(v, out);
    b.ret(None);
    let (mut dev, h) = load(&m);
    dev.launch(h, "bump", LaunchConfig::linear(3, 8), &[])
        .unwrap();
    dev.launch(h, "bump", LaunchConfig::linear(1, 5), &[])
        .unwrap();
    let out = dev.alloc(4).unwrap();
    dev.launch(
        h,
        "get",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    assert_eq!(dev.download::<i32>(out).unwrap(), vec![29]);
}

#[test]
fn pointers_round_trip_through_integers() {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let a = b.cast(CastOp::PtrToInt, out, i64t);
    let four = b.iconst(i64t, 4);
    let a4 = b.iadd(a, four);
    let p = b.cast(CastOp::IntToPtr, a4, pg);
    let v = b.iconst(i32t, 77);
    b.store(v, p);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<i32>(2).unwrap();
    dev.launch(
        h,
        "k",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    assert_eq!(dev.download::<i32>(out).unwrap(), vec![0, 77]);
}
