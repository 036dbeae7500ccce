//! Statements, rvalues and terminators: the contents of a basic block.

use super::cursor::Cursor;
use super::error::ParseError;
use super::lexer::Tok;
use super::operand::{at_operand, parse_const, parse_local, parse_operand, parse_place};
use super::ty::{PathStyle, parse_path, parse_ty};
use crate::model::{
    AggregateKind, ArrayLen, BasicBlock, BinOp, Callee, CastKind, ConstOperand, Mutability,
    Operand, Place, Rvalue, StatementKind, TerminatorKind, UnOp, UnwindAction,
};
use cranelift_entity::EntityRef;

/// One line of a block: a statement, or the terminator that ends it.
pub enum BlockLine {
    /// A statement.
    Statement(StatementKind),
    /// The terminator.
    Terminator(TerminatorKind),
}

/// Parses one `...;` line of a block.
pub fn parse_block_line(c: &mut Cursor) -> Result<BlockLine, ParseError> {
    let line = parse_line_inner(c)?;
    c.expect_punct(";")?;
    Ok(line)
}

fn parse_line_inner(c: &mut Cursor) -> Result<BlockLine, ParseError> {
    use BlockLine::{Statement as S, Terminator as T};
    let word = match c.peek() {
        Some(Tok::Ident(w)) => w.clone(),
        Some(Tok::Punct("(")) => return parse_assign_or_call(c),
        _ => return Err(c.expected("a statement")),
    };
    let call_like = matches!(c.peek_nth(1), Some(Tok::Punct("(")));
    match word.as_str() {
        "StorageLive" | "StorageDead" if call_like => {
            c.bump()?;
            c.expect_punct("(")?;
            let local = parse_local(c)?;
            c.expect_punct(")")?;
            Ok(S(if word == "StorageLive" {
                StatementKind::StorageLive(local)
            } else {
                StatementKind::StorageDead(local)
            }))
        }
        "Deinit" | "PlaceMention" if call_like => {
            c.bump()?;
            c.expect_punct("(")?;
            let place = parse_place(c)?;
            c.expect_punct(")")?;
            Ok(S(if word == "Deinit" {
                StatementKind::Deinit(place)
            } else {
                StatementKind::PlaceMention(place)
            }))
        }
        "discriminant" if call_like => {
            c.bump()?;
            c.expect_punct("(")?;
            let place = parse_place(c)?;
            c.expect_punct(")")?;
            c.expect_punct("=")?;
            let v = c.expect_u64()?;
            let v = u32::try_from(v).map_err(|_| c.err("variant index out of range"))?;
            Ok(S(StatementKind::SetDiscriminant(place, v)))
        }
        "assume" if call_like => {
            c.bump()?;
            c.expect_punct("(")?;
            let op = parse_operand(c)?;
            c.expect_punct(")")?;
            Ok(S(StatementKind::Assume(op)))
        }
        "copy_nonoverlapping" if call_like => {
            c.bump()?;
            c.expect_punct("(")?;
            let named = |c: &mut Cursor, name: &str| -> Result<Operand, ParseError> {
                c.expect_keyword(name)?;
                c.expect_punct("=")?;
                parse_operand(c)
            };
            let dst = named(c, "dst")?;
            c.expect_punct(",")?;
            let src = named(c, "src")?;
            c.expect_punct(",")?;
            let count = named(c, "count")?;
            c.expect_punct(")")?;
            Ok(S(StatementKind::CopyNonOverlapping { dst, src, count }))
        }
        "nop" => {
            c.bump()?;
            Ok(S(StatementKind::Nop))
        }
        "ConstEvalCounter" => {
            c.bump()?;
            Ok(S(StatementKind::ConstEvalCounter))
        }
        "goto" => {
            c.bump()?;
            c.expect_punct("->")?;
            Ok(T(TerminatorKind::Goto(parse_bb(c)?)))
        }
        "return" => {
            c.bump()?;
            Ok(T(TerminatorKind::Return))
        }
        "unreachable" => {
            c.bump()?;
            Ok(T(TerminatorKind::Unreachable))
        }
        "resume" => {
            c.bump()?;
            Ok(T(TerminatorKind::UnwindResume))
        }
        "abort" | "terminate" => {
            c.bump()?;
            if c.eat_punct("(") {
                c.raw_until_close(")")?;
                c.expect_punct(")")?;
            }
            Ok(T(TerminatorKind::Terminate))
        }
        "asm" => {
            c.bump()?;
            c.expect_punct("!")?;
            c.expect_punct("(")?;
            let text = c.raw_until_close(")")?;
            c.expect_punct(")")?;
            c.expect_punct("->")?;
            let (target, _) = parse_targets(c, "return")?;
            Ok(T(TerminatorKind::InlineAsm { text, target }))
        }
        "switchInt" if call_like => parse_switch(c).map(T),
        "assert" if call_like => parse_assert(c).map(T),
        "drop" if call_like => {
            c.bump()?;
            c.expect_punct("(")?;
            let place = parse_place(c)?;
            c.expect_punct(")")?;
            c.expect_punct("->")?;
            let (target, unwind) = parse_targets(c, "return")?;
            let target = target.ok_or_else(|| c.err("`drop` without a return target"))?;
            Ok(T(TerminatorKind::Drop {
                place,
                target,
                unwind,
            }))
        }
        w if w.starts_with('_') && w[1..].chars().all(|c| c.is_ascii_digit()) => {
            parse_assign_or_call(c)
        }
        _ => Err(c.err(format!("unknown statement `{word}`"))),
    }
}

