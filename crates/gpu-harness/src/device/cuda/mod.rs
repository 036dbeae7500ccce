//! The CUDA backend: runs the oracle's PTX on a real GPU through the driver API,
//! which cudarc loads at run time, so building needs no CUDA toolkit.
//!
//! **Probing.** [`probe`] opens device 0 when the driver library loads and the
//! driver sees a device, and reads its name, compute capability and the
//! driver's CUDA version. Otherwise it answers [`Probe::NoGpu`] with the reason:
//! a typed value, not a failure, so a machine without a GPU runs the virtual
//! device instead.
//!
//! **Loading** ([`load`]). A GPU older than the PTX's target
//! ([`compile_driver::TARGET_ARCH`], `compute_90`) is refused with
//! [`DeviceError::ArchTooOld`], naming both. Otherwise the bundled `ptxas`
//! (`nvvm_emit::Ptxas`, from `tools/cuda`) assembles the PTX for the probed
//! `sm_XY` and the cubin is loaded: no JIT, so a driver older than the PTX's
//! `.version` (8.8 from libNVVM 12.9, which only r575+ JIT-compiles) still
//! runs it. Without `ptxas` the driver JIT-compiles the PTX
//! (`cuModuleLoadDataEx`, with its error and info log buffers). Every failure
//! is a [`DeviceError::CudaLoad`] carrying `ptxas`'s or the driver's log.
//!
//! **Isolation** (`context.rs`). Each [`CudaDevice`] owns a context of its own
//! (`cuCtxCreate`, not the shared primary context), made by [`probe`] and
//! destroyed when the device drops. The oracle probes once per fixture's
//! device stage, so a kernel that traps or touches an illegal address, which
//! leaves a sticky error in its context, fails that fixture only
//! ([`DeviceError::KernelFault`]); the device then refuses further work
//! ([`DeviceError::ContextLost`]) and the next fixture gets a fresh context.
//!
//! **Timeouts.** A launch waits by polling `cuStreamQuery` until
//! [`CudaDevice::kernel_timeout`] (default [`DEFAULT_KERNEL_TIMEOUT`]; the
//! oracle sets the manifest's `timeout_s`) and then reports
//! [`DeviceError::KernelHang`]. The hung context is abandoned: destroyed on a
//! detached thread, so that neither this fixture nor the next blocks on it.
//!
//! **The GPU lane** (`ci/gpu-lane.sh`) installs the tools, builds the oracle,
//! prints the GPU and driver, exits 2 when there is none, and runs the suite
//! once on `--device cuda`, writing `gpu-lane-report.json`.

mod context;
pub mod load;

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::time::Duration;

use cudarc::driver::result;
use cudarc::driver::sys;
use device_ir::Module;
use thiserror::Error;

use self::context::{Context, WaitError, cuda};
/// [`auto`](crate::device::auto) with a kernel timeout for the GPU.
pub use super::auto::auto_with_timeout;
use super::{
    Buffer, Device, DeviceError, KernelArg, LaunchConfig, ModuleHandle, Program, abi, buffer_range,
    entry,
};

/// How long a launch may run when nobody says otherwise.
pub const DEFAULT_KERNEL_TIMEOUT: Duration = Duration::from_secs(60);

/// Why no GPU is used.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum NoGpu {
    /// The driver library (`libcuda.so`) is not on this machine.
    #[error("no GPU: the CUDA driver library (libcuda) is not installed")]
    NoDriver,
    /// The driver loaded but did not start (or panicked while loading a symbol).
    #[error("no GPU: the CUDA driver did not start: {0}")]
    DriverInit(String),
    /// The driver started and sees no device.
    #[error("no GPU: the CUDA driver sees no device")]
    NoDevice,
    /// Device 0 exists but could not be opened.
    #[error("no GPU: device 0 could not be opened: {0}")]
    Open(String),
}

/// The outcome of looking for a GPU.
pub enum Probe {
    /// A GPU, opened (with a context of its own) and ready.
    Gpu(CudaDevice),
    /// No usable GPU, and why.
    NoGpu(NoGpu),
}

/// Looks for a GPU: device 0, when the driver library loads and sees one.
pub fn probe() -> Probe {
    // SAFETY: only tries to dlopen the driver library by its usual names.
    probe_with(|| unsafe { sys::is_culib_present() })
}

