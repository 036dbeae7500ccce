//! The device IR shared by the lowering (`mir-lower`), the NVVM printer
//! (`nvvm-emit`) and the virtual device (`gpu-harness`).
//!
//! **Owns:** an entity-indexed IR in Cranelift's style ([`Module`], [`Body`],
//! [`InstData`]), its type table with address spaces ([`Types`]), globals whose
//! initializers are byte spans plus relocation slots ([`Initializer`]), the data
//! layout ([`layout`]), a [`FunctionBuilder`], a text form ([`display`]) and a
//! [`verify`]er that refuses whatever NVVM forbids.
//!
//! **Does not own:** printing NVVM IR or talking to libNVVM (`nvvm-emit`),
//! executing the IR (`gpu-harness`), or anything about MIR (`mir-lower`).
//!
//! **Border:** the [`Module`] value itself. Producers build it with
//! [`FunctionBuilder`] and check it with [`verify`]; consumers may assume a
//! verified module, whose semantics are documented on each instruction and in
//! [`layout`], so the printer and the interpreter agree.

#![deny(missing_docs)]

mod builder;
pub mod display;
mod entities;
mod function;
mod global;
mod instructions;
pub mod layout;
mod module;
mod types;
pub mod verifier;

pub use builder::FunctionBuilder;
pub use entities::{Block, FuncId, GlobalId, Inst, Ty, Value};
pub use function::{
    BlockData, Body, FuncAttrs, FunctionData, FunctionKind, ParamAttrs, Signature, ValueData,
    ValueDef,
};
pub use global::{GlobalData, Initializer, Linkage, RelocTarget, Relocation, Span};
pub use instructions::{
    BinaryOp, BlockCall, CastOp, FloatCC, GepIndex, InstData, IntCC, IntFn, MatchMode, MathFn,
    MemFlags, Ordering, ReduceOp, RmwOp, Scope, ShuffleMode, SpecialReg, UnaryOp, VoteMode,
};
pub use module::{DYNAMIC_SHARED_SYMBOL, Module};
pub use types::{AddressSpace, DisplayTy, INT_WIDTHS, TyKind, Types};
pub use verifier::{Rule, VerifierError, VerifierErrors, verify};
