//! Calls of closures `core` defines around one closure of the kernel,
//! expanded at the call.
//!
//! `core`'s iterator methods wrap the caller's closure in one of their own
//! (`min_by_key`'s `key(f)` is `move |x| (f(&x), x)`) and fold with it.
//! Past its budget for one top-level call ([`super::shims`]), rustc's
//! inliner leaves a call of the wrapper, whose body `core` never prints,
//! and whose type no source can name, so no shim can serve it. But each
//! wrapper here does one fixed thing with its one capture, the kernel's
//! closure: the call becomes that thing, written in MIR at the call, with
//! the kernel's closure called through `FnMut::call_mut`, which
//! [`super::closures`] then points at the closure's body as it does any
//! call that names a closure. The wrapper's environment is its one
//! capture, at offset 0, so a reference to the environment is a reference
//! to the kernel's closure.
//!
//! Expanded (each `call_mut` of the `{closure#0}` of):
//!
//! - `Iterator::min_by_key::key`, `max_by_key::key`: `(x,)` gives
//!   `(f(&x), x)`;
//! - `adapters::copied::copy_fold`: `(acc, &elt)` gives `f(acc, elt)`.
//!
//! Any other wrapper stays a call, refused by name: one with two captures
//! (`map_fold`'s `f` and `g`, whose order in the environment is rustc's to
//! choose), or one this module was never seen to need (`for_each`'s
//! `call`, `Filter::count`'s `to_usize`, which rustc inlined or left
//! inside `map_fold` in every kernel tried).

use crate::model::{
    AggregateKind, BasicBlock, BlockData, Body, Callee, CastKind, LocalDecl, Mutability, Operand,
    Path, PathSegment, Place, PlaceElem, Rvalue, Statement, StatementKind, Terminator,
    TerminatorKind, Ty, closure_trait_call,
};

/// What a wrapper does with the kernel's closure `f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wrapper {
    /// `move |x| (f(&x), x)`.
    Key,
    /// `move |acc, &elt| f(acc, elt)`.
    CopyFold,
}

/// Expands, in `body`, every call of a wrapper whose kernel closure
/// `has_body` (a closure without a usable body is left to be refused).
pub(super) fn expand_calls(body: &mut Body, has_body: &dyn Fn(&str) -> bool) {
    let blocks: Vec<BasicBlock> = body.blocks.keys().collect();
    for bb in blocks {
        let TerminatorKind::Call {
            func: Callee::Item(path),
            ..
        } = &body.blocks[bb].terminator.kind
        else {
            continue;
        };
        let Some((self_ty, "call_mut")) = closure_trait_call(path) else {
            continue;
        };
        let Some((wrapper, closure)) = wrapper_of(self_ty) else {
            continue;
        };
        if has_body(&closure) {
            expand(body, bb, wrapper, &closure);
        }
    }
}

/// The wrapper a closure type (`{closure@DEF}`) is, and the kernel closure
/// it captures (its function's last generic argument).
fn wrapper_of(closure_ty: &str) -> Option<(Wrapper, String)> {
    let def = closure_ty.strip_prefix("{closure@")?.strip_suffix('}')?;
    let function = def.strip_suffix("::{closure#0}")?;
    let open = function.rfind('>').and_then(|close| {
        let mut depth = 0usize;
        function[..=close].char_indices().rev().find_map(|(i, c)| {
            match c {
                '>' if i > 0 && function.as_bytes()[i - 1] == b'-' => {}
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((i, close));
                    }
                }
                _ => {}
            }
            None
        })
    })?;
    let (name, args) = (&function[..open.0], &function[open.0 + 1..open.1]);
    if open.1 + 1 != function.len() {
        return None;
    }
    let name = name
        .strip_prefix("std::")
        .or_else(|| name.strip_prefix("core::"))
        .map_or(name, |n| n);
    let wrapper = match name {
        "iter::Iterator::min_by_key::key" | "iter::Iterator::max_by_key::key" => Wrapper::Key,
        "iter::adapters::copied::copy_fold" => Wrapper::CopyFold,
        _ => return None,
    };
    let last = last_top_level_arg(args)?;
    // The kernel's own closure, by value: a shared or mutable reference to
    // one (`&mut F`) is another type, which this does not expand.
    (last.starts_with("{closure@") && last.ends_with('}')).then(|| (wrapper, last.to_string()))
}

/// The last of the comma-separated generic arguments `args`, commas
/// inside brackets and braces skipped.
fn last_top_level_arg(args: &str) -> Option<&str> {
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = args.as_bytes();
    for (i, c) in args.char_indices() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' if i > 0 && bytes[i - 1] == b'-' => {}
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let last = args[start..].trim();
    (!last.is_empty()).then_some(last)
}