/// [`probe`], with the check that the driver library is present given by the
/// caller (tests use it to take the no-driver path on any machine).
pub fn probe_with(driver_present: impl FnOnce() -> bool) -> Probe {
    if !driver_present() {
        return Probe::NoGpu(NoGpu::NoDriver);
    }
    // cudarc panics when a driver symbol is missing; that means "no GPU" here.
    let opened = std::panic::catch_unwind(open_device_0);
    match opened {
        Ok(Ok(device)) => Probe::Gpu(device),
        Ok(Err(no)) => Probe::NoGpu(no),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "the driver panicked".to_owned());
            Probe::NoGpu(NoGpu::DriverInit(msg))
        }
    }
}

/// The driver's CUDA version as `12.9` (from `cuDriverGetVersion`'s 12090).
pub fn driver_version_text(version: i32) -> String {
    format!("{}.{}", version / 1000, (version % 1000) / 10)
}

fn open_device_0() -> Result<CudaDevice, NoGpu> {
    let init = |e: result::DriverError| NoGpu::DriverInit(e.to_string());
    result::init().map_err(init)?;
    let count = result::device::get_count().map_err(init)?;
    if count < 1 {
        return Err(NoGpu::NoDevice);
    }
    let open = |e: result::DriverError| NoGpu::Open(e.to_string());
    let dev = result::device::get(0).map_err(open)?;
    let name = result::device::get_name(dev).unwrap_or_else(|_| "unnamed GPU".to_owned());
    use sys::CUdevice_attribute::*;
    // SAFETY: `dev` came from `cuDeviceGet`.
    let major =
        unsafe { result::device::get_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) }
            .map_err(open)?;
    // SAFETY: as above.
    let minor =
        unsafe { result::device::get_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) }
            .map_err(open)?;
    let mut version = 0;
    // SAFETY: writes one int.
    let driver = match unsafe { sys::cuDriverGetVersion(&mut version) }.result() {
        Ok(()) => format!("driver CUDA {}", driver_version_text(version)),
        Err(_) => "driver version unknown".to_owned(),
    };
    let arch = load::arch_number(major, minor);
    let ctx = Context::create(dev).map_err(open)?;
    Ok(CudaDevice {
        description: format!("{name} ({}), {driver}, CUDA device 0", load::sm_name(arch)),
        arch,
        ctx,
        kernel_timeout: DEFAULT_KERNEL_TIMEOUT,
        lost: None,
        modules: Vec::new(),
        buffers: Vec::new(),
    })
}

/// A driver module handle; used only with its context bound.
struct RawModule(sys::CUmodule);

// SAFETY: see `RawModule`; the driver allows it from any thread that binds the
// owning context.
unsafe impl Send for RawModule {}

struct Loaded {
    raw: RawModule,
    ir: Option<Module>,
    /// Each entry's parameter sizes in bytes, from the PTX: the driver
    /// copies that many bytes from each argument's slot, which must hold
    /// them, whether or not device IR checked the arguments. `None` where
    /// the PTX reader does not take the PTX the driver took.
    entry_params: Option<HashMap<String, Vec<u64>>>,
}

/// Refuses a launch whose arguments the driver would read past: one per
/// parameter, each slot (16 bytes for a scalar or an address, an
/// aggregate's own bytes) at least as large as its `.param`.
fn check_slots(
    kernel: &str,
    sizes: Option<&Vec<u64>>,
    args: &[KernelArg],
) -> Result<(), DeviceError> {
    let bad = |message: String| DeviceError::BadArgs {
        kernel: kernel.to_owned(),
        message,
    };
    let sizes = sizes.ok_or_else(|| DeviceError::NoSuchKernel(kernel.to_owned()))?;
    if sizes.len() != args.len() {
        return Err(bad(format!(
            "takes {} parameters in its PTX, {} given",
            sizes.len(),
            args.len()
        )));
    }
    for (i, (&size, arg)) in sizes.iter().zip(args).enumerate() {
        let slot = match arg {
            KernelArg::Bytes(a) => a.bytes.len() as u64,
            _ => 16,
        };
        if slot < size {
            return Err(bad(format!(
                "parameter {i} is {size} bytes in the PTX; argument {arg:?} gives {slot}"
            )));
        }
    }
    Ok(())
}

/// Each `.entry`'s parameter sizes in `ptx`, if the PTX reader takes it.
fn entry_param_sizes(ptx: &str) -> Option<HashMap<String, Vec<u64>>> {
    let m = ptx_reader::parse(ptx).ok()?;
    Some(
        m.functions
            .iter()
            .filter(|f| f.kind == ptx_reader::FunctionKind::Entry)
            .map(|f| {
                let sizes = f
                    .params
                    .iter()
                    .map(|p| p.ty.size() * p.array.unwrap_or(1))
                    .collect();
                (f.name.clone(), sizes)
            })
            .collect(),
    )
}