fn parse_bb(c: &mut Cursor) -> Result<BasicBlock, ParseError> {
    Ok(BasicBlock::new(c.expect_numbered("bb")? as usize))
}

/// `-> [return: bbN, unwind ...]`, `-> bbN`, `-> unwind unreachable`.
fn parse_targets(
    c: &mut Cursor,
    label: &str,
) -> Result<(Option<BasicBlock>, UnwindAction), ParseError> {
    if c.eat_punct("[") {
        c.expect_keyword(label)?;
        c.expect_punct(":")?;
        let target = parse_bb(c)?;
        let unwind = if c.eat_punct(",") {
            parse_unwind(c)?
        } else {
            UnwindAction::Continue
        };
        c.expect_punct("]")?;
        Ok((Some(target), unwind))
    } else if c.is_ident("unwind") {
        Ok((None, parse_unwind(c)?))
    } else {
        Ok((Some(parse_bb(c)?), UnwindAction::Continue))
    }
}

fn parse_unwind(c: &mut Cursor) -> Result<UnwindAction, ParseError> {
    c.expect_keyword("unwind")?;
    if c.eat_punct(":") {
        return Ok(UnwindAction::Cleanup(parse_bb(c)?));
    }
    let word = c.expect_ident()?;
    match word.as_str() {
        "continue" => Ok(UnwindAction::Continue),
        "unreachable" => Ok(UnwindAction::Unreachable),
        "terminate" => {
            c.expect_punct("(")?;
            let reason = c.raw_until_close(")")?;
            c.expect_punct(")")?;
            Ok(UnwindAction::Terminate(reason))
        }
        _ => Err(c.err(format!("unknown unwind action `{word}`"))),
    }
}

fn parse_switch(c: &mut Cursor) -> Result<TerminatorKind, ParseError> {
    c.expect_keyword("switchInt")?;
    c.expect_punct("(")?;
    let discr = parse_operand(c)?;
    c.expect_punct(")")?;
    c.expect_punct("->")?;
    c.expect_punct("[")?;
    let mut targets = Vec::new();
    loop {
        if c.eat_ident("otherwise") {
            c.expect_punct(":")?;
            let otherwise = parse_bb(c)?;
            c.expect_punct("]")?;
            return Ok(TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            });
        }
        let neg = c.eat_punct("-");
        let value = match c.bump()? {
            Tok::Int { digits, .. } => digits
                .parse::<u128>()
                .map_err(|_| c.err("switch value out of range"))?,
            Tok::Char(ch) => u128::from(u32::from(ch)),
            t => return Err(c.err(format!("expected a switch value, found {t}"))),
        };
        let value = if neg { value.wrapping_neg() } else { value };
        c.expect_punct(":")?;
        targets.push((value, parse_bb(c)?));
        c.expect_punct(",")?;
    }
}

