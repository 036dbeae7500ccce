//! The verifier: refuses every module that NVVM would refuse, and every module
//! whose meaning the printer and the interpreter could read differently.
//!
//! It runs in two passes, as naga's validator does. The *handle-integrity* pass
//! proves that every handle is in bounds and that types refer only to earlier
//! types; later checks of a function or the type table run only if it passed, so
//! they can index freely. The *semantic* pass then checks the rules below. Every
//! error is collected, not only the first, and each names its entity, its text form
//! and its rule:
//!
//! ```text
//! fn0 @k inst3 (v2 = load i32, v1, align 4): loads i32 through a pointer to float [type]
//! ```
//!
//! # Invariants
//!
//! Handle integrity ([`Rule::Handle`]):
//! - every handle is in bounds; a type's components are earlier types;
//! - each instruction sits in exactly one block, once; each value's definition
//!   agrees with the instruction results and block parameters.
//!
//! Module:
//! - symbols are valid NVVM identifiers, `[A-Za-z_$][A-Za-z0-9_$]*` other than `_`
//!   and `$`, and unique among globals and functions ([`Rule::Symbol`]);
//! - integers are 1, 8, 16, 32, 64 or 128 bits wide ([`Rule::Type`]).
//!
//! Globals:
//! - live in the global, shared or constant space ([`Rule::GlobalSpace`]);
//! - alignments are powers of two, at most 2^29 ([`Rule::Alignment`]);
//! - shared globals are mutable and uninitialized ([`Rule::SharedGlobal`]);
//! - an initializer's image is exactly `size` bytes ([`Rule::InitializerSize`]);
//! - each relocation slot lies inside its global ([`Rule::RelocationBounds`]) and
//!   overlaps no other ([`Rule::RelocationOverlap`]); its target is a global- or
//!   constant-space global with an addend within `0..=target.size`, or a
//!   device function (no kernel) with addend 0 ([`Rule::RelocationTarget`]);
//! - relocations form no cycle, which PTX cannot initialize
//!   ([`Rule::RelocationCycle`]).
//!
//! Functions:
//! - a kernel returns nothing, has external linkage and a body; a declaration is an
//!   external device function ([`Rule::FunctionShape`]);
//! - `block0` has the signature's parameters and is never a branch target
//!   ([`Rule::EntryBlock`]);
//! - every block ends with its only terminator ([`Rule::Terminator`]);
//! - branches pass one argument of the right type per target parameter, and all
//!   edges from one block to one target pass the same arguments
//!   ([`Rule::BranchArgs`]);
//! - every use is dominated by its definition; within a block, definitions come
//!   first, also in unreachable code ([`Rule::Dominance`]).
//!
//! Instructions:
//! - operand and result types fit the instruction, as each [`InstData`] variant
//!   documents; constants fit their type ([`Rule::Type`]);
//! - no store or atomic writes constant-space memory, and atomics use generic,
//!   global or shared pointers; a `global_addr` has its global's space
//!   ([`Rule::AccessSpace`]);
//! - no store or atomic writes through a pointer derived (by casts, GEPs and
//!   byte offsets) from a read-only global or a function's address
//!   ([`Rule::ReadOnly`]);
//! - a `func_addr` is a generic pointer to a device function, never a
//!   kernel ([`Rule::AccessSpace`], [`Rule::Call`]);
//! - a `bitcast` never changes the address space ([`Rule::BitcastSpace`]);
//! - an `addrspacecast` has exactly one generic side and keeps the pointee
//!   ([`Rule::AddrSpaceCast`]);
//! - calls target device functions with matching arguments; an indirect
//!   call goes through a generic pointer, with arguments matching its
//!   signature, which is the callee's own where the callee is known
//!   ([`Rule::Call`]);
//! - switch cases are distinct and fit the scrutinee ([`Rule::Switch`]);
//! - atomic orderings fit the operation, and atomics are on `i32`/`i64` (`f32`/`f64`
//!   for `fadd`) ([`Rule::Atomic`]);
//! - inline-asm constraints match the arguments and the result, using only the
//!   register classes `h` (i16), `r` (i32), `l` (i64, pointers), `f` (f32), `d`
//!   (f64) and `n` (integer constants) ([`Rule::InlineAsm`]);
//! - what libNVVM cannot compile is refused: 128-bit integers converted to or from
//!   floats, and division or remainder on `i1` ([`Rule::Unsupported`]).
//!
//! [`InstData`]: crate::InstData

mod casts;
mod function;
mod globals;
mod insts;
mod integrity;

use std::fmt;

use crate::display::display_inst;
use crate::entities::{Block, FuncId, GlobalId, Inst, Ty};
use crate::module::Module;

/// Which rule an error breaks. See the [module docs](self) for each rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// A handle out of bounds or inconsistent tables.
    Handle,
    /// An invalid or duplicate symbol.
    Symbol,
    /// A type mismatch or an unsupported type.
    Type,
    /// A global outside the global, shared and constant spaces.
    GlobalSpace,
    /// An alignment that is not a power of two.
    Alignment,
    /// An initialized or read-only shared global.
    SharedGlobal,
    /// An initializer whose length differs from the global's size.
    InitializerSize,
    /// A relocation slot outside its global.
    RelocationBounds,
    /// Overlapping relocation slots.
    RelocationOverlap,
    /// A relocation to a shared global or beyond its target, to a kernel, or
    /// into a function.
    RelocationTarget,
    /// Relocations that form a cycle.
    RelocationCycle,
    /// A malformed kernel or declaration.
    FunctionShape,
    /// A malformed entry block.
    EntryBlock,
    /// A block without exactly one terminator at its end.
    Terminator,
    /// Branch arguments that do not match the target's parameters.
    BranchArgs,
    /// A use not dominated by its definition.
    Dominance,
    /// A load, store or atomic through a pointer of the wrong address space.
    AccessSpace,
    /// A write to a read-only global.
    ReadOnly,
    /// A bitcast that changes the address space.
    BitcastSpace,
    /// An addrspacecast between two non-generic spaces, or within one.
    AddrSpaceCast,
    /// A call to a kernel, or with mismatched arguments.
    Call,
    /// Duplicate or oversized switch cases.
    Switch,
    /// An atomic with an ordering or type it cannot have.
    Atomic,
    /// Inline-asm constraints that do not match.
    InlineAsm,
    /// An operation NVVM cannot compile.
    Unsupported,
}

