//! A tuple struct whose field is an array: rustc prints the array length's
//! anonymous constant under the field's index, `kernel::Pair::0::{constant#0}`,
//! a path segment that is a number.
//@ body const kernel::Pair::0::{constant#0}
//@ local kernel::sum _1: &kernel::Pair
use crate::gpu::*;

pub struct Pair(pub [f32; 2]);

#[inline(never)]
pub fn sum(p: &Pair) -> f32 {
    p.0[0] + p.0[1]
}

#[unsafe(no_mangle)]
pub extern "C" fn tuple_struct_array_field(out: DisjointSlice<f32>) {
    let p = Pair([1.5, 2.5]);
    if !out.is_empty() {
        out.set(0, sum(&p));
    }
}
