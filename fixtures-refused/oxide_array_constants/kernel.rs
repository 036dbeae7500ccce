//! Array constants read by a runtime index: a bare `[f32; 4]`, a nested
//! `[[u32; 3]; 2]`, a `&[u32; 4]`, arrays of padded `(bool, Side)` tuples
//! and of a `#[repr(u32)]` enum, tuples nesting zero-sized fields (`()` and
//! an over-aligned `Align32`), a tuple whose fields rustc reorders
//! (`(u8, u32, u64)`), a direct `(u8, u32)` constant and a tuple array
//! holding references to device statics (one with a non-zero addend). Each
//! `#[inline(never)]` helper reads one shape; the kernel writes the bare
//! `f32` entry, a base-257 hash of all the `u32`-valued reads, and the enum
//! entry, one element per thread.
//! Ported from NVlabs/cuda-oxide `crates/rustc-codegen-cuda/examples/array_constants`.
// SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
// SPDX-License-Identifier: Apache-2.0
use crate::gpu::*;

const BARE_TABLE: [f32; 4] = [1.25, -2.5, 5.0, 10.5];
const NESTED_TABLE: [[u32; 3]; 2] = [[11, 13, 17], [19, 23, 29]];
const POINTER_TABLE: &[u32; 4] = &[31, 37, 41, 43];
const TUPLE_TABLE: [(bool, Side); 6] = [
    (false, Side::LowX),
    (true, Side::HighX),
    (false, Side::LowY),
    (true, Side::HighY),
    (false, Side::LowZ),
    (true, Side::HighZ),
];
const BARE_ENUM_TABLE: [Side; 6] = [
    Side::LowX,
    Side::HighZ,
    Side::HighY,
    Side::HighX,
    Side::LowZ,
    Side::LowY,
];
const NESTED_TUPLE_TABLE: [((u8, ()), u32); 2] = [((3, ()), 17), ((5, ()), 29)];
const ALL_ZST_TUPLE_TABLE: [(((), ()), u32); 2] = [(((), ()), 59), (((), ()), 61)];

// rustc lays these fields out at offsets 4, 0, and 8 respectively on the
// supported 64-bit target. Reading the allocation in declaration order would
// therefore corrupt both of the first two values.
const REORDERED_TUPLE_TABLE: [(u8, u32, u64); 2] = [
    (0xa5, 0x1122_3344, 0x0102_0304_0506_0708),
    (0x5a, 0x99aa_bbcc, 0x8877_6655_4433_2211),
];

#[derive(Clone, Copy)]
#[repr(align(32))]
struct Align32;

const OVERALIGNED_ZST_TUPLE_TABLE: [(Align32, u8); 2] = [(Align32, 0x12), (Align32, 0x34)];
const DIRECT_TUPLE: (u8, u32) = (7, 41);

static FIRST_POINTER_VALUE: u32 = 11;
static POINTER_VALUES: [u32; 3] = [11, 17, 23];

const POINTER_TUPLE_TABLE: [(&u32, bool); 2] =
    [(&FIRST_POINTER_VALUE, false), (&POINTER_VALUES[2], true)];

#[derive(Clone, Copy)]
#[repr(u32)]
enum Side {
    LowX = 1,
    HighX = 2,
    LowY = 3,
    HighY = 4,
    LowZ = 5,
    HighZ = 6,
}

#[inline(never)]
fn bare_array_value(i: usize) -> f32 {
    BARE_TABLE[i & 3]
}

#[inline(never)]
fn nested_array_value(i: usize) -> u32 {
    let row = i & 1;
    let col = (i / 2) % 3;
    NESTED_TABLE[row][col]
}

#[inline(never)]
fn pointer_to_array_value(i: usize) -> u32 {
    POINTER_TABLE[i & 3]
}

#[inline(never)]
fn tuple_array_value(i: usize) -> u32 {
    let (is_high, side) = TUPLE_TABLE[i % 6];
    (side as u32) * 10 + (is_high as u32)
}

#[inline(never)]
fn bare_enum_array_value(i: usize) -> u32 {
    BARE_ENUM_TABLE[i % BARE_ENUM_TABLE.len()] as u32
}

#[inline(never)]
fn nested_tuple_array_value(i: usize) -> u32 {
    let ((tag, ()), value) = NESTED_TUPLE_TABLE[i & 1];
    tag as u32 + value
}

#[inline(never)]
fn all_zst_tuple_array_value(i: usize) -> u32 {
    let (((), ()), value) = ALL_ZST_TUPLE_TABLE[i & 1];
    value
}

#[inline(never)]
fn reordered_tuple_array_value(i: usize) -> u32 {
    let (byte, word, wide) = REORDERED_TUPLE_TABLE[i & 1];
    (byte as u32)
        .wrapping_mul(257)
        .wrapping_add(word)
        .wrapping_mul(257)
        .wrapping_add(wide as u32)
        .wrapping_mul(257)
        .wrapping_add((wide >> 32) as u32)
}

#[inline(never)]
fn overaligned_zst_tuple_array_value(i: usize) -> u32 {
    let pair = OVERALIGNED_ZST_TUPLE_TABLE[i & 1];
    let address_low_bits = (&pair as *const (Align32, u8) as usize) & 31;
    let (_, byte) = pair;
    byte as u32 + address_low_bits as u32
}

#[inline(never)]
fn direct_tuple_value() -> (u8, u32) {
    DIRECT_TUPLE
}

#[inline(never)]
fn pointer_tuple_array_value(i: usize) -> u32 {
    let (pointer, flag) = POINTER_TUPLE_TABLE[i & 1];
    *pointer + flag as u32
}

#[unsafe(no_mangle)]
pub extern "C" fn check_array_constants(
    out_f32: DisjointSlice<f32>,
    out_u32: DisjointSlice<u32>,
    out_enum: DisjointSlice<u32>,
) {
    let tid = global_idx_x() as usize;
    let i = tid;

    if tid < out_f32.len() {
        out_f32.set(tid, bare_array_value(i));
    }

    let tid_u32 = global_idx_x() as usize;
    if tid_u32 < out_u32.len() {
        let nested = nested_array_value(i);
        let pointer = pointer_to_array_value(i);
        let pointer_tuple = pointer_tuple_array_value(i);
        let tuple = tuple_array_value(i);
        let nested_tuple = nested_tuple_array_value(i);
        let (direct_tag, direct_value) = direct_tuple_value();
        let direct = direct_tag as u32 + direct_value;
        let all_zst = all_zst_tuple_array_value(i);
        let reordered = reordered_tuple_array_value(i);
        let overaligned_zst = overaligned_zst_tuple_array_value(i);

        out_u32.set(
            tid_u32,
            nested
                .wrapping_mul(257)
                .wrapping_add(pointer)
                .wrapping_mul(257)
                .wrapping_add(pointer_tuple)
                .wrapping_mul(257)
                .wrapping_add(tuple)
                .wrapping_mul(257)
                .wrapping_add(nested_tuple)
                .wrapping_mul(257)
                .wrapping_add(direct)
                .wrapping_mul(257)
                .wrapping_add(all_zst)
                .wrapping_mul(257)
                .wrapping_add(reordered)
                .wrapping_mul(257)
                .wrapping_add(overaligned_zst),
        );
    }

    let tid_enum = global_idx_x() as usize;
    if tid_enum < out_enum.len() {
        out_enum.set(tid_enum, bare_enum_array_value(i));
    }
}
