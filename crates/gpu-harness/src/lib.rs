//! The test oracle of the workspace.
//!
//! **Owns:** the execution layer of the oracle: the [`Device`](device::Device)
//! trait (load a module, allocate, launch, read back) and its two implementations,
//! the [virtual device](device::virt::VirtualDevice), a checking CPU executor of
//! `device_ir` modules, and the [CUDA backend](device::cuda::CudaDevice), which runs
//! PTX on a real GPU through the driver loaded at run time. Fixture manifests, the
//! pipeline driver, shape checks, parallel runs, the result cache, reports and
//! the CLI build on it.
//!
//! **Does not own:** the device IR and its verifier (`device-ir`), printing NVVM IR
//! or calling libNVVM (`nvvm-emit`), lowering MIR (`mir-lower`), the order of
//! the compile stages and the target architecture (`compile-driver`, which
//! every compile here goes through).
//!
//! **Border:** the [`Device`](device::Device) trait. A kernel is called with the
//! flat ABI the lowering emits: a parameter is a scalar (an integer, a float or
//! a pointer), slices arriving as (pointer, length) pairs, or an aggregate by
//! value (its bytes), so a launch passes only [`KernelArg`](device::KernelArg)
//! scalars, buffer addresses and aggregates' bytes.

#![deny(missing_docs)]

pub mod cache;
pub mod compare;
pub mod device;
pub mod fixture;
pub mod host;
pub mod launch;
pub mod mutant;
pub mod pipeline;
pub mod remote;
pub mod report;
pub mod run;
pub mod shape;
pub mod shape_stage;
pub mod stage;
pub mod tolerance;
