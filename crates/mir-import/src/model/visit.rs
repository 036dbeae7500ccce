//! Walks over a body: every place and operand it names
//! ([`Body::for_each_place`], [`Body::for_each_operand`]), every position
//! mutably ([`Body::visit_mut`], a [`VisitMut`]), and type substitution, how a body that rustc printed generic over type
//! parameters becomes one instance of it (see [`crate::mono::closures`]).
//!
//! A type parameter prints as a one-segment path without arguments (`F`),
//! while the kernel's own types always print with their module (`kernel::S`),
//! so a parameter is recognised by its name alone.

use std::collections::BTreeMap;

use super::{
    AggregateKind, BlockData, Body, Callee, ConstOperand, GenericArg, Operand, Path, Place,
    PlaceElem, Rvalue, StatementKind, TerminatorKind, Ty, ValTree,
};

/// Type arguments by parameter name.
pub type Substitution = BTreeMap<String, Ty>;

impl Ty {
    /// This type with each parameter of `s` replaced by its argument.
    pub fn substitute(&self, s: &Substitution) -> Ty {
        self.replace(&|t| match t {
            Ty::Adt(p) => match p.segments.as_slice() {
                [seg] if seg.args.is_empty() => s.get(&seg.name).cloned(),
                _ => None,
            },
            Ty::Opaque(name) => substitute_closure_name(name, s).map(Ty::Opaque),
            _ => None,
        })
    }

    /// This type with each type inside it, itself included, that `f` maps
    /// to `Some` replaced by that; `f` sees the outer types first, and what
    /// it returns is not looked into.
    pub fn replace(&self, f: &dyn Fn(&Ty) -> Option<Ty>) -> Ty {
        if let Some(t) = f(self) {
            return t;
        }
        match self {
            Ty::Adt(p) => Ty::Adt(p.replace(f)),
            Ty::Tuple(v) => Ty::Tuple(v.iter().map(|t| t.replace(f)).collect()),
            Ty::Array(e, n) => Ty::Array(Box::new(e.replace(f)), n.clone()),
            Ty::Slice(e) => Ty::Slice(Box::new(e.replace(f))),
            Ty::Ref(m, e) => Ty::Ref(*m, Box::new(e.replace(f))),
            Ty::RawPtr(m, e) => Ty::RawPtr(*m, Box::new(e.replace(f))),
            Ty::FnPtr(a, r) => Ty::FnPtr(
                a.iter().map(|t| t.replace(f)).collect(),
                Box::new(r.replace(f)),
            ),
            other => other.clone(),
        }
    }

    /// Whether a parameter of `s` occurs in this type.
    pub fn mentions(&self, s: &Substitution) -> bool {
        self.substitute(s) != *self
    }
}

/// A closure type of the standard library, named by its function with the
/// function's generic arguments (`{closure@std::iter::adapters::map::
/// map_fold<&[u32], u32, u32, F0, F>::{closure#0}}`), with each argument
/// read as a type and substituted (`F0`, `&mut F0`, a closure name holding
/// one); `None` when nothing changes. A closure named by its span (the
/// kernel's) holds no arguments.
fn substitute_closure_name(name: &str, s: &Substitution) -> Option<String> {
    let def = name.strip_prefix("{closure@")?.strip_suffix('}')?;
    let (function, index) = def.rsplit_once("::{closure#")?;
    let (callee, args) = super::brackets::trailing_generic_args(function)?;
    let mut changed = false;
    let items: Vec<String> = super::brackets::top_level_items(args)
        .into_iter()
        .map(|item| {
            let new = s
                .get(item)
                .map(ToString::to_string)
                .or_else(|| substitute_closure_name(item, s))
                .or_else(|| {
                    let ty = crate::parse::parse_type(item).ok()?;
                    let substituted = ty.substitute(s);
                    (substituted != ty).then(|| substituted.to_string())
                });
            changed |= new.is_some();
            new.unwrap_or_else(|| item.to_string())
        })
        .collect();
    changed.then(|| {
        format!(
            "{{closure@{callee}<{}>::{{closure#{index}}}",
            items.join(", ")
        )
    })
}

impl Path {
    /// This path with the parameters of `s` replaced in its generic arguments.
    pub fn substitute(&self, s: &Substitution) -> Path {
        self.replace(&|t| Some(t.substitute(s)))
    }

