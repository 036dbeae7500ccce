//! A small structural reader of the PTX that libNVVM emits: top-level variable
//! declarations and function definitions, split by their headers and balanced
//! braces, and each body's instructions read into guard, opcode, modifiers and
//! operands ([`Instruction`]). It reads only what the shape checks need, and
//! never guesses: text it cannot split is an error, not an empty result. It is
//! the one PTX reader of the oracle: every check that looks at PTX goes through
//! it, never through a text search of its own.

use std::fmt;

/// A PTX state space of a variable declaration.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    /// `.global`
    Global,
    /// `.shared`
    Shared,
    /// `.const`
    Const,
    /// `.local`
    Local,
}

impl StateSpace {
    fn from_directive(token: &str) -> Option<StateSpace> {
        Some(match token {
            ".global" => StateSpace::Global,
            ".shared" => StateSpace::Shared,
            ".const" => StateSpace::Const,
            ".local" => StateSpace::Local,
            _ => return None,
        })
    }

    /// The directive, as PTX spells it.
    pub fn directive(self) -> &'static str {
        match self {
            StateSpace::Global => ".global",
            StateSpace::Shared => ".shared",
            StateSpace::Const => ".const",
            StateSpace::Local => ".local",
        }
    }
}

impl fmt::Display for StateSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.directive())
    }
}

/// A variable declaration (`.global .align 4 .b8 name[4] = {..};`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxVar {
    /// Its state space.
    pub space: StateSpace,
    /// Its name.
    pub name: String,
}

/// A `.func` or `.entry`, defined (with a body) or only declared (a prototype).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxFunction {
    /// The symbol.
    pub name: String,
    /// `.entry` (a kernel) rather than `.func`.
    pub entry: bool,
    /// Whether this is a definition (it has a body).
    pub defined: bool,
    /// The variables the body declares, at any nesting depth.
    pub vars: Vec<PtxVar>,
    /// The instructions of the body, in order (labels and declarations
    /// excluded; inline-asm instructions included, as libNVVM pastes them in).
    pub instructions: Vec<Instruction>,
}

/// One instruction of a body: `[@guard] opcode{.modifier} operands`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The predicate guard without its `@` (`%p1`, `!%p2`), if any.
    pub guard: Option<String>,
    /// The opcode without its modifiers (`ld`, `bar`, `cvta`).
    pub opcode: String,
    /// The modifiers after the opcode, in order, without their dots
    /// (`ld.acquire.sys.u32` has `acquire`, `sys`, `u32`).
    pub modifiers: Vec<String>,
    /// The operands, whitespace collapsed (`%r1, [%rd1]`); empty for none.
    pub operands: String,
}

impl Instruction {
    /// Reads one instruction statement (without its `;`); `None` for empty text.
    pub fn parse(statement: &str) -> Option<Instruction> {
        let mut tokens = statement.split_whitespace().peekable();
        let guard = match tokens.peek() {
            Some(t) if t.starts_with('@') => tokens.next().map(|g| g[1..].to_string()),
            _ => None,
        };
        let mut parts = tokens.next()?.split('.');
        let opcode = parts.next().unwrap_or("").to_string();
        let modifiers = parts.map(str::to_string).collect();
        let operands = tokens.collect::<Vec<_>>().join(" ");
        Some(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
        })
    }

    /// The opcode with its modifiers, as PTX spells it (`ld.acquire.sys.u32`).
    pub fn full_opcode(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(m);
        }
        s
    }

    /// Whether the instruction is `opcode` with every modifier of `modifiers`
    /// (in any order, others allowed: `ld` with `acquire`, `sys`, `u32` matches
    /// `ld.acquire.sys.global.u32`).
    pub fn is(&self, opcode: &str, modifiers: &[&str]) -> bool {
        self.opcode == opcode && modifiers.iter().all(|m| self.has_modifier(m))
    }

    /// Whether `modifier` (without its dot) is one of the modifiers.
    pub fn has_modifier(&self, modifier: &str) -> bool {
        self.modifiers.iter().any(|x| x == modifier)
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{g} ")?;
        }
        f.write_str(&self.full_opcode())?;
        if !self.operands.is_empty() {
            write!(f, " {}", self.operands)?;
        }
        Ok(())
    }
}

