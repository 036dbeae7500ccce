//! Dynamic shared memory on the virtual device: one instance per block, as
//! many bytes as the launch gives, and an access past them is a fault.

mod common;

use common::*;
use device_ir::*;
use gpu_harness::device::virt::FaultKind;
use gpu_harness::device::{Device, DeviceExt, KernelArg, LaunchConfig};

/// `out[gid]`: the value its right neighbour in the block (wrapping) stored
/// in the block's dynamic shared memory, `1000 * ctaid + tid`. With `tile`
/// bytes, the kernel also takes the address of a static shared array that
/// large.
fn neighbours_with(tile: u64) -> Module {
    let mut m = Module::new();
    let (i8t, i32t, i64t) = (m.types.i8(), m.types.i32(), m.types.i64());
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let tile = (tile > 0).then(|| {
        m.add_global(GlobalData {
            symbol: "tile".to_owned(),
            space: AddressSpace::Shared,
            mutable: true,
            linkage: Linkage::Internal,
            align: 16,
            size: tile,
            init: None,
        })
    });
    let k = kernel(&mut m, "neighbours", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    if let Some(tile) = tile {
        let _ = b.global_addr(tile, i8t);
    }
    let gid = global_index(&mut b);
    let tid = b.special_reg(SpecialReg::TidX);
    let ctaid = b.special_reg(SpecialReg::CtaidX);
    let ntid = b.special_reg(SpecialReg::NtidX);
    let thousand = b.iconst(i32t, 1000);
    let tag = b.imul(ctaid, thousand);
    let mine = b.iadd(tag, tid);
    let base = b.dynamic_shared(16);
    let words = b.ptr_bitcast(base, i32t);
    let tid64 = b.cast(CastOp::ZExt, tid, i64t);
    let slot = b.gep(words, &[GepIndex::Value(tid64)]);
    b.store(mine, slot);
    b.barrier();
    let one = b.iconst(i32t, 1);
    let next = b.iadd(tid, one);
    let next = b.binary(BinaryOp::URem, next, ntid);
    let next64 = b.cast(CastOp::ZExt, next, i64t);
    let theirs = b.gep(words, &[GepIndex::Value(next64)]);
    let v = b.load(i32t, theirs);
    let gid64 = b.cast(CastOp::ZExt, gid, i64t);
    let dst = b.gep(out, &[GepIndex::Value(gid64)]);
    b.store(v, dst);
    b.ret(None);
    m
}

fn neighbours() -> Module {
    neighbours_with(0)
}

#[test]
fn each_block_has_its_own_dynamic_shared_memory_of_the_launch_s_size() {
    let m = neighbours();
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<u32>(128).expect("buffer");
    let cfg = LaunchConfig::linear(2, 64).with_shared_bytes(64 * 4);
    dev.launch(h, "neighbours", cfg, &[KernelArg::Buffer(out)])
        .expect("launch");
    let got: Vec<u32> = dev.download(out).expect("download");
    for g in 0..128u32 {
        let (block, tid) = (g / 64, g % 64);
        assert_eq!(got[g as usize], 1000 * block + (tid + 1) % 64, "thread {g}");
    }
}

#[test]
fn an_access_past_the_launch_s_dynamic_shared_memory_faults() {
    let m = neighbours();
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<u32>(64).expect("buffer");
    // 32 words for 64 threads: thread 32 stores past the end.
    let cfg = LaunchConfig::linear(1, 64).with_shared_bytes(32 * 4);
    let e = expect_fault(
        &mut dev,
        h,
        "neighbours",
        cfg,
        &[KernelArg::Buffer(out)],
        FaultKind::OutOfBounds,
    );
    assert!(e.message.contains("__dynamic_shared"), "{e}");
    assert_eq!(e.thread, [32, 0, 0], "{e}");
    // Without any: the first store is already out of bounds.
    let e = expect_fault(
        &mut dev,
        h,
        "neighbours",
        LaunchConfig::linear(1, 64),
        &[KernelArg::Buffer(out)],
        FaultKind::OutOfBounds,
    );
    assert_eq!(e.thread, [0, 0, 0], "{e}");
}

/// Static and dynamic shared memory share a block's 48 KiB: a kernel with
/// a 40 KiB shared array launches with 8 KiB of dynamic memory, not with
/// one byte more.
#[test]
fn static_and_dynamic_shared_memory_share_a_block_s_48_kib() {
    let m = neighbours_with(40 << 10);
    let k = m.function_by_name("neighbours").expect("the kernel");
    assert_eq!(m.static_shared_bytes(k), 40 << 10);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<u32>(64).expect("buffer");
    let fits = LaunchConfig::linear(1, 64).with_shared_bytes(8 << 10);
    dev.launch(h, "neighbours", fits, &[KernelArg::Buffer(out)])
        .expect("48 KiB in all");
    let over = LaunchConfig::linear(1, 64).with_shared_bytes((8 << 10) + 1);
    let e = dev
        .launch(h, "neighbours", over, &[KernelArg::Buffer(out)])
        .expect_err("one byte over");
    assert!(
        e.to_string()
            .contains("needs 49153 bytes of shared memory per block (40960 static, 8193 dynamic)"),
        "{e}"
    );
}
