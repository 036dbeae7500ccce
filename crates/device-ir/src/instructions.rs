//! Instructions and their operand enums.
//!
//! Semantics are stated here once, for the printer, the interpreter and the
//! lowering alike. Integers are two's-complement bit patterns; an operation that
//! cares about sign says so in its name (`SDiv`/`UDiv`, `Slt`/`Ult`, `SExt`/`ZExt`).
//! Integer `Add`, `Sub`, `Mul` and `Shl` wrap. Division or remainder by zero,
//! signed `MIN / -1`, and a shift by at least the bit width are undefined behaviour
//! (LLVM's poison); an interpreter should report them.

use crate::entities::{Block, FuncId, GlobalId, Ty, Value};

bitflags::bitflags! {
    /// Flags on loads and stores.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct MemFlags: u8 {
        /// A volatile access: never merged, removed or reordered with other
        /// volatile accesses.
        const VOLATILE = 1;
    }
}

/// A branch target with the arguments passed to the target block's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockCall {
    /// The target block.
    pub block: Block,
    /// One argument per parameter of `block`, in order.
    pub args: Vec<Value>,
}

impl BlockCall {
    /// A target with arguments.
    pub fn new(block: Block, args: &[Value]) -> Self {
        BlockCall {
            block,
            args: args.to_vec(),
        }
    }
}

/// One index of a [`InstData::Gep`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GepIndex {
    /// A run-time integer index (any width; sign-extended to 64 bits).
    Value(Value),
    /// A constant index, printed as `i64`. Valid where `Value` is.
    Const(i64),
    /// A struct field number, printed as `i32`. Valid only when stepping into a
    /// struct; never the first index.
    Field(u32),
}

/// Binary operators. Both operands and the result have one type: an integer type
/// for the integer operators, `f32`/`f64` for the `F*` ones.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// Wrapping addition.
    Add,
    /// Wrapping subtraction.
    Sub,
    /// Wrapping multiplication (the low half).
    Mul,
    /// Unsigned division, rounding toward zero.
    UDiv,
    /// Signed division, rounding toward zero.
    SDiv,
    /// Unsigned remainder.
    URem,
    /// Signed remainder (sign of the dividend).
    SRem,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Shift left.
    Shl,
    /// Logical (zero-filling) shift right.
    LShr,
    /// Arithmetic (sign-filling) shift right.
    AShr,
    /// IEEE addition, round to nearest even.
    FAdd,
    /// IEEE subtraction.
    FSub,
    /// IEEE multiplication.
    FMul,
    /// IEEE division.
    FDiv,
    /// Remainder with the sign of the dividend, as C's `fmod`.
    FRem,
}

impl BinaryOp {
    /// Every binary operator.
    pub const ALL: [BinaryOp; 18] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::UDiv,
        BinaryOp::SDiv,
        BinaryOp::URem,
        BinaryOp::SRem,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Xor,
        BinaryOp::Shl,
        BinaryOp::LShr,
        BinaryOp::AShr,
        BinaryOp::FAdd,
        BinaryOp::FSub,
        BinaryOp::FMul,
        BinaryOp::FDiv,
        BinaryOp::FRem,
    ];

    /// The LLVM opcode name, which is also the device-IR name.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::UDiv => "udiv",
            BinaryOp::SDiv => "sdiv",
            BinaryOp::URem => "urem",
            BinaryOp::SRem => "srem",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
            BinaryOp::Shl => "shl",
            BinaryOp::LShr => "lshr",
            BinaryOp::AShr => "ashr",
            BinaryOp::FAdd => "fadd",
            BinaryOp::FSub => "fsub",
            BinaryOp::FMul => "fmul",
            BinaryOp::FDiv => "fdiv",
            BinaryOp::FRem => "frem",
        }
    }

    /// Whether the operator works on floats (otherwise on integers).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            BinaryOp::FAdd | BinaryOp::FSub | BinaryOp::FMul | BinaryOp::FDiv | BinaryOp::FRem
        )
    }
}

