//! Run-time values of the virtual device, and tagged pointers.

use std::sync::Arc;

use device_ir::AddressSpace;

/// An allocation of the virtual device's memory. Ids are never reused, so an id
/// doubles as the allocation's generation: a pointer to a dead stack slot keeps
/// naming that slot, never whatever replaced it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct AllocId(pub u32);

/// A pointer: the address space of its static type, the allocation it was
/// derived from (`None` for null or an integer that named no allocation) and a
/// wrapping byte offset. The allocation remembers its real space, so a generic
/// pointer knows whether it points at global, shared, local or constant memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ptr {
    pub space: AddressSpace,
    pub target: Option<AllocId>,
    pub offset: u64,
}

/// Each allocation owns a 4 GiB window of a fake address range: `ptrtoint` gives
/// `(id + 1) << 32 | offset`, and `inttoptr` decodes it back.
pub(crate) const WINDOW_BITS: u32 = 32;

impl Ptr {
    /// The null pointer of `space`.
    pub fn null(space: AddressSpace) -> Self {
        Ptr {
            space,
            target: None,
            offset: 0,
        }
    }

    /// The address `ptrtoint` yields.
    pub fn addr(&self) -> u64 {
        match self.target {
            None => self.offset,
            Some(id) => ((u64::from(id.0) + 1) << WINDOW_BITS).wrapping_add(self.offset),
        }
    }
}

/// A value. Integers keep their width and hold the bit pattern in the low bits;
/// floats hold IEEE bits; aggregates hold their fields or elements. `Undef` is an
/// undefined value: it may be copied (stored, passed, selected), but any other use
/// is an error, never a silent zero.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Int {
        bits: u16,
        v: u128,
    },
    F32(u32),
    F64(u64),
    Ptr(Ptr),
    Agg(Vec<Val>),
    Undef,
    /// An integer loaded from a stack slot whose bytes were not all written:
    /// a by-value copy of a struct's padding, or of an enum whose variant
    /// leaves bytes unwritten, which a GPU copies harmlessly. `v` holds the
    /// written bytes (the others zero), `defined` one bit per byte. Like
    /// `Undef` it may be copied, and stored into a stack slot, whose bytes
    /// then stay unwritten where it had none; any other use, or a store to
    /// other memory, is an error naming `origin` (the first unwritten byte
    /// and the slot).
    Partial {
        bits: u16,
        v: u128,
        defined: u16,
        origin: Arc<str>,
    },
}

/// The mask of the low `bits` bits.
pub(crate) fn mask(bits: u16) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// The low `bits` bits of `v`, sign-extended.
pub(crate) fn sext(v: u128, bits: u16) -> i128 {
    if bits >= 128 || bits == 0 {
        v as i128
    } else {
        let shift = 128 - u32::from(bits);
        ((v << shift) as i128) >> shift
    }
}

impl Val {
    /// An integer of `bits` bits, truncating `v`.
    pub fn int(bits: u16, v: u128) -> Self {
        Val::Int {
            bits,
            v: v & mask(bits),
        }
    }

    /// An `i1`.
    pub fn bool(b: bool) -> Self {
        Val::Int {
            bits: 1,
            v: u128::from(b),
        }
    }

    /// A short description for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Int { .. } => "an integer",
            Val::F32(_) | Val::F64(_) => "a float",
            Val::Ptr(_) => "a pointer",
            Val::Agg(_) => "an aggregate",
            Val::Undef => "an undefined value",
            Val::Partial { .. } => "a partly undefined value",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_extension_and_masks() {
        assert_eq!(sext(0xff, 8), -1);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(sext(1, 1), -1);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(Val::int(8, 0x1ff), Val::Int { bits: 8, v: 0xff });
        let p = Ptr {
            space: AddressSpace::Generic,
            target: Some(AllocId(0)),
            offset: 4,
        };
        assert_eq!(p.addr(), (1 << 32) + 4);
    }
}
