//! Known values: registers, operands, predicates, and the integer helpers.

use ptx_litmus::syntax::{CmpOp, Instr, Operand as LOp};
use ptx_reader::{Cmp, Guard, Instruction, Operand, StateSpace, Type};

use super::{Base, Ctx, Emit, Spec, TranslateError, Val};

pub(super) fn cmp_of(c: Cmp) -> Option<(CmpOp, bool)> {
    // (comparison, unsigned)
    Some(match c {
        Cmp::Eq => (CmpOp::Eq, false),
        Cmp::Ne => (CmpOp::Ne, false),
        Cmp::Lt => (CmpOp::Lt, false),
        Cmp::Le => (CmpOp::Le, false),
        Cmp::Gt => (CmpOp::Gt, false),
        Cmp::Ge => (CmpOp::Ge, false),
        Cmp::Lo => (CmpOp::Lt, true),
        Cmp::Ls => (CmpOp::Le, true),
        Cmp::Hi => (CmpOp::Gt, true),
        Cmp::Hs => (CmpOp::Ge, true),
        _ => return None,
    })
}

pub(super) fn negate(c: CmpOp) -> CmpOp {
    match c {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
    }
}

pub(super) fn bits(ty: Option<Type>) -> u32 {
    ty.map_or(64, |t| (t.size() * 8) as u32).min(64)
}

pub(super) fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

pub(super) fn signed(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

/// A known value as the 32-bit word memory holds (locations are 4-byte
/// elements; PTX prints some constants negative).
pub(super) fn word(v: Val) -> Val {
    match v {
        Val::Int(n) => Val::Int(mask(n, 32)),
        other => other,
    }
}

pub(super) fn is_signed(ty: Option<Type>) -> bool {
    matches!(ty, Some(Type::S8 | Type::S16 | Type::S32 | Type::S64))
}

impl Ctx<'_> {
    /// The instruction's `k`-th operand, or an error naming the instruction
    /// (hand-written or mutated PTX may lack one).
    pub(super) fn operand_at<'i>(
        &self,
        spec: &Spec,
        inst: &'i Instruction,
        k: usize,
    ) -> Result<&'i Operand, TranslateError> {
        inst.operands
            .get(k)
            .ok_or_else(|| self.error(spec, Some(inst), format!("no operand {k}")))
    }

    /// A register's or constant's value.
    pub(super) fn value(
        &self,
        spec: &Spec,
        op: &Operand,
        inst: &Instruction,
    ) -> Result<Val, TranslateError> {
        let frame = spec.top();
        Ok(match op {
            Operand::Int(n) => Val::Int(*n as u64),
            Operand::Reg(r) => match r.as_str() {
                "%tid.x" => Val::Int(u64::from(self.tid)),
                "%ntid.x" => Val::Int(u64::from(self.launch.threads)),
                "%ctaid.x" => Val::Int(u64::from(self.cta)),
                "%nctaid.x" => Val::Int(u64::from(self.launch.ctas)),
                "%tid.y" | "%tid.z" | "%ctaid.y" | "%ctaid.z" => Val::Int(0),
                "%ntid.y" | "%ntid.z" | "%nctaid.y" | "%nctaid.z" => Val::Int(1),
                _ => frame.regs.get(r).cloned().ok_or_else(|| {
                    self.error(
                        spec,
                        Some(inst),
                        format!("{r} is read before it is written"),
                    )
                })?,
            },
            Operand::Symbol { name, offset } => {
                if frame.regs.contains_key(name) {
                    frame.regs[name].clone()
                } else if self
                    .module
                    .global(name)
                    .is_some_and(|v| matches!(v.space, StateSpace::Shared | StateSpace::SharedCta))
                {
                    Val::Ptr(Base::Shared(name.clone()), *offset)
                } else if name.starts_with("__local_depot") {
                    Val::Ptr(Base::Local(spec.frames.len()), *offset)
                } else {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        format!("symbol {name} is not translated"),
                    ));
                }
            }
            other => {
                return Err(self.error(
                    spec,
                    Some(inst),
                    format!("operand {other} is not translated"),
                ));
            }
        })
    }

    /// Writes `v` to the PTX register `dst`. A loaded value is moved into
    /// the register's own litmus register, so the register keeps one home.
    pub(super) fn set(&self, spec: &mut Spec, dst: &str, v: Val, e: &mut Emit, inst: &Instruction) {
        let v = self.home(v, format!("{}:{dst}", spec.frames.len()), e, inst);
        spec.top_mut().regs.insert(dst.to_string(), v);
    }

    /// A value as a litmus operand (known integers and loaded values only).
    pub(super) fn operand(
        &self,
        spec: &Spec,
        v: &Val,
        inst: &Instruction,
    ) -> Result<LOp, TranslateError> {
        match v {
            Val::Int(n) => Ok(LOp::Const(*n as i64)),
            Val::Reg(r) => Ok(LOp::Reg(*r)),
            other => Err(self.error(
                spec,
                Some(inst),
                format!("{other:?} mixed with a value from memory"),
            )),
        }
    }

    pub(super) fn dst<'i>(
        &self,
        spec: &Spec,
        inst: &'i Instruction,
    ) -> Result<&'i str, TranslateError> {
        match inst.operands.first() {
            Some(Operand::Reg(r)) => Ok(r),
            _ => Err(self.error(spec, Some(inst), "no destination register")),
        }
    }

    pub(super) fn guard(
        &self,
        spec: &Spec,
        g: &Guard,
        inst: &Instruction,
    ) -> Result<Result<bool, (CmpOp, LOp, LOp)>, TranslateError> {
        let v = self.value(spec, &Operand::Reg(g.reg.clone()), inst)?;
        Ok(match v {
            Val::Int(n) => Ok((n != 0) != g.negated),
            Val::Cond(c, a, b) => Err((if g.negated { negate(c) } else { c }, a, b)),
            Val::Reg(r) => Err((
                if g.negated { CmpOp::Eq } else { CmpOp::Ne },
                LOp::Reg(r),
                LOp::Const(0),
            )),
            Val::Ptr(..) => {
                return Err(self.error(spec, Some(inst), "a pointer used as a predicate"));
            }
        })
    }

    /// Keeps a loaded value in a register of its own (`owner`), so that a
    /// later write to the register it came from does not change it.
    pub(super) fn home(&self, v: Val, owner: String, e: &mut Emit, inst: &Instruction) -> Val {
        match v {
            Val::Reg(r) => {
                let home = e.reg(owner);
                if home != r {
                    e.push(
                        Instr::Move {
                            dst: home,
                            value: LOp::Reg(r),
                        },
                        self.pos(inst),
                        format!("{home} := {r}  ({})", self.text(inst)),
                    );
                }
                Val::Reg(home)
            }
            other => other,
        }
    }
}
