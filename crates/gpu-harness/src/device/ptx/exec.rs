//! One PTX thread: its call stack of frames (registers, parameter slots,
//! local depots) and the execution of one instruction.
//!
//! Registers hold raw bits in a `u64` (predicates as 0 or 1); each
//! instruction reads them at its own type's width. Memory ordering
//! qualifiers do not change values here: the schedule is sequentially
//! consistent, as on the IR device. Warp collectives are handed to the shared
//! schedule ([`Step::Warp`]); a shuffle is sent as `idx` with the source lane
//! PTX's clamp and segment mask give, so the gathering needs no PTX rules.

use std::collections::HashMap;
use std::sync::Arc;

use device_ir::{ShuffleMode, VoteMode};
use ptx_reader::{Cmp, Type};

use super::decode::{Base, Func, Inst, Op, Opd, Program, Sreg, type_size};
use super::float::{self, Round, bits32, bits64};
use super::memory::{Memory, Owner, Space, Who, address};
use crate::device::LaunchConfig;
use crate::device::virt::{Fault, FaultKind, Step, Val, WarpCall, WarpKind};

/// What a launch shares between its threads.
pub(crate) struct Ctx<'a> {
    pub program: &'a Program,
    /// The allocation of each non-shared module variable.
    pub globals: &'a [Option<u32>],
    /// Each block's instances of `.shared` variables, made on first use.
    pub shared: HashMap<(u32, usize), u32>,
    pub config: LaunchConfig,
    pub mem: &'a mut Memory,
    pub max_call_depth: usize,
    /// Thread-instructions that used an `.approx` instruction.
    pub approx: u64,
}

