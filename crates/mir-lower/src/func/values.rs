//! Places, operands and constants: reading and writing MIR values.

use cranelift_entity::EntityRef;
use device_ir::layout::POINTER_SIZE;
use device_ir::{AddressSpace, CastOp, IntCC, Ty as DTy, Value};
use mir_import::eval::layout::{Encoding, Layout, Shape};
use mir_import::eval::{EvalAlloc, Target};
use mir_import::model::{ConstOperand, Local, Operand, Place, PlaceElem, Scalar as MirScalar, Ty};

use super::{FnLower, Home};
use crate::diag::{Diagnostic, Rule};
use crate::repr::{Repr, Scalar, generic_i8_ptr, repr_of};
use crate::views;

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

/// A resolved place.
#[derive(Clone, Debug)]
pub enum PlaceRef {
    /// A whole SSA local, or one part of an SSA pair.
    Ssa(Local, Option<usize>),
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
        let p = self.offset(addr, off);
        let t = s.mem_ty(self.b.module());
        let typed = self.b.ptr_bitcast(p, t);
        let v = self
            .b
            .load_with(t, typed, align.clamp(1, 8) as u32, Default::default());
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
        let p = self.offset(addr, off);
        let t = s.mem_ty(self.b.module());
        let v = if s == Scalar::Bool {
            self.b.cast(CastOp::ZExt, v, t)
        } else {
            v
        };
        let typed = self.b.ptr_bitcast(p, t);
        self.b
            .store_with(v, typed, align.clamp(1, 8) as u32, Default::default());
    }

    /// Copies `size` bytes, in the widest chunks `align` allows.
    pub(super) fn memcpy(&mut self, dst: Value, src: Value, size: u64, align: u64) {
        let chunk = align.clamp(1, 8);
        let mut off = 0;
        while off < size {
            let n = if size - off >= chunk { chunk } else { 1 };
            let s = Scalar::Int((n * 8) as u16);
            let v = self.load_scalar_at(src, off, s);
            self.store_scalar_at(dst, off, s, v);
            off += n;
        }
    }

    /// Resolves a place.
    pub(super) fn place(&mut self, p: &Place) -> Result<PlaceRef, Diagnostic> {
        let ty = self.local_ty(p.local);
        let mut cur = match self.homes[p.local.index()].clone() {
            Home::Zst => PlaceRef::Mem {
                addr: self.null_ptr(),
                ty,
                meta: None,
                variant: None,
            },
            Home::Ssa(_) => PlaceRef::Ssa(p.local, None),
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

    fn project(&mut self, cur: PlaceRef, elem: &PlaceElem) -> Result<PlaceRef, Diagnostic> {
        match (cur, elem) {
            (PlaceRef::Ssa(l, None), PlaceElem::Deref) => {
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
            (PlaceRef::Ssa(l, None), PlaceElem::Field(i, _)) => {
                Ok(PlaceRef::Ssa(l, Some(*i as usize)))
            }
            // `((_1 as Some).0: &T)` on an SSA nullable pointer is the pointer itself.
            (PlaceRef::Ssa(l, None), PlaceElem::Downcast(_)) => {
                Ok(PlaceRef::Ssa(l, Some(usize::MAX)))
            }
            (PlaceRef::Ssa(l, Some(usize::MAX)), PlaceElem::Field(0, _)) => {
                Ok(PlaceRef::Ssa(l, None))
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
                    Some(self.load_scalar_at(addr, POINTER_SIZE, Scalar::Int(64)))
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
                let off = self.field_offset(&ty, variant.as_deref(), &i.to_string())?;
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

    /// The type of a constant operand, as mir-import's evaluator keys its
    /// value ([`mir_import::Crate::const_ty`]).
    fn const_ty(&self, c: &ConstOperand) -> Result<Ty, Diagnostic> {
        if let Some(ty) = self.sh.krate.const_ty(c) {
            return Ok(ty);
        }
        Err(match c {
            ConstOperand::Promoted { owner, index } => {
                self.unsupported(format!("no body for {owner}::promoted[{index}]"))
            }
            // A function used as a value, not called: a function pointer.
            ConstOperand::FnItem(path) => self.unsupported(format!(
                "`{path}` used as a value (a function pointer) is not supported"
            )),
            ConstOperand::Uninit => self.unsupported(
                "an uninitialized value (`MaybeUninit::uninit()`) used as an operand is not supported",
            ),
            other => self.internal(&format!("the type of {other:?} is unknown here")),
        })
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
                    (Repr::Scalar(_), _) => Val::Immediate(self.cur[s]),
                    (Repr::Pair(..), None) => Val::Pair(self.cur[s], self.cur[s + 1]),
                    (Repr::Pair(..), Some(k)) if *k < 2 => Val::Immediate(self.cur[s + k]),
                    _ => return Err(self.internal("bad SSA projection")),
                })
            }
            PlaceRef::Mem { addr, ty, .. } => {
                let repr = self.repr(ty)?;
                Ok(match repr {
                    Repr::Zst => Val::Zst,
                    Repr::Scalar(s) => Val::Immediate(self.load_scalar_at(*addr, 0, s)),
                    Repr::Pair(s0, o0, s1, o1) => Val::Pair(
                        self.load_scalar_at(*addr, o0, s0),
                        self.load_scalar_at(*addr, o1, s1),
                    ),
                    Repr::Mem { .. } => Val::ByRef(*addr),
                })
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
        match (self.repr(ty)?, v) {
            (Repr::Zst, _) => {}
            (Repr::Scalar(s), Val::Immediate(x)) => self.store_scalar_at(addr, 0, s, x),
            (Repr::Pair(s0, o0, s1, o1), Val::Pair(a, b)) => {
                self.store_scalar_at(addr, o0, s0, a);
                self.store_scalar_at(addr, o1, s1, b);
            }
            (Repr::Mem { size, align }, Val::ByRef(src)) => self.memcpy(addr, src, size, align),
            (Repr::Scalar(s), Val::ByRef(src)) => {
                let x = self.load_scalar_at(src, 0, s);
                self.store_scalar_at(addr, 0, s, x);
            }
            // A fieldless enum lives in memory, but some rvalues compute it as
            // an integer of exactly its size: `Cmp` gives `Ordering` as its
            // `i8` tag. Those bits are the enum's bytes.
            (r @ Repr::Mem { size, .. }, Val::Immediate(x)) => match self.int_of_size(x, size) {
                Some(bits) => self.store_scalar_at(addr, 0, crate::repr::Scalar::Int(bits), x),
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
                match (part, v) {
                    (None, Val::Immediate(x)) => self.cur[s] = x,
                    (None, Val::Pair(a, b)) => {
                        self.cur[s] = a;
                        self.cur[s + 1] = b;
                    }
                    (None, Val::ByRef(src)) => {
                        let ty = self.local_ty(*l);
                        let v = self.read_place(&PlaceRef::Mem {
                            addr: src,
                            ty,
                            meta: None,
                            variant: None,
                        })?;
                        return self.write_place(r, v);
                    }
                    (Some(k), Val::Immediate(x)) if *k < 2 => self.cur[s + k] = x,
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

    /// A constant operand's value. Scalars become immediates; pointers become
    /// the address of the pointed-to allocation's global plus the addend; an
    /// aggregate is read from its own read-only global.
    pub(super) fn const_val(&mut self, c: &ConstOperand, ty: &Ty) -> Result<Val, Diagnostic> {
        if let ConstOperand::Scalar(s) = c {
            return Ok(self.scalar_const(s));
        }
        if matches!(c, ConstOperand::Unit | ConstOperand::ZeroSized(_)) {
            return Ok(Val::Zst);
        }
        let repr = self.repr(ty)?;
        if repr == Repr::Zst {
            return Ok(Val::Zst);
        }
        let v = match self.ev.operand(c, ty) {
            Some(Ok(v)) => *v,
            Some(Err(e)) => {
                return Err(self.err(Rule::ConstEval, format!("constant `{c}`: {e}")));
            }
            // mir-import evaluates every constant operand of a reachable body
            // at the type it is read at; a miss is a disagreement between the
            // two about that type.
            None => {
                return Err(self.err(
                    Rule::Internal,
                    format!("constant `{c}` of type `{ty}` was not evaluated up front"),
                ));
            }
        };
        self.check_named_constant(c, v)?;
        match repr {
            Repr::Zst => Ok(Val::Zst),
            Repr::Scalar(s) => Ok(Val::Immediate(self.scalar_from_mem(v, 0, s, ty)?)),
            Repr::Pair(s0, o0, s1, o1) => {
                let a = self.scalar_from_mem(v, o0, s0, ty)?;
                let b = self.scalar_from_mem(v, o1, s1, &Ty::unit())?;
                Ok(Val::Pair(a, b))
            }
            Repr::Mem { .. } => {
                let item = self.item.clone();
                let sh = self.sh;
                let cx = crate::globals::Ctx {
                    krate: sh.krate,
                    layouts: sh.layouts,
                };
                let g = self
                    .globals
                    .alloc_global(self.b.module(), &cx, self.ev, v, &item, None)?;
                Ok(Val::ByRef(self.global_ptr(g, 0)))
            }
        }
    }

    /// Applies the shared-memory rules to a named constant the code uses.
    fn check_named_constant(&mut self, c: &ConstOperand, v: EvalAlloc) -> Result<(), Diagnostic> {
        let k = self.sh.krate;
        let (name, body) = match c {
            ConstOperand::Item(p) => match k.item_body(&p.def_path()) {
                Some(b) => (p.def_path(), &k.bodies[b]),
                None => return Ok(()),
            },
            ConstOperand::Promoted { owner, index } => {
                match k.promoted(&owner.def_path(), *index) {
                    Some(b) => (format!("{owner}::promoted[{index}]"), &k.bodies[b]),
                    None => return Ok(()),
                }
            }
            _ => return Ok(()),
        };
        crate::refusals::check_initializer(k, body, &self.ev.memory, v, &name)
    }

    fn scalar_const(&mut self, s: &MirScalar) -> Val {
        match s {
            MirScalar::Int { bits, ty } => {
                Val::Immediate(self.iconst((ty.size() * 8) as u16, *bits as i128))
            }
            MirScalar::Bool(b) => Val::Immediate(self.iconst(1, i128::from(*b))),
            MirScalar::Char(c) => Val::Immediate(self.iconst(32, i128::from(u32::from(*c)))),
            MirScalar::Float { bits, ty } => match ty {
                mir_import::model::FloatTy::F32 => {
                    Val::Immediate(self.b.f32const(f32::from_bits(*bits as u32)))
                }
                _ => Val::Immediate(self.b.f64const(f64::from_bits(*bits as u64))),
            },
        }
    }

    /// Reads one scalar of an evaluated value; a relocation there is a pointer
    /// to a global. `ty` is the value's MIR type, for the typed view.
    fn scalar_from_mem(
        &mut self,
        v: EvalAlloc,
        off: u64,
        s: Scalar,
        ty: &Ty,
    ) -> Result<Value, Diagnostic> {
        let a = &self.ev.memory.allocs[v];
        if let Some(r) = a.relocs.get(&off).cloned() {
            if s != Scalar::Ptr {
                return Err(self.unsupported("pointer bytes read as a number"));
            }
            return self.pointer_to(&r.target, r.addend, ty);
        }
        let n = s.size() as usize;
        let o = off as usize;
        if o + n > a.bytes.len() {
            return Err(self.unsupported(format!(
                "a {}-byte constant is read as `{ty}` at offset {off}",
                a.bytes.len()
            )));
        }
        if a.init[o..o + n].iter().any(|i| !i) {
            if s == Scalar::Ptr {
                // An uninitialized pointer word is `None` of a niche (only the
                // niche word counts): treat as null.
                return Ok(self.null_ptr());
            }
            let t = s.ssa_ty(self.b.module());
            return Ok(self.b.undef(t));
        }
        let mut bits: u128 = 0;
        for (i, byte) in a.bytes[o..o + n].iter().enumerate() {
            bits |= u128::from(*byte) << (8 * i);
        }
        Ok(match s {
            Scalar::Int(w) => self.iconst(w, bits as i128),
            Scalar::Bool => self.iconst(1, (bits != 0) as i128),
            Scalar::F32 => self.b.f32const(f32::from_bits(bits as u32)),
            Scalar::F64 => self.b.f64const(f64::from_bits(bits as u64)),
            Scalar::Ptr if bits == 0 => self.null_ptr(),
            Scalar::Ptr => {
                let i = self.iconst(64, bits as i128);
                let p = generic_i8_ptr(self.b.module());
                self.b.cast(CastOp::IntToPtr, i, p)
            }
        })
    }

    pub(super) fn null_ptr(&mut self) -> Value {
        let t = generic_i8_ptr(self.b.module());
        self.b.null(t)
    }

    /// A generic `i8*` to `global` plus `addend`.
    pub(super) fn global_ptr(&mut self, g: device_ir::GlobalId, addend: u64) -> Value {
        let i8t = self.b.types().i8();
        let p = self.b.global_addr(g, i8t);
        let p = self.b.addrspacecast(p, AddressSpace::Generic);
        self.offset(p, addend)
    }

    /// The address `target + addend`, for a pointer whose MIR type is `ty`.
    pub(super) fn pointer_to(
        &mut self,
        target: &Target,
        addend: u64,
        ty: &Ty,
    ) -> Result<Value, Diagnostic> {
        let item = self.item.clone();
        let sh = self.sh;
        let cx = crate::globals::Ctx {
            krate: sh.krate,
            layouts: sh.layouts,
        };
        let g = match target {
            Target::Alloc(a) => {
                let view = views::view_layout(&cx, &self.ev.memory, *a, addend, ty, &item)?;
                let view = view.as_ref().map(|l| (addend, l));
                self.globals
                    .alloc_global(self.b.module(), &cx, self.ev, *a, &item, view)?
            }
            Target::Static(p) => self
                .globals
                .static_global(self.b.module(), &cx, self.ev, p)?,
        };
        Ok(self.global_ptr(g, addend))
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
