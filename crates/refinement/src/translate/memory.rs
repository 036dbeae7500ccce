//! Memory instructions: addresses into locations, orderings and scopes, and
//! the thread-private spaces (parameters, local memory) kept as known values.

use ptx_litmus::syntax::{self as lit, AtomOp, Instr, Loc, Order};
use ptx_reader::{AddressBase, Instruction, Operand, Semantics, StateSpace, Type};

use super::values::word;
use super::{Base, Ctx, Emit, Go, Spec, TranslateError, Val};
use crate::launch::Param;

impl Ctx<'_> {
    /// The address an instruction accesses.
    pub(super) fn address(
        &self,
        spec: &Spec,
        op: &Operand,
        inst: &Instruction,
    ) -> Result<(Base, i64), TranslateError> {
        let Operand::Address { base, offset } = op else {
            return Err(self.error(spec, Some(inst), "no address operand"));
        };
        let (b, off) = match base {
            AddressBase::Reg(r) => match self.value(spec, &Operand::Reg(r.clone()), inst)? {
                Val::Ptr(b, off) => (b, off),
                other => {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        format!("address {other:?} is not a known pointer"),
                    ));
                }
            },
            AddressBase::Symbol(s) => match self.value(
                spec,
                &Operand::Symbol {
                    name: s.clone(),
                    offset: 0,
                },
                inst,
            )? {
                Val::Ptr(b, off) => (b, off),
                other => {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        format!("address {other:?} is not a known pointer"),
                    ));
                }
            },
            AddressBase::Absolute(_) => {
                return Err(self.error(spec, Some(inst), "absolute addresses are not translated"));
            }
        };
        Ok((b, off + offset))
    }

    pub(super) fn location(
        &self,
        spec: &Spec,
        base: &Base,
        off: i64,
        inst: &Instruction,
    ) -> Result<Loc, TranslateError> {
        let size = inst.ty().map_or(4, Type::size);
        if size != 4 || off % 4 != 0 {
            return Err(self.error(
                spec,
                Some(inst),
                format!("a {size}-byte access at byte {off} of {base}: only aligned 4-byte elements are locations"),
            ));
        }
        self.locs
            .get(&(base.clone(), off / 4))
            .copied()
            .ok_or_else(|| {
                self.error(
                    spec,
                    Some(inst),
                    format!("byte {off} of {base} is outside the launch's buffers"),
                )
            })
    }

    /// The ordering and scope of a memory instruction.
    pub(super) fn order(
        &self,
        spec: &Spec,
        inst: &Instruction,
        rmw: bool,
    ) -> Result<(Order, Option<lit::Scope>), TranslateError> {
        let scope = match inst.scope() {
            None => None,
            Some(ptx_reader::Scope::Cta) => Some(lit::Scope::Cta),
            Some(ptx_reader::Scope::Gpu) => Some(lit::Scope::Gpu),
            Some(ptx_reader::Scope::Sys) => Some(lit::Scope::Sys),
            Some(ptx_reader::Scope::Cluster) => {
                return Err(self.error(spec, Some(inst), ".cluster scope is not in the model"));
            }
        };
        let order = match inst.semantics() {
            None if rmw => Order::Relaxed,
            None | Some(Semantics::Weak) => Order::Weak,
            Some(Semantics::Relaxed) => Order::Relaxed,
            Some(Semantics::Acquire) => Order::Acquire,
            Some(Semantics::Release) => Order::Release,
            Some(Semantics::AcqRel) => Order::AcqRel,
            Some(other) => {
                return Err(self.error(spec, Some(inst), format!(".{other} is not translated")));
            }
        };
        // An atomic without a scope is `.gpu` (the PTX ISA's default).
        let scope = match (order, scope) {
            (Order::Weak, _) => None,
            (_, None) => Some(lit::Scope::Gpu),
            (_, s) => s,
        };
        Ok((order, scope))
    }

    pub(super) fn memory(
        &self,
        spec: &mut Spec,
        inst: &Instruction,
        e: &mut Emit,
    ) -> Result<Go, TranslateError> {
        let op = inst.opcode.as_str();
        if inst
            .modifiers
            .iter()
            .any(|m| matches!(m, ptx_reader::Modifier::Vector(_)))
            && !matches!(
                inst.space(),
                Some(StateSpace::Local) | Some(StateSpace::Param)
            )
        {
            return Err(self.error(
                spec,
                Some(inst),
                "vector accesses to memory are not translated",
            ));
        }
        let depth = spec.frames.len();
        match (op, inst.space()) {
            // Parameters and local memory are thread-private: known values.
            ("ld", Some(StateSpace::Param)) => {
                let dst = self.dst(spec, inst)?.to_string();
                let Some(Operand::Address {
                    base: AddressBase::Symbol(name),
                    offset: 0,
                }) = inst.operands.get(1)
                else {
                    return Err(self.error(spec, Some(inst), "a parameter load at an offset"));
                };
                let v = spec.top().params.get(name).cloned().ok_or_else(|| {
                    self.error(spec, Some(inst), format!("parameter {name} has no value"))
                })?;
                self.set(spec, &dst, v, e, inst);
                return Ok(Go::Next);
            }
            ("st", Some(StateSpace::Param)) => {
                let Some(Operand::Address {
                    base: AddressBase::Symbol(name),
                    offset: 0,
                }) = inst.operands.first()
                else {
                    return Err(self.error(spec, Some(inst), "a parameter store at an offset"));
                };
                let v = self.value(spec, self.operand_at(spec, inst, 1)?, inst)?;
                let v = self.home(v, format!("param:{depth}:{name}"), e, inst);
                spec.top_mut().params.insert(name.clone(), v);
                return Ok(Go::Next);
            }
            _ => {}
        }
        let addr_at = usize::from(op != "st" && op != "red");
        let (base, off) = self.address(spec, self.operand_at(spec, inst, addr_at)?, inst)?;
        if let Base::Local(frame) = base {
            let count = inst.modifiers.iter().find_map(|m| match m {
                ptx_reader::Modifier::Vector(n) => Some(usize::from(*n)),
                _ => None,
            });
            let size = inst.ty().map_or(4, Type::size) as i64;
            match op {
                "ld" => {
                    let dsts: Vec<String> = match (self.operand_at(spec, inst, 0)?, count) {
                        (Operand::Vector(v), Some(_)) => {
                            v.iter().map(ToString::to_string).collect()
                        }
                        (Operand::Reg(r), None) => vec![r.clone()],
                        _ => return Err(self.error(spec, Some(inst), "an unusual local load")),
                    };
                    for (i, d) in dsts.iter().enumerate() {
                        let v = spec
                            .local
                            .get(&(frame, off + i as i64 * size))
                            .cloned()
                            .ok_or_else(|| {
                                self.error(spec, Some(inst), "a local load of a byte never stored")
                            })?;
                        self.set(spec, d, v, e, inst);
                    }
                }
                "st" => {
                    let srcs: Vec<Operand> = match (self.operand_at(spec, inst, 1)?, count) {
                        (Operand::Vector(v), Some(_)) => v.clone(),
                        (o, None) => vec![o.clone()],
                        _ => return Err(self.error(spec, Some(inst), "an unusual local store")),
                    };
                    for (i, s) in srcs.iter().enumerate() {
                        let at = off + i as i64 * size;
                        let v = self.value(spec, s, inst)?;
                        let v = self.home(v, format!("local:{frame}:{at}"), e, inst);
                        spec.local.insert((frame, at), v);
                    }
                }
                _ => return Err(self.error(spec, Some(inst), "an atomic on local memory")),
            }
            return Ok(Go::Next);
        }
        // An input no thread writes: its loads are known values.
        if let Base::Buffer(b) = base
            && let Some(Param::Buffer {
                init,
                read_only: true,
                name,
            }) = self.launch.params.get(b)
        {
            let at = usize::try_from(off / 4).ok().filter(|_| off % 4 == 0);
            let Some(v) = at.and_then(|i| init.get(i)) else {
                return Err(self.error(
                    spec,
                    Some(inst),
                    format!("byte {off} of input `{name}` is outside it"),
                ));
            };
            if op != "ld" {
                return Err(self.error(
                    spec,
                    Some(inst),
                    format!("a write to the input `{name}`, which the launch declares read-only"),
                ));
            }
            let dst = self.dst(spec, inst)?.to_string();
            self.set(spec, &dst, Val::Int(u64::from(*v)), e, inst);
            return Ok(Go::Next);
        }
        let loc = self.location(spec, &base, off, inst)?;
        let rmw = matches!(op, "atom" | "red");
        let (order, scope) = self.order(spec, inst, rmw)?;
        let text = self.text(inst);
        let pos = self.pos(inst);
        match op {
            "ld" => {
                let dst = self.dst(spec, inst)?.to_string();
                let home = e.reg(format!("{depth}:{dst}"));
                e.push(
                    Instr::Load {
                        order,
                        scope,
                        dst: home,
                        loc,
                    },
                    pos,
                    text,
                );
                self.set(spec, &dst, Val::Reg(home), e, inst);
            }
            "st" => {
                let v = word(self.value(spec, self.operand_at(spec, inst, 1)?, inst)?);
                let value = self.operand(spec, &v, inst)?;
                e.push(
                    Instr::Store {
                        order,
                        scope,
                        loc,
                        value,
                    },
                    pos,
                    text,
                );
            }
            "atom" | "red" => {
                let scope = scope.unwrap_or(lit::Scope::Gpu);
                let selector = inst.modifiers.iter().find_map(|m| match m {
                    ptx_reader::Modifier::Op(o) => Some(*o),
                    _ => None,
                });
                let first_value = if op == "atom" { 2 } else { 1 };
                let v = word(self.value(spec, self.operand_at(spec, inst, first_value)?, inst)?);
                let value = self.operand(spec, &v, inst)?;
                let bin = |o: &str| match o {
                    "add" => Some(lit::BinOp::Add),
                    "and" => Some(lit::BinOp::And),
                    "or" => Some(lit::BinOp::Or),
                    "xor" => Some(lit::BinOp::Xor),
                    _ => None,
                };
                if op == "red" {
                    let Some(b) = selector.and_then(bin) else {
                        return Err(self.error(
                            spec,
                            Some(inst),
                            "this reduction is not translated",
                        ));
                    };
                    e.push(
                        Instr::Red {
                            order,
                            scope,
                            op: b,
                            loc,
                            value,
                        },
                        pos,
                        text,
                    );
                    return Ok(Go::Next);
                }
                let dst = self.dst(spec, inst)?.to_string();
                let home = e.reg(format!("{depth}:{dst}"));
                let (aop, value) = match selector {
                    Some("exch") => (AtomOp::Exch, value),
                    Some("cas") => {
                        let new = word(self.value(spec, self.operand_at(spec, inst, 3)?, inst)?);
                        (
                            AtomOp::Cas { expected: value },
                            self.operand(spec, &new, inst)?,
                        )
                    }
                    Some(o) => match bin(o) {
                        Some(b) => (AtomOp::Bin(b), value),
                        None => {
                            return Err(self.error(
                                spec,
                                Some(inst),
                                "this atomic is not translated",
                            ));
                        }
                    },
                    None => {
                        return Err(self.error(spec, Some(inst), "an atomic without an operation"));
                    }
                };
                e.push(
                    Instr::Atom {
                        order,
                        scope,
                        op: aop,
                        dst: home,
                        loc,
                        value,
                    },
                    pos,
                    text,
                );
                self.set(spec, &dst, Val::Reg(home), e, inst);
            }
            _ => unreachable!("memory() is called for ld, st, atom and red"),
        }
        Ok(Go::Next)
    }
}
