//! Hand-built device-IR modules, one per snapshot. Each one builds a module that
//! the verifier accepts and libNVVM compiles; together they cover every
//! instruction kind and every address space.

#![allow(dead_code, clippy::unwrap_used)]

mod basic;
mod control;
mod globals;
mod gpu;
mod memory;

pub use basic::*;
pub use control::*;
pub use globals::*;
pub use gpu::*;
pub use memory::*;

use device_ir::{
    AddressSpace, FuncId, FunctionBuilder, FunctionKind, GepIndex, GlobalData, GlobalId,
    Initializer, Linkage, Module, Signature, Span, Ty, Value,
};

/// Declares a kernel.
pub fn kernel(m: &mut Module, name: &str, params: &[Ty]) -> FuncId {
    m.declare_function(
        name,
        FunctionKind::Kernel,
        Linkage::External,
        Signature::new(params, None),
    )
}

/// Declares a device function.
pub fn device(
    m: &mut Module,
    name: &str,
    linkage: Linkage,
    params: &[Ty],
    ret: Option<Ty>,
) -> FuncId {
    m.declare_function(
        name,
        FunctionKind::Device,
        linkage,
        Signature::new(params, ret),
    )
}

/// `i32 addrspace(1)*`, the usual output buffer.
pub fn out_i32(m: &mut Module) -> Ty {
    let i32t = m.types.i32();
    m.types.ptr(i32t, AddressSpace::Global)
}

/// A read-only global of `bytes` with relocations.
pub fn const_global(
    m: &mut Module,
    symbol: &str,
    space: AddressSpace,
    align: u32,
    spans: Vec<Span>,
    relocations: Vec<device_ir::Relocation>,
) -> GlobalId {
    let init = Initializer { spans, relocations };
    m.add_global(GlobalData {
        symbol: symbol.to_owned(),
        space,
        mutable: false,
        linkage: Linkage::Internal,
        align,
        size: init.len(),
        init: Some(init),
    })
}

/// Stores `value` (extended or truncated to i32 by the caller) to `out[index]`.
pub fn store_at(b: &mut FunctionBuilder<'_>, out: Value, index: i64, value: Value) {
    let p = b.gep(out, &[GepIndex::Const(index)]);
    b.store(value, p);
}

/// The entry block's parameters.
pub fn params(b: &FunctionBuilder<'_>) -> Vec<Value> {
    b.block_params(b.entry_block())
}
