//! Places, operands and constants.

use super::cursor::Cursor;
use super::error::ParseError;
use super::lexer::Tok;
use super::ty::{PathStyle, parse_path, parse_ty};
use crate::model::{
    AllocId, ConstOperand, FloatTy, IntTy, Local, Operand, Path, Place, PlaceElem, Scalar, ValTree,
};
use cranelift_entity::EntityRef;

/// Parses a local, `_N`.
pub fn parse_local(c: &mut Cursor) -> Result<Local, ParseError> {
    Ok(Local::new(c.expect_numbered("_")? as usize))
}

/// Parses a place: `_1`, `(*_1)`, `((*_1).0: u32)`, `(_1 as Some)`, `(*_2)[_3]`,
/// `_4[0 of 2]`, `_4[1:-1]`. Each parenthesized projection is one nesting
/// level (see [`Cursor::nested`]).
pub fn parse_place(c: &mut Cursor) -> Result<Place, ParseError> {
    c.nested("a place", parse_place_level)
}

fn parse_place_level(c: &mut Cursor) -> Result<Place, ParseError> {
    let mut place = if c.eat_punct("(") {
        if c.eat_punct("*") {
            let mut inner = parse_place(c)?;
            c.expect_punct(")")?;
            inner.projection.push(PlaceElem::Deref);
            inner
        } else {
            let mut inner = parse_place(c)?;
            if c.eat_punct(".") {
                let field = c.expect_u64()?;
                let field = u32::try_from(field).map_err(|_| c.err("field index out of range"))?;
                c.expect_punct(":")?;
                let ty = parse_ty(c)?;
                inner.projection.push(PlaceElem::Field(field, ty));
            } else if c.eat_ident("as") {
                let variant = c.expect_ident()?;
                inner.projection.push(PlaceElem::Downcast(variant));
            } else {
                return Err(c.expected("`.`, `as` or `)` in a place"));
            }
            c.expect_punct(")")?;
            inner
        }
    } else {
        Place::local(parse_local(c)?)
    };
    while c.eat_punct("[") {
        let elem = if matches!(c.peek(), Some(Tok::Ident(_))) {
            PlaceElem::Index(parse_local(c)?)
        } else if c.eat_punct(":") {
            // `[:-1]`: rustc leaves out a zero start (`let [init @ .., last]`).
            c.expect_punct("-")?;
            PlaceElem::Subslice {
                from: 0,
                to: c.expect_u64()?,
                from_end: true,
            }
        } else {
            let neg = c.eat_punct("-");
            let first = c.expect_u64()?;
            if c.eat_punct("..") {
                // `[1..4]`: an array subslice by absolute indices.
                let to = c.expect_u64()?;
                PlaceElem::Subslice {
                    from: first,
                    to,
                    from_end: false,
                }
            } else if c.eat_ident("of") {
                let min_length = c.expect_u64()?;
                PlaceElem::ConstantIndex {
                    offset: first,
                    min_length,
                    from_end: neg,
                }
            } else {
                c.expect_punct(":")?;
                if c.is_punct("]") {
                    // `[1:]`: to the end.
                    PlaceElem::Subslice {
                        from: first,
                        to: 0,
                        from_end: true,
                    }
                } else {
                    let from_end = c.eat_punct("-");
                    let to = c.expect_u64()?;
                    PlaceElem::Subslice {
                        from: first,
                        to,
                        from_end,
                    }
                }
            }
        };
        c.expect_punct("]")?;
        place.projection.push(elem);
    }
    Ok(place)
}

/// Parses an operand: `copy p`, `move p`, `const c`, or a function item's
/// path alone: rustc prints a constant of a function item's type without
/// `const` (`MultiCharEqSearcher::<..> { char_eq: char::is_whitespace, .. }`).
pub fn parse_operand(c: &mut Cursor) -> Result<Operand, ParseError> {
    if c.eat_ident("copy") {
        Ok(Operand::Copy(parse_place(c)?))
    } else if c.eat_ident("move") {
        Ok(Operand::Move(parse_place(c)?))
    } else if c.eat_ident("const") {
        Ok(Operand::Const(parse_const(c)?))
    } else if matches!(c.peek(), Some(Tok::Ident(_) | Tok::Punct("<"))) {
        let path = parse_path(c, PathStyle::Expr)?;
        Ok(Operand::Const(ConstOperand::FnItem(path)))
    } else {
        Err(c.expected("an operand (`copy`, `move` or `const`)"))
    }
}

