// What every CUDA C++ twin of a Rust fixture needs (crates/codegen-compare
// passes this folder to NVRTC as an include path). No system #include:
// NVRTC's builtins are enough.
#pragma once

// Rust's usize on the device.
typedef unsigned long long usize;

// A Rust panic: the device traps and never returns, which both compilers
// are told (rustc's panics are `noreturn`; here `__builtin_unreachable`).
#define RUST_ASSERT(c)                       \
    do {                                     \
        if (!(c)) {                          \
            __trap();                        \
            __builtin_unreachable();         \
        }                                    \
    } while (0)

// Every lane of a warp, for the `*_sync` intrinsics.
#define FULL_MASK 0xffffffffu

// `%laneid`, as the prelude's lane_id() (a pure read, so it may be reused).
__device__ __forceinline__ unsigned lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
