//! The border trait: an allocation graph, read one allocation at a time.
//!
//! [`AllocGraph`] is the only thing a compiler implements to use this crate.
//! [`SimpleGraph`] is an owned implementation for tests, docs and callers that
//! have no allocation store of their own.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;

use crate::InitMask;

/// Whether a program may write to an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutability {
    /// Read-only: a constant, a promoted, or an immutable static without
    /// interior mutability. Identical immutable contents share one global.
    Immutable,
    /// Writable: a `static mut`, or anonymous memory such as the `&mut [..]`
    /// in a `static mut` initializer. Never merged with anything.
    Mutable,
}

/// What a relocation points at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target<Id> {
    /// Another allocation of the graph. If that allocation is a static's (it was
    /// passed as [`Root::Static`](crate::Root::Static)), the pointer is to that
    /// static; otherwise it is anonymous memory.
    Alloc(Id),
    /// A static named by its symbol. It need not be in the graph (an external
    /// static, or one whose allocation the caller does not have).
    Static(String),
    /// A function's entry, named by its symbol: a `fn` pointer stored in a
    /// constant. Two tables of the same functions have the same key.
    Function(String),
}

/// A pointer stored inside an allocation.
///
/// The pointer occupies `size` bytes at `offset`, and its value is the address
/// of `target` plus `addend`. The bytes under a relocation are ignored: the
/// relocation alone says what is stored there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Relocation<Id> {
    /// Where the pointer starts, in bytes from the start of the allocation.
    pub offset: u64,
    /// How many bytes the pointer occupies. The interner requires its
    /// pointer size here.
    pub size: u64,
    /// What the pointer points at.
    pub target: Target<Id>,
    /// The byte offset into the target.
    pub addend: i64,
}

impl<Id> Relocation<Id> {
    /// A pointer of `size` bytes at `offset`, to `target` plus `addend`.
    pub fn new(offset: u64, size: u64, target: Target<Id>, addend: i64) -> Self {
        Relocation {
            offset,
            size,
            target,
            addend,
        }
    }
}

/// One allocation as the graph hands it over, borrowed from the graph where
/// it can be.
#[derive(Clone, Debug)]
pub struct AllocRef<'a, Id: Clone> {
    /// The raw bytes. Bytes that are uninitialized or under a relocation may
    /// hold anything: they never reach a key or an initializer.
    pub bytes: &'a [u8],
    /// Which bytes are initialized. Its length must equal `bytes.len()`.
    pub init: Cow<'a, InitMask>,
    /// The alignment in bytes, a power of two.
    pub align: u64,
    /// Whether the program may write to the allocation.
    pub mutability: Mutability,
    /// The pointers stored in the allocation, in any order.
    pub relocations: Cow<'a, [Relocation<Id>]>,
}

/// An allocation graph: what this crate needs to know about each allocation.
///
/// A compiler implements this over its own allocation store (for example
/// rustc's interpreter memory, with `AllocId` as [`Id`](Self::Id)). Ids are
/// only handles: keys and symbols never depend on them.
pub trait AllocGraph {
    /// The handle of an allocation.
    type Id: Copy + Ord + Hash + Debug;

    /// The allocation `id`, or `None` if the graph has no such allocation.
    fn get(&self, id: Self::Id) -> Option<AllocRef<'_, Self::Id>>;
}

/// An owned allocation, as stored in a [`SimpleGraph`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation<Id> {
    /// The raw bytes.
    pub bytes: Vec<u8>,
    /// Which bytes are initialized.
    pub init: InitMask,
    /// The alignment in bytes.
    pub align: u64,
    /// Whether the program may write to it.
    pub mutability: Mutability,
    /// The pointers stored in it.
    pub relocations: Vec<Relocation<Id>>,
}

impl<Id> Allocation<Id> {
    /// An immutable allocation of `bytes`, all initialized, with no pointers.
    pub fn new(bytes: impl Into<Vec<u8>>, align: u64) -> Self {
        let bytes = bytes.into();
        Allocation {
            init: InitMask::new(bytes.len() as u64, true),
            bytes,
            align,
            mutability: Mutability::Immutable,
            relocations: Vec::new(),
        }
    }

    /// The same allocation, made mutable.
    pub fn mutable(mut self) -> Self {
        self.mutability = Mutability::Mutable;
        self
    }

    /// The same allocation with a pointer of `size` bytes at `offset`, to
    /// `target` plus `addend`.
    pub fn with_pointer(mut self, offset: u64, size: u64, target: Target<Id>, addend: i64) -> Self {
        self.relocations
            .push(Relocation::new(offset, size, target, addend));
        self
    }

    /// The same allocation with `range` marked uninitialized.
    ///
    /// # Panics
    /// If `range` reaches past the end of the bytes.
    pub fn with_uninit(mut self, range: std::ops::Range<u64>) -> Self {
        self.init.set(range, false);
        self
    }
}

/// A simple owned [`AllocGraph`]: allocations by id, kept in insertion order.
#[derive(Clone, Debug)]
pub struct SimpleGraph<Id> {
    allocs: Vec<(Id, Allocation<Id>)>,
    index: HashMap<Id, usize>,
}

impl<Id> Default for SimpleGraph<Id> {
    fn default() -> Self {
        SimpleGraph {
            allocs: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<Id: Copy + Ord + Hash + Debug> SimpleGraph<Id> {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the allocation `id`, or replaces it in place.
    pub fn insert(&mut self, id: Id, alloc: Allocation<Id>) -> &mut Self {
        match self.index.get(&id) {
            Some(&i) => self.allocs[i].1 = alloc,
            None => {
                self.index.insert(id, self.allocs.len());
                self.allocs.push((id, alloc));
            }
        }
        self
    }

    /// The allocation `id`, if present.
    pub fn allocation(&self, id: Id) -> Option<&Allocation<Id>> {
        self.index.get(&id).map(|&i| &self.allocs[i].1)
    }

    /// Every allocation, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Id, &Allocation<Id>)> {
        self.allocs.iter().map(|(id, a)| (*id, a))
    }

    /// The number of allocations.
    pub fn len(&self) -> usize {
        self.allocs.len()
    }

    /// Whether the graph has no allocations.
    pub fn is_empty(&self) -> bool {
        self.allocs.is_empty()
    }
}

impl<Id: Copy + Ord + Hash + Debug> AllocGraph for SimpleGraph<Id> {
    type Id = Id;

    fn get(&self, id: Id) -> Option<AllocRef<'_, Id>> {
        self.allocation(id).map(|a| AllocRef {
            bytes: &a.bytes,
            init: Cow::Borrowed(&a.init),
            align: a.align,
            mutability: a.mutability,
            relocations: Cow::Borrowed(&a.relocations),
        })
    }
}
