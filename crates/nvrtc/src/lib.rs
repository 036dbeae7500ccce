//! NVIDIA's NVRTC, loaded at run time, and `ptxas -v` resource figures: the
//! two halves of comparing our Rust-to-NVVM code against NVIDIA's own CUDA C++
//! compiler on the same kernels (`bench/cuda`, `crates/codegen-compare`).
//!
//! NVRTC compiles CUDA C++ to PTX on a machine without a GPU or a CUDA
//! toolkit: `bash ci/setup-tools.sh` puts `libnvrtc.so.12` (from the PyPI
//! wheel `nvidia-cuda-nvrtc-cu12`) into `tools/nvrtc/lib`. Its builtin
//! headers (`threadIdx`, `__syncthreads`, `atomicAdd`, `__shfl_down_sync`,
//! ...) live in `libnvrtc-builtins`, beside it, so no CUDA headers are needed.
//!
//! ```no_run
//! use nvrtc::{ARCH_OPTION, Nvrtc};
//! let nvrtc = Nvrtc::shared()?;
//! let ptx = nvrtc.compile(
//!     r#"extern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }"#,
//!     "k.cu",
//!     &[ARCH_OPTION],
//! )?;
//! let stats = nvrtc::stats::ptxas_stats(&ptx.text)?;
//! println!("{} registers", stats.function("k").map_or(0, |f| f.registers));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Border:** depends on no crate of ours, so the comparison can pair it
//! with any compile path.

#![deny(missing_docs)]

pub mod locate;
mod nvrtc;
pub mod stats;
pub mod testing;

pub use crate::nvrtc::{ARCH_OPTION, LoadError, Nvrtc, NvrtcError, Ptx, Stage};
