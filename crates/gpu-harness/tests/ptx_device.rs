//! The PTX device runs what a GPU runs, and catches what only that shows:
//!
//! - `fma_contraction` agrees with the IR device on the pipeline's PTX
//!   (`-fma=0`); with libNVVM's default `-fma=1` restored, the PTX device
//!   gives other values, and the comparison names them;
//! - the legacy alloca lowering of reference constants (the mutant the IR
//!   device catches in `mutants.rs`) is a stale-frame fault in the PTX too;
//! - mutated PTX: a `bar.sync` removed, a kernel parameter read at the wrong
//!   offset, an initializer relocation pointing at the wrong global, each
//!   changes the values or faults. (A weakened `ld.acquire` cannot change a
//!   value under the PTX device's sequentially consistent schedule: the
//!   `ptx-forms` shape check catches it, in `ptx_forms.rs`.)
//!
//! The reference values are the IR device's, which the oracle checks against
//! the host run for every fixture.

#![allow(clippy::unwrap_used)]

mod common;

use common::run_on;
use gpu_harness::compare::compare;
use gpu_harness::device::ptx::PtxDevice;
use gpu_harness::device::virt::{FaultKind, VirtualDevice};
use gpu_harness::device::{Device, DeviceError, DeviceExt, KernelArg, LaunchConfig, Program};
use gpu_harness::fixture::Fixture;
use gpu_harness::host::Readback;
use gpu_harness::launch::LaunchError;
use gpu_harness::shape::Artifacts;
use gpu_harness::shape::ptx_forms;
use gpu_harness::stage::StageError;
use gpu_harness::tolerance::Tolerance;

fn build(name: &str) -> Option<(Fixture, Artifacts)> {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip(name)?;
    let f = Fixture::load(&common::fixture_dir(name)).unwrap();
    let a = Artifacts::build(&f.kernel, nvvm).unwrap();
    Some((f, a))
}

fn on_ir_device(f: &Fixture, a: &Artifacts) -> Readback {
    let ptx = a.ptx_o3.clone();
    run_on(f, a, &mut VirtualDevice::new(), &ptx).unwrap()
}

fn on_ptx_device(f: &Fixture, a: &Artifacts, ptx: &str) -> Result<Readback, LaunchError> {
    run_on(f, a, &mut PtxDevice::new(), ptx)
}

/// A kernel fault of the PTX device, or a panic naming what came instead.
fn fault_of(r: Result<Readback, LaunchError>) -> gpu_harness::device::virt::ExecError {
    match r {
        Err(LaunchError::Device(DeviceError::Exec(e))) => *e,
        Err(e) => panic!("not a kernel fault: {e}"),
        Ok(_) => panic!("the mutant ran to the end"),
    }
}

#[test]
fn fused_multiply_add_is_caught_on_the_ptx_device() {
    let Some((f, a)) = build("fma_contraction") else {
        return;
    };
    let want = on_ir_device(&f, &a);
    // The pipeline's PTX (-fma=0): the same values, bit for bit.
    let got = on_ptx_device(&f, &a, &a.ptx_o3).unwrap();
    assert_eq!(got, want);
    // libNVVM's default, -fma=1: an fma.rn.f32, and other values.
    let nvvm = nvvm_emit::testing::libnvvm_or_skip("fma=1").unwrap();
    let opts = compile_driver::ptx_options(3).with_fma(true);
    let fused = String::from_utf8(nvvm.compile(&a.nvvm_ir, &opts).unwrap()).unwrap();
    assert!(fused.contains("fma.rn.f32"), "{fused}");
    let got = on_ptx_device(&f, &a, &fused).unwrap();
    let mut values = Vec::new();
    let e = compare(&f, &want, &got, &Tolerance::default(), &mut values).unwrap_err();
    let StageError::ComparisonMismatch { bad, total } = e else {
        panic!("{e}");
    };
    assert_eq!(total, 256);
    // The README counts 247 elements where fused and unfused differ.
    assert_eq!(bad, 247, "{values:?}");
    let third = &values[3];
    assert!(!third.ok);
    assert_eq!(
        (third.buffer.as_str(), third.expected.as_str()),
        ("out", "0")
    );
    // The fused product keeps 0.1f32 * 3 - 0.3f32's rounding error: -2^-27.
    assert_eq!(third.got, (-(2f32.powi(-27))).to_string(), "{third:?}");
}

