//! The deterministic schedule of a launch, and barriers.
//!
//! All threads of all blocks take turns in one fixed order: block-major, then
//! by thread index (x fastest). On its turn a thread runs until it arrives at a
//! barrier, exits, or has executed `quantum` instructions; then the next ready
//! thread runs. So a thread spinning on a flag that another thread sets is
//! preempted and the setter gets to run, and the same launch always interleaves
//! the same way.
//!
//! A barrier completes when every thread of the block has arrived. A thread that
//! exits while others of its block wait at a barrier, or arrives at a barrier
//! after another thread of its block has exited, is a deadlock fault. Every
//! instruction counts as one step of its thread; a thread that runs more than
//! `max_steps` steps is a timeout fault naming it, so a kernel that loops forever
//! is reported, not hung on, while a large grid of short threads is not.
//!
//! When the launch checks for races, a completed barrier joins the clocks of its
//! block, and a race found at an access stops the launch with a
//! [`RaceReport`](super::RaceReport) instead of a fault.
//!
//! The schedule is generic over an [`Executor`]: the PTX device runs its
//! threads under the same one, so both devices agree on what a barrier, a
//! warp collective, a deadlock and a timeout are.

use device_ir::{FuncId, display::display_inst};

use super::Limits;
use super::error::{ExecError, Fault, FaultKind};
use super::exec::{Ctx, Step, Thread, step};
use super::value::Val;
use super::warp::{Completed, Warps};
use crate::device::DeviceError;

#[derive(Copy, Clone, PartialEq, Eq)]
enum State {
    NotStarted,
    Ready,
    Waiting,
    Done,
}

#[derive(Default)]
struct BlockState {
    arrived: u32,
    exited: u32,
    /// Barriers the block completed: every thread of it passed each one.
    completed: u64,
}

/// What the scheduler needs of an executor: the IR device and the PTX device
/// share one schedule, barrier and warp-collective discipline through it.
pub(crate) trait Executor {
    /// One simulated thread.
    type Thread;
    /// The thread's block (index in the grid) and index in its block.
    fn place(t: &Self::Thread) -> (u32, u32);
    /// Instructions the thread has executed in this launch.
    fn steps(t: &mut Self::Thread) -> &mut u64;
    /// Enters the kernel.
    fn start(&mut self, t: &mut Self::Thread) -> Result<(), Fault>;
    /// Executes one instruction.
    fn step(&mut self, t: &mut Self::Thread) -> Result<Step, Fault>;
    /// Gives a thread waiting at a warp collective its result.
    fn complete(&mut self, t: &mut Self::Thread, val: Option<Val>);
    /// A barrier of block `block` completed.
    fn barrier_completed(&mut self, _block: u32) {}
    /// `__syncwarp` synchronized these threads (indices in the launch).
    fn warp_synced(&mut self, _threads: &[u32]) {}
    /// Ends every frame of the thread (after an exit or a fault).
    fn unwind(&mut self, t: &mut Self::Thread);
    /// The launch's error for a fault of `t`, placed at its instruction.
    fn fail(&mut self, fault: Fault, t: &mut Self::Thread) -> DeviceError;
}

/// The IR device's executor: a launch's context, the kernel and its arguments.
struct IrExec<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    kernel: FuncId,
    kernel_name: &'c str,
    args: &'c [Val],
}

impl Executor for IrExec<'_, '_> {
    type Thread = Thread;

    fn place(t: &Thread) -> (u32, u32) {
        (t.block, t.in_block)
    }

    fn steps(t: &mut Thread) -> &mut u64 {
        &mut t.steps
    }

    fn start(&mut self, t: &mut Thread) -> Result<(), Fault> {
        t.start(self.ctx.module, self.kernel, self.args.to_vec())
    }

    fn step(&mut self, t: &mut Thread) -> Result<Step, Fault> {
        step(self.ctx, t)
    }

    fn complete(&mut self, t: &mut Thread, val: Option<Val>) {
        t.complete(self.ctx.module, val);
    }

    fn barrier_completed(&mut self, block: u32) {
        if let Some(r) = self.ctx.race.as_mut() {
            r.barrier(block);
        }
    }

    fn warp_synced(&mut self, threads: &[u32]) {
        if let Some(r) = self.ctx.race.as_mut() {
            r.warp_sync(threads);
        }
    }

