//! The virtual device: a CPU executor of verified `device_ir` modules that checks
//! every memory access.
//!
//! - One simulated thread per GPU thread, with `__syncthreads` barriers and a
//!   deterministic schedule: all threads of all blocks take turns in one fixed
//!   order (block-major, then thread index, x fastest); a thread runs until it
//!   arrives at a barrier, exits, or has run [`Limits::quantum`] instructions, so a
//!   thread spinning on a flag is preempted and the writer runs. A barrier
//!   completes when every thread of the block has arrived; a thread exiting while
//!   others wait, or arriving after another has exited, is a deadlock fault. A
//!   thread running more than [`Limits::max_steps`] instructions is a timeout
//!   fault naming the thread.
//! - Separate memories: global (buffers and mutable globals), read-only
//!   (immutable globals), shared (one instance per block and launch) and local
//!   (one allocation per executed `alloca`, dead once its function returns).
//! - Tagged pointers: (static address space, allocation, offset), the
//!   allocation's id serving as its generation since ids are never reused. A
//!   generic pointer remembers its real space through its allocation. Pointers
//!   stored in memory keep their tag (a provenance side table), and `ptrtoint`
//!   / `inttoptr` round-trip through a fake address (4 GiB per allocation).
//! - Every access through a stale, null, wild, out-of-bounds, misaligned,
//!   foreign or wrong-space pointer, every write to read-only memory and every
//!   read of unwritten bytes is an [`ExecError`] naming the kernel, the function
//!   and the instruction. Never a silent zero.
//!
//! - Data races on global and shared memory are found, in the manner of
//!   compute-sanitizer's racecheck but with atomics and release/acquire
//!   understood: two accesses to one byte by different threads, at least one a
//!   write and not both atomic, that neither barriers nor release/acquire pairs
//!   order, stop the launch with a [`RaceReport`] naming both (see
//!   [`race`](self::race) for the happens-before rules). The first racing
//!   access of the deterministic schedule is the one reported, so a launch
//!   always reports the same race. [`Limits::detect_races`] turns this off.
//!
//! Unsupported: inline PTX other than `trap;` (the structured atomics cover what
//! the lowering emits); calls to declarations without a body. Atomics run whole
//! and at once, so values are those of a sequentially consistent execution;
//! orderings and fences matter only to race detection.

mod calls;
mod clock;
mod error;
mod exec;
mod math;
mod memory;
mod ops;
mod race;
mod report;
mod sched;
mod shadow;
mod value;
mod warp;

use std::collections::HashMap;
use std::sync::Arc;

use cranelift_entity::EntityRef;
use device_ir::{AddressSpace, Module, RelocTarget, verify};

pub use error::{ExecError, FaultKind};
// Shared with the PTX device: faults, the schedule, warp collectives.
pub(crate) use error::Fault;
pub(crate) use exec::{Step, WarpCall, WarpKind};
pub use report::{AccessKind, RaceAccess, RaceMemory, RaceReport};
pub(crate) use sched::{Executor, for_each_thread, schedule};
pub(crate) use value::Val;

use self::exec::Ctx;
use self::memory::{Memory, Owner};
use self::value::{AllocId, Ptr};
use super::{
    Buffer, Device, DeviceError, KernelArg, LaunchConfig, ModuleHandle, Program, abi, buffer_range,
    entry,
};

/// The limits of one launch, and what it checks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Instructions that one thread may execute in one launch before it is a
    /// timeout fault. Per thread, not per launch, so that a large grid of
    /// short threads is not mistaken for a loop; a fixture's `step_limit` maps
    /// onto it. Default: 10,000,000.
    pub max_steps: u64,
    /// Instructions a thread runs on its turn before the next thread's turn.
    pub quantum: u32,
    /// Frames on one thread's call stack before a stack-overflow fault.
    pub max_call_depth: usize,
    /// Threads in one launch (grid times block) the device accepts.
    pub max_threads: u64,
    /// Whether launches check for data races (on by default; off only to
    /// measure what the check costs, or to run a kernel known to race).
    pub detect_races: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 10_000_000,
            quantum: 1000,
            max_call_depth: 256,
            max_threads: 1 << 20,
            detect_races: true,
        }
    }
}