#[test]
fn the_alloca_lowering_is_a_stale_frame_on_the_ptx_device() {
    let Some((f, mut a)) = build("promoted_ref_return") else {
        return;
    };
    let want = on_ir_device(&f, &a);
    assert_eq!(on_ptx_device(&f, &a, &a.ptx_o3).unwrap(), want);
    let n = gpu_harness::mutant::alloca_constants(&mut a.lowered.module, &a.lowered.origins);
    assert!(n >= 10, "only {n} uses rewritten");
    let ir = compile_driver::print(&a.lowered);
    let nvvm = nvvm_emit::testing::libnvvm_or_skip("alloca mutant").unwrap();
    let ptx =
        String::from_utf8(nvvm.compile(&ir, &compile_driver::ptx_options(3)).unwrap()).unwrap();
    let e = fault_of(on_ptx_device(&f, &a, &ptx));
    assert_eq!(e.kind, FaultKind::StaleFrame, "{e}");
    assert!(e.message.contains("a frame that has returned"), "{e}");
    assert_eq!(e.kernel, "promoted_ref_return");
}

#[test]
fn a_removed_barrier_is_caught_on_the_ptx_device() {
    let Some((f, a)) = build("shared_reduction") else {
        return;
    };
    let want = on_ir_device(&f, &a);
    assert_eq!(on_ptx_device(&f, &a, &a.ptx_o3).unwrap(), want);
    let n = a.ptx_o3.matches("bar.sync").count();
    assert!(n >= 2, "{}", a.ptx_o3);
    // Each barrier in turn, removed. The PTX device has no race detector: a
    // missing barrier shows only where the schedule then gives other values
    // or reads unwritten shared memory. The `ptx-forms` shape check counts
    // barriers; between them, every removal is caught.
    let mut by_device = 0;
    for k in 0..n {
        let at = a.ptx_o3.match_indices("bar.sync").nth(k).unwrap().0;
        let end = at + a.ptx_o3[at..].find(';').unwrap() + 1;
        let mut cut = a.ptx_o3.clone();
        cut.replace_range(at..end, "membar.cta;");
        let device = match on_ptx_device(&f, &a, &cut) {
            Ok(got) => got != want,
            Err(LaunchError::Device(DeviceError::Exec(e))) => {
                assert_eq!(e.kind, FaultKind::Uninit, "barrier {k}: {e}");
                true
            }
            Err(e) => panic!("barrier {k}: {e}"),
        };
        let mut input = a.input();
        input.ptx_o3 = &cut;
        let shape = !ptx_forms::ptx_forms(&input).is_empty();
        assert!(device || shape, "barrier {k} removed: caught by neither");
        by_device += usize::from(device);
    }
    assert!(
        by_device >= 1,
        "the PTX device caught none of {n} removed barriers"
    );
}

#[test]
fn a_wrong_parameter_offset_is_caught_on_the_ptx_device() {
    let Some((f, a)) = build("saxpy") else {
        return;
    };
    let want = on_ir_device(&f, &a);
    assert_eq!(on_ptx_device(&f, &a, &a.ptx_o3).unwrap(), want);
    // saxpy(a, x: (ptr, len), y: (ptr, len)): x's pointer read from y's
    // parameter instead, a wrong but readable address.
    let x = "[saxpy_param_1]";
    assert!(
        a.ptx_o3.contains(x) && a.ptx_o3.contains("ld.param.u64 \t%rd3, [saxpy_param_3]"),
        "{}",
        a.ptx_o3
    );
    let wrong = a.ptx_o3.replace(x, "[saxpy_param_3]");
    let got = on_ptx_device(&f, &a, &wrong).unwrap();
    assert_ne!(got, want);
    // Past the end of the parameter: a fault naming the parameter's size.
    let past = a.ptx_o3.replace(x, "[saxpy_param_1+8]");
    let e = fault_of(on_ptx_device(&f, &a, &past));
    assert_eq!(e.kind, FaultKind::OutOfBounds, "{e}");
}

