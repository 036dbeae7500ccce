//! Warp collectives on the virtual device: the values of shuffles and votes,
//! and a fault (never a guessed value) for every use the GPU leaves undefined.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use device_ir::*;
use gpu_harness::device::virt::{ExecError, FaultKind};
use gpu_harness::device::{Device, DeviceExt, KernelArg, LaunchConfig};

/// How the test kernel picks its mask.
#[derive(Clone, Copy)]
enum Mask {
    /// The same constant on every lane.
    All(u32),
    /// `lane0` on lane 0 and `others` elsewhere.
    Lane0(u32, u32),
}

/// `out[gid] = shuffle(mode, mask, value = gid * 10, operand)`; lanes at or
/// past `exit_from` return first when it is set.
fn shuffle_module(mode: ShuffleMode, mask: Mask, operand: u32, exit_from: Option<u32>) -> Module {
    shuffle_module_with_clamp(mode, mask, operand, exit_from, None)
}

/// [`shuffle_module`] with PTX's `c` operand `clamp` (CUDA's `width`).
fn shuffle_module_with_clamp(
    mode: ShuffleMode,
    mask: Mask,
    operand: u32,
    exit_from: Option<u32>,
    clamp: Option<u32>,
) -> Module {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "shuffle", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let gid = global_index(&mut b);
    let lane = b.special_reg(SpecialReg::LaneId);
    if let Some(from) = exit_from {
        let limit = b.iconst(i32t, i128::from(from));
        let leave = b.icmp(IntCC::Uge, lane, limit);
        let (exit, stay) = (b.create_block(), b.create_block());
        b.brif(leave, exit, &[], stay, &[]);
        b.switch_to_block(exit);
        b.ret(None);
        b.switch_to_block(stay);
    }
    let mask = match mask {
        Mask::All(x) => b.iconst(i32t, i128::from(x)),
        Mask::Lane0(first, rest) => {
            let zero = b.iconst(i32t, 0);
            let is0 = b.icmp(IntCC::Eq, lane, zero);
            let (a, c) = (
                b.iconst(i32t, i128::from(first)),
                b.iconst(i32t, i128::from(rest)),
            );
            b.select(is0, a, c)
        }
    };
    let ten = b.iconst(i32t, 10);
    let value = b.imul(gid, ten);
    let operand = b.iconst(i32t, i128::from(operand));
    let clamp = clamp.map(|c| b.iconst(i32t, i128::from(c)));
    let got = b.shuffle_with_clamp(mode, mask, value, operand, clamp);
    let gid64 = b.cast(CastOp::ZExt, gid, i64t);
    let dst = b.gep(out, &[GepIndex::Value(gid64)]);
    b.store(got, dst);
    b.ret(None);
    m
}

/// Stores `values` to `out[gid * values.len() ..]`, one `i32` each.
fn store_row(b: &mut FunctionBuilder<'_>, out: Value, gid: Value, values: &[Value]) {
    let (i32t, i64t) = (b.types().i32(), b.types().i64());
    let width = b.iconst(i32t, values.len() as i128);
    let base = b.imul(gid, width);
    for (i, &v) in values.iter().enumerate() {
        let off = b.iconst(i32t, i as i128);
        let at = b.iadd(base, off);
        let at64 = b.cast(CastOp::ZExt, at, i64t);
        let dst = b.gep(out, &[GepIndex::Value(at64)]);
        b.store(v, dst);
    }
}

