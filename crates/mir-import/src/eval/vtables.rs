//! Vtables in constants: a trait object pointer a constant holds
//! (`const SHAPES: &[&dyn Shape] = &[&Sq(1.0)]`) points to a vtable, which
//! the evaluator builds as an ordinary read-only allocation with the
//! layout the lowering gives vtables made at run time
//! (`Crate::vtable_layouts`): rustc's header (a null drop slot, the size,
//! the alignment), the concrete type's methods as `fn` pointers, then its
//! vtables for the upcasts. Content-keyed interning then makes it the same
//! global as a vtable the code makes for that type. The twin comparison
//! matches it with rustc's `allocN (vtable: impl Tr for T)` by name only:
//! rustc's vtables hold every method of the trait, ours the ones called.

use crate::model::{MAX_UPCAST_DEPTH, Ty, VtableLayouts, vtable_bytes, vtable_slot_offset};

use super::EvalError;
use super::interp::Interp;
use super::layout::PTR_SIZE;
use super::memory::{Alloc, EvalAlloc, Reloc, Target};

impl Interp<'_> {
    /// The vtable making `concrete` an object of `principal`, made once
    /// per pair.
    pub(super) fn vtable_alloc(
        &mut self,
        concrete: &Ty,
        principal: &str,
    ) -> Result<EvalAlloc, EvalError> {
        self.vtable_alloc_at(concrete, principal, 0)
    }

    fn vtable_alloc_at(
        &mut self,
        concrete: &Ty,
        principal: &str,
        depth: u32,
    ) -> Result<EvalAlloc, EvalError> {
        let key = (concrete.clone(), principal.to_string());
        if let Some(&a) = self.mem.vtables.get(&key) {
            return Ok(a);
        }
        if depth > MAX_UPCAST_DEPTH {
            return Err(format!(
                "`dyn {principal}` is upcast more than {MAX_UPCAST_DEPTH} times over"
            )
            .into());
        }
        let layouts: &VtableLayouts = self
            .vtable_layouts
            .get_or_insert_with(|| self.krate.vtable_layouts());
        let methods: Vec<_> = layouts
            .methods(principal)
            .iter()
            .map(|(m, _)| m.on(concrete))
            .collect();
        let upcasts: Vec<String> = layouts.upcasts(principal).map(String::from).collect();
        let layout = self.layout(concrete)?;
        let bytes = vtable_bytes(layout.size, layout.align, methods.len() + upcasts.len());
        let mut vtable = Alloc::uninit(bytes.len() as u64, PTR_SIZE);
        vtable.init = vec![true; bytes.len()];
        vtable.bytes = bytes;
        let mut slots: Vec<Target> = methods.into_iter().map(Target::Function).collect();
        for to in &upcasts {
            slots.push(Target::Alloc(self.vtable_alloc_at(
                concrete,
                to,
                depth + 1,
            )?));
        }
        for (k, target) in slots.into_iter().enumerate() {
            vtable
                .relocs
                .insert(vtable_slot_offset(k), Reloc { target, addend: 0 });
        }
        let a = self.mem.allocs.push(vtable);
        self.mem.vtables.insert(key, a);
        Ok(a)
    }
}