/// An indirect call (`call (ret), %rd, (args), prototype;`) runs the
/// function whose address the register holds; an address that is no
/// function's, or a function whose parameters and results are not the
/// prototype's, is a `BadCall` fault.
#[test]
fn an_indirect_call_is_checked_against_its_target_on_the_ptx_device() {
    let Some((f, a)) = build("fn_pointer_calls") else {
        return;
    };
    let want = on_ir_device(&f, &a);
    assert!(a.ptx_o3.contains(".callprototype"), "{}", a.ptx_o3);
    assert_eq!(on_ptx_device(&f, &a, &a.ptx_o3).unwrap(), want);
    // The table's `square` (`mov.u64 %rdN, kernel__square;`) replaced by
    // null, then by the pair function `sum_xor` (a return slot and two
    // `u64`s, no result).
    let square = ", kernel__square;";
    assert!(a.ptx_o3.contains(square), "{}", a.ptx_o3);
    let null = a.ptx_o3.replace(square, ", 0;");
    let e = fault_of(on_ptx_device(&f, &a, &null));
    assert_eq!(e.kind, FaultKind::BadCall, "{e}");
    assert!(e.message.contains("through null"), "{e}");
    let pair = a.ptx_o3.replace(square, ", kernel__sum_xor;");
    let e = fault_of(on_ptx_device(&f, &a, &pair));
    assert_eq!(e.kind, FaultKind::BadCall, "{e}");
    assert!(
        e.message.contains("parameters [4] and results [4]")
            && e.message
                .contains("kernel__sum_xor, which takes [8, 8, 8] and gives []"),
        "{e}"
    );
    // A prototype whose one parameter is 8 bytes, where the function's is 4.
    let proto = "prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);";
    assert!(a.ptx_o3.contains(proto), "{}", a.ptx_o3);
    let wide = a.ptx_o3.replace(
        proto,
        "prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);",
    );
    let e = fault_of(on_ptx_device(&f, &a, &wide));
    assert_eq!(e.kind, FaultKind::BadCall, "{e}");
    assert!(e.message.contains("parameters [8] and results [4]"), "{e}");
}

#[test]
fn a_relocation_to_the_wrong_global_is_caught_on_the_ptx_device() {
    // The -opt=0 PTX keeps the reference constants' pointer tables, whose
    // initializers are `generic(sym)` relocations; the PTX device runs it too.
    let Some((f, a)) = build("promoted_ref_return") else {
        return;
    };
    let want = on_ir_device(&f, &a);
    assert_eq!(on_ptx_device(&f, &a, &a.ptx_o0).unwrap(), want, "-opt=0");
    assert_eq!(on_ptx_device(&f, &a, &a.ptx_o3).unwrap(), want, "-opt=3");
    let module = ptx_reader::parse(&a.ptx_o0).unwrap();
    let mut targets = Vec::new();
    for g in &module.globals {
        let mut flat = Vec::new();
        collect(g.init.as_ref(), &mut flat);
        targets.extend(flat);
    }
    targets.sort();
    targets.dedup();
    assert!(
        targets.len() >= 2,
        "fewer than two relocation targets: {targets:?}\n{}",
        a.ptx_o0
    );
    // Point every relocation to the first target at the second one instead.
    let wrong = a.ptx_o0.replace(
        &format!("generic({})", targets[0]),
        &format!("generic({})", targets[1]),
    );
    match on_ptx_device(&f, &a, &wrong) {
        Ok(got) => assert_ne!(got, want),
        Err(LaunchError::Device(DeviceError::Exec(e))) => {
            assert!(
                matches!(e.kind, FaultKind::OutOfBounds | FaultKind::Misaligned),
                "{e}"
            )
        }
        Err(e) => panic!("{e}"),
    }
}

fn collect(init: Option<&ptx_reader::Initializer>, out: &mut Vec<String>) {
    match init {
        Some(ptx_reader::Initializer::List(l)) => l.iter().for_each(|i| collect(Some(i), out)),
        Some(ptx_reader::Initializer::Value(ptx_reader::InitValue::Address { symbol, .. })) => {
            out.push(symbol.clone())
        }
        _ => {}
    }
}

/// Runs `kernel` of `ptx` on one warp (32 threads of one block) with one
/// argument, a zeroed buffer of `words` `u32`s, and reads it back; the
/// launch's error as text.
fn one_warp(ptx: &str, kernel: &str, words: usize) -> Result<Vec<u32>, String> {
    let mut dev = PtxDevice::new();
    let module = dev.load(&Program::ptx_only(ptx)).expect("loads");
    let out = dev.zeroed::<u32>(words).expect("alloc");
    dev.launch(
        module,
        kernel,
        LaunchConfig::linear(1, 32),
        &[KernelArg::Buffer(out)],
    )
    .map_err(|e| e.to_string())?;
    Ok(dev.download::<u32>(out).expect("reads"))
}

