//! The CUDA backend. Without a GPU it must say "no GPU" cleanly; with one, the
//! hand-written saxpy PTX must give what the virtual device gives for the
//! device-IR module it mirrors.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;

use common::*;
use gpu_harness::device::cuda::{self, Probe};
use gpu_harness::device::{Device, DeviceError, DeviceExt, KernelArg, LaunchConfig, Program};

const SAXPY_PTX: &str = include_str!("data/saxpy.ptx");

fn run_saxpy(dev: &mut dyn Device, program: &Program<'_>) -> Result<Vec<f32>, DeviceError> {
    let h = dev.load(program)?;
    let x: Vec<f32> = (0..10).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..10).map(|i| 100.0 - i as f32).collect();
    let xb = dev.upload(&x)?;
    let yb = dev.upload(&y)?;
    let args = [
        KernelArg::I32(10),
        KernelArg::F32(3.0),
        KernelArg::Buffer(xb),
        KernelArg::Buffer(yb),
    ];
    dev.launch(h, "saxpy", LaunchConfig::linear(3, 4), &args)?;
    dev.download(yb)
}

#[test]
fn saxpy_ptx_on_the_gpu_matches_the_virtual_device() {
    let module = saxpy_module();
    let (mut virt, _) = load(&module);
    let want = run_saxpy(&mut virt, &Program::ir(&module)).unwrap();
    assert_eq!(want[3], 3.0 * 1.5 + 97.0);
    match cuda::probe() {
        Probe::NoGpu(reason) => {
            assert!(reason.to_string().starts_with("no GPU"), "{reason}");
            let _ = writeln!(
                std::io::stderr(),
                "saxpy_ptx_on_the_gpu_matches_the_virtual_device: NOT RUN on a GPU: {reason}"
            );
        }
        Probe::Gpu(mut gpu) => {
            let program = Program::with_ptx(&module, SAXPY_PTX);
            let got = run_saxpy(&mut gpu, &program).unwrap();
            assert_eq!(got, want, "GPU readback differs on {}", gpu.describe());
            // Argument checks hold on the GPU too, since the program carries IR.
            let h = gpu.load(&program).unwrap();
            let e = gpu
                .launch(h, "saxpy", LaunchConfig::linear(1, 1), &[])
                .unwrap_err();
            assert!(matches!(e, DeviceError::BadArgs { .. }), "{e}");
        }
    }
}

#[test]
fn the_virtual_device_refuses_a_program_without_ir() {
    let (mut virt, _) = load(&saxpy_module());
    let e = virt.load(&Program::ptx_only(SAXPY_PTX)).unwrap_err();
    assert!(matches!(e, DeviceError::MissingInput { .. }), "{e}");
}
