//! The evaluator's operations: assignments, casts, arithmetic, aggregates,
//! enum tags and printed values. Split from [`super::interp`], which owns the
//! interpreter's state, places and constants.

use std::collections::BTreeMap;

use super::consts::{
    field_offset, int_limit, scalar_bytes, sign_extend, uint_bytes, valtree_field_ty,
};
use super::error::EvalError;
use super::interp::{Interp, PlaceRef};
use super::layout::{Encoding, Layout, PTR_SIZE, Shape};
use super::memory::{Bytes, EvalAlloc, Target};
use crate::model::{
    AggregateKind, BinOp, Body, CastKind, ConstOperand, FloatTy, Mutability, Operand, Path, Rvalue,
    Ty, UnOp, ValTree,
};

type R<T> = Result<T, EvalError>;

impl Interp<'_> {
    pub(super) fn assign(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        dest: &PlaceRef,
        rv: &Rvalue,
        mutable_static: bool,
    ) -> R<()> {
        match rv {
            Rvalue::Use(op) => self.write_operand(body, locals, dest, op),
            Rvalue::Repeat(op, n) => {
                let n = match n {
                    crate::model::ArrayLen::Known(n) => n,
                    crate::model::ArrayLen::Unknown(s) => {
                        return Err(
                            format!("a repeat `[x; {s}]` whose count is not a number").into()
                        );
                    }
                };
                let Shape::Array { elem, stride, .. } = self.layout(&dest.ty)?.shape else {
                    return Err(format!("repeat into `{}`", dest.ty).into());
                };
                for i in 0..*n {
                    let slot = self.at(dest, i * stride, elem.clone());
                    self.write_operand(body, locals, &slot, op)?;
                }
                Ok(())
            }
            Rvalue::Ref(m, p) | Rvalue::RawPtr(m, p) => {
                let target = self.place(body, locals, p)?;
                if *m == Mutability::Mut
                    && mutable_static
                    && let Target::Alloc(a) = target.base
                {
                    self.mem.allocs[a].mutable = true;
                }
                let mut b = Bytes::pointer(target.base, target.offset);
                if let Some(len) = target.meta {
                    b.bytes.extend(len.to_le_bytes());
                    b.init.extend([true; 8]);
                }
                self.write(dest, &b)
            }
            Rvalue::Cast(kind, op, ty) => self.cast(body, locals, dest, kind, op, ty),
            Rvalue::BinaryOp(op, a, b) => self.binary(body, locals, dest, *op, a, b),
            Rvalue::UnaryOp(op, a) => {
                let ty = self.operand_ty(body, a)?;
                match op {
                    UnOp::PtrMetadata => {
                        let len = self.operand_bytes(body, locals, a, &ty, 2 * PTR_SIZE)?;
                        let meta = Bytes {
                            bytes: len.bytes[8..].to_vec(),
                            init: len.init[8..].to_vec(),
                            relocs: BTreeMap::new(),
                        };
                        self.write(dest, &meta)
                    }
                    UnOp::Not | UnOp::Neg => {
                        let size = self.layout(&ty)?.size;
                        let v = self.operand_bytes(body, locals, a, &ty, size)?.to_uint()?;
                        let r = match (op, &ty) {
                            (UnOp::Not, Ty::Bool) => v ^ 1,
                            (UnOp::Not, _) => !v,
                            // A float's negation flips its sign bit only.
                            (UnOp::Neg, Ty::Float(_)) => v ^ (1u128 << (size * 8 - 1)),
                            _ => v.wrapping_neg(),
                        };
                        self.write(dest, &uint_bytes(r, size))
                    }
                }
            }
            Rvalue::Aggregate(kind, ops) => self.aggregate(body, locals, dest, kind, ops),
            Rvalue::Discriminant(p) => {
                let src = self.place(body, locals, p)?;
                let v = self.read_discriminant(&src)?;
                let size = self.layout(&dest.ty)?.size;
                self.write(dest, &uint_bytes(v, size))
            }
            other => Err(format!("rvalue {other:?} is not supported").into()),
        }
    }

    fn cast(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        dest: &PlaceRef,
        kind: &CastKind,
        op: &Operand,
        ty: &Ty,
    ) -> R<()> {
        // `f as fn(..)`: a function item reified into a pointer to it, as
        // rustc's interpreter makes it (a relocation to the function).
        if let (CastKind::PointerCoercion(k), Operand::Const(ConstOperand::FnItem(path))) =
            (kind, op)
            && k.starts_with("ReifyFnPointer")
        {
            return self.write(dest, &Bytes::pointer(Target::Function(path.clone()), 0));
        }
        let src_ty = self.operand_ty(body, op)?;
        let src_size = self.layout(&src_ty)?.size;
        let b = self.operand_bytes(body, locals, op, &src_ty, src_size)?;
        let dst_size = self.layout(ty)?.size;
        match kind {
            CastKind::PtrToPtr | CastKind::Transmute => {
                if src_size < dst_size {
                    return Err(format!("cast widens `{src_ty}` to `{ty}`").into());
                }
                // A fat-to-thin pointer cast keeps the data pointer.
                let mut b = b;
                b.bytes.truncate(dst_size as usize);
                b.init.truncate(dst_size as usize);
                b.relocs.retain(|o, _| *o < dst_size);
                self.write(dest, &b)
            }
            // A trait object: the data pointer and the concrete type's
            // vtable (`eval::vtables`).
            CastKind::PointerCoercion(k)
                if k.starts_with("Unsize")
                    && let Some(object) = crate::model::object_pointee(ty) =>
            {
                let principal = crate::model::principal(object)
                    .ok_or_else(|| format!("`{ty}` has no principal trait"))?;
                let concrete = src_ty
                    .pointee()
                    .ok_or_else(|| format!("unsizing `{src_ty}`, which is no pointer"))?;
                if let Some(source) = crate::model::object_pointee(&src_ty) {
                    // Dropping auto traits keeps the vtable.
                    if crate::model::principal(source).as_deref() == Some(principal.as_str()) {
                        return self.write(dest, &b);
                    }
                    return Err(format!(
                        "`{src_ty}` to `{ty}` in a constant: an upcast to another trait's object is not supported there"
                    )
                    .into());
                }
                let vtable = self.vtable_alloc(concrete, &principal)?;
                let mut b = b;
                b.bytes.truncate(PTR_SIZE as usize);
                b.init.truncate(PTR_SIZE as usize);
                b.relocs.retain(|o, _| *o < PTR_SIZE);
                let meta = Bytes::pointer(Target::Alloc(vtable), 0);
                b.bytes.extend(meta.bytes);
                b.init.extend(meta.init);
                for (o, r) in meta.relocs {
                    b.relocs.insert(PTR_SIZE + o, r);
                }
                self.write(dest, &b)
            }
            CastKind::PointerCoercion(k) if k.starts_with("Unsize") => {
                // `&[T; N]` to `&[T]`, or `&S<[T; N]>` to `&S<[T]>`: the
                // metadata is the array's length.
                // Checked against the target: `&[T; N] as &dyn Tr` needs a
                // vtable, not `N`.
                let len = match (src_ty.pointee(), ty.pointee()) {
                    (Some(from), Some(to)) if let Some(n) = from.unsized_array_len(to) => n,
                    _ => {
                        return Err(
                            format!("unsizing `{src_ty}` to `{ty}` is not supported").into()
                        );
                    }
                };
                let mut b = b;
                b.bytes.extend(len.to_le_bytes());
                b.init.extend([true; 8]);
                self.write(dest, &b)
            }
            CastKind::PointerCoercion(k) if k.starts_with("MutToConstPointer") => {
                self.write(dest, &b)
            }
            CastKind::IntToInt => {
                let v = b.to_uint()?;
                let v = match &src_ty {
                    Ty::Int(i) if i.is_signed() => sign_extend(v, src_size),
                    _ => v,
                };
                self.write(dest, &uint_bytes(v, dst_size))
            }
            other => {
                Err(format!("cast {other:?} from `{src_ty}` to `{ty}` is not supported").into())
            }
        }
    }

    fn binary(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        dest: &PlaceRef,
        op: BinOp,
        a: &Operand,
        b: &Operand,
    ) -> R<()> {
        let ty = self.operand_ty(body, a)?;
        if op == BinOp::Offset {
            let elem = ty.pointee().ok_or("offset of a non-pointer")?.clone();
            let stride = self.layout(&elem)?.size;
            let pa = self.temp(&ty)?;
            self.write_operand(body, locals, &pa, a)?;
            let Target::Alloc(pa_alloc) = pa.base else {
                return Err("pointer temporary outside an allocation".into());
            };
            let r = self.mem.read_pointer(pa_alloc, 0);
            self.free_temp(&pa);
            let r = r?;
            let n = self.operand_uint(body, locals, b)? as u64;
            let addend = r.addend + n * stride;
            return self.write(dest, &Bytes::pointer(r.target, addend));
        }
        if let Ty::Float(f) = ty {
            let x = self.operand_uint(body, locals, a)?;
            let y = self.operand_uint(body, locals, b)?;
            let r = float_binary(op, f, x, y)
                .ok_or_else(|| format!("binary op {op:?} on `{ty}` is not supported"))?;
            let size = self.layout(&dest.ty)?.size;
            return self.write(dest, &uint_bytes(r, size));
        }
        if !matches!(ty, Ty::Int(_) | Ty::Bool | Ty::Char) {
            return Err(format!("binary op {op:?} on `{ty}` is not supported").into());
        }
        self.int_binary(dest, op, &ty, body, locals, a, b)
    }

    #[allow(clippy::too_many_arguments)]
    fn int_binary(
        &mut self,
        dest: &PlaceRef,
        op: BinOp,
        ty: &Ty,
        body: &Body,
        locals: &[EvalAlloc],
        a: &Operand,
        b: &Operand,
    ) -> R<()> {
        let size = self.layout(ty)?.size;
        let x = self.operand_uint(body, locals, a)?;
        let y = self.operand_uint(body, locals, b)?;
        let bits = (size * 8) as u32;
        let mask = if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        let signed = matches!(ty, Ty::Int(i) if i.is_signed());
        let (sx, sy) = (sign_extend(x, size) as i128, sign_extend(y, size) as i128);
        let cmp = |r: bool| Ok::<(u128, Option<bool>), EvalError>((u128::from(r), None));
        // A signed result overflows when the exact value does not survive
        // truncation to the type's width.
        let signed_overflow = |exact: Option<i128>| {
            exact.is_none_or(|r| sign_extend(r as u128 & mask, size) as i128 != r)
        };
        let (v, overflow) = match op {
            BinOp::Add | BinOp::AddUnchecked | BinOp::AddWithOverflow => {
                let r = x.wrapping_add(y) & mask;
                let of = if signed {
                    signed_overflow(sx.checked_add(sy))
                } else {
                    x.checked_add(y).is_none_or(|r| r > mask)
                };
                (r, Some(of))
            }
            BinOp::Sub | BinOp::SubUnchecked | BinOp::SubWithOverflow => {
                let r = x.wrapping_sub(y) & mask;
                let of = if signed {
                    signed_overflow(sx.checked_sub(sy))
                } else {
                    y > x
                };
                (r, Some(of))
            }
            BinOp::Mul | BinOp::MulUnchecked | BinOp::MulWithOverflow => {
                let r = x.wrapping_mul(y) & mask;
                let of = if signed {
                    signed_overflow(sx.checked_mul(sy))
                } else {
                    x.checked_mul(y).is_none_or(|r| r > mask)
                };
                (r, Some(of))
            }
            BinOp::Div | BinOp::Rem => {
                if y == 0 {
                    return Err(EvalError::DivisionByZero);
                }
                let r = match (op, signed) {
                    (BinOp::Div, true) => sx.wrapping_div(sy) as u128,
                    (BinOp::Div, false) => x / y,
                    (_, true) => sx.wrapping_rem(sy) as u128,
                    (_, false) => x % y,
                };
                (r & mask, None)
            }
            BinOp::BitAnd => (x & y, None),
            BinOp::BitOr => (x | y, None),
            BinOp::BitXor => (x ^ y, None),
            BinOp::Shl | BinOp::ShlUnchecked => ((x << (y % u128::from(bits))) & mask, None),
            BinOp::Shr | BinOp::ShrUnchecked => {
                let s = (y % u128::from(bits)) as u32;
                let r = if signed { (sx >> s) as u128 } else { x >> s };
                (r & mask, None)
            }
            BinOp::Eq => cmp(x == y)?,
            BinOp::Ne => cmp(x != y)?,
            BinOp::Lt => cmp(if signed { sx < sy } else { x < y })?,
            BinOp::Le => cmp(if signed { sx <= sy } else { x <= y })?,
            BinOp::Gt => cmp(if signed { sx > sy } else { x > y })?,
            BinOp::Ge => cmp(if signed { sx >= sy } else { x >= y })?,
            other => return Err(format!("binary op {other:?} is not supported").into()),
        };
        let with_overflow = matches!(
            op,
            BinOp::AddWithOverflow | BinOp::SubWithOverflow | BinOp::MulWithOverflow
        );
        if with_overflow {
            // `(T, bool)`: both fields at the offsets rustc chose for the tuple.
            let l = self.layout(&dest.ty)?;
            let off1 = field_offset(&l, None, "1")?;
            let off0 = field_offset(&l, None, "0")?;
            self.write(&self.at(dest, off0, ty.clone()), &uint_bytes(v, size))?;
            let of = u128::from(overflow.unwrap_or(false));
            return self.write(&self.at(dest, off1, Ty::Bool), &uint_bytes(of, 1));
        }
        let out_size = if matches!(
            op,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        ) {
            1
        } else {
            size
        };
        self.write(dest, &uint_bytes(v, out_size))
    }

    fn aggregate(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        dest: &PlaceRef,
        kind: &AggregateKind,
        ops: &[Operand],
    ) -> R<()> {
        // A closure that captures nothing is zero-sized: nothing to write
        // (`&|x| x + 1` made a trait object is such a promoted constant).
        if matches!(kind, AggregateKind::Opaque(s) if s.starts_with("{closure@")) && ops.is_empty()
        {
            return Ok(());
        }
        let layout = self.layout(&dest.ty)?;
        match kind {
            AggregateKind::Array => {
                let Shape::Array { elem, stride, .. } = &layout.shape else {
                    return Err(format!("array aggregate into `{}`", dest.ty).into());
                };
                for (i, op) in ops.iter().enumerate() {
                    let slot = self.at(dest, i as u64 * stride, elem.clone());
                    self.write_operand(body, locals, &slot, op)?;
                }
                Ok(())
            }
            AggregateKind::Tuple => {
                for (i, op) in ops.iter().enumerate() {
                    let off = field_offset(&layout, None, &i.to_string())?;
                    let ty = self.operand_ty(body, op)?;
                    self.write_operand(body, locals, &self.at(dest, off, ty), op)?;
                }
                Ok(())
            }
            AggregateKind::Adt { path, field_names } => {
                let variant = match &layout.shape {
                    Shape::Enum { .. } => Some(path.last_name().to_string()),
                    _ => None,
                };
                for (i, op) in ops.iter().enumerate() {
                    let name = field_names.get(i).cloned().unwrap_or_else(|| i.to_string());
                    let off = field_offset(&layout, variant.as_deref(), &name)?;
                    let ty = self.operand_ty(body, op)?;
                    self.write_operand(body, locals, &self.at(dest, off, ty), op)?;
                }
                if let Some(v) = variant {
                    self.write_tag(dest, &layout, &v)?;
                }
                Ok(())
            }
            AggregateKind::RawPtr(..) => {
                for (i, op) in ops.iter().enumerate() {
                    let ty = self.operand_ty(body, op)?;
                    self.write_operand(body, locals, &self.at(dest, i as u64 * PTR_SIZE, ty), op)?;
                }
                Ok(())
            }
            AggregateKind::Opaque(s) => Err(format!("aggregate `{s}` is not supported").into()),
        }
    }

    /// Marks `dest` as variant `name`: the tag for a direct encoding, zeros for
    /// the null variant of a nullable-pointer niche.
    pub(super) fn write_tag(&mut self, dest: &PlaceRef, layout: &Layout, name: &str) -> R<()> {
        let Shape::Enum { encoding, variants } = &layout.shape else {
            return Err(format!("`{}` is not an enum", dest.ty).into());
        };
        let variant = variants
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| format!("`{}` has no variant `{name}`", dest.ty))?;
        match encoding {
            Encoding::Direct { offset, size } => {
                let value = variant
                    .tag_value
                    .ok_or_else(|| format!("the tag value of `{}::{name}` is unknown", dest.ty))?;
                self.write(
                    &self.at(dest, *offset, Ty::unit()),
                    &uint_bytes(value, *size),
                )
            }
            Encoding::Niche {
                offset,
                size,
                tagged,
                ..
            } => match tagged.iter().find(|(n, _)| n == name) {
                Some((_, value)) => self.write(
                    &self.at(dest, *offset, Ty::unit()),
                    &uint_bytes(*value, *size),
                ),
                None => Ok(()),
            },
            Encoding::Single { variant } if variant == name => Ok(()),
            Encoding::Single { variant } => {
                Err(format!("`{}` has only variant `{variant}`, not `{name}`", dest.ty).into())
            }
        }
    }

    /// The discriminant of the enum at `src`: the variant's declared value, read
    /// back through the proven encoding.
    pub(super) fn read_discriminant(&self, src: &PlaceRef) -> R<u128> {
        let layout = self.layout(&src.ty)?;
        let Shape::Enum { encoding, variants } = &layout.shape else {
            return Err(format!("discriminant of non-enum `{}`", src.ty).into());
        };
        let name = match encoding {
            Encoding::Direct { offset, size } => {
                let tag = self.read_uint(&self.at(src, *offset, Ty::unit()), *size)?;
                let v = variants.iter().find(|v| v.tag_value == Some(tag));
                return v
                    .and_then(|v| v.tag_value)
                    .ok_or_else(|| format!("tag {tag} names no variant of `{}`", src.ty).into());
            }
            Encoding::Niche {
                offset,
                size,
                untagged,
                tagged,
            } => {
                // A pointer (a relocation) is never one of the niche's
                // values, which lie outside the field's valid range.
                let word = self.read(&self.at(src, *offset, Ty::unit()), *size)?;
                let value = if word.relocs.is_empty() {
                    Some(word.to_uint()?)
                } else {
                    None
                };
                tagged
                    .iter()
                    .find(|(_, v)| Some(*v) == value)
                    .map_or_else(|| untagged.clone(), |(n, _)| n.clone())
            }
            Encoding::Single { variant } => variant.clone(),
        };
        let decl = self.layouts.discriminant_of(&src.ty, &name);
        decl.ok_or_else(|| format!("the discriminant of `{}::{name}` is unknown", src.ty).into())
    }

    /// The fields of a printed tuple or struct value (of the variant `path`
    /// names, for an enum, whose tag is written last), each at its offset in
    /// `layout`.
    fn write_fields(
        &mut self,
        dest: &PlaceRef,
        layout: &Layout,
        path: Option<&Path>,
        fields: &[(String, &ValTree)],
    ) -> R<()> {
        let variant = match (&layout.shape, path) {
            (Shape::Enum { .. }, Some(p)) => Some(p.last_name().to_string()),
            _ => None,
        };
        for (name, e) in fields {
            let off = field_offset(layout, variant.as_deref(), name)?;
            let fty = match e {
                ValTree::Path(p) | ValTree::Tuple(Some(p), _) | ValTree::Struct(p, _) => {
                    self.path_value_ty(p)
                }
                _ => valtree_field_ty(e)?,
            };
            self.write_valtree(&self.at(dest, off, fty), e)?;
        }
        if let Some(v) = variant {
            self.write_tag(dest, layout, &v)?;
        }
        Ok(())
    }

    /// The type of a field printed as a path, or as a value by its path: a
    /// unit struct's own path (`PhantomData::<u32>`), a struct's, or for a
    /// variant (`Ordering::Equal` inside `Some(Ordering::Equal)`,
    /// `ControlFlow::<()>::Break(())` inside a `ControlFlow<ControlFlow<()>>`)
    /// its enum, the path less its last name, or for an integer limit
    /// (rustc prints a field holding `i32::MIN` so) the integer type.
    fn path_value_ty(&self, p: &Path) -> Ty {
        let own = Ty::Adt(p.clone());
        if self.layout(&own).is_ok() {
            return own;
        }
        if let Some(it) = p.int_limit_type() {
            return Ty::Int(it);
        }
        if p.segments.len() < 2 {
            return own;
        }
        let parent = Ty::Adt(Path {
            segments: p.segments[..p.segments.len() - 1].to_vec(),
        });
        match self.layout(&parent) {
            Ok(Layout {
                shape: Shape::Enum { variants, .. },
                ..
            }) if variants.iter().any(|v| v.name == p.last_name()) => parent,
            _ => own,
        }
    }

    pub(super) fn write_valtree(&mut self, dest: &PlaceRef, v: &ValTree) -> R<()> {
        let layout = self.layout(&dest.ty)?;
        match v {
            ValTree::Scalar(s) => self.write(dest, &scalar_bytes(s)),
            ValTree::Str(s) => self.write_str(dest, s.as_bytes()),
            ValTree::Path(p) if int_limit(p, &dest.ty).is_some() => {
                let v = int_limit(p, &dest.ty).ok_or("integer limit")?;
                self.write(dest, &v)
            }
            ValTree::Path(p) => match &layout.shape {
                Shape::Enum { .. } => self.write_tag(dest, &layout, p.last_name()),
                Shape::Zst => Ok(()),
                _ => Err(format!("value `{p}` of type `{}`", dest.ty).into()),
            },
            ValTree::Tuple(path, elems) => {
                let fields: Vec<(String, &ValTree)> = elems
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (i.to_string(), e))
                    .collect();
                self.write_fields(dest, &layout, path.as_ref(), &fields)
            }
            ValTree::Struct(path, named) => {
                let fields: Vec<(String, &ValTree)> =
                    named.iter().map(|(n, e)| (n.clone(), e)).collect();
                self.write_fields(dest, &layout, Some(path), &fields)
            }
            ValTree::Const(c) => self.write_const(dest, c),
            // `[]` (zero-sized whatever its element) or `[const 1_u8, ..]`,
            // written element by element at the destination's stride.
            ValTree::Array(elems) => match &layout.shape {
                Shape::Zst if elems.is_empty() => Ok(()),
                Shape::Array {
                    elem,
                    count,
                    stride,
                } if *count == elems.len() as u64 => {
                    let (elem, stride) = (elem.clone(), *stride);
                    for (i, e) in elems.iter().enumerate() {
                        self.write_valtree(&self.at(dest, i as u64 * stride, elem.clone()), e)?;
                    }
                    Ok(())
                }
                _ => Err(format!("array value `{v}` of type `{}`", dest.ty).into()),
            },
            other => Err(format!("printed value {other:?} is not supported").into()),
        }
    }
}

