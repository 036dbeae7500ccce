//! The meaning of one thread's code: every path it can take, as a list of
//! events with their values.
//!
//! A load does not know which store it reads from until the whole execution
//! is chosen, so each load *guesses* its value from the location's value
//! domain ([`super::domain`]), and [`super::search`] later keeps only the
//! reads-from maps that justify every guess.
//!
//! Loops are bounded the way Dat3M bounds them: a backward jump may be taken
//! `bound - 1` times, and a path that would take it again is *cut*. Cut paths
//! are counted and left out, as non-terminating executions are in Dat3M.

use std::collections::{BTreeMap, BTreeSet};

use bitflags::bitflags;
use serde::Serialize;

use crate::budget::{Deadline, NoVerdict, Stage};
use crate::rel::{MAX_EVENTS, Set, bit};
use crate::syntax::{AtomOp, BinOp, Instr, Label, Loc, Operand, Order, Pos, Reg, Scope, Test};

bitflags! {
    /// What an event is, in the cat model's vocabulary.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
    pub struct Tags: u16 {
        /// A read (`R`).
        const R = 1;
        /// A write (`W`).
        const W = 1 << 1;
        /// A fence or a barrier (`F`).
        const F = 1 << 2;
        /// An initial write.
        const INIT = 1 << 3;
        /// `.relaxed` (`RLX`).
        const RLX = 1 << 4;
        /// `.acquire` (`ACQ`).
        const ACQ = 1 << 5;
        /// `.release` (`REL`).
        const REL = 1 << 6;
        /// `fence.acq_rel` (`ACQ_REL`).
        const ACQ_REL = 1 << 7;
        /// `fence.sc` (`SC`).
        const SC = 1 << 8;
        /// A control barrier.
        const BAR = 1 << 9;
        /// Half of a read-modify-write.
        const RMW = 1 << 10;
    }
}

/// A barrier's operands as evaluated on the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BarrierUse {
    /// The instance (the instruction's first operand).
    pub instance: i64,
    /// The named barrier's resource id; `None` for a plain barrier.
    pub id: Option<i64>,
    /// Whether the id was a constant in the text (a register id that is not
    /// reached cannot block anyone).
    pub id_is_constant: bool,
    /// The quorum, if given.
    pub quorum: Option<i64>,
    /// `bar.cta.arrive`.
    pub arrive: bool,
}

/// One event of a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    /// What it is.
    pub tags: Tags,
    /// The location, for reads and writes.
    pub loc: Option<Loc>,
    /// The value read or written.
    pub value: i64,
    /// The scope qualifier, for strong accesses, RMWs and fences.
    pub scope: Option<Scope>,
    /// The instruction it comes from (index into the thread's code).
    pub line: usize,
    /// The barrier's operands.
    pub barrier: Option<BarrierUse>,
}

/// One path through a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The events, in program order.
    pub events: Vec<Event>,
    /// Read-modify-write pairs: (read, write), as indices into `events`.
    pub rmw: Vec<(usize, usize)>,
    /// For each event, the reads it depends on (`addr | data | ctrl` in the
    /// cat model), as a set of indices into `events`.
    pub deps: Vec<Set>,
    /// Final register values.
    pub regs: BTreeMap<Reg, i64>,
}

/// Where each label of a thread's code is.
pub(crate) fn labels(code: &[crate::syntax::Line]) -> BTreeMap<Label, usize> {
    code.iter()
        .enumerate()
        .filter_map(|(i, l)| match l.instr {
            Instr::Mark(label) => Some((label, i)),
            _ => None,
        })
        .collect()
}

impl State {
    /// Thread `t` before its first instruction, with its initial registers.
    pub(crate) fn start(test: &Test, t: usize) -> State {
        let regs = test
            .registers
            .iter()
            .filter(|(thread, _, _)| *thread as usize == t)
            .map(|&(_, reg, value)| (reg, value))
            .collect();
        State {
            pc: 0,
            regs,
            taint: BTreeMap::new(),
            ctrl: 0,
            back_jumps: BTreeMap::new(),
            path: Path {
                events: Vec::new(),
                rmw: Vec::new(),
                deps: Vec::new(),
                regs: BTreeMap::new(),
            },
        }
    }
}

