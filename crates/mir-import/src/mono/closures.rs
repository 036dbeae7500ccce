//! Instances of generic functions at closure types.
//!
//! A closure's type cannot be written in source, so the source instances of
//! [`super`] cannot name it. But a closure argument needs no trait solving:
//! all a generic body can do with an `F: Fn*` is move it, borrow it, drop it,
//! pass it on, and call it through `Fn::call`, `FnMut::call_mut` or
//! `FnOnce::call_once`, and each of those resolves to the one body rustc
//! printed for the closure (`kernel::k::{closure#0}`). So the instance is made
//! here, from MIR that rustc printed generic over the closure parameters only:
//! the kernel's generic function itself when all its type arguments are
//! closures, or else the source instance that names the others and keeps the
//! closure parameters generic. The body is cloned with each parameter
//! replaced by its closure type ([`crate::model::Substitution`]), and:
//!
//! - each call `<F as FnMut<(A, B)>>::call_mut(self, args)` becomes a call of
//!   the closure's body with the argument tuple spread (`rust-call`), the
//!   receiver borrowed as the body takes it (`&C`, `&mut C` or `C`: the
//!   closure kind rustc inferred);
//! - each `drop` of a value that has no drop glue (a closure whose captures
//!   are references, raw pointers and plain data) becomes a `goto`;
//! - calls of generic functions at the closure types are instantiated in turn.
//!
//! rustc stays the authority on everything else: the closure body, its
//! kind, every type and layout, and trait calls on non-closure parameters,
//! which the source instance resolved. A closure body that is itself generic
//! (a closure defined inside a generic function) is not instantiated: its
//! parameters stay in its types and the lowering refuses it by name.

use std::collections::{BTreeMap, BTreeSet};

use super::{GenericFn, Instance, all_type_args, is_closure, module_name};
use crate::model::{
    BodyId, Callee, Crate, LocalDecl, Mutability, Operand, Path, PathSegment, Place, PlaceElem,
    Rvalue, Statement, StatementKind, Substitution, TerminatorKind, Ty, closure_trait_call,
    spread_tuple,
};
use crate::prelude::KERNEL_MODULE;

/// How many closure instances an import makes at most: deeper chains are a
/// generic function passing itself ever new closures, which rustc would
/// refuse as polymorphic recursion anyway.
pub const MAX_CLOSURE_INSTANCES: usize = 256;

/// How a closure's body takes the closure: the kind rustc inferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Receiver {
    /// `&C`: an `Fn` closure.
    Shared,
    /// `&mut C`: an `FnMut` closure.
    Unique,
    /// `C`: an `FnOnce` closure.
    Owned,
}

/// A closure's body, found by the closure's type.
#[derive(Clone, Debug, PartialEq)]
struct ClosureBody {
    path: Path,
    receiver: Receiver,
    /// The number of its inputs (its arguments after the receiver).
    inputs: usize,
}

/// Every closure body of the crate, by the closure type its receiver names.
fn closure_bodies(krate: &Crate) -> BTreeMap<String, ClosureBody> {
    // Closures a `macro_rules!` expands more than once print the same
    // span: which body a call means is unknown, so none is used.
    let mut out = crate::unambiguous::Unambiguous::default();
    for b in krate.bodies.values() {
        let Some((by, name)) = b.closure_receiver() else {
            continue;
        };
        // A closure defined inside a generic function: its body is generic
        // too, and is not instantiated.
        if b.is_generic() {
            continue;
        }
        let receiver = match by {
            Some(Mutability::Not) => Receiver::Shared,
            Some(Mutability::Mut) => Receiver::Unique,
            None => Receiver::Owned,
        };
        out.insert(
            name.to_string(),
            ClosureBody {
                path: b.path.clone(),
                receiver,
                inputs: b.arg_count as usize - 1,
            },
        );
    }
    out.into_parts().0
}

