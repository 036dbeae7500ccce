//! Data-race detection and the per-thread step budget of the virtual device:
//! the race fixtures each give a `DeviceError::Race` naming both accesses, the
//! same one every run (that every other fixture is race-free is the oracle's
//! full run, `tests/suite.rs`, whose virtual device detects races); release/acquire orders
//! and relaxed does not; atomics never race with each other; a big grid of
//! short threads is not a timeout, and a thread that loops forever is one.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use device_ir::*;
use gpu_harness::device::virt::{AccessKind, FaultKind, Limits, RaceMemory, RaceReport};
use gpu_harness::device::{Device, DeviceError, DeviceExt, KernelArg, LaunchConfig};

/// Compiles race fixture `name`, runs it, and returns its race report.
fn fixture_race(name: &str) -> RaceReport {
    let (f, l) = compile_fixture(&fixture_dir(name));
    assert!(f.manifest.expect_race, "{name} should say expect_race");
    match run_fixture(&f, &l, Limits::default()) {
        Err(DeviceError::Race(r)) => *r,
        Err(e) => panic!("{name}: expected a race, got: {e}"),
        Ok(_) => panic!("{name}: expected a race, but the launch succeeded"),
    }
}

/// The report is the same in 20 runs of 20.
fn assert_deterministic(name: &str, first: &RaceReport) {
    let (f, l) = compile_fixture(&fixture_dir(name));
    for run in 0..20 {
        match run_fixture(&f, &l, Limits::default()) {
            Err(DeviceError::Race(r)) => assert_eq!(&*r, first, "{name}, run {run}"),
            other => panic!("{name}, run {run}: {:?}", other.err()),
        }
    }
}

#[test]
fn race_same_slot_names_both_writes() {
    let r = fixture_race("race_same_slot");
    eprintln!("{r}");
    for (side, thread) in [(&r.first, [0, 0, 0]), (&r.second, [1, 0, 0])] {
        assert_eq!(side.kind, AccessKind::Write, "{r}");
        assert_eq!(side.block, [0, 0, 0]);
        assert_eq!(side.thread, thread);
        assert_eq!(side.kernel, "race_same_slot");
        assert_eq!(side.function, "race_same_slot");
        assert!(side.inst.contains("store"), "{}", side.inst);
        assert_eq!(side.space, AddressSpace::Global);
        assert!(
            matches!(side.memory, RaceMemory::Buffer { buffer } if buffer.index() == 0),
            "{:?}",
            side.memory
        );
        assert_eq!((side.offset, side.size), (0, 4));
    }
    assert_eq!(r.first.inst, r.second.inst);
    assert_eq!(r.byte, 0);
    let text = r.to_string();
    assert!(text.starts_with("data race"), "{text}");
    assert!(
        text.contains("buffer 0") && text.contains("thread (1, 0, 0)"),
        "{text}"
    );
    let e = DeviceError::Race(Box::new(r.clone()));
    assert_eq!(e.race(), Some(&r));
    assert!(e.to_string().starts_with("data race"));
    assert_deterministic("race_same_slot", &r);
}

#[test]
fn race_shared_rmw_names_the_store_and_the_load() {
    let r = fixture_race("race_shared_rmw");
    eprintln!("{r}");
    // Thread 0 increments first; thread 1's load of the counter is unordered.
    assert_eq!(r.first.kind, AccessKind::Write, "{r}");
    assert_eq!(r.second.kind, AccessKind::Read, "{r}");
    assert_eq!((r.first.thread, r.second.thread), ([0, 0, 0], [1, 0, 0]));
    assert_eq!((r.first.block, r.second.block), ([0, 0, 0], [0, 0, 0]));
    assert!(r.first.inst.contains("store"), "{}", r.first.inst);
    assert!(r.second.inst.contains("load"), "{}", r.second.inst);
    for side in [&r.first, &r.second] {
        assert_eq!(side.function, "race_shared_rmw");
        assert_eq!(side.space, AddressSpace::Shared);
        assert!(
            matches!(&side.memory, RaceMemory::Shared { symbol, block: 0 } if symbol.contains("COUNTER")),
            "{:?}",
            side.memory
        );
        assert_eq!((side.offset, side.size), (0, 4));
    }
    assert_eq!(r.byte, 0);
    assert_deterministic("race_shared_rmw", &r);
}

