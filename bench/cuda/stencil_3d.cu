// The CUDA C++ twin of fixtures/stencil_3d/kernel.rs: a 7-point Laplacian
// (6*c - sum of neighbours, each value squared) over an n-cubed grid with
// neighbours clamped to the edge, plus the z ids. Same checks: the explicit
// early returns, and Rust's bounds check on every u[...] read (x, y, z < n is
// not known to either compiler), kept by RUST_ASSERT. The writes are
// dominated by the explicit `i < len` checks. --fmad=false, as in Rust.

#include "rust_twin.h"

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ float at(const float* u, usize u_len, usize x, usize y, usize z, usize n) {
    usize idx = (z * n + y) * n + x;
    RUST_ASSERT(idx < u_len);
    float v = u[idx];
    return v * v;
}

__device__ __forceinline__ usize down(usize c) { return c == 0 ? 0 : c - 1; }
__device__ __forceinline__ usize up(usize c, usize n) { return c + 1 < n ? c + 1 : c; }

#define STENCIL_BODY                                                                  \
    usize x = (usize)(blockIdx.x * blockDim.x + threadIdx.x);                        \
    usize y = (usize)(blockIdx.y * blockDim.y + threadIdx.y);                        \
    usize z = (usize)(blockIdx.z * blockDim.z + threadIdx.z);                        \
    usize n = (usize)(gridDim.x * blockDim.x);                                       \
    usize ny = (usize)(gridDim.y * blockDim.y);                                      \
    usize nz = (usize)(gridDim.z * blockDim.z);                                      \
    if (n != ny || n != nz || n * n * n > u_len) {                                   \
        return;                                                                      \
    }                                                                                \
    usize i = (z * n + y) * n + x;                                                   \
    if (i >= out_len || i >= ids_len) {                                              \
        return;                                                                      \
    }                                                                                \
    float c = at(u, u_len, x, y, z, n);                                              \
    float sum = at(u, u_len, down(x), y, z, n) + at(u, u_len, up(x, n), y, z, n) +   \
                at(u, u_len, x, down(y), z, n) + at(u, u_len, x, up(y, n), z, n) +   \
                at(u, u_len, x, y, down(z), n) + at(u, u_len, x, y, up(z, n), n);    \
    out[i] = 6.0f * c - sum;                                                         \
    ids[i] = threadIdx.z * 1000 + blockIdx.z * 100 + blockDim.z * 10 + gridDim.z;

extern "C" __global__ void stencil_3d_plain(const float* u, usize u_len, float* out,
                                            usize out_len, unsigned* ids, usize ids_len) {
    STENCIL_BODY
}

extern "C" __global__ void stencil_3d_restrict(const float* __restrict__ u, usize u_len,
                                               float* __restrict__ out, usize out_len,
                                               unsigned* __restrict__ ids, usize ids_len) {
    STENCIL_BODY
}