/// `shfl.sync.down.b32 d|p` (NVRTC writes it) sets `p` where the source lane
/// is in range, and `setp p|q` sets `q` to the complement: lane `l` of a
/// warp stores `d + 1000 * p + 100 * q`, with `d` lane `l + 4`'s id where
/// that exists and its own otherwise.
#[test]
fn predicate_outputs_of_shfl_and_setp_are_written() {
    let ptx = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry preds(.param .u64 out)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	shfl.sync.down.b32 	%r2|%p1, %r1, 4, 31, -1;
	selp.u32 	%r3, 1000, 0, %p1;
	setp.lt.u32 	%p2|%p3, %r1, 16;
	selp.u32 	%r4, 100, 0, %p3;
	add.s32 	%r5, %r2, %r3;
	add.s32 	%r6, %r5, %r4;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd3, %rd2, %rd3;
	st.global.u32 	[%rd3], %r6;
	ret;
}
"#;
    let got = one_warp(ptx, "preds", 32).expect("runs");
    let want: Vec<u32> = (0..32u32)
        .map(|l| {
            let (src, in_range) = if l + 4 <= 31 { (l + 4, 1) } else { (l, 0) };
            src + 1000 * in_range + 100 * u32::from(l >= 16)
        })
        .collect();
    assert_eq!(got, want);
}

/// Shuffles of every mode on the PTX device: `idx` with a lane operand that
/// differs per lane (`31 - l`), `bfly` by 1 and `down` by 2 over the whole
/// warp; lane `l` stores the three values read (each a lane id).
#[test]
fn shuffles_of_each_mode_read_the_lane_the_ptx_isa_names() {
    let ptx = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry modes(.param .u64 out)
{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	sub.s32 	%r2, 31, %r1;
	shfl.sync.idx.b32 	%r3, %r1, %r2, 31, -1;
	shfl.sync.bfly.b32 	%r4, %r1, 1, 31, -1;
	shfl.sync.down.b32 	%r5, %r1, 2, 31, -1;
	mul.lo.s32 	%r6, %r1, 12;
	cvt.u64.u32 	%rd3, %r6;
	add.s64 	%rd3, %rd2, %rd3;
	st.global.u32 	[%rd3], %r3;
	st.global.u32 	[%rd3+4], %r4;
	st.global.u32 	[%rd3+8], %r5;
	ret;
}
"#;
    let got = one_warp(ptx, "modes", 96).expect("runs");
    let want: Vec<u32> = (0..32u32)
        .flat_map(|l| [31 - l, l ^ 1, if l + 2 <= 31 { l + 2 } else { l }])
        .collect();
    assert_eq!(got, want);
}

/// `shfl.sync.bfly` with a half-warp mask run by every lane: lane 16 is
/// not in the mask, and the fault names the instruction's own mode.
#[test]
fn a_shuffle_outside_its_mask_is_a_fault_naming_its_mode() {
    let ptx = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry bfly(.param .u64 out)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	shfl.sync.bfly.b32 	%r2, %r1, 1, 31, 65535;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd3, %rd2, %rd3;
	st.global.u32 	[%rd3], %r2;
	ret;
}
"#;
    let e = one_warp(ptx, "bfly", 32).expect_err("lane 16 is outside the mask");
    assert!(
        e.contains("executes shuffle bfly with mask 0x0000ffff"),
        "{e}"
    );
}

