//! Choosing a device: the GPU when one is usable, else the virtual device, with
//! the reason there is no GPU.

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
/// with `limits`, together with the reason ("no GPU: ...").
pub fn auto(limits: Limits) -> AutoDevice {
    match cuda::probe() {
        Probe::Gpu(gpu) => AutoDevice {
            device: Box::new(gpu),
            no_gpu: None,
        },
        Probe::NoGpu(reason) => AutoDevice {
            device: Box::new(VirtualDevice::with_limits(limits)),
            no_gpu: Some(reason),
        },
    }
}
