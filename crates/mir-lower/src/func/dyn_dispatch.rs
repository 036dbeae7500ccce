//! Trait objects: a pointer to a concrete type becomes a data pointer and
//! the address of a vtable (`globals::Globals::vtable_global`), and a call
//! through the object loads the method's address from the vtable's slot
//! (mir-import's `VtableLayouts`) and calls it with the data pointer as
//! its receiver. An upcast to a supertrait's object loads that trait's
//! vtable from a slot after the methods, as rustc's vtables hold it.

use std::collections::BTreeMap;

use device_ir::{FuncId, Module, Value};
use mir_import::eval::layout::Layouts;
use mir_import::eval::memory::Memory;
use mir_import::model::{
    Crate, MAX_UPCAST_DEPTH, Mutability, Operand, Path, Place, SlotTypes, Ty, VTABLE_ALIGN,
    VTABLE_SIZE, VirtualMethod, VtableLayouts, object_pointee, principal, vtable_slot_offset,
};

use super::FnLower;
use super::values::Val;
use crate::abi::FnAbi;
use crate::diag::Diagnostic;
use crate::globals::{Ctx, VtableSpec, function_symbol};
use crate::repr::Scalar;

impl FnLower<'_, '_> {
    /// The address of the vtable that makes `concrete` an object of
    /// `principal` ([`Self::vtable_spec`]).
    pub(super) fn vtable(&mut self, concrete: &Ty, principal: &str) -> Result<Value, Diagnostic> {
        let spec = self.vtable_spec(concrete, principal, 0)?;
        let sh = self.sh;
        let cx = Ctx {
            krate: sh.krate,
            layouts: sh.layouts,
            fns: sh.fns,
        };
        let item = self.item.clone();
        let g = self
            .globals
            .vtable_global(self.b.module(), &cx, self.ev, &spec, &item)?;
        Ok(self.global_ptr(g, 0))
    }

    /// What the vtable making `concrete` an object of `principal` holds:
    /// one slot for each method some reachable body calls through such an
    /// object, holding `concrete`'s own, then one for each trait such
    /// objects are upcast to, holding `concrete`'s vtable for it. `depth`
    /// counts the upcasts followed ([`MAX_UPCAST_DEPTH`]).
    fn vtable_spec(
        &mut self,
        concrete: &Ty,
        principal: &str,
        depth: u32,
    ) -> Result<VtableSpec, Diagnostic> {
        if depth > MAX_UPCAST_DEPTH {
            return Err(self.unsupported(format!(
                "`dyn {principal}` is upcast more than {MAX_UPCAST_DEPTH} times over"
            )));
        }
        let sh = self.sh;
        let mut methods = Vec::new();
        for (method, types) in sh.vtables.methods(principal) {
            let path = method.on(concrete);
            let Some((f, _)) = sh.fns.get(&sh.krate.resolve_callee(&path)) else {
                return Err(self.unsupported(format!(
                    "making `{concrete}` a `dyn {principal}` needs `{path}` in its vtable, which has no device body (a method rustc printed only generically and no shim could instantiate, such as an `#[inline(never)]` default method)"
                )));
            };
            // The calls through the object pass what their types say: a
            // function taking anything else is refused, never called.
            if let Some(types) = types
                && !slot_signature_fits(sh.layouts, self.b.module(), *f, types)
            {
                return Err(self.unsupported(misfit(concrete, principal, &path)));
            }
            methods.push(function_symbol(sh.krate, &path));
        }
        let mut upcasts = Vec::new();
        for to in sh.vtables.upcasts(principal) {
            upcasts.push(self.vtable_spec(concrete, to, depth + 1)?);
        }
        let layout = self.layout_of(concrete)?;
        Ok(VtableSpec {
            size: layout.size,
            align: layout.align,
            methods,
            upcasts,
        })
    }