/// `redux.sync` (the form our printer writes as inline PTX), `match.sync`
/// on 32 and 64 bits, and the lane-mask registers: lane `l` of one warp
/// stores, from `out[8 l]` on, the signed minimum and the unsigned minimum
/// of `l - 16`, their sum, the lanes of its group of four (`match.any`, on
/// `l / 4` and on `l / 4` in the high word), `match.all` of the lane (0),
/// and `%lanemask_lt` and `%lanemask_ge`.
#[test]
fn redux_match_and_lane_masks_run_on_the_ptx_device() {
    let ptx = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry collect(.param .u64 out)
{
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %laneid;
	sub.s32 	%r2, %r1, 16;
	mov.u32 	%r3, -1;
	redux.sync.min.s32 %r4, %r2, %r3;
	redux.sync.min.u32 %r5, %r2, %r3;
	redux.sync.add.u32 %r6, %r2, %r3;
	shr.u32 	%r7, %r1, 2;
	match.any.sync.b32 %r8, %r7, %r3;
	cvt.u64.u32 	%rd3, %r7;
	shl.b64 	%rd3, %rd3, 32;
	match.any.sync.b64 %r9, %rd3, %r3;
	match.all.sync.b32 %r10, %r1, %r3;
	mov.u32 	%r11, %lanemask_lt;
	mov.u32 	%r12, %lanemask_ge;
	mul.wide.u32 	%rd4, %r1, 32;
	add.s64 	%rd5, %rd2, %rd4;
	st.global.u32 	[%rd5], %r4;
	st.global.u32 	[%rd5+4], %r5;
	st.global.u32 	[%rd5+8], %r6;
	st.global.u32 	[%rd5+12], %r8;
	st.global.u32 	[%rd5+16], %r9;
	st.global.u32 	[%rd5+20], %r10;
	st.global.u32 	[%rd5+24], %r11;
	st.global.u32 	[%rd5+28], %r12;
	ret;
}
"#;
    let got = one_warp(ptx, "collect", 32 * 8).expect("runs");
    let sum = (0..32u32).fold(0u32, |a, l| a.wrapping_add(l.wrapping_sub(16)));
    let want: Vec<u32> = (0..32u32)
        .flat_map(|l| {
            let group = 0xfu32 << (l / 4 * 4);
            let lt = (1u32 << l) - 1;
            [(-16i32) as u32, 0, sum, group, group, 0, lt, !lt]
        })
        .collect();
    assert_eq!(got, want);
}

/// Extended-precision arithmetic as the hardware does it: the carry flag
/// is the adder's carry-out for subtraction too (`a + !b + 1`, and `subc`
/// is `a + !b + CC.CF`), so after `sub.cc` it is set when nothing was
/// borrowed. libNVVM's 128-bit division materialises it with `addc 0, 0`
/// after a subtraction; the PTX ISA's "borrow" wording alone would give
/// the opposite flag, and 436 of 512 quotients of a `u128` kernel were
/// wrong on this device before.
const CARRY_CHAINS: &str = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry carries(.param .u64 out)
{
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r9, 0;
	mov.u32 	%r10, 3;
	mov.u32 	%r11, 5;
	mov.u32 	%r12, 1;
	add.cc.u32 	%r1, %r9, %r9;
	subc.u32 	%r2, %r9, %r9;
	sub.cc.u32 	%r3, %r11, %r10;
	addc.u32 	%r4, %r9, %r9;
	sub.cc.u32 	%r5, %r10, %r11;
	addc.u32 	%r6, %r9, %r9;
	sub.cc.u32 	%r7, %r9, %r12;
	subc.u32 	%r8, %r12, %r9;
	sub.cc.u32 	%r13, %r10, %r11;
	subc.u32 	%r14, %r9, %r9;
	// The middle limb's own carry-out: 5 - 3 - !1 borrows nothing, then
	// 3 - 3 - !0 borrows.
	sub.cc.u32 	%r13, %r11, %r9;
	subc.cc.u32 	%r13, %r11, %r10;
	addc.u32 	%r15, %r9, %r9;
	sub.cc.u32 	%r13, %r9, %r12;
	subc.cc.u32 	%r13, %r10, %r10;
	addc.u32 	%r1, %r9, %r9;
	// 64 bits: 1 - 2 borrows, then `subc.u64 0, 0` is all ones.
	mov.u64 	%rd1, 1;
	mov.u64 	%rd3, 2;
	sub.cc.u64 	%rd1, %rd1, %rd3;
	mov.u64 	%rd3, 0;
	subc.u64 	%rd3, %rd3, %rd3;
	st.global.u32 	[%rd2], %r2;
	st.global.u32 	[%rd2+4], %r4;
	st.global.u32 	[%rd2+8], %r6;
	st.global.u32 	[%rd2+12], %r7;
	st.global.u32 	[%rd2+16], %r8;
	st.global.u32 	[%rd2+20], %r3;
	st.global.u32 	[%rd2+24], %r5;
	st.global.u32 	[%rd2+28], %r14;
	st.global.u32 	[%rd2+32], %r15;
	st.global.u32 	[%rd2+36], %r1;
	st.global.u64 	[%rd2+40], %rd3;
	ret;
}
"#;

