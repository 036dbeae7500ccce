//! A named reference constant to a tuple, `const PAIR: &(u32, u32) = &(3, 4)`,
//! returned from an `#[inline(never)]` helper and read through in a kernel.
//@ local kernel::PAIR _0: &(u32, u32)
//@ local kernel::pair _0: &(u32, u32)
//@ local kernel::pair_sum _0: u32
//@ body promoted kernel::PAIR
use crate::gpu::*;

pub const PAIR: &(u32, u32) = &(3, 4);

#[inline(never)]
pub fn pair() -> &'static (u32, u32) {
    PAIR
}

#[inline(never)]
pub fn pair_sum() -> u32 {
    let p = pair();
    p.0 + p.1
}

#[unsafe(no_mangle)]
pub extern "C" fn named_tuple_ref(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, pair().0);
        out.set(1, pair().1);
        out.set(2, pair_sum());
    }
}
