//! What interning produces: globals with their initializers, and the map
//! from allocations to globals.

use std::fmt::Debug;
use std::ops::Range;

use crate::{Key, Mutability};

/// The handle of a global in an [`Interned`]. Globals are numbered in symbol
/// order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);

impl GlobalId {
    /// The global's position in symbol order, from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a global comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GlobalKind {
    /// A static's allocation; the symbol is the static's.
    Static,
    /// Immutable anonymous memory, shared by every allocation with the same
    /// content key; the symbol is [`SYMBOL_PREFIX`](crate::SYMBOL_PREFIX) plus the key's 64 hex
    /// digits.
    Constant,
    /// Mutable anonymous memory, never shared. The symbol is
    /// [`MUTABLE_SYMBOL_PREFIX`](crate::MUTABLE_SYMBOL_PREFIX) plus the hex of a key over the content key,
    /// the owning static's symbol and the path from it.
    MutableAnonymous {
        /// The symbol of the static that owns it.
        owner: String,
        /// The relocation offsets that lead from the owner to it, one per
        /// allocation on the way.
        path: Vec<u64>,
    },
}

/// Where a relocation slot points.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SlotTarget {
    /// A global of the same [`Interned`].
    Global(GlobalId),
    /// A static that is not among the roots, by its symbol.
    Extern(String),
    /// A function, by its symbol (the addend is the graph's, normally 0).
    Function(String),
}

/// A pointer in a global's initializer: the target's address plus `addend`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RelocSlot {
    /// Where the pointer starts in the global.
    pub offset: u64,
    /// Its size: the interner's pointer size.
    pub size: u64,
    /// What it points at.
    pub target: SlotTarget,
    /// The byte offset into the target.
    pub addend: i64,
}

/// A piece of a global's initializer. Pieces are in offset order and cover
/// the global exactly; two byte pieces are never neighbours.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Chunk<'g> {
    /// Initialized bytes.
    Bytes {
        /// Where they start in the global.
        offset: u64,
        /// The bytes.
        bytes: &'g [u8],
    },
    /// Uninitialized bytes (`undef`).
    Undef {
        /// Where they start in the global.
        offset: u64,
        /// How many.
        len: u64,
    },
    /// A pointer.
    Pointer(RelocSlot),
}

impl Chunk<'_> {
    /// The byte range the chunk covers in its global.
    pub fn range(&self) -> Range<u64> {
        match self {
            Chunk::Bytes { offset, bytes } => *offset..offset + bytes.len() as u64,
            Chunk::Undef { offset, len } => *offset..offset + len,
            Chunk::Pointer(slot) => slot.offset..slot.offset + slot.size,
        }
    }
}

/// The stored record of a global; [`Global`] is the public view of it.
#[derive(Clone, Debug)]
pub(crate) struct GlobalData {
    /// The symbol, in `Interned::symbols`.
    pub(crate) symbol: Range<u32>,
    /// The initializer, in `Interned::chunks`.
    pub(crate) chunks: Range<u32>,
    pub(crate) kind: GlobalKind,
    pub(crate) key: Key,
    pub(crate) align: u64,
    pub(crate) size: u64,
    pub(crate) mutability: Mutability,
}

/// One module-level global: a static, or one or more anonymous allocations
/// with the same symbol. A cheap view into an [`Interned`].
#[derive(Clone, Copy)]
pub struct Global<'a, 'g> {
    id: GlobalId,
    data: &'a GlobalData,
    symbol: &'a str,
    chunks: &'a [Chunk<'g>],
}

impl<'a, 'g> Global<'a, 'g> {
    /// Its handle.
    pub fn id(&self) -> GlobalId {
        self.id
    }

    /// The symbol: a valid NVVM identifier without `.` for anonymous globals,
    /// the caller's symbol for statics.
    pub fn symbol(&self) -> &'a str {
        self.symbol
    }

    /// What the global comes from.
    pub fn kind(&self) -> &'a GlobalKind {
        &self.data.kind
    }

    /// The content key (for a static too, though a static is named by its
    /// symbol).
    pub fn key(&self) -> Key {
        self.data.key
    }

    /// The alignment in bytes.
    pub fn align(&self) -> u64 {
        self.data.align
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.data.size
    }

    /// Whether the program may write to it.
    pub fn mutability(&self) -> Mutability {
        self.data.mutability
    }

    /// The initializer: byte runs, `undef` runs and pointers, in offset order.
    pub fn chunks(&self) -> &'a [Chunk<'g>] {
        self.chunks
    }

    /// The initializer's pointers, in offset order.
    pub fn relocations(&self) -> impl Iterator<Item = &'a RelocSlot> + use<'a, 'g> {
        self.chunks.iter().filter_map(|c| match c {
            Chunk::Pointer(slot) => Some(slot),
            _ => None,
        })
    }

    /// The chunks that intersect `range`, in offset order.
    pub(crate) fn chunks_in(&self, range: Range<u64>) -> &'a [Chunk<'g>] {
        let first = self
            .chunks
            .partition_point(|c| c.range().end <= range.start);
        let last = self.chunks.partition_point(|c| c.range().start < range.end);
        &self.chunks[first..last.max(first)]
    }
}

