//! A fixture's launches on a device: its manifest's buffers allocated and
//! filled, each launch's arguments laid out in the flat ABI of the lowering,
//! the kernels run, the buffers read back. The pipeline's device stage runs
//! it on the chosen device; the `ptx-forms` shape check runs it on the
//! virtual device to count the barriers a thread executes.

use mir_lower::Lowered;

use crate::device::virt::{Limits, RaceAccess, RaceMemory, RaceReport, VirtualDevice};
use crate::device::{Aggregate, Buffer, Device, DeviceError, KernelArg, ModuleHandle, Program};
use crate::fixture::{Arg, ArgSpec, ElemTy, Fixture, LaunchSpec, WideTy};
use crate::host::Readback;

/// Why the launches failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The manifest's launch does not fit the module: a missing kernel, a
    /// wrong argument count, an unknown buffer, a malformed argument.
    #[error("{0}")]
    Mismatch(String),
    /// The device refused or faulted.
    #[error(transparent)]
    Device(DeviceError),
    /// A launch trapped (a Rust panic on the device); the launches after it
    /// did not run.
    #[error("launch {launch} (`{kernel}`) trapped: {source}")]
    Trap {
        /// The launch, counted from 0 in manifest order.
        launch: usize,
        /// Its kernel.
        kernel: String,
        /// The device's report of the trap.
        source: Box<DeviceError>,
    },
    /// The device found a data race; the message names both accesses by the
    /// manifest's buffer names and element indices.
    #[error("{message}")]
    Race {
        /// The report, with the places in the manifest's words.
        message: String,
    },
}

impl LaunchError {
    /// The launch that trapped, if this is a trap.
    pub fn trapped_launch(&self) -> Option<usize> {
        match self {
            LaunchError::Trap { launch, .. } => Some(*launch),
            _ => None,
        }
    }
}

impl From<DeviceError> for LaunchError {
    fn from(e: DeviceError) -> Self {
        LaunchError::Device(e)
    }
}

/// A manifest buffer on the device.
#[derive(Clone, Debug)]
pub struct DeviceBuffer {
    /// The manifest's name.
    pub name: String,
    /// Its element type.
    pub ty: ElemTy,
    /// The device's handle.
    pub buffer: Buffer,
    /// Its length in elements.
    pub len: usize,
}

/// The argument of a scalar parameter, from its bit pattern.
fn scalar_arg(t: ElemTy, bits: u64) -> KernelArg {
    match t {
        ElemTy::U8 => KernelArg::U8(bits as u8),
        ElemTy::U16 => KernelArg::U16(bits as u16),
        ElemTy::U32 => KernelArg::U32(bits as u32),
        ElemTy::U64 => KernelArg::U64(bits),
        ElemTy::I8 => KernelArg::I8(bits as u8 as i8),
        ElemTy::I16 => KernelArg::I16(bits as u16 as i16),
        ElemTy::I32 => KernelArg::I32(bits as u32 as i32),
        ElemTy::I64 => KernelArg::I64(bits as i64),
        ElemTy::F32 => KernelArg::F32(f32::from_bits(bits as u32)),
        ElemTy::F64 => KernelArg::F64(f64::from_bits(bits)),
        ElemTy::Usize => KernelArg::U64(bits),
        ElemTy::Isize => KernelArg::I64(bits as i64),
        ElemTy::Bool => KernelArg::Bool(bits != 0),
    }
}

/// The kernel argument of a resolved manifest scalar (up to 64 bits, or
/// 128); `None` for a buffer, whose argument is its device address.
pub fn scalar_argument(arg: &Arg) -> Option<KernelArg> {
    match *arg {
        Arg::Scalar(t, bits) => Some(scalar_arg(t, bits)),
        Arg::Wide(WideTy::U128, bits) => Some(KernelArg::U128(bits)),
        Arg::Wide(WideTy::I128, bits) => Some(KernelArg::I128(bits as i128)),
        Arg::Buffer(_) | Arg::ByValue(_) => None,
    }
}

