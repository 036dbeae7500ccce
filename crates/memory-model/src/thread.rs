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
use crate::lang::{Access, BarrierKind, Loc, Program, Reg, Stmt, StmtId, Ty, Value};

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
    /// A barrier.
    Barrier(BarrierKind),
    /// The thread has finished.
    Done,
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
            Frame::Run(id) => match program.stmt(id) {
                Stmt::Load { .. } | Stmt::Store { .. } | Stmt::Barrier(_) => return,
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
    let Some(&Frame::Run(id)) = ts.cont.last() else {
        debug_assert!(ts.cont.is_empty(), "pending() needs a normalized state");
        return Pending::Done;
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
            loc: Loc {
                space: *space,
                addr: addr.eval(tid, &ts.regs),
            },
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
            loc: Loc {
                space: *space,
                addr: addr.eval(tid, &ts.regs),
            },
            ty: *ty,
            val: val.eval(tid, &ts.regs),
            access: *access,
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
        Pending::Done => return None,
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
        Pending::Done => return None,
        Pending::Load { loc, ty, .. } => read(loc, ty)?,
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
