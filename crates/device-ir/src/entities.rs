//! Entity references: small typed indices into the arenas of a [`Module`](crate::Module)
//! or a [`Body`](crate::Body).
//!
//! Each displays as the device-IR text form does (`v3`, `inst7`, `block0`, `fn1`,
//! `gv2`, `ty4`), so debug output, printed IR and verifier errors all read alike.

use cranelift_entity::entity_impl;

/// An SSA value: an instruction's result or a block parameter. Local to one function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An instruction. Local to one function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");

/// A basic block. Local to one function; `block0` is the entry block.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// A function (kernel, device function or declaration) of a module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "fn");

/// A global variable of a module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(u32);
entity_impl!(GlobalId, "gv");

/// An interned type of a module. Two handles of one module are equal exactly when
/// the types are structurally equal.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ty(u32);
entity_impl!(Ty, "ty");
