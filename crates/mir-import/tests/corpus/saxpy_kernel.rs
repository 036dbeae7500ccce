//! saxpy, `y[i] = a * x[i] + y[i]`, with a `DisjointSlice<f32>` output view and a
//! grid-stride loop variant; plus an f64 daxpy reading two input slices.
//@ local kernel::saxpy _1: f32
//@ local kernel::saxpy _2: &[f32]
//@ local kernel::saxpy _3: gpu::DisjointSlice<'_, f32>
//@ local kernel::axpy _0: f64
//@ local kernel::daxpy _4: gpu::DisjointSlice<'_, f64>
//@ size gpu::DisjointSlice<'_, f32> = 16
//@ size gpu::DisjointSlice<'_, f64> = 16
use crate::gpu::*;

#[unsafe(no_mangle)]
pub extern "C" fn saxpy(a: f32, x: &[f32], y: DisjointSlice<f32>) {
    let i = global_idx_x() as usize;
    if i < x.len() && i < y.len() {
        y.set(i, a * x[i] + y.get(i));
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn saxpy_grid_stride(a: f32, x: &[f32], y: DisjointSlice<f32>) {
    let stride = (block_dim_x() * grid_dim_x()) as usize;
    let mut i = global_idx_x() as usize;
    while i < x.len().min(y.len()) {
        y.set(i, a.mul_add(x[i], y.get(i)));
        i += stride;
    }
}

#[inline(never)]
pub fn axpy(a: f64, x: f64, y: f64) -> f64 {
    a * x + y
}

#[unsafe(no_mangle)]
pub extern "C" fn daxpy(a: f64, x: &[f64], y: &[f64], out: DisjointSlice<f64>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        out.set(i, axpy(a, x[i], y[i]));
    }
}
