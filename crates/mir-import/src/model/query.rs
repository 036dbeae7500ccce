//! Questions that later stages ask of the model: the type of a place, the type
//! of a constant operand, the functions a kernel reaches, and every constant
//! operand a body uses.
//!
//! They live here, once, because two stages must answer them identically: the
//! evaluator computes every constant operand's value up front, keyed by the
//! operand and its type, and lowering looks the value up by the same key.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::unambiguous::Unambiguous;

use super::body::{
    Body, Callee, ConstOperand, Local, Operand, Place, PlaceElem, Rvalue, Scalar, StatementKind,
    TerminatorKind, ValTree,
};
use super::ty::{IntTy, Mutability, Path, Ty};
use super::{BodyId, BodyKind, Crate};

impl Body {
    /// Where this body uses a `TypeId::of::<T>()` constant other than as
    /// rustc's `TypeId == TypeId` leaves it: transmuted to `u128` into a
    /// local that only `==` and `!=` read. Our value is not rustc's
    /// ([`Path::type_id_bytes`]), so any other use (ordering, hashing,
    /// writing it out) would differ from the host; `None` when there is
    /// none.
    pub fn type_id_misuse(&self) -> Option<String> {
        let is_type_id = |o: &Operand| matches!(o, Operand::Const(ConstOperand::Item(p)) if p.type_id_of().is_some());
        let mut uses = 0usize;
        let mut foreign = None;
        let printed_for_the_kernel = self.path.segments.first().map(|s| s.name.as_str())
            == Some(crate::prelude::KERNEL_MODULE);
        self.for_each_operand(|o| {
            if let Operand::Const(ConstOperand::Item(p)) = o
                && let Some(t) = p.type_id_of()
            {
                uses += 1;
                if !printed_for_the_kernel && !super::ty::std_or_kernel_only(t) {
                    foreign = Some(t.clone());
                }
            }
        });
        if uses == 0 {
            return None;
        }
        if let Some(t) = foreign {
            return Some(format!(
                "`TypeId::of::<{t}>()` in a body made from a dependency's MIR, which may spell `{t}` \
                 otherwise than the kernel's MIR does"
            ));
        }
        let mut transmuted = BTreeMap::new();
        for bb in self.blocks.values() {
            for st in &bb.statements {
                if let StatementKind::Assign(dest, Rvalue::Cast(super::CastKind::Transmute, o, _)) =
                    &st.kind
                    && is_type_id(o)
                    && dest.projection.is_empty()
                {
                    *transmuted.entry(dest.local).or_insert(0usize) += 1;
                }
            }
        }
        if transmuted.values().sum::<usize>() != uses {
            return Some(
                "a `TypeId` is used other than transmuted to `u128` for `==` (its value here is not rustc's)"
                    .into(),
            );
        }
        // Each such local: read by `==` and `!=` only.
        let mut reads: BTreeMap<Local, usize> = BTreeMap::new();
        self.for_each_operand(|o| {
            if let Operand::Copy(p) | Operand::Move(p) = o
                && transmuted.contains_key(&p.local)
            {
                *reads.entry(p.local).or_default() += 1;
            }
        });
        for bb in self.blocks.values() {
            for st in &bb.statements {
                if let StatementKind::Assign(_, Rvalue::BinaryOp(op, a, b)) = &st.kind
                    && matches!(op, super::BinOp::Eq | super::BinOp::Ne)
                {
                    for o in [a, b] {
                        if let Operand::Copy(p) | Operand::Move(p) = o
                            && p.projection.is_empty()
                            && let Some(n) = reads.get_mut(&p.local)
                        {
                            *n -= 1;
                        }
                    }
                }
            }
        }
        reads.into_iter().find(|&(_, n)| n > 0).map(|(l, _)| {
            format!(
                "the `TypeId` in {l:?} is read other than by `==` or `!=` (its value here is not rustc's)"
            )
        })
    }

    /// For a closure's body (`kernel::k::{closure#0}`): how it takes the
    /// closure, `&C` (`Some(Not)`: an `Fn` closure), `&mut C` (`Some(Mut)`:
    /// `FnMut`) or by value (`None`: `FnOnce`), and the closure type's printed
    /// name (`{closure@..}`). `None` for any other body.
    pub fn closure_receiver(&self) -> Option<(Option<Mutability>, &str)> {
        if !matches!(self.kind, BodyKind::Fn { ctfe: false })
            || !self.path.last_name().starts_with("{closure#")
            || self.arg_count == 0
        {
            return None;
        }
        let (by, ty) = match &self.locals.get(Local::from_u32(1))?.ty {
            Ty::Ref(m, t) => (Some(*m), &**t),
            t => (None, t),
        };
        match ty {
            Ty::Opaque(name) if name.starts_with("{closure@") => Some((by, name)),
            _ => None,
        }
    }

