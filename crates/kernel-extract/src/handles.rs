//! Handle integrity of an imported body, before extraction indexes it.
//!
//! `mir-import` parses what rustc prints and does not check that a block
//! target or a local names something that exists. Extraction indexes both
//! freely, so each body it inlines is checked here first: every block target
//! and every local in a place, an operand or an index is in bounds, and the
//! arguments fit the locals. A failure is a typed error naming the function
//! and the block, never a panic.

use mir_import::model::{
    BasicBlock, Body, Operand, Place, PlaceElem, Rvalue, StatementKind, TerminatorKind,
};

use crate::ExtractError;

/// Checks every block target and local of `body`.
///
/// # Errors
/// [`ExtractError::Unsupported`] naming the first out-of-bounds handle.
pub fn check(body: &Body) -> Result<(), ExtractError> {
    let function = body.path.def_path();
    let fail = |block: String, message: String| ExtractError::Unsupported {
        function: function.clone(),
        block,
        message,
    };
    if body.blocks.is_empty() {
        return Err(fail("-".into(), "a function body with no blocks".into()));
    }
    if body.arg_count as usize >= body.locals.len() {
        return Err(fail(
            "-".into(),
            format!(
                "{} arguments but {} locals",
                body.arg_count,
                body.locals.len()
            ),
        ));
    }
    let n_locals = body.locals.len();
    let n_blocks = body.blocks.len();
    for (bb, block) in body.blocks.iter() {
        let mut locals = Vec::new();
        let mut targets: Vec<BasicBlock> = Vec::new();
        for st in &block.statements {
            match &st.kind {
                StatementKind::Assign(p, rv) => {
                    place(p, &mut locals);
                    rvalue(rv, &mut locals);
                }
                StatementKind::StorageLive(l) | StatementKind::StorageDead(l) => locals.push(*l),
                StatementKind::SetDiscriminant(p, _)
                | StatementKind::Deinit(p)
                | StatementKind::PlaceMention(p) => place(p, &mut locals),
                StatementKind::Assume(o) => operand(o, &mut locals),
                StatementKind::CopyNonOverlapping { dst, src, count } => {
                    for o in [dst, src, count] {
                        operand(o, &mut locals);
                    }
                }
                StatementKind::Nop | StatementKind::ConstEvalCounter => {}
            }
        }
        match &block.terminator.kind {
            TerminatorKind::Goto(t) => targets.push(*t),
            TerminatorKind::SwitchInt {
                discr,
                targets: ts,
                otherwise,
            } => {
                operand(discr, &mut locals);
                targets.extend(ts.iter().map(|(_, t)| *t));
                targets.push(*otherwise);
            }
            TerminatorKind::Assert {
                cond,
                msg_args,
                target,
                ..
            } => {
                operand(cond, &mut locals);
                msg_args.iter().for_each(|o| operand(o, &mut locals));
                targets.push(*target);
            }
            TerminatorKind::Drop {
                place: p, target, ..
            } => {
                place(p, &mut locals);
                targets.push(*target);
            }
            TerminatorKind::Call {
                func,
                args,
                destination,
                target,
                ..
            } => {
                if let mir_import::model::Callee::Operand(o) = func {
                    operand(o, &mut locals);
                }
                args.iter().for_each(|o| operand(o, &mut locals));
                place(destination, &mut locals);
                targets.extend(target.iter().copied());
            }
            TerminatorKind::InlineAsm { target, .. } => targets.extend(target.iter().copied()),
            TerminatorKind::Return
            | TerminatorKind::Unreachable
            | TerminatorKind::UnwindResume
            | TerminatorKind::Terminate => {}
        }
        if let Some(t) = targets.iter().find(|t| t.as_u32() as usize >= n_blocks) {
            return Err(fail(
                format!("{bb}"),
                format!("target {t} is out of bounds ({n_blocks} blocks)"),
            ));
        }
        if let Some(l) = locals.iter().find(|l| l.as_u32() as usize >= n_locals) {
            return Err(fail(
                format!("{bb}"),
                format!("local {l} is out of bounds ({n_locals} locals)"),
            ));
        }
    }
    Ok(())
}

fn place(p: &Place, out: &mut Vec<mir_import::model::Local>) {
    out.push(p.local);
    for e in &p.projection {
        if let PlaceElem::Index(i) = e {
            out.push(*i);
        }
    }
}

fn operand(o: &Operand, out: &mut Vec<mir_import::model::Local>) {
    if let Operand::Copy(p) | Operand::Move(p) = o {
        place(p, out);
    }
}

fn rvalue(rv: &Rvalue, out: &mut Vec<mir_import::model::Local>) {
    match rv {
        Rvalue::Use(o) | Rvalue::Repeat(o, _) | Rvalue::Cast(_, o, _) | Rvalue::UnaryOp(_, o) => {
            operand(o, out)
        }
        Rvalue::BinaryOp(_, a, b) => {
            operand(a, out);
            operand(b, out);
        }
        Rvalue::Aggregate(_, ops) => ops.iter().for_each(|o| operand(o, out)),
        Rvalue::Ref(_, p)
        | Rvalue::RawPtr(_, p)
        | Rvalue::Discriminant(p)
        | Rvalue::CopyForDeref(p) => place(p, out),
        Rvalue::Nullary(..) => {}
    }
}
