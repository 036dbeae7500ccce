//! Typed views: reading one immutable global as a given type, at an offset.
//!
//! A global holds rustc's byte image. Lowering may want to read it as another
//! type (`&u32` into the payload of an `Option<u32>`); it describes that type
//! through the [`Layout`] trait and asks [`Interned::view`] whether the bytes
//! support it. A view never changes the global or its symbol, and checking one
//! view does not depend on any other, so the order in which views are asked
//! for never matters.
//!
//! A view at `offset` with layout `L` of global `G` is accepted only if, in
//! this order (the first broken rule is reported):
//!
//! 1. `L` is well formed: a power-of-two alignment, slots inside `L`'s size,
//!    scalars of 1 to 16 bytes ([`ViewError::BadLayout`]);
//! 2. `G` is immutable ([`ViewError::Mutable`]);
//! 3. the view fits: `offset + size <= G`'s size ([`ViewError::OutOfBounds`]);
//! 4. `L`'s alignment divides `offset` ([`ViewError::MisalignedOffset`]) and
//!    `G`'s alignment ([`ViewError::AlignAboveGlobal`]);
//! 5. every relocation that touches the view sits exactly at a pointer slot
//!    ([`ViewError::RelocationInScalar`] if it touches a scalar slot,
//!    [`ViewError::UnexpectedRelocation`] otherwise), and every pointer slot
//!    holds a relocation ([`ViewError::PointerWithoutRelocation`]);
//! 6. every byte of every scalar slot is initialized
//!    ([`ViewError::UninitScalar`]);
//! 7. every scalar's value is in its declared [`Validity`]
//!    ([`ViewError::InvalidValue`]).
//!
//! Offsets in errors are offsets in the global.

use std::borrow::Cow;

use crate::Mutability;
use crate::{Chunk, GlobalId, Interned};

/// The values a scalar may hold, as an unsigned little-endian integer of the
/// scalar's size (a signed tag `-1i8` is written `0xff`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Validity {
    /// Any value.
    Any,
    /// `start..=end`, wrapping around if `start > end` (as rustc's
    /// `WrappingRange`: `254..=1` means 254, 255, 0 and 1 for a `u8`).
    Range {
        /// The first valid value.
        start: u128,
        /// The last valid value.
        end: u128,
    },
    /// One of these values, as for an enum's tags.
    OneOf(Vec<u128>),
}

impl Validity {
    /// A `bool`: 0 or 1.
    pub const BOOL: Validity = Validity::Range { start: 0, end: 1 };

    /// Whether `value` is valid.
    pub fn contains(&self, value: u128) -> bool {
        match self {
            Validity::Any => true,
            Validity::Range { start, end } if start <= end => (*start..=*end).contains(&value),
            Validity::Range { start, end } => value >= *start || value <= *end,
            Validity::OneOf(values) => values.contains(&value),
        }
    }
}

/// A slot of a layout: a part of the type that holds a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// An integer, float, `bool`, `char` or enum tag.
    Scalar {
        /// Where it starts, from the start of the type.
        offset: u64,
        /// Its size in bytes, 1 to 16.
        size: u64,
        /// The values it may hold.
        validity: Validity,
    },
    /// A pointer, of the interner's pointer size.
    Pointer {
        /// Where it starts, from the start of the type.
        offset: u64,
    },
}

impl Slot {
    /// The slot's offset within its type.
    pub fn offset(&self) -> u64 {
        match self {
            Slot::Scalar { offset, .. } | Slot::Pointer { offset } => *offset,
        }
    }
}

/// The layout of a type, as a view needs it. Bytes that no slot covers are
/// padding: they may be uninitialized, and are not read.
pub trait Layout {
    /// The size in bytes.
    fn size(&self) -> u64;
    /// The alignment in bytes.
    fn align(&self) -> u64;
    /// The slots, in any order.
    fn slots(&self) -> Cow<'_, [Slot]>;
}