#[test]
fn race_reduction_missing_sync_names_the_rounds() {
    let r = fixture_race("race_reduction_missing_sync");
    eprintln!("{r}");
    // Thread 0 runs its three rounds first and reads SUMS[1] in the last;
    // thread 1 then writes SUMS[1] in its first round.
    assert_eq!(
        (r.first.kind, r.second.kind),
        (AccessKind::Read, AccessKind::Write)
    );
    assert_eq!((r.first.thread, r.second.thread), ([0, 0, 0], [1, 0, 0]));
    for side in [&r.first, &r.second] {
        assert_eq!(side.kernel, "race_reduction_missing_sync");
        // The helper's device name carries its module path.
        assert!(side.function.ends_with("reduce_round"), "{}", side.function);
        assert_eq!(side.block, [0, 0, 0]);
        assert_eq!(side.space, AddressSpace::Shared);
        assert!(
            matches!(&side.memory, RaceMemory::Shared { symbol, block: 0 } if symbol.contains("SUMS")),
            "{:?}",
            side.memory
        );
        assert_eq!((side.offset, side.size), (4, 4));
    }
    assert_eq!(r.byte, 4);
    assert_deterministic("race_reduction_missing_sync", &r);
}

/// Message passing: the writer stores 42 to `data` (plain), then sets `flag`
/// with `store`; the reader spins on `flag` with `load`, then reads `data`
/// (plain) into `out`. With `fences`, a release fence comes before the flag
/// store and an acquire fence after the spin. The reader is global thread 0
/// and runs first; the writer is global thread 1 (the same block or the next,
/// as the launch makes it).
fn message_passing(store: Ordering, load: Ordering, fences: bool) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "mp", &[pg, pg, pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let (data, flag, out) = (p[0], p[1], p[2]);
    let g = global_index(&mut b);
    let zero = b.iconst(i32t, 0);
    let one = b.iconst(i32t, 1);
    let reader = b.create_block();
    let not_reader = b.create_block();
    let writer = b.create_block();
    let got = b.create_block();
    let exit = b.create_block();
    let is_reader = b.icmp(IntCC::Eq, g, zero);
    b.brif(is_reader, reader, &[], not_reader, &[]);
    b.switch_to_block(not_reader);
    let is_writer = b.icmp(IntCC::Eq, g, one);
    b.brif(is_writer, writer, &[], exit, &[]);
    b.switch_to_block(writer);
    let v = b.iconst(i32t, 42);
    b.store(v, data);
    if fences {
        b.fence(Ordering::Release, Scope::Gpu);
    }
    b.atomic_store(one, flag, store, Scope::Gpu);
    b.jump(exit, &[]);
    b.switch_to_block(reader);
    let f = b.atomic_load(i32t, flag, load, Scope::Gpu);
    let set = b.icmp(IntCC::Ne, f, zero);
    b.brif(set, got, &[], reader, &[]);
    b.switch_to_block(got);
    if fences {
        b.fence(Ordering::Acquire, Scope::Gpu);
    }
    let d = b.load(i32t, data);
    b.store(d, out);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

/// Runs [`message_passing`] on `cfg`; the value the reader saw, or the error.
fn run_mp(m: &Module, cfg: LaunchConfig) -> Result<i32, DeviceError> {
    let (mut dev, h) = load(m);
    let data = dev.alloc(4)?;
    let flag = dev.zeroed::<i32>(1)?;
    let out = dev.zeroed::<i32>(1)?;
    let args = [
        KernelArg::Buffer(data),
        KernelArg::Buffer(flag),
        KernelArg::Buffer(out),
    ];
    dev.launch(h, "mp", cfg, &args)?;
    Ok(dev.download::<i32>(out)?[0])
}

#[test]
fn release_acquire_orders_message_passing_and_relaxed_does_not() {
    let same_block = LaunchConfig::linear(1, 2);
    let two_blocks = LaunchConfig::linear(2, 1);
    use Ordering::{Acquire, Relaxed, Release, SeqCst};
    // Synchronizing pairs: race-free, in one block or across blocks.
    for (store, load, fences) in [
        (Release, Acquire, false),
        (SeqCst, SeqCst, false),
        (Relaxed, Relaxed, true),
    ] {
        let m = message_passing(store, load, fences);
        for cfg in [same_block, two_blocks] {
            match run_mp(&m, cfg) {
                Ok(got) => assert_eq!(got, 42),
                Err(e) => panic!("{store:?}/{load:?}, fences {fences}, {cfg:?}: {e}"),
            }
        }
    }
    // Relaxed on either side: the data accesses race.
    for (store, load) in [(Relaxed, Relaxed), (Relaxed, Acquire), (Release, Relaxed)] {
        let m = message_passing(store, load, false);
        for cfg in [same_block, two_blocks] {
            let r = match run_mp(&m, cfg) {
                Err(DeviceError::Race(r)) => r,
                other => panic!("{store:?}/{load:?} {cfg:?}: expected a race, got {other:?}"),
            };
            assert_eq!(r.first.kind, AccessKind::Write, "{r}");
            assert_eq!(r.second.kind, AccessKind::Read, "{r}");
            let writer = if cfg == same_block {
                ([0, 0, 0], [1, 0, 0])
            } else {
                ([1, 0, 0], [0, 0, 0])
            };
            assert_eq!((r.first.block, r.first.thread), writer, "{r}");
            assert_eq!((r.second.block, r.second.thread), ([0, 0, 0], [0, 0, 0]));
            assert!(matches!(r.first.memory, RaceMemory::Buffer { buffer } if buffer.index() == 0));
            assert_eq!(r.first.memory, r.second.memory);
        }
    }
}

/// Every thread adds 1 to `c[0]` (relaxed), reads it atomically, and
/// increments `c[1]` with a seq_cst compare-and-swap loop. With `plain_reader`,
/// thread 5 of block 0 also reads `c[0]` with a plain load.
fn counters(plain_reader: bool) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "count", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let c = b.block_params(b.entry_block())[0];
    let one = b.iconst(i32t, 1);
    b.atomic_rmw(RmwOp::Add, c, one, Ordering::Relaxed, Scope::Gpu);
    b.atomic_load(i32t, c, Ordering::Relaxed, Scope::Gpu);
    let c1 = b.gep(c, &[GepIndex::Const(1)]);
    let retry = b.create_block();
    let done = b.create_block();
    b.jump(retry, &[]);
    b.switch_to_block(retry);
    let old = b.atomic_load(i32t, c1, Ordering::Relaxed, Scope::Gpu);
    let new = b.iadd(old, one);
    let seen = b.atomic_cas(c1, old, new, Ordering::SeqCst, Scope::Gpu);
    let ok = b.icmp(IntCC::Eq, seen, old);
    b.brif(ok, done, &[], retry, &[]);
    b.switch_to_block(done);
    if plain_reader {
        let g = global_index(&mut b);
        let five = b.iconst(i32t, 5);
        let is5 = b.icmp(IntCC::Eq, g, five);
        let read = b.create_block();
        let exit = b.create_block();
        b.brif(is5, read, &[], exit, &[]);
        b.switch_to_block(read);
        b.load(i32t, c);
        b.jump(exit, &[]);
        b.switch_to_block(exit);
    }
    b.ret(None);
    m
}