/// Rewrites the wrapper call ending block `bb` into the call of the
/// kernel's closure (type `closure`) the wrapper makes, with what it does
/// before and after.
fn expand(body: &mut Body, bb: BasicBlock, wrapper: Wrapper, closure: &str) {
    let term = body.blocks[bb].terminator.clone();
    let TerminatorKind::Call {
        args,
        destination,
        target: Some(target),
        unwind,
        ..
    } = &term.kind
    else {
        return;
    };
    let [env, Operand::Move(tuple) | Operand::Copy(tuple)] = args.as_slice() else {
        return;
    };
    let Some(Ty::Tuple(elems)) = body.place_ty(tuple) else {
        return;
    };
    let Some(dest_ty) = body.place_ty(destination) else {
        return;
    };
    let field = |i: usize| {
        let mut p = tuple.clone();
        p.projection
            .push(PlaceElem::Field(i as u32, elems[i].clone()));
        p
    };
    let closure_ty = Ty::Opaque(closure.to_string());
    let mut stmts = Vec::new();
    let local = |body: &mut Body, ty: Ty| {
        Place::local(body.locals.push(LocalDecl {
            ty,
            mutable: true,
            is_arg: false,
        }))
    };
    let mut assign = |place: &Place, rv: Rvalue| {
        stmts.push(Statement {
            kind: StatementKind::Assign(place.clone(), rv),
            pos: term.pos,
            source: term.source.clone(),
        });
    };
    // The environment is the kernel's closure.
    let f_ref_ty = Ty::Ref(Mutability::Mut, Box::new(closure_ty.clone()));
    let f = local(body, f_ref_ty.clone());
    assign(&f, Rvalue::Cast(CastKind::Transmute, env.clone(), f_ref_ty));
    // The closure's arguments, and where its result goes: the call's
    // destination, or a local the wrapper's result is made from after it.
    let borrowed_item = |body: &mut Body, assign: &mut dyn FnMut(&Place, Rvalue)| {
        let item = elems.first()?.clone();
        let r = local(body, Ty::Ref(Mutability::Not, Box::new(item)));
        assign(&r, Rvalue::Ref(Mutability::Not, field(0)));
        Some(Operand::Move(r))
    };
    let (inputs, result, after): (Vec<Operand>, Place, Option<Rvalue>) = match wrapper {
        Wrapper::Key => {
            let Ty::Tuple(out) = &dest_ty else { return };
            let (Some(key_ty), [_]) = (out.first(), elems.as_slice()) else {
                return;
            };
            let Some(x) = borrowed_item(body, &mut assign) else {
                return;
            };
            let key = local(body, key_ty.clone());
            let pair = Rvalue::Aggregate(
                AggregateKind::Tuple,
                vec![Operand::Move(key.clone()), Operand::Move(field(0))],
            );
            (vec![x], key, Some(pair))
        }
        Wrapper::CopyFold => {
            let [_, Ty::Ref(_, item)] = elems.as_slice() else {
                return;
            };
            // `&elt` read through a local, as rustc reads a field's pointee.
            let r = local(body, elems[1].clone());
            assign(&r, Rvalue::Use(Operand::Copy(field(1))));
            let mut pointee = r;
            pointee.projection.push(PlaceElem::Deref);
            let elt = local(body, (**item).clone());
            assign(&elt, Rvalue::Use(Operand::Copy(pointee)));
            (
                vec![Operand::Move(field(0)), Operand::Move(elt)],
                destination.clone(),
                None,
            )
        }
    };
    let input_tys: Option<Vec<Ty>> = inputs
        .iter()
        .map(|o| match o {
            Operand::Move(p) | Operand::Copy(p) => body.place_ty(p),
            Operand::Const(_) => None,
        })
        .collect();
    let Some(input_tys) = input_tys else { return };
    let args_tuple_ty = Ty::Tuple(input_tys);
    let args_tuple = local(body, args_tuple_ty.clone());
    assign(&args_tuple, Rvalue::Aggregate(AggregateKind::Tuple, inputs));
    let call_path = Path {
        segments: vec![
            PathSegment {
                name: format!("<{closure} as std::ops::FnMut<{args_tuple_ty}>>"),
                args: Vec::new(),
            },
            PathSegment {
                name: "call_mut".to_string(),
                args: Vec::new(),
            },
        ],
    };
    // What the wrapper does after the call, in a block of its own.
    let next = match after {
        None => *target,
        Some(rv) => body.blocks.push(BlockData {
            cleanup: false,
            statements: vec![Statement {
                kind: StatementKind::Assign(destination.clone(), rv),
                pos: term.pos,
                source: term.source.clone(),
            }],
            terminator: Terminator {
                kind: TerminatorKind::Goto(*target),
                pos: term.pos,
                source: term.source.clone(),
            },
        }),
    };
    let block = &mut body.blocks[bb];
    block.statements.extend(stmts);
    block.terminator.kind = TerminatorKind::Call {
        func: Callee::Item(call_path),
        args: vec![Operand::Move(f), Operand::Move(args_tuple)],
        destination: result,
        target: Some(next),
        unwind: unwind.clone(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_are_known_by_their_function_and_capture() {
        let key = "{closure@std::iter::Iterator::min_by_key::key<&u32, u32, {closure@/src/kernel.rs:13:39: 13:44}>::{closure#0}}";
        assert_eq!(
            wrapper_of(key),
            Some((
                Wrapper::Key,
                "{closure@/src/kernel.rs:13:39: 13:44}".to_string()
            ))
        );
        let fold = "{closure@std::iter::adapters::copied::copy_fold<u32, u32, {closure@/src/kernel.rs:13:66: 13:72}>::{closure#0}}";
        assert_eq!(wrapper_of(fold).map(|w| w.0), Some(Wrapper::CopyFold));
        // Two captures, a capture by reference, another closure index.
        let map_fold = "{closure@std::iter::adapters::map::map_fold<&u32, usize, usize, {closure@a}, {closure@b}>::{closure#0}}";
        assert_eq!(wrapper_of(map_fold), None);
        let by_ref = key.replace(", {closure@/src", ", &mut {closure@/src");
        assert_eq!(wrapper_of(&by_ref), None);
        let other = key.replace("::{closure#0}}", "::{closure#1}}");
        assert_eq!(wrapper_of(&other), None);
    }

    #[test]
    fn the_last_generic_argument_skips_nested_commas() {
        assert_eq!(
            last_top_level_arg("(u8, u16), fn(u8, u8) -> u8, {closure@k.rs:1:2: 1:3}"),
            Some("{closure@k.rs:1:2: 1:3}")
        );
        assert_eq!(last_top_level_arg(""), None);
    }
}