/// Every path of one thread.
#[derive(Clone, Debug, Default)]
pub struct ThreadPaths {
    /// Paths that end.
    pub complete: Vec<Path>,
    /// Paths cut by the loop bound, up to the cut. They are not executions,
    /// but their stores may still be read, so [`super::domain`] counts them.
    pub cut: Vec<Path>,
}

/// An error met while running a thread.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {message}")]
pub struct RunError {
    /// The instruction.
    pub pos: Pos,
    /// Why.
    pub message: String,
}

/// The most paths one thread may have.
const MAX_PATHS: usize = 1 << 16;

/// A thread's state part-way along a path.
#[derive(Clone)]
pub(crate) struct State {
    pub(crate) pc: usize,
    pub(crate) regs: BTreeMap<Reg, i64>,
    /// For each register, the reads its value depends on.
    taint: BTreeMap<Reg, Set>,
    /// The reads that a branch taken or not so far depended on.
    ctrl: Set,
    pub(crate) back_jumps: BTreeMap<usize, u32>,
    pub(crate) path: Path,
}

impl State {
    fn value(&self, op: Operand) -> i64 {
        match op {
            Operand::Const(v) => v,
            Operand::Reg(r) => self.regs.get(&r).copied().unwrap_or(0),
        }
    }

    fn taint_of(&self, op: Operand) -> Set {
        match op {
            Operand::Const(_) => 0,
            Operand::Reg(r) => self.taint.get(&r).copied().unwrap_or(0),
        }
    }

    fn push(&mut self, event: Event, deps: Set) -> Result<usize, String> {
        let i = self.path.events.len();
        if i + 1 >= MAX_EVENTS {
            return Err(format!(
                "unsupported: a path of more than {MAX_EVENTS} events"
            ));
        }
        self.path.events.push(event);
        self.path.deps.push(deps | self.ctrl);
        Ok(i)
    }
}

fn load_tags(order: Order) -> Tags {
    match order {
        Order::Acquire | Order::AcqRel => Tags::ACQ,
        Order::Relaxed | Order::Release => Tags::RLX,
        Order::Weak | Order::Sc => Tags::empty(),
    }
}

fn store_tags(order: Order) -> Tags {
    match order {
        Order::Release | Order::AcqRel => Tags::REL,
        Order::Relaxed | Order::Acquire => Tags::RLX,
        Order::Weak | Order::Sc => Tags::empty(),
    }
}

fn apply(op: BinOp, a: i64, b: i64) -> Result<i64, String> {
    Ok(match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Div => {
            if b == 0 {
                return Err("division by zero".to_string());
            }
            // Dat3M's litmus runs encode integers as SMT integers, whose
            // division is Euclidean.
            a.wrapping_div_euclid(b)
        }
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
    })
}

/// Every path of thread `t` when each load may read any value of its domain.
///
/// # Errors
/// [`NoVerdict::Error`] with the [`RunError`] when a path divides by zero or
/// has too many events, or the thread has too many paths;
/// [`NoVerdict::Timeout`] when `deadline` passes first (up to
/// [`MAX_PATHS`] paths of up to [`MAX_EVENTS`] events each is a lot of
/// cloned states).
pub fn thread_paths(
    test: &Test,
    t: usize,
    domains: &[BTreeSet<i64>],
    bound: u32,
    deadline: &Deadline,
) -> Result<ThreadPaths, NoVerdict> {
    let thread = &test.threads[t];
    let code = &thread.code;
    let labels = labels(code);
    let start = State::start(test, t);
    let mut out = ThreadPaths::default();
    let mut stack = vec![start];
    while let Some(mut s) = stack.pop() {
        deadline.tick(Stage::Paths)?;
        let Some(line) = code.get(s.pc) else {
            s.path.regs = s.regs;
            out.complete.push(s.path);
            if out.complete.len() + out.cut.len() > MAX_PATHS {
                return Err(NoVerdict::from(RunError {
                    pos: thread
                        .code
                        .first()
                        .map_or(Pos { line: 1, col: 1 }, |l| l.pos),
                    message: format!(
                        "unsupported: thread P{} has more than {MAX_PATHS} paths",
                        thread.id
                    ),
                }));
            }
            continue;
        };
        let at = s.pc;
        let fail = |message: String| RunError {
            pos: line.pos,
            message: format!("`{}`: {message}", line.text),
        };
        match line.instr.read_location() {
            // A read guesses each value of its location's domain.
            Some(loc) => {
                for &v in domains[loc.0 as usize].iter().rev() {
                    let mut next = s.clone();
                    match exec(&mut next, &line.instr, at, &labels, bound, Some(v)).map_err(fail)? {
                        Flow::Next => stack.push(next),
                        Flow::Cut => unreachable!("a read never jumps"),
                    }
                }
            }
            None => match exec(&mut s, &line.instr, at, &labels, bound, None).map_err(fail)? {
                Flow::Next => stack.push(s),
                Flow::Cut => {
                    s.path.regs = s.regs;
                    out.cut.push(s.path);
                }
            },
        }
    }
    // Depth-first order pops the last guess first; put paths in guess order.
    out.complete.reverse();
    Ok(out)
}

