//! Prints device IR as NVVM IR (the LLVM 7 typed-pointer dialect that libNVVM 2.0
//! accepts) and binds libNVVM at run time to verify it and compile it to PTX or
//! LTO IR.
//!
//! **Owns:** the printer ([`print_module`], [`emit`]); the libNVVM binding
//! ([`Libnvvm`]: lookup, version queries, verify, compile to PTX or LTO IR); the
//! optional `ptxas` check ([`Ptxas`]); and the test helpers that decide whether a
//! missing libNVVM fails or skips ([`testing`]).
//!
//! **Does not own:** the IR and its verifier (`device-ir`), lowering, or running
//! code on a GPU.
//!
//! **Border:** a verified [`device_ir::Module`] in, NVVM IR text out; NVVM IR text
//! in, PTX or LTO IR bytes (or libNVVM's whole log) out. No CUDA toolkit is needed
//! to build: libNVVM is loaded with libloading, found through `LIBNVVM_PATH`, then
//! `CUDA_HOME`, then the workspace's `tools/cuda`, which `bash ci/setup-tools.sh`
//! fills (see [`locate`]).

#![deny(missing_docs)]

mod libnvvm;
pub mod locate;
mod printer;
mod ptxas;
pub mod testing;

pub use libnvvm::{CompileOptions, IrVersion, Libnvvm, LoadError, NvvmError, Stage, Target};
pub use printer::{NVVM_IR_VERSION, TRIPLE, emit, print_module};
pub use ptxas::{Ptxas, PtxasError};
