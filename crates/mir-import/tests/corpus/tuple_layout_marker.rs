//! Layout probes: statics with distinct markers per field, so the printed bytes
//! reveal rustc's layout of the tuple `(u8, u32, u16)` versus the tuple struct
//! `P(u8, u32, u16)` (they differ), plus a padded `#[repr(C)]` struct.
//@ local kernel::TUP _0: (u8, u32, u16)
//@ local kernel::TS _0: kernel::P
//@ local kernel::RC _0: kernel::C3
//@ local kernel::WIDE _0: (u8, u64, u8, u32)
//@ bytes kernel::TUP 0 = 22 22 22 22 11
//@ bytes kernel::TUP 6 = 33 33
//@ bytes kernel::TS 0 = 22 22 22 22 33 33 11
//@ bytes kernel::RC 0 = 11
//@ bytes kernel::RC 4 = 22 22 22 22 33 33
//@ bytes kernel::WIDE 0 = 02 02 02 02 02 02 02 02 01 03
//@ bytes kernel::WIDE 12 = 04 04 04 04
//@ size kernel::P = 8
//@ field kernel::P .0 @ 6
//@ size kernel::C3 = 12
//@ field kernel::C3 .c @ 8
//@ local kernel::tup _0: &(u8, u32, u16)
use crate::gpu::*;

pub struct P(pub u8, pub u32, pub u16);

#[repr(C)]
pub struct C3 {
    pub a: u8,
    pub b: u32,
    pub c: u16,
}

pub static TUP: (u8, u32, u16) = (0x11, 0x2222_2222, 0x3333);
pub static TS: P = P(0x11, 0x2222_2222, 0x3333);
pub static RC: C3 = C3 { a: 0x11, b: 0x2222_2222, c: 0x3333 };
pub static WIDE: (u8, u64, u8, u32) = (1, 0x0202_0202_0202_0202, 3, 0x0404_0404);

#[inline(never)]
pub fn tup() -> &'static (u8, u32, u16) {
    &TUP
}

#[inline(never)]
pub fn probe() -> u32 {
    let (t, ts, rc) = (tup(), &TS, &RC);
    t.0 as u32 + t.2 as u32 + ts.0 as u32 + ts.2 as u32 + rc.a as u32 + rc.c as u32 + t.1 + ts.1 + rc.b
}

#[inline(never)]
pub fn wide() -> u64 {
    let w = &raw const WIDE;
    unsafe { (*w).1 ^ (*w).3 as u64 ^ ((*w).0 + (*w).2) as u64 }
}

#[unsafe(no_mangle)]
pub extern "C" fn tuple_layout_marker(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, probe());
        out.set(1, wide() as u32);
    }
}
