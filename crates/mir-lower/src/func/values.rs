//! Places and operands: reading and writing MIR values (constants are in
//! [`super::constants`]).

use cranelift_entity::EntityRef;
use device_ir::layout::POINTER_SIZE;
use device_ir::{BinaryOp, CastOp, IntCC, MemFlags, Ty as DTy, Value};
use mir_import::eval::layout::{Encoding, Layout, Shape};
use mir_import::model::{Local, Operand, Place, PlaceElem, Ty};

use super::{FnLower, Home};
use crate::diag::{Diagnostic, Rule};
use crate::repr::{Repr, Scalar, repr_of};

/// A MIR value on the device, in rustc codegen's three forms (its
/// `OperandValue::{Immediate, Pair, Ref}`).
#[derive(Clone, Copy, Debug)]
pub enum Val {
    /// Zero-sized: nothing to carry.
    Zst,
    /// One scalar, carried as an SSA value.
    Immediate(Value),
    /// A scalar pair (a fat pointer, `(T, bool)`), as two SSA values.
    Pair(Value, Value),
    /// An aggregate, by reference: the address of its bytes in memory.
    ByRef(Value),
}

/// Which part of an SSA local a place names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsaPart {
    /// The whole value: a scalar, or both slots of a pair.
    Whole,
    /// One slot of a pair: a tuple's field, or an enum pair's payload (1).
    Slot(usize),
    /// An enum downcast to a variant, before its field is named.
    Variant,
}

/// A resolved place.
#[derive(Clone, Debug)]
pub enum PlaceRef {
    /// A whole SSA local, or one part of it.
    Ssa(Local, SsaPart),
    /// Memory.
    Mem {
        /// The address (an `i8*`).
        addr: Value,
        /// The type stored there.
        ty: Ty,
        /// A slice's length, for an unsized place.
        meta: Option<Value>,
        /// The variant after a downcast.
        variant: Option<String>,
    },
}

impl FnLower<'_, '_> {
    pub(super) fn local_ty(&self, l: Local) -> Ty {
        self.body.locals[l].ty.clone()
    }

    pub(super) fn repr(&self, ty: &Ty) -> Result<Repr, Diagnostic> {
        repr_of(self.sh.layouts, ty).map_err(|e| self.unsupported(e))
    }

    /// rustc's layout of `ty`, or a diagnostic naming why it is unknown.
    pub(super) fn layout_of(&self, ty: &Ty) -> Result<Layout, Diagnostic> {
        self.sh.layouts.of(ty).map_err(|e| self.unsupported(e))
    }

    pub(super) fn iconst(&mut self, bits: u16, v: i128) -> Value {
        let t = self.b.types().int(bits);
        self.b.iconst(t, v)
    }

    /// `addr + off` bytes.
    pub(super) fn offset(&mut self, addr: Value, off: u64) -> Value {
        if off == 0 {
            return addr;
        }
        let o = self.iconst(64, off as i128);
        self.b.byte_offset(addr, o)
    }

    /// The value of representation `repr` stored at `addr`: its scalars
    /// loaded, or the address itself for a memory value.
    pub(super) fn load_repr(&mut self, addr: Value, repr: &Repr) -> Val {
        self.load_repr_with(addr, repr, MemFlags::empty())
    }

    /// [`Self::load_repr`] whose scalar loads carry `flags` (a volatile
    /// read); a memory value is still its address, read by whoever copies it.
    pub(super) fn load_repr_with(&mut self, addr: Value, repr: &Repr, flags: MemFlags) -> Val {
        let load = |this: &mut Self, off: u64, s: Scalar| {
            this.load_scalar_with(addr, off, s, s.size().min(8), flags)
        };
        match *repr {
            Repr::Zst => Val::Zst,
            Repr::Scalar(s) => Val::Immediate(load(self, 0, s)),
            Repr::Pair(s0, o0, s1, o1) => {
                let a = load(self, o0, s0);
                Val::Pair(a, load(self, o1, s1))
            }
            Repr::Mem { .. } => Val::ByRef(addr),
        }
    }