/// A simple owned [`Layout`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SimpleLayout {
    /// The size in bytes.
    pub size: u64,
    /// The alignment in bytes.
    pub align: u64,
    /// The slots.
    pub slots: Vec<Slot>,
}

impl SimpleLayout {
    /// A type of `size` bytes and alignment `align` with no slots yet.
    pub fn new(size: u64, align: u64) -> Self {
        SimpleLayout {
            size,
            align,
            slots: Vec::new(),
        }
    }

    /// A lone unsigned integer of `size` bytes, aligned to its size.
    pub fn int(size: u64) -> Self {
        Self::new(size, size).scalar(0, size, Validity::Any)
    }

    /// A lone `bool`.
    pub fn bool() -> Self {
        Self::new(1, 1).scalar(0, 1, Validity::BOOL)
    }

    /// A lone pointer of `pointer_size` bytes.
    pub fn pointer(pointer_size: u64) -> Self {
        Self::new(pointer_size, pointer_size).pointer_at(0)
    }

    /// The same layout with a scalar slot.
    pub fn scalar(mut self, offset: u64, size: u64, validity: Validity) -> Self {
        self.slots.push(Slot::Scalar {
            offset,
            size,
            validity,
        });
        self
    }

    /// The same layout with a pointer slot.
    pub fn pointer_at(mut self, offset: u64) -> Self {
        self.slots.push(Slot::Pointer { offset });
        self
    }
}

impl Layout for SimpleLayout {
    fn size(&self) -> u64 {
        self.size
    }
    fn align(&self) -> u64 {
        self.align
    }
    fn slots(&self) -> Cow<'_, [Slot]> {
        Cow::Borrowed(&self.slots)
    }
}

/// An accepted view: a global read at an offset with a given size. Its symbol
/// is the global's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct View {
    /// The global viewed.
    pub global: GlobalId,
    /// Where the view starts in the global.
    pub offset: u64,
    /// The view's size.
    pub size: u64,
}

/// Which rule a view broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViewRule {
    /// The layout itself is malformed.
    WellFormedLayout,
    /// Views are only of immutable globals.
    Immutable,
    /// The view fits inside the global at its offset.
    Fits,
    /// The view's alignment divides its offset and the global's alignment.
    Alignment,
    /// Pointer slots are exactly the relocations in range.
    PointerSlots,
    /// Scalar slots hold no relocation.
    ScalarNoRelocation,
    /// Scalar bytes are initialized.
    ScalarInit,
    /// Scalars are in their validity ranges.
    ScalarValidity,
}

/// Why a view was rejected: the rule and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// The layout is malformed: a non-power-of-two alignment, a slot outside
    /// the layout, or a scalar of 0 or more than 16 bytes.
    #[error("view at offset {offset}: malformed layout: {reason}")]
    BadLayout {
        /// The view's offset in the global.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The global is mutable.
    #[error("view at offset {offset}: the global is mutable; only immutable globals have views")]
    Mutable {
        /// The view's offset.
        offset: u64,
    },
    /// The view reaches past the end of the global.
    #[error(
        "view at offset {offset} of {size} bytes does not fit in a global of {global_size} bytes"
    )]
    OutOfBounds {
        /// The view's offset.
        offset: u64,
        /// The view's size.
        size: u64,
        /// The global's size.
        global_size: u64,
    },
    /// The view's alignment does not divide its offset.
    #[error("view at offset {offset}: its alignment {align} does not divide the offset")]
    MisalignedOffset {
        /// The view's offset.
        offset: u64,
        /// The view's alignment.
        align: u64,
    },
    /// The view's alignment does not divide the global's.
    #[error(
        "view at offset {offset}: its alignment {align} does not divide the global's alignment {global_align}"
    )]
    AlignAboveGlobal {
        /// The view's offset.
        offset: u64,
        /// The view's alignment.
        align: u64,
        /// The global's alignment.
        global_align: u64,
    },
    /// A pointer slot with no relocation at its offset.
    #[error("pointer slot at offset {offset} holds no relocation")]
    PointerWithoutRelocation {
        /// The slot's offset in the global.
        offset: u64,
    },
    /// A relocation in the view that is not at a pointer slot.
    #[error("relocation at offset {offset} is not at a pointer slot of the view")]
    UnexpectedRelocation {
        /// The relocation's offset in the global.
        offset: u64,
    },
    /// A scalar slot that holds (part of) a relocation.
    #[error("scalar slot at offset {offset} holds the relocation at offset {relocation}")]
    RelocationInScalar {
        /// The slot's offset in the global.
        offset: u64,
        /// The relocation's offset in the global.
        relocation: u64,
    },
    /// A scalar slot with an uninitialized byte.
    #[error("scalar slot at offset {offset} reads the uninitialized byte at offset {byte}")]
    UninitScalar {
        /// The slot's offset in the global.
        offset: u64,
        /// The first uninitialized byte.
        byte: u64,
    },
    /// A scalar whose value is outside its validity.
    #[error("scalar slot at offset {offset} holds {value:#x}, outside {validity:?}")]
    InvalidValue {
        /// The slot's offset in the global.
        offset: u64,
        /// The value read.
        value: u128,
        /// What was allowed.
        validity: Validity,
    },
}