    /// The type of `p`: the local's declared type through each projection.
    /// `None` when a projection does not fit (a deref of a non-pointer, an
    /// index into a non-array) or the local is not declared.
    pub fn place_ty(&self, p: &Place) -> Option<Ty> {
        let mut ty = self.locals.get(p.local)?.ty.clone();
        for e in &p.projection {
            ty = e.projected_ty(ty)?;
        }
        Some(ty)
    }

    /// Calls `f` on every projection of every place the body names, with
    /// the type of the place it projects (`(*_1).1` gives `(*_1)`'s type
    /// with `Field(1, ..)`). A place stops at the first projection that
    /// does not fit its type.
    pub fn for_each_typed_projection(&self, mut f: impl FnMut(&Ty, &PlaceElem)) {
        self.for_each_place(|p| {
            let Some(mut ty) = self.locals.get(p.local).map(|l| l.ty.clone()) else {
                return;
            };
            for e in &p.projection {
                f(&ty, e);
                let Some(next) = e.projected_ty(ty) else {
                    return;
                };
                ty = next;
            }
        });
    }

    /// Every constant operand the body's code uses, with the type its value
    /// is read at: the destination's type for `place = const C` (the printer
    /// leaves `const Option::<&u32>::None` untyped), otherwise
    /// [`Crate::const_ty`]. Scalars, `()` and zero-sized constants are left
    /// out: their values need no memory. An operand whose type is unknown is
    /// left out too; whoever reads it reports that.
    pub fn const_operands<'b>(&'b self, krate: &Crate) -> Vec<(&'b ConstOperand, Ty)> {
        let mut out = Vec::new();
        let mut push = |op: &'b Operand, at: Option<Ty>| {
            let Operand::Const(c) = op else { return };
            if matches!(
                c,
                ConstOperand::Scalar(_) | ConstOperand::Unit | ConstOperand::ZeroSized(_)
            ) {
                return;
            }
            if let Some(ty) = at.or_else(|| krate.const_ty(c)) {
                out.push((c, ty));
            }
        };
        for bb in self.blocks.values() {
            for st in &bb.statements {
                if let StatementKind::CopyNonOverlapping { dst, src, count } = &st.kind {
                    // `copy_nonoverlapping(.., count = const <T as
                    // SizedTypeProperties>::SIZE)` in an instance.
                    [dst, src, count].into_iter().for_each(|op| push(op, None));
                    continue;
                }
                let StatementKind::Assign(place, rv) = &st.kind else {
                    continue;
                };
                match rv {
                    Rvalue::Use(op @ Operand::Const(_)) => push(op, self.place_ty(place)),
                    Rvalue::Use(op)
                    | Rvalue::Repeat(op, _)
                    | Rvalue::Cast(_, op, _)
                    | Rvalue::UnaryOp(_, op) => push(op, None),
                    Rvalue::BinaryOp(_, a, b) => {
                        push(a, None);
                        push(b, None);
                    }
                    Rvalue::Aggregate(_, ops) => ops.iter().for_each(|op| push(op, None)),
                    Rvalue::Ref(..)
                    | Rvalue::RawPtr(..)
                    | Rvalue::Discriminant(_)
                    | Rvalue::CopyForDeref(_)
                    | Rvalue::Nullary(..) => {}
                }
            }
            match &bb.terminator.kind {
                TerminatorKind::SwitchInt { discr, .. } => push(discr, None),
                TerminatorKind::Assert { cond, .. } => push(cond, None),
                TerminatorKind::Call { func, args, .. } => {
                    if let Callee::Operand(op) = func {
                        push(op, None);
                    }
                    args.iter().for_each(|op| push(op, None));
                }
                _ => {}
            }
        }
        out
    }
}