    /// This path with [`Ty::replace`] applied to its type arguments, and to
    /// the self type and trait of a qualified segment (`<Map<I, F0> as
    /// Iterator>`, a trait method's callee).
    pub fn replace(&self, f: &dyn Fn(&Ty) -> Option<Ty>) -> Path {
        let mut p = self.clone();
        for seg in &mut p.segments {
            if let Some(name) = replace_in_qualified(&seg.name, f) {
                seg.name = name;
            }
            for a in &mut seg.args {
                if let GenericArg::Type(t) = a {
                    *t = t.replace(f);
                }
            }
        }
        p
    }
}

/// A qualified segment (`<SELF as TRAIT>`) with [`Ty::replace`] applied
/// to its self type and its trait (read as a type, for its generic
/// arguments); `None` when it is no such segment or nothing changes, so
/// that an unchanged segment keeps its printed text.
fn replace_in_qualified(name: &str, f: &dyn Fn(&Ty) -> Option<Ty>) -> Option<String> {
    let (self_text, trait_text, rest) = super::split_qualified(name)?;
    if !rest.is_empty() {
        return None;
    }
    let replaced = |text: &str| {
        let ty = crate::parse::parse_type(text).ok()?;
        let new = ty.replace(f);
        (new != ty).then(|| new.to_string())
    };
    let (new_self, new_trait) = (replaced(self_text), replaced(trait_text));
    if new_self.is_none() && new_trait.is_none() {
        return None;
    }
    Some(format!(
        "<{} as {}>",
        new_self.as_deref().unwrap_or(self_text),
        new_trait.as_deref().unwrap_or(trait_text)
    ))
}

/// What [`Body::visit_mut`] shows a visitor, each position once, outer
/// before inner: an operand before its place or constant, a constant
/// before the types and paths inside it. A type or path is shown whole;
/// the visitor recurses into it if it needs to. Every method defaults to
/// doing nothing.
pub trait VisitMut {
    /// A type the body names: a local's, the return type, a field
    /// projection's, a cast's target, a constant's.
    fn visit_ty(&mut self, _ty: &mut Ty) {}
    /// A path that names an item: a callee, a constant item or static, an
    /// aggregate's type, a path inside a printed value.
    fn visit_path(&mut self, _path: &mut Path) {}
    /// A constant: an operand's, the one-line value of a constant item's
    /// body, or one nested inside a printed value.
    fn visit_const(&mut self, _constant: &mut ConstOperand) {}
    /// An operand of a statement or terminator.
    fn visit_operand(&mut self, _operand: &mut Operand) {}
    /// A place, inside an operand or not.
    fn visit_place(&mut self, _place: &mut Place) {}
}

fn walk_place(p: &mut Place, v: &mut impl VisitMut) {
    v.visit_place(p);
    for e in &mut p.projection {
        if let PlaceElem::Field(_, t) = e {
            v.visit_ty(t);
        }
    }
}

fn walk_const(c: &mut ConstOperand, v: &mut impl VisitMut) {
    v.visit_const(c);
    match c {
        ConstOperand::Alloc { ty, .. }
        | ConstOperand::Indirect { ty, .. }
        | ConstOperand::Transmuted { ty, .. }
        | ConstOperand::ZeroSized(ty) => v.visit_ty(ty),
        ConstOperand::Item(p) | ConstOperand::FnItem(p) | ConstOperand::StaticRef(p) => {
            v.visit_path(p)
        }
        ConstOperand::Value(tree) => walk_valtree(tree, v),
        ConstOperand::Scalar(_)
        | ConstOperand::Unit
        | ConstOperand::Str(_)
        | ConstOperand::ByteStr(_)
        | ConstOperand::Uninit
        | ConstOperand::Promoted { .. } => {}
    }
}

fn walk_valtree(tree: &mut ValTree, v: &mut impl VisitMut) {
    match tree {
        ValTree::Tuple(p, elems) => {
            if let Some(p) = p {
                v.visit_path(p);
            }
            elems.iter_mut().for_each(|e| walk_valtree(e, v));
        }
        ValTree::Struct(p, fields) => {
            v.visit_path(p);
            fields.iter_mut().for_each(|(_, e)| walk_valtree(e, v));
        }
        ValTree::Array(elems) => elems.iter_mut().for_each(|e| walk_valtree(e, v)),
        ValTree::Path(p) => v.visit_path(p),
        ValTree::Const(c) => walk_const(c, v),
        ValTree::Scalar(_) | ValTree::Str(_) | ValTree::ByteStr(_) => {}
    }
}

fn walk_operand(o: &mut Operand, v: &mut impl VisitMut) {
    v.visit_operand(o);
    match o {
        Operand::Copy(p) | Operand::Move(p) => walk_place(p, v),
        Operand::Const(c) => walk_const(c, v),
    }
}