impl Rule {
    /// The rule's short name, shown in brackets after each message.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Handle => "handle",
            Rule::Symbol => "symbol",
            Rule::Type => "type",
            Rule::GlobalSpace => "global-space",
            Rule::Alignment => "alignment",
            Rule::SharedGlobal => "shared-global",
            Rule::InitializerSize => "initializer-size",
            Rule::RelocationBounds => "relocation-bounds",
            Rule::RelocationOverlap => "relocation-overlap",
            Rule::RelocationTarget => "relocation-target",
            Rule::RelocationCycle => "relocation-cycle",
            Rule::FunctionShape => "function-shape",
            Rule::EntryBlock => "entry-block",
            Rule::Terminator => "terminator",
            Rule::BranchArgs => "branch-args",
            Rule::Dominance => "dominance",
            Rule::AccessSpace => "access-space",
            Rule::ReadOnly => "read-only",
            Rule::BitcastSpace => "bitcast-space",
            Rule::AddrSpaceCast => "addrspacecast",
            Rule::Call => "call",
            Rule::Switch => "switch",
            Rule::Atomic => "atomic",
            Rule::InlineAsm => "inline-asm",
            Rule::Unsupported => "unsupported",
        }
    }
}

/// The entity an error is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// The module as a whole.
    Module,
    /// An interned type.
    Type(Ty),
    /// A global.
    Global(GlobalId),
    /// A function.
    Function(FuncId),
    /// A block of a function.
    Block(FuncId, Block),
    /// An instruction of a function.
    Inst(FuncId, Inst),
}

/// One verifier error: where, what, and which rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifierError {
    /// The entity.
    pub location: Location,
    /// The entity's name and text form, e.g. `@k inst3 (v2 = load i32, v1, align 4)`.
    pub context: String,
    /// What is wrong.
    pub message: String,
    /// The rule broken.
    pub rule: Rule,
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} [{}]",
            self.context,
            self.message,
            self.rule.name()
        )
    }
}

impl std::error::Error for VerifierError {}

/// Every error the verifier found, in a deterministic order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct VerifierErrors(pub Vec<VerifierError>);

impl fmt::Display for VerifierErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(
            f,
            "the device-IR verifier found {n} error{}:",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.0 {
            writeln!(f, "  {e}")?;
        }
        Ok(())
    }
}

impl VerifierErrors {
    /// Whether any error breaks `rule`.
    pub fn has(&self, rule: Rule) -> bool {
        self.0.iter().any(|e| e.rule == rule)
    }
}

/// Verifies `module`, returning every error found.
///
/// # Errors
/// [`VerifierErrors`] listing each broken rule with its entity.
pub fn verify(module: &Module) -> Result<(), VerifierErrors> {
    let mut sink = Sink {
        module,
        errors: Vec::new(),
    };
    let types_ok = integrity::check_types(&mut sink);
    let globals_ok = integrity::check_globals(&mut sink);
    if types_ok {
        globals::check_types(&mut sink);
    }
    globals::check_symbols(&mut sink);
    if globals_ok {
        globals::check_globals(&mut sink);
        globals::check_relocation_cycles(&mut sink);
    }
    for (id, _) in module.functions.iter() {
        let ok = integrity::check_function(&mut sink, id);
        if ok && types_ok && globals_ok {
            function::check_function(&mut sink, id);
        }
    }
    if sink.errors.is_empty() {
        Ok(())
    } else {
        Err(VerifierErrors(sink.errors))
    }
}

/// Collects errors, rendering each location's context.
pub(crate) struct Sink<'a> {
    pub module: &'a Module,
    pub errors: Vec<VerifierError>,
}

impl Sink<'_> {
    pub fn report(&mut self, location: Location, rule: Rule, message: impl Into<String>) {
        let context = self.context(location);
        self.errors.push(VerifierError {
            location,
            context,
            message: message.into(),
            rule,
        });
    }

    fn context(&self, location: Location) -> String {
        let m = self.module;
        let fname = |f: FuncId| {
            m.functions
                .get(f)
                .map_or("?", |d| d.name.as_str())
                .to_owned()
        };
        match location {
            Location::Module => "module".to_owned(),
            Location::Type(ty) => format!("{ty} ({})", m.types.display(ty)),
            Location::Global(g) => {
                format!(
                    "{g} @{}",
                    m.globals.get(g).map_or("?", |d| d.symbol.as_str())
                )
            }
            Location::Function(f) => format!("{f} @{}", fname(f)),
            Location::Block(f, b) => format!("{f} @{} {b}", fname(f)),
            Location::Inst(f, i) => {
                let text = match m.functions.get(f).and_then(|d| d.body.as_ref()) {
                    Some(body) => display_inst(m, body, i),
                    None => "?".to_owned(),
                };
                format!("{f} @{} {i} ({text})", fname(f))
            }
        }
    }
}
