//! Globals: module-level variables with an address space, a mutability flag, an
//! alignment, a symbol and an optional byte-image initializer with relocations.

use crate::entities::{FuncId, GlobalId};
use crate::layout::POINTER_SIZE;
use crate::types::AddressSpace;

/// Whether a symbol is visible outside the module.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// Visible only inside the module (`internal`).
    Internal,
    /// Visible to other modules and to the host (the default linkage).
    External,
    /// A global the host writes between launches (CUDA's `__constant__`
    /// set by `cudaMemcpyToSymbol`): visible like `External`, and printed
    /// `externally_initialized`, so that no pass folds a load from it into
    /// its initializer. Globals only.
    ExternallyInitialized,
}

/// A module-level variable.
///
/// Its memory is `size` bytes at an address aligned to `align`, in `space`. Its
/// contents before the first instruction runs are given by `init`; see
/// [`Initializer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalData {
    /// The symbol. It must be a valid NVVM identifier (`[A-Za-z_$][A-Za-z0-9_$]*`,
    /// not `_` or `$` alone) and unique among the module's globals and functions.
    pub symbol: String,
    /// `Global`, `Shared` or `Constant`; the verifier refuses the others.
    pub space: AddressSpace,
    /// `false` for read-only memory (printed as an LLVM `constant`): no store or
    /// atomic may write it.
    pub mutable: bool,
    /// The linkage.
    pub linkage: Linkage,
    /// The alignment in bytes: a power of two.
    pub align: u32,
    /// The size in bytes.
    pub size: u64,
    /// The initial contents, or `None` for undefined contents. Shared globals must
    /// have `None`: shared memory cannot be initialized.
    pub init: Option<Initializer>,
}

/// The initial contents of a global, in the shape rustc's allocations have: a byte
/// image with undefined ranges, overlaid by pointer slots.
///
/// The `spans`, concatenated, form the image; its length must equal the global's
/// `size`. Each [`Relocation`] overlays the 8 bytes at its `offset` with a generic
/// pointer to its `target` (a global plus `addend` bytes, or a function). The bytes the spans give
/// under a slot are ignored (rustc keeps the addend there; the `addend` field is
/// what counts). Slots do not overlap and lie inside the global.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Initializer {
    /// The byte image, in order.
    pub spans: Vec<Span>,
    /// The pointer slots, in any order (printers sort them by offset).
    pub relocations: Vec<Relocation>,
}

/// A run of the byte image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Span {
    /// Defined bytes.
    Bytes(Vec<u8>),
    /// This many undefined bytes (rustc's uninitialized bytes, such as padding).
    Undef(u64),
}

impl Span {
    /// The number of bytes the span covers.
    pub fn len(&self) -> u64 {
        match self {
            Span::Bytes(bytes) => bytes.len() as u64,
            Span::Undef(n) => *n,
        }
    }

    /// Whether the span covers no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A pointer slot of an [`Initializer`]: the 8 bytes at `offset` hold a generic
/// (address space 0) pointer to byte `addend` of `target`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Relocation {
    /// The slot's byte offset inside the global holding it.
    pub offset: u64,
    /// What the slot points to.
    pub target: RelocTarget,
    /// The byte offset into `target`: from 0 to a global's size (one past
    /// the end); 0 for a function.
    pub addend: i64,
}

/// What a pointer slot of an initializer points to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RelocTarget {
    /// A global. It must live in the global or constant space.
    Global(GlobalId),
    /// A device function's entry: a `fn` pointer stored in a constant (a
    /// table of functions). Never a kernel: kernels are launched, not called.
    Func(FuncId),
}

impl RelocTarget {
    /// The global pointed to, if the target is one.
    pub fn global(self) -> Option<GlobalId> {
        match self {
            RelocTarget::Global(g) => Some(g),
            RelocTarget::Func(_) => None,
        }
    }
}

impl From<GlobalId> for RelocTarget {
    fn from(g: GlobalId) -> Self {
        RelocTarget::Global(g)
    }
}

impl From<FuncId> for RelocTarget {
    fn from(f: FuncId) -> Self {
        RelocTarget::Func(f)
    }
}

impl std::fmt::Display for RelocTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelocTarget::Global(g) => write!(f, "{g}"),
            RelocTarget::Func(func) => write!(f, "{func}"),
        }
    }
}

impl Relocation {
    /// The byte range the slot covers.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.offset..self.offset.saturating_add(POINTER_SIZE)
    }
}

impl Initializer {
    /// An initializer of defined bytes and no relocations.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        Initializer {
            spans: vec![Span::Bytes(bytes.into())],
            relocations: Vec::new(),
        }
    }

    /// The length of the byte image.
    pub fn len(&self) -> u64 {
        self.spans.iter().map(Span::len).sum()
    }

    /// Whether the byte image is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte image, one entry per byte, `None` for undefined bytes. Relocation
    /// slots are not applied.
    pub fn image(&self) -> Vec<Option<u8>> {
        let mut out = Vec::with_capacity(usize::try_from(self.len()).unwrap_or(0));
        for span in &self.spans {
            match span {
                Span::Bytes(bytes) => out.extend(bytes.iter().map(|&b| Some(b))),
                Span::Undef(n) => out.extend(std::iter::repeat_n(None, *n as usize)),
            }
        }
        out
    }

    /// The relocations sorted by offset.
    pub fn sorted_relocations(&self) -> Vec<Relocation> {
        let mut relocs = self.relocations.clone();
        relocs.sort_by_key(|r| (r.offset, r.target, r.addend));
        relocs
    }
}