    fn unwind(&mut self, t: &mut Thread) {
        t.unwind(self.ctx.mem);
    }

    fn fail(&mut self, fault: Fault, t: &mut Thread) -> DeviceError {
        fail(self.ctx, self.kernel_name, fault, t)
    }
}

/// Runs `kernel` with `args` on every thread of the launch. Returns the
/// barriers that every thread of block 0 passed, and the instructions all
/// threads executed.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    kernel: FuncId,
    kernel_name: &str,
    args: &[Val],
    limits: &Limits,
) -> Result<(u64, u64), DeviceError> {
    let (g, b) = (ctx.config.grid, ctx.config.block);
    let mut threads = Vec::new();
    for_each_thread(g, b, |tid, ctaid, in_block, block, linear| {
        threads.push(Thread {
            tid,
            ctaid,
            in_block,
            linear,
            block,
            stack: Vec::new(),
            loc: (kernel, None),
            steps: 0,
        });
    });
    let per_block = b.count() as usize;
    let mut exec = IrExec {
        ctx,
        kernel,
        kernel_name,
        args,
    };
    let result = schedule(&mut exec, &mut threads, per_block, limits);
    // After a fault, the other threads' frames die with the launch.
    let mut steps = 0;
    for t in &mut threads {
        exec.unwind(t);
        steps += t.steps;
    }
    result.map(|barriers| (barriers, steps))
}

/// Calls `f(tid, ctaid, in_block, block, linear)` for every thread of a
/// launch, in the schedule's order: block-major, then thread index, x fastest.
pub(crate) fn for_each_thread(
    g: crate::device::Dim3,
    b: crate::device::Dim3,
    mut f: impl FnMut([u32; 3], [u32; 3], u32, u32, u32),
) {
    let per_block = b.x * b.y * b.z;
    let n_blocks = g.x * g.y * g.z;
    for blk in 0..n_blocks {
        let ctaid = [blk % g.x, (blk / g.x) % g.y, blk / (g.x * g.y)];
        for t in 0..per_block {
            let tid = [t % b.x, (t / b.x) % b.y, t / (b.x * b.y)];
            f(tid, ctaid, t, blk, blk * per_block + t);
        }
    }
}

/// Hands a completed warp collective's results to its lanes, which run again.
fn deliver<E: Executor>(
    exec: &mut E,
    threads: &mut [E::Thread],
    states: &mut [State],
    done: Completed,
) {
    for (t, val) in done.results {
        exec.complete(&mut threads[t], val);
        states[t] = State::Ready;
    }
    if !done.synced.is_empty() {
        exec.warp_synced(&done.synced);
    }
}

