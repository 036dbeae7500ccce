//! Interpreting const, static and promoted bodies into memory.
//!
//! Every local lives in its own allocation. A borrow of a local is a pointer to
//! that allocation, so when a promoted ends with `_0 = &_1`, `_1`'s allocation
//! *is* the promoted's allocation, exactly as rustc interns it. A use of a named
//! const copies that const's value, pointers included, so `const E: &u32 = &A[0]`
//! points into `A`'s allocation: identity within one rustc allocation is kept.

use std::collections::BTreeMap;

use cranelift_entity::EntityRef;

use super::layout::{Encoding, Layout, Layouts, PTR_SIZE, Shape};
use super::memory::{Bytes, EvalAlloc, Memory, Reloc, Target};
use crate::model::{
    AggregateKind, AllocId, BinOp, Body, BodyId, BodyKind, CastKind, ConstOperand, Crate, IntTy,
    Local, Mutability, Operand, Place, PlaceElem, Rvalue, Scalar, StatementKind, TerminatorKind,
    Ty, UnOp, ValTree,
};

/// Statements one body may run before evaluation gives up (a `loop {}` in a
/// const would otherwise never end).
const STEP_LIMIT: u64 = 5_000_000;

/// Why a body could not be evaluated: the construct, and where.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Unsupported {
    /// The body's path.
    pub item: String,
    /// The MIR location (`bb0[2]`), if inside a block.
    pub location: Option<String>,
    /// What could not be evaluated.
    pub reason: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(l) => write!(f, "cannot evaluate `{}` at {l}: {}", self.item, self.reason),
            None => write!(f, "cannot evaluate `{}`: {}", self.item, self.reason),
        }
    }
}

