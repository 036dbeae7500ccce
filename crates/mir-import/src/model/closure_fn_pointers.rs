//! Closures made `fn` pointers (`let f: fn(u32) -> u32 = |x| x + 1`,
//! `[|x| x + 1, |x| x * 2]` as a table of `fn`s).
//!
//! Only a closure that captures nothing coerces to a `fn` pointer, and
//! rustc prints the coercion as a cast of the closure's value
//! (`PointerCoercion(ClosureFnPointer(Safe), ..)`). Its codegen points it
//! at a shim that calls the closure's body with an environment that holds
//! nothing; no such shim is printed. This pass writes it: a function with
//! the pointer's signature, `fn kernel::k::{closure#0}::__fn_pointer(_1:
//! A, ..) -> R`, whose body makes the zero-sized closure, borrows it as the
//! body takes it (`&C`, `&mut C` or by value, the kind rustc inferred), and
//! calls the body with the arguments. The cast becomes a `ReifyFnPointer`
//! of that function, which the rest of the pipeline handles as any named
//! function's address (and calls through it as direct calls, where
//! [`Body::devirtualize_fn_pointers`] proves them).
//!
//! A closure whose body is not printed, or printed more than once (a
//! `macro_rules!` expanding it twice), or whose signature differs from the
//! pointer's, keeps its cast, which the lowering refuses by name.

use std::collections::BTreeMap;

use cranelift_entity::PrimaryMap;

use super::{
    BasicBlock, BlockData, Body, BodyKind, Callee, CastKind, ConstOperand, LocalDecl, Mutability,
    Operand, Path, PathSegment, Place, Pos, Rvalue, Statement, StatementKind, Terminator,
    TerminatorKind, Ty, UnwindAction,
};

/// The last segment of a closure's `fn`-pointer shim.
const SHIM_SEGMENT: &str = "__fn_pointer";

/// A closure's body, as a `fn`-pointer shim calls it.
#[derive(Clone, PartialEq)]
struct ClosureFn {
    path: Path,
    /// How the body takes the closure: `&C`, `&mut C`, or `C` (`None`).
    by: Option<Mutability>,
    inputs: Vec<Ty>,
    output: Ty,
}

/// Rewrites, in `bodies`, each cast of a closure to a `fn` pointer into the
/// reification of a shim that calls the closure's body, and appends each
/// shim (one per closure) to `bodies`.
pub(crate) fn reify_closure_fn_pointers(bodies: &mut Vec<Body>) {
    let closures = closure_fns(bodies);
    let mut shims: BTreeMap<String, Path> = BTreeMap::new();
    let mut made: Vec<Body> = Vec::new();
    for body in bodies.iter_mut() {
        let mut rewrites = Vec::new();
        for (bb, data) in body.blocks.iter() {
            for (k, st) in data.statements.iter().enumerate() {
                let StatementKind::Assign(
                    _,
                    Rvalue::Cast(CastKind::PointerCoercion(kind), op, Ty::FnPtr(params, ret)),
                ) = &st.kind
                else {
                    continue;
                };
                let ty = match op {
                    Operand::Copy(p) | Operand::Move(p) => body.place_ty(p),
                    Operand::Const(c) => c.literal_ty(),
                };
                let Some(Ty::Opaque(name)) = ty else {
                    continue;
                };
                let Some(closure) = closures.get(&name) else {
                    continue;
                };
                if !kind.starts_with("ClosureFnPointer")
                    || closure.inputs != *params
                    || closure.output != **ret
                {
                    continue;
                }
                let shim = shims.entry(name.clone()).or_insert_with(|| {
                    let shim = shim_body(&name, closure);
                    let path = shim.path.clone();
                    made.push(shim);
                    path
                });
                rewrites.push((bb, k, shim.clone()));
            }
        }
        for (bb, k, shim) in rewrites {
            if let StatementKind::Assign(_, Rvalue::Cast(CastKind::PointerCoercion(kind), op, _)) =
                &mut body.blocks[bb].statements[k].kind
            {
                // `ClosureFnPointer(Safe)` becomes `ReifyFnPointer(Safe)`.
                *kind = kind.replacen("ClosureFnPointer", "ReifyFnPointer", 1);
                *op = Operand::Const(ConstOperand::FnItem(shim));
            }
        }
    }
    bodies.extend(made);
}

/// Every closure body, by the closure type its receiver names; a name two
/// bodies share (a closure a macro expands twice) is left out.
fn closure_fns(bodies: &[Body]) -> BTreeMap<String, ClosureFn> {
    let mut found = crate::unambiguous::Unambiguous::default();
    for b in bodies {
        let Some((by, name)) = b.closure_receiver() else {
            continue;
        };
        // A closure defined inside a generic function: its body is generic
        // too (as `mono::closures` leaves it).
        if b.is_generic() {
            continue;
        }
        let Some(inputs) = b.closure_inputs() else {
            continue;
        };
        found.insert(
            name.to_string(),
            ClosureFn {
                path: b.path.clone(),
                by,
                inputs,
                output: b.return_ty.clone(),
            },
        );
    }
    found.into_parts().0
}

