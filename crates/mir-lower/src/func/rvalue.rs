//! Assignments: rvalues, casts, operators, aggregates and discriminants.

use device_ir::layout::POINTER_SIZE;
use device_ir::{BinaryOp, CastOp, FloatCC, IntCC, UnaryOp, Value};
use mir_import::eval::layout::{Encoding, Shape};
use mir_import::model::{
    AggregateKind, BinOp, CastKind, ConstOperand, Operand, Place, Rvalue, Ty, UnOp,
};

use super::FnLower;
use super::values::{PlaceRef, Val};
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar, generic_i8_ptr};

fn int_bits(ty: &Ty) -> Option<(u16, bool)> {
    match ty {
        Ty::Int(i) => Some(((i.size() * 8) as u16, i.is_signed())),
        Ty::Char => Some((32, false)),
        Ty::Bool => Some((1, false)),
        _ => None,
    }
}

/// `const <uninit>` (`MaybeUninit::uninit()`): as a field or element of an
/// aggregate written to memory, nothing is written (the bytes stay
/// unwritten, which the devices track), as for a whole value.
fn is_uninit(op: &Operand) -> bool {
    matches!(op, Operand::Const(ConstOperand::Uninit))
}

impl FnLower<'_, '_> {
    pub(super) fn assign(&mut self, place: &Place, rv: &Rvalue) -> Result<(), Diagnostic> {
        // A constant-homed local's home is the constant's global already.
        if place.projection.is_empty() && self.constant_homed.contains(&place.local) {
            return Ok(());
        }
        let dest_ty = self.place_ty(place)?;
        // `MaybeUninit::uninit()` into memory (`[const <uninit>; N]`): nothing
        // to write; the bytes stay unwritten, which the devices track.
        if let Rvalue::Use(Operand::Const(ConstOperand::Uninit))
        | Rvalue::Repeat(Operand::Const(ConstOperand::Uninit), _) = rv
        {
            return match self.place(place)? {
                PlaceRef::Mem { .. } => Ok(()),
                _ => Err(self.unsupported(
                    "an uninitialized value (`MaybeUninit::uninit()`) held in a register is not supported",
                )),
            };
        }
        // Aggregates into memory are written field by field in place.
        if let Rvalue::Aggregate(kind, ops) = rv {
            let dest = self.place(place)?;
            if let PlaceRef::Mem { addr, .. } = dest {
                return self.aggregate_into(addr, &dest_ty, kind, ops);
            }
            let v = self.aggregate_value(&dest_ty, kind, ops)?;
            return self.write_place(&dest, v);
        }
        if let Rvalue::Repeat(op, n) = rv {
            let dest = self.place(place)?;
            let PlaceRef::Mem { addr, .. } = dest else {
                return Err(self.unsupported("repeat into an SSA value"));
            };
            let Shape::Array { elem, stride, .. } = self
                .sh
                .layouts
                .of(&dest_ty)
                .map_err(|e| self.unsupported(e))?
                .shape
            else {
                return Err(self.unsupported("repeat into a non-array"));
            };
            if *n > 1024 {
                return Err(self.unsupported(format!("repeat of {n} elements (at most 1024)")));
            }
            let v = self.read_operand(op)?;
            for i in 0..*n {
                let a = self.offset(addr, i * stride);
                self.write_mem(a, &elem, v)?;
            }
            return Ok(());
        }
        // A scalar transmuted to an aggregate (`u32::to_le_bytes`): its
        // bytes are stored where the aggregate lives.
        if let Rvalue::Cast(CastKind::Transmute, op, _) = rv
            && let Repr::Mem { size, align } = self.repr(&dest_ty)?
        {
            let from = self.operand_ty(op)?;
            let dest = self.place(place)?;
            if let (PlaceRef::Mem { addr, .. }, Repr::Scalar(s)) = (&dest, self.repr(&from)?)
                && s.size() == size
            {
                let Val::Immediate(x) = self.read_operand(op)? else {
                    return Err(self.internal("a scalar operand that is not immediate"));
                };
                self.store_scalar_aligned(*addr, 0, s, x, align);
                return Ok(());
            }
            // Between two types in memory of one size (`[MaybeUninit<T>; N]`
            // to `[T; N]`, which `[T; N]::map` ends with): the bytes move.
            if let (PlaceRef::Mem { addr, .. }, Operand::Copy(src) | Operand::Move(src)) =
                (&dest, op)
                && let Repr::Mem {
                    size: from_size,
                    align: from_align,
                } = self.repr(&from)?
                && from_size == size
                && let PlaceRef::Mem { addr: src_addr, .. } = self.place(src)?
            {
                self.memcpy(*addr, src_addr, size, align.min(from_align));
                return Ok(());
            }
        }
        let v = self.rvalue(rv, &dest_ty)?;
        let dest = self.place(place)?;
        self.write_place(&dest, v)
    }

