//! Instructions: an opcode, its typed modifiers and its operands.
//!
//! Modifiers are typed by what they mean to a later consumer (a PTX virtual
//! device, a memory-model translation): a type, a state space, a scope, a
//! memory ordering, a rounding mode, a comparison, a vector width, or a flag.
//! A word that is none of these but that PTX uses as an operation selector
//! (`atom.add`, `bar.sync`, `cvta.to`) is [`Modifier::Op`], checked against a
//! fixed list so that a typo is an error, not a new modifier.

use std::fmt;

macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $v:ident = $s:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vdoc])* $v),* }
        impl $name {
            /// The word as PTX spells it, without its dot.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s),* }
            }
            /// The variant PTX spells `word` (without its dot).
            pub fn from_word(word: &str) -> Option<Self> {
                match word { $($s => Some($name::$v),)* _ => None }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum!(
    /// A PTX fundamental type (`.u32`, `.f64`, `.pred`).
    Type {
        /// `.b8`
        B8 = "b8", /// `.b16`
        B16 = "b16", /// `.b32`
        B32 = "b32", /// `.b64`
        B64 = "b64", /// `.b128`
        B128 = "b128", /// `.u8`
        U8 = "u8", /// `.u16`
        U16 = "u16", /// `.u32`
        U32 = "u32", /// `.u64`
        U64 = "u64", /// `.s8`
        S8 = "s8", /// `.s16`
        S16 = "s16", /// `.s32`
        S32 = "s32", /// `.s64`
        S64 = "s64", /// `.f16`
        F16 = "f16", /// `.f16x2`
        F16x2 = "f16x2", /// `.bf16`
        Bf16 = "bf16", /// `.bf16x2`
        Bf16x2 = "bf16x2", /// `.f32`
        F32 = "f32", /// `.f64`
        F64 = "f64", /// `.pred`
        Pred = "pred",
    }
);

word_enum!(
    /// A state space (`.global`, `.shared::cta`, `.param`).
    StateSpace {
        /// `.global`
        Global = "global", /// `.shared`
        Shared = "shared", /// `.shared::cta`
        SharedCta = "shared::cta", /// `.shared::cluster`
        SharedCluster = "shared::cluster", /// `.const`
        Const = "const", /// `.local`
        Local = "local", /// `.param`
        Param = "param", /// `.reg`
        Reg = "reg",
    }
);

impl Type {
    /// Its size in bytes (`.pred` counts as one).
    pub fn size(self) -> u64 {
        match self {
            Type::B8 | Type::U8 | Type::S8 | Type::Pred => 1,
            Type::B16 | Type::U16 | Type::S16 | Type::F16 | Type::Bf16 => 2,
            Type::B32 | Type::U32 | Type::S32 | Type::F32 | Type::F16x2 | Type::Bf16x2 => 4,
            Type::B64 | Type::U64 | Type::S64 | Type::F64 => 8,
            Type::B128 => 16,
        }
    }
}

impl StateSpace {
    /// The directive, as PTX spells it (`.global`).
    pub fn directive(self) -> String {
        format!(".{}", self.as_str())
    }
}

word_enum!(
    /// A memory scope.
    Scope {
        /// `.cta`
        Cta = "cta", /// `.cluster`
        Cluster = "cluster", /// `.gpu`
        Gpu = "gpu", /// `.sys`
        Sys = "sys",
    }
);

word_enum!(
    /// A memory ordering (the PTX memory model's semantics).
    Semantics {
        /// `.relaxed`
        Relaxed = "relaxed", /// `.acquire`
        Acquire = "acquire", /// `.release`
        Release = "release", /// `.acq_rel`
        AcqRel = "acq_rel", /// `.sc`
        Sc = "sc", /// `.weak`
        Weak = "weak", /// `.volatile`
        Volatile = "volatile", /// `.mmio`
        Mmio = "mmio",
    }
);

word_enum!(
    /// A rounding mode.
    Rounding {
        /// `.rn`
        Rn = "rn", /// `.rz`
        Rz = "rz", /// `.rm`
        Rm = "rm", /// `.rp`
        Rp = "rp", /// `.rni`
        Rni = "rni", /// `.rzi`
        Rzi = "rzi", /// `.rmi`
        Rmi = "rmi", /// `.rpi`
        Rpi = "rpi", /// `.rna`
        Rna = "rna",
    }
);

word_enum!(
    /// A comparison of `setp` / `set`.
    Cmp {
        /// `.eq`
        Eq = "eq", /// `.ne`
        Ne = "ne", /// `.lt`
        Lt = "lt", /// `.le`
        Le = "le", /// `.gt`
        Gt = "gt", /// `.ge`
        Ge = "ge", /// `.lo`
        Lo = "lo", /// `.ls`
        Ls = "ls", /// `.hi`
        Hi = "hi", /// `.hs`
        Hs = "hs", /// `.equ`
        Equ = "equ", /// `.neu`
        Neu = "neu", /// `.ltu`
        Ltu = "ltu", /// `.leu`
        Leu = "leu", /// `.gtu`
        Gtu = "gtu", /// `.geu`
        Geu = "geu", /// `.num`
        Num = "num", /// `.nan`
        Nan = "nan",
    }
);

word_enum!(
    /// A flag that changes how an arithmetic or control instruction behaves.
    Flag {
        /// `.ftz`: flush subnormals to zero.
        Ftz = "ftz", /// `.sat`: saturate.
        Sat = "sat", /// `.approx`
        Approx = "approx", /// `.full`
        Full = "full", /// `.uni`: non-divergent branch or call.
        Uni = "uni", /// `.wide`
        Wide = "wide", /// `.lo`: low half of a product.
        Lo = "lo", /// `.hi`: high half of a product.
        Hi = "hi", /// `.to`: `cvta.to`, generic to a state space.
        To = "to", /// `.aligned`: every thread executes the same instruction.
        Aligned = "aligned", /// `.cc`: writes the carry flag.
        Cc = "cc",
    }
);

/// The operation selectors PTX writes as modifiers ([`Modifier::Op`]).
const OPS: &[&str] = &[
    "add", "inc", "dec", "exch", "cas", "min", "max", "and", "or", "xor", "sync", "arrive", "red",
    "popc", "all", "any", "ballot", "up", "down", "bfly", "idx", "clamp", "wrap", "shiftamt", "l1",
    "l2", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "l", "r", "warp",
];

/// The opcodes this reader knows (PTX ISA 8.x, the scalar and memory subset
/// libNVVM emits for our kernels plus their close relatives).
pub const OPCODES: &[&str] = &[
    "abs",
    "add",
    "addc",
    "and",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bra",
    "brev",
    "brkpt",
    "call",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cvt",
    "cvta",
    "div",
    "ex2",
    "exit",
    "fence",
    "fma",
    "isspacep",
    "ld",
    "ldu",
    "lg2",
    "mad",
    "madc",
    "max",
    "membar",
    "min",
    "mov",
    "mul",
    "mul24",
    "mad24",
    "neg",
    "not",
    "or",
    "popc",
    "prefetch",
    "prmt",
    "rcp",
    "red",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "sub",
    "subc",
    "testp",
    "trap",
    "vote",
    "xor",
    "activemask",
    "nanosleep",
    "pmevent",
    "redux",
    "match",
    "dp4a",
    "dp2a",
    "lop3",
    "tanh",
];

/// One modifier of an instruction, typed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Modifier {
    /// A type (`.u32`).
    Type(Type),
    /// A state space (`.global`).
    Space(StateSpace),
    /// A scope (`.sys`).
    Scope(Scope),
    /// A memory ordering (`.acquire`).
    Sem(Semantics),
    /// A rounding mode (`.rn`).
    Rounding(Rounding),
    /// A comparison (`setp.lt`).
    Cmp(Cmp),
    /// A vector width (`.v2`, `.v4`).
    Vector(u8),
    /// A behaviour flag (`.ftz`, `.uni`).
    Flag(Flag),
    /// An operation selector (`atom.add`, `bar.sync`).
    Op(&'static str),
}

impl Modifier {
    /// Reads modifier `word` of `opcode`; `None` for a word it cannot be.
    /// `setp.lo` is a comparison, `mul.lo` a flag: the opcode decides.
    pub fn classify(opcode: &str, word: &str) -> Option<Modifier> {
        let compare = matches!(opcode, "setp" | "set");
        if compare && let Some(c) = Cmp::from_word(word) {
            return Some(Modifier::Cmp(c));
        }
        if let Some(t) = Type::from_word(word) {
            return Some(Modifier::Type(t));
        }
        if let Some(s) = StateSpace::from_word(word) {
            return Some(Modifier::Space(s));
        }
        if let Some(s) = Scope::from_word(word) {
            return Some(Modifier::Scope(s));
        }
        if let Some(s) = Semantics::from_word(word) {
            return Some(Modifier::Sem(s));
        }
        if let Some(r) = Rounding::from_word(word) {
            return Some(Modifier::Rounding(r));
        }
        if let Some(f) = Flag::from_word(word) {
            return Some(Modifier::Flag(f));
        }
        match word {
            "v2" => return Some(Modifier::Vector(2)),
            "v4" => return Some(Modifier::Vector(4)),
            "v8" => return Some(Modifier::Vector(8)),
            _ => {}
        }
        OPS.iter().find(|o| **o == word).map(|o| Modifier::Op(o))
    }

    /// The word as PTX spells it, without its dot.
    pub fn as_str(&self) -> String {
        match self {
            Modifier::Type(t) => t.as_str().into(),
            Modifier::Space(s) => s.as_str().into(),
            Modifier::Scope(s) => s.as_str().into(),
            Modifier::Sem(s) => s.as_str().into(),
            Modifier::Rounding(r) => r.as_str().into(),
            Modifier::Cmp(c) => c.as_str().into(),
            Modifier::Vector(n) => format!("v{n}"),
            Modifier::Flag(f) => f.as_str().into(),
            Modifier::Op(o) => (*o).into(),
        }
    }
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

/// The base of an address (`[%rd1+8]`, `[param0+0]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddressBase {
    /// A register.
    Reg(String),
    /// A variable or parameter symbol.
    Symbol(String),
    /// An absolute address (`[0x100]`).
    Absolute(u64),
}

/// One operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register (`%r1`, `%SP`, `%tid.x`).
    Reg(String),
    /// An integer immediate (`-1`, `0xFF`), with its sign.
    Int(i128),
    /// A single-precision immediate by its bits (`0f3F800000`).
    F32(u32),
    /// A double-precision immediate by its bits (`0d3FF0000000000000`).
    F64(u64),
    /// A symbol: a variable, function or label, with an offset (`sym+4`).
    Symbol {
        /// The name.
        name: String,
        /// The byte offset, 0 when none is written.
        offset: i64,
    },
    /// A memory address (`[%rd1+8]`).
    Address {
        /// The base.
        base: AddressBase,
        /// The byte offset, 0 when none is written.
        offset: i64,
    },
    /// A vector (`{%r1, %r2}`).
    Vector(Vec<Operand>),
    /// A parenthesized list: the return and argument lists of `call`.
    List(Vec<Operand>),
    /// The sink `_`.
    Sink,
    /// A negated predicate (`!%p1`).
    Not(String),
    /// A destination register with a predicate beside it (`%r1|%p1`): the
    /// second result of `shfl.sync` (whether the source lane was in range)
    /// and of `setp` (the complement, `p|q`).
    WithPred {
        /// The value register.
        reg: String,
        /// The predicate register.
        pred: String,
    },
}

