//! Thread-local states and the executable step function.
//!
//! A thread's state is a continuation (a stack of [`Frame`]s whose top is the
//! last element), its registers and its barrier counts. A *step* performs every
//! silent computation up to the next memory or barrier action (assignments,
//! `if`, sequences, loop unfolding) and then that action, which becomes one
//! event of the trace. So a trace has one event per step, and a thread with no
//! action left has no step.
//!
//! [`step`] is the executable step function. [`crate::relation`] gives the same
//! semantics as a relation, rule by rule; [`crate::checks::semantics`] shows that
//! the two agree on every reachable state of the corpus.

use crate::event::Action;
use crate::lang::{
    Access, BarrierKind, Loc, Ordering, Program, Reg, RmwOp, Stmt, StmtId, Ty, Value,
};

/// One entry of a continuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// Run this statement next.
    Run(StmtId),
    /// Run iteration `next` of this `for` statement next, or leave it when
    /// `next` is its count.
    Iter {
        /// The `for` statement.
        stmt: StmtId,
        /// The iteration to run next.
        next: u32,
    },
    /// Start iteration `iter` of this `loop` statement next (iterations are
    /// counted from 0); at its bound, the thread is cut.
    Loop {
        /// The `loop` statement.
        stmt: StmtId,
        /// Iterations started so far.
        iter: u32,
    },
}

/// A thread's local state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadState {
    /// The continuation; the last frame runs first.
    pub cont: Vec<Frame>,
    /// The registers.
    pub regs: Vec<Value>,
    /// The number of CTA-shared barriers this thread has passed.
    pub shared_barriers: u32,
    /// The number of legacy global barriers this thread has passed.
    pub legacy_barriers: u32,
}

impl ThreadState {
    /// The state of thread `tid` at launch: its whole body to run, registers zero.
    pub fn start(program: &Program, tid: u32) -> ThreadState {
        ThreadState {
            cont: vec![Frame::Run(program.bodies[tid as usize])],
            regs: vec![0; program.regs.len()],
            shared_barriers: 0,
            legacy_barriers: 0,
        }
    }

    /// A register's value.
    pub fn reg(&self, r: Reg) -> Value {
        self.regs[usize::from(r.0)]
    }
}

/// What a thread does next, once its silent steps are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// A load into `dst`; the value comes from the machine.
    Load {
        /// The register written.
        dst: Reg,
        /// Where.
        loc: Loc,
        /// The type tag.
        ty: Ty,
        /// Plain or atomic.
        access: Access,
    },
    /// A store.
    Store {
        /// Where.
        loc: Loc,
        /// The type tag.
        ty: Ty,
        /// The value.
        val: Value,
        /// Plain or atomic.
        access: Access,
    },
    /// An atomic read-modify-write into `dst`; the old value comes from the
    /// machine.
    Rmw {
        /// The register written with the old value.
        dst: Reg,
        /// Where.
        loc: Loc,
        /// The type tag.
        ty: Ty,
        /// What it stores, evaluated.
        op: RmwValue,
        /// The ordering of the read-modify-write (of a successful exchange).
        ordering: Ordering,
    },
    /// A barrier.
    Barrier(BarrierKind),
    /// The thread would start a loop's iteration past its bound: it is cut
    /// and never steps again (its run does not complete).
    Cut,
    /// The thread has finished.
    Done,
}

/// A read-modify-write's operation with its operands evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwValue {
    /// Stores `old + v`.
    Add(Value),
    /// Stores `v`.
    Exchange(Value),
    /// Stores `new` when `old == expected`.
    Cas {
        /// Compared with the old value.
        expected: Value,
        /// Stored on success.
        new: Value,
        /// The ordering of a failed exchange.
        failure: Ordering,
    },
}

impl RmwValue {
    /// What is stored after reading `old`, and the ordering the access had.
    pub fn apply(self, old: Value, ordering: Ordering) -> (Option<Value>, Ordering) {
        match self {
            RmwValue::Add(v) => (Some(old.wrapping_add(v)), ordering),
            RmwValue::Exchange(v) => (Some(v), ordering),
            RmwValue::Cas {
                expected,
                new,
                failure,
            } => {
                if old == expected {
                    (Some(new), ordering)
                } else {
                    (None, failure)
                }
            }
        }
    }
}

