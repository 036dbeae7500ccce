//! Kernels the virtual device must refuse, each with the fault it must name.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use device_ir::*;
use gpu_harness::device::virt::{FaultKind, Limits};
use gpu_harness::device::{Device, DeviceExt, KernelArg, LaunchConfig};

const ONE: LaunchConfig = LaunchConfig {
    grid: gpu_harness::device::Dim3 { x: 1, y: 1, z: 1 },
    block: gpu_harness::device::Dim3 { x: 1, y: 1, z: 1 },
    shared_bytes: 0,
};

/// `make() -> *i32` returns a pointer to 42, kept in its own stack slot when
/// `in_alloca` (the old, dangling lowering) or in a read-only global otherwise;
/// kernel `k(out)` stores `*make()` into `out`.
fn pointer_returning_helper(in_alloca: bool) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pgen = m.types.ptr(i32t, AddressSpace::Generic);
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let konst = ro_global(&mut m, "konst", vec![42, 0, 0, 0], 4);
    let make = helper(&mut m, "make", &[], Some(pgen));
    let mut b = FunctionBuilder::new(&mut m, make);
    let p = if in_alloca {
        let slot = b.alloca(i32t);
        let v = b.iconst(i32t, 42);
        b.store(v, slot);
        slot
    } else {
        let g = b.global_addr(konst, i32t);
        b.addrspacecast(g, AddressSpace::Generic)
    };
    b.ret(Some(p));
    let k = kernel(&mut m, "k", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let p = b.call(make, &[]).unwrap();
    let v = b.load(i32t, p);
    b.store(v, out);
    b.ret(None);
    m
}

#[test]
fn load_through_a_helpers_dead_stack_slot_names_the_helper() {
    let m = pointer_returning_helper(true);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<i32>(1).unwrap();
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        ONE,
        &[KernelArg::Buffer(out)],
        FaultKind::StaleFrame,
    );
    assert_eq!(e.kernel, "k");
    assert_eq!(e.function, "k");
    assert!(e.inst.contains("= load i32"), "{e}");
    assert!(e.message.contains("dead frame of make"), "{e}");
    assert_eq!(
        e.to_string(),
        "kernel k, fn k, inst1 (v2 = load i32, v1, align 4): load through a pointer into \
         the dead frame of make (its stack slot inst0 died when make returned) \
         [block (0, 0, 0), thread (0, 0, 0)]"
    );
    // Nothing was written: the oracle never sees a silent value.
    assert_eq!(dev.download::<i32>(out).unwrap(), vec![0]);
}

#[test]
fn the_same_helper_returning_a_global_runs() {
    let m = pointer_returning_helper(false);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<i32>(1).unwrap();
    dev.launch(h, "k", ONE, &[KernelArg::Buffer(out)]).unwrap();
    assert_eq!(dev.download::<i32>(out).unwrap(), vec![42]);
}

#[test]
fn store_through_a_relocated_pointer_into_an_immutable_global() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pgen = m.types.ptr(i32t, AddressSpace::Generic);
    let leaf = ro_global(&mut m, "leaf", vec![7, 0, 0, 0], 4);
    let table = m.add_global(GlobalData {
        symbol: "table".to_owned(),
        space: AddressSpace::Global,
        mutable: false,
        linkage: Linkage::Internal,
        align: 8,
        size: 8,
        init: Some(Initializer {
            spans: vec![Span::Undef(8)],
            relocations: vec![Relocation {
                offset: 0,
                target: leaf.into(),
                addend: 0,
            }],
        }),
    });
    let k = kernel(&mut m, "k", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let slot = b.global_addr(table, pgen);
    let p = b.load(pgen, slot);
    let one = b.iconst(i32t, 1);
    b.store(one, p);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let e = expect_fault(&mut dev, h, "k", ONE, &[], FaultKind::ReadOnly);
    assert!(e.message.contains("read-only memory: global @leaf"), "{e}");
    assert!(e.inst.contains("store"), "{e}");
}