#[test]
fn the_carry_flag_after_a_subtraction_is_the_adders_carry() {
    let mut dev = PtxDevice::new();
    let module = dev.load(&Program::ptx_only(CARRY_CHAINS)).unwrap();
    let out = dev.zeroed::<u32>(12).unwrap();
    dev.launch(
        module,
        "carries",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out)],
    )
    .unwrap();
    let got = dev.download::<u32>(out).unwrap();
    assert_eq!(
        got,
        vec![
            // `add.cc 0, 0` clears the flag; `subc 0, 0` is then 0 + !0 + 0.
            u32::MAX,
            // 5 - 3 borrows nothing: the flag is set.
            1,
            // 3 - 5 borrows: the flag is clear.
            0,
            // 0x1_0000_0000 - 1 in two halves: a chain's values are the
            // same under either reading of the flag.
            u32::MAX,
            0,
            2,
            3u32.wrapping_sub(5),
            // After a borrow, `subc 0, 0` is all ones.
            u32::MAX,
            // `subc.cc`'s own carry-out: none borrowed, then one.
            1,
            0,
            // `subc.u64 0, 0` after a 64-bit borrow, in two words.
            u32::MAX,
            u32::MAX,
        ]
    );
}

/// libNVVM's copy of a struct `{ [u8; 8], u8 }` (16 bytes, 7 of padding)
/// with one wide load and store, then the `u8` field masked out: the
/// padding is carried, never used. `USE` is the instruction that reads the
/// high half; `and.b64` masks the padding off.
const PADDED_COPY: &str = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry padded(.param .u64 out)
{
	.local .align 16 .b8 	__local_depot0[32];
	.reg .pred 	%p<2>;
	.reg .b16 	%rs<4>;
	.reg .b64 	%rd<12>;

	mov.u64 	%rd1, __local_depot0;
	cvta.local.u64 	%rd2, %rd1;
	ld.param.u64 	%rd3, [out];
	cvta.to.global.u64 	%rd4, %rd3;
	mov.u64 	%rd5, 506097522914230528;
	st.local.u64 	[%rd1], %rd5;
	mov.u16 	%rs1, 9;
	st.local.u8 	[%rd1+8], %rs1;
	ld.local.v2.u64 	{%rd6, %rd7}, [%rd1];
	st.local.v2.u64 	[%rd1+16], {%rd6, %rd7};
	ld.local.u64 	%rd8, [%rd1+24];
	cvt.u16.u64 	%rs2, %rd8;
	and.b16 	%rs3, %rs2, 255;
	cvt.u64.u16 	%rd9, %rs3;
	USE;
	add.s64 	%rd11, %rd6, %rd10;
	st.global.u64 	[%rd4], %rd11;
	ret;
}
"#;

fn run_padded(use_inst: &str) -> Result<u64, DeviceError> {
    let ptx = PADDED_COPY.replace("USE", use_inst);
    let mut dev = PtxDevice::new();
    let module = dev.load(&Program::ptx_only(&ptx))?;
    let out = dev.zeroed::<u64>(1)?;
    dev.launch(
        module,
        "padded",
        LaunchConfig::linear(1, 1),
        &[KernelArg::Buffer(out)],
    )?;
    Ok(dev.download::<u64>(out)?[0])
}

