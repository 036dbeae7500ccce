//! Typed views of one allocation: `&Option<u32>` and a `&u32` into its payload,
//! both returned from helpers and compared for pointer identity.
//@ local kernel::OPT _0: &std::option::Option<u32>
//@ local kernel::whole _0: &std::option::Option<u32>
//@ local kernel::payload _0: &u32
//@ local kernel::payload_via_as_ref _0: &u32
//@ size std::option::Option<u32> = 8
//@ body promoted kernel::payload
//@ body promoted kernel::payload_via_as_ref
use crate::gpu::*;

pub const OPT: &Option<u32> = &Some(23);

#[inline(never)]
pub fn whole() -> &'static Option<u32> {
    OPT
}

#[inline(never)]
pub fn payload() -> &'static u32 {
    match OPT {
        Some(v) => v,
        None => &0,
    }
}

#[inline(never)]
pub fn payload_via_as_ref() -> &'static u32 {
    OPT.as_ref().unwrap_or(&1)
}

#[unsafe(no_mangle)]
pub extern "C" fn typed_view_option(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, whole().unwrap_or(0));
        out.set(1, *payload());
        out.set(2, core::ptr::eq(payload(), payload_via_as_ref()) as u32);
        let base = whole() as *const Option<u32> as usize;
        out.set(3, (payload() as *const u32 as usize - base) as u32);
    }
}