/// Runs every thread of `threads` (`per_block` to a block, in order) to its
/// end under the deterministic schedule. Returns the barriers that every
/// thread of block 0 passed.
pub(crate) fn schedule<E: Executor>(
    exec: &mut E,
    threads: &mut [E::Thread],
    per_block: usize,
    limits: &Limits,
) -> Result<u64, DeviceError> {
    let n_blocks = threads.len() / per_block.max(1);
    let mut states = vec![State::NotStarted; threads.len()];
    let mut blocks: Vec<BlockState> = (0..n_blocks).map(|_| BlockState::default()).collect();
    let mut warps = Warps::new(per_block as u32);
    loop {
        let mut ran = false;
        for i in 0..threads.len() {
            match states[i] {
                State::Done | State::Waiting => continue,
                State::NotStarted => {
                    if let Err(f) = exec.start(&mut threads[i]) {
                        return Err(exec.fail(f, &mut threads[i]));
                    }
                    states[i] = State::Ready;
                }
                State::Ready => {}
            }
            ran = true;
            let (block, in_block) = E::place(&threads[i]);
            let blk = block as usize;
            for _ in 0..limits.quantum.max(1) {
                let steps = *E::steps(&mut threads[i]);
                if steps >= limits.max_steps {
                    let f = Fault::new(
                        FaultKind::Timeout,
                        format!(
                            "timeout: this thread ran {steps} steps without finishing (the limit is {} steps per thread); it probably loops forever",
                            limits.max_steps
                        ),
                    );
                    return Err(exec.fail(f, &mut threads[i]));
                }
                *E::steps(&mut threads[i]) = steps + 1;
                match exec.step(&mut threads[i]) {
                    Err(f) => return Err(exec.fail(f, &mut threads[i])),
                    Ok(Step::Continue) => {}
                    Ok(Step::Barrier) => {
                        let bs = &mut blocks[blk];
                        if bs.exited > 0 {
                            let f = Fault::new(
                                FaultKind::Deadlock,
                                format!(
                                    "deadlock: this barrier can never complete, because {} thread(s) of the block have already exited",
                                    bs.exited
                                ),
                            );
                            return Err(exec.fail(f, &mut threads[i]));
                        }
                        bs.arrived += 1;
                        states[i] = State::Waiting;
                        if bs.arrived as usize == per_block {
                            bs.arrived = 0;
                            bs.completed += 1;
                            exec.barrier_completed(blk as u32);
                            let first = blk * per_block;
                            for s in &mut states[first..first + per_block] {
                                *s = State::Ready;
                            }
                        }
                        break;
                    }
                    Ok(Step::Warp(call)) => match warps.arrive(block, in_block, call) {
                        Err(f) => {
                            return Err(exec.fail(f.fault, &mut threads[f.thread.unwrap_or(i)]));
                        }
                        Ok(None) => {
                            states[i] = State::Waiting;
                            break;
                        }
                        Ok(Some(done)) => deliver(exec, threads, &mut states, done),
                    },
                    Ok(Step::Exit) => {
                        // Lanes that waited only for this one go on.
                        match warps.exit(block, in_block) {
                            Err(f) => {
                                return Err(exec.fail(f.fault, &mut threads[f.thread.unwrap_or(i)]));
                            }
                            Ok(completed) => {
                                for done in completed {
                                    deliver(exec, threads, &mut states, done);
                                }
                            }
                        }
                        let bs = &mut blocks[blk];
                        bs.exited += 1;
                        states[i] = State::Done;
                        if bs.arrived > 0 {
                            let f = Fault::new(
                                FaultKind::Deadlock,
                                format!(
                                    "deadlock: the thread exits while {} thread(s) of its block wait at a barrier",
                                    bs.arrived
                                ),
                            );
                            return Err(exec.fail(f, &mut threads[i]));
                        }
                        exec.unwind(&mut threads[i]);
                        break;
                    }
                }
            }
        }
        if states.iter().all(|&s| s == State::Done) {
            return Ok(blocks.first().map_or(0, |b| b.completed));
        }
        if !ran {
            let i = states
                .iter()
                .position(|&s| s == State::Waiting)
                .unwrap_or(0);
            let (block, in_block) = E::place(&threads[i]);
            let f = match warps.waiting(block, in_block) {
                Some(w) => Fault::new(FaultKind::Deadlock, format!("deadlock: {w}")),
                None => Fault::new(FaultKind::Deadlock, "deadlock: every thread waits"),
            };
            return Err(exec.fail(f, &mut threads[i]));
        }
    }
}

/// Places a fault at the thread's instruction (or makes a race's report), and
/// kills the thread's frames.
fn fail(ctx: &mut Ctx<'_>, kernel: &str, mut fault: Fault, thread: &mut Thread) -> DeviceError {
    let err = match (fault.race.take(), &ctx.race) {
        (Some(hit), Some(r)) => {
            DeviceError::Race(Box::new(r.report(ctx.module, ctx.mem, kernel, &hit)))
        }
        _ => DeviceError::Exec(Box::new(place_fault(ctx.module, kernel, fault, thread))),
    };
    thread.unwind(ctx.mem);
    err
}

fn place_fault(module: &device_ir::Module, kernel: &str, fault: Fault, t: &Thread) -> ExecError {
    let (func, inst) = t.loc;
    let f = &module.functions[func];
    let inst = match (inst, &f.body) {
        (Some(inst), Some(body)) => format!("{inst} ({})", display_inst(module, body, inst)),
        _ => "entry".to_owned(),
    };
    let called_from = t
        .callers(module)
        .into_iter()
        .map(|(func, inst)| format!("fn {}, {inst}", module.functions[func].name))
        .collect();
    ExecError {
        called_from,
        kernel: kernel.to_owned(),
        function: f.name.clone(),
        inst,
        kind: fault.kind,
        message: fault.message,
        block: t.ctaid,
        thread: t.tid,
    }
}