    /// `v`, a pointer of type `from`, unsized to the trait object pointer
    /// `to`: its data pointer and the concrete type's vtable. An object
    /// that loses only auto traits keeps its vtable (the layout is the
    /// principal trait's); one made an object of a supertrait takes the
    /// vtable its own vtable holds for it.
    pub(super) fn unsize_to_object(
        &mut self,
        v: Val,
        from: &Ty,
        to: &Ty,
    ) -> Result<Val, Diagnostic> {
        let (Some(object), Some(concrete)) = (object_pointee(to), from.pointee()) else {
            return Err(self.internal("unsizing to a trait object from no pointer"));
        };
        let Some(principal) = principal(object) else {
            return Err(self.internal("a trait object without a principal trait"));
        };
        if let Some(source) = object_pointee(from) {
            let (Some(p), Val::Pair(data, vtable)) = (mir_import::model::principal(source), v)
            else {
                return Err(self.internal("a trait object pointer is no pair"));
            };
            if p == principal {
                return Ok(Val::Pair(data, vtable));
            }
            // Upcasting: the object's vtable holds the one for `to`.
            let Some(slot) = self.sh.vtables.upcast_slot(&p, &principal) else {
                return Err(self.internal(&format!(
                    "no vtable slot for the upcast of `{from}` to `{to}`"
                )));
            };
            let upcast = self.load_scalar_at(vtable, vtable_slot_offset(slot), Scalar::Ptr);
            return Ok(Val::Pair(data, upcast));
        }
        let Val::Immediate(data) = v else {
            return Err(self.unsupported(format!(
                "unsizing `{from}` to `{to}`: the concrete type `{concrete}` is itself unsized"
            )));
        };
        let vtable = self.vtable(concrete, &principal)?;
        Ok(Val::Pair(data, vtable))
    }

    /// `size_of_val` (or with `align`, `align_of_val`) of the trait object
    /// `object` points to: the concrete type's, which its vtable holds.
    pub(super) fn object_size_or_align(
        &mut self,
        object: &Operand,
        align: bool,
    ) -> Result<Val, Diagnostic> {
        let Val::Pair(_, vtable) = self.read_operand(object)? else {
            return Err(self.internal("a trait object pointer is no pair"));
        };
        let field = if align { VTABLE_ALIGN } else { VTABLE_SIZE };
        Ok(Val::Immediate(self.load_scalar_at(
            vtable,
            field,
            Scalar::Int(64),
        )))
    }

    /// The operands a call through an object passes on: its own, with a
    /// closure trait's argument tuple spread (`f(x)` through `&dyn Fn(u32)
    /// -> u32` passes `(x,)`, and the closure's body takes `x`).
    pub(super) fn virtual_call_args(
        &self,
        method: &VirtualMethod,
        args: &[Operand],
    ) -> Result<Vec<Operand>, Diagnostic> {
        if !method.takes_argument_tuple() {
            return Ok(args.to_vec());
        }
        let [receiver, tuple] = args else {
            return Err(self.unsupported(format!(
                "a call of `{method}` through a trait object without one argument tuple"
            )));
        };
        let spread = mir_import::model::spread_tuple(&|p| self.body.place_ty(p), tuple)
            .ok_or_else(|| {
                self.unsupported(format!(
                    "a call of `{method}` through a trait object whose argument tuple cannot be spread"
                ))
            })?;
        Ok(std::iter::once(receiver.clone()).chain(spread).collect())
    }

    /// The convention of a call through an object, given the operands it
    /// passes on ([`Self::virtual_call_args`]): the receiver a thin pointer
    /// (the object's data), the other arguments and the result as their
    /// types say. It is the convention of the concrete method every vtable
    /// slot for it holds, whose receiver is a pointer too.
    pub(super) fn virtual_call_abi(
        &mut self,
        args: &[Operand],
        dest: &Place,
    ) -> Result<(FnAbi, device_ir::Signature), Diagnostic> {
        let mut inputs = vec![receiver_ty()];
        for a in args.iter().skip(1) {
            inputs.push(self.operand_ty(a)?);
        }
        let output = self.place_ty(dest)?;
        let (abi, sig) = crate::abi::fn_ptr_abi(self.sh.layouts, self.b.module(), &inputs, &output)
            .map_err(|e| self.unsupported(format!("a call through a trait object: {e}")))?;
        Ok((abi, device_ir::Signature::new(&sig.params, sig.ret)))
    }

