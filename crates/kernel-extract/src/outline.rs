//! Typed shared-memory action outlines, and their comparison.
//!
//! An outline keeps what the reduction theorem is about, and nothing else:
//! shared-memory loads and stores with their type tags, shared barriers, and
//! the loops and conditionals around them. Assignments, global actions and
//! empty conditionals are erased. Two outlines are compared twice:
//! - *statically*, on the statement tree: barrier placement, the loop and its
//!   trip count, and the actions in each round;
//! - *dynamically*, on each thread's run under the canonical schedule: the
//!   per-thread sequence of shared actions with their addresses and barriers.
//!
//! A kernel may do more than the verified program after it (the reduction
//! kernel reads the sum back and writes it out): such an *epilogue* is
//! allowed when it holds no barrier and no shared store, so it cannot change
//! what the verified part computes. It is reported, never ignored.

use std::fmt;

use memory_model::event::{Action, Who};
use memory_model::lang::{BarrierKind, Program, Space, Stmt, StmtId, Ty, Value};
use memory_model::machine;

/// One item of a structural outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A shared load.
    Ld(Ty),
    /// A shared store.
    St(Ty),
    /// A shared barrier.
    Bar,
    /// A counted loop and its body.
    Loop(u32, Vec<Item>),
    /// A conditional: its two arms.
    If(Vec<Item>, Vec<Item>),
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, items: &[Item]| -> fmt::Result {
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{it}")?;
            }
            Ok(())
        };
        match self {
            Item::Ld(t) => write!(f, "ld.{}", ty_name(*t)),
            Item::St(t) => write!(f, "st.{}", ty_name(*t)),
            Item::Bar => f.write_str("bar"),
            Item::Loop(n, body) => {
                write!(f, "for{n}{{ ")?;
                list(f, body)?;
                f.write_str(" }")
            }
            Item::If(a, b) => {
                f.write_str("if{ ")?;
                list(f, a)?;
                if !b.is_empty() {
                    f.write_str(" } else { ")?;
                    list(f, b)?;
                }
                f.write_str(" }")
            }
        }
    }
}

fn ty_name(t: Ty) -> &'static str {
    match t {
        Ty::U32 => "u32",
        Ty::F32 => "f32",
    }
}

/// Renders an outline on one line.
pub fn render(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The structural outline of thread 0's body.
pub fn structural(program: &Program) -> Vec<Item> {
    let mut out = Vec::new();
    if let Some(&body) = program.bodies.first() {
        walk(program, body, &mut out);
    }
    out
}

fn walk(p: &Program, id: StmtId, out: &mut Vec<Item>) {
    match p.stmt(id) {
        Stmt::Load {
            space: Space::Shared,
            ty,
            ..
        } => out.push(Item::Ld(*ty)),
        Stmt::Store {
            space: Space::Shared,
            ty,
            ..
        } => out.push(Item::St(*ty)),
        Stmt::Barrier(BarrierKind::Shared) => out.push(Item::Bar),
        Stmt::Seq(items) => items.iter().for_each(|i| walk(p, *i, out)),
        Stmt::If { then, els, .. } => {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            walk(p, *then, &mut a);
            walk(p, *els, &mut b);
            if !a.is_empty() || !b.is_empty() {
                out.push(Item::If(a, b));
            }
        }
        Stmt::For { count: n, body, .. } | Stmt::Loop { bound: n, body } => {
            let mut inner = Vec::new();
            walk(p, *body, &mut inner);
            if !inner.is_empty() {
                out.push(Item::Loop(*n, inner));
            }
        }
        // The outline is of loads, stores and barriers; a kernel with RMWs
        // or breaks is not a reduction's outline in any case.
        Stmt::Load { .. }
        | Stmt::Store { .. }
        | Stmt::Rmw { .. }
        | Stmt::Break
        | Stmt::Assign { .. }
        | Stmt::Barrier(_) => {}
    }
}

/// One shared action of a thread's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// A load of `sh[addr]`.
    Ld(Ty, Value),
    /// A store to `sh[addr]`.
    St(Ty, Value),
    /// The thread's `k`-th shared barrier.
    Bar(u32),
}

impl fmt::Display for Act {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Act::Ld(t, a) => write!(f, "ld.{} sh[{a}]", ty_name(*t)),
            Act::St(t, a) => write!(f, "st.{} sh[{a}]", ty_name(*t)),
            Act::Bar(k) => write!(f, "bar#{k}"),
        }
    }
}

