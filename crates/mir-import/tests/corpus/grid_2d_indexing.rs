//! Two-dimensional launch geometry: `thread_idx_y`, `block_idx_y`, `block_dim_y`,
//! `grid_dim_x/y`, row-major indexing into a matrix and a transpose.
//@ local kernel::coords _0: (u32, u32)
//@ local kernel::transpose _1: &[u32]
//@ local kernel::transpose _4: gpu::DisjointSlice<'_, u32>
//@ local kernel::linear_ids _1: gpu::DisjointSlice<'_, u32>
//@ size gpu::DisjointSlice<'_, u32> = 16
//@ field gpu::DisjointSlice<'_, u32> .len @ 8
//@ debug kernel::transpose height => _3
use crate::gpu::*;

#[inline(never)]
pub fn coords() -> (u32, u32) {
    let x = block_idx_x() * block_dim_x() + thread_idx_x();
    let y = block_idx_y() * block_dim_y() + thread_idx_y();
    (x, y)
}

#[unsafe(no_mangle)]
pub extern "C" fn transpose(input: &[u32], width: u32, height: u32, out: DisjointSlice<u32>) {
    let (x, y) = coords();
    if x < width && y < height {
        let src = (y * width + x) as usize;
        let dst = (x * height + y) as usize;
        out.set(dst, input[src]);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn linear_ids(out: DisjointSlice<u32>) {
    let (x, y) = coords();
    let w = grid_dim_x() * block_dim_x();
    let h = grid_dim_y() * block_dim_y();
    let i = (y * w + x) as usize;
    if i < out.len() {
        out.set(i, (x << 16) | y | ((w * h) << 24));
    }
}
