//! The abstract syntax of a PTX litmus test, as written: threads with their
//! placement, instructions with their source positions, the initial state and
//! the final condition. Nothing here has a meaning yet; [`super::paths`] gives
//! the instructions one.

use std::fmt;

use serde::Serialize;

/// A 1-based position in the test's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Pos {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, counted in characters.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A scope qualifier: the set of threads an operation synchronizes with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Scope {
    /// `.cta`: the threads of the same CTA.
    Cta,
    /// `.gpu`: the threads of the same GPU.
    Gpu,
    /// `.sys`: every thread of the program.
    Sys,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        })
    }
}

/// A memory-order qualifier as written (`.weak`, `.relaxed`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Order {
    /// `.weak`: no scope, never morally strong.
    Weak,
    /// `.relaxed`.
    Relaxed,
    /// `.acquire`.
    Acquire,
    /// `.release`.
    Release,
    /// `.acq_rel`.
    AcqRel,
    /// `.sc` (fences only).
    Sc,
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Weak => "weak",
            Order::Relaxed => "relaxed",
            Order::Acquire => "acquire",
            Order::Release => "release",
            Order::AcqRel => "acq_rel",
            Order::Sc => "sc",
        })
    }
}

/// A register, `r<n>`, local to its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Reg(pub u32);

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// A memory location, an index into [`Test::locations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Loc(pub u32);

/// A label, `LC<digits>`, local to its thread. Dat3M compares labels as
/// text, so `LC01` and `LC1` differ: the digit count is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Label {
    /// The number the digits spell.
    pub number: u32,
    /// How many digits were written.
    pub digits: u8,
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LC{:0width$}",
            self.number,
            width = usize::from(self.digits)
        )
    }
}

/// A value operand: a constant or a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Operand {
    /// A constant.
    Const(i64),
    /// A register's current value.
    Reg(Reg),
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Const(v) => write!(f, "{v}"),
            Operand::Reg(r) => write!(f, "{r}"),
        }
    }
}

/// An integer operation, for local arithmetic and read-modify-writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinOp {
    /// Wrapping addition.
    Add,
    /// Wrapping subtraction.
    Sub,
    /// Wrapping multiplication.
    Mul,
    /// Signed division; division by zero is an error.
    Div,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
}

/// A comparison, for branches and conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CmpOp {
    /// `==` (or `=` in conditions, `beq` in code).
    Eq,
    /// `!=`, `bne`.
    Ne,
    /// `<`, `blt` (signed).
    Lt,
    /// `<=`, `ble` (signed).
    Le,
    /// `>`, `bgt` (signed).
    Gt,
    /// `>=`, `bge` (signed).
    Ge,
}

impl CmpOp {
    /// Compares two values, signed.
    #[must_use]
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        })
    }
}

/// What an `atom` instruction computes from the old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AtomOp {
    /// `old op value`.
    Bin(BinOp),
    /// `value`.
    Exch,
    /// `old == expected ? value : old` (PTX's `atom.cas`; the store always
    /// happens, as in Dat3M's reading of the ISA).
    Cas {
        /// The value compared with the old one.
        expected: Operand,
    },
}

/// One instruction of one thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Instr {
    /// `ld.<order>[.<scope>] r, loc`.
    Load {
        /// `.weak`, `.relaxed` or `.acquire`.
        order: Order,
        /// Absent exactly when the order is `.weak`.
        scope: Option<Scope>,
        /// The destination register.
        dst: Reg,
        /// The location read.
        loc: Loc,
    },
    /// `st.<order>[.<scope>] loc, value`.
    Store {
        /// `.weak`, `.relaxed` or `.release`.
        order: Order,
        /// Absent exactly when the order is `.weak`.
        scope: Option<Scope>,
        /// The location written.
        loc: Loc,
        /// The value stored.
        value: Operand,
    },
    /// `ld r, value`: a register move, no memory access.
    Move {
        /// The destination register.
        dst: Reg,
        /// The value.
        value: Operand,
    },
    /// `add|sub|mul|div r, a, b`: local arithmetic.
    Local {
        /// The operation.
        op: BinOp,
        /// The destination register.
        dst: Reg,
        /// The left operand.
        lhs: Operand,
        /// The right operand.
        rhs: Operand,
    },
    /// `atom.<order>.<scope>.<op> r, loc, value[, value]`: a read-modify-write
    /// that returns the old value.
    Atom {
        /// `.relaxed`, `.acquire`, `.release` or `.acq_rel`.
        order: Order,
        /// The scope.
        scope: Scope,
        /// What is stored.
        op: AtomOp,
        /// Receives the old value.
        dst: Reg,
        /// The location.
        loc: Loc,
        /// The operand (the new value for `exch` and `cas`).
        value: Operand,
    },
    /// `red.<order>.<scope>.<op> loc, value`: a read-modify-write without a result.
    Red {
        /// `.relaxed`, `.acquire`, `.release` or `.acq_rel`.
        order: Order,
        /// The scope.
        scope: Scope,
        /// The operation.
        op: BinOp,
        /// The location.
        loc: Loc,
        /// The operand.
        value: Operand,
    },
    /// `fence.sc.<scope>` or `fence.acq_rel.<scope>`.
    Fence {
        /// `.sc` or `.acq_rel`.
        order: Order,
        /// The scope.
        scope: Scope,
    },
    /// `bar.cta.sync|arrive instance[, id[, quorum]]`.
    Barrier {
        /// `arrive` rather than `sync`: it never waits to be synchronized with.
        arrive: bool,
        /// The instance: barriers of one CTA with the same instance are one barrier.
        instance: i64,
        /// The named barrier's resource id, if named.
        id: Option<Operand>,
        /// How many threads must arrive before any proceeds (all, if absent).
        quorum: Option<Operand>,
    },
    /// `b<cmp> a, b, LC<n>`.
    Branch {
        /// The comparison.
        cmp: CmpOp,
        /// The left operand.
        lhs: Operand,
        /// The right operand.
        rhs: Operand,
        /// Where to go when it holds.
        target: Label,
    },
    /// `goto LC<n>`.
    Goto(Label),
    /// `LC<n>:`.
    Mark(Label),
}