/// Links closures made trait objects (`&|x| x * k as &dyn Fn(u32) ->
/// u32`): the vtable's slot for the closure trait's method
/// (`<{closure@..} as std::ops::Fn<(u32,)>>::call`) is the closure's body,
/// which takes the closure behind a pointer as the call through the object
/// passes it, and the argument tuple spread, as the lowering spreads it at
/// that call. `call_mut` may run an `Fn` closure's body (a `&C` where the
/// call passes a `&mut C`); `call_once` takes the closure by value, which
/// no object behind a reference can give, and stays unlinked.
pub fn link_dyn_closures(krate: &mut Crate) {
    let bodies = closure_bodies(krate);
    for path in krate.dispatched_methods() {
        let Some((self_ty, method)) = closure_trait_call(&path) else {
            continue;
        };
        let Some(body) = bodies.get(self_ty) else {
            continue;
        };
        let fits = matches!(
            (method, body.receiver),
            ("call", Receiver::Shared) | ("call_mut", Receiver::Shared | Receiver::Unique)
        );
        if fits {
            krate
                .call_aliases
                .insert(path.to_string(), body.path.def_path());
        }
    }
}

/// What a closure instance is made from.
struct Template {
    /// The body printed generic over the closure parameters.
    body: BodyId,
    /// The call's type arguments, all of them.
    args: Vec<Ty>,
    /// Each closure parameter and its closure type.
    subst: Substitution,
}

/// The template of a call whose type arguments hold closures: the generic
/// function's own body when all of them are closures, else the source
/// instance serving the call.
fn template(
    krate: &Crate,
    call: &Path,
    generics: &BTreeMap<String, GenericFn>,
    known: &BTreeMap<String, Instance>,
) -> Option<Template> {
    let def = call.def_path();
    let g = generics.get(&def)?;
    let args = g.args_of(call);
    if args.len() != g.params.len() || !args.iter().any(is_closure) {
        return None;
    }
    let subst = g
        .params
        .iter()
        .zip(&args)
        .filter(|(_, t)| is_closure(t))
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect();
    // The generic body serves only when no argument needs naming: a const
    // argument does, by the source instance's const item.
    let body = if args.iter().all(is_closure) && g.consts.is_empty() {
        g.generic_body(krate, &def)?
    } else {
        let path = g.instance_body(krate, known.get(&call.to_string())?)?;
        krate.fn_body(&path)?
    };
    Some(Template { body, args, subst })
}

/// `text` with each kernel closure's type (named by its span) written as
/// its body's path, which does not move when code above it changes.
fn by_body_paths(text: &str, closures: &BTreeMap<String, ClosureBody>) -> String {
    let mut out = text.to_string();
    for (name, cb) in closures {
        if out.contains(name.as_str()) {
            out = out.replace(name.as_str(), &cb.path.def_path());
        }
    }
    out
}

/// Whether closure type `c` is one the standard library defines, which
/// prints by its function's path (`{closure@std::iter::..::map_fold<..>
/// ::{closure#0}}`, `{closure@<std::iter::Filter<I, P> as ..>::..}`,
/// `{closure@<u32 as std::iter::Sum>::sum<..>::{closure#0}}`), not by a
/// span as the kernel's and its dependencies' do.
fn is_std_closure(c: &str) -> bool {
    let Some(def) = c.strip_prefix("{closure@") else {
        return false;
    };
    let std = |path: &str| path.starts_with("std::") || path.starts_with("core::");
    std(def)
        || crate::model::split_qualified(def)
            .is_some_and(|(self_ty, trait_path, _)| std(self_ty) || std(trait_path))
}

/// The template of a `core` call with a closure argument that has a shim
/// generic over it ([`super::closure_shims`]): the shim's body.
fn shim_template(
    krate: &Crate,
    call: &Path,
    shims: &BTreeMap<String, super::shims::DepCall>,
) -> Option<Template> {
    let d = shims.get(&call.to_string())?;
    if d.type_params.is_empty() {
        return None;
    }
    let body = krate.fn_body(&d.body_path())?;
    Some(Template {
        body,
        args: d.type_params.iter().map(|c| c.stands_for.clone()).collect(),
        subst: d
            .type_params
            .iter()
            .map(|c| (c.name.clone(), c.stands_for.clone()))
            .collect(),
    })
}

