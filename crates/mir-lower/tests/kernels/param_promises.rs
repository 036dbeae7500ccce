//! Kernel parameters of every kind, for the `noalias readonly` rule: only
//! shared references to memory without interior mutability get it.
use crate::gpu::*;
use core::sync::atomic::{AtomicU32, Ordering};

/// A helper's `&[f32]` gets nothing: its caller may hold other pointers to
/// the same memory.
#[inline(never)]
pub fn first(xs: &[f32]) -> f32 {
    if xs.is_empty() { 0.0 } else { xs[0] }
}

#[unsafe(no_mangle)]
pub extern "C" fn promises(
    floats: &[f32],
    pairs: &[(u32, f32)],
    words: &[[u8; 4]],
    one: &u32,
    counters: &[AtomicU32],
    counter: &AtomicU32,
    raw: *const f32,
    out: DisjointSlice<f32>,
) {
    let extra = unsafe { *raw };
    counter.fetch_add(*one, Ordering::Relaxed);
    if !counters.is_empty() {
        counters[0].fetch_add(1, Ordering::Relaxed);
    }
    let w = if words.is_empty() { 0 } else { words[0][0] };
    let p = if pairs.is_empty() { 0.0 } else { pairs[0].1 };
    out.set(0, first(floats) + p + w as f32 + extra);
}
