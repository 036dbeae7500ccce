//! Handle integrity: every local and block a body names exists.
//!
//! The parser reads each line on its own, so a body can name `_19` with only
//! two locals declared, or jump to `bb7` with three blocks. Like naga's
//! handle validation, this pass runs before anything indexes by handle, so
//! later stages may index freely and never panic on damaged MIR.

use cranelift_entity::EntityRef;

use super::body::{
    BasicBlock, Body, Callee, Local, Operand, Place, PlaceElem, Rvalue, StatementKind,
    TerminatorKind, UnwindAction,
};
use super::pos::Pos;

/// A handle that names nothing, at the statement or terminator that uses it.
/// The parser turns it into a positioned parse error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    /// A local beyond the declared ones.
    #[error("{local} is used but the body declares only {declared} locals")]
    Local {
        /// Where it is used.
        pos: Pos,
        /// The local.
        local: Local,
        /// How many locals the body declares.
        declared: usize,
    },
    /// A block beyond the body's blocks.
    #[error("jump to {block}, but the body has only {blocks} blocks")]
    Block {
        /// Where it is named.
        pos: Pos,
        /// The block.
        block: BasicBlock,
        /// How many blocks the body has.
        blocks: usize,
    },
}

impl HandleError {
    /// Where the offending handle is used.
    pub fn pos(&self) -> Pos {
        match self {
            HandleError::Local { pos, .. } | HandleError::Block { pos, .. } => *pos,
        }
    }
}

struct Check<'a> {
    body: &'a Body,
    pos: Pos,
}

impl Check<'_> {
    fn local(&self, l: Local) -> Result<(), HandleError> {
        if l.index() < self.body.locals.len() {
            Ok(())
        } else {
            Err(HandleError::Local {
                pos: self.pos,
                local: l,
                declared: self.body.locals.len(),
            })
        }
    }

    fn block(&self, b: BasicBlock) -> Result<(), HandleError> {
        if b.index() < self.body.blocks.len() {
            Ok(())
        } else {
            Err(HandleError::Block {
                pos: self.pos,
                block: b,
                blocks: self.body.blocks.len(),
            })
        }
    }

    fn place(&self, p: &Place) -> Result<(), HandleError> {
        self.local(p.local)?;
        for e in &p.projection {
            if let PlaceElem::Index(l) = e {
                self.local(*l)?;
            }
        }
        Ok(())
    }

    fn operand(&self, o: &Operand) -> Result<(), HandleError> {
        match o {
            Operand::Copy(p) | Operand::Move(p) => self.place(p),
            Operand::Const(_) => Ok(()),
        }
    }

    fn rvalue(&self, rv: &Rvalue) -> Result<(), HandleError> {
        match rv {
            Rvalue::Use(o)
            | Rvalue::Repeat(o, _)
            | Rvalue::Cast(_, o, _)
            | Rvalue::UnaryOp(_, o) => self.operand(o),
            Rvalue::Ref(_, p)
            | Rvalue::RawPtr(_, p)
            | Rvalue::Discriminant(p)
            | Rvalue::CopyForDeref(p) => self.place(p),
            Rvalue::BinaryOp(_, a, b) => {
                self.operand(a)?;
                self.operand(b)
            }
            Rvalue::Aggregate(_, ops) => ops.iter().try_for_each(|o| self.operand(o)),
            Rvalue::Nullary(..) => Ok(()),
        }
    }

    fn unwind(&self, u: &UnwindAction) -> Result<(), HandleError> {
        match u {
            UnwindAction::Cleanup(b) => self.block(*b),
            _ => Ok(()),
        }
    }
}

/// Checks every handle in `body`; the error points at the offending statement.
pub fn check_handles(body: &Body) -> Result<(), HandleError> {
    let mut c = Check {
        body,
        pos: body.pos,
    };
    for bb in body.blocks.values() {
        for st in &bb.statements {
            c.pos = st.pos;
            match &st.kind {
                StatementKind::Assign(p, rv) => {
                    c.place(p)?;
                    c.rvalue(rv)?;
                }
                StatementKind::StorageLive(l) | StatementKind::StorageDead(l) => c.local(*l)?,
                StatementKind::SetDiscriminant(p, _)
                | StatementKind::Deinit(p)
                | StatementKind::PlaceMention(p) => c.place(p)?,
                StatementKind::Assume(o) => c.operand(o)?,
                StatementKind::CopyNonOverlapping { dst, src, count } => {
                    c.operand(dst)?;
                    c.operand(src)?;
                    c.operand(count)?;
                }
                StatementKind::Nop | StatementKind::ConstEvalCounter => {}
            }
        }
        c.pos = bb.terminator.pos;
        match &bb.terminator.kind {
            TerminatorKind::Goto(b) => c.block(*b)?,
            TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } => {
                c.operand(discr)?;
                c.block(*otherwise)?;
                targets.iter().try_for_each(|(_, b)| c.block(*b))?;
            }
            TerminatorKind::Assert {
                cond,
                msg_args,
                target,
                unwind,
                ..
            } => {
                c.operand(cond)?;
                msg_args.iter().try_for_each(|o| c.operand(o))?;
                c.block(*target)?;
                c.unwind(unwind)?;
            }
            TerminatorKind::Drop {
                place,
                target,
                unwind,
            } => {
                c.place(place)?;
                c.block(*target)?;
                c.unwind(unwind)?;
            }
            TerminatorKind::Call {
                func,
                args,
                destination,
                target,
                unwind,
            } => {
                if let Callee::Operand(o) = func {
                    c.operand(o)?;
                }
                args.iter().try_for_each(|o| c.operand(o))?;
                c.place(destination)?;
                if let Some(t) = target {
                    c.block(*t)?;
                }
                c.unwind(unwind)?;
            }
            TerminatorKind::InlineAsm { target, .. } => {
                if let Some(t) = target {
                    c.block(*t)?;
                }
            }
            TerminatorKind::Return
            | TerminatorKind::Unreachable
            | TerminatorKind::UnwindResume
            | TerminatorKind::Terminate => {}
        }
    }
    Ok(())
}