fn run_shuffle(m: &Module, threads: u32) -> Vec<u32> {
    let (mut dev, h) = load(m);
    let out = dev.zeroed::<u32>(threads as usize).unwrap();
    dev.launch(
        h,
        "shuffle",
        LaunchConfig::linear(1, threads),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    dev.download(out).unwrap()
}

/// The warp fault that launching `m`'s `shuffle` on one block of `threads`
/// must give.
fn warp_fault(m: &Module, threads: u32) -> ExecError {
    let (mut dev, h) = load(m);
    let out = dev.zeroed::<u32>(threads as usize).unwrap();
    expect_fault(
        &mut dev,
        h,
        "shuffle",
        LaunchConfig::linear(1, threads),
        &[KernelArg::Buffer(out)],
        FaultKind::Warp,
    )
}

#[test]
fn shuffles_read_the_lane_their_mode_names() {
    let full = Mask::All(u32::MAX);
    // 64 threads: two warps, each shuffling among its own lanes.
    let down = run_shuffle(&shuffle_module(ShuffleMode::Down, full, 3, None), 64);
    let up = run_shuffle(&shuffle_module(ShuffleMode::Up, full, 3, None), 64);
    let bfly = run_shuffle(&shuffle_module(ShuffleMode::Bfly, full, 5, None), 64);
    let idx = run_shuffle(&shuffle_module(ShuffleMode::Idx, full, 35, None), 64);
    for t in 0..64u32 {
        let (warp, lane) = (t / 32 * 32, t % 32);
        let at = |l: u32| (warp + l) * 10;
        let i = t as usize;
        // Past lane 31 (down) or below lane 0 (up): the thread's own value.
        let want_down = if lane + 3 <= 31 {
            at(lane + 3)
        } else {
            at(lane)
        };
        let want_up = if lane >= 3 { at(lane - 3) } else { at(lane) };
        assert_eq!(down[i], want_down, "down, thread {t}");
        assert_eq!(up[i], want_up, "up, thread {t}");
        assert_eq!(bfly[i], at(lane ^ 5), "bfly, thread {t}");
        // The index is taken modulo 32: 35 is lane 3 of the same warp.
        assert_eq!(idx[i], at(3), "idx, thread {t}");
    }
}

#[test]
fn lanes_that_disagree_on_the_mask_are_a_warp_fault() {
    let m = shuffle_module(
        ShuffleMode::Down,
        Mask::Lane0(u32::MAX, 0xffff_fffe),
        1,
        None,
    );
    let e = warp_fault(&m, 32);
    assert!(e.message.contains("must execute the same one"), "{e}");
}

#[test]
fn a_shuffle_from_a_lane_outside_the_mask_is_a_warp_fault() {
    // Lanes 0..16 shuffle among themselves; lane 15 reads lane 16.
    let m = shuffle_module(ShuffleMode::Down, Mask::All(0xffff), 1, Some(16));
    let e = warp_fault(&m, 32);
    assert!(e.message.contains("from lane 16"), "{e}");
    assert_eq!(
        e.thread,
        [15, 0, 0],
        "the reader, not the last lane to arrive"
    );
}

#[test]
fn a_half_warp_mask_shuffles_within_its_half() {
    // `up` reads below, so every source of lanes 0..16 is in the mask.
    let m = shuffle_module(ShuffleMode::Up, Mask::All(0xffff), 1, Some(16));
    let got = run_shuffle(&m, 32);
    for lane in 0..16u32 {
        let want = if lane == 0 { 0 } else { (lane - 1) * 10 };
        assert_eq!(got[lane as usize], want, "lane {lane}");
    }
    assert!(
        got[16..].iter().all(|&v| v == 0),
        "exited lanes wrote nothing"
    );
}

#[test]
fn a_shuffle_from_a_lane_that_exited_is_a_warp_fault() {
    // Lanes 16.. exit; the rest name the full warp, and lane 15 reads 16.
    let m = shuffle_module(ShuffleMode::Down, Mask::All(u32::MAX), 1, Some(16));
    let e = warp_fault(&m, 32);
    // Found when the last lane exits, and reported at the reader's shuffle.
    assert!(
        e.message
            .contains("lane 15 shuffles (down) from lane 16, which has exited"),
        "{e}"
    );
    assert_eq!(e.thread, [15, 0, 0], "{e}");
}

#[test]
fn exited_lanes_of_a_full_mask_are_not_waited_for() {
    // PTX waits for the non-exited lanes of the mask: lanes 16.. return
    // early, the rest shuffle `up` over the full warp, reading only below.
    let m = shuffle_module(ShuffleMode::Up, Mask::All(u32::MAX), 1, Some(16));
    let got = run_shuffle(&m, 32);
    for lane in 0..16u32 {
        let want = if lane == 0 { 0 } else { (lane - 1) * 10 };
        assert_eq!(got[lane as usize], want, "lane {lane}");
    }
}

/// Lanes 20.. of one warp return; the others take, over the full mask,
/// the ballot of `lane % 3 == 0`, `all(lane < 20)`, the sum of their lane
/// numbers, `match.all` of a constant and `activemask`: each over the 20
/// live lanes only.
#[test]
fn collectives_over_a_full_mask_see_only_the_live_lanes() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "live", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let gid = global_index(&mut b);
    let lane = b.special_reg(SpecialReg::LaneId);
    let twenty = b.iconst(i32t, 20);
    let leave = b.icmp(IntCC::Uge, lane, twenty);
    let (exit, stay) = (b.create_block(), b.create_block());
    b.brif(leave, exit, &[], stay, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    b.switch_to_block(stay);
    let full = b.iconst(i32t, i128::from(u32::MAX));
    let three = b.iconst(i32t, 3);
    let rem = b.binary(BinaryOp::URem, lane, three);
    let zero = b.iconst(i32t, 0);
    let every_third = b.icmp(IntCC::Eq, rem, zero);
    let ballot = b.vote(VoteMode::Ballot, full, every_third);
    let below = b.icmp(IntCC::Ult, lane, twenty);
    let all = b.vote(VoteMode::All, full, below);
    let all = b.cast(CastOp::ZExt, all, i32t);
    let sum = b.warp_reduce(ReduceOp::Add, full, lane);
    let seven = b.iconst(i32t, 7);
    let same = b.warp_match(MatchMode::All, full, seven);
    let active = b.active_mask();
    store_row(&mut b, out, gid, &[ballot, all, sum, same, active]);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let buf = dev.zeroed::<u32>(32 * 5).unwrap();
    dev.launch(
        h,
        "live",
        LaunchConfig::linear(1, 32),
        &[KernelArg::Buffer(buf)],
    )
    .unwrap();
    let got: Vec<u32> = dev.download(buf).unwrap();
    let live = (1u32 << 20) - 1;
    let ballot = (0..20)
        .filter(|l| l % 3 == 0)
        .fold(0u32, |b, l| b | (1 << l));
    for t in 0..20 {
        assert_eq!(
            &got[t * 5..t * 5 + 5],
            &[ballot, 1, 190, live, live],
            "thread {t}"
        );
    }
    assert!(
        got[100..].iter().all(|&v| v == 0),
        "exited lanes wrote nothing"
    );
}

#[test]
fn a_full_mask_in_a_partial_warp_is_a_warp_fault() {
    // 40 threads: the second warp has lanes 0..8 only.
    let m = shuffle_module(ShuffleMode::Down, Mask::All(u32::MAX), 1, None);
    let e = warp_fault(&m, 40);
    assert!(e.message.contains("does not have"), "{e}");
    assert_eq!(e.thread, [32, 0, 0], "the first lane of the partial warp");
}

/// Even lanes return while odd lanes call `__activemask`: each odd lane
/// arrives when a different set of lanes has exited, and all of them get
/// the live lanes, `0xaaaa_aaaa`, not a mask mismatch.
#[test]
fn active_mask_gathers_the_live_lanes_while_others_exit() {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "odd", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let gid = global_index(&mut b);
    let lane = b.special_reg(SpecialReg::LaneId);
    let one = b.iconst(i32t, 1);
    let bit = b.binary(BinaryOp::And, lane, one);
    let zero = b.iconst(i32t, 0);
    let even = b.icmp(IntCC::Eq, bit, zero);
    let (exit, stay) = (b.create_block(), b.create_block());
    b.brif(even, exit, &[], stay, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    b.switch_to_block(stay);
    let active = b.active_mask();
    let gid64 = b.cast(CastOp::ZExt, gid, i64t);
    let dst = b.gep(out, &[GepIndex::Value(gid64)]);
    b.store(active, dst);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let buf = dev.zeroed::<u32>(32).unwrap();
    dev.launch(
        h,
        "odd",
        LaunchConfig::linear(1, 32),
        &[KernelArg::Buffer(buf)],
    )
    .unwrap();
    let got: Vec<u32> = dev.download(buf).unwrap();
    for (t, v) in got.iter().enumerate() {
        let want = if t % 2 == 1 { 0xaaaa_aaaa } else { 0 };
        assert_eq!(*v, want, "thread {t}");
    }
}

/// `out[gid] = (ballot, all, any)` of `lane % k == 0` over the full warp.
#[test]
fn votes_see_every_lane_of_the_mask() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "vote", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let gid = global_index(&mut b);
    let lane = b.special_reg(SpecialReg::LaneId);
    let full = b.iconst(i32t, i128::from(u32::MAX));
    let three = b.iconst(i32t, 3);
    let rem = b.binary(BinaryOp::URem, lane, three);
    let zero = b.iconst(i32t, 0);
    let pred = b.icmp(IntCC::Eq, rem, zero);
    let ballot = b.vote(VoteMode::Ballot, full, pred);
    let all = b.vote(VoteMode::All, full, pred);
    let any = b.vote(VoteMode::Any, full, pred);
    let (all, any) = (
        b.cast(CastOp::ZExt, all, i32t),
        b.cast(CastOp::ZExt, any, i32t),
    );
    let active = b.active_mask();
    store_row(&mut b, out, gid, &[ballot, all, any, active]);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let buf = dev.zeroed::<u32>(32 * 4).unwrap();
    dev.launch(
        h,
        "vote",
        LaunchConfig::linear(1, 32),
        &[KernelArg::Buffer(buf)],
    )
    .unwrap();
    let got: Vec<u32> = dev.download(buf).unwrap();
    let want_ballot = (0..32)
        .filter(|l| l % 3 == 0)
        .fold(0u32, |b, l| b | (1 << l));
    for t in 0..32 {
        assert_eq!(
            &got[t * 4..t * 4 + 4],
            &[want_ballot, 0, 1, u32::MAX],
            "thread {t}"
        );
    }
}

/// `out[gid * 17 ..]`: the eight reductions of `lane * 7 - 100` (signs
/// mixed, so signed and unsigned orders differ), `match.any` of `lane / 4`
/// as an `i32` and shifted into the high word of an `i64`, `match.all` of
/// a constant and of the lane, and the five lane masks.
#[test]
fn reductions_matches_and_lane_masks_see_every_lane_of_the_mask() {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "collect", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let gid = global_index(&mut b);
    let lane = b.special_reg(SpecialReg::LaneId);
    let full = b.iconst(i32t, i128::from(u32::MAX));
    let seven = b.iconst(i32t, 7);
    let hundred = b.iconst(i32t, 100);
    let scaled = b.imul(lane, seven);
    let value = b.binary(BinaryOp::Sub, scaled, hundred);
    let mut results: Vec<Value> = ReduceOp::ALL
        .iter()
        .map(|&op| b.warp_reduce(op, full, value))
        .collect();
    let two = b.iconst(i32t, 2);
    let group = b.binary(BinaryOp::LShr, lane, two);
    results.push(b.warp_match(MatchMode::Any, full, group));
    let group64 = b.cast(CastOp::ZExt, group, i64t);
    let thirty_two = b.iconst(i64t, 32);
    let high = b.binary(BinaryOp::Shl, group64, thirty_two);
    results.push(b.warp_match(MatchMode::Any, full, high));
    let constant = b.iconst(i32t, 42);
    results.push(b.warp_match(MatchMode::All, full, constant));
    results.push(b.warp_match(MatchMode::All, full, lane));
    for reg in [
        SpecialReg::LaneMaskLt,
        SpecialReg::LaneMaskLe,
        SpecialReg::LaneMaskEq,
        SpecialReg::LaneMaskGe,
        SpecialReg::LaneMaskGt,
    ] {
        results.push(b.special_reg(reg));
    }
    store_row(&mut b, out, gid, &results);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let buf = dev.zeroed::<u32>(64 * 17).unwrap();
    dev.launch(
        h,
        "collect",
        LaunchConfig::linear(1, 64),
        &[KernelArg::Buffer(buf)],
    )
    .unwrap();
    let got: Vec<u32> = dev.download(buf).unwrap();
    let values: Vec<i32> = (0..32).map(|l| l * 7 - 100).collect();
    let unsigned = || values.iter().map(|&v| v as u32);
    let reductions = [
        unsigned().fold(0u32, u32::wrapping_add),
        *values.iter().min().unwrap() as u32,
        *values.iter().max().unwrap() as u32,
        unsigned().min().unwrap(),
        unsigned().max().unwrap(),
        unsigned().fold(u32::MAX, |a, v| a & v),
        unsigned().fold(0, |a, v| a | v),
        unsigned().fold(0, |a, v| a ^ v),
    ];
    for t in 0..64 {
        let lane = (t % 32) as u32;
        let eq = 1u32 << lane;
        let group = 0xfu32 << (lane / 4 * 4);
        let mut want = reductions.to_vec();
        want.extend([group, group, u32::MAX, 0]);
        want.extend([eq - 1, eq | (eq - 1), eq, !(eq - 1), !(eq | (eq - 1))]);
        assert_eq!(&got[t * 17..t * 17 + 17], &want[..], "thread {t}");
    }
}

/// Lanes of one mask at two different reductions (`add` on even lanes,
/// `min` on odd ones) execute two instructions, which the GPU leaves
/// undefined: a warp fault, not either sum.
#[test]
fn lanes_at_different_reductions_are_a_warp_fault() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "shuffle", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let lane = b.special_reg(SpecialReg::LaneId);
    let full = b.iconst(i32t, i128::from(u32::MAX));
    let one = b.iconst(i32t, 1);
    let odd = b.binary(BinaryOp::And, lane, one);
    let zero = b.iconst(i32t, 0);
    let is_even = b.icmp(IntCC::Eq, odd, zero);
    let (even, odd_block, join) = (b.create_block(), b.create_block(), b.create_block());
    let joined = b.append_block_param(join, i32t);
    b.brif(is_even, even, &[], odd_block, &[]);
    b.switch_to_block(even);
    let sum = b.warp_reduce(ReduceOp::Add, full, lane);
    b.jump(join, &[sum]);
    b.switch_to_block(odd_block);
    let min = b.warp_reduce(ReduceOp::Min, full, lane);
    b.jump(join, &[min]);
    b.switch_to_block(join);
    b.store(joined, out);
    b.ret(None);
    let err = warp_fault(&m, 32);
    let text = err.to_string();
    assert!(text.contains("reduce"), "{text}");
}

