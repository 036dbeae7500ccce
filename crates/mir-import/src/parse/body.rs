//! Item headers and body structure: `let`, `debug`, `scope` and blocks.

use cranelift_entity::{EntityRef, PrimaryMap};

use super::cursor::Cursor;
use super::error::ParseError;
use super::lexer::Tok;
use super::operand::{parse_const, parse_local};
use super::rvalue::{BlockLine, parse_block_line, parse_const_line, parse_place_only};
use super::span::NoteKind;
use super::ty::{PathStyle, parse_path, parse_ty};
use crate::model::{
    BasicBlock, BlockData, Body, BodyKind, DebugInfo, DebugValue, LocalDecl, Mutability, Scope,
    SourceInfo, Span, Statement, Terminator, TerminatorKind,
};

/// Parses one whole item (header and body). `ctfe` marks a body printed under
/// `// MIR FOR CTFE`.
pub fn parse_item(c: &mut Cursor, ctfe: bool) -> Result<Body, ParseError> {
    let pos = c.pos();
    let header = parse_header(c, ctfe)?;
    // `_0` is declared by a `let` in the body; one-line constants have none,
    // and `finish` fills it in from the header.
    let mut locals: Vec<Option<LocalDecl>> = vec![None];
    for (i, ty) in header.args.iter().enumerate() {
        set_local(
            &mut locals,
            i + 1,
            LocalDecl {
                ty: ty.clone(),
                mutable: false,
                is_arg: true,
            },
        );
    }
    let mut body = Body {
        path: header.path,
        kind: header.kind,
        return_ty: header.ret,
        arg_count: u32::try_from(header.args.len()).map_err(|_| c.err("too many arguments"))?,
        locals: PrimaryMap::new(),
        debug: Vec::new(),
        scopes: Vec::new(),
        blocks: PrimaryMap::new(),
        value: None,
        pos,
        span: None,
    };
    if header.one_line {
        body.value = Some(parse_const_line(c)?);
        return finish(c, body, locals, Vec::new());
    }
    c.expect_punct("{")?;
    let mut blocks: Vec<Option<BlockData>> = Vec::new();
    let mut return_place: Option<Span> = None;
    loop {
        match c.peek() {
            Some(Tok::Punct("}")) => {
                c.bump()?;
                break;
            }
            Some(Tok::Ident(w)) if w == "debug" => body.debug.push(parse_debug(c)?),
            Some(Tok::Ident(w)) if w == "let" => {
                parse_let(c, &mut locals)?;
                if let Some(n) = c.note(NoteKind::ReturnPlace) {
                    return_place = Some(n.span.clone());
                }
            }
            Some(Tok::Ident(w)) if w == "scope" => {
                let scope = parse_scope(c, &mut locals)?;
                body.scopes.push(scope);
            }
            Some(Tok::Ident(w)) if w.starts_with("bb") => {
                let (bb, data) = parse_block(c)?;
                let idx = bb.index();
                if blocks.len() <= idx {
                    blocks.resize(idx + 1, None);
                }
                if blocks[idx].replace(data).is_some() {
                    return Err(c.err(format!("block {bb} is defined twice")));
                }
            }
            None => return Err(c.err("truncated body: no closing `}`")),
            _ => return Err(c.expected("`let`, `debug`, `scope`, a block or `}`")),
        }
    }
    body.span = item_span(&body.kind, &blocks, return_place);
    finish(c, body, locals, blocks)
}

/// The span that stands for the whole item (see [`Body::span`]): a const's,
/// static's or promoted's `return` carries the item's own span, while a
/// function's `return` sits on its closing brace.
fn item_span(
    kind: &BodyKind,
    blocks: &[Option<BlockData>],
    return_place: Option<Span>,
) -> Option<Span> {
    if matches!(kind, BodyKind::Fn { .. }) {
        return return_place;
    }
    blocks
        .iter()
        .flatten()
        .map(|b| &b.terminator)
        .find(|t| matches!(t.kind, TerminatorKind::Return))
        .and_then(|t| t.source.as_ref())
        .map(|s| s.span.clone())
        .or(return_place)
}

