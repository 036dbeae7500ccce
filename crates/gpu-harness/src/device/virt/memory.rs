//! The virtual device's memory: allocations with an owner, a real address space,
//! a byte image, a per-byte "written" mask and a side table of the pointers stored
//! in them (their provenance), plus the checks every access goes through.
//!
//! Each check names the memory involved. An access through a pointer fails when
//! the pointer is null or names no allocation, its allocation is dead (a returned
//! stack frame, a finished launch's shared memory), its static space is neither
//! generic nor the allocation's real space, it belongs to another thread's stack
//! or another block's shared memory, it leaves the allocation, it breaks its
//! alignment, it writes read-only memory, or it reads bytes never written.

use std::collections::BTreeMap;
use std::sync::Arc;

use device_ir::{AddressSpace, Inst, Ty, TyKind, Types, layout};

use super::error::{Fault, FaultKind};
use super::value::{AllocId, Ptr, Val, WINDOW_BITS, mask};

/// Who owns an allocation, for messages and for the foreign-access checks.
#[derive(Clone, Debug)]
pub(crate) enum Owner {
    /// A host-allocated buffer.
    Buffer(u32),
    /// A module global (not shared).
    Global { symbol: Arc<str> },
    /// One block's instance of a shared global.
    Shared { symbol: Arc<str>, block: u32 },
    /// A stack slot made by `alloca` `inst` in a frame of `func`, on `thread`.
    Local {
        func: Arc<str>,
        inst: Inst,
        thread: u32,
    },
    /// The launch's copy of kernel parameter `index`, an aggregate passed by
    /// value (`byval`): read-only, as a kernel's `.param` space is.
    Param { index: u32 },
    /// A function's code: no bytes, so that its address (a `fn` pointer)
    /// is distinct from every other and any access through it faults.
    Code { func: Arc<str> },
}

impl Owner {
    pub(crate) fn describe(&self) -> String {
        match self {
            Owner::Buffer(i) => format!("buffer {i}"),
            Owner::Global { symbol } => format!("global @{symbol}"),
            Owner::Shared { symbol, block } => format!("shared @{symbol} of block {block}"),
            Owner::Local { func, inst, .. } => format!("the stack slot {inst} of {func}"),
            Owner::Param { index } => format!("by-value kernel parameter {index}"),
            Owner::Code { func } => format!("the code of @{func}"),
        }
    }
}

pub(crate) struct Allocation {
    pub owner: Owner,
    pub space: AddressSpace,
    pub size: u64,
    pub align: u64,
    pub read_only: bool,
    /// Read-only for one launch: the kernel took it as a `readonly`
    /// parameter (a Rust `&[T]`), a promise LLVM builds on (`ld.global.nc`),
    /// so a write through any pointer is an error of the kernel, not of the
    /// device.
    pub lent_read_only: bool,
    pub live: bool,
    bytes: Vec<u8>,
    init: Vec<bool>,
    ptrs: BTreeMap<u64, Ptr>,
}

/// The thread making an access, and what the access is called in messages.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Who {
    pub thread: u32,
    pub block: u32,
    pub verb: &'static str,
}

#[derive(Default)]
pub(crate) struct Memory {
    allocs: Vec<Allocation>,
}

fn fault(kind: FaultKind, message: String) -> Fault {
    Fault::new(kind, message)
}

impl Memory {
    /// A new allocation of `size` unwritten bytes.
    pub fn alloc(
        &mut self,
        owner: Owner,
        space: AddressSpace,
        size: u64,
        align: u64,
        read_only: bool,
    ) -> Result<AllocId, Fault> {
        if size >= 1 << WINDOW_BITS || self.allocs.len() >= u32::MAX as usize - 1 {
            return Err(fault(
                FaultKind::Unsupported,
                format!("cannot allocate {size} bytes for {}", owner.describe()),
            ));
        }
        let n = size as usize;
        self.allocs.push(Allocation {
            owner,
            space,
            size,
            align: align.max(1),
            read_only,
            lent_read_only: false,
            live: true,
            bytes: vec![0; n],
            init: vec![false; n],
            ptrs: BTreeMap::new(),
        });
        Ok(AllocId(self.allocs.len() as u32 - 1))
    }

    /// Makes `id` read-only for the launch about to run (`lent`), or
    /// writable again after it.
    pub fn lend_read_only(&mut self, id: AllocId, lent: bool) {
        if let Some(a) = self.allocs.get_mut(id.0 as usize) {
            a.lent_read_only = lent;
        }
    }

