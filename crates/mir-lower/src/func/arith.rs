//! Operators: integer and float binary operations, pointer comparison and
//! offset, checked and saturating arithmetic (128-bit included), unary
//! operations, and bit functions on `i128` from their 64-bit halves.

use device_ir::{BinaryOp, CastOp, FloatCC, IntCC, IntFn, UnaryOp, Value};
use mir_import::model::{BinOp, Operand, Ty, UnOp};

use super::FnLower;
use super::rvalue::int_bits;
use super::values::Val;
use crate::diag::Diagnostic;

impl FnLower<'_, '_> {
    /// `f` on an `i128`, from its 64-bit halves: libNVVM's LLVM refuses
    /// `llvm.bswap.i128` ("need i16, i32, or i64"; `sha2`'s SHA-512 writes
    /// its `u128` length big-endian), and its other bit intrinsics at 128
    /// bits are not relied on either. Bit counts come back as `i128`.
    pub(super) fn int_fn_128(&mut self, f: IntFn, vals: &[Value]) -> Value {
        let x = vals[0];
        let t128 = self.b.value_ty(x);
        let t64 = self.b.types().i64();
        let c64 = self.b.iconst(t128, 64);
        let lo = self.b.cast(CastOp::Trunc, x, t64);
        let high = self.b.binary(BinaryOp::LShr, x, c64);
        let hi = self.b.cast(CastOp::Trunc, high, t64);
        let wide = |s: &mut Self, v: Value| s.b.cast(CastOp::ZExt, v, t128);
        match f {
            // The halves' bytes (bits) reversed, and the halves swapped.
            IntFn::SwapBytes | IntFn::ReverseBits => {
                let new_hi = self.b.int_fn(f, &[lo]);
                let new_lo = self.b.int_fn(f, &[hi]);
                let h = wide(self, new_hi);
                let h = self.b.binary(BinaryOp::Shl, h, c64);
                let l = wide(self, new_lo);
                self.b.binary(BinaryOp::Or, h, l)
            }
            IntFn::CountOnes => {
                let a = self.b.int_fn(f, &[lo]);
                let b = self.b.int_fn(f, &[hi]);
                let n = self.b.binary(BinaryOp::Add, a, b);
                wide(self, n)
            }
            // From the half that decides, plus 64 when it is zero.
            IntFn::LeadingZeros | IntFn::TrailingZeros => {
                let (first, second) = if f == IntFn::LeadingZeros {
                    (hi, lo)
                } else {
                    (lo, hi)
                };
                let zero = self.b.iconst(t64, 0);
                let k64 = self.b.iconst(t64, 64);
                let first_zero = self.b.icmp(IntCC::Eq, first, zero);
                let in_first = self.b.int_fn(f, &[first]);
                let in_second = self.b.int_fn(f, &[second]);
                let past = self.b.binary(BinaryOp::Add, in_second, k64);
                let n = self.b.select(first_zero, past, in_first);
                wide(self, n)
            }
            // `x << n | x >> (128 - n)`, both counts modulo 128 (a count of
            // zero gives `x | x`).
            IntFn::RotateLeft | IntFn::RotateRight => {
                let m127 = self.b.iconst(t128, 127);
                let c128 = self.b.iconst(t128, 128);
                let n = self.b.binary(BinaryOp::And, vals[1], m127);
                let back = self.b.binary(BinaryOp::Sub, c128, n);
                let back = self.b.binary(BinaryOp::And, back, m127);
                let (toward, away) = if f == IntFn::RotateLeft {
                    (BinaryOp::Shl, BinaryOp::LShr)
                } else {
                    (BinaryOp::LShr, BinaryOp::Shl)
                };
                let a = self.b.binary(toward, x, n);
                let b = self.b.binary(away, x, back);
                self.b.binary(BinaryOp::Or, a, b)
            }
        }
    }

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        a: &Operand,
        b: &Operand,
    ) -> Result<Val, Diagnostic> {
        let ty = self.operand_ty(a)?;
        let x = self.read_operand(a)?;
        let y = self.read_operand(b)?;
        if op == BinOp::Offset {
            let (Val::Immediate(p), Val::Immediate(n)) = (x, y) else {
                return Err(self.unsupported("offset"));
            };
            let pointee = ty
                .pointee()
                .cloned()
                .ok_or_else(|| self.unsupported("offset"))?;
            let size = self.layout_of(&pointee)?.size;
            let s = self.iconst(64, size as i128);
            let off = self.b.imul(n, s);
            return Ok(Val::Immediate(self.b.byte_offset(p, off)));
        }
        let (Val::Immediate(mut x), Val::Immediate(mut y)) = (x, y) else {
            return Err(self.internal(&format!("{op:?} on non-scalars")));
        };
        if matches!(ty, Ty::Float(_)) {
            return self.float_binary(op, x, y);
        }
        if let Some(pointee) = ty.pointee() {
            // A pointer to a struct nothing showed sized or unsized is
            // thin here; if it were fat, its length would compare too.
            if self.sh.layouts.table.sizedness(pointee).is_none() {
                return Err(self.unsupported(format!(
                    "comparison of pointers to `{pointee}`, whose sizedness the layout probe could not learn (a pointer to a dynamically sized struct compares its length too)"
                )));
            }
            // Thin pointers compare by address.
            let t = self.b.types().i64();
            x = self.b.cast(CastOp::PtrToInt, x, t);
            y = self.b.cast(CastOp::PtrToInt, y, t);
        }
        let (bits, signed) = int_bits(&ty).unwrap_or((64, false));
        // Shift amounts may have another width; Rust masks them to the width.
        if matches!(
            op,
            BinOp::Shl | BinOp::Shr | BinOp::ShlUnchecked | BinOp::ShrUnchecked
        ) {
            let t = self.b.types().int(bits);
            y = self.zext_or_trunc(y, t);
            let mask = self.iconst(bits, i128::from(bits - 1));
            y = self.b.binary(BinaryOp::And, y, mask);
        }
        let cmp = |c: IntCC, cu: IntCC| if signed { c } else { cu };
        let v = match op {
            BinOp::Add | BinOp::AddUnchecked => self.b.binary(BinaryOp::Add, x, y),
            BinOp::Sub | BinOp::SubUnchecked => self.b.binary(BinaryOp::Sub, x, y),
            BinOp::Mul | BinOp::MulUnchecked => self.b.binary(BinaryOp::Mul, x, y),
            BinOp::Div => self.b.binary(
                if signed {
                    BinaryOp::SDiv
                } else {
                    BinaryOp::UDiv
                },
                x,
                y,
            ),
            BinOp::Rem => self.b.binary(
                if signed {
                    BinaryOp::SRem
                } else {
                    BinaryOp::URem
                },
                x,
                y,
            ),
            BinOp::BitAnd => self.b.binary(BinaryOp::And, x, y),
            BinOp::BitOr => self.b.binary(BinaryOp::Or, x, y),
            BinOp::BitXor => self.b.binary(BinaryOp::Xor, x, y),
            BinOp::Shl | BinOp::ShlUnchecked => self.b.binary(BinaryOp::Shl, x, y),
            BinOp::Shr | BinOp::ShrUnchecked => self.b.binary(
                if signed {
                    BinaryOp::AShr
                } else {
                    BinaryOp::LShr
                },
                x,
                y,
            ),
            BinOp::Eq => self.b.icmp(IntCC::Eq, x, y),
            BinOp::Ne => self.b.icmp(IntCC::Ne, x, y),
            BinOp::Lt => self.b.icmp(cmp(IntCC::Slt, IntCC::Ult), x, y),
            BinOp::Le => self.b.icmp(cmp(IntCC::Sle, IntCC::Ule), x, y),
            BinOp::Gt => self.b.icmp(cmp(IntCC::Sgt, IntCC::Ugt), x, y),
            BinOp::Ge => self.b.icmp(cmp(IntCC::Sge, IntCC::Uge), x, y),
            BinOp::AddWithOverflow | BinOp::SubWithOverflow | BinOp::MulWithOverflow => {
                return self.checked(op, x, y, bits, signed);
            }
            BinOp::Cmp => {
                // MIR's three-way comparison (`Ord::cmp` of integers, `char`s,
                // `bool`s) yields `core::cmp::Ordering`, a `#[repr(i8)]` enum
                // whose discriminants are the values: Less = -1, Equal = 0,
                // Greater = 1. Two compares of the operands' signedness and two
                // selects give that `i8` without a branch.
                let lt = self.b.icmp(cmp(IntCC::Slt, IntCC::Ult), x, y);
                let gt = self.b.icmp(cmp(IntCC::Sgt, IntCC::Ugt), x, y);
                let less = self.iconst(8, -1);
                let equal = self.iconst(8, 0);
                let greater = self.iconst(8, 1);
                let not_less = self.b.select(gt, greater, equal);
                self.b.select(lt, less, not_less)
            }
            BinOp::Offset => return Err(self.internal("`Offset` of a non-pointer")),
        };
        Ok(Val::Immediate(v))
    }

    /// `(result, overflowed)` for checked arithmetic, computed in twice the width.
    fn checked(
        &mut self,
        op: BinOp,
        x: Value,
        y: Value,
        bits: u16,
        signed: bool,
    ) -> Result<Val, Diagnostic> {
        if bits > 64 {
            return self.checked_in_width(op, x, y, signed);
        }
        let wide = self.b.types().int(bits * 2);
        let narrow = self.b.types().int(bits);
        let ext = if signed { CastOp::SExt } else { CastOp::ZExt };
        let wx = self.b.cast(ext, x, wide);
        let wy = self.b.cast(ext, y, wide);
        let bop = match op {
            BinOp::AddWithOverflow => BinaryOp::Add,
            BinOp::SubWithOverflow => BinaryOp::Sub,
            _ => BinaryOp::Mul,
        };
        let wr = self.b.binary(bop, wx, wy);
        let r = self.b.cast(CastOp::Trunc, wr, narrow);
        let back = self.b.cast(ext, r, wide);
        let ovf = self.b.icmp(IntCC::Ne, back, wr);
        Ok(Val::Pair(r, ovf))
    }

    /// `(result, overflowed)` for checked arithmetic on 128-bit integers,
    /// where there is no wider type to compute in: the result wraps, and the
    /// overflow is read from it (unsigned: the sum is below an operand, the
    /// minuend below the subtrahend; signed: the result's sign differs from
    /// both addends' or, for a difference, from the minuend's when the
    /// operands' signs differ). A product's overflow comes from 64-bit
    /// halves ([`Self::checked_mul_128`]).
    fn checked_in_width(
        &mut self,
        op: BinOp,
        x: Value,
        y: Value,
        signed: bool,
    ) -> Result<Val, Diagnostic> {
        let sub = match op {
            BinOp::AddWithOverflow => false,
            BinOp::SubWithOverflow => true,
            _ => return Ok(self.checked_mul_128(x, y, signed)),
        };
        let (r, ovf) = self.add_sub_128(sub, x, y, signed);
        Ok(Val::Pair(r, ovf))
    }

    /// The wrapping 128-bit `x + y` (or `x - y`) and whether it overflowed
    /// (see [`Self::checked_in_width`]).
    fn add_sub_128(&mut self, sub: bool, x: Value, y: Value, signed: bool) -> (Value, Value) {
        let r = self
            .b
            .binary(if sub { BinaryOp::Sub } else { BinaryOp::Add }, x, y);
        let ovf = if signed {
            // add: (x ^ r) & (y ^ r) < 0; sub: (x ^ y) & (x ^ r) < 0.
            let xr = self.b.binary(BinaryOp::Xor, x, r);
            let other = if sub {
                self.b.binary(BinaryOp::Xor, x, y)
            } else {
                self.b.binary(BinaryOp::Xor, y, r)
            };
            let both = self.b.binary(BinaryOp::And, xr, other);
            let zero = self.iconst(128, 0);
            self.b.icmp(IntCC::Slt, both, zero)
        } else if sub {
            self.b.icmp(IntCC::Ult, x, y)
        } else {
            self.b.icmp(IntCC::Ult, r, x)
        };
        (r, ovf)
    }

    /// `(x * y, overflowed)` for 128-bit integers. libNVVM has no
    /// `llvm.*mul.with.overflow.i128` and there is no 256-bit type, so the
    /// unsigned product of the magnitudes is taken apart in 64-bit halves
    /// ([`Self::umul_128_overflows`]); a signed product overflows when that
    /// does, or when the magnitude passes `i128::MAX` (`i128::MAX + 1` for a
    /// negative product). The result is the wrapping product either way.
    fn checked_mul_128(&mut self, x: Value, y: Value, signed: bool) -> Val {
        let r = self.b.binary(BinaryOp::Mul, x, y);
        if !signed {
            let (_, ovf) = self.umul_128_overflows(x, y);
            return Val::Pair(r, ovf);
        }
        let zero = self.iconst(128, 0);
        let x_neg = self.b.icmp(IntCC::Slt, x, zero);
        let y_neg = self.b.icmp(IntCC::Slt, y, zero);
        // `0 - i128::MIN` is `i128::MIN`, whose unsigned reading is 2^127.
        let x_minus = self.b.binary(BinaryOp::Sub, zero, x);
        let y_minus = self.b.binary(BinaryOp::Sub, zero, y);
        let x_abs = self.b.select(x_neg, x_minus, x);
        let y_abs = self.b.select(y_neg, y_minus, y);
        let (magnitude, unsigned_ovf) = self.umul_128_overflows(x_abs, y_abs);
        let negative = self.b.binary(BinaryOp::Xor, x_neg, y_neg);
        let wide = self.b.types().int(128);
        let extra = self.b.cast(CastOp::ZExt, negative, wide);
        let max = self.iconst(128, i128::MAX);
        let limit = self.b.binary(BinaryOp::Add, max, extra);
        let too_big = self.b.icmp(IntCC::Ugt, magnitude, limit);
        let ovf = self.b.binary(BinaryOp::Or, unsigned_ovf, too_big);
        Val::Pair(r, ovf)
    }

    /// The unsigned 128-bit product `x * y` and whether it passes 2^128,
    /// from 64-bit halves `x = xh·2^64 + xl`: it does when both high halves
    /// are non-zero, or else when the one cross term `xh·yl + xl·yh` passes
    /// 2^64, or when adding it, shifted, to `xl·yl` carries out.
    fn umul_128_overflows(&mut self, x: Value, y: Value) -> (Value, Value) {
        let low_mask = self.iconst(128, i128::from(u64::MAX));
        let sixty_four = self.iconst(128, 64);
        let zero = self.iconst(128, 0);
        let xl = self.b.binary(BinaryOp::And, x, low_mask);
        let yl = self.b.binary(BinaryOp::And, y, low_mask);
        let xh = self.b.binary(BinaryOp::LShr, x, sixty_four);
        let yh = self.b.binary(BinaryOp::LShr, y, sixty_four);
        let xh_set = self.b.icmp(IntCC::Ne, xh, zero);
        let yh_set = self.b.icmp(IntCC::Ne, yh, zero);
        let both_high = self.b.binary(BinaryOp::And, xh_set, yh_set);
        // With one high half zero, one of the two terms is zero and the
        // other is an exact 64x64-bit product.
        let xh_yl = self.b.binary(BinaryOp::Mul, xh, yl);
        let xl_yh = self.b.binary(BinaryOp::Mul, xl, yh);
        let cross = self.b.binary(BinaryOp::Add, xh_yl, xl_yh);
        let cross_top = self.b.binary(BinaryOp::LShr, cross, sixty_four);
        let cross_wide = self.b.icmp(IntCC::Ne, cross_top, zero);
        let low = self.b.binary(BinaryOp::Mul, xl, yl);
        let shifted = self.b.binary(BinaryOp::Shl, cross, sixty_four);
        let product = self.b.binary(BinaryOp::Add, shifted, low);
        let carried = self.b.icmp(IntCC::Ult, product, low);
        let some = self.b.binary(BinaryOp::Or, both_high, cross_wide);
        let ovf = self.b.binary(BinaryOp::Or, some, carried);
        (product, ovf)
    }

    /// `x + y` or `x - y` clamped to the range of their `bits`-wide type
    /// (`saturating_add`, `saturating_sub`): computed in twice the width,
    /// where it cannot overflow, and clamped there with signed comparisons
    /// (the zero-extended operands of an unsigned one are non-negative
    /// there). Written with plain instructions because libNVVM's LLVM has
    /// no `llvm.*.sat` intrinsics.
    pub(super) fn saturating(
        &mut self,
        sub: bool,
        x: Value,
        y: Value,
        bits: u16,
        signed: bool,
    ) -> Result<Value, Diagnostic> {
        if bits > 64 {
            return Ok(self.saturating_128(sub, x, y, signed));
        }
        let wide = self.b.types().int(bits * 2);
        let narrow = self.b.types().int(bits);
        let ext = if signed { CastOp::SExt } else { CastOp::ZExt };
        let wx = self.b.cast(ext, x, wide);
        let wy = self.b.cast(ext, y, wide);
        let op = if sub { BinaryOp::Sub } else { BinaryOp::Add };
        let wr = self.b.binary(op, wx, wy);
        let (lo, hi) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let (lo, hi) = (self.iconst(bits * 2, lo), self.iconst(bits * 2, hi));
        let below = self.b.icmp(IntCC::Slt, wr, lo);
        let above = self.b.icmp(IntCC::Sgt, wr, hi);
        let capped = self.b.select(above, hi, wr);
        let clamped = self.b.select(below, lo, capped);
        Ok(self.b.cast(CastOp::Trunc, clamped, narrow))
    }

    /// [`Self::saturating`] for 128-bit integers: the wrapping result unless
    /// it overflowed, then the bound it passed. An unsigned sum passes the
    /// maximum and a difference zero; a signed sum or difference overflows
    /// only toward the minuend's side (`x`'s sign).
    fn saturating_128(&mut self, sub: bool, x: Value, y: Value, signed: bool) -> Value {
        let (r, ovf) = self.add_sub_128(sub, x, y, signed);
        let bound = if signed {
            let zero = self.iconst(128, 0);
            let x_neg = self.b.icmp(IntCC::Slt, x, zero);
            let min = self.iconst(128, i128::MIN);
            let max = self.iconst(128, i128::MAX);
            self.b.select(x_neg, min, max)
        } else if sub {
            self.iconst(128, 0)
        } else {
            self.iconst(128, -1)
        };
        self.b.select(ovf, bound, r)
    }

    fn float_binary(&mut self, op: BinOp, x: Value, y: Value) -> Result<Val, Diagnostic> {
        let v = match op {
            BinOp::Add => self.b.binary(BinaryOp::FAdd, x, y),
            BinOp::Sub => self.b.binary(BinaryOp::FSub, x, y),
            BinOp::Mul => self.b.binary(BinaryOp::FMul, x, y),
            BinOp::Div => self.b.binary(BinaryOp::FDiv, x, y),
            BinOp::Rem => self.b.binary(BinaryOp::FRem, x, y),
            BinOp::Eq => self.b.fcmp(FloatCC::Oeq, x, y),
            BinOp::Ne => self.b.fcmp(FloatCC::Une, x, y),
            BinOp::Lt => self.b.fcmp(FloatCC::Olt, x, y),
            BinOp::Le => self.b.fcmp(FloatCC::Ole, x, y),
            BinOp::Gt => self.b.fcmp(FloatCC::Ogt, x, y),
            BinOp::Ge => self.b.fcmp(FloatCC::Oge, x, y),
            other => return Err(self.internal(&format!("float {other:?}"))),
        };
        Ok(Val::Immediate(v))
    }

    pub(super) fn unary(&mut self, op: UnOp, a: &Operand) -> Result<Val, Diagnostic> {
        let ty = self.operand_ty(a)?;
        let v = self.read_operand(a)?;
        match (op, v) {
            (UnOp::PtrMetadata, Val::Pair(_, n)) => Ok(Val::Immediate(n)),
            (UnOp::PtrMetadata, _) => Ok(Val::Zst),
            (UnOp::Not, Val::Immediate(x)) => {
                let (bits, _) = int_bits(&ty).ok_or_else(|| self.unsupported("not"))?;
                let ones = self.iconst(bits, -1);
                Ok(Val::Immediate(self.b.binary(BinaryOp::Xor, x, ones)))
            }
            (UnOp::Neg, Val::Immediate(x)) if matches!(ty, Ty::Float(_)) => {
                Ok(Val::Immediate(self.b.unary(UnaryOp::FNeg, x)))
            }
            (UnOp::Neg, Val::Immediate(x)) => {
                let (bits, _) = int_bits(&ty).ok_or_else(|| self.unsupported("neg"))?;
                let zero = self.iconst(bits, 0);
                Ok(Val::Immediate(self.b.binary(BinaryOp::Sub, zero, x)))
            }
            (op, v) => Err(self.internal(&format!("{op:?} of {v:?}"))),
        }
    }
}
