//! Interpreting const, static and promoted bodies into memory.
//!
//! Every local lives in its own allocation. A borrow of a local is a pointer to
//! that allocation, so when a promoted ends with `_0 = &_1`, `_1`'s allocation
//! *is* the promoted's allocation, exactly as rustc interns it. A use of a named
//! const copies that const's value, pointers included, so `const E: &u32 = &A[0]`
//! points into `A`'s allocation: identity within one rustc allocation is kept.

use std::collections::BTreeMap;

use cranelift_entity::EntityRef;

use super::error::{EvalError, Unsupported};
use super::layout::{Layout, Layouts, PTR_SIZE, Shape};
use super::memory::{Bytes, EvalAlloc, Memory, Reloc, Target};
use crate::model::{
    AllocId, Body, BodyId, BodyKind, ConstOperand, Crate, IntTy, Local, Mutability, Operand, Path,
    Place, PlaceElem, Scalar, StatementKind, TerminatorKind, Ty, ValTree,
};

/// Statements one body may run before evaluation gives up (a `loop {}` in a
/// const would otherwise never end).
const STEP_LIMIT: u64 = 5_000_000;

/// A resolved place: where it is, its type, and a slice's length if unsized.
#[derive(Clone, Debug)]
pub(super) struct PlaceRef {
    pub(super) base: Target,
    pub(super) offset: u64,
    pub(super) ty: Ty,
    pub(super) meta: Option<u64>,
    pub(super) variant: Option<String>,
}

/// The interpreter for one crate: memoized results per const, promoted and static.
pub struct Interp<'a> {
    pub(super) krate: &'a Crate,
    pub(super) layouts: Layouts<'a>,
    pub(super) mem: Memory,
    /// Results by body: the allocation holding the body's value (`_0`).
    pub(super) done: BTreeMap<BodyId, Result<EvalAlloc, Unsupported>>,
    /// rustc's dumped allocations imported so far.
    pub(super) imported: BTreeMap<AllocId, EvalAlloc>,
    /// Bodies being evaluated, to refuse cycles instead of looping.
    active: Vec<BodyId>,
}

type R<T> = Result<T, EvalError>;

impl<'a> Interp<'a> {
    /// A fresh interpreter.
    pub fn new(krate: &'a Crate, layouts: Layouts<'a>) -> Self {
        Interp {
            krate,
            layouts,
            mem: Memory::default(),
            done: BTreeMap::new(),
            imported: BTreeMap::new(),
            active: Vec::new(),
        }
    }

    /// Evaluates a body (memoized) and returns the allocation of its value.
    pub fn eval_body(&mut self, id: BodyId) -> Result<EvalAlloc, Unsupported> {
        if let Some(r) = self.done.get(&id) {
            return r.clone();
        }
        let body = &self.krate.bodies[id];
        let item = body_name(body);
        if self.active.contains(&id) {
            return Err(Unsupported {
                item,
                location: None,
                reason: EvalError::Cyclic,
            });
        }
        self.active.push(id);
        let r = self.run(body).map_err(|(location, reason)| Unsupported {
            item: item.clone(),
            location,
            reason,
        });
        self.active.pop();
        self.done.insert(id, r.clone());
        r
    }

    /// Evaluates a constant operand of type `ty` into a fresh allocation.
    pub fn const_value(&mut self, c: &ConstOperand, ty: &Ty) -> R<EvalAlloc> {
        let place = self.temp(ty)?;
        self.write_const(&place, c)?;
        match place.base {
            Target::Alloc(a) => Ok(a),
            Target::Static(s) => Err(format!("constant placed in static `{s}`").into()),
        }
    }

    pub(super) fn layout(&self, ty: &Ty) -> R<Layout> {
        Ok(self.layouts.of(ty)?)
    }

