//! MIR bodies: locals, blocks, statements, places, rvalues and terminators.
//!
//! The shapes follow rustc's `mir::syntax`, restricted to what its printer emits
//! for optimized MIR. Locals and blocks are cranelift-entity indices that display
//! as the MIR text does (`_3`, `bb0`).

use cranelift_entity::{PrimaryMap, entity_impl};
use serde::Serialize;

use super::pos::Pos;
use super::ty::{Mutability, Path, Ty};

/// A MIR local, `_N`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Local(u32);
entity_impl!(Local, "_");

/// A basic block, `bbN`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct BasicBlock(u32);
entity_impl!(BasicBlock, "bb");

/// A local's declaration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LocalDecl {
    /// Its type.
    pub ty: Ty,
    /// Whether it was declared `let mut` (arguments are never `mut` here).
    pub mutable: bool,
    /// Whether it is a function argument.
    pub is_arg: bool,
}

/// A `debug name => value;` line: which user variable a local or constant holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DebugInfo {
    /// The user-visible name, as printed (may be a composite like `((iter: T).0: usize)`).
    pub name: String,
    /// What it refers to.
    pub value: DebugValue,
}

/// The value of a debug line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum DebugValue {
    /// A place.
    Place(Place),
    /// A constant.
    Const(ConstOperand),
}

/// A range of source text, as rustc prints it with `-Zmir-include-spans`
/// (`// scope 0 at /src/kernel.rs:12:5: 12:17`). Lines and columns count
/// from 1; columns are in characters, and the end is exclusive.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    /// The file as rustc named it (for the kernel, the path the import read;
    /// the prelude and the standard library keep rustc's names).
    pub file: String,
    /// The first line.
    pub line: u32,
    /// The first column.
    pub col: u32,
    /// The last line.
    pub end_line: u32,
    /// The column just past the end.
    pub end_col: u32,
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Where a statement or terminator came from: its source scope and span.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceInfo {
    /// The scope it sits in (`scope 3`), an index into the body's scope tree.
    pub scope: u32,
    /// Its span; inside an inlined callee this is the callee's source, and the
    /// scope chain leads back to the call site (see [`Body::span_in`]).
    pub span: Span,
}

/// A lexical scope, possibly an inlined callee's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scope {
    /// The scope's number.
    pub index: u32,
    /// For an inlined callee, its path as printed (`core::ptr::add`).
    pub inlined: Option<String>,
    /// For an inlined callee, the span of the call that was inlined
    /// (`scope 4 (inlined f) { // at k.rs:3:5: 3:9`), when printed.
    pub callsite: Option<Span>,
    /// Debug lines declared inside.
    pub debug: Vec<DebugInfo>,
    /// Nested scopes.
    pub children: Vec<Scope>,
}

/// A projection step of a place.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PlaceElem {
    /// `(*p)`
    Deref,
    /// `(p.N: T)`
    Field(u32, Ty),
    /// `p[_i]`
    Index(Local),
    /// `p[K of M]` (or `p[-K of M]` when `from_end`).
    ConstantIndex {
        /// The index (from the end when `from_end`).
        offset: u64,
        /// The minimal length the pattern required.
        min_length: u64,
        /// Whether `offset` counts from the end.
        from_end: bool,
    },
    /// `p[from:to]` or `p[from:-to]`.
    Subslice {
        /// Elements skipped at the start.
        from: u64,
        /// Elements skipped at the end (when `from_end`) or the end index.
        to: u64,
        /// Whether `to` counts from the end.
        from_end: bool,
    },
    /// `(p as Variant)`: the variant's name.
    Downcast(String),
}

/// A place: a local and projections, innermost first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Place {
    /// The base local.
    pub local: Local,
    /// Projections applied in order.
    pub projection: Vec<PlaceElem>,
}

impl Place {
    /// A place that is just a local.
    pub fn local(local: Local) -> Place {
        Place {
            local,
            projection: Vec::new(),
        }
    }
}

