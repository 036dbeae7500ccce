//! Choosing a device: the GPU when one is usable, else the virtual device, with
//! the reason there is no GPU.

use std::time::Duration;

use super::Device;
use super::cuda::{self, NoGpu, Probe};
use super::virt::{Limits, VirtualDevice};

/// The device [`auto`] chose.
pub struct AutoDevice {
    /// The device to run on.
    pub device: Box<dyn Device>,
    /// Why the GPU is not used, when it is not; `None` when `device` is a GPU.
    pub no_gpu: Option<NoGpu>,
}

impl AutoDevice {
    /// Whether the chosen device is a GPU.
    pub fn is_gpu(&self) -> bool {
        self.no_gpu.is_none()
    }
}

/// Uses the GPU when the driver loads and sees one; otherwise the virtual device
/// with `limits`, together with the reason ("no GPU: ..."). A GPU launch may run
/// for [`cuda::DEFAULT_KERNEL_TIMEOUT`].
pub fn auto(limits: Limits) -> AutoDevice {
    auto_with_timeout(limits, cuda::DEFAULT_KERNEL_TIMEOUT)
}

/// [`auto`], with the time a GPU launch may run before it is reported as a
/// hang (the virtual device has its own step limit in `limits`).
pub fn auto_with_timeout(limits: Limits, kernel_timeout: Duration) -> AutoDevice {
    match cuda::probe() {
        Probe::Gpu(mut gpu) => {
            gpu.set_kernel_timeout(kernel_timeout);
            AutoDevice {
                device: Box::new(gpu),
                no_gpu: None,
            }
        }
        Probe::NoGpu(reason) => AutoDevice {
            device: Box::new(VirtualDevice::with_limits(limits)),
            no_gpu: Some(reason),
        },
    }
}