fn parse_assert(c: &mut Cursor) -> Result<TerminatorKind, ParseError> {
    c.expect_keyword("assert")?;
    c.expect_punct("(")?;
    let expected = !c.eat_punct("!");
    let cond = parse_operand(c)?;
    c.expect_punct(",")?;
    let msg = match c.bump()? {
        Tok::Str(s) => s,
        t => return Err(c.err(format!("expected an assert message, found {t}"))),
    };
    let mut msg_args = Vec::new();
    while c.eat_punct(",") {
        msg_args.push(parse_operand(c)?);
    }
    c.expect_punct(")")?;
    c.expect_punct("->")?;
    let (target, unwind) = parse_targets(c, "success")?;
    let target = target.ok_or_else(|| c.err("`assert` without a success target"))?;
    Ok(TerminatorKind::Assert {
        cond,
        expected,
        msg,
        msg_args,
        target,
        unwind,
    })
}

/// `place = rvalue` or `place = f(args) -> ...`.
fn parse_assign_or_call(c: &mut Cursor) -> Result<BlockLine, ParseError> {
    let dest = parse_place(c)?;
    c.expect_punct("=")?;
    match parse_rvalue_or_call(c)? {
        RhsOrCall::Rvalue(rv) => Ok(BlockLine::Statement(StatementKind::Assign(dest, rv))),
        RhsOrCall::Call(func, args) => {
            c.expect_punct("->")?;
            let (target, unwind) = parse_targets(c, "return")?;
            Ok(BlockLine::Terminator(TerminatorKind::Call {
                func,
                args,
                destination: dest,
                target,
                unwind,
            }))
        }
    }
}

enum RhsOrCall {
    Rvalue(Rvalue),
    Call(Callee, Vec<Operand>),
}

fn parse_operand_list(c: &mut Cursor, close: &str) -> Result<Vec<Operand>, ParseError> {
    let mut ops = Vec::new();
    while !c.eat_punct(close) {
        ops.push(parse_operand(c)?);
        if !c.eat_punct(",") {
            c.expect_punct(close)?;
            break;
        }
    }
    Ok(ops)
}