    fn rvalue(&mut self, rv: &Rvalue, dest_ty: &Ty) -> Result<Val, Diagnostic> {
        match rv {
            // A constant takes its type from where it goes (`const Option::<&u32>::None`).
            Rvalue::Use(Operand::Const(c)) => self.const_val(c, dest_ty),
            Rvalue::Use(op) => self.read_operand(op),
            Rvalue::CopyForDeref(p) => self.read_operand(&Operand::Copy(p.clone())),
            Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p) => match self.place(p)? {
                PlaceRef::Mem {
                    addr,
                    meta: Some(n),
                    ..
                } => Ok(Val::Pair(addr, n)),
                PlaceRef::Mem { addr, .. } => Ok(Val::Immediate(addr)),
                PlaceRef::Ssa(..) => Err(self.internal("borrow of an SSA local")),
            },
            Rvalue::Cast(kind, op, ty) => self.cast(kind, op, ty),
            Rvalue::BinaryOp(op, a, b) => self.binary(*op, a, b),
            Rvalue::UnaryOp(op, a) => self.unary(*op, a),
            Rvalue::Discriminant(p) => self.discriminant(p, dest_ty),
            Rvalue::Nullary(name, ty) => {
                let (bits, _) = int_bits(dest_ty).unwrap_or((64, false));
                let v = match (name.as_str(), ty) {
                    ("SizeOf", Some(t)) => {
                        self.sh.layouts.of(t).map_err(|e| self.unsupported(e))?.size
                    }
                    ("AlignOf", Some(t)) => {
                        self.sh
                            .layouts
                            .of(t)
                            .map_err(|e| self.unsupported(e))?
                            .align
                    }
                    ("UbChecks" | "ContractChecks", _) => 0,
                    (n, _) => return Err(self.unsupported(format!("nullary op `{n}`"))),
                };
                Ok(Val::Immediate(self.iconst(bits, v as i128)))
            }
            Rvalue::Aggregate(..) | Rvalue::Repeat(..) => Err(self.internal("aggregate in rvalue")),
        }
    }

    fn cast(&mut self, kind: &CastKind, op: &Operand, to: &Ty) -> Result<Val, Diagnostic> {
        let from = self.operand_ty(op)?;
        let v = self.read_operand(op)?;
        match kind {
            CastKind::IntToInt => {
                let Val::Immediate(x) = v else {
                    return Err(self.unsupported("int cast of a non-scalar"));
                };
                let (fb, signed) = int_bits(&from).ok_or_else(|| self.unsupported("int cast"))?;
                let (tb, _) = int_bits(to).ok_or_else(|| self.unsupported("int cast"))?;
                let t = self.b.types().int(tb);
                Ok(Val::Immediate(if tb == fb {
                    x
                } else if tb < fb {
                    self.b.cast(CastOp::Trunc, x, t)
                } else if signed {
                    self.b.cast(CastOp::SExt, x, t)
                } else {
                    self.b.cast(CastOp::ZExt, x, t)
                }))
            }
            CastKind::IntToFloat | CastKind::FloatToInt | CastKind::FloatToFloat => {
                let Val::Immediate(x) = v else {
                    return Err(self.unsupported("float cast of a non-scalar"));
                };
                let Repr::Scalar(ts) = self.repr(to)? else {
                    return Err(self.unsupported("cast"));
                };
                let t = ts.ssa_ty(self.b.module());
                if *kind == CastKind::FloatToInt {
                    let (bits, signed) =
                        int_bits(to).ok_or_else(|| self.unsupported("float cast"))?;
                    if bits > 64 {
                        return Err(self.unsupported("float to 128-bit integer casts"));
                    }
                    let f32_src = matches!(from, Ty::Float(mir_import::model::FloatTy::F32));
                    return Ok(Val::Immediate(
                        self.saturating_float_to_int(x, f32_src, bits, signed),
                    ));
                }
                let op = match (kind, int_bits(&from), int_bits(to)) {
                    (CastKind::IntToFloat, Some((_, true)), _) => CastOp::SiToFp,
                    (CastKind::IntToFloat, _, _) => CastOp::UiToFp,
                    (CastKind::FloatToInt, _, Some((_, true))) => CastOp::FpToSi,
                    (CastKind::FloatToInt, _, _) => CastOp::FpToUi,
                    _ => {
                        let fs = matches!(from, Ty::Float(mir_import::model::FloatTy::F32));
                        let ts32 = matches!(to, Ty::Float(mir_import::model::FloatTy::F32));
                        if fs == ts32 {
                            return Ok(Val::Immediate(x));
                        }
                        if fs { CastOp::FpExt } else { CastOp::FpTrunc }
                    }
                };
                Ok(Val::Immediate(self.b.cast(op, x, t)))
            }
            CastKind::PtrToPtr | CastKind::FnPtrToPtr => Ok(match (v, self.repr(to)?) {
                (Val::Pair(a, _), Repr::Scalar(_)) => {
                    // A fat pointer made thin drops its length, which is
                    // right only if the new pointee is sized. A pointer to a
                    // struct ending in a slice (`*const [u32] as *const
                    // Packet`) is fat here where the MIR's use, the report's
                    // field widths or the probe show it (`LayoutTable::
                    // sizedness`). Of unknown sizedness, a struct with an
                    // unsized type argument (`Packet<[u32]>`) may well end
                    // in it: refused.
                    if let Some(pointee @ (Ty::Adt(_) | Ty::Opaque(_) | Ty::Tuple(_))) =
                        to.pointee()
                        && (self.sh.layouts.of(pointee).is_err()
                            || self.sh.layouts.table.sizedness(pointee).is_none()
                                && has_unsized_argument(pointee))
                    {
                        return Err(self.unsupported(format!(
                            "cast of the fat pointer `{from}` to `{to}`, whose pointee may be unsized (a struct ending in a slice): its length would be lost"
                        )));
                    }
                    Val::Immediate(a)
                }
                // A thin pointer cannot become fat: rustc casts between
                // pointers with the same metadata, so the source's pointee
                // was taken for sized and lost it.
                (Val::Immediate(_), Repr::Pair(..)) => {
                    return Err(self.unsupported(format!(
                        "cast of `{from}` to the fat pointer `{to}`: the source was taken for a thin pointer"
                    )));
                }
                (v, _) => v,
            }),
            CastKind::PointerCoercion(k) if k.starts_with("Unsize") => {
                let Val::Immediate(p) = v else {
                    return Err(self.unsupported("unsize of a fat pointer"));
                };
                let n = match (from.pointee(), to.pointee()) {
                    (Some(Ty::Array(_, mir_import::model::ArrayLen::Known(n))), _) => *n,
                    // `&Packet<[u32; 3]>` to `&Packet<[u32]>`: the length
                    // is the array's that became the unsized tail.
                    (Some(src @ Ty::Adt(_)), Some(dst))
                        if self.sh.layouts.is_unsized(dst)
                            && let Some(n) = unsized_array_len(src, dst) =>
                    {
                        n
                    }
                    _ => return Err(self.unsupported(format!("unsizing `{from}` to `{to}`"))),
                };
                Ok(Val::Pair(p, self.iconst(64, n as i128)))
            }
            CastKind::PointerCoercion(_) => Ok(v),
            CastKind::PointerExposeProvenance => {
                let (Val::Immediate(p) | Val::Pair(p, _)) = v else {
                    return Err(self.unsupported("ptr cast"));
                };
                let t = self.b.types().i64();
                Ok(Val::Immediate(self.b.cast(CastOp::PtrToInt, p, t)))
            }
            CastKind::PointerWithExposedProvenance => {
                let Val::Immediate(x) = v else {
                    return Err(self.unsupported("int to ptr cast"));
                };
                let t = generic_i8_ptr(self.b.module());
                Ok(Val::Immediate(self.b.cast(CastOp::IntToPtr, x, t)))
            }
            CastKind::Transmute => self.transmute(v, &from, to),
        }
    }

    /// Rust's `as` from a float to an integer saturates: NaN is 0 and values
    /// out of range clamp to the type's limits. LLVM 7's `fptosi`/`fptoui`
    /// have no defined result out of range, so the input is clamped into range
    /// first and the limits are selected afterwards.
    fn saturating_float_to_int(
        &mut self,
        x: Value,
        f32_src: bool,
        bits: u16,
        signed: bool,
    ) -> Value {
        let fc = |b: &mut device_ir::FunctionBuilder, v: f64| {
            if f32_src {
                b.f32const(v as f32)
            } else {
                b.f64const(v)
            }
        };
        let zero = fc(&mut self.b, 0.0);
        let (lo, hi_excl) = if signed {
            (
                -(2f64.powi(i32::from(bits) - 1)),
                2f64.powi(i32::from(bits) - 1),
            )
        } else {
            (0.0, 2f64.powi(i32::from(bits)))
        };
        let lo_c = fc(&mut self.b, lo);
        let hi_c = fc(&mut self.b, hi_excl);
        // `in_low` is false for NaN, so NaN becomes 0 like a value below range.
        let in_low = self.b.fcmp(FloatCC::Oge, x, lo_c);
        let too_high = self.b.fcmp(FloatCC::Oge, x, hi_c);
        let x1 = self.b.select(in_low, x, zero);
        let x2 = self.b.select(too_high, zero, x1);
        let t = self.b.types().int(bits);
        let op = if signed {
            CastOp::FpToSi
        } else {
            CastOp::FpToUi
        };
        let r = self.b.cast(op, x2, t);
        let (min, max) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let max_v = self.iconst(bits, max);
        let min_v = self.iconst(bits, min);
        let is_nan = self.b.fcmp(FloatCC::Uno, x, x);
        let below = self.b.select(is_nan, r, min_v);
        let r1 = self.b.select(in_low, r, below);
        self.b.select(too_high, max_v, r1)
    }

    fn transmute(&mut self, v: Val, from: &Ty, to: &Ty) -> Result<Val, Diagnostic> {
        match (v, self.repr(from)?, self.repr(to)?) {
            (Val::Immediate(x), Repr::Scalar(a), Repr::Scalar(b)) if a == b => {
                Ok(Val::Immediate(x))
            }
            (Val::Pair(x, y), Repr::Pair(a0, o0, a1, o1), Repr::Pair(b0, p0, b1, p1))
                if (a0, o0, a1, o1) == (b0, p0, b1, p1) =>
            {
                Ok(Val::Pair(x, y))
            }
            (Val::Immediate(x), Repr::Scalar(Scalar::Ptr), Repr::Scalar(Scalar::Int(64))) => {
                let t = self.b.types().i64();
                Ok(Val::Immediate(self.b.cast(CastOp::PtrToInt, x, t)))
            }
            (Val::Immediate(x), Repr::Scalar(Scalar::Int(64)), Repr::Scalar(Scalar::Ptr)) => {
                let t = generic_i8_ptr(self.b.module());
                Ok(Val::Immediate(self.b.cast(CastOp::IntToPtr, x, t)))
            }
            (Val::Immediate(x), Repr::Scalar(a), Repr::Scalar(b)) if a.size() == b.size() => {
                let t = b.ssa_ty(self.b.module());
                Ok(Val::Immediate(self.b.cast(CastOp::Bitcast, x, t)))
            }
            // An aggregate's bytes read as a scalar (`u32::from_le_bytes`).
            (Val::ByRef(addr), Repr::Mem { size, align }, Repr::Scalar(b)) if size == b.size() => {
                Ok(Val::Immediate(self.load_scalar_aligned(addr, 0, b, align)))
            }
            (..) => Err(self.unsupported(format!(
                "`transmute` from `{from}` to `{to}` is not supported"
            ))),
        }
    }

    fn binary(&mut self, op: BinOp, a: &Operand, b: &Operand) -> Result<Val, Diagnostic> {
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
            let size = self
                .sh
                .layouts
                .of(&pointee)
                .map_err(|e| self.unsupported(e))?
                .size;
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

    /// `(result, overflowed)` for checked addition and subtraction of
    /// 128-bit integers, where there is no wider type to compute in: the
    /// result wraps, and the overflow is read from it (unsigned: the sum
    /// is below an operand, the minuend below the subtrahend; signed: the
    /// result's sign differs from both addends' or, for a difference, from
    /// the minuend's when the operands' signs differ). Multiplication is
    /// refused.
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
            _ => {
                return Err(self.unsupported("checked multiplication of 128-bit integers"));
            }
        };
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
        Ok(Val::Pair(r, ovf))
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
            return Err(self.unsupported("saturating arithmetic on 128-bit integers"));
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

    fn unary(&mut self, op: UnOp, a: &Operand) -> Result<Val, Diagnostic> {
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

    /// The declared discriminant value of a variant.
    fn discr_value(&self, enum_ty: &Ty, variant: &str) -> Result<i128, Diagnostic> {
        self.sh
            .layouts
            .discriminant_of(enum_ty, variant)
            .map(|v| v as i128)
            .ok_or_else(|| {
                self.unsupported(format!(
                    "the discriminant of `{enum_ty}::{variant}` is unknown"
                ))
            })
    }

    fn discriminant(&mut self, p: &Place, dest_ty: &Ty) -> Result<Val, Diagnostic> {
        let ety = self.place_ty(p)?;
        let (enc, _, _) = self.enum_encoding(&ety)?;
        let (bits, _) = int_bits(dest_ty).unwrap_or((64, true));
        let r = self.place(p)?;
        match enc {
            Encoding::Direct { offset, size } => {
                let PlaceRef::Mem { addr, .. } = r else {
                    return Err(self.internal("tag of SSA enum"));
                };
                let tag = self.load_scalar_at(addr, offset, Scalar::Int((size * 8) as u16));
                let t = self.b.types().int(bits);
                let tb = (size * 8) as u16;
                Ok(Val::Immediate(match tb.cmp(&bits) {
                    std::cmp::Ordering::Less => self.b.cast(CastOp::ZExt, tag, t),
                    std::cmp::Ordering::Greater => self.b.cast(CastOp::Trunc, tag, t),
                    std::cmp::Ordering::Equal => tag,
                }))
            }
            Encoding::Niche {
                offset,
                size,
                untagged,
                tagged,
            } => {
                let word = match self.read_place(&r)? {
                    Val::Immediate(w) if offset == 0 => w,
                    Val::ByRef(a) if size == POINTER_SIZE => {
                        self.load_scalar_at(a, offset, Scalar::Ptr)
                    }
                    Val::ByRef(a) => self.load_scalar_at(a, offset, Scalar::Int((size * 8) as u16)),
                    _ => return Err(self.internal("niche word")),
                };
                let wt = self.b.value_ty(word);
                let word = if self.b.types().is_ptr(wt) {
                    let t = self.b.types().i64();
                    self.b.cast(CastOp::PtrToInt, word, t)
                } else {
                    word
                };
                let wt = self.b.value_ty(word);
                // The untagged variant unless the niche holds a tagged
                // variant's value (which no untagged value can hold).
                let d = self.discr_value(&ety, &untagged)?;
                let mut discr = self.iconst(bits, d);
                for (name, value) in &tagged {
                    let v = self.b.iconst(wt, *value as i128);
                    let is_it = self.b.icmp(IntCC::Eq, word, v);
                    let d = self.discr_value(&ety, name)?;
                    let dv = self.iconst(bits, d);
                    discr = self.b.select(is_it, dv, discr);
                }
                Ok(Val::Immediate(discr))
            }
            Encoding::Single { variant } => {
                let d = self.discr_value(&ety, &variant)?;
                Ok(Val::Immediate(self.iconst(bits, d)))
            }
        }
    }

    pub(super) fn set_discriminant(
        &mut self,
        p: &Place,
        variant_index: u32,
    ) -> Result<(), Diagnostic> {
        let ety = self.place_ty(p)?;
        let Ty::Adt(path) = &ety else {
            return Err(self.unsupported("set discriminant"));
        };
        let order = self
            .sh
            .layouts
            .discriminants
            .get(&path.def_path())
            .cloned()
            .ok_or_else(|| self.unsupported(format!("variant order of `{ety}` unknown")))?;
        let name = order
            .get(variant_index as usize)
            .map(|(n, _)| n.clone())
            .ok_or_else(|| self.unsupported("variant index out of range"))?;
        let r = self.place(p)?;
        let PlaceRef::Mem { addr, .. } = r else {
            return Err(self.unsupported("set discriminant of SSA"));
        };
        self.write_tag(addr, &ety, &name)
    }

    fn write_tag(&mut self, addr: Value, ety: &Ty, variant: &str) -> Result<(), Diagnostic> {
        let (enc, _, _) = self.enum_encoding(ety)?;
        match enc {
            Encoding::Direct { offset, size: ts } => {
                let d = self.discr_value(ety, variant)?;
                let tag = self.iconst((ts * 8) as u16, d);
                self.store_scalar_at(addr, offset, Scalar::Int((ts * 8) as u16), tag);
            }
            Encoding::Niche {
                offset,
                size: n,
                tagged,
                ..
            } => {
                if let Some((_, value)) = tagged.iter().find(|(name, _)| name == variant) {
                    let v = self.iconst((n * 8) as u16, *value as i128);
                    self.store_scalar_at(addr, offset, Scalar::Int((n * 8) as u16), v);
                }
            }
            Encoding::Single { variant: only } if only == variant => {}
            Encoding::Single { variant: only } => {
                return Err(self.unsupported(format!(
                    "variant `{variant}` of `{ety}`, whose only inhabited variant is `{only}`"
                )));
            }
        }
        Ok(())
    }

    fn aggregate_into(
        &mut self,
        addr: Value,
        ty: &Ty,
        kind: &AggregateKind,
        ops: &[Operand],
    ) -> Result<(), Diagnostic> {
        let layout = self.sh.layouts.of(ty).map_err(|e| self.unsupported(e))?;
        match kind {
            AggregateKind::Array => {
                let Shape::Array { elem, stride, .. } = &layout.shape else {
                    return Err(self.unsupported("array aggregate into a non-array"));
                };
                for (i, op) in ops.iter().enumerate() {
                    if is_uninit(op) {
                        continue;
                    }
                    let v = self.read_operand(op)?;
                    let a = self.offset(addr, i as u64 * stride);
                    self.write_mem(a, elem, v)?;
                }
                Ok(())
            }
            AggregateKind::Tuple | AggregateKind::Adt { .. } | AggregateKind::RawPtr(..) => {
                let (variant, names) = match kind {
                    AggregateKind::Adt { path, field_names } => (
                        matches!(layout.shape, Shape::Enum { .. })
                            .then(|| path.last_name().to_string()),
                        field_names.clone(),
                    ),
                    _ => (None, Vec::new()),
                };
                for (i, op) in ops.iter().enumerate() {
                    if is_uninit(op) {
                        continue;
                    }
                    let fty = self.operand_ty(op)?;
                    let name = names.get(i).cloned().unwrap_or_else(|| i.to_string());
                    let off = self.field_offset(ty, variant.as_deref(), &name)?;
                    let v = self.read_operand(op)?;
                    let a = self.offset(addr, off);
                    self.write_mem(a, &fty, v)?;
                }
                if let Some(v) = variant {
                    self.write_tag(addr, ty, &v)?;
                }
                Ok(())
            }
            // A closure's captures, by index: only offsets the layout proves
            // (see `LayoutTable::record_captures`).
            AggregateKind::Opaque(s) if s.starts_with("{closure@") => {
                for (i, op) in ops.iter().enumerate() {
                    if is_uninit(op) {
                        continue;
                    }
                    let fty = self.operand_ty(op)?;
                    let off = self.field_offset(ty, None, &i.to_string()).map_err(|_| {
                        self.unsupported(format!(
                            "a closure with {} captures (`{s}`): rustc's report gives no offsets for them",
                            ops.len()
                        ))
                    })?;
                    let v = self.read_operand(op)?;
                    let a = self.offset(addr, off);
                    self.write_mem(a, &fty, v)?;
                }
                Ok(())
            }
            AggregateKind::Opaque(s) => Err(self.unsupported(format!("aggregate `{s}`"))),
        }
    }

    /// An aggregate whose destination is an SSA value: a nullable pointer
    /// (`Some(p)` / `None`), a pair, or a fat raw pointer.
    fn aggregate_value(
        &mut self,
        ty: &Ty,
        kind: &AggregateKind,
        ops: &[Operand],
    ) -> Result<Val, Diagnostic> {
        let vals: Vec<Val> = ops
            .iter()
            .map(|o| self.read_operand(o))
            .collect::<Result<_, _>>()?;
        match (self.repr(ty)?, kind, vals.as_slice()) {
            // The scalar ADTs: transparent wrappers (`NonNull`, `NonZero`)
            // and null-niche enums (`Some(p)` is `p`, `None` is zero).
            (
                Repr::Scalar(Scalar::Ptr | Scalar::Int(64)),
                AggregateKind::Adt { .. },
                [Val::Immediate(p)],
            ) => Ok(Val::Immediate(*p)),
            (Repr::Scalar(Scalar::Ptr), AggregateKind::Adt { .. }, []) => {
                Ok(Val::Immediate(self.null_ptr()))
            }
            (Repr::Scalar(Scalar::Int(64)), AggregateKind::Adt { .. }, []) => {
                Ok(Val::Immediate(self.iconst(64, 0)))
            }
            (Repr::Pair(..), _, [Val::Immediate(a), Val::Immediate(b)]) => Ok(Val::Pair(*a, *b)),
            (Repr::Zst, ..) => Ok(Val::Zst),
            (r, k, v) => Err(self.internal(&format!("aggregate {k:?} of {v:?} as {r:?}"))),
        }
    }
}