/// Whether the next token starts an operand.
pub fn at_operand(c: &Cursor) -> bool {
    c.is_ident("copy") || c.is_ident("move") || c.is_ident("const")
}

/// Parses what follows `const` in an operand.
pub fn parse_const(c: &mut Cursor) -> Result<ConstOperand, ParseError> {
    match c.peek() {
        Some(Tok::Punct("{")) if matches!(c.peek_nth(1), Some(Tok::Ident(w)) if w == "transmute") =>
        {
            // `{transmute(0x00000002): T}`: raw bits of a type with no literal syntax.
            c.bump()?;
            c.bump()?;
            c.expect_punct("(")?;
            let bits = match c.bump()? {
                Tok::Int { digits, .. } => parse_int_digits(&digits),
                _ => None,
            }
            .ok_or_else(|| c.err("expected the bits of a transmuted constant"))?;
            c.expect_punct(")")?;
            c.expect_punct(":")?;
            let ty = parse_ty(c)?;
            c.expect_punct("}")?;
            Ok(ConstOperand::Transmuted { bits, ty })
        }
        Some(Tok::Punct("{")) if matches!(c.peek_nth(1), Some(Tok::Int { .. })) => {
            // `{0x0 as *const i32}`: a pointer whose value is an address, no
            // allocation (`ptr::null()`, `without_provenance`).
            c.bump()?;
            let bits = match c.bump()? {
                Tok::Int { digits, .. } => parse_int_digits(&digits),
                _ => None,
            }
            .ok_or_else(|| c.err("expected the address of a pointer constant"))?;
            if !c.is_ident("as") {
                return Err(c.err("expected `as` after a pointer constant's address"));
            }
            c.bump()?;
            let ty = parse_ty(c)?;
            c.expect_punct("}")?;
            Ok(ConstOperand::Transmuted { bits, ty })
        }
        Some(Tok::Punct("{")) => {
            c.bump()?;
            let alloc = parse_alloc_id(c)?;
            c.expect_punct(":")?;
            let ty = parse_ty(c)?;
            c.expect_punct("}")?;
            Ok(ConstOperand::Alloc { alloc, ty })
        }
        Some(Tok::Punct("(")) if matches!(c.peek_nth(1), Some(Tok::Punct(")"))) => {
            c.bump()?;
            c.bump()?;
            Ok(ConstOperand::Unit)
        }
        Some(Tok::Punct("<"))
            if matches!(c.peek_nth(1), Some(Tok::Ident(w)) if w == "uninit")
                && matches!(c.peek_nth(2), Some(Tok::Punct(">"))) =>
        {
            c.bump()?;
            c.bump()?;
            c.bump()?;
            Ok(ConstOperand::Uninit)
        }
        Some(Tok::Str(s)) => {
            let s = s.clone();
            c.bump()?;
            Ok(ConstOperand::Str(s))
        }
        Some(Tok::StaticRef(p)) => {
            let path = crate::model::Path::plain(p);
            c.bump()?;
            Ok(ConstOperand::StaticRef(path))
        }
        Some(Tok::ByteStr(b)) => {
            let b = b.clone();
            c.bump()?;
            Ok(ConstOperand::ByteStr(b))
        }
        Some(Tok::Ident(w))
            if w == "ZeroSized" && matches!(c.peek_nth(1), Some(Tok::Punct(":"))) =>
        {
            c.bump()?;
            c.bump()?;
            Ok(ConstOperand::ZeroSized(parse_ty(c)?))
        }
        Some(Tok::Ident(w))
            if w == "Indirect" && matches!(c.peek_nth(1), Some(Tok::Punct("{"))) =>
        {
            parse_indirect(c)
        }
        _ => {
            if let Some(s) = try_scalar(c)? {
                return Ok(ConstOperand::Scalar(s));
            }
            if c.is_punct("(") || c.is_punct("[") {
                return Ok(ConstOperand::Value(parse_valtree(c)?));
            }
            let path = parse_path(c, PathStyle::Expr)?;
            if path.last_name() == "promoted" && c.eat_punct("[") {
                let index = c.expect_u64()?;
                c.expect_punct("]")?;
                let mut owner = path;
                owner.segments.pop();
                let index =
                    u32::try_from(index).map_err(|_| c.err("promoted index out of range"))?;
                return Ok(ConstOperand::Promoted { owner, index });
            }
            match parse_path_value(c, path)? {
                ValTree::Path(p) => Ok(ConstOperand::Item(p)),
                v => Ok(ConstOperand::Value(v)),
            }
        }
    }
}