impl PtxFunction {
    /// The `.local` variables the body declares (a stack depot among them).
    pub fn locals(&self) -> impl Iterator<Item = &PtxVar> {
        self.vars.iter().filter(|v| v.space == StateSpace::Local)
    }

    /// The body's instructions whose full opcode is `op` or starts with
    /// `op.` (`bar.sync` matches `bar.sync` and `bar.sync.aligned`).
    pub fn instructions_with_opcode<'a>(
        &'a self,
        op: &'a str,
    ) -> impl Iterator<Item = &'a Instruction> {
        let mut parts = op.split('.');
        let base = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        self.instructions.iter().filter(move |i| {
            i.opcode == base
                && i.modifiers.len() >= mods.len()
                && i.modifiers.iter().zip(&mods).all(|(a, b)| a == b)
        })
    }

    /// The body's instructions that name the `.local` state space in their
    /// opcode (`ld.local`, `st.local`, `cvta.local`).
    pub fn local_accesses(&self) -> impl Iterator<Item = &Instruction> {
        self.instructions.iter().filter(|i| i.has_modifier("local"))
    }
}

/// What the reader found in a PTX module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxModule {
    /// Module-scope variables, in order.
    pub vars: Vec<PtxVar>,
    /// Functions, definitions and prototypes, in order.
    pub functions: Vec<PtxFunction>,
}

impl PtxModule {
    /// The definition (not a prototype) of function `name`.
    pub fn definition(&self, name: &str) -> Option<&PtxFunction> {
        self.functions.iter().find(|f| f.name == name && f.defined)
    }

    /// The module-scope variable `name`.
    pub fn var(&self, name: &str) -> Option<&PtxVar> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Every instruction of every defined function, with the function.
    pub fn instructions(&self) -> impl Iterator<Item = (&PtxFunction, &Instruction)> {
        self.functions
            .iter()
            .filter(|f| f.defined)
            .flat_map(|f| f.instructions.iter().map(move |i| (f, i)))
    }
}

/// PTX text the reader cannot split.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PTX reader: {0}")]
pub struct PtxError(String);

/// Replaces `//` and `/* */` comments with spaces, keeping byte offsets.
fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'"' {
                in_string = false;
            }
            out.push(b);
            i += 1;
        } else if b == b'"' {
            in_string = true;
            out.push(b);
            i += 1;
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                out.push(if bytes[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            out.extend_from_slice(b"  ");
            i += 2;
        } else {
            out.push(b);
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes.
    String::from_utf8_lossy(&out).into_owned()
}

/// The module directives that end at the end of their line, with no `;`.
const LINE_DIRECTIVES: [&str; 4] = [".version", ".target", ".address_size", ".file"];

/// Replaces [`LINE_DIRECTIVES`] lines with blanks, keeping byte offsets.
fn blank_line_directives(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let t = line.trim_start();
            let directive = t.split_whitespace().next().unwrap_or("");
            if LINE_DIRECTIVES.contains(&directive) {
                line.chars()
                    .map(|c| if c == '\n' { c } else { ' ' })
                    .collect()
            } else {
                line.to_string()
            }
        })
        .collect()
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '%'
}

/// The leading identifier of `s`.
fn ident_prefix(s: &str) -> &str {
    let end = s.find(|c: char| !is_ident_char(c)).unwrap_or(s.len());
    &s[..end]
}

/// Reads a variable declaration statement (`[.visible] .global .align 4 .b8 x[4] = {..}`).
fn parse_var(statement: &str) -> Option<PtxVar> {
    let mut tokens = statement.split_whitespace().peekable();
    while let Some(&t) = tokens.peek() {
        if matches!(t, ".visible" | ".extern" | ".weak" | ".common") {
            tokens.next();
        } else {
            break;
        }
    }
    let space = StateSpace::from_directive(tokens.next()?)?;
    while let Some(t) = tokens.next() {
        if t == ".align" {
            tokens.next();
        } else if t.starts_with('.') {
            continue;
        } else {
            let name = ident_prefix(t);
            return (!name.is_empty()).then(|| PtxVar {
                space,
                name: name.to_string(),
            });
        }
    }
    None
}

