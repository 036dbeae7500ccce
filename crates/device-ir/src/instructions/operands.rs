//! The operand enums of instructions: memory flags, block calls, GEP indices,
//! operators, comparison codes, special registers and atomic orderings (the
//! warp collectives' are [`super::warp_ops`]).

use crate::entities::{Block, Value};

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
    /// `%lanemask_lt`: the lanes of the warp below this one.
    LaneMaskLt,
    /// `%lanemask_le`: the lanes at or below this one.
    LaneMaskLe,
    /// `%lanemask_eq`: this lane alone.
    LaneMaskEq,
    /// `%lanemask_ge`: the lanes at or above this one.
    LaneMaskGe,
    /// `%lanemask_gt`: the lanes above this one.
    LaneMaskGt,
}

impl SpecialReg {
    /// Every special register.
    pub const ALL: [SpecialReg; 19] = [
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
        SpecialReg::LaneMaskLt,
        SpecialReg::LaneMaskLe,
        SpecialReg::LaneMaskEq,
        SpecialReg::LaneMaskGe,
        SpecialReg::LaneMaskGt,
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
            SpecialReg::LaneMaskLt => "lanemask.lt",
            SpecialReg::LaneMaskLe => "lanemask.le",
            SpecialReg::LaneMaskEq => "lanemask.eq",
            SpecialReg::LaneMaskGe => "lanemask.ge",
            SpecialReg::LaneMaskGt => "lanemask.gt",
        }
    }

    /// The value of a lane-mask register for lane `lane` (0..32), or `None`
    /// for the other registers.
    pub fn lane_mask(self, lane: u32) -> Option<u32> {
        let eq = 1u32 << (lane & 31);
        match self {
            SpecialReg::LaneMaskLt => Some(eq - 1),
            SpecialReg::LaneMaskLe => Some(eq | (eq - 1)),
            SpecialReg::LaneMaskEq => Some(eq),
            SpecialReg::LaneMaskGe => Some(!(eq - 1)),
            SpecialReg::LaneMaskGt => Some(!(eq | (eq - 1))),
            _ => None,
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