fn parse_alloc_id(c: &mut Cursor) -> Result<AllocId, ParseError> {
    Ok(AllocId(c.expect_numbered("alloc")?))
}

fn parse_indirect(c: &mut Cursor) -> Result<ConstOperand, ParseError> {
    c.expect_keyword("Indirect")?;
    c.expect_punct("{")?;
    c.expect_keyword("alloc_id")?;
    c.expect_punct(":")?;
    let alloc = parse_alloc_id(c)?;
    c.expect_punct(",")?;
    c.expect_keyword("offset")?;
    c.expect_punct(":")?;
    c.expect_keyword("Size")?;
    c.expect_punct("(")?;
    let offset = c.expect_u64()?;
    c.expect_keyword("bytes")?;
    c.expect_punct(")")?;
    c.expect_punct("}")?;
    c.expect_punct(":")?;
    let ty = parse_ty(c)?;
    Ok(ConstOperand::Indirect { alloc, offset, ty })
}

/// A scalar literal, if one is next: `3_u32`, `-5_i32`, `1.5f32`,
/// `9.99999974E-6f32`, `+Inf_f32`, `NaN_f64`, `true`, `'x'`.
///
/// rustc prints an infinity with an explicit sign (`+Inf_f32`, `-Inf_f32`);
/// a `+` is taken as a sign only before a float, so nothing else changes.
fn try_scalar(c: &mut Cursor) -> Result<Option<Scalar>, ParseError> {
    let neg = c.is_punct("-");
    let plus = !neg && c.is_punct("+") && is_float_token(c.peek_nth(1));
    let at = if neg || plus { 1 } else { 0 };
    let scalar = match c.peek_nth(at).cloned() {
        Some(Tok::Int { digits, suffix }) => {
            let ty = suffix
                .as_deref()
                .and_then(IntTy::from_name)
                .ok_or_else(|| c.err(format!("integer constant `{digits}` has no type suffix")))?;
            let magnitude =
                parse_int_digits(&digits).ok_or_else(|| c.err("integer out of range"))?;
            let bits = if neg {
                magnitude.wrapping_neg()
            } else {
                magnitude
            };
            Scalar::Int {
                bits: truncate(bits, ty.size()),
                ty,
            }
        }
        Some(Tok::Float { text, suffix }) => {
            let ty = FloatTy::from_name(&suffix)
                .ok_or_else(|| c.err(format!("float constant `{text}` has no type suffix")))?;
            float_scalar(c, &text, ty, neg)?
        }
        Some(Tok::Ident(w)) if float_special(&w).is_some() => {
            let (special, ty) = float_special(&w).ok_or_else(|| c.err("bad float"))?;
            special_scalar(c, special, ty, neg)?
        }
        Some(Tok::Ident(w)) if !neg && (w == "true" || w == "false") => Scalar::Bool(w == "true"),
        Some(Tok::Char(ch)) if !neg => Scalar::Char(ch),
        _ if neg => return Err(c.expected("a number after `-`")),
        _ => return Ok(None),
    };
    for _ in 0..=at {
        c.bump()?;
    }
    Ok(Some(scalar))
}