#[test]
fn atomics_on_one_location_never_race_but_a_plain_read_of_it_does() {
    let m = counters(false);
    let (mut dev, h) = load(&m);
    let c = dev.zeroed::<i32>(2).unwrap();
    dev.launch(
        h,
        "count",
        LaunchConfig::linear(4, 64),
        &[KernelArg::Buffer(c)],
    )
    .unwrap();
    assert_eq!(dev.download::<i32>(c).unwrap(), vec![256, 256]);

    let m = counters(true);
    let (mut dev, h) = load(&m);
    let c = dev.zeroed::<i32>(2).unwrap();
    let e = dev
        .launch(
            h,
            "count",
            LaunchConfig::linear(4, 64),
            &[KernelArg::Buffer(c)],
        )
        .unwrap_err();
    let r = e.race().unwrap_or_else(|| panic!("expected a race: {e}"));
    // The seq_cst compare-and-swaps are `fence.sc`s, which the PTX model orders
    // and synchronizes: they order the adds of threads 0 to 4 before thread 5's
    // read. Thread 6's relaxed add is not ordered after that read.
    assert_eq!(r.first.kind, AccessKind::Read, "{r}");
    assert_eq!(r.first.thread, [5, 0, 0]);
    assert_eq!(r.second.kind, AccessKind::AtomicRmw, "{r}");
    assert_eq!(r.second.thread, [6, 0, 0]);
    assert!(r.second.inst.contains("atomic_rmw add relaxed"), "{r}");
    assert_eq!(r.byte, 0);
}

