//! Slice and array patterns: `[first, .., last]`, `[x, rest @ ..]`, fixed-length
//! arms on slices (ConstantIndex / Subslice projections, `Len` checks).
//@ local kernel::ends _1: &[u32]
//@ local kernel::head_tail _1: &[u32]
//@ local kernel::array_middle _1: [u32; 5]
//@ local kernel::from_end _0: u32
//@ debug kernel::array_middle a => _1
use crate::gpu::*;

#[inline(never)]
pub fn ends(s: &[u32]) -> u32 {
    match s {
        [] => 0,
        [only] => *only,
        [first, .., last] => *first * 1000 + *last,
    }
}

#[inline(never)]
pub fn head_tail(s: &[u32]) -> u32 {
    match s {
        [x, rest @ ..] => *x + rest.len() as u32 * 10,
        [] => 7,
    }
}

#[inline(never)]
pub fn array_middle(a: [u32; 5]) -> u32 {
    let [_, mid @ .., _] = a;
    mid[0] + mid[1] + mid[2]
}

#[inline(never)]
pub fn from_end(s: &[u32]) -> u32 {
    if let [.., a, b] = s { *a * *b } else { 0 }
}

#[unsafe(no_mangle)]
pub extern "C" fn subslice_patterns(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let buf = [t, t + 1, t + 2, t + 3, t + 4];
        let n = (t as usize) % 6;
        let s = &buf[..n];
        out.set(t as usize, ends(s) + head_tail(s) + array_middle(buf) + from_end(s));
    }
}
