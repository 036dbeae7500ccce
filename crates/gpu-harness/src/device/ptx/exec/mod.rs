//! One PTX thread: its call stack of frames (registers, parameter slots,
//! local depots) and the execution of one instruction.
//!
//! Registers hold raw bits in a `u64` (predicates as 0 or 1); each
//! instruction reads them at its own type's width. Memory ordering
//! qualifiers do not change values here: the schedule is sequentially
//! consistent, as on the IR device.
//!
//! Register arithmetic (integer, bit, float, comparisons, conversions) is in
//! [`arith`], atomics in [`atomic`], warp collectives in [`warp`], and which
//! bytes of a register were never written in [`shadow`]; this module holds
//! the thread, its operands and memory accesses, and control flow.

mod arith;
mod atomic;
mod shadow;
mod warp;

use std::collections::HashMap;
use std::sync::Arc;

use ptx_reader::Type;

use super::decode::{Base, Func, Inst, Op, Opd, Program, Sreg};
use super::memory::{Memory, Owner, Space, Who, address};
use crate::device::LaunchConfig;
use crate::device::virt::{Fault, FaultKind, Step, Val};
use shadow::undefined_use;

/// What a launch shares between its threads.
pub(crate) struct Ctx<'a> {
    pub program: &'a Program,
    /// The allocation of each non-shared module variable.
    pub globals: &'a [Option<u32>],
    /// The (empty) allocation of each function's code, by function index.
    pub code: &'a [u32],
    /// Each block's instances of `.shared` variables, made on first use.
    pub shared: HashMap<(u32, usize), u32>,
    pub config: LaunchConfig,
    pub mem: &'a mut Memory,
    pub max_call_depth: usize,
    /// Thread-instructions that used an `.approx` instruction.
    pub approx: u64,
    /// The launch's read-only copy of each kernel parameter, for a kernel
    /// that takes a parameter's address (`mov.b64 %rd, k_param_0`, as
    /// libNVVM reads an aggregate by value at a computed offset).
    pub kernel_params: Vec<u32>,
}

pub(crate) struct Frame {
    func: usize,
    pc: usize,
    regs: Vec<u64>,
    /// Per register, which of its bytes hold no written value (bit `k`:
    /// byte `k`): loaded from memory nobody wrote, and not yet used.
    undef: Vec<u8>,
    slots: Vec<Vec<u8>>,
    /// Per parameter slot, which bytes hold no written value.
    slot_undef: Vec<Vec<bool>>,
    locals: Vec<u32>,
    /// The caller's slots that receive the return values.
    ret_to: Vec<usize>,
}

pub(crate) struct Thread {
    pub tid: [u32; 3],
    pub ctaid: [u32; 3],
    pub in_block: u32,
    pub linear: u32,
    pub block: u32,
    pub stack: Vec<Frame>,
    pub steps: u64,
    /// The carry flag (`add.cc`, `addc`).
    carry: bool,
    /// The register a pending warp collective writes.
    pending: Option<u32>,
}

impl Thread {
    pub fn new(tid: [u32; 3], ctaid: [u32; 3], in_block: u32, block: u32, linear: u32) -> Self {
        Thread {
            tid,
            ctaid,
            in_block,
            linear,
            block,
            stack: Vec::new(),
            steps: 0,
            carry: false,
            pending: None,
        }
    }

    /// The function and instruction executing, innermost first, for messages.
    pub fn locations<'p>(&self, program: &'p Program) -> Vec<(&'p Func, Option<&'p Inst>)> {
        self.stack
            .iter()
            .rev()
            .map(|f| {
                let func = &program.funcs[f.func];
                (func, f.pc.checked_sub(1).and_then(|i| func.code.get(i)))
            })
            .collect()
    }

    /// Gives the warp collective the thread waits at its result.
    pub fn complete(&mut self, val: Option<Val>) {
        let (Some(reg), Some(frame)) = (self.pending.take(), self.stack.last_mut()) else {
            return;
        };
        if let Some(Val::Int { v, .. }) = val {
            frame.regs[reg as usize] = v as u64;
            frame.undef[reg as usize] = 0;
        }
    }

    /// Kills every frame's depots (after an exit or a fault).
    pub fn unwind(&mut self, mem: &mut Memory) {
        for f in self.stack.drain(..) {
            for id in f.locals {
                mem.kill(id);
            }
        }
    }
}

fn unsupported(msg: impl Into<String>) -> Fault {
    Fault::new(FaultKind::Unsupported, msg)
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    }
}

