//! Compare-exchanges with every interesting (success, failure) pair, the
//! generic-width forms, and `mem::swap` of a scalar and of an aggregate.
use crate::gpu::*;

#[inline(never)]
pub fn acq_relaxed(a: &AtomicU32) -> bool {
    a.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

#[inline(never)]
pub fn rel_acq(a: &AtomicI32) -> i32 {
    match a.compare_exchange(3, 4, Ordering::Release, Ordering::Acquire) {
        Ok(v) | Err(v) => v,
    }
}

#[inline(never)]
pub fn relaxed_seqcst_weak(a: &AtomicU64) -> u64 {
    a.compare_exchange_weak(5, 6, Ordering::Relaxed, Ordering::SeqCst)
        .unwrap_or(7)
}

#[inline(never)]
pub fn swap_scalar(a: &mut u64, b: &mut u64) {
    core::mem::swap(a, b);
}

#[inline(never)]
pub fn swap_triple(a: &mut [u32; 3], b: &mut [u32; 3]) {
    core::mem::swap(a, b);
}

#[unsafe(no_mangle)]
pub extern "C" fn cas_orderings(
    a: &AtomicU32,
    b: &AtomicI32,
    c: &AtomicU64,
    out: DisjointSlice<u64>,
) {
    let mut x = [1u32, 2, 3];
    let mut y = [4u32, 5, 6];
    swap_triple(&mut x, &mut y);
    let mut p = out.get(0);
    let mut q = out.get(1);
    swap_scalar(&mut p, &mut q);
    out.set(
        0,
        acq_relaxed(a) as u64 + rel_acq(b) as u64 + relaxed_seqcst_weak(c) + p + q,
    );
    out.set(1, (x[0] + y[2]) as u64);
}
