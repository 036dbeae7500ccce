// The CUDA C++ twin of fixtures/softmax_rows/kernel.rs: one warp per row,
// each lane walking its columns with stride 32, the row's maximum and sum
// combined with butterfly __shfl_xor_sync in __noinline__ helpers, then
// out = expf(x - max) / sum. fmaxf is f32::max and expf is f32::exp (both
// libdevice's __nv_expf). Same checks: the explicit early return; the row
// sub-slice's range and DisjointSlice::set's index (RUST_ASSERT, a trap);
// `row[j]` is dominated by `j < cols`.

#include "rust_twin.h"

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ float warp_max(float x) {
    float v = x;
    for (unsigned mask = 32 / 2; mask > 0; mask /= 2) {
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, mask));
    }
    return v;
}

__device__ __noinline__ float warp_sum(float x) {
    float v = x;
    for (unsigned mask = 32 / 2; mask > 0; mask /= 2) {
        v += __shfl_xor_sync(FULL_MASK, v, mask);
    }
    return v;
}

#define SOFTMAX_BODY                                                                    \
    usize cols = (usize)cols32;                                                         \
    usize row_index = (usize)(blockIdx.x * blockDim.x + threadIdx.x) / 32;             \
    usize lane = (usize)lane_id();                                                      \
    if (cols == 0 || (row_index + 1) * cols > input_len ||                              \
        (row_index + 1) * cols > out_len) {                                             \
        return;                                                                         \
    }                                                                                   \
    usize start = row_index * cols;                                                     \
    RUST_ASSERT(start <= start + cols);                                                 \
    const float* row = input + start;                                                   \
    float local_max = __int_as_float(0xff800000);                                       \
    for (usize j = lane; j < cols; j += 32) {                                           \
        local_max = fmaxf(local_max, row[j]);                                           \
    }                                                                                   \
    float max = warp_max(local_max);                                                    \
    float local_sum = 0.0f;                                                             \
    for (usize j = lane; j < cols; j += 32) {                                           \
        local_sum += expf(row[j] - max);                                                \
    }                                                                                   \
    float sum = warp_sum(local_sum);                                                    \
    for (usize j = lane; j < cols; j += 32) {                                           \
        float v = expf(row[j] - max) / sum;                                             \
        RUST_ASSERT(start + j < out_len);                                               \
        out[start + j] = v;                                                             \
    }

extern "C" __global__ void softmax_rows_plain(const float* input, usize input_len,
                                              unsigned cols32, float* out, usize out_len) {
    SOFTMAX_BODY
}

extern "C" __global__ void softmax_rows_restrict(const float* __restrict__ input, usize input_len,
                                                 unsigned cols32, float* __restrict__ out,
                                                 usize out_len) {
    SOFTMAX_BODY
}