fn bits(t: Type) -> u32 {
    if t == Type::Pred {
        1
    } else {
        t.size() as u32 * 8
    }
}

fn signed(t: Type) -> bool {
    matches!(t, Type::S8 | Type::S16 | Type::S32 | Type::S64)
}

fn is_float(t: Type) -> bool {
    matches!(t, Type::F32 | Type::F64)
}

/// A fresh frame of `func`, its depots allocated for `thread`.
pub(crate) fn new_frame(
    mem: &mut Memory,
    program: &Program,
    func: usize,
    thread: u32,
) -> Result<Frame, Fault> {
    let f = &program.funcs[func];
    let mut locals = Vec::with_capacity(f.locals.len());
    for (name, size) in &f.locals {
        let owner = Owner::Local {
            symbol: name.clone(),
            func: f.name.clone(),
            thread,
        };
        locals.push(mem.alloc(owner, Space::Local, *size, false)?);
    }
    Ok(Frame {
        func,
        pc: 0,
        regs: vec![0; f.n_regs],
        undef: vec![0; f.n_regs],
        slots: f.slots.iter().map(|&n| vec![0; n as usize]).collect(),
        slot_undef: f.slots.iter().map(|&n| vec![false; n as usize]).collect(),
        locals,
        ret_to: Vec::new(),
    })
}

/// Starts `thread` in `kernel` with its parameters' bytes.
pub(crate) fn start(
    ctx: &mut Ctx<'_>,
    thread: &mut Thread,
    kernel: usize,
    params: &[Vec<u8>],
) -> Result<(), Fault> {
    let mut frame = new_frame(ctx.mem, ctx.program, kernel, thread.linear)?;
    for (i, (slot, bytes)) in frame.slots.iter_mut().zip(params).enumerate() {
        // Without device IR no check saw the arguments: a 16-byte value
        // for an 8-byte `.param` would lose its high half here.
        if slot.len() != bytes.len() {
            return Err(Fault::new(
                FaultKind::Unsupported,
                format!(
                    "parameter {i} is {} bytes, its argument {}",
                    slot.len(),
                    bytes.len()
                ),
            ));
        }
        slot.copy_from_slice(bytes);
    }
    thread.stack.push(frame);
    Ok(())
}

/// The memory an instruction's address names.
enum Target {
    Mem(u64),
    Slot(usize, usize),
}

struct Exec<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    t: &'c mut Thread,
}

impl Exec<'_, '_> {
    fn frame(&self) -> &Frame {
        // A stepping thread always has a frame (the scheduler checks).
        &self.t.stack[self.t.stack.len() - 1]
    }

    fn frame_mut(&mut self) -> &mut Frame {
        let n = self.t.stack.len() - 1;
        &mut self.t.stack[n]
    }

    fn who(&self, verb: &'static str) -> Who {
        Who {
            thread: self.t.linear,
            block: self.t.block,
            verb,
        }
    }

    fn global_addr(&mut self, g: usize) -> Result<u64, Fault> {
        let var = &self.ctx.program.globals[g];
        if var.space != Space::Shared {
            return self.ctx.globals[g]
                .map(|id| address(id, 0))
                .ok_or_else(|| unsupported(format!("{} has no allocation", var.name)));
        }
        // Every dynamic shared variable names the block's one dynamic memory.
        let key = (self.t.block, if var.dynamic { usize::MAX } else { g });
        if let Some(&id) = self.ctx.shared.get(&key) {
            return Ok(address(id, 0));
        }
        let owner = Owner::Shared {
            symbol: var.name.clone(),
            block: self.t.block,
        };
        let size = if var.dynamic {
            u64::from(self.ctx.config.shared_bytes)
        } else {
            var.size
        };
        let id = self.ctx.mem.alloc(owner, Space::Shared, size, false)?;
        self.ctx.shared.insert(key, id);
        Ok(address(id, 0))
    }

    fn sreg(&self, s: Sreg) -> u64 {
        let c = &self.ctx.config;
        let d = |v: [u32; 3], i: u8| u64::from(v[i as usize]);
        match s {
            Sreg::Tid(i) => d(self.t.tid, i),
            Sreg::Ntid(i) => d([c.block.x, c.block.y, c.block.z], i),
            Sreg::Ctaid(i) => d(self.t.ctaid, i),
            Sreg::Nctaid(i) => d([c.grid.x, c.grid.y, c.grid.z], i),
            Sreg::LaneId => u64::from(self.t.in_block % 32),
            Sreg::LaneMask(reg) => u64::from(reg.lane_mask(self.t.in_block % 32).unwrap_or(0)),
            Sreg::WarpId => u64::from(self.t.in_block / 32),
            Sreg::NWarpId => c.block.count().div_ceil(32),
        }
    }

