//! From `ptx_reader`'s typed module to what the PTX device executes: every
//! register, label, variable, parameter and function resolved to an index,
//! every instruction checked against the forms the executor implements.
//!
//! Anything else is refused here, at load time, with the instruction and its
//! line: the device never meets an instruction it cannot run in the middle of
//! a launch.

mod inst;

use self::inst::decode_inst;

use std::collections::HashMap;
use std::sync::Arc;

use ptx_reader::{
    AddressBase, Cmp, Function, InitValue, Initializer, Instruction, Module, Operand, Semantics,
    StateSpace, Statement, Type,
};

use super::float::Round;
use super::memory::Space;

/// A PTX module the device can run.
pub(crate) struct Program {
    pub funcs: Vec<Func>,
    pub func_index: HashMap<String, usize>,
    pub globals: Vec<GlobalVar>,
}

/// A module-scope variable.
pub(crate) struct GlobalVar {
    pub name: Arc<str>,
    pub space: Space,
    pub size: u64,
    /// The initial bytes (all of them when initialized), and relocations:
    /// (byte offset, target global, addend, byte mask) for address bytes.
    pub init: Option<Vec<u8>>,
    pub relocs: Vec<Reloc>,
    /// An `.extern .shared` array of unknown size: the block's dynamic
    /// shared memory, as many bytes as the launch gives (`size` is 0). All
    /// such variables name the same memory.
    pub dynamic: bool,
}

/// One address (or one byte of it, `.b8` arrays) in an initializer.
pub(crate) struct Reloc {
    pub offset: u64,
    pub target: RelocTarget,
    pub addend: i64,
    /// `Some(shift)`: this byte is byte `shift / 8` of the address.
    pub byte_shift: Option<u32>,
    /// Whole addresses are written with this many bytes.
    pub width: u32,
}

/// What an address in an initializer names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RelocTarget {
    /// A module variable, by index.
    Global(usize),
    /// A defined function (a `fn` pointer in a constant table), by index.
    Func(usize),
}

/// A function (an `.entry` or a `.func` with a body).
pub(crate) struct Func {
    pub name: Arc<str>,
    pub n_regs: usize,
    /// Parameter slots: the parameters, then the return values, then the
    /// `.param` variables of call sequences, each with its size.
    pub slots: Vec<u32>,
    pub n_params: usize,
    pub n_returns: usize,
    /// `.local` variables: (name, size); one allocation each per frame.
    pub locals: Vec<(Arc<str>, u64)>,
    pub code: Vec<Inst>,
}

/// A special register.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    /// `%lanemask_lt` and its siblings, by the device IR's register.
    LaneMask(device_ir::SpecialReg),
    WarpId,
    NWarpId,
}

/// An operand, resolved.
#[derive(Clone, Debug)]
pub(crate) enum Opd {
    Reg(u32),
    Imm(u64),
    Sreg(Sreg),
    /// The address of a module variable (plus an offset).
    Global(usize, i64),
    /// The address of a `.local` variable of this frame.
    Local(usize, i64),
    /// A memory operand `[base+offset]`.
    Addr(Base, i64),
    Vector(Vec<Opd>),
    /// A parameter slot, named as a call's argument or return.
    Slot(usize),
    Label(usize),
    Func(usize),
    /// A call prototype (the last operand of an indirect `call`): the
    /// sizes in bytes of its parameters and of its results.
    Proto {
        params: Vec<u32>,
        returns: Vec<u32>,
    },
    List(Vec<Opd>),
    Sink,
    NotPred(u32),
    /// A destination and the predicate written beside it (`%r1|%p1`).
    WithPred(u32, u32),
}

/// The base of a memory operand.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Base {
    Reg(u32),
    Global(usize),
    Local(usize),
    Slot(usize),
}

/// What an instruction does; its types and modifiers are in [`Inst`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Mov,
    Add,
    Sub,
    Mul,
    Mad,
    Fma,
    Div,
    Rem,
    Neg,
    Abs,
    Min,
    Max,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    Shf,
    Popc,
    Clz,
    Brev,
    Bfi,
    Bfe,
    Prmt,
    Copysign,
    Sqrt,
    Rcp,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Setp,
    Selp,
    Cvt,
    Cvta,
    Ld,
    St,
    Atom,
    Red,
    Bra,
    Call,
    Ret,
    Exit,
    Trap,
    BarSync,
    Fence,
    Shfl,
    Vote,
    Redux,
    Match,
    ActiveMask,
    WarpSync,
}