    fn run(&mut self, body: &'a Body) -> Result<EvalAlloc, (Option<String>, EvalError)> {
        let at = |loc: Option<String>| move |e: EvalError| (loc.clone(), e);
        let mutable_static = matches!(body.kind, BodyKind::Static(Mutability::Mut));
        let mut locals = Vec::with_capacity(body.locals.len());
        for (_, decl) in body.locals.iter() {
            // Unsized or unknown-layout locals get no memory until used.
            let a = match self.layout(&decl.ty) {
                Ok(l) => self.mem.alloc(l.size, l.align),
                Err(_) => self.mem.alloc(0, 1),
            };
            locals.push(a);
        }
        if let Some(v) = &body.value {
            let place = PlaceRef {
                base: Target::Alloc(locals[0]),
                offset: 0,
                ty: body.return_ty.clone(),
                meta: None,
                variant: None,
            };
            self.write_const(&place, v).map_err(at(None))?;
            return Ok(locals[0]);
        }
        if body.blocks.is_empty() {
            // A dependency's trait constant no MIR printed
            // (`deps::add_trait_constant_shells`): only rustc's twin has it.
            let e = format!("rustc printed no body for `{}`", body.path);
            return Err((None, EvalError::NotPrinted(e)));
        }
        let mut bb = crate::model::BasicBlock::new(0);
        let mut steps = 0u64;
        loop {
            let data = body.blocks.get(bb).ok_or_else(|| {
                let e = format!("jump to {bb}, which does not exist");
                (None, EvalError::Construct(e))
            })?;
            for (i, st) in data.statements.iter().enumerate() {
                steps += 1;
                let loc = Some(format!("{bb}[{i}]"));
                if steps > STEP_LIMIT {
                    return Err((loc, EvalError::StepLimit));
                }
                match &st.kind {
                    StatementKind::Assign(p, rv) => {
                        let dest = self.place(body, &locals, p).map_err(at(loc.clone()))?;
                        self.assign(body, &locals, &dest, rv, mutable_static)
                            .map_err(at(loc.clone()))?;
                    }
                    StatementKind::StorageLive(_)
                    | StatementKind::StorageDead(_)
                    | StatementKind::Nop
                    | StatementKind::ConstEvalCounter
                    | StatementKind::PlaceMention(_)
                    | StatementKind::Assume(_) => {}
                    other => {
                        let e = format!("statement {other:?} is not supported");
                        return Err((loc, e.into()));
                    }
                }
            }
            let loc = Some(format!("{bb}[{}]", data.statements.len()));
            match &data.terminator.kind {
                TerminatorKind::Goto(t) => bb = *t,
                TerminatorKind::Return => return Ok(locals[0]),
                TerminatorKind::SwitchInt {
                    discr,
                    targets,
                    otherwise,
                } => {
                    let v = self.operand_uint(body, &locals, discr).map_err(at(loc))?;
                    bb = targets
                        .iter()
                        .find(|(k, _)| *k == v)
                        .map_or(*otherwise, |(_, t)| *t);
                }
                TerminatorKind::Assert {
                    cond,
                    expected,
                    msg,
                    target,
                    ..
                } => {
                    let v = self
                        .operand_uint(body, &locals, cond)
                        .map_err(at(loc.clone()))?;
                    if (v != 0) != *expected {
                        return Err((loc, EvalError::AssertFailed(msg.to_string())));
                    }
                    bb = *target;
                }
                TerminatorKind::Call {
                    func: crate::model::Callee::Item(p),
                    destination,
                    target: Some(next),
                    ..
                } if matches!(
                    crate::calls::classify(p),
                    Some(crate::calls::KnownCall::NullPtr | crate::calls::KnownCall::Uninit)
                ) =>
                {
                    // Calls rustc prints no body for, whose value is fixed:
                    // `ptr::null()` / `ptr::null_mut()` are address 0;
                    // `MaybeUninit::uninit()` leaves every byte unwritten.
                    let dest = self
                        .place(body, &locals, destination)
                        .map_err(at(loc.clone()))?;
                    let b = if crate::calls::classify(p) == Some(crate::calls::KnownCall::NullPtr) {
                        Bytes::plain(vec![0; PTR_SIZE as usize])
                    } else {
                        let size = self.layout(&dest.ty).map_err(at(loc.clone()))?.size as usize;
                        Bytes {
                            bytes: vec![0; size],
                            init: vec![false; size],
                            relocs: Default::default(),
                        }
                    };
                    self.write(&dest, &b).map_err(at(loc))?;
                    bb = *next;
                }
                TerminatorKind::Call { func, .. } => {
                    let name = match func {
                        crate::model::Callee::Item(p) => p.to_string(),
                        crate::model::Callee::Operand(_) => "a function pointer".into(),
                    };
                    return Err((loc, EvalError::Call(name)));
                }
                other => {
                    let kind = format!("{other:?}");
                    let kind = kind.split(['(', ' ', '{']).next().unwrap_or("").to_string();
                    let e = format!("terminator `{kind}` is not supported");
                    return Err((loc, e.into()));
                }
            }
        }
    }

