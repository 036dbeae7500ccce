//! The typed module: what a PTX file declares and defines.

use crate::error::Pos;
use crate::inst::{Instruction, Modifier, StateSpace, Type};

/// A whole PTX file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Module {
    /// `.version major.minor`.
    pub version: Option<(u32, u32)>,
    /// `.target` entries (`sm_90`, `debug`).
    pub target: Vec<String>,
    /// `.address_size`, in bits.
    pub address_size: Option<u32>,
    /// `.file` entries: (number, path).
    pub files: Vec<(u32, String)>,
    /// Module-scope variables, in order.
    pub globals: Vec<Variable>,
    /// Functions, prototypes and definitions, in order.
    pub functions: Vec<Function>,
}

/// Linkage of a module-scope symbol.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// `.visible`: defined here, seen by other modules.
    Visible,
    /// `.extern`: defined elsewhere.
    Extern,
    /// `.weak`
    Weak,
    /// `.common`
    Common,
}

/// A variable declaration, at module scope or in a body
/// (`.global .align 4 .b8 x[8] = {1, 2};`, `.local .align 8 .b8 __local_depot0[16];`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Its linkage, if written.
    pub linkage: Option<Linkage>,
    /// Its state space.
    pub space: StateSpace,
    /// `.align`, in bytes.
    pub align: Option<u32>,
    /// The element type.
    pub ty: Type,
    /// The name.
    pub name: String,
    /// The array dimensions (`[16]`), `None` for `[]`; empty for a scalar.
    pub dims: Vec<Option<u64>>,
    /// The initializer, if any.
    pub init: Option<Initializer>,
    /// Where the declaration starts.
    pub pos: Pos,
}

/// An initializer: a value or a braced list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Initializer {
    /// One value.
    Value(InitValue),
    /// `{a, b, ...}`, possibly nested for multi-dimensional arrays.
    List(Vec<Initializer>),
}

/// One initializer value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InitValue {
    /// An integer.
    Int(i128),
    /// A single-precision value by its bits.
    F32(u32),
    /// A double-precision value by its bits.
    F64(u64),
    /// The address of a symbol: `sym+off`, `generic(sym)+off`, or one byte of
    /// it in a `.b8`/`.u8` array (`0xFF00(generic(sym)+off)`, the mask naming
    /// the byte).
    Address {
        /// The symbol.
        symbol: String,
        /// `generic(...)`: the generic address rather than the state space's.
        generic: bool,
        /// The addend.
        offset: i64,
        /// The byte mask of a `.b8` slot, `None` for a whole address.
        mask: Option<u64>,
    },
}

/// `.entry` (a kernel) or `.func`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// `.entry`
    Entry,
    /// `.func`
    Func,
}

/// A `.param` (or `.reg`) in a function's parameter or return list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// `.param` or `.reg`.
    pub space: StateSpace,
    /// `.align`, in bytes.
    pub align: Option<u32>,
    /// The type.
    pub ty: Type,
    /// `.ptr` attributes: the pointee's state space and alignment.
    pub ptr: Option<(Option<StateSpace>, Option<u32>)>,
    /// The name.
    pub name: String,
    /// The array length (`.b8 p[16]`), if any.
    pub array: Option<u64>,
}

/// A `.func` or `.entry`, a prototype or a definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its linkage, if written.
    pub linkage: Option<Linkage>,
    /// `.entry` or `.func`.
    pub kind: FunctionKind,
    /// The symbol.
    pub name: String,
    /// The return parameters (`.func (.param .b64 func_retval0) f`).
    pub returns: Vec<Param>,
    /// The parameters.
    pub params: Vec<Param>,
    /// Performance directives between the header and the body
    /// (`.maxntid 256, 1, 1`), as (directive, values).
    pub directives: Vec<(String, Vec<u64>)>,
    /// The body, `None` for a prototype.
    pub body: Option<Vec<Statement>>,
    /// Where the header starts.
    pub pos: Pos,
}

