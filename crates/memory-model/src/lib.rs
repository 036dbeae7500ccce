//! An executable memory model for the kernels this compiler emits, checked by
//! exhaustive enumeration.
//!
//! **What this crate owns:** a small Rust-like kernel language ([`lang`]) with an
//! executable step function ([`thread`]) and a relational semantics
//! ([`relation`]); the interleaving machine ([`machine`]) and the relaxed
//! candidate machine with its canonical scheduler and explorers ([`relaxed`]);
//! the PTX-style event layer and its consistency predicate ([`model`]); the
//! litmus and reduction programs ([`litmus`]) and a reader for a subset of
//! herd's PTX litmus format ([`herd`]); extraction of real kernels from
//! `mir-import`'s model into [`lang::Program`] ([`extract`]); the
//! theorems of the reference development, each a named check over a
//! complete, finite candidate space ([`checks`]); a syntactic check of
//! the PTX forms our own pipeline emits for two fixtures ([`ptx_forms`]);
//! and a litmus checker for the full PTX memory model ([`ptx`]), with scopes,
//! fences, RMWs and named barriers, separate from the small model above.
//!
//! **What it does not own:** reading real kernels (that is `mir-import`'s
//! parser, used only by [`extract`]), and emitting PTX (the lowering and
//! `nvvm-emit`, which [`ptx_forms`] only calls).
//!
//! **The border:** [`lang::Program`]. Anything that can build one, by hand or
//! by extraction, gets the machines, the explorers and the consistency
//! predicate; nothing else in the crate looks at where a program came from.
//!
//! The crate README states what is and is not modelled.

#![deny(missing_docs)]

pub mod checks;
pub mod event;
pub mod extract;
pub mod herd;
pub mod lang;
pub mod litmus;
pub mod machine;
pub mod model;
pub mod ptx;
pub mod ptx_forms;
pub mod relation;
pub mod relaxed;
pub mod thread;