pub(crate) struct Frame {
    func: usize,
    pc: usize,
    regs: Vec<u64>,
    slots: Vec<Vec<u8>>,
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
        type_size(t) as u32 * 8
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
        slots: f.slots.iter().map(|&n| vec![0; n as usize]).collect(),
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
    for (slot, bytes) in frame.slots.iter_mut().zip(params) {
        let n = slot.len().min(bytes.len());
        slot[..n].copy_from_slice(&bytes[..n]);
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
        let key = (self.t.block, g);
        if let Some(&id) = self.ctx.shared.get(&key) {
            return Ok(address(id, 0));
        }
        let owner = Owner::Shared {
            symbol: var.name.clone(),
            block: self.t.block,
        };
        let id = self.ctx.mem.alloc(owner, Space::Shared, var.size, false)?;
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
            Opd::Local(l, off) => address(self.frame().locals[*l], 0).wrapping_add(*off as u64),
            other => return Err(unsupported(format!("the operand {other:?} as a value"))),
        })
    }

    fn set(&mut self, o: &Opd, v: u64) -> Result<(), Fault> {
        match o {
            Opd::Reg(r) => {
                self.frame_mut().regs[*r as usize] = v;
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

    fn load(&mut self, tgt: &Target, len: usize, space: Option<Space>) -> Result<u64, Fault> {
        match *tgt {
            Target::Mem(a) => self.ctx.mem.load(a, len, space, self.who("load")),
            Target::Slot(s, off) => {
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
                Ok(u64::from_le_bytes(v))
            }
        }
    }

    fn store(
        &mut self,
        tgt: &Target,
        len: usize,
        v: u64,
        space: Option<Space>,
    ) -> Result<(), Fault> {
        match *tgt {
            Target::Mem(a) => {
                let who = self.who("store");
                self.ctx.mem.store(a, len, v, space, who)
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

fn arith(msg: String) -> Fault {
    Fault::new(FaultKind::Arithmetic, msg)
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
    if let Some((p, neg)) = inst.guard
        && (frame.regs[p as usize] & 1 == 1) == neg
    {
        return Ok(Step::Continue);
    }
    let mut e = Exec { ctx, t };
    e.exec(inst)
}

impl Exec<'_, '_> {
    fn exec(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ty = i.ty;
        let w = bits(ty);
        let ops = &i.ops;
        match i.op {
            Op::Mov => {
                match (&ops[0], &ops[1]) {
                    (Opd::Vector(parts), src) => {
                        // mov.b64 {lo, hi}, x: split into equal parts.
                        let v = self.val(src)?;
                        let pw = w / parts.len() as u32;
                        for (k, p) in parts.iter().enumerate() {
                            self.set(p, (v >> (pw * k as u32)) & mask(pw))?;
                        }
                    }
                    (dst, Opd::Vector(parts)) => {
                        let pw = w / parts.len() as u32;
                        let mut v = 0u64;
                        for (k, p) in parts.iter().enumerate() {
                            v |= (self.val(p)? & mask(pw)) << (pw * k as u32);
                        }
                        self.set(dst, v)?;
                    }
                    (dst, Opd::Func(_)) => {
                        return Err(unsupported(format!(
                            "the address of a function into {dst:?}"
                        )));
                    }
                    (dst, src) => {
                        let v = self.val(src)? & mask(w);
                        self.set(dst, v)?;
                    }
                }
                Ok(Step::Continue)
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
            Op::Add | Op::Sub => {
                let a = self.val(&ops[1])? & mask(w);
                let b = self.val(&ops[2])? & mask(w);
                let cin = u64::from(i.flags.carry_in && self.t.carry);
                let (d, carry) = if i.op == Op::Add {
                    let full = u128::from(a) + u128::from(b) + u128::from(cin);
                    (full as u64 & mask(w), full >> w != 0)
                } else {
                    let full = i128::from(a) - i128::from(b) - i128::from(cin);
                    (full as u64 & mask(w), full < 0)
                };
                let d = if i.flags.sat && signed(ty) {
                    let (x, y) = (i128::from(sext(a, w)), i128::from(sext(b, w)));
                    let r = if i.op == Op::Add { x + y } else { x - y };
                    let (lo, hi) = (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1);
                    r.clamp(lo, hi) as u64 & mask(w)
                } else {
                    d
                };
                if i.flags.cc {
                    self.t.carry = carry;
                }
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Fma => Err(unsupported("fma on an integer type")),
            Op::Mul | Op::Mad => {
                let a = self.val(&ops[1])? & mask(w);
                let b = self.val(&ops[2])? & mask(w);
                let prod: u128 = if signed(ty) {
                    (i128::from(sext(a, w)) * i128::from(sext(b, w))) as u128
                } else {
                    u128::from(a) * u128::from(b)
                };
                let (part, dw) = if i.flags.wide {
                    (prod as u64 & mask(2 * w), 2 * w)
                } else if i.flags.hi {
                    ((prod >> w) as u64 & mask(w), w)
                } else {
                    (prod as u64 & mask(w), w)
                };
                let d = if i.op == Op::Mad {
                    let c = self.val(&ops[3])? & mask(dw);
                    let cin = u64::from(i.flags.carry_in && self.t.carry);
                    let full = u128::from(part) + u128::from(c) + u128::from(cin);
                    if i.flags.cc {
                        self.t.carry = full >> dw != 0;
                    }
                    full as u64 & mask(dw)
                } else {
                    part
                };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Div | Op::Rem => {
                let a = self.val(&ops[1])? & mask(w);
                let b = self.val(&ops[2])? & mask(w);
                if b == 0 {
                    return Err(arith(format!(
                        "{} by zero",
                        if i.op == Op::Div {
                            "division"
                        } else {
                            "remainder"
                        }
                    )));
                }
                let d = if signed(ty) {
                    let (x, y) = (sext(a, w), sext(b, w));
                    if x == i64::MIN >> (64 - w) && y == -1 {
                        return Err(arith("signed division overflows".into()));
                    }
                    (if i.op == Op::Div { x / y } else { x % y }) as u64
                } else if i.op == Op::Div {
                    a / b
                } else {
                    a % b
                };
                self.set(&ops[0], d & mask(w))?;
                Ok(Step::Continue)
            }
            Op::Min | Op::Max => {
                let a = self.val(&ops[1])? & mask(w);
                let b = self.val(&ops[2])? & mask(w);
                let a_first = if signed(ty) {
                    sext(a, w) <= sext(b, w)
                } else {
                    a <= b
                };
                let d = if (i.op == Op::Min) == a_first { a } else { b };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Neg | Op::Abs => {
                let a = self.val(&ops[1])?;
                let d = match (ty, i.op) {
                    (Type::F32, Op::Neg) => u64::from(a as u32 ^ 0x8000_0000),
                    (Type::F32, _) => u64::from(a as u32 & 0x7fff_ffff),
                    (Type::F64, Op::Neg) => a ^ (1 << 63),
                    (Type::F64, _) => a & !(1 << 63),
                    (_, Op::Neg) => (sext(a, w).wrapping_neg() as u64) & mask(w),
                    _ => (sext(a, w).wrapping_abs() as u64) & mask(w),
                };
                let d = if i.flags.ftz && ty == Type::F32 {
                    u64::from(float::ftz32(f32_of(d)).to_bits())
                } else {
                    d
                };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::And | Op::Or | Op::Xor => {
                let a = self.val(&ops[1])?;
                let b = self.val(&ops[2])?;
                let d = match i.op {
                    Op::And => a & b,
                    Op::Or => a | b,
                    _ => a ^ b,
                };
                self.set(&ops[0], d & mask(w))?;
                Ok(Step::Continue)
            }
            Op::Not | Op::Cnot => {
                let a = self.val(&ops[1])? & mask(w);
                let d = if i.op == Op::Not {
                    !a & mask(w)
                } else {
                    u64::from(a == 0)
                };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Shl | Op::Shr => {
                let a = self.val(&ops[1])? & mask(w);
                let n = (self.val(&ops[2])? & 0xffff_ffff).min(u64::from(w)) as u32;
                let d = if i.op == Op::Shl {
                    if n >= w { 0 } else { (a << n) & mask(w) }
                } else if signed(ty) {
                    let s = sext(a, w);
                    ((if n >= 64 { s >> 63 } else { s >> n.min(63) }) as u64) & mask(w)
                } else if n >= w {
                    0
                } else {
                    a >> n
                };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Shf => {
                // Funnel shift of the 2w-bit value b:a.
                let a = self.val(&ops[1])? & mask(w);
                let b = self.val(&ops[2])? & mask(w);
                let c = self.val(&ops[3])? as u32;
                let n = if i.flags.clamp { c.min(w) } else { c & (w - 1) };
                let both = (u128::from(b) << w) | u128::from(a);
                let d = if i.flags.left {
                    ((both << n) >> w) as u64
                } else {
                    (both >> n) as u64
                };
                self.set(&ops[0], d & mask(w))?;
                Ok(Step::Continue)
            }
            Op::Popc | Op::Clz | Op::Brev => {
                let a = self.val(&ops[1])? & mask(w);
                let d = match i.op {
                    Op::Popc => u64::from(a.count_ones()),
                    Op::Clz => u64::from(a.leading_zeros() - (64 - w)),
                    _ => a.reverse_bits() >> (64 - w),
                };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Bfi => {
                let a = self.val(&ops[1])?;
                let b = self.val(&ops[2])? & mask(w);
                let pos = (self.val(&ops[3])? & 0xff) as u32;
                let len = (self.val(&ops[4])? & 0xff) as u32;
                let d = if len == 0 || pos >= w {
                    b
                } else {
                    let len = len.min(w - pos);
                    let m = mask(len) << pos;
                    (b & !m) | ((a << pos) & m)
                };
                self.set(&ops[0], d & mask(w))?;
                Ok(Step::Continue)
            }
            Op::Bfe => {
                // PTX: bit i of d is bit pos+i of a while i < len and
                // pos+i is inside a, else the sign bit (0 when unsigned).
                let a = self.val(&ops[1])? & mask(w);
                let pos = (self.val(&ops[2])? & 0xff) as u32;
                let len = (self.val(&ops[3])? & 0xff) as u32;
                let sbit = if signed(ty) && len != 0 {
                    (a >> (pos + len - 1).min(w - 1)) & 1
                } else {
                    0
                };
                let mut d = 0u64;
                for k in 0..w {
                    let bit = if k < len && pos + k < w {
                        (a >> (pos + k)) & 1
                    } else {
                        sbit
                    };
                    d |= bit << k;
                }
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Prmt => {
                let a = self.val(&ops[1])? & 0xffff_ffff;
                let b = self.val(&ops[2])? & 0xffff_ffff;
                let c = self.val(&ops[3])?;
                let bytes = (b << 32 | a).to_le_bytes();
                let mut d = 0u64;
                for k in 0..4 {
                    let sel = (c >> (4 * k)) & 0xf;
                    let mut byte = bytes[(sel & 7) as usize];
                    if sel & 8 != 0 {
                        byte = if byte & 0x80 != 0 { 0xff } else { 0 };
                    }
                    d |= u64::from(byte) << (8 * k);
                }
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Copysign => {
                let a = self.val(&ops[1])?;
                let b = self.val(&ops[2])?;
                let d = if ty == Type::F32 {
                    u64::from(f32_of(b).copysign(f32_of(a)).to_bits())
                } else {
                    f64_of(b).copysign(f64_of(a)).to_bits()
                };
                self.set(&ops[0], d)?;
                Ok(Step::Continue)
            }
            Op::Sqrt | Op::Rcp | Op::Rsqrt | Op::Ex2 | Op::Lg2 | Op::Sin | Op::Cos => {
                self.float_unary(i)
            }
            Op::Setp => {
                let a = self.val(&ops[1])?;
                let b = self.val(&ops[2])?;
                let cmp = i.cmp.unwrap_or(Cmp::Eq);
                let r = compare(ty, cmp, a, b, i.flags.ftz)?;
                self.set(&ops[0], u64::from(r))?;
                Ok(Step::Continue)
            }
            Op::Selp => {
                let p = self.val(&ops[3])? & 1 == 1;
                let v = self.val(if p { &ops[1] } else { &ops[2] })? & mask(w);
                self.set(&ops[0], v)?;
                Ok(Step::Continue)
            }
            Op::Cvt => self.convert(i),
            Op::Cvta => {
                let v = self.val(&ops[1])? & mask(w);
                self.set(&ops[0], v)?;
                Ok(Step::Continue)
            }
            Op::Ld => {
                let tgt = self.target(&ops[1])?;
                let size = type_size(ty) as usize;
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
                    let v = if signed(ty) { sext(raw, w) as u64 } else { raw };
                    self.set(d, v)?;
                }
                Ok(Step::Continue)
            }
            Op::St => {
                let tgt = self.target(&ops[0])?;
                let size = type_size(ty) as usize;
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
                    let part = match &tgt {
                        Target::Mem(a) => Target::Mem(a.wrapping_add((k * size) as u64)),
                        Target::Slot(sl, o) => Target::Slot(*sl, o + k * size),
                    };
                    self.store(&part, size, v, i.space)?;
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
            Op::Shfl => {
                let a = self.val(&ops[1])? as u32;
                let b = self.val(&ops[2])? as u32;
                let c = self.val(&ops[3])? as u32;
                let member = self.val(&ops[4])? as u32;
                let lane = self.t.in_block % 32;
                let src = shuffle_source(i.sel.unwrap_or("idx"), lane, b, c)?;
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Shuffle(ShuffleMode::Idx, src),
                    mask: member,
                    value: a,
                }))
            }
            Op::Vote => {
                let p = self.val(&ops[1])? & 1;
                let member = self.val(&ops[2])? as u32;
                let mode = match i.sel {
                    Some("ballot") => VoteMode::Ballot,
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    other => return Err(unsupported(format!("vote mode {other:?}"))),
                };
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Vote(mode),
                    mask: member,
                    value: p as u32,
                }))
            }
            Op::ActiveMask => {
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::ActiveMask,
                    mask: 0,
                    value: 0,
                }))
            }
            Op::WarpSync => {
                let member = self.val(&ops[0])? as u32;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Sync,
                    mask: member,
                    value: 0,
                }))
            }
        }
    }

    fn pend(&mut self, dst: &Opd) -> Result<(), Fault> {
        match dst {
            Opd::Reg(r) => {
                self.t.pending = Some(*r);
                Ok(())
            }
            other => Err(unsupported(format!("a warp collective writing {other:?}"))),
        }
    }

    fn float_arith(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let a = self.val(&ops[1])?;
        let b = self.val(&ops[2])?;
        let c = if ops.len() > 3 { self.val(&ops[3])? } else { 0 };
        let mode = i.round.unwrap_or(Round::Nearest);
        if i.flags.approx {
            self.approx();
        }
        let d = if i.ty == Type::F32 {
            let ftz = |x: u64| {
                let x = f32_of(x);
                if i.flags.ftz { float::ftz32(x) } else { x }
            };
            let (a, b, c) = (ftz(a), ftz(b), ftz(c));
            let r = match i.op {
                Op::Add => float::add32(a, b, mode),
                Op::Sub => float::add32(a, -b, mode),
                Op::Mul => float::mul32(a, b, mode),
                Op::Mad | Op::Fma => float::fma32(a, b, c, mode),
                Op::Div if i.flags.approx => a / b,
                Op::Div => float::div32(a, b, mode),
                Op::Min => float::min64(f64::from(a), f64::from(b)) as f32,
                Op::Max => float::max64(f64::from(a), f64::from(b)) as f32,
                _ => return Err(unsupported(format!("{:?} on f32", i.op))),
            };
            let r = if i.flags.ftz { float::ftz32(r) } else { r };
            let r = if i.flags.sat { saturate32(r) } else { r };
            u64::from(bits32(r))
        } else {
            let (a, b, c) = (f64_of(a), f64_of(b), f64_of(c));
            let r = match i.op {
                Op::Add => float::add64(a, b, mode),
                Op::Sub => float::add64(a, -b, mode),
                Op::Mul => float::mul64(a, b, mode),
                Op::Mad | Op::Fma => float::fma64(a, b, c, mode).map_err(|e| unsupported(e.0))?,
                Op::Div => float::div64(a, b, mode),
                Op::Min => float::min64(a, b),
                Op::Max => float::max64(a, b),
                _ => return Err(unsupported(format!("{:?} on f64", i.op))),
            };
            bits64(r)
        };
        self.set(&ops[0], d)?;
        Ok(Step::Continue)
    }

    fn float_unary(&mut self, i: &Inst) -> Result<Step, Fault> {
        let a = self.val(&i.ops[1])?;
        let mode = i.round.unwrap_or(Round::Nearest);
        if i.flags.approx {
            self.approx();
        }
        let d = if i.ty == Type::F32 {
            let x = if i.flags.ftz {
                float::ftz32(f32_of(a))
            } else {
                f32_of(a)
            };
            let r = match (i.op, i.flags.approx) {
                (Op::Sqrt, false) => float::sqrt32(x, mode),
                (Op::Sqrt, true) => x.sqrt(),
                (Op::Rcp, false) => float::div32(1.0, x, mode),
                (Op::Rcp, true) => 1.0 / x,
                (Op::Rsqrt, _) => 1.0 / x.sqrt(),
                (Op::Ex2, _) => x.exp2(),
                (Op::Lg2, _) => x.log2(),
                (Op::Sin, _) => x.sin(),
                (Op::Cos, _) => x.cos(),
                _ => return Err(unsupported(format!("{:?} on f32", i.op))),
            };
            let r = if i.flags.ftz { float::ftz32(r) } else { r };
            u64::from(bits32(r))
        } else {
            let x = f64_of(a);
            let flush = |v: f64| {
                if i.flags.ftz && v.is_subnormal() {
                    0.0f64.copysign(v)
                } else {
                    v
                }
            };
            let x = flush(x);
            let r = match (i.op, i.flags.approx) {
                (Op::Sqrt, false) => float::sqrt64(x, mode),
                (Op::Sqrt, true) => x.sqrt(),
                (Op::Rcp, false) => float::div64(1.0, x, mode),
                (Op::Rcp, true) => 1.0 / x,
                (Op::Rsqrt, _) => 1.0 / x.sqrt(),
                _ => return Err(unsupported(format!("{:?} on f64", i.op))),
            };
            bits64(flush(r))
        };
        self.set(&i.ops[0], d)?;
        Ok(Step::Continue)
    }

    fn convert(&mut self, i: &Inst) -> Result<Step, Fault> {
        let dt = i.ty;
        let st = i.ty2.unwrap_or(dt);
        let raw = self.val(&i.ops[1])?;
        let (dw, sw) = (bits(dt), bits(st));
        let mode = i.round.unwrap_or(Round::Nearest);
        let d = match (is_float(dt), is_float(st)) {
            (false, false) => {
                let v: i128 = if signed(st) {
                    i128::from(sext(raw, sw))
                } else {
                    i128::from(raw & mask(sw))
                };
                let v = if i.flags.sat {
                    let (lo, hi) = int_range(dt);
                    v.clamp(lo, hi)
                } else {
                    v
                };
                (v as u64) & mask(dw)
            }
            (true, false) => {
                let v: i128 = if signed(st) {
                    i128::from(sext(raw, sw))
                } else {
                    i128::from(raw & mask(sw))
                };
                if dt == Type::F32 {
                    u64::from(bits32(float::int_to_f32(v, mode)))
                } else {
                    bits64(float::int_to_f64(v, mode))
                }
            }
            (false, true) => {
                let x = if st == Type::F32 {
                    let x = f32_of(raw);
                    f64::from(if i.flags.ftz { float::ftz32(x) } else { x })
                } else {
                    f64_of(raw)
                };
                let (lo, hi) = int_range(dt);
                let v: i128 = if x.is_nan() {
                    0
                } else {
                    let r = float::round_integral(x, mode);
                    if r <= lo as f64 {
                        lo
                    } else if r >= hi as f64 {
                        hi
                    } else {
                        r as i128
                    }
                };
                (v as u64) & mask(dw)
            }
            (true, true) => {
                let x = if st == Type::F32 {
                    let x = f32_of(raw);
                    f64::from(if i.flags.ftz { float::ftz32(x) } else { x })
                } else {
                    f64_of(raw)
                };
                let x = if i.round_int {
                    float::round_integral(x, mode)
                } else {
                    x
                };
                if dt == Type::F32 {
                    let r = if st == Type::F32 || x.is_nan() || x.is_infinite() {
                        x as f32
                    } else {
                        float::round_to_f32(x, 0.0, mode)
                    };
                    let r = if i.flags.ftz { float::ftz32(r) } else { r };
                    let r = if i.flags.sat { saturate32(r) } else { r };
                    u64::from(bits32(r))
                } else {
                    let r = if i.flags.sat { saturate64(x) } else { x };
                    bits64(r)
                }
            }
        };
        self.set(&i.ops[0], d)?;
        Ok(Step::Continue)
    }

    fn atomic(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let (dst, addr_op, rest) = if i.op == Op::Atom {
            (Some(&ops[0]), &ops[1], &ops[2..])
        } else {
            (None, &ops[0], &ops[1..])
        };
        let Target::Mem(addr) = self.target(addr_op)? else {
            return Err(unsupported("an atomic on a parameter"));
        };
        let ty = i.ty;
        let w = bits(ty);
        let size = type_size(ty) as usize;
        let who = self.who("atomic");
        let old = self.ctx.mem.load(addr, size, i.space, who)?;
        let b = self.val(&rest[0])? & mask(w);
        let sel = i.sel.unwrap_or("");
        let new = match (sel, ty) {
            ("add", Type::F32) => {
                // atom.add.f32 rounds to nearest and flushes subnormals.
                let r = float::ftz32(float::add32(
                    float::ftz32(f32_of(old)),
                    float::ftz32(f32_of(b)),
                    Round::Nearest,
                ));
                u64::from(bits32(r))
            }
            ("add", Type::F64) => bits64(f64_of(old) + f64_of(b)),
            ("add", _) => old.wrapping_add(b) & mask(w),
            ("exch", _) => b,
            ("and", _) => old & b,
            ("or", _) => old | b,
            ("xor", _) => old ^ b,
            ("min", _) if signed(ty) => {
                if sext(old, w) <= sext(b, w) {
                    old
                } else {
                    b
                }
            }
            ("max", _) if signed(ty) => {
                if sext(old, w) >= sext(b, w) {
                    old
                } else {
                    b
                }
            }
            ("min", _) => old.min(b),
            ("max", _) => old.max(b),
            ("inc", _) => {
                if old >= b {
                    0
                } else {
                    old + 1
                }
            }
            ("dec", _) => {
                if old == 0 || old > b {
                    b
                } else {
                    old - 1
                }
            }
            ("cas", _) => {
                let c = self.val(&rest[1])? & mask(w);
                if old == b { c } else { old }
            }
            (s, t) => return Err(unsupported(format!("atom.{s}.{t}"))),
        };
        let who = self.who("atomic");
        self.ctx.mem.store(addr, size, new, i.space, who)?;
        if let Some(d) = dst {
            self.set(d, old)?;
        }
        Ok(Step::Continue)
    }

    fn call(&mut self, i: &Inst) -> Result<Step, Fault> {
        let Some(at) = i.ops.iter().position(|o| matches!(o, Opd::Func(_))) else {
            return Err(unsupported("an indirect call"));
        };
        let Opd::Func(callee) = i.ops[at] else {
            return Err(unsupported("an indirect call"));
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
        let args = slots_of(i.ops.get(at + 1))?;
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
        }
        frame.ret_to = rets;
        self.t.stack.push(frame);
        Ok(Step::Continue)
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
        }
        Ok(Step::Continue)
    }
}

fn saturate32(r: f32) -> f32 {
    if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
}

fn saturate64(r: f64) -> f64 {
    if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
}

/// The range of an integer type.
fn int_range(t: Type) -> (i128, i128) {
    let w = bits(t);
    if signed(t) {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

/// `setp`'s comparison of `a` and `b` as `ty`.
fn compare(ty: Type, cmp: Cmp, a: u64, b: u64, ftz: bool) -> Result<bool, Fault> {
    use std::cmp::Ordering::*;
    if is_float(ty) {
        let (x, y) = if ty == Type::F32 {
            let f = |v: u64| {
                let v = f32_of(v);
                f64::from(if ftz { float::ftz32(v) } else { v })
            };
            (f(a), f(b))
        } else {
            (f64_of(a), f64_of(b))
        };
        let o = x.partial_cmp(&y);
        let un = o.is_none();
        return Ok(match cmp {
            Cmp::Eq => o == Some(Equal),
            Cmp::Ne => o.is_some() && o != Some(Equal),
            Cmp::Lt => o == Some(Less),
            Cmp::Le => matches!(o, Some(Less | Equal)),
            Cmp::Gt => o == Some(Greater),
            Cmp::Ge => matches!(o, Some(Greater | Equal)),
            Cmp::Equ => un || o == Some(Equal),
            Cmp::Neu => o != Some(Equal),
            Cmp::Ltu => un || o == Some(Less),
            Cmp::Leu => un || matches!(o, Some(Less | Equal)),
            Cmp::Gtu => un || o == Some(Greater),
            Cmp::Geu => un || matches!(o, Some(Greater | Equal)),
            Cmp::Num => !un,
            Cmp::Nan => un,
            other => return Err(unsupported(format!("setp.{other} on a float"))),
        });
    }
    let w = bits(ty);
    let (ua, ub) = (a & mask(w), b & mask(w));
    let (sa, sb) = (sext(a, w), sext(b, w));
    let s = signed(ty);
    Ok(match cmp {
        Cmp::Eq => ua == ub,
        Cmp::Ne => ua != ub,
        Cmp::Lt if s => sa < sb,
        Cmp::Le if s => sa <= sb,
        Cmp::Gt if s => sa > sb,
        Cmp::Ge if s => sa >= sb,
        Cmp::Lt | Cmp::Lo => ua < ub,
        Cmp::Le | Cmp::Ls => ua <= ub,
        Cmp::Gt | Cmp::Hi => ua > ub,
        Cmp::Ge | Cmp::Hs => ua >= ub,
        other => return Err(unsupported(format!("setp.{other} on an integer"))),
    })
}

/// The lane `lane` reads in `shfl.sync.<mode> d, a, b, c` (PTX ISA: the
/// clamp `c & 0x1f` and the segment mask `c >> 8`); its own lane where the
/// source is out of range.
fn shuffle_source(mode: &str, lane: u32, b: u32, c: u32) -> Result<u32, Fault> {
    let bval = b & 0x1f;
    let cval = c & 0x1f;
    let seg = (c >> 8) & 0x1f;
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        "up" => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        "down" => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        "bfly" => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        "idx" => {
            let j = (min_lane | (bval & !seg)) as i32;
            (j, j <= max_lane as i32)
        }
        other => return Err(unsupported(format!("shfl mode {other}"))),
    };
    Ok(if ok { j as u32 } else { lane })
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