/// `op` on the `f32` or `f64` bit patterns `x` and `y`: the result's bits
/// (a comparison's `bool` as 0 or 1). IEEE 754 fixes the arithmetic, and
/// the host's is IEEE; where the result is a NaN, rustc's constant
/// evaluator gives the preferred NaN (positive, quiet, no payload), and so
/// does this. `None` for another width or operation.
pub(super) fn float_binary(op: BinOp, ty: FloatTy, x: u128, y: u128) -> Option<u128> {
    // One body for both widths: `$f` read from the low `$bits` of `x` and
    // `y`, a NaN result written as `$nan`.
    macro_rules! at_width {
        ($f:ty, $bits:ty, $nan:expr) => {{
            let (a, b) = (<$f>::from_bits(x as $bits), <$f>::from_bits(y as $bits));
            let value = |r: $f| {
                Some(if r.is_nan() {
                    $nan
                } else {
                    u128::from(r.to_bits())
                })
            };
            let cmp = |r: bool| Some(u128::from(r));
            match op {
                BinOp::Add => value(a + b),
                BinOp::Sub => value(a - b),
                BinOp::Mul => value(a * b),
                BinOp::Div => value(a / b),
                BinOp::Rem => value(a % b),
                BinOp::Eq => cmp(a == b),
                BinOp::Ne => cmp(a != b),
                BinOp::Lt => cmp(a < b),
                BinOp::Le => cmp(a <= b),
                BinOp::Gt => cmp(a > b),
                BinOp::Ge => cmp(a >= b),
                _ => None,
            }
        }};
    }
    match ty {
        FloatTy::F32 => at_width!(f32, u32, 0x7fc0_0000),
        FloatTy::F64 => at_width!(f64, u64, 0x7ff8_0000_0000_0000),
        FloatTy::F16 | FloatTy::F128 => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_op(op: BinOp, x: f64, y: f64) -> Option<u128> {
        float_binary(op, FloatTy::F64, x.to_bits().into(), y.to_bits().into())
    }

    #[test]
    fn float_arithmetic_is_ieee_and_a_nan_is_the_preferred_one() {
        assert_eq!(
            f64_op(BinOp::Div, 1.0, 3.0),
            Some((1.0f64 / 3.0).to_bits().into())
        );
        assert_eq!(f64_op(BinOp::Rem, 7.5, 2.0), Some(1.5f64.to_bits().into()));
        assert_eq!(
            f64_op(BinOp::Sub, 0.1, 0.3),
            Some((0.1f64 - 0.3).to_bits().into())
        );
        // `0.0 / 0.0` (libm's `force_eval!`): the positive quiet NaN, as
        // rustc's evaluator gives, not the host's negative one.
        assert_eq!(f64_op(BinOp::Div, 0.0, 0.0), Some(0x7ff8_0000_0000_0000));
        let f32_div = float_binary(BinOp::Div, FloatTy::F32, 0, 0);
        assert_eq!(f32_div, Some(0x7fc0_0000));
        assert_eq!(
            float_binary(
                BinOp::Mul,
                FloatTy::F32,
                1.5f32.to_bits().into(),
                4.0f32.to_bits().into()
            ),
            Some(6.0f32.to_bits().into())
        );
        // Comparisons with a NaN are false but `!=`.
        assert_eq!(f64_op(BinOp::Lt, f64::NAN, 1.0), Some(0));
        assert_eq!(f64_op(BinOp::Ne, f64::NAN, f64::NAN), Some(1));
        assert_eq!(f64_op(BinOp::Le, -0.0, 0.0), Some(1));
        // A NaN input with a sign and a payload gives the preferred NaN too,
        // as rustc's evaluator adjusts every NaN result.
        let loud = f64::from_bits(0xfff4_0000_0000_0001);
        assert_eq!(f64_op(BinOp::Add, loud, 1.0), Some(0x7ff8_0000_0000_0000));
        // `%` keeps the dividend's sign on a zero result.
        assert_eq!(
            f64_op(BinOp::Rem, -4.0, 2.0),
            Some((-0.0f64).to_bits().into())
        );
        // Neither another operation nor another width.
        assert_eq!(f64_op(BinOp::BitAnd, 1.0, 1.0), None);
        assert_eq!(float_binary(BinOp::Add, FloatTy::F16, 0, 0), None);
    }
}
