//! Walks over a body: every place and operand it names
//! ([`Body::for_each_place`], [`Body::for_each_operand`]), and
//! type substitution, how a body that rustc printed generic over type
//! parameters becomes one instance of it (see [`crate::mono::closures`]).
//!
//! A type parameter prints as a one-segment path without arguments (`F`),
//! while the kernel's own types always print with their module (`kernel::S`),
//! so a parameter is recognised by its name alone.

use std::collections::BTreeMap;

use super::{
    AggregateKind, Body, Callee, ConstOperand, GenericArg, Operand, Path, Place, PlaceElem, Rvalue,
    StatementKind, TerminatorKind, Ty, ValTree,
};

/// Type arguments by parameter name.
pub type Substitution = BTreeMap<String, Ty>;

impl Ty {
    /// This type with each parameter of `s` replaced by its argument.
    pub fn substitute(&self, s: &Substitution) -> Ty {
        match self {
            Ty::Adt(p) => {
                if let [seg] = p.segments.as_slice()
                    && seg.args.is_empty()
                    && let Some(t) = s.get(&seg.name)
                {
                    return t.clone();
                }
                Ty::Adt(p.substitute(s))
            }
            Ty::Tuple(v) => Ty::Tuple(v.iter().map(|t| t.substitute(s)).collect()),
            Ty::Array(e, n) => Ty::Array(Box::new(e.substitute(s)), n.clone()),
            Ty::Slice(e) => Ty::Slice(Box::new(e.substitute(s))),
            Ty::Ref(m, e) => Ty::Ref(*m, Box::new(e.substitute(s))),
            Ty::RawPtr(m, e) => Ty::RawPtr(*m, Box::new(e.substitute(s))),
            Ty::FnPtr(a, r) => Ty::FnPtr(
                a.iter().map(|t| t.substitute(s)).collect(),
                Box::new(r.substitute(s)),
            ),
            other => other.clone(),
        }
    }

    /// Whether a parameter of `s` occurs in this type.
    pub fn mentions(&self, s: &Substitution) -> bool {
        self.substitute(s) != *self
    }
}

impl Path {
    /// This path with the parameters of `s` replaced in its generic arguments.
    pub fn substitute(&self, s: &Substitution) -> Path {
        let mut p = self.clone();
        for seg in &mut p.segments {
            for a in &mut seg.args {
                if let GenericArg::Type(t) = a {
                    *t = t.substitute(s);
                }
            }
        }
        p
    }
}

fn place(p: &mut Place, s: &Substitution) {
    for e in &mut p.projection {
        if let PlaceElem::Field(_, t) = e {
            *t = t.substitute(s);
        }
    }
}

fn constant(c: &mut ConstOperand, s: &Substitution) {
    match c {
        ConstOperand::Alloc { ty, .. }
        | ConstOperand::Indirect { ty, .. }
        | ConstOperand::Transmuted { ty, .. }
        | ConstOperand::ZeroSized(ty) => *ty = ty.substitute(s),
        ConstOperand::Item(p) | ConstOperand::FnItem(p) | ConstOperand::StaticRef(p) => {
            *p = p.substitute(s)
        }
        ConstOperand::Value(v) => valtree(v, s),
        ConstOperand::Scalar(_)
        | ConstOperand::Unit
        | ConstOperand::Str(_)
        | ConstOperand::ByteStr(_)
        | ConstOperand::Uninit
        | ConstOperand::Promoted { .. } => {}
    }
}

fn valtree(v: &mut ValTree, s: &Substitution) {
    match v {
        ValTree::Tuple(p, elems) => {
            if let Some(p) = p {
                *p = p.substitute(s);
            }
            elems.iter_mut().for_each(|e| valtree(e, s));
        }
        ValTree::Struct(p, fields) => {
            *p = p.substitute(s);
            fields.iter_mut().for_each(|(_, e)| valtree(e, s));
        }
        ValTree::Array(elems) => elems.iter_mut().for_each(|e| valtree(e, s)),
        ValTree::Path(p) => *p = p.substitute(s),
        ValTree::Const(c) => constant(c, s),
        ValTree::Scalar(_) | ValTree::Str(_) | ValTree::ByteStr(_) => {}
    }
}

fn operand(o: &mut Operand, s: &Substitution) {
    match o {
        Operand::Copy(p) | Operand::Move(p) => place(p, s),
        Operand::Const(c) => constant(c, s),
    }
}

fn rvalue(r: &mut Rvalue, s: &Substitution) {
    match r {
        Rvalue::Use(o) | Rvalue::Repeat(o, _) | Rvalue::UnaryOp(_, o) => operand(o, s),
        Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p) | Rvalue::Discriminant(p) => place(p, s),
        Rvalue::CopyForDeref(p) => place(p, s),
        Rvalue::Cast(_, o, t) => {
            operand(o, s);
            *t = t.substitute(s);
        }
        Rvalue::BinaryOp(_, a, b) => {
            operand(a, s);
            operand(b, s);
        }
        Rvalue::Aggregate(kind, ops) => {
            match kind {
                AggregateKind::Adt { path, .. } => *path = path.substitute(s),
                AggregateKind::RawPtr(t, _) => *t = t.substitute(s),
                AggregateKind::Tuple | AggregateKind::Array | AggregateKind::Opaque(_) => {}
            }
            ops.iter_mut().for_each(|o| operand(o, s));
        }
        Rvalue::Nullary(_, t) => {
            if let Some(t) = t {
                *t = t.substitute(s);
            }
        }
    }
}