/// The length `N` of the array `[T; N]` that an unsizing coercion from
/// `from` to `to` turns into the slice `[T]`: `from` is that array, or a
/// struct whose one differing type argument leads to it
/// (`Packet<[u32; 3]>` to `Packet<[u32]>`).
fn unsized_array_len(from: &Ty, to: &Ty) -> Option<u64> {
    use mir_import::model::{ArrayLen, GenericArg};
    match (from, to) {
        (Ty::Array(e, ArrayLen::Known(n)), Ty::Slice(s)) if e == s => Some(*n),
        (Ty::Adt(a), Ty::Adt(b)) if a.def_path() == b.def_path() => {
            let (xs, ys) = (a.generic_args(), b.generic_args());
            if xs.len() != ys.len() {
                return None;
            }
            let mut differing = xs.iter().zip(ys).filter(|(x, y)| x != y);
            match (differing.next(), differing.next()) {
                (Some((GenericArg::Type(x), GenericArg::Type(y))), None) => unsized_array_len(x, y),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `ty` holds an unsized type among its type arguments or as its
/// last tuple element, at any depth (`Packet<[u32]>`, `(u16, Tail<str>)`).
fn has_unsized_argument(ty: &Ty) -> bool {
    match ty {
        Ty::Adt(p) => p.segments.iter().flat_map(|s| &s.args).any(|a| {
            matches!(a, mir_import::model::GenericArg::Type(t) if t.is_unsized() || has_unsized_argument(t))
        }),
        Ty::Tuple(elems) => elems
            .last()
            .is_some_and(|t| t.is_unsized() || has_unsized_argument(t)),
        _ => false,
    }
}
