//! The promoted constants of `Iterator::any` and `Iterator::all`, whose
//! value `core`'s source fixes.
//!
//! `any` is `self.try_fold((), check(f)) == ControlFlow::Break(())` and
//! `all` the same against `ControlFlow::Continue(())` (1.95's
//! `core::iter::traits::iterator`). When rustc's inliner leaves that `==`
//! as a call (`<ControlFlow<()> as PartialEq>::eq`, in `rev().skip(..)
//! .take(..).any(..)`), its right side is the promoted `&ControlFlow::
//! Break(())` of `any`, a `core` body rustc never prints. The lowering has
//! no value for it, and the call no type to shim it by. Each such operand
//! becomes a local holding that value, borrowed: the call then has a
//! nameable signature and gets a shim as any `core` trait call does.
//!
//! Only the promoted `[0]` of `any` or `all` of `Iterator`, without a
//! printed body, passed as an argument of `ControlFlow<()>`'s
//! `PartialEq::eq`, is rewritten; any other stays refused by name.

use super::{
    AggregateKind, Body, Callee, ConstOperand, Crate, LocalDecl, Mutability, Operand, Path,
    PathSegment, Place, Rvalue, Statement, StatementKind, TerminatorKind, Ty,
};
use crate::calls::std_relative;

/// The variant of `ControlFlow<()>` that the promoted of `owner` (its
/// body's path as printed) holds: `any`'s `Break`, `all`'s `Continue`.
fn promoted_variant(owner: &Path) -> Option<&'static str> {
    let [qualified, method] = owner.segments.as_slice() else {
        return None;
    };
    let (_, trait_path, _) = super::split_qualified(&qualified.name)?;
    if !matches!(
        std_relative(trait_path)?,
        "iter::Iterator" | "iter::traits::iterator::Iterator"
    ) {
        return None;
    }
    match method.name.as_str() {
        "any" => Some("Break"),
        "all" => Some("Continue"),
        _ => None,
    }
}

/// The type `ControlFlow<()>` if `path` is `<ControlFlow<()> as
/// PartialEq>::eq` (`ControlFlow` printed without its default `C = ()`).
fn unit_flow_eq(path: &Path) -> Option<Ty> {
    let [qualified, method] = path.segments.as_slice() else {
        return None;
    };
    let (self_text, trait_path, _) = super::split_qualified(&qualified.name)?;
    let flow = crate::parse::parse_type(self_text).ok()?;
    let Ty::Adt(p) = &flow else { return None };
    let def = p.def_path();
    let relative = std_relative(&def)?;
    let unit_args = matches!(
        p.segments.last()?.args.as_slice(),
        [super::GenericArg::Type(t)] if *t == Ty::unit()
    );
    (method.name == "eq"
        && matches!(std_relative(trait_path)?, "cmp::PartialEq")
        && matches!(
            relative,
            "ops::ControlFlow" | "ops::control_flow::ControlFlow"
        )
        && unit_args)
        .then_some(flow)
}

impl Crate {
    /// Replaces each promoted of `any` or `all` passed to `ControlFlow<()>`'s
    /// `PartialEq::eq` by a borrowed local holding its value (the module's
    /// documentation).
    pub fn materialize_std_promoteds(&mut self) {
        let unprinted =
            |owner: &Path, index: u32| self.promoted(&owner.def_path(), index).is_none();
        let mut rewrites = Vec::new();
        for (id, body) in self.bodies.iter() {
            for (bb, data) in body.blocks.iter() {
                let TerminatorKind::Call {
                    func: Callee::Item(callee),
                    args,
                    ..
                } = &data.terminator.kind
                else {
                    continue;
                };
                let Some(flow) = unit_flow_eq(callee) else {
                    continue;
                };
                for (k, arg) in args.iter().enumerate() {
                    if let Operand::Const(ConstOperand::Promoted { owner, index: 0 }) = arg
                        && unprinted(owner, 0)
                        && let Some(variant) = promoted_variant(owner)
                    {
                        rewrites.push((id, bb, k, flow.clone(), variant));
                    }
                }
            }
        }
        for (id, bb, k, flow, variant) in rewrites {
            materialize(&mut self.bodies[id], bb, k, flow, variant);
        }
    }
}

