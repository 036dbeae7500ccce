//! Statics pointing to statics: `static P: &u32 = &S2`, a chain of two, and a
//! static array of references to statics (relocations with a static target).
//@ local kernel::P _0: &u32
//@ local kernel::PP _0: &&u32
//@ local kernel::REFS _0: [&u32; 2]
//@ bytes kernel::S2 0 = 2a 00 00 00
//@ bytes kernel::S3 0 = 01 00 00 00 02 00 00 00 03 00 00 00
//@ reloc kernel::P 0 -> kernel::S2
//@ reloc kernel::PP 0 -> kernel::P
//@ reloc kernel::INTO 0 -> kernel::S3
//@ bytes kernel::INTO 0 = 08 00 00 00 00 00 00 00
//@ reloc kernel::REFS 0 -> kernel::S2
//@ reloc kernel::REFS 8 -> kernel::S3
use crate::gpu::*;

pub static S2: u32 = 42;
pub static S3: [u32; 3] = [1, 2, 3];
pub static P: &u32 = &S2;
pub static PP: &&u32 = &P;
pub static INTO: &u32 = &S3[2];
pub static REFS: [&u32; 2] = [&S2, &S3[0]];

#[inline(never)]
pub fn via_p() -> u32 {
    *P + **PP
}

#[inline(never)]
pub fn into_s3() -> &'static u32 {
    INTO
}

#[inline(never)]
pub fn same() -> u32 {
    (core::ptr::eq(P, &S2) as u32) + (core::ptr::eq(REFS[1], &S3[0]) as u32)
}

#[unsafe(no_mangle)]
pub extern "C" fn static_to_static(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, via_p());
        out.set(1, *into_s3());
        out.set(2, same());
        out.set(3, *REFS[0]);
    }
}
