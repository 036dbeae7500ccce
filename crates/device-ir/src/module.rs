//! The module: the type table, globals and functions.

use cranelift_entity::{EntitySet, PrimaryMap};

use crate::entities::{FuncId, GlobalId};
use crate::function::{FuncAttrs, FunctionData, FunctionKind, Signature};
use crate::global::{GlobalData, Linkage, RelocTarget};
use crate::instructions::InstData;
use crate::types::Types;

/// The symbol of the block's dynamic shared memory
/// ([`InstData::DynamicShared`]) in the printed module and its PTX; no global
/// or function may take it.
pub const DYNAMIC_SHARED_SYMBOL: &str = "__dynamic_shared";

/// A device-IR module: what one NVVM IR file holds.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// The interned types.
    pub types: Types,
    /// The globals, printed in this order.
    pub globals: PrimaryMap<GlobalId, GlobalData>,
    /// The functions, printed in this order.
    pub functions: PrimaryMap<FuncId, FunctionData>,
}

impl Module {
    /// An empty module.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a global.
    pub fn add_global(&mut self, data: GlobalData) -> GlobalId {
        self.globals.push(data)
    }

    /// Declares a function without a body. Give it one with
    /// [`FunctionBuilder::new`](crate::FunctionBuilder::new), or leave it a
    /// declaration of a function defined elsewhere.
    pub fn declare_function(
        &mut self,
        name: impl Into<String>,
        kind: FunctionKind,
        linkage: Linkage,
        sig: Signature,
    ) -> FuncId {
        self.functions.push(FunctionData {
            name: name.into(),
            kind,
            linkage,
            attrs: FuncAttrs::empty(),
            param_attrs: Vec::new(),
            sig,
            body: None,
        })
    }

    /// The global named `symbol`, if any.
    pub fn global_by_symbol(&self, symbol: &str) -> Option<GlobalId> {
        self.globals
            .iter()
            .find(|(_, g)| g.symbol == symbol)
            .map(|(id, _)| id)
    }

    /// The functions whose address some function takes
    /// ([`InstData::FuncAddr`]) or some global's initializer holds (a
    /// constant table of functions), in module order: what an
    /// [`InstData::CallIndirect`] may call.
    pub fn address_taken_functions(&self) -> Vec<FuncId> {
        let mut taken = EntitySet::with_capacity(self.functions.len());
        for body in self.functions.values().filter_map(|f| f.body.as_ref()) {
            for inst in body.insts.values() {
                if let InstData::FuncAddr { func, .. } = inst {
                    taken.insert(*func);
                }
            }
        }
        for f in self.functions_in_initializers() {
            taken.insert(f);
        }
        self.functions
            .keys()
            .filter(|f| taken.contains(*f))
            .collect()
    }

    /// The functions some global's initializer points to, with repeats.
    fn functions_in_initializers(&self) -> impl Iterator<Item = FuncId> + '_ {
        self.globals
            .values()
            .filter_map(|g| g.init.as_ref())
            .flat_map(|i| &i.relocations)
            .filter_map(|r| match r.target {
                RelocTarget::Func(f) => Some(f),
                RelocTarget::Global(_) => None,
            })
    }

    /// The functions a launch of `kernel` may run: those it calls, directly
    /// or through other functions, and, once any of them makes an indirect
    /// call, every function whose address one of them takes (an address
    /// taken only by another kernel's code cannot reach this launch) or
    /// that a global's initializer holds (any code may load it).
    pub fn callable_from(&self, kernel: FuncId) -> EntitySet<FuncId> {
        let mut seen = EntitySet::with_capacity(self.functions.len());
        let mut todo = vec![kernel];
        let mut taken: Vec<FuncId> = self.functions_in_initializers().collect();
        let mut indirect = false;
        loop {
            while let Some(f) = todo.pop() {
                if !seen.insert(f) {
                    continue;
                }
                let Some(body) = &self.functions[f].body else {
                    continue;
                };
                for inst in body.insts.values() {
                    match inst {
                        InstData::Call { func, .. } => todo.push(*func),
                        InstData::CallIndirect { .. } => indirect = true,
                        InstData::FuncAddr { func, .. } => taken.push(*func),
                        _ => {}
                    }
                }
            }
            if !indirect {
                return seen;
            }
            todo.extend(taken.drain(..).filter(|f| !seen.contains(*f)));
            if todo.is_empty() {
                return seen;
            }
        }
    }

    /// The functions that execute a collective instruction (see
    /// [`InstData::is_convergent`]) themselves or through the functions
    /// they call: calls of them are collectives too, which LLVM must not
    /// make depend on more control flow than they do (its `convergent`).
    /// A fixed point over the call graph, so recursion is no problem.
    pub fn convergent_functions(&self) -> EntitySet<FuncId> {
        let mut set = EntitySet::with_capacity(self.functions.len());
        let mut callers: Vec<(FuncId, Vec<FuncId>)> = Vec::new();
        let indirect = self.address_taken_functions();
        for (id, f) in self.functions.iter() {
            let Some(body) = &f.body else { continue };
            let mut callees = Vec::new();
            for inst in body.insts.values() {
                match inst {
                    InstData::Call { func, .. } => callees.push(*func),
                    InstData::CallIndirect { .. } => callees.extend(indirect.iter().copied()),
                    i if i.is_convergent() => {
                        set.insert(id);
                    }
                    _ => {}
                }
            }
            callers.push((id, callees));
        }
        let mut changed = true;
        while changed {
            changed = false;
            for (id, callees) in &callers {
                if !set.contains(*id) && callees.iter().any(|c| set.contains(*c)) {
                    set.insert(*id);
                    changed = true;
                }
            }
        }
        set
    }

    /// The alignment of the block's dynamic shared memory: the largest that
    /// a [`InstData::DynamicShared`] of the module asks for; `None` when no
    /// function uses it.
    pub fn dynamic_shared_align(&self) -> Option<u32> {
        self.functions
            .values()
            .filter_map(|f| f.body.as_ref())
            .flat_map(|b| b.insts.values())
            .filter_map(|i| match i {
                InstData::DynamicShared { align } => Some(*align),
                _ => None,
            })
            .max()
    }

    /// The bytes of static shared memory a launch of `kernel` takes: its
    /// shared globals and those of every function it may call, each at its
    /// alignment, in module order (what `ptxas` lays out; it may pack them
    /// tighter, never looser).
    pub fn static_shared_bytes(&self, kernel: FuncId) -> u64 {
        let mut shared = EntitySet::with_capacity(self.globals.len());
        for f in self.callable_from(kernel).iter() {
            let Some(body) = &self.functions[f].body else {
                continue;
            };
            for inst in body.insts.values() {
                if let InstData::GlobalAddr { global, .. } = inst
                    && self.globals[*global].space == crate::AddressSpace::Shared
                {
                    shared.insert(*global);
                }
            }
        }
        self.globals
            .iter()
            .filter(|(id, _)| shared.contains(*id))
            .fold(0, |end, (_, g)| {
                end.next_multiple_of(u64::from(g.align.max(1))) + g.size
            })
    }

    /// The function named `name`, if any.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        self.functions
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(id, _)| id)
    }
}
