// The CUDA C++ twin of fixtures/prefix_scan/kernel.rs: a Blelloch exclusive
// scan of 256 u32 per block in shared memory (up-sweep, cleared root,
// down-sweep, each a __noinline__ helper), 128 threads moving two elements
// each, and the block's total beside the scan. Same checks: the explicit
// early return; SharedArray::read/write assert their index, the sub-slice
// `input[base..base + N]` its range and DisjointSlice::set its index
// (RUST_ASSERT, a trap), where neither compiler may prove them.

#include "rust_twin.h"

#define N 256

__shared__ unsigned TEMP[N];

__device__ __forceinline__ unsigned temp_read(usize i) {
    RUST_ASSERT(i < N);
    return TEMP[i];
}
__device__ __forceinline__ void temp_write(usize i, unsigned v) {
    RUST_ASSERT(i < N);
    TEMP[i] = v;
}

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ void up_sweep(usize t) {
    usize offset = 1;
    for (usize d = N / 2; d > 0; d /= 2) {
        __syncthreads();
        if (t < d) {
            usize ai = offset * (2 * t + 1) - 1;
            usize bi = offset * (2 * t + 2) - 1;
            temp_write(bi, temp_read(bi) + temp_read(ai));
        }
        offset *= 2;
    }
    __syncthreads();
}

__device__ __noinline__ void down_sweep(usize t) {
    usize offset = N;
    for (usize d = 1; d < N; d *= 2) {
        offset /= 2;
        __syncthreads();
        if (t < d) {
            usize ai = offset * (2 * t + 1) - 1;
            usize bi = offset * (2 * t + 2) - 1;
            unsigned left = temp_read(ai);
            temp_write(ai, temp_read(bi));
            temp_write(bi, temp_read(bi) + left);
        }
    }
    __syncthreads();
}

#define PREFIX_SCAN_BODY                                                   \
    usize t = (usize)threadIdx.x;                                          \
    usize half = (usize)blockDim.x;                                        \
    usize b = (usize)blockIdx.x;                                           \
    usize base = b * N;                                                    \
    if (2 * half != N || base + N > input_len || base + N > out_len) {     \
        return;                                                            \
    }                                                                      \
    RUST_ASSERT(base <= base + N);                                         \
    const unsigned* seg = input + base;                                    \
    RUST_ASSERT(t < N);                                                    \
    temp_write(t, seg[t]);                                                 \
    RUST_ASSERT(t + half < N);                                             \
    temp_write(t + half, seg[t + half]);                                   \
    up_sweep(t);                                                           \
    if (t == 0) {                                                          \
        if (b < totals_len) {                                              \
            totals[b] = temp_read(N - 1);                                  \
        }                                                                  \
        temp_write(N - 1, 0);                                              \
    }                                                                      \
    down_sweep(t);                                                         \
    unsigned lo = temp_read(t);                                            \
    RUST_ASSERT(base + t < out_len);                                       \
    out[base + t] = lo;                                                    \
    unsigned hi = temp_read(t + half);                                     \
    RUST_ASSERT(base + t + half < out_len);                                \
    out[base + t + half] = hi;

extern "C" __global__ void prefix_scan_plain(const unsigned* input, usize input_len,
                                             unsigned* out, usize out_len, unsigned* totals,
                                             usize totals_len) {
    PREFIX_SCAN_BODY
}

extern "C" __global__ void prefix_scan_restrict(const unsigned* __restrict__ input,
                                                usize input_len, unsigned* __restrict__ out,
                                                usize out_len, unsigned* __restrict__ totals,
                                                usize totals_len) {
    PREFIX_SCAN_BODY
}
