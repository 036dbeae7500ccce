//! Loops: a counted loop with a constant bound becomes a `for`; any other
//! loop is translated as its first test, with a warning.
//!
//! A loop is *counted* when its header ends in a two-way `switchInt` with one
//! arm inside the loop and one outside, the header has no memory action, the
//! stay condition depends on exactly one register (the induction variable,
//! and not on the thread id), that register holds a known constant on entry,
//! and the loop body assigns it exactly once, by `v = v op k` with a constant
//! `k`. The trip count and the variable's value in each iteration then follow
//! by running the update here, with MIR's unsigned semantics: `stride = 4;
//! while stride > 0 { ..; stride /= 2 }` gives 4, 2, 1 and a count of 3.

use mir_import::model::{
    BinOp as MirBinOp, ConstOperand, Operand, Rvalue, Scalar, StatementKind, TerminatorKind,
};

use super::WarningKind;
use super::flat::NodeId;
use super::structure::{Extractor, collect_regs};
use super::value::bin;
use crate::lang::{BinOp, Expr, Reg, Stmt, StmtId, Value};

/// The most iterations a counted loop may have (a CTA's thread limit is far
/// smaller than anything a kernel would unfold).
const MAX_TRIPS: usize = 4096;

impl Extractor<'_, '_> {
    /// Translates the loop headed by `h`; `Some(exit)` to continue the walk
    /// after it.
    pub(super) fn loop_at(
        &mut self,
        h: NodeId,
        stop: Option<NodeId>,
        out: &mut Vec<StmtId>,
    ) -> Option<NodeId> {
        let node = self.flat.nodes[h];
        let block = &self.flat.body(node.frame).blocks[node.bb];
        let mut pre = Vec::new();
        self.statements(h, &mut pre);
        let TerminatorKind::SwitchInt {
            discr,
            targets,
            otherwise,
        } = &block.terminator.kind
        else {
            out.extend(pre);
            self.warn(
                WarningKind::ControlFlow,
                "loop whose header does not test",
                "not translated: the loop and the rest of the region are dropped",
            );
            return None;
        };
        let body = self.flat.loops[&h].body.clone();
        let d = self.operand(node.frame, discr, &mut pre);
        let crate::extract::value::Sym::Val(d) = d else {
            out.extend(pre);
            self.warn(
                WarningKind::ControlFlow,
                "loop test on a non-integer",
                "not translated: the loop and the rest of the region are dropped",
            );
            return None;
        };
        let [(v, t)] = targets.as_slice() else {
            out.extend(pre);
            self.warn(
                WarningKind::ControlFlow,
                "multi-way loop test",
                "not translated: the loop and the rest of the region are dropped",
            );
            return None;
        };
        let (tv, to) = (
            self.flat.node(node.frame, *t),
            self.flat.node(node.frame, *otherwise),
        );
        let value_cond = if *v == 0 {
            bin(BinOp::Eq, d.clone(), Expr::Const(0))
        } else {
            d.clone().equals(Expr::Const(*v as Value))
        };
        let other_cond = if *v == 0 {
            d.clone()
        } else {
            d.clone().bin(BinOp::Ne, Expr::Const(*v as Value))
        };
        let (stay, exit, stay_cond, exit_cond) = match (body.contains(&tv), body.contains(&to)) {
            (true, false) => (tv, to, value_cond, other_cond),
            (false, true) => (to, tv, other_cond, value_cond),
            _ => {
                out.extend(pre);
                self.warn(
                    WarningKind::ControlFlow,
                    "loop test without exactly one exit",
                    "not translated: the loop and the rest of the region are dropped",
                );
                return None;
            }
        };
        if let Some((r, values, last)) = self.trip_values(h, &stay_cond, &body) {
            let count = values.len() as u32;
            let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let name = self.reg_name(r);
            self.note_here(format!(
                "counted loop: {name} = {} ({count} iterations), translated as `for`",
                shown.join(", ")
            ));
            let saved_known = self.forget_known();
            self.set_range(r, Some(values));
            let mut inner = pre;
            self.region(stay, Some(h), &mut inner);
            self.set_range(r, None);
            drop(saved_known);
            self.forget_known();
            self.set_known(r, last);
            let iter = self.fresh_reg(&format!("iter.{name}"));
            let seq = self.push(Stmt::Seq(inner));
            out.push(self.push(Stmt::For {
                var: iter,
                count,
                body: seq,
            }));
            return Some(exit);
        }
        out.extend(pre);
        self.warn(
            WarningKind::ControlFlow,
            "loop without a constant bound",
            "translated as its first test only: a thread that would iterate again is cut off \
             (it skips the rest of the enclosing region)",
        );
        let mut inner = Vec::new();
        self.region(exit, stop, &mut inner);
        let then = self.push(Stmt::Seq(inner));
        let els = self.push(Stmt::Seq(Vec::new()));
        out.push(self.push(Stmt::If {
            cond: exit_cond,
            then,
            els,
        }));
        None
    }