/// The scope and span of what was just consumed, if printed.
fn source_info(c: &Cursor) -> Option<SourceInfo> {
    let n = c.note(NoteKind::Scope)?;
    Some(SourceInfo {
        scope: n.scope?,
        span: n.span.clone(),
    })
}

fn finish(
    c: &Cursor,
    mut body: Body,
    locals: Vec<Option<LocalDecl>>,
    blocks: Vec<Option<BlockData>>,
) -> Result<Body, ParseError> {
    if !c.at_end() {
        return Err(c.err("unexpected text after the end of the item"));
    }
    let mut locals = locals;
    if locals[0].is_none() {
        locals[0] = Some(LocalDecl {
            ty: body.return_ty.clone(),
            mutable: true,
            is_arg: false,
        });
    }
    for (i, decl) in locals.into_iter().enumerate() {
        let decl = decl.ok_or_else(|| {
            c.err(format!(
                "local _{i} is used in numbering but never declared"
            ))
        })?;
        body.locals.push(decl);
    }
    for (i, data) in blocks.into_iter().enumerate() {
        let data = data.ok_or_else(|| c.err(format!("block bb{i} is missing")))?;
        body.blocks.push(data);
    }
    if body.value.is_none() && body.blocks.is_empty() {
        return Err(c.err("body has no blocks"));
    }
    Ok(body)
}

fn set_local(locals: &mut Vec<Option<LocalDecl>>, idx: usize, decl: LocalDecl) {
    if locals.len() <= idx {
        locals.resize(idx + 1, None);
    }
    locals[idx] = Some(decl);
}

struct Header {
    path: crate::model::Path,
    kind: BodyKind,
    args: Vec<crate::model::Ty>,
    ret: crate::model::Ty,
    one_line: bool,
}

fn parse_header(c: &mut Cursor, ctfe: bool) -> Result<Header, ParseError> {
    if c.eat_ident("fn") {
        let path = parse_path(c, PathStyle::Expr)?;
        c.expect_punct("(")?;
        let mut args = Vec::new();
        while !c.eat_punct(")") {
            let n = parse_local(c)?;
            if n.index() != args.len() + 1 {
                return Err(c.err(format!("argument {n} out of order")));
            }
            c.expect_punct(":")?;
            args.push(parse_ty(c)?);
            if !c.eat_punct(",") {
                c.expect_punct(")")?;
                break;
            }
        }
        c.expect_punct("->")?;
        let ret = parse_ty(c)?;
        return Ok(Header {
            path,
            kind: BodyKind::Fn { ctfe },
            args,
            ret,
            one_line: false,
        });
    }
    let kind = if c.eat_ident("const") {
        BodyKind::Const
    } else if c.eat_ident("static") {
        if c.eat_ident("mut") {
            BodyKind::Static(Mutability::Mut)
        } else {
            BodyKind::Static(Mutability::Not)
        }
    } else if matches!(c.peek(), Some(Tok::Ident(_))) {
        // An anonymous const, printed without a keyword (`X::{constant#1}: usize`).
        BodyKind::Const
    } else {
        return Err(c.expected("`fn`, `const` or `static`"));
    };
    let mut path = parse_path(c, PathStyle::Expr)?;
    let mut kind = kind;
    if path.last_name() == "promoted" && c.eat_punct("[") {
        let index = c.expect_u64()?;
        c.expect_punct("]")?;
        path.segments.pop();
        let index = u32::try_from(index).map_err(|_| c.err("promoted index out of range"))?;
        kind = BodyKind::Promoted {
            owner: path.clone(),
            index,
        };
    }
    c.expect_punct(":")?;
    let ret = parse_ty(c)?;
    c.expect_punct("=")?;
    let one_line = c.is_ident("const");
    Ok(Header {
        path,
        kind,
        args: Vec::new(),
        ret,
        one_line,
    })
}

fn parse_let(c: &mut Cursor, locals: &mut Vec<Option<LocalDecl>>) -> Result<(), ParseError> {
    c.expect_keyword("let")?;
    let mutable = c.eat_ident("mut");
    let local = parse_local(c)?;
    c.expect_punct(":")?;
    let ty = parse_ty(c)?;
    c.expect_punct(";")?;
    if locals.get(local.index()).is_some_and(Option::is_some) {
        return Err(c.err(format!("local {local} is declared twice")));
    }
    set_local(
        locals,
        local.index(),
        LocalDecl {
            ty,
            mutable,
            is_arg: false,
        },
    );
    Ok(())
}

