//! The `Try` calls of `core`'s `ControlFlow` and `NeverShortCircuit`, when
//! rustc's inliner left them as calls, written in MIR at the call.
//!
//! `?` desugars to `match Try::branch(x) { Continue(v) => v, Break(r) =>
//! return FromResidual::from_residual(r) }`. Past its budget for one
//! top-level call ([`super::shims`]) rustc leaves `branch` itself as a
//! call, deep in `core`'s folds (`Take::try_fold`'s `check` over
//! `NeverShortCircuit`, in `rev().skip(..).take(..).sum()`), where a shim
//! would have to name the argument's type, often private
//! (`ControlFlow<NeverShortCircuit<u32>, u32>`). `ControlFlow<B,
//! C>`'s `branch` is one `match` that `core`'s source fixes: `Continue(c)`
//! gives `Continue(c)`, `Break(b)` gives `Break(ControlFlow::Break(b))`,
//! in a `ControlFlow<ControlFlow<B, Infallible>, C>`.
//!
//! `Option<T>`'s `branch` is as simple (`Some(v)` gives `Continue(v)`,
//! `None` gives `Break(None)`, in a `ControlFlow<Option<Infallible>, T>`),
//! and rustc leaves it in `advance_by`'s `try_fold` over `Option<NonZero<
//! usize>>` (`map(..).step_by(..)`): [`expand_option_branch`]. `Result`'s
//! was never seen left (rustc inlines it at the `?` of the kernel's own
//! code), so it stays refused by name until a kernel does and a fixture
//! pins it.
//!
//! A `try_fold` shim generic over its `Try` type `R` ([`super::closure_shims`])
//! is printed with calls of `<R as Try>::branch`, `from_output` and
//! `<R as FromResidual>::from_residual`, and locals of `<R as Try>::Output`
//! and `Residual`. Its instance at `NeverShortCircuit<T>` or `ControlFlow<B,
//! C>` ([`instantiate_try_param`]) names those types as `core`'s source
//! defines them, and each call becomes the `impl`'s one line
//! ([`expand_try_call`]): `NeverShortCircuit`'s `branch` is `Continue(self.0)`
//! and its `from_output(x)` is `NeverShortCircuit(x)`, `ControlFlow`'s
//! `from_output(c)` is `Continue(c)`; `from_residual` is `Break(b)` of a
//! `ControlFlow<B, Infallible>` residual, and unreachable for
//! `NeverShortCircuit`, whose residual type has no values.

use super::call_site::{CallSite, control_flow, new_local, option_of, variant_value};
use crate::calls::std_relative;
use crate::model::{
    BasicBlock, Body, Callee, ConstOperand, GenericArg, IntTy, Operand, Path, Place, PlaceElem,
    Rvalue, Statement, Substitution, TerminatorKind, Ty, VisitMut,
};

/// The trait of a qualified call's first segment (`<T as std::ops::Try>`),
/// relative to `core` or `std`, with the self type as printed.
fn qualified_trait(path: &Path) -> Option<(&str, &'static str)> {
    let (self_text, trait_path, _) = crate::model::split_qualified(&path.segments.first()?.name)?;
    let which = match std_relative(trait_path)? {
        "ops::Try" | "ops::try_trait::Try" => "Try",
        "ops::FromResidual" | "ops::try_trait::FromResidual" => "FromResidual",
        _ => return None,
    };
    Some((self_text, which))
}

/// Whether `path` (a called item, as printed) is `<T as Try>::branch`
/// (`std::ops::Try` or `core::ops::Try`, or the `try_trait` module's).
fn is_branch(path: &Path) -> bool {
    path.segments.len() == 2
        && path.segments[1].name == "branch"
        && qualified_trait(path).is_some_and(|(_, t)| t == "Try")
}

/// Whether `ty` is a `Try` type whose calls [`expand_try_call`] and
/// [`expand_branch`] write: `NeverShortCircuit<T>` or `ControlFlow<B, C>`.
/// A `try_fold` shim is generic over no other.
pub(super) fn is_written_try_type(ty: &Ty) -> bool {
    TryType::of(ty).is_some()
}

