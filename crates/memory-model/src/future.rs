//! What a thread may still access: the locations, read or written, that the
//! rest of its run can reach, up to its next CTA barrier or to its end.
//!
//! [`crate::drf`] uses this to run a thread alone when its next access
//! conflicts with nothing another thread may do before it (a persistent set
//! of one thread): the other orders reach the same states, with the same
//! happens-before, so no outcome and no race is lost.
//!
//! The walk runs the thread's continuation with its registers, where a
//! register that a load or read-modify-write will set is unknown. A branch on
//! an unknown value takes both arms; an address that is unknown means
//! "anything" ([`Future::Anything`]), as does a walk past its step limit.

use std::collections::BTreeSet;

use crate::lang::{BarrierKind, Expr, Loc, Program, Reg, Stmt, Value};
use crate::thread::{Frame, ThreadState};

/// The accesses a thread may still make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Future {
    /// These `(location, writes)`, and no others.
    Only(BTreeSet<(Loc, bool)>),
    /// Any location (an address the walk cannot compute, or too long a walk).
    Anything,
}

impl Future {
    /// Whether an access to `loc` (a write when `write`) may conflict with one
    /// of these: the same location and one of the two writes.
    pub fn conflicts(&self, loc: Loc, write: bool) -> bool {
        match self {
            Future::Anything => true,
            Future::Only(set) => set.iter().any(|&(l, w)| l == loc && (w || write)),
        }
    }
}

/// The most statement steps one walk may take before it answers
/// [`Future::Anything`].
const MAX_STEPS: usize = 20_000;

/// One path of the walk: a continuation and registers (`None`: unknown).
struct Path {
    cont: Vec<Frame>,
    regs: Vec<Option<Value>>,
}

fn eval(e: &Expr, tid: u32, regs: &[Option<Value>]) -> Option<Value> {
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(Reg(r)) => regs.get(usize::from(*r)).copied().flatten(),
        Expr::Tid => Some(tid),
        Expr::Bin(op, a, b) => Some(op.apply(eval(a, tid, regs)?, eval(b, tid, regs)?)),
    }
}

/// The accesses thread `tid` may still make from `ts`: up to (not past) its
/// next CTA barrier when `stop_at_barrier`, except a barrier it is about to
/// pass (`past_first_barrier`), or to its end.
pub fn accesses(
    program: &Program,
    tid: u32,
    ts: &ThreadState,
    stop_at_barrier: bool,
    past_first_barrier: bool,
) -> Future {
    let mut out = BTreeSet::new();
    let mut work = vec![(
        Path {
            cont: ts.cont.clone(),
            regs: ts.regs.iter().map(|&v| Some(v)).collect(),
        },
        past_first_barrier,
    )];
    let mut steps = 0;
    while let Some((mut p, mut skip_barrier)) = work.pop() {
        while let Some(frame) = p.cont.pop() {
            steps += 1;
            if steps > MAX_STEPS {
                return Future::Anything;
            }
            let id = match frame {
                Frame::Run(id) => id,
                Frame::Iter { stmt, next } => {
                    let Stmt::For { var, count, body } = *program.stmt(stmt) else {
                        return Future::Anything;
                    };
                    if next < count {
                        p.regs[usize::from(var.0)] = Some(next);
                        p.cont.push(Frame::Iter {
                            stmt,
                            next: next + 1,
                        });
                        p.cont.push(Frame::Run(body));
                    }
                    continue;
                }
                Frame::Loop { stmt, iter } => {
                    let Stmt::Loop { body, bound } = *program.stmt(stmt) else {
                        return Future::Anything;
                    };
                    if iter < bound {
                        p.cont.push(Frame::Loop {
                            stmt,
                            iter: iter + 1,
                        });
                        p.cont.push(Frame::Run(body));
                    }
                    // At the bound the thread is cut: this path ends.
                    continue;
                }
            };
            let mut access = |space, addr: &Expr, regs: &[Option<Value>], write: bool| {
                eval(addr, tid, regs).map(|a| out.insert((program.loc_of(tid, space, a), write)))
            };
            match program.stmt(id) {
                Stmt::Assign { dst, val } => {
                    p.regs[usize::from(dst.0)] = eval(val, tid, &p.regs);
                }
                Stmt::Load {
                    dst, space, addr, ..
                } => {
                    if access(*space, addr, &p.regs, false).is_none() {
                        return Future::Anything;
                    }
                    p.regs[usize::from(dst.0)] = None;
                }
                Stmt::Store { space, addr, .. } => {
                    if access(*space, addr, &p.regs, true).is_none() {
                        return Future::Anything;
                    }
                }
                Stmt::Rmw {
                    dst, space, addr, ..
                } => {
                    if access(*space, addr, &p.regs, true).is_none() {
                        return Future::Anything;
                    }
                    p.regs[usize::from(dst.0)] = None;
                }
                Stmt::Barrier(BarrierKind::Shared) if stop_at_barrier => {
                    if skip_barrier {
                        skip_barrier = false;
                    } else {
                        p.cont.clear();
                    }
                }
                Stmt::Barrier(_) => {}
                Stmt::Seq(items) => p.cont.extend(items.iter().rev().map(|s| Frame::Run(*s))),
                Stmt::If { cond, then, els } => match eval(cond, tid, &p.regs) {
                    Some(c) => p.cont.push(Frame::Run(if c != 0 { *then } else { *els })),
                    None => {
                        let mut other = Path {
                            cont: p.cont.clone(),
                            regs: p.regs.clone(),
                        };
                        other.cont.push(Frame::Run(*els));
                        work.push((other, skip_barrier));
                        p.cont.push(Frame::Run(*then));
                    }
                },
                Stmt::For { .. } => p.cont.push(Frame::Iter { stmt: id, next: 0 }),
                Stmt::Loop { .. } => p.cont.push(Frame::Loop { stmt: id, iter: 0 }),
                Stmt::Break => {
                    while let Some(f) = p.cont.pop() {
                        if matches!(f, Frame::Loop { .. }) {
                            break;
                        }
                    }
                }
            }
        }
    }
    Future::Only(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{Access, Space, Ty};
    use crate::litmus;

    #[test]
    fn the_reduction_touches_its_own_slot_before_the_first_barrier() {
        let program = litmus::tree_reduction(8);
        let ts = ThreadState::start(&program, 3);
        let Future::Only(set) = accesses(&program, 3, &ts, true, false) else {
            panic!("known addresses");
        };
        let sh = |addr| Loc {
            space: Space::Shared,
            addr,
        };
        assert_eq!(set, BTreeSet::from([(sh(3), true)]));
        // Without the barrier as a stop, the later rounds' reads show up.
        let Future::Only(all) = accesses(&program, 3, &ts, false, false) else {
            panic!("known addresses");
        };
        assert!(all.contains(&(sh(3), false)) && all.contains(&(sh(7), false)));
    }

    #[test]
    fn a_branch_on_a_loaded_value_takes_both_arms() {
        let program = litmus::message_passing(
            litmus::MpSync::AcquireRelease,
            litmus::MpReader::Conditional,
        );
        let ts = ThreadState::start(&program, 1);
        let Future::Only(set) = accesses(&program, 1, &ts, true, false) else {
            panic!("known addresses");
        };
        assert!(set.contains(&(litmus::FLAG, false)));
        assert!(set.contains(&(litmus::DATA, false)), "{set:?}");
        let _ = (Access::Plain, Ty::U32);
    }
}
