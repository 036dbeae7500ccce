//! Calls through the closure traits: `<F as FnMut<(A,)>>::call_mut(f, (a,))`.
//!
//! rustc calls a closure, or a function passed where a closure is expected
//! (`unwrap_or_else(Rotation3::identity)`, `map(u32::wrapping_neg)`),
//! through `Fn::call`, `FnMut::call_mut` or `FnOnce::call_once`, with the
//! arguments in one tuple (the `rust-call` ABI). Where the callee's type is
//! known, the call means one body: the closure's (`mono::closures`), or the
//! function the function item names. [`Body::call_fn_items_directly`] makes
//! the second kind a direct call, so that later stages see an ordinary call
//! of a path, which may be a dependency's or a shim's.

use super::ValTree;
use super::brackets::split_top_level;
use super::{
    AggregateKind, Body, Callee, ConstOperand, Operand, Path, Place, PlaceElem, Rvalue, Statement,
    StatementKind, TerminatorKind, Ty,
};

/// For `<F as std::ops::FnMut<(u32,)>>::call_mut`: the self type as
/// printed (`F`, `{closure@..}`, `fn() -> u32 {f}`) and the method, when
/// the path calls one of the three closure traits' methods.
pub fn closure_trait_call(path: &Path) -> Option<(&str, &str)> {
    let [qualified, method] = path.segments.as_slice() else {
        return None;
    };
    let inner = qualified.name.strip_prefix('<')?.strip_suffix('>')?;
    let (self_ty, tr) = split_as(inner)?;
    let tr = tr.split('<').next()?;
    // std's traits only: a crate's own trait called `Fn` is not one.
    let name = tr
        .strip_prefix("std::ops::")
        .or_else(|| tr.strip_prefix("core::ops::"))?;
    let expected = match name {
        "Fn" => "call",
        "FnMut" => "call_mut",
        "FnOnce" => "call_once",
        _ => return None,
    };
    (method.name == expected).then_some((self_ty, expected))
}

/// `T as Trait` split at its ` as ` outside any brackets: a function item's
/// path may hold one of its own (`fn(&u32, &u32) -> bool {<u32 as
/// PartialOrd>::lt}`), as may a std closure's name.
fn split_as(text: &str) -> Option<(&str, &str)> {
    split_top_level(text, " as ")
}

/// The path a function item's type names (`fn() -> u32 {kernel::f}` gives
/// `kernel::f`), parsed as a call's callee is.
pub fn fn_item_path(ty: &str) -> Option<Path> {
    // As the parser reads it: `fn() -> fn() -> u32 {f}` is a function
    // pointer (to functions returning `f`'s item), not `f`.
    match crate::parse::parse_type(ty) {
        Ok(t @ Ty::Opaque(_)) if t.is_fn_item() => {}
        _ => return None,
    }
    let body = ty.strip_suffix('}')?;
    // The `{` that the final `}` closes.
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in body.char_indices().rev() {
        match c {
            '}' => depth += 1,
            '{' if depth == 0 => {
                open = Some(i);
                break;
            }
            '{' => depth -= 1,
            _ => {}
        }
    }
    crate::parse::parse_value_path(&body[open? + 1..]).ok()
}

/// The elements of a `rust-call` argument tuple as separate operands
/// (`place_ty` types a place of the calling body).
pub fn spread_tuple(
    place_ty: &dyn Fn(&Place) -> Option<Ty>,
    tuple: &Operand,
) -> Option<Vec<Operand>> {
    match tuple {
        Operand::Copy(p) | Operand::Move(p) => {
            let Ty::Tuple(elems) = place_ty(p)? else {
                return None;
            };
            Some(
                elems
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let mut q = p.clone();
                        q.projection.push(PlaceElem::Field(i as u32, t));
                        match tuple {
                            Operand::Copy(_) => Operand::Copy(q),
                            _ => Operand::Move(q),
                        }
                    })
                    .collect(),
            )
        }
        Operand::Const(ConstOperand::Unit) => Some(Vec::new()),
        Operand::Const(ConstOperand::Value(ValTree::Tuple(None, leaves))) => leaves
            .iter()
            .map(|l| match l {
                ValTree::Scalar(s) => Some(Operand::Const(ConstOperand::Scalar(s.clone()))),
                ValTree::Const(c) => Some(Operand::Const((**c).clone())),
                _ => None,
            })
            .collect(),
        Operand::Const(_) => None,
    }
}

