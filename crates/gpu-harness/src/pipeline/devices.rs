//! The device stages of the pipeline: the fixture's launches on the chosen
//! device and on the PTX device, each judged against the manifest (values
//! read back, or an expected race or trap).

use std::time::Duration;

use super::{DeviceChoice, Options, Run};
use crate::compare::compare;
use crate::device::ptx::PtxDevice;
use crate::device::virt::{Limits, VirtualDevice};
use crate::device::{Device, FloatMath, Program};
use crate::fixture::Fixture;
use crate::launch::{launch_fixture, read_back};
use crate::stage::StageError;
use crate::tolerance::Tolerance;

/// The device the options choose, and its description for the report. A GPU
/// reports a launch still running after `kernel_timeout` as a hang.
pub(super) fn device_for(
    opts: &Options,
    limits: Limits,
    kernel_timeout: Duration,
) -> Result<(Box<dyn Device>, String), StageError> {
    match opts.device {
        DeviceChoice::Virtual | DeviceChoice::Both => Ok((
            Box::new(VirtualDevice::with_limits(limits)),
            "virtual device".into(),
        )),
        DeviceChoice::Ptx => Ok((
            Box::new(PtxDevice::with_limits(limits)),
            "PTX device (libNVVM's -opt=3 PTX)".into(),
        )),
        DeviceChoice::Auto => {
            let a = crate::device::cuda::auto_with_timeout(limits, kernel_timeout);
            let why = a
                .no_gpu
                .as_ref()
                .map_or_else(|| "GPU".to_string(), |n| format!("virtual device ({n})"));
            let d = a.device.describe();
            Ok((a.device, format!("{why}: {d}")))
        }
        DeviceChoice::Cuda => match crate::device::cuda::probe() {
            crate::device::cuda::Probe::Gpu(mut g) => {
                g.set_kernel_timeout(kernel_timeout);
                let d = g.describe();
                Ok((Box::new(g), d))
            }
            crate::device::cuda::Probe::NoGpu(n) => Err(StageError::NoGpu { why: n.to_string() }),
        },
    }
}

/// The CPU devices' limits for `f`: the options', with the manifest's
/// step limit where it gives one.
pub(super) fn device_limits(f: &Fixture, opts: &Options) -> Limits {
    let mut limits = opts.limits;
    if let Some(steps) = f.manifest.step_limit {
        limits.max_steps = steps;
    }
    limits
}

/// A device run of a fixture that expects a trap: it passes where a launch
/// trapped, in the launch the host panicked in (when the host did).
pub(super) fn judge_trap(
    ran: Result<(), StageError>,
    runner: &str,
    host_trap: Option<usize>,
) -> Result<String, StageError> {
    match ran {
        Ok(()) => Err(StageError::TrapMissing {
            runner: runner.into(),
        }),
        Err(StageError::Launch(e)) => match (e.trapped_launch(), host_trap) {
            (Some(device), Some(host)) if device != host => Err(StageError::TrapMismatch {
                runner: runner.into(),
                host,
                device,
            }),
            (Some(_), _) => Ok(format!("{runner}: {e}, as the manifest expects")),
            (None, _) => Err(StageError::Launch(e)),
        },
        Err(e) => Err(e),
    }
}

/// The PTX device's stages of a run on both CPU devices: `ptx-device`
/// (libNVVM's `-opt=3` PTX, executed) and `ptx-compare` (its values against
/// the host run's). A value where the PTX device differs from the host while
/// the IR device agrees is a difference between our IR and libNVVM's PTX, and
/// the stage says so. Its values join `values`, tagged with the device. For
/// a fixture that expects a trap, `ptx-device` alone, judged against the
/// launch the host panicked in (`host_trap`).
#[allow(clippy::too_many_arguments)]
pub(super) fn ptx_stages(
    run: &mut Run,
    f: &Fixture,
    l: &mir_lower::Lowered,
    ptx: Option<&str>,
    opts: &Options,
    expected: Option<&crate::host::Readback>,
    host_trap: Option<usize>,
    ir: Option<&crate::host::Readback>,
    values: &mut Vec<crate::report::ValueReport>,
) {
    let Some(ptx) = ptx else {
        run.skip("ptx-device", "no PTX (libNVVM did not run)");
        return;
    };
    if f.manifest.expect_race {
        run.skip(
            "ptx-device",
            "the kernel races by design: its values depend on the schedule",
        );
        return;
    }
    let limits = device_limits(f, opts);
    if f.manifest.expect_trap {
        run.stage("ptx-device", || {
            let mut dev = PtxDevice::with_limits(limits);
            let program = Program::with_ptx(&l.module, ptx);
            let ran = launch_fixture(f, l, &mut dev, &program)
                .map(|_| ())
                .map_err(StageError::Launch);
            judge_trap(ran, "PTX device", host_trap).map(|detail| ((), detail))
        });
        return;
    }
    let got = run.stage("ptx-device", || {
        let mut dev = PtxDevice::with_limits(limits);
        let program = Program::with_ptx(&l.module, ptx);
        let bufs = launch_fixture(f, l, &mut dev, &program)?;
        let out = read_back(f, &mut dev, &bufs)?;
        let approx = dev.approx_instructions();
        let detail = format!(
            "PTX device (libNVVM's -opt=3 PTX): {} thread-instructions, {approx} of them .approx (computed with the host's functions: the GPU's bits may differ within the function's documented error)",
            dev.instructions()
        );
        Ok((out, detail))
    });
    let (Some(got), Some(exp)) = (got, expected) else {
        run.skip(
            "ptx-compare",
            "no PTX device readback or no expected values",
        );
        return;
    };
    let tolerance = Tolerance::of_module(&l.module);
    let mut ptx_values = Vec::new();
    run.stage("ptx-compare", || {
        compare(f, exp, &got, &tolerance, &mut ptx_values).map_err(|e| match (e, ir) {
            (StageError::ComparisonMismatch { bad, total }, Some(ir)) => {
                let first = ptx_values.iter().find(|v| !v.ok);
                let ir_agrees = first.is_some_and(|v| {
                    let host = exp
                        .iter()
                        .find(|(n, _)| *n == v.buffer)
                        .and_then(|(_, b)| b.get(v.index));
                    let irv = ir
                        .iter()
                        .find(|(n, _)| *n == v.buffer)
                        .and_then(|(_, b)| b.get(v.index));
                    host.is_some() && host == irv
                });
                StageError::PtxMismatch {
                    bad,
                    total,
                    first: first.map_or_else(String::new, |v| {
                        format!(
                            "{}[{}]: host {}, PTX device {}",
                            v.buffer, v.index, v.expected, v.got
                        )
                    }),
                    ir_agrees,
                }
            }
            (e, _) => e,
        })
    });
    for mut v in ptx_values {
        v.device = Some("ptx".into());
        values.push(v);
    }
}