fn walk_rvalue(r: &mut Rvalue, v: &mut impl VisitMut) {
    match r {
        Rvalue::Use(o) | Rvalue::Repeat(o, _) | Rvalue::UnaryOp(_, o) => walk_operand(o, v),
        Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p) | Rvalue::Discriminant(p) => walk_place(p, v),
        Rvalue::CopyForDeref(p) => walk_place(p, v),
        Rvalue::Cast(_, o, t) => {
            walk_operand(o, v);
            v.visit_ty(t);
        }
        Rvalue::BinaryOp(_, a, b) => {
            walk_operand(a, v);
            walk_operand(b, v);
        }
        Rvalue::Aggregate(kind, ops) => {
            match kind {
                AggregateKind::Adt { path, .. } => v.visit_path(path),
                AggregateKind::RawPtr(t, _) => v.visit_ty(t),
                AggregateKind::Tuple | AggregateKind::Array | AggregateKind::Opaque(_) => {}
            }
            ops.iter_mut().for_each(|o| walk_operand(o, v));
        }
        Rvalue::Nullary(_, t) => {
            if let Some(t) = t {
                v.visit_ty(t);
            }
        }
    }
}

impl Body {
    /// Shows `v` every type, item path, constant, operand and place of the
    /// body, mutably: its return type and locals, a constant item's
    /// one-line value, and every statement and terminator. Debug lines are
    /// not shown; nothing downstream reads them.
    pub fn visit_mut(&mut self, v: &mut impl VisitMut) {
        v.visit_ty(&mut self.return_ty);
        for (_, l) in self.locals.iter_mut() {
            v.visit_ty(&mut l.ty);
        }
        if let Some(value) = &mut self.value {
            walk_const(value, v);
        }
        for bb in self.blocks.values_mut() {
            for st in &mut bb.statements {
                match &mut st.kind {
                    StatementKind::Assign(p, r) => {
                        walk_place(p, v);
                        walk_rvalue(r, v);
                    }
                    StatementKind::SetDiscriminant(p, _)
                    | StatementKind::Deinit(p)
                    | StatementKind::PlaceMention(p) => walk_place(p, v),
                    StatementKind::Assume(o) => walk_operand(o, v),
                    StatementKind::CopyNonOverlapping { dst, src, count } => {
                        walk_operand(dst, v);
                        walk_operand(src, v);
                        walk_operand(count, v);
                    }
                    StatementKind::StorageLive(_)
                    | StatementKind::StorageDead(_)
                    | StatementKind::Nop
                    | StatementKind::ConstEvalCounter => {}
                }
            }
            match &mut bb.terminator.kind {
                TerminatorKind::SwitchInt { discr, .. } => walk_operand(discr, v),
                TerminatorKind::Assert { cond, msg_args, .. } => {
                    walk_operand(cond, v);
                    msg_args.iter_mut().for_each(|o| walk_operand(o, v));
                }
                TerminatorKind::Drop { place, .. } => walk_place(place, v),
                TerminatorKind::Call {
                    func,
                    args,
                    destination,
                    ..
                } => {
                    match func {
                        Callee::Item(p) => v.visit_path(p),
                        Callee::Operand(o) => walk_operand(o, v),
                    }
                    args.iter_mut().for_each(|o| walk_operand(o, v));
                    walk_place(destination, v);
                }
                TerminatorKind::Goto(_)
                | TerminatorKind::InlineAsm { .. }
                | TerminatorKind::Return
                | TerminatorKind::Unreachable
                | TerminatorKind::UnwindResume
                | TerminatorKind::Terminate => {}
            }
        }
    }

    /// Replaces the parameters of `s` in every type the body names: its
    /// locals, field projections, casts, aggregates, constants and callees.
    pub fn substitute(&mut self, s: &Substitution) {
        struct Substituting<'a>(&'a Substitution);
        impl VisitMut for Substituting<'_> {
            fn visit_ty(&mut self, ty: &mut Ty) {
                *ty = ty.substitute(self.0);
            }
            fn visit_path(&mut self, path: &mut Path) {
                *path = path.substitute(self.0);
            }
        }
        self.visit_mut(&mut Substituting(s));
    }
}

impl Body {
    /// Calls `f` on every place the body's statements and terminators name,
    /// inside operands or not.
    pub fn for_each_place(&self, mut f: impl FnMut(&Place)) {
        let mut on_place = |p: &Place| f(p);
        self.walk(&mut |p| on_place(p), &mut |_| {});
    }

