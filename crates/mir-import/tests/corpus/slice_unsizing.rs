//! Slices `&[T]` and unsizing: `&[u32; 4]` coerced to `&[u32]` (a PointerCoercion
//! cast), slice constants, `len` and indexing with bounds checks.
//@ local kernel::ARR _0: &[u32; 4]
//@ local kernel::SL _0: &[u32]
//@ local kernel::BYTES _0: &[u8]
//@ local kernel::as_slice _0: &[u32]
//@ local kernel::tail _0: &[u32]
//@ local kernel::total _1: &[u32]
//@ body promoted kernel::SL
use crate::gpu::*;

pub const ARR: &[u32; 4] = &[10, 20, 30, 40];
pub const SL: &[u32] = &[7, 8, 9];
pub const BYTES: &[u8] = b"bytes";

#[inline(never)]
pub fn as_slice() -> &'static [u32] {
    ARR
}

#[inline(never)]
pub fn total(s: &[u32]) -> u32 {
    let mut t = 0;
    let mut i = 0;
    while i < s.len() {
        t += s[i];
        i += 1;
    }
    t
}

#[inline(never)]
pub fn tail(s: &[u32]) -> &[u32] {
    &s[1..]
}

#[unsafe(no_mangle)]
pub extern "C" fn slice_unsizing(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, total(as_slice()));
        out.set(1, total(SL));
        out.set(2, total(tail(SL)));
        out.set(3, BYTES.len() as u32 + BYTES[4] as u32);
    }
}