fn offset(f: &mut fmt::Formatter<'_>, off: i64) -> fmt::Result {
    if off != 0 {
        write!(f, "+{off}")
    } else {
        Ok(())
    }
}

fn list(f: &mut fmt::Formatter<'_>, items: &[Operand]) -> fmt::Result {
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{o}")?;
    }
    Ok(())
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => f.write_str(r),
            Operand::Int(n) => write!(f, "{n}"),
            Operand::F32(b) => write!(f, "0f{b:08X}"),
            Operand::F64(b) => write!(f, "0d{b:016X}"),
            Operand::Symbol { name, offset: off } => {
                f.write_str(name)?;
                offset(f, *off)
            }
            Operand::Address { base, offset: off } => {
                match base {
                    AddressBase::Reg(r) | AddressBase::Symbol(r) => write!(f, "[{r}")?,
                    AddressBase::Absolute(a) => write!(f, "[{a}")?,
                }
                offset(f, *off)?;
                f.write_str("]")
            }
            Operand::Vector(v) => {
                f.write_str("{")?;
                list(f, v)?;
                f.write_str("}")
            }
            Operand::List(v) => {
                f.write_str("(")?;
                list(f, v)?;
                f.write_str(")")
            }
            Operand::Sink => f.write_str("_"),
            Operand::Not(p) => write!(f, "!{p}"),
            Operand::WithPred { reg, pred } => write!(f, "{reg}|{pred}"),
        }
    }
}