impl Crate {
    /// The type of a constant operand as it is written: a literal's own type,
    /// the declared type of the const item or promoted it names, or, for a
    /// path that names no item or a value printed by path (`PhantomData::<&u32>`,
    /// `kernel::E::C`, `kernel::E::A(7_u32)`), its struct, or the enum whose
    /// variant it names. `None` for other printed values and function
    /// items, whose type the operand does not say, and for a promoted with no
    /// body.
    pub fn const_ty(&self, c: &ConstOperand) -> Option<Ty> {
        Some(match c {
            ConstOperand::Scalar(Scalar::Int { ty, .. }) => Ty::Int(*ty),
            ConstOperand::Scalar(Scalar::Bool(_)) => Ty::Bool,
            ConstOperand::Scalar(Scalar::Char(_)) => Ty::Char,
            ConstOperand::Scalar(Scalar::Float { ty, .. }) => Ty::Float(*ty),
            ConstOperand::Unit => Ty::unit(),
            ConstOperand::Alloc { ty, .. }
            | ConstOperand::Indirect { ty, .. }
            | ConstOperand::ZeroSized(ty)
            | ConstOperand::Transmuted { ty, .. } => ty.clone(),
            ConstOperand::Item(p) if p.sized_property().is_some() => Ty::Int(super::IntTy::Usize),
            ConstOperand::Item(p) if p.type_id_of().is_some() => Path::type_id_type(),
            ConstOperand::Item(p) => match (p.int_limit_type(), self.item_body(&p.def_path())) {
                (Some(it), _) => Ty::Int(it),
                (None, Some(b)) => self.bodies[b].return_ty.clone(),
                // A unit variant's (`kernel::E::C`) is its enum's; a unit
                // struct value (`PhantomData::<&u32>`) is its own type.
                (None, None) => self.value_path_ty(p),
            },
            // `const []` alone: its element type is not printed, but it is
            // zero-sized whatever it is, and `[(); 0]` stands for it (nothing
            // is read or written, and the place it goes to has its own
            // alignment). Inside a tuple or an array the element's
            // alignment would move its neighbours: unknown there.
            ConstOperand::Value(ValTree::Array(elems)) if elems.is_empty() => {
                Ty::Array(Box::new(Ty::unit()), super::ArrayLen::Known(0))
            }
            ConstOperand::Value(v) => return self.value_ty(v),
            ConstOperand::Promoted { owner, index } => {
                let b = self.promoted(&owner.def_path(), *index)?;
                self.bodies[b].return_ty.clone()
            }
            ConstOperand::Str(_) => Ty::Ref(super::Mutability::Not, Box::new(Ty::Str)),
            ConstOperand::StaticRef(p) => {
                let b = self.item_body(&p.def_path())?;
                Ty::Ref(
                    super::Mutability::Not,
                    Box::new(self.bodies[b].return_ty.clone()),
                )
            }
            // `b"123"`: a `&[u8; 3]`.
            ConstOperand::ByteStr(b) => Ty::Ref(
                super::Mutability::Not,
                Box::new(Ty::Array(
                    Box::new(Ty::Int(super::IntTy::U8)),
                    super::ArrayLen::Known(b.len() as u64),
                )),
            ),
            ConstOperand::FnItem(_) | ConstOperand::Uninit => return None,
        })
    }