    pub(super) fn load_scalar_at(&mut self, addr: Value, off: u64, s: Scalar) -> Value {
        self.load_scalar_aligned(addr, off, s, s.size().min(8))
    }

    /// [`Self::load_scalar_at`] where the scalar may sit at a smaller
    /// alignment than its own (a `u32` read from a `[u8; 4]`).
    pub(super) fn load_scalar_aligned(
        &mut self,
        addr: Value,
        off: u64,
        s: Scalar,
        align: u64,
    ) -> Value {
        self.load_scalar_with(addr, off, s, align, MemFlags::empty())
    }

    /// [`Self::load_scalar_aligned`] with the access's flags (volatile).
    pub(super) fn load_scalar_with(
        &mut self,
        addr: Value,
        off: u64,
        s: Scalar,
        align: u64,
        flags: MemFlags,
    ) -> Value {
        if s == Scalar::Int(128) && flags.contains(MemFlags::VOLATILE) {
            return self.load_volatile_u128(addr, off, align);
        }
        let p = self.offset(addr, off);
        let t = s.mem_ty(self.b.module());
        let typed = self.b.ptr_bitcast(p, t);
        let v = self.b.load_with(t, typed, align.clamp(1, 8) as u32, flags);
        if s == Scalar::Bool {
            let zero = self.iconst(8, 0);
            return self.b.icmp(IntCC::Ne, v, zero);
        }
        v
    }

    /// `v`, an unsigned integer, at the width of the integer type `to`:
    /// zero-extended or truncated (shift and rotation counts, bit counts).
    pub(super) fn zext_or_trunc(&mut self, v: Value, to: DTy) -> Value {
        let from = self.b.value_ty(v);
        let (fb, tb) = (self.b.types().int_bits(from), self.b.types().int_bits(to));
        match (fb, tb) {
            (Some(f), Some(t)) if f > t => self.b.cast(CastOp::Trunc, v, to),
            (Some(f), Some(t)) if f < t => self.b.cast(CastOp::ZExt, v, to),
            _ => v,
        }
    }

    pub(super) fn store_scalar_at(&mut self, addr: Value, off: u64, s: Scalar, v: Value) {
        self.store_scalar_aligned(addr, off, s, v, s.size().min(8));
    }

    /// [`Self::store_scalar_at`] where the scalar may sit at a smaller
    /// alignment than its own (a `u32` stored into a `[u8; 4]`).
    pub(super) fn store_scalar_aligned(
        &mut self,
        addr: Value,
        off: u64,
        s: Scalar,
        v: Value,
        align: u64,
    ) {
        self.store_scalar_with(addr, off, s, v, align, MemFlags::empty());
    }

    /// [`Self::store_scalar_aligned`] with the access's flags (volatile).
    pub(super) fn store_scalar_with(
        &mut self,
        addr: Value,
        off: u64,
        s: Scalar,
        v: Value,
        align: u64,
        flags: MemFlags,
    ) {
        if s == Scalar::Int(128) && flags.contains(MemFlags::VOLATILE) {
            return self.store_volatile_u128(addr, off, v, align);
        }
        let p = self.offset(addr, off);
        let t = s.mem_ty(self.b.module());
        let v = if s == Scalar::Bool {
            self.b.cast(CastOp::ZExt, v, t)
        } else {
            v
        };
        let typed = self.b.ptr_bitcast(p, t);
        self.b.store_with(v, typed, align.clamp(1, 8) as u32, flags);
    }

