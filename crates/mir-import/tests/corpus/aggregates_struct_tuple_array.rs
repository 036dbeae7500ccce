//! Aggregates: struct, tuple-struct, tuple and array construction
//! (`Rvalue::Aggregate`), field projections, nested aggregates, copies and
//! moves, and returning aggregates by value from `#[inline(never)]` helpers.
//@ local kernel::make _0: kernel::Particle
//@ local kernel::make _1: u32
//@ local kernel::step _2: f32
//@ local kernel::swap_pair _0: (u64, u32)
//@ local kernel::swap_pair _1: (u32, u64)
//@ local kernel::arrays _0: [u32; 4]
//@ size kernel::Vec3 = 12
//@ field kernel::Vec3 .z @ 8
//@ size kernel::Particle = 20
//@ field kernel::Particle .1 @ 12
use crate::gpu::*;

#[derive(Clone, Copy)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(Clone, Copy)]
pub struct Particle(pub Vec3, pub u32, pub (u8, bool));

#[inline(never)]
pub fn make(i: u32) -> Particle {
    let p = Vec3 { x: i as f32, y: 2.0 * i as f32, z: -1.0 };
    Particle(p, i * 10, (i as u8, i % 2 == 0))
}

#[inline(never)]
pub fn step(mut p: Particle, dt: f32) -> Particle {
    p.0.x += dt;
    p.0 = Vec3 { z: p.0.z * 2.0, ..p.0 };
    p.1 += 1;
    p
}

#[inline(never)]
pub fn swap_pair(t: (u32, u64)) -> (u64, u32) {
    (t.1, t.0)
}

#[inline(never)]
pub fn arrays(i: u32) -> [u32; 4] {
    let a = [i, i + 1, i + 2, i + 3];
    let [w, x, y, z] = a;
    [z, y, x, w]
}

#[unsafe(no_mangle)]
pub extern "C" fn aggregates_struct_tuple_array(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let p = step(make(t), 0.5);
        let (a, b) = swap_pair((t, 7));
        let arr = arrays(t);
        let v = p.0.x as u32 + p.0.z as i32 as u32 + p.1 + p.2.0 as u32 + p.2.1 as u32;
        out.set(t as usize, v + a as u32 + b + arr[0]);
    }
}
