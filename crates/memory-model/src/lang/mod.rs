//! The kernel language: a small, Rust-like language for GPU kernels.
//!
//! A [`Program`] is a fixed number of threads, each running a body of
//! [`Stmt`]s held in one arena and named by [`StmtId`], plus the explicit
//! zero-initialization stores that the launch performs before any thread runs.
//!
//! The language has:
//! - loads and stores, plain or atomic with an ordering tag ([`Access`]);
//! - two distinct barriers ([`BarrierKind`]): a legacy global one and a
//!   CTA-shared one;
//! - structured `if`, sequences, thread ids, comparisons, shifts and wrapping
//!   (bit-pattern) addition;
//! - counted loops with a compile-time bound ([`Stmt::For`]), unfolded one
//!   iteration at a time by the semantics.
//!
//! Values are 32-bit patterns. Types ([`Ty`]) are tags on memory actions only:
//! a load reads a store of its own type, and `f32` values are bit patterns, never
//! IEEE numbers (see the crate README).
//!
//! # Invariants
//! [`Program::verify`] checks, before any semantics runs, that every [`StmtId`]
//! is in bounds and refers *backwards* (a statement's children were pushed
//! before it), that every register is declared, and that ordering tags fit
//! their action (acquire on loads, release on stores). Later code indexes
//! freely.

use std::collections::BTreeMap;
use std::fmt;

mod builder;
mod print;

pub use builder::Builder;
pub use print::{barrier_name, mnemonic, ordering_name};

use serde::Serialize;

/// A value: a 32-bit pattern.
pub type Value = u32;

/// The memory a location lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Space {
    /// Global memory (`.global`), seen by every thread.
    Global,
    /// CTA-shared memory (`.shared`), one per thread block.
    Shared,
}

/// The type tag of a memory action. Values are bit patterns either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Ty {
    /// A 32-bit unsigned integer.
    U32,
    /// A 32-bit float, as its bit pattern: arithmetic on it is *not* IEEE.
    F32,
}

/// The ordering tag of an atomic access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Ordering {
    /// No ordering beyond atomicity.
    Relaxed,
    /// Acquire: valid on loads only.
    Acquire,
    /// Release: valid on stores only.
    Release,
    /// Acquire and release: valid on read-modify-writes only.
    AcqRel,
}

/// How a load or store accesses memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Access {
    /// A plain (non-atomic) access.
    Plain,
    /// An atomic access with an ordering tag.
    Atomic(Ordering),
}

impl Access {
    /// A relaxed atomic access.
    pub const RELAXED: Access = Access::Atomic(Ordering::Relaxed);
    /// An acquire load.
    pub const ACQUIRE: Access = Access::Atomic(Ordering::Acquire);
    /// A release store.
    pub const RELEASE: Access = Access::Atomic(Ordering::Release);
}

/// The two barriers of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum BarrierKind {
    /// The legacy global barrier. It is kept as syntax and as an event, but it
    /// neither blocks nor synchronizes: the event layer translates it to an
    /// inert event.
    LegacyGlobal,
    /// The CTA-shared barrier (`bar.sync`): it blocks until every thread of the
    /// CTA has arrived at the same (count-matched) barrier, and it orders.
    Shared,
}

/// A register of a thread. Every thread has its own copy of every register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Reg(pub u16);

/// A memory location: a space and an address (a word index) in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Loc {
    /// The memory.
    pub space: Space,
    /// The word index inside it.
    pub addr: Value,
}

/// A binary operator. Comparisons give 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// Wrapping addition of bit patterns.
    Add,
    /// Wrapping subtraction of bit patterns.
    Sub,
    /// Left shift; a shift by 32 or more gives 0.
    Shl,
    /// Logical right shift; a shift by 32 or more gives 0.
    Shr,
    /// Wrapping multiplication.
    Mul,
    /// Unsigned division; by 0 gives 0 (extraction never divides by a
    /// value that can be 0).
    Div,
    /// Unsigned remainder; by 0 gives 0.
    Rem,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Unsigned `<`.
    Lt,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
}