/// Two globals are equal when everything but their handle is.
impl PartialEq for Global<'_, '_> {
    fn eq(&self, other: &Self) -> bool {
        self.symbol == other.symbol
            && self.data.kind == other.data.kind
            && self.data.key == other.data.key
            && self.data.align == other.data.align
            && self.data.size == other.data.size
            && self.data.mutability == other.data.mutability
            && self.chunks == other.chunks
    }
}

impl Eq for Global<'_, '_> {}

impl Debug for Global<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Global")
            .field("id", &self.id)
            .field("symbol", &self.symbol)
            .field("kind", &self.data.kind)
            .field("key", &self.data.key)
            .field("align", &self.data.align)
            .field("size", &self.data.size)
            .field("mutability", &self.data.mutability)
            .field("chunks", &self.chunks)
            .finish()
    }
}

/// The result of interning: the globals, and the global of each allocation.
///
/// Globals live in arenas (one string for all symbols, one vector for all
/// chunks), so a global costs no allocation of its own; [`Global`] is a view.
#[derive(Clone, Debug)]
pub struct Interned<'g, Id> {
    pub(crate) pointer_size: u64,
    /// In the order they were built.
    pub(crate) globals: Vec<GlobalData>,
    /// For each [`GlobalId`] (symbol order), its record in `globals`.
    pub(crate) records: Vec<u32>,
    pub(crate) symbols: String,
    pub(crate) chunks: Vec<Chunk<'g>>,
    /// Sorted by id.
    pub(crate) by_alloc: Vec<(Id, GlobalId)>,
}

impl<'g, Id: Copy + Ord + Debug> Interned<'g, Id> {
    /// The pointer size the interner used.
    pub fn pointer_size(&self) -> u64 {
        self.pointer_size
    }

    /// The number of globals.
    pub fn len(&self) -> usize {
        self.globals.len()
    }

    /// Whether there are no globals.
    pub fn is_empty(&self) -> bool {
        self.globals.is_empty()
    }

    /// Every global, in symbol order (which is also [`GlobalId`] order).
    pub fn globals(&self) -> impl ExactSizeIterator<Item = Global<'_, 'g>> + '_ {
        (0..self.globals.len()).map(|i| self.global(GlobalId(i as u32)))
    }

    /// The global `id`.
    ///
    /// # Panics
    /// If `id` does not come from this result.
    pub fn global(&self, id: GlobalId) -> Global<'_, 'g> {
        let data = &self.globals[self.records[id.index()] as usize];
        Global {
            id,
            data,
            symbol: &self.symbols[data.symbol.start as usize..data.symbol.end as usize],
            chunks: &self.chunks[data.chunks.start as usize..data.chunks.end as usize],
        }
    }

    /// The global that holds the allocation `alloc`, if the roots reach it.
    pub fn global_of(&self, alloc: Id) -> Option<GlobalId> {
        self.by_alloc
            .binary_search_by_key(&alloc, |&(a, _)| a)
            .ok()
            .map(|i| self.by_alloc[i].1)
    }

    /// The symbol of the global that holds `alloc`, if the roots reach it.
    pub fn symbol_of(&self, alloc: Id) -> Option<&str> {
        self.global_of(alloc).map(|g| self.global(g).symbol())
    }

    /// Every reached allocation with its global, in id order.
    pub fn allocations(&self) -> impl Iterator<Item = (Id, GlobalId)> + '_ {
        self.by_alloc.iter().copied()
    }

    /// The global with this symbol, if any.
    pub fn find(&self, symbol: &str) -> Option<GlobalId> {
        let i = self.records.partition_point(|&r| {
            let g = &self.globals[r as usize];
            &self.symbols[g.symbol.start as usize..g.symbol.end as usize] < symbol
        });
        let id = GlobalId(i as u32);
        (i < self.globals.len() && self.global(id).symbol() == symbol).then_some(id)
    }
}

/// Two results are equal when they have the same globals, in the same order,
/// and map the same allocations to them.
impl<Id: Copy + Ord + Debug> PartialEq for Interned<'_, Id> {
    fn eq(&self, other: &Self) -> bool {
        self.pointer_size == other.pointer_size
            && self.by_alloc == other.by_alloc
            && self.globals().eq(other.globals())
    }
}

impl<Id: Copy + Ord + Debug> Eq for Interned<'_, Id> {}