/// One of `core`'s `Try` types that a `try_fold` shim is instantiated at,
/// by the path it is printed with.
#[derive(Clone, Debug, PartialEq)]
enum TryType {
    /// `NeverShortCircuit<T>`, with `T`.
    Never(Path, Ty),
    /// `ControlFlow<B, C>`, with `B` and `C`.
    Flow(Path, Ty, Ty),
}

impl TryType {
    fn of(ty: &Ty) -> Option<TryType> {
        let Ty::Adt(path) = ty else { return None };
        if let Some((b, c)) = control_flow(path) {
            return Some(TryType::Flow(path.clone(), b, c));
        }
        let def = path.def_path();
        let [GenericArg::Type(t)] = path.segments.last()?.args.as_slice() else {
            return None;
        };
        (std_relative(&def)? == "ops::try_trait::NeverShortCircuit")
            .then(|| TryType::Never(path.clone(), t.clone()))
    }

    /// Whether `ty` is this type, however printed (`ControlFlow<B>` is
    /// `ControlFlow<B, ()>`).
    fn is(&self, ty: &Ty) -> bool {
        match (self, TryType::of(ty)) {
            (TryType::Never(_, t), Some(TryType::Never(_, u))) => *t == u,
            (TryType::Flow(_, b, c), Some(TryType::Flow(_, d, e))) => *b == d && *c == e,
            _ => false,
        }
    }

    /// `<Self as Try>::Output`.
    fn output(&self) -> Ty {
        match self {
            TryType::Never(_, t) => t.clone(),
            TryType::Flow(_, _, c) => c.clone(),
        }
    }

    /// `<Self as Try>::Residual`: `NeverShortCircuitResidual` (an empty
    /// enum) and `ControlFlow<B, Infallible>`, under the root (`std` or
    /// `core`) the type is printed with.
    fn residual(&self) -> Ty {
        let (path, tail) = match self {
            TryType::Never(path, _) => (path, "ops::try_trait::NeverShortCircuitResidual"),
            TryType::Flow(path, ..) => (path, "ops::ControlFlow"),
        };
        let root = path.segments.first().map_or("core", |s| s.name.as_str());
        let mut residual = Path::plain(&format!("{root}::{tail}"));
        if let TryType::Flow(_, b, _) = self {
            let infallible = Ty::Adt(Path::plain(&format!("{root}::convert::Infallible")));
            if let Some(last) = residual.segments.last_mut() {
                last.args = vec![GenericArg::Type(b.clone()), GenericArg::Type(infallible)];
            }
        }
        Ty::Adt(residual)
    }
}

/// Writes a shim's instance at the `Try` types that `subst` gives its
/// parameters, once substituted (which writes `<R as Try>::branch` as a
/// call on the type, `<NeverShortCircuit<u32> as Try>::branch`, for
/// [`expand_try_call`]): each `<T as Try>::Output` and `<T as
/// Try>::Residual` type as the type `core` defines. Parameters of other
/// types are left alone.
pub(super) fn instantiate_try_param(body: &mut Body, subst: &Substitution) {
    let tries: Vec<(String, TryType)> = subst
        .values()
        .filter_map(|ty| Some((ty.to_string(), TryType::of(ty)?)))
        .collect();
    if tries.is_empty() {
        return;
    }
    struct Naming<'a>(&'a [(String, TryType)]);
    impl Naming<'_> {
        /// `<T as Try>::Output` or `::Residual` of a `Try` type here.
        fn projection(&self, t: &Ty) -> Option<Ty> {
            let Ty::Adt(p) = t else { return None };
            let [_, assoc] = p.segments.as_slice() else {
                return None;
            };
            let (self_text, "Try") = qualified_trait(p)? else {
                return None;
            };
            let (_, try_type) = self.0.iter().find(|(text, _)| text == self_text)?;
            match assoc.name.as_str() {
                "Output" if assoc.args.is_empty() => Some(try_type.output()),
                "Residual" if assoc.args.is_empty() => Some(try_type.residual()),
                _ => None,
            }
        }
    }
    impl VisitMut for Naming<'_> {
        fn visit_ty(&mut self, ty: &mut Ty) {
            *ty = ty.replace(&|t| self.projection(t));
        }
        fn visit_path(&mut self, path: &mut Path) {
            *path = path.replace(&|t| self.projection(t));
        }
    }
    body.visit_mut(&mut Naming(&tries));
}

