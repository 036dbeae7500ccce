//! The text form of programs: `Display` for [`Program`], and the names
//! the printers share (mnemonics, barriers, locations). The text reads as the
//! reference writes programs, and it is what the snapshots of extracted
//! kernels pin.

use std::fmt;

use super::{
    Access, BarrierKind, Expr, Loc, Ordering, Program, Reg, RmwOp, Space, Stmt, StmtId, Ty,
};

impl Program {
    /// A location's display name: `data`, `sh[3]`, `g[7]`.
    pub fn loc_name(&self, loc: Loc) -> String {
        match loc.space {
            Space::Global => match self.names.get(&loc.addr) {
                Some(name) => name.clone(),
                None => format!("g[{}]", loc.addr),
            },
            Space::Shared if loc.addr >= super::SHARED_STRIDE => format!(
                "sh{}[{}]",
                loc.addr / super::SHARED_STRIDE,
                loc.addr % super::SHARED_STRIDE
            ),
            Space::Shared => format!("sh[{}]", loc.addr),
        }
    }

    /// Pretty-prints one statement and its children.
    pub fn write_stmt(&self, f: &mut dyn fmt::Write, id: StmtId, indent: usize) -> fmt::Result {
        let pad = "    ".repeat(indent);
        let reg = |r: &Reg| self.regs[usize::from(r.0)].clone();
        match self.stmt(id) {
            Stmt::Assign { dst, val } => writeln!(f, "{pad}{} := {}", reg(dst), self.expr(val)),
            Stmt::Load {
                dst,
                space,
                addr,
                ty,
                access,
            } => writeln!(
                f,
                "{pad}{} := {} {}",
                reg(dst),
                mnemonic("ld", *space, *ty, *access),
                self.addr_text(*space, addr)
            ),
            Stmt::Store {
                space,
                addr,
                ty,
                val,
                access,
            } => writeln!(
                f,
                "{pad}{} {} := {}",
                mnemonic("st", *space, *ty, *access),
                self.addr_text(*space, addr),
                self.expr(val)
            ),
            Stmt::Barrier(kind) => writeln!(f, "{pad}{}", barrier_name(*kind)),
            Stmt::Seq(items) => {
                for item in items {
                    self.write_stmt(f, *item, indent)?;
                }
                Ok(())
            }
            Stmt::If { cond, then, els } => {
                writeln!(f, "{pad}if {} {{", self.expr(cond))?;
                self.write_stmt(f, *then, indent + 1)?;
                if !matches!(self.stmt(*els), Stmt::Seq(v) if v.is_empty()) {
                    writeln!(f, "{pad}}} else {{")?;
                    self.write_stmt(f, *els, indent + 1)?;
                }
                writeln!(f, "{pad}}}")
            }
            Stmt::For { var, count, body } => {
                writeln!(f, "{pad}for {} in 0..{count} {{", reg(var))?;
                self.write_stmt(f, *body, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Rmw {
                dst,
                space,
                addr,
                ty,
                op,
                ordering,
            } => {
                let (name, operands) = match op {
                    RmwOp::Add(e) => ("add", self.expr(e)),
                    RmwOp::Exchange(e) => ("exch", self.expr(e)),
                    RmwOp::Cas {
                        expected,
                        new,
                        failure,
                    } => (
                        "cas",
                        format!(
                            "{}, {} (failure {})",
                            self.expr(expected),
                            self.expr(new),
                            ordering_name(*failure)
                        ),
                    ),
                };
                writeln!(
                    f,
                    "{pad}{} := {} {}, {operands}",
                    reg(dst),
                    mnemonic(
                        &format!("atom.{name}"),
                        *space,
                        *ty,
                        Access::Atomic(*ordering)
                    ),
                    self.addr_text(*space, addr),
                )
            }
            Stmt::Loop { body, bound } => {
                writeln!(f, "{pad}loop (at most {bound} iterations) {{")?;
                self.write_stmt(f, *body, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
            Stmt::Break => writeln!(f, "{pad}break"),
        }
    }

    fn addr_text(&self, space: Space, addr: &Expr) -> String {
        match (space, addr) {
            (Space::Global, Expr::Const(a)) => self.loc_name(Loc { space, addr: *a }),
            (Space::Global, e) => format!("g[{}]", self.expr(e)),
            (Space::Shared, e) => format!("sh[{}]", self.expr(e)),
        }
    }

    /// Pretty-prints an expression.
    pub fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Const(v) => v.to_string(),
            Expr::Reg(r) => self.regs[usize::from(r.0)].clone(),
            Expr::Tid => "tid".to_string(),
            Expr::Bin(op, a, b) => format!("({} {} {})", self.expr(a), op.symbol(), self.expr(b)),
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "program {} ({} threads)", self.name, self.threads())?;
        for init in &self.init {
            writeln!(f, "  init {} := {}", self.loc_name(init.loc), init.val)?;
        }
        let mut shown: Vec<StmtId> = Vec::new();
        for (t, body) in self.bodies.iter().enumerate() {
            if shown.contains(body) {
                continue;
            }
            shown.push(*body);
            let who: Vec<String> = self
                .bodies
                .iter()
                .enumerate()
                .filter(|(_, b)| *b == body)
                .map(|(u, _)| format!("T{u}"))
                .collect();
            let who = if who.len() > 4 {
                format!("T{t}..T{}", self.threads() - 1)
            } else {
                who.join(",")
            };
            writeln!(f, "  {who}:")?;
            self.write_stmt(f, *body, 2)?;
        }
        Ok(())
    }
}

/// The PTX-like mnemonic of a memory action: `ld.acquire.global.u32`.
pub fn mnemonic(op: &str, space: Space, ty: Ty, access: Access) -> String {
    let sem = match access {
        Access::Plain => "",
        Access::Atomic(Ordering::Relaxed) => ".relaxed",
        Access::Atomic(Ordering::Acquire) => ".acquire",
        Access::Atomic(Ordering::Release) => ".release",
        Access::Atomic(Ordering::AcqRel) => ".acq_rel",
    };
    let space = match space {
        Space::Global => ".global",
        Space::Shared => ".shared",
    };
    let ty = match ty {
        Ty::U32 => ".u32",
        Ty::F32 => ".f32",
    };
    format!("{op}{sem}{space}{ty}")
}

/// An ordering's name: `acquire`.
pub fn ordering_name(o: Ordering) -> &'static str {
    match o {
        Ordering::Relaxed => "relaxed",
        Ordering::Acquire => "acquire",
        Ordering::Release => "release",
        Ordering::AcqRel => "acq_rel",
    }
}

/// The display name of a barrier.
pub fn barrier_name(kind: BarrierKind) -> &'static str {
    match kind {
        BarrierKind::LegacyGlobal => "barrier.global (legacy)",
        BarrierKind::Shared => "bar.sync (shared)",
    }
}