/// The name and kind of a function header (`.visible .entry k(`, `.func (.param ..) f(`).
fn parse_header(header: &str) -> Option<(String, bool)> {
    let mut rest = header.trim_start();
    loop {
        let token = rest.split_whitespace().next()?;
        match token {
            ".visible" | ".extern" | ".weak" => rest = rest[token.len()..].trim_start(),
            _ => break,
        }
    }
    let entry = if let Some(r) = rest.strip_prefix(".entry") {
        rest = r;
        true
    } else if let Some(r) = rest.strip_prefix(".func") {
        rest = r;
        false
    } else {
        return None;
    };
    rest = rest.trim_start();
    if rest.starts_with('(') {
        let close = matching(rest, '(', ')')?;
        rest = rest[close + 1..].trim_start();
    }
    let name = ident_prefix(rest);
    (!name.is_empty()).then(|| (name.to_string(), entry))
}

/// The index of the bracket closing the one at the start of `s`.
fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn is_function_header(statement: &str) -> bool {
    !statement.contains('=')
        && statement.split_whitespace().any(|t| {
            t == ".func" || t == ".entry" || t.starts_with(".func(") || t.starts_with(".entry(")
        })
}

/// Reads a function body: its declarations and instructions.
fn parse_body(name: &str, entry: bool, body: &str) -> PtxFunction {
    let mut vars = Vec::new();
    let mut instructions = Vec::new();
    for piece in body.split([';', '{', '}']) {
        let mut s = piece.trim();
        // Labels (`$L__BB0_1:`) precede the instruction they mark.
        while let Some(colon) = s.find(':') {
            let label = &s[..colon];
            if !label.is_empty()
                && !label.contains(char::is_whitespace)
                && ident_prefix(label) == label
            {
                s = s[colon + 1..].trim_start();
            } else {
                break;
            }
        }
        if s.is_empty() {
            continue;
        }
        if s.starts_with('.') {
            if let Some(v) = parse_var(s) {
                vars.push(v);
            }
        } else {
            instructions.extend(Instruction::parse(s));
        }
    }
    PtxFunction {
        name: name.to_string(),
        entry,
        defined: true,
        vars,
        instructions,
    }
}

/// Splits PTX text into module-scope variables and functions.
pub fn parse(text: &str) -> Result<PtxModule, PtxError> {
    let text = blank_line_directives(&strip_comments(text));
    let mut module = PtxModule::default();
    let mut start = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        match bytes[i] {
            b';' => {
                let statement = text[start..i].trim();
                if is_function_header(statement) {
                    let (name, entry) = parse_header(statement)
                        .ok_or_else(|| PtxError(format!("unreadable prototype `{statement}`")))?;
                    module.functions.push(PtxFunction {
                        name,
                        entry,
                        defined: false,
                        vars: Vec::new(),
                        instructions: Vec::new(),
                    });
                } else if let Some(v) = parse_var(statement) {
                    module.vars.push(v);
                }
                start = i + 1;
            }
            b'{' => {
                let close = matching(&text[i..], '{', '}')
                    .ok_or_else(|| PtxError(format!("unbalanced `{{` at byte {i}")))?
                    + i;
                let statement = text[start..i].trim();
                if is_function_header(statement) {
                    let (name, entry) = parse_header(statement)
                        .ok_or_else(|| PtxError(format!("unreadable header `{statement}`")))?;
                    module
                        .functions
                        .push(parse_body(&name, entry, &text[i + 1..close]));
                    start = close + 1;
                }
                // Otherwise an initializer (`= {1, 2}`): the statement goes on to its `;`.
                i = close;
            }
            b'}' => return Err(PtxError(format!("unbalanced `}}` at byte {i}"))),
            _ => {}
        }
        i += 1;
    }
    if !text[start..].trim().is_empty() {
        return Err(PtxError(format!(
            "text after the last statement: `{}`",
            text[start..].trim()
        )));
    }
    Ok(module)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
//
// Generated by NVIDIA NVVM Compiler
.version 8.8
.address_size 64

	// .globl	k