/// A scalar literal: integer, bool, char or float bits.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Scalar {
    /// An integer of the given type; the value is the two's-complement bits
    /// zero-extended to 128 bits.
    Int {
        /// The bits.
        bits: u128,
        /// The type, as a primitive name.
        ty: super::ty::IntTy,
    },
    /// `true` or `false`.
    Bool(bool),
    /// A char.
    Char(char),
    /// A float, as its IEEE bits.
    Float {
        /// The bits, zero-extended.
        bits: u128,
        /// The type.
        ty: super::ty::FloatTy,
    },
}

/// A value as the printer writes it inside a `const` operand: `Foo {{ a: 1_u32 }}`
/// and friends. Kept as a small tree, not as text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ValTree {
    /// A scalar leaf.
    Scalar(Scalar),
    /// A string literal.
    Str(String),
    /// A byte-string literal.
    ByteStr(Vec<u8>),
    /// A tuple or tuple struct/variant: path (if any) and elements.
    Tuple(Option<Path>, Vec<ValTree>),
    /// A struct or struct variant with named fields.
    Struct(Path, Vec<(String, ValTree)>),
    /// An array.
    Array(Vec<ValTree>),
    /// A unit struct or variant, or a named constant path.
    Path(Path),
    /// A constant with no value syntax, inside a value: `{transmute(0x07):
    /// {closure@..}}`, `ZeroSized: T`, `{0x0 as *const T}` (a closure field of
    /// std's `try_trait::Wrapped`, which `[T; N]::map` builds).
    Const(Box<ConstOperand>),
}

/// A constant operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ConstOperand {
    /// A scalar literal.
    Scalar(Scalar),
    /// `const ()`.
    Unit,
    /// A string literal (`const "abc"`): a `&str`.
    Str(String),
    /// A byte-string literal (`const b"abc"`).
    ByteStr(Vec<u8>),
    /// A named constant item, unevaluated (`const PAIR`).
    Item(Path),
    /// A promoted of a body (`const f::promoted[0]`).
    Promoted {
        /// The owning body's path.
        owner: Path,
        /// Its index.
        index: u32,
    },
    /// A pointer into an allocation that the printer dumps (`const {alloc4: &&[u32]}`).
    Alloc {
        /// The allocation id.
        alloc: super::alloc::AllocId,
        /// The pointer's type.
        ty: Ty,
    },
    /// A by-reference constant (`const Indirect { alloc_id: allocN, offset: Size(K bytes) }: T`).
    Indirect {
        /// The allocation holding the value.
        alloc: super::alloc::AllocId,
        /// The byte offset of the value in it.
        offset: u64,
        /// The value's type.
        ty: Ty,
    },
    /// Raw bits of a type with no literal syntax (`const {transmute(0x02): T}`).
    Transmuted {
        /// The bits.
        bits: u128,
        /// The type.
        ty: Ty,
    },
    /// A zero-sized value (`const ZeroSized: T`).
    ZeroSized(Ty),
    /// A function item used as a value.
    FnItem(Path),
    /// A reference to another crate's static, printed by its def path
    /// (`const <static(DefId(.. ~ ryu[..]::digit_table::DIGIT_TABLE))>`):
    /// a `&T` to the static, whose type its body declares.
    StaticRef(Path),
    /// A structured value as printed (`const Foo {{ x: 1_u32 }}`).
    Value(ValTree),
    /// `const <uninit>`: a value of its context's type whose every byte is
    /// uninitialized (`MaybeUninit::uninit()`, which `[T; N]::map` builds
    /// its result array from).
    Uninit,
}

/// An operand.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Operand {
    /// `copy p`
    Copy(Place),
    /// `move p`
    Move(Place),
    /// `const c`
    Const(ConstOperand),
}

/// Binary operators, including checked and unchecked forms and `Offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    AddUnchecked,
    AddWithOverflow,
    Sub,
    SubUnchecked,
    SubWithOverflow,
    Mul,
    MulUnchecked,
    MulWithOverflow,
    Div,
    Rem,
    BitXor,
    BitAnd,
    BitOr,
    Shl,
    ShlUnchecked,
    Shr,
    ShrUnchecked,
    Eq,
    Lt,
    Le,
    Ne,
    Ge,
    Gt,
    Cmp,
    Offset,
}