impl BinOp {
    /// Applies the operator.
    pub fn apply(self, a: Value, b: Value) -> Value {
        match self {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Shl => a.checked_shl(b).unwrap_or(0),
            BinOp::Shr => a.checked_shr(b).unwrap_or(0),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => a.checked_div(b).unwrap_or(0),
            BinOp::Rem => a.checked_rem(b).unwrap_or(0),
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Lt => Value::from(a < b),
            BinOp::Eq => Value::from(a == b),
            BinOp::Ne => Value::from(a != b),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Lt => "<",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
        }
    }
}

/// A pure expression over registers, constants and the thread id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// A register's value.
    Reg(Reg),
    /// The thread's id (`threadIdx.x`).
    Tid,
    /// A binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Evaluates the expression in a thread with id `tid` and registers `regs`.
    ///
    /// # Panics
    /// If a register is out of range; [`Program::verify`] rules that out.
    pub fn eval(&self, tid: u32, regs: &[Value]) -> Value {
        match self {
            Expr::Const(v) => *v,
            Expr::Reg(r) => regs[usize::from(r.0)],
            Expr::Tid => tid,
            Expr::Bin(op, a, b) => op.apply(a.eval(tid, regs), b.eval(tid, regs)),
        }
    }

    /// `self op other`.
    pub fn bin(self, op: BinOp, other: impl Into<Expr>) -> Expr {
        Expr::Bin(op, Box::new(self), Box::new(other.into()))
    }
    /// `self < other` (0 or 1).
    pub fn less_than(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Lt, other)
    }
    /// `self == other` (0 or 1).
    pub fn equals(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Eq, other)
    }

    fn regs(&self, out: &mut Vec<Reg>) {
        match self {
            Expr::Reg(r) => out.push(*r),
            Expr::Bin(_, a, b) => {
                a.regs(out);
                b.regs(out);
            }
            Expr::Const(_) | Expr::Tid => {}
        }
    }
}

/// `a + b`: wrapping addition of bit patterns.
impl<T: Into<Expr>> std::ops::Add<T> for Expr {
    type Output = Expr;
    fn add(self, other: T) -> Expr {
        self.bin(BinOp::Add, other)
    }
}

/// `a << b`.
impl<T: Into<Expr>> std::ops::Shl<T> for Expr {
    type Output = Expr;
    fn shl(self, other: T) -> Expr {
        self.bin(BinOp::Shl, other)
    }
}

/// `a >> b`.
impl<T: Into<Expr>> std::ops::Shr<T> for Expr {
    type Output = Expr;
    fn shr(self, other: T) -> Expr {
        self.bin(BinOp::Shr, other)
    }
}

impl From<Value> for Expr {
    fn from(v: Value) -> Expr {
        Expr::Const(v)
    }
}

impl From<Reg> for Expr {
    fn from(r: Reg) -> Expr {
        Expr::Reg(r)
    }
}

/// What a read-modify-write stores, given the old value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// `old + e` (wrapping): `fetch_add`.
    Add(Expr),
    /// `e`: `swap`.
    Exchange(Expr),
    /// `new` when `old == expected`, and no store otherwise:
    /// `compare_exchange`. A failed exchange is an atomic read with the
    /// failure ordering.
    Cas {
        /// The value compared with the old one.
        expected: Expr,
        /// The value stored on success.
        new: Expr,
        /// The ordering of a failed exchange (a read: relaxed or acquire).
        failure: Ordering,
    },
}

impl RmwOp {
    fn regs(&self, out: &mut Vec<Reg>) {
        match self {
            RmwOp::Add(e) | RmwOp::Exchange(e) => e.regs(out),
            RmwOp::Cas { expected, new, .. } => {
                expected.regs(out);
                new.regs(out);
            }
        }
    }
}

/// The index of a statement in its program's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StmtId(pub u32);