/// Unary operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Float negation: flips the sign bit, NaNs included. Printed as LLVM 7's
    /// `fsub -0.0, x` idiom, which NVPTX selects as `neg.f32`/`neg.f64`.
    FNeg,
}

/// Conversions. Each names the signedness it assumes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CastOp {
    /// Integer to a narrower integer: keeps the low bits.
    Trunc,
    /// Integer to a wider integer, filling with zeros.
    ZExt,
    /// Integer to a wider integer, filling with the sign bit.
    SExt,
    /// `f64` to `f32`, round to nearest even.
    FpTrunc,
    /// `f32` to `f64`, exact.
    FpExt,
    /// Float to unsigned integer, rounding toward zero. Out of range: undefined.
    FpToUi,
    /// Float to signed integer, rounding toward zero. Out of range: undefined.
    FpToSi,
    /// Unsigned integer to float, round to nearest even.
    UiToFp,
    /// Signed integer to float, round to nearest even.
    SiToFp,
    /// Pointer to integer: the address in the pointer's own space, truncated or
    /// zero-extended to the integer's width.
    PtrToInt,
    /// Integer to pointer: the inverse of `PtrToInt`, in the target's space.
    IntToPtr,
    /// Reinterprets the bits between two non-aggregate types of equal width. Between
    /// pointers it changes only the pointee type, never the address space.
    Bitcast,
    /// Converts a pointer between the generic space and a specific one (exactly one
    /// side generic), keeping the pointee type. Generic to specific is undefined if
    /// the address is not in that space.
    AddrSpaceCast,
}

impl CastOp {
    /// Every cast.
    pub const ALL: [CastOp; 13] = [
        CastOp::Trunc,
        CastOp::ZExt,
        CastOp::SExt,
        CastOp::FpTrunc,
        CastOp::FpExt,
        CastOp::FpToUi,
        CastOp::FpToSi,
        CastOp::UiToFp,
        CastOp::SiToFp,
        CastOp::PtrToInt,
        CastOp::IntToPtr,
        CastOp::Bitcast,
        CastOp::AddrSpaceCast,
    ];

    /// The LLVM opcode name, which is also the device-IR name.
    pub fn name(self) -> &'static str {
        match self {
            CastOp::Trunc => "trunc",
            CastOp::ZExt => "zext",
            CastOp::SExt => "sext",
            CastOp::FpTrunc => "fptrunc",
            CastOp::FpExt => "fpext",
            CastOp::FpToUi => "fptoui",
            CastOp::FpToSi => "fptosi",
            CastOp::UiToFp => "uitofp",
            CastOp::SiToFp => "sitofp",
            CastOp::PtrToInt => "ptrtoint",
            CastOp::IntToPtr => "inttoptr",
            CastOp::Bitcast => "bitcast",
            CastOp::AddrSpaceCast => "addrspacecast",
        }
    }
}

/// Integer (and pointer) comparison predicates.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntCC {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Unsigned greater than.
    Ugt,
    /// Unsigned greater or equal.
    Uge,
    /// Unsigned less than.
    Ult,
    /// Unsigned less or equal.
    Ule,
    /// Signed greater than.
    Sgt,
    /// Signed greater or equal.
    Sge,
    /// Signed less than.
    Slt,
    /// Signed less or equal.
    Sle,
}

impl IntCC {
    /// Every predicate.
    pub const ALL: [IntCC; 10] = [
        IntCC::Eq,
        IntCC::Ne,
        IntCC::Ugt,
        IntCC::Uge,
        IntCC::Ult,
        IntCC::Ule,
        IntCC::Sgt,
        IntCC::Sge,
        IntCC::Slt,
        IntCC::Sle,
    ];