/// The argument of parameter `i` of `kernel`, an aggregate of `size` bytes
/// passed by value: a `by_value` argument of exactly that many bytes, its
/// pointer fields naming buffers that `buffer` knows.
fn by_value_argument(
    kernel: &str,
    i: usize,
    p: &mir_lower::KernelParam,
    size: u64,
    a: Arg,
    buffer: &dyn Fn(&str) -> Option<(Buffer, usize)>,
) -> Result<KernelArg, LaunchError> {
    let bad = |what: String| {
        LaunchError::Mismatch(format!(
            "kernel `{kernel}`, argument {i}: parameter type `{}` is an aggregate of {size} \
             bytes passed by value; {what}",
            p.ty
        ))
    };
    match a {
        Arg::ByValue(a) if a.bytes.len() as u64 == size => {
            let mut pointers = Vec::new();
            for (at, name) in a.buffers {
                let (b, _) = buffer(&name).ok_or_else(|| {
                    LaunchError::Mismatch(format!(
                        "kernel `{kernel}`, argument {i}: unknown buffer `{name}` in `by_value`"
                    ))
                })?;
                pointers.push((at as u64, b));
            }
            Ok(KernelArg::Bytes(Aggregate {
                bytes: a.bytes,
                pointers,
            }))
        }
        Arg::ByValue(a) => Err(bad(format!("`by_value` gives {} bytes", a.bytes.len()))),
        other => Err(bad(format!(
            "give its bytes with `by_value`, not {other:?}"
        ))),
    }
}

/// The device arguments of one launch of `kernel`, whose parameters are
/// `params`, from the manifest's `args`, in the flat ABI of the lowering:
/// a buffer's address (and its length where the parameter takes two
/// slots), a scalar, an aggregate's bytes; a zero-sized parameter takes
/// nothing. `buffer` gives a manifest buffer's device handle and length.
pub fn launch_arguments(
    kernel: &str,
    params: &[mir_lower::KernelParam],
    args: &[ArgSpec],
    buffer: &dyn Fn(&str) -> Option<(Buffer, usize)>,
) -> Result<Vec<KernelArg>, LaunchError> {
    let mismatch = LaunchError::Mismatch;
    let mut out = Vec::new();
    for (i, (p, a)) in params.iter().zip(args).enumerate() {
        let a = a.resolve().map_err(|e| mismatch(e.to_string()))?;
        if let Some(size) = p.by_value_size {
            out.push(by_value_argument(kernel, i, p, size, a, buffer)?);
            continue;
        }
        match (a, p.slots) {
            (_, 0) => {}
            (Arg::ByValue(_), _) => {
                return Err(mismatch(format!(
                    "kernel `{kernel}`, argument {i}: `by_value` for parameter type `{}`, \
                     which is not an aggregate passed by value",
                    p.ty
                )));
            }
            (a @ (Arg::Scalar(..) | Arg::Wide(..)), 1) => out.extend(scalar_argument(&a)),
            (Arg::Buffer(name), slots) => {
                let (b, len) =
                    buffer(&name).ok_or_else(|| mismatch(format!("unknown buffer `{name}`")))?;
                out.push(KernelArg::Buffer(b));
                if slots == 2 {
                    out.push(KernelArg::U64(len as u64));
                }
            }
            (a, s) => {
                return Err(mismatch(format!(
                    "argument {a:?} for a parameter of {s} slots"
                )));
            }
        }
    }
    Ok(out)
}

/// Loads `program`, allocates and fills the manifest's buffers and runs every
/// launch of `f`, in order. Returns the buffers, in manifest order.
pub fn launch_fixture(
    f: &Fixture,
    l: &Lowered,
    dev: &mut dyn Device,
    program: &Program<'_>,
) -> Result<Vec<DeviceBuffer>, LaunchError> {
    launch_fixture_as(f, l, dev, program, &|k| k.to_owned())
}