impl ViewError {
    /// The rule that was broken.
    pub fn rule(&self) -> ViewRule {
        match self {
            ViewError::BadLayout { .. } => ViewRule::WellFormedLayout,
            ViewError::Mutable { .. } => ViewRule::Immutable,
            ViewError::OutOfBounds { .. } => ViewRule::Fits,
            ViewError::MisalignedOffset { .. } | ViewError::AlignAboveGlobal { .. } => {
                ViewRule::Alignment
            }
            ViewError::PointerWithoutRelocation { .. } | ViewError::UnexpectedRelocation { .. } => {
                ViewRule::PointerSlots
            }
            ViewError::RelocationInScalar { .. } => ViewRule::ScalarNoRelocation,
            ViewError::UninitScalar { .. } => ViewRule::ScalarInit,
            ViewError::InvalidValue { .. } => ViewRule::ScalarValidity,
        }
    }

    /// The offset in the global where the rule broke.
    pub fn offset(&self) -> u64 {
        match self {
            ViewError::BadLayout { offset, .. }
            | ViewError::Mutable { offset }
            | ViewError::OutOfBounds { offset, .. }
            | ViewError::MisalignedOffset { offset, .. }
            | ViewError::AlignAboveGlobal { offset, .. }
            | ViewError::PointerWithoutRelocation { offset }
            | ViewError::UnexpectedRelocation { offset }
            | ViewError::RelocationInScalar { offset, .. }
            | ViewError::UninitScalar { offset, .. }
            | ViewError::InvalidValue { offset, .. } => *offset,
        }
    }
}

