//! The CUDA backend, on PTX from our own pipeline (libNVVM at `-opt=3` with the
//! project's options, through `compile_driver`), never on hand-written PTX: a
//! hand-written `.version 7.0` module would load where the real lane's PTX
//! (`.version 8.8`) does not.
//!
//! Without a GPU every GPU test prints NOT RUN and passes, unless
//! `REQUIRE_GPU=1`, under which it fails. What needs no GPU runs anyway: the
//! pipeline's PTX (saxpy, a trapping kernel, a spinning kernel) is compiled
//! and assembled with the bundled `ptxas` for the target, which is the first
//! half of the backend's load path.
//!
//! On a GPU: saxpy matches the virtual device value for value; a kernel that
//! traps fails its own launch (its context is lost) while a saxpy after it, on
//! a fresh device, still passes; a kernel that spins forever is reported as a
//! hang within its timeout, and a saxpy after it still passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use device_ir::*;
use gpu_harness::device::cuda::{self, CudaDevice, Probe};
use gpu_harness::device::virt::VirtualDevice;
use gpu_harness::device::{Device, DeviceError, DeviceExt, KernelArg, LaunchConfig, Program};
use gpu_harness::fixture::Fixture;
use gpu_harness::launch::{launch_fixture, read_back};

fn note(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| v == "1")
}

/// The GPU, or `None` with a NOT RUN line; `REQUIRE_GPU=1` turns "no GPU"
/// into a failure.
fn gpu_or_skip(test: &str) -> Option<CudaDevice> {
    match cuda::probe() {
        Probe::Gpu(gpu) => {
            note(&format!("{test}: on {}", gpu.describe()));
            Some(gpu)
        }
        Probe::NoGpu(reason) => {
            assert!(reason.to_string().starts_with("no GPU"), "{reason}");
            assert!(!flag("REQUIRE_GPU"), "{test}: REQUIRE_GPU=1, but {reason}");
            note(&format!("{test}: NOT RUN on a GPU: {reason}"));
            None
        }
    }
}

/// libNVVM, or `None` with a NOT RUN line; `REQUIRE_LIBNVVM=1` or
/// `REQUIRE_GPU=1` turns its absence into a failure.
fn nvvm_or_skip(test: &str) -> Option<&'static compile_driver::Libnvvm> {
    match compile_driver::libnvvm() {
        Ok(n) => Some(n),
        Err(e) => {
            assert!(
                !flag("REQUIRE_LIBNVVM") && !flag("REQUIRE_GPU"),
                "{test}: libNVVM is required: {e}"
            );
            note(&format!("{test}: NOT RUN: {e}"));
            None
        }
    }
}

/// The saxpy fixture through the project's compile path: its manifest, its
/// lowering and the `-opt=3` PTX the oracle runs.
fn saxpy_pipeline(nvvm: &compile_driver::Libnvvm) -> (Fixture, compile_driver::Lowered, String) {
    let f = Fixture::load(&fixture_dir("saxpy")).unwrap();
    let c = compile_driver::compile(&f.kernel, &compile_driver::RustcOptions::default(), nvvm)
        .unwrap_or_else(|e| panic!("saxpy does not compile: {e}"));
    (f, c.lowered, c.artifacts.ptx_o3)
}

/// `-opt=3` PTX of a hand-built module, through the project's options.
fn module_ptx(nvvm: &compile_driver::Libnvvm, m: &Module) -> String {
    verify(m).unwrap_or_else(|e| panic!("test module does not verify:\n{e}"));
    let ir = nvvm_emit::print_module(m);
    let path = Path::new("cuda_backend.rs");
    compile_driver::verify(path, nvvm, &ir).unwrap();
    compile_driver::ptx(path, nvvm, &ir, compile_driver::OPT_DEFAULT).unwrap()
}

/// `boom()`: traps at once, as a kernel's panic does (`trap;` then
/// `unreachable`, the lowering's own sequence).
fn trap_module() -> Module {
    let mut m = Module::new();
    let k = kernel(&mut m, "boom", &[]);
    let mut b = FunctionBuilder::new(&mut m, k);
    b.inline_asm("trap;", "", &[], None, true);
    b.unreachable();
    m
}