fn parse_int_digits(digits: &str) -> Option<u128> {
    match digits.strip_prefix("0x") {
        Some(hex) => u128::from_str_radix(hex, 16).ok(),
        None => digits.parse::<u128>().ok(),
    }
}

fn truncate(bits: u128, size: u64) -> u128 {
    if size >= 16 {
        bits
    } else {
        bits & ((1u128 << (size * 8)) - 1)
    }
}

/// A float that rustc prints as a word rather than digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FloatSpecial {
    /// `+Inf_f32` / `-Inf_f32` (the sign is a separate token).
    Inf,
    /// `NaN_f32`.
    NaN,
}

/// Whether `tok` is a float literal or a float word, i.e. what may follow a
/// sign in a float constant.
fn is_float_token(tok: Option<&Tok>) -> bool {
    match tok {
        Some(Tok::Float { .. }) => true,
        Some(Tok::Ident(w)) => float_special(w).is_some(),
        _ => false,
    }
}

/// Reads rustc's float words. rustc's printer (rustc_apfloat's `Display`,
/// then `_` and the type for a non-finite value) writes `+Inf_f32`,
/// `-Inf_f32` and `NaN_f32`; the unseparated `inff32`/`NaNf32` forms are
/// accepted too.
fn float_special(word: &str) -> Option<(FloatSpecial, FloatTy)> {
    for (sfx, ty) in [
        ("f16", FloatTy::F16),
        ("f32", FloatTy::F32),
        ("f64", FloatTy::F64),
        ("f128", FloatTy::F128),
    ] {
        if let Some(stem) = word.strip_suffix(sfx) {
            return match stem.strip_suffix('_').unwrap_or(stem) {
                "inf" | "Inf" => Some((FloatSpecial::Inf, ty)),
                "NaN" => Some((FloatSpecial::NaN, ty)),
                _ => None,
            };
        }
    }
    None
}

/// The bits of a float word. rustc prints every NaN as `NaN_f32`, whatever
/// its sign and payload, so the text cannot say which NaN it was; the parse
/// gives the one `f32::NAN` / `f64::NAN` is (the positive quiet NaN), which
/// is what a kernel's `NAN` constant is. A `-` before `NaN` (which rustc does
/// not print) flips the sign bit, as negation does.
fn special_scalar(
    c: &Cursor,
    special: FloatSpecial,
    ty: FloatTy,
    neg: bool,
) -> Result<Scalar, ParseError> {
    let bits = match (ty, special) {
        (FloatTy::F32, FloatSpecial::Inf) => u128::from(f32::INFINITY.to_bits()),
        (FloatTy::F32, FloatSpecial::NaN) => u128::from(f32::NAN.to_bits()),
        (FloatTy::F64, FloatSpecial::Inf) => u128::from(f64::INFINITY.to_bits()),
        (FloatTy::F64, FloatSpecial::NaN) => u128::from(f64::NAN.to_bits()),
        (FloatTy::F16 | FloatTy::F128, _) => {
            return Err(c.err(format!("{ty:?} constants are not supported")));
        }
    };
    let sign = match ty {
        FloatTy::F32 => 1u128 << 31,
        _ => 1u128 << 63,
    };
    Ok(Scalar::Float {
        bits: if neg { bits | sign } else { bits },
        ty,
    })
}

/// The bits of a float literal's digits: plain (`0.100000001`, `123456792`,
/// `0`) or scientific (`9.99999974E-6`, `1.0E+4`). rustc prints the shortest
/// digits that round-trip (9 significant for f32, 17 for f64), so the nearest
/// value, which `str::parse` gives, is bit-exactly the constant, subnormals
/// included. A leading `-` is a separate token; negating after the parse is
/// exact and gives `-0f32` its sign.
fn float_scalar(c: &Cursor, text: &str, ty: FloatTy, neg: bool) -> Result<Scalar, ParseError> {
    let bad = || c.err(format!("bad float literal `{text}`"));
    let bits = match ty {
        FloatTy::F32 => {
            let v: f32 = text.parse().map_err(|_| bad())?;
            u128::from((if neg { -v } else { v }).to_bits())
        }
        FloatTy::F64 => {
            let v: f64 = text.parse().map_err(|_| bad())?;
            u128::from((if neg { -v } else { v }).to_bits())
        }
        FloatTy::F16 | FloatTy::F128 => {
            return Err(c.err(format!("{ty:?} constants are not supported")));
        }
    };
    Ok(Scalar::Float { bits, ty })
}

