//! Casts: numeric conversions (Rust's saturating float-to-int), pointer
//! casts that keep or drop a fat pointer's metadata, unsizing coercions and
//! `transmute`.

use device_ir::{CastOp, FloatCC, FunctionKind, Value};
use mir_import::model::{CastKind, ConstOperand, Operand, Path, Ty, object_pointee};

use super::FnLower;
use super::rvalue::int_bits;
use super::values::Val;
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar, generic_i8_ptr};

impl FnLower<'_, '_> {
    pub(super) fn cast(
        &mut self,
        kind: &CastKind,
        op: &Operand,
        to: &Ty,
    ) -> Result<Val, Diagnostic> {
        if let (CastKind::PointerCoercion(k), Operand::Const(ConstOperand::FnItem(path))) =
            (kind, op)
            && k.starts_with("ReifyFnPointer")
        {
            return self.fn_address(path);
        }
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
            CastKind::PointerCoercion(k)
                if k.starts_with("Unsize") && object_pointee(to).is_some() =>
            {
                self.unsize_to_object(v, &from, to)
            }
            CastKind::PointerCoercion(k) if k.starts_with("Unsize") => {
                let Val::Immediate(p) = v else {
                    return Err(self.unsupported("unsize of a fat pointer"));
                };
                let n = match (from.pointee(), to.pointee()) {
                    // `&[T; N]` to `&[T]` (not to `&dyn Tr`, whose metadata
                    // is a vtable).
                    (Some(src @ Ty::Array(..)), Some(dst))
                        if let Some(n) = src.unsized_array_len(dst) =>
                    {
                        n
                    }
                    // `&Packet<[u32; 3]>` to `&Packet<[u32]>`: the length
                    // is the array's that became the unsized tail.
                    (Some(src @ Ty::Adt(_)), Some(dst))
                        if self.sh.layouts.is_unsized(dst)
                            && let Some(n) = src.unsized_array_len(dst) =>
                    {
                        n
                    }
                    _ => return Err(self.unsupported(format!("unsizing `{from}` to `{to}`"))),
                };
                Ok(Val::Pair(p, self.iconst(64, n as i128)))
            }
            // `ReifyFnPointer` of a function item constant is `fn_address`
            // (mir-import makes a closure's `ClosureFnPointer` one, of a
            // shim it writes). Any other way to a `fn` pointer (a closure
            // whose body mir-import could not use, a function item held in
            // a local) has no value to carry: its zero-sized operand would
            // leave the pointer undefined.
            CastKind::PointerCoercion(k)
                if matches!(v, Val::Zst) && matches!(to, Ty::FnPtr(..)) =>
            {
                Err(self.unsupported(format!(
                    "`{}` as a function pointer ({k}) is not supported: only a named function's address is",
                    from
                )))
            }
            // `UnsafeFnPointer` and unsizing of thin pointers: a pointer
            // stays itself.
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
            // Numbers of one size (`f32::to_bits`); a `bool` or a pointer
            // goes through the integer of its bytes below.
            (Val::Immediate(x), Repr::Scalar(a), Repr::Scalar(b))
                if a.size() == b.size() && a.is_number() && b.is_number() =>
            {
                let t = b.ssa_ty(self.b.module());
                Ok(Val::Immediate(self.b.cast(CastOp::Bitcast, x, t)))
            }
            // An aggregate's bytes read as a scalar (`u32::from_le_bytes`).
            (Val::ByRef(addr), Repr::Mem { size, align }, Repr::Scalar(b)) if size == b.size() => {
                Ok(Val::Immediate(self.load_scalar_aligned(addr, 0, b, align)))
            }
            // An aggregate's bytes read as a pair (`[f32; 2]` as `(f32, f32)`).
            (Val::ByRef(addr), Repr::Mem { size, align }, Repr::Pair(b0, p0, b1, p1))
                if size == self.layout_of(to)?.size =>
            {
                Ok(Val::Pair(
                    self.load_scalar_aligned(addr, p0, b0, align.min(b0.size())),
                    self.load_scalar_aligned(addr, p1, b1, align.min(b1.size())),
                ))
            }
            // Between register forms of one size (`(u32, u32)` as `u64`):
            // through the integer of their bytes.
            (
                v @ (Val::Immediate(_) | Val::Pair(..)),
                a @ (Repr::Scalar(_) | Repr::Pair(..)),
                b,
            ) if matches!(b, Repr::Scalar(_) | Repr::Pair(..))
                && self.layout_of(from)?.size == self.layout_of(to)?.size
                && self.layout_of(to)?.size <= 16 =>
            {
                let bits = (self.layout_of(to)?.size * 8) as u16;
                let word = self.bytes_as_int(v, &a, bits)?;
                self.int_as_bytes(word, &b)
            }
            (..) => Err(self.unsupported(format!(
                "`transmute` from `{from}` to `{to}` is not supported"
            ))),
        }
    }
}

