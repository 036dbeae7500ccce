//! Kernels that run correctly on the virtual device, with values checked.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use device_ir::*;
use gpu_harness::device::virt::FaultKind;
use gpu_harness::device::{Aggregate, Device, DeviceError, DeviceExt, KernelArg, LaunchConfig};

#[test]
fn saxpy() {
    let m = saxpy_module();
    let (mut dev, h) = load(&m);
    let x: Vec<f32> = (0..10).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..10).map(|i| 100.0 + i as f32).collect();
    let xb = dev.upload(&x).unwrap();
    let yb = dev.upload(&y).unwrap();
    let args = [
        KernelArg::I32(10),
        KernelArg::F32(2.0),
        KernelArg::Buffer(xb),
        KernelArg::Buffer(yb),
    ];
    // 12 threads for 10 elements: the last two must stay in bounds.
    dev.launch(h, "saxpy", LaunchConfig::linear(3, 4), &args)
        .unwrap();
    let got: Vec<f32> = dev.download(yb).unwrap();
    let want: Vec<f32> = (0..10).map(|i| 2.0 * i as f32 + 100.0 + i as f32).collect();
    assert_eq!(got, want);
}

#[test]
fn saxpy_without_the_bounds_check_is_out_of_bounds() {
    let m = saxpy_module();
    let (mut dev, h) = load(&m);
    let xb = dev.upload(&[1.0f32; 10]).unwrap();
    let yb = dev.upload(&[1.0f32; 10]).unwrap();
    // n = 12 lies about the buffers' length.
    let args = [
        KernelArg::I32(12),
        KernelArg::F32(2.0),
        KernelArg::Buffer(xb),
        KernelArg::Buffer(yb),
    ];
    let e = expect_fault(
        &mut dev,
        h,
        "saxpy",
        LaunchConfig::linear(3, 4),
        &args,
        FaultKind::OutOfBounds,
    );
    assert!(e.message.contains("buffer 0"), "{e}");
    assert_eq!(e.block, [2, 0, 0]);
    assert_eq!(e.thread, [2, 0, 0]);
}