impl BinOp {
    /// Parses an operator name as printed.
    pub fn from_name(name: &str) -> Option<BinOp> {
        use BinOp::*;
        Some(match name {
            "Add" => Add,
            "AddUnchecked" => AddUnchecked,
            "AddWithOverflow" => AddWithOverflow,
            "Sub" => Sub,
            "SubUnchecked" => SubUnchecked,
            "SubWithOverflow" => SubWithOverflow,
            "Mul" => Mul,
            "MulUnchecked" => MulUnchecked,
            "MulWithOverflow" => MulWithOverflow,
            "Div" => Div,
            "Rem" => Rem,
            "BitXor" => BitXor,
            "BitAnd" => BitAnd,
            "BitOr" => BitOr,
            "Shl" => Shl,
            "ShlUnchecked" => ShlUnchecked,
            "Shr" => Shr,
            "ShrUnchecked" => ShrUnchecked,
            "Eq" => Eq,
            "Lt" => Lt,
            "Le" => Le,
            "Ne" => Ne,
            "Ge" => Ge,
            "Gt" => Gt,
            "Cmp" => Cmp,
            "Offset" => Offset,
            _ => return None,
        })
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum UnOp {
    /// `Not(x)`
    Not,
    /// `Neg(x)`
    Neg,
    /// `PtrMetadata(p)`: a slice's length, or `()` for thin pointers.
    PtrMetadata,
}

/// Cast kinds as printed after `as T`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CastKind {
    /// `IntToInt`
    IntToInt,
    /// `IntToFloat`
    IntToFloat,
    /// `FloatToInt`
    FloatToInt,
    /// `FloatToFloat`
    FloatToFloat,
    /// `PtrToPtr`
    PtrToPtr,
    /// `FnPtrToPtr`
    FnPtrToPtr,
    /// `PointerExposeProvenance`
    PointerExposeProvenance,
    /// `PointerWithExposedProvenance`
    PointerWithExposedProvenance,
    /// `Transmute`
    Transmute,
    /// `PointerCoercion(Kind, Source)`, e.g. `PointerCoercion(Unsize, Implicit)`.
    PointerCoercion(String),
}

/// Aggregate kinds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum AggregateKind {
    /// `(a, b)`
    Tuple,
    /// `[a, b]`
    Array,
    /// `Path { f: a }` or `Path::Variant(a)`: the path, and field names when named.
    Adt {
        /// The struct, or the enum variant (`Option::<u32>::Some`).
        path: Path,
        /// Field names for `{ f: .. }` syntax; empty for tuple syntax.
        field_names: Vec<String>,
    },
    /// `*const T from (data, meta)`.
    RawPtr(Ty, Mutability),
    /// A closure or coroutine, as printed.
    Opaque(String),
}

/// The right-hand side of an assignment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Rvalue {
    /// An operand.
    Use(Operand),
    /// `[op; N]`
    Repeat(Operand, super::ArrayLen),
    /// `&p`, `&mut p`.
    Ref(Mutability, Place),
    /// `&raw const p`, `&raw mut p`.
    RawPtr(Mutability, Place),
    /// `op as T (kind)`
    Cast(CastKind, Operand, Ty),
    /// `Op(a, b)`
    BinaryOp(BinOp, Operand, Operand),
    /// `Op(a)`
    UnaryOp(UnOp, Operand),
    /// `discriminant(p)`
    Discriminant(Place),
    /// An aggregate.
    Aggregate(AggregateKind, Vec<Operand>),
    /// `CopyForDeref(p)`
    CopyForDeref(Place),
    /// `SizeOf(T)`, `AlignOf(T)`, `UbChecks()` and other nullary ops: name and type.
    Nullary(String, Option<Ty>),
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum StatementKind {
    /// `p = rv;`
    Assign(Place, Rvalue),
    /// `StorageLive(_N);`
    StorageLive(Local),
    /// `StorageDead(_N);`
    StorageDead(Local),
    /// `discriminant(p) = N;`
    SetDiscriminant(Place, u32),
    /// `Deinit(p);`
    Deinit(Place),
    /// `assume(op);`
    Assume(Operand),
    /// `copy_nonoverlapping(dst = a, src = b, count = c);`
    CopyNonOverlapping {
        /// Destination pointer.
        dst: Operand,
        /// Source pointer.
        src: Operand,
        /// Element count.
        count: Operand,
    },
    /// `PlaceMention(p);`
    PlaceMention(Place),
    /// `nop;`
    Nop,
    /// `ConstEvalCounter;` (CTFE bodies only: counts steps for the const-eval limit).
    ConstEvalCounter,
}