fn parse_rvalue_or_call(c: &mut Cursor) -> Result<RhsOrCall, ParseError> {
    use RhsOrCall::Rvalue as R;
    if at_operand(c) {
        let op = parse_operand(c)?;
        if c.eat_ident("as") {
            let ty = parse_ty(c)?;
            c.expect_punct("(")?;
            let kind = parse_cast_kind(c)?;
            c.expect_punct(")")?;
            return Ok(R(Rvalue::Cast(kind, op, ty)));
        }
        if c.is_punct("(") {
            c.bump()?;
            let args = parse_operand_list(c, ")")?;
            return Ok(RhsOrCall::Call(Callee::Operand(op), args));
        }
        return Ok(R(Rvalue::Use(op)));
    }
    if c.eat_punct("&") {
        if c.eat_ident("raw") {
            let m = if c.eat_ident("mut") {
                Mutability::Mut
            } else {
                c.expect_keyword("const")?;
                // `&raw const (fake) p`: a raw borrow rustc makes only to
                // read `p`'s pointer metadata (a slice's length behind a
                // raw pointer); its value is that of `&raw const p`.
                if c.is_punct("(") && matches!(c.peek_nth(1), Some(Tok::Ident(w)) if w == "fake") {
                    c.expect_punct("(")?;
                    c.expect_ident()?;
                    c.expect_punct(")")?;
                }
                Mutability::Not
            };
            return Ok(R(Rvalue::RawPtr(m, parse_place(c)?)));
        }
        if c.eat_ident("fake") {
            c.expect_ident()?;
        }
        let m = if c.eat_ident("mut") {
            Mutability::Mut
        } else {
            Mutability::Not
        };
        return Ok(R(Rvalue::Ref(m, parse_place(c)?)));
    }
    if c.eat_punct("[") {
        if c.eat_punct("]") {
            return Ok(R(Rvalue::Aggregate(AggregateKind::Array, Vec::new())));
        }
        let first = parse_operand(c)?;
        if c.eat_punct(";") {
            // A count, or in a generic body a const parameter (`[x; C]`),
            // which only the body's instances know.
            let n = match c.peek() {
                Some(Tok::Int { .. }) => ArrayLen::Known(c.expect_u64()?),
                _ => ArrayLen::Unknown(c.raw_until_close("]")?),
            };
            c.expect_punct("]")?;
            return Ok(R(Rvalue::Repeat(first, n)));
        }
        let mut ops = vec![first];
        if c.eat_punct(",") {
            ops.extend(parse_operand_list(c, "]")?);
        } else {
            c.expect_punct("]")?;
        }
        return Ok(R(Rvalue::Aggregate(AggregateKind::Array, ops)));
    }
    if c.eat_punct("(") {
        let ops = parse_operand_list(c, ")")?;
        return Ok(R(Rvalue::Aggregate(AggregateKind::Tuple, ops)));
    }
    if c.is_punct("*") {
        c.bump()?;
        let m = if c.eat_ident("mut") {
            Mutability::Mut
        } else {
            c.expect_keyword("const")?;
            Mutability::Not
        };
        let ty = parse_ty(c)?;
        c.expect_keyword("from")?;
        c.expect_punct("(")?;
        let ops = parse_operand_list(c, ")")?;
        return Ok(R(Rvalue::Aggregate(AggregateKind::RawPtr(ty, m), ops)));
    }
    if let Some(Tok::Opaque(s)) = c.peek() {
        let s = s.clone();
        c.bump()?;
        let mut ops = Vec::new();
        // A closure that captures nothing prints no braces.
        if !c.eat_punct("{") {
            return Ok(R(Rvalue::Aggregate(AggregateKind::Opaque(s), ops)));
        }
        while !c.eat_punct("}") {
            c.bump()?;
            c.expect_punct(":")?;
            ops.push(parse_operand(c)?);
            c.eat_punct(",");
        }
        return Ok(R(Rvalue::Aggregate(AggregateKind::Opaque(s), ops)));
    }
    if let Some(Tok::Ident(w)) = c.peek().cloned()
        && matches!(c.peek_nth(1), Some(Tok::Punct("(")))
        && let Some(rv) = parse_builtin(c, &w)?
    {
        return Ok(R(rv));
    }
    let path = parse_path(c, PathStyle::Expr)?;
    if c.eat_ident("as") {
        // A function item reified to a pointer: `f as fn(i64) -> u32 (PointerCoercion(..))`.
        let ty = parse_ty(c)?;
        c.expect_punct("(")?;
        let kind = parse_cast_kind(c)?;
        c.expect_punct(")")?;
        return Ok(R(Rvalue::Cast(
            kind,
            Operand::Const(ConstOperand::FnItem(path)),
            ty,
        )));
    }
    if c.eat_punct("(") {
        let args = parse_operand_list(c, ")")?;
        if c.is_punct("->") {
            return Ok(RhsOrCall::Call(Callee::Item(path), args));
        }
        let kind = AggregateKind::Adt {
            path,
            field_names: Vec::new(),
        };
        return Ok(R(Rvalue::Aggregate(kind, args)));
    }
    if c.eat_punct("{") {
        let mut names = Vec::new();
        let mut ops = Vec::new();
        while !c.eat_punct("}") {
            names.push(c.expect_ident()?);
            c.expect_punct(":")?;
            ops.push(parse_operand(c)?);
            if !c.eat_punct(",") {
                c.expect_punct("}")?;
                break;
            }
        }
        return Ok(R(Rvalue::Aggregate(
            AggregateKind::Adt {
                path,
                field_names: names,
            },
            ops,
        )));
    }
    Ok(R(Rvalue::Aggregate(
        AggregateKind::Adt {
            path,
            field_names: Vec::new(),
        },
        Vec::new(),
    )))
}