struct Loaded {
    module: Module,
    globals: Vec<Option<AllocId>>,
    /// Each function's code (empty), whose address `func_addr` gives.
    code: Vec<AllocId>,
    func_names: Vec<Arc<str>>,
    global_names: Vec<Arc<str>>,
}

/// The virtual device. See the [module docs](self).
#[derive(Default)]
pub struct VirtualDevice {
    limits: Limits,
    mem: Memory,
    modules: Vec<Loaded>,
    buffers: Vec<(AllocId, u64)>,
    barriers: u64,
    instructions: u64,
}

impl VirtualDevice {
    /// A device with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A device with `limits`.
    pub fn with_limits(limits: Limits) -> Self {
        VirtualDevice {
            limits,
            ..Self::default()
        }
    }

    /// The barriers each thread of block 0 passed, summed over every launch
    /// that completed on this device: what a thread executes, loops unrolled,
    /// which the `ptx-forms` shape check compares with optimized PTX.
    pub fn barriers_passed(&self) -> u64 {
        self.barriers
    }

    /// Thread-instructions executed by every launch that completed on this
    /// device (the PTX device's benchmark compares throughputs with it).
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    fn buffer(&self, buffer: Buffer) -> Result<(AllocId, u64), DeviceError> {
        entry(&self.buffers, buffer.0, "buffer").copied()
    }

    fn arg_val(&self, arg: &KernelArg, space: AddressSpace) -> Result<Val, DeviceError> {
        Ok(match *arg {
            // `launch` makes an aggregate's copy; it is no value.
            KernelArg::Bytes(_) => {
                return Err(DeviceError::Unsupported(
                    "an aggregate's bytes as a scalar argument".to_owned(),
                ));
            }
            KernelArg::F32(v) => Val::F32(v.to_bits()),
            KernelArg::F64(v) => Val::F64(v.to_bits()),
            KernelArg::Null => Val::Ptr(Ptr::null(space)),
            KernelArg::Buffer(b) => self.arg_val(&KernelArg::BufferAt(b, 0), space)?,
            KernelArg::BufferAt(b, offset) => {
                let (id, _) = self.buffer(b)?;
                Val::Ptr(Ptr {
                    space,
                    target: Some(id),
                    offset,
                })
            }
            _ => Val::int(
                abi::int_bits(arg).unwrap_or(64),
                abi::scalar_bits(arg).unwrap_or(0),
            ),
        })
    }
}

fn exec_setup(e: error::Fault) -> DeviceError {
    DeviceError::Unsupported(e.message)
}

impl Device for VirtualDevice {
    fn describe(&self) -> String {
        "virtual device".to_owned()
    }

