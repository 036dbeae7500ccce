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

use crate::model::{Ty, VtableLayouts};

use super::EvalError;
use super::interp::Interp;
use super::layout::PTR_SIZE as POINTER;
use super::memory::{Alloc, EvalAlloc, Reloc, Target};

/// How many upcasts deep a vtable's vtables go at most (as the lowering).
const MAX_UPCAST_DEPTH: u32 = 16;

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
        let slots = (methods.len() + upcasts.len()) as u64;
        let size = 3 * POINTER + slots * POINTER;
        let mut vtable = Alloc::uninit(size, POINTER);
        vtable.init = vec![true; size as usize];
        vtable.bytes[8..16].copy_from_slice(&layout.size.to_le_bytes());
        vtable.bytes[16..24].copy_from_slice(&layout.align.to_le_bytes());
        for (k, path) in methods.into_iter().enumerate() {
            vtable.relocs.insert(
                3 * POINTER + k as u64 * POINTER,
                Reloc {
                    target: Target::Function(path),
                    addend: 0,
                },
            );
        }
        let first_upcast = vtable.relocs.len() as u64;
        for (k, to) in upcasts.iter().enumerate() {
            let target = self.vtable_alloc_at(concrete, to, depth + 1)?;
            vtable.relocs.insert(
                3 * POINTER + (first_upcast + k as u64) * POINTER,
                Reloc {
                    target: Target::Alloc(target),
                    addend: 0,
                },
            );
        }
        let a = self.mem.allocs.push(vtable);
        self.mem.vtables.insert(key, a);
        Ok(a)
    }
}
