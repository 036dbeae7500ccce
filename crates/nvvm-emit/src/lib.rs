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
//!
//! # Float semantics
//!
//! libNVVM's defaults are not Rust's: by default it contracts a separate `fmul`
//! and `fadd` into one `fma` (one rounding instead of two), so `0.1f32 * 3.0 +
//! -0.3f32`, `0.0` on the host, came out as `-7.45e-9` on a GPU. Every option
//! that can change a numeric result is therefore passed **explicitly**, by every
//! constructor of [`CompileOptions`] ([`CompileOptions::ptx`],
//! [`CompileOptions::ltoir`], `Default`), with the value Rust's semantics need
//! ([`FloatSemantics::RUST`]); a future libNVVM with other defaults cannot change
//! what our kernels compute. The unit test `libnvvm::tests::options` pins the
//! exact option strings; the tests below (in `tests/float_semantics.rs`) pin
//! what libNVVM makes of them, and each compiles the same module with the option
//! flipped to show that its check can fail.
//!
//! | option | value | why | pinned by |
//! |---|---|---|---|
//! | `-fma` | `0` | Rust rounds `a * b` and then `+ c`; only `mul_add` fuses. | `mul_then_add_is_never_contracted`, `every_f32_op_is_rounded_and_unfused`; flipped: `forcing_fma_back_on_contracts` |
//! | `-ftz` | `0` | Rust keeps f32 subnormals; `-ftz=1` adds `.ftz` to f32 instructions. | `f32_arithmetic_keeps_subnormals` (flips it too) |
//! | `-prec-div` | `1` | Rust's `/` is IEEE round-to-nearest: `div.rn.f32`, not `div.full.f32`. | `f32_division_is_correctly_rounded` (flips it too) |
//! | `-prec-sqrt` | `1` | `f32::sqrt` is correctly rounded: `sqrt.rn.f32`, not `sqrt.approx.f32`. | `f32_sqrt_is_correctly_rounded` (flips it too) |
//! | `-opt` | `3` (or `0` for shape checks) | Changes no result once the four above are fixed: our IR has no fast-math flags. | every test above runs at both levels |
//! | `-arch` | `compute_90` (always passed) | Picks instructions, not rounding; passed because libNVVM's own default is older. | `options` |
//! | `-gen-lto` | LTO IR only | LTO IR does not record the four float options (it is byte-identical under any of them): they act when nvJitLink generates code, so a caller that links our LTO IR must pass [`FloatSemantics::to_args`] (same spelling) to nvJitLink. | `ltoir_does_not_record_the_float_options` |
//!
//! Also decided:
//!
//! - `-fma=0` alone is not the whole story: at `-opt=0` libNVVM's default makes
//!   `mul.f32` then `add.f32` *without* a rounding modifier, and PTX lets ptxas
//!   or the driver's JIT fuse those. With `-fma=0` every float `mul`/`add`/`sub`
//!   carries `.rn`, which nothing downstream may fuse; the tests check for both
//!   `fma.` and unrounded forms.
//! - `-ftz`, `-prec-div` and `-prec-sqrt` act on f32 only; f64 division and
//!   square root are always `.rn` (the tests check `div.rn.f64` and
//!   `sqrt.rn.f64` too). `-fma` acts on both (`fma.rn.f64`).
//! - [`CompileOptions::extra`] cannot undo these: libNVVM refuses a repeated
//!   option ("-fma defined more than once"); `extra_cannot_override_a_float_option`.
//! - Not passed: `-g` (debug info; `-opt=0` only, no numeric effect) and
//!   `-jump-table-density` (switch lowering). The library also accepts
//!   undocumented options such as `-unsafe-math`; we never pass them.
//! - Known gap, not an option: `frem` (Rust's float `%`) compiles to
//!   `|x| - floor(|x| / |y|) * |y|` in rounded steps, which differs from Rust's
//!   exact remainder when the quotient is large (`1e10f32 % 3.0` is `1.0` in
//!   Rust, `0.0` by that expansion). No option changes that; the printer
//!   would have to emit an exact `fmod`.

#![deny(missing_docs)]

mod libnvvm;
pub mod locate;
mod printer;
mod ptxas;
pub mod testing;

pub use libnvvm::{
    CompileOptions, FloatSemantics, IrVersion, Libnvvm, LoadError, NvvmError, Stage, Target,
};
pub use printer::{NVVM_IR_VERSION, TRIPLE, emit, print_module};
pub use ptxas::{Ptxas, PtxasError};
