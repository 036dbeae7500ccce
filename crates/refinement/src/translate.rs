//! The compiled side: a kernel's PTX, for one launch, as a program of the
//! full PTX memory model (`ptx_litmus::syntax::Test`).
//!
//! Each thread of the launch is translated on its own by **partial
//! evaluation** of the PTX: everything that does not come from shared or
//! global memory (the thread and block ids, parameters, addresses, loop
//! counters, local memory, call arguments) is a known value and is
//! computed here; calls are inlined; branches on known values are taken here,
//! so counted loops unroll. What comes from memory is a register of the
//! litmus program, and the code that depends on it is emitted:
//!
//! - every load, store and atomic of `.global` or `.shared` memory (or of a
//!   generic address that points there) becomes a memory instruction with
//!   its ordering (`.weak` for a plain access) and scope, on a location
//!   named `buffer[i]` (a 4-byte element of a kernel parameter's buffer)
//!   or `symbol[i]` (of a `.shared` variable);
//! - `bar.sync` becomes the thread's `k`-th CTA barrier;
//! - arithmetic on loaded values becomes litmus arithmetic, a comparison of
//!   a loaded value a branch;
//! - the same PTX position reached again with the same known state (a spin
//!   loop waiting on memory) becomes a backward `goto`: the explorer's loop
//!   bound then applies, as Dat3M's unrolling does.
//!
//! Anything else is refused with the instruction and its line: a construct
//! whose memory meaning would be guessed is not translated.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use ptx_litmus::syntax::{
    self as lit, AtomOp, CmpOp, Instr, Label, Line, Loc, Operand as LOp, Order, Pos, Reg, Test,
    Thread,
};
use ptx_reader::{
    AddressBase, Cmp, Function, Guard, Instruction, Module, Operand, Semantics, StateSpace,
    Statement, Type,
};

use crate::launch::{Launch, Param};

/// Why a kernel's PTX could not be translated (boxed: errors stay small).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TranslateError(pub Box<Untranslated>);

/// The instruction that could not be translated, where, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kernel} (thread {thread}): {function}:{line}: `{text}`: {reason}")]
pub struct Untranslated {
    /// The kernel.
    pub kernel: String,
    /// The thread (`cta.tid`).
    pub thread: String,
    /// The PTX function.
    pub function: String,
    /// The PTX line.
    pub line: u32,
    /// The instruction.
    pub text: String,
    /// Why.
    pub reason: String,
}

/// The most litmus instructions one thread may become (a loop that does not
/// converge, or a launch far larger than this check is for).
const MAX_LINES: usize = 4_000;

/// A translated launch.
#[derive(Clone, Debug)]
pub struct Translated {
    /// The program of the full PTX model.
    pub test: Test,
    /// The global locations (buffer elements), the outcome's domain.
    pub observed: Vec<Loc>,
    /// Decisions worth knowing (a trap under a condition on memory).
    pub notes: Vec<String>,
}

/// Where an address points.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Base {
    /// A kernel parameter's buffer, by index in the launch.
    Buffer(usize),
    /// A `.shared` variable.
    Shared(String),
    /// The thread's local memory (its functions' stack frames), by frame.
    Local(usize),
}

/// A known or loaded value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Val {
    /// A known integer (its bits).
    Int(u64),
    /// A known address.
    Ptr(Base, i64),
    /// A value from memory, held in a litmus register.
    Reg(Reg),
    /// A predicate that depends on memory: `lhs cmp rhs`.
    Cond(CmpOp, LOp, LOp),
}

/// One function activation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Frame {
    function: usize,
    pc: usize,
    regs: BTreeMap<String, Val>,
    /// `.param` slots: the call arguments this frame prepares, and its own
    /// parameters and return value.
    params: BTreeMap<String, Val>,
    /// In the caller: the return slot names of the call being made.
    returns: Vec<String>,
}

/// The state the translation specializes on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Spec {
    frames: Vec<Frame>,
    /// Local memory: (frame, byte offset) → value.
    local: BTreeMap<(usize, i64), Val>,
    barriers: i64,
}

/// The launch-wide facts one thread's translation needs.
struct Ctx<'a> {
    module: &'a Module,
    bodies: Vec<Vec<&'a Statement>>,
    labels: Vec<HashMap<&'a str, usize>>,
    launch: &'a Launch,
    kernel: &'a str,
    cta: u32,
    tid: u32,
    /// Location index by (base, element).
    locs: &'a BTreeMap<(Base, i64), Loc>,
}

/// One thread's emitted code.
struct Emit {
    code: Vec<Line>,
    regs: HashMap<String, Reg>,
    labels: HashMap<Spec, Label>,
    placed: std::collections::HashSet<Spec>,
    pending: Vec<Spec>,
    next_label: u32,
    end: Label,
    notes: Vec<String>,
}

impl Emit {
    fn label(&mut self, spec: &Spec) -> Label {
        if let Some(l) = self.labels.get(spec) {
            return *l;
        }
        let l = Label {
            number: self.next_label,
            digits: 1,
        };
        self.next_label += 1;
        self.labels.insert(spec.clone(), l);
        l
    }

    fn push(&mut self, instr: Instr, pos: Pos, text: String) {
        self.code.push(Line { instr, pos, text });
    }

    /// The litmus register that holds `owner`'s value (a PTX register at a
    /// call depth, a local-memory slot, a parameter slot).
    fn reg(&mut self, owner: String) -> Reg {
        let n = self.regs.len() as u32;
        *self.regs.entry(owner).or_insert(Reg(n))
    }
}

