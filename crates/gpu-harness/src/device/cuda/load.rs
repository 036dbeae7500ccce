//! Loading a module on the GPU: the pure choices (which `sm_XY` to assemble
//! for, whether the GPU is new enough, the JIT's option arrays, its logs) and
//! the one driver call that loads an image.
//!
//! Why a cubin first: `cuModuleLoadData` on PTX JIT-compiles it in the driver,
//! and a driver older than the PTX's `.version` (libNVVM 12.9 writes 8.8, which
//! only r575 and newer read) refuses every module. The bundled `ptxas` (the same
//! CUDA release as libNVVM) assembles the PTX for the probed `sm_XY` instead, and
//! a cubin loads on any driver that supports the GPU. Only without `ptxas` does
//! the driver JIT the PTX, with its error and info logs captured. Nothing in the
//! PTX is ever rewritten.

use std::ffi::c_void;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;

use super::super::DeviceError;

/// Bytes of each JIT log buffer (error and info).
pub const LOG_BYTES: usize = 16 * 1024;

/// The compute capability as one number, `major * 10 + minor` (`9.0` is 90), the
/// form `ptxas -arch=sm_XY` and [`compile_driver::TARGET_ARCH`] use.
pub fn arch_number(major: i32, minor: i32) -> u32 {
    (major.max(0) as u32) * 10 + minor.max(0) as u32
}

/// `sm_XY` for an architecture number.
pub fn sm_name(arch: u32) -> String {
    format!("sm_{arch}")
}

/// Refuses a GPU older than the architecture the PTX targets: the driver would
/// refuse the module anyway, with a less clear message.
pub fn check_arch(device_arch: u32, target_arch: u32) -> Result<(), DeviceError> {
    if device_arch < target_arch {
        return Err(DeviceError::ArchTooOld {
            device: sm_name(device_arch),
            target: format!("compute_{target_arch}"),
        });
    }
    Ok(())
}

/// The text of a log buffer that the driver or `ptxas` filled: up to the first
/// NUL, lossy UTF-8, trimmed; `(empty log)` when nothing was written, so that a
/// report never shows a blank where a log belongs.
pub fn format_log(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let text = String::from_utf8_lossy(&buf[..end]);
    let text = text.trim();
    if text.is_empty() {
        "(empty log)".to_owned()
    } else {
        text.to_owned()
    }
}

/// The name and description of a driver error (`CUDA_ERROR_ILLEGAL_ADDRESS`,
/// "an illegal memory access was encountered"), which reports carry verbatim.
pub fn error_name(e: DriverError) -> (String, String) {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name, text)
}

/// The error and info log buffers of one `cuModuleLoadDataEx` call.
pub struct JitLogs {
    /// `CU_JIT_ERROR_LOG_BUFFER`.
    pub error: Vec<u8>,
    /// `CU_JIT_INFO_LOG_BUFFER`.
    pub info: Vec<u8>,
}

impl JitLogs {
    /// Two zeroed buffers of `bytes` each.
    pub fn new(bytes: usize) -> Self {
        JitLogs {
            error: vec![0; bytes.max(1)],
            info: vec![0; bytes.max(1)],
        }
    }

    /// The option and value arrays for `cuModuleLoadDataEx`: each buffer and
    /// its size. A size option's value is the number itself, cast to a pointer
    /// (the driver's convention); the buffers must outlive the call, which
    /// borrowing `self` mutably ensures.
    pub fn options(&mut self) -> (Vec<sys::CUjit_option>, Vec<*mut c_void>) {
        use sys::CUjit_option::*;
        let options = vec![
            CU_JIT_ERROR_LOG_BUFFER,
            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            CU_JIT_INFO_LOG_BUFFER,
            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        let values = vec![
            self.error.as_mut_ptr().cast::<c_void>(),
            self.error.len() as *mut c_void,
            self.info.as_mut_ptr().cast::<c_void>(),
            self.info.len() as *mut c_void,
        ];
        (options, values)
    }

    /// Both logs as one text: the error log, then the info log when it says
    /// anything.
    pub fn text(&self) -> String {
        let error = format_log(&self.error);
        let info = format_log(&self.info);
        if info == "(empty log)" {
            format!("error log: {error}")
        } else {
            format!("error log: {error}\ninfo log: {info}")
        }
    }
}

/// A driver failure with its name, description and the JIT's logs.
pub struct LoadFailure {
    /// `CUDA_ERROR_…`.
    pub name: String,
    /// The driver's description.
    pub message: String,
    /// The error and info logs.
    pub log: String,
}

/// Loads `image` (a cubin, or PTX ending in a NUL byte) into the context bound
/// to this thread, with both logs captured.
///
/// # Safety
/// A context must be bound to the calling thread, and `image` must be a cubin
/// or NUL-terminated PTX.
pub unsafe fn load_image(image: &[u8]) -> Result<sys::CUmodule, LoadFailure> {
    let mut logs = JitLogs::new(LOG_BYTES);
    let (mut options, mut values) = logs.options();
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `options` and `values` have the same length, the buffers they
    // point at live in `logs` until after the call, and the caller guarantees
    // the image and the bound context.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast::<c_void>(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    match r.result() {
        Ok(()) => Ok(module),
        Err(e) => {
            let (name, message) = error_name(e);
            Err(LoadFailure {
                name,
                message,
                log: logs.text(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arch_is_major_and_minor() {
        assert_eq!(arch_number(9, 0), 90);
        assert_eq!(arch_number(8, 6), 86);
        assert_eq!(arch_number(12, 0), 120);
        assert_eq!(sm_name(arch_number(10, 0)), "sm_100");
    }

    #[test]
    fn an_older_gpu_is_refused_naming_both_architectures() {
        assert!(check_arch(90, 90).is_ok());
        assert!(check_arch(100, 90).is_ok());
        let Err(e) = check_arch(86, 90) else {
            panic!("an sm_86 GPU accepted for compute_90");
        };
        let msg = e.to_string();
        assert!(matches!(e, DeviceError::ArchTooOld { .. }), "{msg}");
        assert!(msg.contains("sm_86") && msg.contains("compute_90"), "{msg}");
    }

    #[test]
    fn logs_stop_at_the_nul_and_are_never_blank() {
        assert_eq!(
            format_log(b"ptxas fatal: bad\n\0garbage"),
            "ptxas fatal: bad"
        );
        assert_eq!(format_log(&[0; 8]), "(empty log)");
        assert_eq!(format_log(b"  \n"), "(empty log)");
        assert_eq!(format_log(b"no nul"), "no nul");
    }

    #[test]
    fn the_option_arrays_pair_each_buffer_with_its_size() {
        let mut logs = JitLogs::new(64);
        let (options, values) = logs.options();
        assert_eq!(options.len(), 4);
        assert_eq!(values.len(), 4);
        assert_eq!(options[0], sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER);
        assert_eq!(
            options[1],
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
        );
        assert_eq!(options[2], sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER);
        assert_eq!(
            options[3],
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
        );
        assert_eq!(values[1] as usize, 64);
        assert_eq!(values[3] as usize, 64);
        assert_eq!(values[0], logs.error.as_mut_ptr().cast::<c_void>());
        assert_eq!(values[2], logs.info.as_mut_ptr().cast::<c_void>());
    }

    #[test]
    fn the_log_text_names_both_logs() {
        let mut logs = JitLogs::new(32);
        logs.error[..5].copy_from_slice(b"boom\0");
        assert_eq!(logs.text(), "error log: boom");
        logs.info[..3].copy_from_slice(b"hi\0");
        assert_eq!(logs.text(), "error log: boom\ninfo log: hi");
    }
}