/// Evaluates a read-modify-write's operands.
pub fn rmw_value(op: &RmwOp, tid: u32, regs: &[Value]) -> RmwValue {
    match op {
        RmwOp::Add(e) => RmwValue::Add(e.eval(tid, regs)),
        RmwOp::Exchange(e) => RmwValue::Exchange(e.eval(tid, regs)),
        RmwOp::Cas {
            expected,
            new,
            failure,
        } => RmwValue::Cas {
            expected: expected.eval(tid, regs),
            new: new.eval(tid, regs),
            failure: *failure,
        },
    }
}

/// Performs silent steps until the top frame is a memory or barrier action, or
/// the continuation is empty.
pub fn normalize(program: &Program, tid: u32, ts: &mut ThreadState) {
    while let Some(&frame) = ts.cont.last() {
        match frame {
            Frame::Iter { stmt, next } => {
                let Stmt::For { var, count, body } = *program.stmt(stmt) else {
                    unreachable!("an Iter frame always names a for statement")
                };
                ts.cont.pop();
                if next < count {
                    ts.regs[usize::from(var.0)] = next;
                    ts.cont.push(Frame::Iter {
                        stmt,
                        next: next + 1,
                    });
                    ts.cont.push(Frame::Run(body));
                }
            }
            Frame::Loop { stmt, iter } => {
                let Stmt::Loop { body, bound } = *program.stmt(stmt) else {
                    unreachable!("a Loop frame always names a loop statement")
                };
                if iter >= bound {
                    // Cut: `pending` reports it, and nothing ever pops it.
                    return;
                }
                ts.cont.pop();
                ts.cont.push(Frame::Loop {
                    stmt,
                    iter: iter + 1,
                });
                ts.cont.push(Frame::Run(body));
            }
            Frame::Run(id) => match program.stmt(id) {
                Stmt::Load { .. } | Stmt::Store { .. } | Stmt::Rmw { .. } | Stmt::Barrier(_) => {
                    return;
                }
                Stmt::Loop { .. } => {
                    ts.cont.pop();
                    ts.cont.push(Frame::Loop { stmt: id, iter: 0 });
                }
                Stmt::Break => {
                    // Leave everything up to and including the innermost loop.
                    while let Some(frame) = ts.cont.pop() {
                        if matches!(frame, Frame::Loop { .. }) {
                            break;
                        }
                    }
                }
                Stmt::Assign { dst, val } => {
                    ts.cont.pop();
                    ts.regs[usize::from(dst.0)] = val.eval(tid, &ts.regs);
                }
                Stmt::Seq(items) => {
                    ts.cont.pop();
                    ts.cont.extend(items.iter().rev().map(|s| Frame::Run(*s)));
                }
                Stmt::If { cond, then, els } => {
                    ts.cont.pop();
                    let taken = if cond.eval(tid, &ts.regs) != 0 {
                        *then
                    } else {
                        *els
                    };
                    ts.cont.push(Frame::Run(taken));
                }
                Stmt::For { .. } => {
                    ts.cont.pop();
                    ts.cont.push(Frame::Iter { stmt: id, next: 0 });
                }
            },
        }
    }
}

/// The pending action of a normalized state.
pub fn pending(program: &Program, tid: u32, ts: &ThreadState) -> Pending {
    let id = match ts.cont.last() {
        Some(&Frame::Run(id)) => id,
        Some(Frame::Loop { .. }) => return Pending::Cut,
        _ => {
            debug_assert!(ts.cont.is_empty(), "pending() needs a normalized state");
            return Pending::Done;
        }
    };
    match program.stmt(id) {
        Stmt::Load {
            dst,
            space,
            addr,
            ty,
            access,
        } => Pending::Load {
            dst: *dst,
            loc: program.loc_of(tid, *space, addr.eval(tid, &ts.regs)),
            ty: *ty,
            access: *access,
        },
        Stmt::Store {
            space,
            addr,
            ty,
            val,
            access,
        } => Pending::Store {
            loc: program.loc_of(tid, *space, addr.eval(tid, &ts.regs)),
            ty: *ty,
            val: val.eval(tid, &ts.regs),
            access: *access,
        },
        Stmt::Rmw {
            dst,
            space,
            addr,
            ty,
            op,
            ordering,
        } => Pending::Rmw {
            dst: *dst,
            loc: program.loc_of(tid, *space, addr.eval(tid, &ts.regs)),
            ty: *ty,
            op: rmw_value(op, tid, &ts.regs),
            ordering: *ordering,
        },
        Stmt::Barrier(kind) => Pending::Barrier(*kind),
        other => unreachable!("pending() needs a normalized state, found {other:?}"),
    }
}

