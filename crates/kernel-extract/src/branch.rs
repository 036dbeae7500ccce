//! Branches: folding a condition that is the same for every thread, and
//! rebuilding `if` chains from a `switchInt`.

use crate::WarningKind;
use crate::flat::NodeId;
use crate::structure::{Extractor, collect_regs};
use memory_model::lang::{BinOp, Expr, Reg, Stmt, StmtId, Value};

impl Extractor<'_, '_> {
    /// A multi-way branch: arms are (condition, target), tried in order; the
    /// last one's condition is always true.
    pub(super) fn switch(
        &mut self,
        b: NodeId,
        arms: Vec<(Expr, NodeId)>,
        stop: Option<NodeId>,
        out: &mut Vec<StmtId>,
    ) -> Option<NodeId> {
        // Fold: an arm whose condition holds for every thread, with every
        // earlier arm false for every thread.
        let mut folded = None;
        for (i, (cond, target)) in arms.iter().enumerate() {
            match self.decide(cond) {
                Some(true) => {
                    folded = Some((i, *target));
                    break;
                }
                Some(false) => continue,
                None => break,
            }
        }
        if let Some((i, target)) = folded {
            let dropped: Vec<NodeId> = arms
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, a)| a.1)
                .collect();
            if !dropped.is_empty() {
                let panics = dropped.iter().filter(|&&t| !self.flat.live[t]).count();
                self.note(format!(
                    "branch decided for all {} threads: arm {} taken ({} other arm(s), {panics} of them \
                     panicking, unreachable in this launch)",
                    self.launch.threads,
                    self.flat.describe(target).1,
                    dropped.len()
                ));
            }
            return Some(target);
        }
        let live: Vec<&(Expr, NodeId)> = arms.iter().filter(|a| self.flat.live[a.1]).collect();
        let join = self.flat.ipdom[b];
        if live.len() == 1 && live.len() < arms.len() {
            let target = live[0].1;
            let cond = self.arm_condition(&arms, target);
            return self.guard(cond, target, stop, "check with a panicking arm", out);
        }
        if live.is_empty() {
            return None;
        }
        let arm_stop = join.or(stop);
        let stmt = self.if_chain(&arms, 0, arm_stop);
        out.push(stmt);
        join
    }

    /// A check whose failure panics: folded when `holds` is true for every
    /// thread; otherwise the rest of the region (from `target`) is guarded by
    /// `if holds`, with a warning, since the model has no trap.
    pub(super) fn guard(
        &mut self,
        holds: Expr,
        target: NodeId,
        stop: Option<NodeId>,
        construct: &str,
        out: &mut Vec<StmtId>,
    ) -> Option<NodeId> {
        if self.decide(&holds) == Some(true) {
            self.note(format!(
                "{construct} holds for all {} threads: folded",
                self.launch.threads
            ));
            return Some(target);
        }
        self.warn(
            WarningKind::ControlFlow,
            construct,
            "not decided for every thread; the model has no trap, so a thread that would panic \
             skips the rest of the enclosing region instead",
        );
        let mut inner = Vec::new();
        self.assumptions.push(holds.clone());
        self.region(target, stop, &mut inner);
        self.assumptions.pop();
        let then = self.push(Stmt::Seq(inner));
        let els = self.push(Stmt::Seq(Vec::new()));
        out.push(self.push(Stmt::If {
            cond: holds,
            then,
            els,
        }));
        None
    }

    /// The condition under which the walk reaches `target` among `arms`.
    fn arm_condition(&self, arms: &[(Expr, NodeId)], target: NodeId) -> Expr {
        let mut cond = Expr::Const(1);
        for (c, t) in arms {
            if *t == target {
                return and(cond, c.clone());
            }
            cond = and(cond, c.clone().equals(Expr::Const(0)));
        }
        cond
    }

    fn if_chain(&mut self, arms: &[(Expr, NodeId)], i: usize, stop: Option<NodeId>) -> StmtId {
        let (cond, target) = arms[i].clone();
        let arm = |this: &mut Self, t: NodeId, assume: Expr| {
            let mut inner = Vec::new();
            if this.flat.live[t] {
                this.assumptions.push(assume);
                this.region(t, stop, &mut inner);
                this.assumptions.pop();
            } else {
                this.cur = t;
                this.warn(
                    WarningKind::ControlFlow,
                    "panicking arm",
                    "the model has no trap; the arm is empty",
                );
            }
            this.push(Stmt::Seq(inner))
        };
        if i + 1 == arms.len() {
            return arm(self, target, Expr::Const(1));
        }
        let known = self.known.clone();
        let then = arm(self, target, cond.clone());
        let after_then = std::mem::replace(&mut self.known, known);
        let els = if i + 2 == arms.len() {
            arm(self, arms[i + 1].1, cond.clone().equals(Expr::Const(0)))
        } else {
            self.assumptions.push(cond.clone().equals(Expr::Const(0)));
            let s = self.if_chain(arms, i + 1, stop);
            self.assumptions.pop();
            s
        };
        self.known
            .retain(|r, v| after_then.get(r).is_some_and(|w| w == v));
        // `if c { } else { x }` reads better as `if c == 0 { x }`.
        if matches!(&self.stmts[then.index()], Stmt::Seq(v) if v.is_empty()) {
            let cond = match cond {
                Expr::Bin(BinOp::Eq, a, b) if *b == Expr::Const(0) => *a,
                c => c.equals(Expr::Const(0)),
            };
            return self.push(Stmt::If {
                cond,
                then: els,
                els: then,
            });
        }
        self.push(Stmt::If { cond, then, els })
    }

    /// Whether `cond` has one value for every thread of the launch, every
    /// value of the enclosing counted loops' variables, and every point that
    /// satisfies the current assumptions. `None` when it varies or depends on
    /// anything else.
    pub(super) fn decide(&self, cond: &Expr) -> Option<bool> {
        let mut regs = Vec::new();
        collect_regs(cond, &mut regs);
        let mut domains: Vec<(Reg, Vec<Value>)> = Vec::new();
        for r in &regs {
            if let Some(v) = self.known.get(r) {
                domains.push((*r, vec![*v]));
            } else if let Some(vs) = self.ranges.get(r) {
                domains.push((*r, vs.clone()));
            } else {
                return None;
            }
        }
        domains.sort_by_key(|d| d.0);
        domains.dedup_by_key(|d| d.0);
        let mut regfile = vec![0; self.regs.len()];
        let mut result = None;
        let mut idx = vec![0usize; domains.len()];
        loop {
            for (k, (r, vs)) in domains.iter().enumerate() {
                regfile[usize::from(r.0)] = vs[idx[k]];
            }
            for tid in 0..self.launch.threads * self.launch.ctas.max(1) {
                let holds = self.assumptions.iter().all(|a| {
                    let mut ar = Vec::new();
                    collect_regs(a, &mut ar);
                    // An assumption over untracked registers is ignored: that
                    // only widens the set of points checked.
                    !ar.iter().all(|r| domains.iter().any(|d| d.0 == *r))
                        || a.eval(tid, &regfile) != 0
                });
                if !holds {
                    continue;
                }
                let v = cond.eval(tid, &regfile) != 0;
                match result {
                    None => result = Some(v),
                    Some(w) if w != v => return None,
                    _ => {}
                }
            }
            // Next point of the product.
            let mut k = 0;
            loop {
                if k == domains.len() {
                    return result;
                }
                idx[k] += 1;
                if idx[k] < domains[k].1.len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }
}

/// `a && b` over 0/1 values, simplified when one side is the constant 1.
fn and(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Const(1), _) => b,
        (_, Expr::Const(1)) => a,
        _ => a.bin(BinOp::Add, b).equals(Expr::Const(2)),
    }
}