/// A GPU, driven through the CUDA driver API, in a context of its own.
pub struct CudaDevice {
    description: String,
    arch: u32,
    ctx: Context,
    kernel_timeout: Duration,
    /// Why the context is dead (a fault or a hang), once it is.
    lost: Option<String>,
    modules: Vec<Loaded>,
    /// Device address and size of each buffer; freed with the context.
    buffers: Vec<(sys::CUdeviceptr, usize)>,
}

impl CudaDevice {
    /// The compute capability as `major * 10 + minor` (90 for an H100/H200).
    pub fn arch(&self) -> u32 {
        self.arch
    }

    /// How long a launch may run before it is reported as a hang.
    pub fn kernel_timeout(&self) -> Duration {
        self.kernel_timeout
    }

    /// Sets how long a launch may run before it is reported as a hang.
    pub fn set_kernel_timeout(&mut self, timeout: Duration) {
        self.kernel_timeout = timeout;
    }

    /// Binds the context, unless a fault or hang killed it.
    fn ready(&self) -> Result<(), DeviceError> {
        if let Some(why) = &self.lost {
            return Err(DeviceError::ContextLost(why.clone()));
        }
        self.ctx.bind()
    }

    fn buffer(&self, buffer: Buffer) -> Result<(sys::CUdeviceptr, usize), DeviceError> {
        entry(&self.buffers, buffer.0, "buffer").copied()
    }

    fn address(&self, buffer: Buffer, offset: u64) -> Result<u64, DeviceError> {
        let (ptr, len) = self.buffer(buffer)?;
        if offset > len as u64 {
            return Err(DeviceError::OutOfRange {
                buffer: buffer.0,
                start: offset,
                end: offset,
                len: len as u64,
            });
        }
        Ok(ptr + offset)
    }

    /// The image to load for `ptx`: a cubin from `ptxas` for this GPU, or the
    /// PTX itself (NUL-terminated) for the driver's JIT when there is no
    /// `ptxas`. Returns the image and how it was made, for messages.
    fn image(&self, ptx: &str) -> Result<(Vec<u8>, String), DeviceError> {
        let sm = load::sm_name(self.arch);
        match nvvm_emit::Ptxas::find() {
            Some(ptxas) => match ptxas.assemble(ptx.as_bytes(), self.arch) {
                Ok(cubin) => Ok((cubin, format!("a cubin from ptxas -arch={sm}"))),
                Err(e) => Err(DeviceError::CudaLoad {
                    via: format!("ptxas {} -arch={sm}", e.path.display()),
                    error: match e.status {
                        Some(code) => format!("ptxas exited with status {code}"),
                        None => "ptxas did not run".to_owned(),
                    },
                    log: load::format_log(e.log.as_bytes()),
                }),
            },
            None => {
                let text = CString::new(ptx).map_err(|_| {
                    DeviceError::Unsupported("the PTX text contains a NUL byte".to_owned())
                })?;
                Ok((
                    text.into_bytes_with_nul(),
                    "the driver's PTX JIT (no ptxas found)".to_owned(),
                ))
            }
        }
    }

    /// Records a dead context and the error that says why.
    fn lose(&mut self, why: String, hung: bool) {
        if hung {
            self.ctx.abandon();
        }
        self.lost = Some(why);
    }
}

impl Device for CudaDevice {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn float_math(&self) -> crate::device::FloatMath {
        crate::device::FloatMath::Libdevice
    }

