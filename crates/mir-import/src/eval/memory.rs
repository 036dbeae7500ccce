//! The evaluator's memory: allocations of bytes, an init mask and relocations.
//!
//! This mirrors rustc's own `Allocation`: the bytes under a relocation hold the
//! pointer's addend (little-endian), and the relocation names the target. So an
//! evaluated allocation can be compared with rustc's printed one byte for byte.

use std::collections::BTreeMap;

use cranelift_entity::{PrimaryMap, entity_impl};
use serde::Serialize;

use super::layout::PTR_SIZE;

/// An evaluated allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct EvalAlloc(u32);
entity_impl!(EvalAlloc, "ealloc");

/// What a stored pointer points to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Target {
    /// Another evaluated allocation.
    Alloc(EvalAlloc),
    /// A named static, by def path.
    Static(String),
    /// A function's entry, by its path as printed (`kernel::square`,
    /// `kernel::id::<u32>`): a `fn` pointer stored in a constant.
    Function(crate::model::Path),
}

/// A pointer stored at some offset: target plus addend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reloc {
    /// What it points to.
    pub target: Target,
    /// The byte offset into the target.
    pub addend: u64,
}

/// One allocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Alloc {
    /// The bytes (a relocation's bytes hold its addend).
    pub bytes: Vec<u8>,
    /// Which bytes are initialized.
    pub init: Vec<bool>,
    /// Pointer-sized relocations by offset.
    pub relocs: BTreeMap<u64, Reloc>,
    /// Alignment in bytes.
    pub align: u64,
    /// Whether the program may write it (memory behind `&mut` in a `static mut`).
    pub mutable: bool,
}

impl Alloc {
    /// An uninitialized allocation.
    pub fn uninit(size: u64, align: u64) -> Alloc {
        Alloc {
            bytes: vec![0; size as usize],
            init: vec![false; size as usize],
            relocs: BTreeMap::new(),
            align,
            mutable: false,
        }
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// Why an access to the evaluator's memory failed. Each variant is a fault
/// that rustc's own interpreter would report as undefined behaviour or an
/// unsupported operation during const evaluation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// The access leaves the allocation.
    #[error("access of {len} bytes at offset {offset} is outside {alloc} ({size} bytes)")]
    OutOfBounds {
        /// The allocation.
        alloc: EvalAlloc,
        /// The access's offset.
        offset: u64,
        /// The access's length.
        len: u64,
        /// The allocation's size.
        size: u64,
    },
    /// The access covers only part of a stored pointer.
    #[error("read at {offset}+{len} splits the pointer at {pointer_at}")]
    SplitsPointer {
        /// The access's offset.
        offset: u64,
        /// The access's length.
        len: u64,
        /// The offset of the pointer it splits.
        pointer_at: u64,
    },
    /// Uninitialized bytes read as an integer.
    #[error("read of uninitialized bytes as an integer")]
    UninitAsInt,
    /// Pointer bytes read as an integer (their address is not known).
    #[error("pointer bytes read as an integer")]
    PointerAsInt,
    /// A dereference of initialized bytes that hold no pointer.
    #[error("dereference of an integer (not a pointer into an allocation)")]
    DerefInteger,
    /// A dereference of uninitialized bytes.
    #[error("dereference of an uninitialized pointer")]
    DerefUninit,
}

/// The result of a memory access.
pub type MemResult<T> = Result<T, MemError>;

/// All allocations made while evaluating one crate.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Memory {
    /// The allocations.
    pub allocs: PrimaryMap<EvalAlloc, Alloc>,
    /// The vtables made (`eval::vtables`), by concrete type and principal
    /// trait.
    #[serde(skip)]
    pub vtables: BTreeMap<(crate::model::Ty, String), EvalAlloc>,
}

/// A value read from memory: bytes, init mask and relocations (offsets relative
/// to the value's start).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bytes {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The init mask.
    pub init: Vec<bool>,
    /// Relocations inside the value.
    pub relocs: BTreeMap<u64, Reloc>,
}

impl Bytes {
    /// A fully initialized value of plain bytes.
    pub fn plain(bytes: Vec<u8>) -> Bytes {
        let init = vec![true; bytes.len()];
        Bytes {
            bytes,
            init,
            relocs: BTreeMap::new(),
        }
    }

    /// A thin pointer.
    pub fn pointer(target: Target, addend: u64) -> Bytes {
        let mut b = Bytes::plain(addend.to_le_bytes().to_vec());
        b.relocs.insert(0, Reloc { target, addend });
        b
    }