/// What [`exec`] did to the thread's control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// The thread goes on at its new `pc`.
    Next,
    /// A backward jump would exceed the loop bound: the path is cut.
    Cut,
}

impl Instr {
    /// The location a read of this instruction reads (`ld`, `atom`, `red`):
    /// the instructions whose meaning depends on a value from memory.
    pub(crate) fn read_location(&self) -> Option<Loc> {
        match *self {
            Instr::Load { loc, .. } | Instr::Atom { loc, .. } | Instr::Red { loc, .. } => Some(loc),
            _ => None,
        }
    }
}

/// Runs one instruction at `at`: its events, its registers, its jump. A read
/// ([`Instr::read_location`]) takes `read` as the value memory answered,
/// and must be given one; other instructions ignore it. Shared by the path
/// enumeration (which guesses `read`) and [`super::explore`] (which takes
/// it from a chosen write).
pub(crate) fn exec(
    s: &mut State,
    instr: &Instr,
    at: usize,
    labels: &BTreeMap<Label, usize>,
    bound: u32,
    read: Option<i64>,
) -> Result<Flow, String> {
    s.pc += 1;
    let old = || read.ok_or_else(|| "a read without a value".to_string());
    match *instr {
        Instr::Load {
            order,
            scope,
            dst,
            loc,
        } => {
            let v = old()?;
            let e = s.push(
                Event {
                    tags: Tags::R | load_tags(order),
                    loc: Some(loc),
                    value: v,
                    scope,
                    line: at,
                    barrier: None,
                },
                0,
            )?;
            s.regs.insert(dst, v);
            s.taint.insert(dst, bit(e));
        }
        Instr::Store {
            order,
            scope,
            loc,
            value,
        } => {
            let deps = s.taint_of(value);
            let v = s.value(value);
            s.push(
                Event {
                    tags: Tags::W | store_tags(order),
                    loc: Some(loc),
                    value: v,
                    scope,
                    line: at,
                    barrier: None,
                },
                deps,
            )?;
        }
        Instr::Move { dst, value } => {
            let (v, taint) = (s.value(value), s.taint_of(value));
            s.regs.insert(dst, v);
            s.taint.insert(dst, taint);
        }
        Instr::Local { op, dst, lhs, rhs } => {
            let v = apply(op, s.value(lhs), s.value(rhs))?;
            let taint = s.taint_of(lhs) | s.taint_of(rhs);
            s.regs.insert(dst, v);
            s.taint.insert(dst, taint);
        }
        Instr::Atom {
            order,
            scope,
            op,
            dst,
            loc,
            value,
        } => {
            let old = old()?;
            // `cas` loads straight into `dst` (Dat3M's `visitPtxAtomCAS`), so
            // operands naming `dst` see the old value; the other forms load
            // into a fresh register and set `dst` afterwards.
            if matches!(op, AtomOp::Cas { .. }) {
                s.regs.insert(dst, old);
                s.taint.insert(dst, bit(s.path.events.len()));
            }
            let (new, operand_taint, reads_old) = match op {
                AtomOp::Bin(b) => (apply(b, old, s.value(value))?, s.taint_of(value), true),
                // The stored value is the operand alone: no dependency on the read.
                AtomOp::Exch => (s.value(value), s.taint_of(value), false),
                AtomOp::Cas { expected } => (
                    if old == s.value(expected) {
                        s.value(value)
                    } else {
                        old
                    },
                    s.taint_of(expected) | s.taint_of(value),
                    true,
                ),
            };
            let written = Written {
                old,
                new,
                operand_taint,
                reads_old,
            };
            rmw(s, order, scope, loc, written, at)?;
            let read = s.path.rmw.last().map_or(0, |&(r, _)| r);
            s.regs.insert(dst, old);
            s.taint.insert(dst, bit(read));
        }
        Instr::Red {
            order,
            scope,
            op,
            loc,
            value,
        } => {
            let old = old()?;
            let written = Written {
                old,
                new: apply(op, old, s.value(value))?,
                operand_taint: s.taint_of(value),
                reads_old: true,
            };
            rmw(s, order, scope, loc, written, at)?;
        }
        Instr::Fence { order, scope } => {
            let tags = Tags::F
                | if order == Order::Sc {
                    Tags::SC
                } else {
                    Tags::ACQ_REL
                };
            s.push(
                Event {
                    tags,
                    loc: None,
                    value: 0,
                    scope: Some(scope),
                    line: at,
                    barrier: None,
                },
                0,
            )?;
        }
        Instr::Barrier {
            arrive,
            instance,
            id,
            quorum,
        } => {
            let use_ = BarrierUse {
                instance,
                id: id.map(|op| s.value(op)),
                id_is_constant: matches!(id, Some(Operand::Const(_))),
                quorum: quorum.map(|op| s.value(op)),
                arrive,
            };
            s.push(
                Event {
                    tags: Tags::F | Tags::BAR,
                    loc: None,
                    value: 0,
                    scope: Some(Scope::Cta),
                    line: at,
                    barrier: Some(use_),
                },
                0,
            )?;
        }
        Instr::Branch {
            cmp,
            lhs,
            rhs,
            target,
        } => {
            s.ctrl |= s.taint_of(lhs) | s.taint_of(rhs);
            let to = *labels
                .get(&target)
                .ok_or_else(|| format!("no label {target}"))?;
            if cmp.holds(s.value(lhs), s.value(rhs)) && !jump(s, at, to, bound) {
                return Ok(Flow::Cut);
            }
        }
        Instr::Goto(target) => {
            let to = *labels
                .get(&target)
                .ok_or_else(|| format!("no label {target}"))?;
            if !jump(s, at, to, bound) {
                return Ok(Flow::Cut);
            }
        }
        Instr::Mark(_) => {}
    }
    Ok(Flow::Next)
}