/// Translates the entry `kernel` of `module` for `launch`.
///
/// # Errors
/// A [`TranslateError`] naming the thread, the instruction and the reason.
pub fn translate(
    module: &Module,
    kernel: &str,
    launch: &Launch,
) -> Result<Translated, TranslateError> {
    let refuse = |reason: String| {
        TranslateError(Box::new(Untranslated {
            kernel: kernel.to_string(),
            thread: "-".into(),
            function: kernel.to_string(),
            line: 0,
            text: String::new(),
            reason,
        }))
    };
    let entry = module
        .functions
        .iter()
        .position(|f| f.name == kernel && f.is_entry() && f.defined())
        .ok_or_else(|| refuse("no such .entry in the PTX".into()))?;
    let bodies: Vec<Vec<&Statement>> = module.functions.iter().map(Function::statements).collect();
    let labels: Vec<HashMap<&str, usize>> = bodies
        .iter()
        .map(|b| {
            b.iter()
                .enumerate()
                .filter_map(|(i, s)| match s {
                    Statement::Label(l) => Some((l.as_str(), i)),
                    _ => None,
                })
                .collect()
        })
        .collect();
    // Locations: each 4-byte element of each buffer, then of each .shared variable.
    let mut locations = Vec::new();
    let mut locs = BTreeMap::new();
    let mut observed = Vec::new();
    for (b, p) in launch.params.iter().enumerate() {
        if let Param::Buffer { name, init, .. } = p {
            for (i, v) in init.iter().enumerate() {
                let loc = Loc(locations.len() as u32);
                locs.insert((Base::Buffer(b), i as i64), loc);
                locations.push((format!("{name}[{i}]"), i64::from(*v)));
                observed.push(loc);
            }
        }
    }
    for var in &module.globals {
        if matches!(var.space, StateSpace::Shared | StateSpace::SharedCta) {
            let bytes = var.ty.size() * var.dims.iter().map(|d| d.unwrap_or(1)).product::<u64>();
            for i in 0..bytes.div_ceil(4) {
                let loc = Loc(locations.len() as u32);
                locs.insert((Base::Shared(var.name.clone()), i as i64), loc);
                // Shared memory starts undefined; 0 stands for it.
                locations.push((format!("{}[{i}]", var.name), 0));
            }
        }
    }
    let mut threads = Vec::new();
    let mut notes = Vec::new();
    for cta in 0..launch.ctas {
        for tid in 0..launch.threads {
            let ctx = Ctx {
                module,
                bodies: bodies.clone(),
                labels: labels.clone(),
                launch,
                kernel,
                cta,
                tid,
                locs: &locs,
            };
            let (code, thread_notes) = ctx.thread(entry)?;
            notes.extend(thread_notes);
            threads.push(Thread {
                id: cta * launch.threads + tid,
                cta,
                gpu: 0,
                code,
            });
        }
    }
    Ok(Translated {
        test: Test {
            name: format!("{kernel}.ptx"),
            locations,
            registers: Vec::new(),
            threads,
            quantifier: lit::Quantifier::Exists,
            cond: lit::Cond::Cmp(
                lit::CondValue::Const(0),
                CmpOp::Eq,
                lit::CondValue::Const(0),
            ),
        },
        observed,
        notes,
    })
}

fn cmp_of(c: Cmp) -> Option<(CmpOp, bool)> {
    // (comparison, unsigned)
    Some(match c {
        Cmp::Eq => (CmpOp::Eq, false),
        Cmp::Ne => (CmpOp::Ne, false),
        Cmp::Lt => (CmpOp::Lt, false),
        Cmp::Le => (CmpOp::Le, false),
        Cmp::Gt => (CmpOp::Gt, false),
        Cmp::Ge => (CmpOp::Ge, false),
        Cmp::Lo => (CmpOp::Lt, true),
        Cmp::Ls => (CmpOp::Le, true),
        Cmp::Hi => (CmpOp::Gt, true),
        Cmp::Hs => (CmpOp::Ge, true),
        _ => return None,
    })
}

fn negate(c: CmpOp) -> CmpOp {
    match c {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
    }
}

fn bits(ty: Option<Type>) -> u32 {
    ty.map_or(64, |t| (t.size() * 8) as u32).min(64)
}

fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

fn signed(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

/// A known value as the 32-bit word memory holds (locations are 4-byte
/// elements; PTX prints some constants negative).
fn word(v: Val) -> Val {
    match v {
        Val::Int(n) => Val::Int(mask(n, 32)),
        other => other,
    }
}

fn is_signed(ty: Option<Type>) -> bool {
    matches!(ty, Some(Type::S8 | Type::S16 | Type::S32 | Type::S64))
}

impl fmt::Display for Base {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Base::Buffer(b) => write!(f, "param {b}"),
            Base::Shared(s) => f.write_str(s),
            Base::Local(fr) => write!(f, "local frame {fr}"),
        }
    }
}

/// The outcome of one instruction for the walk.
enum Go {
    Next,
    Jump(usize),
    /// A branch on memory: taken goes to the label's position.
    Fork(CmpOp, LOp, LOp, usize),
    /// The thread ends here.
    End,
}

