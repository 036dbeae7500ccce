//! Functions: kernels, device functions and declarations, with their bodies.

use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{PrimaryMap, SecondaryMap};

use crate::entities::{Block, Inst, Ty, Value};
use crate::global::Linkage;
use crate::instructions::{CastOp, InstData};

/// Whether a function is a kernel (a grid entry point) or a device function.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// A `__global__` entry point: returns nothing, is launched by the host, and is
    /// never called from device code.
    Kernel,
    /// A device function, called from kernels or other device functions.
    Device,
}

bitflags::bitflags! {
    /// Function attributes.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct FuncAttrs: u8 {
        /// Never inline this function into its callers (`#[inline(never)]`).
        const NOINLINE = 1;
    }
}

bitflags::bitflags! {
    /// Promises about a pointer parameter that the source language makes and
    /// that LLVM turns into better code (`ld.global.nc`, freer scheduling).
    /// Each one is a license for the optimizer, so each is set only where
    /// the source guarantees it for the whole call.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct ParamAttrs: u8 {
        /// The memory reached through this parameter is reached through no
        /// other pointer during the call (LLVM `noalias`).
        const NOALIAS = 1;
        /// Nothing writes that memory during the call (LLVM `readonly`).
        const READONLY = 2;
        /// The parameter is its pointee passed by value (LLVM `byval`), aligned
        /// to the pointee's alignment: a kernel's aggregate parameter, whose
        /// bytes the launch passes and PTX keeps as a `.param .align A .b8
        /// p[N]`. Only on a kernel's generic pointer to an array, alone.
        /// Never written through: LLVM would allow it, but a kernel's
        /// `.param` space is read-only and the devices hold one read-only
        /// copy for all threads; the lowering copies it to a thread's stack
        /// slot before writing.
        const BYVAL = 4;
    }
}

/// Parameter and return types.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Signature {
    /// The parameter types, in order.
    pub params: Vec<Ty>,
    /// The return type, or `None` for `void`.
    pub ret: Option<Ty>,
}

impl Signature {
    /// A signature.
    pub fn new(params: &[Ty], ret: Option<Ty>) -> Self {
        Signature {
            params: params.to_vec(),
            ret,
        }
    }

    /// `fn(i32, i8*) -> i32` (`-> void` without a result), for messages and
    /// the IR text.
    pub fn display(&self, types: &crate::types::Types) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|&p| types.display(p).to_string())
            .collect();
        let ret = self
            .ret
            .map_or_else(|| "void".to_owned(), |r| types.display(r).to_string());
        format!("fn({}) -> {ret}", params.join(", "))
    }
}

/// A function of a module.
#[derive(Clone, Debug)]
pub struct FunctionData {
    /// The symbol: a valid NVVM identifier, unique in the module.
    pub name: String,
    /// Kernel or device function.
    pub kind: FunctionKind,
    /// The linkage. Kernels and declarations are `External`.
    pub linkage: Linkage,
    /// Attributes.
    pub attrs: FuncAttrs,
    /// Per parameter, the promises about it; empty when there are none.
    /// Only pointer parameters carry any (the verifier checks).
    pub param_attrs: Vec<ParamAttrs>,
    /// The signature.
    pub sig: Signature,
    /// The body, or `None` for a declaration of a function defined elsewhere.
    pub body: Option<Body>,
}

/// Where a value comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueDef {
    /// The result of an instruction.
    Result(Inst),
    /// Parameter number `n` of a block. The entry block's parameters are the
    /// function's parameters.
    Param(Block, u32),
}

/// A value's type and definition.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueData {
    /// The value's type.
    pub ty: Ty,
    /// Its definition.
    pub def: ValueDef,
}

/// A basic block: parameters, then instructions, the last of which is its only
/// terminator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockData {
    /// The parameters. Branches pass one argument per parameter; the printer turns
    /// them into `phi` nodes.
    pub params: Vec<Value>,
    /// The instructions, in execution order.
    pub insts: Vec<Inst>,
}

/// The body of a function. Blocks run in creation order when printed, and
/// `block0` is the entry block; its parameters are the function's parameters, and
/// no branch targets it.
#[derive(Clone, Debug, Default)]
pub struct Body {
    /// The blocks, `block0` first.
    pub blocks: PrimaryMap<Block, BlockData>,
    /// Every instruction. Each appears in exactly one block.
    pub insts: PrimaryMap<Inst, InstData>,
    /// Every value.
    pub values: PrimaryMap<Value, ValueData>,
    /// The result of each instruction that has one.
    pub results: SecondaryMap<Inst, PackedOption<Value>>,
}

impl Body {
    /// The entry block.
    pub fn entry(&self) -> Block {
        Block::from_u32(0)
    }

    /// The result of `inst`, if it has one.
    pub fn result(&self, inst: Inst) -> Option<Value> {
        self.results[inst].expand()
    }

    /// The type of `value`.
    ///
    /// # Panics
    /// If `value` is not a value of this body.
    pub fn value_ty(&self, value: Value) -> Ty {
        self.values[value].ty
    }

    /// The last instruction of `block`, if it has any.
    pub fn last_inst(&self, block: Block) -> Option<Inst> {
        self.blocks[block].insts.last().copied()
    }

    /// The instruction defining `value`, if it is an instruction result.
    pub fn def_inst(&self, value: Value) -> Option<Inst> {
        match self.values.get(value)?.def {
            ValueDef::Result(inst) => Some(inst),
            ValueDef::Param(..) => None,
        }
    }

    /// The instruction data defining `value`, if it is an instruction result.
    pub fn def_data(&self, value: Value) -> Option<&InstData> {
        self.def_inst(value).and_then(|inst| self.insts.get(inst))
    }

    /// The `alloca` that `ptr` points into when it is one plus offsets and
    /// casts (`gep`, `byte_offset`, `bitcast`, `addrspacecast`): memory of
    /// this call's own frame, which no other thread and no callee that did
    /// not get the pointer can reach. `None` for anything else (a parameter,
    /// a loaded pointer, a `select`, a global), which may be any memory.
    pub fn stack_slot_of(&self, ptr: Value) -> Option<Inst> {
        let mut v = ptr;
        loop {
            let inst = self.def_inst(v)?;
            match self.insts.get(inst)? {
                InstData::Alloca { .. } => return Some(inst),
                InstData::Gep { base, .. } | InstData::ByteOffset { base, .. } => v = *base,
                InstData::Cast {
                    op: CastOp::Bitcast | CastOp::AddrSpaceCast,
                    value,
                    ..
                } => v = *value,
                _ => return None,
            }
        }
    }
}