/// Thread 0 of every block writes `out[0]` after a barrier: barriers order a
/// block, not the grid.
#[test]
fn barriers_do_not_order_blocks() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let t = b.special_reg(SpecialReg::TidX);
    let zero = b.iconst(i32t, 0);
    b.barrier();
    let first = b.icmp(IntCC::Eq, t, zero);
    let write = b.create_block();
    let exit = b.create_block();
    b.brif(first, write, &[], exit, &[]);
    b.switch_to_block(write);
    let ctaid = b.special_reg(SpecialReg::CtaidX);
    b.store(ctaid, out);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<i32>(1).unwrap();
    let e = dev
        .launch(
            h,
            "k",
            LaunchConfig::linear(3, 4),
            &[KernelArg::Buffer(out)],
        )
        .unwrap_err();
    let r = e.race().unwrap_or_else(|| panic!("expected a race: {e}"));
    assert_eq!((r.first.block, r.second.block), ([0, 0, 0], [1, 0, 0]));
    assert_eq!((r.first.thread, r.second.thread), ([0, 0, 0], [0, 0, 0]));
    // One block alone is race-free: there is one writer.
    let out = dev.zeroed::<i32>(1).unwrap();
    dev.launch(
        h,
        "k",
        LaunchConfig::linear(1, 4),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
}

/// Every thread runs a loop of `iters` iterations, then writes its index to
/// `out[global index]`.
fn counting_loop(iters: i128) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let g = global_index(&mut b);
    let zero = b.iconst(i32t, 0);
    let n = b.iconst(i32t, iters);
    let head = b.create_block();
    let i = b.append_block_param(head, i32t);
    let done = b.create_block();
    b.jump(head, &[zero]);
    b.switch_to_block(head);
    let one = b.iconst(i32t, 1);
    let next = b.iadd(i, one);
    let more = b.icmp(IntCC::Slt, next, n);
    b.brif(more, head, &[next], done, &[]);
    b.switch_to_block(done);
    let dst = b.gep(out, &[GepIndex::Value(g)]);
    b.store(g, dst);
    b.ret(None);
    m
}

#[test]
fn a_big_grid_of_short_threads_is_not_a_timeout() {
    // 256 × 1024 threads of about 90 steps: 24 million steps in all, past the
    // old launch-wide budget of 20 million, far below the per-thread one.
    let m = counting_loop(20);
    let (mut dev, h) = load(&m);
    let n = 256 * 1024;
    let out = dev.zeroed::<i32>(n).unwrap();
    let start = Instant::now();
    dev.launch(
        h,
        "k",
        LaunchConfig::linear(256, 1024),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    eprintln!("256 x 1024 threads in {:?}", start.elapsed());
    let got = dev.download::<i32>(out).unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as i32));
}

