//! A `Barrier` static and a `SharedArray<u32, 32>` static in shared memory:
//! two phases separated by `BAR.wait()`, then a neighbour exchange, with the
//! barrier also waited inside an `#[inline(never)]` helper.
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
