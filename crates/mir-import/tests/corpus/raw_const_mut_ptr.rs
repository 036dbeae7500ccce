//! Raw-pointer constants: `const P: *mut u32 = &raw const V as *mut u32` into a
//! read-only static, a `*const` constant, and a `static mut` twin holding `*mut`.
//@ local kernel::V _0: u32
//@ local kernel::W _0: [u16; 4]
//@ local kernel::P _0: *mut u32
//@ local kernel::Q _0: *const u16
//@ local kernel::P_TWIN _0: *mut u32
//@ bytes kernel::V 0 = 11 00 00 00
//@ reloc kernel::P_TWIN 0 -> kernel::V
use crate::gpu::*;

pub static V: u32 = 17;
pub static W: [u16; 4] = [1, 2, 3, 4];

pub const P: *mut u32 = &raw const V as *mut u32;
pub const Q: *const u16 = &raw const W[2];
pub static mut P_TWIN: *mut u32 = &raw const V as *mut u32;

#[inline(never)]
pub fn read_p() -> u32 {
    unsafe { *P }
}

#[inline(never)]
pub fn read_q() -> u32 {
    unsafe { *Q.add(1) as u32 }
}

#[inline(never)]
pub fn read_twin() -> u32 {
    unsafe { *P_TWIN }
}

#[unsafe(no_mangle)]
pub extern "C" fn raw_const_mut_ptr(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, read_p());
        out.set(1, read_q());
        out.set(2, read_twin());
        out.set(3, core::ptr::eq(P, unsafe { P_TWIN }) as u32);
    }
}