    /// The value of a source operand (all 64 bits of a register).
    fn val(&mut self, o: &Opd) -> Result<u64, Fault> {
        Ok(match o {
            Opd::Reg(r) => self.frame().regs[*r as usize],
            Opd::Imm(v) => *v,
            Opd::Sreg(s) => self.sreg(*s),
            Opd::NotPred(r) => u64::from(self.frame().regs[*r as usize] & 1 == 0),
            Opd::Global(g, off) => self.global_addr(*g)?.wrapping_add(*off as u64),
            Opd::Func(f) => {
                address(
                    *self.ctx.code.get(*f).ok_or_else(|| {
                        unsupported(format!("function {f} has no code allocation"))
                    })?,
                    0,
                )
            }
            Opd::Local(l, off) => address(self.frame().locals[*l], 0).wrapping_add(*off as u64),
            // Only the kernel's own frame names kernel parameters; a
            // function's `.param`s have no address.
            Opd::Slot(s) if self.t.stack.len() == 1 && *s < self.ctx.kernel_params.len() => {
                address(self.ctx.kernel_params[*s], 0)
            }
            other => return Err(unsupported(format!("the operand {other:?} as a value"))),
        })
    }

    fn set(&mut self, o: &Opd, v: u64) -> Result<(), Fault> {
        match o {
            Opd::Reg(r) => {
                let f = self.frame_mut();
                f.regs[*r as usize] = v;
                f.undef[*r as usize] = 0;
                Ok(())
            }
            Opd::Sink => Ok(()),
            other => Err(unsupported(format!("the destination {other:?}"))),
        }
    }

    fn target(&mut self, o: &Opd) -> Result<Target, Fault> {
        let Opd::Addr(base, off) = o else {
            return Err(unsupported(format!("the address operand {o:?}")));
        };
        let off = *off;
        Ok(match *base {
            Base::Reg(r) => Target::Mem(self.frame().regs[r as usize].wrapping_add(off as u64)),
            Base::Global(g) => Target::Mem(self.global_addr(g)?.wrapping_add(off as u64)),
            Base::Local(l) => {
                Target::Mem(address(self.frame().locals[l], 0).wrapping_add(off as u64))
            }
            Base::Slot(s) => Target::Slot(
                s,
                usize::try_from(off).map_err(|_| {
                    Fault::new(
                        FaultKind::OutOfBounds,
                        format!("a parameter access at offset {off}"),
                    )
                })?,
            ),
        })
    }

    /// Loads `len` bytes; the value and which of its bytes were never
    /// written.
    fn load(&mut self, tgt: &Target, len: usize, space: Option<Space>) -> Result<(u64, u8), Fault> {
        match *tgt {
            Target::Mem(a) => self.ctx.mem.load_partial(a, len, space, self.who("load")),
            Target::Slot(s, off) => {
                let undef = self.frame().slot_undef[s]
                    .get(off..off + len)
                    .map_or(0, |b| {
                        b.iter()
                            .enumerate()
                            .fold(0u8, |m, (k, &u)| m | (u8::from(u) << k))
                    });
                let slot = &self.frame().slots[s];
                let bytes = slot.get(off..off + len).ok_or_else(|| {
                    Fault::new(
                        FaultKind::OutOfBounds,
                        format!(
                            "a load of {len} bytes at offset {off} of a parameter of {} bytes",
                            slot.len()
                        ),
                    )
                })?;
                let mut v = [0u8; 8];
                v[..len].copy_from_slice(bytes);
                Ok((u64::from_le_bytes(v), undef))
            }
        }
    }

    /// Stores the low `len` bytes of `v`; those named in `undef` become
    /// never written.
    fn store(
        &mut self,
        tgt: &Target,
        len: usize,
        v: u64,
        undef: u8,
        space: Option<Space>,
    ) -> Result<(), Fault> {
        match *tgt {
            Target::Mem(a) => {
                let who = self.who("store");
                self.ctx.mem.store_partial(a, len, v, undef, space, who)
            }
            Target::Slot(s, off) => {
                let slot = &mut self.frame_mut().slots[s];
                let n = slot.len();
                let bytes = slot.get_mut(off..off + len).ok_or_else(|| {
                    Fault::new(
                        FaultKind::OutOfBounds,
                        format!(
                            "a store of {len} bytes at offset {off} of a parameter of {n} bytes"
                        ),
                    )
                })?;
                bytes.copy_from_slice(&v.to_le_bytes()[..len]);
                for (k, u) in self.frame_mut().slot_undef[s][off..off + len]
                    .iter_mut()
                    .enumerate()
                {
                    *u = undef >> k & 1 == 1;
                }
                Ok(())
            }
        }
    }