/// An instruction with where it was written and its text.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    /// The instruction.
    pub instr: Instr,
    /// Its position.
    pub pos: Pos,
    /// Its text, trimmed.
    pub text: String,
}

/// One thread: its placement and its code.
#[derive(Clone, Debug, Serialize)]
pub struct Thread {
    /// `P<n>`.
    pub id: u32,
    /// The CTA, within its GPU.
    pub cta: u32,
    /// The GPU.
    pub gpu: u32,
    /// The instructions, in order.
    pub code: Vec<Line>,
}

impl Thread {
    /// Whether `self` lies inside `other`'s instance of `scope`.
    #[must_use]
    pub fn shares(&self, other: &Thread, scope: Scope) -> bool {
        match scope {
            Scope::Cta => self.gpu == other.gpu && self.cta == other.cta,
            Scope::Gpu => self.gpu == other.gpu,
            Scope::Sys => true,
        }
    }
}

/// The quantifier of the final condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Quantifier {
    /// `exists`: some execution satisfies the condition.
    Exists,
    /// `~exists`: no execution satisfies it.
    NotExists,
    /// `forall`: every execution satisfies it.
    Forall,
}

impl fmt::Display for Quantifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        })
    }
}

/// A value named in the final condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CondValue {
    /// A register's final value: thread index, register.
    Reg(u32, Reg),
    /// A location's final value.
    Loc(Loc),
    /// A constant.
    Const(i64),
}

/// The final condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Cond {
    /// A comparison.
    Cmp(CondValue, CmpOp, CondValue),
    /// Negation.
    Not(Box<Cond>),
    /// Conjunction.
    And(Box<Cond>, Box<Cond>),
    /// Disjunction.
    Or(Box<Cond>, Box<Cond>),
}

impl Cond {
    /// Evaluates the condition with the given lookups.
    pub fn eval(&self, value: &impl Fn(CondValue) -> i64) -> bool {
        match self {
            Cond::Cmp(a, op, b) => op.holds(value(*a), value(*b)),
            Cond::Not(c) => !c.eval(value),
            Cond::And(a, b) => a.eval(value) && b.eval(value),
            Cond::Or(a, b) => a.eval(value) || b.eval(value),
        }
    }

    /// Whether the condition reads a location's final value.
    #[must_use]
    pub fn reads_memory(&self) -> bool {
        match self {
            Cond::Cmp(a, _, b) => matches!(a, CondValue::Loc(_)) || matches!(b, CondValue::Loc(_)),
            Cond::Not(c) => c.reads_memory(),
            Cond::And(a, b) | Cond::Or(a, b) => a.reads_memory() || b.reads_memory(),
        }
    }
}

/// A whole litmus test.
#[derive(Clone, Debug, Serialize)]
pub struct Test {
    /// The name on the first line.
    pub name: String,
    /// Location names and initial values; [`Loc`] indexes this. Locations used
    /// but not initialized start at 0.
    pub locations: Vec<(String, i64)>,
    /// Initial register values: thread index, register, value. Others start at 0.
    pub registers: Vec<(u32, Reg, i64)>,
    /// The threads, in column order.
    pub threads: Vec<Thread>,
    /// The quantifier.
    pub quantifier: Quantifier,
    /// The condition.
    pub cond: Cond,
}

impl Test {
    /// A location's name.
    #[must_use]
    pub fn loc_name(&self, loc: Loc) -> &str {
        self.locations
            .get(loc.0 as usize)
            .map_or("?", |(n, _)| n.as_str())
    }
}
