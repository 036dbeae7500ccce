//! The imported model of a kernel crate.

mod alloc;
mod attrs;
mod body;
mod brackets;
mod closure_fn_pointers;
mod closures;
pub use closures::{proxy_fields, proxy_struct_declarations};
mod const_display;
mod const_fns;
mod drops;
mod dyn_dispatch;
mod fn_pointers;
pub(crate) mod impls;
mod integrity;
mod pos;
mod query;
mod std_guards;
mod std_promoted;
mod trait_calls;
mod ty;
mod visit;

pub(crate) use brackets::{
    closing_bracket, split_qualified, split_top_level, top_level_items, trailing_generic_args,
};
pub(crate) use closure_fn_pointers::reify_closure_fn_pointers;
pub(crate) use const_fns::ConstWalk;
pub(crate) use fn_pointers::reified;
pub use integrity::{HandleError, check_handles};
pub use pos::Pos;
pub use trait_calls::{closure_trait_call, spread_tuple};
pub use visit::{Substitution, VisitMut};

pub use alloc::{AllocDump, AllocId, Relocation};
pub use attrs::{ImplOf, InlineHint, ItemAttrs};
pub use body::*;
pub use dyn_dispatch::{
    MAX_UPCAST_DEPTH, SlotTypes, VTABLE_ALIGN, VTABLE_SIZE, VirtualCall, VirtualMethod,
    VtableLayouts, object_pointee, principal, virtual_call, vtable_bytes, vtable_slot_offset,
};
pub use impls::normalize_impl_segment;
pub use ty::{ArrayLen, FloatTy, GenericArg, IntTy, Mutability, Path, PathSegment, Ty};

use cranelift_entity::{PrimaryMap, entity_impl};
use serde::Serialize;
use std::collections::BTreeMap;

use crate::layout::LayoutTable;

/// A body's index in [`Crate::bodies`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct BodyId(u32);
entity_impl!(BodyId, "body");

/// Everything imported from one kernel crate.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Crate {
    /// Every body rustc printed, in print order.
    pub bodies: PrimaryMap<BodyId, Body>,
    /// Every allocation rustc dumped, by id.
    pub allocs: BTreeMap<AllocId, AllocDump>,
    /// Allocation ids that name a static without dumping its bytes there.
    pub static_names: BTreeMap<AllocId, String>,
    /// Allocation ids that stand for a function (`allocN (fn: PATH)`): what
    /// a `fn` pointer stored in a constant points to.
    pub fn_names: BTreeMap<AllocId, Path>,
    /// Allocation ids that stand for a vtable (`allocN (vtable: impl Tr
    /// for T)`): the concrete type and the principal trait.
    pub vtable_names: BTreeMap<AllocId, (Ty, String)>,
    /// rustc's layouts, from `-Zprint-type-sizes`.
    pub layouts: LayoutTable,
    /// Attributes the MIR text drops, by the item's def path (`kernel::helper`).
    pub attrs: BTreeMap<String, ItemAttrs>,
    /// The kernel's file as its spans name it (the file the import read), so
    /// that later stages can tell the user's lines from the prelude's and the
    /// standard library's; `None` when the import had no source.
    pub source_file: Option<String>,
    /// Call paths rustc prints for methods of the kernel's `impl` blocks, each
    /// with the def path of the body rustc printed for it (see
    /// [`Crate::link_impl_methods`]).
    pub call_aliases: BTreeMap<String, String>,
    /// Method bodies of impl blocks on one instance of a generic type whose
    /// arguments resolved (`impl Wrapper<u32>`): their stable names carry
    /// the arguments (see [`Crate::stable_name`]).
    pub instance_methods: std::collections::BTreeSet<String>,
    /// For a dependency item imported under a name the kernel's MIR printed
    /// through a re-export (`base64::prelude::STANDARD`), the path that
    /// declares it (`base64::engine::general_purpose::STANDARD`), which
    /// source can name where the printed one may not be a path at all.
    pub dependency_paths: BTreeMap<String, String>,
    /// Whether the kernel's source implements `Drop` for some type, which
    /// gives its own types drop glue (see [`Crate::trivially_dropped`]).
    pub kernel_implements_drop: bool,
    /// The traits the kernel's source implements for a trait object type
    /// (`impl Describe for dyn Shape`), by last segment
    /// (`attrs::traits_implemented_for_trait_objects`).
    pub trait_object_impls: std::collections::BTreeSet<String>,
    /// Calls monomorphisation recognised but left as they are, by the
    /// callee's printed path, with the reason (a range fold whose closure
    /// `core` would drop): the lowering's refusal of the call says it
    /// instead of its general message.
    pub left_calls: BTreeMap<String, String>,
}

impl Crate {
    /// The function body at `def_path` (not the CTFE copy).
    pub fn fn_body(&self, def_path: &str) -> Option<BodyId> {
        self.bodies.iter().find_map(|(id, b)| {
            (matches!(b.kind, BodyKind::Fn { ctfe: false }) && b.path.def_path() == def_path)
                .then_some(id)
        })
    }

    /// The body rustc's own evaluator runs for the function at `def_path`:
    /// its "MIR for CTFE" copy where rustc printed one (a `const fn`), else
    /// the function body.
    pub fn const_eval_body(&self, def_path: &str) -> Option<BodyId> {
        let ctfe = self.bodies.iter().find_map(|(id, b)| {
            (matches!(b.kind, BodyKind::Fn { ctfe: true }) && b.path.def_path() == def_path)
                .then_some(id)
        });
        ctfe.or_else(|| self.fn_body(def_path))
    }

    /// The const or static body at `def_path`.
    pub fn item_body(&self, def_path: &str) -> Option<BodyId> {
        self.bodies.iter().find_map(|(id, b)| {
            (matches!(b.kind, BodyKind::Const | BodyKind::Static(_))
                && b.path.def_path() == def_path)
                .then_some(id)
        })
    }

    /// The promoted `index` of the body at `owner`.
    pub fn promoted(&self, owner: &str, index: u32) -> Option<BodyId> {
        self.bodies.iter().find_map(|(id, b)| match &b.kind {
            BodyKind::Promoted { owner: o, index: i } if *i == index && o.def_path() == owner => {
                Some(id)
            }
            _ => None,
        })
    }

    /// The allocation dump of the static at `def_path`, if rustc printed one.
    pub fn static_alloc(&self, def_path: &str) -> Option<&AllocDump> {
        self.allocs
            .values()
            .find(|a| a.static_path.as_deref() == Some(def_path))
    }
}
