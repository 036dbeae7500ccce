//! Content-keyed interning of constant allocations.
//!
//! **What it owns.** This crate takes an allocation graph, gives every
//! allocation a SHA-256 content key, interns immutable allocations into one
//! global per distinct content, and validates typed views of a global against
//! its bytes. It depends on nothing else in this workspace, so any compiler
//! can reuse it alone.
//!
//! **What it does not own.** Where allocations come from (rustc's interpreter,
//! an importer of printed MIR), which Rust types they hold, and how globals are
//! printed in an IR: the caller turns [`Global`]s into its own globals.
//!
//! **The border.** One trait, [`AllocGraph`]: for an allocation id, its bytes,
//! init mask, alignment, mutability and relocations (offset, target, addend),
//! where a target is another allocation, a static's symbol or a function's. [`SimpleGraph`]
//! is an owned implementation. Typed views take a layout through the small
//! [`Layout`] trait.
//!
//! # Keys and symbols
//!
//! - An anonymous allocation's key is SHA-256 over a versioned encoding of its
//!   alignment, initialized bytes, init mask and relocations, each relocation
//!   with its target's key (the encoding is in [`key`]). A static's key, as a
//!   target, is its symbol, so cycles through statics are fine; a cycle
//!   through anonymous allocations alone is an error
//!   ([`InternError::AnonymousCycle`]).
//! - Keys never depend on ids, on the order of anything, or on unrelated
//!   allocations, so a constant's global keeps its name across builds.
//! - Immutable anonymous memory is named [`SYMBOL_PREFIX`] plus the 64 hex
//!   digits of its key, and allocations with the same key share one global.
//! - Mutable anonymous memory is never shared: it is named
//!   [`MUTABLE_SYMBOL_PREFIX`] plus the hex of a key over its content key, its
//!   owning static's symbol and the relocation offsets that lead there.
//! - Statics keep the symbol the caller gives them.
//!
//! # Example
//!
//! ```
//! use const_alloc::{Allocation, Interner, Root, SimpleGraph, SimpleLayout, Target};
//!
//! // `const PAIR: &(u32, u32) = &(3, 4);` and a promoted `&3`.
//! let mut graph = SimpleGraph::new();
//! graph.insert(0, Allocation::new([3, 0, 0, 0, 4, 0, 0, 0], 4));
//! graph.insert(1, Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Alloc(0), 0));
//! graph.insert(2, Allocation::new([3, 0, 0, 0], 4));
//!
//! let interned = Interner::new(8).intern(&graph, [Root::Anonymous(1), Root::Anonymous(2)])?;
//! let pair = interned.global_of(0).unwrap();
//! assert!(interned.global(pair).symbol().starts_with("__const_"));
//! // `&PAIR.1` is a view of the same global: same symbol, offset 4.
//! let view = interned.view(pair, 4, &SimpleLayout::int(4))?;
//! assert_eq!(view.global, pair);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod error;
mod globals;
mod graph;
mod init_mask;
mod intern;
pub mod key;
pub mod view;

pub use error::InternError;
pub use globals::{Chunk, Global, GlobalId, GlobalKind, Interned, RelocSlot, SlotTarget};
pub use graph::{AllocGraph, AllocRef, Allocation, Mutability, Relocation, SimpleGraph, Target};
pub use init_mask::InitMask;
pub use intern::{Interner, MUTABLE_SYMBOL_PREFIX, Root, SYMBOL_PREFIX};
pub use key::Key;
pub use view::{Layout, SimpleLayout, Slot, Validity, View, ViewError, ViewRule};

/// The README's example, run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