/// A statement with its position in the MIR text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Statement {
    /// What it does.
    pub kind: StatementKind,
    /// Where it was printed.
    pub pos: Pos,
    /// Its scope and source span, when rustc printed them (MIR text without
    /// `-Zmir-include-spans`, such as hand-written tests, has none).
    pub source: Option<SourceInfo>,
}

/// What happens when a call or drop unwinds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum UnwindAction {
    /// `unwind continue`
    Continue,
    /// `unwind unreachable`
    Unreachable,
    /// `unwind terminate(reason)`
    Terminate(String),
    /// `unwind: bbN`
    Cleanup(BasicBlock),
}

/// A block terminator.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TerminatorKind {
    /// `goto -> bbN;`
    Goto(BasicBlock),
    /// `switchInt(op) -> [v: bb, .., otherwise: bb];`
    SwitchInt {
        /// The discriminant operand.
        discr: Operand,
        /// Each value (as bits) and its target.
        targets: Vec<(u128, BasicBlock)>,
        /// The `otherwise` target.
        otherwise: BasicBlock,
    },
    /// `return;`
    Return,
    /// `unreachable;`
    Unreachable,
    /// `resume;`
    UnwindResume,
    /// `abort;` / `terminate;`
    Terminate,
    /// `asm!("..", operands) -> [return: bb, ..]`: inline assembly, which
    /// no device runs (the lowering refuses it, naming the template).
    InlineAsm {
        /// The assembly template and operands as printed.
        text: String,
        /// Where control goes after it; `None` for `options(noreturn)`.
        target: Option<BasicBlock>,
    },
    /// `assert(cond, msg, args..) -> [success: bb, unwind ..];`
    Assert {
        /// The condition operand.
        cond: Operand,
        /// Whether the condition is negated (`!cond`).
        expected: bool,
        /// The panic message as printed.
        msg: String,
        /// The formatting arguments.
        msg_args: Vec<Operand>,
        /// Where control goes when the assertion holds.
        target: BasicBlock,
        /// What happens on panic.
        unwind: UnwindAction,
    },
    /// `drop(p) -> [return: bb, unwind ..];`
    Drop {
        /// The dropped place.
        place: Place,
        /// Where control goes next.
        target: BasicBlock,
        /// What happens on unwind.
        unwind: UnwindAction,
    },
    /// `dest = f(args) -> [return: bb, unwind ..];`
    Call {
        /// The callee: a function item path or an operand (function pointer).
        func: Callee,
        /// The arguments.
        args: Vec<Operand>,
        /// Where the result goes.
        destination: Place,
        /// The return target; `None` for diverging calls.
        target: Option<BasicBlock>,
        /// What happens on unwind.
        unwind: UnwindAction,
    },
}

/// What a call calls.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Callee {
    /// A function item by path, with its generic arguments in the path.
    Item(Path),
    /// A function pointer operand.
    Operand(Operand),
}

/// A terminator with its position.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Terminator {
    /// What it does.
    pub kind: TerminatorKind,
    /// Where it was printed.
    pub pos: Pos,
    /// Its scope and source span, when printed (see [`Statement::source`]).
    pub source: Option<SourceInfo>,
}

/// A basic block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockData {
    /// Whether it is a cleanup (unwind) block.
    pub cleanup: bool,
    /// Its statements.
    pub statements: Vec<Statement>,
    /// Its terminator.
    pub terminator: Terminator,
}