    pub(super) fn local_place(&self, body: &Body, locals: &[EvalAlloc], l: Local) -> R<PlaceRef> {
        let decl = body.locals.get(l).ok_or_else(|| format!("no local {l}"))?;
        Ok(PlaceRef {
            base: Target::Alloc(locals[l.index()]),
            offset: 0,
            ty: decl.ty.clone(),
            meta: None,
            variant: None,
        })
    }

    pub(super) fn place(&mut self, body: &Body, locals: &[EvalAlloc], p: &Place) -> R<PlaceRef> {
        let mut cur = self.local_place(body, locals, p.local)?;
        for elem in &p.projection {
            cur = match elem {
                PlaceElem::Deref => self.deref(&cur)?,
                PlaceElem::Field(i, fty) => {
                    let l = self.layout(&cur.ty)?;
                    let off = field_offset(&l, cur.variant.as_deref(), &i.to_string())?;
                    // A slice or `str` tail keeps the struct's length; any
                    // other unsized field (a `dyn` tail) is not evaluated.
                    let meta = if self.layouts.is_unsized(fty) {
                        if !matches!(fty, Ty::Slice(_) | Ty::Str) || cur.meta.is_none() {
                            return Err(EvalError::WrongType {
                                what: "no length for the unsized field",
                                ty: fty.clone(),
                            });
                        }
                        cur.meta
                    } else {
                        None
                    };
                    PlaceRef {
                        base: cur.base,
                        offset: cur.offset + off,
                        ty: fty.clone(),
                        meta,
                        variant: None,
                    }
                }
                PlaceElem::Downcast(v) => PlaceRef {
                    variant: Some(v.clone()),
                    ..cur
                },
                PlaceElem::Index(l) => {
                    let idx_place = self.local_place(body, locals, *l)?;
                    let idx = self.read_uint(&idx_place, 8)? as u64;
                    self.index(cur, idx)?
                }
                PlaceElem::ConstantIndex {
                    offset, from_end, ..
                } => {
                    let len = self.len_of(&cur)?;
                    let idx = if *from_end {
                        len.checked_sub(*offset)
                    } else {
                        Some(*offset)
                    };
                    self.index(cur, idx.ok_or("constant index underflows")?)?
                }
                PlaceElem::Subslice { .. } => {
                    return Err("subslice places are not supported".into());
                }
            };
        }
        Ok(cur)
    }

    pub(super) fn len_of(&self, p: &PlaceRef) -> R<u64> {
        match (&p.ty, p.meta) {
            (Ty::Array(_, crate::model::ArrayLen::Known(n)), _) => Ok(*n),
            (Ty::Slice(_) | Ty::Str, Some(n)) => Ok(n),
            _ => Err(format!("no length for `{}`", p.ty).into()),
        }
    }

    pub(super) fn index(&self, cur: PlaceRef, idx: u64) -> R<PlaceRef> {
        let len = self.len_of(&cur)?;
        let elem = match &cur.ty {
            Ty::Array(e, _) | Ty::Slice(e) => (**e).clone(),
            Ty::Str => Ty::Int(IntTy::U8),
            t => {
                return Err(EvalError::WrongType {
                    what: "index into",
                    ty: t.clone(),
                });
            }
        };
        if idx >= len {
            return Err(EvalError::OutOfBounds { index: idx, len });
        }
        let stride = self.layout(&elem)?.size;
        Ok(PlaceRef {
            base: cur.base,
            offset: cur.offset + idx * stride,
            ty: elem,
            meta: None,
            variant: None,
        })
    }