/// Jumps to `to`; false when a backward jump has used up the loop bound.
fn jump(s: &mut State, from: usize, to: usize, bound: u32) -> bool {
    if to <= from {
        let taken = s.back_jumps.entry(from).or_insert(0);
        if *taken + 1 >= bound {
            return false;
        }
        *taken += 1;
    }
    s.pc = to;
    true
}

/// What a read-modify-write reads and writes.
struct Written {
    old: i64,
    new: i64,
    /// The reads the operands depend on.
    operand_taint: Set,
    /// Whether the stored value is computed from the value read.
    reads_old: bool,
}

fn rmw(
    s: &mut State,
    order: Order,
    scope: Scope,
    loc: Loc,
    written: Written,
    line: usize,
) -> Result<(), String> {
    let read = s.push(
        Event {
            tags: Tags::R | Tags::RMW | load_tags(order),
            loc: Some(loc),
            value: written.old,
            scope: Some(scope),
            line,
            barrier: None,
        },
        0,
    )?;
    let on_read = if written.reads_old { bit(read) } else { 0 };
    let write = s.push(
        Event {
            tags: Tags::W | Tags::RMW | store_tags(order),
            loc: Some(loc),
            value: written.new,
            scope: Some(scope),
            line,
            barrier: None,
        },
        on_read | written.operand_taint,
    )?;
    s.path.rmw.push((read, write));
    Ok(())
}
