//! A call being rewritten in place into MIR of its own: what the
//! expansions of `core`'s closures ([`super::std_closures`]) and of range
//! folds ([`super::std_range_folds`]) read of the call, and the statements,
//! blocks and calls they write at it, each with the call's position,
//! source and cleanup flag.

use crate::model::{
    AggregateKind, BasicBlock, BlockData, Body, LocalDecl, Mutability, Operand, Path, PathSegment,
    Place, PlaceElem, Pos, Rvalue, SourceInfo, Statement, StatementKind, Terminator,
    TerminatorKind, Ty, UnwindAction,
};

/// The call ending a block, with a return target.
pub(super) struct CallSite {
    /// Its arguments.
    pub args: Vec<Operand>,
    /// Where its result goes.
    pub destination: Place,
    /// Where it returns to.
    pub target: BasicBlock,
    /// What happens when it unwinds.
    pub unwind: UnwindAction,
    pos: Pos,
    source: Option<SourceInfo>,
    cleanup: bool,
}

impl CallSite {
    /// The call ending block `bb`, if it is one that returns.
    pub fn of(body: &Body, bb: BasicBlock) -> Option<CallSite> {
        let block = &body.blocks[bb];
        let TerminatorKind::Call {
            args,
            destination,
            target: Some(target),
            unwind,
            ..
        } = &block.terminator.kind
        else {
            return None;
        };
        Some(CallSite {
            args: args.clone(),
            destination: destination.clone(),
            target: *target,
            unwind: unwind.clone(),
            pos: block.terminator.pos,
            source: block.terminator.source.clone(),
            cleanup: block.cleanup,
        })
    }

    /// A closure call's arguments, `call_mut(env, tuple)` with the tuple in
    /// a place: the environment, the tuple's place and its element types.
    pub fn closure_args(&self, body: &Body) -> Option<(Operand, Place, Vec<Ty>)> {
        let [env, Operand::Move(tuple) | Operand::Copy(tuple)] = self.args.as_slice() else {
            return None;
        };
        let Some(Ty::Tuple(elems)) = body.place_ty(tuple) else {
            return None;
        };
        Some((env.clone(), tuple.clone(), elems))
    }

    /// `place = rv`, at the call.
    pub fn assign(&self, place: &Place, rv: Rvalue) -> Statement {
        Statement {
            kind: StatementKind::Assign(place.clone(), rv),
            pos: self.pos,
            source: self.source.clone(),
        }
    }

    /// A terminator of `kind`, at the call.
    pub fn terminator(&self, kind: TerminatorKind) -> Terminator {
        Terminator {
            kind,
            pos: self.pos,
            source: self.source.clone(),
        }
    }

    /// A new block of `statements` ending in `kind`, cleanup if the call's
    /// block is.
    pub fn push_block(
        &self,
        body: &mut Body,
        statements: Vec<Statement>,
        kind: TerminatorKind,
    ) -> BasicBlock {
        body.blocks.push(BlockData {
            cleanup: self.cleanup,
            statements,
            terminator: self.terminator(kind),
        })
    }
}

impl CallSite {
    /// The call of `callee` with `args` in place of this one: into its
    /// destination, returning to its target, unwinding as it did.
    pub fn call_instead(&self, callee: Path, args: Vec<Operand>) -> TerminatorKind {
        TerminatorKind::Call {
            func: crate::model::Callee::Item(callee),
            args,
            destination: self.destination.clone(),
            target: Some(self.target),
            unwind: self.unwind.clone(),
        }
    }

    /// `destination = <closure as FnMut<ARGS>>::call_mut(move closure_ref,
    /// move args)`, `args` a tuple of type `args_ty`, going on to `target`
    /// and unwinding as the call did: how each expansion calls the
    /// closure a wrapper holds.
    pub fn call_mut(
        &self,
        closure: &str,
        closure_ref: Place,
        (args, args_ty): (Place, &Ty),
        destination: Place,
        target: BasicBlock,
    ) -> TerminatorKind {
        TerminatorKind::Call {
            func: crate::model::Callee::Item(call_mut_path(closure, args_ty)),
            args: vec![Operand::Move(closure_ref), Operand::Move(args)],
            destination,
            target: Some(target),
            unwind: self.unwind.clone(),
        }
    }
}

/// The closure call ending block `bb`, `call_mut(env, tuple)` with the
/// tuple in a place: the call, the environment argument, the tuple's place
/// and element types, and the type of the call's destination; what each
/// expansion of a `core` closure at its call starts from.
pub(super) fn closure_call(
    body: &Body,
    bb: BasicBlock,
) -> Option<(CallSite, Operand, Place, Vec<Ty>, Ty)> {
    let site = CallSite::of(body, bb)?;
    let (env, tuple, elems) = site.closure_args(body)?;
    let dest_ty = body.place_ty(&site.destination)?;
    Some((site, env, tuple, elems, dest_ty))
}