    pub(super) fn deref(&mut self, p: &PlaceRef) -> R<PlaceRef> {
        let pointee =
            p.ty.pointee()
                .ok_or_else(|| EvalError::WrongType {
                    what: "deref of",
                    ty: p.ty.clone(),
                })?
                .clone();
        let Target::Alloc(a) = &p.base else {
            return Err("reads a static's memory during evaluation".into());
        };
        let r = self.mem.read_pointer(*a, p.offset)?;
        let meta = if self.layouts.is_unsized(&pointee) {
            Some(
                self.mem
                    .read(*a, p.offset + PTR_SIZE, PTR_SIZE)?
                    .to_uint()? as u64,
            )
        } else {
            None
        };
        Ok(PlaceRef {
            base: r.target,
            offset: r.addend,
            ty: pointee,
            meta,
            variant: None,
        })
    }

    pub(super) fn read(&self, p: &PlaceRef, len: u64) -> R<Bytes> {
        match &p.base {
            Target::Alloc(a) => Ok(self.mem.read(*a, p.offset, len)?),
            Target::Static(s) => Err(format!("reads static `{s}` during evaluation").into()),
        }
    }

    pub(super) fn read_uint(&self, p: &PlaceRef, len: u64) -> R<u128> {
        Ok(self.read(p, len)?.to_uint()?)
    }

    pub(super) fn write(&mut self, p: &PlaceRef, b: &Bytes) -> R<()> {
        match &p.base {
            Target::Alloc(a) => Ok(self.mem.write(*a, p.offset, b)?),
            Target::Static(s) => Err(format!("writes static `{s}` during evaluation").into()),
        }
    }

    pub(super) fn at(&self, p: &PlaceRef, offset: u64, ty: Ty) -> PlaceRef {
        PlaceRef {
            base: p.base.clone(),
            offset: p.offset + offset,
            ty,
            meta: None,
            variant: None,
        }
    }