impl StmtId {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for StmtId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", self.0)
    }
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// `dst := val`, a local computation.
    Assign {
        /// The register written.
        dst: Reg,
        /// The value.
        val: Expr,
    },
    /// `dst := ld.space.ty [addr]`.
    Load {
        /// The register written with the value read.
        dst: Reg,
        /// The memory read.
        space: Space,
        /// The address.
        addr: Expr,
        /// The type tag.
        ty: Ty,
        /// Plain or atomic with an ordering.
        access: Access,
    },
    /// `st.space.ty [addr] := val`.
    Store {
        /// The memory written.
        space: Space,
        /// The address.
        addr: Expr,
        /// The type tag.
        ty: Ty,
        /// The value stored.
        val: Expr,
        /// Plain or atomic with an ordering.
        access: Access,
    },
    /// A barrier.
    Barrier(BarrierKind),
    /// The statements in order.
    Seq(Vec<StmtId>),
    /// `if cond != 0 { then } else { els }`.
    If {
        /// The condition.
        cond: Expr,
        /// Taken when the condition is not 0.
        then: StmtId,
        /// Taken when the condition is 0.
        els: StmtId,
    },
    /// `dst := atom.op.ordering [addr]`: an atomic read-modify-write that
    /// returns the old value.
    Rmw {
        /// The register written with the old value.
        dst: Reg,
        /// The memory.
        space: Space,
        /// The address.
        addr: Expr,
        /// The type tag.
        ty: Ty,
        /// What is stored.
        op: RmwOp,
        /// The ordering (of a successful exchange, for `Cas`).
        ordering: Ordering,
    },
    /// `loop { body }`, left by [`Stmt::Break`]. A thread that would start
    /// iteration `bound + 1` is cut: it never steps again, so its run does
    /// not complete (a spin loop bounded as Dat3M bounds one).
    Loop {
        /// The body.
        body: StmtId,
        /// The most iterations a completed run may take.
        bound: u32,
    },
    /// Leaves the innermost enclosing [`Stmt::Loop`].
    Break,
    /// `for var in 0..count { body }`, with a compile-time bound.
    For {
        /// The counter register, set to the iteration number before each
        /// iteration.
        var: Reg,
        /// The number of iterations.
        count: u32,
        /// The body.
        body: StmtId,
    },
}

/// A store that the launch performs before any thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct InitStore {
    /// The location initialized.
    pub loc: Loc,
    /// Its type tag.
    pub ty: Ty,
    /// The value (zero in every program of the corpus).
    pub val: Value,
}

/// A kernel: threads, their bodies, and the launch's initialization stores.
#[derive(Clone, Debug)]
pub struct Program {
    /// A short name, used in reports.
    pub name: String,
    /// The statement arena.
    pub stmts: Vec<Stmt>,
    /// The body of each thread (`bodies.len()` is the thread count). An SPMD
    /// kernel repeats one body and tells threads apart with [`Expr::Tid`].
    pub bodies: Vec<StmtId>,
    /// Register names, indexed by [`Reg`].
    pub regs: Vec<String>,
    /// The zero-initialization stores, performed in order before any thread.
    pub init: Vec<InitStore>,
    /// Names of global addresses, for printing (`data`, `flag`).
    pub names: BTreeMap<Value, String>,
    /// Threads per CTA: threads are numbered CTA by CTA, each CTA has its own
    /// shared memory and its own barriers. [`Expr::Tid`] is the thread's
    /// number in the launch.
    pub cta_size: u32,
}

/// How far apart two CTAs' shared memories are in the machines' address
/// space: CTA `c`'s `sh[a]` is location `c * SHARED_STRIDE + a`.
pub const SHARED_STRIDE: Value = 1 << 20;