/// Instruction flags.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Flags {
    pub ftz: bool,
    pub sat: bool,
    pub approx: bool,
    pub hi: bool,
    pub wide: bool,
    /// `.cc`: writes the carry flag.
    pub cc: bool,
    /// `addc`/`subc`/`madc`: reads the carry flag.
    pub carry_in: bool,
    /// `shf.clamp` (else wrap); `shf.l` (else r).
    pub clamp: bool,
    pub left: bool,
    /// `cvta.to` (to a space) rather than from one.
    pub to: bool,
}

/// A decoded instruction.
#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub op: Op,
    /// The first type modifier (the destination's for `cvt`).
    pub ty: Type,
    /// The second type modifier (`cvt`'s source).
    pub ty2: Option<Type>,
    pub space: Option<Space>,
    pub round: Option<Round>,
    /// `cvt.rni`-style rounding to an integral value.
    pub round_int: bool,
    pub cmp: Option<Cmp>,
    /// The operation selector (`atom.add`, `shfl.down`, `vote.ballot`).
    pub sel: Option<&'static str>,
    /// Whether a load or atomic has acquire (or stronger) semantics.
    pub sem: Option<Semantics>,
    pub vector: u8,
    pub flags: Flags,
    pub guard: Option<(u32, bool)>,
    pub ops: Vec<Opd>,
    /// The source instruction, for messages.
    pub src: Arc<Instruction>,
}

/// Why a module cannot run on the PTX device.
#[derive(Debug)]
pub(crate) struct DecodeError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, DecodeError> {
    Err(DecodeError(msg.into()))
}

fn space_of(s: StateSpace) -> Option<Space> {
    match s {
        StateSpace::Global => Some(Space::Global),
        StateSpace::Shared | StateSpace::SharedCta => Some(Space::Shared),
        StateSpace::Local => Some(Space::Local),
        StateSpace::Const => Some(Space::Const),
        _ => None,
    }
}

fn var_size(ty: Type, dims: &[Option<u64>]) -> Result<u64, DecodeError> {
    let mut n = ty.size();
    for d in dims {
        match d {
            Some(d) => n = n.saturating_mul(*d),
            None => return err("an array variable of unknown size"),
        }
    }
    Ok(n)
}

/// Decodes `module`. `read_only(name)` says whether a `.global` variable is
/// immutable (the device IR knows; PTX does not say).
pub(crate) fn decode(
    module: &Module,
    read_only: &dyn Fn(&str) -> bool,
) -> Result<(Program, Vec<bool>), DecodeError> {
    let mut globals = Vec::new();
    let mut global_index = HashMap::new();
    let mut ro = Vec::new();
    for v in &module.globals {
        let Some(space) = space_of(v.space) else {
            return err(format!("module variable {} in .{}", v.name, v.space));
        };
        let dynamic = space == Space::Shared
            && v.linkage == Some(ptx_reader::Linkage::Extern)
            && v.dims == [None];
        let size = if dynamic {
            0
        } else {
            var_size(v.ty, &v.dims).map_err(|e| DecodeError(format!("{}: {}", v.name, e.0)))?
        };
        global_index.insert(v.name.clone(), globals.len());
        ro.push(space == Space::Const || (space == Space::Global && read_only(&v.name)));
        globals.push(GlobalVar {
            name: Arc::from(v.name.as_str()),
            space,
            size,
            init: None,
            relocs: Vec::new(),
            dynamic,
        });
    }
    let defined: Vec<&Function> = module.functions.iter().filter(|f| f.defined()).collect();
    let func_index: HashMap<String, usize> = defined
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), i))
        .collect();
    // Initializers, once every global has its index (relocations name others).
    for (i, v) in module.globals.iter().enumerate() {
        // A variable without an initializer is zero (PTX ISA: `.global` and
        // `.const` variables are zero-initialized).
        if v.init.is_none() && globals[i].space != Space::Shared {
            globals[i].init = Some(vec![0; globals[i].size as usize]);
        }
        if let Some(init) = &v.init {
            let (bytes, relocs) =
                initializer(v.ty, globals[i].size, init, &global_index, &func_index)
                    .map_err(|e| DecodeError(format!("the initializer of {}: {}", v.name, e.0)))?;
            globals[i].init = Some(bytes);
            globals[i].relocs = relocs;
        }
    }
    // A function's `.shared` variables are per block, like module ones: each
    // becomes a module variable under its function's name.
    let mut fn_shared: Vec<HashMap<String, usize>> = Vec::with_capacity(defined.len());
    for f in &defined {
        let mut here = HashMap::new();
        for v in f
            .vars()
            .filter(|v| matches!(v.space, StateSpace::Shared | StateSpace::SharedCta))
        {
            if v.init.is_some() {
                return err(format!(
                    "the shared variable {} of {} has an initializer",
                    v.name, f.name
                ));
            }
            here.insert(v.name.clone(), globals.len());
            ro.push(false);
            globals.push(GlobalVar {
                name: Arc::from(format!("{}::{}", f.name, v.name).as_str()),
                space: Space::Shared,
                size: var_size(v.ty, &v.dims)?,
                init: None,
                relocs: Vec::new(),
                dynamic: false,
            });
        }
        fn_shared.push(here);
    }
    let mut funcs = Vec::with_capacity(defined.len());
    for (f, shared) in defined.iter().zip(&fn_shared) {
        funcs.push(
            decode_func(f, &global_index, shared, &func_index)
                .map_err(|e| DecodeError(format!("function {}: {}", f.name, e.0)))?,
        );
    }
    Ok((
        Program {
            funcs,
            func_index,
            globals,
        },
        ro,
    ))
}