/// `spin(flag)`: waits, with relaxed atomic loads, for `*flag != 0`, which
/// nobody ever writes: a kernel that never finishes.
fn spin_module() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    let p = m.types.ptr(i32t, AddressSpace::Global);
    let k = kernel(&mut m, "spin", &[p]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let flag = b.block_params(b.entry_block())[0];
    let wait = b.create_block();
    let exit = b.create_block();
    b.jump(wait, &[]);
    b.switch_to_block(wait);
    let v = b.atomic_load(i32t, flag, Ordering::Relaxed, Scope::Gpu);
    let zero = b.iconst(i32t, 0);
    let unset = b.icmp(IntCC::Eq, v, zero);
    b.brif(unset, wait, &[], exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

/// Runs the saxpy fixture's launches on `dev` and reads `y` back.
fn run_saxpy_fixture(
    dev: &mut dyn Device,
    f: &Fixture,
    l: &compile_driver::Lowered,
    program: &Program<'_>,
) -> Vec<(String, Vec<u64>)> {
    let bufs = launch_fixture(f, l, dev, program)
        .unwrap_or_else(|e| panic!("saxpy on {}: {e}", dev.describe()));
    read_back(f, dev, &bufs).unwrap()
}

/// saxpy's readback on the virtual device (from the IR): the reference.
fn saxpy_on_the_virtual_device(
    f: &Fixture,
    l: &compile_driver::Lowered,
) -> Vec<(String, Vec<u64>)> {
    let mut virt = VirtualDevice::new();
    let want = run_saxpy_fixture(&mut virt, f, l, &Program::ir(&l.module));
    // y[i] = 2 * i + (1000 - i), the manifest's inputs.
    let y = &want[0].1;
    assert_eq!(f32::from_bits(y[3] as u32), 2.0 * 3.0 + 997.0);
    want
}

/// saxpy on a fresh GPU device (its own context), compared with the virtual device.
fn saxpy_passes_on_a_fresh_gpu(test: &str, f: &Fixture, l: &compile_driver::Lowered, ptx: &str) {
    let want = saxpy_on_the_virtual_device(f, l);
    let Probe::Gpu(mut gpu) = cuda::probe() else {
        panic!("{test}: the GPU disappeared");
    };
    let got = run_saxpy_fixture(&mut gpu, f, l, &Program::with_ptx(&l.module, ptx));
    assert_eq!(
        got,
        want,
        "{test}: GPU readback differs on {}",
        gpu.describe()
    );
}

#[test]
fn pipeline_ptx_assembles_with_the_bundled_ptxas_for_the_target() {
    // No GPU needed: the cubin half of the backend's load path.
    let test = "pipeline_ptx_assembles_with_the_bundled_ptxas_for_the_target";
    let Some(nvvm) = nvvm_or_skip(test) else {
        return;
    };
    let Some(ptxas) = nvvm_emit::Ptxas::find() else {
        assert!(
            !flag("REQUIRE_GPU"),
            "{test}: no ptxas (run ci/setup-tools.sh)"
        );
        note(&format!("{test}: NOT RUN: no ptxas"));
        return;
    };
    let (_, _, saxpy) = saxpy_pipeline(nvvm);
    for (name, ptx) in [
        ("saxpy", saxpy),
        ("boom", module_ptx(nvvm, &trap_module())),
        ("spin", module_ptx(nvvm, &spin_module())),
    ] {
        assert!(ptx.contains(".version"), "{name}: not PTX:\n{ptx}");
        if name == "boom" {
            assert!(ptx.contains("trap;"), "the trap was optimized away:\n{ptx}");
        }
        if std::env::var_os("SHOW_PTX").is_some() {
            note(&ptx);
        }
        let cubin = ptxas
            .assemble(ptx.as_bytes(), compile_driver::TARGET_ARCH)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&cubin[..4], b"\x7fELF", "{name}: not a cubin");
        note(&format!(
            "{test}: {name}: {} bytes of PTX, a {}-byte cubin for sm_{}",
            ptx.len(),
            cubin.len(),
            compile_driver::TARGET_ARCH
        ));
    }
}

#[test]
fn saxpy_from_the_pipeline_on_the_gpu_matches_the_virtual_device() {
    let test = "saxpy_from_the_pipeline_on_the_gpu_matches_the_virtual_device";
    let Some(mut gpu) = gpu_or_skip(test) else {
        return;
    };
    let nvvm = nvvm_or_skip(test).expect("libNVVM is needed on a GPU machine");
    let (f, l, ptx) = saxpy_pipeline(nvvm);
    let want = saxpy_on_the_virtual_device(&f, &l);
    let program = Program::with_ptx(&l.module, &ptx);
    let got = run_saxpy_fixture(&mut gpu, &f, &l, &program);
    assert_eq!(got, want, "GPU readback differs on {}", gpu.describe());
    // Argument checks hold on the GPU too, since the program carries IR.
    let h = gpu.load(&program).unwrap();
    let e = gpu
        .launch(h, "saxpy", LaunchConfig::linear(1, 1), &[])
        .unwrap_err();
    assert!(matches!(e, DeviceError::BadArgs { .. }), "{e}");
}

#[test]
fn a_trapping_kernel_fails_its_own_run_and_a_later_saxpy_passes() {
    let test = "a_trapping_kernel_fails_its_own_run_and_a_later_saxpy_passes";
    let Some(mut gpu) = gpu_or_skip(test) else {
        return;
    };
    let nvvm = nvvm_or_skip(test).expect("libNVVM is needed on a GPU machine");
    let m = trap_module();
    let ptx = module_ptx(nvvm, &m);
    let h = gpu.load(&Program::with_ptx(&m, &ptx)).unwrap();
    let e = gpu
        .launch(h, "boom", LaunchConfig::linear(1, 32), &[])
        .unwrap_err();
    match &e {
        DeviceError::KernelFault { kernel, error, .. } => {
            assert_eq!(kernel, "boom");
            assert!(error.starts_with("CUDA_ERROR_"), "{e}");
        }
        other => panic!("expected a kernel fault, got: {other}"),
    }
    // The faulted context refuses more work, saying why.
    let again = gpu.alloc(4).unwrap_err();
    assert!(matches!(again, DeviceError::ContextLost(_)), "{again}");
    drop(gpu);
    let (f, l, ptx) = saxpy_pipeline(nvvm);
    saxpy_passes_on_a_fresh_gpu(test, &f, &l, &ptx);
}

#[test]
fn a_spinning_kernel_is_a_hang_within_its_timeout_and_a_later_saxpy_passes() {
    let test = "a_spinning_kernel_is_a_hang_within_its_timeout_and_a_later_saxpy_passes";
    let Some(mut gpu) = gpu_or_skip(test) else {
        return;
    };
    let nvvm = nvvm_or_skip(test).expect("libNVVM is needed on a GPU machine");
    let m = spin_module();
    let ptx = module_ptx(nvvm, &m);
    let timeout = Duration::from_secs(2);
    gpu.set_kernel_timeout(timeout);
    let h = gpu.load(&Program::with_ptx(&m, &ptx)).unwrap();
    let flag = gpu.upload(&[0i32]).unwrap();
    let start = Instant::now();
    let e = gpu
        .launch(
            h,
            "spin",
            LaunchConfig::linear(1, 1),
            &[KernelArg::Buffer(flag)],
        )
        .unwrap_err();
    let took = start.elapsed();
    match &e {
        DeviceError::KernelHang { kernel, timeout: t } => {
            assert_eq!(kernel, "spin");
            assert_eq!(*t, timeout);
        }
        other => panic!("expected a hang, got: {other}"),
    }
    assert!(took >= timeout, "reported a hang after only {took:?}");
    assert!(
        took < timeout + Duration::from_secs(5),
        "the hang took {took:?} to report"
    );
    // Dropping the device abandons the spinning context without blocking.
    let start = Instant::now();
    drop(gpu);
    assert!(start.elapsed() < Duration::from_secs(5), "dropping blocked");
    let (f, l, ptx) = saxpy_pipeline(nvvm);
    saxpy_passes_on_a_fresh_gpu(test, &f, &l, &ptx);
}

#[test]
fn the_virtual_device_refuses_a_program_without_ir() {
    let (mut virt, _) = load(&saxpy_module());
    let e = virt.load(&Program::ptx_only("// PTX only\n")).unwrap_err();
    assert!(matches!(e, DeviceError::MissingInput { .. }), "{e}");
}
