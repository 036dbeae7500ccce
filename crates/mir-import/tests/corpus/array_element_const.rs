//! A constant naming another constant: `const E: &u32 = &A[0]` into
//! `const A: &[u32; 2] = &[3, 4]`, plus a pointer-identity comparison.
//@ local kernel::A _0: &[u32; 2]
//@ local kernel::E _0: &u32
//@ local kernel::F _0: &u32
//@ local kernel::first _0: &u32
//@ local kernel::whole _0: &[u32; 2]
//@ body promoted kernel::A
use crate::gpu::*;

pub const A: &[u32; 2] = &[3, 4];
pub const E: &u32 = &A[0];
pub const F: &u32 = &A[1];

#[inline(never)]
pub fn first() -> &'static u32 {
    E
}

#[inline(never)]
pub fn whole() -> &'static [u32; 2] {
    A
}

#[inline(never)]
pub fn identity() -> u32 {
    core::ptr::eq(&A[0], E) as u32
}

#[unsafe(no_mangle)]
pub extern "C" fn array_element_const(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, *first());
        out.set(1, *F);
        out.set(2, whole()[1]);
        out.set(3, identity());
    }
}
