//! The PTX device: a CPU executor of the PTX that libNVVM makes at `-opt=3`,
//! the exact code a GPU would run, checked access by access.
//!
//! The IR device runs our device IR; a GPU runs libNVVM's PTX. What libNVVM
//! does in between (contraction into `fma`, its libdevice bodies, its
//! optimizations) is invisible to the first and unchecked on a CPU-only
//! machine without this one. Here every thread executes the PTX itself:
//!
//! - **Threads and warps**: one simulated thread per GPU thread under the IR
//!   device's deterministic schedule (`device::virt::schedule`),
//!   which is also sm_70+'s independent thread scheduling: divergent lanes
//!   run their own paths, and they reconverge where PTX says they must, at a
//!   warp collective (`shfl.sync`, `vote.sync`, `redux.sync`,
//!   `match.sync`, `bar.warp.sync`, `activemask`), which gathers the lanes
//!   of its mask that have not exited, as the IR device's do. `bar.sync 0` is the block barrier.
//! - **Memory** (`memory.rs`): `.global` buffers and variables, one `.shared`
//!   instance per block, one `.local` depot per frame, killed at `ret` (a
//!   pointer kept into it is a stale-frame fault), `.param` slots per frame
//!   (kernel parameters, and the call sequences' `st.param`/`ld.param`).
//!   Faults: null or wild addresses, out of bounds, wrong space, another
//!   thread's depot or another block's shared memory, misalignment, writes to
//!   read-only variables (immutable in the device IR, or libdevice's
//!   tables), uses of bytes never written: such bytes may be loaded,
//!   moved, stored, truncated, masked off, shifted, or carried upward by
//!   `add`/`sub`/`mul.lo` above a known low byte (libNVVM copies a struct
//!   over its padding), and fault where an instruction uses them, or where
//!   one is read back from an output buffer (`exec/shadow.rs`).
//! - **Arithmetic** (`float.rs`): IEEE instructions bit-exact in every
//!   rounding mode, `cvt` with PTX's saturation, `min`/`max` with PTX's NaN
//!   rules, `.ftz`. `.approx` instructions (`ex2`, `lg2`, `rcp`, `rsqrt`,
//!   `sin`, `cos`, `div.approx`/`div.full`) are computed with the host's
//!   functions, and counted: their exact bits are the hardware's, so the
//!   device declares [`FloatMath::Libdevice`] and the comparison allows each
//!   math function its documented error, as it does for a GPU.
//! - **Calls** to `.func`s with bodies (helpers, libdevice's inlined or
//!   called code), with a depth limit.
//!
//! Not modelled: memory orderings beyond sequential consistency (the
//! `memory-model` and `ptx-litmus` crates own that), data races (the IR
//! device detects them on the same kernel), textures, clusters, tensor
//! cores. An instruction outside what `decode` accepts refuses the whole
//! module at load, with its line.

mod decode;
mod exec;
mod float;
mod memory;

use std::collections::HashMap;

use self::decode::{Program, RelocTarget, decode};
use self::exec::{Ctx, Thread};
use self::memory::{Memory, Owner, Space, address};
use super::virt::{ExecError, Executor, Fault, Limits, Step, Val, for_each_thread, schedule};
use super::{
    Buffer, Device, DeviceError, FloatMath, KernelArg, LaunchConfig, ModuleHandle,
    Program as Input, abi, buffer_range, entry,
};

struct Loaded {
    program: Program,
    /// The allocation of each non-shared module variable.
    globals: Vec<Option<u32>>,
    /// Each function's code (empty), whose address a `mov` takes.
    code: Vec<u32>,
    /// The device IR, when the program came with it: launch arguments are
    /// checked against it as on the IR device.
    ir: Option<device_ir::Module>,
}

/// The PTX device. See the [module docs](self).
#[derive(Default)]
pub struct PtxDevice {
    limits: Limits,
    mem: Memory,
    modules: Vec<Loaded>,
    buffers: Vec<(u32, u64)>,
    approx: u64,
    instructions: u64,
}

impl PtxDevice {
    /// A device with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A device with `limits` (the same as the IR device's).
    pub fn with_limits(limits: Limits) -> Self {
        PtxDevice {
            limits,
            ..Self::default()
        }
    }

    /// Thread-instructions executed by every launch so far.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// Thread-instructions so far that were `.approx` instructions, whose
    /// exact results are the hardware's.
    pub fn approx_instructions(&self) -> u64 {
        self.approx
    }

    fn buffer(&self, buffer: Buffer) -> Result<(u32, u64), DeviceError> {
        entry(&self.buffers, buffer.0, "buffer").copied()
    }

