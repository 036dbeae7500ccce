//! Data-race detection, in the manner of compute-sanitizer's racecheck: two
//! accesses to one byte of global or shared memory by different threads, at
//! least one a write and not both atomic, that happens-before does not order.
//!
//! Happens-before is tracked with vector clocks (compressed, see
//! [`clock`](super::clock)), one per thread:
//!
//! - program order: a thread's own accesses never race;
//! - barriers (`bar.sync`): when a block's barrier completes, every thread of
//!   the block learns what all of them knew, and every event of the block
//!   before the barrier;
//! - release/acquire: each atomic location has a release clock. A release (or
//!   stronger) store sets it to the writer's clock; a release (or stronger)
//!   read-modify-write joins the writer's clock into it; a relaxed RMW leaves it
//!   (C++20 release sequences: RMWs continue them); a relaxed store empties it.
//!   An acquire (or stronger) load or RMW joins it into the reader's clock. A
//!   compare-and-swap that fails is a load with its ordering's acquire part;
//! - fences: the device IR's acquire, release and acq_rel fences are all
//!   `fence.acq_rel` on the GPU, so each is both. A relaxed store or RMW after a
//!   release fence publishes the clock of the fence; a relaxed load or RMW
//!   remembers the location's release clock, and the thread learns it at its
//!   next acquire fence;
//! - `seq_cst`: a `fence.sc`, and seq_cst atomics (which the device IR defines
//!   as `fence.sc` then the acquire, release or acq_rel operation), are totally
//!   ordered, and in the PTX model each one synchronizes with the next: a global
//!   clock carries that order.
//!
//! Cost: plain accesses and relaxed atomics cost a shadow update of a few
//! entries (about 1.05x on the fixtures, 1.2x on a 64K-thread saxpy, in debug
//! builds). A chain of acquiring atomics on one location, or of seq_cst
//! operations, copies a clock that grows with the threads in the chain, so `k`
//! threads each doing a seq_cst RMW cost `O(k)` each (`O(k^2)` in all).
//!
//! Scopes are not modelled: every atomic is taken to reach every thread of the
//! launch (the lowering emits `.sys` scope). Relaxed atomics give no
//! happens-before. Read-only memory and local memory are not tracked: they
//! cannot race. The state lives for one launch: a launch boundary orders
//! everything.

use std::collections::HashMap;

use device_ir::{AddressSpace, FuncId, Inst, InstData, Module, Ordering, layout};

use super::clock::{Clock, epoch};
use super::error::{Fault, FaultKind};
use super::exec::Ctx;
use super::memory::{Memory, Owner};
use super::report::{AccessKind, RaceAccess, RaceMemory, RaceReport};
use super::shadow::{Conflict, Entry, Shadow, View};
use super::value::AllocId;
use crate::device::{Buffer, LaunchConfig};

/// One thread's synchronization state.
#[derive(Default)]
struct ThreadSync {
    /// Barriers passed.
    phase: u32,
    /// Release operations done in this phase.
    n: u32,
    /// What the thread knows of other threads (its own block's earlier phases
    /// are implied by `phase`).
    know: Clock,
    /// Fence state, made on the thread's first fence or relaxed atomic read of
    /// a published location.
    fences: Option<Box<Fences>>,
}

#[derive(Default)]
struct Fences {
    /// The thread's clock at its last release fence.
    released: Option<Clock>,
    /// Release clocks read by relaxed reads since the last acquire fence.
    pending: Clock,
}

/// The race checks of the executor's memory instructions.
impl Ctx<'_> {
    /// Checks a plain access for races (when the launch checks them) and
    /// records it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn plain(
        &mut self,
        tid: u32,
        at: (FuncId, Inst),
        id: AllocId,
        off: u64,
        size: u64,
        kind: AccessKind,
    ) -> Result<(), Fault> {
        match self.race.as_mut() {
            Some(r) => r.access(self.mem, tid, at, id, off, size, kind),
            None => Ok(()),
        }
    }

    /// The same for an atomic access, with its synchronization.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic(
        &mut self,
        tid: u32,
        at: (FuncId, Inst),
        id: AllocId,
        off: u64,
        size: u64,
        op: AtomicOp,
        ordering: Ordering,
    ) -> Result<(), Fault> {
        match self.race.as_mut() {
            Some(r) => r.atomic(self.mem, tid, at, id, off, size, op, ordering),
            None => Ok(()),
        }
    }
}

