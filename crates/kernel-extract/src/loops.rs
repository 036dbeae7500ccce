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

use std::collections::BTreeMap;

use mir_import::model::{
    BinOp as MirBinOp, CastKind, ConstOperand, Operand, PlaceElem, Rvalue, Scalar, StatementKind,
    TerminatorKind,
};

use crate::WarningKind;
use crate::flat::NodeId;
use crate::structure::{Extractor, collect_regs};
use crate::value::bin;
use memory_model::lang::{BinOp, Expr, Reg, Stmt, StmtId, Value};

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
        if self.launch.spin_bound.is_some()
            && !matches!(block.terminator.kind, TerminatorKind::SwitchInt { .. })
        {
            return self.bounded_loop(h, out);
        }
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
        let crate::value::Sym::Val(d) = d else {
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
        if self.launch.spin_bound.is_some() {
            // The header's statements are emitted again inside the loop.
            self.forget_known();
            return self.bounded_loop(h, out);
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

    /// A loop without a constant bound, as `loop { .. }` of at most
    /// `spin_bound` iterations: the blocks from the header run straight
    /// (calls included) up to the one test that leaves the loop, which
    /// becomes `if exit { break } else { rest of the body }`. `Some(exit)` to
    /// continue after it; `None` (with a warning) for a loop of another
    /// shape, whose region is dropped.
    fn bounded_loop(&mut self, h: NodeId, out: &mut Vec<StmtId>) -> Option<NodeId> {
        let bound = self.launch.spin_bound.unwrap_or(1);
        let body = self.flat.loops[&h].body.clone();
        let exits: std::collections::BTreeSet<NodeId> = body
            .iter()
            .flat_map(|&n| self.flat.succs[n].iter().copied())
            .filter(|s| !body.contains(s) && self.flat.live[*s])
            .collect();
        let fail = |this: &mut Self, why: &str| {
            this.warn(
                WarningKind::ControlFlow,
                "loop without a constant bound",
                &format!("not translated ({why}): the loop and the rest of the region are dropped"),
            );
            None
        };
        let [exit] = exits.into_iter().collect::<Vec<_>>()[..] else {
            return fail(self, "it does not leave to exactly one place");
        };
        self.forget_known();
        let mut inner = Vec::new();
        let mut b = h;
        loop {
            self.cur = b;
            self.statements(b, &mut inner);
            let node = self.flat.nodes[b];
            let block = &self.flat.body(node.frame).blocks[node.bb];
            if let TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } = &block.terminator.kind
                && let [(v, t)] = targets.as_slice()
            {
                let (tv, to) = (
                    self.flat.node(node.frame, *t),
                    self.flat.node(node.frame, *otherwise),
                );
                let leaves = |n: NodeId| n == exit || !self.flat.live[n];
                if leaves(tv) != leaves(to) && (tv == exit || to == exit) {
                    let crate::value::Sym::Val(d) = self.operand(node.frame, discr, &mut inner)
                    else {
                        return fail(self, "its test is not on an integer");
                    };
                    let is_v = if *v == 0 {
                        bin(BinOp::Eq, d.clone(), Expr::Const(0))
                    } else {
                        d.clone().equals(Expr::Const(*v as Value))
                    };
                    let not_v = if *v == 0 {
                        d.clone()
                    } else {
                        d.bin(BinOp::Ne, Expr::Const(*v as Value))
                    };
                    let (stay, exit_cond) = if tv == exit { (to, is_v) } else { (tv, not_v) };
                    let brk = self.push(Stmt::Break);
                    let then = self.push(Stmt::Seq(vec![brk]));
                    let mut rest = Vec::new();
                    self.region(stay, Some(h), &mut rest);
                    let els = self.push(Stmt::Seq(rest));
                    inner.push(self.push(Stmt::If {
                        cond: exit_cond,
                        then,
                        els,
                    }));
                    break;
                }
            }
            match self.terminator(b, Some(h), &mut inner) {
                Some(next) if next != h && body.contains(&next) => b = next,
                _ => return fail(self, "no test leaves it before it repeats"),
            }
        }
        self.forget_known();
        self.note_here(format!(
            "loop without a constant bound: translated as `loop` of at most {bound} iterations"
        ));
        let seq = self.push(Stmt::Seq(inner));
        out.push(self.push(Stmt::Loop { body: seq, bound }));
        Some(exit)
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
        // Every definition inside the loop, by flat local.
        let mut defs: BTreeMap<usize, Vec<(usize, &Rvalue)>> = BTreeMap::new();
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
                if let StatementKind::Assign(p, rv) = &st.kind
                    && p.projection.is_empty()
                {
                    let l = self.flat.local(node.frame, p.local);
                    if l == local && n == h {
                        return None;
                    }
                    defs.entry(l).or_default().push((node.frame, rv));
                }
            }
        }
        // The one update: `v = f(v)`, with `f` built from constants and `v`.
        let [(frame, rv)] = defs.get(&local)?.as_slice() else {
            return None;
        };
        let update = self.update_expr(&defs, *frame, rv, local, *r, 0)?;
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
            x = update.eval(0, &regfile);
        }
    }

    /// The update of the induction variable as an expression over its
    /// register `r`, following single in-loop definitions through copies,
    /// casts and `XWithOverflow(..).0`. `None` when it depends on anything
    /// else or uses an operator the language lacks.
    fn update_expr(
        &self,
        defs: &BTreeMap<usize, Vec<(usize, &Rvalue)>>,
        frame: usize,
        rv: &Rvalue,
        ivar: usize,
        r: Reg,
        depth: u32,
    ) -> Option<Expr> {
        if depth > 16 {
            return None;
        }
        let operand = |op: &Operand| -> Option<Expr> {
            match op {
                Operand::Const(ConstOperand::Scalar(Scalar::Int { bits, .. })) => {
                    Some(Expr::Const(Value::try_from(*bits).ok()?))
                }
                Operand::Copy(p) | Operand::Move(p) => {
                    let l = self.flat.local(frame, p.local);
                    let with_overflow_field =
                        matches!(p.projection.as_slice(), [PlaceElem::Field(0, _)]);
                    if !p.projection.is_empty() && !with_overflow_field {
                        return None;
                    }
                    if l == ivar && p.projection.is_empty() {
                        return Some(Expr::Reg(r));
                    }
                    let [(f, def)] = defs.get(&l)?.as_slice() else {
                        return None;
                    };
                    if with_overflow_field
                        && !matches!(
                            def,
                            Rvalue::BinaryOp(
                                MirBinOp::AddWithOverflow
                                    | MirBinOp::SubWithOverflow
                                    | MirBinOp::MulWithOverflow,
                                ..
                            )
                        )
                    {
                        return None;
                    }
                    self.update_expr(defs, *f, def, ivar, r, depth + 1)
                }
                Operand::Const(_) => None,
            }
        };
        match rv {
            Rvalue::Use(op) | Rvalue::Cast(CastKind::IntToInt, op, _) => operand(op),
            Rvalue::BinaryOp(op, a, b) => {
                let (a, b) = (operand(a)?, operand(b)?);
                let pow2 = |e: &Expr| match e {
                    Expr::Const(k) if k.is_power_of_two() => Some(k.trailing_zeros()),
                    _ => None,
                };
                use MirBinOp as M;
                Some(match op {
                    M::Add | M::AddUnchecked | M::AddWithOverflow => bin(BinOp::Add, a, b),
                    M::Sub | M::SubUnchecked | M::SubWithOverflow => bin(BinOp::Sub, a, b),
                    M::Shl | M::ShlUnchecked => bin(BinOp::Shl, a, b),
                    M::Shr | M::ShrUnchecked => bin(BinOp::Shr, a, b),
                    M::Mul | M::MulUnchecked | M::MulWithOverflow => {
                        bin(BinOp::Shl, a, Expr::Const(pow2(&b)?))
                    }
                    M::Div => bin(BinOp::Shr, a, Expr::Const(pow2(&b)?)),
                    _ => return None,
                })
            }
            _ => None,
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

fn has_tid(e: &Expr) -> bool {
    match e {
        Expr::Tid => true,
        Expr::Bin(_, a, b) => has_tid(a) || has_tid(b),
        _ => false,
    }
}
