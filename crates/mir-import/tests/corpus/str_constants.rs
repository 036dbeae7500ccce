//! `&str` constants and a table of `&str`: wide pointers (address + length) whose
//! address relocates to a byte allocation.
//@ local kernel::GREETING _0: &str
//@ local kernel::NAMES _0: &[&str]
//@ local kernel::TABLE _0: [&str; 2]
//@ local kernel::greeting _0: &str
//@ local kernel::first_byte _0: u8
//@ body promoted kernel::NAMES
use crate::gpu::*;

pub const GREETING: &str = "hello, device";
pub const NAMES: &[&str] = &["zero", "one", "two", "three"];
pub const TABLE: [&str; 2] = ["ab", "cde"];

#[inline(never)]
pub fn greeting() -> &'static str {
    GREETING
}

#[inline(never)]
pub fn name_len(i: usize) -> u32 {
    NAMES[i % NAMES.len()].len() as u32
}

#[inline(never)]
pub fn first_byte(i: usize) -> u8 {
    TABLE[i & 1].as_bytes()[0]
}

#[unsafe(no_mangle)]
pub extern "C" fn str_constants(out: DisjointSlice<u32>) {
    let i = thread_idx_x() as usize;
    if i < out.len() {
        out.set(i, greeting().len() as u32 + name_len(i) + first_byte(i) as u32);
    }
}