    pub(super) fn operand_ty(&self, body: &Body, op: &Operand) -> R<Ty> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => place_ty(body, p),
            Operand::Const(ConstOperand::Item(path)) => {
                if let Some(it) = path.int_limit_type() {
                    return Ok(Ty::Int(it));
                }
                if path.type_id_of().is_some() {
                    return Ok(Path::type_id_type());
                }
                let id = self.krate.item_body(&path.def_path()).ok_or_else(|| {
                    EvalError::NotPrinted(format!(
                        "the type of `{path}` is not known (rustc printed no body for it)"
                    ))
                })?;
                Ok(self.krate.bodies[id].return_ty.clone())
            }
            Operand::Const(ConstOperand::Promoted { owner, index }) => {
                let id = self
                    .krate
                    .promoted(&owner.def_path(), *index)
                    .ok_or_else(|| {
                        EvalError::NotPrinted(format!(
                            "rustc printed no body for {owner}::promoted[{index}]"
                        ))
                    })?;
                Ok(self.krate.bodies[id].return_ty.clone())
            }
            Operand::Const(c) => const_ty(c),
        }
    }

    pub(super) fn operand_uint(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        op: &Operand,
    ) -> R<u128> {
        let ty = self.operand_ty(body, op)?;
        let size = self.layout(&ty)?.size;
        let tmp = self.temp(&ty)?;
        self.write_operand(body, locals, &tmp, op)?;
        self.read_uint(&tmp, size)
    }

    pub(super) fn temp(&mut self, ty: &Ty) -> R<PlaceRef> {
        let l = self.layout(ty)?;
        let a = self.mem.alloc(l.size, l.align);
        Ok(PlaceRef {
            base: Target::Alloc(a),
            offset: 0,
            ty: ty.clone(),
            meta: None,
            variant: None,
        })
    }

    pub(super) fn write_operand(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        dest: &PlaceRef,
        op: &Operand,
    ) -> R<()> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => {
                let src = self.place(body, locals, p)?;
                let size = self.layout(&src.ty)?.size;
                let b = self.read(&src, size)?;
                self.write(dest, &b)
            }
            Operand::Const(c) => self.write_const(dest, c),
        }
    }

    /// Writes a constant operand's value at `dest`.
    pub(super) fn write_const(&mut self, dest: &PlaceRef, c: &ConstOperand) -> R<()> {
        match c {
            ConstOperand::Scalar(s) => self.write(dest, &scalar_bytes(s)),
            // Uninitialized bytes stay as they are: never written.
            ConstOperand::Unit | ConstOperand::ZeroSized(_) | ConstOperand::Uninit => Ok(()),
            ConstOperand::Str(s) => self.write_str(dest, s.as_bytes()),
            ConstOperand::ByteStr(b) => {
                let a = self.new_bytes(b);
                self.write(dest, &Bytes::pointer(Target::Alloc(a), 0))
            }
            ConstOperand::Transmuted { bits, ty } => {
                let size = self.layout(ty)?.size;
                self.write(
                    dest,
                    &Bytes::plain(bits.to_le_bytes()[..size as usize].to_vec()),
                )
            }
            ConstOperand::Promoted { owner, index } => {
                let id = self
                    .krate
                    .promoted(&owner.def_path(), *index)
                    .ok_or_else(|| {
                        EvalError::NotPrinted(format!(
                            "rustc printed no body for {owner}::promoted[{index}]"
                        ))
                    })?;
                self.copy_body_value(dest, id)
            }
            ConstOperand::Item(path) => {
                let def = path.def_path();
                if let Some(id) = self.krate.item_body(&def) {
                    return self.copy_body_value(dest, id);
                }
                if let Some(v) = int_limit(path, &dest.ty) {
                    return self.write(dest, &v);
                }
                if let Some(t) = path.type_id_of() {
                    // Inside a constant's value the bytes would be kept,
                    // where the lowering cannot see how they are used.
                    if !self.active.is_empty() {
                        return Err(format!(
                            "`TypeId::of::<{t}>()` inside a constant's value is not supported \
                             (its value here is not rustc's)"
                        )
                        .into());
                    }
                    let bytes = Path::type_id_bytes(t).ok_or_else(|| {
                        EvalError::from(format!(
                            "`TypeId::of::<{t}>()`: the name of `{t}` may not tell which type it is \
                             (a type parameter, a function pointer or a closure), and rustc's value \
                             for it is not known"
                        ))
                    })?;
                    return self.write(dest, &Bytes::plain(bytes.to_vec()));
                }
                if let Some((ty, size)) = path.sized_property() {
                    let l = self.layout(&ty)?;
                    let v = if size { l.size } else { l.align };
                    return self.write(dest, &Bytes::plain(v.to_le_bytes().to_vec()));
                }
                // Not a const item: a unit enum variant or unit struct (`Option::<u32>::None`).
                self.write_valtree(dest, &ValTree::Path(path.clone()))
            }
            ConstOperand::Alloc { alloc, .. } => {
                let target = self.alloc_target(*alloc)?;
                self.write(dest, &Bytes::pointer(target, 0))
            }
            ConstOperand::StaticRef(p) => {
                self.write(dest, &Bytes::pointer(Target::Static(p.def_path()), 0))
            }
            ConstOperand::Indirect { alloc, offset, ty } => {
                let Target::Alloc(a) = self.alloc_target(*alloc)? else {
                    return Err("by-reference constant inside a static".into());
                };
                let size = self.layout(ty)?.size;
                let b = self.mem.read(a, *offset, size)?;
                self.write(dest, &b)
            }
            ConstOperand::Value(v) => self.write_valtree(dest, v),
            ConstOperand::FnItem(p) => Err(format!("function item `{p}` as a value").into()),
        }
    }

    pub(super) fn copy_body_value(&mut self, dest: &PlaceRef, id: BodyId) -> R<()> {
        let v = self
            .eval_body(id)
            .map_err(|e| EvalError::Item(Box::new(e)))?;
        let size = self.mem.allocs[v].size();
        let b = self.mem.read(v, 0, size)?;
        self.write(dest, &b)
    }

    pub(super) fn new_bytes(&mut self, b: &[u8]) -> EvalAlloc {
        let a = self.mem.alloc(b.len() as u64, 1);
        let alloc = &mut self.mem.allocs[a];
        alloc.bytes.copy_from_slice(b);
        alloc.init.iter_mut().for_each(|i| *i = true);
        a
    }

    pub(super) fn write_str(&mut self, dest: &PlaceRef, s: &[u8]) -> R<()> {
        let a = self.new_bytes(s);
        let mut fat = Bytes::pointer(Target::Alloc(a), 0);
        fat.bytes.extend((s.len() as u64).to_le_bytes());
        fat.init.extend([true; 8]);
        self.write(dest, &fat)
    }

    /// The target for rustc's `allocN`: a static by path, or the dumped bytes
    /// imported as an evaluated allocation.
    pub(super) fn alloc_target(&mut self, id: AllocId) -> R<Target> {
        if let Some(path) = self.krate.static_names.get(&id) {
            return Ok(Target::Static(path.clone()));
        }
        let dump =
            self.krate.allocs.get(&id).ok_or_else(|| {
                EvalError::NotPrinted(format!("{id} was referenced but not printed"))
            })?;
        if let Some(path) = &dump.static_path {
            return Ok(Target::Static(path.clone()));
        }
        if let Some(a) = self.imported.get(&id) {
            return Ok(Target::Alloc(*a));
        }
        let a = self.mem.alloc(dump.size, dump.align);
        self.imported.insert(id, a);
        for (i, b) in dump.bytes.iter().enumerate() {
            self.mem.allocs[a].bytes[i] = b.unwrap_or(0);
            self.mem.allocs[a].init[i] = b.is_some();
        }
        for r in &dump.relocations {
            let target = self.alloc_target(r.target)?;
            self.mem.allocs[a].relocs.insert(
                r.offset,
                Reloc {
                    target,
                    addend: r.addend,
                },
            );
        }
        Ok(Target::Alloc(a))
    }
}