    /// A volatile 128-bit read as two volatile 64-bit ones, the low half
    /// first. libNVVM miscompiles `load volatile i128` at `-opt=3`: it
    /// makes the volatile loads, but the value comes from two plain loads
    /// it adds (and a `store volatile i128` becomes two plain stores); PTX
    /// has no 128-bit access, so the halves are what a GPU does either way.
    fn load_volatile_u128(&mut self, addr: Value, off: u64, align: u64) -> Value {
        let i64t = self.b.types().i64();
        let i128t = self.b.types().int(128);
        let align = align.clamp(1, 8) as u32;
        let half = |this: &mut Self, at: u64| {
            let p = this.offset(addr, at);
            let typed = this.b.ptr_bitcast(p, i64t);
            let v = this.b.load_with(i64t, typed, align, MemFlags::VOLATILE);
            this.b.cast(CastOp::ZExt, v, i128t)
        };
        let lo = half(self, off);
        let hi = half(self, off + 8);
        let shift = self.iconst(128, 64);
        let hi = self.b.binary(BinaryOp::Shl, hi, shift);
        self.b.binary(BinaryOp::Or, lo, hi)
    }

    /// A volatile 128-bit write as two volatile 64-bit ones, the low half
    /// first (see [`Self::load_volatile_u128`]).
    fn store_volatile_u128(&mut self, addr: Value, off: u64, v: Value, align: u64) {
        let i64t = self.b.types().i64();
        let align = align.clamp(1, 8) as u32;
        let shift = self.iconst(128, 64);
        let high = self.b.binary(BinaryOp::LShr, v, shift);
        for (half, at) in [(v, off), (high, off + 8)] {
            let half = self.b.cast(CastOp::Trunc, half, i64t);
            let p = self.offset(addr, at);
            let typed = self.b.ptr_bitcast(p, i64t);
            self.b.store_with(half, typed, align, MemFlags::VOLATILE);
        }
    }

    /// Copies `size` bytes, in the widest chunks `align` allows.
    pub(super) fn memcpy(&mut self, dst: Value, src: Value, size: u64, align: u64) {
        self.memcpy_with(dst, src, size, align, MemFlags::empty(), MemFlags::empty());
    }

    /// [`Self::memcpy`] whose loads carry `load` and whose stores carry
    /// `store` (a volatile read or write of an aggregate: one volatile
    /// access per chunk, in address order).
    pub(super) fn memcpy_with(
        &mut self,
        dst: Value,
        src: Value,
        size: u64,
        align: u64,
        load: MemFlags,
        store: MemFlags,
    ) {
        let chunk = align.clamp(1, 8);
        let mut off = 0;
        while off < size {
            let n = if size - off >= chunk { chunk } else { 1 };
            let s = Scalar::Int((n * 8) as u16);
            let v = self.load_scalar_with(src, off, s, n, load);
            self.store_scalar_with(dst, off, s, v, n, store);
            off += n;
        }
    }

    /// Resolves a place.
    pub(super) fn place(&mut self, p: &Place) -> Result<PlaceRef, Diagnostic> {
        let ty = self.local_ty(p.local);
        let mut cur = match self.homes[p.local.index()].clone() {
            Home::Zst => self.zst_place(ty),
            Home::Ssa(_) => PlaceRef::Ssa(p.local, SsaPart::Whole),
            Home::Mem(addr) => PlaceRef::Mem {
                addr,
                ty,
                meta: None,
                variant: None,
            },
        };
        for elem in &p.projection {
            cur = self.project(cur, elem)?;
        }
        Ok(cur)
    }

    /// A place of a zero-sized type: nothing is read or written there, and
    /// its address is what rustc gives one (`NonNull::dangling`): its
    /// alignment, never null, so `Some(&zst)` is `Some` and the address is
    /// aligned.
    fn zst_place(&mut self, ty: Ty) -> PlaceRef {
        let align = self.layout_of(&ty).map_or(1, |l| l.align.max(1));
        let i = self.iconst(64, i128::from(align));
        let p = crate::repr::generic_i8_ptr(self.b.module());
        PlaceRef::Mem {
            addr: self.b.cast(device_ir::CastOp::IntToPtr, i, p),
            ty,
            meta: None,
            variant: None,
        }
    }

    /// An undefined value of scalar kind `s`: bytes nobody wrote.
    pub(super) fn undef_of(&mut self, s: Scalar) -> Value {
        let t = s.ssa_ty(self.b.module());
        self.b.undef(t)
    }