    /// The LLVM predicate name.
    pub fn name(self) -> &'static str {
        match self {
            IntCC::Eq => "eq",
            IntCC::Ne => "ne",
            IntCC::Ugt => "ugt",
            IntCC::Uge => "uge",
            IntCC::Ult => "ult",
            IntCC::Ule => "ule",
            IntCC::Sgt => "sgt",
            IntCC::Sge => "sge",
            IntCC::Slt => "slt",
            IntCC::Sle => "sle",
        }
    }
}

/// Float comparison predicates. `O*` are false if either operand is NaN; `U*` are
/// true if either is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatCC {
    /// Ordered and equal.
    Oeq,
    /// Ordered and not equal.
    One,
    /// Ordered and greater than.
    Ogt,
    /// Ordered and greater or equal.
    Oge,
    /// Ordered and less than.
    Olt,
    /// Ordered and less or equal.
    Ole,
    /// Neither is NaN.
    Ord,
    /// Unordered or equal.
    Ueq,
    /// Unordered or not equal.
    Une,
    /// Unordered or greater than.
    Ugt,
    /// Unordered or greater or equal.
    Uge,
    /// Unordered or less than.
    Ult,
    /// Unordered or less or equal.
    Ule,
    /// Either is NaN.
    Uno,
}

impl FloatCC {
    /// Every predicate.
    pub const ALL: [FloatCC; 14] = [
        FloatCC::Oeq,
        FloatCC::One,
        FloatCC::Ogt,
        FloatCC::Oge,
        FloatCC::Olt,
        FloatCC::Ole,
        FloatCC::Ord,
        FloatCC::Ueq,
        FloatCC::Une,
        FloatCC::Ugt,
        FloatCC::Uge,
        FloatCC::Ult,
        FloatCC::Ule,
        FloatCC::Uno,
    ];

    /// The LLVM predicate name.
    pub fn name(self) -> &'static str {
        match self {
            FloatCC::Oeq => "oeq",
            FloatCC::One => "one",
            FloatCC::Ogt => "ogt",
            FloatCC::Oge => "oge",
            FloatCC::Olt => "olt",
            FloatCC::Ole => "ole",
            FloatCC::Ord => "ord",
            FloatCC::Ueq => "ueq",
            FloatCC::Une => "une",
            FloatCC::Ugt => "ugt",
            FloatCC::Uge => "uge",
            FloatCC::Ult => "ult",
            FloatCC::Ule => "ule",
            FloatCC::Uno => "uno",
        }
    }
}

/// PTX special registers, each read as an `i32`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpecialReg {
    /// `%tid.x`: the thread's index in its block.
    TidX,
    /// `%tid.y`.
    TidY,
    /// `%tid.z`.
    TidZ,
    /// `%ntid.x`: the block's dimension.
    NtidX,
    /// `%ntid.y`.
    NtidY,
    /// `%ntid.z`.
    NtidZ,
    /// `%ctaid.x`: the block's index in the grid.
    CtaidX,
    /// `%ctaid.y`.
    CtaidY,
    /// `%ctaid.z`.
    CtaidZ,
    /// `%nctaid.x`: the grid's dimension in blocks.
    NctaidX,
    /// `%nctaid.y`.
    NctaidY,
    /// `%nctaid.z`.
    NctaidZ,
    /// `%laneid`: the thread's lane in its warp.
    LaneId,
    /// `WARP_SZ`: the warp size (32).
    WarpSize,
}

impl SpecialReg {
    /// Every special register.
    pub const ALL: [SpecialReg; 14] = [
        SpecialReg::TidX,
        SpecialReg::TidY,
        SpecialReg::TidZ,
        SpecialReg::NtidX,
        SpecialReg::NtidY,
        SpecialReg::NtidZ,
        SpecialReg::CtaidX,
        SpecialReg::CtaidY,
        SpecialReg::CtaidZ,
        SpecialReg::NctaidX,
        SpecialReg::NctaidY,
        SpecialReg::NctaidZ,
        SpecialReg::LaneId,
        SpecialReg::WarpSize,
    ];

