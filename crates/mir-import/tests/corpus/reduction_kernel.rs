//! A shared-memory tree reduction: each block of 256 threads sums its inputs
//! in a `SharedArray<u32, 256>` with halving strides and `sync_threads()`, then
//! thread 0 writes the block sum and adds it to a global atomic total.
//@ local kernel::PARTIAL _0: gpu::SharedArray<u32, 256>
//@ size gpu::SharedArray<u32, 256> = 1024
//@ size std::mem::MaybeUninit<[u32; 256]> = 1024
//@ local kernel::block_sum _1: usize
//@ local kernel::reduce_sum _1: &[u32]
//@ local kernel::reduce_sum _2: gpu::DisjointSlice<'_, u32>
//@ local kernel::reduce_sum _3: &std::sync::atomic::AtomicU32
use crate::gpu::*;

pub static PARTIAL: SharedArray<u32, 256> = SharedArray::new();

#[inline(never)]
pub fn block_sum(t: usize, v: u32) -> u32 {
    unsafe { PARTIAL.write(t, v) };
    sync_threads();
    let mut stride = block_dim_x() as usize / 2;
    while stride > 0 {
        if t < stride {
            unsafe { PARTIAL.write(t, PARTIAL.read(t) + PARTIAL.read(t + stride)) };
        }
        sync_threads();
        stride /= 2;
    }
    unsafe { PARTIAL.read(0) }
}

#[unsafe(no_mangle)]
pub extern "C" fn reduce_sum(input: &[u32], block_sums: DisjointSlice<u32>, total: &AtomicU32) {
    let t = thread_idx_x() as usize;
    let g = global_idx_x() as usize;
    let v = if g < input.len() { input[g] } else { 0 };
    let s = block_sum(t, v);
    if t == 0 {
        block_sums.set(block_idx_x() as usize, s);
        total.fetch_add(s, Ordering::Relaxed);
    }
}