    fn project(&mut self, cur: PlaceRef, elem: &PlaceElem) -> Result<PlaceRef, Diagnostic> {
        match (cur, elem) {
            (PlaceRef::Ssa(l, SsaPart::Whole), PlaceElem::Deref) => {
                let ty = self.local_ty(l);
                let pointee = ty
                    .pointee()
                    .cloned()
                    .ok_or_else(|| self.unsupported("deref"))?;
                let v = self.read_operand(&Operand::Copy(Place::local(l)))?;
                Ok(match v {
                    Val::Immediate(a) => PlaceRef::Mem {
                        addr: a,
                        ty: pointee,
                        meta: None,
                        variant: None,
                    },
                    Val::Pair(a, n) => PlaceRef::Mem {
                        addr: a,
                        ty: pointee,
                        meta: Some(n),
                        variant: None,
                    },
                    _ => return Err(self.unsupported("deref of a non-pointer")),
                })
            }
            (
                PlaceRef::Ssa(l, part @ (SsaPart::Whole | SsaPart::Variant)),
                PlaceElem::Field(i, fty),
            ) => {
                let field = self.repr(fty).ok();
                let own = &self.reprs[l.index()];
                match (part, own, field) {
                    // A zero-sized field (`Err(())`, `MaybeUninit`'s
                    // `uninit`) holds nothing.
                    (_, _, Some(Repr::Zst)) => Ok(self.zst_place(fty.clone())),
                    // A field held as the whole value is: `NonNull`'s
                    // pointer, a wrapper's `T`, a niche enum's payload
                    // (`Some(p)` of `Option<&T>`, `Some((i, p))`).
                    (_, Repr::Scalar(_), _) => Ok(PlaceRef::Ssa(l, SsaPart::Whole)),
                    (_, own, Some(f)) if *own == f => Ok(PlaceRef::Ssa(l, SsaPart::Whole)),
                    // A pair's field `i` is its slot `i` (a tuple, a slice
                    // iterator); an enum pair's one field is slot 1, beside
                    // the tag.
                    (SsaPart::Whole, Repr::Pair(..), Some(Repr::Scalar(_))) if *i < 2 => {
                        Ok(PlaceRef::Ssa(l, SsaPart::Slot(*i as usize)))
                    }
                    (SsaPart::Variant, Repr::Pair(..), Some(Repr::Scalar(_))) if *i == 0 => {
                        Ok(PlaceRef::Ssa(l, SsaPart::Slot(1)))
                    }
                    _ => Err(self.internal(&format!("field {i} of an SSA local"))),
                }
            }
            (PlaceRef::Ssa(l, SsaPart::Whole), PlaceElem::Downcast(_)) => {
                Ok(PlaceRef::Ssa(l, SsaPart::Variant))
            }
            // One slot holds one scalar: a wrapper of it, a niche enum
            // held as it (`(Option<&u32>, usize)`'s first field, matched as
            // `Some(x)`), or a variant of it is the same slot.
            (PlaceRef::Ssa(l, SsaPart::Slot(k)), PlaceElem::Downcast(_)) => {
                Ok(PlaceRef::Ssa(l, SsaPart::Slot(k)))
            }
            (PlaceRef::Ssa(l, SsaPart::Slot(k)), PlaceElem::Field(_, fty)) => {
                match self.repr(fty)? {
                    Repr::Zst => Ok(self.zst_place(fty.clone())),
                    Repr::Scalar(_) => Ok(PlaceRef::Ssa(l, SsaPart::Slot(k))),
                    r => Err(self.internal(&format!("a field {r:?} of one SSA slot"))),
                }
            }
            (PlaceRef::Ssa(..), e) => {
                Err(self.internal(&format!("projection {e:?} of an SSA local")))
            }
            (
                PlaceRef::Mem {
                    addr,
                    ty,
                    meta,
                    variant,
                },
                e,
            ) => self.project_mem(addr, ty, meta, variant, e),
        }
    }