/// A resolved place: where it is, its type, and a slice's length if unsized.
#[derive(Clone, Debug)]
struct PlaceRef {
    base: Target,
    offset: u64,
    ty: Ty,
    meta: Option<u64>,
    variant: Option<String>,
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

type R<T> = Result<T, String>;

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
                reason: "cyclic constant".into(),
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
            Target::Static(s) => Err(format!("constant placed in static `{s}`")),
        }
    }

    fn layout(&self, ty: &Ty) -> R<Layout> {
        self.layouts.of(ty)
    }

    fn run(&mut self, body: &'a Body) -> Result<EvalAlloc, (Option<String>, String)> {
        let at = |loc: Option<String>| move |e: String| (loc.clone(), e);
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
        let mut bb = crate::model::BasicBlock::new(0);
        let mut steps = 0u64;
        loop {
            let data = body
                .blocks
                .get(bb)
                .ok_or_else(|| (None, format!("jump to {bb}, which does not exist")))?;
            for (i, st) in data.statements.iter().enumerate() {
                steps += 1;
                let loc = Some(format!("{bb}[{i}]"));
                if steps > STEP_LIMIT {
                    return Err((loc, "step limit reached (does the constant loop?)".into()));
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
                        return Err((loc, format!("statement {other:?} is not supported")));
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
                        return Err((loc, format!("assertion failed during evaluation: {msg}")));
                    }
                    bb = *target;
                }
                TerminatorKind::Call {
                    func: crate::model::Callee::Item(p),
                    destination,
                    target: Some(next),
                    ..
                } if is_null_ptr_fn(&p.def_path()) => {
                    // `ptr::null()` / `ptr::null_mut()`: rustc prints no body
                    // for them, and their value is fixed: address 0.
                    let dest = self
                        .place(body, &locals, destination)
                        .map_err(at(loc.clone()))?;
                    let b = Bytes::plain(vec![0; PTR_SIZE as usize]);
                    self.write(&dest, &b).map_err(at(loc))?;
                    bb = *next;
                }
                TerminatorKind::Call { func, .. } => {
                    let name = match func {
                        crate::model::Callee::Item(p) => p.to_string(),
                        crate::model::Callee::Operand(_) => "a function pointer".into(),
                    };
                    return Err((loc, format!("call to `{name}` is not evaluated here")));
                }
                other => {
                    let kind = format!("{other:?}");
                    let kind = kind.split(['(', ' ', '{']).next().unwrap_or("").to_string();
                    return Err((loc, format!("terminator `{kind}` is not supported")));
                }
            }
        }
    }

    fn local_place(&self, body: &Body, locals: &[EvalAlloc], l: Local) -> R<PlaceRef> {
        let decl = body.locals.get(l).ok_or_else(|| format!("no local {l}"))?;
        Ok(PlaceRef {
            base: Target::Alloc(locals[l.index()]),
            offset: 0,
            ty: decl.ty.clone(),
            meta: None,
            variant: None,
        })
    }

    fn place(&mut self, body: &Body, locals: &[EvalAlloc], p: &Place) -> R<PlaceRef> {
        let mut cur = self.local_place(body, locals, p.local)?;
        for elem in &p.projection {
            cur = match elem {
                PlaceElem::Deref => self.deref(&cur)?,
                PlaceElem::Field(i, fty) => {
                    let l = self.layout(&cur.ty)?;
                    let off = field_offset(&l, cur.variant.as_deref(), &i.to_string())?;
                    PlaceRef {
                        base: cur.base,
                        offset: cur.offset + off,
                        ty: fty.clone(),
                        meta: None,
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

    fn len_of(&self, p: &PlaceRef) -> R<u64> {
        match (&p.ty, p.meta) {
            (Ty::Array(_, crate::model::ArrayLen::Known(n)), _) => Ok(*n),
            (Ty::Slice(_) | Ty::Str, Some(n)) => Ok(n),
            _ => Err(format!("no length for `{}`", p.ty)),
        }
    }

    fn index(&self, cur: PlaceRef, idx: u64) -> R<PlaceRef> {
        let len = self.len_of(&cur)?;
        let elem = match &cur.ty {
            Ty::Array(e, _) | Ty::Slice(e) => (**e).clone(),
            Ty::Str => Ty::Int(IntTy::U8),
            t => return Err(format!("index into `{t}`")),
        };
        if idx >= len {
            return Err(format!("index {idx} out of bounds (length {len})"));
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

    fn deref(&mut self, p: &PlaceRef) -> R<PlaceRef> {
        let pointee =
            p.ty.pointee()
                .ok_or_else(|| format!("deref of `{}`", p.ty))?
                .clone();
        let Target::Alloc(a) = &p.base else {
            return Err("reads a static's memory during evaluation".into());
        };
        let r = self.mem.read_pointer(*a, p.offset)?;
        let meta = if pointee.is_unsized() {
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

    fn read(&self, p: &PlaceRef, len: u64) -> R<Bytes> {
        match &p.base {
            Target::Alloc(a) => self.mem.read(*a, p.offset, len),
            Target::Static(s) => Err(format!("reads static `{s}` during evaluation")),
        }
    }

    fn read_uint(&self, p: &PlaceRef, len: u64) -> R<u128> {
        self.read(p, len)?.to_uint()
    }

    fn write(&mut self, p: &PlaceRef, b: &Bytes) -> R<()> {
        match &p.base {
            Target::Alloc(a) => self.mem.write(*a, p.offset, b),
            Target::Static(s) => Err(format!("writes static `{s}` during evaluation")),
        }
    }

    fn at(&self, p: &PlaceRef, offset: u64, ty: Ty) -> PlaceRef {
        PlaceRef {
            base: p.base.clone(),
            offset: p.offset + offset,
            ty,
            meta: None,
            variant: None,
        }
    }

    fn operand_ty(&self, body: &Body, op: &Operand) -> R<Ty> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => place_ty(body, p),
            Operand::Const(ConstOperand::Item(path)) => {
                if let Some(it) = path.int_limit_type() {
                    return Ok(Ty::Int(it));
                }
                let id = self.krate.item_body(&path.def_path()).ok_or_else(|| {
                    format!("the type of `{path}` is not known (rustc printed no body for it)")
                })?;
                Ok(self.krate.bodies[id].return_ty.clone())
            }
            Operand::Const(ConstOperand::Promoted { owner, index }) => {
                let id = self
                    .krate
                    .promoted(&owner.def_path(), *index)
                    .ok_or_else(|| {
                        format!("rustc printed no body for {owner}::promoted[{index}]")
                    })?;
                Ok(self.krate.bodies[id].return_ty.clone())
            }
            Operand::Const(c) => const_ty(c),
        }
    }

    fn operand_uint(&mut self, body: &Body, locals: &[EvalAlloc], op: &Operand) -> R<u128> {
        let ty = self.operand_ty(body, op)?;
        let size = self.layout(&ty)?.size;
        let tmp = self.temp(&ty)?;
        self.write_operand(body, locals, &tmp, op)?;
        self.read_uint(&tmp, size)
    }

    fn temp(&mut self, ty: &Ty) -> R<PlaceRef> {
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

    fn write_operand(
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
    fn write_const(&mut self, dest: &PlaceRef, c: &ConstOperand) -> R<()> {
        match c {
            ConstOperand::Scalar(s) => self.write(dest, &scalar_bytes(s)),
            ConstOperand::Unit | ConstOperand::ZeroSized(_) => Ok(()),
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
                        format!("rustc printed no body for {owner}::promoted[{index}]")
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
                // Not a const item: a unit enum variant or unit struct (`Option::<u32>::None`).
                self.write_valtree(dest, &ValTree::Path(path.clone()))
            }
            ConstOperand::Alloc { alloc, .. } => {
                let target = self.alloc_target(*alloc)?;
                self.write(dest, &Bytes::pointer(target, 0))
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
            ConstOperand::FnItem(p) => Err(format!("function item `{p}` as a value")),
        }
    }

    fn copy_body_value(&mut self, dest: &PlaceRef, id: BodyId) -> R<()> {
        let v = self.eval_body(id).map_err(|e| e.to_string())?;
        let size = self.mem.allocs[v].size();
        let b = self.mem.read(v, 0, size)?;
        self.write(dest, &b)
    }

    fn new_bytes(&mut self, b: &[u8]) -> EvalAlloc {
        let a = self.mem.alloc(b.len() as u64, 1);
        let alloc = &mut self.mem.allocs[a];
        alloc.bytes.copy_from_slice(b);
        alloc.init.iter_mut().for_each(|i| *i = true);
        a
    }

    fn write_str(&mut self, dest: &PlaceRef, s: &[u8]) -> R<()> {
        let a = self.new_bytes(s);
        let mut fat = Bytes::pointer(Target::Alloc(a), 0);
        fat.bytes.extend((s.len() as u64).to_le_bytes());
        fat.init.extend([true; 8]);
        self.write(dest, &fat)
    }

    /// The target for rustc's `allocN`: a static by path, or the dumped bytes
    /// imported as an evaluated allocation.
    fn alloc_target(&mut self, id: AllocId) -> R<Target> {
        if let Some(path) = self.krate.static_names.get(&id) {
            return Ok(Target::Static(path.clone()));
        }
        let dump = self
            .krate
            .allocs
            .get(&id)
            .ok_or_else(|| format!("{id} was referenced but not printed"))?;
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

    fn assign(
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
                let Shape::Array { elem, stride, .. } = self.layout(&dest.ty)?.shape else {
                    return Err(format!("repeat into `{}`", dest.ty));
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
                let src = self.temp(&ty)?;
                self.write_operand(body, locals, &src, a)?;
                match op {
                    UnOp::PtrMetadata => {
                        let len = self.read(&src, 2 * PTR_SIZE)?;
                        let meta = Bytes {
                            bytes: len.bytes[8..].to_vec(),
                            init: len.init[8..].to_vec(),
                            relocs: BTreeMap::new(),
                        };
                        self.write(dest, &meta)
                    }
                    UnOp::Not | UnOp::Neg => {
                        let size = self.layout(&ty)?.size;
                        let v = self.read_uint(&src, size)?;
                        let r = match (op, &ty) {
                            (UnOp::Not, Ty::Bool) => v ^ 1,
                            (UnOp::Not, _) => !v,
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
            other => Err(format!("rvalue {other:?} is not supported")),
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
        let src_ty = self.operand_ty(body, op)?;
        let src = self.temp(&src_ty)?;
        self.write_operand(body, locals, &src, op)?;
        let src_size = self.layout(&src_ty)?.size;
        let dst_size = self.layout(ty)?.size;
        let b = self.read(&src, src_size)?;
        match kind {
            CastKind::PtrToPtr | CastKind::Transmute => {
                if src_size < dst_size {
                    return Err(format!("cast widens `{src_ty}` to `{ty}`"));
                }
                // A fat-to-thin pointer cast keeps the data pointer.
                let mut b = b;
                b.bytes.truncate(dst_size as usize);
                b.init.truncate(dst_size as usize);
                b.relocs.retain(|o, _| *o < dst_size);
                self.write(dest, &b)
            }
            CastKind::PointerCoercion(k) if k.starts_with("Unsize") => {
                let len = match src_ty.pointee() {
                    Some(Ty::Array(_, crate::model::ArrayLen::Known(n))) => *n,
                    _ => return Err(format!("unsizing `{src_ty}` is not supported")),
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
            other => Err(format!(
                "cast {other:?} from `{src_ty}` to `{ty}` is not supported"
            )),
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
            let r = self.mem.read_pointer(pa_alloc, 0)?;
            let n = self.operand_uint(body, locals, b)? as u64;
            let addend = r.addend + n * stride;
            return self.write(dest, &Bytes::pointer(r.target, addend));
        }
        let Ty::Int(it) = ty.clone() else {
            if matches!(ty, Ty::Bool | Ty::Char) {
                return self.int_binary(dest, op, &ty, IntTy::U32, body, locals, a, b);
            }
            return Err(format!("binary op {op:?} on `{ty}` is not supported"));
        };
        self.int_binary(dest, op, &ty, it, body, locals, a, b)
    }

    #[allow(clippy::too_many_arguments)]
    fn int_binary(
        &mut self,
        dest: &PlaceRef,
        op: BinOp,
        ty: &Ty,
        it: IntTy,
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
        let _ = it;
        let cmp = |r: bool| Ok::<(u128, Option<bool>), String>((u128::from(r), None));
        let (v, overflow) = match op {
            BinOp::Add | BinOp::AddUnchecked | BinOp::AddWithOverflow => {
                let r = x.wrapping_add(y) & mask;
                let of = if signed {
                    sx.checked_add(sy)
                        .is_none_or(|r| sign_extend(r as u128 & mask, size) as i128 != r)
                } else {
                    x.checked_add(y).is_none_or(|r| r > mask)
                };
                (r, Some(of))
            }
            BinOp::Sub | BinOp::SubUnchecked | BinOp::SubWithOverflow => {
                let r = x.wrapping_sub(y) & mask;
                let of = if signed {
                    sx.checked_sub(sy)
                        .is_none_or(|r| sign_extend(r as u128 & mask, size) as i128 != r)
                } else {
                    y > x
                };
                (r, Some(of))
            }
            BinOp::Mul | BinOp::MulUnchecked | BinOp::MulWithOverflow => {
                let r = x.wrapping_mul(y) & mask;
                let of = if signed {
                    sx.checked_mul(sy)
                        .is_none_or(|r| sign_extend(r as u128 & mask, size) as i128 != r)
                } else {
                    x.checked_mul(y).is_none_or(|r| r > mask)
                };
                (r, Some(of))
            }
            BinOp::Div | BinOp::Rem => {
                if y == 0 {
                    return Err("division by zero during evaluation".into());
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
            other => return Err(format!("binary op {other:?} is not supported")),
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
        let layout = self.layout(&dest.ty)?;
        match kind {
            AggregateKind::Array => {
                let Shape::Array { elem, stride, .. } = &layout.shape else {
                    return Err(format!("array aggregate into `{}`", dest.ty));
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
            AggregateKind::Opaque(s) => Err(format!("aggregate `{s}` is not supported")),
        }
    }

    /// Marks `dest` as variant `name`: the tag for a direct encoding, zeros for
    /// the null variant of a nullable-pointer niche.
    fn write_tag(&mut self, dest: &PlaceRef, layout: &Layout, name: &str) -> R<()> {
        let Shape::Enum { encoding, variants } = &layout.shape else {
            return Err(format!("`{}` is not an enum", dest.ty));
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
            Encoding::NullNiche { zero_variant } if zero_variant == name => {
                let n = layout.size.min(PTR_SIZE);
                self.write(dest, &Bytes::plain(vec![0; n as usize]))
            }
            Encoding::NullNiche { .. } => Ok(()),
        }
    }

    /// The discriminant of the enum at `src`: the variant's declared value, read
    /// back through the proven encoding.
    fn read_discriminant(&self, src: &PlaceRef) -> R<u128> {
        let layout = self.layout(&src.ty)?;
        let Shape::Enum { encoding, variants } = &layout.shape else {
            return Err(format!("discriminant of non-enum `{}`", src.ty));
        };
        let name = match encoding {
            Encoding::Direct { offset, size } => {
                let tag = self.read_uint(&self.at(src, *offset, Ty::unit()), *size)?;
                let v = variants.iter().find(|v| v.tag_value == Some(tag));
                return v
                    .and_then(|v| v.tag_value)
                    .ok_or_else(|| format!("tag {tag} names no variant of `{}`", src.ty));
            }
            Encoding::NullNiche { zero_variant } => {
                let word = self.read(src, layout.size.min(PTR_SIZE))?;
                let is_zero = word.relocs.is_empty() && word.to_uint()? == 0;
                let data = variants.iter().find(|v| v.name != *zero_variant);
                if is_zero {
                    zero_variant.clone()
                } else {
                    data.map(|v| v.name.clone()).unwrap_or_default()
                }
            }
        };
        let decl = self.layouts.discriminant_of(&src.ty, &name);
        decl.ok_or_else(|| format!("the discriminant of `{}::{name}` is unknown", src.ty))
    }

    fn write_valtree(&mut self, dest: &PlaceRef, v: &ValTree) -> R<()> {
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
                _ => Err(format!("value `{p}` of type `{}`", dest.ty)),
            },
            ValTree::Tuple(path, elems) => {
                let variant = match (&layout.shape, path) {
                    (Shape::Enum { .. }, Some(p)) => Some(p.last_name().to_string()),
                    _ => None,
                };
                for (i, e) in elems.iter().enumerate() {
                    let off = field_offset(&layout, variant.as_deref(), &i.to_string())?;
                    let fty = valtree_field_ty(e)?;
                    self.write_valtree(&self.at(dest, off, fty), e)?;
                }
                if let Some(v) = variant {
                    self.write_tag(dest, &layout, &v)?;
                }
                Ok(())
            }
            other => Err(format!("printed value {other:?} is not supported")),
        }
    }
}

fn valtree_field_ty(v: &ValTree) -> R<Ty> {
    match v {
        ValTree::Scalar(s) => Ok(scalar_ty(s)),
        _ => Err(format!("nested printed value {v:?} is not supported")),
    }
}

/// The offset of field `name` of a struct, tuple or enum variant.
fn field_offset(l: &Layout, variant: Option<&str>, name: &str) -> R<u64> {
    match (&l.shape, variant) {
        (Shape::Struct { fields }, None) => fields
            .get(name)
            .copied()
            .ok_or_else(|| format!("no field `{name}` in the layout")),
        (Shape::Enum { variants, .. }, Some(v)) => {
            let var = variants
                .iter()
                .find(|x| x.name == v)
                .ok_or_else(|| format!("no variant `{v}` in the layout"))?;
            var.fields
                .get(name)
                .copied()
                .ok_or_else(|| format!("no field `{v}.{name}`"))
        }
        (Shape::Zst, _) => Ok(0),
        (Shape::FatPointer, None) => match name {
            "0" => Ok(0),
            "1" => Ok(PTR_SIZE),
            _ => Err(format!("no field `{name}` in a fat pointer")),
        },
        (s, _) => Err(format!("field `{name}` of a {s:?}")),
    }
}

fn is_null_ptr_fn(def: &str) -> bool {
    matches!(
        def,
        "std::ptr::null" | "core::ptr::null" | "std::ptr::null_mut" | "core::ptr::null_mut"
    )
}

/// `u8::MAX`, `i32::MIN`, `core::num::<impl usize>::MAX`: primitive integer
/// limits, which rustc prints as paths because their bodies live in `core`.
fn int_limit(path: &crate::model::Path, ty: &Ty) -> Option<Bytes> {
    let Ty::Int(it) = ty else { return None };
    let segs = &path.segments;
    let owner = segs.get(segs.len().checked_sub(2)?)?.name.as_str();
    let names_type = owner == it.name() || owner == format!("<impl {}>", it.name());
    if !names_type {
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

fn sign_extend(v: u128, size: u64) -> u128 {
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

fn uint_bytes(v: u128, size: u64) -> Bytes {
    Bytes::plain(v.to_le_bytes()[..size as usize].to_vec())
}

fn scalar_ty(s: &Scalar) -> Ty {
    match s {
        Scalar::Int { ty, .. } => Ty::Int(*ty),
        Scalar::Bool(_) => Ty::Bool,
        Scalar::Char(_) => Ty::Char,
        Scalar::Float { ty, .. } => Ty::Float(*ty),
    }
}

fn scalar_bytes(s: &Scalar) -> Bytes {
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
        other => return Err(format!("the type of constant {other:?} is not known here")),
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
                .ok_or_else(|| format!("deref of `{ty}`"))?
                .clone(),
            PlaceElem::Field(_, t) => t.clone(),
            PlaceElem::Downcast(_) => ty,
            PlaceElem::Index(_) | PlaceElem::ConstantIndex { .. } => match ty {
                Ty::Array(e, _) | Ty::Slice(e) => *e,
                t => return Err(format!("index into `{t}`")),
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
