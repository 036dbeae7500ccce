//! The prelude's intrinsics (`mir_import::prelude::Intrinsic`): special
//! registers, barriers and warp collectives, each its device instruction.

use device_ir::{
    AddressSpace, BinaryOp, MatchMode, Ordering as DOrd, ReduceOp, RmwOp, Scope, ShuffleMode,
    SpecialReg, Value, VoteMode,
};
use mir_import::model::{ConstOperand, Operand, Scalar};
use mir_import::prelude::{Intrinsic, LaneMaskKind, MatchKind, ReduceKind, ShuffleKind, VoteKind};

use super::FnLower;
use super::values::Val;
use crate::diag::Diagnostic;

/// The largest alignment dynamic shared memory may ask for: 1024 bytes, the
/// most any use needs (TMA's 128-byte swizzle asks for 1024), and what the
/// host simulation gives.
const MAX_DYNAMIC_SHARED_ALIGN: u128 = 1024;

impl FnLower<'_, '_> {
    pub(super) fn intrinsic(
        &mut self,
        i: Intrinsic,
        args: &[Operand],
    ) -> Result<Option<Val>, Diagnostic> {
        // The axis is 0, 1 or 2 (`INTRINSICS` lists no other); anything past
        // y is z.
        let reg = |axis: u8, [x, y, z]: [SpecialReg; 3]| match axis {
            0 => x,
            1 => y,
            _ => z,
        };
        use SpecialReg as S;
        let r = match i {
            Intrinsic::ThreadIdx(a) => reg(a, [S::TidX, S::TidY, S::TidZ]),
            Intrinsic::BlockIdx(a) => reg(a, [S::CtaidX, S::CtaidY, S::CtaidZ]),
            Intrinsic::BlockDim(a) => reg(a, [S::NtidX, S::NtidY, S::NtidZ]),
            Intrinsic::GridDim(a) => reg(a, [S::NctaidX, S::NctaidY, S::NctaidZ]),
            Intrinsic::LaneId => S::LaneId,
            Intrinsic::SyncThreads | Intrinsic::BarrierWait => {
                self.b.barrier();
                return Ok(Some(Val::Zst));
            }
            Intrinsic::Shuffle(kind) => {
                let ([mask, value, lane] | [mask, value, lane, _]) = args else {
                    return Err(self.unsupported(
                        "a warp shuffle takes (mask, value, lane) or (mask, value, lane, width)",
                    ));
                };
                let mode = match kind {
                    ShuffleKind::Idx => ShuffleMode::Idx,
                    ShuffleKind::Up => ShuffleMode::Up,
                    ShuffleKind::Down => ShuffleMode::Down,
                    ShuffleKind::Xor => ShuffleMode::Bfly,
                };
                let (m, v, l) = (
                    self.scalar_operand(mask)?,
                    self.scalar_operand(value)?,
                    self.scalar_operand(lane)?,
                );
                let clamp = match args.get(3) {
                    // A constant width (the usual case) is an immediate `c`.
                    Some(Operand::Const(ConstOperand::Scalar(Scalar::Int { bits, .. }))) => {
                        let c = mode.clamp_for_width(*bits as u32);
                        Some(self.iconst(32, i128::from(c)))
                    }
                    Some(width) => {
                        let w = self.scalar_operand(width)?;
                        Some(self.shuffle_clamp(mode, w))
                    }
                    None => None,
                };
                return Ok(Some(Val::Immediate(
                    self.b.shuffle_with_clamp(mode, m, v, l, clamp),
                )));
            }
            Intrinsic::Vote(kind) => {
                let [mask, pred] = args else {
                    return Err(self.unsupported("a warp vote takes (mask, predicate)"));
                };
                let mode = match kind {
                    VoteKind::All => VoteMode::All,
                    VoteKind::Any => VoteMode::Any,
                    VoteKind::Ballot => VoteMode::Ballot,
                };
                let (m, p) = (self.scalar_operand(mask)?, self.scalar_operand(pred)?);
                return Ok(Some(Val::Immediate(self.b.vote(mode, m, p))));
            }
            Intrinsic::SyncWarp => {
                let [mask] = args else {
                    return Err(self.unsupported("`sync_warp` takes a mask"));
                };
                let m = self.scalar_operand(mask)?;
                self.b.warp_sync(m);
                return Ok(Some(Val::Zst));
            }
            Intrinsic::ActiveMask => return Ok(Some(Val::Immediate(self.b.active_mask()))),
            Intrinsic::DynamicShared => return self.dynamic_shared(args).map(Some),
            Intrinsic::LaneMask(kind) => match kind {
                LaneMaskKind::Lt => S::LaneMaskLt,
                LaneMaskKind::Le => S::LaneMaskLe,
                LaneMaskKind::Eq => S::LaneMaskEq,
                LaneMaskKind::Ge => S::LaneMaskGe,
                LaneMaskKind::Gt => S::LaneMaskGt,
            },
            Intrinsic::Reduce(kind) => {
                let [mask, value] = args else {
                    return Err(self.unsupported("a warp reduction takes (mask, value)"));
                };
                let op = match kind {
                    ReduceKind::Add => ReduceOp::Add,
                    ReduceKind::Min => ReduceOp::Min,
                    ReduceKind::Max => ReduceOp::Max,
                    ReduceKind::UMin => ReduceOp::UMin,
                    ReduceKind::UMax => ReduceOp::UMax,
                    ReduceKind::And => ReduceOp::And,
                    ReduceKind::Or => ReduceOp::Or,
                    ReduceKind::Xor => ReduceOp::Xor,
                };
                let (m, v) = (self.scalar_operand(mask)?, self.scalar_operand(value)?);
                return Ok(Some(Val::Immediate(self.b.warp_reduce(op, m, v))));
            }
            Intrinsic::Match(kind) => {
                let [mask, value] = args else {
                    return Err(self.unsupported("a warp match takes (mask, value)"));
                };
                let mode = match kind {
                    MatchKind::Any => MatchMode::Any,
                    MatchKind::All => MatchMode::All,
                };
                let (m, v) = (self.scalar_operand(mask)?, self.scalar_operand(value)?);
                return Ok(Some(Val::Immediate(self.b.warp_match(mode, m, v))));
            }
            Intrinsic::AtomicFAdd => {
                let [ptr, value] = args else {
                    return Err(self.unsupported("a float atomic add takes (pointer, value)"));
                };
                let v = self.scalar_operand(value)?;
                let vt = self.b.value_ty(v);
                let p = self.scalar_operand(ptr)?;
                let p = self.b.ptr_bitcast(p, vt);
                // CUDA's `atomicAdd`: relaxed, at device scope.
                let old = self
                    .b
                    .atomic_rmw(RmwOp::FAdd, p, v, DOrd::Relaxed, Scope::Gpu);
                return Ok(Some(Val::Immediate(old)));
            }
        };
        Ok(Some(Val::Immediate(self.b.special_reg(r))))
    }

