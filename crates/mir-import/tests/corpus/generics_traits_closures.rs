//! Monomorphised generics, trait static dispatch with associated consts, and
//! closures captured by reference and by move, passed to generic helpers.
//@ size kernel::AddN = 4
//@ field kernel::MulN .0 @ 0
//@ local kernel::twice _1: &O
//@ local kernel::fold_with _2: F
//@ body promoted kernel::generics_traits_closures
//@ local kernel::generics_traits_closures::{closure#1} _2: u32
use crate::gpu::*;

pub trait Op {
    const ID: u32;
    fn apply(&self, x: u32) -> u32;
}

pub struct AddN(pub u32);
pub struct MulN(pub u32);

impl Op for AddN {
    const ID: u32 = 1;
    fn apply(&self, x: u32) -> u32 { x + self.0 }
}
impl Op for MulN {
    const ID: u32 = 2;
    fn apply(&self, x: u32) -> u32 { x * self.0 }
}

#[inline(never)]
pub fn twice<O: Op>(op: &O, x: u32) -> u32 {
    op.apply(op.apply(x)) + O::ID
}

#[inline(never)]
pub fn fold_with<F: Fn(u32, u32) -> u32>(n: u32, f: F) -> u32 {
    (0..n).fold(0, f)
}

#[unsafe(no_mangle)]
pub extern "C" fn generics_traits_closures(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let bias = t * 3;
        let by_ref = |acc: u32, i: u32| acc + i + bias;
        let scale = 2u32;
        let by_move = move |acc: u32, i: u32| acc ^ (i * scale);
        let v = twice(&AddN(5), t) + twice(&MulN(3), t) + fold_with(t, by_ref) + fold_with(4, by_move);
        out.set(t as usize, v);
    }
}
