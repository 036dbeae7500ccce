//! The PTX device's memory: allocations behind 64-bit addresses, each with an
//! owner, a state space, a byte image and a per-byte "written" mask.
//!
//! PTX registers hold plain integers, so a pointer is an address, not a
//! tagged value. Each allocation owns the 4 GiB window `id << 32`, and an
//! address is `id << 32 | offset`. A state space's own addresses (the
//! `.shared` or `.local` window) and generic addresses are the same number:
//! `cvta` is the identity, while an access through a space checks that the
//! allocation is in it. Id 0 is never used, so null and small integers name
//! no allocation. Ids are never reused: an address into a returned frame's
//! depot names a dead allocation, a stale-frame fault rather than another
//! frame's bytes.

use std::sync::Arc;

use crate::device::virt::{Fault, FaultKind};

/// A PTX state space, as far as memory is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    /// `.global` (buffers and module globals).
    Global,
    /// `.shared`: one instance per block and launch.
    Shared,
    /// `.local`: one instance per frame of a function with a depot.
    Local,
    /// `.const`.
    Const,
    /// `.param`: a kernel parameter, reached through its address (`mov`
    /// of its name) rather than its name.
    Param,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
        }
    }
}

/// Who owns an allocation, for messages and the foreign-access checks.
#[derive(Clone, Debug)]
pub(crate) enum Owner {
    /// A host-allocated buffer.
    Buffer(u32),
    /// A module variable in `.global` or `.const`.
    Global(Arc<str>),
    /// Block `block`'s instance of a `.shared` variable.
    Shared { symbol: Arc<str>, block: u32 },
    /// The local variable `symbol` (a depot) of a frame of `func` on `thread`.
    Local {
        symbol: Arc<str>,
        func: Arc<str>,
        thread: u32,
    },
    /// The launch's copy of kernel parameter `index`, read-only.
    Param { index: u32 },
    /// A function's code: no bytes, so that its address (`mov.u64 %rd,
    /// func;`) is distinct from every other and any access through it
    /// faults.
    Code(Arc<str>),
}

impl Owner {
    fn describe(&self) -> String {
        match self {
            Owner::Buffer(i) => format!("buffer {i}"),
            Owner::Global(s) => format!("global {s}"),
            Owner::Shared { symbol, block } => format!("shared {symbol} of block {block}"),
            Owner::Local { symbol, func, .. } => format!("the local {symbol} of a frame of {func}"),
            Owner::Param { index } => format!("kernel parameter {index}"),
            Owner::Code(f) => format!("the code of {f}"),
        }
    }
}

struct Allocation {
    owner: Owner,
    space: Space,
    read_only: bool,
    live: bool,
    bytes: Vec<u8>,
    /// One bit per byte: written.
    init: Vec<u64>,
}

impl Allocation {
    fn is_init(&self, off: usize) -> bool {
        self.init[off / 64] >> (off % 64) & 1 == 1
    }

    fn mark_init(&mut self, start: usize, len: usize) {
        for off in start..start + len {
            self.init[off / 64] |= 1 << (off % 64);
        }
    }

    fn mark_uninit(&mut self, off: usize) {
        self.init[off / 64] &= !(1 << (off % 64));
    }

    /// Which of the `len` bytes at `off` were never written (bit `k`: byte
    /// `off + k`).
    fn uninit_mask(&self, off: usize, len: usize) -> u8 {
        (0..len)
            .filter(|&k| !self.is_init(off + k))
            .fold(0, |m, k| m | 1 << k)
    }
}

/// The thread making an access, and what the access is called in messages.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Who {
    pub thread: u32,
    pub block: u32,
    pub verb: &'static str,
}

/// The bits of an address that hold the offset in its allocation.
const WINDOW: u32 = 32;

/// The address of byte `offset` of allocation `id`.
pub(crate) fn address(id: u32, offset: u64) -> u64 {
    (u64::from(id) << WINDOW) | offset
}

fn fault(kind: FaultKind, message: String) -> Fault {
    Fault::new(kind, message)
}

#[derive(Default)]
pub(crate) struct Memory {
    /// Index 0 is a placeholder: id 0 is never an allocation.
    allocs: Vec<Option<Allocation>>,
}

