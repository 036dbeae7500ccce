//! A kernel that delegates to a device helper: `vecadd_with_helper`
//! forwards its slices and output view to `vecadd_device`, which stores
//! `a[i] + b[i] + __rust_alloc(0.0)` (a user function that merely shares the
//! allocator's symbol name). Two monomorphisations of an `#[inline(never)]`
//! generic helper nested in the kernel guard the call.
//! Ported from NVlabs/cuda-oxide `crates/rustc-codegen-cuda/examples/helper_fn`.
// SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
// SPDX-License-Identifier: Apache-2.0
use crate::gpu::*;

// =============================================================================
// DEVICE FUNCTION - Helper that gets inlined/linked into the kernel
// =============================================================================

/// Device helper function for vector addition.
/// Demonstrates the #[device] attribute for GPU-only functions.
pub fn vecadd_device(a: &[f32], b: &[f32], c: DisjointSlice<f32>) {
    let idx = global_idx_x() as usize;
    let idx_raw = idx;

    if idx < c.len() {
        let i = idx_raw;
        c.set(idx, a[i] + b[i] + __rust_alloc(0.0));
    }
}

/// Name-collision probe for the heap-allocation guard (issue #108).
///
/// `__rust_alloc` is NOT a reserved name: a user may define their own
/// function with it, and it must compile for the device like any other
/// helper. The real allocator entry points are recognized by sysroot
/// origin, never by name alone. This helper adds 0.0, so the example's
/// expected results are unchanged.
#[allow(non_snake_case)]
pub fn __rust_alloc(x: f32) -> f32 {
    x
}

// =============================================================================
// KERNEL - Entry point that calls the device function
// =============================================================================

/// Kernel that delegates to the device helper function.
/// This tests the full pipeline: kernel -> device function -> PTX
#[unsafe(no_mangle)]
pub extern "C" fn vecadd_with_helper(a: &[f32], b: &[f32], c: DisjointSlice<f32>) {
    // A named generic helper nested inside a kernel carries the kernel's
    // generated symbol in an earlier def-path segment. It must remain a
    // normal device callee under its canonical mangled symbol, not become
    // a second `_TID_` kernel entry.
    #[inline(never)]
    fn nested_identity<T: Copy>(value: T) -> T {
        value
    }

    // Keep two concrete monomorphizations reachable without changing the
    // example's result. `inline(never)` makes them visible to the device
    // collector and this guard is always false at runtime.
    if nested_identity::<f32>(0.0) != 0.0 || nested_identity::<u32>(0) != 0 {
        return;
    }

    // Call the device function by its original name
    vecadd_device(a, b, c);
}
