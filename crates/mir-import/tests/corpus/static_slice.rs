//! A static whose initializer points to an anonymous allocation,
//! `static S: &[u32] = &[1, 2]`, and a static `&str`.
//@ local kernel::S _0: &[u32]
//@ local kernel::NAME _0: &str
//@ reloc kernel::S 0 -> anon
//@ bytes kernel::S 8 = 02 00 00 00 00 00 00 00
//@ reloc kernel::NAME 0 -> anon
//@ bytes kernel::NAME 8 = 03 00 00 00 00 00 00 00
//@ local kernel::slice _0: &[u32]
//@ body promoted kernel::S
use crate::gpu::*;

pub static S: &[u32] = &[1, 2];
pub static NAME: &str = "gpu";

#[inline(never)]
pub fn slice() -> &'static [u32] {
    S
}

#[inline(never)]
pub fn slice_sum() -> u32 {
    let mut s = 0;
    for v in S {
        s += *v;
    }
    s + NAME.len() as u32
}

#[unsafe(no_mangle)]
pub extern "C" fn static_slice(out: DisjointSlice<u32>) {
    let i = thread_idx_x() as usize;
    if i < slice().len() && i < out.len() {
        out.set(i, slice()[i] + slice_sum());
    }
}