impl Memory {
    /// What `addr` points at, for a message: an allocation's owner and
    /// offset, or that it names none.
    pub fn describe_address(&self, addr: u64) -> String {
        let id = (addr >> WINDOW) as usize;
        match self.allocs.get(id).and_then(Option::as_ref) {
            Some(a) if id != 0 => {
                format!(
                    "{} at offset {}",
                    a.owner.describe(),
                    addr & ((1 << WINDOW) - 1)
                )
            }
            _ if addr == 0 => "null".to_owned(),
            _ => format!("{addr:#x}, which names no allocation"),
        }
    }

    /// A new allocation of `size` unwritten bytes; its id.
    pub fn alloc(
        &mut self,
        owner: Owner,
        space: Space,
        size: u64,
        read_only: bool,
    ) -> Result<u32, Fault> {
        if self.allocs.is_empty() {
            self.allocs.push(None);
        }
        if size >= 1 << WINDOW {
            return Err(fault(
                FaultKind::Unsupported,
                format!(
                    "an allocation of {size} bytes: the PTX device holds at most 4 GiB per allocation"
                ),
            ));
        }
        let id = u32::try_from(self.allocs.len())
            .map_err(|_| fault(FaultKind::Unsupported, "more than 2^32 allocations".into()))?;
        let size = size as usize;
        self.allocs.push(Some(Allocation {
            owner,
            space,
            read_only,
            live: true,
            bytes: vec![0; size],
            init: vec![0; size.div_ceil(64)],
        }));
        Ok(id)
    }

    /// Ends allocation `id` (a returned frame's depot, a launch's shared
    /// memory): later accesses are stale.
    pub fn kill(&mut self, id: u32) {
        if let Some(Some(a)) = self.allocs.get_mut(id as usize) {
            a.live = false;
            a.bytes = Vec::new();
            a.init = Vec::new();
        }
    }

    /// Makes `id` read-only (after its initializer is written).
    pub fn seal(&mut self, id: u32) {
        if let Some(Some(a)) = self.allocs.get_mut(id as usize) {
            a.read_only = true;
        }
    }

    /// Writes `bytes` at `offset` of `id` from the host (no checks but bounds).
    pub fn host_write(&mut self, id: u32, offset: u64, bytes: &[u8]) {
        if let Some(Some(a)) = self.allocs.get_mut(id as usize) {
            let start = offset as usize;
            if let Some(dst) = a.bytes.get_mut(start..start + bytes.len()) {
                dst.copy_from_slice(bytes);
                a.mark_init(start, bytes.len());
            }
        }
    }

    /// The whole of `id`, or the offset of its first unwritten byte.
    pub fn host_read(&self, id: u32) -> Result<Vec<u8>, u64> {
        match self.allocs.get(id as usize) {
            Some(Some(a)) => match (0..a.bytes.len()).find(|&o| !a.is_init(o)) {
                Some(o) => Err(o as u64),
                None => Ok(a.bytes.clone()),
            },
            _ => Err(0),
        }
    }

    /// Checks an access of `len` bytes at `addr` through `space` (`None`:
    /// generic) by `who`; the allocation and offset.
    fn check(
        &self,
        addr: u64,
        len: usize,
        space: Option<Space>,
        who: Who,
        access: Access,
    ) -> Result<(usize, usize), Fault> {
        let id = (addr >> WINDOW) as usize;
        let off = (addr & ((1 << WINDOW) - 1)) as usize;
        let verb = who.verb;
        let Some(Some(a)) = self.allocs.get(id) else {
            return Err(fault(
                FaultKind::NullOrWild,
                format!("{verb} of {len} bytes at {addr:#x}, which is null or names no allocation"),
            ));
        };
        let what = a.owner.describe();
        if !a.live {
            let kind = if a.space == Space::Local {
                FaultKind::StaleFrame
            } else {
                FaultKind::NullOrWild
            };
            let why = if a.space == Space::Local {
                "a frame that has returned"
            } else {
                "memory of a finished launch"
            };
            return Err(fault(
                kind,
                format!("{verb} through an address into {what}, {why}"),
            ));
        }
        if let Some(s) = space
            && s != a.space
        {
            return Err(fault(
                FaultKind::WrongSpace,
                format!(
                    "{verb} through .{} of an address into {what}, which is .{}",
                    s.name(),
                    a.space.name()
                ),
            ));
        }
        match &a.owner {
            Owner::Local { thread, .. } if *thread != who.thread => {
                return Err(fault(
                    FaultKind::Foreign,
                    format!("{verb} of {what}, which belongs to another thread (linear {thread})"),
                ));
            }
            Owner::Shared { block, .. } if *block != who.block => {
                return Err(fault(
                    FaultKind::Foreign,
                    format!("{verb} of {what} from block {}", who.block),
                ));
            }
            _ => {}
        }
        if off.checked_add(len).is_none_or(|end| end > a.bytes.len()) {
            return Err(fault(
                FaultKind::OutOfBounds,
                format!(
                    "{verb} of {len} bytes at offset {off} of {what}, which has {} bytes",
                    a.bytes.len()
                ),
            ));
        }
        if !off.is_multiple_of(len.max(1)) {
            return Err(fault(
                FaultKind::Misaligned,
                format!(
                    "{verb} of {len} bytes at offset {off} of {what}: PTX accesses are naturally aligned"
                ),
            ));
        }
        if access == Access::Write && a.read_only {
            return Err(fault(
                FaultKind::ReadOnly,
                format!("{verb} to {what}, which is read-only"),
            ));
        }
        if access == Access::Read
            && let Some(o) = (off..off + len).find(|&o| !a.is_init(o))
        {
            return Err(fault(
                FaultKind::Uninit,
                format!(
                    "{verb} of {len} bytes at offset {off} of {what}: byte {o} was never written"
                ),
            ));
        }
        Ok((id, off))
    }