    fn project_mem(
        &mut self,
        addr: Value,
        ty: Ty,
        meta: Option<Value>,
        variant: Option<String>,
        e: &PlaceElem,
    ) -> Result<PlaceRef, Diagnostic> {
        match e {
            PlaceElem::Deref => {
                let pointee = ty
                    .pointee()
                    .cloned()
                    .ok_or_else(|| self.unsupported("deref"))?;
                let a = self.load_scalar_at(addr, 0, Scalar::Ptr);
                let m = if self.sh.layouts.is_unsized(&pointee) {
                    // A length, or a trait object's vtable address.
                    let meta = match self.repr(&ty)? {
                        Repr::Pair(_, _, s, _) => s,
                        _ => Scalar::Int(64),
                    };
                    Some(self.load_scalar_at(addr, POINTER_SIZE, meta))
                } else {
                    None
                };
                Ok(PlaceRef::Mem {
                    addr: a,
                    ty: pointee,
                    meta: m,
                    variant: None,
                })
            }
            PlaceElem::Field(i, fty) => {
                let off = match variant {
                    None if ty.is_closure() => self.capture_offset(&ty, *i, fty)?,
                    _ => self.field_offset(&ty, variant.as_deref(), &i.to_string())?,
                };
                let a = self.offset(addr, off);
                // The unsized tail of a dynamically sized struct keeps the
                // struct's length. Only a slice or `str` tail sits at the
                // offset rustc printed: a `dyn` tail's offset depends on the
                // alignment its vtable gives, and a nested struct's tail
                // may be one.
                let meta = if self.sh.layouts.is_unsized(fty) {
                    if !matches!(fty, Ty::Slice(_) | Ty::Str) {
                        return Err(self.unsupported(format!(
                            "the dynamically sized field `{fty}` of `{ty}` (only a slice or `str` tail is supported)"
                        )));
                    }
                    Some(meta.ok_or_else(|| {
                        self.unsupported(format!(
                            "the unsized field `{fty}` of `{ty}` without a length"
                        ))
                    })?)
                } else {
                    None
                };
                Ok(PlaceRef::Mem {
                    addr: a,
                    ty: fty.clone(),
                    meta,
                    variant: None,
                })
            }
            PlaceElem::Downcast(v) => Ok(PlaceRef::Mem {
                addr,
                ty,
                meta,
                variant: Some(v.clone()),
            }),
            PlaceElem::Index(l) => {
                let (elem, stride) = self.elem_of(&ty)?;
                let idx = self.read_local_scalar(*l)?;
                let s = self.iconst(64, stride as i128);
                let off = self.b.imul(idx, s);
                let a = self.b.byte_offset(addr, off);
                Ok(PlaceRef::Mem {
                    addr: a,
                    ty: elem,
                    meta: None,
                    variant: None,
                })
            }
            PlaceElem::ConstantIndex {
                offset, from_end, ..
            } => {
                let (elem, stride) = self.elem_of(&ty)?;
                let a = if *from_end {
                    let len = match (&ty, meta) {
                        (Ty::Array(_, mir_import::model::ArrayLen::Known(n)), _) => {
                            self.iconst(64, *n as i128)
                        }
                        (_, Some(m)) => m,
                        _ => return Err(self.unsupported("index from the end of an unsized place")),
                    };
                    let k = self.iconst(64, *offset as i128);
                    let idx = self.b.binary(device_ir::BinaryOp::Sub, len, k);
                    let s = self.iconst(64, stride as i128);
                    let off = self.b.imul(idx, s);
                    self.b.byte_offset(addr, off)
                } else {
                    self.offset(addr, offset * stride)
                };
                Ok(PlaceRef::Mem {
                    addr: a,
                    ty: elem,
                    meta: None,
                    variant: None,
                })
            }
            PlaceElem::Subslice { from, to, from_end } => {
                let (_, stride) = self.elem_of(&ty)?;
                let a = self.offset(addr, from * stride);
                let known = |e: &Ty, n: u64| {
                    Ty::Array(Box::new(e.clone()), mir_import::model::ArrayLen::Known(n))
                };
                match (&ty, from_end) {
                    (Ty::Array(e, mir_import::model::ArrayLen::Known(n)), true) => {
                        let ty = known(e, n.saturating_sub(from + to));
                        Ok(PlaceRef::Mem {
                            addr: a,
                            ty,
                            meta: None,
                            variant: None,
                        })
                    }
                    (Ty::Array(e, _), false) => {
                        let ty = known(e, to.saturating_sub(*from));
                        Ok(PlaceRef::Mem {
                            addr: a,
                            ty,
                            meta: None,
                            variant: None,
                        })
                    }
                    (Ty::Slice(_) | Ty::Str, true) => {
                        let n =
                            meta.ok_or_else(|| self.unsupported("subslice without a length"))?;
                        let k = self.iconst(64, (from + to) as i128);
                        let len = self.b.binary(device_ir::BinaryOp::Sub, n, k);
                        Ok(PlaceRef::Mem {
                            addr: a,
                            ty,
                            meta: Some(len),
                            variant: None,
                        })
                    }
                    _ => Err(self.unsupported(format!("subslice of `{ty}`"))),
                }
            }
        }
    }