/// Each thread's shared actions under the canonical schedule; `None` when the
/// run deadlocks or a load finds nothing to read.
pub fn per_thread(program: &Program) -> Option<Vec<Vec<Act>>> {
    let run = machine::run_canonical(program)?;
    let mut out = vec![Vec::new(); program.threads() as usize];
    for e in &run.exec.events {
        let Who::Thread(t) = e.who else { continue };
        let act = match e.action {
            Action::Load { loc, ty, .. } if loc.space == Space::Shared => Act::Ld(ty, loc.addr),
            Action::Store { loc, ty, .. } if loc.space == Space::Shared => Act::St(ty, loc.addr),
            Action::Barrier {
                kind: BarrierKind::Shared,
                k,
            } => Act::Bar(k),
            _ => continue,
        };
        out[t as usize].push(act);
    }
    Some(out)
}

/// The result of comparing an extracted program with a verified one.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Every difference found; empty when the outlines agree.
    pub problems: Vec<String>,
    /// The allowed extra work after the verified part, per thread, rendered.
    pub epilogue: Vec<String>,
    /// The two structural outlines, rendered (verified, extracted).
    pub structural: (String, String),
}

/// Compares the outline of `extracted` with that of `verified`.
pub fn compare(verified: &Program, extracted: &Program) -> Comparison {
    let mut c = Comparison::default();
    let (v, e) = (structural(verified), structural(extracted));
    c.structural = (render(&v), render(&e));
    if e.len() < v.len() || e[..v.len()] != v[..] {
        c.problems.push(format!(
            "structural outlines differ: verified `{}`, extracted `{}`",
            c.structural.0, c.structural.1
        ));
    } else if !read_only(&e[v.len()..]) {
        c.problems.push(format!(
            "the extracted epilogue `{}` has a barrier or a shared store",
            render(&e[v.len()..])
        ));
    }
    if verified.threads() != extracted.threads() {
        c.problems.push(format!(
            "thread counts differ: verified {}, extracted {}",
            verified.threads(),
            extracted.threads()
        ));
        return c;
    }
    let (Some(vr), Some(er)) = (per_thread(verified), per_thread(extracted)) else {
        c.problems
            .push("a canonical run deadlocks or reads nothing".into());
        return c;
    };
    for (t, (va, ea)) in vr.iter().zip(&er).enumerate() {
        if ea.len() < va.len() || ea[..va.len()] != va[..] {
            c.problems.push(format!(
                "T{t}: verified [{}], extracted [{}]",
                join(va),
                join(ea)
            ));
            continue;
        }
        let rest = &ea[va.len()..];
        if rest.iter().any(|a| !matches!(a, Act::Ld(..))) {
            c.problems.push(format!(
                "T{t}: epilogue [{}] has a barrier or a shared store",
                join(rest)
            ));
        } else if !rest.is_empty() {
            c.epilogue.push(format!("T{t}: {}", join(rest)));
        }
    }
    c
}

/// The reduction's rounds as the issue states them, checked on one program:
/// every thread passes `log2 N + 1` barriers; before the first it stores
/// `sh[tid]`; in round `r` (stride `N >> r`) a thread with `tid < stride`
/// loads `sh[tid]`, loads `sh[tid + stride]` and stores `sh[tid]`, and the
/// others do nothing. Work after the last barrier is the epilogue. Returns
/// the differences.
pub fn reduction_rounds(program: &Program) -> Vec<String> {
    let n = program.threads();
    let Some(runs) = per_thread(program) else {
        return vec!["the canonical run deadlocks or reads nothing".into()];
    };
    let rounds = n.trailing_zeros();
    let mut problems = Vec::new();
    for (t, acts) in runs.iter().enumerate() {
        let t = t as Value;
        let mut segments: Vec<Vec<Act>> = vec![Vec::new()];
        for a in acts {
            match a {
                Act::Bar(_) => segments.push(Vec::new()),
                other => segments.last_mut().into_iter().for_each(|s| s.push(*other)),
            }
        }
        if segments.len() != rounds as usize + 2 {
            problems.push(format!(
                "T{t}: {} barriers, expected {}",
                segments.len() - 1,
                rounds + 1
            ));
            continue;
        }
        let mut expect = vec![vec![Act::St(Ty::U32, t)]];
        for r in 1..=rounds {
            let stride = n >> r;
            expect.push(if t < stride {
                vec![
                    Act::Ld(Ty::U32, t),
                    Act::Ld(Ty::U32, t + stride),
                    Act::St(Ty::U32, t),
                ]
            } else {
                Vec::new()
            });
        }
        for (r, (got, want)) in segments.iter().zip(&expect).enumerate() {
            if got != want {
                problems.push(format!(
                    "T{t} round {r}: [{}], expected [{}]",
                    join(got),
                    join(want)
                ));
            }
        }
    }
    problems
}

fn read_only(items: &[Item]) -> bool {
    items.iter().all(|i| match i {
        Item::Ld(_) => true,
        Item::St(_) | Item::Bar => false,
        Item::Loop(_, b) => read_only(b),
        Item::If(a, b) => read_only(a) && read_only(b),
    })
}

fn join(acts: &[Act]) -> String {
    acts.iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