    /// The register's name as NVVM's `llvm.nvvm.read.ptx.sreg.*` intrinsics spell it
    /// (`tid.x`, `laneid`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SpecialReg::TidX => "tid.x",
            SpecialReg::TidY => "tid.y",
            SpecialReg::TidZ => "tid.z",
            SpecialReg::NtidX => "ntid.x",
            SpecialReg::NtidY => "ntid.y",
            SpecialReg::NtidZ => "ntid.z",
            SpecialReg::CtaidX => "ctaid.x",
            SpecialReg::CtaidY => "ctaid.y",
            SpecialReg::CtaidZ => "ctaid.z",
            SpecialReg::NctaidX => "nctaid.x",
            SpecialReg::NctaidY => "nctaid.y",
            SpecialReg::NctaidZ => "nctaid.z",
            SpecialReg::LaneId => "laneid",
            SpecialReg::WarpSize => "warpsize",
        }
    }
}

/// Memory orderings of atomic operations, with the PTX memory model's meaning.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ordering {
    /// `.relaxed`: atomic, no ordering.
    Relaxed,
    /// `.acquire`: loads and read-modify-writes.
    Acquire,
    /// `.release`: stores and read-modify-writes.
    Release,
    /// `.acq_rel`: read-modify-writes and fences.
    AcqRel,
    /// Sequentially consistent: `fence.sc` followed by the acquire, release or
    /// acq_rel form of the operation (the standard C++-to-PTX mapping).
    SeqCst,
}

impl Ordering {
    /// The device-IR name.
    pub fn name(self) -> &'static str {
        match self {
            Ordering::Relaxed => "relaxed",
            Ordering::Acquire => "acquire",
            Ordering::Release => "release",
            Ordering::AcqRel => "acq_rel",
            Ordering::SeqCst => "seq_cst",
        }
    }
}

/// The set of threads an atomic operation or fence synchronizes with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `.cta`: the threads of one block.
    Cta,
    /// `.gpu`: the threads of one device.
    Gpu,
    /// `.sys`: every thread of the system, the host included.
    Sys,
}

impl Scope {
    /// The PTX scope name without the dot (`cta`, `gpu`, `sys`).
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// Read-modify-write operations. Each returns the value memory held before.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// Store the operand.
    Xchg,
    /// Wrapping integer add.
    Add,
    /// Float add (`f32`/`f64` only).
    FAdd,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Signed maximum.
    SMax,
    /// Signed minimum.
    SMin,
    /// Unsigned maximum.
    UMax,
    /// Unsigned minimum.
    UMin,
}

impl RmwOp {
    /// Every operation.
    pub const ALL: [RmwOp; 10] = [
        RmwOp::Xchg,
        RmwOp::Add,
        RmwOp::FAdd,
        RmwOp::And,
        RmwOp::Or,
        RmwOp::Xor,
        RmwOp::SMax,
        RmwOp::SMin,
        RmwOp::UMax,
        RmwOp::UMin,
    ];

    /// The device-IR name.
    pub fn name(self) -> &'static str {
        match self {
            RmwOp::Xchg => "xchg",
            RmwOp::Add => "add",
            RmwOp::FAdd => "fadd",
            RmwOp::And => "and",
            RmwOp::Or => "or",
            RmwOp::Xor => "xor",
            RmwOp::SMax => "smax",
            RmwOp::SMin => "smin",
            RmwOp::UMax => "umax",
            RmwOp::UMin => "umin",
        }
    }
}

