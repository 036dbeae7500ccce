// The CUDA C++ twin of fixtures/transpose_shared/kernel.rs: a 32 × 32 tile
// per block of 32 × 8 threads, read as rows into a shared tile padded to 33
// columns, written after a barrier as rows of the transposed output. Same
// checks: the explicit block-shape return and edge conditions;
// SharedArray::read/write assert their index, the input read and
// DisjointSlice::set theirs (RUST_ASSERT, a trap), where neither compiler
// may prove them.

#include "rust_twin.h"

#define TILE 32
#define PITCH (TILE + 1)
#define BLOCK_ROWS 8

__shared__ float TILE_BUF[TILE * PITCH];

__device__ __forceinline__ float tile_read(usize i) {
    RUST_ASSERT(i < TILE * PITCH);
    return TILE_BUF[i];
}
__device__ __forceinline__ void tile_write(usize i, float v) {
    RUST_ASSERT(i < TILE * PITCH);
    TILE_BUF[i] = v;
}

#define TRANSPOSE_BODY                                                \
    usize width = (usize)width32, height = (usize)height32;           \
    usize tx = (usize)threadIdx.x, ty = (usize)threadIdx.y;           \
    if (blockDim.x != TILE || blockDim.y != BLOCK_ROWS) {             \
        return;                                                       \
    }                                                                 \
    usize tile_col = (usize)blockIdx.x * TILE;                        \
    usize tile_row = (usize)blockIdx.y * TILE;                        \
    usize x = tile_col + tx;                                          \
    for (usize r = ty; r < TILE; r += BLOCK_ROWS) {                   \
        usize y = tile_row + r;                                       \
        if (x < width && y < height) {                                \
            RUST_ASSERT(y * width + x < input_len);                   \
            tile_write(r * PITCH + tx, input[y * width + x]);         \
        }                                                             \
    }                                                                 \
    __syncthreads();                                                  \
    x = tile_row + tx;                                                \
    for (usize r = ty; r < TILE; r += BLOCK_ROWS) {                   \
        usize y = tile_col + r;                                       \
        if (x < height && y < width) {                                \
            float v = tile_read(tx * PITCH + r);                      \
            RUST_ASSERT(y * height + x < out_len);                    \
            out[y * height + x] = v;                                  \
        }                                                             \
    }

extern "C" __global__ void transpose_shared_plain(const float* input, usize input_len,
                                                  unsigned width32, unsigned height32, float* out,
                                                  usize out_len) {
    TRANSPOSE_BODY
}

extern "C" __global__ void transpose_shared_restrict(const float* __restrict__ input,
                                                     usize input_len, unsigned width32,
                                                     unsigned height32, float* __restrict__ out,
                                                     usize out_len) {
    TRANSPOSE_BODY
}
