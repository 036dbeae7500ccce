//! The reference development's small memory model for the kernels this
//! compiler emits, checked by exhaustive enumeration.
//!
//! **What this crate owns:** a small Rust-like kernel language ([`lang`]) with an
//! executable step function ([`thread`]) and a relational semantics
//! ([`relation`]); the interleaving machine ([`machine`]) and the relaxed
//! candidate machine with its canonical scheduler and explorers ([`relaxed`]);
//! the PTX-style event layer and its consistency predicate
//! ([`consistency`], a subset of PTX: one CTA, no scopes, fences or RMW); the
//! litmus and reduction programs ([`litmus`]) and a reader for a subset of
//! herd's PTX litmus format ([`herd`]); and the theorems of the reference
//! development over hand-written programs, each a named check over a
//! complete, finite candidate space ([`checks`]).
//!
//! **What it does not own:** extraction of real kernels (the
//! `kernel-extract` crate, which builds [`lang::Program`]s from
//! `mir-import`'s model and runs its checks with [`checks::Outcome`]), and the
//! full PTX memory model (the `ptx-litmus` crate, which shares nothing with
//! this one). This crate depends on no crate of the workspace.
//!
//! **The border:** [`lang::Program`]. Anything that can build one, by hand or
//! by extraction, gets the machines, the explorers and the consistency
//! predicate; nothing here looks at where a program came from.
//!
//! The crate README states what is and is not modelled.

#![deny(missing_docs)]

pub mod checks;
pub mod consistency;
pub mod drf;
pub mod event;
pub mod future;
pub mod herd;
pub mod lang;
pub mod litmus;
pub mod machine;
pub mod relation;
pub mod relaxed;
pub mod thread;