fn parse_debug(c: &mut Cursor) -> Result<DebugInfo, ParseError> {
    c.expect_keyword("debug")?;
    let name = c.raw_until_close("=>")?;
    c.expect_punct("=>")?;
    // A place starts with a local or a parenthesis; a constant with
    // `const`, or, for a function item (a zero-sized value), with its path
    // alone (`debug less => <u32 as std::cmp::PartialOrd>::lt;`).
    let is_local = |t: Option<&Tok>| {
        matches!(t, Some(Tok::Ident(w))
            if w.strip_prefix('_').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
    };
    let value = if c.eat_ident("const") {
        DebugValue::Const(parse_const(c)?)
    } else if c.is_punct("(") || is_local(c.peek()) {
        DebugValue::Place(parse_place_only(c)?)
    } else {
        DebugValue::Const(parse_const(c)?)
    };
    c.expect_punct(";")?;
    Ok(DebugInfo { name, value })
}

/// Parses a `scope N { .. }`, with its nested scopes, one nesting level
/// deeper each (see [`Cursor::nested`]).
fn parse_scope(c: &mut Cursor, locals: &mut Vec<Option<LocalDecl>>) -> Result<Scope, ParseError> {
    c.nested("a scope", |c| parse_scope_level(c, locals))
}

fn parse_scope_level(
    c: &mut Cursor,
    locals: &mut Vec<Option<LocalDecl>>,
) -> Result<Scope, ParseError> {
    c.expect_keyword("scope")?;
    let index = u32::try_from(c.expect_u64()?).map_err(|_| c.err("scope index out of range"))?;
    let inlined = if c.eat_punct("(") {
        c.expect_keyword("inlined")?;
        let text = c.raw_until_close(")")?;
        c.expect_punct(")")?;
        Some(text)
    } else {
        None
    };
    c.expect_punct("{")?;
    let callsite = c.note(NoteKind::Callsite).map(|n| n.span.clone());
    let mut scope = Scope {
        index,
        inlined,
        callsite,
        debug: Vec::new(),
        children: Vec::new(),
    };
    loop {
        match c.peek() {
            Some(Tok::Punct("}")) => {
                c.bump()?;
                return Ok(scope);
            }
            Some(Tok::Ident(w)) if w == "debug" => scope.debug.push(parse_debug(c)?),
            Some(Tok::Ident(w)) if w == "let" => parse_let(c, locals)?,
            Some(Tok::Ident(w)) if w == "scope" => scope.children.push(parse_scope(c, locals)?),
            None => return Err(c.err("truncated scope: no closing `}`")),
            _ => return Err(c.expected("`let`, `debug`, `scope` or `}` in a scope")),
        }
    }
}

fn parse_block(c: &mut Cursor) -> Result<(BasicBlock, BlockData), ParseError> {
    let bb = BasicBlock::new(c.expect_numbered("bb")? as usize);
    let cleanup = if c.eat_punct("(") {
        c.expect_keyword("cleanup")?;
        c.expect_punct(")")?;
        true
    } else {
        false
    };
    c.expect_punct(":")?;
    c.expect_punct("{")?;
    let mut statements = Vec::new();
    loop {
        let pos = c.pos();
        if c.is_punct("}") {
            return Err(c.err(format!("block {bb} has no terminator")));
        }
        if c.at_end() {
            return Err(c.err(format!("truncated block {bb}: no closing `}}`")));
        }
        match parse_block_line(c)? {
            BlockLine::Statement(kind) => statements.push(Statement {
                kind,
                pos,
                source: source_info(c),
            }),
            BlockLine::Terminator(kind) => {
                let source = source_info(c);
                c.expect_punct("}")?;
                let terminator = Terminator { kind, pos, source };
                return Ok((
                    bb,
                    BlockData {
                        cleanup,
                        statements,
                        terminator,
                    },
                ));
            }
        }
    }
}
