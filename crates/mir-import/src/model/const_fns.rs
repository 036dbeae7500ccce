//! The functions whose address a constant holds: a `const` or `static`
//! table of `fn` pointers, a struct constant with a `fn` field, a table a
//! `const fn` builds. No body calls or reifies them by name, so the search
//! for the functions to translate ([`Crate::reachable_function_bodies`])
//! finds them here.

use std::collections::{HashMap, HashSet};

use super::{AllocId, Body, BodyId, BodyKind, ConstOperand, Crate, Operand, Path, ValTree};

/// What the walk visits: a const, static or promoted body, a function
/// body one of them calls (a `const fn`, run at compile time), or an
/// allocation rustc dumped or named.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Body(BodyId),
    Alloc(AllocId),
}

/// A walk over the constants of a crate, shared by every function body
/// asked about, so that each constant is walked once.
pub(crate) struct ConstWalk<'k> {
    krate: &'k Crate,
    /// Const and static bodies by def path.
    items: HashMap<String, BodyId>,
    /// Promoted bodies by (owner's def path, index).
    promoteds: HashMap<(String, u32), BodyId>,
    /// Function bodies by def path: the copy rustc evaluates at compile
    /// time (`// MIR FOR CTFE`) where it printed one, else the other.
    const_fns: HashMap<String, BodyId>,
    seen: HashSet<Node>,
    /// What [`ConstWalk::take_objects`] hands out next.
    objects: Vec<(super::Ty, String)>,
}

impl<'k> ConstWalk<'k> {
    pub(crate) fn new(krate: &'k Crate) -> Self {
        let mut items = HashMap::new();
        let mut promoteds = HashMap::new();
        let mut const_fns = HashMap::new();
        for (id, b) in krate.bodies.iter() {
            match &b.kind {
                BodyKind::Const | BodyKind::Static(_) => {
                    items.entry(b.path.def_path()).or_insert(id);
                }
                BodyKind::Promoted { owner, index } => {
                    promoteds.entry((owner.def_path(), *index)).or_insert(id);
                }
                BodyKind::Fn { ctfe: true } => {
                    const_fns.insert(b.path.def_path(), id);
                }
                BodyKind::Fn { ctfe: false } => {
                    const_fns.entry(b.path.def_path()).or_insert(id);
                }
            }
        }
        ConstWalk {
            krate,
            items,
            promoteds,
            const_fns,
            seen: HashSet::new(),
            objects: Vec::new(),
        }
    }

    /// The trait objects the constants walked so far make, as (concrete
    /// type, principal trait), since the last call: unsizing coercions in
    /// their bodies and rustc's vtables in their allocations. Each makes
    /// the concrete type's methods reachable as a coercion in code does.
    pub(crate) fn take_objects(&mut self) -> Vec<(super::Ty, String)> {
        std::mem::take(&mut self.objects)
    }

    /// The functions (as printed: `kernel::square`) whose address is held
    /// by the constants `body` uses, at any depth, that no earlier call
    /// returned: reified in a const, static or promoted body or in a
    /// function one calls, or named by an allocation (`allocN (fn:
    /// kernel::square)`).
    pub(crate) fn held_by_constants_of(&mut self, body: &Body) -> Vec<&'k Path> {
        let mut todo = Vec::new();
        body.for_each_operand(|o| {
            if let Operand::Const(c) = o {
                self.const_nodes(c, &mut todo);
            }
        });
        let mut found = Vec::new();
        while let Some(node) = todo.pop() {
            if !self.seen.insert(node) {
                continue;
            }
            match node {
                Node::Body(b) => {
                    let b = &self.krate.bodies[b];
                    todo.extend(b.called_items().filter_map(|f| {
                        let called = self.const_fns.get(&self.krate.resolve_callee(f))?;
                        Some(Node::Body(*called))
                    }));
                    found.extend(b.reified_fns());
                    self.objects.extend(b.dyn_coercions(self.krate));
                    b.for_each_operand(|o| {
                        if let Operand::Const(c) = o {
                            self.const_nodes(c, &mut todo);
                        }
                    });
                }
                Node::Alloc(a) => {
                    if let Some(f) = self.krate.fn_names.get(&a) {
                        found.push(f);
                    }
                    if let Some(object) = self.krate.vtable_names.get(&a) {
                        self.objects.push(object.clone());
                    }
                    if let Some(s) = self.krate.static_names.get(&a)
                        && let Some(&b) = self.items.get(s)
                    {
                        todo.push(Node::Body(b));
                    }
                    if let Some(dump) = self.krate.allocs.get(&a) {
                        todo.extend(dump.relocations.iter().map(|r| Node::Alloc(r.target)));
                    }
                }
            }
        }
        found
    }

    /// The bodies and allocations a constant operand names.
    fn const_nodes(&self, c: &ConstOperand, out: &mut Vec<Node>) {
        match c {
            ConstOperand::Item(p) => {
                out.extend(self.items.get(&p.def_path()).map(|&b| Node::Body(b)))
            }
            ConstOperand::Promoted { owner, index } => out.extend(
                self.promoteds
                    .get(&(owner.def_path(), *index))
                    .map(|&b| Node::Body(b)),
            ),
            ConstOperand::Alloc { alloc, .. } | ConstOperand::Indirect { alloc, .. } => {
                out.push(Node::Alloc(*alloc))
            }
            ConstOperand::Value(v) => self.value_nodes(v, out),
            _ => {}
        }
    }

    fn value_nodes(&self, v: &ValTree, out: &mut Vec<Node>) {
        match v {
            ValTree::Const(c) => self.const_nodes(c, out),
            ValTree::Tuple(_, elems) | ValTree::Array(elems) => {
                elems.iter().for_each(|e| self.value_nodes(e, out))
            }
            ValTree::Struct(_, fields) => fields.iter().for_each(|(_, e)| self.value_nodes(e, out)),
            _ => {}
        }
    }
}