/// The device stage: the fixture's launches on the chosen device (the PTX
/// when there is some, else the device IR), and the readback.
///
/// Returns the device's description once it is open, failed launches
/// included: a trap verdict names the device that trapped (under `--device
/// auto`, a GPU or the virtual device).
#[allow(clippy::type_complexity)]
pub(super) fn device_stage(
    f: &Fixture,
    l: &mir_lower::Lowered,
    ptx: Option<&str>,
    opts: &Options,
) -> (
    Option<String>,
    Result<(crate::host::Readback, Tolerance), StageError>,
) {
    let limits = device_limits(f, opts);
    let (mut dev, which) = match device_for(opts, limits, f.manifest.host_timeout()) {
        Ok(d) => d,
        Err(e) => return (None, Err(e)),
    };
    let program = match ptx {
        Some(p) => Program::with_ptx(&l.module, p),
        None => Program::ir(&l.module),
    };
    let ran = launch_fixture(f, l, dev.as_mut(), &program)
        .and_then(|bufs| read_back(f, dev.as_mut(), &bufs))
        .map_err(StageError::Launch)
        .map(|out| {
            let tolerance = match dev.float_math() {
                FloatMath::AsHost => Tolerance::default(),
                FloatMath::Libdevice => Tolerance::of_module(&l.module),
            };
            (out, tolerance)
        });
    (Some(which), ran)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceError;
    use crate::launch::LaunchError;

    fn trap(launch: usize, error: &str) -> Result<(), StageError> {
        Err(StageError::Launch(LaunchError::Trap {
            launch,
            kernel: "k".into(),
            source: Box::new(DeviceError::KernelFault {
                kernel: "k".into(),
                error: error.into(),
                message: "an illegal instruction was encountered".into(),
            }),
        }))
    }

    #[test]
    fn a_trap_is_judged_by_its_launch_against_the_hosts() {
        let ok = judge_trap(trap(1, "CUDA_ERROR_ILLEGAL_INSTRUCTION"), "device", Some(1));
        assert!(ok.is_ok_and(|d| d.contains("launch 1")));
        // The host's panic came in another launch.
        assert!(matches!(
            judge_trap(trap(0, "CUDA_ERROR_ILLEGAL_INSTRUCTION"), "device", Some(1)),
            Err(StageError::TrapMismatch {
                host: 1,
                device: 0,
                ..
            })
        ));
        // The host did not run: the device's trap stands on its own.
        assert!(judge_trap(trap(0, "CUDA_ERROR_ILLEGAL_INSTRUCTION"), "device", None).is_ok());
        assert!(matches!(
            judge_trap(Ok(()), "PTX device", Some(0)),
            Err(StageError::TrapMissing { .. })
        ));
        // Another fault is no trap, expected or not.
        let fault = Err(StageError::Launch(LaunchError::Device(
            DeviceError::KernelFault {
                kernel: "k".into(),
                error: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
                message: "an illegal memory access was encountered".into(),
            },
        )));
        assert!(matches!(
            judge_trap(fault, "device", Some(0)),
            Err(StageError::Launch(LaunchError::Device(_)))
        ));
    }

    #[test]
    fn a_gpu_trap_is_an_illegal_instruction_not_an_illegal_address() {
        let fault = |error: &str| DeviceError::KernelFault {
            kernel: "k".into(),
            error: error.into(),
            message: String::new(),
        };
        assert!(fault("CUDA_ERROR_ILLEGAL_INSTRUCTION").is_trap());
        assert!(!fault("CUDA_ERROR_LAUNCH_FAILED").is_trap());
        assert!(!fault("CUDA_ERROR_ILLEGAL_ADDRESS").is_trap());
        assert!(!fault("CUDA_ERROR_MISALIGNED_ADDRESS").is_trap());
    }
}