#[test]
fn struct_padding_is_carried_but_never_used() {
    // Masked off (`and` with the field's byte, or a shift that drops the
    // padding): the copy runs, and the value is the field's.
    let base = 0x0706_0504_0302_0100u64;
    assert_eq!(run_padded("and.b64 \t%rd10, %rd7, 255").unwrap(), base + 9);
    assert_eq!(run_padded("add.s64 \t%rd10, %rd9, 0").unwrap(), base + 9);
    assert_eq!(
        run_padded("shl.b64 \t%rd10, %rd7, 56").unwrap(),
        base + (9 << 56)
    );
    // Arithmetic whose carries only move the padding's unknown bytes up,
    // then masked off (md-5's finalize: `sub.s16` then `and.b16 3`).
    assert_eq!(
        run_padded("sub.s64 \t%rd10, 12, %rd7;\n\tand.b64 \t%rd10, %rd10, 255").unwrap(),
        base + 3
    );
    // `neg` carries up as `sub` does, `not` keeps each byte in place, and
    // the field's low bits are masked out after (sha3's finalize:
    // `neg.s16` then `and.b16 3`).
    assert_eq!(
        run_padded("neg.s64 \t%rd10, %rd7;\n\tand.b64 \t%rd10, %rd10, 3").unwrap(),
        base + (9u64.wrapping_neg() & 3)
    );
    assert_eq!(
        run_padded("not.b64 \t%rd10, %rd7;\n\tand.b64 \t%rd10, %rd10, 255").unwrap(),
        base + (!9u64 & 255)
    );
    // A select on a known predicate that does not pick the padding
    // (libNVVM loads both sides of `opt.unwrap_or(d)`).
    assert_eq!(
        run_padded("setp.ne.s64 \t%p1, %rd9, 9;\n\tselp.b64 \t%rd10, %rd7, 5, %p1").unwrap(),
        base + 5
    );
    // Used: the padding itself (bytes 1..7 of the high half, through the
    // copy), added, shifted into the low byte, or as an address. An unknown
    // byte that arithmetic only carries up is caught where it is read back
    // (the `and` there writes its own source: its mask is read first).
    for carried in [
        "add.s64 \t%rd10, %rd7, 0;\n\tand.b64 \t%rd10, %rd10, 65535",
        "and.b64 \t%rd10, %rd7, 65535",
        "neg.s64 \t%rd10, %rd7;\n\tand.b64 \t%rd10, %rd10, 65535",
        "not.b64 \t%rd10, %rd7;\n\tand.b64 \t%rd10, %rd10, 65535",
        "setp.eq.s64 \t%p1, %rd9, 9;\n\tselp.b64 \t%rd10, %rd7, 5, %p1",
    ] {
        match run_padded(carried) {
            Err(DeviceError::UninitReadback { offset: 1, .. }) => {}
            other => panic!("{carried}: padding carried to the output: {other:?}"),
        }
    }
    for use_inst in [
        "or.b64 \t%rd10, %rd7, 0",
        "mul.hi.u64 \t%rd10, %rd7, 3",
        "shr.u64 \t%rd10, %rd8, 8",
        "ld.local.u64 \t%rd10, [%rd7]",
    ] {
        match run_padded(use_inst) {
            Err(DeviceError::Exec(e)) => {
                assert_eq!(e.kind, FaultKind::Uninit, "{use_inst}: {e}");
                assert!(e.message.contains("never written"), "{use_inst}: {e}");
            }
            other => panic!("{use_inst}: {other:?}"),
        }
    }
}

/// A 128-bit parameter is 16 bytes of `.param` space, read low half first
/// (as libNVVM's PTX does with `ld.param.v2.u64`) or by offset; an argument
/// of another width is refused, not truncated.
#[test]
fn a_128_bit_parameter_keeps_its_high_half() {
    let ptx = r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry wide(.param .align 16 .b8 w[16], .param .u64 out)
{
	.reg .b64 	%rd<8>;

	ld.param.v2.u64 	{%rd1, %rd2}, [w];
	ld.param.u64 	%rd3, [w+8];
	ld.param.u64 	%rd4, [out];
	cvta.to.global.u64 	%rd5, %rd4;
	st.global.u64 	[%rd5], %rd1;
	st.global.u64 	[%rd5+8], %rd2;
	st.global.u64 	[%rd5+16], %rd3;
	ret;
}
"#;
    let mut dev = PtxDevice::new();
    let module = dev.load(&Program::ptx_only(ptx)).expect("loads");
    let out = dev.zeroed::<u64>(3).expect("alloc");
    let v: i128 = -0x0123_4567_89ab_cdef;
    dev.launch(
        module,
        "wide",
        LaunchConfig::linear(1, 1),
        &[KernelArg::I128(v), KernelArg::Buffer(out)],
    )
    .expect("runs");
    let got = dev.download::<u64>(out).expect("reads");
    let (lo, hi) = (v as u128 as u64, (v as u128 >> 64) as u64);
    assert_eq!(got, [lo, hi, hi]);
    assert_eq!(hi, u64::MAX, "the high half is all ones");
    // An 8-byte argument for the 16-byte parameter.
    let err = dev
        .launch(
            module,
            "wide",
            LaunchConfig::linear(1, 1),
            &[KernelArg::U64(7), KernelArg::Buffer(out)],
        )
        .expect_err("a narrower argument is refused");
    assert!(err.to_string().contains("16 bytes"), "{err}");
}