fn initializer(
    ty: Type,
    size: u64,
    init: &Initializer,
    globals: &HashMap<String, usize>,
    funcs: &HashMap<String, usize>,
) -> Result<(Vec<u8>, Vec<Reloc>), DecodeError> {
    let mut flat = Vec::new();
    fn walk<'a>(i: &'a Initializer, out: &mut Vec<&'a InitValue>) {
        match i {
            Initializer::Value(v) => out.push(v),
            Initializer::List(l) => l.iter().for_each(|x| walk(x, out)),
        }
    }
    walk(init, &mut flat);
    let elem = ty.size();
    let mut bytes = vec![0u8; size as usize];
    let mut relocs = Vec::new();
    for (k, v) in flat.iter().enumerate() {
        let off = k as u64 * elem;
        if off + elem > size {
            return err("more initializer values than the variable holds");
        }
        let raw: u64 = match v {
            InitValue::Int(n) => *n as u64,
            InitValue::F32(b) => u64::from(*b),
            InitValue::F64(b) => *b,
            InitValue::Address {
                symbol,
                offset,
                mask,
                ..
            } => {
                let target = match (globals.get(symbol), funcs.get(symbol)) {
                    (Some(&g), _) => RelocTarget::Global(g),
                    (None, Some(&f)) => RelocTarget::Func(f),
                    (None, None) => {
                        return err(format!(
                            "an address of {symbol}, which is neither a module variable nor a defined function"
                        ));
                    }
                };
                let byte_shift = match mask {
                    None => None,
                    Some(m) if m.count_ones() == 8 && m.trailing_zeros() % 8 == 0 => {
                        Some(m.trailing_zeros())
                    }
                    Some(m) => return err(format!("an address byte mask {m:#x}")),
                };
                relocs.push(Reloc {
                    offset: off,
                    target,
                    addend: *offset,
                    byte_shift,
                    width: elem as u32,
                });
                0
            }
        };
        bytes[off as usize..(off + elem) as usize]
            .copy_from_slice(&raw.to_le_bytes()[..elem as usize]);
    }
    Ok((bytes, relocs))
}

struct FuncScope<'a> {
    regs: HashMap<String, u32>,
    labels: HashMap<String, usize>,
    /// The parameter slots in scope: a call sequence's `{ ... }` block
    /// declares its own `param0`, so this map is per block.
    slots: HashMap<String, usize>,
    locals: HashMap<String, usize>,
    /// Call prototypes by label: the sizes of their parameters and of
    /// their results.
    prototypes: HashMap<String, (Vec<u32>, Vec<u32>)>,
    shared: &'a HashMap<String, usize>,
    globals: &'a HashMap<String, usize>,
    funcs: &'a HashMap<String, usize>,
}