#[test]
fn shuffles_with_a_width_stay_in_their_group() {
    let full = Mask::All(u32::MAX);
    // Groups of 8: `down 1` keeps its own value on each group's last lane.
    let c = ShuffleMode::Down.clamp_for_width(8);
    let got = run_shuffle(
        &shuffle_module_with_clamp(ShuffleMode::Down, full, 1, None, Some(c)),
        32,
    );
    let want: Vec<u32> = (0..32)
        .map(|l| if l % 8 == 7 { l * 10 } else { (l + 1) * 10 })
        .collect();
    assert_eq!(got, want);
    // Groups of 4: `idx 6` reads lane 6 % 4 = 2 of its own group.
    let c = ShuffleMode::Idx.clamp_for_width(4);
    let got = run_shuffle(
        &shuffle_module_with_clamp(ShuffleMode::Idx, full, 6, None, Some(c)),
        32,
    );
    let want: Vec<u32> = (0..32).map(|l| (l / 4 * 4 + 2) * 10).collect();
    assert_eq!(got, want);
}

#[test]
fn a_width_that_is_not_a_power_of_two_is_a_warp_fault() {
    // What CUDA's `width = 3` makes: PTX defines a result, CUDA does not.
    let c = ShuffleMode::Down.clamp_for_width(3);
    let m = shuffle_module_with_clamp(ShuffleMode::Down, Mask::All(u32::MAX), 1, None, Some(c));
    let e = warp_fault(&m, 32);
    assert!(e.to_string().contains("not a power of two"), "{e}");
}
