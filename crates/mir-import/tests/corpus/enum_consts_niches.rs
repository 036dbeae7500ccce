//! Enum constants with and without niches: `Option<u32>` (tag), `Option<&u32>`
//! and `Option<NonZeroU32>` (niche), a C-like enum with explicit discriminants and a
//! data-carrying enum, read through reference constants.
//@ size kernel::Color = 2
//@ size kernel::Shape = 8
//@ size std::option::Option<u32> = 8
//@ size std::option::Option<&u32> = 8
//@ size std::option::Option<std::num::NonZero<u32>> = 4
//@ local kernel::OPT _0: &std::option::Option<u32>
//@ local kernel::OPT_NONE _0: std::option::Option<u32>
//@ local kernel::OPT_REF _0: &std::option::Option<&u32>
//@ local kernel::NZ _0: &std::option::Option<std::num::NonZero<u32>>
//@ local kernel::COLORS _0: &[kernel::Color; 3]
//@ local kernel::shape_value _1: &kernel::Shape
//@ body promoted kernel::SHAPES
use crate::gpu::*;
use core::num::NonZeroU32;

#[derive(Clone, Copy)]
#[repr(u16)]
pub enum Color { Red = 3, Green = 10, Blue = 0x100 }

#[derive(Clone, Copy)]
pub enum Shape { Dot, Line(u8), Rect { w: u16, h: u32 } }

pub const OPT: &Option<u32> = &Some(5);
pub const OPT_NONE: Option<u32> = None;
pub const OPT_REF: &Option<&u32> = &Some(&6);
pub const NZ: &Option<NonZeroU32> = &NonZeroU32::new(7);
pub const NZ_NONE: Option<NonZeroU32> = None;
pub const COLORS: &[Color; 3] = &[Color::Red, Color::Green, Color::Blue];
pub const SHAPES: &[Shape; 3] = &[Shape::Dot, Shape::Line(8), Shape::Rect { w: 2, h: 9 }];

#[inline(never)]
pub fn shape_value(s: &Shape) -> u32 {
    match *s {
        Shape::Dot => 1,
        Shape::Line(l) => l as u32,
        Shape::Rect { w, h } => w as u32 * h,
    }
}

#[inline(never)]
pub fn all() -> u32 {
    let mut s = OPT.unwrap_or(0) + OPT_NONE.unwrap_or(100);
    s += OPT_REF.map_or(0, |r| *r);
    s += NZ.map_or(0, |n| n.get()) + NZ_NONE.map_or(1000, |n| n.get());
    for c in COLORS {
        s += *c as u32;
    }
    for sh in SHAPES {
        s += shape_value(sh);
    }
    s
}

#[unsafe(no_mangle)]
pub extern "C" fn enum_consts_niches(out: DisjointSlice<u32>) {
    if thread_idx_x() == 0 {
        out.set(0, all());
    }
}