/// The attributes recorded for a body: by its def path, or, for a method of
/// an `impl` block, by the block's position (`kernel::<impl@7:1>::dot`).
fn attrs_of(krate: &Crate, body: &crate::model::Body) -> Option<crate::model::ItemAttrs> {
    if let Some(a) = krate.attrs.get(&body.path.def_path()) {
        return Some(a.clone());
    }
    let names: Vec<String> = body
        .path
        .segments
        .iter()
        .map(|s| crate::model::normalize_impl_segment(&s.name).unwrap_or_else(|| s.name.clone()))
        .collect();
    krate.attrs.get(&names.join("::")).cloned()
}

/// Rewrites each call of a closure trait's method on a parameter of `subst`,
/// or on a closure type itself, into a call of the closure's body. A call
/// that cannot be rewritten (no body for the closure, an argument tuple it
/// cannot spread) stays, and the lowering refuses it by name.
fn rewrite_closure_calls(
    body: &mut crate::model::Body,
    subst: &Substitution,
    closures: &BTreeMap<String, ClosureBody>,
) {
    let blocks: Vec<_> = body.blocks.keys().collect();
    for bb in blocks {
        let TerminatorKind::Call {
            func: Callee::Item(path),
            args,
            ..
        } = &body.blocks[bb].terminator.kind
        else {
            continue;
        };
        let Some((param, method)) = closure_trait_call(path) else {
            continue;
        };
        // A parameter of the instance, or a closure named directly: a call
        // inside inlined std code that rustc's inliner left
        // (`<{closure@..} as FnMut<(&u32,)>>::call_mut`, from `sort_by_key`).
        let closure = match subst.get(param) {
            Some(Ty::Opaque(c)) => c.as_str(),
            None if param.starts_with("{closure@") => param,
            _ => continue,
        };
        let Some(cb) = closures.get(closure) else {
            continue;
        };
        let [receiver, tuple] = args.as_slice() else {
            continue;
        };
        let Some(inputs) = spread_tuple(&|p| body.place_ty(p), tuple) else {
            continue;
        };
        if inputs.len() != cb.inputs {
            continue;
        }
        let closure_ty = Ty::Opaque(closure.to_string());
        // The receiver as the body takes it: passed on, or borrowed into a
        // new local (`&*r` of a `&mut C` for an `Fn` body; `&c` or `&mut c`
        // of a closure value).
        let borrow = match (cb.receiver, method) {
            (Receiver::Shared, "call") | (Receiver::Unique, "call_mut") => None,
            (Receiver::Owned, "call_once") => None,
            (Receiver::Shared, "call_mut") => Some(Mutability::Not),
            (Receiver::Shared, "call_once") => Some(Mutability::Not),
            (Receiver::Unique, "call_once") => Some(Mutability::Mut),
            _ => continue,
        };
        let receiver = receiver.clone();
        let term = body.blocks[bb].terminator.clone();
        let stmt = |kind| Statement {
            kind,
            pos: term.pos,
            source: term.source.clone(),
        };
        let mut new_stmts = Vec::new();
        let receiver = match borrow {
            None => receiver,
            Some(m) => {
                let place = match receiver {
                    // `&mut C` reborrowed as `&C`.
                    Operand::Copy(p) | Operand::Move(p) if method == "call_mut" => {
                        let mut p = p;
                        p.projection.push(PlaceElem::Deref);
                        p
                    }
                    Operand::Copy(p) | Operand::Move(p) => p,
                    Operand::Const(c) => {
                        let l = body.locals.push(LocalDecl {
                            ty: closure_ty.clone(),
                            mutable: true,
                            is_arg: false,
                        });
                        new_stmts.push(stmt(StatementKind::Assign(
                            Place::local(l),
                            Rvalue::Use(Operand::Const(c)),
                        )));
                        Place::local(l)
                    }
                };
                let r = body.locals.push(LocalDecl {
                    ty: Ty::Ref(m, Box::new(closure_ty.clone())),
                    mutable: false,
                    is_arg: false,
                });
                new_stmts.push(stmt(StatementKind::Assign(
                    Place::local(r),
                    Rvalue::Ref(m, place),
                )));
                Operand::Move(Place::local(r))
            }
        };
        let block = &mut body.blocks[bb];
        block.statements.extend(new_stmts);
        if let TerminatorKind::Call { func, args, .. } = &mut block.terminator.kind {
            *func = Callee::Item(cb.path.clone());
            *args = std::iter::once(receiver).chain(inputs).collect();
        }
    }
}

