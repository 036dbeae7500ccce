//! The errors of the [`Device`](super::Device) trait.

use device_ir::VerifierErrors;
use thiserror::Error;

use super::virt::{ExecError, RaceReport};

/// Why a device operation failed.
#[derive(Debug, Error)]
pub enum DeviceError {
    /// The module does not pass `device_ir::verify`; the virtual device runs only
    /// verified modules.
    #[error("the module does not verify:\n{0}")]
    Verify(#[from] VerifierErrors),
    /// The program lacks what this device runs.
    #[error("the {device} needs {what}, which the program does not carry")]
    MissingInput {
        /// The device.
        device: &'static str,
        /// What is missing (`device IR`, `PTX`).
        what: &'static str,
    },
    /// No function of that name.
    #[error("no kernel named `{0}` in the module")]
    NoSuchKernel(String),
    /// The named function is not a kernel, or has no body.
    #[error("`{name}` cannot be launched: {reason}")]
    NotLaunchable {
        /// The function.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// The arguments do not fit the kernel's parameters.
    #[error("kernel `{kernel}`: {message}")]
    BadArgs {
        /// The kernel.
        kernel: String,
        /// What does not fit.
        message: String,
    },
    /// A host write to a module global the module cannot take: no such
    /// symbol, one the host may not write, or bytes of the wrong size.
    #[error("symbol `{symbol}`: {message}")]
    BadSymbol {
        /// The global's symbol.
        symbol: String,
        /// What is wrong.
        message: String,
    },
    /// A handle that this device never handed out.
    #[error("unknown {what} {index} on this device")]
    BadHandle {
        /// `buffer` or `module`.
        what: &'static str,
        /// The handle's index.
        index: u32,
    },
    /// A host access outside a buffer.
    #[error("buffer {buffer}: bytes {start}..{end} are outside its {len} bytes")]
    OutOfRange {
        /// The buffer's index.
        buffer: u32,
        /// The first byte accessed.
        start: u64,
        /// One past the last byte accessed.
        end: u64,
        /// The buffer's size.
        len: u64,
    },
    /// Reading back bytes that nobody wrote: on a GPU they would be garbage.
    #[error("buffer {buffer}: byte {offset} was never written, so there is no value to read back")]
    UninitReadback {
        /// The buffer's index.
        buffer: u32,
        /// The first unwritten byte.
        offset: u64,
    },
    /// A launch shape or allocation size the device cannot run.
    #[error("{0}")]
    Unsupported(String),
    /// A kernel fault found by the virtual device.
    #[error(transparent)]
    Exec(Box<ExecError>),
    /// A data race found by the virtual device: two accesses to one byte by
    /// different threads, at least one a write and not both atomic, that no
    /// barrier or release/acquire pair orders. The report names both; the
    /// launch stopped at the second. Its message starts with `data race`.
    #[error(transparent)]
    Race(Box<RaceReport>),
    /// The CUDA driver refused an operation.
    #[error("CUDA: {context}: {message}")]
    Cuda {
        /// What was being done.
        context: &'static str,
        /// The driver's message.
        message: String,
    },
    /// The GPU is older than the architecture the PTX targets, so no module of
    /// ours can run on it.
    #[error(
        "CUDA: the GPU is {device}, older than {target}, which our PTX targets: it cannot run these kernels"
    )]
    ArchTooOld {
        /// The GPU's architecture (`sm_86`).
        device: String,
        /// The PTX's target (`compute_90`).
        target: String,
    },
    /// A module did not load: `ptxas` refused the PTX, or the driver refused
    /// the cubin or the PTX. The log says why.
    #[error("CUDA: loading the module through {via} failed: {error}\n{log}")]
    CudaLoad {
        /// How the image was made and loaded (`ptxas … -arch=sm_90`, the JIT).
        via: String,
        /// The CUDA error name and description, or `ptxas`'s exit status.
        error: String,
        /// `ptxas`'s output, or the driver's JIT error and info logs.
        log: String,
    },
    /// A kernel faulted on the GPU (a trap, an illegal address, …). The
    /// context holds the error for good, so the device refuses further work.
    #[error("CUDA: kernel `{kernel}` faulted: {error}: {message}")]
    KernelFault {
        /// The kernel.
        kernel: String,
        /// The CUDA error name (`CUDA_ERROR_ILLEGAL_ADDRESS`).
        error: String,
        /// The driver's description.
        message: String,
    },
    /// A kernel was still running at the deadline: reported as a hang, its
    /// context abandoned.
    #[error("CUDA: kernel `{kernel}` hung: still running after {timeout:?}")]
    KernelHang {
        /// The kernel.
        kernel: String,
        /// The deadline it passed.
        timeout: std::time::Duration,
    },
    /// The device's context died earlier (a fault or a hang); nothing more
    /// runs on it.
    #[error("CUDA: the context is lost: {0}")]
    ContextLost(String),
}

impl From<ExecError> for DeviceError {
    fn from(e: ExecError) -> Self {
        DeviceError::Exec(Box::new(e))
    }
}

impl DeviceError {
    /// A [`DeviceError::BadSymbol`] for a host write into `symbol`.
    pub fn bad_symbol(symbol: &str, message: impl Into<String>) -> Self {
        DeviceError::BadSymbol {
            symbol: symbol.to_owned(),
            message: message.into(),
        }
    }

    /// The kernel fault, if this is one.
    pub fn exec(&self) -> Option<&ExecError> {
        match self {
            DeviceError::Exec(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the kernel executed `trap` (a Rust panic on the device).
    /// The CPU devices say so exactly. A GPU reports a trap as an illegal
    /// instruction, a code no memory fault shares (not verified on hardware
    /// here: no GPU was lent). Older drivers' catch-all "unspecified launch
    /// failure" is not taken for one, so as not to pass a fixture on some
    /// other fault.
    pub fn is_trap(&self) -> bool {
        match self {
            DeviceError::Exec(e) => e.kind == super::virt::FaultKind::Trap,
            DeviceError::KernelFault { error, .. } => error == "CUDA_ERROR_ILLEGAL_INSTRUCTION",
            _ => false,
        }
    }

    /// The data race, if this is one.
    pub fn race(&self) -> Option<&RaceReport> {
        match self {
            DeviceError::Race(r) => Some(r),
            _ => None,
        }
    }
}
