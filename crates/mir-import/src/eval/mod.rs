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
//!
//! Every constant operand of every function a kernel reaches is evaluated up
//! front too ([`Evaluation::operand`]), so that lowering only reads: it takes
//! the import by shared reference and cannot change what it lowers.

mod consts;
pub mod error;
mod field_order;
pub mod interp;
pub mod layout;
pub mod memory;
pub mod niche_report;
mod ops;
pub mod probe;
pub mod report;
pub mod sizedness;
mod std_consts;
pub mod twin;
pub mod unprinted;
mod vtables;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

pub use error::{EvalError, Unsupported};
pub use layout::UnknownLayout;
pub use layout::{ProbedNiche, ProbedVariant, TupleLayouts};
pub use memory::{Alloc, EvalAlloc, MemError, Memory, Reloc, Target};

use crate::model::{
    AggregateKind, BodyKind, ConstOperand, Crate, Operand, Rvalue, StatementKind, Ty, ValTree,
};

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
    /// The constant operands of reachable function bodies, by operand, each
    /// with the type it is read at and its value (a fresh allocation that
    /// holds it) or why there is none.
    #[serde(skip)]
    operands: HashMap<ConstOperand, Vec<OperandValue>>,
}

/// One constant operand's value at one type.
type OperandValue = (Ty, Result<EvalAlloc, EvalError>);

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
        // Items that failed only because this one did are evaluated again,
        // and so are operands (by the next `evaluate_operands`).
        self.state.done.retain(|_, r| r.is_ok());
        for known in self.operands.values_mut() {
            known.retain(|(_, r)| r.is_ok());
        }
    }

    /// The value of a constant operand of a reachable function body (`const
    /// PAIR`, `const f::promoted[0]`, `const {alloc4: &T}`, a printed value)
    /// read at type `ty`: an allocation holding it, whose pointers share the
    /// allocations of the items it names, so identity is kept. `None` when
    /// the operand was not evaluated up front (it is not in a reachable body,
    /// or not at this type).
    pub fn operand(&self, c: &ConstOperand, ty: &Ty) -> Option<&Result<EvalAlloc, EvalError>> {
        self.operands
            .get(c)?
            .iter()
            .find(|(t, _)| t == ty)
            .map(|(_, r)| r)
    }

    /// Evaluates every constant operand of the functions the kernels reach
    /// (see [`crate::model::Body::const_operands`]), after the items and
    /// their fallbacks, so that an operand naming a const sees the value
    /// rustc's twin gave it.
    pub fn evaluate_operands(&mut self, krate: &Crate, tuples: &TupleLayouts) {
        let discriminants = discriminant_map(krate);
        let field_names = field_name_map(krate);
        let unions = union_set(krate);
        let layouts = layout::Layouts {
            table: &krate.layouts,
            tuples,
            discriminants: &discriminants,
            field_names: &field_names,
            unions: &unions,
        };
        let mut interp = interp::Interp::new(krate, layouts);
        interp.mem = std::mem::take(&mut self.memory);
        interp.done = std::mem::take(&mut self.state.done);
        interp.imported = std::mem::take(&mut self.state.imported);
        for body in krate.reachable_bodies() {
            for (c, ty) in body.const_operands(krate) {
                let known = self.operands.entry(c.clone()).or_default();
                if known.iter().any(|(t, _)| *t == ty) {
                    continue;
                }
                let r = interp.const_value(c, &ty);
                known.push((ty, r));
            }
        }
        self.memory = interp.mem;
        self.state = InterpState {
            done: interp.done,
            imported: interp.imported,
        };
    }
}

/// Field names in declaration order, by def path: the crate's own structs
/// (from the source), and every other struct that some body builds with a
/// named aggregate (`std::iter::Enumerate::<..> { iter: .., count: .. }`),
/// since rustc prints an aggregate's fields in declaration order. MIR
/// projects fields by index, and `-Zprint-type-sizes` names them.
pub fn field_name_map(krate: &Crate) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = krate
        .attrs
        .iter()
        .filter_map(|(k, a)| a.field_names.clone().map(|d| (k.clone(), d)))
        .collect();
    for (_, body) in krate.bodies.iter() {
        for bb in body.blocks.values() {
            for st in &bb.statements {
                let StatementKind::Assign(
                    _,
                    Rvalue::Aggregate(AggregateKind::Adt { path, field_names }, _),
                ) = &st.kind
                else {
                    continue;
                };
                if !field_names.is_empty() {
                    map.entry(path.def_path())
                        .or_insert_with(|| field_names.clone());
                }
            }
        }
        // Struct constants print every field too, in declaration order
        // (`const Wrapped::<..> {{ f: .., p: .. }}`).
        body.for_each_operand(|o| {
            if let Operand::Const(ConstOperand::Value(v)) = o {
                struct_value_fields(v, &mut map);
            }
        });
    }
    // Built by a known call rather than a printed aggregate (a promoted
    // `'a'..='f'`).
    for path in crate::calls::RANGE_INCLUSIVE_PATHS {
        map.entry(path.to_string()).or_insert_with(|| {
            crate::calls::RANGE_INCLUSIVE_FIELDS
                .map(String::from)
                .to_vec()
        });
    }
    map
}

/// Records the field names of every struct value inside `v`.
fn struct_value_fields(v: &ValTree, map: &mut BTreeMap<String, Vec<String>>) {
    match v {
        ValTree::Struct(path, fields) => {
            map.entry(path.def_path())
                .or_insert_with(|| fields.iter().map(|(n, _)| n.clone()).collect());
            fields.iter().for_each(|(_, e)| struct_value_fields(e, map));
        }
        ValTree::Tuple(_, elems) | ValTree::Array(elems) => {
            elems.iter().for_each(|e| struct_value_fields(e, map))
        }
        _ => {}
    }
}

/// The def paths of the unions whose source was read: the kernel's own, and
/// a dependency's whose item attributes are linked.
pub fn union_set(krate: &Crate) -> BTreeSet<String> {
    krate
        .attrs
        .iter()
        .filter(|(_, a)| a.is_union)
        .map(|(k, _)| k.clone())
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

/// Evaluates every non-generic const, static and promoted body of `krate`,
/// then every constant operand of the functions its kernels reach.
/// `tuples` holds rustc's tuple layouts (from [`probe::probe_tuples`]).
pub fn evaluate(krate: &Crate, tuples: &TupleLayouts) -> Evaluation {
    let mut ev = evaluate_items(krate, tuples);
    ev.evaluate_operands(krate, tuples);
    ev
}

/// Evaluates every non-generic const, static and promoted body of `krate`,
/// but no function's constant operands: [`crate::import_and_evaluate`] first
/// lets rustc fill in what the evaluator could not reach, then calls
/// [`Evaluation::evaluate_operands`].
pub fn evaluate_items(krate: &Crate, tuples: &TupleLayouts) -> Evaluation {
    let discriminants = discriminant_map(krate);
    let field_names = field_name_map(krate);
    let unions = union_set(krate);
    let layouts = layout::Layouts {
        table: &krate.layouts,
        tuples,
        discriminants: &discriminants,
        field_names: &field_names,
        unions: &unions,
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
        operands: HashMap::new(),
    }
}