    fn approx(&mut self) {
        self.ctx.approx += 1;
    }
}

fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

/// Executes one instruction of `t`.
pub(crate) fn step(ctx: &mut Ctx<'_>, t: &mut Thread) -> Result<Step, Fault> {
    let Some(frame) = t.stack.last_mut() else {
        return Ok(Step::Exit);
    };
    let program = ctx.program;
    let func = &program.funcs[frame.func];
    let Some(inst) = func.code.get(frame.pc) else {
        return Err(unsupported(format!(
            "{} runs past its last instruction",
            func.name
        )));
    };
    frame.pc += 1;
    if let Some((p, neg)) = inst.guard {
        if frame.undef[p as usize] & 1 != 0 {
            return Err(undefined_use(inst));
        }
        if (frame.regs[p as usize] & 1 == 1) == neg {
            return Ok(Step::Continue);
        }
    }
    let mut e = Exec { ctx, t };
    e.exec(inst)
}

impl Exec<'_, '_> {
    fn exec(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ty = i.ty;
        let w = bits(ty);
        let ops = &i.ops;
        self.check_defined(i)?;
        match i.op {
            Op::Mov => {
                match (&ops[0], &ops[1]) {
                    (Opd::Vector(parts), src) => {
                        // mov.b64 {lo, hi}, x: split into equal parts.
                        let v = self.val(src)?;
                        let undef = self.undef(src);
                        let pw = w / parts.len() as u32;
                        for (k, p) in parts.iter().enumerate() {
                            self.set(p, (v >> (pw * k as u32)) & mask(pw))?;
                            let bytes = (pw / 8).max(1);
                            self.set_undef(p, shadow::part(undef, k as u32 * bytes, bytes));
                        }
                    }
                    (dst, Opd::Vector(parts)) => {
                        let pw = w / parts.len() as u32;
                        let mut v = 0u64;
                        let mut undef = 0u8;
                        for (k, p) in parts.iter().enumerate() {
                            v |= (self.val(p)? & mask(pw)) << (pw * k as u32);
                            let bytes = (pw / 8).max(1);
                            undef |= shadow::part(self.undef(p), 0, bytes) << (k as u32 * bytes);
                        }
                        self.set(dst, v)?;
                        self.set_undef(dst, undef);
                    }
                    (dst, src) => {
                        let v = self.val(src)? & mask(w);
                        let undef = shadow::part(self.undef(src), 0, (w / 8).max(1));
                        self.set(dst, v)?;
                        self.set_undef(dst, undef);
                    }
                }
                Ok(Step::Continue)
            }
            Op::And if !is_float(ty) && (self.undef(&ops[1]) | self.undef(&ops[2])) != 0 => {
                self.and_following(i)
            }
            Op::Shl | Op::Shr if self.undef(&ops[1]) != 0 => self.shift_following(i),
            Op::Selp if (self.undef(&ops[1]) | self.undef(&ops[2])) != 0 => {
                self.select_following(i)
            }
            Op::Add | Op::Sub | Op::Mul
                if shadow::upward_carried(i)
                    && (self.undef(&ops[1]) | self.undef(&ops[2])) != 0 =>
            {
                self.upward_following(i)
            }
            Op::Neg | Op::Not if !is_float(ty) && self.undef(&ops[1]) != 0 => {
                self.unary_following(i)
            }
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Mad
            | Op::Fma
            | Op::Div
            | Op::Rem
            | Op::Min
            | Op::Max
                if is_float(ty) =>
            {
                self.float_arith(i)
            }
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Mad
            | Op::Fma
            | Op::Div
            | Op::Rem
            | Op::Min
            | Op::Max
            | Op::Neg
            | Op::Abs
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Not
            | Op::Cnot
            | Op::Shl
            | Op::Shr
            | Op::Shf
            | Op::Popc
            | Op::Clz
            | Op::Brev
            | Op::Bfi
            | Op::Bfe
            | Op::Prmt
            | Op::Copysign
            | Op::Setp
            | Op::Selp => self.arith(i),
            Op::Sqrt | Op::Rcp | Op::Rsqrt | Op::Ex2 | Op::Lg2 | Op::Sin | Op::Cos => {
                self.float_unary(i)
            }
            Op::Cvt if self.undef(&ops[1]) != 0 => self.convert_following(i),
            Op::Cvt => self.convert(i),
            Op::Cvta => {
                let v = self.val(&ops[1])? & mask(w);
                self.set(&ops[0], v)?;
                Ok(Step::Continue)
            }
            Op::Ld => {
                let tgt = self.target(&ops[1])?;
                let size = ty.size() as usize;
                let dsts: Vec<Opd> = match &ops[0] {
                    Opd::Vector(v) => v.clone(),
                    d => vec![d.clone()],
                };
                for (k, d) in dsts.iter().enumerate() {
                    let part = match &tgt {
                        Target::Mem(a) => Target::Mem(a.wrapping_add((k * size) as u64)),
                        Target::Slot(s, o) => Target::Slot(*s, o + k * size),
                    };
                    let raw = if k == 0 && dsts.len() > 1 {
                        // A vector access is aligned to its whole width.
                        if let Target::Mem(a) = part
                            && a % (size * dsts.len()) as u64 != 0
                        {
                            return Err(Fault::new(
                                FaultKind::Misaligned,
                                format!(
                                    "ld.v{} at {a:#x}: a vector access is aligned to its whole width",
                                    dsts.len()
                                ),
                            ));
                        }
                        self.load(&part, size, i.space)?
                    } else {
                        self.load(&part, size, i.space)?
                    };
                    let (raw, undef) = raw;
                    let v = if signed(ty) { sext(raw, w) as u64 } else { raw };
                    self.set(d, v)?;
                    self.set_undef(d, shadow::resize(undef, size as u32, 8, signed(ty)));
                }
                Ok(Step::Continue)
            }
            Op::St => {
                let tgt = self.target(&ops[0])?;
                let size = ty.size() as usize;
                let srcs: Vec<Opd> = match &ops[1] {
                    Opd::Vector(v) => v.clone(),
                    s => vec![s.clone()],
                };
                if let (Target::Mem(a), true) = (&tgt, srcs.len() > 1)
                    && a % (size * srcs.len()) as u64 != 0
                {
                    return Err(Fault::new(
                        FaultKind::Misaligned,
                        format!(
                            "st.v{} at {a:#x}: a vector access is aligned to its whole width",
                            srcs.len()
                        ),
                    ));
                }
                for (k, s) in srcs.iter().enumerate() {
                    let v = self.val(s)?;
                    let undef = self.undef(s);
                    let part = match &tgt {
                        Target::Mem(a) => Target::Mem(a.wrapping_add((k * size) as u64)),
                        Target::Slot(sl, o) => Target::Slot(*sl, o + k * size),
                    };
                    self.store(&part, size, v, undef, i.space)?;
                }
                Ok(Step::Continue)
            }
            Op::Atom | Op::Red => self.atomic(i),
            Op::Bra => {
                let Opd::Label(l) = ops[0] else {
                    return Err(unsupported("an indirect branch"));
                };
                self.frame_mut().pc = l;
                Ok(Step::Continue)
            }
            Op::Call => self.call(i),
            Op::Ret => self.ret(),
            Op::Exit => Ok(Step::Exit),
            Op::Trap => Err(Fault::new(
                FaultKind::Trap,
                "trap: the kernel executed `trap`",
            )),
            Op::BarSync => {
                let id = self.val(&ops[0])?;
                if id != 0 || ops.len() > 1 {
                    return Err(unsupported(
                        "bar.sync with a barrier other than 0 or a thread count",
                    ));
                }
                Ok(Step::Barrier)
            }
            Op::Fence => Ok(Step::Continue),
            Op::Shfl | Op::Vote | Op::Redux | Op::Match | Op::ActiveMask | Op::WarpSync => {
                self.warp(i)
            }
        }
    }

