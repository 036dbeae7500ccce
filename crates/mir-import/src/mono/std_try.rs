//! `Try::branch` of `core`'s `ControlFlow`, when rustc's inliner left it
//! as a call, written in MIR at the call.
//!
//! `?` desugars to `match Try::branch(x) { Continue(v) => v, Break(r) =>
//! return FromResidual::from_residual(r) }`. Past its budget for one
//! top-level call ([`super::shims`]) rustc leaves `branch` itself as a
//! call, deep in `core`'s folds (`Take::try_fold`'s `check` over
//! `NeverShortCircuit`, in `rev().skip(..).take(..).sum()`), where no shim
//! can serve it: `Try` is unstable to name, and the argument's type may be
//! private (`ControlFlow<NeverShortCircuit<u32>, u32>`). `ControlFlow<B,
//! C>`'s `branch` is one `match` that `core`'s source fixes: `Continue(c)`
//! gives `Continue(c)`, `Break(b)` gives `Break(ControlFlow::Break(b))`,
//! in a `ControlFlow<ControlFlow<B, Infallible>, C>`.
//!
//! `Option`'s and `Result`'s `branch` are as simple, but no kernel was seen
//! to leave them (rustc inlines them at the `?` of the kernel's own code),
//! so they stay refused by name until one does and a fixture pins them.

use super::call_site::{CallSite, control_flow, new_local, variant_value};
use crate::calls::std_relative;
use crate::model::{
    BasicBlock, Body, Callee, IntTy, Operand, Path, PlaceElem, Rvalue, TerminatorKind, Ty,
};

/// Whether `path` (a called item, as printed) is `<T as Try>::branch`
/// (`std::ops::Try` or `core::ops::Try`, or the `try_trait` module's).
fn is_branch(path: &Path) -> bool {
    let [qualified, method] = path.segments.as_slice() else {
        return false;
    };
    let Some((_, trait_path, _)) = super::std_stand_ins::split_qualified(&qualified.name) else {
        return false;
    };
    method.name == "branch"
        && matches!(
            std_relative(trait_path),
            Some("ops::Try" | "ops::try_trait::Try")
        )
}