/// Expands the call ending block `bb` if it is `Try::from_output`,
/// `FromResidual::from_residual`, or `NeverShortCircuit`'s `Try::branch`,
/// on `NeverShortCircuit<T>` or `ControlFlow<B, C>` (the module's
/// documentation); `ControlFlow`'s `branch` is [`expand_branch`]'s.
/// Whether it did.
pub(super) fn expand_try_call(body: &mut Body, bb: BasicBlock) -> bool {
    let TerminatorKind::Call {
        func: Callee::Item(path),
        ..
    } = &body.blocks[bb].terminator.kind
    else {
        return false;
    };
    let Some((self_text, which)) = qualified_trait(path) else {
        return false;
    };
    let Some(try_type) = crate::parse::parse_type(self_text)
        .ok()
        .and_then(|t| TryType::of(&t))
    else {
        return false;
    };
    let method = path
        .segments
        .get(1)
        .map(|s| s.name.clone())
        .unwrap_or_default();
    let Some(site) = CallSite::of(body, bb) else {
        return false;
    };
    let Some(dest_ty) = body.place_ty(&site.destination) else {
        return false;
    };
    let [whole] = site.args.as_slice() else {
        return false;
    };
    let whole = whole.clone();
    let arg_ty = super::call_site::operand_ty(body, &whole);
    // A field of the argument (of its `variant`), moved out only if the
    // call moved the argument; `None` for a constant.
    let field = |variant: Option<&str>, ty: Ty| {
        let (Operand::Move(place) | Operand::Copy(place)) = &whole else {
            return None;
        };
        let mut held = place.clone();
        if let Some(v) = variant {
            held.projection.push(PlaceElem::Downcast(v.to_string()));
        }
        held.projection.push(PlaceElem::Field(0, ty));
        Some(match &whole {
            Operand::Move(_) => Operand::Move(held),
            _ => Operand::Copy(held),
        })
    };
    let (statements, kind) = match (which, method.as_str(), &try_type) {
        // `NeverShortCircuit(x)`, written as its one field.
        ("Try", "from_output", TryType::Never(_, t)) => {
            if arg_ty.as_ref() != Some(t) || !try_type.is(&dest_ty) {
                return false;
            }
            let mut wrapped = site.destination.clone();
            wrapped.projection.push(PlaceElem::Field(0, t.clone()));
            (
                vec![site.assign(&wrapped, Rvalue::Use(whole))],
                TerminatorKind::Goto(site.target),
            )
        }
        // `Continue(c)`.
        ("Try", "from_output", TryType::Flow(flow, _, c)) => {
            if arg_ty.as_ref() != Some(c) || !try_type.is(&dest_ty) {
                return false;
            }
            (
                vec![site.assign(&site.destination, variant_value(flow, "Continue", whole))],
                TerminatorKind::Goto(site.target),
            )
        }
        // `ControlFlow::Continue(self.0)`, in a `ControlFlow<Residual, T>`.
        ("Try", "branch", TryType::Never(_, t)) => {
            let Ty::Adt(result) = &dest_ty else {
                return false;
            };
            let expected = control_flow(result);
            if !arg_ty.is_some_and(|a| try_type.is(&a))
                || expected != Some((try_type.residual(), t.clone()))
            {
                return false;
            }
            let Some(payload) = field(None, t.clone()) else {
                return false;
            };
            (
                vec![site.assign(
                    &site.destination,
                    variant_value(result, "Continue", payload),
                )],
                TerminatorKind::Goto(site.target),
            )
        }
        // The residual `NeverShortCircuitResidual` has no values.
        ("FromResidual", "from_residual", TryType::Never(..)) => {
            if arg_ty != Some(try_type.residual()) {
                return false;
            }
            (Vec::new(), TerminatorKind::Unreachable)
        }
        // `Break(b)` of the residual `ControlFlow<B, Infallible>`, whose
        // `Continue` has no values.
        ("FromResidual", "from_residual", TryType::Flow(flow, b, _)) => {
            let residual = TryType::of(&try_type.residual());
            let arg_is_residual = residual.is_some_and(|r| arg_ty.is_some_and(|a| r.is(&a)));
            if !arg_is_residual || !try_type.is(&dest_ty) {
                return false;
            }
            let Some(payload) = field(Some("Break"), b.clone()) else {
                return false;
            };
            (
                vec![site.assign(&site.destination, variant_value(flow, "Break", payload))],
                TerminatorKind::Goto(site.target),
            )
        }
        _ => return false,
    };
    let block = &mut body.blocks[bb];
    block.statements.extend(statements);
    block.terminator.kind = kind;
    true
}