    fn load(&mut self, program: &Program<'_>) -> Result<ModuleHandle, DeviceError> {
        let ptx = program.ptx.ok_or(DeviceError::MissingInput {
            device: "CUDA backend",
            what: "PTX",
        })?;
        load::check_arch(self.arch, compile_driver::TARGET_ARCH)?;
        let (image, via) = self.image(ptx)?;
        self.ready()?;
        // SAFETY: the context is bound; the image is a cubin or NUL-terminated PTX.
        let raw = unsafe { load::load_image(&image) }.map_err(|f| DeviceError::CudaLoad {
            via,
            error: format!("{}: {}", f.name, f.message),
            log: f.log,
        })?;
        self.modules.push(Loaded {
            raw: RawModule(raw),
            ir: program.ir.cloned(),
            entry_params: entry_param_sizes(ptx),
        });
        Ok(ModuleHandle(self.modules.len() as u32 - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<Buffer, DeviceError> {
        self.ready()?;
        // SAFETY: the context is bound; the contents are undefined until
        // written, as the trait says. Freed when the context is destroyed.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }
            .map_err(cuda("allocating device memory"))?;
        self.buffers.push((ptr, bytes));
        Ok(Buffer(self.buffers.len() as u32 - 1))
    }

    fn write(&mut self, buffer: Buffer, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        let (ptr, len) = self.buffer(buffer)?;
        buffer_range(buffer, offset as u64, bytes.len() as u64, len as u64)?;
        if bytes.is_empty() {
            return Ok(());
        }
        self.ready()?;
        // SAFETY: `offset..offset + bytes.len()` lies inside the allocation.
        unsafe { result::memcpy_htod_sync(ptr + offset as u64, bytes) }
            .map_err(cuda("copying to the device"))
    }

    fn read(&mut self, buffer: Buffer) -> Result<Vec<u8>, DeviceError> {
        let (ptr, len) = self.buffer(buffer)?;
        let mut bytes = vec![0u8; len];
        if len == 0 {
            return Ok(bytes);
        }
        self.ready()?;
        // SAFETY: the allocation holds at least `len` bytes.
        unsafe { result::memcpy_dtoh_sync(&mut bytes, ptr) }
            .map_err(cuda("copying from the device"))?;
        Ok(bytes)
    }

    fn write_symbol(
        &mut self,
        module: ModuleHandle,
        symbol: &str,
        bytes: &[u8],
    ) -> Result<(), DeviceError> {
        let loaded = entry(&self.modules, module.0, "module")?;
        let bad = |message: String| DeviceError::bad_symbol(symbol, message);
        // Only the device IR says which globals the host writes; the
        // driver would copy into any.
        let ir = loaded.ir.as_ref().ok_or_else(|| {
            bad("a module loaded without device IR takes no host writes".to_owned())
        })?;
        abi::host_written_global(ir, symbol, bytes.len())?;
        let raw = loaded.raw.0;
        let name = CString::new(symbol).map_err(|_| bad("the name holds a NUL".to_owned()))?;
        self.ready()?;
        // SAFETY: the module is loaded in this context, which is bound.
        let (ptr, size) =
            unsafe { result::module::get_global(raw, name) }.map_err(cuda("finding the global"))?;
        if size != bytes.len() {
            return Err(bad(format!(
                "the host writes {} bytes into a global of {size} bytes",
                bytes.len()
            )));
        }
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the global holds exactly `bytes.len()` bytes; no kernel
        // runs (each launch is waited for).
        unsafe { result::memcpy_htod_sync(ptr, bytes) }.map_err(cuda("copying to the global"))
    }

    fn launch(
        &mut self,
        module: ModuleHandle,
        kernel: &str,
        config: LaunchConfig,
        args: &[KernelArg],
    ) -> Result<(), DeviceError> {
        let loaded = entry(&self.modules, module.0, "module")?;
        if let Some(ir) = &loaded.ir {
            let func = abi::find_kernel(ir, kernel)?;
            abi::check_args(ir, func, args)?;
        }
        match &loaded.entry_params {
            Some(sizes) => check_slots(kernel, sizes.get(kernel), args)?,
            // The scalars' 16-byte slots hold any scalar `.param`; only an
            // aggregate's size needs a check that nothing can make here.
            None if loaded.ir.is_none()
                && args.iter().any(|a| matches!(a, KernelArg::Bytes(_))) =>
            {
                return Err(DeviceError::BadArgs {
                    kernel: kernel.to_owned(),
                    message: "an aggregate by value for a module whose parameter sizes \
                              neither device IR nor its PTX gives"
                        .to_owned(),
                });
            }
            None => {}
        }
        let raw = loaded.raw.0;
        let name =
            CString::new(kernel).map_err(|_| DeviceError::NoSuchKernel(kernel.to_owned()))?;
        self.ready()?;
        // SAFETY: the module is loaded in this context, which is bound.
        let func = unsafe { result::module::get_function(raw, name) }
            .map_err(cuda("finding the kernel"))?;
        // One little-endian slot per argument, which the driver copies as
        // many bytes of as the parameter has: a scalar's slot is 16 bytes
        // (an `i128`'s), a smaller scalar in its low bytes; an aggregate by
        // value is its own bytes.
        let mut slots: Vec<Vec<u8>> = Vec::with_capacity(args.len());
        for arg in args {
            let bits = match *arg {
                KernelArg::Buffer(b) => u128::from(self.address(b, 0)?),
                KernelArg::BufferAt(b, offset) => u128::from(self.address(b, offset)?),
                KernelArg::Null => 0,
                KernelArg::Bytes(ref aggregate) => {
                    slots.push(aggregate.with_addresses(|b| self.address(b, 0))?);
                    continue;
                }
                _ => abi::scalar_bits(arg).unwrap_or(0),
            };
            slots.push(bits.to_le_bytes().to_vec());
        }
        let mut params: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s.as_mut_ptr().cast::<c_void>())
            .collect();
        let (g, b) = (config.grid, config.block);
        // SAFETY: `params` points at one live slot per kernel parameter, each at
        // least as large as the parameter's `.param` (`check_slots`, or the
        // device IR's check of the count and of each aggregate's size, with
        // 16-byte scalar slots); the stream belongs to the bound context.
        unsafe {
            result::launch_kernel(
                func,
                (g.x, g.y, g.z),
                (b.x, b.y, b.z),
                config.shared_bytes,
                self.ctx.stream(),
                &mut params,
            )
        }
        .map_err(cuda("launching the kernel"))?;
        match self.ctx.wait(self.kernel_timeout) {
            Ok(()) => Ok(()),
            Err(WaitError::Fault(error, message)) => {
                self.lose(format!("kernel `{kernel}` faulted with {error}"), false);
                Err(DeviceError::KernelFault {
                    kernel: kernel.to_owned(),
                    error,
                    message,
                })
            }
            Err(WaitError::Timeout) => {
                let timeout = self.kernel_timeout;
                self.lose(
                    format!("kernel `{kernel}` hung (still running after {timeout:?})"),
                    true,
                );
                Err(DeviceError::KernelHang {
                    kernel: kernel.to_owned(),
                    timeout,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_smaller_than_its_param_or_a_missing_argument_is_refused() {
        let ptx = ".version 8.8\n.target sm_90\n.address_size 64\n\
                   .visible .entry k(.param .u64 k_param_0, .param .align 16 .b8 k_param_1[32])\n{\n\tret;\n}\n";
        let sizes = entry_param_sizes(ptx).expect("the PTX parses");
        assert_eq!(sizes["k"], [8, 32]);
        let ok = [KernelArg::U64(1), KernelArg::Bytes(vec![0; 32].into())];
        assert!(check_slots("k", sizes.get("k"), &ok).is_ok());
        for (args, why) in [
            (
                vec![KernelArg::U64(1), KernelArg::Bytes(vec![0; 31].into())],
                "parameter 1 is 32 bytes in the PTX; argument",
            ),
            (
                vec![KernelArg::U64(1), KernelArg::U128(0)],
                "parameter 1 is 32 bytes in the PTX; argument U128(0) gives 16",
            ),
            (
                vec![KernelArg::U64(1)],
                "takes 2 parameters in its PTX, 1 given",
            ),
        ] {
            let e = check_slots("k", sizes.get("k"), &args).expect_err("refused");
            assert!(e.to_string().contains(why), "{e}");
        }
        assert!(matches!(
            check_slots("nope", sizes.get("nope"), &ok),
            Err(DeviceError::NoSuchKernel(_))
        ));
    }

    #[test]
    fn without_a_driver_the_probe_says_no_gpu() {
        match probe_with(|| false) {
            Probe::NoGpu(no) => {
                assert_eq!(no, NoGpu::NoDriver);
                assert!(no.to_string().starts_with("no GPU"));
            }
            Probe::Gpu(_) => panic!("a GPU without a driver"),
        }
    }

    #[test]
    fn the_real_probe_answers_either_way() {
        // On a machine without a GPU this must be a clean "no GPU", never a panic.
        match probe() {
            Probe::Gpu(dev) => {
                let d = dev.describe();
                assert!(d.contains("CUDA device 0") && d.contains("sm_"), "{d}");
                assert_eq!(dev.kernel_timeout(), DEFAULT_KERNEL_TIMEOUT);
            }
            Probe::NoGpu(no) => assert!(no.to_string().starts_with("no GPU")),
        }
    }

    #[test]
    fn the_driver_version_reads_as_major_dot_minor() {
        assert_eq!(driver_version_text(12090), "12.9");
        assert_eq!(driver_version_text(12080), "12.8");
        assert_eq!(driver_version_text(13000), "13.0");
    }
}