    /// `call (RETS), f, (ARGS);`, or `call (RETS), %rd, (ARGS), proto;`
    /// through a function's address: the address must be a function's
    /// whose parameters and results are as many as the prototype's.
    fn call(&mut self, i: &Inst) -> Result<Step, Fault> {
        let direct = i.ops.iter().enumerate().find_map(|(k, o)| match o {
            Opd::Func(f) => Some((k, *f)),
            _ => None,
        });
        let (at, callee) = match direct {
            Some(found) => found,
            None => self.indirect_callee(i)?,
        };
        let slots_of = |o: Option<&Opd>| -> Result<Vec<usize>, Fault> {
            match o {
                None => Ok(Vec::new()),
                Some(Opd::List(items)) => items
                    .iter()
                    .map(|x| match x {
                        Opd::Slot(s) => Ok(*s),
                        other => Err(unsupported(format!("a call argument {other:?}"))),
                    })
                    .collect(),
                Some(other) => Err(unsupported(format!("a call operand {other:?}"))),
            }
        };
        let rets = slots_of(if at > 0 { i.ops.first() } else { None })?;
        let args = match i.ops.get(at + 1) {
            Some(Opd::Proto { .. }) => Vec::new(),
            list => slots_of(list)?,
        };
        if self.t.stack.len() >= self.ctx.max_call_depth {
            return Err(Fault::new(
                FaultKind::StackOverflow,
                format!("the call stack exceeds {} frames", self.ctx.max_call_depth),
            ));
        }
        let program = self.ctx.program;
        let f = &program.funcs[callee];
        if args.len() != f.n_params || rets.len() > f.n_returns {
            return Err(unsupported(format!(
                "a call of {} with {} arguments and {} results; it takes {} and gives {}",
                f.name,
                args.len(),
                rets.len(),
                f.n_params,
                f.n_returns
            )));
        }
        let mut frame = new_frame(self.ctx.mem, program, callee, self.t.linear)?;
        let caller = self.frame();
        for (k, &s) in args.iter().enumerate() {
            let src = &caller.slots[s];
            let dst = &mut frame.slots[k];
            let n = src.len().min(dst.len());
            dst[..n].copy_from_slice(&src[..n]);
            frame.slot_undef[k][..n].copy_from_slice(&caller.slot_undef[s][..n]);
        }
        frame.ret_to = rets;
        self.t.stack.push(frame);
        Ok(Step::Continue)
    }