/// The call of `Try::branch` ending a block, on a place: what both
/// expansions of it read.
struct BranchCall {
    site: CallSite,
    /// The argument's place, and whether the call moved it.
    arg: Place,
    moved: bool,
    /// The argument's type and the result's (`ControlFlow<R, T>`).
    input: Path,
    flow: Path,
}

impl BranchCall {
    fn of(body: &Body, bb: BasicBlock) -> Option<BranchCall> {
        let TerminatorKind::Call {
            func: Callee::Item(path),
            ..
        } = &body.blocks[bb].terminator.kind
        else {
            return None;
        };
        if !is_branch(path) {
            return None;
        }
        let site = CallSite::of(body, bb)?;
        let (arg, moved) = match site.args.as_slice() {
            [Operand::Move(arg)] => (arg.clone(), true),
            [Operand::Copy(arg)] => (arg.clone(), false),
            _ => return None,
        };
        let (Some(Ty::Adt(input)), Some(Ty::Adt(flow))) =
            (body.place_ty(&arg), body.place_ty(&site.destination))
        else {
            return None;
        };
        Some(BranchCall {
            site,
            arg,
            moved,
            input,
            flow,
        })
    }

    /// The argument's `variant`'s one field, of type `ty`, moved out only
    /// if the call moved the argument.
    fn payload(&self, variant: &str, ty: Ty) -> Operand {
        let mut held = self.arg.clone();
        held.projection
            .push(PlaceElem::Downcast(variant.to_string()));
        held.projection.push(PlaceElem::Field(0, ty));
        if self.moved {
            Operand::Move(held)
        } else {
            Operand::Copy(held)
        }
    }

    /// Ends block `bb` with a switch on the argument's discriminant: to a
    /// new block that writes `Continue(going_on)` when it is `go_on`, else
    /// to one that runs `stop`; both go on to the call's target.
    fn expand(
        self,
        body: &mut Body,
        bb: BasicBlock,
        (go_on, going_on): (u128, Operand),
        stop: Vec<Statement>,
    ) {
        let site = &self.site;
        let continued = site.push_block(
            body,
            vec![site.assign(
                &site.destination,
                variant_value(&self.flow, "Continue", going_on),
            )],
            TerminatorKind::Goto(site.target),
        );
        let stopped = site.push_block(body, stop, TerminatorKind::Goto(site.target));
        let tag = new_local(body, Ty::Int(IntTy::Isize));
        let block = &mut body.blocks[bb];
        block
            .statements
            .push(site.assign(&tag, Rvalue::Discriminant(self.arg)));
        block.terminator.kind = TerminatorKind::SwitchInt {
            discr: Operand::Move(tag),
            targets: vec![(go_on, continued)],
            otherwise: stopped,
        };
    }
}