    /// The type of an operand of `body`: a place's, or a constant's as
    /// [`Crate::const_ty`] reads it from its syntax.
    pub fn operand_ty(&self, body: &Body, op: &Operand) -> Option<Ty> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => body.place_ty(p),
            Operand::Const(c) => self.const_ty(c),
        }
    }

    /// The type of a value tree where its syntax says it: a path's, a
    /// scalar's, or a tuple's of such elements (`(Const::<3>, Const::<1>)`,
    /// nalgebra's shape of a `Vector3`, printed without a type).
    fn value_ty(&self, v: &ValTree) -> Option<Ty> {
        match v {
            ValTree::Tuple(Some(p), _) | ValTree::Struct(p, _) | ValTree::Path(p) => {
                Some(self.value_path_ty(p))
            }
            ValTree::Tuple(None, elems) => Some(Ty::Tuple(
                elems
                    .iter()
                    .map(|e| self.value_ty(e))
                    .collect::<Option<_>>()?,
            )),
            ValTree::Scalar(s) => self.const_ty(&ConstOperand::Scalar(s.clone())),
            ValTree::Const(c) => self.const_ty(c),
            // `[const 1_u8, const 2_u8]`: the elements say. An empty
            // array's element type is not printed ([`Crate::const_ty`]
            // types it where it stands alone).
            ValTree::Array(elems) => Some(Ty::Array(
                Box::new(self.value_ty(elems.first()?)?),
                super::ArrayLen::Known(elems.len() as u64),
            )),
            ValTree::Str(_) | ValTree::ByteStr(_) => None,
        }
    }

    /// The type of a value printed by path (`kernel::E::A(7_u32)`,
    /// `kernel::S {{ .. }}`, `kernel::E::C`): the enum's when the path's last
    /// segment is a variant of the type its parent names (as the layout
    /// report prints it), else the path's own.
    fn value_path_ty(&self, p: &Path) -> Ty {
        if let Some((variant, parent)) = p.segments.split_last() {
            let parent = Ty::Adt(Path {
                segments: parent.to_vec(),
            });
            if let Some(l) = self.layouts.get(&parent.to_string())
                && let crate::layout::TypeShape::Enum { variants, .. } = &l.shape
                && variants.iter().any(|v| v.name == variant.name)
            {
                return parent;
            }
        }
        Ty::Adt(p.clone())
    }

    /// The functions lowering translates: every kernel entry point and every
    /// function with a body that they call, transitively, by def path.
    /// Prelude intrinsics are calls by path, not functions to translate.
    pub fn reachable_functions(&self) -> Vec<String> {
        self.reachable_function_bodies().into_keys().collect()
    }

    /// The bodies of [`Crate::reachable_functions`], in the same order.
    pub fn reachable_bodies(&self) -> impl Iterator<Item = &Body> {
        self.reachable_function_bodies()
            .into_values()
            .map(|id| &self.bodies[id])
    }

    /// [`Crate::reachable_functions`] with each one's body (as
    /// [`Crate::fn_body`] finds it). Each body's path is spelled once; a
    /// lookup by `fn_body` per call would spell every body's path per call.
    pub fn reachable_function_bodies(&self) -> BTreeMap<String, BodyId> {
        self.reachable_and_vtables().0
    }

    /// The vtable layouts of the trait objects the kernels use: the
    /// methods reachable bodies call through each principal trait, and the
    /// concrete types they make objects of.
    pub fn vtable_layouts(&self) -> super::VtableLayouts {
        self.reachable_and_vtables().1
    }

    /// [`Crate::reachable_function_bodies`] and [`Crate::vtable_layouts`]
    /// from one walk: a call through a trait object reaches the methods of
    /// every concrete type some reachable body makes such an object of.
    pub fn reachable_and_vtables(&self) -> (BTreeMap<String, BodyId>, super::VtableLayouts) {
        let mut by_path: HashMap<String, BodyId> = HashMap::new();
        for (id, b) in self.bodies.iter() {
            if matches!(b.kind, BodyKind::Fn { ctfe: false }) {
                // The first body printed for a path, as `fn_body` finds it.
                by_path.entry(b.path.def_path()).or_insert(id);
            }
        }
        let mut todo: Vec<String> = self
            .attrs
            .iter()
            .filter(|(_, a)| a.kernel)
            .map(|(p, _)| p.clone())
            .collect();
        let mut seen: BTreeMap<String, BodyId> = BTreeMap::new();
        let mut constants = super::const_fns::ConstWalk::new(self);
        let mut dispatch = super::dyn_dispatch::DispatchJoin::default();
        while let Some(p) = todo.pop() {
            let Some(&id) = by_path.get(&p) else { continue };
            if seen.contains_key(&p) {
                continue;
            }
            seen.insert(p, id);
            // A function called, one whose address is taken (a function
            // pointer used as a value), one whose address a constant
            // the body uses holds (a table of them), or a concrete type's
            // method that a call through a trait object may run.
            let body = &self.bodies[id];
            let mut dispatched = dispatch.visit(self, body);
            let held = constants.held_by_constants_of(body);
            for (t, p) in constants.take_objects() {
                dispatched.extend(dispatch.made_object(t, &p));
            }
            let named = body
                .called_items()
                .chain(body.reified_fns())
                .chain(held)
                .chain(&dispatched);
            for c in named {
                let d = self.resolve_callee(c);
                if by_path.contains_key(&d) && crate::prelude::intrinsic(&d).is_none() {
                    todo.push(d);
                }
            }
        }
        (seen, dispatch.finish())
    }

    /// The capture types of each closure type, by its printed name: from
    /// the aggregates that build one (`{closure@..} { a: copy _5 }`), and
    /// else from its body's reads of its captures (`((*_1).0: u8)`), which
    /// name every capture, since a closure captures only what its body uses.
    /// A closure that neither shows completely is absent, and so is a name
    /// that two different capture lists (without type parameters) share:
    /// rustc prints a closure's type without its generic arguments, so a
    /// closure of a generic function inlined at two types, or one a macro
    /// expands twice, is two types under one name.
    pub fn closure_captures(&self) -> BTreeMap<String, Vec<Ty>> {
        let mut found: Unambiguous<Vec<Ty>> = Unambiguous::default();
        // A generic function's own copy (`[T]`) is not one of the types that
        // share the name, its instances are; it counts only where no
        // instance shows.
        let mut generic: BTreeMap<String, Vec<Ty>> = BTreeMap::new();
        let mut record = |found: &mut Unambiguous<Vec<Ty>>, name: String, tys: Vec<Ty>| {
            if tys.iter().any(Ty::mentions_type_parameter) {
                generic.entry(name).or_insert(tys);
            } else {
                found.insert(name, tys);
            }
        };
        for b in self.bodies.values() {
            for bb in b.blocks.values() {
                for st in &bb.statements {
                    let super::StatementKind::Assign(
                        dest,
                        super::Rvalue::Aggregate(super::AggregateKind::Opaque(_), ops),
                    ) = &st.kind
                    else {
                        continue;
                    };
                    // The report names a closure as the destination's type
                    // does (std's by path, `{closure@std::iter::..::map_fold<..>
                    // ::{closure#0}}`), not as the aggregate does (by span).
                    let Some(Ty::Opaque(name)) = b.place_ty(dest) else {
                        continue;
                    };
                    if !name.starts_with("{closure@") {
                        continue;
                    }
                    let tys: Option<Vec<Ty>> =
                        ops.iter().map(|op| self.operand_ty(b, op)).collect();
                    if let Some(tys) = tys {
                        record(&mut found, name, tys);
                    }
                }
            }
        }
        // The closures aggregates built: their bodies' reads are not needed.
        let built: BTreeSet<String> = found.names().cloned().collect();
        for b in self.bodies.values() {
            let Some((by, name)) = b.closure_receiver() else {
                continue;
            };
            let by_ref = by.is_some();
            if built.contains(name) {
                continue;
            }
            let mut fields: BTreeMap<u32, Ty> = BTreeMap::new();
            b.for_each_place(|p| {
                if p.local != Local::from_u32(1) {
                    return;
                }
                let field = if by_ref {
                    match p.projection.as_slice() {
                        [PlaceElem::Deref, PlaceElem::Field(i, t), ..] => Some((i, t)),
                        _ => None,
                    }
                } else {
                    match p.projection.as_slice() {
                        [PlaceElem::Field(i, t), ..] => Some((i, t)),
                        _ => None,
                    }
                };
                if let Some((i, t)) = field {
                    fields.insert(*i, t.clone());
                }
            });
            // Every index from 0 on, with no gap.
            if fields.keys().copied().eq(0..fields.len() as u32) {
                record(&mut found, name.to_string(), fields.into_values().collect());
            }
        }
        let (mut found, ambiguous) = found.into_parts();
        for (name, tys) in generic {
            if !ambiguous.contains(&name) {
                found.entry(name).or_insert(tys);
            }
        }
        // `core` closures that no printed body builds or reads, whose
        // captures their function's generic arguments say.
        for name in self.layouts.types.keys() {
            if !found.contains_key(name)
                && let Some(tys) = known_std_captures(name)
            {
                found.insert(name.to_string(), tys);
            }
        }
        found
    }

    /// For each closure with several captures whose offsets the report
    /// leaves unknown, the tuple whose layout the probe measures instead: its
    /// capture types followed by `()`. rustc lays a closure out as it lays out
    /// a tuple of its captures, except that a tuple keeps its last field in
    /// place (it may be unsized); a trailing `()` is that last field, so the
    /// captures before it are reordered exactly as the closure's are. The
    /// test `closure_layouts_are_tuple_prefixes` pins this on rustc itself.
    ///
    /// A capture that is itself a closure (`core`'s `Take::try_fold`'s
    /// `check` captures the fold's closure beside a `&mut usize`), which
    /// source cannot name, is replaced by its own proxy, recursively, and a
    /// pointer to one by a pointer to `()`: each is laid out as what it
    /// stands for (size, alignment, niche), so the outer tuple's fields are
    /// reordered as the closure's are.
    pub fn closure_proxy_tuples(&self) -> BTreeMap<String, Ty> {
        let captures = self.closure_captures();
        captures
            .iter()
            .filter(|(name, tys)| {
                tys.len() >= 2
                    && self.layouts.get(name).is_some_and(|l| {
                        matches!(&l.shape, crate::layout::TypeShape::Struct { fields } if fields.is_empty())
                            && l.size > 0
                    })
            })
            .filter_map(|(name, _)| {
                // Zero-sized and byte-aligned, as `()` is.
                let zero_sized = |closure: &str| {
                    self.layouts
                        .get(closure)
                        .is_some_and(|l| l.size == 0 && l.align == 1)
                };
                let proxy = closure_proxy(&Ty::Opaque(name.clone()), &captures, &zero_sized, 0)?;
                Some((name.clone(), proxy))
            })
            .collect()
    }

    /// Gives each closure of [`Crate::closure_proxy_tuples`] its capture
    /// offsets from the probed layout of its tuple, where the tuple's size and
    /// alignment are the closure's (as rustc printed them).
    pub fn record_closure_offsets(&mut self, probed: &crate::eval::TupleLayouts) {
        for (name, proxy) in self.closure_proxy_tuples() {
            let Ty::Tuple(tys) = &proxy else { continue };
            let Some((size, align, offsets)) = probed.by_type.get(&proxy.to_string()) else {
                continue;
            };
            // A captured closure the report does not print is as large as
            // its proxy, which the probe measured too.
            let sizes: Option<Vec<u64>> = tys[..tys.len() - 1]
                .iter()
                .map(|t| {
                    self.plain_size(t).or_else(|| {
                        let Ty::Tuple(inner) = t else { return None };
                        inner.is_empty().then_some(0).or_else(|| {
                            probed.by_type.get(&t.to_string()).map(|(size, _, _)| *size)
                        })
                    })
                })
                .collect();
            if let Some(sizes) = sizes {
                self.layouts
                    .record_capture_offsets(&name, *size, *align, &sizes, offsets);
            }
        }
    }

    /// Gives the captures of each closure type whose layout is certain
    /// their offsets (see [`crate::layout::LayoutTable::record_captures`]):
    /// the report prints a closure's captures as padding, and rustc reorders
    /// fields, so only a closure with at most one capture that is not
    /// zero-sized, filling the closure, has offsets that follow (all 0).
    pub fn record_closure_captures(&mut self) {
        let mut found = Vec::new();
        for (name, tys) in self.closure_captures() {
            let sizes: Option<Vec<u64>> = tys.iter().map(|t| self.plain_size(t)).collect();
            if let Some(sizes) = sizes {
                found.push((name, sizes));
            }
        }
        for (name, sizes) in found {
            self.layouts.record_captures(&name, &sizes);
        }
    }

    /// The size of `ty` where it needs no probe: scalars, thin and fat
    /// pointers, and types the report prints (closures, ADTs).
    fn plain_size(&self, ty: &Ty) -> Option<u64> {
        use super::ty::FloatTy;
        Some(match ty {
            Ty::Bool => 1,
            Ty::Char => 4,
            Ty::Int(i) => i.size(),
            Ty::Float(FloatTy::F32) => 4,
            Ty::Float(FloatTy::F64) => 8,
            Ty::Ref(_, t) | Ty::RawPtr(_, t) if self.layouts.is_unsized(t) => 16,
            Ty::Ref(..) | Ty::RawPtr(..) | Ty::FnPtr(..) => 8,
            Ty::Tuple(e) if e.is_empty() => 0,
            other => self.layouts.get(&other.to_string())?.size,
        })
    }
}

