//! The CUDA backend: runs PTX on a real GPU through the driver API, which cudarc
//! loads at run time, so building needs no CUDA toolkit.
//!
//! [`probe`] opens device 0 when the driver library loads and the driver sees a
//! device. Otherwise it answers [`Probe::NoGpu`] with the reason: a typed value,
//! not a failure, so a machine without a GPU runs the virtual device instead.

use std::ffi::{CString, c_void};
use std::sync::Arc;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, sys};
use device_ir::Module;
use thiserror::Error;

use super::{Buffer, Device, DeviceError, KernelArg, LaunchConfig, ModuleHandle, Program, abi};

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
    /// A GPU, opened and ready.
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

fn open_device_0() -> Result<CudaDevice, NoGpu> {
    let count = CudaContext::device_count().map_err(|e| NoGpu::DriverInit(e.to_string()))?;
    if count < 1 {
        return Err(NoGpu::NoDevice);
    }
    let ctx = CudaContext::new(0).map_err(|e| NoGpu::Open(e.to_string()))?;
    let name = ctx.name().unwrap_or_else(|_| "unnamed GPU".to_owned());
    let arch = ctx
        .compute_capability()
        .map(|(major, minor)| format!("sm_{major}{minor}"))
        .unwrap_or_else(|_| "sm_?".to_owned());
    let stream = ctx.default_stream();
    Ok(CudaDevice {
        description: format!("{name} ({arch}), CUDA device 0"),
        ctx,
        stream,
        modules: Vec::new(),
        buffers: Vec::new(),
    })
}

/// A driver module handle. The driver's handles may be used from any thread once
/// the owning context is bound to it, which every method does first.
struct RawModule(sys::CUmodule);

// SAFETY: see `RawModule`; the handle is only used with its context bound.
unsafe impl Send for RawModule {}

struct LoadedPtx {
    raw: RawModule,
    ir: Option<Module>,
}

/// A GPU, driven through the CUDA driver API.
pub struct CudaDevice {
    description: String,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: Vec<LoadedPtx>,
    buffers: Vec<(CudaSlice<u8>, usize)>,
}

fn cuda(context: &'static str) -> impl FnOnce(DriverError) -> DeviceError {
    move |e| DeviceError::Cuda {
        context,
        message: e.to_string(),
    }
}

impl CudaDevice {
    fn bind(&self) -> Result<(), DeviceError> {
        self.ctx
            .bind_to_thread()
            .map_err(cuda("binding the context"))
    }

    fn buffer(&self, buffer: Buffer) -> Result<&(CudaSlice<u8>, usize), DeviceError> {
        self.buffers
            .get(buffer.0 as usize)
            .ok_or(DeviceError::BadHandle {
                what: "buffer",
                index: buffer.0,
            })
    }

    fn address(&self, buffer: Buffer, offset: u64) -> Result<u64, DeviceError> {
        let (slice, len) = self.buffer(buffer)?;
        if offset > *len as u64 {
            return Err(DeviceError::OutOfRange {
                buffer: buffer.0,
                start: offset,
                end: offset,
                len: *len as u64,
            });
        }
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        Ok(ptr + offset)
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            for m in self.modules.drain(..) {
                // SAFETY: each module was loaded once and is unloaded once.
                let _ = unsafe { result::module::unload(m.raw.0) };
            }
        }
    }
}