impl Ctx<'_> {
    fn function(&self, spec: &Spec) -> &Function {
        &self.module.functions[spec.frames.last().expect("a frame").function]
    }

    fn error(
        &self,
        spec: &Spec,
        inst: Option<&Instruction>,
        reason: impl Into<String>,
    ) -> TranslateError {
        TranslateError(Box::new(Untranslated {
            kernel: self.kernel.to_string(),
            thread: format!("{}.{}", self.cta, self.tid),
            function: self.function(spec).name.clone(),
            line: inst.map_or(0, |i| i.pos.line),
            text: inst.map_or_else(String::new, |i| {
                let ops: Vec<String> = i.operands.iter().map(ToString::to_string).collect();
                format!(
                    "{}{} {}",
                    i.guard
                        .as_ref()
                        .map_or_else(String::new, |g| format!("{g} ")),
                    i.full_opcode(),
                    ops.join(", ")
                )
            }),
            reason: reason.into(),
        }))
    }

    /// Translates one thread: its litmus code and notes.
    fn thread(&self, entry: usize) -> Result<(Vec<Line>, Vec<String>), TranslateError> {
        let mut params = BTreeMap::new();
        let f = &self.module.functions[entry];
        if f.params.len() != self.launch.params.len() {
            let spec = Spec {
                frames: vec![Frame {
                    function: entry,
                    pc: 0,
                    regs: BTreeMap::new(),
                    params: BTreeMap::new(),
                    returns: Vec::new(),
                }],
                local: BTreeMap::new(),
                barriers: 0,
            };
            return Err(self.error(
                &spec,
                None,
                format!(
                    "the entry has {} parameters, the launch describes {}",
                    f.params.len(),
                    self.launch.params.len()
                ),
            ));
        }
        for (i, (p, l)) in f.params.iter().zip(&self.launch.params).enumerate() {
            let v = match l {
                Param::Buffer { .. } => Val::Ptr(Base::Buffer(i), 0),
                Param::Len { of } => match &self.launch.params[*of] {
                    Param::Buffer { init, .. } => Val::Int(init.len() as u64),
                    _ => Val::Int(0),
                },
                Param::Scalar(v) => Val::Int(*v),
            };
            params.insert(p.name.clone(), v);
        }
        let start = Spec {
            frames: vec![Frame {
                function: entry,
                pc: 0,
                regs: BTreeMap::new(),
                params,
                returns: Vec::new(),
            }],
            local: BTreeMap::new(),
            barriers: 0,
        };
        let mut e = Emit {
            code: Vec::new(),
            regs: HashMap::new(),
            labels: HashMap::new(),
            placed: std::collections::HashSet::new(),
            pending: vec![start],
            next_label: 1,
            end: Label {
                number: 0,
                digits: 1,
            },
            notes: Vec::new(),
        };
        while let Some(spec) = e.pending.pop() {
            if e.placed.contains(&spec) {
                continue;
            }
            self.straight_line(spec, &mut e)?;
        }
        let end = e.end;
        e.push(
            Instr::Mark(end),
            Pos { line: 0, col: 0 },
            format!("{end}: (end)"),
        );
        Ok((e.code, e.notes))
    }

    /// Emits code from `spec` until the thread ends or jumps to code already
    /// emitted.
    fn straight_line(&self, mut spec: Spec, e: &mut Emit) -> Result<(), TranslateError> {
        loop {
            if e.code.len() > MAX_LINES {
                return Err(self.error(
                    &spec,
                    None,
                    format!(
                        "more than {MAX_LINES} litmus instructions: a loop that does not converge"
                    ),
                ));
            }
            if e.placed.contains(&spec) {
                let l = e.label(&spec);
                e.push(Instr::Goto(l), Pos { line: 0, col: 0 }, format!("goto {l}"));
                return Ok(());
            }
            // Each state at a PTX label (or a function's start) is a join point.
            let frame = spec.frames.last().expect("a frame");
            let at_join = frame.pc == 0
                || matches!(
                    self.bodies[frame.function].get(frame.pc),
                    Some(Statement::Label(_))
                );
            if at_join {
                e.placed.insert(spec.clone());
                let l = e.label(&spec);
                e.push(Instr::Mark(l), Pos { line: 0, col: 0 }, format!("{l}:"));
            }
            let frame = spec.frames.last().expect("a frame");
            let Some(stmt) = self.bodies[frame.function].get(frame.pc) else {
                // Falling off a function's end is a return.
                if self.ret(&mut spec)? {
                    let end = e.end;
                    e.push(Instr::Goto(end), Pos { line: 0, col: 0 }, "ret".into());
                    return Ok(());
                }
                continue;
            };
            let Statement::Inst(inst) = stmt else {
                spec.frames.last_mut().expect("a frame").pc += 1;
                continue;
            };
            match self.inst(&mut spec, inst, e)? {
                Go::Next => spec.frames.last_mut().expect("a frame").pc += 1,
                Go::Jump(to) => spec.frames.last_mut().expect("a frame").pc = to,
                Go::Fork(cmp, a, b, to) => {
                    let mut taken = spec.clone();
                    taken.frames.last_mut().expect("a frame").pc = to;
                    let l = e.label(&taken);
                    let text = format!("b{cmp} {a}, {b}, {l}  ({})", self.text(inst));
                    e.push(
                        Instr::Branch {
                            cmp,
                            lhs: a,
                            rhs: b,
                            target: l,
                        },
                        self.pos(inst),
                        text,
                    );
                    e.pending.push(taken);
                    spec.frames.last_mut().expect("a frame").pc += 1;
                }
                Go::End => {
                    let end = e.end;
                    e.push(Instr::Goto(end), self.pos(inst), "ret".into());
                    return Ok(());
                }
            }
        }
    }

    fn pos(&self, inst: &Instruction) -> Pos {
        Pos {
            line: inst.pos.line,
            col: inst.pos.col,
        }
    }

    fn text(&self, inst: &Instruction) -> String {
        let ops: Vec<String> = inst.operands.iter().map(ToString::to_string).collect();
        format!("{} {}", inst.full_opcode(), ops.join(", "))
    }

    /// Returns from the top frame; true when the entry returned.
    fn ret(&self, spec: &mut Spec) -> Result<bool, TranslateError> {
        let done = spec.frames.pop().expect("a frame");
        let depth = spec.frames.len();
        spec.local.retain(|(fr, _), _| *fr <= depth);
        let Some(caller) = spec.frames.last_mut() else {
            return Ok(true);
        };
        let callee = &self.module.functions[done.function];
        let returns = std::mem::take(&mut caller.returns);
        for (slot, r) in returns.iter().zip(&callee.returns) {
            if let Some(v) = done.params.get(&r.name) {
                caller.params.insert(slot.clone(), v.clone());
            }
        }
        caller.pc += 1;
        Ok(false)
    }

    /// A register's or constant's value.
    fn value(&self, spec: &Spec, op: &Operand, inst: &Instruction) -> Result<Val, TranslateError> {
        let frame = spec.frames.last().expect("a frame");
        Ok(match op {
            Operand::Int(n) => Val::Int(*n as u64),
            Operand::Reg(r) => match r.as_str() {
                "%tid.x" => Val::Int(u64::from(self.tid)),
                "%ntid.x" => Val::Int(u64::from(self.launch.threads)),
                "%ctaid.x" => Val::Int(u64::from(self.cta)),
                "%nctaid.x" => Val::Int(u64::from(self.launch.ctas)),
                "%tid.y" | "%tid.z" | "%ctaid.y" | "%ctaid.z" => Val::Int(0),
                "%ntid.y" | "%ntid.z" | "%nctaid.y" | "%nctaid.z" => Val::Int(1),
                _ => frame.regs.get(r).cloned().ok_or_else(|| {
                    self.error(
                        spec,
                        Some(inst),
                        format!("{r} is read before it is written"),
                    )
                })?,
            },
            Operand::Symbol { name, offset } => {
                if frame.regs.contains_key(name) {
                    frame.regs[name].clone()
                } else if self
                    .module
                    .global(name)
                    .is_some_and(|v| matches!(v.space, StateSpace::Shared | StateSpace::SharedCta))
                {
                    Val::Ptr(Base::Shared(name.clone()), *offset)
                } else if name.starts_with("__local_depot") {
                    Val::Ptr(Base::Local(spec.frames.len()), *offset)
                } else {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        format!("symbol {name} is not translated"),
                    ));
                }
            }
            other => {
                return Err(self.error(
                    spec,
                    Some(inst),
                    format!("operand {other} is not translated"),
                ));
            }
        })
    }

    /// Writes `v` to the PTX register `dst`. A loaded value is moved into
    /// the register's own litmus register, so the register keeps one home.
    fn set(&self, spec: &mut Spec, dst: &str, v: Val, e: &mut Emit, inst: &Instruction) {
        let depth = spec.frames.len();
        let v = match v {
            Val::Reg(r) => {
                let home = e.reg(format!("{depth}:{dst}"));
                if home != r {
                    e.push(
                        Instr::Move {
                            dst: home,
                            value: LOp::Reg(r),
                        },
                        self.pos(inst),
                        format!("{home} := {r}  ({})", self.text(inst)),
                    );
                }
                Val::Reg(home)
            }
            other => other,
        };
        spec.frames
            .last_mut()
            .expect("a frame")
            .regs
            .insert(dst.to_string(), v);
    }

    /// A value as a litmus operand (known integers and loaded values only).
    fn operand(&self, spec: &Spec, v: &Val, inst: &Instruction) -> Result<LOp, TranslateError> {
        match v {
            Val::Int(n) => Ok(LOp::Const(*n as i64)),
            Val::Reg(r) => Ok(LOp::Reg(*r)),
            other => Err(self.error(
                spec,
                Some(inst),
                format!("{other:?} mixed with a value from memory"),
            )),
        }
    }

    fn dst<'i>(&self, spec: &Spec, inst: &'i Instruction) -> Result<&'i str, TranslateError> {
        match inst.operands.first() {
            Some(Operand::Reg(r)) => Ok(r),
            _ => Err(self.error(spec, Some(inst), "no destination register")),
        }
    }

    /// The address an instruction accesses.
    fn address(
        &self,
        spec: &Spec,
        op: &Operand,
        inst: &Instruction,
    ) -> Result<(Base, i64), TranslateError> {
        let Operand::Address { base, offset } = op else {
            return Err(self.error(spec, Some(inst), "no address operand"));
        };
        let (b, off) = match base {
            AddressBase::Reg(r) => match self.value(spec, &Operand::Reg(r.clone()), inst)? {
                Val::Ptr(b, off) => (b, off),
                other => {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        format!("address {other:?} is not a known pointer"),
                    ));
                }
            },
            AddressBase::Symbol(s) => match self.value(
                spec,
                &Operand::Symbol {
                    name: s.clone(),
                    offset: 0,
                },
                inst,
            )? {
                Val::Ptr(b, off) => (b, off),
                other => {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        format!("address {other:?} is not a known pointer"),
                    ));
                }
            },
            AddressBase::Absolute(_) => {
                return Err(self.error(spec, Some(inst), "absolute addresses are not translated"));
            }
        };
        Ok((b, off + offset))
    }

    fn location(
        &self,
        spec: &Spec,
        base: &Base,
        off: i64,
        inst: &Instruction,
    ) -> Result<Loc, TranslateError> {
        let size = inst.ty().map_or(4, Type::size);
        if size != 4 || off % 4 != 0 {
            return Err(self.error(
                spec,
                Some(inst),
                format!("a {size}-byte access at byte {off} of {base}: only aligned 4-byte elements are locations"),
            ));
        }
        self.locs
            .get(&(base.clone(), off / 4))
            .copied()
            .ok_or_else(|| {
                self.error(
                    spec,
                    Some(inst),
                    format!("byte {off} of {base} is outside the launch's buffers"),
                )
            })
    }

    /// The ordering and scope of a memory instruction.
    fn order(
        &self,
        spec: &Spec,
        inst: &Instruction,
        rmw: bool,
    ) -> Result<(Order, Option<lit::Scope>), TranslateError> {
        let scope = match inst.scope() {
            None => None,
            Some(ptx_reader::Scope::Cta) => Some(lit::Scope::Cta),
            Some(ptx_reader::Scope::Gpu) => Some(lit::Scope::Gpu),
            Some(ptx_reader::Scope::Sys) => Some(lit::Scope::Sys),
            Some(ptx_reader::Scope::Cluster) => {
                return Err(self.error(spec, Some(inst), ".cluster scope is not in the model"));
            }
        };
        let order = match inst.semantics() {
            None if rmw => Order::Relaxed,
            None | Some(Semantics::Weak) => Order::Weak,
            Some(Semantics::Relaxed) => Order::Relaxed,
            Some(Semantics::Acquire) => Order::Acquire,
            Some(Semantics::Release) => Order::Release,
            Some(Semantics::AcqRel) => Order::AcqRel,
            Some(other) => {
                return Err(self.error(spec, Some(inst), format!(".{other} is not translated")));
            }
        };
        // An atomic without a scope is `.gpu` (the PTX ISA's default).
        let scope = match (order, scope) {
            (Order::Weak, _) => None,
            (_, None) => Some(lit::Scope::Gpu),
            (_, s) => s,
        };
        Ok((order, scope))
    }

    fn guard(
        &self,
        spec: &Spec,
        g: &Guard,
        inst: &Instruction,
    ) -> Result<Result<bool, (CmpOp, LOp, LOp)>, TranslateError> {
        let v = self.value(spec, &Operand::Reg(g.reg.clone()), inst)?;
        Ok(match v {
            Val::Int(n) => Ok((n != 0) != g.negated),
            Val::Cond(c, a, b) => Err((if g.negated { negate(c) } else { c }, a, b)),
            Val::Reg(r) => Err((
                if g.negated { CmpOp::Eq } else { CmpOp::Ne },
                LOp::Reg(r),
                LOp::Const(0),
            )),
            Val::Ptr(..) => {
                return Err(self.error(spec, Some(inst), "a pointer used as a predicate"));
            }
        })
    }

    /// Runs one instruction on the known state, emitting what depends on memory.
    fn inst(
        &self,
        spec: &mut Spec,
        inst: &Instruction,
        e: &mut Emit,
    ) -> Result<Go, TranslateError> {
        let op = inst.opcode.as_str();
        if op == "bra" {
            let Some(Operand::Symbol { name, .. }) = inst.operands.first() else {
                return Err(self.error(spec, Some(inst), "a branch without a label"));
            };
            let function = spec.frames.last().expect("a frame").function;
            let to = *self.labels[function]
                .get(name.as_str())
                .ok_or_else(|| self.error(spec, Some(inst), format!("no label {name}")))?;
            return match &inst.guard {
                None => Ok(Go::Jump(to)),
                Some(g) => match self.guard(spec, g, inst)? {
                    Ok(true) => Ok(Go::Jump(to)),
                    Ok(false) => Ok(Go::Next),
                    Err((c, a, b)) => Ok(Go::Fork(c, a, b, to)),
                },
            };
        }
        if let Some(g) = &inst.guard {
            match self.guard(spec, g, inst)? {
                Ok(true) => {}
                Ok(false) => return Ok(Go::Next),
                Err(_) => {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        "a guard on a value from memory (only branches are translated)",
                    ));
                }
            }
        }
        let ty = inst.ty();
        let w = bits(ty);
        match op {
            "ret" | "exit" => {
                if self.ret(spec)? {
                    return Ok(Go::End);
                }
                // `ret` moved the caller's pc past the call already.
                let frame = spec.frames.last_mut().expect("a frame");
                frame.pc -= 1;
                return Ok(Go::Next);
            }
            "trap" => {
                // A thread that traps has no final state: a loop the bound cuts.
                let l = Label {
                    number: e.next_label,
                    digits: 1,
                };
                e.next_label += 1;
                e.push(Instr::Mark(l), self.pos(inst), format!("{l}: trap"));
                e.push(Instr::Goto(l), self.pos(inst), "trap".into());
                e.notes.push(format!(
                    "thread {}.{}: `trap` at line {} under a condition on memory: executions that reach it do not terminate and have no outcome",
                    self.cta, self.tid, inst.pos.line
                ));
                return Ok(Go::End);
            }
            "mov" | "cvta" | "cvt" => {
                let dst = self.dst(spec, inst)?.to_string();
                let src = inst
                    .operands
                    .get(1)
                    .ok_or_else(|| self.error(spec, Some(inst), "no source"))?;
                let v = self.value(spec, src, inst)?;
                let v = match (op, v) {
                    ("cvt", Val::Int(n)) => {
                        // cvt.<to>.<from>: truncate or extend by the source type.
                        let types: Vec<Type> = inst
                            .modifiers
                            .iter()
                            .filter_map(|m| match m {
                                ptx_reader::Modifier::Type(t) => Some(*t),
                                _ => None,
                            })
                            .collect();
                        let (to, from) = (types.first().copied(), types.get(1).copied());
                        let x = if is_signed(from) {
                            signed(n, bits(from)) as u64
                        } else {
                            mask(n, bits(from))
                        };
                        Val::Int(mask(x, bits(to)))
                    }
                    (_, v) => v,
                };
                self.set(spec, &dst, v, e, inst);
            }
            "add" | "sub" | "mul" | "shl" | "shr" | "and" | "or" | "xor" | "div" | "rem"
            | "min" | "max" => {
                let dst = self.dst(spec, inst)?.to_string();
                let a = self.value(spec, &inst.operands[1], inst)?;
                let b = self.value(spec, &inst.operands[2], inst)?;
                let wide = inst.has_modifier("wide");
                let v = match (&a, &b) {
                    (Val::Int(x), Val::Int(y)) => {
                        Val::Int(self.arith(spec, inst, op, *x, *y, w, wide)?)
                    }
                    (Val::Ptr(base, off), Val::Int(y)) if op == "add" => {
                        Val::Ptr(base.clone(), off + *y as i64)
                    }
                    (Val::Int(x), Val::Ptr(base, off)) if op == "add" => {
                        Val::Ptr(base.clone(), off + *x as i64)
                    }
                    (Val::Ptr(base, off), Val::Int(y)) if op == "sub" => {
                        Val::Ptr(base.clone(), off - *y as i64)
                    }
                    _ => {
                        let lop = match op {
                            "add" => lit::BinOp::Add,
                            "sub" => lit::BinOp::Sub,
                            "mul" if !inst.has_modifier("hi") => lit::BinOp::Mul,
                            "and" => lit::BinOp::And,
                            "or" => lit::BinOp::Or,
                            "xor" => lit::BinOp::Xor,
                            _ => {
                                return Err(self.error(
                                    spec,
                                    Some(inst),
                                    "this operation on a value from memory is not translated",
                                ));
                            }
                        };
                        let lhs = self.operand(spec, &a, inst)?;
                        let rhs = self.operand(spec, &b, inst)?;
                        let home = e.reg(format!("{}:{dst}", spec.frames.len()));
                        e.push(
                            Instr::Local {
                                op: lop,
                                dst: home,
                                lhs,
                                rhs,
                            },
                            self.pos(inst),
                            format!("{home} := {lhs} {lop:?} {rhs}  ({})", self.text(inst)),
                        );
                        Val::Reg(home)
                    }
                };
                self.set(spec, &dst, v, e, inst);
            }
            "mad" if inst.has_modifier("lo") || inst.has_modifier("wide") => {
                // a * b + c, on known values (addresses and indices).
                let dst = self.dst(spec, inst)?.to_string();
                let a = self.value(spec, &inst.operands[1], inst)?;
                let b = self.value(spec, &inst.operands[2], inst)?;
                let c = self.value(spec, &inst.operands[3], inst)?;
                let wide = inst.has_modifier("wide");
                let v = match (a, b, c) {
                    (Val::Int(x), Val::Int(y), Val::Int(z)) => {
                        let p = self.arith(spec, inst, "mul", x, y, w, wide)?;
                        Val::Int(mask(
                            p.wrapping_add(z),
                            if wide { (w * 2).min(64) } else { w },
                        ))
                    }
                    (Val::Int(x), Val::Int(y), Val::Ptr(base, off)) => {
                        let p = self.arith(spec, inst, "mul", x, y, w, wide)?;
                        Val::Ptr(base, off + p as i64)
                    }
                    _ => {
                        return Err(self.error(
                            spec,
                            Some(inst),
                            "a multiply-add of a value from memory is not translated",
                        ));
                    }
                };
                self.set(spec, &dst, v, e, inst);
            }
            "setp" => {
                let dst = self.dst(spec, inst)?.to_string();
                let cmp = inst
                    .modifiers
                    .iter()
                    .find_map(|m| match m {
                        ptx_reader::Modifier::Cmp(c) => Some(*c),
                        _ => None,
                    })
                    .and_then(cmp_of)
                    .ok_or_else(|| {
                        self.error(spec, Some(inst), "this comparison is not translated")
                    })?;
                let a = self.value(spec, &inst.operands[1], inst)?;
                let b = self.value(spec, &inst.operands[2], inst)?;
                let (c, unsigned) = cmp;
                let unsigned = unsigned || !is_signed(ty);
                let v = match (&a, &b) {
                    (Val::Int(x), Val::Int(y)) => {
                        let (x, y) = if unsigned {
                            (mask(*x, w) as i128, mask(*y, w) as i128)
                        } else {
                            (i128::from(signed(*x, w)), i128::from(signed(*y, w)))
                        };
                        let holds = match c {
                            CmpOp::Eq => x == y,
                            CmpOp::Ne => x != y,
                            CmpOp::Lt => x < y,
                            CmpOp::Le => x <= y,
                            CmpOp::Gt => x > y,
                            CmpOp::Ge => x >= y,
                        };
                        Val::Int(u64::from(holds))
                    }
                    _ => Val::Cond(
                        c,
                        self.operand(spec, &a, inst)?,
                        self.operand(spec, &b, inst)?,
                    ),
                };
                self.set(spec, &dst, v, e, inst);
            }
            "ld" | "st" | "atom" | "red" => return self.memory(spec, inst, e),
            "bar" | "barrier" => {
                if !(inst.has_modifier("sync") || op == "bar")
                    || inst.has_modifier("arrive")
                    || inst.operands.len() > 1
                {
                    return Err(self.error(
                        spec,
                        Some(inst),
                        "only `bar.sync 0` (the whole CTA) is translated",
                    ));
                }
                spec.barriers += 1;
                let k = spec.barriers;
                e.push(
                    Instr::Barrier {
                        arrive: false,
                        instance: k,
                        id: None,
                        quorum: None,
                    },
                    self.pos(inst),
                    format!("bar.sync #{k}  ({})", self.text(inst)),
                );
            }
            "call" => return self.call(spec, inst),
            "fence" | "membar" => {
                return Err(self.error(spec, Some(inst), "fences are not translated yet"));
            }
            _ => return Err(self.error(spec, Some(inst), "this instruction is not translated")),
        }
        Ok(Go::Next)
    }

    #[allow(clippy::too_many_arguments)]
    fn arith(
        &self,
        spec: &Spec,
        inst: &Instruction,
        op: &str,
        x: u64,
        y: u64,
        w: u32,
        wide: bool,
    ) -> Result<u64, TranslateError> {
        let out_w = if wide { (w * 2).min(64) } else { w };
        let signed_ty = is_signed(inst.ty());
        let (xs, ys) = (signed(x, w), signed(y, w));
        let (xu, yu) = (mask(x, w), mask(y, w));
        let v = match op {
            "add" => xu.wrapping_add(yu),
            "sub" => xu.wrapping_sub(yu),
            "mul" if wide && signed_ty => (xs.wrapping_mul(ys)) as u64,
            "mul" => xu.wrapping_mul(yu),
            "shl" => xu.checked_shl(y as u32).unwrap_or(0),
            "shr" if signed_ty => xs
                .checked_shr(y as u32)
                .unwrap_or(if xs < 0 { -1 } else { 0 }) as u64,
            "shr" => xu.checked_shr(y as u32).unwrap_or(0),
            "and" => xu & yu,
            "or" => xu | yu,
            "xor" => xu ^ yu,
            "min" if signed_ty => xs.min(ys) as u64,
            "min" => xu.min(yu),
            "max" if signed_ty => xs.max(ys) as u64,
            "max" => xu.max(yu),
            "div" | "rem" if yu == 0 => {
                return Err(self.error(spec, Some(inst), "division by zero"));
            }
            "div" if signed_ty => xs.wrapping_div(ys) as u64,
            "div" => xu / yu,
            "rem" if signed_ty => xs.wrapping_rem(ys) as u64,
            "rem" => xu % yu,
            _ => return Err(self.error(spec, Some(inst), "this operation is not translated")),
        };
        Ok(mask(v, out_w))
    }

    fn call(&self, spec: &mut Spec, inst: &Instruction) -> Result<Go, TranslateError> {
        let (returns, name, args) = match inst.operands.as_slice() {
            [Operand::Symbol { name, .. }] => (Vec::new(), name, Vec::new()),
            [Operand::Symbol { name, .. }, Operand::List(args)] => (Vec::new(), name, args.clone()),
            [Operand::List(rets), Operand::Symbol { name, .. }] => (rets.clone(), name, Vec::new()),
            [
                Operand::List(rets),
                Operand::Symbol { name, .. },
                Operand::List(args),
            ] => (rets.clone(), name, args.clone()),
            _ => return Err(self.error(spec, Some(inst), "an indirect or unusual call")),
        };
        let callee = self
            .module
            .functions
            .iter()
            .position(|f| &f.name == name && f.defined())
            .ok_or_else(|| {
                self.error(
                    spec,
                    Some(inst),
                    format!("{name} has no body in this module"),
                )
            })?;
        if spec.frames.iter().any(|f| f.function == callee) {
            return Err(self.error(spec, Some(inst), format!("{name} is recursive")));
        }
        let f = &self.module.functions[callee];
        let slot = |o: &Operand| match o {
            Operand::Symbol { name, .. } | Operand::Reg(name) => Some(name.clone()),
            _ => None,
        };
        let caller = spec.frames.last_mut().expect("a frame");
        let mut params = BTreeMap::new();
        for (p, a) in f.params.iter().zip(&args) {
            let Some(a) = slot(a) else { continue };
            if let Some(v) = caller.params.get(&a) {
                params.insert(p.name.clone(), v.clone());
            }
        }
        caller.returns = returns.iter().filter_map(slot).collect();
        spec.frames.push(Frame {
            function: callee,
            pc: 0,
            regs: BTreeMap::new(),
            params,
            returns: Vec::new(),
        });
        // The callee starts at pc 0; `straight_line` does not advance it.
        Ok(Go::Jump(0))
    }

    fn memory(
        &self,
        spec: &mut Spec,
        inst: &Instruction,
        e: &mut Emit,
    ) -> Result<Go, TranslateError> {
        let op = inst.opcode.as_str();
        if inst
            .modifiers
            .iter()
            .any(|m| matches!(m, ptx_reader::Modifier::Vector(_)))
            && !matches!(
                inst.space(),
                Some(StateSpace::Local) | Some(StateSpace::Param)
            )
        {
            return Err(self.error(
                spec,
                Some(inst),
                "vector accesses to memory are not translated",
            ));
        }
        let depth = spec.frames.len();
        match (op, inst.space()) {
            // Parameters and local memory are thread-private: known values.
            ("ld", Some(StateSpace::Param)) => {
                let dst = self.dst(spec, inst)?.to_string();
                let Some(Operand::Address {
                    base: AddressBase::Symbol(name),
                    offset: 0,
                }) = inst.operands.get(1)
                else {
                    return Err(self.error(spec, Some(inst), "a parameter load at an offset"));
                };
                let v = spec
                    .frames
                    .last()
                    .expect("a frame")
                    .params
                    .get(name)
                    .cloned()
                    .ok_or_else(|| {
                        self.error(spec, Some(inst), format!("parameter {name} has no value"))
                    })?;
                self.set(spec, &dst, v, e, inst);
                return Ok(Go::Next);
            }
            ("st", Some(StateSpace::Param)) => {
                let Some(Operand::Address {
                    base: AddressBase::Symbol(name),
                    offset: 0,
                }) = inst.operands.first()
                else {
                    return Err(self.error(spec, Some(inst), "a parameter store at an offset"));
                };
                let v = self.value(spec, &inst.operands[1], inst)?;
                let v = self.home(spec, v, format!("param:{depth}:{name}"), e, inst);
                spec.frames
                    .last_mut()
                    .expect("a frame")
                    .params
                    .insert(name.clone(), v);
                return Ok(Go::Next);
            }
            _ => {}
        }
        let addr_at = usize::from(op != "st" && op != "red");
        let (base, off) = self.address(spec, &inst.operands[addr_at], inst)?;
        if let Base::Local(frame) = base {
            let count = inst.modifiers.iter().find_map(|m| match m {
                ptx_reader::Modifier::Vector(n) => Some(usize::from(*n)),
                _ => None,
            });
            let size = inst.ty().map_or(4, Type::size) as i64;
            match op {
                "ld" => {
                    let dsts: Vec<String> = match (&inst.operands[0], count) {
                        (Operand::Vector(v), Some(_)) => {
                            v.iter().map(ToString::to_string).collect()
                        }
                        (Operand::Reg(r), None) => vec![r.clone()],
                        _ => return Err(self.error(spec, Some(inst), "an unusual local load")),
                    };
                    for (i, d) in dsts.iter().enumerate() {
                        let v = spec
                            .local
                            .get(&(frame, off + i as i64 * size))
                            .cloned()
                            .ok_or_else(|| {
                                self.error(spec, Some(inst), "a local load of a byte never stored")
                            })?;
                        self.set(spec, d, v, e, inst);
                    }
                }
                "st" => {
                    let srcs: Vec<Operand> = match (&inst.operands[1], count) {
                        (Operand::Vector(v), Some(_)) => v.clone(),
                        (o, None) => vec![o.clone()],
                        _ => return Err(self.error(spec, Some(inst), "an unusual local store")),
                    };
                    for (i, s) in srcs.iter().enumerate() {
                        let at = off + i as i64 * size;
                        let v = self.value(spec, s, inst)?;
                        let v = self.home(spec, v, format!("local:{frame}:{at}"), e, inst);
                        spec.local.insert((frame, at), v);
                    }
                }
                _ => return Err(self.error(spec, Some(inst), "an atomic on local memory")),
            }
            return Ok(Go::Next);
        }
        // An input no thread writes: its loads are known values.
        if let Base::Buffer(b) = base
            && let Some(Param::Buffer {
                init,
                read_only: true,
                name,
            }) = self.launch.params.get(b)
        {
            let at = usize::try_from(off / 4).ok().filter(|_| off % 4 == 0);
            let Some(v) = at.and_then(|i| init.get(i)) else {
                return Err(self.error(
                    spec,
                    Some(inst),
                    format!("byte {off} of input `{name}` is outside it"),
                ));
            };
            if op != "ld" {
                return Err(self.error(
                    spec,
                    Some(inst),
                    format!("a write to the input `{name}`, which the launch declares read-only"),
                ));
            }
            let dst = self.dst(spec, inst)?.to_string();
            self.set(spec, &dst, Val::Int(u64::from(*v)), e, inst);
            return Ok(Go::Next);
        }
        let loc = self.location(spec, &base, off, inst)?;
        let rmw = matches!(op, "atom" | "red");
        let (order, scope) = self.order(spec, inst, rmw)?;
        let text = self.text(inst);
        let pos = self.pos(inst);
        match op {
            "ld" => {
                let dst = self.dst(spec, inst)?.to_string();
                let home = e.reg(format!("{depth}:{dst}"));
                e.push(
                    Instr::Load {
                        order,
                        scope,
                        dst: home,
                        loc,
                    },
                    pos,
                    text,
                );
                self.set(spec, &dst, Val::Reg(home), e, inst);
            }
            "st" => {
                let v = word(self.value(spec, &inst.operands[1], inst)?);
                let value = self.operand(spec, &v, inst)?;
                e.push(
                    Instr::Store {
                        order,
                        scope,
                        loc,
                        value,
                    },
                    pos,
                    text,
                );
            }
            "atom" | "red" => {
                let scope = scope.unwrap_or(lit::Scope::Gpu);
                let selector = inst.modifiers.iter().find_map(|m| match m {
                    ptx_reader::Modifier::Op(o) => Some(*o),
                    _ => None,
                });
                let first_value = if op == "atom" { 2 } else { 1 };
                let v = word(self.value(spec, &inst.operands[first_value], inst)?);
                let value = self.operand(spec, &v, inst)?;
                let bin = |o: &str| match o {
                    "add" => Some(lit::BinOp::Add),
                    "and" => Some(lit::BinOp::And),
                    "or" => Some(lit::BinOp::Or),
                    "xor" => Some(lit::BinOp::Xor),
                    _ => None,
                };
                if op == "red" {
                    let Some(b) = selector.and_then(bin) else {
                        return Err(self.error(
                            spec,
                            Some(inst),
                            "this reduction is not translated",
                        ));
                    };
                    e.push(
                        Instr::Red {
                            order,
                            scope,
                            op: b,
                            loc,
                            value,
                        },
                        pos,
                        text,
                    );
                    return Ok(Go::Next);
                }
                let dst = self.dst(spec, inst)?.to_string();
                let home = e.reg(format!("{depth}:{dst}"));
                let (aop, value) = match selector {
                    Some("exch") => (AtomOp::Exch, value),
                    Some("cas") => {
                        let new = word(self.value(spec, &inst.operands[3], inst)?);
                        (
                            AtomOp::Cas { expected: value },
                            self.operand(spec, &new, inst)?,
                        )
                    }
                    Some(o) => match bin(o) {
                        Some(b) => (AtomOp::Bin(b), value),
                        None => {
                            return Err(self.error(
                                spec,
                                Some(inst),
                                "this atomic is not translated",
                            ));
                        }
                    },
                    None => {
                        return Err(self.error(spec, Some(inst), "an atomic without an operation"));
                    }
                };
                e.push(
                    Instr::Atom {
                        order,
                        scope,
                        op: aop,
                        dst: home,
                        loc,
                        value,
                    },
                    pos,
                    text,
                );
                self.set(spec, &dst, Val::Reg(home), e, inst);
            }
            _ => unreachable!("memory() is called for ld, st, atom and red"),
        }
        Ok(Go::Next)
    }

    /// Keeps a loaded value in a register of its own (`owner`), so that a
    /// later write to the register it came from does not change it.
    fn home(&self, spec: &Spec, v: Val, owner: String, e: &mut Emit, inst: &Instruction) -> Val {
        let _ = spec;
        match v {
            Val::Reg(r) => {
                let home = e.reg(owner);
                if home != r {
                    e.push(
                        Instr::Move {
                            dst: home,
                            value: LOp::Reg(r),
                        },
                        self.pos(inst),
                        format!("{home} := {r}  ({})", self.text(inst)),
                    );
                }
                Val::Reg(home)
            }
            other => other,
        }
    }
}