impl PlaceElem {
    /// The type of a place of type `ty` after this projection; `None` when
    /// it does not fit (a deref of a non-pointer, an index into a
    /// non-array).
    pub fn projected_ty(&self, ty: Ty) -> Option<Ty> {
        Some(match self {
            PlaceElem::Deref => ty.pointee()?.clone(),
            PlaceElem::Field(_, t) => t.clone(),
            PlaceElem::Downcast(_) | PlaceElem::Subslice { .. } => ty,
            PlaceElem::Index(_) | PlaceElem::ConstantIndex { .. } => match ty {
                Ty::Array(e, _) | Ty::Slice(e) => *e,
                Ty::Str => Ty::Int(IntTy::U8),
                _ => return None,
            },
        })
    }
}

/// The captures of a `core` closure whose source fixes them, from the
/// generic arguments in its name, in the order its body first names them:
/// `Filter::fold`'s `filter_fold<T, Acc, P, F>` captures `predicate: P`,
/// then `fold: F`. `None` for any other closure.
fn known_std_captures(name: &str) -> Option<Vec<Ty>> {
    let def = name
        .strip_prefix("{closure@")?
        .strip_suffix("::{closure#0}}")?;
    let (function, args) = super::brackets::trailing_generic_args(def)?;
    if crate::calls::std_relative(function) != Some("iter::adapters::filter::filter_fold") {
        return None;
    }
    let items = super::brackets::top_level_items(args);
    let [_, _, predicate, fold] = items.as_slice() else {
        return None;
    };
    let closure = |t: &str| t.starts_with("{closure@") && t.ends_with('}');
    (closure(predicate) && closure(fold)).then(|| {
        vec![
            Ty::Opaque(predicate.to_string()),
            Ty::Opaque(fold.to_string()),
        ]
    })
}

