//! The relational (successor-enumerating) semantics of one thread.
//!
//! Where [`crate::thread::step`] is a function, this module states the
//! semantics as inference rules, one function per rule, and enumerates every
//! derivation: each rule whose premises hold fires, silent rules chain, and a
//! visible rule ends a derivation with its action. Nothing here assumes that at
//! most one rule applies: if two did, both successors would come out, and the
//! agreement check in [`crate::checks::semantics`] would see two successors
//! where the step function gives one.
//!
//! The rules, written `state --label--> state'` (τ is silent):
//!
//! | rule | premise | effect |
//! |---|---|---|
//! | `seq` | top is `Seq(s1..sn)` | τ: replace it by `s1..sn` |
//! | `if-true` / `if-false` | top is `If(c, a, b)`, `c ≠ 0` / `c = 0` | τ: replace it by `a` / `b` |
//! | `for-enter` | top is `For(v, n, body)` | τ: replace it by `Iter(0)` |
//! | `for-iter` | top is `Iter(i)`, `i < n` | τ: `v := i`, then `body`, then `Iter(i+1)` |
//! | `for-exit` | top is `Iter(n)` | τ: pop it |
//! | `assign` | top is `x := e` | τ: `x := ⟦e⟧`, pop it |
//! | `load` | top is `x := ld [a]`, memory answers `v` | `ld a v`: `x := v`, pop it |
//! | `store` | top is `st [a] := e` | `st a ⟦e⟧`: pop it |
//! | `rmw` | top is `x := atom.op [a]`, memory answers `v` | `atom a v ⟦op⟧(v)`: `x := v`, pop it |
//! | `loop-enter` | top is `Loop(body, n)` | τ: replace it by `Looping(0)` |
//! | `loop-iter` | top is `Looping(i)`, `i < n` | τ: `body`, then `Looping(i+1)` |
//! | `break` | top is `break` | τ: pop up to and including the innermost `Looping` |
//!
//! No rule applies to `Looping(n)`: a thread at its loop's bound is cut.
//! | `barrier` | top is a barrier | `bar kind k`: count it, pop it |
//!
//! A step of the semantics is `τ*` followed by one visible label.

use crate::event::Action;
use crate::lang::{BarrierKind, Loc, Program, Stmt, Ty, Value};
use crate::thread::{Frame, ThreadState, rmw_value};

/// The outcome of firing one rule.
enum Fired {
    Silent(ThreadState),
    Visible(Action, ThreadState),
}

/// What the memory answers to a load; `None` when there is nothing to read.
pub type Read<'a> = &'a dyn Fn(Loc, Ty) -> Option<Value>;

type Rule = fn(&Program, u32, &ThreadState, Read<'_>) -> Option<Fired>;

/// The rules, by name.
const RULES: [(&str, Rule); 15] = [
    ("seq", rule_seq),
    ("if-true", rule_if_true),
    ("if-false", rule_if_false),
    ("for-enter", rule_for_enter),
    ("for-iter", rule_for_iter),
    ("for-exit", rule_for_exit),
    ("assign", rule_assign),
    ("load", rule_load),
    ("store", rule_store),
    ("rmw", rule_rmw),
    ("loop-enter", rule_loop_enter),
    ("loop-iter", rule_loop_iter),
    ("break", rule_break),
    ("barrier-shared", rule_barrier_shared),
    ("barrier-legacy", rule_barrier_legacy),
];

/// Every `(action, state')` with `ts --τ* action--> state'` for thread `tid`.
pub fn successors(
    program: &Program,
    tid: u32,
    ts: &ThreadState,
    read: Read<'_>,
) -> Vec<(Action, ThreadState)> {
    let mut out = Vec::new();
    derive(program, tid, ts, read, &mut out);
    out
}

fn derive(
    program: &Program,
    tid: u32,
    ts: &ThreadState,
    read: Read<'_>,
    out: &mut Vec<(Action, ThreadState)>,
) {
    for (_, rule) in RULES {
        match rule(program, tid, ts, read) {
            None => {}
            Some(Fired::Silent(next)) => derive(program, tid, &next, read, out),
            Some(Fired::Visible(action, next)) => out.push((action, next)),
        }
    }
}

/// The statement on top of the continuation, when the top is `Run`.
fn top_stmt<'p>(program: &'p Program, ts: &ThreadState) -> Option<&'p Stmt> {
    match ts.cont.last()? {
        Frame::Run(id) => Some(program.stmt(*id)),
        Frame::Iter { .. } | Frame::Loop { .. } => None,
    }
}

/// `ts` with its top frame replaced by `frames`, given in execution order.
fn replace_top(ts: &ThreadState, frames: &[Frame]) -> ThreadState {
    let mut next = ts.clone();
    next.cont.pop();
    next.cont.extend(frames.iter().rev());
    next
}

fn rule_seq(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::Seq(items) = top_stmt(program, ts)? else {
        return None;
    };
    let frames: Vec<Frame> = items.iter().map(|s| Frame::Run(*s)).collect();
    Some(Fired::Silent(replace_top(ts, &frames)))
}

fn rule_if_true(program: &Program, tid: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::If { cond, then, .. } = top_stmt(program, ts)? else {
        return None;
    };
    (cond.eval(tid, &ts.regs) != 0).then(|| Fired::Silent(replace_top(ts, &[Frame::Run(*then)])))
}

fn rule_if_false(program: &Program, tid: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::If { cond, els, .. } = top_stmt(program, ts)? else {
        return None;
    };
    (cond.eval(tid, &ts.regs) == 0).then(|| Fired::Silent(replace_top(ts, &[Frame::Run(*els)])))
}

