//! The parser: tokens into a [`Module`]. Recursive descent over the grammar of
//! the PTX libNVVM emits; every other token is an [`ErrorKind::Unexpected`]
//! at its position. Nesting (blocks, initializer lists, operand lists) is
//! bounded by [`MAX_DEPTH`], so hostile input cannot overflow the stack.

use crate::error::{ErrorKind, ParseError, Pos};
use crate::inst::{Operand, StateSpace, Type};
use crate::lexer::{Tok, Token};
use crate::module::{
    Function, FunctionKind, InitValue, Initializer, Linkage, Module, Param, Variable,
};

mod body;

/// The deepest nesting of braces, brackets and parentheses accepted.
pub const MAX_DEPTH: usize = 64;

type R<T> = Result<T, ParseError>;

pub(crate) struct Parser {
    toks: Vec<Token>,
    at: usize,
    end: Pos,
}

impl Parser {
    pub(crate) fn new(toks: Vec<Token>, end: Pos) -> Self {
        Parser { toks, at: 0, end }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.tok)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.at + n).map(|t| &t.tok)
    }

    fn pos(&self) -> Pos {
        self.toks.get(self.at).map_or(self.end, |t| t.pos)
    }

    fn err<T>(&self, expected: &'static str) -> R<T> {
        let found = self
            .peek()
            .map_or_else(|| "end of input".to_string(), Tok::describe);
        Err(ParseError::new(
            self.pos(),
            ErrorKind::Unexpected { found, expected },
        ))
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        let hit = self.is_punct(c);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn expect_punct(&mut self, c: char, expected: &'static str) -> R<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(expected)
        }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let hit = self.is_word(w);
        if hit {
            self.at += 1;
        }
        hit
    }

    /// A name: a word that is not a directive.
    fn name(&mut self, expected: &'static str) -> R<String> {
        match self.peek() {
            Some(Tok::Word(w)) if !w.starts_with('.') => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            _ => self.err(expected),
        }
    }

    fn number<T: TryFrom<i128>>(&mut self, expected: &'static str) -> R<T> {
        let pos = self.pos();
        let Some(Tok::Num(n)) = self.peek() else {
            return self.err(expected);
        };
        let n = n.clone();
        let v = parse_int(&n)
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| ParseError::new(pos, ErrorKind::BadNumber(n)))?;
        self.at += 1;
        Ok(v)
    }

    /// A directive word naming a type (`.u32`).
    fn ty(&mut self) -> R<Type> {
        if let Some(Tok::Word(w)) = self.peek()
            && let Some(t) = w.strip_prefix('.').and_then(Type::from_word)
        {
            self.at += 1;
            return Ok(t);
        }
        self.err("a type (`.b32`, `.u64`, ...)")
    }

    /// `.align N`, if present.
    fn align(&mut self) -> R<Option<u32>> {
        if self.eat_word(".align") {
            return self.number("an alignment").map(Some);
        }
        Ok(None)
    }

    pub(crate) fn module(mut self) -> R<Module> {
        let mut m = Module::default();
        while let Some(tok) = self.peek() {
            let pos = self.pos();
            let Tok::Word(w) = tok else {
                return self.err("a directive");
            };
            match w.as_str() {
                ".version" => {
                    self.at += 1;
                    let p = self.pos();
                    let Some(Tok::Num(v)) = self.peek() else {
                        return self.err("a version (`8.8`)");
                    };
                    let v = v.clone();
                    let (a, b) = v
                        .split_once('.')
                        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                        .ok_or_else(|| ParseError::new(p, ErrorKind::BadNumber(v)))?;
                    self.at += 1;
                    m.version = Some((a, b));
                }
                ".target" => {
                    self.at += 1;
                    m.target.push(self.name("a target (`sm_90`)")?);
                    while self.eat_punct(',') {
                        m.target.push(self.name("a target option")?);
                    }
                }
                ".address_size" => {
                    self.at += 1;
                    m.address_size = Some(self.number("an address size")?);
                }
                ".file" => {
                    self.at += 1;
                    let n = self.number("a file number")?;
                    let Some(Tok::Str(s)) = self.peek() else {
                        return self.err("a file name");
                    };
                    m.files.push((n, s.clone()));
                    self.at += 1;
                    while self.eat_punct(',') {
                        self.number::<u64>("a timestamp or size")?;
                    }
                }
                _ => {
                    let linkage = self.linkage();
                    if self.is_word(".entry") || self.is_word(".func") {
                        m.functions.push(self.function(linkage, pos)?);
                    } else if let Some(space) = self.var_space() {
                        let v = self.variable(linkage, space, pos)?;
                        self.expect_punct(';', "`;` after a variable")?;
                        m.globals.push(v);
                    } else {
                        return match self.peek() {
                            Some(Tok::Word(w)) if w.starts_with('.') => Err(ParseError::new(
                                self.pos(),
                                ErrorKind::UnknownDirective(w.clone()),
                            )),
                            _ => self.err("a directive"),
                        };
                    }
                }
            }
        }
        Ok(m)
    }

    fn linkage(&mut self) -> Option<Linkage> {
        let l = match self.peek() {
            Some(Tok::Word(w)) => match w.as_str() {
                ".visible" => Linkage::Visible,
                ".extern" => Linkage::Extern,
                ".weak" => Linkage::Weak,
                ".common" => Linkage::Common,
                _ => return None,
            },
            _ => return None,
        };
        self.at += 1;
        Some(l)
    }

    /// The state space directive of a variable declaration, consumed.
    fn var_space(&mut self) -> Option<StateSpace> {
        let s = match self.peek() {
            Some(Tok::Word(w)) => match w.as_str() {
                ".global" => StateSpace::Global,
                ".const" => StateSpace::Const,
                ".shared" => StateSpace::Shared,
                ".local" => StateSpace::Local,
                ".param" => StateSpace::Param,
                _ => return None,
            },
            _ => return None,
        };
        self.at += 1;
        Some(s)
    }

    /// The rest of a variable declaration after its state space, up to (not
    /// including) its `;`.
    fn variable(&mut self, linkage: Option<Linkage>, space: StateSpace, pos: Pos) -> R<Variable> {
        let align = self.align()?;
        let ty = self.ty()?;
        let align = match align {
            Some(a) => Some(a),
            None => self.align()?,
        };
        let name = self.name("a variable name")?;
        let mut dims = Vec::new();
        while self.eat_punct('[') {
            if self.eat_punct(']') {
                dims.push(None);
            } else {
                dims.push(Some(self.number("an array length")?));
                self.expect_punct(']', "`]`")?;
            }
        }
        let init = if self.eat_punct('=') {
            Some(self.initializer(0)?)
        } else {
            None
        };
        Ok(Variable {
            linkage,
            space,
            align,
            ty,
            name,
            dims,
            init,
            pos,
        })
    }

    fn initializer(&mut self, depth: usize) -> R<Initializer> {
        if depth > MAX_DEPTH {
            return Err(ParseError::new(self.pos(), ErrorKind::TooDeep(MAX_DEPTH)));
        }
        if self.eat_punct('{') {
            let mut items = Vec::new();
            if !self.is_punct('}') {
                loop {
                    items.push(self.initializer(depth + 1)?);
                    if !self.eat_punct(',') {
                        break;
                    }
                }
            }
            self.expect_punct('}', "`,` or `}` in an initializer list")?;
            return Ok(Initializer::List(items));
        }
        self.init_value().map(Initializer::Value)
    }

    fn init_value(&mut self) -> R<InitValue> {
        let neg = self.eat_punct('-');
        match self.peek().cloned() {
            Some(Tok::Num(_)) if !neg && self.peek_at(1) == Some(&Tok::Punct('(')) => {
                let mask = self.number("a byte mask")?;
                self.at += 1;
                let v = self.address_value()?;
                self.expect_punct(')', "`)` after a masked address")?;
                match v {
                    InitValue::Address {
                        symbol,
                        generic,
                        offset,
                        ..
                    } => Ok(InitValue::Address {
                        symbol,
                        generic,
                        offset,
                        mask: Some(mask),
                    }),
                    other => Ok(other),
                }
            }
            Some(Tok::Num(n)) => {
                let pos = self.pos();
                self.at += 1;
                match number_operand(&n, neg) {
                    Some(Operand::Int(v)) => Ok(InitValue::Int(v)),
                    Some(Operand::F32(v)) => Ok(InitValue::F32(v)),
                    Some(Operand::F64(v)) => Ok(InitValue::F64(v)),
                    _ => Err(ParseError::new(pos, ErrorKind::BadNumber(n))),
                }
            }
            Some(Tok::Word(_)) if !neg => self.address_value(),
            _ => self.err("an initializer value"),
        }
    }

    /// `sym[+off]` or `generic(sym)[+off]`.
    fn address_value(&mut self) -> R<InitValue> {
        let generic = self.is_word("generic") && self.peek_at(1) == Some(&Tok::Punct('('));
        let symbol = if generic {
            self.at += 2;
            let s = self.name("a symbol in `generic(...)`")?;
            self.expect_punct(')', "`)` after `generic(sym`")?;
            s
        } else {
            self.name("a symbol")?
        };
        let offset = self.offset()?;
        Ok(InitValue::Address {
            symbol,
            generic,
            offset,
            mask: None,
        })
    }

    /// `+N`, `+-N` or `-N`; 0 when absent.
    fn offset(&mut self) -> R<i64> {
        let plus = self.eat_punct('+');
        let neg = self.eat_punct('-');
        if !plus && !neg {
            return Ok(0);
        }
        let n: i64 = self.number("an offset")?;
        Ok(if neg { n.wrapping_neg() } else { n })
    }

    fn function(&mut self, linkage: Option<Linkage>, pos: Pos) -> R<Function> {
        let kind = if self.eat_word(".entry") {
            FunctionKind::Entry
        } else {
            self.at += 1;
            FunctionKind::Func
        };
        let returns = if self.is_punct('(') {
            self.params()?
        } else {
            Vec::new()
        };
        let name = self.name("a function name")?;
        let params = if self.is_punct('(') {
            self.params()?
        } else {
            Vec::new()
        };
        let mut directives = Vec::new();
        while let Some(Tok::Word(w)) = self.peek() {
            let w = w.clone();
            if !matches!(
                w.as_str(),
                ".maxntid" | ".reqntid" | ".minnctapersm" | ".maxnreg" | ".noreturn" | ".pragma"
            ) {
                break;
            }
            self.at += 1;
            let mut values = Vec::new();
            if w == ".pragma" {
                if !matches!(self.peek(), Some(Tok::Str(_))) {
                    return self.err("a pragma string");
                }
                self.at += 1;
                self.expect_punct(';', "`;` after `.pragma`")?;
            } else if w != ".noreturn" {
                values.push(self.number("a number")?);
                while self.eat_punct(',') {
                    values.push(self.number("a number")?);
                }
            }
            directives.push((w, values));
        }
        let body = if self.eat_punct(';') {
            None
        } else if self.is_punct('{') {
            Some(self.block(0)?)
        } else {
            return self.err("`{` or `;` after a function header");
        };
        Ok(Function {
            linkage,
            kind,
            name,
            returns,
            params,
            directives,
            body,
            pos,
        })
    }

    pub(super) fn params(&mut self) -> R<Vec<Param>> {
        self.expect_punct('(', "`(`")?;
        let mut out = Vec::new();
        if self.eat_punct(')') {
            return Ok(out);
        }
        loop {
            out.push(self.param()?);
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',', "`,` or `)` in a parameter list")?;
        }
    }

    fn param(&mut self) -> R<Param> {
        let space = if self.eat_word(".param") {
            StateSpace::Param
        } else if self.eat_word(".reg") {
            StateSpace::Reg
        } else {
            return self.err("`.param` or `.reg`");
        };
        let mut align = self.align()?;
        let ty = self.ty()?;
        let mut ptr = None;
        if self.eat_word(".ptr") {
            let pointee = self.var_space();
            ptr = Some((pointee, self.align()?));
        }
        if align.is_none() {
            align = self.align()?;
        }
        let name = self.name("a parameter name")?;
        let array = if self.eat_punct('[') {
            let n = self.number("an array length")?;
            self.expect_punct(']', "`]`")?;
            Some(n)
        } else {
            None
        };
        Ok(Param {
            space,
            align,
            ty,
            ptr,
            name,
            array,
        })
    }
}

/// A PTX integer: decimal, `0x` hex, `0b` binary, octal with a leading 0,
/// with an optional `U` suffix.
pub(crate) fn parse_int(s: &str) -> Option<i128> {
    let s = s.strip_suffix('U').unwrap_or(s);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (b, 2)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, radix).ok().map(i128::from)
}

/// An immediate: an integer, or a float as `0f` + 8 or `0d` + 16 hex digits.
pub(crate) fn number_operand(s: &str, neg: bool) -> Option<Operand> {
    let hex = |h: &str, n: usize| (h.len() == n).then(|| u64::from_str_radix(h, 16).ok())?;
    if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
        return (!neg).then(|| {
            hex(h, 8)
                .and_then(|b| u32::try_from(b).ok())
                .map(Operand::F32)
        })?;
    }
    if let Some(h) = s.strip_prefix("0d").or_else(|| s.strip_prefix("0D")) {
        return (!neg).then(|| hex(h, 16).map(Operand::F64))?;
    }
    let v = parse_int(s)?;
    Some(Operand::Int(if neg { -v } else { v }))
}
