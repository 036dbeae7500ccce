//! One instruction on the known state: control flow, arithmetic,
//! comparisons, barriers and calls; memory goes to [`super::memory`].

use std::collections::BTreeMap;

use ptx_litmus::syntax::{self as lit, CmpOp, Instr, Label};
use ptx_reader::{Instruction, Operand, Type};

use super::values::{bits, cmp_of, is_signed, mask, signed};
use super::{Ctx, Emit, Frame, Go, Spec, TranslateError, Val};

impl Ctx<'_> {
    /// Runs one instruction on the known state, emitting what depends on memory.
    pub(super) fn inst(
        &self,
        spec: &mut Spec,
        inst: &Instruction,
        e: &mut Emit,
    ) -> Result<Go, TranslateError> {
        let op = inst.opcode.as_str();
        if op == "bra" {
            let Some(Operand::Symbol { name, .. }) = inst.operands.first() else {
                return Err(self.error(spec, Some(inst), "a branch without a label"));
            };
            let function = spec.top().function;
            let to = *self.labels[function]
                .get(name.as_str())
                .ok_or_else(|| self.error(spec, Some(inst), format!("no label {name}")))?;
            return match &inst.guard {
                None => Ok(Go::Jump(to)),
                Some(g) => match self.guard(spec, g, inst)? {
                    Ok(true) => Ok(Go::Jump(to)),
                    Ok(false) => Ok(Go::Next),
                    Err((c, a, b)) => Ok(Go::Fork(c, a, b, to)),
                },
            };
        }
        if let Some(g) = &inst.guard {
            match self.guard(spec, g, inst)? {
                Ok(true) => {}
                Ok(false) => return Ok(Go::Next),
                Err(_) => {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        "a guard on a value from memory (only branches are translated)",
                    ));
                }
            }
        }
        let ty = inst.ty();
        let w = bits(ty);
        match op {
            // `exit` ends the thread from any depth; `ret` its function.
            "exit" => return Ok(Go::End),
            "ret" => {
                return Ok(if self.ret(spec) { Go::End } else { Go::Next });
            }
            "trap" => {
                // A thread that traps has no final state: a loop the bound cuts.
                let l = Label {
                    number: e.next_label,
                    digits: 1,
                };
                e.next_label += 1;
                e.push(Instr::Mark(l), self.pos(inst), format!("{l}: trap"));
                e.push(Instr::Goto(l), self.pos(inst), "trap".into());
                e.notes.push(format!(
                    "thread {}.{}: `trap` at line {} under a condition on memory: executions that reach it do not terminate and have no outcome",
                    self.cta, self.tid, inst.pos.line
                ));
                return Ok(Go::End);
            }
            "mov" | "cvta" | "cvt" => {
                let dst = self.dst(spec, inst)?.to_string();
                let src = inst
                    .operands
                    .get(1)
                    .ok_or_else(|| self.error(spec, Some(inst), "no source"))?;
                let v = self.value(spec, src, inst)?;
                let v = match (op, v) {
                    ("cvt", Val::Int(n)) => {
                        // cvt.<to>.<from>: truncate or extend by the source type.
                        let types: Vec<Type> = inst
                            .modifiers
                            .iter()
                            .filter_map(|m| match m {
                                ptx_reader::Modifier::Type(t) => Some(*t),
                                _ => None,
                            })
                            .collect();
                        let (to, from) = (types.first().copied(), types.get(1).copied());
                        let x = if is_signed(from) {
                            signed(n, bits(from)) as u64
                        } else {
                            mask(n, bits(from))
                        };
                        Val::Int(mask(x, bits(to)))
                    }
                    (_, v) => v,
                };
                self.set(spec, &dst, v, e, inst);
            }
            "add" | "sub" | "mul" | "shl" | "shr" | "and" | "or" | "xor" | "div" | "rem"
            | "min" | "max" => {
                let dst = self.dst(spec, inst)?.to_string();
                let a = self.value(spec, self.operand_at(spec, inst, 1)?, inst)?;
                let b = self.value(spec, self.operand_at(spec, inst, 2)?, inst)?;
                let wide = inst.has_modifier("wide");
                let v = match (&a, &b) {
                    (Val::Int(x), Val::Int(y)) => {
                        Val::Int(self.arith(spec, inst, op, *x, *y, w, wide)?)
                    }
                    (Val::Ptr(base, off), Val::Int(y)) if op == "add" => {
                        Val::Ptr(base.clone(), off + *y as i64)
                    }
                    (Val::Int(x), Val::Ptr(base, off)) if op == "add" => {
                        Val::Ptr(base.clone(), off + *x as i64)
                    }
                    (Val::Ptr(base, off), Val::Int(y)) if op == "sub" => {
                        Val::Ptr(base.clone(), off - *y as i64)
                    }
                    _ => {
                        let lop = match op {
                            "add" => lit::BinOp::Add,
                            "sub" => lit::BinOp::Sub,
                            "mul" if !inst.has_modifier("hi") => lit::BinOp::Mul,
                            "and" => lit::BinOp::And,
                            "or" => lit::BinOp::Or,
                            "xor" => lit::BinOp::Xor,
                            _ => {
                                return Err(self.error(
                                    spec,
                                    Some(inst),
                                    "this operation on a value from memory is not translated",
                                ));
                            }
                        };
                        let lhs = self.operand(spec, &a, inst)?;
                        let rhs = self.operand(spec, &b, inst)?;
                        let home = e.reg(format!("{}:{dst}", spec.frames.len()));
                        e.push(
                            Instr::Local {
                                op: lop,
                                dst: home,
                                lhs,
                                rhs,
                            },
                            self.pos(inst),
                            format!("{home} := {lhs} {lop:?} {rhs}  ({})", self.text(inst)),
                        );
                        Val::Reg(home)
                    }
                };
                self.set(spec, &dst, v, e, inst);
            }
            "mad" if inst.has_modifier("lo") || inst.has_modifier("wide") => {
                // a * b + c, on known values (addresses and indices).
                let dst = self.dst(spec, inst)?.to_string();
                let a = self.value(spec, self.operand_at(spec, inst, 1)?, inst)?;
                let b = self.value(spec, self.operand_at(spec, inst, 2)?, inst)?;
                let c = self.value(spec, self.operand_at(spec, inst, 3)?, inst)?;
                let wide = inst.has_modifier("wide");
                let v = match (a, b, c) {
                    (Val::Int(x), Val::Int(y), Val::Int(z)) => {
                        let p = self.arith(spec, inst, "mul", x, y, w, wide)?;
                        Val::Int(mask(
                            p.wrapping_add(z),
                            if wide { (w * 2).min(64) } else { w },
                        ))
                    }
                    (Val::Int(x), Val::Int(y), Val::Ptr(base, off)) => {
                        let p = self.arith(spec, inst, "mul", x, y, w, wide)?;
                        Val::Ptr(base, off + p as i64)
                    }
                    _ => {
                        return Err(self.error(
                            spec,
                            Some(inst),
                            "a multiply-add of a value from memory is not translated",
                        ));
                    }
                };
                self.set(spec, &dst, v, e, inst);
            }
            "setp" => {
                let dst = self.dst(spec, inst)?.to_string();
                let cmp = inst
                    .modifiers
                    .iter()
                    .find_map(|m| match m {
                        ptx_reader::Modifier::Cmp(c) => Some(*c),
                        _ => None,
                    })
                    .and_then(cmp_of)
                    .ok_or_else(|| {
                        self.error(spec, Some(inst), "this comparison is not translated")
                    })?;
                let a = self.value(spec, self.operand_at(spec, inst, 1)?, inst)?;
                let b = self.value(spec, self.operand_at(spec, inst, 2)?, inst)?;
                let (c, unsigned) = cmp;
                let unsigned = unsigned || !is_signed(ty);
                let v = match (&a, &b) {
                    (Val::Int(x), Val::Int(y)) => {
                        let (x, y) = if unsigned {
                            (mask(*x, w) as i128, mask(*y, w) as i128)
                        } else {
                            (i128::from(signed(*x, w)), i128::from(signed(*y, w)))
                        };
                        let holds = match c {
                            CmpOp::Eq => x == y,
                            CmpOp::Ne => x != y,
                            CmpOp::Lt => x < y,
                            CmpOp::Le => x <= y,
                            CmpOp::Gt => x > y,
                            CmpOp::Ge => x >= y,
                        };
                        Val::Int(u64::from(holds))
                    }
                    _ => Val::Cond(
                        c,
                        self.operand(spec, &a, inst)?,
                        self.operand(spec, &b, inst)?,
                    ),
                };
                self.set(spec, &dst, v, e, inst);
            }
            "ld" | "st" | "atom" | "red" => return self.memory(spec, inst, e),
            "bar" | "barrier" => {
                if !(inst.has_modifier("sync") || op == "bar")
                    || inst.has_modifier("arrive")
                    || inst.operands.len() > 1
                {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        "only `bar.sync 0` (the whole CTA) is translated",
                    ));
                }
                spec.barriers += 1;
                let k = spec.barriers;
                e.push(
                    Instr::Barrier {
                        arrive: false,
                        instance: k,
                        id: None,
                        quorum: None,
                    },
                    self.pos(inst),
                    format!("bar.sync #{k}  ({})", self.text(inst)),
                );
            }
            "call" => return self.call(spec, inst),
            "fence" | "membar" => {
                return Err(self.error(spec, Some(inst), "fences are not translated yet"));
            }
            _ => return Err(self.error(spec, Some(inst), "this instruction is not translated")),
        }
        Ok(Go::Next)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn arith(
        &self,
        spec: &Spec,
        inst: &Instruction,
        op: &str,
        x: u64,
        y: u64,
        w: u32,
        wide: bool,
    ) -> Result<u64, TranslateError> {
        let out_w = if wide { (w * 2).min(64) } else { w };
        let signed_ty = is_signed(inst.ty());
        let (xs, ys) = (signed(x, w), signed(y, w));
        let (xu, yu) = (mask(x, w), mask(y, w));
        let v = match op {
            "add" => xu.wrapping_add(yu),
            "sub" => xu.wrapping_sub(yu),
            "mul" if wide && signed_ty => (xs.wrapping_mul(ys)) as u64,
            "mul" => xu.wrapping_mul(yu),
            "shl" => xu.checked_shl(y as u32).unwrap_or(0),
            "shr" if signed_ty => xs
                .checked_shr(y as u32)
                .unwrap_or(if xs < 0 { -1 } else { 0 }) as u64,
            "shr" => xu.checked_shr(y as u32).unwrap_or(0),
            "and" => xu & yu,
            "or" => xu | yu,
            "xor" => xu ^ yu,
            "min" if signed_ty => xs.min(ys) as u64,
            "min" => xu.min(yu),
            "max" if signed_ty => xs.max(ys) as u64,
            "max" => xu.max(yu),
            "div" | "rem" if yu == 0 => {
                return Err(self.error(spec, Some(inst), "division by zero"));
            }
            "div" if signed_ty => xs.wrapping_div(ys) as u64,
            "div" => xu / yu,
            "rem" if signed_ty => xs.wrapping_rem(ys) as u64,
            "rem" => xu % yu,
            _ => return Err(self.error(spec, Some(inst), "this operation is not translated")),
        };
        Ok(mask(v, out_w))
    }

    pub(super) fn call(&self, spec: &mut Spec, inst: &Instruction) -> Result<Go, TranslateError> {
        let (returns, name, args) = match inst.operands.as_slice() {
            [Operand::Symbol { name, .. }] => (Vec::new(), name, Vec::new()),
            [Operand::Symbol { name, .. }, Operand::List(args)] => (Vec::new(), name, args.clone()),
            [Operand::List(rets), Operand::Symbol { name, .. }] => (rets.clone(), name, Vec::new()),
            [
                Operand::List(rets),
                Operand::Symbol { name, .. },
                Operand::List(args),
            ] => (rets.clone(), name, args.clone()),
            _ => return Err(self.error(spec, Some(inst), "an indirect or unusual call")),
        };
        let callee = self
            .module
            .functions
            .iter()
            .position(|f| &f.name == name && f.defined())
            .ok_or_else(|| {
                self.error(
                    spec,
                    Some(inst),
                    format!("{name} has no body in this module"),
                )
            })?;
        if spec.frames.iter().any(|f| f.function == callee) {
            return Err(self.error(spec, Some(inst), format!("{name} is recursive")));
        }
        let f = &self.module.functions[callee];
        let slot = |o: &Operand| match o {
            Operand::Symbol { name, .. } | Operand::Reg(name) => Some(name.clone()),
            _ => None,
        };
        let caller = spec.top_mut();
        let mut params = BTreeMap::new();
        for (p, a) in f.params.iter().zip(&args) {
            let Some(a) = slot(a) else { continue };
            if let Some(v) = caller.params.get(&a) {
                params.insert(p.name.clone(), v.clone());
            }
        }
        caller.returns = returns.iter().filter_map(slot).collect();
        spec.frames.push(Frame {
            function: callee,
            pc: 0,
            regs: BTreeMap::new(),
            params,
            returns: Vec::new(),
        });
        // The callee starts at pc 0; `straight_line` does not advance it.
        Ok(Go::Jump(0))
    }
}