    /// Ends an allocation's life and frees its bytes; its id stays taken.
    pub fn kill(&mut self, id: AllocId) {
        if let Some(a) = self.allocs.get_mut(id.0 as usize) {
            a.live = false;
            a.bytes = Vec::new();
            a.init = Vec::new();
            a.ptrs = BTreeMap::new();
        }
    }

    pub fn get(&self, id: AllocId) -> Option<&Allocation> {
        self.allocs.get(id.0 as usize)
    }

    /// `inttoptr`: the pointer whose address is `addr`, in `space`.
    pub fn ptr_from_addr(&self, addr: u64, space: AddressSpace) -> Ptr {
        let window = addr >> WINDOW_BITS;
        if window >= 1 && window <= self.allocs.len() as u64 {
            Ptr {
                space,
                target: Some(AllocId(window as u32 - 1)),
                offset: addr & ((1 << WINDOW_BITS) - 1),
            }
        } else {
            Ptr {
                space,
                target: None,
                offset: addr,
            }
        }
    }

    /// Checks an access of `size` bytes through `p`; yields the allocation and
    /// the offset.
    pub fn check(
        &self,
        p: Ptr,
        size: u64,
        align: u64,
        write: bool,
        who: Who,
    ) -> Result<(AllocId, u64), Fault> {
        let verb = who.verb;
        let Some(id) = p.target else {
            let what = if p.offset == 0 {
                "a null pointer".to_owned()
            } else {
                format!("address {:#x}, which is in no allocation", p.offset)
            };
            return Err(fault(
                FaultKind::NullOrWild,
                format!("{verb} through {what}"),
            ));
        };
        let Some(a) = self.get(id) else {
            return Err(fault(
                FaultKind::NullOrWild,
                format!("{verb} through a pointer to no allocation"),
            ));
        };
        if !a.live {
            return Err(match &a.owner {
                Owner::Local { func, inst, .. } => fault(
                    FaultKind::StaleFrame,
                    format!(
                        "{verb} through a pointer into the dead frame of {func} (its stack slot {inst} died when {func} returned)"
                    ),
                ),
                other => fault(
                    FaultKind::StaleFrame,
                    format!(
                        "{verb} through a pointer into {}, which is no longer live",
                        other.describe()
                    ),
                ),
            });
        }
        if p.space != AddressSpace::Generic && p.space != a.space {
            return Err(fault(
                FaultKind::WrongSpace,
                format!(
                    "{verb} through a {} pointer into {}, which lives in {} memory",
                    p.space.name(),
                    a.owner.describe(),
                    a.space.name()
                ),
            ));
        }
        match a.owner {
            Owner::Local { thread, .. } if thread != who.thread => {
                return Err(fault(
                    FaultKind::Foreign,
                    format!(
                        "{verb} into {}, on another thread's stack",
                        a.owner.describe()
                    ),
                ));
            }
            Owner::Shared { block, .. } if block != who.block => {
                return Err(fault(
                    FaultKind::Foreign,
                    format!("{verb} into {}, from another block", a.owner.describe()),
                ));
            }
            _ => {}
        }
        let end = p.offset.checked_add(size);
        if end.is_none_or(|e| e > a.size) {
            return Err(fault(
                FaultKind::OutOfBounds,
                format!(
                    "{verb} of {size} bytes at offset {} of {}, which has {} bytes",
                    p.offset as i64,
                    a.owner.describe(),
                    a.size
                ),
            ));
        }
        let need = align.min(a.align).max(1);
        if !p.offset.is_multiple_of(need) {
            return Err(fault(
                FaultKind::Misaligned,
                format!(
                    "{verb} at offset {} of {} breaks its alignment of {need}",
                    p.offset,
                    a.owner.describe()
                ),
            ));
        }
        if write && a.read_only {
            return Err(fault(
                FaultKind::ReadOnly,
                format!("{verb} writes read-only memory: {}", a.owner.describe()),
            ));
        }
        if write && a.lent_read_only {
            return Err(fault(
                FaultKind::ReadOnly,
                format!(
                    "{verb} writes {}, which the kernel takes as a `readonly` parameter \
                     (a shared reference: nothing may write it during the launch)",
                    a.owner.describe()
                ),
            ));
        }
        Ok((id, p.offset))
    }