    /// The operand index and the function of an indirect call: its operand
    /// before the argument list holds the address, its last names the
    /// prototype.
    fn indirect_callee(&mut self, i: &Inst) -> Result<(usize, usize), Fault> {
        let Some(Opd::Proto { params, returns }) = i.ops.last() else {
            return Err(unsupported("a call of neither a function nor a prototype"));
        };
        let at = usize::from(matches!(i.ops.first(), Some(Opd::List(_))));
        let target = self.val(&i.ops[at])?;
        let program = self.ctx.program;
        let Some(f) = self.ctx.code.iter().position(|&c| address(c, 0) == target) else {
            return Err(Fault::new(
                FaultKind::BadCall,
                format!(
                    "an indirect call through {}, not a function's address",
                    self.ctx.mem.describe_address(target)
                ),
            ));
        };
        let func = &program.funcs[f];
        let (own_params, own_returns) = func.slots.split_at(func.n_params.min(func.slots.len()));
        let own_returns = &own_returns[..func.n_returns.min(own_returns.len())];
        if own_params != params.as_slice() || own_returns != returns.as_slice() {
            return Err(Fault::new(
                FaultKind::BadCall,
                format!(
                    "an indirect call with a prototype of parameters {params:?} and results \
                     {returns:?} (bytes), through the address of {}, which takes {own_params:?} \
                     and gives {own_returns:?}",
                    func.name
                ),
            ));
        }
        Ok((at, f))
    }

    fn ret(&mut self) -> Result<Step, Fault> {
        let Some(frame) = self.t.stack.pop() else {
            return Ok(Step::Exit);
        };
        for &id in &frame.locals {
            self.ctx.mem.kill(id);
        }
        let Some(caller) = self.t.stack.last_mut() else {
            return Ok(Step::Exit);
        };
        let f = &self.ctx.program.funcs[frame.func];
        for (k, &s) in frame.ret_to.iter().enumerate() {
            let src = &frame.slots[f.n_params + k];
            let dst = &mut caller.slots[s];
            let n = src.len().min(dst.len());
            dst[..n].copy_from_slice(&src[..n]);
            caller.slot_undef[s][..n].copy_from_slice(&frame.slot_undef[f.n_params + k][..n]);
        }
        Ok(Step::Continue)
    }
}

/// A fault's place, as ExecError wants it: the function and the instruction.
pub(crate) fn describe_inst(i: Option<&Inst>) -> String {
    match i {
        Some(i) => format!("line {} ({})", i.src.pos.line, i.src),
        None => "entry".to_owned(),
    }
}

/// The names of functions, for reports.
pub(crate) fn func_name(program: &Program, f: usize) -> Arc<str> {
    program.funcs[f].name.clone()
}