/// Normalizes and returns the pending action.
pub fn next_action(program: &Program, tid: u32, ts: &mut ThreadState) -> Pending {
    normalize(program, tid, ts);
    pending(program, tid, ts)
}

/// Performs the pending action of a normalized state. `read` is the value for a
/// load (ignored otherwise). Returns the event's action, or `None` when the
/// thread is done.
pub fn commit(program: &Program, tid: u32, ts: &mut ThreadState, read: Value) -> Option<Action> {
    let action = match pending(program, tid, ts) {
        Pending::Done | Pending::Cut => return None,
        Pending::Rmw {
            dst,
            loc,
            ty,
            op,
            ordering,
        } => {
            ts.regs[usize::from(dst.0)] = read;
            let (new, ordering) = op.apply(read, ordering);
            Action::Rmw {
                loc,
                ty,
                old: read,
                new,
                ordering,
            }
        }
        Pending::Load {
            dst,
            loc,
            ty,
            access,
        } => {
            ts.regs[usize::from(dst.0)] = read;
            Action::Load {
                loc,
                ty,
                val: read,
                access,
            }
        }
        Pending::Store {
            loc,
            ty,
            val,
            access,
        } => Action::Store {
            loc,
            ty,
            val,
            access,
        },
        Pending::Barrier(kind) => {
            let count = match kind {
                BarrierKind::Shared => &mut ts.shared_barriers,
                BarrierKind::LegacyGlobal => &mut ts.legacy_barriers,
            };
            *count += 1;
            Action::Barrier { kind, k: *count }
        }
    };
    ts.cont.pop();
    Some(action)
}

/// The executable step function: from `ts`, the silent steps and then one
/// action. A load takes its value from `read(loc, ty)`; when that is `None`
/// (no store to read) the thread cannot step. `None` also when it is done.
pub fn step(
    program: &Program,
    tid: u32,
    ts: &ThreadState,
    read: impl FnOnce(Loc, Ty) -> Option<Value>,
) -> Option<(Action, ThreadState)> {
    let mut next = ts.clone();
    let value = match next_action(program, tid, &mut next) {
        Pending::Done | Pending::Cut => return None,
        Pending::Load { loc, ty, .. } | Pending::Rmw { loc, ty, .. } => read(loc, ty)?,
        Pending::Store { .. } | Pending::Barrier(_) => 0,
    };
    let action = commit(program, tid, &mut next, value)?;
    Some((action, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{Builder, Expr, Space};

    #[test]
    fn counted_loops_unfold_with_the_counter_set() {
        let mut b = Builder::new();
        let i = b.reg("i");
        let st = b.store(
            Space::Shared,
            Expr::Reg(i),
            Ty::U32,
            Expr::Const(1) << i,
            Access::Plain,
        );
        let body = b.for_loop(i, 3, st);
        let program = b.finish("loop", vec![body], vec![], &[]);
        let mut ts = ThreadState::start(&program, 0);
        let mut stored = Vec::new();
        while let Some((action, next)) = step(&program, 0, &ts, |_, _| None) {
            stored.push(action);
            ts = next;
        }
        let expect: Vec<Action> = (0..3)
            .map(|k| Action::Store {
                loc: Loc {
                    space: Space::Shared,
                    addr: k,
                },
                ty: Ty::U32,
                val: 1 << k,
                access: Access::Plain,
            })
            .collect();
        assert_eq!(stored, expect);
        normalize(&program, 0, &mut ts);
        assert!(ts.cont.is_empty());
    }
}