/// How deep [`closure_proxy`] follows closures inside closures.
const PROXY_DEPTH: usize = 8;

/// The type the layout probe measures for `ty`: a closure as the tuple of
/// its captures' proxies followed by `()` (see
/// [`Crate::closure_proxy_tuples`]), a pointer to a closure as a pointer
/// to `()` (a thin pointer either way), tuples and arrays element by
/// element, anything else as it is; a closure whose captures are not known
/// but that the report prints zero-sized and byte-aligned as `()`. `None`
/// for any other closure whose captures are not known.
fn closure_proxy(
    ty: &Ty,
    captures: &BTreeMap<String, Vec<Ty>>,
    zero_sized: &dyn Fn(&str) -> bool,
    depth: usize,
) -> Option<Ty> {
    if depth > PROXY_DEPTH {
        return None;
    }
    let closure = |t: &Ty| matches!(t, Ty::Opaque(n) if n.starts_with("{closure@"));
    Some(match ty {
        Ty::Opaque(name) if closure(ty) => match captures.get(name) {
            Some(of) => {
                let mut fields: Vec<Ty> = of
                    .iter()
                    .map(|c| closure_proxy(c, captures, zero_sized, depth + 1))
                    .collect::<Option<_>>()?;
                fields.push(Ty::unit());
                Ty::Tuple(fields)
            }
            None if zero_sized(name) => Ty::unit(),
            None => return None,
        },
        Ty::Ref(m, inner) if closure(inner) => Ty::Ref(*m, Box::new(Ty::unit())),
        Ty::RawPtr(m, inner) if closure(inner) => Ty::RawPtr(*m, Box::new(Ty::unit())),
        Ty::Tuple(items) => Ty::Tuple(
            items
                .iter()
                .map(|t| closure_proxy(t, captures, zero_sized, depth + 1))
                .collect::<Option<_>>()?,
        ),
        Ty::Array(item, len) => Ty::Array(
            Box::new(closure_proxy(item, captures, zero_sized, depth + 1)?),
            len.clone(),
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArrayLen, IntTy, Scalar};

    #[test]
    fn a_captured_closure_stands_in_as_its_own_proxy_tuple() {
        let closure = |n: &str| Ty::Opaque(format!("{{closure@{n}}}"));
        let usize_ty = Ty::Int(IntTy::Usize);
        let by_ref = |t: Ty| Ty::Ref(crate::model::Mutability::Mut, Box::new(t));
        let captures: BTreeMap<String, Vec<Ty>> = [
            // `enumerate(count, fold)`, `fold` a closure over a key closure
            // that borrows.
            (
                "{closure@enumerate}".to_string(),
                vec![closure("fold"), usize_ty.clone()],
            ),
            ("{closure@fold}".to_string(), vec![closure("key")]),
            (
                "{closure@key}".to_string(),
                vec![Ty::Ref(
                    crate::model::Mutability::Not,
                    Box::new(Ty::Int(IntTy::U32)),
                )],
            ),
            // `check(n, fold)` over a closure the report prints zero-sized,
            // whose captures no printed body shows.
            (
                "{closure@check}".to_string(),
                vec![by_ref(usize_ty.clone()), closure("empty")],
            ),
            (
                "{closure@pointing}".to_string(),
                vec![by_ref(closure("unknown")), closure("unknown")],
            ),
        ]
        .into();
        let zero_sized = |n: &str| n == "{closure@empty}";
        let proxy =
            |n: &str| closure_proxy(&closure(n), &captures, &zero_sized, 0).map(|t| t.to_string());
        assert_eq!(
            proxy("enumerate").as_deref(),
            Some("(((&u32, ()), ()), usize, ())")
        );
        assert_eq!(proxy("check").as_deref(), Some("(&mut usize, (), ())"));
        // A pointer to a closure is a thin pointer whatever it points to;
        // a closure neither printed zero-sized nor with known captures has
        // no proxy.
        assert_eq!(proxy("pointing"), None);
        let pointer_only: BTreeMap<String, Vec<Ty>> = [(
            "{closure@p}".to_string(),
            vec![by_ref(closure("unknown")), usize_ty],
        )]
        .into();
        assert_eq!(
            closure_proxy(&closure("p"), &pointer_only, &zero_sized, 0).map(|t| t.to_string()),
            Some("(&mut (), usize, ())".to_string())
        );
    }

    #[test]
    fn filter_folds_captures_are_its_predicate_then_its_fold() {
        let (p, f) = (
            "{closure@/src/kernel.rs:1:2: 1:3}",
            "{closure@/src/kernel.rs:4:5: 4:6}",
        );
        let name = format!(
            "{{closure@std::iter::adapters::filter::filter_fold<u32, u32, {p}, {f}>::{{closure#0}}}}"
        );
        assert_eq!(
            known_std_captures(&name),
            Some(vec![Ty::Opaque(p.into()), Ty::Opaque(f.into())])
        );
        // Any other closure of `core`, or another index, says nothing.
        assert_eq!(
            known_std_captures(&name.replace("filter_fold", "map_fold")),
            None
        );
        assert_eq!(
            known_std_captures(&name.replace("{closure#0}}", "{closure#1}}")),
            None
        );
    }

    #[test]
    fn a_tuple_constant_is_typed_by_its_elements() {
        let k = Crate::default();
        let shape = ConstOperand::Value(ValTree::Tuple(
            None,
            vec![
                ValTree::Path(Path::plain("dep::Const")),
                ValTree::Scalar(Scalar::Int {
                    bits: 1,
                    ty: IntTy::U32,
                }),
            ],
        ));
        assert_eq!(
            k.const_ty(&shape),
            Some(Ty::Tuple(vec![
                Ty::Adt(Path::plain("dep::Const")),
                Ty::Int(IntTy::U32)
            ]))
        );
        // An element whose type its syntax does not say leaves it unknown:
        // an empty array's element, whose alignment places the tuple's
        // other fields.
        let array = ConstOperand::Value(ValTree::Tuple(None, vec![ValTree::Array(vec![])]));
        assert_eq!(k.const_ty(&array), None);
        // An array is typed by its first element; an empty one alone is
        // zero-sized whatever its element, and `[(); 0]` stands for it.
        let int = |bits| {
            ValTree::Scalar(Scalar::Int {
                bits,
                ty: IntTy::U32,
            })
        };
        let u32s = ConstOperand::Value(ValTree::Array(vec![int(1), int(2)]));
        assert_eq!(
            k.const_ty(&u32s),
            Some(Ty::Array(Box::new(Ty::Int(IntTy::U32)), ArrayLen::Known(2)))
        );
        let empty = ConstOperand::Value(ValTree::Array(vec![]));
        assert_eq!(
            k.const_ty(&empty),
            Some(Ty::Array(Box::new(Ty::unit()), ArrayLen::Known(0)))
        );
    }

    /// A kernel that builds the closure `{closure@/src/kernel.rs:3:13: 3:16}`
    /// twice, capturing `_1: u32` and then `_2` of type `second`.
    fn two_builds(second: &str) -> Crate {
        let mir = format!(
            "fn kernel::k(_1: u32, _2: {second}) -> () {{
    let mut _0: ();
    let mut _3: {{closure@/src/kernel.rs:3:13: 3:16}};
    let mut _4: {{closure@/src/kernel.rs:3:13: 3:16}};

    bb0: {{
        _3 = {{closure@/src/kernel.rs:3:13: 3:16}} {{ n: copy _1 }};
        _4 = {{closure@/src/kernel.rs:3:13: 3:16}} {{ n: copy _2 }};
        return;
    }}
}}
"
        );
        crate::import_text(&mir, "", None).expect("the MIR imports")
    }

    #[test]
    fn one_closure_name_with_two_capture_lists_has_none() {
        let name = "{closure@/src/kernel.rs:3:13: 3:16}";
        let same = two_builds("u32").closure_captures();
        assert_eq!(same.get(name), Some(&vec![Ty::Int(IntTy::U32)]));
        // A generic function's closure inlined at two types prints as one.
        let two = two_builds("u64").closure_captures();
        assert_eq!(two.get(name), None, "{two:?}");
        // The generic function's own copy, capturing `T`, is neither.
        let generic = two_builds("T").closure_captures();
        assert_eq!(generic.get(name), Some(&vec![Ty::Int(IntTy::U32)]));
    }
}