    /// Reads it as an unsigned integer (little-endian). Fails on uninitialized
    /// bytes or on pointer bytes.
    pub fn to_uint(&self) -> MemResult<u128> {
        if self.init.iter().any(|i| !i) {
            return Err(MemError::UninitAsInt);
        }
        if !self.relocs.is_empty() {
            return Err(MemError::PointerAsInt);
        }
        let mut v = 0u128;
        for (i, b) in self.bytes.iter().enumerate().take(16) {
            v |= u128::from(*b) << (8 * i);
        }
        Ok(v)
    }
}

impl Memory {
    /// Makes a new allocation.
    pub fn alloc(&mut self, size: u64, align: u64) -> EvalAlloc {
        self.allocs.push(Alloc::uninit(size, align))
    }

    /// Frees `a`'s bytes (a call frame's local once the call returns): it
    /// stays an allocation of 0 bytes, so any later access is out of bounds.
    pub fn free(&mut self, a: EvalAlloc) {
        let align = self.allocs[a].align;
        self.allocs[a] = Alloc::uninit(0, align);
    }

    fn check(&self, a: EvalAlloc, offset: u64, len: u64) -> MemResult<&Alloc> {
        let alloc = &self.allocs[a];
        if offset.checked_add(len).is_none_or(|end| end > alloc.size()) {
            return Err(MemError::OutOfBounds {
                alloc: a,
                offset,
                len,
                size: alloc.size(),
            });
        }
        Ok(alloc)
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&self, a: EvalAlloc, offset: u64, len: u64) -> MemResult<Bytes> {
        let alloc = self.check(a, offset, len)?;
        let (s, e) = (offset as usize, (offset + len) as usize);
        for (&ro, _) in alloc
            .relocs
            .range(offset.saturating_sub(PTR_SIZE - 1)..offset + len)
        {
            if ro < offset || ro + PTR_SIZE > offset + len {
                return Err(MemError::SplitsPointer {
                    offset,
                    len,
                    pointer_at: ro,
                });
            }
        }
        let relocs = alloc
            .relocs
            .range(offset..offset + len)
            .map(|(&o, r)| (o - offset, r.clone()))
            .collect();
        Ok(Bytes {
            bytes: alloc.bytes[s..e].to_vec(),
            init: alloc.init[s..e].to_vec(),
            relocs,
        })
    }

    /// Writes `value` at `offset`, replacing any pointers it overlaps.
    pub fn write(&mut self, a: EvalAlloc, offset: u64, value: &Bytes) -> MemResult<()> {
        let len = value.bytes.len() as u64;
        self.check(a, offset, len)?;
        let alloc = &mut self.allocs[a];
        let stale: Vec<u64> = alloc
            .relocs
            .range(offset.saturating_sub(PTR_SIZE - 1)..offset + len.max(1))
            .map(|(&o, _)| o)
            .filter(|&o| o + PTR_SIZE > offset && o < offset + len)
            .collect();
        for o in stale {
            alloc.relocs.remove(&o);
        }
        let (s, e) = (offset as usize, (offset + len) as usize);
        alloc.bytes[s..e].copy_from_slice(&value.bytes);
        alloc.init[s..e].copy_from_slice(&value.init);
        for (o, r) in &value.relocs {
            alloc.relocs.insert(offset + o, r.clone());
        }
        Ok(())
    }

    /// Writes an unsigned integer of `size` bytes.
    pub fn write_uint(&mut self, a: EvalAlloc, offset: u64, size: u64, v: u128) -> MemResult<()> {
        let bytes = v.to_le_bytes()[..size as usize].to_vec();
        self.write(a, offset, &Bytes::plain(bytes))
    }

    /// Reads the pointer stored at `offset`, if a relocation is there.
    pub fn read_pointer(&self, a: EvalAlloc, offset: u64) -> MemResult<Reloc> {
        let b = self.read(a, offset, PTR_SIZE)?;
        match b.relocs.get(&0) {
            Some(r) => Ok(r.clone()),
            None if b.init.iter().all(|&i| i) => Err(MemError::DerefInteger),
            None => Err(MemError::DerefUninit),
        }
    }

    /// Every allocation reachable from `root` through relocations, `root` first,
    /// then in first-visit order.
    pub fn reachable(&self, root: EvalAlloc) -> Vec<EvalAlloc> {
        let mut seen = vec![root];
        let mut i = 0;
        while i < seen.len() {
            for r in self.allocs[seen[i]].relocs.values() {
                if let Target::Alloc(t) = r.target
                    && !seen.contains(&t)
                {
                    seen.push(t);
                }
            }
            i += 1;
        }
        seen
    }
}