/// A tree reduction of 8 values per block in a shared array, with barriers.
/// Without `with_barriers`, the first barrier is left out.
fn reduction_module(with_barriers: bool) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let arr = m.types.array(i32t, 8);
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let tile = m.add_global(GlobalData {
        symbol: "tile".to_owned(),
        space: AddressSpace::Shared,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 32,
        init: None,
    });
    let k = kernel(&mut m, "reduce", &[pg, pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let (input, out) = (p[0], p[1]);
    let t = b.special_reg(SpecialReg::TidX);
    let g = global_index(&mut b);
    let tile_p = b.global_addr(tile, arr);
    let zero = b.iconst(i32t, 0);
    let mine = b.gep(tile_p, &[GepIndex::Const(0), GepIndex::Value(t)]);
    let src = b.gep(input, &[GepIndex::Value(g)]);
    let v = b.load(i32t, src);
    b.store(v, mine);
    if with_barriers {
        b.barrier();
    }
    let head = b.create_block();
    let s = b.append_block_param(head, i32t);
    let add = b.create_block();
    let sync = b.create_block();
    let done = b.create_block();
    let write = b.create_block();
    let exit = b.create_block();
    let four = b.iconst(i32t, 4);
    b.jump(head, &[four]);
    b.switch_to_block(head);
    let more = b.icmp(IntCC::Sgt, s, zero);
    b.brif(more, sync, &[], done, &[]);
    b.switch_to_block(sync);
    let active = b.icmp(IntCC::Slt, t, s);
    b.brif(active, add, &[], write, &[]);
    b.switch_to_block(add);
    let other = b.iadd(t, s);
    let theirs = b.gep(tile_p, &[GepIndex::Const(0), GepIndex::Value(other)]);
    let a = b.load(i32t, mine);
    let c = b.load(i32t, theirs);
    let sum = b.iadd(a, c);
    b.store(sum, mine);
    b.jump(write, &[]);
    // `write` is the loop latch: barrier, halve, repeat.
    b.switch_to_block(write);
    b.barrier();
    let one = b.iconst(i32t, 1);
    let half = b.binary(BinaryOp::AShr, s, one);
    b.jump(head, &[half]);
    b.switch_to_block(done);
    let first = b.icmp(IntCC::Eq, t, zero);
    let store_block = b.create_block();
    b.brif(first, store_block, &[], exit, &[]);
    b.switch_to_block(store_block);
    let total = b.load(i32t, mine);
    let ctaid = b.special_reg(SpecialReg::CtaidX);
    let dst = b.gep(out, &[GepIndex::Value(ctaid)]);
    b.store(total, dst);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

#[test]
fn shared_tree_reduction_with_barriers() {
    let m = reduction_module(true);
    let (mut dev, h) = load(&m);
    let input: Vec<i32> = (1..=16).collect();
    let ib = dev.upload(&input).unwrap();
    let ob = dev.zeroed::<i32>(2).unwrap();
    let args = [KernelArg::Buffer(ib), KernelArg::Buffer(ob)];
    dev.launch(h, "reduce", LaunchConfig::linear(2, 8), &args)
        .unwrap();
    assert_eq!(dev.download::<i32>(ob).unwrap(), vec![36, 100]);
}

#[test]
fn reduction_without_its_first_barrier_reads_unwritten_shared_memory() {
    let m = reduction_module(false);
    let (mut dev, h) = load(&m);
    let ib = dev.upload(&(1..=16).collect::<Vec<i32>>()).unwrap();
    let ob = dev.zeroed::<i32>(2).unwrap();
    let args = [KernelArg::Buffer(ib), KernelArg::Buffer(ob)];
    let e = expect_fault(
        &mut dev,
        h,
        "reduce",
        LaunchConfig::linear(2, 8),
        &args,
        FaultKind::Uninit,
    );
    assert!(e.message.contains("shared @tile of block 0"), "{e}");
}

#[test]
fn read_only_global_with_a_relocation_read_through_two_loads() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let i64t = m.types.i64();
    let pgen = m.types.ptr(i32t, AddressSpace::Generic);
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let leaf = ro_global(&mut m, "leaf", vec![5, 0, 0, 0, 9, 0, 0, 0], 4);
    let outer = m.add_global(GlobalData {
        symbol: "outer".to_owned(),
        space: AddressSpace::Global,
        mutable: false,
        linkage: Linkage::Internal,
        align: 8,
        size: 8,
        init: Some(Initializer {
            spans: vec![Span::Bytes(vec![4, 0, 0, 0, 0, 0, 0, 0])],
            relocations: vec![Relocation {
                offset: 0,
                target: leaf.into(),
                addend: 4,
            }],
        }),
    });
    let k = kernel(&mut m, "k", &[pg, pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let slot = b.global_addr(outer, pgen);
    let inner = b.load(pgen, slot);
    let v = b.load(i32t, inner);
    b.store(v, p[0]);
    // The relocated pointer and the leaf's own address agree (pointer identity).
    let direct = b.global_addr(leaf, i32t);
    let generic = b.addrspacecast(direct, AddressSpace::Generic);
    let four = b.iconst(i64t, 4);
    let direct4 = b.byte_offset(generic, four);
    let same = b.icmp(IntCC::Eq, inner, direct4);
    let wide = b.cast(CastOp::ZExt, same, i32t);
    b.store(wide, p[1]);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<i32>(1).unwrap();
    let eq = dev.zeroed::<i32>(1).unwrap();
    dev.launch(
        h,
        "k",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out), KernelArg::Buffer(eq)],
    )
    .unwrap();
    assert_eq!(dev.download::<i32>(out).unwrap(), vec![9]);
    assert_eq!(dev.download::<i32>(eq).unwrap(), vec![1]);
}

#[test]
fn calls_switch_and_atomics() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    // pick(x) = switch x { 0 => 10, 1 => 20, _ => 30 }
    let pick = helper(&mut m, "pick", &[i32t], Some(i32t));
    let mut b = FunctionBuilder::new(&mut m, pick);
    let x = b.block_params(b.entry_block())[0];
    let ret = b.create_block();
    let r = b.append_block_param(ret, i32t);
    let arms: Vec<Block> = (0..3).map(|_| b.create_block()).collect();
    b.switch(
        x,
        BlockCall::new(arms[2], &[]),
        vec![
            (0, BlockCall::new(arms[0], &[])),
            (1, BlockCall::new(arms[1], &[])),
        ],
    );
    for (arm, value) in arms.iter().zip([10, 20, 30]) {
        b.switch_to_block(*arm);
        let v = b.iconst(i32t, value);
        b.jump(ret, &[v]);
    }
    b.switch_to_block(ret);
    b.ret(Some(r));
    let k = kernel(&mut m, "k", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let counter = b.block_params(b.entry_block())[0];
    let t = b.special_reg(SpecialReg::TidX);
    let v = b.call(pick, &[t]).unwrap();
    b.atomic_rmw(RmwOp::Add, counter, v, Ordering::Relaxed, Scope::Gpu);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let c = dev.zeroed::<i32>(1).unwrap();
    dev.launch(h, "k", LaunchConfig::linear(1, 4), &[KernelArg::Buffer(c)])
        .unwrap();
    assert_eq!(dev.download::<i32>(c).unwrap(), vec![10 + 20 + 30 + 30]);
}

#[test]
fn release_acquire_flag_spins_until_the_writer_runs() {
    // Thread 0 spins on the flag that thread 1 sets after writing the data; the
    // schedule must preempt the spinner for the writer to run.
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "mp", &[pg, pg, pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let (data, flag, out) = (p[0], p[1], p[2]);
    let t = b.special_reg(SpecialReg::TidX);
    let zero = b.iconst(i32t, 0);
    let reader = b.create_block();
    let writer = b.create_block();
    let got = b.create_block();
    let exit = b.create_block();
    let is_reader = b.icmp(IntCC::Eq, t, zero);
    b.brif(is_reader, reader, &[], writer, &[]);
    b.switch_to_block(writer);
    let v = b.iconst(i32t, 42);
    b.store(v, data);
    let one = b.iconst(i32t, 1);
    b.atomic_store(one, flag, Ordering::Release, Scope::Gpu);
    b.jump(exit, &[]);
    b.switch_to_block(reader);
    let f = b.atomic_load(i32t, flag, Ordering::Acquire, Scope::Gpu);
    let set = b.icmp(IntCC::Ne, f, zero);
    b.brif(set, got, &[], reader, &[]);
    b.switch_to_block(got);
    let d = b.load(i32t, data);
    b.store(d, out);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let data = dev.alloc(4).unwrap();
    let flag = dev.zeroed::<i32>(1).unwrap();
    let out = dev.zeroed::<i32>(1).unwrap();
    let args = [
        KernelArg::Buffer(data),
        KernelArg::Buffer(flag),
        KernelArg::Buffer(out),
    ];
    dev.launch(h, "mp", LaunchConfig::linear(1, 2), &args)
        .unwrap();
    assert_eq!(dev.download::<i32>(out).unwrap(), vec![42]);
}

#[test]
fn launch_arguments_are_checked() {
    let m = saxpy_module();
    let (mut dev, h) = load(&m);
    let cfg = LaunchConfig::linear(1, 1);
    let e = dev
        .launch(h, "saxpy", cfg, &[KernelArg::I32(1)])
        .unwrap_err();
    assert!(matches!(e, DeviceError::BadArgs { .. }), "{e}");
    let b = dev.alloc(4).unwrap();
    let wrong = [
        KernelArg::I64(1),
        KernelArg::F32(1.0),
        KernelArg::Buffer(b),
        KernelArg::Buffer(b),
    ];
    let e = dev.launch(h, "saxpy", cfg, &wrong).unwrap_err();
    assert!(e.to_string().contains("parameter 0 has type i32"), "{e}");
    let e = dev.launch(h, "nope", cfg, &[]).unwrap_err();
    assert!(matches!(e, DeviceError::NoSuchKernel(_)), "{e}");
}

#[test]
fn unverified_modules_and_unwritten_readback_are_refused() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let k = kernel(&mut m, "k", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let f = b.f32const(1.0);
    b.binary(BinaryOp::Add, f, f);
    let _ = i32t;
    b.ret(None);
    let mut dev = gpu_harness::device::virt::VirtualDevice::new();
    let e = dev.load(&gpu_harness::device::Program::ir(&m)).unwrap_err();
    assert!(matches!(e, DeviceError::Verify(_)), "{e}");
    let buf = dev.alloc(8).unwrap();
    dev.write(buf, 0, &[1, 2, 3, 4]).unwrap();
    let e = dev.read(buf).unwrap_err();
    assert!(
        matches!(e, DeviceError::UninitReadback { offset: 4, .. }),
        "{e}"
    );
    let e = dev.write(buf, 6, &[0; 4]).unwrap_err();
    assert!(matches!(e, DeviceError::OutOfRange { .. }), "{e}");
}

#[test]
fn auto_reports_which_device_it_chose() {
    let chosen = gpu_harness::device::auto(Default::default());
    match &chosen.no_gpu {
        Some(reason) => {
            assert!(reason.to_string().starts_with("no GPU"));
            assert_eq!(chosen.device.describe(), "virtual device");
        }
        None => assert!(chosen.device.describe().contains("CUDA device")),
    }
}

/// `k(out, p)`: `out[0] = p[0] + p[2]` for a `byval` `[3 x i32]`, and, when
/// `write`, `p[1] = 5` first.
fn byval_module(write: bool) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let words = m.types.array(i32t, 3);
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let by_value = m.types.ptr(words, AddressSpace::Generic);
    let k = kernel(&mut m, "k", &[pg, by_value]);
    m.functions[k].param_attrs = vec![ParamAttrs::empty(), ParamAttrs::BYVAL];
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let at =
        |b: &mut FunctionBuilder<'_>, i| b.gep(p[1], &[GepIndex::Const(0), GepIndex::Const(i)]);
    if write {
        let five = b.iconst(i32t, 5);
        let second = at(&mut b, 1);
        b.store(five, second);
    }
    let (first, third) = (at(&mut b, 0), at(&mut b, 2));
    let x = b.load(i32t, first);
    let z = b.load(i32t, third);
    let sum = b.iadd(x, z);
    b.store(sum, p[0]);
    b.ret(None);
    m
}

/// An aggregate by value is the launch's copy of exactly its bytes, which
/// the kernel reads and may not write (the lowering copies one it writes).
#[test]
fn a_byval_parameter_is_the_launchs_read_only_copy_of_its_bytes() {
    let bytes: Vec<u8> = [40u32, 0xdead, 2]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let (mut dev, h) = load(&byval_module(false));
    let out = dev.upload(&[0u32]).expect("upload");
    let one = LaunchConfig::linear(1, 1);
    dev.launch(
        h,
        "k",
        one,
        &[
            KernelArg::Buffer(out),
            KernelArg::Bytes(bytes.clone().into()),
        ],
    )
    .expect("launch");
    assert_eq!(dev.download::<u32>(out).expect("download"), [42]);
    for (arg, why) in [
        (
            KernelArg::Bytes(bytes[..11].to_vec().into()),
            "parameter 1 is an aggregate of 12 bytes by value; 11 bytes given",
        ),
        (
            KernelArg::U32(1),
            "parameter 1 is an aggregate of 12 bytes by value, which argument U32(1) is not",
        ),
        (
            KernelArg::Bytes(Aggregate {
                bytes: bytes.clone(),
                pointers: vec![(8, out)],
            }),
            "parameter 1 is an aggregate of 12 bytes by value; a pointer field at byte 8 does not fit",
        ),
    ] {
        match dev.launch(h, "k", one, &[KernelArg::Buffer(out), arg]) {
            Err(DeviceError::BadArgs { message, .. }) => {
                assert!(message.contains(why), "{message}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    let (mut dev, h) = load(&byval_module(true));
    let out = dev.upload(&[0u32]).expect("upload");
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        one,
        &[KernelArg::Buffer(out), KernelArg::Bytes(bytes.into())],
        FaultKind::ReadOnly,
    );
    assert!(e.message.contains("by-value kernel parameter 1"), "{e}");
}

/// A kernel storing the addresses of `inc` (twice) and `dec` as integers,
/// and, when `load_through`, loading through `inc`'s.
fn function_address_module(load_through: bool) -> Module {
    let mut m = Module::new();
    let (i8t, i32t, i64t) = (m.types.i8(), m.types.i32(), m.types.i64());
    let mut helper = |name: &str| {
        let f = m.declare_function(
            name,
            FunctionKind::Device,
            Linkage::Internal,
            Signature::new(&[i32t], Some(i32t)),
        );
        let mut b = FunctionBuilder::new(&mut m, f);
        let x = b.block_params(b.entry_block())[0];
        b.ret(Some(x));
        f
    };
    let (inc, dec) = (helper("inc"), helper("dec"));
    let out = m.types.ptr(i64t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let o = b.block_params(b.entry_block())[0];
    for (i, f) in [inc, dec, inc].into_iter().enumerate() {
        let p = b.func_addr(f, i8t);
        if load_through && i == 0 {
            b.load(i8t, p);
        }
        let a = b.cast(CastOp::PtrToInt, p, i64t);
        let at = b.gep(o, &[GepIndex::Const(i as i64)]);
        b.store(a, at);
    }
    b.ret(None);
    m
}

/// A function's address (a Rust `fn` pointer used as a value) is nonzero,
/// the same each time it is taken, distinct from another function's, and
/// no memory: a load through it faults.
#[test]
fn a_function_address_is_a_distinct_value_and_no_memory() {
    let (mut dev, h) = load(&function_address_module(false));
    let out = dev.zeroed::<u64>(3).unwrap();
    let one = LaunchConfig::linear(1, 1);
    dev.launch(h, "k", one, &[KernelArg::Buffer(out)]).unwrap();
    let got: Vec<u64> = dev.download(out).unwrap();
    assert!(got[0] != 0 && got[1] != 0, "{got:x?}");
    assert_eq!(got[0], got[2], "one function, one address");
    assert_ne!(got[0], got[1], "two functions, two addresses");
    let (mut dev, h) = load(&function_address_module(true));
    let out = dev.zeroed::<u64>(3).unwrap();
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        one,
        &[KernelArg::Buffer(out)],
        FaultKind::OutOfBounds,
    );
    assert!(e.message.contains("the code of @inc"), "{e}");
}

/// A kernel `k(out, sel)` that calls through a pointer as `fn(i32) -> i32`
/// with 41 and stores the result in `out[0]`: `inc`'s address when `sel`
/// is 0, `wide`'s (`fn(i64) -> i64`) when 1, and `out` itself when 2. The
/// verifier cannot see through the `select`, so the device must check.
fn indirect_call_module() -> Module {
    let mut m = Module::new();
    let (i8t, i32t, i64t) = (m.types.i8(), m.types.i32(), m.types.i64());
    let inc = helper(&mut m, "inc", &[i32t], Some(i32t));
    let mut b = FunctionBuilder::new(&mut m, inc);
    let x = b.block_params(b.entry_block())[0];
    let one = b.iconst(i32t, 1);
    let r = b.binary(BinaryOp::Add, x, one);
    b.ret(Some(r));
    let wide = helper(&mut m, "wide", &[i64t], Some(i64t));
    let mut b = FunctionBuilder::new(&mut m, wide);
    let x = b.block_params(b.entry_block())[0];
    b.ret(Some(x));
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[out, i32t]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = b.block_params(b.entry_block()).to_vec();
    let generic = b.types().ptr(i32t, AddressSpace::Generic);
    let generic_i8 = b.types().ptr(i8t, AddressSpace::Generic);
    let out_generic = b.cast(CastOp::AddrSpaceCast, ps[0], generic);
    let out_i8 = b.cast(CastOp::Bitcast, out_generic, generic_i8);
    let (to_inc, to_wide) = (b.func_addr(inc, i8t), b.func_addr(wide, i8t));
    let (one, two) = (b.iconst(i32t, 1), b.iconst(i32t, 2));
    let is_one = b.icmp(IntCC::Eq, ps[1], one);
    let is_two = b.icmp(IntCC::Eq, ps[1], two);
    let f = b.select(is_one, to_wide, to_inc);
    let f = b.select(is_two, out_i8, f);
    let arg = b.iconst(i32t, 41);
    let sig = Signature::new(&[i32t], Some(i32t));
    let r = b.call_indirect(f, sig, &[arg]).expect("a result");
    b.store(r, ps[0]);
    b.ret(None);
    m
}

/// A call through a function's address runs that function; through another
/// function's address of another signature, or through a pointer to memory,
/// it is a `BadCall` fault naming what the pointer held.
#[test]
fn an_indirect_call_runs_its_target_and_checks_it() {
    let m = indirect_call_module();
    let one = LaunchConfig::linear(1, 1);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<u32>(1).unwrap();
    dev.launch(h, "k", one, &[KernelArg::Buffer(out), KernelArg::I32(0)])
        .unwrap();
    assert_eq!(dev.download::<u32>(out).unwrap(), vec![42]);
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        one,
        &[KernelArg::Buffer(out), KernelArg::I32(1)],
        FaultKind::BadCall,
    );
    assert!(
        e.message
            .contains("as fn(i32) -> i32 of @wide, which is fn(i64) -> i64"),
        "{e}"
    );
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        one,
        &[KernelArg::Buffer(out), KernelArg::I32(2)],
        FaultKind::BadCall,
    );
    assert!(e.message.contains("a pointer to buffer"), "{e}");
}
