//! The PTX device against the IR device on the same fixtures, in the same
//! run: thread-instructions per second of each, and the wall time of each
//! fixture's launches (load, buffers, every launch, readback).
//!
//! The two devices execute different instructions for one kernel (our device
//! IR, or libNVVM's optimized PTX, usually fewer), so the report gives both
//! throughputs and the ratio of times per fixture.
//!
//! `cargo bench -p gpu-harness --bench devices [FIXTURE...]`

use std::time::{Duration, Instant};

use gpu_harness::device::ptx::PtxDevice;
use gpu_harness::device::virt::{Limits, VirtualDevice};
use gpu_harness::device::{Device, Program};
use gpu_harness::fixture::Fixture;
use gpu_harness::launch::{launch_fixture, read_back};
use gpu_harness::shape::Artifacts;

/// Runs `f` on a fresh device from `make` until at least `min` has passed
/// (at least once); the seconds per run and the thread-instructions per run.
fn time<D: Device>(
    f: &Fixture,
    a: &Artifacts,
    min: Duration,
    mut make: impl FnMut() -> D,
    instructions: impl Fn(&D) -> u64,
) -> Option<(f64, u64)> {
    let start = Instant::now();
    let mut runs = 0u32;
    let mut instr = 0;
    while runs == 0 || start.elapsed() < min {
        let mut dev = make();
        let program = Program::with_ptx(&a.lowered.module, &a.ptx_o3);
        let bufs = launch_fixture(f, &a.lowered, &mut dev, &program).ok()?;
        read_back(f, &mut dev, &bufs).ok()?;
        instr = instructions(&dev);
        runs += 1;
    }
    Some((start.elapsed().as_secs_f64() / f64::from(runs), instr))
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let Ok(dirs) = Fixture::discover(&root) else {
        eprintln!("no fixtures under {}", root.display());
        return;
    };
    let Ok(nvvm) = compile_driver::libnvvm() else {
        eprintln!("NOT RUN: libNVVM is missing (bash ci/setup-tools.sh installs it)");
        return;
    };
    let min = Duration::from_millis(200);
    let (mut ir_s, mut ptx_s, mut ir_n, mut ptx_n) = (0.0, 0.0, 0u64, 0u64);
    let mut ratios = Vec::new();
    println!(
        "{:<32} {:>12} {:>12} {:>10} {:>10} {:>9}",
        "fixture", "IR instr", "PTX instr", "IR Mi/s", "PTX Mi/s", "PTX/IR t"
    );
    for dir in &dirs {
        let Ok(f) = Fixture::load(dir) else { continue };
        if f.manifest.expect_error.is_some()
            || f.manifest.expect_race
            || (!wanted.is_empty() && !wanted.contains(&f.name))
        {
            continue;
        }
        let Ok(a) = Artifacts::build(&f.kernel, nvvm) else {
            continue;
        };
        let mut limits = Limits::default();
        if let Some(s) = f.manifest.step_limit {
            limits.max_steps = s;
        }
        let ir = time(
            &f,
            &a,
            min,
            || VirtualDevice::with_limits(limits),
            VirtualDevice::instructions,
        );
        let ptx = time(
            &f,
            &a,
            min,
            || PtxDevice::with_limits(limits),
            PtxDevice::instructions,
        );
        let (Some((ti, ni)), Some((tp, np))) = (ir, ptx) else {
            println!("{:<32} (a device failed; the oracle says why)", f.name);
            continue;
        };
        println!(
            "{:<32} {ni:>12} {np:>12} {:>10.2} {:>10.2} {:>8.2}x",
            f.name,
            ni as f64 / ti / 1e6,
            np as f64 / tp / 1e6,
            tp / ti
        );
        (ir_s, ptx_s, ir_n, ptx_n) = (ir_s + ti, ptx_s + tp, ir_n + ni, ptx_n + np);
        ratios.push(tp / ti);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(0.0);
    let ir_rate = ir_n as f64 / ir_s / 1e6;
    let ptx_rate = ptx_n as f64 / ptx_s / 1e6;
    println!(
        "\n{} fixtures: IR device {ir_rate:.2} M thread-instr/s ({ir_n} in {ir_s:.3} s), PTX device {ptx_rate:.2} M thread-instr/s ({ptx_n} in {ptx_s:.3} s)",
        ratios.len()
    );
    println!(
        "PTX/IR throughput {:.2}x (target >= 0.5x); PTX/IR time per fixture: median {median:.2}x, total {:.2}x",
        ptx_rate / ir_rate,
        ptx_s / ir_s
    );
}
