//! Types and paths.

use super::cursor::Cursor;
use super::error::ParseError;
use super::lexer::Tok;
use crate::model::{ArrayLen, FloatTy, GenericArg, IntTy, Mutability, Path, PathSegment, Ty};

/// Whether `<` after a segment opens generic arguments (types) or needs `::<`
/// (expressions, where `<` could be a comparison in Rust; the printer keeps the
/// turbofish there).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// `Option<u32>`
    Type,
    /// `Option::<u32>::Some`
    Expr,
}

/// Parses a type, one nesting level deeper (see [`Cursor::nested`]): every
/// recursion through types (`&T`, `[T; N]`, tuples, generic arguments,
/// `fn` pointers) comes back here.
pub fn parse_ty(c: &mut Cursor) -> Result<Ty, ParseError> {
    c.nested("a type", parse_ty_level)
}

fn parse_ty_level(c: &mut Cursor) -> Result<Ty, ParseError> {
    match c.peek() {
        Some(Tok::Punct("&")) => {
            c.bump()?;
            if matches!(c.peek(), Some(Tok::Lifetime(_))) {
                c.bump()?;
            }
            let m = if c.eat_ident("mut") {
                Mutability::Mut
            } else {
                Mutability::Not
            };
            Ok(Ty::Ref(m, Box::new(parse_ty(c)?)))
        }
        Some(Tok::Punct("*")) => {
            c.bump()?;
            let m = if c.eat_ident("mut") {
                Mutability::Mut
            } else {
                c.expect_keyword("const")?;
                Mutability::Not
            };
            Ok(Ty::RawPtr(m, Box::new(parse_ty(c)?)))
        }
        Some(Tok::Punct("[")) => {
            c.bump()?;
            let elem = parse_ty(c)?;
            if c.eat_punct("]") {
                return Ok(Ty::Slice(Box::new(elem)));
            }
            c.expect_punct(";")?;
            let len = match c.peek() {
                Some(Tok::Int { digits, .. }) => {
                    let n = digits
                        .parse::<u64>()
                        .map_err(|_| c.err("array length out of range"))?;
                    c.bump()?;
                    ArrayLen::Known(n)
                }
                _ => ArrayLen::Unknown(c.raw_until_close("]")?),
            };
            c.expect_punct("]")?;
            Ok(Ty::Array(Box::new(elem), len))
        }
        Some(Tok::Punct("(")) => {
            c.bump()?;
            let mut elems = Vec::new();
            while !c.eat_punct(")") {
                elems.push(parse_ty(c)?);
                if !c.eat_punct(",") {
                    c.expect_punct(")")?;
                    break;
                }
            }
            Ok(Ty::Tuple(elems))
        }
        Some(Tok::Punct("!")) => {
            c.bump()?;
            Ok(Ty::Never)
        }
        Some(Tok::Opaque(s)) => {
            let s = s.clone();
            c.bump()?;
            Ok(Ty::Opaque(s))
        }
        Some(Tok::Ident(w)) if w == "fn" || w == "unsafe" || w == "extern" => parse_fn_ptr(c),
        // `for<'a, 'b> fn(&'a [u8]) -> u64`: a higher-ranked function
        // pointer; the binder names lifetimes only, which types here drop.
        // A function item's type keeps it, as rustc prints it: its text is
        // its name (a layout's key, a closure's generic argument).
        Some(Tok::Ident(w)) if w == "for" => {
            let start = c.mark();
            c.bump()?;
            c.expect_punct("<")?;
            while !c.eat_punct(">") {
                if !matches!(c.peek(), Some(Tok::Lifetime(_))) {
                    return Err(c.err("expected a lifetime in `for<..>`"));
                }
                c.bump()?;
                c.eat_punct(",");
            }
            match parse_ty(c)? {
                t if t.is_fn_item() => Ok(Ty::Opaque(c.text_between(start, c.mark()))),
                t => Ok(t),
            }
        }
        Some(Tok::Ident(w)) if w == "dyn" || w == "impl" => {
            let start = c.mark();
            c.bump()?;
            parse_bound(c)?;
            while c.eat_punct("+") {
                if matches!(c.peek(), Some(Tok::Lifetime(_))) {
                    c.bump()?;
                } else {
                    parse_bound(c)?;
                }
            }
            Ok(Ty::Opaque(c.text_between(start, c.mark())))
        }
        Some(Tok::Ident(w)) => {
            let prim = match w.as_str() {
                "bool" => Some(Ty::Bool),
                "char" => Some(Ty::Char),
                "str" => Some(Ty::Str),
                w => IntTy::from_name(w)
                    .map(Ty::Int)
                    .or_else(|| FloatTy::from_name(w).map(Ty::Float)),
            };
            // A primitive name followed by `::` is a path (`u32::MAX`), not a type.
            match prim {
                Some(t) if !matches!(c.peek_nth(1), Some(Tok::Punct("::"))) => {
                    c.bump()?;
                    Ok(t)
                }
                _ => Ok(Ty::Adt(parse_path(c, PathStyle::Type)?)),
            }
        }
        Some(Tok::Punct("<")) | Some(Tok::ImplAt(_)) => {
            Ok(Ty::Adt(parse_path(c, PathStyle::Type)?))
        }
        _ => Err(c.expected("a type")),
    }
}