/// Makes an instance for every call, in a body reachable from the kernels,
/// of a generic function of the kernel at closure types, and points the
/// call at it (through [`Crate::call_aliases`]); then again for calls inside
/// the new instances, up to [`MAX_CLOSURE_INSTANCES`].
pub fn instantiate(
    krate: &mut Crate,
    generics: &BTreeMap<String, GenericFn>,
    known: &BTreeMap<String, Instance>,
    shims: &BTreeMap<String, super::shims::DepCall>,
) {
    let closures = closure_bodies(krate);
    // The kernel closures whose drop does nothing: a std fold that takes
    // one by value is expanded only then (it would drop it).
    let closure_tys: Vec<Ty> = closures.keys().map(|c| Ty::Opaque(c.clone())).collect();
    let drop_nothing: BTreeSet<String> = closures
        .keys()
        .zip(krate.trivially_dropped_each(&closure_tys))
        .filter(|(_, trivial)| *trivial)
        .map(|(c, _)| c.clone())
        .collect();
    let left = std::cell::RefCell::new(BTreeMap::new());
    // Grown by the closures each instance builds, which a call in it is
    // expanded from (`Take::try_fold`'s `check(n, fold)`, built in a fold
    // shim's instance).
    let captures = std::cell::RefCell::new(krate.closure_captures());
    let kernel = super::std_closures::KernelClosures {
        has_body: &|c| closures.contains_key(c),
        drops_nothing: &|c| drop_nothing.contains(c),
        left: &left,
        captures: &|c| captures.borrow().get(c).cloned(),
    };
    // Direct calls first, until no body is newly reached: a closure's body
    // reached only through a rewritten call may hold such calls too.
    let mut rewritten: BTreeSet<String> = BTreeSet::new();
    loop {
        let todo: Vec<BodyId> = krate
            .reachable_function_bodies()
            .into_iter()
            .filter(|(path, _)| rewritten.insert(path.clone()))
            .map(|(_, id)| id)
            .collect();
        if todo.is_empty() {
            break;
        }
        for id in todo {
            let body = &mut krate.bodies[id];
            super::std_closures::expand_calls(body, &kernel);
            rewrite_closure_calls(body, &Substitution::new(), &closures);
            body.call_fn_items_directly();
            krate.left_calls.append(&mut left.borrow_mut());
        }
    }
    // A call with a shim generic over the closures its self type holds
    // (`<Map<Iter<'_, u32>, {closure@..}> as Iterator>::next`), which its
    // type arguments do not show.
    let generic_shim = |c: &Path| {
        shims
            .get(&c.to_string())
            .is_some_and(|d| !d.type_params.is_empty())
    };
    let mut done: BTreeSet<String> = BTreeSet::new();
    loop {
        let mut todo: BTreeMap<String, Path> = BTreeMap::new();
        for id in krate.reachable_function_bodies().into_values() {
            for bb in krate.bodies[id].blocks.values() {
                if let TerminatorKind::Call {
                    func: Callee::Item(c),
                    ..
                } = &bb.terminator.kind
                    && (all_type_args(c).any(is_closure) || generic_shim(c))
                    && !done.contains(&c.to_string())
                {
                    todo.insert(c.to_string(), c.clone());
                }
            }
        }
        if todo.is_empty() || done.len() >= MAX_CLOSURE_INSTANCES {
            return;
        }
        for (key, call) in todo {
            done.insert(key.clone());
            let (t, from_shim) = match template(krate, &call, generics, known) {
                Some(t) => (t, false),
                None => match shim_template(krate, &call, shims) {
                    Some(t) => (t, true),
                    None => continue,
                },
            };
            // A closure without a usable body (one defined inside generic
            // code) leaves the call as it is, for the lowering to refuse;
            // a `core` closure is expanded or stood in, or refused by name.
            // A shim's other parameters (a `try_fold`'s `Try` type) are
            // plain types.
            let usable = |t: &Ty| {
                let c = t.to_string();
                closures.contains_key(&c) || is_std_closure(&c) || (from_shim && !is_closure(t))
            };
            if t.subst.values().any(|c| !usable(c)) {
                tracing::debug!("`{key}` has a closure without a usable body; left as a call");
                continue;
            }
            let mut body = krate.bodies[t.body].clone();
            // The substitution names each closure in its calls too
            // (`<F as FnMut<..>>::call_mut` becomes `<{closure@..} as
            // FnMut<..>>::call_mut`), so a `core` wrapper closure is
            // expanded like one rustc left named ([`super::std_closures`]).
            body.substitute(&t.subst);
            if from_shim {
                super::std_try::instantiate_try_param(&mut body, &t.subst);
            }
            // A shim's instance that still makes the call it serves (rustc
            // did not inline the callee into the shim) would, aliased to
            // that call, call itself forever.
            if from_shim && body.called_items().any(|p| p.to_string() == key) {
                tracing::debug!("the shim of `{key}` still calls it (not inlined); left as a call");
                continue;
            }
            // The closures the instance builds itself (`Take::try_fold`'s
            // `check(n, fold)`), which a call in it is expanded from.
            for (name, tys) in krate.closures_built_in(&body) {
                if !tys.iter().any(Ty::mentions_type_parameter) {
                    captures.borrow_mut().entry(name).or_insert(tys);
                }
            }
            super::std_closures::expand_calls(&mut body, &kernel);
            krate.left_calls.append(&mut left.borrow_mut());
            rewrite_closure_calls(&mut body, &t.subst, &closures);
            body.call_fn_items_directly();
            for bb in body.blocks.keys().collect::<Vec<_>>() {
                // A `core` wrapper closure drops what it wraps.
                let dropless = |ty: &Ty| match ty {
                    Ty::Opaque(c) if is_closure(ty) && !closures.contains_key(c) => {
                        super::std_closures::drops_nothing(c, &kernel)
                    }
                    _ => krate.trivially_dropped(ty),
                };
                if let TerminatorKind::Drop { place, target, .. } = &body.blocks[bb].terminator.kind
                    && body.place_ty(place).is_some_and(|ty| dropless(&ty))
                {
                    body.blocks[bb].terminator.kind = TerminatorKind::Goto(*target);
                }
            }
            let def = call.def_path();
            let name = def.rsplit("::").next().unwrap_or("f").to_string();
            // A closure by its body's path (`kernel::k::{closure#0}`), which
            // an edit above it does not move, unlike its type's span; so
            // also inside a `core` closure's or a `core` call's text.
            let stable = t.args.iter().map(|t| match t {
                Ty::Opaque(name) => closures
                    .get(name)
                    .map_or_else(|| by_body_paths(name, &closures), |cb| cb.path.def_path()),
                _ => t.to_string(),
            });
            // Const arguments too: `apply::<F, 4>` and `apply::<F, 8>` are
            // two instances.
            let consts = generics
                .get(&def)
                .and_then(|g| g.const_args_of(&call))
                .unwrap_or_default();
            let module = module_name(&by_body_paths(&def, &closures), stable.chain(consts));
            body.path = Path {
                segments: [KERNEL_MODULE, &module, &name]
                    .into_iter()
                    .map(|n| PathSegment {
                        name: n.to_string(),
                        args: vec![],
                    })
                    .collect(),
            };
            let path = body.path.def_path();
            if let Some(a) = attrs_of(krate, &krate.bodies[t.body]) {
                krate.attrs.insert(path.clone(), a);
            }
            krate.bodies.push(body);
            krate.call_aliases.insert(key, path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call of a closure's `call_mut` that rustc's inliner left inside
    /// inlined std code, named by the closure type itself; `closures` are
    /// the closure bodies printed after the kernel.
    fn direct_call(closures: &str) -> Crate {
        let mir = format!(
            "fn kernel::k(_1: u32) -> u32 {{
    let mut _0: u32;
    let mut _2: {{closure@/src/kernel.rs:3:13: 3:16}};
    let mut _3: &mut {{closure@/src/kernel.rs:3:13: 3:16}};
    let mut _4: (u32,);

    bb0: {{
        _2 = {{closure@/src/kernel.rs:3:13: 3:16}} {{ n: copy _1 }};
        _3 = &mut _2;
        _4 = (copy _1,);
        _0 = <{{closure@/src/kernel.rs:3:13: 3:16}} as std::ops::FnMut<(u32,)>>::call_mut(move _3, move _4) -> [return: bb1, unwind unreachable];
    }}

    bb1: {{
        return;
    }}
}}
{closures}"
        );
        let mut k = crate::import_text(&mir, "", None).expect("the MIR imports");
        k.attrs.insert(
            "kernel::k".into(),
            crate::model::ItemAttrs {
                kernel: true,
                ..Default::default()
            },
        );
        instantiate(&mut k, &BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new());
        k
    }

    /// A closure body taking its closure as `receiver` (`&C`, `C`).
    fn closure_body(index: u32, receiver: &str) -> String {
        format!(
            "
fn kernel::k::{{closure#{index}}}(_1: {receiver}{{closure@/src/kernel.rs:3:13: 3:16}}, _2: u32) -> u32 {{
    let mut _0: u32;

    bb0: {{
        _0 = Add(copy _2, const {index}_u32);
        return;
    }}
}}
"
        )
    }

    /// The call ending the kernel's first block: callee and arguments.
    fn kernel_call(k: &Crate) -> (String, Vec<Operand>, Vec<Statement>) {
        let body = &k.bodies[k.fn_body("kernel::k").expect("the kernel")];
        let bb0 = body.blocks.values().next().expect("bb0");
        let TerminatorKind::Call {
            func: Callee::Item(func),
            args,
            ..
        } = &bb0.terminator.kind
        else {
            panic!("no call");
        };
        (func.to_string(), args.clone(), bb0.statements.clone())
    }

    #[test]
    fn a_direct_call_of_a_closure_becomes_a_call_of_its_body() {
        let (func, args, statements) = kernel_call(&direct_call(&closure_body(0, "&")));
        assert_eq!(func, "kernel::k::{closure#0}");
        // The `Fn` body takes `&C`: the `&mut C` is reborrowed into a new
        // local, and the tuple is spread into its one element.
        assert_eq!(args.len(), 2, "{args:?}");
        let Some(StatementKind::Assign(reborrow, Rvalue::Ref(Mutability::Not, of))) =
            statements.last().map(|s| &s.kind)
        else {
            panic!("no reborrow: {statements:?}");
        };
        assert_eq!(of.projection, vec![PlaceElem::Deref]);
        assert_eq!(args[0], Operand::Move(reborrow.clone()));
        assert!(matches!(&args[1], Operand::Move(p) if p.projection.len() == 1));
    }

    #[test]
    fn a_direct_call_the_body_cannot_take_stays() {
        // A body that takes the closure by value (`FnOnce`) cannot be
        // called through `call_mut`'s `&mut C`.
        let (func, ..) = kernel_call(&direct_call(&closure_body(0, "")));
        assert!(func.ends_with("::call_mut"), "{func}");
        // Two bodies for one closure type (a macro expanded twice): which
        // one is meant is unknown.
        let two = format!("{}{}", closure_body(0, "&"), closure_body(1, "&"));
        let (func, ..) = kernel_call(&direct_call(&two));
        assert!(func.ends_with("::call_mut"), "{func}");
    }
}