/// What [`Program::verify`] rejects.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A statement names a child that is not strictly before it in the arena.
    #[error("{stmt}: child {child} is out of bounds or does not refer backwards")]
    BadChild {
        /// The parent.
        stmt: StmtId,
        /// The child.
        child: StmtId,
    },
    /// A thread body is out of bounds.
    #[error("thread {thread}: body {body} is out of bounds")]
    BadBody {
        /// The thread.
        thread: u32,
        /// Its body.
        body: StmtId,
    },
    /// A register is not declared.
    #[error("{stmt}: register r{} is not declared", reg.0)]
    BadReg {
        /// The statement.
        stmt: StmtId,
        /// The register.
        reg: Reg,
    },
    /// A `break` outside every loop.
    #[error("{stmt}: break outside a loop")]
    BreakOutsideLoop {
        /// The statement.
        stmt: StmtId,
    },
    /// An ordering tag that does not fit the action (acquire store, release load).
    #[error("{stmt}: {ordering:?} is not valid on a {action}")]
    BadOrdering {
        /// The statement.
        stmt: StmtId,
        /// The tag.
        ordering: Ordering,
        /// `load` or `store`.
        action: &'static str,
    },
}

/// A program that failed [`Program::verify`]: its name and every error
/// the verifier found (it collects them all, not only the first).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("program {name} is ill-formed: {}", list(errors))]
pub struct IllFormed {
    /// The program's name.
    pub name: String,
    /// What the verifier rejected.
    pub errors: Vec<VerifyError>,
}