/// The type of a field from its printed value: a scalar's, a constant's, an
/// integer limit's (`i32::MIN`), or for a unit struct its path
/// (`std::marker::PhantomData::<u32>` is a value of the type it names; a
/// unit variant's path names no type, and its layout lookup then fails).
pub(super) fn valtree_field_ty(v: &ValTree) -> R<Ty> {
    match v {
        ValTree::Scalar(s) => Ok(scalar_ty(s)),
        ValTree::Const(c) => const_ty(c),
        ValTree::Path(p) => Ok(p
            .int_limit_type()
            .map_or_else(|| Ty::Adt(p.clone()), Ty::Int)),
        // A struct printed by its path and fields (`State { state: 0_u32 }`)
        // is a value of the type its path names.
        ValTree::Struct(p, _) | ValTree::Tuple(Some(p), _) => Ok(Ty::Adt(p.clone())),
        // A tuple (`Ok(())`'s `()`) is the tuple of its elements' types.
        ValTree::Tuple(None, elems) => Ok(Ty::Tuple(
            elems.iter().map(valtree_field_ty).collect::<R<Vec<_>>>()?,
        )),
        _ => Err(format!("nested printed value `{v}` is not supported").into()),
    }
}

/// The offset of field `name` of a struct, tuple or enum variant.
pub(super) fn field_offset(l: &Layout, variant: Option<&str>, name: &str) -> R<u64> {
    match (&l.shape, variant) {
        (Shape::Struct { fields }, None) => fields
            .get(name)
            .copied()
            .ok_or_else(|| format!("no field `{name}` in the layout").into()),
        (Shape::Enum { variants, .. }, Some(v)) => {
            let var = variants
                .iter()
                .find(|x| x.name == v)
                .ok_or_else(|| format!("no variant `{v}` in the layout"))?;
            var.fields
                .get(name)
                .copied()
                .ok_or_else(|| format!("no field `{v}.{name}`").into())
        }
        (Shape::Zst, _) => Ok(0),
        (Shape::FatPointer, None) => match name {
            "0" => Ok(0),
            "1" => Ok(PTR_SIZE),
            _ => Err(format!("no field `{name}` in a fat pointer").into()),
        },
        (s, _) => Err(format!("field `{name}` of a {s:?}").into()),
    }
}

/// `u8::MAX`, `i32::MIN`, `core::num::<impl usize>::MAX`: primitive integer
/// limits, which rustc prints as paths because their bodies live in `core`.
pub(super) fn int_limit(path: &crate::model::Path, ty: &Ty) -> Option<Bytes> {
    let Ty::Int(it) = ty else { return None };
    // The owner in one of rustc's spellings ([`crate::model::Path::
    // int_limit_type`]), for `BITS` too.
    let mut as_max = path.clone();
    as_max.segments.last_mut()?.name = "MAX".into();
    if as_max.int_limit_type() != Some(*it) {
        return None;
    }
    let bits = it.size() * 8;
    let all = if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let v = match (path.last_name(), it.is_signed()) {
        ("MAX", false) => all,
        ("MAX", true) => all >> 1,
        ("MIN", false) => 0,
        ("MIN", true) => (all >> 1) + 1,
        ("BITS", _) => u128::from(bits),
        _ => return None,
    };
    let size = if path.last_name() == "BITS" {
        4
    } else {
        it.size()
    };
    Some(uint_bytes(v, size))
}