/// The shim of the closure of type `name`: `fn(_1: A, ..) -> R { let c =
/// C; _0 = body(&c, _1, ..) }`.
fn shim_body(name: &str, closure: &ClosureFn) -> Body {
    let closure_ty = Ty::Opaque(name.to_string());
    let mut locals = PrimaryMap::new();
    let local = |locals: &mut PrimaryMap<_, LocalDecl>, ty: Ty, is_arg: bool| {
        Place::local(locals.push(LocalDecl {
            ty,
            mutable: true,
            is_arg,
        }))
    };
    let result = local(&mut locals, closure.output.clone(), false);
    let args: Vec<Place> = closure
        .inputs
        .iter()
        .map(|t| local(&mut locals, t.clone(), true))
        .collect();
    let env = local(&mut locals, closure_ty.clone(), false);
    let statement = |kind| Statement {
        kind,
        pos: Pos { line: 0, col: 0 },
        source: None,
    };
    let mut statements = vec![statement(StatementKind::Assign(
        env.clone(),
        Rvalue::Use(Operand::Const(ConstOperand::ZeroSized(closure_ty.clone()))),
    ))];
    let receiver = match closure.by {
        Some(m) => {
            let r = local(&mut locals, Ty::Ref(m, Box::new(closure_ty)), false);
            statements.push(statement(StatementKind::Assign(
                r.clone(),
                Rvalue::Ref(m, env),
            )));
            r
        }
        None => env,
    };
    let terminator = |kind| Terminator {
        kind,
        pos: Pos { line: 0, col: 0 },
        source: None,
    };
    let mut blocks = PrimaryMap::new();
    // `bb0` calls, `bb1` returns.
    let returned = BasicBlock::from_u32(1);
    blocks.push(BlockData {
        cleanup: false,
        statements,
        terminator: terminator(TerminatorKind::Call {
            func: Callee::Item(closure.path.clone()),
            args: std::iter::once(receiver)
                .chain(args)
                .map(Operand::Move)
                .collect(),
            destination: result,
            target: Some(returned),
            unwind: UnwindAction::Unreachable,
        }),
    });
    blocks.push(BlockData {
        cleanup: false,
        statements: Vec::new(),
        terminator: terminator(TerminatorKind::Return),
    });
    let mut path = closure.path.clone();
    path.segments.push(PathSegment {
        name: SHIM_SEGMENT.to_string(),
        args: Vec::new(),
    });
    Body {
        path,
        kind: BodyKind::Fn { ctfe: false },
        return_ty: closure.output.clone(),
        arg_count: closure.inputs.len() as u32,
        locals,
        debug: Vec::new(),
        scopes: Vec::new(),
        blocks,
        value: None,
        pos: Pos { line: 0, col: 0 },
        span: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that makes its closure a `fn` pointer and calls it; the
    /// closure's body is printed after it, taking the closure as `by`.
    fn kernel(by: &str, output: &str) -> Vec<Body> {
        let closure = "{closure@/src/kernel.rs:3:13: 3:16}";
        let mir = format!(
            "fn kernel::k(_1: u32) -> u32 {{
    let mut _0: u32;
    let _2: fn(u32) -> u32;

    bb0: {{
        _2 = const ZeroSized: {closure} as fn(u32) -> u32 (PointerCoercion(ClosureFnPointer(Safe), Implicit));
        _0 = copy _2(copy _1) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}

fn kernel::k::{{closure#0}}(_1: {by}{closure}, _2: u32) -> {output} {{
    let mut _0: {output};

    bb0: {{
        _0 = const 7_{output};
        return;
    }}
}}
"
        );
        crate::parse::parse_mir_named(&mir, crate::prelude::PRELUDE_MODULE)
            .expect("the MIR parses")
            .bodies
    }

    fn cast_in(bodies: &[Body]) -> Rvalue {
        let StatementKind::Assign(_, rv) =
            &bodies[0].blocks[BasicBlock::from_u32(0)].statements[0].kind
        else {
            panic!("an assignment");
        };
        rv.clone()
    }

    #[test]
    fn a_closure_made_a_fn_pointer_is_the_address_of_a_shim_calling_its_body() {
        let mut bodies = kernel("&", "u32");
        reify_closure_fn_pointers(&mut bodies);
        let [_, _, shim] = bodies.as_slice() else {
            panic!("one shim more: {}", bodies.len());
        };
        assert_eq!(
            shim.path.to_string(),
            "kernel::k::{closure#0}::__fn_pointer"
        );
        assert_eq!(
            (shim.arg_count, shim.return_ty.to_string()),
            (1, "u32".into())
        );
        let Rvalue::Cast(
            CastKind::PointerCoercion(kind),
            Operand::Const(ConstOperand::FnItem(f)),
            _,
        ) = cast_in(&bodies)
        else {
            panic!("a reification");
        };
        assert!(kind.starts_with("ReifyFnPointer"), "{kind}");
        assert_eq!(f, shim.path);
        // The shim borrows the closure as its body takes it and passes the
        // argument on.
        let entry = &shim.blocks[BasicBlock::from_u32(0)];
        assert!(matches!(
            &entry.statements[1].kind,
            StatementKind::Assign(_, Rvalue::Ref(Mutability::Not, _))
        ));
        let TerminatorKind::Call {
            func: Callee::Item(callee),
            args,
            ..
        } = &entry.terminator.kind
        else {
            panic!("a call");
        };
        assert_eq!(callee.to_string(), "kernel::k::{closure#0}");
        assert_eq!(args.len(), 2);
    }

    #[test]
    fn a_closure_whose_signature_differs_keeps_its_cast() {
        let mut bodies = kernel("&", "u64");
        reify_closure_fn_pointers(&mut bodies);
        assert_eq!(bodies.len(), 2);
        assert!(matches!(
            cast_in(&bodies),
            Rvalue::Cast(CastKind::PointerCoercion(kind), ..) if kind.starts_with("ClosureFnPointer")
        ));
    }
}
