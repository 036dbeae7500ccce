//! `Option<&T>` constants, `Some(&13)` and `None` (niche-encoded: null is None),
//! returned from a helper and matched in a kernel.
//@ local kernel::SOME _0: std::option::Option<&u32>
//@ local kernel::NONE _0: std::option::Option<&u32>
//@ local kernel::SOME_PAIR _0: std::option::Option<&(u16, u32)>
//@ local kernel::pick _0: std::option::Option<&u32>
//@ local kernel::read_or _1: std::option::Option<&u32>
//@ size std::option::Option<&u32> = 8
//@ body promoted kernel::SOME
use crate::gpu::*;

pub const SOME: Option<&u32> = Some(&13);
pub const NONE: Option<&u32> = None;
pub const SOME_PAIR: Option<&(u16, u32)> = Some(&(1, 2));

#[inline(never)]
pub fn pick(which: u32) -> Option<&'static u32> {
    if which == 0 { SOME } else { NONE }
}

#[inline(never)]
pub fn read_or(o: Option<&u32>, default: u32) -> u32 {
    match o {
        Some(v) => *v,
        None => default,
    }
}

#[inline(never)]
pub fn pair_second() -> u32 {
    SOME_PAIR.map(|p| p.1).unwrap_or(0)
}

#[unsafe(no_mangle)]
pub extern "C" fn option_ref_some_none(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        out.set(t as usize, read_or(pick(t & 1), 99) + pair_second());
    }
}
