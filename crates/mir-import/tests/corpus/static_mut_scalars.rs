//! Mutable device statics: `static mut` scalars and arrays accessed through
//! `&raw mut` / `&raw const` (edition 2024 forbids plain references), pointers
//! into device statics returned from helpers, and a zero-initialized static.
//@ local kernel::COUNTER _0: u32
//@ local kernel::HIST _0: [u32; 8]
//@ local kernel::RO _0: [u16; 4]
//@ bytes kernel::COUNTER 0 = 05 00 00 00
//@ bytes kernel::HIST 0 = 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
//@ bytes kernel::RO 0 = 0a 00 14 00 1e 00 28 00
//@ local kernel::hist_slot _0: *mut u32
//@ local kernel::ro_elem _0: &u16
use crate::gpu::*;

pub static mut COUNTER: u32 = 5;
pub static mut HIST: [u32; 8] = [0; 8];
pub static RO: [u16; 4] = [10, 20, 30, 40];

#[inline(never)]
pub fn hist_slot(i: usize) -> *mut u32 {
    unsafe { (&raw mut HIST).cast::<u32>().add(i & 7) }
}

#[inline(never)]
pub fn ro_elem(i: usize) -> &'static u16 {
    &RO[i & 3]
}

#[inline(never)]
pub fn tick() -> u32 {
    unsafe {
        let c = &raw mut COUNTER;
        *c += 1;
        *c
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn static_mut_scalars(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        let a = tick();
        let b = tick();
        unsafe { *hist_slot(3) += a };
        let h = unsafe { *hist_slot(3) + (*(&raw const HIST))[0] };
        out.set(0, a + b + h + *ro_elem(2) as u32);
    }
}