fn decode_func(
    f: &Function,
    globals: &HashMap<String, usize>,
    shared: &HashMap<String, usize>,
    funcs: &HashMap<String, usize>,
) -> Result<Func, DecodeError> {
    let mut scope = FuncScope {
        regs: HashMap::new(),
        labels: HashMap::new(),
        slots: HashMap::new(),
        locals: HashMap::new(),
        prototypes: HashMap::new(),
        shared,
        globals,
        funcs,
    };
    let mut slots = Vec::new();
    for p in f.params.iter().chain(&f.returns) {
        if p.space != StateSpace::Param {
            return err(format!("parameter {} in .{}", p.name, p.space));
        }
        let size = p.ty.size() * p.array.unwrap_or(1);
        scope.slots.insert(p.name.clone(), slots.len());
        slots.push(size as u32);
    }
    // Registers, labels and depots are function-wide.
    let mut locals = Vec::new();
    let mut n_insts = 0;
    for s in f.statements() {
        match s {
            Statement::Reg(decls) => {
                for d in decls {
                    match d.count {
                        Some(n) => {
                            for k in 0..n {
                                let next = scope.regs.len() as u32;
                                scope.regs.entry(format!("{}{k}", d.name)).or_insert(next);
                            }
                        }
                        None => {
                            let next = scope.regs.len() as u32;
                            scope.regs.entry(d.name.clone()).or_insert(next);
                        }
                    }
                }
            }
            Statement::Var(v) if v.space == StateSpace::Local => {
                scope.locals.insert(v.name.clone(), locals.len());
                locals.push((Arc::from(v.name.as_str()), var_size(v.ty, &v.dims)?));
            }
            Statement::Var(v)
                if !matches!(
                    v.space,
                    StateSpace::Param | StateSpace::Shared | StateSpace::SharedCta
                ) =>
            {
                return err(format!("a function-scope variable in .{}", v.space));
            }
            Statement::Label(l) => {
                scope.labels.insert(l.clone(), n_insts);
            }
            Statement::CallPrototype(p) => {
                let sizes = |ps: &[ptx_reader::Param]| -> Vec<u32> {
                    ps.iter()
                        .map(|p| (p.ty.size() * p.array.unwrap_or(1)) as u32)
                        .collect()
                };
                let sizes = (sizes(&p.params), sizes(&p.returns));
                if scope.prototypes.insert(p.name.clone(), sizes).is_some() {
                    return err(format!("call prototype {} is declared twice", p.name));
                }
            }
            Statement::Inst(_) => n_insts += 1,
            _ => {}
        }
    }
    let mut code = Vec::with_capacity(n_insts);
    decode_block(
        f.body.as_deref().unwrap_or(&[]),
        &mut scope,
        &mut slots,
        &mut code,
    )?;
    Ok(Func {
        name: Arc::from(f.name.as_str()),
        n_regs: scope.regs.len(),
        n_params: f.params.len(),
        n_returns: f.returns.len(),
        slots,
        locals,
        code,
    })
}

/// Decodes the instructions of `body` in order, with `.param` variables
/// scoped to their block.
fn decode_block(
    body: &[Statement],
    scope: &mut FuncScope<'_>,
    slots: &mut Vec<u32>,
    code: &mut Vec<Inst>,
) -> Result<(), DecodeError> {
    for s in body {
        match s {
            Statement::Var(v) if v.space == StateSpace::Param => {
                let size = var_size(v.ty, &v.dims)?;
                scope.slots.insert(v.name.clone(), slots.len());
                slots.push(size as u32);
            }
            Statement::Block(inner) => {
                let outer = scope.slots.clone();
                decode_block(inner, scope, slots, code)?;
                scope.slots = outer;
            }
            Statement::Inst(i) => code.push(
                decode_inst(i, scope)
                    .map_err(|e| DecodeError(format!("line {}: `{i}`: {}", i.pos.line, e.0)))?,
            ),
            _ => {}
        }
    }
    Ok(())
}