/// An instruction. Instructions that produce a value have exactly one result,
/// whose type is recorded in the function's value table.
///
/// Operands are [`Value`]s of the same function. Every `Value` used must be
/// defined by an instruction or block parameter that dominates the use.
#[derive(Clone, Debug, PartialEq)]
pub enum InstData {
    // ----- constants: no effect, a value of type `ty`
    /// An integer constant. `imm` holds the bit pattern in its low `width` bits;
    /// the bits above are zero.
    Iconst {
        /// The integer type.
        ty: Ty,
        /// The bit pattern.
        imm: u128,
    },
    /// A float constant: `bits` is the IEEE bit pattern (low 32 bits for `f32`).
    Fconst {
        /// `f32` or `f64`.
        ty: Ty,
        /// The bit pattern.
        bits: u64,
    },
    /// The null pointer (address 0) of pointer type `ty`.
    Null {
        /// The pointer type.
        ty: Ty,
    },
    /// An undefined value of `ty`: each use may see any bit pattern.
    Undef {
        /// The type.
        ty: Ty,
    },
    /// The address of `global`, typed as `ty`: a pointer, in the global's own
    /// address space, to any pointee. Several `GlobalAddr`s with different pointee
    /// types are several typed views of one symbol.
    GlobalAddr {
        /// The global.
        global: GlobalId,
        /// The pointer type of the result.
        ty: Ty,
    },

    // ----- memory
    /// A fresh stack slot for one `ty`, live until the function returns. The result
    /// is a *generic* pointer to `ty`; cast it to `Local` to use the local space.
    Alloca {
        /// The slot's type.
        ty: Ty,
        /// The slot's alignment: a power of two.
        align: u32,
    },
    /// Reads a `ty` through `ptr`, whose pointee must be `ty`. Aggregates are read
    /// whole. An address that is not a multiple of `align`, or not inside live
    /// memory of its space, is undefined behaviour.
    Load {
        /// The loaded type.
        ty: Ty,
        /// The address.
        ptr: Value,
        /// The alignment the access may assume: a power of two.
        align: u32,
        /// Volatile or not.
        flags: MemFlags,
    },
    /// Writes `value` through `ptr`, whose pointee must be `value`'s type. The same
    /// alignment and liveness rules as [`InstData::Load`] apply.
    Store {
        /// The address.
        ptr: Value,
        /// The stored value.
        value: Value,
        /// The alignment the access may assume: a power of two.
        align: u32,
        /// Volatile or not.
        flags: MemFlags,
    },
    /// Address arithmetic by type (LLVM's `getelementptr`, without `inbounds`):
    /// `base + i0 * size_of(pointee) + ...`, each later index stepping into an array
    /// element or struct field (see [`crate::layout::gep_path`]). The arithmetic
    /// wraps; the result is in the base's address space, typed as a pointer to the
    /// type reached.
    Gep {
        /// The base pointer.
        base: Value,
        /// The indices; the first scales by the pointee's size.
        indices: Vec<GepIndex>,
    },
    /// `base` plus `offset` bytes (a signed `i64`), wrapping, with `base`'s type.
    ByteOffset {
        /// The base pointer.
        base: Value,
        /// The signed byte offset, an `i64`.
        offset: Value,
    },
    /// A conversion of `value` to `ty`; see [`CastOp`].
    Cast {
        /// The conversion.
        op: CastOp,
        /// The converted value.
        value: Value,
        /// The result type.
        ty: Ty,
    },

