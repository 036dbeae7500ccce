// The CUDA C++ twin of fixtures/atomic_slice_histogram/kernel.rs: every
// thread with i < data.len() adds one (relaxed) to bins[data[i] % bins.len()].
// Rust's `%` panics on a zero divisor (RUST_ASSERT keeps that check); the
// index is then provably in bounds, so Rust's bounds check adds nothing.
// atomicAdd is a relaxed, device-scope add, as fetch_add(Relaxed) is.

#include "rust_twin.h"

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ void count(unsigned* bins, usize bins_len, unsigned value) {
    RUST_ASSERT(bins_len != 0);
    usize bin = (usize)value % bins_len;
    atomicAdd(&bins[bin], 1u);
}

extern "C" __global__ void histogram_plain(const unsigned* data, usize data_len, unsigned* bins,
                                           usize bins_len) {
    usize i = (usize)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < data_len) {
        count(bins, bins_len, data[i]);
    }
}

extern "C" __global__ void histogram_restrict(const unsigned* __restrict__ data, usize data_len,
                                              unsigned* __restrict__ bins, usize bins_len) {
    usize i = (usize)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < data_len) {
        count(bins, bins_len, data[i]);
    }
}