impl Body {
    /// Rewrites each call of a closure trait's method on a function item
    /// (`<fn() -> R {f} as FnOnce<()>>::call_once(move _3, const ())`) as
    /// a call of the function (`f()`): a function item is zero-sized, so
    /// the receiver carries nothing. A call of one of `core`'s constructors
    /// ([`std_constructor`]), so made or as rustc left it after inlining
    /// such a call, becomes the value it builds. Returns how many calls it
    /// rewrote. A call whose argument tuple cannot be spread stays, and the
    /// lowering refuses it by name.
    pub fn call_fn_items_directly(&mut self) -> usize {
        let mut rewritten = 0;
        for bb in self.blocks.keys().collect::<Vec<_>>() {
            let TerminatorKind::Call {
                func: Callee::Item(path),
                args,
                ..
            } = &self.blocks[bb].terminator.kind
            else {
                continue;
            };
            let direct = match closure_trait_call(path) {
                Some((self_ty, _)) => fn_item_path(self_ty).and_then(|callee| {
                    let [_receiver, tuple] = args.as_slice() else {
                        return None;
                    };
                    Some((callee, spread_tuple(&|p| self.place_ty(p), tuple)?))
                }),
                None => None,
            };
            let block = &mut self.blocks[bb];
            let TerminatorKind::Call {
                func: Callee::Item(func),
                args,
                destination,
                target,
                ..
            } = &mut block.terminator.kind
            else {
                continue;
            };
            let made_direct = direct.is_some();
            if let Some((callee, inputs)) = direct {
                *func = callee;
                *args = inputs;
            }
            // A constructor has no body to call: its value is built.
            if let (true, Some(target)) = (std_constructor(func), *target) {
                let kind = StatementKind::Assign(
                    destination.clone(),
                    Rvalue::Aggregate(
                        AggregateKind::Adt {
                            path: func.clone(),
                            field_names: Vec::new(),
                        },
                        std::mem::take(args),
                    ),
                );
                block.statements.push(Statement {
                    kind,
                    pos: block.terminator.pos,
                    source: block.terminator.source.clone(),
                });
                block.terminator.kind = TerminatorKind::Goto(target);
            } else if !made_direct {
                continue;
            }
            rewritten += 1;
        }
        rewritten
    }
}