impl CallSite {
    /// A new block of `statements` that goes to `if_true` when the `bool`
    /// at `flag` holds and to `if_false` otherwise.
    pub fn push_branch(
        &self,
        body: &mut Body,
        statements: Vec<Statement>,
        flag: &Place,
        if_true: BasicBlock,
        if_false: BasicBlock,
    ) -> BasicBlock {
        self.push_block(
            body,
            statements,
            TerminatorKind::SwitchInt {
                discr: Operand::Move(flag.clone()),
                targets: vec![(0, if_false)],
                otherwise: if_true,
            },
        )
    }
}

/// Field `i` of the tuple at `tuple`, whose element types are `elems`.
pub(super) fn tuple_field(tuple: &Place, elems: &[Ty], i: usize) -> Place {
    let mut p = tuple.clone();
    p.projection
        .push(PlaceElem::Field(i as u32, elems[i].clone()));
    p
}

/// The type of an operand that names a place, or of a constant that
/// says its own ([`crate::model::ConstOperand::literal_ty`]).
pub(super) fn operand_ty(body: &Body, op: &Operand) -> Option<Ty> {
    match op {
        Operand::Move(p) | Operand::Copy(p) => body.place_ty(p),
        Operand::Const(c) => c.literal_ty(),
    }
}

/// A new local of type `ty` in `body`.
pub(super) fn new_local(body: &mut Body, ty: Ty) -> Place {
    Place::local(body.locals.push(LocalDecl {
        ty,
        mutable: true,
        is_arg: false,
    }))
}

/// `variant(payload)` of the enum at `enum_path` (`ControlFlow::Break(x)`,
/// `Option::Some(x)`): the lowering takes the variant from the path's last
/// segment and the layout from the destination's type.
pub(super) fn variant_value(enum_path: &Path, variant: &str, payload: Operand) -> Rvalue {
    let mut path = enum_path.clone();
    path.segments.push(PathSegment {
        name: variant.to_string(),
        args: Vec::new(),
    });
    Rvalue::Aggregate(
        AggregateKind::Adt {
            path,
            field_names: Vec::new(),
        },
        vec![payload],
    )
}

/// `Option<T>`'s `T`, when `ty` is `core`'s `Option`.
pub(super) fn option_of(ty: &Ty) -> Option<Ty> {
    let Ty::Adt(path) = ty else { return None };
    if crate::calls::std_relative(&path.def_path()) != Some("option::Option") {
        return None;
    }
    match path.segments.last()?.args.as_slice() {
        [crate::model::GenericArg::Type(t)] => Some(t.clone()),
        _ => None,
    }
}

/// `ControlFlow<B, C>`'s `B` and `C`, when `path` (a type's) is `core`'s
/// `ControlFlow` (`C = ()` when printed without it).
pub(super) fn control_flow(path: &Path) -> Option<(Ty, Ty)> {
    if !matches!(
        crate::calls::std_relative(&path.def_path()),
        Some("ops::ControlFlow" | "ops::control_flow::ControlFlow")
    ) {
        return None;
    }
    let args: Vec<&Ty> = path.segments.last()?.type_args().collect();
    match args.as_slice() {
        [b] => Some(((*b).clone(), Ty::unit())),
        [b, c] => Some(((*b).clone(), (*c).clone())),
        _ => None,
    }
}

/// Whether `printed` (a type as printed) is `core`'s
/// `NeverShortCircuit<inner>` (`inner` as printed).
pub(super) fn never_short_circuit(printed: &str, inner: &str) -> bool {
    crate::calls::std_relative(printed)
        == Some(&format!("ops::try_trait::NeverShortCircuit<{inner}>"))
}

/// The type of the environment operand `env` of a closure's call, a
/// `&mut C`, with the closure's name `C` (as printed); `None` for any
/// other operand.
pub(super) fn env_closure(body: &Body, env: &Operand) -> Option<(Ty, String)> {
    let env_ty = operand_ty(body, env)?;
    let Ty::Ref(Mutability::Mut, pointee) = &env_ty else {
        return None;
    };
    let Ty::Opaque(name) = &**pointee else {
        return None;
    };
    let name = name.clone();
    Some((env_ty, name))
}

/// `<SELF as TRAIT>::method::<ARGS>`, as rustc prints a trait method call.
pub(super) fn trait_method(
    self_ty: &Ty,
    trait_path: &str,
    method: &str,
    args: Vec<crate::model::GenericArg>,
) -> Path {
    Path {
        segments: vec![
            PathSegment {
                name: format!("<{self_ty} as {trait_path}>"),
                args: Vec::new(),
            },
            PathSegment {
                name: method.to_string(),
                args,
            },
        ],
    }
}

/// `<CLOSURE as std::ops::FnMut<ARGS>>::call_mut`.
pub(super) fn call_mut_path(closure: &str, args: &Ty) -> Path {
    Path {
        segments: vec![
            PathSegment {
                name: format!("<{closure} as std::ops::FnMut<{args}>>"),
                args: Vec::new(),
            },
            PathSegment {
                name: "call_mut".to_string(),
                args: Vec::new(),
            },
        ],
    }
}
