//! Why interning fails.

use std::fmt::Debug;

use crate::SYMBOL_PREFIX;

/// Why interning failed. Each variant names the allocation and, where there
/// is one, the offset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InternError<Id: Debug> {
    /// A root is not in the graph.
    #[error("root allocation {alloc:?} is not in the graph")]
    UnknownRoot {
        /// The missing allocation.
        alloc: Id,
    },
    /// A relocation targets an allocation that is not in the graph.
    #[error(
        "allocation {alloc:?}: the pointer at offset {offset} targets allocation {target:?}, which is not in the graph"
    )]
    DanglingRelocation {
        /// The allocation that holds the pointer.
        alloc: Id,
        /// The pointer's offset.
        offset: u64,
        /// The missing target.
        target: Id,
    },
    /// An alignment that is not a power of two.
    #[error("allocation {alloc:?}: alignment {align} is not a power of two")]
    InvalidAlign {
        /// The allocation.
        alloc: Id,
        /// Its alignment.
        align: u64,
    },
    /// An init mask whose length is not the allocation's.
    #[error(
        "allocation {alloc:?}: the init mask covers {mask} bytes but the allocation has {bytes}"
    )]
    InitMaskLength {
        /// The allocation.
        alloc: Id,
        /// Its size.
        bytes: u64,
        /// The mask's length.
        mask: u64,
    },
    /// A relocation that is not pointer-sized.
    #[error(
        "allocation {alloc:?}: the pointer at offset {offset} is {size} bytes, not pointer-sized ({pointer_size})"
    )]
    RelocationSize {
        /// The allocation.
        alloc: Id,
        /// The relocation's offset.
        offset: u64,
        /// The relocation's size.
        size: u64,
        /// The interner's pointer size.
        pointer_size: u64,
    },
    /// A relocation whose offset is not a multiple of the pointer size.
    #[error(
        "allocation {alloc:?}: the pointer at offset {offset} is not aligned to {pointer_size}"
    )]
    MisalignedRelocation {
        /// The allocation.
        alloc: Id,
        /// The relocation's offset.
        offset: u64,
        /// The interner's pointer size, which is also the pointer alignment.
        pointer_size: u64,
    },
    /// A relocation that reaches past the end of its allocation.
    #[error(
        "allocation {alloc:?}: the pointer at offset {offset} ({size} bytes) reaches past the end ({alloc_size} bytes)"
    )]
    RelocationOutOfBounds {
        /// The allocation.
        alloc: Id,
        /// The relocation's offset.
        offset: u64,
        /// The relocation's size.
        size: u64,
        /// The allocation's size.
        alloc_size: u64,
    },
    /// Two relocations that share bytes.
    #[error(
        "allocation {alloc:?}: the pointer at offset {offset} overlaps the one at offset {previous}"
    )]
    OverlappingRelocations {
        /// The allocation.
        alloc: Id,
        /// The later relocation's offset.
        offset: u64,
        /// The earlier relocation's offset.
        previous: u64,
    },
    /// A cycle of pointers through anonymous allocations only. Such memory
    /// has no content key; a cycle must pass through a static.
    #[error(
        "allocations {cycle:?} point at each other in a cycle through anonymous allocations only"
    )]
    AnonymousCycle {
        /// The allocations on the cycle, each pointing at the next and the
        /// last at the first.
        cycle: Vec<Id>,
    },
    /// Mutable anonymous memory that no static reaches, so it has no stable
    /// name.
    #[error(
        "mutable anonymous allocation {alloc:?} is not reached from any static, so it has no owner to be named after"
    )]
    MutableWithoutOwner {
        /// The allocation.
        alloc: Id,
    },
    /// One symbol given to two allocations.
    #[error("static {symbol:?} is given two allocations, {first:?} and {second:?}")]
    StaticSymbolClash {
        /// The symbol.
        symbol: String,
        /// One allocation.
        first: Id,
        /// The other.
        second: Id,
    },
    /// One allocation given two static symbols.
    #[error("allocation {alloc:?} is given to two statics, {first:?} and {second:?}")]
    StaticAllocTwice {
        /// The allocation.
        alloc: Id,
        /// One symbol.
        first: String,
        /// The other.
        second: String,
    },
    /// A static symbol that is empty or starts with [`SYMBOL_PREFIX`].
    #[error("static symbol {symbol:?} is empty or uses the reserved prefix {SYMBOL_PREFIX:?}")]
    InvalidStaticSymbol {
        /// The symbol.
        symbol: String,
    },
}
