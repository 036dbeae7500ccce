//! A `Barrier` static and a `SharedArray<u32, 32>` static in shared memory:
//! two phases separated by `BAR.wait()`, then a neighbour exchange, with the
//! barrier also waited inside an `#[inline(never)]` helper.
//@ local kernel::BAR _0: gpu::Barrier
//@ local kernel::BUF _0: gpu::SharedArray<u32, 32>
//@ bytes kernel::BAR 0 = 00 00 00 00 00 00 00 00
//@ size gpu::Barrier = 8
//@ field gpu::Barrier .word @ 0
//@ size gpu::SharedArray<u32, 32> = 128
//@ local kernel::phase _1: usize
//@ local kernel::phase _0: u32
use crate::gpu::*;

pub static BAR: Barrier = Barrier::new();
pub static BUF: SharedArray<u32, 32> = SharedArray::new();

#[inline(never)]
pub fn phase(t: usize, v: u32) -> u32 {
    unsafe { BUF.write(t, v) };
    BAR.wait();
    let n = BUF.len();
    let left = unsafe { BUF.read((t + n - 1) % n) };
    BAR.wait();
    left
}

#[unsafe(no_mangle)]
pub extern "C" fn barrier_static(out: DisjointSlice<u32>) {
    let t = thread_idx_x() as usize;
    let a = phase(t, t as u32 * 2);
    let b = phase(t, a + 1);
    if t < out.len() {
        out.set(t, a * 100 + b);
    }
}
