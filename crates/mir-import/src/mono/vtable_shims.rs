//! Vtable methods without a body of their own.
//!
//! A vtable holds the concrete type's `<T as Trait>::m`
//! ([`crate::model::VtableLayouts`]). Where the impl block wrote the
//! method, [`Crate::link_impl_methods`] links that path to its body; a
//! method the trait provides by default (or one of a generic impl block)
//! has no monomorphic body, since rustc prints one generic body for it and
//! no call names it. Such a method gets a shim, as a dependency's call
//! does ([`super::dep_calls`]): `#[inline(never)] fn call(a0: &'a
//! kernel::Sq) -> u32 { <kernel::Sq as kernel::Shape>::scale(a0) }`,
//! whose MIR is the method inlined at `kernel::Sq`, and the path is
//! aliased to it. The shim's types are the call's through the object, the
//! object pointer made a pointer to the concrete type.

use std::collections::BTreeMap;

use super::shims::{DepCall, callee_source};
use crate::model::{Crate, Ty, object_pointee};

/// The shims of the vtable methods that kernels may run and that have no
/// body, keyed by the method's printed path.
pub fn vtable_shims(krate: &Crate) -> BTreeMap<String, DepCall> {
    let (reachable, layouts) = krate.reachable_and_vtables();
    let mut out = BTreeMap::new();
    for &id in reachable.values() {
        let body = &krate.bodies[id];
        for call in body.virtual_calls(krate) {
            // A closure trait's method is a closure's body or nothing
            // (`link_dyn_closures`): a shim would take the argument tuple
            // unspread, which the call through the object spreads.
            if call.method.takes_argument_tuple() {
                continue;
            }
            let Some(concrete) = layouts.concrete.get(&call.principal) else {
                continue;
            };
            let params: Option<Vec<Ty>> = call
                .args
                .iter()
                .map(|a| krate.operand_ty(body, a))
                .collect();
            let (Some(params), Some(ret)) = (params, body.place_ty(call.destination)) else {
                continue;
            };
            for t in concrete {
                let path = call.method.on(t);
                if krate.fn_body(&krate.resolve_callee(&path)).is_some() {
                    continue;
                }
                let Some(params) = on_concrete(&params, t) else {
                    continue;
                };
                if !params.iter().chain([&ret]).all(super::nameable) {
                    continue;
                }
                let Some(callee) = callee_source(&path) else {
                    continue;
                };
                out.insert(
                    path.to_string(),
                    DepCall {
                        callee,
                        params,
                        ret: ret.clone(),
                        must_reach: None,
                        stand_in: None,
                        type_params: Vec::new(),
                        features: Vec::new(),
                    },
                );
            }
        }
    }
    out
}

/// The parameters of a call through an object, its receiver (a pointer to
/// the object) made a pointer to `concrete`; `None` when the first is no
/// such pointer.
fn on_concrete(params: &[Ty], concrete: &Ty) -> Option<Vec<Ty>> {
    let (receiver, rest) = params.split_first()?;
    object_pointee(receiver)?;
    let receiver = match receiver {
        Ty::Ref(m, _) => Ty::Ref(*m, Box::new(concrete.clone())),
        Ty::RawPtr(m, _) => Ty::RawPtr(*m, Box::new(concrete.clone())),
        _ => return None,
    };
    Some(
        std::iter::once(receiver)
            .chain(rest.iter().cloned())
            .collect(),
    )
}