fn list(errors: &[VerifyError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl Program {
    /// The number of threads.
    pub fn threads(&self) -> u32 {
        self.bodies.len() as u32
    }

    /// The statement `id`.
    pub fn stmt(&self, id: StmtId) -> &Stmt {
        &self.stmts[id.index()]
    }

    /// The CTA of thread `tid`.
    pub fn cta_of(&self, tid: u32) -> u32 {
        tid / self.cta_size.max(1)
    }

    /// The location thread `tid` reaches at `addr` of `space`: shared memory
    /// is its CTA's own.
    pub fn loc_of(&self, tid: u32, space: Space, addr: Value) -> Loc {
        let addr = match space {
            Space::Global => addr,
            Space::Shared => addr.wrapping_add(self.cta_of(tid).wrapping_mul(SHARED_STRIDE)),
        };
        Loc { space, addr }
    }

    /// Whether any statement is a CTA-shared barrier. Such programs are scheduled
    /// round by round; the others use the plain scheduler.
    pub fn has_shared_barriers(&self) -> bool {
        self.stmts
            .iter()
            .any(|s| matches!(s, Stmt::Barrier(BarrierKind::Shared)))
    }

    /// Checks the invariants listed in the module documentation, collecting
    /// every error.
    ///
    /// # Errors
    /// Every violated invariant, each tied to its statement.
    pub fn verify(&self) -> Result<(), Vec<VerifyError>> {
        let mut errors = Vec::new();
        for (i, stmt) in self.stmts.iter().enumerate() {
            let id = StmtId(i as u32);
            let mut children = Vec::new();
            let mut regs = Vec::new();
            match stmt {
                Stmt::Assign { dst, val } => {
                    regs.push(*dst);
                    val.regs(&mut regs);
                }
                Stmt::Load {
                    dst, addr, access, ..
                } => {
                    regs.push(*dst);
                    addr.regs(&mut regs);
                    if let Access::Atomic(o @ (Ordering::Release | Ordering::AcqRel)) = *access {
                        errors.push(VerifyError::BadOrdering {
                            stmt: id,
                            ordering: o,
                            action: "load",
                        });
                    }
                }
                Stmt::Store {
                    addr, val, access, ..
                } => {
                    addr.regs(&mut regs);
                    val.regs(&mut regs);
                    if let Access::Atomic(o @ (Ordering::Acquire | Ordering::AcqRel)) = *access {
                        errors.push(VerifyError::BadOrdering {
                            stmt: id,
                            ordering: o,
                            action: "store",
                        });
                    }
                }
                Stmt::Rmw {
                    dst,
                    addr,
                    op,
                    ordering,
                    ..
                } => {
                    regs.push(*dst);
                    addr.regs(&mut regs);
                    op.regs(&mut regs);
                    if let RmwOp::Cas { failure, .. } = op
                        && matches!(failure, Ordering::Release | Ordering::AcqRel)
                    {
                        errors.push(VerifyError::BadOrdering {
                            stmt: id,
                            ordering: *failure,
                            action: "failed compare-exchange",
                        });
                    }
                    let _ = ordering;
                }
                Stmt::Loop { body, .. } => children.push(*body),
                Stmt::Barrier(_) | Stmt::Break => {}
                Stmt::Seq(items) => children.extend(items.iter().copied()),
                Stmt::If { cond, then, els } => {
                    cond.regs(&mut regs);
                    children.extend([*then, *els]);
                }
                Stmt::For { var, body, .. } => {
                    regs.push(*var);
                    children.push(*body);
                }
            }
            for child in children {
                if child.index() >= i {
                    errors.push(VerifyError::BadChild { stmt: id, child });
                }
            }
            for reg in regs {
                if usize::from(reg.0) >= self.regs.len() {
                    errors.push(VerifyError::BadReg { stmt: id, reg });
                }
            }
        }
        if errors.is_empty() {
            for body in self
                .bodies
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
            {
                self.breaks_in_loops(*body, 0, &mut errors);
            }
        }
        for (t, body) in self.bodies.iter().enumerate() {
            if body.index() >= self.stmts.len() {
                errors.push(VerifyError::BadBody {
                    thread: t as u32,
                    body: *body,
                });
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Every `break` under `id` must have a loop around it (`depth` loops
    /// enclose `id`). Children are in bounds here.
    fn breaks_in_loops(&self, id: StmtId, depth: u32, errors: &mut Vec<VerifyError>) {
        if id.index() >= self.stmts.len() {
            return;
        }
        match self.stmt(id) {
            Stmt::Break if depth == 0 => errors.push(VerifyError::BreakOutsideLoop { stmt: id }),
            Stmt::Seq(items) => {
                for s in items {
                    self.breaks_in_loops(*s, depth, errors);
                }
            }
            Stmt::If { then, els, .. } => {
                self.breaks_in_loops(*then, depth, errors);
                self.breaks_in_loops(*els, depth, errors);
            }
            // A `for` body is not a `loop`: a `break` there would leave the
            // `for` in Rust, which extraction never produces.
            Stmt::For { body, .. } => self.breaks_in_loops(*body, depth, errors),
            Stmt::Loop { body, .. } => self.breaks_in_loops(*body, depth + 1, errors),
            _ => {}
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_rejects_forward_children_and_bad_tags() {
        let mut b = Builder::new();
        let r = b.reg("r");
        let st = b.store(Space::Global, 0, Ty::U32, 1, Access::ACQUIRE);
        let ld = b.load(r, Space::Global, 0, Ty::U32, Access::RELEASE);
        let mut p = Program {
            name: "bad".into(),
            stmts: b.stmts,
            bodies: vec![StmtId(9)],
            regs: b.regs,
            init: vec![],
            names: BTreeMap::new(),
            cta_size: 1,
        };
        p.stmts.push(Stmt::Seq(vec![st, ld, StmtId(5)]));
        p.stmts.push(Stmt::Assign {
            dst: Reg(7),
            val: Expr::Tid,
        });
        let errors = p.verify().expect_err("ill-formed program must be rejected");
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(errors.iter().any(|e| matches!(
            e,
            VerifyError::BadChild {
                child: StmtId(5),
                ..
            }
        )));
        assert!(
            errors
                .iter()
                .any(|e| matches!(e, VerifyError::BadReg { reg: Reg(7), .. }))
        );
        assert!(
            errors
                .iter()
                .any(|e| matches!(e, VerifyError::BadBody { .. }))
        );
    }

    #[test]
    fn operators_are_bit_pattern_operations() {
        assert_eq!(BinOp::Add.apply(u32::MAX, 2), 1);
        assert_eq!(BinOp::Shl.apply(1, 32), 0);
        assert_eq!(BinOp::Shr.apply(8, 3), 1);
        assert_eq!(BinOp::Lt.apply(3, 4), 1);
        assert_eq!(BinOp::Eq.apply(3, 4), 0);
    }
}
