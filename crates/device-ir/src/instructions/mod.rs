//! Instructions and their operand enums.
//!
//! Semantics are stated here once, for the printer, the interpreter and the
//! lowering alike. Integers are two's-complement bit patterns; an operation that
//! cares about sign says so in its name (`SDiv`/`UDiv`, `Slt`/`Ult`, `SExt`/`ZExt`).
//! Integer `Add`, `Sub`, `Mul` and `Shl` wrap. Division or remainder by zero,
//! signed `MIN / -1`, and a shift by at least the bit width are undefined behaviour
//! (LLVM's poison); an interpreter should report them.

use crate::entities::{FuncId, GlobalId, Ty, Value};

mod int_fn;
mod math_fn;
mod operands;
mod warp_ops;

pub use int_fn::IntFn;
pub use math_fn::MathFn;
pub use operands::*;
pub use warp_ops::*;

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
    /// The address of function `func` as a value (Rust's `fn` pointer): a
    /// generic pointer of type `ty`, which [`InstData::CallIndirect`] may
    /// call or which may only be compared (`core::ptr::fn_addr_eq`).
    FuncAddr {
        /// The function.
        func: FuncId,
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
    /// Calls the device function whose address is `callee` (a generic
    /// pointer made by [`InstData::FuncAddr`]), as a function of signature
    /// `sig`; has a result when `sig` has one. Calling anything else, or a
    /// function whose signature is not `sig`, is undefined behaviour, which
    /// an interpreter should report.
    CallIndirect {
        /// The function's address.
        callee: Value,
        /// The signature the call assumes.
        sig: crate::Signature,
        /// One argument per parameter of `sig`.
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
    /// The start of the block's dynamic shared memory (CUDA's
    /// `extern __shared__`): as many bytes as the launch asks for, after the
    /// static shared globals, aligned to at least `align`; yields an
    /// `i8 addrspace(3)*`. Every one in a module names the same memory,
    /// aligned to the largest `align` among them
    /// ([`crate::Module::dynamic_shared_align`]).
    DynamicShared {
        /// The alignment the pointer must have: a power of two.
        align: u32,
    },
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
    /// A float math function of `f32`s or `f64`s (see [`MathFn`]): as many
    /// operands as [`MathFn::arity`], all of the result's type except the
    /// `i32` exponent of `powi`.
    Math {
        /// The function.
        func: MathFn,
        /// The operands.
        args: Vec<Value>,
    },
    /// An integer function (see [`IntFn`]): as many operands as
    /// [`IntFn::arity`], all of the result's integer type.
    IntFn {
        /// The function.
        func: IntFn,
        /// The operands.
        args: Vec<Value>,
    },
    /// A warp shuffle of an `i32`: every lane of the warp named in `mask`
    /// executes it together and gets `value` from the lane that `mode` picks
    /// with `lane`; yields an `i32`.
    Shuffle {
        /// How the source lane is chosen.
        mode: ShuffleMode,
        /// The participating lanes (`i32`).
        mask: Value,
        /// The value sent (`i32`).
        value: Value,
        /// The lane operand: index, delta or xor mask (`i32`).
        lane: Value,
        /// PTX's `c` operand (`i32`): segments of the warp and the clamp
        /// ([`ShuffleMode::clamp_for_width`]); `None` for the full warp
        /// ([`ShuffleMode::full_warp_clamp`]).
        clamp: Option<Value>,
    },
    /// A warp vote over an `i1` predicate, taken together by the lanes of `mask`.
    Vote {
        /// What is computed.
        mode: VoteMode,
        /// The participating lanes (`i32`).
        mask: Value,
        /// The predicate (`i1`).
        pred: Value,
    },
    /// A warp reduction of an `i32` (`__reduce_*_sync`): every lane of `mask`
    /// executes it together and gets `op` folded over all their values;
    /// yields an `i32`.
    WarpReduce {
        /// What is computed.
        op: ReduceOp,
        /// The participating lanes (`i32`).
        mask: Value,
        /// This lane's value (`i32`).
        value: Value,
    },
    /// A warp match of an `i32` or `i64` (`__match_*_sync`), taken together
    /// by the lanes of `mask`; yields an `i32` lane mask.
    WarpMatch {
        /// What is computed.
        mode: MatchMode,
        /// The participating lanes (`i32`).
        mask: Value,
        /// This lane's value (`i32` or `i64`).
        value: Value,
    },
    /// `__syncwarp(mask)`: the lanes of `mask` wait for each other, and their
    /// memory accesses are ordered around it.
    WarpSync {
        /// The participating lanes (`i32`).
        mask: Value,
    },
    /// `__activemask()`: the lanes of the warp executing it together; yields
    /// an `i32`.
    ActiveMask,
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

    /// Whether the instruction is a collective of the block or the warp: a
    /// barrier, or a warp operation whose result or effect depends on which
    /// lanes reach it together (`activemask` included). No transformation
    /// may make it depend on more control flow than it does.
    pub fn is_convergent(&self) -> bool {
        matches!(
            self,
            InstData::Barrier
                | InstData::Shuffle { .. }
                | InstData::Vote { .. }
                | InstData::WarpReduce { .. }
                | InstData::WarpMatch { .. }
                | InstData::WarpSync { .. }
                | InstData::ActiveMask
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
                | InstData::FuncAddr { .. }
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
            | InstData::FuncAddr { .. }
            | InstData::Alloca { .. }
            | InstData::Unreachable
            | InstData::SpecialReg { .. }
            | InstData::Barrier
            | InstData::ActiveMask
            | InstData::DynamicShared { .. }
            | InstData::Fence { .. } => {}
            InstData::Shuffle {
                mask,
                value,
                lane,
                clamp,
                ..
            } => {
                f(*mask);
                f(*value);
                f(*lane);
                if let Some(c) = clamp {
                    f(*c);
                }
            }
            InstData::Vote { mask, pred, .. } => {
                f(*mask);
                f(*pred);
            }
            InstData::WarpReduce { mask, value, .. } | InstData::WarpMatch { mask, value, .. } => {
                f(*mask);
                f(*value);
            }
            InstData::WarpSync { mask } => f(*mask),
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
            InstData::CallIndirect { callee, args, .. } => {
                f(*callee);
                args.iter().copied().for_each(f);
            }
            InstData::Call { args, .. }
            | InstData::InlineAsm { args, .. }
            | InstData::Math { args, .. }
            | InstData::IntFn { args, .. } => args.iter().copied().for_each(f),
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