/// [`launch_fixture`], launching the device's kernel `device_name(k)` for
/// the manifest's kernel `k`, with `k`'s parameters: a program compiled
/// elsewhere with the same flat parameters (a CUDA C++ twin through NVRTC)
/// runs the fixture's buffers and launches.
pub fn launch_fixture_as(
    f: &Fixture,
    l: &Lowered,
    dev: &mut dyn Device,
    program: &Program<'_>,
    device_name: &dyn Fn(&str) -> String,
) -> Result<Vec<DeviceBuffer>, LaunchError> {
    let module = dev.load(program)?;
    let mut bufs = Vec::new();
    for b in &f.manifest.buffer {
        let bytes = b.initial_bytes();
        let buffer = dev.alloc(bytes.len().max(1))?;
        dev.write(buffer, 0, &bytes)?;
        bufs.push(DeviceBuffer {
            name: b.name.clone(),
            ty: b.ty,
            buffer,
            len: b.len,
        });
    }
    let mismatch = LaunchError::Mismatch;
    for (n, launch) in f.manifest.launch.iter().enumerate() {
        let params = l
            .kernel_params
            .get(&launch.kernel)
            .ok_or_else(|| mismatch(format!("no kernel `{}` in the module", launch.kernel)))?;
        if params.len() != launch.args.len() {
            return Err(mismatch(format!(
                "kernel `{}` takes {} parameters, the manifest gives {} arguments",
                launch.kernel,
                params.len(),
                launch.args.len()
            )));
        }
        let find = |name: &str| {
            bufs.iter()
                .find(|b| b.name == name)
                .map(|b| (b.buffer, b.len))
        };
        let args = launch_arguments(&launch.kernel, params, &launch.args, &find)?;
        write_constants(l, dev, module, launch)?;
        let cfg = launch.config();
        if let Err(e) = dev.launch(module, &device_name(&launch.kernel), cfg, &args) {
            if let Some(r) = e.race() {
                return Err(LaunchError::Race {
                    message: race_message(f, &bufs, r),
                });
            }
            if e.is_trap() {
                return Err(LaunchError::Trap {
                    launch: n,
                    kernel: launch.kernel.clone(),
                    source: Box::new(e),
                });
            }
            return Err(e.into());
        }
    }
    Ok(bufs)
}

/// The host's writes into constant memory before `launch`, in order: each
/// names a `ConstantMemory` static of the kernel crate and gives exactly its
/// bytes. A static that no kernel reads is not in the module, so its write
/// changes nothing a device could show and is left out there.
pub fn write_constants(
    l: &Lowered,
    dev: &mut dyn Device,
    module: ModuleHandle,
    launch: &LaunchSpec,
) -> Result<(), LaunchError> {
    for c in &launch.constants {
        let path = c.path();
        let mismatch = |why: String| {
            LaunchError::Mismatch(format!(
                "the launch of `{}` writes constant `{}`: {why}",
                launch.kernel, c.name
            ))
        };
        let constant = l.host_constants.get(&path).ok_or_else(|| {
            mismatch(format!(
                "kernel.rs has no `static {}: ConstantMemory<_>` at its top level",
                c.name
            ))
        })?;
        let bytes = c
            .bytes()
            .ok_or_else(|| mismatch(format!("a value is not exactly a {}", c.ty.rust())))?;
        if bytes.len() as u64 != constant.size {
            return Err(mismatch(format!(
                "{} bytes for a constant of {} bytes",
                bytes.len(),
                constant.size
            )));
        }
        if !l
            .module
            .globals
            .values()
            .any(|g| g.symbol == constant.symbol)
        {
            continue;
        }
        dev.write_symbol(module, &constant.symbol, &bytes)?;
    }
    Ok(())
}

