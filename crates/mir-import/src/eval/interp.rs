//! Interpreting const, static and promoted bodies into memory.
//!
//! Every local lives in its own allocation. A borrow of a local is a pointer to
//! that allocation, so when a promoted ends with `_0 = &_1`, `_1`'s allocation
//! *is* the promoted's allocation, exactly as rustc interns it. A use of a named
//! const copies that const's value, pointers included, so `const E: &u32 = &A[0]`
//! points into `A`'s allocation: identity within one rustc allocation is kept.

use std::collections::BTreeMap;

use cranelift_entity::EntityRef;

use super::consts::{const_ty, field_offset};
use super::error::{EvalError, Unsupported};
use super::layout::{Layout, Layouts, PTR_SIZE};
use super::memory::{Bytes, EvalAlloc, Memory, Target};
use crate::model::{
    AllocId, Body, BodyId, BodyKind, ConstOperand, Crate, IntTy, Local, Mutability, Operand, Path,
    Place, PlaceElem, StatementKind, TerminatorKind, Ty,
};

/// Statements and terminators one body may run before evaluation gives up
/// (a `loop {}` in a const would otherwise never end); the functions it
/// calls count too.
const STEP_LIMIT: u64 = 5_000_000;

/// How deep calls of `const fn`s may nest (a recursive one would otherwise
/// exhaust the stack).
const CALL_DEPTH_LIMIT: usize = 64;

/// A resolved place: where it is, its type, and a slice's length if unsized.
#[derive(Clone, Debug)]
pub(super) struct PlaceRef {
    pub(super) base: Target,
    pub(super) offset: u64,
    pub(super) ty: Ty,
    pub(super) meta: Option<u64>,
    pub(super) variant: Option<String>,
}