#[test]
fn reads_of_unwritten_memory() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "stack", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let out = b.block_params(b.entry_block())[0];
    let slot = b.alloca(i32t);
    let v = b.load(i32t, slot);
    b.store(v, out);
    b.ret(None);
    let k = kernel(&mut m, "copy", &[pg, pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let v = b.load(i32t, p[0]);
    b.store(v, p[1]);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let out = dev.zeroed::<i32>(1).unwrap();
    let e = expect_fault(
        &mut dev,
        h,
        "stack",
        ONE,
        &[KernelArg::Buffer(out)],
        FaultKind::Uninit,
    );
    assert!(e.message.contains("the stack slot inst0 of stack"), "{e}");
    let never_written = dev.alloc(4).unwrap();
    let args = [KernelArg::Buffer(never_written), KernelArg::Buffer(out)];
    let e = expect_fault(&mut dev, h, "copy", ONE, &args, FaultKind::Uninit);
    assert!(e.message.contains("byte 0 of buffer 1"), "{e}");
}

/// A word of a stack slot with only some bytes written (a struct's padding,
/// an enum variant's unwritten payload) travels to another stack slot, as a
/// GPU copies it; its written bytes read back there. Using it, or storing it
/// to a buffer, is a fault naming the first unwritten byte and its slot.
#[test]
fn partly_written_stack_words_are_carried_to_their_use() {
    let mut m = Module::new();
    let (i32t, i64t) = (m.types.i32(), m.types.i64());
    let pg32 = m.types.ptr(i32t, AddressSpace::Global);
    let pg64 = m.types.ptr(i64t, AddressSpace::Global);
    // `a` holds 4 written bytes of 8; its word is copied to `b`, and then
    // `what` is done with the copy.
    let half_written = |m: &mut Module, name: &str, out: Ty, what: u8| {
        let k = kernel(m, name, &[out]);
        let mut b = FunctionBuilder::new(m, k);
        let out = b.block_params(b.entry_block())[0];
        let (a, c) = (b.alloca(i64t), b.alloca(i64t));
        let a32 = b.ptr_bitcast(a, i32t);
        let seven = b.iconst(i32t, 7);
        b.store(seven, a32);
        let word = b.load(i64t, a);
        b.store(word, c);
        match what {
            // The copy's written half, read back whole.
            0 => {
                let c32 = b.ptr_bitcast(c, i32t);
                let v = b.load(i32t, c32);
                b.store(v, out);
            }
            // Arithmetic on the partly written word.
            1 => {
                let one = b.iconst(i64t, 1);
                let v = b.iadd(word, one);
                b.store(v, out);
            }
            // The partly written word stored to a buffer.
            _ => {
                b.store(word, out);
            }
        }
        b.ret(None);
    };
    half_written(&mut m, "copy", pg32, 0);
    half_written(&mut m, "add", pg64, 1);
    half_written(&mut m, "leak", pg64, 2);
    let (mut dev, h) = load(&m);
    let out32 = dev.zeroed::<i32>(1).unwrap();
    dev.launch(h, "copy", ONE, &[KernelArg::Buffer(out32)])
        .expect("a stack-to-stack copy of unwritten bytes is no fault");
    assert_eq!(dev.download::<i32>(out32).unwrap(), [7]);
    let out64 = dev.zeroed::<i64>(1).unwrap();
    for kernel in ["add", "leak"] {
        let e = expect_fault(
            &mut dev,
            h,
            kernel,
            ONE,
            &[KernelArg::Buffer(out64)],
            FaultKind::Uninit,
        );
        assert!(
            e.message.contains("byte 4 of the stack slot inst0 of"),
            "{kernel}: {e}"
        );
    }
}

#[test]
fn an_infinite_loop_times_out() {
    let mut m = Module::new();
    let k = kernel(&mut m, "spin", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let l = b.create_block();
    b.jump(l, &[]);
    b.switch_to_block(l);
    b.jump(l, &[]);
    let limits = Limits {
        max_steps: 10_000,
        ..Limits::default()
    };
    let (mut dev, h) = load_with(&m, limits);
    let cfg = LaunchConfig::linear(2, 2);
    let e = expect_fault(&mut dev, h, "spin", cfg, &[], FaultKind::Timeout);
    assert!(e.message.contains("10000 steps"), "{e}");
}

/// Thread `leaver` returns early; the others wait at a barrier.
fn early_exit_barrier(leaver: i128) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let k = kernel(&mut m, "bar", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let t = b.special_reg(SpecialReg::TidX);
    let who = b.iconst(i32t, leaver);
    let leave = b.icmp(IntCC::Eq, t, who);
    let exit = b.create_block();
    let sync = b.create_block();
    b.brif(leave, exit, &[], sync, &[]);
    b.switch_to_block(sync);
    b.barrier();
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

#[test]
fn a_barrier_some_thread_never_reaches_is_a_deadlock() {
    let cfg = LaunchConfig::linear(1, 2);
    // Thread 0 exits before thread 1 arrives.
    let (mut dev, h) = load(&early_exit_barrier(0));
    let e = expect_fault(&mut dev, h, "bar", cfg, &[], FaultKind::Deadlock);
    assert!(e.message.contains("already exited"), "{e}");
    assert_eq!(e.thread, [1, 0, 0]);
    // Thread 1 exits while thread 0 waits.
    let (mut dev, h) = load(&early_exit_barrier(1));
    let e = expect_fault(&mut dev, h, "bar", cfg, &[], FaultKind::Deadlock);
    assert!(e.message.contains("wait at a barrier"), "{e}");
    // With nobody leaving, the same barrier completes.
    let (mut dev, h) = load(&early_exit_barrier(99));
    dev.launch(h, "bar", cfg, &[]).unwrap();
}

#[test]
fn trap_and_other_inline_ptx() {
    let mut m = Module::new();
    let k = kernel(&mut m, "t", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    b.inline_asm("trap;", "", &[], None, true);
    b.ret(None);
    let k = kernel(&mut m, "u", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    b.inline_asm("membar.gl;", "~{memory}", &[], None, true);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let e = expect_fault(&mut dev, h, "t", ONE, &[], FaultKind::Trap);
    assert!(e.inst.contains("trap"), "{e}");
    let e = expect_fault(&mut dev, h, "u", ONE, &[], FaultKind::Unsupported);
    assert!(e.message.contains("membar.gl"), "{e}");
}

#[test]
fn address_space_faults() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let i64t = m.types.i64();
    let pglob = m.types.ptr(i32t, AddressSpace::Global);
    let sh = m.add_global(GlobalData {
        symbol: "sh".to_owned(),
        space: AddressSpace::Shared,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 4,
        init: None,
    });
    // A generic pointer into shared memory cast to the global space.
    let k = kernel(&mut m, "cast", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let s = b.global_addr(sh, i32t);
    let g = b.addrspacecast(s, AddressSpace::Generic);
    b.addrspacecast(g, AddressSpace::Global);
    b.ret(None);
    // The same, laundered through an integer: the access itself is refused.
    let k = kernel(&mut m, "launder", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let s = b.global_addr(sh, i32t);
    let a = b.cast(CastOp::PtrToInt, s, i64t);
    let p = b.cast(CastOp::IntToPtr, a, pglob);
    let one = b.iconst(i32t, 1);
    b.store(one, p);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let e = expect_fault(&mut dev, h, "cast", ONE, &[], FaultKind::BadCast);
    assert!(e.message.contains("into shared memory"), "{e}");
    let e = expect_fault(&mut dev, h, "launder", ONE, &[], FaultKind::WrongSpace);
    assert!(e.message.contains("global pointer into shared @sh"), "{e}");
}

#[test]
fn another_threads_stack_slot_is_foreign() {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pgen = m.types.ptr(i32t, AddressSpace::Generic);
    let ppg = m.types.ptr(pgen, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[ppg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let mailbox = b.block_params(b.entry_block())[0];
    let t = b.special_reg(SpecialReg::TidX);
    let slot = b.alloca(i32t);
    b.store(t, slot);
    let zero = b.iconst(i32t, 0);
    let first = b.icmp(IntCC::Eq, t, zero);
    let post = b.create_block();
    let sync = b.create_block();
    let peek = b.create_block();
    let exit = b.create_block();
    // Thread 0 stays alive at a second barrier while thread 1 peeks.
    b.brif(first, post, &[], sync, &[]);
    b.switch_to_block(post);
    b.store(slot, mailbox);
    b.jump(sync, &[]);
    b.switch_to_block(sync);
    b.barrier();
    b.brif(first, exit, &[], peek, &[]);
    b.switch_to_block(peek);
    let theirs = b.load(pgen, mailbox);
    b.load(i32t, theirs);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.barrier();
    b.ret(None);
    let (mut dev, h) = load(&m);
    let mailbox = dev.zeroed::<u64>(1).unwrap();
    let cfg = LaunchConfig::linear(1, 2);
    let e = expect_fault(
        &mut dev,
        h,
        "k",
        cfg,
        &[KernelArg::Buffer(mailbox)],
        FaultKind::Foreign,
    );
    assert!(e.message.contains("another thread's stack"), "{e}");
}

#[test]
fn undefined_values_and_undefined_arithmetic() {
    let mut m = Module::new();
    let i1t = m.types.i1();
    let i32t = m.types.i32();
    let k = kernel(&mut m, "branch", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let u = b.undef(i1t);
    let a = b.create_block();
    b.brif(u, a, &[], a, &[]);
    b.switch_to_block(a);
    b.ret(None);
    let k = kernel(&mut m, "div", &[i32t]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let d = b.block_params(b.entry_block())[0];
    let one = b.iconst(i32t, 1);
    b.binary(BinaryOp::SDiv, one, d);
    b.ret(None);
    let (mut dev, h) = load(&m);
    expect_fault(&mut dev, h, "branch", ONE, &[], FaultKind::UndefUse);
    let e = expect_fault(
        &mut dev,
        h,
        "div",
        ONE,
        &[KernelArg::I32(0)],
        FaultKind::Arithmetic,
    );
    assert!(e.message.contains("sdiv by zero"), "{e}");
    dev.launch(h, "div", ONE, &[KernelArg::I32(3)]).unwrap();
}

#[test]
fn null_misaligned_unreachable_and_runaway_recursion() {
    let mut m = Module::new();
    let (i8t, i32t) = (m.types.i8(), m.types.i32());
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let pg8 = m.types.ptr(i8t, AddressSpace::Global);
    let k = kernel(&mut m, "null", &[pg]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block())[0];
    b.load(i32t, p);
    b.ret(None);
    // An i32 load one byte into a buffer.
    let k = kernel(&mut m, "skew", &[pg8]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block())[0];
    let one = b.gep(p, &[GepIndex::Const(1)]);
    let q = b.ptr_bitcast(one, i32t);
    b.load(i32t, q);
    b.ret(None);
    let k = kernel(&mut m, "unreach", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    b.unreachable();
    let rec = helper(&mut m, "rec", &[], None);
    let mut b = FunctionBuilder::new(&mut m, rec);
    b.call(rec, &[]);
    b.ret(None);
    let k = kernel(&mut m, "deep", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    b.call(rec, &[]);
    b.ret(None);
    let (mut dev, h) = load(&m);
    let e = expect_fault(
        &mut dev,
        h,
        "null",
        ONE,
        &[KernelArg::Null],
        FaultKind::NullOrWild,
    );
    assert!(e.message.contains("null pointer"), "{e}");
    let buf = dev.zeroed::<u8>(8).unwrap();
    let e = expect_fault(
        &mut dev,
        h,
        "skew",
        ONE,
        &[KernelArg::Buffer(buf)],
        FaultKind::Misaligned,
    );
    assert!(e.message.contains("offset 1 of buffer 0"), "{e}");
    expect_fault(&mut dev, h, "unreach", ONE, &[], FaultKind::Unreachable);
    let e = expect_fault(&mut dev, h, "deep", ONE, &[], FaultKind::StackOverflow);
    assert_eq!(e.function, "rec");
    assert_eq!(
        e.called_from.last().map(String::as_str),
        Some("fn deep, inst0")
    );
    assert!(e.to_string().contains("called from fn rec, inst0"), "{e}");
}

/// `k(input, out)` with `input` a `noalias readonly` parameter (a Rust
/// `&[i32]`): copies `input[0]` to `out[0]`, then, when `sneaky`, writes 7
/// to `input[0]` through `out`'s cast-away copy of it. The write breaks the
/// promise LLVM compiles against (`ld.global.nc`) and must fault, naming the
/// parameter; the read-only lending ends with the launch.
fn readonly_parameter(sneaky: bool) -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let pg = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "k", &[pg, pg]);
    m.functions[k].param_attrs = vec![
        ParamAttrs::NOALIAS | ParamAttrs::READONLY,
        ParamAttrs::empty(),
    ];
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let v = b.load(i32t, p[0]);
    b.store(v, p[1]);
    if sneaky {
        let seven = b.iconst(i32t, 7);
        b.store(seven, p[0]);
    }
    b.ret(None);
    m
}

#[test]
fn a_write_to_a_readonly_parameter_faults_and_the_lending_ends() {
    let (mut dev, sneaky) = load(&readonly_parameter(true));
    let honest = dev
        .load(&gpu_harness::device::Program::ir(&readonly_parameter(
            false,
        )))
        .unwrap();
    let input = dev.upload(&[5i32]).unwrap();
    let out = dev.zeroed::<i32>(1).unwrap();
    dev.launch(
        honest,
        "k",
        ONE,
        &[KernelArg::Buffer(input), KernelArg::Buffer(out)],
    )
    .unwrap();
    assert_eq!(dev.download::<i32>(out).unwrap(), [5]);
    let e = expect_fault(
        &mut dev,
        sneaky,
        "k",
        ONE,
        &[KernelArg::Buffer(input), KernelArg::Buffer(out)],
        FaultKind::ReadOnly,
    );
    assert!(e.to_string().contains("`readonly` parameter"), "{e}");
    // After the launch, even a faulting one, `input` is writable again: as
    // the `out` of the next launch it receives `out[0]`, once set to 8.
    dev.write(out, 0, &8i32.to_le_bytes()).unwrap();
    dev.launch(
        honest,
        "k",
        ONE,
        &[KernelArg::Buffer(out), KernelArg::Buffer(input)],
    )
    .unwrap_or_else(|e| panic!("the lending outlived its launch: {e}"));
    assert_eq!(dev.download::<i32>(input).unwrap(), [8]);
}
