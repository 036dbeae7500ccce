//! A typed reader of the PTX that libNVVM emits.
//!
//! **Owns:** the PTX text grammar the workspace reads: the lexer
//! (comments dropped), the parser, and the typed [`Module`]: directives
//! (`.version`, `.target`, `.address_size`, `.file`), module-scope variables
//! with linkage, alignment, arrays and initializers (including the
//! `0xFF00(generic(sym)+off)` byte relocations libNVVM writes into `.b8`
//! arrays), `.entry` and `.func` prototypes and definitions with their
//! parameter and return lists, and bodies of register declarations, variables
//! (`.local` depots, call-sequence `.param`s), labels, nested scopes and
//! [`Instruction`]s. An instruction is an opcode (one of [`OPCODES`]), typed
//! [`Modifier`]s (type, state space, scope, ordering, rounding, comparison,
//! vector width, flags, operation selectors) and [`Operand`]s.
//!
//! **Does not own:** any meaning of PTX. It checks no operand count, no type
//! agreement, no register declaration; that is for a consumer (the shape
//! checks of `gpu-harness`, a future PTX virtual device or memory-model
//! translation). It depends on no crate of ours.
//!
//! **Border:** [`parse`] (and [`parse_instruction`] for one statement):
//! text in, a [`Module`] or a [`ParseError`] with the line and column of the
//! first token it cannot read. It never panics, whatever the input.

#![deny(missing_docs)]

mod error;
mod inst;
mod lexer;
mod module;
mod parser;

pub use error::{ErrorKind, ParseError, Pos};
pub use inst::{
    AddressBase, Cmp, Flag, Guard, Instruction, Modifier, OPCODES, Operand, Rounding, Scope,
    Semantics, StateSpace, Type,
};
pub use module::{
    CallPrototype, Function, FunctionKind, InitValue, Initializer, Linkage, Module, Param, RegDecl,
    Statement, Variable,
};
pub use parser::MAX_DEPTH;

/// The position just past the end of `text`, for "end of input" errors.
fn end_pos(text: &str) -> Pos {
    let line = text.matches('\n').count() + 1;
    let col = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Pos {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        col: u32::try_from(col).unwrap_or(u32::MAX),
    }
}

/// Reads a whole PTX file.
///
/// # Errors
/// The first token that does not fit the grammar, with its position.
pub fn parse(text: &str) -> Result<Module, ParseError> {
    // libNVVM's output buffer is a C string: its NUL terminator may come along.
    let text = text.trim_end_matches('\0');
    let toks = lexer::lex(text)?;
    parser::Parser::new(toks, end_pos(text)).module()
}

/// Reads one instruction statement, with or without its `;`
/// (`ld.acquire.sys.u32 %r1, [%rd1]`).
///
/// # Errors
/// The first token that does not fit an instruction, with its position.
pub fn parse_instruction(text: &str) -> Result<Instruction, ParseError> {
    let text = text.trim_end().strip_suffix(';').unwrap_or(text);
    let mut p = parser::Parser::new(lexer::lex(text)?, end_pos(text));
    let i = p.instruction()?;
    p.at_end()?;
    Ok(i)
}
