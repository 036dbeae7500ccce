//! Assignments: rvalues, aggregates and discriminants. Casts are in
//! [`super::casts`], operators in [`super::arith`].

use device_ir::layout::POINTER_SIZE;
use device_ir::{CastOp, IntCC, Value};
use mir_import::eval::layout::{Encoding, Shape};
use mir_import::model::{AggregateKind, CastKind, ConstOperand, Operand, Place, Rvalue, Ty};

use super::FnLower;
use super::values::{PlaceRef, Val};
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar};

pub(super) fn int_bits(ty: &Ty) -> Option<(u16, bool)> {
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
            let Shape::Array { elem, stride, .. } = self.layout_of(&dest_ty)?.shape else {
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
                    ("SizeOf", Some(t)) => self.layout_of(t)?.size,
                    ("AlignOf", Some(t)) => self.layout_of(t)?.align,
                    ("UbChecks" | "ContractChecks", _) => 0,
                    (n, _) => return Err(self.unsupported(format!("nullary op `{n}`"))),
                };
                Ok(Val::Immediate(self.iconst(bits, v as i128)))
            }
            Rvalue::Aggregate(..) | Rvalue::Repeat(..) => Err(self.internal("aggregate in rvalue")),
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
        let layout = self.layout_of(ty)?;
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