    // ----- arithmetic
    /// `lhs op rhs`; see [`BinaryOp`].
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        lhs: Value,
        /// The right operand.
        rhs: Value,
    },
    /// `op value`; see [`UnaryOp`].
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        value: Value,
    },
    /// Compares two integers or two pointers of one type; yields an `i1`.
    Icmp {
        /// The predicate.
        cond: IntCC,
        /// The left operand.
        lhs: Value,
        /// The right operand.
        rhs: Value,
    },
    /// Compares two floats of one type; yields an `i1`.
    Fcmp {
        /// The predicate.
        cond: FloatCC,
        /// The left operand.
        lhs: Value,
        /// The right operand.
        rhs: Value,
    },
    /// `cond ? if_true : if_false`, where `cond` is an `i1`.
    Select {
        /// The condition.
        cond: Value,
        /// The value when `cond` is 1.
        if_true: Value,
        /// The value when `cond` is 0.
        if_false: Value,
    },
    /// Calls a device function (never a kernel). Has a result when the callee
    /// returns a value.
    Call {
        /// The callee.
        func: FuncId,
        /// One argument per parameter.
        args: Vec<Value>,
    },

    // ----- terminators: exactly one ends every block
    /// Unconditional branch.
    Jump {
        /// The target.
        dest: BlockCall,
    },
    /// Two-way branch on an `i1`.
    Brif {
        /// The condition.
        cond: Value,
        /// Taken when `cond` is 1.
        then_dest: BlockCall,
        /// Taken when `cond` is 0.
        else_dest: BlockCall,
    },
    /// Multi-way branch on an integer: the first case equal to `value`, else
    /// `default`. Case values are distinct bit patterns of `value`'s width.
    Switch {
        /// The scrutinee.
        value: Value,
        /// Taken when no case matches.
        default: BlockCall,
        /// (bit pattern, target) pairs.
        cases: Vec<(u128, BlockCall)>,
    },
    /// Returns from the function, with a value exactly when its signature has one.
    Return {
        /// The returned value.
        value: Option<Value>,
    },
    /// Reaching this is undefined behaviour.
    Unreachable,

    // ----- GPU
    /// Reads a special register; yields an `i32`.
    SpecialReg {
        /// The register.
        reg: SpecialReg,
    },
    /// `bar.sync 0` (`__syncthreads`): waits for every thread of the block, and
    /// orders their memory accesses around it at block scope.
    Barrier,
    /// An atomic load of `ty` (`i32` or `i64`) through `ptr` (generic, global or
    /// shared). Ordering: relaxed, acquire or seq_cst.
    AtomicLoad {
        /// The loaded type.
        ty: Ty,
        /// The address.
        ptr: Value,
        /// The ordering.
        ordering: Ordering,
        /// The scope.
        scope: Scope,
    },
    /// An atomic store (`i32` or `i64`). Ordering: relaxed, release or seq_cst.
    AtomicStore {
        /// The address.
        ptr: Value,
        /// The stored value.
        value: Value,
        /// The ordering.
        ordering: Ordering,
        /// The scope.
        scope: Scope,
    },
    /// An atomic read-modify-write on `i32`/`i64` (`f32`/`f64` for `FAdd`); yields
    /// the old value. Any ordering.
    AtomicRmw {
        /// The operation.
        op: RmwOp,
        /// The address.
        ptr: Value,
        /// The operand.
        value: Value,
        /// The ordering.
        ordering: Ordering,
        /// The scope.
        scope: Scope,
    },
    /// An atomic compare-and-swap on `i32`/`i64`: stores `new` if memory equals
    /// `expected`; yields the old value either way. Any ordering.
    AtomicCas {
        /// The address.
        ptr: Value,
        /// The value compared with memory.
        expected: Value,
        /// The value stored on a match.
        new: Value,
        /// The ordering.
        ordering: Ordering,
        /// The scope.
        scope: Scope,
    },
    /// A fence: acquire, release and acq_rel fences are `fence.acq_rel`; seq_cst is
    /// `fence.sc`. Relaxed is refused.
    Fence {
        /// The ordering.
        ordering: Ordering,
        /// The scope.
        scope: Scope,
    },
    /// Inline PTX, as an LLVM inline-asm call: `$0`, `$1`, ... in `template` name the
    /// output (if any) and then the inputs, as `constraints` declares them
    /// (`"=r,l,~{memory}"`). An interpreter cannot run arbitrary PTX: prefer the
    /// structured atomics above, which lower to inline PTX themselves.
    InlineAsm {
        /// The PTX text.
        template: String,
        /// LLVM constraint string: at most one output (`=r`), one input per
        /// argument, then clobbers (`~{memory}`).
        constraints: String,
        /// The inputs.
        args: Vec<Value>,
        /// The output type, if any.
        ret: Option<Ty>,
        /// Whether the asm has effects beyond its output (`sideeffect`).
        side_effects: bool,
    },
}

