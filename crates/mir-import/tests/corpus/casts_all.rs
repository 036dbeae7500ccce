//! Casts of every kind: int<->int (trunc, sign/zero extend), int<->float,
//! float<->float, bool/char to int, u8 to char, ptr<->ptr, ptr->addr, addr->ptr
//! (`with_exposed_provenance`), fn item to fn pointer, and `transmute`.
//@ local kernel::int_casts _1: i64
//@ local kernel::float_casts _0: u32
//@ local kernel::ptr_casts _1: &[u32; 4]
//@ local kernel::via_fn_ptr _1: fn(i64) -> u32
//@ local kernel::via_fn_ptr _2: i64
//@ debug kernel::via_fn_ptr f => _1
use crate::gpu::*;

#[inline(never)]
pub fn int_casts(x: i64) -> u32 {
    let a = x as u8 as u32;
    let b = x as i16 as i32 as u32;
    let c = (x as u64 >> 40) as u32;
    a ^ b ^ c ^ (true as u32) ^ ('Z' as u32) ^ (65u8 as char as u32)
}

#[inline(never)]
pub fn float_casts(x: u32) -> u32 {
    let f = x as f32 * 0.5;
    let d = f as f64 + (x as i32 - 100) as f64;
    let back = d as i32;
    (back as u32).wrapping_add(f64::to_bits(d) as u32).wrapping_add((-3.7f32) as u32) ^ f.to_bits()
}

#[inline(never)]
pub fn ptr_casts(p: &[u32; 4]) -> u32 {
    let raw = p as *const [u32; 4] as *const u32;
    let bytes = raw as *const u8;
    let addr = raw as usize;
    let back: *const u32 = core::ptr::with_exposed_provenance(addr + 4);
    let m = raw as *mut u32;
    unsafe { *back + *bytes as u32 + (m.cast_const() == raw) as u32 + (addr & 3) as u32 }
}

#[inline(never)]
pub fn via_fn_ptr(f: fn(i64) -> u32, x: i64) -> u32 {
    f(x)
}

#[unsafe(no_mangle)]
pub extern "C" fn casts_all(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let arr = [t, t + 1, t + 2, t + 3];
        let bits: u32 = unsafe { core::mem::transmute([t as u16, 0x5a5a_u16]) };
        let v = via_fn_ptr(int_casts, -(t as i64) * 1_000_003) ^ float_casts(t) ^ ptr_casts(&arr);
        out.set(t as usize, v ^ bits);
    }
}