fn sreg(name: &str) -> Option<Sreg> {
    let dim = |s: &str| match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, d)) = name.split_once('.') {
        let d = dim(d)?;
        return match base {
            "%tid" => Some(Sreg::Tid(d)),
            "%ntid" => Some(Sreg::Ntid(d)),
            "%ctaid" => Some(Sreg::Ctaid(d)),
            "%nctaid" => Some(Sreg::Nctaid(d)),
            _ => None,
        };
    }
    match name {
        "%laneid" => Some(Sreg::LaneId),
        "%lanemask_lt" => Some(Sreg::LaneMask(device_ir::SpecialReg::LaneMaskLt)),
        "%lanemask_le" => Some(Sreg::LaneMask(device_ir::SpecialReg::LaneMaskLe)),
        "%lanemask_eq" => Some(Sreg::LaneMask(device_ir::SpecialReg::LaneMaskEq)),
        "%lanemask_ge" => Some(Sreg::LaneMask(device_ir::SpecialReg::LaneMaskGe)),
        "%lanemask_gt" => Some(Sreg::LaneMask(device_ir::SpecialReg::LaneMaskGt)),
        "%warpid" => Some(Sreg::WarpId),
        "%nwarpid" => Some(Sreg::NWarpId),
        _ => None,
    }
}

impl FuncScope<'_> {
    fn reg(&self, name: &str) -> Result<u32, DecodeError> {
        self.regs
            .get(name)
            .copied()
            .ok_or_else(|| DecodeError(format!("register {name} is not declared")))
    }

    fn symbol(&self, name: &str, offset: i64) -> Result<Opd, DecodeError> {
        // Registers may be named without `%` (`.reg .b32 alo;`).
        if let Some(&r) = self.regs.get(name) {
            return Ok(Opd::Reg(r));
        }
        if let Some(&l) = self.labels.get(name) {
            return Ok(Opd::Label(l));
        }
        if let Some(&s) = self.slots.get(name) {
            return Ok(Opd::Slot(s));
        }
        if let Some(&l) = self.locals.get(name) {
            return Ok(Opd::Local(l, offset));
        }
        if let Some(&g) = self.shared.get(name).or_else(|| self.globals.get(name)) {
            return Ok(Opd::Global(g, offset));
        }
        if let Some(&f) = self.funcs.get(name) {
            return Ok(Opd::Func(f));
        }
        if let Some((params, returns)) = self.prototypes.get(name) {
            return Ok(Opd::Proto {
                params: params.clone(),
                returns: returns.clone(),
            });
        }
        err(format!(
            "symbol {name} is not defined here (a call to a declaration without a body?)"
        ))
    }

    fn operand(&self, o: &Operand) -> Result<Opd, DecodeError> {
        Ok(match o {
            Operand::Reg(r) => match sreg(r) {
                Some(s) => Opd::Sreg(s),
                None => Opd::Reg(self.reg(r)?),
            },
            Operand::Int(n) => Opd::Imm(*n as u64),
            Operand::F32(b) => Opd::Imm(u64::from(*b)),
            Operand::F64(b) => Opd::Imm(*b),
            Operand::Symbol { name, offset } => self.symbol(name, *offset)?,
            Operand::Address { base, offset } => {
                let b = match base {
                    AddressBase::Reg(r) => Base::Reg(self.reg(r)?),
                    AddressBase::Symbol(s) => match self.symbol(s, 0)? {
                        Opd::Global(g, _) => Base::Global(g),
                        Opd::Local(l, _) => Base::Local(l),
                        Opd::Slot(s) => Base::Slot(s),
                        _ => return err(format!("[{s}] is not a variable")),
                    },
                    AddressBase::Absolute(_) => return err("an absolute address"),
                };
                Opd::Addr(b, *offset)
            }
            Operand::Vector(v) => Opd::Vector(
                v.iter()
                    .map(|x| self.operand(x))
                    .collect::<Result<_, _>>()?,
            ),
            Operand::List(v) => Opd::List(
                v.iter()
                    .map(|x| self.operand(x))
                    .collect::<Result<_, _>>()?,
            ),
            Operand::Sink => Opd::Sink,
            Operand::Not(p) => Opd::NotPred(self.reg(p)?),
            Operand::WithPred { reg, pred } => Opd::WithPred(self.reg(reg)?, self.reg(pred)?),
        })
    }
}