impl FnLower<'_, '_> {
    /// The scalars of a register form with their byte offsets.
    fn slots(repr: &Repr) -> Vec<(Scalar, u64)> {
        match repr {
            Repr::Scalar(s) => vec![(*s, 0)],
            Repr::Pair(s0, o0, s1, o1) => vec![(*s0, *o0), (*s1, *o1)],
            _ => Vec::new(),
        }
    }

    /// The little-endian integer of `bits` bits whose bytes are the value
    /// `v` held as `repr` (padding bytes zero).
    fn bytes_as_int(&mut self, v: Val, repr: &Repr, bits: u16) -> Result<Value, Diagnostic> {
        let parts = match v {
            Val::Immediate(x) => vec![x],
            Val::Pair(a, b) => vec![a, b],
            _ => return Err(self.internal("bytes of a value in memory")),
        };
        let wide = self.b.types().int(bits);
        let mut word = self.iconst(bits, 0);
        for ((s, off), x) in Self::slots(repr).into_iter().zip(parts) {
            let sb = (s.size() * 8) as u16;
            let st = self.b.types().int(sb);
            let as_int = match s {
                Scalar::F32 | Scalar::F64 => self.b.cast(CastOp::Bitcast, x, st),
                Scalar::Ptr => self.b.cast(CastOp::PtrToInt, x, st),
                Scalar::Bool => self.b.cast(CastOp::ZExt, x, st),
                Scalar::Int(_) => x,
            };
            let z = self.zext_or_trunc(as_int, wide);
            let sh = self.iconst(bits, i128::from(off as u16 * 8));
            let placed = self.b.binary(device_ir::BinaryOp::Shl, z, sh);
            word = self.b.binary(device_ir::BinaryOp::Or, word, placed);
        }
        Ok(word)
    }

    /// The value held as `repr` whose bytes are the little-endian integer
    /// `word`.
    fn int_as_bytes(&mut self, word: Value, repr: &Repr) -> Result<Val, Diagnostic> {
        let mut parts = Vec::new();
        for (s, off) in Self::slots(repr) {
            let wt = self.b.value_ty(word);
            let bits = self
                .b
                .types()
                .int_bits(wt)
                .ok_or_else(|| self.internal("a transmuted word that is not an integer"))?;
            let sh = self.iconst(bits, i128::from(off as u16 * 8));
            let shifted = self.b.binary(device_ir::BinaryOp::LShr, word, sh);
            let sb = (s.size() * 8) as u16;
            let st = self.b.types().int(sb);
            let x = self.zext_or_trunc(shifted, st);
            parts.push(match s {
                Scalar::F32 | Scalar::F64 => {
                    let t = s.ssa_ty(self.b.module());
                    self.b.cast(CastOp::Bitcast, x, t)
                }
                Scalar::Ptr => {
                    let t = generic_i8_ptr(self.b.module());
                    self.b.cast(CastOp::IntToPtr, x, t)
                }
                Scalar::Bool => {
                    let zero = self.iconst(8, 0);
                    self.b.icmp(device_ir::IntCC::Ne, x, zero)
                }
                Scalar::Int(_) => x,
            });
        }
        match parts.as_slice() {
            [x] => Ok(Val::Immediate(*x)),
            [a, b] => Ok(Val::Pair(*a, *b)),
            _ => Err(self.internal("a transmute into a form with no scalars")),
        }
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

impl FnLower<'_, '_> {
    /// A function item reified to a `fn` pointer that is used as a value
    /// (compared, stored), not only called: the device function's address.
    /// A call through such a pointer is an indirect call (`call.rs`), unless
    /// mir-import proved which function it calls and made it direct.
    fn fn_address(&mut self, path: &Path) -> Result<Val, Diagnostic> {
        let resolved = self.sh.krate.resolve_callee(path);
        let Some(&(f, _)) = self.sh.fns.get(&resolved) else {
            return Err(self.unsupported(format!(
                "`{path}` used as a value (a function pointer) is not a device function of this kernel"
            )));
        };
        if self.b.module().functions[f].kind == FunctionKind::Kernel {
            return Err(self.unsupported(format!(
                "the address of kernel `{path}`: kernels are launched, never called"
            )));
        }
        let i8 = self.b.types().i8();
        Ok(Val::Immediate(self.b.func_addr(f, i8)))
    }
}