/// A kernel's aggregate by value, read as libNVVM reads one: by name at an
/// offset, and through its address in a register (`mov.b64 %rd, name`).
/// The address is the launch's read-only copy: a store through it faults.
#[test]
fn a_byval_parameter_is_read_by_name_and_through_its_address() {
    let ptx = |tail: &str| {
        format!(
            r#"
.version 8.5
.target sm_90
.address_size 64

.visible .entry k(.param .u64 out, .param .align 4 .b8 k_param_1[12])
{{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.b64 	%rd3, k_param_1;
	ld.param.u32 	%r1, [k_param_1+4];
	ld.param.u32 	%r2, [%rd3+8];
	add.s32 	%r3, %r1, %r2;
	{tail}
	st.global.u32 	[%rd2], %r3;
	ret;
}}
"#
        )
    };
    let bytes: Vec<u8> = [7u32, 40, 2].iter().flat_map(|w| w.to_le_bytes()).collect();
    let one = LaunchConfig::linear(1, 1);
    let mut dev = PtxDevice::new();
    let module = dev.load(&Program::ptx_only(&ptx(""))).expect("loads");
    let out = dev.zeroed::<u32>(1).expect("alloc");
    let args = [
        KernelArg::Buffer(out),
        KernelArg::Bytes(bytes.clone().into()),
    ];
    dev.launch(module, "k", one, &args).expect("runs");
    assert_eq!(dev.download::<u32>(out).expect("reads"), [42]);
    // Without device IR, the `.param`'s size still checks the bytes.
    let short = [
        KernelArg::Buffer(out),
        KernelArg::Bytes(bytes[..8].to_vec().into()),
    ];
    let e = dev
        .launch(module, "k", one, &short)
        .expect_err("a short aggregate");
    assert!(
        e.to_string()
            .contains("parameter 1 is 12 bytes, its argument 8"),
        "{e}"
    );
    let module = dev
        .load(&Program::ptx_only(&ptx("st.param.u32 	[%rd3], %r3;")))
        .expect("loads");
    let e = dev
        .launch(module, "k", one, &args)
        .expect_err("a store to a parameter");
    assert!(
        matches!(&e, DeviceError::Exec(x) if x.kind == FaultKind::ReadOnly),
        "{e}"
    );
    assert!(e.to_string().contains("kernel parameter 1"), "{e}");
}

/// A function's address as a value (`mov.u64 %rd, inc;`, as libNVVM prints
/// a Rust `fn` pointer that escapes): nonzero, the same each time it is
/// taken, distinct from another function's, and no memory: a load through
/// it faults.
#[test]
fn a_function_address_is_a_distinct_value_and_no_memory() {
    let ptx = |tail: &str| {
        format!(
            r#"
.version 8.5
.target sm_90
.address_size 64

.func  (.param .b32 func_retval0) inc(.param .b32 inc_param_0)
{{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [inc_param_0];
	add.s32 	%r2, %r1, 1;
	st.param.b32 	[func_retval0], %r2;
	ret;
}}
.func  (.param .b32 func_retval0) dec(.param .b32 dec_param_0)
{{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [dec_param_0];
	add.s32 	%r2, %r1, -1;
	st.param.b32 	[func_retval0], %r2;
	ret;
}}
.visible .entry k(.param .u64 out)
{{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u64 	%rd3, inc;
	mov.u64 	%rd4, dec;
	mov.u64 	%rd5, inc;
	{tail}
	st.global.u64 	[%rd2], %rd3;
	st.global.u64 	[%rd2+8], %rd4;
	st.global.u64 	[%rd2+16], %rd5;
	ret;
}}
"#
        )
    };
    let one = LaunchConfig::linear(1, 1);
    let mut dev = PtxDevice::new();
    let module = dev.load(&Program::ptx_only(&ptx(""))).expect("loads");
    let out = dev.zeroed::<u64>(3).expect("alloc");
    dev.launch(module, "k", one, &[KernelArg::Buffer(out)])
        .expect("runs");
    let got = dev.download::<u64>(out).expect("reads");
    assert!(got[0] != 0 && got[1] != 0, "{got:x?}");
    assert_eq!(got[0], got[2], "one function, one address");
    assert_ne!(got[0], got[1], "two functions, two addresses");
    let module = dev
        .load(&Program::ptx_only(&ptx("ld.u32 	%r1, [%rd3];")))
        .expect("loads");
    let e = dev
        .launch(module, "k", one, &[KernelArg::Buffer(out)])
        .expect_err("a load from a function's code");
    assert!(e.to_string().contains("the code of inc"), "{e}");
}
