//! Repeat arrays `[0u8; 16]` and `[v; N]` with a runtime value (Rvalue::Repeat),
//! plus a reference constant to a repeat array.
//@ local kernel::ZEROS _0: &[u8; 16]
//@ local kernel::SEVENS _0: [u32; 8]
//@ local kernel::fill _0: [u8; 16]
//@ local kernel::fill _1: u8
//@ local kernel::checksum _1: &[u8; 16]
//@ body promoted kernel::ZEROS
use crate::gpu::*;

pub const ZEROS: &[u8; 16] = &[0u8; 16];
pub const SEVENS: [u32; 8] = [7; 8];

#[inline(never)]
pub fn fill(v: u8) -> [u8; 16] {
    [v; 16]
}

#[inline(never)]
pub fn zeros() -> &'static [u8; 16] {
    ZEROS
}

#[inline(never)]
pub fn checksum(a: &[u8; 16]) -> u32 {
    let mut s = 0u32;
    for (i, b) in a.iter().enumerate() {
        s = s.wrapping_add(*b as u32 * (i as u32 + 1));
    }
    s
}

#[unsafe(no_mangle)]
pub extern "C" fn repeat_array(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let a = fill(t as u8);
        out.set(t as usize, checksum(&a) + checksum(zeros()) + SEVENS[t as usize & 7]);
    }
}
