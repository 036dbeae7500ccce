//! One instruction: opcode, qualifiers and operands.

use super::lex::{constant, is_identifier, label_of, register};
use super::{Reader, Result, syntax, unsupported};
use crate::syntax::{AtomOp, BinOp, CmpOp, Instr, Label, Loc, Operand, Order, Pos, Reg, Scope};

impl Reader<'_> {
    /// Reads one instruction written at `pos`.
    pub(super) fn instruction(&mut self, text: &str, pos: Pos) -> Result<Instr> {
        let (opcode, operands) = text
            .split_once(char::is_whitespace)
            .map_or((text, ""), |(o, rest)| (o, rest.trim()));
        if let Some(label) = opcode.strip_suffix(':') {
            if !operands.is_empty() {
                return syntax(pos, format!("`{text}`: a label stands alone"));
            }
            return label_of(label).map(Instr::Mark).map_or_else(
                || syntax(pos, format!("`{label}` is not a label `LC<n>`")),
                Ok,
            );
        }
        let args: Vec<&str> = if operands.is_empty() {
            Vec::new()
        } else {
            operands.split(',').map(str::trim).collect()
        };
        let parts: Vec<&str> = opcode.split('.').collect();
        let ops = Operands {
            args: &args,
            pos,
            text,
        };
        match parts[0] {
            "ld" if parts.len() == 1 => {
                ops.count(2)?;
                Ok(Instr::Move {
                    dst: ops.reg(0)?,
                    value: ops.value(1)?,
                })
            }
            "st" if parts.len() == 1 => {
                syntax(pos, format!("`{text}`: a store names its memory order"))
            }
            "ld" | "st" => {
                let is_load = parts[0] == "ld";
                let order = order(parts[1], pos)?;
                let allowed = if is_load {
                    [Order::Weak, Order::Relaxed, Order::Acquire]
                } else {
                    [Order::Weak, Order::Relaxed, Order::Release]
                };
                if !allowed.contains(&order) {
                    return unsupported(pos, format!("`{opcode}`: {} .{order}", parts[0]));
                }
                let scope = match (order, parts.get(2)) {
                    (Order::Weak, None) => None,
                    (Order::Weak, Some(s)) => {
                        return syntax(
                            pos,
                            format!("`{opcode}`: a weak access has no scope (.{s})"),
                        );
                    }
                    (_, Some(s)) => Some(scope(s, pos)?),
                    (_, None) => {
                        return syntax(pos, format!("`{opcode}`: a .{order} access needs a scope"));
                    }
                };
                if parts.len() > 3 || (order == Order::Weak && parts.len() > 2) {
                    return unsupported(
                        pos,
                        format!("`{opcode}`: qualifiers beyond order and scope"),
                    );
                }
                ops.count(2)?;
                if is_load {
                    Ok(Instr::Load {
                        order,
                        scope,
                        dst: ops.reg(0)?,
                        loc: self.loc_operand(&ops, 1)?,
                    })
                } else {
                    Ok(Instr::Store {
                        order,
                        scope,
                        loc: self.loc_operand(&ops, 0)?,
                        value: ops.value(1)?,
                    })
                }
            }
            "atom" | "red" => {
                let is_atom = parts[0] == "atom";
                if parts.len() != 4 {
                    return syntax(
                        pos,
                        format!("`{opcode}` is not `{}.<order>.<scope>.<op>`", parts[0]),
                    );
                }
                let order = order(parts[1], pos)?;
                if !matches!(
                    order,
                    Order::Relaxed | Order::Acquire | Order::Release | Order::AcqRel
                ) {
                    return unsupported(pos, format!("`{opcode}`: {} .{order}", parts[0]));
                }
                let scope = scope(parts[2], pos)?;
                let op = match (parts[3], is_atom) {
                    ("cas", true) => None,
                    ("exch", true) => Some(AtomOp::Exch),
                    (other, _) => match bin_op(other) {
                        Some(op) => Some(AtomOp::Bin(op)),
                        None => {
                            return unsupported(pos, format!("`{opcode}`: operation .{other}"));
                        }
                    },
                };
                if !is_atom {
                    ops.count(2)?;
                    let Some(AtomOp::Bin(op)) = op else {
                        return unsupported(pos, format!("`{opcode}`"));
                    };
                    return Ok(Instr::Red {
                        order,
                        scope,
                        op,
                        loc: self.loc_operand(&ops, 0)?,
                        value: ops.value(1)?,
                    });
                }
                let (op, value) = match op {
                    None => {
                        ops.count(4)?;
                        (
                            AtomOp::Cas {
                                expected: ops.value(2)?,
                            },
                            ops.value(3)?,
                        )
                    }
                    Some(op) => {
                        ops.count(3)?;
                        (op, ops.value(2)?)
                    }
                };
                Ok(Instr::Atom {
                    order,
                    scope,
                    op,
                    dst: ops.reg(0)?,
                    loc: self.loc_operand(&ops, 1)?,
                    value,
                })
            }
            "fence" => {
                if parts.get(1) == Some(&"proxy") {
                    return unsupported(pos, format!("`{opcode}`: proxy fences (PTX 7.5)"));
                }
                if parts.len() != 3 {
                    return syntax(
                        pos,
                        format!("`{opcode}` is not `fence.<sc|acq_rel>.<scope>`"),
                    );
                }
                let order = order(parts[1], pos)?;
                if !matches!(order, Order::Sc | Order::AcqRel) {
                    return unsupported(pos, format!("`{opcode}`: fence .{order}"));
                }
                ops.count(0)?;
                Ok(Instr::Fence {
                    order,
                    scope: scope(parts[2], pos)?,
                })
            }
            "bar" => {
                let arrive = match parts.as_slice() {
                    [_, "cta", "sync"] => false,
                    [_, "cta", "arrive"] => true,
                    _ => {
                        return unsupported(
                            pos,
                            format!("`{opcode}`: only bar.cta.sync and bar.cta.arrive"),
                        );
                    }
                };
                if args.is_empty() || args.len() > 3 {
                    return syntax(
                        pos,
                        format!("`{text}` is not `{opcode} <instance>[, <id>[, <quorum>]]`"),
                    );
                }
                let Some(instance) = constant(args[0]) else {
                    return syntax(pos, format!("`{text}`: the instance is a constant"));
                };
                if instance.to_string() != args[0] {
                    // Dat3M tells instances apart by their text.
                    return unsupported(
                        pos,
                        format!(
                            "`{text}`: barrier instance `{}` is not written as a plain number",
                            args[0]
                        ),
                    );
                }
                Ok(Instr::Barrier {
                    arrive,
                    instance,
                    id: args.get(1).map(|_| ops.value(1)).transpose()?,
                    quorum: args.get(2).map(|_| ops.value(2)).transpose()?,
                })
            }
            "add" | "sub" | "mul" | "div" if parts.len() == 1 => {
                ops.count(3)?;
                Ok(Instr::Local {
                    op: bin_op(parts[0]).unwrap_or(BinOp::Add),
                    dst: ops.reg(0)?,
                    lhs: ops.value(1)?,
                    rhs: ops.value(2)?,
                })
            }
            "beq" | "bne" | "blt" | "bgt" | "ble" | "bge" if parts.len() == 1 => {
                ops.count(3)?;
                let cmp = match parts[0] {
                    "beq" => CmpOp::Eq,
                    "bne" => CmpOp::Ne,
                    "blt" => CmpOp::Lt,
                    "bgt" => CmpOp::Gt,
                    "ble" => CmpOp::Le,
                    _ => CmpOp::Ge,
                };
                Ok(Instr::Branch {
                    cmp,
                    lhs: ops.value(0)?,
                    rhs: ops.value(1)?,
                    target: ops.label(2)?,
                })
            }
            "goto" if parts.len() == 1 => {
                ops.count(1)?;
                Ok(Instr::Goto(ops.label(0)?))
            }
            "tld" | "suld" | "cold" | "sust" | "suatom" | "sured" => unsupported(
                pos,
                format!("`{opcode}`: texture, surface and constant proxies (PTX 7.5)"),
            ),
            _ => unsupported(pos, format!("instruction `{opcode}`")),
        }
    }

    fn loc_operand(&mut self, ops: &Operands<'_>, i: usize) -> Result<Loc> {
        let name = ops.args[i];
        if !is_identifier(name) || register(name).is_some() {
            return syntax(
                ops.pos,
                format!("`{}`: `{name}` is not a location", ops.text),
            );
        }
        Ok(self.location(name))
    }
}