/// Expands the call of `Try::branch` ending block `bb`, if it is
/// `ControlFlow<B, C>`'s into a `ControlFlow<ControlFlow<B, _>, C>`:
/// `Continue(c)` (variant 0) gives `Continue(c)`, `Break(b)` gives
/// `Break(ControlFlow::Break(b))`. Whether it did.
pub(super) fn expand_branch(body: &mut Body, bb: BasicBlock) -> bool {
    let Some(call) = BranchCall::of(body, bb) else {
        return false;
    };
    // The input `ControlFlow<B, C>`, the result `ControlFlow<R, C>` with
    // the residual `R = ControlFlow<B, Infallible>`.
    let (Some((b, c)), Some((residual_ty, value_ty))) =
        (control_flow(&call.input), control_flow(&call.flow))
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
    let held = new_local(body, residual_ty.clone());
    let stop = vec![
        call.site.assign(
            &held,
            variant_value(residual, "Break", call.payload("Break", b)),
        ),
        call.site.assign(
            &call.site.destination,
            variant_value(&call.flow, "Break", Operand::Move(held)),
        ),
    ];
    let going_on = call.payload("Continue", c);
    call.expand(body, bb, (0, going_on), stop);
    true
}

/// Expands the call of `Try::branch` ending block `bb`, if it is
/// `Option<T>`'s into a `ControlFlow<Option<Infallible>, T>`: `Some(v)`
/// (variant 1) gives `Continue(v)`, `None` gives `Break(None)`
/// (`advance_by`'s `try_fold` over `Option<NonZero<usize>>`, in
/// `map(..).skip(..)`). Whether it did.
pub(super) fn expand_option_branch(body: &mut Body, bb: BasicBlock) -> bool {
    let Some(call) = BranchCall::of(body, bb) else {
        return false;
    };
    let (Some(t), Some((residual @ Ty::Adt(_), value_ty))) = (
        option_of(&Ty::Adt(call.input.clone())),
        control_flow(&call.flow),
    ) else {
        return false;
    };
    let infallible = option_of(&residual).is_some_and(
        |i| matches!(i, Ty::Adt(p) if std_relative(&p.def_path()) == Some("convert::Infallible")),
    );
    if !infallible || value_ty != t {
        return false;
    }
    // The residual `Option<Infallible>` has no other value and no size.
    let none = Operand::Const(ConstOperand::ZeroSized(residual));
    let stop = vec![call.site.assign(
        &call.site.destination,
        variant_value(&call.flow, "Break", none),
    )];
    let going_on = call.payload("Some", t);
    call.expand(body, bb, (1, going_on), stop);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function whose `bb0` calls `branch` of `input` for `output`.
    fn branching(input: &str, output: &str) -> crate::model::Crate {
        calling(
            &format!("<{input} as std::ops::Try>::branch"),
            input,
            output,
        )
    }

    /// A function whose `bb0` calls `callee` with an `input` for `output`.
    fn calling(callee: &str, input: &str, output: &str) -> crate::model::Crate {
        let mir = format!(
            "fn kernel::k(_1: {input}) -> () {{
    let mut _0: ();
    let mut _2: {output};

    bb0: {{
        _2 = {callee}(move _1) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
"
        );
        crate::import_text(&mir, "", None).expect("the MIR imports")
    }

    /// `bb0` of `calling(callee, input, output)` after [`expand_try_call`],
    /// if it expanded the call.
    fn try_call(callee: &str, input: &str, output: &str) -> Option<crate::model::BlockData> {
        let krate = calling(callee, input, output);
        let mut body = krate.bodies.values().next().expect("one body").clone();
        let start = body.blocks.keys().next().expect("bb0");
        expand_try_call(&mut body, start).then(|| body.blocks[start].clone())
    }

    const NEVER: &str = "std::ops::try_trait::NeverShortCircuit<u32>";
    const NEVER_RESIDUAL: &str = "std::ops::try_trait::NeverShortCircuitResidual";

    /// The assignment of statement `k` of `block`: its place's projections
    /// and its value.
    fn assigned(block: &crate::model::BlockData, k: usize) -> (Vec<PlaceElem>, Rvalue) {
        match &block.statements[k].kind {
            crate::model::StatementKind::Assign(place, rv) => {
                (place.projection.clone(), rv.clone())
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn never_short_circuits_try_calls_are_its_one_field() {
        // `from_output(x)` writes `x` into the one field.
        let block = try_call(
            &format!("<{NEVER} as std::ops::Try>::from_output"),
            "u32",
            NEVER,
        )
        .expect("from_output is expanded");
        assert!(matches!(block.terminator.kind, TerminatorKind::Goto(_)));
        let (projection, value) = assigned(&block, 0);
        assert!(matches!(
            projection.as_slice(),
            [PlaceElem::Field(0, Ty::Int(IntTy::U32))]
        ));
        assert!(matches!(value, Rvalue::Use(Operand::Move(_))));
        // `branch` goes on with the field: `Continue(self.0)`.
        let flow = format!("std::ops::ControlFlow<{NEVER_RESIDUAL}, u32>");
        let block = try_call(&format!("<{NEVER} as std::ops::Try>::branch"), NEVER, &flow)
            .expect("branch is expanded");
        let (_, value) = assigned(&block, 0);
        let Rvalue::Aggregate(crate::model::AggregateKind::Adt { path, .. }, fields) = value else {
            panic!("{value:?}");
        };
        assert_eq!(path.last_name(), "Continue");
        assert!(matches!(
            fields.as_slice(),
            [Operand::Move(p)] if matches!(p.projection.as_slice(), [PlaceElem::Field(0, _)])
        ));
        // Its residual has no values: `from_residual` is unreachable.
        let block = try_call(
            &format!("<{NEVER} as std::ops::FromResidual>::from_residual"),
            NEVER_RESIDUAL,
            NEVER,
        )
        .expect("from_residual is expanded");
        assert!(matches!(block.terminator.kind, TerminatorKind::Unreachable));
    }

    #[test]
    fn control_flows_from_output_continues_and_from_residual_breaks() {
        let flow = "std::ops::ControlFlow<&u32>";
        let block = try_call(
            &format!("<{flow} as std::ops::Try>::from_output"),
            "()",
            flow,
        )
        .expect("from_output is expanded");
        let variant = |block: &crate::model::BlockData| match assigned(block, 0).1 {
            Rvalue::Aggregate(crate::model::AggregateKind::Adt { path, .. }, _) => {
                path.last_name().to_string()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(variant(&block), "Continue");
        let residual = "std::ops::ControlFlow<&u32, std::convert::Infallible>";
        let block = try_call(
            &format!("<{flow} as std::ops::FromResidual>::from_residual"),
            residual,
            "std::ops::ControlFlow<&u32, ()>",
        )
        .expect("from_residual is expanded");
        assert_eq!(variant(&block), "Break");
    }

    #[test]
    fn try_calls_of_other_types_or_mismatched_results_stay_calls() {
        let never_from_output = format!("<{NEVER} as std::ops::Try>::from_output");
        let stays = [
            // A result of another type, an input of another type.
            (
                never_from_output.as_str(),
                "u32",
                "std::ops::try_trait::NeverShortCircuit<u64>",
            ),
            (never_from_output.as_str(), "u64", NEVER),
            // `Option`'s and a kernel type's are not written here.
            (
                "<std::option::Option<u32> as std::ops::Try>::from_output",
                "u32",
                "std::option::Option<u32>",
            ),
            (
                "<kernel::Flow<u32> as std::ops::Try>::from_output",
                "u32",
                "kernel::Flow<u32>",
            ),
            // A residual that is not `ControlFlow<B, Infallible>`.
            (
                "<std::ops::ControlFlow<u32, u8> as std::ops::FromResidual>::from_residual",
                "std::ops::ControlFlow<u64, std::convert::Infallible>",
                "std::ops::ControlFlow<u32, u8>",
            ),
        ];
        for (callee, input, output) in stays {
            assert!(
                try_call(callee, input, output).is_none(),
                "{callee}({input}) -> {output}"
            );
        }
    }

    #[test]
    fn a_try_parameter_is_named_by_its_type_in_types_and_calls() {
        let mir = "fn kernel::k(_1: R) -> () {
    let mut _0: ();
    let mut _2: std::ops::ControlFlow<<R as std::ops::Try>::Residual, <R as std::ops::Try>::Output>;

    bb0: {
        _2 = <R as std::ops::Try>::branch(move _1) -> [return: bb1, unwind unreachable];
    }

    bb1: {
        return;
    }
}
";
        let krate = crate::import_text(mir, "", None).expect("the MIR imports");
        let mut body = krate.bodies.values().next().expect("one body").clone();
        let never = crate::parse::parse_type(NEVER).expect("a type");
        let subst: Substitution = [("R".to_string(), never)].into_iter().collect();
        body.substitute(&subst);
        instantiate_try_param(&mut body, &subst);
        let flow = body.locals.values().nth(2).expect("_2").ty.to_string();
        assert_eq!(
            flow,
            format!("std::ops::ControlFlow<{NEVER_RESIDUAL}, u32>")
        );
        let start = body.blocks.keys().next().expect("bb0");
        let TerminatorKind::Call {
            func: Callee::Item(callee),
            ..
        } = &body.blocks[start].terminator.kind
        else {
            panic!("a call");
        };
        assert_eq!(
            callee.to_string(),
            format!("<{NEVER} as std::ops::Try>::branch")
        );
        // And then it is expanded.
        assert!(expand_try_call(&mut body, start));
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
            // `Option`'s ([`expand_option_branch`]'s) and another type's
            // branch are not written here.
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

    #[test]
    fn options_branch_goes_on_with_some_and_stops_with_none() {
        let option = "std::option::Option<u8>";
        let flow = "std::ops::ControlFlow<std::option::Option<std::convert::Infallible>, u8>";
        let krate = branching(option, flow);
        let mut body = krate.bodies.values().next().expect("one body").clone();
        let start = body.blocks.keys().next().expect("bb0");
        assert!(expand_option_branch(&mut body, start));
        let TerminatorKind::SwitchInt {
            targets, otherwise, ..
        } = &body.blocks[start].terminator.kind
        else {
            panic!("{:?}", body.blocks[start].terminator.kind);
        };
        // `Some` (1) goes on with its payload; `None` breaks with `None`.
        let [(1, continued)] = targets.as_slice() else {
            panic!("{targets:?}");
        };
        let assigned = |bb: BasicBlock| match &body.blocks[bb].statements[0].kind {
            crate::model::StatementKind::Assign(
                _,
                Rvalue::Aggregate(crate::model::AggregateKind::Adt { path, .. }, ops),
            ) => (path.last_name().to_string(), ops.clone()),
            other => panic!("{other:?}"),
        };
        let (variant, ops) = assigned(*continued);
        assert_eq!(variant, "Continue");
        assert!(matches!(ops.as_slice(), [Operand::Move(p)] if p.projection.len() == 2));
        let (variant, ops) = assigned(*otherwise);
        assert_eq!(variant, "Break");
        assert!(matches!(
            ops.as_slice(),
            [Operand::Const(ConstOperand::ZeroSized(_))]
        ));
        // Another residual, or a value of another type, stays a call.
        for output in [
            "std::ops::ControlFlow<std::option::Option<u8>, u8>",
            "std::ops::ControlFlow<std::option::Option<std::convert::Infallible>, u16>",
        ] {
            let krate = branching(option, output);
            let mut body = krate.bodies.values().next().expect("one body").clone();
            let start = body.blocks.keys().next().expect("bb0");
            assert!(!expand_option_branch(&mut body, start), "{output}");
        }
    }
}
