//! Nested reference constants: `&&7` and a named `&&&u32`; each level is its own
//! rustc allocation that holds a relocation to the next one.
//@ local kernel::INNER _0: &u32
//@ local kernel::OUTER _0: &&u32
//@ local kernel::TRIPLE _0: &&&u32
//@ local kernel::seven _0: &&u32
//@ local kernel::outer _0: &&u32
//@ body promoted kernel::seven
//@ body promoted kernel::TRIPLE
use crate::gpu::*;

pub const INNER: &u32 = &11;
pub const OUTER: &&u32 = &INNER;
pub const TRIPLE: &&&u32 = &&&21;

#[inline(never)]
pub fn seven() -> &'static &'static u32 {
    &&7
}

#[inline(never)]
pub fn outer() -> &'static &'static u32 {
    OUTER
}

#[inline(never)]
pub fn triple() -> u32 {
    ***TRIPLE
}

#[unsafe(no_mangle)]
pub extern "C" fn nested_ref(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, **seven());
        out.set(1, **outer());
        out.set(2, triple());
    }
}