fn rule_for_enter(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Frame::Run(id) = *ts.cont.last()? else {
        return None;
    };
    let Stmt::For { .. } = program.stmt(id) else {
        return None;
    };
    Some(Fired::Silent(replace_top(
        ts,
        &[Frame::Iter { stmt: id, next: 0 }],
    )))
}

fn rule_for_iter(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Frame::Iter { stmt, next } = *ts.cont.last()? else {
        return None;
    };
    let Stmt::For { var, count, body } = *program.stmt(stmt) else {
        return None;
    };
    if next >= count {
        return None;
    }
    let mut after = replace_top(
        ts,
        &[
            Frame::Run(body),
            Frame::Iter {
                stmt,
                next: next + 1,
            },
        ],
    );
    after.regs[usize::from(var.0)] = next;
    Some(Fired::Silent(after))
}

fn rule_for_exit(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Frame::Iter { stmt, next } = *ts.cont.last()? else {
        return None;
    };
    let Stmt::For { count, .. } = *program.stmt(stmt) else {
        return None;
    };
    (next == count).then(|| Fired::Silent(replace_top(ts, &[])))
}

fn rule_assign(program: &Program, tid: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::Assign { dst, val } = top_stmt(program, ts)? else {
        return None;
    };
    let mut after = replace_top(ts, &[]);
    after.regs[usize::from(dst.0)] = val.eval(tid, &ts.regs);
    Some(Fired::Silent(after))
}

fn rule_load(program: &Program, tid: u32, ts: &ThreadState, read: Read<'_>) -> Option<Fired> {
    let Stmt::Load {
        dst,
        space,
        addr,
        ty,
        access,
    } = top_stmt(program, ts)?
    else {
        return None;
    };
    let loc = program.loc_of(tid, *space, addr.eval(tid, &ts.regs));
    let val = read(loc, *ty)?;
    let mut after = replace_top(ts, &[]);
    after.regs[usize::from(dst.0)] = val;
    Some(Fired::Visible(
        Action::Load {
            loc,
            ty: *ty,
            val,
            access: *access,
        },
        after,
    ))
}

fn rule_store(program: &Program, tid: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::Store {
        space,
        addr,
        ty,
        val,
        access,
    } = top_stmt(program, ts)?
    else {
        return None;
    };
    let loc = program.loc_of(tid, *space, addr.eval(tid, &ts.regs));
    let val = val.eval(tid, &ts.regs);
    Some(Fired::Visible(
        Action::Store {
            loc,
            ty: *ty,
            val,
            access: *access,
        },
        replace_top(ts, &[]),
    ))
}

fn rule_rmw(program: &Program, tid: u32, ts: &ThreadState, read: Read<'_>) -> Option<Fired> {
    let Stmt::Rmw {
        dst,
        space,
        addr,
        ty,
        op,
        ordering,
    } = top_stmt(program, ts)?
    else {
        return None;
    };
    let loc = program.loc_of(tid, *space, addr.eval(tid, &ts.regs));
    let old = read(loc, *ty)?;
    let (new, ordering) = rmw_value(op, tid, &ts.regs).apply(old, *ordering);
    let mut after = replace_top(ts, &[]);
    after.regs[usize::from(dst.0)] = old;
    Some(Fired::Visible(
        Action::Rmw {
            loc,
            ty: *ty,
            old,
            new,
            ordering,
        },
        after,
    ))
}

fn rule_loop_enter(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Frame::Run(id) = *ts.cont.last()? else {
        return None;
    };
    let Stmt::Loop { .. } = program.stmt(id) else {
        return None;
    };
    Some(Fired::Silent(replace_top(
        ts,
        &[Frame::Loop { stmt: id, iter: 0 }],
    )))
}

fn rule_loop_iter(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Frame::Loop { stmt, iter } = *ts.cont.last()? else {
        return None;
    };
    let Stmt::Loop { body, bound } = *program.stmt(stmt) else {
        return None;
    };
    (iter < bound).then(|| {
        Fired::Silent(replace_top(
            ts,
            &[
                Frame::Run(body),
                Frame::Loop {
                    stmt,
                    iter: iter + 1,
                },
            ],
        ))
    })
}

fn rule_break(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::Break = top_stmt(program, ts)? else {
        return None;
    };
    let mut after = ts.clone();
    while let Some(frame) = after.cont.pop() {
        if matches!(frame, Frame::Loop { .. }) {
            break;
        }
    }
    Some(Fired::Silent(after))
}

fn rule_barrier_shared(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::Barrier(BarrierKind::Shared) = top_stmt(program, ts)? else {
        return None;
    };
    let mut after = replace_top(ts, &[]);
    after.shared_barriers += 1;
    let k = after.shared_barriers;
    Some(Fired::Visible(
        Action::Barrier {
            kind: BarrierKind::Shared,
            k,
        },
        after,
    ))
}

fn rule_barrier_legacy(program: &Program, _: u32, ts: &ThreadState, _: Read<'_>) -> Option<Fired> {
    let Stmt::Barrier(BarrierKind::LegacyGlobal) = top_stmt(program, ts)? else {
        return None;
    };
    let mut after = replace_top(ts, &[]);
    after.legacy_barriers += 1;
    let k = after.legacy_barriers;
    Some(Fired::Visible(
        Action::Barrier {
            kind: BarrierKind::LegacyGlobal,
            k,
        },
        after,
    ))
}

/// The names of the rules, in the order they are tried.
pub fn rule_names() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|(name, _)| *name)
}
