//! Kernel parameters that are references and slices: `&u32`, `&[u32]`,
//! `&[u8]`, `&(u32, u32)`, a `#[repr(C)]` struct by reference, scalars of
//! several widths, and a `DisjointSlice<u32>` output.
//@ size kernel::Params = 16
//@ field kernel::Params .scale @ 0
//@ field kernel::Params .offset @ 8
//@ local kernel::combine _1: &kernel::Params
//@ local kernel::kernel_params_refs _3: &[u8]
//@ local kernel::kernel_params_refs _5: &(u32, u32)
//@ local kernel::kernel_params_refs _7: i16
//@ local kernel::kernel_params_refs _8: gpu::DisjointSlice<'_, u32>
use crate::gpu::*;

#[repr(C)]
pub struct Params {
    pub scale: u32,
    pub offset: i64,
}

#[inline(never)]
pub fn combine(p: &Params, base: &u32, v: u32) -> u32 {
    (v * p.scale).wrapping_add(p.offset as u32).wrapping_add(*base)
}

#[unsafe(no_mangle)]
pub extern "C" fn kernel_params_refs(
    base: &u32,
    values: &[u32],
    tags: &[u8],
    params: &Params,
    pair: &(u32, u32),
    flag: bool,
    small: i16,
    out: DisjointSlice<u32>,
) {
    let i = global_idx_x() as usize;
    if i < out.len() && i < values.len() {
        let tag = tags.get(i).copied().unwrap_or(0) as u32;
        let extra = if flag { pair.0 } else { pair.1 };
        out.set(i, combine(params, base, values[i]) + tag + extra + small as u32);
    }
}