/// Expands the call of `Try::branch` ending block `bb`, if it is
/// `ControlFlow<B, C>`'s into a `ControlFlow<ControlFlow<B, _>, C>`.
/// Whether it did.
pub(super) fn expand_branch(body: &mut Body, bb: BasicBlock) -> bool {
    let TerminatorKind::Call {
        func: Callee::Item(path),
        ..
    } = &body.blocks[bb].terminator.kind
    else {
        return false;
    };
    if !is_branch(path) {
        return false;
    }
    let Some(site) = CallSite::of(body, bb) else {
        return false;
    };
    let (arg, moved) = match site.args.as_slice() {
        [Operand::Move(arg)] => (arg, true),
        [Operand::Copy(arg)] => (arg, false),
        _ => return false,
    };
    let (Some(Ty::Adt(input)), Some(Ty::Adt(flow))) =
        (body.place_ty(arg), body.place_ty(&site.destination))
    else {
        return false;
    };
    // The input `ControlFlow<B, C>`, the result `ControlFlow<R, C>` with
    // the residual `R = ControlFlow<B, Infallible>`.
    let (Some((b, c)), Some((residual_ty, value_ty))) = (control_flow(&input), control_flow(&flow))
    else {
        return false;
    };
    let Ty::Adt(residual) = &residual_ty else {
        return false;
    };
    let residual_break = control_flow(residual).map(|(b, _)| b);
    if residual_break.as_ref() != Some(&b) || value_ty != c {
        return false;
    }
    let (destination, target) = (site.destination.clone(), site.target);
    // The payload, moved out of the argument only if the call moved it.
    let payload = |variant: &str, ty: Ty| {
        let mut held = arg.clone();
        held.projection
            .push(PlaceElem::Downcast(variant.to_string()));
        held.projection.push(PlaceElem::Field(0, ty));
        if moved {
            Operand::Move(held)
        } else {
            Operand::Copy(held)
        }
    };
    // `Continue(c)`.
    let continued = site.push_block(
        body,
        vec![site.assign(
            &destination,
            variant_value(&flow, "Continue", payload("Continue", c)),
        )],
        TerminatorKind::Goto(target),
    );
    // `Break(ControlFlow::Break(b))`.
    let held = new_local(body, residual_ty.clone());
    let stopped = site.push_block(
        body,
        vec![
            site.assign(&held, variant_value(residual, "Break", payload("Break", b))),
            site.assign(
                &destination,
                variant_value(&flow, "Break", Operand::Move(held)),
            ),
        ],
        TerminatorKind::Goto(target),
    );
    // `Continue` is variant 0.
    let tag = new_local(body, Ty::Int(IntTy::Isize));
    let block = &mut body.blocks[bb];
    block
        .statements
        .push(site.assign(&tag, Rvalue::Discriminant(arg.clone())));
    block.terminator.kind = TerminatorKind::SwitchInt {
        discr: Operand::Move(tag),
        targets: vec![(0, continued)],
        otherwise: stopped,
    };
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function whose `bb0` calls `branch` of `input` for `output`.
    fn branching(input: &str, output: &str) -> crate::model::Crate {
        let mir = format!(
            "fn kernel::k(_1: {input}) -> () {{
    let mut _0: ();
    let mut _2: {output};

    bb0: {{
        _2 = <{input} as std::ops::Try>::branch(move _1) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
"
        );
        crate::import_text(&mir, "", None).expect("the MIR imports")
    }

    fn expanded(input: &str, output: &str) -> Option<Body> {
        let krate = branching(input, output);
        let mut body = krate.bodies.values().next().expect("one body").clone();
        let start = body.blocks.keys().next().expect("bb0");
        expand_branch(&mut body, start).then_some(body)
    }

    #[test]
    fn control_flows_branch_goes_on_with_continue_and_stops_with_break() {
        let body = expanded(
            "std::ops::ControlFlow<u32, u8>",
            "std::ops::ControlFlow<std::ops::ControlFlow<u32, std::convert::Infallible>, u8>",
        )
        .expect("ControlFlow's branch is expanded");
        let start = body.blocks.keys().next().expect("bb0");
        let TerminatorKind::SwitchInt {
            targets, otherwise, ..
        } = &body.blocks[start].terminator.kind
        else {
            panic!("{:?}", body.blocks[start].terminator.kind);
        };
        // `Continue` (0) goes on with its payload; anything else breaks
        // with the residual `ControlFlow::Break(b)`.
        let [(0, continued)] = targets.as_slice() else {
            panic!("{targets:?}");
        };
        let variant_of = |bb: BasicBlock, k: usize| match &body.blocks[bb].statements[k].kind {
            crate::model::StatementKind::Assign(
                _,
                Rvalue::Aggregate(crate::model::AggregateKind::Adt { path, .. }, _),
            ) => path.last_name().to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(variant_of(*continued, 0), "Continue");
        assert_eq!(variant_of(*otherwise, 0), "Break");
        assert_eq!(variant_of(*otherwise, 1), "Break");
        // `ControlFlow<B>` printed without its `C = ()`.
        assert!(
            expanded(
                "std::ops::ControlFlow<u32>",
                "std::ops::ControlFlow<std::ops::ControlFlow<u32, std::convert::Infallible>>",
            )
            .is_some()
        );
    }

    #[test]
    fn other_branches_and_mismatched_results_stay_calls() {
        // A residual of another break type, a value of another type.
        let mismatched = [
            (
                "std::ops::ControlFlow<u32, u8>",
                "std::ops::ControlFlow<std::ops::ControlFlow<u64, std::convert::Infallible>, u8>",
            ),
            (
                "std::ops::ControlFlow<u32, u8>",
                "std::ops::ControlFlow<std::ops::ControlFlow<u32, std::convert::Infallible>, u16>",
            ),
            // `Option`'s and another type's branch are not written here.
            (
                "std::option::Option<u8>",
                "std::ops::ControlFlow<std::option::Option<std::convert::Infallible>, u8>",
            ),
            (
                "kernel::Flow<u32, u8>",
                "std::ops::ControlFlow<kernel::Flow<u32, std::convert::Infallible>, u8>",
            ),
        ];
        for (input, output) in mismatched {
            assert!(expanded(input, output).is_none(), "{input} -> {output}");
        }
    }
}
