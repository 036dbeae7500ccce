//! An interior reference constant: `&PAIR.1` points into the middle of the
//! allocation behind `PAIR`, and also a promoted interior `&(5, 6).1`.
//@ local kernel::PAIR _0: &(u32, u32)
//@ local kernel::SECOND _0: &u32
//@ local kernel::second _0: &u32
//@ local kernel::second_direct _0: &u32
//@ local kernel::same_place _0: bool
//@ body promoted kernel::PAIR
use crate::gpu::*;

pub const PAIR: &(u32, u32) = &(3, 4);
pub const SECOND: &u32 = &PAIR.1;

#[inline(never)]
pub fn second() -> &'static u32 {
    SECOND
}

#[inline(never)]
pub fn second_direct() -> &'static u32 {
    &PAIR.1
}

#[inline(never)]
pub fn same_place() -> bool {
    core::ptr::eq(second(), second_direct())
}

#[unsafe(no_mangle)]
pub extern "C" fn interior_tuple_field(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, *second());
        out.set(1, *second_direct());
        out.set(2, same_place() as u32);
    }
}