pub(super) fn sign_extend(v: u128, size: u64) -> u128 {
    if size >= 16 {
        return v;
    }
    let bits = size * 8;
    let sign = 1u128 << (bits - 1);
    if v & sign != 0 {
        v | !((1u128 << bits) - 1)
    } else {
        v
    }
}

pub(super) fn uint_bytes(v: u128, size: u64) -> Bytes {
    Bytes::plain(v.to_le_bytes()[..size as usize].to_vec())
}

pub(super) fn scalar_ty(s: &Scalar) -> Ty {
    match s {
        Scalar::Int { ty, .. } => Ty::Int(*ty),
        Scalar::Bool(_) => Ty::Bool,
        Scalar::Char(_) => Ty::Char,
        Scalar::Float { ty, .. } => Ty::Float(*ty),
    }
}

pub(super) fn scalar_bytes(s: &Scalar) -> Bytes {
    match s {
        Scalar::Int { bits, ty } => uint_bytes(*bits, ty.size()),
        Scalar::Bool(b) => uint_bytes(u128::from(*b), 1),
        Scalar::Char(c) => uint_bytes(u128::from(u32::from(*c)), 4),
        Scalar::Float { bits, ty } => uint_bytes(*bits, ty.size()),
    }
}

fn const_ty(c: &ConstOperand) -> R<Ty> {
    Ok(match c {
        ConstOperand::Scalar(s) => scalar_ty(s),
        ConstOperand::Unit => Ty::unit(),
        ConstOperand::Str(_) => Ty::Ref(Mutability::Not, Box::new(Ty::Str)),
        ConstOperand::Alloc { ty, .. }
        | ConstOperand::Indirect { ty, .. }
        | ConstOperand::ZeroSized(ty)
        | ConstOperand::Transmuted { ty, .. } => ty.clone(),
        other => return Err(format!("the type of constant {other:?} is not known here").into()),
    })
}

/// The type of a place, from the local's declared type and the projections.
fn place_ty(body: &Body, p: &Place) -> R<Ty> {
    let mut ty = body
        .locals
        .get(p.local)
        .ok_or_else(|| format!("no local {}", p.local))?
        .ty
        .clone();
    for elem in &p.projection {
        ty = match elem {
            PlaceElem::Deref => ty
                .pointee()
                .ok_or_else(|| EvalError::WrongType {
                    what: "deref of",
                    ty: ty.clone(),
                })?
                .clone(),
            PlaceElem::Field(_, t) => t.clone(),
            PlaceElem::Downcast(_) => ty,
            PlaceElem::Index(_) | PlaceElem::ConstantIndex { .. } => match ty {
                Ty::Array(e, _) | Ty::Slice(e) => *e,
                t => {
                    return Err(EvalError::WrongType {
                        what: "index into",
                        ty: t,
                    });
                }
            },
            PlaceElem::Subslice { .. } => ty,
        };
    }
    Ok(ty)
}

/// A readable name for a body: `kernel::PAIR`, `kernel::h2::promoted[0]`.
pub fn body_name(b: &Body) -> String {
    match &b.kind {
        BodyKind::Promoted { owner, index } => format!("{owner}::promoted[{index}]"),
        _ => b.path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntTy;

    #[test]
    fn integer_limits_are_read_only_for_rustcs_spellings() {
        let limit = |text: &str, it: IntTy| match crate::parse::parse_type(text) {
            Ok(Ty::Adt(p)) => int_limit(&p, &Ty::Int(it)).map(|b| b.bytes),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            limit("i32::MAX", IntTy::I32),
            Some(i32::MAX.to_le_bytes().to_vec())
        );
        assert_eq!(limit("core::num::<impl u8>::MIN", IntTy::U8), Some(vec![0]));
        assert_eq!(
            limit("u32::BITS", IntTy::U32),
            Some(32u32.to_le_bytes().to_vec())
        );
        assert_eq!(
            limit("kernel::i32::MAX", IntTy::I32),
            None,
            "a module called i32"
        );
        assert_eq!(limit("i32::MAX", IntTy::U32), None, "read at another type");
    }
}
