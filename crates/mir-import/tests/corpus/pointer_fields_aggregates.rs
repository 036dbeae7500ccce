//! Pointer fields inside aggregate constants: a tuple, a struct, an array and an
//! enum each store relocations to other allocations.
//@ local kernel::TUPLE _0: &(u32, &u32)
//@ local kernel::HOLDER _0: &kernel::Holder
//@ local kernel::ARRAY _0: &[&u32; 3]
//@ local kernel::EITHER_R _0: &kernel::Either
//@ local kernel::either_value _1: &kernel::Either
//@ size kernel::Holder = 32
//@ field kernel::Holder .tag @ 24
//@ size kernel::Either = 16
//@ body promoted kernel::HOLDER
use crate::gpu::*;

pub struct Holder {
    pub tag: u8,
    pub value: &'static u32,
    pub pair: (&'static u16, u64),
}

pub enum Either {
    Left(&'static u32),
    Right(u64, &'static u8),
}

pub const TUPLE: &(u32, &u32) = &(1, &2);
pub const HOLDER: &Holder = &Holder { tag: 3, value: &4, pair: (&5, 6) };
pub const ARRAY: &[&u32; 3] = &[&7, &8, &9];
pub const EITHER_L: &Either = &Either::Left(&10);
pub const EITHER_R: &Either = &Either::Right(11, &12);

#[inline(never)]
pub fn holder() -> &'static Holder {
    HOLDER
}

#[inline(never)]
pub fn either_value(e: &Either) -> u32 {
    match e {
        Either::Left(v) => **v,
        Either::Right(a, b) => *a as u32 + **b as u32,
    }
}

#[inline(never)]
pub fn sum_all() -> u32 {
    let h = holder();
    let mut s = *TUPLE.1 + TUPLE.0 + h.tag as u32 + *h.value + *h.pair.0 as u32 + h.pair.1 as u32;
    for r in ARRAY.iter() {
        s += **r;
    }
    s + either_value(EITHER_L) + either_value(EITHER_R)
}

#[unsafe(no_mangle)]
pub extern "C" fn pointer_fields_aggregates(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, sum_all());
    }
}
