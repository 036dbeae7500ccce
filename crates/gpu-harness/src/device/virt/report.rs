//! The public description of a data race found by the virtual device:
//! [`RaceReport`], naming both accesses.
//!
//! The fields are typed so that a caller can do more than print the message: the
//! pipeline turns a race into its own verdict and computes element indices from
//! [`RaceAccess::offset`] (or [`RaceReport::byte`]) and the element type of the
//! buffer that [`RaceMemory::Buffer`] names.

use std::fmt;

use device_ir::AddressSpace;

use crate::device::Buffer;

/// How an access touched memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A plain (non-atomic) load.
    Read,
    /// A plain (non-atomic) store.
    Write,
    /// An atomic load, or a compare-and-swap that did not store.
    AtomicRead,
    /// An atomic store.
    AtomicWrite,
    /// An atomic read-modify-write, or a compare-and-swap that stored.
    AtomicRmw,
}

impl AccessKind {
    /// Whether the access writes memory.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            AccessKind::Write | AccessKind::AtomicWrite | AccessKind::AtomicRmw
        )
    }

    /// Whether the access is atomic (atomics never race with each other).
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            AccessKind::AtomicRead | AccessKind::AtomicWrite | AccessKind::AtomicRmw
        )
    }

    /// The words used in messages (`read`, `atomic write`, ...).
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::AtomicRead => "atomic read",
            AccessKind::AtomicWrite => "atomic write",
            AccessKind::AtomicRmw => "atomic read-modify-write",
        }
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The memory a race is on. Only memory that threads share and may write can
/// race: host buffers, mutable globals and shared memory (never read-only
/// globals or a thread's own stack).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RaceMemory {
    /// A buffer the host allocated: the handle [`Device::alloc`] returned.
    ///
    /// [`Device::alloc`]: crate::device::Device::alloc
    Buffer {
        /// The buffer ([`Buffer::index`] gives its index in allocation order).
        buffer: Buffer,
    },
    /// A mutable module global in global memory.
    Global {
        /// The global's symbol.
        symbol: String,
    },
    /// One block's instance of a shared-memory global.
    Shared {
        /// The global's symbol.
        symbol: String,
        /// The block (its index in the grid, x fastest) whose instance it is.
        block: u32,
    },
}

impl fmt::Display for RaceMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RaceMemory::Buffer { buffer } => write!(f, "buffer {}", buffer.index()),
            RaceMemory::Global { symbol } => write!(f, "global @{symbol}"),
            RaceMemory::Shared { symbol, block } => {
                write!(f, "shared @{symbol} of block {block}")
            }
        }
    }
}

/// One of the two accesses of a race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceAccess {
    /// The accessing thread's block index.
    pub block: [u32; 3],
    /// The accessing thread's index in its block.
    pub thread: [u32; 3],
    /// The launched kernel.
    pub kernel: String,
    /// The function that made the access.
    pub function: String,
    /// The instruction, in device-IR text form, as kernel faults name it
    /// (`inst5 (store v3, v4, align 4)`).
    pub inst: String,
    /// Read, write or atomic.
    pub kind: AccessKind,
    /// The memory space of the memory (global or shared), whatever the static
    /// space of the pointer (often generic).
    pub space: AddressSpace,
    /// Which buffer or global.
    pub memory: RaceMemory,
    /// The byte offset, in [`memory`](Self::memory), of the first byte of the
    /// access.
    pub offset: u64,
    /// How many bytes the access covers.
    pub size: u64,
}

impl fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (b, t) = (self.block, self.thread);
        write!(
            f,
            "{} of bytes {}..{} by block ({}, {}, {}), thread ({}, {}, {}): kernel {}, fn {}, {}",
            self.kind,
            self.offset,
            self.offset.saturating_add(self.size),
            b[0],
            b[1],
            b[2],
            t[0],
            t[1],
            t[2],
            self.kernel,
            self.function,
            self.inst
        )
    }
}

/// A data race: two accesses to one byte by different threads, at least one a
/// write and at least one not atomic, that no happens-before relation orders
/// (program order, block barriers, release/acquire pairs).
///
/// The virtual device reports the first such access in its deterministic
/// schedule and stops the launch there, so one launch always reports the same
/// race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceReport {
    /// The earlier access, in schedule order.
    pub first: RaceAccess,
    /// The later access: the one at which the race was found and the launch
    /// stopped.
    pub second: RaceAccess,
    /// The lowest byte offset, in the memory both accesses name, that both
    /// touch.
    pub byte: u64,
}

impl fmt::Display for RaceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "data race on byte {} of {} ({} memory): no barrier or release/acquire pair orders these accesses",
            self.byte,
            self.second.memory,
            self.second.space.name()
        )?;
        writeln!(f, "  first:  {}", self.first)?;
        write!(f, "  second: {} (the launch stopped here)", self.second)
    }
}

impl std::error::Error for RaceReport {}