    /// For a counted loop: its induction register, the register's value in
    /// each iteration, and its value on exit.
    fn trip_values(
        &self,
        h: NodeId,
        stay: &Expr,
        body: &std::collections::BTreeSet<NodeId>,
    ) -> Option<(Reg, Vec<Value>, Value)> {
        let mut regs = Vec::new();
        collect_regs(stay, &mut regs);
        regs.dedup();
        let [r] = regs.as_slice() else {
            return None;
        };
        if has_tid(stay) {
            return None;
        }
        let init = self.known_value(*r)?;
        let local = self.reg_local(*r)?;
        // The one update inside the loop: `v = v op k`.
        let mut update = None;
        for &n in body {
            let node = self.flat.nodes[n];
            let block = &self.flat.body(node.frame).blocks[node.bb];
            if let TerminatorKind::Call { destination, .. } = &block.terminator.kind
                && destination.projection.is_empty()
                && self.flat.local(node.frame, destination.local) == local
            {
                return None;
            }
            for st in &block.statements {
                let StatementKind::Assign(p, rv) = &st.kind else {
                    continue;
                };
                if !p.projection.is_empty() || self.flat.local(node.frame, p.local) != local {
                    continue;
                }
                if n == h || update.is_some() {
                    return None;
                }
                let Rvalue::BinaryOp(op, Operand::Copy(a) | Operand::Move(a), Operand::Const(k)) =
                    rv
                else {
                    return None;
                };
                let ConstOperand::Scalar(Scalar::Int { bits, .. }) = k else {
                    return None;
                };
                if !a.projection.is_empty() || self.flat.local(node.frame, a.local) != local {
                    return None;
                }
                update = Some((*op, *bits));
            }
        }
        let (op, k) = update?;
        let mut regfile = vec![0; self.n_regs()];
        let mut x = init;
        let mut values = Vec::new();
        loop {
            regfile[usize::from(r.0)] = x;
            if stay.eval(0, &regfile) == 0 {
                return Some((*r, values, x));
            }
            values.push(x);
            if values.len() > MAX_TRIPS {
                return None;
            }
            x = step(op, u128::from(x), k)?;
        }
    }

    /// Forgets every known constant: a loop body is emitted once for every
    /// iteration, so nothing assigned in it is known at its start.
    fn forget_known(&mut self) -> Vec<(Reg, Value)> {
        let all: Vec<Reg> = (0..self.n_regs() as u16).map(Reg).collect();
        let mut saved = Vec::new();
        for r in all {
            if let Some(v) = self.known_value(r) {
                saved.push((r, v));
            }
        }
        self.clear_known();
        saved
    }
}

/// One step of the induction variable, with MIR's unsigned semantics.
fn step(op: MirBinOp, x: u128, k: u128) -> Option<Value> {
    let v = match op {
        MirBinOp::Add | MirBinOp::AddUnchecked => x.checked_add(k)?,
        MirBinOp::Sub | MirBinOp::SubUnchecked => x.checked_sub(k)?,
        MirBinOp::Mul | MirBinOp::MulUnchecked => x.checked_mul(k)?,
        MirBinOp::Div if k != 0 => x / k,
        MirBinOp::Shl | MirBinOp::ShlUnchecked if k < 32 => x << k,
        MirBinOp::Shr | MirBinOp::ShrUnchecked => x.checked_shr(k as u32).unwrap_or(0),
        _ => return None,
    };
    Value::try_from(v).ok()
}

fn has_tid(e: &Expr) -> bool {
    match e {
        Expr::Tid => true,
        Expr::Bin(_, a, b) => has_tid(a) || has_tid(b),
        _ => false,
    }
}