    /// The bytes of one kernel argument, as its `.param` holds them.
    fn arg_bytes(&self, arg: &KernelArg) -> Result<Vec<u8>, DeviceError> {
        let v: u128 = match *arg {
            KernelArg::Null => 0,
            KernelArg::Buffer(b) => u128::from(address(self.buffer(b)?.0, 0)),
            KernelArg::BufferAt(b, off) => u128::from(address(self.buffer(b)?.0, off)),
            KernelArg::Bytes(ref aggregate) => {
                return aggregate.with_addresses(|b| Ok(address(self.buffer(b)?.0, 0)));
            }
            _ => abi::scalar_bits(arg).unwrap_or(0),
        };
        Ok(v.to_le_bytes()[..abi::arg_size(arg).max(1)].to_vec())
    }
}

fn setup(f: Fault) -> DeviceError {
    DeviceError::Unsupported(f.message)
}

impl Device for PtxDevice {
    fn describe(&self) -> String {
        "PTX device".to_owned()
    }

    fn float_math(&self) -> FloatMath {
        FloatMath::Libdevice
    }

    fn load(&mut self, input: &Input<'_>) -> Result<ModuleHandle, DeviceError> {
        let text = input.ptx.ok_or(DeviceError::MissingInput {
            device: "PTX device",
            what: "PTX",
        })?;
        let module = ptx_reader::parse(text)
            .map_err(|e| DeviceError::Unsupported(format!("the PTX does not parse: {e}")))?;
        // PTX does not say which `.global`s are constant; the device IR does.
        let mutable: HashMap<&str, bool> = input
            .ir
            .map(|m| {
                m.globals
                    .values()
                    .map(|g| (g.symbol.as_str(), g.mutable))
                    .collect()
            })
            .unwrap_or_default();
        let read_only = |name: &str| !mutable.get(name).copied().unwrap_or(false);
        let (program, read_only) = decode(&module, &read_only).map_err(|e| {
            DeviceError::Unsupported(format!("the PTX device cannot run this module: {}", e.0))
        })?;
        let mut globals = vec![None; program.globals.len()];
        for (k, g) in program.globals.iter().enumerate() {
            if g.space == Space::Shared {
                continue;
            }
            let id = self
                .mem
                .alloc(Owner::Global(g.name.clone()), g.space, g.size, false)
                .map_err(setup)?;
            if let Some(init) = &g.init {
                self.mem.host_write(id, 0, init);
            }
            globals[k] = Some(id);
        }
        let mut code = Vec::with_capacity(program.funcs.len());
        for f in &program.funcs {
            let id = self
                .mem
                .alloc(Owner::Code(f.name.clone()), Space::Global, 0, false)
                .map_err(setup)?;
            self.mem.seal(id);
            code.push(id);
        }
        // Relocations, once every variable and function has its address.
        for (k, g) in program.globals.iter().enumerate() {
            let Some(id) = globals[k] else { continue };
            for r in &g.relocs {
                let target = match r.target {
                    RelocTarget::Func(f) => code[f],
                    RelocTarget::Global(t) => globals[t].ok_or_else(|| {
                        DeviceError::Unsupported(format!(
                            "the initializer of {} takes the address of shared {}",
                            g.name, program.globals[t].name
                        ))
                    })?,
                };
                let a = address(target, 0).wrapping_add(r.addend as u64);
                match r.byte_shift {
                    Some(shift) => self.mem.host_write(id, r.offset, &[(a >> shift) as u8]),
                    None => {
                        let bytes = a.to_le_bytes();
                        self.mem
                            .host_write(id, r.offset, &bytes[..r.width.min(8) as usize]);
                    }
                }
            }
            if read_only[k] {
                self.mem.seal(id);
            }
        }
        self.modules.push(Loaded {
            program,
            globals,
            code,
            ir: input.ir.cloned(),
        });
        Ok(ModuleHandle(self.modules.len() as u32 - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<Buffer, DeviceError> {
        let index = self.buffers.len() as u32;
        let id = self
            .mem
            .alloc(Owner::Buffer(index), Space::Global, bytes as u64, false)
            .map_err(setup)?;
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
        let bad = |message: String| DeviceError::bad_symbol(symbol, message);
        if let Some(ir) = &loaded.ir {
            abi::host_written_global(ir, symbol, bytes.len())?;
        }
        // Without device IR, PTX says only the space: the host writes
        // `.const` variables alone.
        let k = loaded
            .program
            .globals
            .iter()
            .position(|g| &*g.name == symbol)
            .ok_or_else(|| bad("no variable of the PTX has this name".to_owned()))?;
        let g = &loaded.program.globals[k];
        if g.space != Space::Const || g.size != bytes.len() as u64 {
            return Err(bad(format!(
                "the host writes {} bytes into constant memory; the PTX variable is {} bytes of .{}",
                bytes.len(),
                g.size,
                g.space.name()
            )));
        }
        let id = loaded.globals[k].ok_or_else(|| bad("it has no memory".to_owned()))?;
        self.mem.host_write(id, 0, bytes);
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
        if let Some(ir) = &loaded.ir {
            let f = abi::find_kernel(ir, kernel)?;
            abi::check_args(ir, f, args)?;
            abi::check_shared_memory(ir, f, config.shared_bytes)?;
        }
        let Some(&entry) = loaded.program.func_index.get(kernel) else {
            return Err(DeviceError::NoSuchKernel(kernel.to_owned()));
        };
        let n_params = loaded.program.funcs[entry].n_params;
        if args.len() != n_params {
            return Err(DeviceError::Unsupported(format!(
                "kernel {kernel} takes {n_params} parameters in its PTX; the launch passes {}",
                args.len()
            )));
        }
        let (grid, block) = (config.grid.count(), config.block.count());
        if grid == 0 || block == 0 || block > 1024 || grid * block > self.limits.max_threads {
            return Err(DeviceError::Unsupported(format!(
                "launch of {} blocks of {} threads: blocks need 1 to 1024 threads, and the PTX device runs at most {} threads",
                config.grid, config.block, self.limits.max_threads
            )));
        }
        let params = args
            .iter()
            .map(|a| self.arg_bytes(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut kernel_params = Vec::with_capacity(params.len());
        for (i, bytes) in params.iter().enumerate() {
            let owner = Owner::Param { index: i as u32 };
            match self
                .mem
                .alloc(owner, Space::Param, bytes.len() as u64, true)
            {
                Ok(id) => {
                    self.mem.host_write(id, 0, bytes);
                    kernel_params.push(id);
                }
                Err(f) => {
                    kernel_params.iter().for_each(|&id| self.mem.kill(id));
                    return Err(setup(f));
                }
            }
        }
        let loaded = &self.modules[module.0 as usize];
        let mut ctx = Ctx {
            program: &loaded.program,
            globals: &loaded.globals,
            code: &loaded.code,
            shared: HashMap::new(),
            config,
            mem: &mut self.mem,
            max_call_depth: self.limits.max_call_depth,
            approx: 0,
            kernel_params,
        };
        let mut threads = Vec::new();
        for_each_thread(
            config.grid,
            config.block,
            |tid, ctaid, in_block, blk, linear| {
                threads.push(Thread::new(tid, ctaid, in_block, blk, linear));
            },
        );
        let mut run = PtxExec {
            ctx: &mut ctx,
            kernel: entry,
            kernel_name: kernel,
            params: &params,
        };
        let result = schedule(&mut run, &mut threads, block as usize, &self.limits);
        for t in &mut threads {
            run.unwind(t);
            self.instructions += t.steps;
        }
        self.approx += ctx.approx;
        let shared: Vec<u32> = ctx.shared.values().copied().collect();
        for id in shared
            .into_iter()
            .chain(std::mem::take(&mut ctx.kernel_params))
        {
            self.mem.kill(id);
        }
        result.map(|_| ())
    }
}

/// The PTX device's side of the shared schedule.
struct PtxExec<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    kernel: usize,
    kernel_name: &'c str,
    params: &'c [Vec<u8>],
}

impl Executor for PtxExec<'_, '_> {
    type Thread = Thread;

    fn place(t: &Thread) -> (u32, u32) {
        (t.block, t.in_block)
    }

    fn steps(t: &mut Thread) -> &mut u64 {
        &mut t.steps
    }

    fn start(&mut self, t: &mut Thread) -> Result<(), Fault> {
        exec::start(self.ctx, t, self.kernel, self.params)
    }

    fn step(&mut self, t: &mut Thread) -> Result<Step, Fault> {
        exec::step(self.ctx, t)
    }

    fn complete(&mut self, t: &mut Thread, val: Option<Val>) {
        t.complete(val);
    }

    fn unwind(&mut self, t: &mut Thread) {
        t.unwind(self.ctx.mem);
    }

    fn fail(&mut self, fault: Fault, t: &mut Thread) -> DeviceError {
        let program = self.ctx.program;
        let mut locs = t.locations(program).into_iter();
        let (function, inst) = match locs.next() {
            Some((f, i)) => (f.name.to_string(), exec::describe_inst(i)),
            None => (
                exec::func_name(program, self.kernel).to_string(),
                "entry".to_owned(),
            ),
        };
        let called_from = locs
            .map(|(f, i)| format!("fn {}, {}", f.name, exec::describe_inst(i)))
            .collect();
        let err = ExecError {
            kernel: self.kernel_name.to_owned(),
            function,
            inst,
            kind: fault.kind,
            message: fault.message,
            block: t.ctaid,
            thread: t.tid,
            called_from,
        };
        t.unwind(self.ctx.mem);
        DeviceError::Exec(Box::new(err))
    }
}