/// What kind of item a body belongs to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum BodyKind {
    /// A function; `ctfe` marks the separate "MIR for CTFE" copy of a `const fn`.
    Fn {
        /// Whether this is the CTFE copy.
        ctfe: bool,
    },
    /// A `const` item.
    Const,
    /// A `static`, mutable or not.
    Static(Mutability),
    /// A promoted constant of another body.
    Promoted {
        /// The owner's path.
        owner: Path,
        /// The promoted's index.
        index: u32,
    },
}

/// A MIR body.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Body {
    /// The item's path (for a promoted, the owner's path).
    pub path: Path,
    /// What kind of body.
    pub kind: BodyKind,
    /// The declared return type (`_0`'s type).
    pub return_ty: Ty,
    /// Number of arguments (`_1..=_n`).
    pub arg_count: u32,
    /// All locals, `_0` first.
    pub locals: PrimaryMap<Local, LocalDecl>,
    /// Debug lines at the top level.
    pub debug: Vec<DebugInfo>,
    /// Scopes, with inlined callees.
    pub scopes: Vec<Scope>,
    /// The blocks, `bb0` first. Empty for a one-line constant (`const X: T = const v;`).
    pub blocks: PrimaryMap<BasicBlock, BlockData>,
    /// For a one-line constant, its value.
    pub value: Option<ConstOperand>,
    /// Where the header was printed.
    pub pos: Pos,
    /// The item's span, when printed. rustc does not print a body's own
    /// span, so this is the nearest it does print: for a const, static or
    /// promoted, the span of its `return` (the whole item, or the promoted
    /// expression); for a function, the span of the return place `_0` (its
    /// return type, an empty span after the parameters when that is `()`).
    pub span: Option<Span>,
}

impl Body {
    /// The span in `file` that `source` stands for: its own span when it is
    /// in `file`, else the call site, in `file`, of the innermost inlined
    /// scope around it. A statement inlined from the standard library or the
    /// prelude thus points at the user's call that brought it in.
    pub fn span_in<'b>(&'b self, source: &'b SourceInfo, file: &str) -> Option<&'b Span> {
        if source.span.file == file {
            return Some(&source.span);
        }
        let mut chain = Vec::new();
        scope_chain(&self.scopes, source.scope, &mut chain);
        chain
            .iter()
            .rev()
            .filter_map(|s| s.callsite.as_ref())
            .find(|s| s.file == file)
    }

    /// Renames the file `from` to `to` in every span of the body (the import
    /// maps the sandbox's name for the kernel back to the file it read).
    pub fn rename_span_file(&mut self, from: &str, to: &str) {
        self.map_spans(|s| {
            if s.file == from {
                s.file = to.to_string();
            }
        });
    }

    /// Applies `f` to every span of the body: statements', terminators', the
    /// body's own and its scopes' call sites.
    pub fn map_spans(&mut self, mut f: impl FnMut(&mut Span)) {
        for bb in self.blocks.values_mut() {
            let sources = bb.statements.iter_mut().map(|s| &mut s.source);
            for src in sources.chain([&mut bb.terminator.source]).flatten() {
                f(&mut src.span);
            }
        }
        self.span.iter_mut().for_each(&mut f);
        let mut todo: Vec<&mut Scope> = self.scopes.iter_mut().collect();
        while let Some(s) = todo.pop() {
            s.callsite.iter_mut().for_each(&mut f);
            todo.extend(s.children.iter_mut());
        }
    }
}

/// Pushes onto `chain` the scopes from the outermost down to scope `index`,
/// if `scopes` holds it; returns whether it does. Scope 0, the body's own,
/// is not printed as a scope and is never in the chain.
fn scope_chain<'s>(scopes: &'s [Scope], index: u32, chain: &mut Vec<&'s Scope>) -> bool {
    for s in scopes {
        chain.push(s);
        if s.index == index || scope_chain(&s.children, index, chain) {
            return true;
        }
        chain.pop();
    }
    false
}