impl<Id: Copy + Ord + std::fmt::Debug> Interned<'_, Id> {
    /// Checks a view of `global` at `offset` with `layout` (see the
    /// [module docs](crate::view) for the rules).
    ///
    /// # Errors
    /// The first broken rule, as a [`ViewError`].
    ///
    /// # Panics
    /// If `global` does not come from this result.
    pub fn view(
        &self,
        global: GlobalId,
        offset: u64,
        layout: &(impl Layout + ?Sized),
    ) -> Result<View, ViewError> {
        let g = self.global(global);
        let ps = self.pointer_size();
        let (size, align) = (layout.size(), layout.align());
        let mut slots = layout.slots().into_owned();
        slots.sort_by_key(Slot::offset);

        // 1. The layout.
        let bad = |reason: String| ViewError::BadLayout { offset, reason };
        if !align.is_power_of_two() {
            return Err(bad(format!("alignment {align} is not a power of two")));
        }
        for slot in &slots {
            let (at, len) = match slot {
                Slot::Scalar { offset, size, .. } => {
                    if !(1..=16).contains(size) {
                        return Err(bad(format!(
                            "scalar at {offset} has {size} bytes, not 1 to 16"
                        )));
                    }
                    (*offset, *size)
                }
                Slot::Pointer { offset } => (*offset, ps),
            };
            if at.checked_add(len).is_none_or(|end| end > size) {
                return Err(bad(format!(
                    "slot at {at} of {len} bytes is outside the layout's {size} bytes"
                )));
            }
        }
        // 2-4. The global, the bounds, the alignment.
        if g.mutability() == Mutability::Mutable {
            return Err(ViewError::Mutable { offset });
        }
        let end = match offset.checked_add(size) {
            Some(end) if end <= g.size() => end,
            _ => {
                return Err(ViewError::OutOfBounds {
                    offset,
                    size,
                    global_size: g.size(),
                });
            }
        };
        if !offset.is_multiple_of(align) {
            return Err(ViewError::MisalignedOffset { offset, align });
        }
        if !g.align().is_multiple_of(align) {
            return Err(ViewError::AlignAboveGlobal {
                offset,
                align,
                global_align: g.align(),
            });
        }
        let chunks = g.chunks_in(offset..end);

        // 5. Relocations against pointer and scalar slots.
        for chunk in chunks {
            let Chunk::Pointer(reloc) = chunk else {
                continue;
            };
            let at_pointer = slots
                .iter()
                .any(|s| matches!(s, Slot::Pointer { offset: o } if offset + o == reloc.offset));
            if at_pointer {
                continue;
            }
            let scalar = slots.iter().find_map(|s| match s {
                Slot::Scalar {
                    offset: o, size, ..
                } => {
                    let (a, b) = (offset + o, offset + o + size);
                    (a < reloc.offset + reloc.size && reloc.offset < b).then_some(a)
                }
                Slot::Pointer { .. } => None,
            });
            return Err(match scalar {
                Some(a) => ViewError::RelocationInScalar {
                    offset: a,
                    relocation: reloc.offset,
                },
                None => ViewError::UnexpectedRelocation {
                    offset: reloc.offset,
                },
            });
        }
        for slot in &slots {
            if let Slot::Pointer { offset: o } = slot {
                let at = offset + o;
                let found = chunks
                    .iter()
                    .any(|c| matches!(c, Chunk::Pointer(r) if r.offset == at));
                if !found {
                    return Err(ViewError::PointerWithoutRelocation { offset: at });
                }
            }
        }
        // 6. Scalars are initialized. No relocation touches them now.
        for slot in &slots {
            let Slot::Scalar {
                offset: o,
                size: len,
                ..
            } = slot
            else {
                continue;
            };
            let a = offset + o;
            if let Some(Chunk::Undef { offset: u, .. }) = g
                .chunks_in(a..a + len)
                .iter()
                .find(|c| matches!(c, Chunk::Undef { .. }))
            {
                return Err(ViewError::UninitScalar {
                    offset: a,
                    byte: a.max(*u),
                });
            }
        }
        // 7. Scalars are valid. Each lies inside one byte chunk: byte chunks
        // are maximal, so only undef or a pointer could split one.
        for slot in &slots {
            let Slot::Scalar {
                offset: o,
                size: len,
                validity,
            } = slot
            else {
                continue;
            };
            let (a, b) = (offset + o, offset + o + len);
            let value = match g.chunks_in(a..b) {
                [Chunk::Bytes { offset: c, bytes }] => bytes[(a - c) as usize..(b - c) as usize]
                    .iter()
                    .rev()
                    .fold(0u128, |v, &byte| (v << 8) | u128::from(byte)),
                _ => {
                    unreachable!("an initialized scalar without relocations lies in one byte chunk")
                }
            };
            if !validity.contains(value) {
                return Err(ViewError::InvalidValue {
                    offset: a,
                    value,
                    validity: validity.clone(),
                });
            }
        }
        Ok(View {
            global,
            offset,
            size,
        })
    }
}

#[cfg(test)]
mod tests;
