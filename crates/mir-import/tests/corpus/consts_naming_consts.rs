//! Constants that name other constants: a chain `E -> A`, a struct const built
//! from other reference consts, and a const slice of a const array's interior.
//@ local kernel::A _0: &[u32; 4]
//@ local kernel::BOTH _0: (&u32, &u32)
//@ local kernel::MID _0: &[u32]
//@ local kernel::PAIR _0: &kernel::Pair
//@ local kernel::pair _0: &kernel::Pair
//@ local kernel::both _0: (&u32, &u32)
//@ size kernel::Pair = 16
//@ field kernel::Pair .lo @ 0
//@ field kernel::Pair .hi @ 8
//@ body promoted kernel::PAIR
use crate::gpu::*;

pub const A: &[u32; 4] = &[2, 3, 5, 7];
pub const E: &u32 = &A[0];
pub const LAST: &u32 = &A[3];
pub const BOTH: (&u32, &u32) = (E, LAST);
pub const MID: &[u32] = &[A[1], A[2]];

pub struct Pair {
    pub lo: &'static u32,
    pub hi: &'static u32,
}
pub const PAIR: &Pair = &Pair { lo: E, hi: LAST };

#[inline(never)]
pub fn both() -> (&'static u32, &'static u32) {
    BOTH
}

#[inline(never)]
pub fn pair() -> &'static Pair {
    PAIR
}

#[inline(never)]
pub fn mid_sum() -> u32 {
    MID.iter().sum()
}

#[unsafe(no_mangle)]
pub extern "C" fn consts_naming_consts(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        let (a, b) = both();
        out.set(0, *a + *b);
        out.set(1, core::ptr::eq(pair().lo, a) as u32);
        out.set(2, core::ptr::eq(pair().hi, &A[3]) as u32);
        out.set(3, mid_sum());
    }
}
