//! One simulated thread: its call stack, and the execution of one instruction.
//!
//! Each frame holds the values of its function and the stack slots its `alloca`s
//! made; returning kills those slots, so any later access through a pointer into
//! them is a stale-frame fault naming the function. Atomics execute at once and
//! whole, so the virtual device is sequentially consistent: it checks memory
//! safety, and (with the [race detector](super::race)) that no two threads
//! access one byte unordered; the `memory-model` crate checks what orderings
//! allow beyond that.

use std::collections::HashMap;
use std::sync::Arc;

use cranelift_entity::EntityRef;
use device_ir::{
    AddressSpace, Block, BlockCall, Body, DYNAMIC_SHARED_SYMBOL, FuncId, GepIndex, GlobalId, Inst,
    InstData, MatchMode, Module, ReduceOp, ShuffleMode, SpecialReg, UnaryOp, Value, VoteMode,
    layout,
};

use super::calls::{body_of, call_frame, check_depth, indirect_callee};
use super::error::{Fault, FaultKind};
use super::memory::{Memory, Owner, Who};
use super::ops::{self, as_int, as_ptr};
use super::race::{AtomicOp, Detector};
use super::report::AccessKind;
use super::value::{AllocId, Ptr, Val, sext};
use crate::device::LaunchConfig;

/// What a launch shares between its threads.
pub(crate) struct Ctx<'a> {
    pub module: &'a Module,
    pub func_names: &'a [Arc<str>],
    pub global_names: &'a [Arc<str>],
    /// The allocation of each non-shared global, by `GlobalId` index.
    pub globals: &'a [Option<AllocId>],
    /// The (empty) allocation of each function's code, by `FuncId` index.
    pub code: &'a [AllocId],
    /// Each block's instances of shared globals (`Some`) and its dynamic
    /// shared memory (`None`), made on first use.
    pub shared: HashMap<(u32, Option<GlobalId>), AllocId>,
    /// The alignment of the dynamic shared memory
    /// ([`Module::dynamic_shared_align`], computed once per launch).
    pub dynamic_shared_align: u32,
    pub config: LaunchConfig,
    pub mem: &'a mut Memory,
    pub max_call_depth: usize,
    /// The race detector, when the launch checks for races.
    pub race: Option<Detector>,
}

/// Block `block`'s instance of the shared memory `key` names (a shared
/// global, or `None` for the dynamic shared memory), allocated on its first
/// use with `size` bytes at `align`.
fn shared_instance(
    ctx: &mut Ctx<'_>,
    block: u32,
    key: Option<GlobalId>,
    symbol: Arc<str>,
    size: u64,
    align: u32,
) -> Result<AllocId, Fault> {
    if let Some(&id) = ctx.shared.get(&(block, key)) {
        return Ok(id);
    }
    let owner = Owner::Shared { symbol, block };
    let id = ctx
        .mem
        .alloc(owner, AddressSpace::Shared, size, u64::from(align), false)?;
    ctx.shared.insert((block, key), id);
    Ok(id)
}

pub(crate) struct Frame {
    func: FuncId,
    block: Block,
    pos: usize,
    vals: Vec<Option<Val>>,
    allocas: Vec<AllocId>,
    /// The caller's value that receives the result.
    ret_to: Option<Value>,
}

pub(crate) struct Thread {
    pub tid: [u32; 3],
    pub ctaid: [u32; 3],
    /// The thread's index in its block, x fastest.
    pub in_block: u32,
    /// The thread's index in the grid, block-major.
    pub linear: u32,
    /// The block's index in the grid, x fastest.
    pub block: u32,
    pub stack: Vec<Frame>,
    /// The function and instruction executing, for error messages.
    pub loc: (FuncId, Option<Inst>),
    /// Instructions executed so far in this launch.
    pub steps: u64,
}

/// What a step did.
pub(crate) enum Step {
    Continue,
    Barrier,
    /// Arrived at a warp collective; the scheduler completes it with
    /// [`Thread::complete`] once every lane of its mask has arrived.
    Warp(WarpCall),
    Exit,
}

