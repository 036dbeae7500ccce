//! Assignments: rvalues, aggregates and discriminants. Casts are in
//! [`super::casts`], operators in [`super::arith`].

use device_ir::layout::POINTER_SIZE;
use device_ir::{CastOp, IntCC, Value};
use mir_import::eval::layout::{Encoding, Shape};
use mir_import::model::{
    AggregateKind, ArrayLen, CastKind, ConstOperand, Operand, Place, Rvalue, Ty,
};

use super::FnLower;
use super::values::{PlaceRef, SsaPart, Val};
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar, generic_i8_ptr};

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
                // In a register: undefined until written.
                r @ PlaceRef::Ssa(l, SsaPart::Whole) => {
                    let v = match self.repr(&self.local_ty(l))? {
                        Repr::Scalar(s) => Val::Immediate(self.undef_of(s)),
                        Repr::Pair(s0, _, s1, _) => Val::Pair(self.undef_of(s0), self.undef_of(s1)),
                        _ => Val::Zst,
                    };
                    self.write_place(&r, v)
                }
                // One slot of a pair: undefined until written.
                r @ PlaceRef::Ssa(_, SsaPart::Slot(_)) => match self.repr(&dest_ty)? {
                    Repr::Scalar(s) => {
                        let v = self.undef_of(s);
                        self.write_place(&r, Val::Immediate(v))
                    }
                    _ => Ok(()),
                },
                _ => Err(self.unsupported(
                    "an uninitialized value (`MaybeUninit::uninit()`) written into part of a register is not supported",
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
            let n = match n {
                ArrayLen::Known(n) => n,
                ArrayLen::Unknown(s) => {
                    return Err(self.unsupported(format!(
                        "a repeat `[x; {s}]` whose count is not a number (a generic body's)"
                    )));
                }
            };
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
            // A pair's bytes into an aggregate (`(f32, f32)` as `[f32; 2]`).
            if let (PlaceRef::Mem { addr, .. }, Repr::Pair(s0, o0, s1, o1)) =
                (&dest, self.repr(&from)?)
                && self.layout_of(&from)?.size == size
            {
                let Val::Pair(a, b) = self.read_operand(op)? else {
                    return Err(self.internal("a pair operand that is not a pair"));
                };
                self.store_scalar_aligned(*addr, o0, s0, a, align.min(s0.size()));
                self.store_scalar_aligned(*addr, o1, s1, b, align.min(s1.size()));
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
                let tag = match &r {
                    PlaceRef::Mem { addr, .. } => {
                        self.load_scalar_at(*addr, offset, Scalar::Int((size * 8) as u16))
                    }
                    // A fieldless enum held as its tag, or an enum pair's slot 0.
                    PlaceRef::Ssa(..) => match self.read_place(&r)? {
                        Val::Immediate(tag) | Val::Pair(tag, _) => tag,
                        _ => return Err(self.internal("the tag of an SSA enum")),
                    },
                };
                let t = self.b.types().int(bits);
                let tb = (size * 8) as u16;
                let widen = if self.sh.layouts.has_negative_discriminant(&ety) {
                    CastOp::SExt
                } else {
                    CastOp::ZExt
                };
                Ok(Val::Immediate(match tb.cmp(&bits) {
                    std::cmp::Ordering::Less => self.b.cast(widen, tag, t),
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
                let word = match &r {
                    PlaceRef::Mem { addr, .. } if size == POINTER_SIZE => {
                        self.load_scalar_at(*addr, offset, Scalar::Ptr)
                    }
                    PlaceRef::Mem { addr, .. } => {
                        self.load_scalar_at(*addr, offset, Scalar::Int((size * 8) as u16))
                    }
                    // In a register: the whole value, or the pair's slot
                    // at the niche's offset.
                    PlaceRef::Ssa(..) => {
                        let slot = self.ssa_slot_at(&ety, offset)?;
                        match (self.read_place(&r)?, slot) {
                            (Val::Immediate(w), SsaPart::Whole) => w,
                            (Val::Pair(w, _), SsaPart::Slot(0))
                            | (Val::Pair(_, w), SsaPart::Slot(1)) => w,
                            _ => return Err(self.internal("niche word")),
                        }
                    }
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
        let Some(tag) = self.tag_of(&ety, &name)? else {
            return Ok(());
        };
        match r {
            PlaceRef::Mem { addr, .. } => {
                self.write_tag_at(addr, tag);
                Ok(())
            }
            PlaceRef::Ssa(l, SsaPart::Whole) => {
                let part = self.ssa_slot_at(&ety, tag.offset)?;
                let s = match (self.repr(&ety)?, part) {
                    (Repr::Scalar(s), _) | (Repr::Pair(s, ..), SsaPart::Slot(0)) => s,
                    (Repr::Pair(_, _, s, _), _) => s,
                    (r, _) => return Err(self.internal(&format!("set discriminant of {r:?}"))),
                };
                let v = self.tag_value(tag, s);
                self.write_place(&PlaceRef::Ssa(l, part), Val::Immediate(v))
            }
            // An enum held in one slot of a pair (`(Option<&u32>, u32).0`):
            // a scalar form, whose tag is the whole slot.
            PlaceRef::Ssa(l, SsaPart::Slot(k)) => match self.repr(&ety)? {
                Repr::Scalar(s) if tag.offset == 0 => {
                    let v = self.tag_value(tag, s);
                    self.write_place(&PlaceRef::Ssa(l, SsaPart::Slot(k)), Val::Immediate(v))
                }
                r => Err(self.internal(&format!("set discriminant of {r:?} in one slot"))),
            },
            PlaceRef::Ssa(..) => Err(self.internal("set discriminant of a downcast SSA local")),
        }
    }

    /// What marks `variant` of the enum `ety`: a direct tag, or a tagged
    /// variant's niche value; `None` when nothing is written (a niche's
    /// untagged variant, an enum's only variant).
    fn tag_of(&self, ety: &Ty, variant: &str) -> Result<Option<Tag>, Diagnostic> {
        let (enc, _, _) = self.enum_encoding(ety)?;
        match enc {
            Encoding::Direct { offset, size } => Ok(Some(Tag {
                offset,
                bits: (size * 8) as u16,
                value: self.discr_value(ety, variant)?,
            })),
            Encoding::Niche {
                offset,
                size,
                tagged,
                ..
            } => Ok(tagged
                .iter()
                .find(|(name, _)| name == variant)
                .map(|(_, value)| Tag {
                    offset,
                    bits: (size * 8) as u16,
                    value: *value as i128,
                })),
            Encoding::Single { variant: only } if only == variant => Ok(None),
            Encoding::Single { variant: only } => Err(self.unsupported(format!(
                "variant `{variant}` of `{ety}`, whose only inhabited variant is `{only}`"
            ))),
        }
    }

    /// Which part of a register-held enum of type `ety` holds its bytes at
    /// `offset`, where a tag or niche goes: the whole scalar (at 0), or the
    /// pair's slot at that offset.
    fn ssa_slot_at(&self, ety: &Ty, offset: u64) -> Result<SsaPart, Diagnostic> {
        match self.repr(ety)? {
            Repr::Scalar(_) if offset == 0 => Ok(SsaPart::Whole),
            Repr::Pair(_, o0, _, _) if o0 == offset => Ok(SsaPart::Slot(0)),
            Repr::Pair(_, _, _, o1) if o1 == offset => Ok(SsaPart::Slot(1)),
            r => Err(self.internal(&format!("no part of {r:?} (`{ety}`) is at offset {offset}"))),
        }
    }

    /// A tag as the scalar that holds it in a register: the null pointer of
    /// `Option<&T>`'s `None` is a pointer, not the integer 0.
    fn tag_value(&mut self, tag: Tag, s: Scalar) -> Value {
        match s {
            Scalar::Ptr if tag.value == 0 => self.null_ptr(),
            Scalar::Ptr => {
                let i = self.iconst(tag.bits, tag.value);
                let p = generic_i8_ptr(self.b.module());
                self.b.cast(CastOp::IntToPtr, i, p)
            }
            _ => self.iconst(tag.bits, tag.value),
        }
    }

    fn write_tag_at(&mut self, addr: Value, tag: Tag) {
        let v = self.iconst(tag.bits, tag.value);
        self.store_scalar_at(addr, tag.offset, Scalar::Int(tag.bits), v);
    }

    /// Writes the tag of `variant` into the enum at `addr`.
    fn write_tag(&mut self, addr: Value, ety: &Ty, variant: &str) -> Result<(), Diagnostic> {
        if let Some(tag) = self.tag_of(ety, variant)? {
            self.write_tag_at(addr, tag);
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
            // (see `LayoutTable::record_captures` and `capture_offset`).
            AggregateKind::Opaque(s) if s.starts_with("{closure@") => {
                for (i, op) in ops.iter().enumerate() {
                    if is_uninit(op) {
                        continue;
                    }
                    let fty = self.operand_ty(op)?;
                    let off = self.capture_offset(ty, i as u32, &fty).map_err(|_| {
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

    /// An aggregate whose destination is an SSA value: a scalar wrapper
    /// (`NonNull`, `(x,)`), an enum held in registers (`Some(p)`, `None`,
    /// `Ordering::Less`, `Ok(x)`), a pair, or a fat raw pointer.
    fn aggregate_value(
        &mut self,
        ty: &Ty,
        kind: &AggregateKind,
        ops: &[Operand],
    ) -> Result<Val, Diagnostic> {
        // Zero-sized fields (`PhantomData`) take no part of the value.
        let vals: Vec<Val> = ops
            .iter()
            .map(|o| self.read_operand(o))
            .filter(|v| !matches!(v, Ok(Val::Zst)))
            .collect::<Result<_, _>>()?;
        let repr = self.repr(ty)?;
        if let AggregateKind::Adt { path, .. } = kind
            && matches!(self.layout_of(ty)?.shape, Shape::Enum { .. })
        {
            return self.enum_value(ty, path.last_name(), &repr, &vals);
        }
        match (repr, vals.as_slice()) {
            // A wrapper of its one field (`NonNull`, `Rev<slice::Iter>`).
            (Repr::Scalar(_), [v @ Val::Immediate(_)]) | (Repr::Pair(..), [v @ Val::Pair(..)]) => {
                Ok(*v)
            }
            (Repr::Pair(..), [Val::Immediate(a), Val::Immediate(b)]) => Ok(Val::Pair(*a, *b)),
            (Repr::Zst, ..) => Ok(Val::Zst),
            (r, v) => Err(self.internal(&format!("aggregate {kind:?} of {v:?} as {r:?}"))),
        }
    }

    /// `variant` of the enum `ty` with the field values `vals`, held in
    /// registers as `repr` (see `repr::scalar_enum`): a niche enum is its
    /// payload or the variant's niche value, a fieldless enum its tag, an
    /// enum pair its tag beside its payload (undefined without one).
    fn enum_value(
        &mut self,
        ty: &Ty,
        variant: &str,
        repr: &Repr,
        vals: &[Val],
    ) -> Result<Val, Diagnostic> {
        let tag = self.tag_of(ty, variant)?;
        match (repr, vals, tag) {
            // The untagged variant of a niche enum: its payload as it is.
            (Repr::Scalar(_), [v @ Val::Immediate(_)], None)
            | (Repr::Pair(..), [v @ Val::Pair(..)], None) => Ok(*v),
            (Repr::Scalar(s), [], Some(tag)) => Ok(Val::Immediate(self.tag_value(tag, *s))),
            // A tag (or niche value) in its slot, the other slot undefined.
            (Repr::Pair(s0, o0, s1, _), [], Some(tag)) => {
                if tag.offset == *o0 {
                    let rest = self.undef_of(*s1);
                    Ok(Val::Pair(self.tag_value(tag, *s0), rest))
                } else {
                    let rest = self.undef_of(*s0);
                    Ok(Val::Pair(rest, self.tag_value(tag, *s1)))
                }
            }
            (Repr::Pair(s0, o0, ..), [Val::Immediate(x)], Some(tag)) if tag.offset == *o0 => {
                Ok(Val::Pair(self.tag_value(tag, *s0), *x))
            }
            (r, v, _) => Err(self.internal(&format!(
                "variant `{variant}` of `{ty}` from {v:?} as {r:?}"
            ))),
        }
    }
}

/// The integer that marks an enum's variant, and where it goes.
#[derive(Clone, Copy, Debug)]
struct Tag {
    /// Its offset in the enum.
    offset: u64,
    /// Its width.
    bits: u16,
    /// Its value.
    value: i128,
}
