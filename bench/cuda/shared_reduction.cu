// The CUDA C++ twin of fixtures/shared_reduction/kernel.rs: a tree reduction
// in an 8-element __shared__ array, 3 rounds (strides 4, 2, 1) separated by
// __syncthreads(); thread 0 writes the block sum to out[blockIdx.x].
// SharedArray::read/write assert `i < 8` (a Rust panic, a trap on the GPU);
// RUST_ASSERT keeps those checks so both sides do the same work. One pointer
// only, so aliasing cannot matter: one variant.

#include "rust_twin.h"

__shared__ unsigned SUMS[8];

__device__ unsigned sums_read(usize i) {
    RUST_ASSERT(i < 8);
    return SUMS[i];
}

__device__ void sums_write(usize i, unsigned v) {
    RUST_ASSERT(i < 8);
    SUMS[i] = v;
}

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ void reduce_round(usize t, usize stride) {
    if (t < stride) {
        sums_write(t, sums_read(t) + sums_read(t + stride));
    }
}

extern "C" __global__ void shared_reduction_plain(unsigned* out, usize out_len) {
    usize t = (usize)threadIdx.x;
    sums_write(t, (unsigned)t + 1);
    __syncthreads();
    usize stride = 4;
    while (stride > 0) {
        reduce_round(t, stride);
        __syncthreads();
        stride /= 2;
    }
    if (t == 0) {
        usize b = (usize)blockIdx.x;
        if (b < out_len) {
            out[b] = sums_read(0);
        }
    }
}
