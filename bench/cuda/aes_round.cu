// The CUDA C++ twin of fixtures/aes_round/kernel.rs: one AES round
// (SubBytes, ShiftRows, MixColumns, AddRoundKey) per 16-byte block, one block
// per thread, the state as four little-endian column words. The S-box is a
// read-only device table, as the Rust constant becomes one. Same checks: the
// explicit early return; the block sub-slice's range and DisjointSlice::set's
// index (RUST_ASSERT, a trap); the S-box and word indices are in range by
// construction on both sides.

#include "rust_twin.h"

// The AES S-box (FIPS-197 Figure 7).
__device__ const unsigned char SBOX[256] = {
    0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
    0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
    0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
    0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
    0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
    0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
    0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
    0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
    0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
    0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
    0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
    0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
    0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
    0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
    0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
    0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
};

// #[inline(never)] in Rust, which libNVVM keeps as a .func: __noinline__.
__device__ __noinline__ unsigned sub_word(unsigned w) {
    unsigned r = 0;
    for (unsigned k = 0; k < 4; k++) {
        r |= (unsigned)SBOX[(w >> (8 * k)) & 0xff] << (8 * k);
    }
    return r;
}

__device__ __forceinline__ unsigned xtime(unsigned w) {
    return ((w & 0x7f7f7f7fu) << 1) ^ (((w >> 7) & 0x01010101u) * 0x1b);
}

__device__ __forceinline__ unsigned rotr(unsigned w, unsigned n) { return (w >> n) | (w << (32 - n)); }

__device__ __noinline__ unsigned mix_column(unsigned col) {
    unsigned next = rotr(col, 8);
    unsigned t = col ^ next;
    t = t ^ rotr(t, 16);
    return col ^ t ^ xtime(col ^ next);
}

__device__ __forceinline__ unsigned shifted(const unsigned* s, usize c) {
    return (s[c] & 0x000000ffu) | (s[(c + 1) % 4] & 0x0000ff00u) | (s[(c + 2) % 4] & 0x00ff0000u) |
           (s[(c + 3) % 4] & 0xff000000u);
}

// Word c of 16 bytes, little-endian (Rust folds the reversed bytes).
__device__ __forceinline__ unsigned word(const unsigned char* bytes, usize c) {
    unsigned w = 0;
    for (int i = 3; i >= 0; i--) {
        w = (w << 8) | (unsigned)bytes[4 * c + i];
    }
    return w;
}

#define AES_ROUND_BODY                                                                  \
    usize b = (usize)(blockIdx.x * blockDim.x + threadIdx.x);                          \
    if (round_key_len < 16 || 16 * (b + 1) > blocks_len || 16 * (b + 1) > out_len) {    \
        return;                                                                         \
    }                                                                                   \
    unsigned key[4], state[4], subbed[4];                                               \
    for (usize c = 0; c < 4; c++) {                                                     \
        key[c] = word(round_key, c);                                                    \
    }                                                                                   \
    RUST_ASSERT(16 * b <= 16 * (b + 1));                                                \
    for (usize c = 0; c < 4; c++) {                                                     \
        state[c] = word(blocks + 16 * b, c);                                            \
    }                                                                                   \
    for (usize c = 0; c < 4; c++) {                                                     \
        subbed[c] = sub_word(state[c]);                                                 \
    }                                                                                   \
    for (usize c = 0; c < 4; c++) {                                                     \
        unsigned col = mix_column(shifted(subbed, c)) ^ key[c];                         \
        for (usize r = 0; r < 4; r++) {                                                 \
            RUST_ASSERT(16 * b + 4 * c + r < out_len);                                  \
            out[16 * b + 4 * c + r] = (unsigned char)(col >> (8 * r));                  \
        }                                                                               \
    }

extern "C" __global__ void aes_round_plain(const unsigned char* blocks, usize blocks_len,
                                           const unsigned char* round_key, usize round_key_len,
                                           unsigned char* out, usize out_len) {
    AES_ROUND_BODY
}

extern "C" __global__ void aes_round_restrict(const unsigned char* __restrict__ blocks,
                                              usize blocks_len,
                                              const unsigned char* __restrict__ round_key,
                                              usize round_key_len,
                                              unsigned char* __restrict__ out, usize out_len) {
    AES_ROUND_BODY
}