/// A predicate guard: `@%p1` or `@!%p1`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The predicate register.
    pub reg: String,
    /// `@!`: the instruction runs where the predicate is false.
    pub negated: bool,
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}{}", if self.negated { "!" } else { "" }, self.reg)
    }
}

/// One instruction: `[@guard] opcode{.modifier} operands`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    /// The guard, if any.
    pub guard: Option<Guard>,
    /// The opcode without its modifiers (`ld`), one of [`OPCODES`].
    pub opcode: String,
    /// The modifiers in written order.
    pub modifiers: Vec<Modifier>,
    /// The operands in written order.
    pub operands: Vec<Operand>,
    /// Where the instruction (its guard, if any) starts.
    pub pos: crate::Pos,
}

impl Instruction {
    /// The opcode with its modifiers, as PTX spells it (`ld.acquire.sys.u32`).
    pub fn full_opcode(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(&m.as_str());
        }
        s
    }

    /// Whether `modifier` (spelled without its dot) is one of the modifiers.
    pub fn has_modifier(&self, modifier: &str) -> bool {
        self.modifiers.iter().any(|m| m.as_str() == modifier)
    }

    /// Whether the instruction is `opcode` with every modifier of `modifiers`,
    /// in any order, others allowed (`ld` with `acquire`, `sys`, `u32`
    /// matches `ld.acquire.sys.global.u32`).
    pub fn is(&self, opcode: &str, modifiers: &[&str]) -> bool {
        self.opcode == opcode && modifiers.iter().all(|m| self.has_modifier(m))
    }

    /// The first type modifier (`ld.global.u32` has `u32`).
    pub fn ty(&self) -> Option<Type> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Type(t) => Some(*t),
            _ => None,
        })
    }

    /// The state space modifier, if any.
    pub fn space(&self) -> Option<StateSpace> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Space(s) => Some(*s),
            _ => None,
        })
    }

    /// The scope modifier, if any.
    pub fn scope(&self) -> Option<Scope> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Scope(s) => Some(*s),
            _ => None,
        })
    }

    /// The memory ordering modifier, if any.
    pub fn semantics(&self) -> Option<Semantics> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Sem(s) => Some(*s),
            _ => None,
        })
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "{g} ")?;
        }
        f.write_str(&self.full_opcode())?;
        if !self.operands.is_empty() {
            f.write_str(" ")?;
            list(f, &self.operands)?;
        }
        Ok(())
    }
}
