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
    self as lit, CmpOp, Instr, Label, Line, Loc, Operand as LOp, Pos, Reg, Test, Thread,
};
use ptx_reader::{Function, Instruction, Module, StateSpace, Statement};

use crate::launch::{Launch, Param};

mod inst;
mod memory;
mod values;

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

impl Spec {
    /// The frame being run. A `Spec` always has one: returning from the
    /// entry's frame ends the walk ([`Ctx::ret`]).
    fn top(&self) -> &Frame {
        self.frames
            .last()
            .expect("a Spec always has the frame being run")
    }

    /// The frame being run, to change.
    fn top_mut(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("a Spec always has the frame being run")
    }
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
            // `.extern .shared x[]` is the launch's dynamic shared memory,
            // whose size the launch gives and this model does not have.
            if var.dims.contains(&None) {
                return Err(refuse(format!(
                    "the shared array {} has no size in the PTX (dynamic shared memory is not modelled)",
                    var.name
                )));
            }
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
        &self.module.functions[spec.top().function]
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
            let frame = spec.top();
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
            let frame = spec.top();
            let Some(stmt) = self.bodies[frame.function].get(frame.pc) else {
                // Falling off a function's end is a return.
                if self.ret(&mut spec) {
                    let end = e.end;
                    e.push(Instr::Goto(end), Pos { line: 0, col: 0 }, "ret".into());
                    return Ok(());
                }
                spec.top_mut().pc += 1;
                continue;
            };
            let Statement::Inst(inst) = stmt else {
                spec.top_mut().pc += 1;
                continue;
            };
            match self.inst(&mut spec, inst, e)? {
                Go::Next => spec.top_mut().pc += 1,
                Go::Jump(to) => spec.top_mut().pc = to,
                Go::Fork(cmp, a, b, to) => {
                    let mut taken = spec.clone();
                    taken.top_mut().pc = to;
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
                    spec.top_mut().pc += 1;
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

    /// Returns from the top frame: its return values reach the caller's
    /// slots, its local memory goes; the caller stays at its `call` (the
    /// walk moves it on). True when the entry returned: the thread ends.
    fn ret(&self, spec: &mut Spec) -> bool {
        let Some(done) = spec.frames.pop() else {
            return true;
        };
        let depth = spec.frames.len();
        spec.local.retain(|(fr, _), _| *fr <= depth);
        let Some(caller) = spec.frames.last_mut() else {
            return true;
        };
        let callee = &self.module.functions[done.function];
        let returns = std::mem::take(&mut caller.returns);
        for (slot, r) in returns.iter().zip(&callee.returns) {
            if let Some(v) = done.params.get(&r.name) {
                caller.params.insert(slot.clone(), v.clone());
            }
        }
        false
    }
}
