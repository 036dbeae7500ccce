//! Register arithmetic: integer, bit and float operations, comparisons and
//! conversions, with PTX's widths, signedness, carries, saturation and
//! rounding (the IEEE rules are in [`super::super::float`]).

use ptx_reader::{Cmp, Type};

use super::{Exec, bits, f32_of, f64_of, is_float, mask, sext, signed, unsupported};
use crate::device::ptx::decode::{Inst, Op, Opd};
use crate::device::ptx::float::{self, Round, bits32, bits64};
use crate::device::virt::{Fault, FaultKind, Step};

/// An undefined arithmetic operation (division by zero, an overflowing
/// signed division).
fn arith_fault(msg: String) -> Fault {
    Fault::new(FaultKind::Arithmetic, msg)
}

impl Exec<'_, '_> {
    /// The integer, bit and comparison instructions (a float type of `add`,
    /// `mul`, ... goes to [`Exec::float_arith`]).
    pub(super) fn arith(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ty = i.ty;
        let w = bits(ty);
        let ops = &i.ops;
        match i.op {
            Op::Add | Op::Sub => {
                let a = self.val(&ops[1])? & mask(w);
                let b = self.val(&ops[2])? & mask(w);
                // The flag is the adder's carry-out, for subtraction too:
                // the hardware computes `a - b` as `a + !b + 1` and `subc`
                // as `a + !b + CC.CF`, so after `sub.cc` the flag is set
                // when nothing was borrowed (ARM's convention; the PTX
                // ISA's "borrow" wording does not say which). libNVVM's
                // 128-bit division reads it back with `addc 0, 0` after a
                // subtraction and relies on this.
                let (addend, cin) = match (i.op, i.flags.carry_in) {
                    (Op::Add, true) => (b, u64::from(self.t.carry)),
                    (Op::Add, false) => (b, 0),
                    (_, true) => (!b & mask(w), u64::from(self.t.carry)),
                    (_, false) => (!b & mask(w), 1),
                };
                let full = u128::from(a) + u128::from(addend) + u128::from(cin);
                let (d, carry) = (full as u64 & mask(w), full >> w != 0);
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
                    return Err(arith_fault(format!(
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
                        return Err(arith_fault("signed division overflows".into()));
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
            Op::Setp => {
                let a = self.val(&ops[1])?;
                let b = self.val(&ops[2])?;
                let cmp = i.cmp.unwrap_or(Cmp::Eq);
                let r = compare(ty, cmp, a, b, i.flags.ftz)?;
                if let Opd::WithPred(p, q) = ops[0] {
                    // `setp p|q`: q is the complement.
                    self.set(&Opd::Reg(p), u64::from(r))?;
                    self.set(&Opd::Reg(q), u64::from(!r))?;
                } else {
                    self.set(&ops[0], u64::from(r))?;
                }
                Ok(Step::Continue)
            }
            Op::Selp => {
                let p = self.val(&ops[3])? & 1 == 1;
                let v = self.val(if p { &ops[1] } else { &ops[2] })? & mask(w);
                self.set(&ops[0], v)?;
                Ok(Step::Continue)
            }
            other => Err(unsupported(format!("{other:?} is not register arithmetic"))),
        }
    }

    pub(super) fn float_arith(&mut self, i: &Inst) -> Result<Step, Fault> {
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

    pub(super) fn float_unary(&mut self, i: &Inst) -> Result<Step, Fault> {
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

    pub(super) fn convert(&mut self, i: &Inst) -> Result<Step, Fault> {
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