/// A trait bound of `dyn` / `impl`: a path, with the parenthesized sugar of
/// the `Fn` traits (`impl Fn(f32) -> f32`, in a generic helper's signature).
/// Only those traits take the sugar: in `_4 as &dyn Debug (PointerCoercion(..))`
/// the parenthesis after the bound is the cast's kind.
fn parse_bound(c: &mut Cursor) -> Result<(), ParseError> {
    let path = parse_path(c, PathStyle::Type)?;
    let takes_sugar = matches!(
        path.last_name(),
        "Fn" | "FnMut" | "FnOnce" | "AsyncFn" | "AsyncFnMut" | "AsyncFnOnce"
    );
    if takes_sugar && c.eat_punct("(") {
        while !c.eat_punct(")") {
            parse_ty(c)?;
            if !c.eat_punct(",") {
                c.expect_punct(")")?;
                break;
            }
        }
        if c.eat_punct("->") {
            parse_ty(c)?;
        }
    }
    Ok(())
}

fn parse_fn_ptr(c: &mut Cursor) -> Result<Ty, ParseError> {
    let start = c.mark();
    c.eat_ident("unsafe");
    if c.eat_ident("extern") && matches!(c.peek(), Some(Tok::Str(_))) {
        c.bump()?;
    }
    c.expect_keyword("fn")?;
    c.expect_punct("(")?;
    let mut args = Vec::new();
    while !c.eat_punct(")") {
        args.push(parse_ty(c)?);
        if !c.eat_punct(",") {
            c.expect_punct(")")?;
            break;
        }
    }
    let ret = if c.eat_punct("->") {
        parse_ty(c)?
    } else {
        Ty::unit()
    };
    // A function item type prints as `fn(A) -> R {path}`; keep it opaque.
    if c.is_punct("{") {
        c.bump()?;
        c.raw_until_close("}")?;
        c.expect_punct("}")?;
        return Ok(Ty::Opaque(c.text_between(start, c.mark())));
    }
    Ok(Ty::FnPtr(args, Box::new(ret)))
}

/// Parses a path in the given style.
pub fn parse_path(c: &mut Cursor, style: PathStyle) -> Result<Path, ParseError> {
    let mut segments = Vec::new();
    loop {
        let name = match c.peek() {
            // A tuple struct's field after its struct: the array length of
            // `struct Pair(pub [f32; 2])` is `kernel::Pair::0::{constant#0}`.
            Some(Tok::Int {
                digits,
                suffix: None,
            }) if !segments.is_empty() => {
                let d = digits.clone();
                c.bump()?;
                d
            }
            _ => parse_segment_name(c)?,
        };
        let mut seg = PathSegment {
            name,
            args: Vec::new(),
        };
        if style == PathStyle::Type && c.is_punct("<") {
            seg.args = parse_generic_args(c)?;
        }
        segments.push(seg);
        if !c.is_punct("::") {
            break;
        }
        // `::<args>` (turbofish) attaches to the segment just read; `::<impl T>`
        // is an inherent-impl segment instead.
        if matches!(c.peek_nth(1), Some(Tok::Punct("<")))
            && !matches!(c.peek_nth(2), Some(Tok::Ident(w)) if w == "impl")
        {
            c.bump()?;
            if let Some(last) = segments.last_mut() {
                last.args = parse_generic_args(c)?;
            }
            if !c.is_punct("::") {
                break;
            }
        }
        // `promoted` is an ordinary segment; callers look for the `[N]` after it.
        c.bump()?;
    }
    Ok(Path { segments })
}

fn parse_segment_name(c: &mut Cursor) -> Result<String, ParseError> {
    match c.peek() {
        Some(Tok::Ident(s)) => {
            let s = s.clone();
            c.bump()?;
            Ok(s)
        }
        Some(Tok::ImplAt(s)) => {
            let s = format!("<impl at {s}>");
            c.bump()?;
            Ok(s)
        }
        Some(Tok::Disambiguator(s)) | Some(Tok::Opaque(s)) => {
            let s = s.clone();
            c.bump()?;
            Ok(s)
        }
        Some(Tok::Punct("<")) => {
            // `<T as Trait>` or `<impl T>`: a qualified segment, kept as text.
            let start = c.mark();
            c.bump()?;
            c.raw_until_close(">")?;
            c.expect_punct(">")?;
            Ok(c.text_between(start, c.mark()))
        }
        _ => Err(c.expected("a path")),
    }
}

fn parse_generic_args(c: &mut Cursor) -> Result<Vec<GenericArg>, ParseError> {
    c.expect_punct("<")?;
    let mut args = Vec::new();
    while !c.eat_punct(">") {
        let arg = match c.peek() {
            Some(Tok::Lifetime(l)) => {
                let l = l.clone();
                c.bump()?;
                GenericArg::Lifetime(l)
            }
            Some(Tok::Int { digits, .. }) => {
                let d = digits.clone();
                c.bump()?;
                GenericArg::Const(d)
            }
            Some(Tok::Punct("{")) => {
                let start = c.mark();
                c.bump()?;
                c.raw_until_close("}")?;
                c.expect_punct("}")?;
                GenericArg::Const(c.text_between(start, c.mark()))
            }
            Some(Tok::Ident(w)) if w == "true" || w == "false" => {
                let w = w.clone();
                c.bump()?;
                GenericArg::Const(w)
            }
            _ => GenericArg::Type(parse_ty(c)?),
        };
        args.push(arg);
        if !c.eat_punct(",") {
            c.expect_punct(">")?;
            break;
        }
    }
    Ok(args)
}
