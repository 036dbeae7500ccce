//! The module: the type table, globals and functions.

use cranelift_entity::PrimaryMap;

use crate::entities::{FuncId, GlobalId};
use crate::function::{FuncAttrs, FunctionData, FunctionKind, Signature};
use crate::global::{GlobalData, Linkage};
use crate::types::Types;

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

    /// The function named `name`, if any.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        self.functions
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(id, _)| id)
    }
}