/// Operators and other built-in rvalues written like calls: `Add(a, b)`,
/// `discriminant(p)`, `SizeOf(T)`. `None` if `name` is not one of them, or if a
/// `->` after the arguments shows it is a real call.
fn parse_builtin(c: &mut Cursor, name: &str) -> Result<Option<Rvalue>, ParseError> {
    let start = c.mark();
    let rv = match name {
        "discriminant" | "CopyForDeref" => {
            c.bump()?;
            c.bump()?;
            let place = parse_place(c)?;
            c.expect_punct(")")?;
            if name == "discriminant" {
                Rvalue::Discriminant(place)
            } else {
                Rvalue::CopyForDeref(place)
            }
        }
        "SizeOf" | "AlignOf" => {
            c.bump()?;
            c.bump()?;
            let ty = parse_ty(c)?;
            c.expect_punct(")")?;
            Rvalue::Nullary(name.to_string(), Some(ty))
        }
        "UbChecks" | "ContractChecks" => {
            c.bump()?;
            c.bump()?;
            c.expect_punct(")")?;
            Rvalue::Nullary(name.to_string(), None)
        }
        "Not" | "Neg" | "PtrMetadata" if matches!(c.peek_nth(2), Some(Tok::Ident(_))) => {
            c.bump()?;
            c.bump()?;
            let op = parse_operand(c)?;
            c.expect_punct(")")?;
            let un = match name {
                "Not" => UnOp::Not,
                "Neg" => UnOp::Neg,
                _ => UnOp::PtrMetadata,
            };
            Rvalue::UnaryOp(un, op)
        }
        _ => match BinOp::from_name(name) {
            Some(op) if matches!(c.peek_nth(2), Some(Tok::Ident(_))) => {
                c.bump()?;
                c.bump()?;
                let lhs = parse_operand(c)?;
                c.expect_punct(",")?;
                let rhs = parse_operand(c)?;
                c.expect_punct(")")?;
                Rvalue::BinaryOp(op, lhs, rhs)
            }
            _ => return Ok(None),
        },
    };
    if c.is_punct("->") {
        // A real call to a function that happens to share an operator's name.
        c.reset(start);
        return Ok(None);
    }
    Ok(Some(rv))
}

fn parse_cast_kind(c: &mut Cursor) -> Result<CastKind, ParseError> {
    let word = c.expect_ident()?;
    Ok(match word.as_str() {
        "IntToInt" => CastKind::IntToInt,
        "IntToFloat" => CastKind::IntToFloat,
        "FloatToInt" => CastKind::FloatToInt,
        "FloatToFloat" => CastKind::FloatToFloat,
        "PtrToPtr" => CastKind::PtrToPtr,
        "FnPtrToPtr" => CastKind::FnPtrToPtr,
        "PointerExposeProvenance" => CastKind::PointerExposeProvenance,
        "PointerWithExposedProvenance" => CastKind::PointerWithExposedProvenance,
        "Transmute" => CastKind::Transmute,
        "PointerCoercion" => {
            c.expect_punct("(")?;
            let inner = c.raw_until_close(")")?;
            c.expect_punct(")")?;
            CastKind::PointerCoercion(inner)
        }
        _ => return Err(c.err(format!("unknown cast kind `{word}`"))),
    })
}

/// A constant used where a whole line is a constant (one-line const items).
pub fn parse_const_line(c: &mut Cursor) -> Result<crate::model::ConstOperand, ParseError> {
    c.expect_keyword("const")?;
    let v = parse_const(c)?;
    c.expect_punct(";")?;
    Ok(v)
}

/// A place on its own, for callers outside this module.
pub fn parse_place_only(c: &mut Cursor) -> Result<Place, ParseError> {
    parse_place(c)
}