/// The instructions of a module, numbered densely: the site of `inst` of
/// function `f` is `base[f] + inst`.
struct Sites {
    base: Vec<u32>,
}

impl Sites {
    fn new(module: &Module) -> Self {
        let mut base = Vec::with_capacity(module.functions.len());
        let mut next = 0u32;
        for f in module.functions.values() {
            base.push(next);
            let n = f.body.as_ref().map_or(0, |b| b.insts.len());
            next = next.saturating_add(n as u32);
        }
        Sites { base }
    }

    fn site(&self, func: FuncId, inst: Inst) -> u32 {
        use cranelift_entity::EntityRef;
        self.base[func.index()] + inst.index() as u32
    }

    fn decode(&self, site: u32) -> (FuncId, Inst) {
        use cranelift_entity::EntityRef;
        // The last function whose base is at most `site` (empty bodies share
        // their successor's base, and own no site).
        let f = self.base.partition_point(|&b| b <= site).saturating_sub(1);
        (FuncId::new(f), Inst::new((site - self.base[f]) as usize))
    }
}

/// An atomic access, for [`Detector::atomic`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    Load,
    Store,
    Rmw,
    /// A compare-and-swap that did not store: a load.
    FailedCas,
}

fn acquires(o: Ordering) -> bool {
    matches!(o, Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst)
}

fn releases(o: Ordering) -> bool {
    matches!(o, Ordering::Release | Ordering::AcqRel | Ordering::SeqCst)
}

/// The race between an earlier entry and the access that found it.
#[derive(Clone, Debug)]
pub(crate) struct Hit {
    conflict: Conflict,
    later: Entry,
    later_off: u64,
    alloc: AllocId,
}

/// The race detector of one launch.
pub(crate) struct Detector {
    sites: Sites,
    config: LaunchConfig,
    per_block: u32,
    threads: Vec<ThreadSync>,
    /// Shadow of each tracked allocation touched, by `AllocId` (index into
    /// `shadows` plus one; 0 for none).
    slot: Vec<u32>,
    shadows: Vec<Shadow>,
    /// The release clock of each atomic location, by allocation and offset.
    released: HashMap<(AllocId, u64), Clock>,
    /// The clock of the last `fence.sc`.
    sc: Clock,
}

impl Detector {
    pub fn new(module: &Module, config: LaunchConfig) -> Self {
        let per_block = (config.block.count() as u32).max(1);
        let n = (config.grid.count() * config.block.count()) as usize;
        Detector {
            sites: Sites::new(module),
            config,
            per_block,
            threads: (0..n).map(|_| ThreadSync::default()).collect(),
            slot: Vec::new(),
            shadows: Vec::new(),
            released: HashMap::new(),
            sc: Clock::default(),
        }
    }

    fn block_of(&self, tid: u32) -> u32 {
        tid / self.per_block
    }

    /// The shadow of `id`, if the allocation is tracked: global or shared, and
    /// writable.
    fn shadow(&mut self, mem: &Memory, id: AllocId) -> Option<&mut Shadow> {
        let i = id.0 as usize;
        if let Some(&s) = self.slot.get(i)
            && s != 0
        {
            return self.shadows.get_mut(s as usize - 1);
        }
        let a = mem.get(id)?;
        if a.read_only || !matches!(a.space, AddressSpace::Global | AddressSpace::Shared) {
            return None;
        }
        if self.slot.len() <= i {
            self.slot.resize(i + 1, 0);
        }
        self.shadows.push(Shadow::default());
        self.slot[i] = self.shadows.len() as u32;
        self.shadows.last_mut()
    }

