//! A promoted constant `&42` (and a promoted `&[1, 2, 3]`) returned from
//! `#[inline(never)]` helpers, so the returned pointer must outlive the helper.
//@ local kernel::forty_two _0: &u32
//@ local kernel::promoted_array _0: &[u32; 3]
//@ local kernel::promoted_in_expr _1: u32
//@ body promoted kernel::forty_two
//@ body promoted kernel::promoted_array
//@ body promoted kernel::promoted_in_expr
use crate::gpu::*;

#[inline(never)]
pub fn forty_two() -> &'static u32 {
    &42
}

#[inline(never)]
pub fn promoted_array() -> &'static [u32; 3] {
    &[1, 2, 3]
}

#[inline(never)]
pub fn promoted_in_expr(x: u32) -> u32 {
    let r: &u32 = if x > 5 { &100 } else { &200 };
    *r + x
}

#[unsafe(no_mangle)]
pub extern "C" fn promoted_int_ref(out: DisjointSlice<u32>) {
    let i = global_idx_x() as usize;
    if i == 0 {
        out.set(0, *forty_two());
        out.set(1, promoted_array()[2]);
        out.set(2, promoted_in_expr(7));
    }
}