    /// A call of `method` through an object of `principal`: the function
    /// in the vtable's slot for it, called with the object's data pointer.
    pub(super) fn virtual_call(
        &mut self,
        principal: &str,
        method: &VirtualMethod,
        args: &[Operand],
        dest: &Place,
    ) -> Result<Option<Val>, Diagnostic> {
        let Some(slot) = self.sh.vtables.slot(principal, method) else {
            return Err(self.internal(&format!(
                "no vtable slot for `{method}` in objects of `{principal}`"
            )));
        };
        let args = &self.virtual_call_args(method, args)?;
        let Some(receiver) = args.first() else {
            return Err(self.unsupported(format!(
                "a call of `{method}` through a trait object without a receiver"
            )));
        };
        let Val::Pair(data, vtable) = self.read_operand(receiver)? else {
            return Err(self.unsupported(format!(
                "a call of `{method}` through a trait object whose receiver is not a pointer to the object (`self` by value or in a smart pointer)"
            )));
        };
        let address = self.load_scalar_at(vtable, vtable_slot_offset(slot), Scalar::Ptr);
        let (abi, sig) = self.virtual_call_abi(args, dest)?;
        self.device_call(
            super::call::CallTarget::Indirect(address, sig),
            &abi,
            args,
            dest,
            Some(data),
        )
    }
}

/// The receiver's type at a call through an object: a thin pointer to the
/// object's data.
fn receiver_ty() -> Ty {
    Ty::RawPtr(Mutability::Not, Box::new(Ty::unit()))
}

/// Whether device function `f` takes and returns what the calls through
/// an object pass and expect for a slot whose calls have `types`.
fn slot_signature_fits(layouts: &Layouts, m: &mut Module, f: FuncId, types: &SlotTypes) -> bool {
    let mut inputs = vec![receiver_ty()];
    inputs.extend(types.args.iter().cloned());
    let expected = crate::abi::fn_ptr_abi(layouts, m, &inputs, &types.ret)
        .map(|(_, sig)| device_ir::Signature::new(&sig.params, sig.ret));
    expected.ok().as_ref() == Some(&m.functions[f].sig)
}

/// The refusal of a vtable slot whose function does not fit its calls.
fn misfit(concrete: &Ty, principal: &str, path: &Path) -> String {
    format!(
        "making `{concrete}` a `dyn {principal}` puts `{path}` in its vtable, whose device signature is not the one calls through the object use"
    )
}

/// The vtables the evaluator built for constants ([`Memory::vtables`]),
/// checked as [`FnLower::vtable`] checks the code's: each slot's function
/// must take what the calls through the object pass. A constant's vtable
/// is lowered as any constant, by content, which checks only that the
/// functions exist.
pub fn check_constant_vtables(
    krate: &Crate,
    layouts: &Layouts,
    m: &mut Module,
    fns: &BTreeMap<String, (FuncId, FnAbi)>,
    vtables: &VtableLayouts,
    memory: &Memory,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (concrete, principal) in memory.vtables.keys() {
        for (method, types) in vtables.methods(principal) {
            let path = method.on(concrete);
            let (Some((f, _)), Some(types)) = (fns.get(&krate.resolve_callee(&path)), types) else {
                continue;
            };
            if !slot_signature_fits(layouts, m, *f, types) {
                out.push(Diagnostic::new(
                    crate::Rule::Unsupported,
                    format!("{concrete} as dyn {principal}"),
                    misfit(concrete, principal, &path),
                ));
            }
        }
    }
    out
}
