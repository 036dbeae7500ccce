//! A field-less `#[repr(u32)]` enum table against the `u32` table of the same
//! discriminants (16 and 256 entries, built by `while` loops in constant
//! evaluation), and the 256-entry enum table read through
//! `const R: &[Op; 256] = &OPS`: each thread walks a per-thread LCG for 64
//! rounds and adds the selected entry's discriminant (wrapping).
//! Ported from NVlabs/cuda-oxide `crates/rustc-codegen-cuda/examples/enum_table_lookup`.
// SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
// SPDX-License-Identifier: Apache-2.0
use crate::gpu::*;

/// Small table, which `ptxas` can rescue by itself.
const N16: usize = 16;

/// Realistic table size, past anything `ptxas` will unpack.
const N256: usize = 256;

/// Lookups per thread.
const ROUNDS: u32 = 64;

/// A field-less enum: every variant is just a discriminant, so an `[Op; N]`
/// holds exactly the same bytes as the `[u32; N]` of its values.
#[derive(Clone, Copy, PartialEq, Debug)]
#[repr(u32)]
pub enum Op {
    Add = 3,
    Sub = 5,
    Mul = 7,
    Div = 11,
    Rem = 13,
    Shl = 17,
    Shr = 19,
    Xor = 23,
}

/// The discriminant an entry carries at index `i`. Used to build both tables, so
/// the enum table and the integer table are byte-identical by construction.
const fn code_at(i: usize) -> u32 {
    match i % 8 {
        0 => 3,
        1 => 5,
        2 => 7,
        3 => 11,
        4 => 13,
        5 => 17,
        6 => 19,
        _ => 23,
    }
}

const fn op_at(i: usize) -> Op {
    match i % 8 {
        0 => Op::Add,
        1 => Op::Sub,
        2 => Op::Mul,
        3 => Op::Div,
        4 => Op::Rem,
        5 => Op::Shl,
        6 => Op::Shr,
        _ => Op::Xor,
    }
}

macro_rules! build_tables {
    ($n:expr, $ops:ident, $codes:ident) => {
        const $ops: [Op; $n] = {
            let mut t = [Op::Add; $n];
            let mut i = 0;
            while i < $n {
                t[i] = op_at(i);
                i += 1;
            }
            t
        };
        const $codes: [u32; $n] = {
            let mut t = [0u32; $n];
            let mut i = 0;
            while i < $n {
                t[i] = code_at(i);
                i += 1;
            }
            t
        };
    };
}

build_tables!(N16, OPS16, CODES16);
build_tables!(N256, OPS256, CODES256);

/// The reference spelling of the 256-entry enum table. This form used to be
/// rejected outright; it must lower to the same immutable global the bare
/// table gets, and the kernel reading through it must match the same host
/// reference.
const OPS256_REF: &[Op; N256] = &OPS256;

/// One LCG step. Shared by every kernel so the index stream is identical and
/// only the table's element type differs.
#[inline(always)]
fn step(h: u32) -> u32 {
    h.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
}

// Four kernels, each the same loop with one expression changed. Written out
// longhand because `#[cuda_module]` expands before any inner `macro_rules!`
// would, and because keeping the loop textually identical is the point.

#[unsafe(no_mangle)]
pub extern "C" fn enum16_table(input: &[u32], output: DisjointSlice<u32>) {
    let idx = global_idx_x() as usize;
    let i = idx;
    if i >= input.len() {
        return;
    }
    let mut h = input[i];
    let mut acc = 0u32;
    for _ in 0..ROUNDS {
        h = step(h);
        acc = acc.wrapping_add(OPS16[(h >> 24) as usize & (N16 - 1)] as u32);
    }
    if idx < output.len() {
        output.set(idx, acc);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn u3216_table(input: &[u32], output: DisjointSlice<u32>) {
    let idx = global_idx_x() as usize;
    let i = idx;
    if i >= input.len() {
        return;
    }
    let mut h = input[i];
    let mut acc = 0u32;
    for _ in 0..ROUNDS {
        h = step(h);
        acc = acc.wrapping_add(CODES16[(h >> 24) as usize & (N16 - 1)]);
    }
    if idx < output.len() {
        output.set(idx, acc);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn enum256_table(input: &[u32], output: DisjointSlice<u32>) {
    let idx = global_idx_x() as usize;
    let i = idx;
    if i >= input.len() {
        return;
    }
    let mut h = input[i];
    let mut acc = 0u32;
    for _ in 0..ROUNDS {
        h = step(h);
        acc = acc.wrapping_add(OPS256[(h >> 24) as usize & (N256 - 1)] as u32);
    }
    if idx < output.len() {
        output.set(idx, acc);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn u32256_table(input: &[u32], output: DisjointSlice<u32>) {
    let idx = global_idx_x() as usize;
    let i = idx;
    if i >= input.len() {
        return;
    }
    let mut h = input[i];
    let mut acc = 0u32;
    for _ in 0..ROUNDS {
        h = step(h);
        acc = acc.wrapping_add(CODES256[(h >> 24) as usize & (N256 - 1)]);
    }
    if idx < output.len() {
        output.set(idx, acc);
    }
}

/// The same loop as `enum256_table`, read through the reference spelling
/// `const R: &[Op; 256] = &OPS` instead of the bare table.
#[unsafe(no_mangle)]
pub extern "C" fn enum256_ref_table(input: &[u32], output: DisjointSlice<u32>) {
    let idx = global_idx_x() as usize;
    let i = idx;
    if i >= input.len() {
        return;
    }
    let mut h = input[i];
    let mut acc = 0u32;
    for _ in 0..ROUNDS {
        h = step(h);
        acc = acc.wrapping_add(OPS256_REF[(h >> 24) as usize & (N256 - 1)] as u32);
    }
    if idx < output.len() {
        output.set(idx, acc);
    }
}