#[test]
fn a_thread_that_loops_forever_is_a_timeout_naming_it() {
    // Thread 5 of block 2 never leaves its loop; the others finish.
    let mut m = Module::new();
    let i32t = m.types.i32();
    let k = kernel(&mut m, "k", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let g = global_index(&mut b);
    let stuck = b.iconst(i32t, 2 * 64 + 5);
    let is_stuck = b.icmp(IntCC::Eq, g, stuck);
    let spin = b.create_block();
    let exit = b.create_block();
    b.brif(is_stuck, spin, &[], exit, &[]);
    b.switch_to_block(spin);
    b.jump(spin, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    let limits = Limits {
        max_steps: 10_000,
        ..Limits::default()
    };
    let (mut dev, h) = load_with(&m, limits);
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        LaunchConfig::linear(4, 64),
        &[],
        FaultKind::Timeout,
    );
    assert_eq!((e.block, e.thread), ([2, 0, 0], [5, 0, 0]), "{e}");
    assert!(e.message.contains("10000 steps"), "{e}");
    assert!(e.message.contains("per thread"), "{e}");
    assert!(
        e.to_string().contains("block (2, 0, 0), thread (5, 0, 0)"),
        "{e}"
    );
}

/// Runs `f` `n` times and returns the fastest time.
fn best_of(n: usize, mut f: impl FnMut()) -> Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// What race detection costs: every fixture, and some larger launches, with it
/// on and off. Run with `--ignored --nocapture` (best in release).
#[test]
#[ignore]
fn race_detection_cost() {
    let off = Limits {
        detect_races: false,
        ..Limits::default()
    };
    let on = Limits::default();
    let mut total = (Duration::ZERO, Duration::ZERO);
    for dir in gpu_harness::fixture::Fixture::discover(&fixtures_root()).unwrap() {
        let f = gpu_harness::fixture::Fixture::load(&dir).unwrap();
        if f.manifest.expect_race || f.manifest.expect_error.is_some() || f.manifest.expect_trap {
            continue;
        }
        let (f, l) = compile_fixture(&dir);
        let a = best_of(20, || {
            run_fixture(&f, &l, off).unwrap();
        });
        let b = best_of(20, || {
            run_fixture(&f, &l, on).unwrap();
        });
        eprintln!("{:32} off {a:>10.2?} on {b:>10.2?}", f.name);
        total.0 += a;
        total.1 += b;
    }
    eprintln!(
        "fixtures: off {:?} on {:?} ratio {:.2}",
        total.0,
        total.1,
        total.1.as_secs_f64() / total.0.as_secs_f64()
    );
    let saxpy = |limits: Limits| {
        let m = saxpy_module();
        let (mut dev, h) = load_with(&m, limits);
        let n = 64 * 1024;
        let x = dev.upload(&vec![1.0f32; n]).unwrap();
        let y = dev.upload(&vec![2.0f32; n]).unwrap();
        let args = [
            KernelArg::I32(n as i32),
            KernelArg::F32(2.0),
            KernelArg::Buffer(x),
            KernelArg::Buffer(y),
        ];
        dev.launch(h, "saxpy", LaunchConfig::linear(256, 256), &args)
            .unwrap();
    };
    let counting = |limits: Limits| {
        let m = counters(false);
        let (mut dev, h) = load_with(&m, limits);
        let c = dev.zeroed::<i32>(2).unwrap();
        let cfg = LaunchConfig::linear(16, 256);
        dev.launch(h, "count", cfg, &[KernelArg::Buffer(c)])
            .unwrap();
    };
    let reduce = |limits: Limits| {
        let m = counting_loop(20);
        let (mut dev, h) = load_with(&m, limits);
        let out = dev.zeroed::<i32>(64 * 1024).unwrap();
        dev.launch(
            h,
            "k",
            LaunchConfig::linear(64, 1024),
            &[KernelArg::Buffer(out)],
        )
        .unwrap();
    };
    let cases: [(&str, &dyn Fn(Limits)); 3] = [
        ("saxpy, 64K threads", &saxpy),
        ("loop of 20 then a store, 64K threads", &reduce),
        ("relaxed add + seq_cst CAS loop, 4K threads", &counting),
    ];
    for (name, f) in cases {
        let a = best_of(3, || f(off));
        let b = best_of(3, || f(on));
        eprintln!(
            "{name}: off {a:?} on {b:?} ratio {:.2}",
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
