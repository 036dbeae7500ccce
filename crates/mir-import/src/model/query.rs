//! Questions that later stages ask of the model: the type of a place, the type
//! of a constant operand, the functions a kernel reaches, and every constant
//! operand a body uses.
//!
//! They live here, once, because two stages must answer them identically: the
//! evaluator computes every constant operand's value up front, keyed by the
//! operand and its type, and lowering looks the value up by the same key.

use std::collections::{BTreeMap, HashMap};

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

    /// A closure body's inputs, its arguments after the receiver `_1`, by
    /// type; `None` for a body that takes no receiver.
    pub fn closure_inputs(&self) -> Option<Vec<Ty>> {
        let count = usize::try_from(self.arg_count.checked_sub(1)?).ok()?;
        Some(
            self.locals
                .values()
                .skip(2)
                .take(count)
                .map(|l| l.ty.clone())
                .collect(),
        )
    }

    /// Whether a local of this body mentions a type parameter: a generic
    /// function's body, or a closure defined inside one.
    pub fn is_generic(&self) -> bool {
        self.locals.values().any(|l| l.ty.mentions_type_parameter())
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

impl ConstOperand {
    /// The type of a constant that says it itself: a scalar literal's, `()`,
    /// or a value printed with its type. `None` where the crate must be
    /// asked ([`Crate::const_ty`]).
    pub fn literal_ty(&self) -> Option<Ty> {
        Some(match self {
            ConstOperand::Scalar(Scalar::Int { ty, .. }) => Ty::Int(*ty),
            ConstOperand::Scalar(Scalar::Bool(_)) => Ty::Bool,
            ConstOperand::Scalar(Scalar::Char(_)) => Ty::Char,
            ConstOperand::Scalar(Scalar::Float { ty, .. }) => Ty::Float(*ty),
            ConstOperand::Unit => Ty::unit(),
            ConstOperand::Alloc { ty, .. }
            | ConstOperand::Indirect { ty, .. }
            | ConstOperand::ZeroSized(ty)
            | ConstOperand::Transmuted { ty, .. } => ty.clone(),
            _ => return None,
        })
    }
}

impl Crate {
    /// The type of a constant operand as it is written: a literal's own type,
    /// the declared type of the const item or promoted it names, or, for a
    /// path that names no item or a value printed by path (`PhantomData::<&u32>`,
    /// `kernel::E::C`, `kernel::E::A(7_u32)`), its struct, or the enum whose
    /// variant it names; for a function item read as a value (an argument
    /// `map(u32::try_from)` passes, a field of the `Map` it builds), a
    /// function item type naming it ([`Ty::fn_item_of`]). `None` for other
    /// printed values, and for a promoted with no body.
    pub fn const_ty(&self, c: &ConstOperand) -> Option<Ty> {
        if let Some(ty) = c.literal_ty() {
            return Some(ty);
        }
        Some(match c {
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
            ConstOperand::FnItem(p) => Ty::fn_item_of(p),
            ConstOperand::Uninit => return None,
            // Said by the constant itself, above.
            ConstOperand::Scalar(_)
            | ConstOperand::Unit
            | ConstOperand::Alloc { .. }
            | ConstOperand::Indirect { .. }
            | ConstOperand::ZeroSized(_)
            | ConstOperand::Transmuted { .. } => return None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArrayLen, IntTy, Scalar};

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
}