    /// Calls `f` on every operand of the body's statements and terminators.
    pub fn for_each_operand(&self, mut f: impl FnMut(&Operand)) {
        self.walk(&mut |_| {}, &mut |o| f(o));
    }

    /// Walks every place outside operands (`place`) and every operand
    /// (`operand`; a place inside one goes to `place` too).
    fn walk(&self, place: &mut dyn FnMut(&Place), operand: &mut dyn FnMut(&Operand)) {
        for bb in self.blocks.values() {
            bb.walk(place, operand);
        }
    }
}

impl BlockData {
    /// Calls `f` on every place the block's statements and terminator name,
    /// inside operands or not.
    pub fn for_each_place(&self, mut f: impl FnMut(&Place)) {
        let mut on_place = |p: &Place| f(p);
        self.walk(&mut |p| on_place(p), &mut |_| {});
    }

    /// [`Body::walk`] over this block alone.
    fn walk(&self, place: &mut dyn FnMut(&Place), operand: &mut dyn FnMut(&Operand)) {
        let mut op = |o: &Operand, place: &mut dyn FnMut(&Place)| {
            operand(o);
            if let Operand::Copy(p) | Operand::Move(p) = o {
                place(p);
            }
        };
        for st in &self.statements {
            match &st.kind {
                StatementKind::Assign(p, r) => {
                    place(p);
                    match r {
                        Rvalue::Use(o) | Rvalue::Repeat(o, _) | Rvalue::UnaryOp(_, o) => {
                            op(o, place)
                        }
                        Rvalue::Cast(_, o, _) => op(o, place),
                        Rvalue::Ref(_, p)
                        | Rvalue::RawPtr(_, p)
                        | Rvalue::Discriminant(p)
                        | Rvalue::CopyForDeref(p) => place(p),
                        Rvalue::BinaryOp(_, a, b) => {
                            op(a, place);
                            op(b, place);
                        }
                        Rvalue::Aggregate(_, ops) => ops.iter().for_each(|o| op(o, place)),
                        Rvalue::Nullary(..) => {}
                    }
                }
                StatementKind::SetDiscriminant(p, _)
                | StatementKind::Deinit(p)
                | StatementKind::PlaceMention(p) => place(p),
                StatementKind::Assume(o) => op(o, place),
                StatementKind::CopyNonOverlapping { dst, src, count } => {
                    op(dst, place);
                    op(src, place);
                    op(count, place);
                }
                StatementKind::StorageLive(_)
                | StatementKind::StorageDead(_)
                | StatementKind::Nop
                | StatementKind::ConstEvalCounter => {}
            }
        }
        match &self.terminator.kind {
            TerminatorKind::SwitchInt { discr, .. } => op(discr, place),
            TerminatorKind::Assert { cond, msg_args, .. } => {
                op(cond, place);
                msg_args.iter().for_each(|o| op(o, place));
            }
            TerminatorKind::Drop { place: p, .. } => place(p),
            TerminatorKind::Call {
                func,
                args,
                destination,
                ..
            } => {
                if let Callee::Operand(o) = func {
                    op(o, place);
                }
                args.iter().for_each(|o| op(o, place));
                place(destination);
            }
            TerminatorKind::Goto(_)
            | TerminatorKind::InlineAsm { .. }
            | TerminatorKind::Return
            | TerminatorKind::Unreachable
            | TerminatorKind::UnwindResume
            | TerminatorKind::Terminate => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntTy, Mutability, PathSegment};

    fn param(n: &str) -> Ty {
        Ty::Adt(Path {
            segments: vec![PathSegment {
                name: n.into(),
                args: vec![],
            }],
        })
    }

    #[test]
    fn parameters_are_replaced_and_nothing_else() {
        let s: Substitution = [(
            "F".to_string(),
            Ty::Opaque("{closure@k.rs:1:2: 1:5}".into()),
        )]
        .into_iter()
        .collect();
        let wrapped = Ty::Adt(Path {
            segments: vec![
                PathSegment {
                    name: "kernel".into(),
                    args: vec![],
                },
                PathSegment {
                    name: "Wrap".into(),
                    args: vec![GenericArg::Type(param("F"))],
                },
            ],
        });
        let t = Ty::Tuple(vec![
            Ty::Ref(Mutability::Mut, Box::new(param("F"))),
            wrapped,
            param("G"),
            Ty::Int(IntTy::U32),
        ]);
        assert!(t.mentions(&s));
        assert_eq!(
            t.substitute(&s).to_string(),
            "(&mut {closure@k.rs:1:2: 1:5}, kernel::Wrap<{closure@k.rs:1:2: 1:5}>, G, u32)"
        );
        assert!(!param("G").mentions(&s));
    }

    /// Every constant item is shown, in an operand or as a one-line
    /// constant's value, and a rename through the visitor sticks.
    #[test]
    fn the_mutable_walk_shows_every_constant_item() {
        let text = "const k::A: u32 = const dep::B;\n\n\
                    fn k::f(_1: u32) -> u32 {\n    let mut _0: u32;\n\n    bb0: {\n        \
                    _0 = Add(copy _1, const dep::B);\n        return;\n    }\n}\n";
        let mut krate = crate::parse::parse_mir_named(text, "gpu").expect("parses");
        struct Renaming(usize);
        impl VisitMut for Renaming {
            fn visit_const(&mut self, c: &mut ConstOperand) {
                if let ConstOperand::Item(p) = c
                    && p.def_path() == "dep::B"
                {
                    p.segments[1].name = "C".into();
                    self.0 += 1;
                }
            }
        }
        let mut renaming = Renaming(0);
        for body in &mut krate.bodies {
            body.visit_mut(&mut renaming);
        }
        assert_eq!(renaming.0, 2);
        let mut left = 0;
        for body in &krate.bodies {
            body.for_each_operand(|o| {
                if let Operand::Const(ConstOperand::Item(p)) = o {
                    assert_eq!(p.def_path(), "dep::C");
                    left += 1;
                }
            });
        }
        assert_eq!(left, 1, "the operand in f; the value is no operand");
    }

    #[test]
    fn a_core_closure_named_with_parameters_is_renamed_with_their_arguments() {
        let kernel = Ty::Opaque("{closure@/src/kernel.rs:1:2: 1:3}".into());
        let subst: Substitution = [
            ("F0".to_string(), kernel),
            ("F".to_string(), Ty::Int(super::super::IntTy::U32)),
        ]
        .into_iter()
        .collect();
        let named = |t: &str| Ty::Opaque(t.to_string()).substitute(&subst).to_string();
        assert_eq!(
            named(
                "{closure@std::iter::adapters::map::map_fold<&[u32], u32, u32, F0, {closure@std::x::g<F>::{closure#0}}>::{closure#0}}"
            ),
            "{closure@std::iter::adapters::map::map_fold<&[u32], u32, u32, {closure@/src/kernel.rs:1:2: 1:3}, {closure@std::x::g<u32>::{closure#0}}>::{closure#0}}"
        );
        // Inside an argument's type too (`find::check<&T, &mut P>`), but
        // not in a longer name (`F0x`); a closure named by its span holds
        // none.
        assert_eq!(
            named("{closure@std::x::f<F0x, &mut F0>::{closure#1}}"),
            "{closure@std::x::f<F0x, &mut {closure@/src/kernel.rs:1:2: 1:3}>::{closure#1}}"
        );
        assert_eq!(
            named("{closure@/src/kernel.rs:1:2: 1:3}"),
            "{closure@/src/kernel.rs:1:2: 1:3}"
        );
    }

    #[test]
    fn a_qualified_callee_gets_its_self_type_and_trait_substituted() {
        let closure = "{closure@/src/kernel.rs:1:2: 1:3}";
        let subst: Substitution = [("F0".to_string(), Ty::Opaque(closure.into()))]
            .into_iter()
            .collect();
        let path = |t: &str| crate::parse::parse_value_path(t).expect("a printed callee");
        let call = path(
            "<std::iter::Skip<std::iter::Map<std::slice::Iter<'_, u32>, F0>> as std::iter::Iterator>::fold::<u32, F0>",
        );
        assert_eq!(
            call.substitute(&subst).to_string(),
            format!(
                "<std::iter::Skip<std::iter::Map<std::slice::Iter<'_, u32>, {closure}>> as std::iter::Iterator>::fold<u32, {closure}>"
            )
        );
        let closure_call = path("<F0 as std::ops::FnMut<(&u32,)>>::call_mut");
        assert_eq!(
            closure_call.substitute(&subst).to_string(),
            format!("<{closure} as std::ops::FnMut<(&u32,)>>::call_mut")
        );
        // A segment without a parameter keeps its printed text.
        let other = path("<std::iter::Map<I, G> as std::iter::Iterator>::next");
        assert_eq!(other.substitute(&subst), other);
    }
}