/// The first `readback` elements of every buffer that has one, as bit patterns.
pub fn read_back(
    f: &Fixture,
    dev: &mut dyn Device,
    bufs: &[DeviceBuffer],
) -> Result<Readback, LaunchError> {
    let mut out = Vec::new();
    for (b, spec) in bufs.iter().zip(&f.manifest.buffer) {
        if spec.readback == 0 {
            continue;
        }
        let bytes = dev.read(b.buffer)?;
        let n = b.ty.size();
        let vals = bytes
            .chunks(n)
            .take(spec.readback)
            .map(crate::host::le_word)
            .collect();
        out.push((b.name.clone(), vals));
    }
    Ok(out)
}

/// The barriers each thread of block 0 passes over every launch of `f`, run
/// on the virtual device from the device IR (race detection off: a racy
/// kernel's barriers still count).
pub fn barriers_per_thread(f: &Fixture, l: &Lowered) -> Result<u64, LaunchError> {
    let mut limits = Limits {
        detect_races: false,
        ..Limits::default()
    };
    if let Some(steps) = f.manifest.step_limit {
        limits.max_steps = steps;
    }
    let mut dev = VirtualDevice::with_limits(limits);
    launch_fixture(f, l, &mut dev, &Program::ir(&l.module))?;
    Ok(dev.barriers_passed())
}

/// The device's race report, with each access's buffer and element index
/// named as the manifest names them.
fn race_message(f: &Fixture, bufs: &[DeviceBuffer], r: &RaceReport) -> String {
    let place = |a: &RaceAccess| match &a.memory {
        RaceMemory::Buffer { buffer } => bufs
            .iter()
            .find(|b| b.buffer == *buffer)
            .map(|b| {
                format!(
                    "buffer `{}`, element {} ({})",
                    b.name,
                    a.offset / b.ty.size() as u64,
                    b.ty.rust()
                )
            })
            .unwrap_or_else(|| format!("buffer #{}", buffer.index())),
        other => other.to_string(),
    };
    format!(
        "fixture {}: {r}\n  first access:  {}\n  second access: {}",
        f.name,
        place(&r.first),
        place(&r.second)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mir_import::model::{IntTy, Ty};
    use mir_lower::KernelParam;

    fn spec(text: &str) -> ArgSpec {
        toml::from_str(text).expect("an argument table")
    }

    fn param(by_value_size: Option<u64>) -> KernelParam {
        KernelParam {
            ty: Ty::Int(IntTy::U32),
            slots: 1,
            by_value_size,
        }
    }

    /// A pointer field names a manifest buffer, which becomes the device's
    /// handle at its offset; an unknown one, a wrong size and a `by_value`
    /// for a scalar parameter are refused by name.
    #[test]
    fn a_by_value_argument_resolves_its_pointer_fields_to_buffers() {
        let find = |name: &str| (name == "x").then_some((Buffer(3), 8));
        let args = [spec(
            "by_value = [{ u32 = 7 }, { u32 = 0 }, { buffer = \"x\" }]",
        )];
        let got = launch_arguments("k", &[param(Some(16))], &args, &find).expect("resolves");
        let KernelArg::Bytes(a) = &got[0] else {
            panic!("{got:?}");
        };
        assert_eq!(a.bytes[..4], [7, 0, 0, 0]);
        assert_eq!(a.pointers, [(8, Buffer(3))]);
        for (params, args, why) in [
            (
                param(Some(16)),
                spec("by_value = [{ u64 = 7 }, { buffer = \"nope\" }]"),
                "kernel `k`, argument 0: unknown buffer `nope` in `by_value`",
            ),
            (
                param(Some(16)),
                spec("by_value = [{ u64 = 7 }]"),
                "is an aggregate of 16 bytes passed by value; `by_value` gives 8 bytes",
            ),
            (
                param(Some(4)),
                spec("u32 = 7"),
                "give its bytes with `by_value`",
            ),
            (
                param(None),
                spec("by_value = [{ u32 = 7 }]"),
                "`by_value` for parameter type `u32`, which is not an aggregate passed by value",
            ),
        ] {
            let e = launch_arguments("k", &[params], &[args], &find).expect_err("refused");
            assert!(e.to_string().contains(why), "{e}");
        }
    }
}
