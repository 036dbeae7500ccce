// The CUDA C++ twin of fixtures/stencil_2d/kernel.rs: one Jacobi step of a
// 5-point stencil on an n × n grid, each 16 × 16 block staging its tile and
// a one-cell halo (edges clamped) in an 18 × 18 shared tile, then
// out = fmaf(laplacian, alpha, c) (Rust's mul_add). Same checks: the
// explicit early returns; the __noinline__ grid read asserts its index,
// SharedArray::read/write theirs and DisjointSlice::set its own
// (RUST_ASSERT, a trap), where neither compiler may prove them.

#include "rust_twin.h"

#define B 16
#define P (B + 2)

__shared__ float TILE[P * P];

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ float at(const float* u, usize u_len, usize n, usize x, usize y) {
    RUST_ASSERT(y * n + x < u_len);
    return u[y * n + x];
}

__device__ __forceinline__ void stage(usize lx, usize ly, float v) {
    RUST_ASSERT(ly * P + lx < P * P);
    TILE[ly * P + lx] = v;
}

__device__ __forceinline__ float staged(usize lx, usize ly) {
    RUST_ASSERT(ly * P + lx < P * P);
    return TILE[ly * P + lx];
}

#define STENCIL_2D_BODY                                                                \
    usize n = (usize)n32;                                                              \
    usize tx = (usize)threadIdx.x, ty = (usize)threadIdx.y;                            \
    if (blockDim.x != B || blockDim.y != B || n % B != 0) {                            \
        return;                                                                        \
    }                                                                                  \
    if (n * n > u_len || n * n > out_len) {                                            \
        return;                                                                        \
    }                                                                                  \
    usize x = (usize)blockIdx.x * B + tx;                                              \
    usize y = (usize)blockIdx.y * B + ty;                                              \
    if (x >= n || y >= n) {                                                            \
        return;                                                                        \
    }                                                                                  \
    usize lx = tx + 1, ly = ty + 1;                                                    \
    usize last = n - 1;                                                                \
    stage(lx, ly, at(u, u_len, n, x, y));                                              \
    if (tx == 0) {                                                                     \
        stage(0, ly, at(u, u_len, n, x == 0 ? 0 : x - 1, y));                          \
    }                                                                                  \
    if (tx == B - 1) {                                                                 \
        stage(P - 1, ly, at(u, u_len, n, x + 1 < last ? x + 1 : last, y));             \
    }                                                                                  \
    if (ty == 0) {                                                                     \
        stage(lx, 0, at(u, u_len, n, x, y == 0 ? 0 : y - 1));                          \
    }                                                                                  \
    if (ty == B - 1) {                                                                 \
        stage(lx, P - 1, at(u, u_len, n, x, y + 1 < last ? y + 1 : last));             \
    }                                                                                  \
    __syncthreads();                                                                   \
    float c = staged(lx, ly);                                                          \
    float laplacian = staged(lx, ly - 1) + staged(lx, ly + 1) + staged(lx + 1, ly) +   \
                      staged(lx - 1, ly) - 4.0f * c;                                   \
    RUST_ASSERT(y * n + x < out_len);                                                  \
    out[y * n + x] = fmaf(laplacian, alpha, c);

extern "C" __global__ void stencil_2d_plain(const float* u, usize u_len, unsigned n32,
                                            float alpha, float* out, usize out_len) {
    STENCIL_2D_BODY
}

extern "C" __global__ void stencil_2d_restrict(const float* __restrict__ u, usize u_len,
                                               unsigned n32, float alpha,
                                               float* __restrict__ out, usize out_len) {
    STENCIL_2D_BODY
}