/// A call prototype: the return and argument parameters of an indirect
/// call, whose names are all `_`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallPrototype {
    /// The label naming it.
    pub name: String,
    /// The return parameters (none or one).
    pub returns: Vec<Param>,
    /// The argument parameters.
    pub params: Vec<Param>,
}

/// A register declaration: `.reg .b32 %r<12>;` (a count) or `.reg .b64 %SP;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    /// The type.
    pub ty: Type,
    /// The name, or the prefix of a counted range.
    pub name: String,
    /// `<n>`: registers `name0` .. `name{n-1}`.
    pub count: Option<u32>,
}

/// One statement of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Statement {
    /// A label (`$L__BB0_1:`).
    Label(String),
    /// `.reg` declarations (one per name of the statement).
    Reg(Vec<RegDecl>),
    /// A variable (`.local`, `.shared`, `.param` in a call sequence).
    Var(Variable),
    /// An instruction.
    Inst(Instruction),
    /// A nested `{ ... }` scope (a call sequence).
    Block(Vec<Statement>),
    /// `name: .callprototype (.param .b32 _) _ (.param .b64 _);`: the
    /// signature an indirect `call` names as its last operand.
    CallPrototype(CallPrototype),
    /// `.pragma "..."`.
    Pragma(String),
    /// `.loc file line col`.
    Loc(u32, u32, u32),
}

fn walk<'a>(body: &'a [Statement], out: &mut Vec<&'a Statement>) {
    for s in body {
        match s {
            Statement::Block(inner) => walk(inner, out),
            other => out.push(other),
        }
    }
}

impl Function {
    /// Whether this is a definition (it has a body).
    pub fn defined(&self) -> bool {
        self.body.is_some()
    }

    /// `.entry` rather than `.func`.
    pub fn is_entry(&self) -> bool {
        self.kind == FunctionKind::Entry
    }

    /// Every statement of the body, nested scopes flattened, in order.
    pub fn statements(&self) -> Vec<&Statement> {
        let mut out = Vec::new();
        walk(self.body.as_deref().unwrap_or(&[]), &mut out);
        out
    }

    /// The instructions of the body at any nesting depth, in order.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.statements().into_iter().filter_map(|s| match s {
            Statement::Inst(i) => Some(i),
            _ => None,
        })
    }

    /// The variables the body declares, at any nesting depth.
    pub fn vars(&self) -> impl Iterator<Item = &Variable> {
        self.statements().into_iter().filter_map(|s| match s {
            Statement::Var(v) => Some(v),
            _ => None,
        })
    }

    /// The `.local` variables the body declares (a stack depot among them).
    pub fn locals(&self) -> impl Iterator<Item = &Variable> {
        self.vars().filter(|v| v.space == StateSpace::Local)
    }

    /// The instructions that name the `.local` state space (`ld.local`,
    /// `st.local`, `cvta.local`, `cvta.to.local`).
    pub fn local_accesses(&self) -> impl Iterator<Item = &Instruction> {
        self.instructions()
            .filter(|i| i.modifiers.contains(&Modifier::Space(StateSpace::Local)))
    }

    /// The instructions whose full opcode is `op` or starts with `op.`
    /// (`bar.sync` matches `bar.sync` and `bar.sync.aligned`).
    pub fn instructions_with_opcode<'a>(
        &'a self,
        op: &'a str,
    ) -> impl Iterator<Item = &'a Instruction> {
        self.instructions().filter(move |i| {
            let full = i.full_opcode();
            full == op || full.strip_prefix(op).is_some_and(|r| r.starts_with('.'))
        })
    }
}

impl Module {
    /// The definition (not a prototype) of function `name`.
    pub fn definition(&self, name: &str) -> Option<&Function> {
        self.functions
            .iter()
            .find(|f| f.name == name && f.defined())
    }

    /// The module-scope variable `name`.
    pub fn global(&self, name: &str) -> Option<&Variable> {
        self.globals.iter().find(|v| v.name == name)
    }

    /// Every instruction of every defined function, with the function.
    pub fn instructions(&self) -> impl Iterator<Item = (&Function, &Instruction)> {
        self.functions
            .iter()
            .flat_map(|f| f.instructions().map(move |i| (f, i)))
    }
}