/// One lane's arrival at a warp collective.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct WarpCall {
    pub kind: WarpKind,
    /// The lanes named (for `ActiveMask`, 0: the scheduler fills it in).
    pub mask: u32,
    /// The value offered: the shuffled word, the vote's predicate, the
    /// reduced or matched value.
    pub value: u64,
}

/// Which warp collective.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum WarpKind {
    /// A shuffle with its lane operand and PTX's `c` (segments, clamp).
    Shuffle(ShuffleMode, u32, u32),
    Vote(VoteMode),
    /// A reduction of 32-bit values.
    Reduce(ReduceOp),
    /// A match, of 64-bit values when the flag is set.
    Match(MatchMode, bool),
    Sync,
    ActiveMask,
}

impl WarpKind {
    /// Whether two lanes' arrivals are at the same kind of collective (the
    /// lane operand of a shuffle may differ between lanes).
    pub fn same_as(self, other: WarpKind) -> bool {
        match (self, other) {
            (WarpKind::Shuffle(a, ..), WarpKind::Shuffle(b, ..)) => a == b,
            (a, b) => a == b,
        }
    }

    /// A name for messages.
    pub fn describe(self) -> String {
        match self {
            WarpKind::Shuffle(m, ..) => format!("shuffle {}", m.name()),
            WarpKind::Vote(m) => format!("vote {}", m.name()),
            WarpKind::Reduce(op) => format!("reduce {}", op.name()),
            WarpKind::Match(m, wide) => {
                format!("match {}.b{}", m.name(), if wide { 64 } else { 32 })
            }
            WarpKind::Sync => "warp_sync".to_owned(),
            WarpKind::ActiveMask => "active_mask".to_owned(),
        }
    }
}

fn internal(msg: impl Into<String>) -> Fault {
    Fault::new(FaultKind::Internal, msg)
}

/// The frame of `func` entered with `args`, its result going to `ret_to`.
pub(super) fn new_frame(body: &Body, func: FuncId, args: Vec<Val>, ret_to: Option<Value>) -> Frame {
    let mut vals = vec![None; body.values.len()];
    for (&p, a) in body.blocks[body.entry()].params.iter().zip(args) {
        vals[p.index()] = Some(a);
    }
    Frame {
        func,
        block: body.entry(),
        pos: 0,
        vals,
        allocas: Vec::new(),
        ret_to,
    }
}

impl Frame {
    pub(super) fn get(&self, v: Value) -> Result<Val, Fault> {
        self.vals
            .get(v.index())
            .cloned()
            .flatten()
            .ok_or_else(|| internal(format!("{v} is used before it is defined")))
    }

    fn set(&mut self, v: Option<Value>, val: Val) {
        if let Some(v) = v
            && let Some(slot) = self.vals.get_mut(v.index())
        {
            *slot = Some(val);
        }
    }

    fn goto(&mut self, body: &Body, call: &BlockCall) -> Result<(), Fault> {
        let args = call
            .args
            .iter()
            .map(|&a| self.get(a))
            .collect::<Result<Vec<_>, _>>()?;
        for (&p, a) in body.blocks[call.block].params.iter().zip(args) {
            self.vals[p.index()] = Some(a);
        }
        self.block = call.block;
        self.pos = 0;
        Ok(())
    }
}

impl Thread {
    /// Starts the thread in `kernel` with `args`.
    pub fn start(&mut self, module: &Module, kernel: FuncId, args: Vec<Val>) -> Result<(), Fault> {
        let body = body_of(module, kernel)?;
        self.stack.push(new_frame(body, kernel, args, None));
        self.loc = (kernel, None);
        Ok(())
    }

