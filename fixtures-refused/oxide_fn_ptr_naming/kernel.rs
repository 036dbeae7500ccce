//! Naming a function-pointer type inside a kernel: coercing the named
//! functions `inc` and `dec` to `fn(u32) -> u32` (a function item's
//! zero-sized type, then the pointer it coerces to) and comparing the
//! pointers with `core::ptr::fn_addr_eq`. Nothing is called through them.
//! Ported from NVlabs/cuda-oxide `crates/rustc-codegen-cuda/examples/fn_ptr_naming`.
//! SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
//! SPDX-License-Identifier: Apache-2.0
use crate::gpu::*;

fn inc(x: u32) -> u32 {
    x.wrapping_add(1)
}

fn dec(x: u32) -> u32 {
    x.wrapping_sub(1)
}

#[unsafe(no_mangle)]
pub extern "C" fn fn_ptr_eq(out: DisjointSlice<u32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        // Naming the fn-pointer type is what used to break import.
        let f: fn(u32) -> u32 = inc;
        let g: fn(u32) -> u32 = dec;
        // Same fn compares equal; different fns compare unequal.
        // (Rust permits, but does not promise, distinct fn
        // addresses, so only the == case is guaranteed language-wise.)
        let same = core::ptr::fn_addr_eq(f, f) as u32;
        let diff = (!core::ptr::fn_addr_eq(f, g)) as u32;
        out.set(i, same & diff);
    }
}
