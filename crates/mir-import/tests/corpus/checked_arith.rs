//! Checked arithmetic: `checked_*`, `overflowing_*`, `wrapping_*`, `saturating_*`
//! and plain `+ - * / % << >>` whose overflow/zero/shift checks become `Assert`
//! terminators (kept at -O for division and shifts by a variable).
//@ local kernel::overflowing _0: i32
//@ local kernel::shifts _1: u64
//@ local kernel::shifts _2: u32
//@ local kernel::plain _0: u16
//@ size std::option::Option<u32> = 8
//@ size std::option::Option<i32> = 8
//@ debug kernel::divide b => _2
use crate::gpu::*;

#[inline(never)]
pub fn checked(a: u32, b: u32) -> u32 {
    match a.checked_mul(b) {
        Some(p) => p.checked_sub(1).unwrap_or(0),
        None => u32::MAX,
    }
}

#[inline(never)]
pub fn overflowing(a: i32, b: i32) -> i32 {
    let (s, o) = a.overflowing_add(b);
    if o { s.wrapping_neg() } else { s.saturating_mul(2) }
}

#[inline(never)]
pub fn divide(a: i32, b: i32) -> i32 {
    if b == 0 { 0 } else { a / b + a % b }
}

#[inline(never)]
pub fn shifts(a: u64, s: u32) -> u64 {
    (a << (s & 63)) | (a >> (s % 64)) | a.wrapping_shl(s)
}

#[inline(never)]
pub fn plain(a: u16, b: u16) -> u16 {
    a + b - 1
}

#[unsafe(no_mangle)]
pub extern "C" fn checked_arith(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let mut v = checked(t + 1, 0x1000_0000);
        v = v.wrapping_add(overflowing(i32::MAX - t as i32, 5) as u32);
        v = v.wrapping_add(divide(t as i32 * -9, t as i32 - 3) as u32);
        v = v.wrapping_add(shifts(t as u64 + 1, t * 7) as u32);
        v = v.wrapping_add(plain(t as u16, 1) as u32);
        out.set(t as usize, v);
    }
}