    /// Loads a `ty` at `off` of `id`, an access that [`check`](Self::check)
    /// has passed. A scalar must be wholly written; an aggregate carries wholly
    /// unwritten scalars along as undefined values.
    pub fn read_at(
        &self,
        id: AllocId,
        off: u64,
        ty: Ty,
        types: &Types,
        who: Who,
    ) -> Result<Val, Fault> {
        let a = self
            .get(id)
            .ok_or_else(|| fault(FaultKind::Internal, "read of no allocation".to_owned()))?;
        read_val(self, a, off, ty, types, true, who)
    }

    /// Stores `val`, of type `ty`, at `off` of `id`, an access that
    /// [`check`](Self::check) has passed.
    pub fn write_at(
        &mut self,
        id: AllocId,
        off: u64,
        ty: Ty,
        val: &Val,
        types: &Types,
    ) -> Result<(), Fault> {
        let a = self
            .allocs
            .get_mut(id.0 as usize)
            .ok_or_else(|| fault(FaultKind::Internal, "write of no allocation".to_owned()))?;
        // Unwritten bytes travel from stack slot to stack slot only.
        if let Val::Partial { origin, .. } = val
            && !matches!(a.owner, Owner::Local { .. })
        {
            return Err(fault(
                FaultKind::Uninit,
                format!(
                    "a store to {} of a value loaded from {origin}, which was never written",
                    a.owner.describe()
                ),
            ));
        }
        write_val(a, off, ty, val, types)
    }

    /// Host write: defines `bytes` at `off` of a live allocation (no checks but
    /// bounds, which the caller has done).
    pub fn host_write(&mut self, id: AllocId, off: u64, bytes: &[u8]) {
        if let Some(a) = self.allocs.get_mut(id.0 as usize) {
            a.put_bytes(off, bytes);
        }
    }

    /// Writes a pointer slot (a relocation) at `off`.
    pub fn host_write_ptr(&mut self, id: AllocId, off: u64, p: Ptr) {
        if let Some(a) = self.allocs.get_mut(id.0 as usize) {
            a.put_ptr(off, p);
        }
    }

    /// Host read: the allocation's bytes, or the offset of the first unwritten one.
    pub fn host_read(&self, id: AllocId) -> Result<Vec<u8>, u64> {
        let Some(a) = self.get(id) else {
            return Ok(Vec::new());
        };
        match a.init.iter().position(|&i| !i) {
            Some(first) => Err(first as u64),
            None => Ok(a.bytes.clone()),
        }
    }
}

impl Allocation {
    fn range(&self, off: u64, n: u64) -> std::ops::Range<usize> {
        off as usize..(off + n) as usize
    }

    fn clear_ptrs(&mut self, off: u64, n: u64) {
        let lo = off.saturating_sub(layout::POINTER_SIZE - 1);
        let hit: Vec<u64> = self.ptrs.range(lo..off + n).map(|(k, _)| *k).collect();
        for k in hit {
            if k + layout::POINTER_SIZE > off {
                self.ptrs.remove(&k);
            }
        }
    }

    fn put_bytes(&mut self, off: u64, bytes: &[u8]) {
        let n = bytes.len() as u64;
        self.clear_ptrs(off, n);
        let r = self.range(off, n);
        self.bytes[r.clone()].copy_from_slice(bytes);
        self.init[r].fill(true);
    }

    fn put_undef(&mut self, off: u64, n: u64) {
        self.clear_ptrs(off, n);
        let r = self.range(off, n);
        self.init[r].fill(false);
    }

    fn put_ptr(&mut self, off: u64, p: Ptr) {
        self.put_bytes(off, &p.addr().to_le_bytes());
        if p.target.is_some() {
            self.ptrs.insert(off, p);
        }
    }
}

