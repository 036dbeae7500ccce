//! [`Builder`]: programs built bottom-up, so that children always precede
//! parents, and finished through the verifier.

use super::{Access, BarrierKind};
use super::{Expr, IllFormed, InitStore, Program, Reg, Space, Stmt, StmtId, Ty, Value};

/// Builds a [`Program`] bottom-up, so that children always precede parents.
#[derive(Debug, Default)]
pub struct Builder {
    pub(super) stmts: Vec<Stmt>,
    pub(super) regs: Vec<String>,
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Declares a register.
    pub fn reg(&mut self, name: &str) -> Reg {
        self.regs.push(name.to_string());
        Reg((self.regs.len() - 1) as u16)
    }

    /// Adds a statement and returns its id.
    pub fn push(&mut self, stmt: Stmt) -> StmtId {
        self.stmts.push(stmt);
        StmtId((self.stmts.len() - 1) as u32)
    }

    /// `dst := val`.
    pub fn assign(&mut self, dst: Reg, val: impl Into<Expr>) -> StmtId {
        self.push(Stmt::Assign {
            dst,
            val: val.into(),
        })
    }

    /// `dst := ld [addr]`.
    pub fn load(
        &mut self,
        dst: Reg,
        space: Space,
        addr: impl Into<Expr>,
        ty: Ty,
        access: Access,
    ) -> StmtId {
        self.push(Stmt::Load {
            dst,
            space,
            addr: addr.into(),
            ty,
            access,
        })
    }

    /// `st [addr] := val`.
    pub fn store(
        &mut self,
        space: Space,
        addr: impl Into<Expr>,
        ty: Ty,
        val: impl Into<Expr>,
        access: Access,
    ) -> StmtId {
        self.push(Stmt::Store {
            space,
            addr: addr.into(),
            ty,
            val: val.into(),
            access,
        })
    }

    /// A barrier.
    pub fn barrier(&mut self, kind: BarrierKind) -> StmtId {
        self.push(Stmt::Barrier(kind))
    }

    /// A sequence.
    pub fn seq(&mut self, items: impl IntoIterator<Item = StmtId>) -> StmtId {
        self.push(Stmt::Seq(items.into_iter().collect()))
    }

    /// `if cond { then }`.
    pub fn if_then(&mut self, cond: Expr, then: StmtId) -> StmtId {
        let els = self.seq([]);
        self.push(Stmt::If { cond, then, els })
    }

    /// `loop { body }`, at most `bound` iterations in a completed run.
    pub fn bounded_loop(&mut self, body: StmtId, bound: u32) -> StmtId {
        self.push(Stmt::Loop { body, bound })
    }

    /// `break` out of the innermost loop.
    pub fn brk(&mut self) -> StmtId {
        self.push(Stmt::Break)
    }

    /// `for var in 0..count { body }`.
    pub fn for_loop(&mut self, var: Reg, count: u32, body: StmtId) -> StmtId {
        self.push(Stmt::For { var, count, body })
    }

    /// Finishes the program, or says why it is ill-formed. This is the path
    /// for programs built from external text ([`crate::herd`]) or by
    /// translation, where a failure is an input's fault, not a bug.
    ///
    /// # Errors
    /// [`IllFormed`] with every error of [`Program::verify`].
    pub fn try_finish(
        self,
        name: &str,
        bodies: Vec<StmtId>,
        init: Vec<InitStore>,
        names: &[(Value, &str)],
    ) -> Result<Program, IllFormed> {
        let program = Program {
            name: name.to_string(),
            stmts: self.stmts,
            cta_size: bodies.len() as u32,
            bodies,
            regs: self.regs,
            init,
            names: names.iter().map(|(a, n)| (*a, n.to_string())).collect(),
        };
        match program.verify() {
            Ok(()) => Ok(program),
            Err(errors) => Err(IllFormed {
                name: name.to_string(),
                errors,
            }),
        }
    }

    /// Finishes a program written in code (the corpus of [`crate::litmus`]).
    ///
    /// # Panics
    /// If the program fails [`Program::verify`]: the corpus is built in code, so
    /// a failure is a bug in the builder's caller. Text from outside goes
    /// through [`Builder::try_finish`] instead.
    pub fn finish(
        self,
        name: &str,
        bodies: Vec<StmtId>,
        init: Vec<InitStore>,
        names: &[(Value, &str)],
    ) -> Program {
        match self.try_finish(name, bodies, init, names) {
            Ok(program) => program,
            Err(e) => panic!("{e}"),
        }
    }
}