    /// The call instructions of the frames below the top one, innermost first.
    pub fn callers(&self, module: &Module) -> Vec<(FuncId, Inst)> {
        let n = self.stack.len().saturating_sub(1);
        self.stack[..n]
            .iter()
            .rev()
            .filter_map(|f| {
                let body = module.functions[f.func].body.as_ref()?;
                let inst = body.blocks[f.block].insts.get(f.pos.checked_sub(1)?)?;
                Some((f.func, *inst))
            })
            .collect()
    }

    /// Gives the warp collective the thread waits at its result.
    pub fn complete(&mut self, module: &Module, val: Option<Val>) {
        let (func, Some(inst)) = self.loc else { return };
        let Some(body) = module.functions[func].body.as_ref() else {
            return;
        };
        if let (Some(frame), Some(v)) = (self.stack.last_mut(), val) {
            frame.set(body.result(inst), v);
        }
    }

    /// Kills every stack slot still live (after a fault or an exit).
    pub fn unwind(&mut self, mem: &mut Memory) {
        for frame in self.stack.drain(..) {
            for id in frame.allocas {
                mem.kill(id);
            }
        }
    }

    fn regs(&self, cfg: &LaunchConfig) -> Regs {
        Regs {
            tid: self.tid,
            ctaid: self.ctaid,
            lane: self.in_block % 32,
            ntid: [cfg.block.x, cfg.block.y, cfg.block.z],
            nctaid: [cfg.grid.x, cfg.grid.y, cfg.grid.z],
        }
    }
}

/// A thread's special registers.
struct Regs {
    tid: [u32; 3],
    ctaid: [u32; 3],
    lane: u32,
    ntid: [u32; 3],
    nctaid: [u32; 3],
}

impl Regs {
    fn get(&self, reg: SpecialReg) -> u32 {
        match reg {
            SpecialReg::TidX => self.tid[0],
            SpecialReg::TidY => self.tid[1],
            SpecialReg::TidZ => self.tid[2],
            SpecialReg::NtidX => self.ntid[0],
            SpecialReg::NtidY => self.ntid[1],
            SpecialReg::NtidZ => self.ntid[2],
            SpecialReg::CtaidX => self.ctaid[0],
            SpecialReg::CtaidY => self.ctaid[1],
            SpecialReg::CtaidZ => self.ctaid[2],
            SpecialReg::NctaidX => self.nctaid[0],
            SpecialReg::NctaidY => self.nctaid[1],
            SpecialReg::NctaidZ => self.nctaid[2],
            SpecialReg::LaneId => self.lane,
            SpecialReg::WarpSize => 32,
            SpecialReg::LaneMaskLt
            | SpecialReg::LaneMaskLe
            | SpecialReg::LaneMaskEq
            | SpecialReg::LaneMaskGe
            | SpecialReg::LaneMaskGt => reg.lane_mask(self.lane).unwrap_or(0),
        }
    }
}

/// Checks that an atomic's target is global or shared memory, and writable if
/// `write`; yields its allocation and offset.
fn atomic_target(
    mem: &Memory,
    p: Ptr,
    size: u64,
    write: bool,
    who: Who,
) -> Result<(AllocId, u64), Fault> {
    let (id, off) = mem.check(p, size, size, write, who)?;
    match mem.get(id).map(|a| a.space) {
        Some(AddressSpace::Global | AddressSpace::Shared) => Ok((id, off)),
        Some(space) => Err(Fault::new(
            FaultKind::WrongSpace,
            format!(
                "{} on {} memory; atomics need global or shared memory",
                who.verb,
                space.name()
            ),
        )),
        None => Err(internal("atomic on no allocation")),
    }
}

