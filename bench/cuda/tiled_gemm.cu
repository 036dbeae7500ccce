// The CUDA C++ twin of fixtures/tiled_gemm/kernel.rs: C = A·B (row-major,
// m × k times k × n) in 16 × 16 tiles staged in shared memory, the tile's
// dot product in a __noinline__ helper with fmaf (Rust's mul_add). Same
// checks: the explicit whole-block early returns; SharedArray::read/write
// assert their index, Rust's slice indexing and DisjointSlice::set theirs
// (RUST_ASSERT, a trap), where neither compiler may prove them.

#include "rust_twin.h"

#define TILE 16

__shared__ float A_TILE[TILE * TILE];
__shared__ float B_TILE[TILE * TILE];

__device__ __forceinline__ float a_tile_read(usize i) {
    RUST_ASSERT(i < TILE * TILE);
    return A_TILE[i];
}
__device__ __forceinline__ float b_tile_read(usize i) {
    RUST_ASSERT(i < TILE * TILE);
    return B_TILE[i];
}
__device__ __forceinline__ void a_tile_write(usize i, float v) {
    RUST_ASSERT(i < TILE * TILE);
    A_TILE[i] = v;
}
__device__ __forceinline__ void b_tile_write(usize i, float v) {
    RUST_ASSERT(i < TILE * TILE);
    B_TILE[i] = v;
}

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ float tile_dot(usize ty, usize tx, float acc) {
    for (usize k = 0; k < TILE; k++) {
        acc = fmaf(a_tile_read(ty * TILE + k), b_tile_read(k * TILE + tx), acc);
    }
    return acc;
}

#define TILED_GEMM_BODY                                                        \
    usize m = (usize)m32, n = (usize)n32, k = (usize)k32;                     \
    usize tx = (usize)threadIdx.x, ty = (usize)threadIdx.y;                   \
    if (blockDim.x != TILE || blockDim.y != TILE) {                            \
        return;                                                                \
    }                                                                          \
    if (a_len < m * k || b_len < k * n || c_len < m * n) {                     \
        return;                                                                \
    }                                                                          \
    usize row = (usize)blockIdx.y * TILE + ty;                                 \
    usize col = (usize)blockIdx.x * TILE + tx;                                 \
    float acc = 0.0f;                                                          \
    usize steps = k / TILE + (k % TILE != 0 ? 1 : 0);                          \
    for (usize step = 0; step < steps; step++) {                               \
        usize ak = step * TILE + tx, bk = step * TILE + ty;                    \
        float av = 0.0f;                                                       \
        if (row < m && ak < k) {                                               \
            RUST_ASSERT(row * k + ak < a_len);                                 \
            av = a[row * k + ak];                                              \
        }                                                                      \
        float bv = 0.0f;                                                       \
        if (bk < k && col < n) {                                               \
            RUST_ASSERT(bk * n + col < b_len);                                 \
            bv = b[bk * n + col];                                              \
        }                                                                      \
        a_tile_write(ty * TILE + tx, av);                                      \
        b_tile_write(ty * TILE + tx, bv);                                      \
        __syncthreads();                                                       \
        acc = tile_dot(ty, tx, acc);                                           \
        __syncthreads();                                                       \
    }                                                                          \
    if (row < m && col < n) {                                                  \
        RUST_ASSERT(row * n + col < c_len);                                    \
        c[row * n + col] = acc;                                                \
    }

extern "C" __global__ void tiled_gemm_plain(const float* a, usize a_len, const float* b,
                                            usize b_len, float* c, usize c_len, unsigned m32,
                                            unsigned n32, unsigned k32) {
    TILED_GEMM_BODY
}

extern "C" __global__ void tiled_gemm_restrict(const float* __restrict__ a, usize a_len,
                                               const float* __restrict__ b, usize b_len,
                                               float* __restrict__ c, usize c_len, unsigned m32,
                                               unsigned n32, unsigned k32) {
    TILED_GEMM_BODY
}
