//! Two typed views of one constant: `&Option<u32>` (whole) then `&u32` (payload).
use crate::gpu::*;

pub const OPT: &Option<u32> = &Some(21);

#[inline(never)]
pub fn whole() -> &'static Option<u32> {
    OPT
}

#[inline(never)]
pub fn payload() -> &'static u32 {
    OPT.as_ref().unwrap_or(&0)
}

#[unsafe(no_mangle)]
pub extern "C" fn views(out: DisjointSlice<u32>) {
    out.set(0, whole().unwrap_or(0) + *payload());
}