    fn elem_of(&self, ty: &Ty) -> Result<(Ty, u64), Diagnostic> {
        let elem = match ty {
            Ty::Array(e, _) | Ty::Slice(e) => (**e).clone(),
            Ty::Str => Ty::Int(mir_import::model::IntTy::U8),
            t => return Err(self.unsupported(format!("index into `{t}`"))),
        };
        let stride = self.layout_of(&elem)?.size;
        Ok((elem, stride))
    }

    /// The offset of capture `index`, of type `capture`, in closure type
    /// `closure`: the report's, or, where it gives none, 0 for a capture
    /// that takes no space (it may sit anywhere) or for a capture as large
    /// as the closure itself, which is then the one capture that takes
    /// space (as `LayoutTable::record_captures` reasons at import). That is
    /// what `core`'s closures over a function item or a capture-less
    /// closure are (`map_fold(f, g)`), named only by the span of their
    /// definition in the instance that builds them. Two closure types
    /// printed alike keep a layout only if theirs agree, so `closure`'s
    /// size is the accessed closure's.
    pub(super) fn capture_offset(
        &self,
        closure: &Ty,
        index: u32,
        capture: &Ty,
    ) -> Result<u64, Diagnostic> {
        let reported = self.field_offset(closure, None, &index.to_string());
        if reported.is_ok() || self.repr(capture)? == Repr::Zst {
            return Ok(reported.unwrap_or(0));
        }
        let size = self.layout_of(capture)?.size;
        if size > 0 && self.layout_of(closure)?.size == size {
            return Ok(0);
        }
        reported
    }

    /// The offset of field `name` (an index such as `0`, or a declared name)
    /// of a struct, a tuple, an enum variant or a fat pointer.
    pub(super) fn field_offset(
        &self,
        ty: &Ty,
        variant: Option<&str>,
        name: &str,
    ) -> Result<u64, Diagnostic> {
        let l = self.layout_of(ty)?;
        let found = match (&l.shape, variant) {
            (Shape::Struct { fields }, None) => fields.get(name).copied(),
            (Shape::Enum { variants, .. }, Some(v)) => variants
                .iter()
                .find(|x| x.name == v)
                .and_then(|x| x.fields.get(name).copied()),
            (Shape::FatPointer, None) => match name {
                "0" => Some(0),
                "1" => Some(POINTER_SIZE),
                _ => None,
            },
            (Shape::Zst, _) => Some(0),
            (Shape::Enum { variants, .. }, None)
                if mir_import::eval::layout::undeclared_union_field(variants, name) =>
            {
                Some(0)
            }
            _ => None,
        };
        found.ok_or_else(|| {
            self.unsupported(match variant {
                Some(v) => format!(
                    "reading field `{name}` of variant `{v}` of `{ty}` is not supported: rustc's layout report gives no offset for it"
                ),
                None => format!(
                    "reading field `{name}` of `{ty}` is not supported: rustc's layout report gives no offset for it"
                ),
            })
        })
    }