/// The operands of one instruction, with what to say when one is wrong.
struct Operands<'t> {
    args: &'t [&'t str],
    pos: Pos,
    text: &'t str,
}

impl Operands<'_> {
    fn count(&self, n: usize) -> Result<()> {
        if self.args.len() == n {
            Ok(())
        } else {
            syntax(
                self.pos,
                format!("`{}` has {} operands, not {n}", self.text, self.args.len()),
            )
        }
    }

    fn reg(&self, i: usize) -> Result<Reg> {
        register(self.args[i]).map_or_else(
            || {
                syntax(
                    self.pos,
                    format!("`{}`: `{}` is not a register", self.text, self.args[i]),
                )
            },
            Ok,
        )
    }

    fn value(&self, i: usize) -> Result<Operand> {
        let a = self.args[i];
        if let Some(r) = register(a) {
            return Ok(Operand::Reg(r));
        }
        constant(a).map(Operand::Const).map_or_else(
            || {
                syntax(
                    self.pos,
                    format!("`{}`: `{a}` is not a constant or a register", self.text),
                )
            },
            Ok,
        )
    }

    fn label(&self, i: usize) -> Result<Label> {
        label_of(self.args[i]).map_or_else(
            || {
                syntax(
                    self.pos,
                    format!("`{}`: `{}` is not a label `LC<n>`", self.text, self.args[i]),
                )
            },
            Ok,
        )
    }
}

fn order(s: &str, pos: Pos) -> Result<Order> {
    Ok(match s {
        "weak" => Order::Weak,
        "relaxed" => Order::Relaxed,
        "acquire" => Order::Acquire,
        "release" => Order::Release,
        "acq_rel" => Order::AcqRel,
        "sc" => Order::Sc,
        "volatile" | "relaxed_sys" | "mmio" => {
            return unsupported(pos, format!("memory order .{s}"));
        }
        other => return syntax(pos, format!("`.{other}` is not a memory order")),
    })
}

fn scope(s: &str, pos: Pos) -> Result<Scope> {
    Ok(match s {
        "cta" => Scope::Cta,
        "gpu" => Scope::Gpu,
        "sys" => Scope::Sys,
        "cluster" => return unsupported(pos, "scope .cluster"),
        other => return syntax(pos, format!("`.{other}` is not a scope")),
    })
}

fn bin_op(s: &str) -> Option<BinOp> {
    Some(match s {
        "add" => BinOp::Add,
        "sub" => BinOp::Sub,
        "mul" => BinOp::Mul,
        "div" => BinOp::Div,
        "and" => BinOp::And,
        "or" => BinOp::Or,
        "xor" => BinOp::Xor,
        _ => return None,
    })
}
