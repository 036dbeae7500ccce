//! A `SharedArray<f32, 66>` static (addrspace(3)) used as a tile for a 1-D
//! 3-point stencil, with halo loads and `sync_threads()` between phases.
//@ local kernel::TILE _0: gpu::SharedArray<f32, 66>
//@ size gpu::SharedArray<f32, 66> = 264
//@ size std::mem::MaybeUninit<[f32; 66]> = 264
//@ local kernel::load_tile _1: &[f32]
//@ local kernel::load_tile _3: usize
//@ local kernel::shared_array_stencil _2: gpu::DisjointSlice<'_, f32>
use crate::gpu::*;

pub static TILE: SharedArray<f32, 66> = SharedArray::new();

#[inline(never)]
pub fn load_tile(input: &[f32], g: usize, t: usize) {
    let n = input.len();
    unsafe {
        TILE.write(t + 1, if g < n { input[g] } else { 0.0 });
        if t == 0 {
            TILE.write(0, if g > 0 && g - 1 < n { input[g - 1] } else { 0.0 });
        }
        if t == 63 {
            TILE.write(65, if g + 1 < n { input[g + 1] } else { 0.0 });
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn shared_array_stencil(input: &[f32], out: DisjointSlice<f32>) {
    let t = thread_idx_x() as usize;
    let g = global_idx_x() as usize;
    if t < 64 {
        load_tile(input, g, t);
    }
    sync_threads();
    if t < 64 && g < out.len() {
        let v = unsafe { 0.25 * TILE.read(t) + 0.5 * TILE.read(t + 1) + 0.25 * TILE.read(t + 2) };
        out.set(g, v);
    }
}