/// Makes argument `k` of the call ending block `bb` a reference to a new
/// local holding `ControlFlow::<()>::VARIANT(())` of type `flow`.
fn materialize(body: &mut Body, bb: super::BasicBlock, k: usize, flow: Ty, variant: &str) {
    let Ty::Adt(flow_path) = &flow else {
        return;
    };
    let mut local = |ty: Ty| {
        Place::local(body.locals.push(LocalDecl {
            ty,
            mutable: true,
            is_arg: false,
        }))
    };
    let value = local(flow.clone());
    let reference = local(Ty::Ref(Mutability::Not, Box::new(flow.clone())));
    let mut variant_path = flow_path.clone();
    variant_path.segments.push(PathSegment {
        name: variant.to_string(),
        args: Vec::new(),
    });
    let data = &mut body.blocks[bb];
    let at = |kind| Statement {
        kind,
        pos: data.terminator.pos,
        source: data.terminator.source.clone(),
    };
    let statements = [
        at(StatementKind::Assign(
            value.clone(),
            Rvalue::Aggregate(
                AggregateKind::Adt {
                    path: variant_path,
                    field_names: Vec::new(),
                },
                vec![Operand::Const(ConstOperand::Unit)],
            ),
        )),
        at(StatementKind::Assign(
            reference.clone(),
            Rvalue::Ref(Mutability::Not, value),
        )),
    ];
    data.statements.extend(statements);
    if let TerminatorKind::Call { args, .. } = &mut data.terminator.kind
        && let Some(arg) = args.get_mut(k)
    {
        *arg = Operand::Move(reference);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel whose `bb0` compares `_1` with the promoted of `owner`.
    fn comparing(owner: &str, flow: &str) -> Crate {
        let mir = format!(
            "fn kernel::k(_1: &{flow}) -> bool {{
    let mut _0: bool;

    bb0: {{
        _0 = <{flow} as std::cmp::PartialEq>::eq(move _1, const {owner}::promoted[0]) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
"
        );
        let mut krate = crate::import_text(&mir, "", None).expect("the MIR imports");
        krate.materialize_std_promoteds();
        krate
    }

    /// The variant the rewritten call's second argument points at, if it
    /// was rewritten.
    fn compared_with(krate: &Crate) -> Option<String> {
        let body = krate.bodies.values().next().expect("one body");
        let start = body.blocks.keys().next().expect("bb0");
        let block = &body.blocks[start];
        let TerminatorKind::Call { args, .. } = &block.terminator.kind else {
            return None;
        };
        let [_, Operand::Move(_)] = args.as_slice() else {
            return None;
        };
        block.statements.iter().find_map(|s| match &s.kind {
            StatementKind::Assign(_, Rvalue::Aggregate(AggregateKind::Adt { path, .. }, _)) => {
                Some(path.last_name().to_string())
            }
            _ => None,
        })
    }

    const TAKE: &str = "std::iter::Take<std::slice::Iter<'_, u32>>";

    #[test]
    fn anys_promoted_is_break_and_alls_is_continue() {
        let owner = |m: &str| {
            format!("<{TAKE} as std::iter::Iterator>::{m}::<{{closure@/src/kernel.rs:1:2: 1:3}}>")
        };
        let flow = "std::ops::ControlFlow<()>";
        assert_eq!(
            compared_with(&comparing(&owner("any"), flow)).as_deref(),
            Some("Break")
        );
        assert_eq!(
            compared_with(&comparing(&owner("all"), flow)).as_deref(),
            Some("Continue")
        );
        // Another method's promoted, another trait's `any`, or another
        // type compared: left for the lowering to refuse.
        assert_eq!(compared_with(&comparing(&owner("find"), flow)), None);
        let other_trait = format!("<{TAKE} as kernel::Scan>::any::<u8>");
        assert_eq!(compared_with(&comparing(&other_trait, flow)), None);
        assert_eq!(
            compared_with(&comparing(&owner("any"), "std::ops::ControlFlow<u8>")),
            None
        );
    }
}
