//! Function bodies: statements, instructions and their operands.

use super::{MAX_DEPTH, Parser, R, number_operand};
use crate::error::{ErrorKind, ParseError};
use crate::inst::{AddressBase, Guard, Instruction, Modifier, OPCODES, Operand};
use crate::lexer::Tok;
use crate::module::{CallPrototype, RegDecl, Statement};

impl Parser {
    /// `{ statements }`.
    pub(super) fn block(&mut self, depth: usize) -> R<Vec<Statement>> {
        let open = self.pos();
        if depth > MAX_DEPTH {
            return Err(ParseError::new(open, ErrorKind::TooDeep(MAX_DEPTH)));
        }
        self.expect_punct('{', "`{`")?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::new(open, ErrorKind::Unterminated("block"))),
                Some(Tok::Punct('}')) => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(Tok::Punct('{')) => out.push(Statement::Block(self.block(depth + 1)?)),
                _ => out.push(self.statement()?),
            }
        }
    }

    fn statement(&mut self) -> R<Statement> {
        let pos = self.pos();
        let Some(tok) = self.peek().cloned() else {
            return self.err("a statement");
        };
        if let Tok::Word(w) = &tok {
            if !w.starts_with('.') && self.peek_at(1) == Some(&Tok::Punct(':')) {
                self.at += 2;
                if self.eat_word(".callprototype") {
                    return self.call_prototype(w.clone());
                }
                return Ok(Statement::Label(w.clone()));
            }
            match w.as_str() {
                ".reg" => {
                    self.at += 1;
                    let ty = self.ty()?;
                    let mut regs = Vec::new();
                    loop {
                        let name = self.name("a register name")?;
                        let count = if self.eat_punct('<') {
                            let n = self.number("a register count")?;
                            self.expect_punct('>', "`>`")?;
                            Some(n)
                        } else {
                            None
                        };
                        regs.push(RegDecl { ty, name, count });
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                    self.expect_punct(';', "`;` after `.reg`")?;
                    return Ok(Statement::Reg(regs));
                }
                ".pragma" => {
                    self.at += 1;
                    let Some(Tok::Str(s)) = self.peek().cloned() else {
                        return self.err("a pragma string");
                    };
                    self.at += 1;
                    self.expect_punct(';', "`;` after `.pragma`")?;
                    return Ok(Statement::Pragma(s));
                }
                ".loc" => {
                    self.at += 1;
                    let f = self.number("a file number")?;
                    let l = self.number("a line")?;
                    let c = self.number("a column")?;
                    // `.loc` may go on with `, function_name ...`: to the end of its line.
                    while self
                        .toks
                        .get(self.at)
                        .is_some_and(|t| t.pos.line == pos.line)
                    {
                        self.at += 1;
                    }
                    return Ok(Statement::Loc(f, l, c));
                }
                _ => {}
            }
            if w.starts_with('.') {
                let Some(space) = self.var_space() else {
                    return Err(ParseError::new(pos, ErrorKind::UnknownDirective(w.clone())));
                };
                let v = self.variable(None, space, pos)?;
                self.expect_punct(';', "`;` after a variable")?;
                return Ok(Statement::Var(v));
            }
        }
        let i = self.instruction()?;
        self.expect_punct(';', "`,` or `;` after an operand")?;
        Ok(Statement::Inst(i))
    }

    /// The rest of `name: .callprototype (RETURN)? _ (PARAMS);`.
    fn call_prototype(&mut self, name: String) -> R<Statement> {
        let returns = if self.is_punct('(') {
            self.params()?
        } else {
            Vec::new()
        };
        if !self.eat_word("_") {
            return self.err("`_` in a call prototype");
        }
        let params = if self.is_punct('(') {
            self.params()?
        } else {
            Vec::new()
        };
        self.expect_punct(';', "`;` after a call prototype")?;
        Ok(Statement::CallPrototype(CallPrototype {
            name,
            returns,
            params,
        }))
    }

    /// One instruction, without its `;`.
    pub(crate) fn instruction(&mut self) -> R<Instruction> {
        let pos = self.pos();
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let reg = self.name("a predicate register")?;
            Some(Guard { reg, negated })
        } else {
            None
        };
        let op_pos = self.pos();
        let word = self.name("an instruction")?;
        let mut parts = word.split('.');
        let opcode = parts.next().unwrap_or_default().to_string();
        if !OPCODES.contains(&opcode.as_str()) {
            return Err(ParseError::new(op_pos, ErrorKind::UnknownOpcode(opcode)));
        }
        let mut modifiers = Vec::new();
        for m in parts {
            let Some(modifier) = Modifier::classify(&opcode, m) else {
                return Err(ParseError::new(
                    op_pos,
                    ErrorKind::UnknownModifier {
                        opcode,
                        modifier: m.to_string(),
                    },
                ));
            };
            modifiers.push(modifier);
        }
        let mut operands = Vec::new();
        if !self.is_punct(';') && self.peek().is_some() {
            loop {
                operands.push(self.operand(0)?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            pos,
        })
    }

    fn operand_list(&mut self, close: char, depth: usize) -> R<Vec<Operand>> {
        let mut items = Vec::new();
        if self.eat_punct(close) {
            return Ok(items);
        }
        loop {
            items.push(self.operand(depth + 1)?);
            if self.eat_punct(close) {
                return Ok(items);
            }
            self.expect_punct(',', "`,` or a closing bracket in an operand list")?;
        }
    }

    fn operand(&mut self, depth: usize) -> R<Operand> {
        if depth > MAX_DEPTH {
            return Err(ParseError::new(self.pos(), ErrorKind::TooDeep(MAX_DEPTH)));
        }
        let pos = self.pos();
        match self.peek().cloned() {
            Some(Tok::Punct('{')) => {
                self.at += 1;
                self.operand_list('}', depth).map(Operand::Vector)
            }
            Some(Tok::Punct('(')) => {
                self.at += 1;
                self.operand_list(')', depth).map(Operand::List)
            }
            Some(Tok::Punct('[')) => {
                self.at += 1;
                let base = match self.peek().cloned() {
                    Some(Tok::Word(w)) if w.starts_with('%') => AddressBase::Reg(w),
                    Some(Tok::Word(w)) if !w.starts_with('.') => AddressBase::Symbol(w),
                    Some(Tok::Num(_)) => AddressBase::Absolute(self.number("an address")?),
                    _ => return self.err("a register, symbol or address in `[...]`"),
                };
                if !matches!(base, AddressBase::Absolute(_)) {
                    self.at += 1;
                }
                let offset = self.offset()?;
                self.expect_punct(']', "`+offset` or `]`")?;
                Ok(Operand::Address { base, offset })
            }
            Some(Tok::Punct('!')) => {
                self.at += 1;
                Ok(Operand::Not(self.name("a predicate register")?))
            }
            Some(Tok::Punct('-')) => {
                self.at += 1;
                let Some(Tok::Num(n)) = self.peek().cloned() else {
                    return self.err("a number after `-`");
                };
                self.at += 1;
                number_operand(&n, true).ok_or(ParseError::new(pos, ErrorKind::BadNumber(n)))
            }
            Some(Tok::Num(n)) => {
                self.at += 1;
                number_operand(&n, false).ok_or(ParseError::new(pos, ErrorKind::BadNumber(n)))
            }
            Some(Tok::Word(w)) if w == "_" => {
                self.at += 1;
                Ok(Operand::Sink)
            }
            Some(Tok::Word(w)) if w.starts_with('%') => {
                self.at += 1;
                if self.eat_punct('|') {
                    let pred = self.name("a predicate register after `|`")?;
                    return Ok(Operand::WithPred { reg: w, pred });
                }
                Ok(Operand::Reg(w))
            }
            Some(Tok::Word(w)) if !w.starts_with('.') => {
                self.at += 1;
                let offset = self.offset()?;
                Ok(Operand::Symbol { name: w, offset })
            }
            _ => self.err("an operand"),
        }
    }

    pub(crate) fn at_end(&self) -> R<()> {
        if self.peek().is_some() {
            return self.err("end of input");
        }
        Ok(())
    }
}