.func  (.param .b64 func_retval0) helper
;
.global .align 4 .b8 __const_ab[8] = {3, 0, 0, 0, 4};
.shared .align 4 .b8 sums[32];
.func  (.param .b64 func_retval0) helper()
{
	.reg .b64 	%rd<3>;
	mov.u64 	%rd1, __const_ab;
$L__BB0_1:
	cvta.global.u64 	%rd2, %rd1;
	st.param.b64 	[func_retval0+0], %rd2;
	ret;
}
.visible .entry k(
	.param .u64 k_param_0
)
{
	.local .align 8 .b8 	__local_depot1[16];
	{ // callseq 0, 0
	.param .b64 retval0;
	call.uni (retval0), helper, ();
	}
	@%p1 bra $L__BB1_2;
	st.local.u32 [%rd1], %r1;
	bar.sync 	0;
	ret;
}
"#;

    #[test]
    fn reads_vars_functions_and_bodies() {
        let m = parse(SAMPLE).unwrap();
        assert_eq!(
            m.vars,
            vec![
                PtxVar {
                    space: StateSpace::Global,
                    name: "__const_ab".into()
                },
                PtxVar {
                    space: StateSpace::Shared,
                    name: "sums".into()
                }
            ]
        );
        let names: Vec<(&str, bool, bool)> = m
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.entry, f.defined))
            .collect();
        assert_eq!(
            names,
            vec![
                ("helper", false, false),
                ("helper", false, true),
                ("k", true, true)
            ]
        );
        let helper = m.definition("helper").unwrap();
        assert_eq!(helper.locals().count(), 0);
        assert_eq!(
            helper.instructions[1].to_string(),
            "cvta.global.u64 %rd2, %rd1"
        );
        assert_eq!(helper.instructions[1].opcode, "cvta");
        assert_eq!(helper.instructions[1].modifiers, ["global", "u64"]);
        let k = m.definition("k").unwrap();
        assert_eq!(
            k.locals().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["__local_depot1"]
        );
        assert_eq!(k.local_accesses().count(), 1);
        assert_eq!(k.instructions_with_opcode("bar.sync").count(), 1);
        assert_eq!(k.instructions_with_opcode("bra").count(), 1);
        let bra = k.instructions_with_opcode("bra").next().unwrap();
        assert_eq!(bra.guard.as_deref(), Some("%p1"));
        assert_eq!(bra.operands, "$L__BB1_2");
    }

    #[test]
    fn reads_opcodes_with_their_modifiers() {
        let i = Instruction::parse("ld.acquire.sys.u32 \t%r1, [%rd1]").unwrap();
        assert_eq!(i.opcode, "ld");
        assert_eq!(i.modifiers, ["acquire", "sys", "u32"]);
        assert_eq!(i.full_opcode(), "ld.acquire.sys.u32");
        assert!(i.is("ld", &["sys", "acquire"]));
        assert!(!i.is("ld", &["relaxed"]));
        assert!(!i.is("st", &["acquire"]));
        assert_eq!(i.to_string(), "ld.acquire.sys.u32 %r1, [%rd1]");
        let ret = Instruction::parse("ret").unwrap();
        assert_eq!((ret.opcode.as_str(), ret.operands.as_str()), ("ret", ""));
    }

    /// The old memory-model reader's case: declarations, comments, labels and
    /// a nested `{ .param }` scope are skipped; the instructions stay in order.
    #[test]
    fn splits_bodies_and_skips_declarations() {
        let ptx = "\
.version 8.8
.global .align 4 .b8 g[8] = {1, 2};
.func  (.param .b32 func_retval0) f(
\t.param .b64 f_param_0
)
{
\t.reg .b32 %r<3>; // registers
$L__BB0_1:
\tld.acquire.sys.u32 %r1, [%rd1];
\t{ .param .b32 t; }
\t@%p1 bra $L__BB0_1;
\tret;
}
.visible .entry k()
{
\tbar.sync \t0;
}
";
        let m = parse(ptx).unwrap();
        let listed: Vec<(&str, String)> = m
            .instructions()
            .map(|(f, i)| (f.name.as_str(), i.full_opcode()))
            .collect();
        assert_eq!(
            listed,
            vec![
                ("f", "ld.acquire.sys.u32".to_string()),
                ("f", "bra".to_string()),
                ("f", "ret".to_string()),
                ("k", "bar.sync".to_string())
            ]
        );
        assert_eq!(
            m.definition("k").unwrap().instructions[0].to_string(),
            "bar.sync 0"
        );
    }

    #[test]
    fn refuses_unbalanced_braces() {
        assert!(parse(".visible .entry k()\n{\n ret;\n").is_err());
        assert!(parse("}").is_err());
    }
}