impl Device for CudaDevice {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn load(&mut self, program: &Program<'_>) -> Result<ModuleHandle, DeviceError> {
        let ptx = program.ptx.ok_or(DeviceError::MissingInput {
            device: "CUDA backend",
            what: "PTX",
        })?;
        let text = CString::new(ptx)
            .map_err(|_| DeviceError::Unsupported("the PTX text contains a NUL byte".to_owned()))?;
        self.bind()?;
        // SAFETY: `text` is a NUL-terminated PTX image that outlives the call.
        let raw = unsafe { result::module::load_data(text.as_ptr().cast::<c_void>()) }
            .map_err(cuda("loading the PTX"))?;
        self.modules.push(LoadedPtx {
            raw: RawModule(raw),
            ir: program.ir.cloned(),
        });
        Ok(ModuleHandle(self.modules.len() as u32 - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<Buffer, DeviceError> {
        self.bind()?;
        // SAFETY: the contents are undefined until written, as the trait says.
        let slice = unsafe { self.stream.alloc::<u8>(bytes.max(1)) }
            .map_err(cuda("allocating device memory"))?;
        self.buffers.push((slice, bytes));
        Ok(Buffer(self.buffers.len() as u32 - 1))
    }

    fn write(&mut self, buffer: Buffer, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        self.bind()?;
        let stream = self.stream.clone();
        let (slice, len) =
            self.buffers
                .get_mut(buffer.0 as usize)
                .ok_or(DeviceError::BadHandle {
                    what: "buffer",
                    index: buffer.0,
                })?;
        let end = offset.checked_add(bytes.len()).filter(|&e| e <= *len);
        let Some(end) = end else {
            return Err(DeviceError::OutOfRange {
                buffer: buffer.0,
                start: offset as u64,
                end: (offset as u64).saturating_add(bytes.len() as u64),
                len: *len as u64,
            });
        };
        if bytes.is_empty() {
            return Ok(());
        }
        let mut view = slice.slice_mut(offset..end);
        stream
            .memcpy_htod(bytes, &mut view)
            .map_err(cuda("copying to the device"))
    }

    fn read(&mut self, buffer: Buffer) -> Result<Vec<u8>, DeviceError> {
        self.bind()?;
        let (slice, len) = self.buffer(buffer)?;
        let mut bytes = self
            .stream
            .clone_dtoh(slice)
            .map_err(cuda("copying from the device"))?;
        bytes.truncate(*len);
        Ok(bytes)
    }

    fn launch(
        &mut self,
        module: ModuleHandle,
        kernel: &str,
        config: LaunchConfig,
        args: &[KernelArg],
    ) -> Result<(), DeviceError> {
        let loaded = self
            .modules
            .get(module.0 as usize)
            .ok_or(DeviceError::BadHandle {
                what: "module",
                index: module.0,
            })?;
        if let Some(ir) = &loaded.ir {
            let func = abi::find_kernel(ir, kernel)?;
            abi::check_args(ir, func, args)?;
        }
        let name =
            CString::new(kernel).map_err(|_| DeviceError::NoSuchKernel(kernel.to_owned()))?;
        self.bind()?;
        // SAFETY: the module is loaded in this context, which is bound.
        let func = unsafe { result::module::get_function(loaded.raw.0, name) }
            .map_err(cuda("finding the kernel"))?;
        // One 8-byte little-endian slot per argument: a smaller scalar sits in the
        // slot's low bytes, where the driver reads its size.
        let mut slots = Vec::with_capacity(args.len());
        for arg in args {
            let bits = match *arg {
                KernelArg::Buffer(b) => self.address(b, 0)?,
                KernelArg::BufferAt(b, offset) => self.address(b, offset)?,
                KernelArg::Null => 0,
                _ => abi::scalar_bits(arg).unwrap_or(0),
            };
            slots.push(bits);
        }
        let mut params: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| (s as *mut u64).cast::<c_void>())
            .collect();
        let (g, b) = (config.grid, config.block);
        // SAFETY: `params` points at one live slot per kernel parameter, each at
        // least as large as the parameter; the stream belongs to the bound context.
        unsafe {
            result::launch_kernel(
                func,
                (g.x, g.y, g.z),
                (b.x, b.y, b.z),
                0,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(cuda("launching the kernel"))?;
        self.stream
            .synchronize()
            .map_err(cuda("running the kernel"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Probe::Gpu(dev) => assert!(dev.describe().contains("CUDA device 0")),
            Probe::NoGpu(no) => assert!(no.to_string().starts_with("no GPU")),
        }
    }
}
