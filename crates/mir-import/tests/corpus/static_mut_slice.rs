//! `static mut M: &mut [u32] = &mut [5, 6]`: mutable anonymous memory nested in a
//! static, which must never be merged with an equal immutable allocation.
//@ local kernel::M _0: &mut [u32]
//@ local kernel::IMM _0: &[u32]
//@ reloc kernel::M 0 -> kernel::M::{nested#0}
//@ bytes kernel::M 8 = 02 00 00 00 00 00 00 00
//@ bytes kernel::M::{nested#0} 0 = 05 00 00 00 06 00 00 00
//@ reloc kernel::IMM 0 -> anon
//@ bytes kernel::IMM 8 = 02 00 00 00 00 00 00 00
use crate::gpu::*;

pub static mut M: &mut [u32] = &mut [5, 6];
pub static IMM: &[u32] = &[5, 6];

#[inline(never)]
pub fn bump(i: usize) -> u32 {
    unsafe {
        let m = &raw mut M;
        (*m)[i] += 1;
        (*m)[i]
    }
}

#[inline(never)]
pub fn imm(i: usize) -> u32 {
    IMM[i]
}

#[unsafe(no_mangle)]
pub extern "C" fn static_mut_slice(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, bump(0));
        out.set(1, bump(1));
        out.set(2, imm(0) + imm(1));
    }
}