/// What one evaluation has spent: statements and terminators run, its
/// calls' included.
#[derive(Default)]
struct Budget {
    steps: u64,
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
    pub(super) active: Vec<BodyId>,
    /// How deep calls nest now, across the constants they evaluate on the
    /// way (a `const fn` naming a constant whose value calls one again).
    depth: usize,
    /// The vtable layouts, once a constant makes a trait object.
    pub(super) vtable_layouts: Option<crate::model::VtableLayouts>,
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
            depth: 0,
            vtable_layouts: None,
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
            Target::Function(f) => Err(format!("constant placed in function `{f}`").into()),
        }
    }

    pub(super) fn layout(&self, ty: &Ty) -> R<Layout> {
        Ok(self.layouts.of(ty)?)
    }

    fn run(&mut self, body: &'a Body) -> Result<EvalAlloc, (Option<String>, EvalError)> {
        let locals = self.frame(body);
        self.run_frame(body, &locals, &mut Budget::default())
    }

    /// Fresh memory for each local of `body`.
    fn frame(&mut self, body: &Body) -> Vec<EvalAlloc> {
        let mut locals = Vec::with_capacity(body.locals.len());
        for (_, decl) in body.locals.iter() {
            // Unsized or unknown-layout locals get no memory until used.
            let a = match self.layout(&decl.ty) {
                Ok(l) => self.mem.alloc(l.size, l.align),
                Err(_) => self.mem.alloc(0, 1),
            };
            locals.push(a);
        }
        locals
    }

    /// The body a call of `p` runs: a function of the crate that is not
    /// generic at the call, rustc's "MIR for CTFE" copy of it when there is
    /// one (what rustc's own evaluator runs), else its one body.
    fn callee(&self, p: &Path) -> Option<&'a Body> {
        if p.segments.iter().any(|s| !s.args.is_empty()) {
            return None;
        }
        let krate: &'a Crate = self.krate;
        let body = &krate.bodies[krate.const_eval_body(&p.def_path())?];
        (!body.blocks.is_empty()).then_some(body)
    }

    /// Runs `callee` on `args` (operands of `body`, whose locals are
    /// `locals`) and writes its value to `dest`.
    fn call(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        callee: &'a Body,
        args: &[Operand],
        dest: &PlaceRef,
        budget: &mut Budget,
    ) -> R<()> {
        if self.depth >= CALL_DEPTH_LIMIT {
            return Err(EvalError::CallDepth(CALL_DEPTH_LIMIT));
        }
        if args.len() != callee.arg_count as usize {
            let e = format!(
                "`{}` takes {} arguments, the call passes {}",
                callee.path,
                callee.arg_count,
                args.len()
            );
            return Err(e.into());
        }
        let frame = self.frame(callee);
        for (i, a) in args.iter().enumerate() {
            let param = self.local_place(callee, &frame, Local::new(i + 1))?;
            self.write_operand(body, locals, &param, a)?;
        }
        self.depth += 1;
        let value = self.run_frame(callee, &frame, budget);
        self.depth -= 1;
        let value = value.map_err(|(at, e)| EvalError::InCall {
            callee: callee.path.to_string(),
            at: at.map(|l| format!(" at {l}")).unwrap_or_default(),
            source: Box::new(e),
        })?;
        let ret = PlaceRef {
            base: Target::Alloc(value),
            offset: 0,
            ty: callee.return_ty.clone(),
            meta: None,
            variant: None,
        };
        let size = self.layout(&ret.ty)?.size;
        let b = self.read(&ret, size)?;
        // The callee's locals die with its frame: their bytes are freed (a
        // pointer that still names one now reads outside a 0-byte
        // allocation, the dangling read it is), so a table built by many
        // calls holds only what the calls return.
        for &a in &frame {
            self.mem.free(a);
        }
        self.write(dest, &b)
    }

    /// Runs `body` in the frame `locals` (its arguments written), counting
    /// its statements and calls against `budget`.
    fn run_frame(
        &mut self,
        body: &'a Body,
        locals: &[EvalAlloc],
        budget: &mut Budget,
    ) -> Result<EvalAlloc, (Option<String>, EvalError)> {
        let at = |loc: Option<String>| move |e: EvalError| (loc.clone(), e);
        let mutable_static = matches!(body.kind, BodyKind::Static(Mutability::Mut));
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
        loop {
            let data = body.blocks.get(bb).ok_or_else(|| {
                let e = format!("jump to {bb}, which does not exist");
                (None, EvalError::Construct(e))
            })?;
            for (i, st) in data.statements.iter().enumerate() {
                budget.steps += 1;
                let loc = Some(format!("{bb}[{i}]"));
                if budget.steps > STEP_LIMIT {
                    return Err((loc, EvalError::StepLimit));
                }
                match &st.kind {
                    StatementKind::Assign(p, rv) => {
                        let dest = self.place(body, locals, p).map_err(at(loc.clone()))?;
                        self.assign(body, locals, &dest, rv, mutable_static)
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
            // A terminator is a step too: a loop of bare jumps and calls
            // runs no statement.
            budget.steps += 1;
            if budget.steps > STEP_LIMIT {
                return Err((loc, EvalError::StepLimit));
            }
            match &data.terminator.kind {
                TerminatorKind::Goto(t) => bb = *t,
                TerminatorKind::Return => return Ok(locals[0]),
                TerminatorKind::SwitchInt {
                    discr,
                    targets,
                    otherwise,
                } => {
                    let v = self.operand_uint(body, locals, discr).map_err(at(loc))?;
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
                        .operand_uint(body, locals, cond)
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
                        .place(body, locals, destination)
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
                TerminatorKind::Call {
                    func: crate::model::Callee::Item(p),
                    args,
                    destination,
                    target: Some(next),
                    ..
                } if crate::calls::classify(p)
                    == Some(crate::calls::KnownCall::RangeInclusiveNew) =>
                {
                    let dest = self
                        .place(body, locals, destination)
                        .map_err(at(loc.clone()))?;
                    self.range_inclusive(body, locals, &dest, args)
                        .map_err(at(loc))?;
                    bb = *next;
                }
                TerminatorKind::Call {
                    func,
                    args,
                    destination,
                    target,
                    ..
                } => {
                    let callee = match (func, target) {
                        (crate::model::Callee::Item(p), Some(next)) => {
                            self.callee(p).map(|c| (c, *next))
                        }
                        _ => None,
                    };
                    let Some((callee, next)) = callee else {
                        let name = match func {
                            crate::model::Callee::Item(p) => p.to_string(),
                            crate::model::Callee::Operand(_) => "a function pointer".into(),
                        };
                        return Err((loc, EvalError::Call(name)));
                    };
                    // A `const fn` the constant calls (`t[i] = op_at(i)`):
                    // its body runs here, in a frame of its own.
                    let dest = self
                        .place(body, locals, destination)
                        .map_err(at(loc.clone()))?;
                    self.call(body, locals, callee, args, &dest, budget)
                        .map_err(at(loc))?;
                    bb = next;
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
        // The place would carry the vtable, which `PlaceRef::meta` (a
        // length) cannot.
        if pointee.trait_object().is_some() {
            return Err(format!(
                "a place behind the trait object pointer `{}` (`&*object`) is not supported in a constant",
                p.ty
            )
            .into());
        }
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
            Target::Function(f) => Err(format!("reads function `{f}` as memory").into()),
        }
    }

    pub(super) fn read_uint(&self, p: &PlaceRef, len: u64) -> R<u128> {
        Ok(self.read(p, len)?.to_uint()?)
    }

    pub(super) fn write(&mut self, p: &PlaceRef, b: &Bytes) -> R<()> {
        match &p.base {
            Target::Alloc(a) => Ok(self.mem.write(*a, p.offset, b)?),
            Target::Static(s) => Err(format!("writes static `{s}` during evaluation").into()),
            Target::Function(f) => Err(format!("writes function `{f}` as memory").into()),
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
                let id = self.promoted_body(owner, *index)?;
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
        Ok(self.operand_bytes(body, locals, op, &ty, size)?.to_uint()?)
    }

    /// `RangeInclusive::new(start, end)` written to `dest`: its fields by
    /// the names rustc's report gives them, `exhausted` false.
    fn range_inclusive(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        dest: &PlaceRef,
        args: &[Operand],
    ) -> R<()> {
        let [start, end] = args else {
            return Err("`RangeInclusive::new` without two operands".into());
        };
        let l = self.layout(&dest.ty)?;
        let [start_name, end_name, exhausted] = crate::calls::RANGE_INCLUSIVE_FIELDS;
        for (name, arg) in [(start_name, start), (end_name, end)] {
            let ty = self.operand_ty(body, arg)?;
            let size = self.layout(&ty)?.size;
            let bytes = self.operand_bytes(body, locals, arg, &ty, size)?;
            let off = super::consts::field_offset(&l, None, name)?;
            self.write(&self.at(dest, off, ty), &bytes)?;
        }
        let off = super::consts::field_offset(&l, None, exhausted)?;
        self.write(&self.at(dest, off, Ty::Bool), &Bytes::plain(vec![0]))
    }

    /// The first `len` bytes of operand `op` (of type `ty`), written to a
    /// temporary that is freed once read.
    pub(super) fn operand_bytes(
        &mut self,
        body: &Body,
        locals: &[EvalAlloc],
        op: &Operand,
        ty: &Ty,
        len: u64,
    ) -> R<Bytes> {
        let tmp = self.temp(ty)?;
        let b = self
            .write_operand(body, locals, &tmp, op)
            .and_then(|()| self.read(&tmp, len));
        self.free_temp(&tmp);
        b
    }

    /// Frees a temporary from [`Self::temp`] once its value has been read
    /// out: an evaluation's operands would otherwise keep one allocation
    /// per use, for as many steps as the budget allows.
    pub(super) fn free_temp(&mut self, p: &PlaceRef) {
        if let Target::Alloc(a) = p.base {
            self.mem.free(a);
        }
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
