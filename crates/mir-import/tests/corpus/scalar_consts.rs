//! Scalar constants of every primitive kind (bool, char, f32, f64, i8..i128,
//! u128) as values and behind references, including negative and wide ones.
//@ local kernel::B _0: bool
//@ local kernel::C _0: char
//@ local kernel::F32 _0: f32
//@ local kernel::F64 _0: &f64
//@ local kernel::I128 _0: i128
//@ local kernel::U128 _0: &u128
//@ local kernel::USIZE _0: &usize
//@ local kernel::mix _0: u64
//@ body promoted kernel::U128
use crate::gpu::*;

pub const B: bool = true;
pub const C: char = 'λ';
pub const F32: f32 = -1.5;
pub const F64: &f64 = &2.25;
pub const I8: i8 = -8;
pub const I16: &i16 = &-1600;
pub const I32: i32 = i32::MIN;
pub const I64: &i64 = &-64_000_000_000;
pub const I128: i128 = -(1i128 << 100);
pub const U128: &u128 = &0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
pub const U8: u8 = 0xff;
pub const USIZE: &usize = &usize::MAX;

#[inline(never)]
pub fn mix() -> u64 {
    let mut x = B as u64 + C as u64 + U8 as u64;
    x = x.wrapping_add((F32 * 4.0) as i64 as u64);
    x = x.wrapping_add((*F64 * 8.0) as u64);
    x = x.wrapping_add(I8 as i64 as u64).wrapping_add(*I16 as i64 as u64);
    x = x.wrapping_add(I32 as i64 as u64).wrapping_add(*I64 as u64);
    x = x.wrapping_add((I128 >> 64) as u64).wrapping_add((*U128 >> 32) as u64);
    x ^ (*USIZE as u64)
}

#[unsafe(no_mangle)]
pub extern "C" fn scalar_consts(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        let m = mix();
        out.set(0, m as u32);
        out.set(1, (m >> 32) as u32);
    }
}
