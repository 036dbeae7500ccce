// The CUDA C++ twin of fixtures/saxpy/kernel.rs, for comparing our PTX with
// NVRTC's (crates/codegen-compare). Same algorithm, same checks:
//   i = blockIdx.x * blockDim.x + threadIdx.x (u32, then usize);
//   if (i < x.len() && i < y.len()) y[i] = a * x[i] + y[i];
// A Rust slice is (pointer, length); its accesses here are all dominated by
// the explicit checks, so Rust's own bounds checks add nothing. Compiled with
// Rust's float semantics (--fmad=false: `a * x + y` is a multiply and an add).

#include "rust_twin.h"

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ float axpy(float a, float x, float y) { return a * x + y; }

extern "C" __global__ void saxpy_plain(float a, const float* x, usize x_len, float* y,
                                       usize y_len) {
    usize i = (usize)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < x_len && i < y_len) {
        y[i] = axpy(a, x[i], y[i]);
    }
}

extern "C" __global__ void saxpy_restrict(float a, const float* __restrict__ x, usize x_len,
                                          float* __restrict__ y, usize y_len) {
    usize i = (usize)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < x_len && i < y_len) {
        y[i] = axpy(a, x[i], y[i]);
    }
}