fn read_val(
    mem: &Memory,
    a: &Allocation,
    off: u64,
    ty: Ty,
    types: &Types,
    strict: bool,
    who: Who,
) -> Result<Val, Fault> {
    // An integer from a stack slot may lack bytes: it is carried as a
    // `Val::Partial` to its use (see there). Any other read must be whole.
    let carried = |n: u64| -> Option<Val> {
        let TyKind::Int(bits) = types.kind(ty) else {
            return None;
        };
        if !matches!(a.owner, Owner::Local { .. }) || n > 16 {
            return None;
        }
        let r = a.range(off, n);
        let init = &a.init[r.clone()];
        let first = init.iter().position(|&i| !i)?;
        let mut buf = [0u8; 16];
        let mut defined = 0u16;
        for (k, (&b, &i)) in a.bytes[r].iter().zip(init).enumerate() {
            if i {
                buf[k] = b;
                defined |= 1 << k;
            }
        }
        Some(Val::Partial {
            bits: *bits,
            v: u128::from_le_bytes(buf) & mask(*bits),
            defined,
            origin: format!("byte {} of {}", off + first as u64, a.owner.describe()).into(),
        })
    };
    let leaf = |n: u64| -> Result<Option<u128>, Fault> {
        let r = a.range(off, n);
        let init = &a.init[r.clone()];
        if !strict && init.iter().all(|&i| !i) {
            return Ok(None);
        }
        if let Some(i) = init.iter().position(|&i| !i) {
            return Err(fault(
                FaultKind::Uninit,
                format!(
                    "{} reads byte {} of {}, which was never written",
                    who.verb,
                    off + i as u64,
                    a.owner.describe()
                ),
            ));
        }
        let mut buf = [0u8; 16];
        buf[..n as usize].copy_from_slice(&a.bytes[r]);
        Ok(Some(u128::from_le_bytes(buf)))
    };
    if strict && let Some(v) = carried(layout::size_of(types, ty)) {
        return Ok(v);
    }
    Ok(match types.kind(ty) {
        TyKind::Int(bits) => match leaf(layout::size_of(types, ty))? {
            Some(v) => Val::Int {
                bits: *bits,
                v: v & mask(*bits),
            },
            None => Val::Undef,
        },
        TyKind::F32 => leaf(4)?.map_or(Val::Undef, |v| Val::F32(v as u32)),
        TyKind::F64 => leaf(8)?.map_or(Val::Undef, |v| Val::F64(v as u64)),
        TyKind::Ptr { space, .. } => match leaf(8)? {
            None => Val::Undef,
            Some(addr) => match a.ptrs.get(&off) {
                Some(p) => Val::Ptr(Ptr {
                    space: *space,
                    ..*p
                }),
                None => Val::Ptr(mem.ptr_from_addr(addr as u64, *space)),
            },
        },
        TyKind::Array { elem, len } => {
            let stride = layout::size_of(types, *elem);
            let mut out = Vec::with_capacity((*len).min(4096) as usize);
            for i in 0..*len {
                out.push(read_val(
                    mem,
                    a,
                    off + i * stride,
                    *elem,
                    types,
                    false,
                    who,
                )?);
            }
            Val::Agg(out)
        }
        TyKind::Struct { fields, .. } => {
            let mut out = Vec::with_capacity(fields.len());
            for (i, &f) in fields.iter().enumerate() {
                let fo = layout::field_offset(types, ty, i).unwrap_or(0);
                out.push(read_val(mem, a, off + fo, f, types, false, who)?);
            }
            Val::Agg(out)
        }
    })
}

fn write_val(a: &mut Allocation, off: u64, ty: Ty, val: &Val, types: &Types) -> Result<(), Fault> {
    let size = layout::size_of(types, ty);
    match (types.kind(ty), val) {
        (_, Val::Undef) => a.put_undef(off, size),
        (TyKind::Int(_), Val::Partial { v, defined, .. }) => {
            let bytes = v.to_le_bytes();
            for k in 0..size.min(16) {
                if defined & (1 << k) != 0 {
                    a.put_bytes(off + k, &bytes[k as usize..k as usize + 1]);
                } else {
                    a.put_undef(off + k, 1);
                }
            }
        }
        (TyKind::Int(_), Val::Int { v, .. }) => {
            a.put_bytes(off, &v.to_le_bytes()[..size as usize]);
        }
        (TyKind::F32, Val::F32(bits)) => a.put_bytes(off, &bits.to_le_bytes()),
        (TyKind::F64, Val::F64(bits)) => a.put_bytes(off, &bits.to_le_bytes()),
        (TyKind::Ptr { .. }, Val::Ptr(p)) => a.put_ptr(off, *p),
        // Aggregates store their scalars only; padding bytes keep what they held,
        // so a zeroed output buffer of structs still reads back whole.
        (TyKind::Array { elem, .. }, Val::Agg(items)) => {
            let stride = layout::size_of(types, *elem);
            for (i, item) in items.iter().enumerate() {
                write_val(a, off + i as u64 * stride, *elem, item, types)?;
            }
        }
        (TyKind::Struct { fields, .. }, Val::Agg(items)) => {
            for (i, (&f, item)) in fields.iter().zip(items).enumerate() {
                let fo = layout::field_offset(types, ty, i).unwrap_or(0);
                write_val(a, off + fo, f, item, types)?;
            }
        }
        (_, other) => {
            return Err(fault(
                FaultKind::Internal,
                format!("stores {} as {}", other.kind(), types.display(ty)),
            ));
        }
    }
    Ok(())
}