    /// Checks and records an access; a race is a fault carrying the [`Hit`].
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        mem: &Memory,
        tid: u32,
        at: (FuncId, Inst),
        id: AllocId,
        off: u64,
        size: u64,
        kind: AccessKind,
    ) -> Result<(), Fault> {
        let site = self.sites.site(at.0, at.1);
        let per_block = self.per_block;
        let Some(t) = self.threads.get(tid as usize) else {
            return Ok(());
        };
        let x = Entry {
            tid,
            site,
            phase: t.phase,
            n: t.n,
            back: 0,
            mask: 0,
            kind,
        };
        // Borrow the clock apart from the shadow.
        let threads = std::mem::take(&mut self.threads);
        let t = &threads[tid as usize];
        let view = View {
            tid,
            block: tid / per_block,
            phase: t.phase,
            per_block,
            know: &t.know,
        };
        let result = match self.shadow(mem, id) {
            Some(s) => s.access(off, size, x, &view),
            None => Ok(()),
        };
        self.threads = threads;
        result.map_err(|conflict| {
            let mut f = Fault::new(FaultKind::Internal, "data race");
            f.race = Some(Box::new(Hit {
                conflict,
                later: x,
                later_off: off,
                alloc: id,
            }));
            f
        })
    }

    /// The clock that a release by `tid` now publishes.
    fn snapshot(&self, tid: u32) -> Clock {
        let t = &self.threads[tid as usize];
        let mut c = t.know.clone();
        c.raise_gen(self.block_of(tid), t.phase);
        c.raise_thread(tid, epoch(t.phase, t.n));
        c
    }

    /// Ends the thread's current release interval: what it does next is not
    /// covered by what it has published.
    fn advance(&mut self, tid: u32) {
        let t = &mut self.threads[tid as usize];
        t.n = t.n.saturating_add(1);
    }

    fn acquire(&mut self, tid: u32, c: &Clock) {
        if !c.is_empty() {
            self.threads[tid as usize].know.join(c);
        }
    }

    /// `fence.sc`: an acq_rel fence, ordered after every earlier one.
    fn sc_fence(&mut self, tid: u32) {
        self.fence(tid, Ordering::AcqRel);
        let sc = std::mem::take(&mut self.sc);
        self.acquire(tid, &sc);
        self.sc = self.snapshot(tid);
        self.advance(tid);
    }

    /// A fence of `ordering` by `tid`.
    pub fn fence(&mut self, tid: u32, ordering: Ordering) {
        if ordering == Ordering::SeqCst {
            return self.sc_fence(tid);
        }
        if ordering == Ordering::Relaxed {
            return;
        }
        // Acquire, release and acq_rel are all `fence.acq_rel` on the GPU.
        let pending = self.threads[tid as usize]
            .fences
            .as_mut()
            .map(|f| std::mem::take(&mut f.pending));
        if let Some(p) = pending {
            self.acquire(tid, &p);
        }
        let snap = self.snapshot(tid);
        let t = &mut self.threads[tid as usize];
        t.fences.get_or_insert_with(Default::default).released = Some(snap);
        self.advance(tid);
    }

    /// An atomic access: its synchronization, and its check as an access.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic(
        &mut self,
        mem: &Memory,
        tid: u32,
        at: (FuncId, Inst),
        id: AllocId,
        off: u64,
        size: u64,
        op: AtomicOp,
        ordering: Ordering,
    ) -> Result<(), Fault> {
        if ordering == Ordering::SeqCst {
            self.sc_fence(tid);
        }
        let key = (id, off);
        let reads = op != AtomicOp::Store;
        if reads && let Some(c) = self.released.get(&key) {
            if acquires(ordering) {
                let c = c.clone();
                self.acquire(tid, &c);
            } else {
                let t = &mut self.threads[tid as usize];
                t.fences
                    .get_or_insert_with(Default::default)
                    .pending
                    .join(c);
            }
        }
        let kind = match op {
            AtomicOp::Load | AtomicOp::FailedCas => AccessKind::AtomicRead,
            AtomicOp::Store => AccessKind::AtomicWrite,
            AtomicOp::Rmw => AccessKind::AtomicRmw,
        };
        self.access(mem, tid, at, id, off, size, kind)?;
        let fenced = self.threads[tid as usize]
            .fences
            .as_ref()
            .and_then(|f| f.released.clone());
        match op {
            AtomicOp::Load | AtomicOp::FailedCas => {}
            AtomicOp::Store if releases(ordering) => {
                let snap = self.snapshot(tid);
                self.released.insert(key, snap);
                self.advance(tid);
            }
            AtomicOp::Store => match fenced {
                Some(c) => {
                    self.released.insert(key, c);
                }
                None => {
                    self.released.remove(&key);
                }
            },
            AtomicOp::Rmw => {
                let publish = if releases(ordering) {
                    Some(self.snapshot(tid))
                } else {
                    fenced
                };
                if let Some(c) = publish {
                    self.released.entry(key).or_default().join(&c);
                }
                if releases(ordering) {
                    self.advance(tid);
                }
            }
        }
        Ok(())
    }

    /// A `__syncwarp` of the threads `tids` completed: each learns what all
    /// of them did before it.
    pub fn warp_sync(&mut self, tids: &[u32]) {
        let mut joined = Clock::default();
        for &t in tids {
            joined.join(&self.snapshot(t));
        }
        for &t in tids {
            self.acquire(t, &joined);
            self.advance(t);
        }
    }

    /// The barrier of block `block` completed: every thread of the block
    /// learns what all of them knew, and everything the block did before it.
    pub fn barrier(&mut self, block: u32) {
        let first = (block * self.per_block) as usize;
        let range = first..first + self.per_block as usize;
        let Some(threads) = self.threads.get_mut(range) else {
            return;
        };
        let generation = threads.first().map_or(0, |t| t.phase) + 1;
        let mut joined = Clock::default();
        for t in threads.iter() {
            joined.join(&t.know);
        }
        let per_block = self.per_block;
        joined.forget_block(block, generation, |tid| tid / per_block);
        for t in threads.iter_mut() {
            t.know = joined.clone();
            t.phase = generation;
            t.n = 0;
        }
    }

    /// The public report of a race that [`access`](Self::access) found.
    pub fn report(&self, module: &Module, mem: &Memory, kernel: &str, hit: &Hit) -> RaceReport {
        let (space, memory) = match mem.get(hit.alloc) {
            Some(a) => (
                a.space,
                match &a.owner {
                    Owner::Buffer(i) => RaceMemory::Buffer { buffer: Buffer(*i) },
                    Owner::Global { symbol } => RaceMemory::Global {
                        symbol: symbol.to_string(),
                    },
                    Owner::Shared { symbol, block } => RaceMemory::Shared {
                        symbol: symbol.to_string(),
                        block: *block,
                    },
                    Owner::Local { func, .. } => RaceMemory::Global {
                        symbol: func.to_string(),
                    },
                    // Read-only: no access to it races. Named for completeness.
                    Owner::Param { index } => RaceMemory::Global {
                        symbol: format!("parameter {index}"),
                    },
                    // Empty: nothing reaches it.
                    Owner::Code { func } => RaceMemory::Global {
                        symbol: func.to_string(),
                    },
                },
            ),
            None => (
                AddressSpace::Global,
                RaceMemory::Global {
                    symbol: String::new(),
                },
            ),
        };
        let side = |e: &Entry, offset: u64| -> RaceAccess {
            let (func, inst) = self.sites.decode(e.site);
            let (function, inst_text, size) = describe(module, func, inst);
            let (block, thread) = self.ids(e.tid);
            RaceAccess {
                block,
                thread,
                kernel: kernel.to_owned(),
                function,
                inst: inst_text,
                kind: e.kind,
                space,
                memory: memory.clone(),
                offset,
                size,
            }
        };
        let c = &hit.conflict;
        RaceReport {
            first: side(&c.earlier, c.earlier.start(c.word)),
            second: side(&hit.later, hit.later_off),
            byte: c.byte,
        }
    }

    /// The block and thread indices of thread `tid`.
    fn ids(&self, tid: u32) -> ([u32; 3], [u32; 3]) {
        let (g, b) = (self.config.grid, self.config.block);
        let (blk, t) = (tid / self.per_block, tid % self.per_block);
        (
            [blk % g.x, (blk / g.x) % g.y, blk / (g.x * g.y)],
            [t % b.x, (t / b.x) % b.y, t / (b.x * b.y)],
        )
    }
}

/// The function's name, the instruction as faults name it, and the bytes it
/// accesses.
fn describe(module: &Module, func: FuncId, inst: Inst) -> (String, String, u64) {
    let Some(f) = module.functions.get(func) else {
        return (String::new(), format!("{inst}"), 0);
    };
    let Some(body) = &f.body else {
        return (f.name.clone(), format!("{inst}"), 0);
    };
    let text = format!(
        "{inst} ({})",
        device_ir::display::display_inst(module, body, inst)
    );
    let ty = match body.insts.get(inst) {
        Some(InstData::Load { ty, .. } | InstData::AtomicLoad { ty, .. }) => Some(*ty),
        Some(
            InstData::Store { value, .. }
            | InstData::AtomicStore { value, .. }
            | InstData::AtomicRmw { value, .. }
            | InstData::AtomicCas {
                expected: value, ..
            },
        ) => Some(body.value_ty(*value)),
        _ => None,
    };
    let size = ty.map_or(0, |t| layout::size_of(&module.types, t));
    (f.name.clone(), text, size)
}