impl InstData {
    /// Whether the instruction ends a block.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstData::Jump { .. }
                | InstData::Brif { .. }
                | InstData::Switch { .. }
                | InstData::Return { .. }
                | InstData::Unreachable
        )
    }

    /// Whether the instruction is a constant (no effect, printed inline at uses).
    pub fn is_constant(&self) -> bool {
        matches!(
            self,
            InstData::Iconst { .. }
                | InstData::Fconst { .. }
                | InstData::Null { .. }
                | InstData::Undef { .. }
                | InstData::GlobalAddr { .. }
        )
    }

    /// The branch targets, in order (empty for non-branches).
    pub fn branch_targets(&self) -> Vec<&BlockCall> {
        match self {
            InstData::Jump { dest } => vec![dest],
            InstData::Brif {
                then_dest,
                else_dest,
                ..
            } => vec![then_dest, else_dest],
            InstData::Switch { default, cases, .. } => std::iter::once(default)
                .chain(cases.iter().map(|(_, c)| c))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every value operand, in order, branch arguments included.
    pub fn operands(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_operand(|v| out.push(v));
        out
    }

    /// Calls `f` on every value operand, in order, branch arguments included.
    pub fn for_each_operand(&self, mut f: impl FnMut(Value)) {
        match self {
            InstData::Iconst { .. }
            | InstData::Fconst { .. }
            | InstData::Null { .. }
            | InstData::Undef { .. }
            | InstData::GlobalAddr { .. }
            | InstData::Alloca { .. }
            | InstData::Unreachable
            | InstData::SpecialReg { .. }
            | InstData::Barrier
            | InstData::Fence { .. } => {}
            InstData::Load { ptr, .. } | InstData::AtomicLoad { ptr, .. } => f(*ptr),
            InstData::Store { ptr, value, .. }
            | InstData::AtomicStore { ptr, value, .. }
            | InstData::AtomicRmw { ptr, value, .. } => {
                f(*ptr);
                f(*value);
            }
            InstData::AtomicCas {
                ptr, expected, new, ..
            } => {
                f(*ptr);
                f(*expected);
                f(*new);
            }
            InstData::Gep { base, indices } => {
                f(*base);
                for index in indices {
                    if let GepIndex::Value(v) = index {
                        f(*v);
                    }
                }
            }
            InstData::ByteOffset { base, offset } => {
                f(*base);
                f(*offset);
            }
            InstData::Cast { value, .. } | InstData::Unary { value, .. } => f(*value),
            InstData::Binary { lhs, rhs, .. }
            | InstData::Icmp { lhs, rhs, .. }
            | InstData::Fcmp { lhs, rhs, .. } => {
                f(*lhs);
                f(*rhs);
            }
            InstData::Select {
                cond,
                if_true,
                if_false,
            } => {
                f(*cond);
                f(*if_true);
                f(*if_false);
            }
            InstData::Call { args, .. } | InstData::InlineAsm { args, .. } => {
                args.iter().copied().for_each(f)
            }
            InstData::Jump { dest } => dest.args.iter().copied().for_each(f),
            InstData::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                f(*cond);
                then_dest.args.iter().copied().for_each(&mut f);
                else_dest.args.iter().copied().for_each(&mut f);
            }
            InstData::Switch {
                value,
                default,
                cases,
            } => {
                f(*value);
                default.args.iter().copied().for_each(&mut f);
                for (_, call) in cases {
                    call.args.iter().copied().for_each(&mut f);
                }
            }
            InstData::Return { value } => {
                if let Some(v) = value {
                    f(*v)
                }
            }
        }
    }
}