    /// PTX's `c` for a run-time `width` (`ShuffleMode::clamp_for_width`
    /// in device code): `(32 - width) << 8`, with the clamp 31 except for
    /// `up`.
    fn shuffle_clamp(&mut self, mode: ShuffleMode, width: Value) -> Value {
        let thirty_two = self.iconst(32, 32);
        let segments = self.b.binary(BinaryOp::Sub, thirty_two, width);
        let eight = self.iconst(32, 8);
        let segments = self.b.binary(BinaryOp::Shl, segments, eight);
        let clamp = mode.clamp_for_width(32);
        if clamp == 0 {
            return segments;
        }
        let clamp = self.iconst(32, i128::from(clamp));
        self.b.binary(BinaryOp::Or, segments, clamp)
    }

    /// `dynamic_shared_memory(ALIGN)`: a generic pointer to the block's
    /// dynamic shared memory. The alignment must be a constant power of two
    /// (`DynamicSharedArray`'s `ALIGN` once rustc has inlined `get`): it
    /// becomes the `extern` array's alignment, which the PTX declares.
    fn dynamic_shared(&mut self, args: &[Operand]) -> Result<Val, Diagnostic> {
        let [align] = args else {
            return Err(self.unsupported("`dynamic_shared_memory` takes an alignment"));
        };
        let align = match align {
            Operand::Const(ConstOperand::Scalar(Scalar::Int { bits, .. })) => *bits,
            other => {
                return Err(self.unsupported(format!(
                    "the alignment of dynamic shared memory must be a constant (`DynamicSharedArray`'s `ALIGN`), not `{other:?}`"
                )));
            }
        };
        if !align.is_power_of_two() || align > MAX_DYNAMIC_SHARED_ALIGN {
            return Err(self.unsupported(format!(
                "dynamic shared memory aligned to {align}: the alignment must be a power of two up to {MAX_DYNAMIC_SHARED_ALIGN}"
            )));
        }
        let p = self.b.dynamic_shared(align as u32);
        Ok(Val::Immediate(
            self.b.addrspacecast(p, AddressSpace::Generic),
        ))
    }
}
