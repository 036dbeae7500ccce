//! A struct holding an array of references: one allocation with several
//! relocations at different offsets, each to a distinct or shared allocation.
//@ local kernel::TABLE _0: &kernel::Table
//@ local kernel::table _0: &kernel::Table
//@ local kernel::row_len _1: usize
//@ size kernel::Table = 72
//@ field kernel::Table .id @ 64
//@ body promoted kernel::TABLE
use crate::gpu::*;

pub struct Table {
    pub id: u16,
    pub rows: [&'static [u8]; 3],
    pub weights: [&'static u32; 2],
}

pub const TABLE: &Table = &Table {
    id: 9,
    rows: [b"ab", b"cde", b"ab"],
    weights: [&100, &100],
};

#[inline(never)]
pub fn table() -> &'static Table {
    TABLE
}

#[inline(never)]
pub fn row_len(i: usize) -> u32 {
    table().rows[i % 3].len() as u32
}

#[inline(never)]
pub fn weights_alias() -> u32 {
    core::ptr::eq(table().weights[0], table().weights[1]) as u32
}

#[unsafe(no_mangle)]
pub extern "C" fn struct_array_of_refs(out: DisjointSlice<u32>) {
    let i = thread_idx_x() as usize;
    if i < out.len() {
        let t = table();
        out.set(i, t.id as u32 + row_len(i) + *t.weights[i & 1] + weights_alias());
    }
}