impl Body {
    /// Replaces the parameters of `s` in every type the body names: its
    /// locals, field projections, casts, aggregates, constants and callees.
    /// Debug lines keep their printed types; nothing downstream reads them.
    pub fn substitute(&mut self, s: &Substitution) {
        self.return_ty = self.return_ty.substitute(s);
        for (_, l) in self.locals.iter_mut() {
            l.ty = l.ty.substitute(s);
        }
        if let Some(v) = &mut self.value {
            constant(v, s);
        }
        for bb in self.blocks.values_mut() {
            for st in &mut bb.statements {
                match &mut st.kind {
                    StatementKind::Assign(p, r) => {
                        place(p, s);
                        rvalue(r, s);
                    }
                    StatementKind::SetDiscriminant(p, _)
                    | StatementKind::Deinit(p)
                    | StatementKind::PlaceMention(p) => place(p, s),
                    StatementKind::Assume(o) => operand(o, s),
                    StatementKind::CopyNonOverlapping { dst, src, count } => {
                        operand(dst, s);
                        operand(src, s);
                        operand(count, s);
                    }
                    StatementKind::StorageLive(_)
                    | StatementKind::StorageDead(_)
                    | StatementKind::Nop
                    | StatementKind::ConstEvalCounter => {}
                }
            }
            match &mut bb.terminator.kind {
                TerminatorKind::SwitchInt { discr, .. } => operand(discr, s),
                TerminatorKind::Assert { cond, msg_args, .. } => {
                    operand(cond, s);
                    msg_args.iter_mut().for_each(|o| operand(o, s));
                }
                TerminatorKind::Drop { place: p, .. } => place(p, s),
                TerminatorKind::Call {
                    func,
                    args,
                    destination,
                    ..
                } => {
                    match func {
                        Callee::Item(p) => *p = p.substitute(s),
                        Callee::Operand(o) => operand(o, s),
                    }
                    args.iter_mut().for_each(|o| operand(o, s));
                    place(destination, s);
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
        let mut op = |o: &Operand, place: &mut dyn FnMut(&Place)| {
            operand(o);
            if let Operand::Copy(p) | Operand::Move(p) = o {
                place(p);
            }
        };
        for bb in self.blocks.values() {
            for st in &bb.statements {
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
            match &bb.terminator.kind {
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
}

impl Body {
    /// Calls `f` on every operand of the body's statements and terminators,
    /// mutably (a constant renamed to its instance, see
    /// [`crate::deps`]). Constants nested inside printed values are not
    /// visited.
    pub fn for_each_operand_mut(&mut self, mut f: impl FnMut(&mut Operand)) {
        for bb in self.blocks.values_mut() {
            for st in &mut bb.statements {
                match &mut st.kind {
                    StatementKind::Assign(_, r) => match r {
                        Rvalue::Use(o)
                        | Rvalue::Repeat(o, _)
                        | Rvalue::UnaryOp(_, o)
                        | Rvalue::Cast(_, o, _) => f(o),
                        Rvalue::BinaryOp(_, a, b) => {
                            f(a);
                            f(b);
                        }
                        Rvalue::Aggregate(_, ops) => ops.iter_mut().for_each(&mut f),
                        Rvalue::Ref(..)
                        | Rvalue::RawPtr(..)
                        | Rvalue::Discriminant(_)
                        | Rvalue::CopyForDeref(_)
                        | Rvalue::Nullary(..) => {}
                    },
                    StatementKind::Assume(o) => f(o),
                    StatementKind::CopyNonOverlapping { dst, src, count } => {
                        f(dst);
                        f(src);
                        f(count);
                    }
                    StatementKind::SetDiscriminant(..)
                    | StatementKind::Deinit(_)
                    | StatementKind::PlaceMention(_)
                    | StatementKind::StorageLive(_)
                    | StatementKind::StorageDead(_)
                    | StatementKind::Nop
                    | StatementKind::ConstEvalCounter => {}
                }
            }
            match &mut bb.terminator.kind {
                TerminatorKind::SwitchInt { discr, .. } => f(discr),
                TerminatorKind::Assert { cond, msg_args, .. } => {
                    f(cond);
                    msg_args.iter_mut().for_each(&mut f);
                }
                TerminatorKind::Call { func, args, .. } => {
                    if let Callee::Operand(o) = func {
                        f(o);
                    }
                    args.iter_mut().for_each(&mut f);
                }
                TerminatorKind::Drop { .. }
                | TerminatorKind::Goto(_)
                | TerminatorKind::InlineAsm { .. }
                | TerminatorKind::Return
                | TerminatorKind::Unreachable
                | TerminatorKind::UnwindResume
                | TerminatorKind::Terminate => {}
            }
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
}
