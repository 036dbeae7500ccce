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

use device_ir::{FuncId, display::display_inst};

use super::Limits;
use super::error::{ExecError, Fault, FaultKind};
use super::exec::{Ctx, Step, Thread, step};
use super::value::Val;
use super::warp::Warps;
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

/// Runs `kernel` with `args` on every thread of the launch. Returns the
/// barriers that every thread of block 0 passed.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    kernel: FuncId,
    kernel_name: &str,
    args: &[Val],
    limits: &Limits,
) -> Result<u64, DeviceError> {
    let (g, b) = (ctx.config.grid, ctx.config.block);
    let per_block = (b.x * b.y * b.z) as usize;
    let n_blocks = (g.x * g.y * g.z) as usize;
    let mut threads = Vec::with_capacity(per_block * n_blocks);
    for blk in 0..n_blocks as u32 {
        let ctaid = [blk % g.x, (blk / g.x) % g.y, blk / (g.x * g.y)];
        for t in 0..per_block as u32 {
            threads.push(Thread {
                tid: [t % b.x, (t / b.x) % b.y, t / (b.x * b.y)],
                ctaid,
                in_block: t,
                linear: blk * per_block as u32 + t,
                block: blk,
                stack: Vec::new(),
                loc: (kernel, None),
                steps: 0,
            });
        }
    }
    let result = schedule(ctx, &mut threads, kernel, kernel_name, args, limits);
    // After a fault, the other threads' frames die with the launch.
    for t in &mut threads {
        t.unwind(ctx.mem);
    }
    result
}

fn schedule(
    ctx: &mut Ctx<'_>,
    threads: &mut [Thread],
    kernel: FuncId,
    kernel_name: &str,
    args: &[Val],
    limits: &Limits,
) -> Result<u64, DeviceError> {
    let b = ctx.config.block;
    let per_block = (b.x * b.y * b.z) as usize;
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
                    if let Err(f) = threads[i].start(ctx.module, kernel, args.to_vec()) {
                        return Err(fail(ctx, kernel_name, f, &mut threads[i]));
                    }
                    states[i] = State::Ready;
                }
                State::Ready => {}
            }
            ran = true;
            let blk = threads[i].block as usize;
            for _ in 0..limits.quantum.max(1) {
                let steps = threads[i].steps;
                if steps >= limits.max_steps {
                    let f = Fault::new(
                        FaultKind::Timeout,
                        format!(
                            "timeout: this thread ran {steps} steps without finishing (the limit is {} steps per thread); it probably loops forever",
                            limits.max_steps
                        ),
                    );
                    return Err(fail(ctx, kernel_name, f, &mut threads[i]));
                }
                threads[i].steps = steps + 1;
                match step(ctx, &mut threads[i]) {
                    Err(f) => return Err(fail(ctx, kernel_name, f, &mut threads[i])),
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
                            return Err(fail(ctx, kernel_name, f, &mut threads[i]));
                        }
                        bs.arrived += 1;
                        states[i] = State::Waiting;
                        if bs.arrived as usize == per_block {
                            bs.arrived = 0;
                            bs.completed += 1;
                            if let Some(r) = ctx.race.as_mut() {
                                r.barrier(blk as u32);
                            }
                            let first = blk * per_block;
                            for s in &mut states[first..first + per_block] {
                                *s = State::Ready;
                            }
                        }
                        break;
                    }
                    Ok(Step::Warp(call)) => {
                        let (block, in_block) = (threads[i].block, threads[i].in_block);
                        match warps.arrive(block, in_block, call) {
                            Err(f) => return Err(fail(ctx, kernel_name, f, &mut threads[i])),
                            Ok(None) => {
                                states[i] = State::Waiting;
                                break;
                            }
                            Ok(Some(done)) => {
                                for (t, val) in done.results {
                                    threads[t].complete(ctx.module, val);
                                    states[t] = State::Ready;
                                }
                                if !done.synced.is_empty()
                                    && let Some(r) = ctx.race.as_mut()
                                {
                                    r.warp_sync(&done.synced);
                                }
                            }
                        }
                    }
                    Ok(Step::Exit) => {
                        if let Err(f) = warps.exit(threads[i].block, threads[i].in_block) {
                            return Err(fail(ctx, kernel_name, f, &mut threads[i]));
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
                            return Err(fail(ctx, kernel_name, f, &mut threads[i]));
                        }
                        threads[i].unwind(ctx.mem);
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
            let t = &threads[i];
            let f = match warps.waiting(t.block, t.in_block) {
                Some(w) => Fault::new(FaultKind::Deadlock, format!("deadlock: {w}")),
                None => Fault::new(FaultKind::Deadlock, "deadlock: every thread waits"),
            };
            return Err(fail(ctx, kernel_name, f, &mut threads[i]));
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
