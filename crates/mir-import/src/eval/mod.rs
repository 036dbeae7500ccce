//! Constant evaluation: every const, static and promoted body into rustc's exact
//! byte image, as an allocation graph.
//!
//! rustc prints const items and promoteds as MIR bodies, not values, so the
//! evaluator interprets those bodies ([`interp`]) over layouts that rustc
//! itself reported ([`layout`], [`probe`]). A named const that the evaluator
//! cannot reach (a call to a `const fn`, say) may instead be evaluated by rustc
//! through a `static` twin ([`twin`]); [`Evaluation`] records which path
//! evaluated each item. Whatever neither can do is an [`Unsupported`]
//! diagnostic naming the item and the construct, never a wrong byte.

pub mod interp;
pub mod layout;
pub mod memory;
mod ops;
pub mod probe;
pub mod report;
pub mod twin;

use std::collections::BTreeMap;

use serde::Serialize;

pub use interp::Unsupported;
pub use layout::TupleLayouts;
pub use memory::{Alloc, EvalAlloc, Memory, Reloc, Target};

use crate::model::{BodyKind, Crate};

/// Which path produced an item's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EvaluatedBy {
    /// This crate's interpreter.
    Evaluator,
    /// rustc, through a `static` twin of the const.
    RustcTwin,
    /// rustc, which printed the static's evaluated bytes itself.
    RustcStatic,
}

/// The result for one const, static or promoted.
#[derive(Clone, Debug, Serialize)]
pub struct ItemEval {
    /// What kind of item.
    pub kind: ItemKind,
    /// The allocation holding the item's value, or why there is none.
    pub value: Result<EvalAlloc, Unsupported>,
    /// Which path evaluated it (meaningful when `value` is `Ok`).
    pub by: EvaluatedBy,
}

/// The kinds of evaluated items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ItemKind {
    /// A `const` item.
    Const,
    /// A `static` (its value is the static's own allocation).
    Static,
    /// A promoted; its value is a reference to the promoted allocation.
    Promoted,
}
/// All evaluated constants of a crate, over one shared memory, so that
/// identity across items (a const naming another) is visible.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Evaluation {
    /// The allocations.
    pub memory: Memory,
    /// Results by item name (`kernel::PAIR`, `kernel::h2::promoted[0]`).
    pub items: BTreeMap<String, ItemEval>,
    /// The interpreter's memo tables, kept so that later constants see the
    /// same allocations (identity) as the items already evaluated.
    #[serde(skip)]
    state: InterpState,
}

#[derive(Clone, Debug, Default)]
struct InterpState {
    done: BTreeMap<crate::model::BodyId, Result<EvalAlloc, Unsupported>>,
    imported: BTreeMap<crate::model::AllocId, EvalAlloc>,
}

impl Evaluation {
    /// The value allocation of `name`, if it was evaluated.
    pub fn value(&self, name: &str) -> Option<EvalAlloc> {
        self.items
            .get(name)
            .and_then(|i| i.value.as_ref().ok().copied())
    }

    /// Records rustc's value for a const item the evaluator could not reach
    /// (the twin fallback), so later uses of the const see that value.
    pub fn set_fallback(&mut self, krate: &Crate, name: &str, value: EvalAlloc, by: EvaluatedBy) {
        if let Some(item) = self.items.get_mut(name) {
            item.value = Ok(value);
            item.by = by;
        }
        if let Some(id) = krate.item_body(name) {
            self.state.done.insert(id, Ok(value));
        }
        // Items that failed only because this one did are evaluated again.
        self.state.done.retain(|_, r| r.is_ok());
    }

    /// Evaluates a constant operand found in a function body (`const PAIR`,
    /// `const f::promoted[0]`, `const {alloc4: &T}`, a printed value) into a
    /// fresh allocation holding its value. Items it names share the
    /// allocations already evaluated, so identity is kept.
    pub fn constant(
        &mut self,
        krate: &Crate,
        tuples: &TupleLayouts,
        c: &crate::model::ConstOperand,
        ty: &crate::model::Ty,
    ) -> Result<EvalAlloc, String> {
        let discriminants = discriminant_map(krate);
        let field_names = field_name_map(krate);
        let layouts = layout::Layouts {
            table: &krate.layouts,
            tuples,
            discriminants: &discriminants,
            field_names: &field_names,
        };
        let mut interp = interp::Interp::new(krate, layouts);
        interp.mem = std::mem::take(&mut self.memory);
        interp.done = std::mem::take(&mut self.state.done);
        interp.imported = std::mem::take(&mut self.state.imported);
        let r = interp.const_value(c, ty);
        self.memory = interp.mem;
        self.state = InterpState {
            done: interp.done,
            imported: interp.imported,
        };
        r
    }
}

/// Field names of the crate's own structs (from the source), by def path.
pub fn field_name_map(krate: &Crate) -> BTreeMap<String, Vec<String>> {
    krate
        .attrs
        .iter()
        .filter_map(|(k, a)| a.field_names.clone().map(|d| (k.clone(), d)))
        .collect()
}

/// Discriminant values of the crate's own enums (from the source), by def path.
pub fn discriminant_map(krate: &Crate) -> BTreeMap<String, Vec<(String, i128)>> {
    krate
        .attrs
        .iter()
        .filter_map(|(k, a)| a.discriminants.clone().map(|d| (k.clone(), d)))
        .collect()
}

/// Evaluates every non-generic const, static and promoted body of `krate`.
/// `tuples` holds rustc's tuple layouts (from [`probe::probe_tuples`]).
pub fn evaluate(krate: &Crate, tuples: &TupleLayouts) -> Evaluation {
    let discriminants = discriminant_map(krate);
    let field_names = field_name_map(krate);
    let layouts = layout::Layouts {
        table: &krate.layouts,
        tuples,
        discriminants: &discriminants,
        field_names: &field_names,
    };
    let mut interp = interp::Interp::new(krate, layouts);
    let mut items = BTreeMap::new();
    for (id, body) in krate.bodies.iter() {
        let kind = match body.kind {
            BodyKind::Const => ItemKind::Const,
            BodyKind::Static(_) => ItemKind::Static,
            BodyKind::Promoted { .. } => ItemKind::Promoted,
            BodyKind::Fn { .. } => continue,
        };
        let value = interp.eval_body(id);
        if let (Ok(v), BodyKind::Static(crate::model::Mutability::Mut)) = (&value, &body.kind) {
            interp.mem.allocs[*v].mutable = true;
        }
        items.insert(
            interp::body_name(body),
            ItemEval {
                kind,
                value,
                by: EvaluatedBy::Evaluator,
            },
        );
    }
    let state = InterpState {
        done: interp.done,
        imported: interp.imported,
    };
    Evaluation {
        memory: interp.mem,
        items,
        state,
    }
}