/// Parses a printed value: `Foo {{ a: 1_u32 }}`, `Some(1_u32)`, `[1_u8, 2_u8]`,
/// `(1_u8, 2_u16)`, a literal or a path. Every value inside a value comes
/// back here, one nesting level deeper (see [`Cursor::nested`]).
fn parse_valtree(c: &mut Cursor) -> Result<ValTree, ParseError> {
    c.nested("a constant value", parse_valtree_level)
}

fn parse_valtree_level(c: &mut Cursor) -> Result<ValTree, ParseError> {
    if let Some(s) = try_scalar(c)? {
        // A pattern type's value prints its range after it: `7_u32 is 1..`.
        if c.eat_ident("is") {
            while !(c.is_punct(",") || c.is_punct(")") || c.is_punct("}") || c.at_end()) {
                c.bump()?;
            }
        }
        return Ok(ValTree::Scalar(s));
    }
    match c.peek().cloned() {
        Some(Tok::Str(s)) => {
            c.bump()?;
            Ok(ValTree::Str(s))
        }
        Some(Tok::ByteStr(b)) => {
            c.bump()?;
            Ok(ValTree::ByteStr(b))
        }
        Some(Tok::Punct("(")) => {
            c.bump()?;
            Ok(ValTree::Tuple(None, parse_valtree_list(c, ")")?))
        }
        Some(Tok::Punct("[")) => {
            c.bump()?;
            Ok(ValTree::Array(parse_valtree_list(c, "]")?))
        }
        Some(Tok::Punct("{")) => Ok(ValTree::Const(Box::new(parse_const(c)?))),
        Some(Tok::Ident(w))
            if (w == "ZeroSized" && matches!(c.peek_nth(1), Some(Tok::Punct(":"))))
                || (w == "Indirect" && matches!(c.peek_nth(1), Some(Tok::Punct("{")))) =>
        {
            Ok(ValTree::Const(Box::new(parse_const(c)?)))
        }
        _ => {
            let path = parse_path(c, PathStyle::Expr)?;
            parse_path_value(c, path)
        }
    }
}

fn parse_valtree_list(c: &mut Cursor, close: &str) -> Result<Vec<ValTree>, ParseError> {
    let mut elems = Vec::new();
    while !c.eat_punct(close) {
        elems.push(parse_valtree(c)?);
        if !c.eat_punct(",") {
            c.expect_punct(close)?;
            break;
        }
    }
    Ok(elems)
}

/// After a path in a value: `{{ f: v }}`, `(v, ..)` or nothing.
fn parse_path_value(c: &mut Cursor, path: Path) -> Result<ValTree, ParseError> {
    if c.is_punct("{") && matches!(c.peek_nth(1), Some(Tok::Punct("{"))) {
        c.bump()?;
        c.bump()?;
        let mut fields = Vec::new();
        while !c.is_punct("}") {
            let name = match c.bump()? {
                Tok::Ident(s) => s,
                Tok::Int { digits, .. } => digits,
                t => return Err(c.err(format!("expected a field name, found {t}"))),
            };
            c.expect_punct(":")?;
            fields.push((name, parse_valtree(c)?));
            if !c.eat_punct(",") {
                break;
            }
        }
        c.expect_punct("}")?;
        c.expect_punct("}")?;
        return Ok(ValTree::Struct(path, fields));
    }
    if c.is_punct("(") {
        c.bump()?;
        return Ok(ValTree::Tuple(Some(path), parse_valtree_list(c, ")")?));
    }
    Ok(ValTree::Path(path))
}