    pub(super) fn read_local_scalar(&mut self, l: Local) -> Result<Value, Diagnostic> {
        match self.read_operand(&Operand::Copy(Place::local(l)))? {
            Val::Immediate(v) => Ok(v),
            _ => Err(self.unsupported(format!("{l} is not a scalar"))),
        }
    }

    pub(super) fn scalar_operand(&mut self, op: &Operand) -> Result<Value, Diagnostic> {
        match self.read_operand(op)? {
            Val::Immediate(v) => Ok(v),
            v => Err(self.internal(&format!("expected a scalar operand, got {v:?}"))),
        }
    }

    pub(super) fn operand_ty(&self, op: &Operand) -> Result<Ty, Diagnostic> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => self.place_ty(p),
            Operand::Const(c) => self.const_ty(c),
        }
    }

    pub(super) fn place_ty(&self, p: &Place) -> Result<Ty, Diagnostic> {
        let mut ty = self.local_ty(p.local);
        for e in &p.projection {
            ty = match e {
                PlaceElem::Deref => ty
                    .pointee()
                    .cloned()
                    .ok_or_else(|| self.unsupported("deref"))?,
                PlaceElem::Field(_, t) => t.clone(),
                PlaceElem::Downcast(_) | PlaceElem::Subslice { .. } => ty,
                PlaceElem::Index(_) | PlaceElem::ConstantIndex { .. } => self.elem_of(&ty)?.0,
            };
        }
        Ok(ty)
    }

    pub(super) fn read_operand(&mut self, op: &Operand) -> Result<Val, Diagnostic> {
        match op {
            Operand::Const(c) => {
                let ty = self.const_ty(c)?;
                self.const_val(c, &ty)
            }
            Operand::Copy(p) | Operand::Move(p) => {
                let r = self.place(p)?;
                self.read_place(&r)
            }
        }
    }

    pub(super) fn read_place(&mut self, r: &PlaceRef) -> Result<Val, Diagnostic> {
        match r {
            PlaceRef::Ssa(l, part) => {
                let Home::Ssa(s) = self.homes[l.index()] else {
                    return Err(self.internal("SSA place without SSA home"));
                };
                Ok(match (&self.reprs[l.index()], part) {
                    (Repr::Scalar(_), SsaPart::Whole) => Val::Immediate(self.cur[s]),
                    (Repr::Pair(..), SsaPart::Whole) => Val::Pair(self.cur[s], self.cur[s + 1]),
                    (Repr::Pair(..), SsaPart::Slot(k)) if *k < 2 => Val::Immediate(self.cur[s + k]),
                    _ => return Err(self.internal("bad SSA projection")),
                })
            }
            PlaceRef::Mem { addr, ty, .. } => {
                let repr = self.repr(ty)?;
                Ok(self.load_repr(*addr, &repr))
            }
        }
    }

    /// The width of `x` when it is an integer of exactly `size` bytes.
    fn int_of_size(&mut self, x: Value, size: u64) -> Option<u16> {
        let t = self.b.value_ty(x);
        self.b
            .types()
            .int_bits(t)
            .filter(|&bits| u64::from(bits) == size * 8)
    }

    /// Stores `v` of MIR type `ty` at `addr`.
    pub(super) fn write_mem(&mut self, addr: Value, ty: &Ty, v: Val) -> Result<(), Diagnostic> {
        self.write_mem_with(addr, ty, v, MemFlags::empty())
    }

    /// [`Self::write_mem`] whose stores carry `flags` (a volatile write).
    pub(super) fn write_mem_with(
        &mut self,
        addr: Value,
        ty: &Ty,
        v: Val,
        flags: MemFlags,
    ) -> Result<(), Diagnostic> {
        let store = |this: &mut Self, off: u64, s: Scalar, x: Value| {
            this.store_scalar_with(addr, off, s, x, s.size().min(8), flags);
        };
        match (self.repr(ty)?, v) {
            (Repr::Zst, _) => {}
            (Repr::Scalar(s), Val::Immediate(x)) => store(self, 0, s, x),
            (Repr::Pair(s0, o0, s1, o1), Val::Pair(a, b)) => {
                store(self, o0, s0, a);
                store(self, o1, s1, b);
            }
            (Repr::Mem { size, align }, Val::ByRef(src)) => {
                self.memcpy_with(addr, src, size, align, MemFlags::empty(), flags);
            }
            (Repr::Scalar(s), Val::ByRef(src)) => {
                let x = self.load_scalar_at(src, 0, s);
                store(self, 0, s, x);
            }
            // A fieldless enum lives in memory, but some rvalues compute it as
            // an integer of exactly its size: `Cmp` gives `Ordering` as its
            // `i8` tag. Those bits are the enum's bytes.
            (r @ Repr::Mem { size, .. }, Val::Immediate(x)) => match self.int_of_size(x, size) {
                Some(bits) => store(self, 0, crate::repr::Scalar::Int(bits), x),
                None => {
                    return Err(
                        self.internal(&format!("cannot store Immediate({x:?}) as {r:?} (`{ty}`)"))
                    );
                }
            },
            (r, v) => return Err(self.internal(&format!("cannot store {v:?} as {r:?} (`{ty}`)"))),
        }
        Ok(())
    }

    pub(super) fn write_place(&mut self, r: &PlaceRef, v: Val) -> Result<(), Diagnostic> {
        match r {
            PlaceRef::Ssa(l, part) => {
                let Home::Ssa(s) = self.homes[l.index()] else {
                    return Err(self.internal("SSA place without SSA home"));
                };
                let repr = &self.reprs[l.index()];
                match (part, v) {
                    (SsaPart::Whole, Val::Immediate(_)) if !matches!(repr, Repr::Scalar(_)) => {
                        return Err(
                            self.internal(&format!("one scalar written to a whole {repr:?}"))
                        );
                    }
                    (SsaPart::Whole, Val::Pair(..)) if !matches!(repr, Repr::Pair(..)) => {
                        return Err(self.internal(&format!("a pair written to a whole {repr:?}")));
                    }
                    (SsaPart::Whole, Val::Immediate(x)) => self.cur[s] = x,
                    (SsaPart::Whole, Val::Pair(a, b)) => {
                        self.cur[s] = a;
                        self.cur[s + 1] = b;
                    }
                    (SsaPart::Whole, Val::ByRef(src)) => {
                        let ty = self.local_ty(*l);
                        let v = self.read_place(&PlaceRef::Mem {
                            addr: src,
                            ty,
                            meta: None,
                            variant: None,
                        })?;
                        return self.write_place(r, v);
                    }
                    (SsaPart::Slot(k), Val::Immediate(x)) if *k < 2 => self.cur[s + k] = x,
                    (_, Val::Zst) => {}
                    (p, v) => {
                        return Err(self.internal(&format!("cannot write {v:?} to part {p:?}")));
                    }
                }
                Ok(())
            }
            PlaceRef::Mem { addr, ty, .. } => self.write_mem(*addr, &ty.clone(), v),
        }
    }

    /// A failure of the lowering's own invariants (a bug here, not in the
    /// kernel): [`Rule::Internal`], so that it never reads as the user's
    /// unsupported code. The message may show internal values in their
    /// `Debug` form, for whoever fixes it.
    pub(super) fn internal(&self, msg: &str) -> Diagnostic {
        self.err(Rule::Internal, msg.to_string())
    }

    /// The discriminant-value and tag encoding of an enum type, if proven.
    pub(super) fn enum_encoding(
        &self,
        ty: &Ty,
    ) -> Result<(Encoding, Vec<mir_import::eval::layout::Variant>, u64), Diagnostic> {
        let l = self.layout_of(ty)?;
        match l.shape {
            Shape::Enum { encoding, variants } => Ok((encoding, variants, l.size)),
            _ => Err(self.unsupported(format!("`{ty}` is not an enum"))),
        }
    }
}