    fn load(&mut self, program: &Program<'_>) -> Result<ModuleHandle, DeviceError> {
        let module = program.ir.ok_or(DeviceError::MissingInput {
            device: "virtual device",
            what: "device IR",
        })?;
        verify(module)?;
        let global_names: Vec<Arc<str>> = module
            .globals
            .values()
            .map(|g| Arc::from(g.symbol.as_str()))
            .collect();
        let mut globals = vec![None; module.globals.len()];
        for (id, g) in module.globals.iter() {
            if g.space == AddressSpace::Shared {
                continue;
            }
            let owner = Owner::Global {
                symbol: global_names[id.index()].clone(),
            };
            let alloc = self
                .mem
                .alloc(owner, g.space, g.size, u64::from(g.align), !g.mutable)
                .map_err(exec_setup)?;
            if let Some(init) = &g.init {
                // An initializer's undefined bytes (a constant's padding) are
                // zero in the PTX that libNVVM prints, so in GPU memory too:
                // a byte-wise copy of a padded constant reads them.
                let image: Vec<u8> = init.image().into_iter().map(|b| b.unwrap_or(0)).collect();
                self.mem.host_write(alloc, 0, &image);
            }
            globals[id.index()] = Some(alloc);
        }
        let func_names: Vec<Arc<str>> = module
            .functions
            .values()
            .map(|f| Arc::from(f.name.as_str()))
            .collect();
        let code = func_names
            .iter()
            .map(|name| {
                let owner = Owner::Code { func: name.clone() };
                self.mem
                    .alloc(owner, AddressSpace::Global, 0, 1, true)
                    .map_err(exec_setup)
            })
            .collect::<Result<Vec<AllocId>, _>>()?;
        // Relocations, once every global and function has its allocation.
        for (id, g) in module.globals.iter() {
            let (Some(init), Some(alloc)) = (&g.init, globals[id.index()]) else {
                continue;
            };
            for r in &init.relocations {
                let target = match r.target {
                    RelocTarget::Global(t) => globals.get(t.index()).copied().flatten(),
                    RelocTarget::Func(f) => code.get(f.index()).copied(),
                };
                let p = Ptr {
                    space: AddressSpace::Generic,
                    target,
                    offset: r.addend as u64,
                };
                self.mem.host_write_ptr(alloc, r.offset, p);
            }
        }
        self.modules.push(Loaded {
            module: module.clone(),
            globals,
            code,
            func_names,
            global_names,
        });
        Ok(ModuleHandle(self.modules.len() as u32 - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<Buffer, DeviceError> {
        let index = self.buffers.len() as u32;
        let id = self
            .mem
            .alloc(
                Owner::Buffer(index),
                AddressSpace::Global,
                bytes as u64,
                256,
                false,
            )
            .map_err(exec_setup)?;
        self.buffers.push((id, bytes as u64));
        Ok(Buffer(index))
    }

    fn write(&mut self, buffer: Buffer, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        let (id, len) = self.buffer(buffer)?;
        let start = buffer_range(buffer, offset as u64, bytes.len() as u64, len)?;
        self.mem.host_write(id, start, bytes);
        Ok(())
    }

    fn read(&mut self, buffer: Buffer) -> Result<Vec<u8>, DeviceError> {
        let (id, _) = self.buffer(buffer)?;
        self.mem
            .host_read(id)
            .map_err(|offset| DeviceError::UninitReadback {
                buffer: buffer.0,
                offset,
            })
    }

    fn write_symbol(
        &mut self,
        module: ModuleHandle,
        symbol: &str,
        bytes: &[u8],
    ) -> Result<(), DeviceError> {
        let loaded = entry(&self.modules, module.0, "module")?;
        let id = abi::host_written_global(&loaded.module, symbol, bytes.len())?;
        let alloc = loaded.globals[id.index()]
            .ok_or_else(|| DeviceError::bad_symbol(symbol, "it has no memory on this device"))?;
        self.mem.host_write(alloc, 0, bytes);
        Ok(())
    }

    fn launch(
        &mut self,
        module: ModuleHandle,
        kernel: &str,
        config: LaunchConfig,
        args: &[KernelArg],
    ) -> Result<(), DeviceError> {
        let loaded = entry(&self.modules, module.0, "module")?;
        let m = &loaded.module;
        let func = abi::find_kernel(m, kernel)?;
        abi::check_args(m, func, args)?;
        abi::check_shared_memory(m, func, config.shared_bytes)?;
        let (grid, block) = (config.grid.count(), config.block.count());
        if grid == 0 || block == 0 || block > 1024 || grid * block > self.limits.max_threads {
            return Err(DeviceError::Unsupported(format!(
                "launch of {} blocks of {} threads: blocks need 1 to 1024 threads, and the virtual device runs at most {} threads",
                config.grid, config.block, self.limits.max_threads
            )));
        }
        let params = &m.functions[func].sig.params;
        let mut vals = Vec::with_capacity(args.len());
        for (arg, &ty) in args.iter().zip(params) {
            let space = m
                .types
                .ptr_parts(ty)
                .map_or(AddressSpace::Generic, |(_, s)| s);
            vals.push(match arg {
                // Filled below, once nothing else can fail.
                KernelArg::Bytes(_) if m.types.is_ptr(ty) => None,
                _ => Some(self.arg_val(arg, space)?),
            });
        }
        // A whole buffer passed as a `readonly` parameter stays unwritten
        // for the launch (see `Allocation::lent_read_only`).
        let mut lent = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let promised = m.functions[func]
                .param_attrs
                .get(i)
                .is_some_and(|a| a.contains(device_ir::ParamAttrs::READONLY));
            if let (true, KernelArg::Buffer(b)) = (promised, arg) {
                lent.push(self.buffer(*b)?.0);
            }
        }
        // The launch's read-only copies of by-value aggregates, one for all
        // threads (the lowering copies one into a thread's own stack slot
        // before writing it); made last, so that no failure leaves one.
        let mut by_value = Vec::new();
        for (i, (arg, &ty)) in args.iter().zip(params).enumerate() {
            let (KernelArg::Bytes(aggregate), Some((pointee, space))) =
                (arg, m.types.ptr_parts(ty))
            else {
                continue;
            };
            let align = device_ir::layout::align_of(&m.types, pointee);
            let owner = Owner::Param { index: i as u32 };
            let size = aggregate.bytes.len() as u64;
            let made = aggregate
                .pointers
                .iter()
                .map(|&(at, b)| Ok((at, self.buffer(b)?.0)))
                .collect::<Result<Vec<_>, DeviceError>>()
                .and_then(|targets| {
                    let id = self
                        .mem
                        .alloc(owner, AddressSpace::Global, size, align, true)
                        .map_err(exec_setup)?;
                    Ok((id, targets))
                });
            let (id, targets) = match made {
                Ok(made) => made,
                Err(e) => {
                    by_value.iter().for_each(|&id| self.mem.kill(id));
                    return Err(e);
                }
            };
            self.mem.host_write(id, 0, &aggregate.bytes);
            // A pointer field is a generic pointer to the buffer's byte 0,
            // as a raw pointer in Rust is.
            for (at, target) in targets {
                let p = Ptr {
                    space: AddressSpace::Generic,
                    target: Some(target),
                    offset: 0,
                };
                self.mem.host_write_ptr(id, at, p);
            }
            by_value.push(id);
            vals[i] = Some(Val::Ptr(Ptr {
                space,
                target: Some(id),
                offset: 0,
            }));
        }
        // Every `None` was an aggregate's, filled above.
        let vals: Vec<Val> = vals.into_iter().flatten().collect();
        for &id in &lent {
            self.mem.lend_read_only(id, true);
        }
        let loaded = &self.modules[module.0 as usize];
        let mut ctx = Ctx {
            module: &loaded.module,
            func_names: &loaded.func_names,
            global_names: &loaded.global_names,
            globals: &loaded.globals,
            code: &loaded.code,
            shared: HashMap::new(),
            dynamic_shared_align: loaded.module.dynamic_shared_align().unwrap_or(1),
            config,
            mem: &mut self.mem,
            max_call_depth: self.limits.max_call_depth,
            race: self
                .limits
                .detect_races
                .then(|| race::Detector::new(&loaded.module, config)),
        };
        let result = sched::run(&mut ctx, func, kernel, &vals, &self.limits);
        let shared: Vec<AllocId> = ctx.shared.values().copied().collect();
        for &id in &lent {
            self.mem.lend_read_only(id, false);
        }
        // Shared memory and the by-value copies live for one launch.
        for id in shared.into_iter().chain(by_value) {
            self.mem.kill(id);
        }
        let (barriers, steps) = result?;
        self.barriers += barriers;
        self.instructions += steps;
        Ok(())
    }
}