    /// Reads `len` (1, 2, 4 or 8) bytes at `addr`, little-endian.
    pub fn load(
        &self,
        addr: u64,
        len: usize,
        space: Option<Space>,
        who: Who,
    ) -> Result<u64, Fault> {
        let (id, off) = self.check(addr, len, space, who, Access::Read)?;
        let a = self.allocs[id].as_ref().map(|a| &a.bytes[off..off + len]);
        let mut v = [0u8; 8];
        if let Some(b) = a {
            v[..len].copy_from_slice(b);
        }
        Ok(u64::from_le_bytes(v))
    }

    /// Writes the low `len` bytes of `value` at `addr`.
    pub fn store(
        &mut self,
        addr: u64,
        len: usize,
        value: u64,
        space: Option<Space>,
        who: Who,
    ) -> Result<(), Fault> {
        self.store_partial(addr, len, value, 0, space, who)
    }

    /// Like [`Memory::load`], but bytes never written are not a fault: they
    /// read as zero and are named in the returned mask (bit `k`: byte `k`).
    /// For a plain `ld` into a register, whose value the executor follows
    /// until it is used: libNVVM copies a struct with wide loads that span
    /// its padding, which is never written and never used.
    pub fn load_partial(
        &self,
        addr: u64,
        len: usize,
        space: Option<Space>,
        who: Who,
    ) -> Result<(u64, u8), Fault> {
        let (id, off) = self.check(addr, len, space, who, Access::ReadPartial)?;
        let Some(a) = self.allocs[id].as_ref() else {
            return Ok((0, 0));
        };
        let undef = a.uninit_mask(off, len);
        let mut v = [0u8; 8];
        for (k, b) in a.bytes[off..off + len].iter().enumerate() {
            if undef >> k & 1 == 0 {
                v[k] = *b;
            }
        }
        Ok((u64::from_le_bytes(v), undef))
    }

    /// Writes the low `len` bytes of `value` at `addr`, except that the
    /// bytes named in `undef` (bit `k`: byte `k`) become never written: a
    /// register that holds bytes loaded from memory nobody wrote.
    pub fn store_partial(
        &mut self,
        addr: u64,
        len: usize,
        value: u64,
        undef: u8,
        space: Option<Space>,
        who: Who,
    ) -> Result<(), Fault> {
        let (id, off) = self.check(addr, len, space, who, Access::Write)?;
        if let Some(a) = self.allocs[id].as_mut() {
            a.bytes[off..off + len].copy_from_slice(&value.to_le_bytes()[..len]);
            a.mark_init(off, len);
            for k in (0..len).filter(|k| undef >> k & 1 == 1) {
                a.mark_uninit(off + k);
            }
        }
        Ok(())
    }
}

/// What [`Memory::check`] checks an access for.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Access {
    /// A read whose every byte must have been written.
    Read,
    /// A read that may include bytes never written (they are tracked).
    ReadPartial,
    /// A write (refused into read-only memory).
    Write,
}
