//! BLAKE3 of the empty input with the `blake3` crate, one thread writing
//! eight overlapping little-endian words of the digest, ported from
//! Rust-GPU/rust-gpu `tests/difftests/tests/blake3/blake3-rust-gpu/src/lib.rs`
//! (MIT OR Apache-2.0).
use crate::gpu::*;

#[unsafe(no_mangle)]
pub extern "C" fn main_cs(output: DisjointSlice<u32>) {
    let hash = blake3::Hasher::new().finalize();
    let bytes = hash.as_bytes();

    for i in 0..8 {
        output.set(
            i,
            u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]),
        );
    }
}