/// Whether `path` names a constructor of `core` whose function item a
/// kernel passes (`map(Some)`, `map_err(Err)`, `map(Reverse)`), by its
/// definition path: rustc prints no body for it, and a call of it is the
/// value it builds. A kernel's own constructors have printed bodies.
fn std_constructor(path: &Path) -> bool {
    matches!(
        crate::calls::std_relative(&path.def_path()),
        Some(
            "option::Option::Some"
                | "result::Result::Ok"
                | "result::Result::Err"
                | "cmp::Reverse"
                | "num::Wrapping"
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PathSegment;

    fn path(names: &[&str]) -> Path {
        Path {
            segments: names
                .iter()
                .map(|n| PathSegment {
                    name: n.to_string(),
                    args: vec![],
                })
                .collect(),
        }
    }

    #[test]
    fn closure_trait_calls_are_recognised_by_trait_and_method() {
        assert_eq!(
            closure_trait_call(&path(&["<F as std::ops::FnMut<(u32, u32)>>", "call_mut"])),
            Some(("F", "call_mut"))
        );
        assert_eq!(
            closure_trait_call(&path(&["<G as std::ops::FnOnce<()>>", "call_once"])),
            Some(("G", "call_once"))
        );
        // The ` as ` inside a function item's path is not the qualifier's.
        assert_eq!(
            closure_trait_call(&path(&[
                "<fn(&u32, &u32) -> bool {<u32 as std::cmp::PartialOrd>::lt} as std::ops::FnMut<(&u32, &u32)>>",
                "call_mut"
            ])),
            Some((
                "fn(&u32, &u32) -> bool {<u32 as std::cmp::PartialOrd>::lt}",
                "call_mut"
            ))
        );
        // A crate's own trait named `FnOnce`, a method of another trait,
        // or the wrong method of the trait.
        assert_eq!(
            closure_trait_call(&path(&["<F as dep::FnOnce<()>>", "call_once"])),
            None
        );
        assert_eq!(
            closure_trait_call(&path(&["<F as std::clone::Clone>", "clone"])),
            None
        );
        assert_eq!(
            closure_trait_call(&path(&["<F as std::ops::Fn<(u32,)>>", "call_once"])),
            None
        );
    }

    #[test]
    fn a_function_items_type_names_its_function() {
        let p = fn_item_path(
            "fn() -> dep::Rotation<f32, 3> {dep::rot::<impl dep::Rotation<f32, 3>>::identity}",
        )
        .expect("a function item");
        assert_eq!(
            p.to_string(),
            "dep::rot::<impl dep::Rotation<f32, 3>>::identity"
        );
        let lt = fn_item_path("fn(&u32, &u32) -> bool {<u32 as std::cmp::PartialOrd>::lt}")
            .expect("a trait method");
        assert_eq!(lt.to_string(), "<u32 as std::cmp::PartialOrd>::lt");
        assert_eq!(fn_item_path("{closure@/src/kernel.rs:3:13: 3:16}"), None);
        assert_eq!(fn_item_path("fn(u32) -> u32"), None);
        // A pointer to functions that return a function item.
        assert_eq!(fn_item_path("fn() -> fn() -> u32 {kernel::f}"), None);
    }

    /// A kernel calling a value of type `f` through `FnOnce::call_once`.
    fn through_fn_once(f: &str) -> crate::parse::ParsedMir {
        let mir = format!(
            "fn kernel::k(_1: u32, _2: {f}) -> u32 {{
    let mut _0: u32;
    let mut _3: (u32,);

    bb0: {{
        _3 = (copy _1,);
        _0 = <{f} as std::ops::FnOnce<(u32,)>>::call_once(move _2, move _3) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
"
        );
        crate::parse::parse_mir(&mir).expect("the MIR parses")
    }

    #[test]
    fn only_a_function_item_is_called_directly() {
        // A function pointer could point anywhere.
        let mut parsed = through_fn_once("fn(u32) -> u32");
        assert_eq!(parsed.bodies[0].call_fn_items_directly(), 0);
    }

    #[test]
    fn a_function_item_called_through_fn_once_is_called_directly() {
        let mut parsed = through_fn_once("fn(u32) -> u32 {kernel::twice}");
        let body = &mut parsed.bodies[0];
        assert_eq!(body.call_fn_items_directly(), 1);
        let TerminatorKind::Call {
            func: Callee::Item(func),
            args,
            ..
        } = &body.blocks.values().next().expect("bb0").terminator.kind
        else {
            panic!("no call");
        };
        assert_eq!(func.to_string(), "kernel::twice");
        assert_eq!(args.len(), 1, "the tuple is spread: {args:?}");
    }

    #[test]
    fn a_constructor_of_core_passed_as_a_function_builds_its_value() {
        let mut parsed = through_fn_once(
            "fn(u32) -> std::option::Option<u32> {std::option::Option::<u32>::Some}",
        );
        let body = &mut parsed.bodies[0];
        assert_eq!(body.call_fn_items_directly(), 1);
        let block = body.blocks.values().next().expect("bb0");
        assert!(matches!(block.terminator.kind, TerminatorKind::Goto(_)));
        let Some(StatementKind::Assign(
            _,
            Rvalue::Aggregate(AggregateKind::Adt { path, .. }, fields),
        )) = block.statements.last().map(|s| &s.kind)
        else {
            panic!("no aggregate: {:?}", block.statements.last());
        };
        assert_eq!(path.last_name(), "Some");
        assert_eq!(fields.len(), 1);
        // Made a direct call that stays a call: a constructor of `core`'s
        // not listed (refused by name), and a kernel's own constructor,
        // which has a printed body.
        let stays_a_call = |item: &str| {
            let mut parsed = through_fn_once(item);
            let body = &mut parsed.bodies[0];
            body.call_fn_items_directly() == 1
                && matches!(
                    body.blocks.values().next().map(|b| &b.terminator.kind),
                    Some(TerminatorKind::Call { .. })
                )
        };
        assert!(stays_a_call(
            "fn(u32) -> std::ops::ControlFlow<u32> {std::ops::ControlFlow::<u32>::Break}"
        ));
        assert!(stays_a_call("fn(u32) -> kernel::W {kernel::W}"));
    }

    #[test]
    fn a_scalar_tuple_constant_spreads_into_its_elements() {
        let no_places = |_: &Place| None;
        let one = crate::model::Scalar::Int {
            bits: 1,
            ty: crate::model::IntTy::U32,
        };
        let spread_const = spread_tuple(
            &no_places,
            &Operand::Const(ConstOperand::Value(ValTree::Tuple(
                None,
                vec![ValTree::Scalar(one.clone())],
            ))),
        );
        assert_eq!(
            spread_const,
            Some(vec![Operand::Const(ConstOperand::Scalar(one))])
        );
        assert_eq!(
            spread_tuple(&no_places, &Operand::Const(ConstOperand::Unit)),
            Some(vec![])
        );
    }
}