/// Executes one instruction of `thread`.
pub(crate) fn step(ctx: &mut Ctx<'_>, thread: &mut Thread) -> Result<Step, Fault> {
    let module = ctx.module;
    let types = &module.types;
    let (block_idx, linear) = (thread.block, thread.linear);
    let who = |verb| Who {
        thread: linear,
        block: block_idx,
        verb,
    };
    let regs = thread.regs(&ctx.config);
    let Thread { stack, loc, .. } = thread;
    let depth = stack.len();
    let Some(frame) = stack.last_mut() else {
        return Ok(Step::Exit);
    };
    let func = frame.func;
    let body = body_of(module, func)?;
    let Some(&inst) = body.blocks[frame.block].insts.get(frame.pos) else {
        return Err(internal(format!("{} has no terminator", frame.block)));
    };
    *loc = (func, Some(inst));
    frame.pos += 1;
    let result = body.result(inst);
    let val = match &body.insts[inst] {
        InstData::Iconst { ty, imm } => Val::int(types.int_bits(*ty).unwrap_or(128), *imm),
        InstData::Fconst { ty, bits } => {
            if layout::size_of(types, *ty) == 4 {
                Val::F32(*bits as u32)
            } else {
                Val::F64(*bits)
            }
        }
        InstData::Null { ty } => Val::Ptr(Ptr::null(space_of(module, *ty))),
        InstData::Undef { .. } => Val::Undef,
        InstData::GlobalAddr { global, ty } => {
            let g = &module.globals[*global];
            let target = if g.space == AddressSpace::Shared {
                let symbol = ctx.global_names[global.index()].clone();
                shared_instance(ctx, block_idx, Some(*global), symbol, g.size, g.align)?
            } else {
                ctx.globals[global.index()]
                    .ok_or_else(|| internal(format!("{global} was not allocated")))?
            };
            Val::Ptr(Ptr {
                space: space_of(module, *ty),
                target: Some(target),
                offset: 0,
            })
        }
        InstData::FuncAddr { func, ty } => Val::Ptr(Ptr {
            space: space_of(module, *ty),
            target: Some(
                *ctx.code
                    .get(func.index())
                    .ok_or_else(|| internal(format!("{func} has no code allocation")))?,
            ),
            offset: 0,
        }),
        InstData::DynamicShared { .. } => {
            let symbol = Arc::from(DYNAMIC_SHARED_SYMBOL);
            let (size, align) = (u64::from(ctx.config.shared_bytes), ctx.dynamic_shared_align);
            let target = shared_instance(ctx, block_idx, None, symbol, size, align)?;
            Val::Ptr(Ptr {
                space: AddressSpace::Shared,
                target: Some(target),
                offset: 0,
            })
        }
        InstData::Alloca { ty, align } => {
            let owner = Owner::Local {
                func: ctx.func_names[func.index()].clone(),
                inst,
                thread: linear,
            };
            let size = layout::size_of(types, *ty);
            let id = ctx
                .mem
                .alloc(owner, AddressSpace::Local, size, u64::from(*align), false)?;
            frame.allocas.push(id);
            let space = result.map_or(AddressSpace::Generic, |r| {
                space_of(module, body.value_ty(r))
            });
            Val::Ptr(Ptr {
                space,
                target: Some(id),
                offset: 0,
            })
        }
        InstData::Load { ty, ptr, align, .. } => {
            let p = as_ptr(&frame.get(*ptr)?, "load")?;
            let size = layout::size_of(types, *ty);
            let (id, off) = ctx
                .mem
                .check(p, size, u64::from(*align), false, who("load"))?;
            ctx.plain(linear, (func, inst), id, off, size, AccessKind::Read)?;
            ctx.mem.read_at(id, off, *ty, types, who("load"))?
        }
        InstData::Store {
            ptr, value, align, ..
        } => {
            let p = as_ptr(&frame.get(*ptr)?, "store")?;
            let v = frame.get(*value)?;
            let ty = body.value_ty(*value);
            let size = layout::size_of(types, ty);
            let (id, off) = ctx
                .mem
                .check(p, size, u64::from(*align), true, who("store"))?;
            ctx.plain(linear, (func, inst), id, off, size, AccessKind::Write)?;
            ctx.mem.write_at(id, off, ty, &v, types)?;
            return Ok(Step::Continue);
        }
        InstData::Gep { base, indices } => {
            let p = as_ptr(&frame.get(*base)?, "getelementptr")?;
            let (pointee, _) = types
                .ptr_parts(body.value_ty(*base))
                .ok_or_else(|| internal("getelementptr of a non-pointer"))?;
            let steps: Vec<Option<u32>> = indices
                .iter()
                .skip(1)
                .map(|i| match i {
                    GepIndex::Field(f) => Some(*f),
                    _ => None,
                })
                .collect();
            let (_, kinds) = layout::gep_path(types, pointee, &steps).map_err(internal)?;
            let mut offset = 0u64;
            for (index, kind) in indices.iter().zip(kinds) {
                let add = match (index, kind) {
                    (_, layout::GepStepKind::Field { offset }) => offset,
                    (GepIndex::Const(c), layout::GepStepKind::Scaled { stride }) => {
                        (*c as u64).wrapping_mul(stride)
                    }
                    (GepIndex::Value(v), layout::GepStepKind::Scaled { stride }) => {
                        let (bits, x) = as_int(&frame.get(*v)?, "getelementptr")?;
                        (sext(x, bits) as u64).wrapping_mul(stride)
                    }
                    (GepIndex::Field(_), _) => return Err(internal("field index on an array")),
                };
                offset = offset.wrapping_add(add);
            }
            Val::Ptr(Ptr {
                offset: p.offset.wrapping_add(offset),
                ..p
            })
        }
        InstData::ByteOffset { base, offset } => {
            let p = as_ptr(&frame.get(*base)?, "byte_offset")?;
            let (bits, x) = as_int(&frame.get(*offset)?, "byte_offset")?;
            Val::Ptr(Ptr {
                offset: p.offset.wrapping_add(sext(x, bits) as u64),
                ..p
            })
        }
        InstData::Cast { op, value, ty } => {
            ops::cast(*op, &frame.get(*value)?, *ty, types, ctx.mem)?
        }
        InstData::Binary { op, lhs, rhs } => {
            ops::binary(*op, &frame.get(*lhs)?, &frame.get(*rhs)?)?
        }
        InstData::Unary {
            op: UnaryOp::FNeg,
            value,
        } => ops::fneg(&frame.get(*value)?)?,
        InstData::Icmp { cond, lhs, rhs } => {
            ops::icmp(*cond, &frame.get(*lhs)?, &frame.get(*rhs)?)?
        }
        InstData::Fcmp { cond, lhs, rhs } => {
            ops::fcmp(*cond, &frame.get(*lhs)?, &frame.get(*rhs)?)?
        }
        InstData::Select {
            cond,
            if_true,
            if_false,
        } => {
            let (_, c) = as_int(&frame.get(*cond)?, "select")?;
            frame.get(if c != 0 { *if_true } else { *if_false })?
        }
        InstData::Call { func: callee, args } => {
            check_depth(ctx, depth)?;
            let next = call_frame(module, frame, *callee, args, result)?;
            stack.push(next);
            return Ok(Step::Continue);
        }
        InstData::CallIndirect {
            callee: target,
            sig,
            args,
        } => {
            check_depth(ctx, depth)?;
            let callee = indirect_callee(ctx, module, &frame.get(*target)?, sig)?;
            let next = call_frame(module, frame, callee, args, result)?;
            stack.push(next);
            return Ok(Step::Continue);
        }
        InstData::Jump { dest } => {
            frame.goto(body, dest)?;
            return Ok(Step::Continue);
        }
        InstData::Brif {
            cond,
            then_dest,
            else_dest,
        } => {
            let (_, c) = as_int(&frame.get(*cond)?, "brif")?;
            frame.goto(body, if c != 0 { then_dest } else { else_dest })?;
            return Ok(Step::Continue);
        }
        InstData::Switch {
            value,
            default,
            cases,
        } => {
            let (_, x) = as_int(&frame.get(*value)?, "switch")?;
            let dest = cases
                .iter()
                .find(|(c, _)| *c == x)
                .map_or(default, |(_, d)| d);
            frame.goto(body, dest)?;
            return Ok(Step::Continue);
        }
        InstData::Return { value } => {
            let v = value.map(|v| frame.get(v)).transpose()?;
            let Some(done) = stack.pop() else {
                return Ok(Step::Exit);
            };
            for id in &done.allocas {
                ctx.mem.kill(*id);
            }
            return match stack.last_mut() {
                None => Ok(Step::Exit),
                Some(caller) => {
                    if let Some(v) = v {
                        caller.set(done.ret_to, v);
                    }
                    Ok(Step::Continue)
                }
            };
        }
        InstData::Unreachable => {
            return Err(Fault::new(FaultKind::Unreachable, "reached `unreachable`"));
        }
        InstData::SpecialReg { reg } => Val::int(32, u128::from(regs.get(*reg))),
        InstData::Barrier => return Ok(Step::Barrier),
        InstData::Math { func, args } => {
            let vals = args
                .iter()
                .map(|&a| frame.get(a))
                .collect::<Result<Vec<_>, _>>()?;
            super::math::math(*func, &vals)?
        }
        InstData::IntFn { func, args } => {
            let mut width = 0;
            let mut vals = Vec::with_capacity(args.len());
            for &a in args {
                let (bits, v) = as_int(&frame.get(a)?, func.name())?;
                width = bits;
                vals.push(v);
            }
            Val::int(width, func.eval(u32::from(width), &vals))
        }
        InstData::Shuffle {
            mode,
            mask,
            value,
            lane,
            clamp,
        } => {
            let word = |v: Value| -> Result<u32, Fault> {
                Ok(as_int(&frame.get(v)?, "shuffle")?.1 as u32)
            };
            let c = match clamp {
                Some(c) => {
                    let c = word(*c)?;
                    // Only CUDA's `width` makes a clamp here: PTX defines
                    // every `c`, CUDA only those of a power of two up to 32.
                    let segments = c >> 8;
                    if segments >= 32 || !(32 - segments).is_power_of_two() {
                        return Err(Fault::new(
                            FaultKind::Warp,
                            format!(
                                "a shuffle ({}) with a width that is not a power of two up to 32 \
                                 (PTX operand c = {c:#x}): CUDA leaves it undefined",
                                mode.name()
                            ),
                        ));
                    }
                    c
                }
                None => mode.full_warp_clamp(),
            };
            return Ok(Step::Warp(WarpCall {
                kind: WarpKind::Shuffle(*mode, word(*lane)?, c),
                mask: word(*mask)?,
                value: u64::from(word(*value)?),
            }));
        }
        InstData::WarpReduce { op, mask, value } => {
            return Ok(Step::Warp(WarpCall {
                kind: WarpKind::Reduce(*op),
                mask: as_int(&frame.get(*mask)?, "warp_reduce")?.1 as u32,
                value: u64::from(as_int(&frame.get(*value)?, "warp_reduce")?.1 as u32),
            }));
        }
        InstData::WarpMatch { mode, mask, value } => {
            let (bits, v) = as_int(&frame.get(*value)?, "warp_match")?;
            return Ok(Step::Warp(WarpCall {
                kind: WarpKind::Match(*mode, bits == 64),
                mask: as_int(&frame.get(*mask)?, "warp_match")?.1 as u32,
                value: v as u64,
            }));
        }
        InstData::Vote { mode, mask, pred } => {
            return Ok(Step::Warp(WarpCall {
                kind: WarpKind::Vote(*mode),
                mask: as_int(&frame.get(*mask)?, "vote")?.1 as u32,
                value: as_int(&frame.get(*pred)?, "vote")?.1 as u64 & 1,
            }));
        }
        InstData::WarpSync { mask } => {
            return Ok(Step::Warp(WarpCall {
                kind: WarpKind::Sync,
                mask: as_int(&frame.get(*mask)?, "warp_sync")?.1 as u32,
                value: 0,
            }));
        }
        InstData::ActiveMask => {
            return Ok(Step::Warp(WarpCall {
                kind: WarpKind::ActiveMask,
                mask: 0,
                value: 0,
            }));
        }
        InstData::AtomicLoad {
            ty, ptr, ordering, ..
        } => {
            let p = as_ptr(&frame.get(*ptr)?, "atomic_load")?;
            let size = layout::size_of(types, *ty);
            let (id, off) = atomic_target(ctx.mem, p, size, false, who("atomic_load"))?;
            let at = (func, inst);
            ctx.atomic(linear, at, id, off, size, AtomicOp::Load, *ordering)?;
            ctx.mem.read_at(id, off, *ty, types, who("atomic_load"))?
        }
        InstData::AtomicStore {
            ptr,
            value,
            ordering,
            ..
        } => {
            let p = as_ptr(&frame.get(*ptr)?, "atomic_store")?;
            let v = frame.get(*value)?;
            let ty = body.value_ty(*value);
            let size = layout::size_of(types, ty);
            let (id, off) = atomic_target(ctx.mem, p, size, true, who("atomic_store"))?;
            let at = (func, inst);
            ctx.atomic(linear, at, id, off, size, AtomicOp::Store, *ordering)?;
            ctx.mem.write_at(id, off, ty, &v, types)?;
            return Ok(Step::Continue);
        }
        InstData::AtomicRmw {
            op,
            ptr,
            value,
            ordering,
            ..
        } => {
            let p = as_ptr(&frame.get(*ptr)?, "atomic_rmw")?;
            let operand = frame.get(*value)?;
            let ty = body.value_ty(*value);
            let size = layout::size_of(types, ty);
            let (id, off) = atomic_target(ctx.mem, p, size, true, who("atomic_rmw"))?;
            let at = (func, inst);
            ctx.atomic(linear, at, id, off, size, AtomicOp::Rmw, *ordering)?;
            let old = ctx.mem.read_at(id, off, ty, types, who("atomic_rmw"))?;
            let new = ops::rmw(*op, &old, &operand)?;
            ctx.mem.write_at(id, off, ty, &new, types)?;
            old
        }
        InstData::AtomicCas {
            ptr,
            expected,
            new,
            ordering,
            ..
        } => {
            let p = as_ptr(&frame.get(*ptr)?, "atomic_cas")?;
            let (exp, new) = (frame.get(*expected)?, frame.get(*new)?);
            let ty = body.value_ty(*expected);
            let size = layout::size_of(types, ty);
            let (id, off) = atomic_target(ctx.mem, p, size, true, who("atomic_cas"))?;
            let old = ctx.mem.read_at(id, off, ty, types, who("atomic_cas"))?;
            let (_, o) = as_int(&old, "atomic_cas")?;
            let stores = o == as_int(&exp, "atomic_cas")?.1;
            let op = if stores {
                AtomicOp::Rmw
            } else {
                AtomicOp::FailedCas
            };
            ctx.atomic(linear, (func, inst), id, off, size, op, *ordering)?;
            if stores {
                ctx.mem.write_at(id, off, ty, &new, types)?;
            }
            old
        }
        InstData::Fence { ordering, .. } => {
            if let Some(r) = ctx.race.as_mut() {
                r.fence(linear, *ordering);
            }
            return Ok(Step::Continue);
        }
        InstData::InlineAsm { template, .. } => {
            let t = template.trim().trim_end_matches(';').trim();
            return Err(if t == "trap" {
                Fault::new(FaultKind::Trap, "the thread executed `trap`")
            } else {
                Fault::new(
                    FaultKind::Unsupported,
                    format!("inline PTX `{template}` cannot run on the virtual device"),
                )
            });
        }
    };
    frame.set(result, val);
    Ok(Step::Continue)
}

/// The address space of pointer type `ty` (generic if it is not a pointer).
fn space_of(module: &Module, ty: device_ir::Ty) -> AddressSpace {
    module
        .types
        .ptr_parts(ty)
        .map_or(AddressSpace::Generic, |(_, s)| s)
}
