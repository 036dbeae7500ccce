//! Const-generic kernel bodies and a const-generic device helper:
//! `write_value::<VALUE>` stores `index + VALUE` through a raw pointer via
//! `write_element::<VALUE>`, instantiated for 4 and `Eight::VALUE` (8);
//! `write_same::<UNUSED>` ignores its constant and stores `index`, for 4
//! and 8.
//! Ported from NVlabs/cuda-oxide `crates/rustc-codegen-cuda/examples/const_generic`.
// SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
// SPDX-License-Identifier: Apache-2.0
use crate::gpu::*;

struct Eight;

impl Eight {
    const VALUE: usize = 8;
}

unsafe fn write_element<const VALUE: usize>(output: *mut u32, index: u32) {
    // SAFETY: the kernel's launch contract guarantees one valid element
    // for every launched thread.
    unsafe {
        output.add(index as usize).write(index + VALUE as u32);
    }
}

/// Upstream's const-generic kernel `write_value<VALUE>`.
#[inline(never)]
unsafe fn write_value<const VALUE: usize>(output: *mut u32) {
    let index = global_idx_x() as usize as u32;
    // SAFETY: inherited from this kernel's caller contract.
    unsafe { write_element::<VALUE>(output, index) }
}

/// The const is deliberately unused. The compiler must still retain two
/// separately named entry specializations for callers that choose 4 or 8.
#[inline(never)]
unsafe fn write_same<const UNUSED: usize>(output: *mut u32) {
    let index = global_idx_x() as usize;
    // SAFETY: inherited from this kernel's caller contract.
    unsafe { output.add(index).write(index as u32) }
}

/// `write_value::<4>`.
///
/// # Safety
/// `output` holds one `u32` per launched thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn write_value_4(output: *mut u32) {
    unsafe { write_value::<4>(output) }
}

/// `write_value::<{ Eight::VALUE }>`.
///
/// # Safety
/// `output` holds one `u32` per launched thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn write_value_8(output: *mut u32) {
    unsafe { write_value::<{ Eight::VALUE }>(output) }
}

/// `write_same::<4>`.
///
/// # Safety
/// `output` holds one `u32` per launched thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn write_same_4(output: *mut u32) {
    unsafe { write_same::<4>(output) }
}

/// `write_same::<8>`.
///
/// # Safety
/// `output` holds one `u32` per launched thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn write_same_8(output: *mut u32) {
    unsafe { write_same::<8>(output) }
}
