//! One CUDA context per [`CudaDevice`](super::CudaDevice), and waiting for a
//! kernel under a deadline.
//!
//! Why a context of our own, not the device's primary context: a kernel that
//! traps or touches an illegal address leaves a *sticky* error in its context,
//! and every later call in that context fails with it. The primary context is
//! shared by everything in the process, so one bad fixture would fail all the
//! later ones. A context made with `cuCtxCreate` for one fixture's device stage
//! and destroyed with it takes its error with it.
//!
//! Why not a child process per fixture: the driver documents sticky errors as
//! needing a new process, and a child would survive even a driver that
//! disagrees; but the [`Device`](crate::device::Device) trait is a
//! conversation (load, alloc, write, launch, read) that would need a wire
//! protocol, and the oracle's fixtures already run on threads of their own.
//! A context per fixture is the smaller change; the GPU tests
//! (`tests/cuda_backend.rs`) check that a saxpy after a trap and after a hang
//! still passes, which is what would fail first if the driver disagreed.
//!
//! Why polling: `cuStreamSynchronize` has no timeout, so a kernel that spins
//! forever would block the fixture's thread for good. [`Context::wait`] polls
//! `cuStreamQuery` until the stream is idle, faulted, or past the deadline.

use std::time::{Duration, Instant};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;

use super::load::error_name;
use crate::device::DeviceError;

/// How waiting for a stream ended, other than with success.
#[derive(Debug)]
pub enum WaitError {
    /// The kernel faulted: the driver's error name and description.
    Fault(String, String),
    /// The deadline passed with the kernel still running.
    Timeout,
}

/// A context handle that may move between threads: the driver allows any
/// thread to use a context once it is bound there, which every user does first.
struct RawContext(sys::CUcontext);

// SAFETY: see `RawContext`.
unsafe impl Send for RawContext {}

/// A non-primary context and one stream in it, destroyed together on drop
/// (which frees every module and allocation made in it).
pub struct Context {
    ctx: RawContext,
    stream: sys::CUstream,
    /// A kernel may still be running (it hung): destroy on another thread,
    /// since `cuCtxDestroy` may wait for it.
    abandoned: bool,
}

// SAFETY: the stream belongs to the context, used only with it bound.
unsafe impl Send for Context {}

/// A driver error as the backend's [`DeviceError::Cuda`], with its name.
pub fn cuda(context: &'static str) -> impl FnOnce(DriverError) -> DeviceError {
    move |e| {
        let (name, text) = error_name(e);
        DeviceError::Cuda {
            context,
            message: format!("{name}: {text}"),
        }
    }
}

impl Context {
    /// Creates a context on `device` and a stream in it.
    pub fn create(device: sys::CUdevice) -> Result<Context, DriverError> {
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: `device` came from `cuDeviceGet`; flags 0 = automatic scheduling.
        unsafe { sys::cuCtxCreate_v2(&mut ctx, 0, device) }.result()?;
        let mut made = Context {
            ctx: RawContext(ctx),
            stream: std::ptr::null_mut(),
            abandoned: false,
        };
        // `cuCtxCreate` made it current on this thread; the stream is made in
        // it. A blocking stream (not `NonBlocking`): the synchronous copies run
        // on the legacy default stream, and a host-to-device copy may return
        // before its DMA ends, so the launch must wait for it, which only a
        // blocking stream does.
        made.stream = result::stream::create(result::stream::StreamKind::Default)?;
        // Leave the thread's context stack as it was: every use binds first.
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context `cuCtxCreate` pushed on this thread.
        unsafe { sys::cuCtxPopCurrent_v2(&mut popped) }.result()?;
        Ok(made)
    }

    /// Binds the context to the calling thread (every driver call needs it).
    pub fn bind(&self) -> Result<(), DeviceError> {
        // SAFETY: the context is alive until `self` drops.
        unsafe { result::ctx::set_current(self.ctx.0) }.map_err(cuda("binding the context"))
    }

    /// The context's stream.
    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Marks the context as possibly still running a kernel: dropping it then
    /// never blocks the caller.
    pub fn abandon(&mut self) {
        self.abandoned = true;
    }

    /// Waits until the stream is idle, polling (with back-off from 20 µs to
    /// 5 ms) so that a hang is reported after `timeout` instead of blocking.
    pub fn wait(&self, timeout: Duration) -> Result<(), WaitError> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(20);
        loop {
            // SAFETY: the stream belongs to this context, bound by the caller.
            let r = unsafe { sys::cuStreamQuery(self.stream) };
            match r {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                e => {
                    let (name, text) = error_name(DriverError(e));
                    return Err(WaitError::Fault(name, text));
                }
            }
            if start.elapsed() >= timeout {
                return Err(WaitError::Timeout);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let ctx = RawContext(self.ctx.0);
        let destroy = move || {
            let ctx = ctx;
            // SAFETY: destroyed once, by its only owner; errors (a faulted
            // context reports its sticky error here) change nothing.
            let _ = unsafe { sys::cuCtxDestroy_v2(ctx.0) };
        };
        if self.abandoned {
            // The kernel may spin forever and `cuCtxDestroy` may wait for it:
            // a detached thread tries, and the process exits without it.
            let _ = std::thread::Builder::new()
                .name("cuda-abandoned-context".into())
                .spawn(destroy);
        } else {
            destroy();
        }
    }
}
