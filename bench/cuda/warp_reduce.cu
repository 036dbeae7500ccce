// The CUDA C++ twin of fixtures/warp_reduce/kernel.rs: a warp-shuffle sum
// (five __shfl_down_sync steps, then lane 0's total broadcast), the ballot of
// lanes whose input exceeds a threshold, all/any votes, and a butterfly
// exchange of lane ids; lanes 0 and 1 of each warp write the results.
// Same checks: DisjointSlice::set asserts its index (RUST_ASSERT, a trap);
// the input read is guarded by the explicit `i < input.len()`.

#include "rust_twin.h"

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ float warp_sum(float x) {
    float v = x;
    unsigned offset = 32 / 2;
    while (offset > 0) {
        v += __shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    return __shfl_sync(FULL_MASK, v, 0);
}

#define WARP_REDUCE_BODY                                              \
    usize i = (usize)(blockIdx.x * blockDim.x + threadIdx.x);        \
    float x = i < input_len ? input[i] : 0.0f;                        \
    float total = warp_sum(x);                                        \
    bool big = x > threshold;                                         \
    unsigned ballot = __ballot_sync(FULL_MASK, big);                  \
    unsigned all = __all_sync(FULL_MASK, big) ? 1u : 0u;              \
    unsigned any = __any_sync(FULL_MASK, big) ? 1u : 0u;              \
    unsigned neighbour = __shfl_xor_sync(FULL_MASK, lane_id(), 1);    \
    if (lane_id() == 0) {                                             \
        usize w = i / 32;                                             \
        RUST_ASSERT(w < sums_len);                                    \
        sums[w] = total;                                              \
        RUST_ASSERT(w < ballots_len);                                 \
        ballots[w] = ballot;                                          \
        RUST_ASSERT(w < votes_len);                                   \
        votes[w] = all * 2 + any;                                     \
    }                                                                 \
    if (lane_id() == 1) {                                             \
        usize w = i / 32;                                             \
        RUST_ASSERT(w + 16 < votes_len);                              \
        votes[w + 16] = neighbour;                                    \
    }

extern "C" __global__ void warp_reduce_plain(const float* input, usize input_len, float threshold,
                                             float* sums, usize sums_len, unsigned* ballots,
                                             usize ballots_len, unsigned* votes, usize votes_len) {
    WARP_REDUCE_BODY
}

extern "C" __global__ void warp_reduce_restrict(const float* __restrict__ input, usize input_len,
                                                float threshold, float* __restrict__ sums,
                                                usize sums_len, unsigned* __restrict__ ballots,
                                                usize ballots_len, unsigned* __restrict__ votes,
                                                usize votes_len) {
    WARP_REDUCE_BODY
}
