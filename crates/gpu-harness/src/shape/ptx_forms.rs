//! The `ptx-forms` check: the PTX libNVVM makes of a kernel holds the
//! instruction forms the memory model (`memory-model`) assumes, as many as the
//! kernel implies. It used to live in the memory model as its "item 7"; it is a
//! property of the compiled code, so it is a shape check here, read with the
//! workspace's one PTX reader ([`ptx_reader`]).
//!
//! - **Ordered accesses.** Every acquire (or seq_cst) atomic load of the device
//!   IR stands for the model's `ld.acquire`, and must appear in the PTX as
//!   `ld` with the modifiers `acquire`, its scope and its width
//!   (`ld.acquire.sys.u32`); every release (or seq_cst) atomic store as
//!   `st.release.sys.u32`. At `-opt=0` each function's PTX has exactly as many
//!   as its device IR; at `-opt=3`, where helpers are inlined, each form occurs
//!   somewhere in the module.
//! - **Volatile accesses.** Every volatile load or store of the device IR
//!   (`ptr::read_volatile` / `write_volatile` through a pointer the function
//!   did not make) must appear as `ld.volatile` / `st.volatile` of its width,
//!   counted the same way: exactly per function at `-opt=0`, somewhere at
//!   `-opt=3`. A plain access there would let libNVVM fold or hoist it.
//! - **Barriers.** The `sync_threads` / `barrier_wait` call sites of the MIR of
//!   the lowered functions, the device IR's `barrier` instructions and the
//!   `bar.sync` instructions of the `-opt=0` PTX are equally many. At `-opt=3`
//!   libNVVM may unroll a counted loop, so the count there is either the call
//!   sites or the barriers each thread executes, which the virtual device
//!   counts by running the fixture's launches (from the manifest beside the
//!   kernel).
//!
//! This is a **syntactic** check of the PTX (opcodes and modifiers), not a
//! semantics of PTX; every failure says so.

use std::collections::BTreeMap;
use std::fmt;

use device_ir::{InstData, MemFlags, Module, Ordering};
use mir_import::model::{Callee, TerminatorKind};
use mir_import::prelude::Intrinsic;

use super::{ShapeCheck, ShapeFailure, ShapeInput};
use ptx_reader::{Instruction, Module as PtxModule};

/// The words every failure of this check carries.
pub const SYNTACTIC: &str = "a syntactic check of the PTX (opcodes and modifiers), not a semantics";

/// The CTA barrier the model's shared barrier stands for.
pub const BAR_SYNC: &str = "bar.sync";

/// An access form the device IR asks for: an opcode with its order, scope
/// (none for `volatile`) and width.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Form {
    /// `ld` or `st`.
    pub opcode: &'static str,
    /// `acquire`, `release` or `volatile`.
    pub order: &'static str,
    /// `cta`, `gpu` or `sys`; `None` for `volatile`, which has none.
    pub scope: Option<&'static str>,
    /// `u` for an integer or pointer, `f` for a float. An integer form
    /// matches any integer type letter of its width (PTX may write `.u8`,
    /// `.s8` when a load is sign-extended, or `.b8`), a float form only
    /// `.f`.
    pub class: char,
    /// The width in bits.
    pub bits: u64,
}

impl Form {
    /// Whether `i` has this form: the opcode, the order and scope modifiers,
    /// and a type of the form's width and class, in any state space
    /// (`ld.acquire.sys.global.u32` is `ld.acquire.sys.u32` through a global
    /// pointer).
    pub fn matches(&self, i: &Instruction) -> bool {
        let modifiers: &[&str] = match self.scope {
            Some(scope) => &[self.order, scope],
            None => &[self.order],
        };
        let float =
            |t: ptx_reader::Type| matches!(t, ptx_reader::Type::F32 | ptx_reader::Type::F64);
        i.is(self.opcode, modifiers)
            && i.ty()
                .is_some_and(|t| t.size() * 8 == self.bits && float(t) == (self.class == 'f'))
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.opcode, self.order)?;
        if let Some(scope) = self.scope {
            write!(f, ".{scope}")?;
        }
        write!(f, ".{}{}", self.class, self.bits)
    }
}

/// One form in one function: how many the device IR and the `-opt=0` PTX have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormCount {
    /// The form.
    pub form: Form,
    /// The device IR function (its PTX symbol).
    pub function: String,
    /// Accesses of this form in the function's device IR.
    pub ir: usize,
    /// Instructions of this form in the function's `-opt=0` PTX; `None` when
    /// the PTX does not define the function.
    pub ptx_o0: Option<usize>,
}

/// What the check measured; [`judge`] turns it into failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Findings {
    /// Every ordered or volatile form of the device IR, per function.
    pub forms: Vec<FormCount>,
    /// Every form of [`Findings::forms`], with its count in the whole `-opt=3` PTX.
    pub forms_o3: BTreeMap<Form, usize>,
    /// Instructions in the `-opt=3` and `-opt=0` PTX (a check that read no
    /// instruction would pass vacuously).
    pub instructions: (usize, usize),
    /// `sync_threads` / `barrier_wait` call sites in the MIR of the lowered
    /// functions; `None` without the MIR.
    pub mir_barrier_calls: Option<usize>,
    /// `barrier` instructions in the device IR.
    pub ir_barriers: usize,
    /// `bar.sync` instructions in the `-opt=0` PTX.
    pub bar_sync_o0: usize,
    /// `bar.sync` instructions in the `-opt=3` PTX.
    pub bar_sync_o3: usize,
    /// The barriers each thread executes, counted on the virtual device only
    /// when the `-opt=3` count differs from the call sites: `None` when not
    /// needed, `Err` with why it is unknown.
    pub per_thread: Option<Result<u64, String>>,
}

fn fail(m: impl Into<String>) -> ShapeFailure {
    ShapeFailure::new(ShapeCheck::PtxForms, format!("{} ({SYNTACTIC})", m.into()))
}

/// The check: [`findings`] then [`judge`].
pub fn ptx_forms(input: &ShapeInput<'_>) -> Vec<ShapeFailure> {
    match findings(input) {
        Ok(f) => judge(&f),
        Err(e) => vec![e],
    }
}

/// The volatile form of a load (`ld`) or store (`st`) of `ty`.
fn volatile_form(module: &Module, opcode: &'static str, ty: device_ir::Ty) -> Form {
    Form {
        opcode,
        order: "volatile",
        scope: None,
        class: if module.types.is_float(ty) { 'f' } else { 'u' },
        bits: device_ir::layout::size_of(&module.types, ty) * 8,
    }
}

/// The ordered and volatile forms of the device IR: (form, function) → count.
fn ir_forms(module: &Module) -> BTreeMap<(Form, String), usize> {
    let mut out = BTreeMap::new();
    for f in module.functions.values() {
        let Some(body) = &f.body else { continue };
        for data in body.insts.values() {
            let volatile = match data {
                InstData::Load { ty, flags, .. } if flags.contains(MemFlags::VOLATILE) => {
                    Some(volatile_form(module, "ld", *ty))
                }
                InstData::Store { value, flags, .. } if flags.contains(MemFlags::VOLATILE) => {
                    Some(volatile_form(module, "st", body.value_ty(*value)))
                }
                _ => None,
            };
            if let Some(form) = volatile {
                *out.entry((form, f.name.clone())).or_insert(0) += 1;
                continue;
            }
            let (opcode, order, ordering, scope, ty) = match data {
                InstData::AtomicLoad {
                    ty,
                    ordering,
                    scope,
                    ..
                } => ("ld", "acquire", *ordering, *scope, *ty),
                InstData::AtomicStore {
                    value,
                    ordering,
                    scope,
                    ..
                } => ("st", "release", *ordering, *scope, body.value_ty(*value)),
                _ => continue,
            };
            let ordered = match opcode {
                "ld" => matches!(ordering, Ordering::Acquire | Ordering::SeqCst),
                _ => matches!(ordering, Ordering::Release | Ordering::SeqCst),
            };
            if !ordered {
                continue;
            }
            let form = Form {
                opcode,
                order,
                scope: Some(scope.name()),
                class: 'u',
                bits: device_ir::layout::size_of(&module.types, ty) * 8,
            };
            *out.entry((form, f.name.clone())).or_insert(0) += 1;
        }
    }
    out
}

/// The `sync_threads` / `barrier_wait` call sites of the lowered functions' MIR.
fn mir_barrier_calls(krate: &mir_import::Crate, lowered: &mir_lower::Lowered) -> usize {
    lowered
        .functions
        .keys()
        .filter_map(|path| krate.fn_body(path))
        .flat_map(|id| krate.bodies[id].blocks.values())
        .filter(|bb| match &bb.terminator.kind {
            TerminatorKind::Call {
                func: Callee::Item(c),
                ..
            } => matches!(
                mir_import::prelude::intrinsic(&c.def_path()),
                Some(Intrinsic::SyncThreads | Intrinsic::BarrierWait)
            ),
            _ => false,
        })
        .count()
}

fn bar_syncs(m: &PtxModule) -> usize {
    m.functions
        .iter()
        .filter(|f| f.defined())
        .map(|f| f.instructions_with_opcode(BAR_SYNC).count())
        .sum()
}

/// Measures the kernel: its device IR, its MIR and both PTX files.
pub fn findings(input: &ShapeInput<'_>) -> Result<Findings, ShapeFailure> {
    let module = &input.lowered.module;
    let o3 = ptx_reader::parse(input.ptx_o3).map_err(|e| fail(format!("the -opt=3 PTX: {e}")))?;
    let o0 = ptx_reader::parse(input.ptx_o0).map_err(|e| fail(format!("the -opt=0 PTX: {e}")))?;
    let mut forms = Vec::new();
    let mut forms_o3 = BTreeMap::new();
    for ((form, function), ir) in ir_forms(module) {
        let ptx_o0 = o0
            .definition(&function)
            .map(|f| f.instructions().filter(|i| form.matches(i)).count());
        let in_o3 = o3.instructions().filter(|(_, i)| form.matches(i)).count();
        forms_o3.insert(form.clone(), in_o3);
        forms.push(FormCount {
            form,
            function,
            ir,
            ptx_o0,
        });
    }
    let ir_barriers = module
        .functions
        .values()
        .filter_map(|f| f.body.as_ref())
        .flat_map(|b| b.insts.values())
        .filter(|i| matches!(i, InstData::Barrier))
        .count();
    let mir_barrier_calls = input.mir.map(|k| mir_barrier_calls(k, input.lowered));
    let bar_sync_o3 = bar_syncs(&o3);
    let per_thread = (mir_barrier_calls != Some(bar_sync_o3) && ir_barriers > 0)
        .then(|| barriers_per_thread(input));
    Ok(Findings {
        forms,
        forms_o3,
        instructions: (o3.instructions().count(), o0.instructions().count()),
        mir_barrier_calls,
        ir_barriers,
        bar_sync_o0: bar_syncs(&o0),
        bar_sync_o3,
        per_thread,
    })
}

/// The barriers each thread executes, from a run of the fixture's launches
/// (its `manifest.toml` beside `kernel.rs`) on the virtual device.
fn barriers_per_thread(input: &ShapeInput<'_>) -> Result<u64, String> {
    let dir = input
        .kernel
        .parent()
        .ok_or_else(|| format!("{} has no folder", input.kernel.display()))?;
    let f = crate::fixture::Fixture::load(dir).map_err(|e| e.to_string())?;
    crate::launch::barriers_per_thread(&f, input.lowered)
        .map_err(|e| format!("the virtual device run: {e}"))
}

/// Every rule of the check on `f`: an empty vector when the PTX holds them all.
pub fn judge(f: &Findings) -> Vec<ShapeFailure> {
    let mut out = Vec::new();
    let (i3, i0) = f.instructions;
    for (level, n) in [("-opt=3", i3), ("-opt=0", i0)] {
        if n == 0 {
            out.push(fail(format!("the {level} PTX has no instructions")));
        }
    }
    for c in &f.forms {
        match c.ptx_o0 {
            None => out.push(fail(format!(
                "-opt=0: {} is not defined in the PTX, so its `{}` cannot be counted",
                c.function, c.form
            ))),
            Some(n) if n != c.ir => out.push(fail(format!(
                "-opt=0: `{}` occurs {n} time(s) in {}, whose device IR has {} such access(es)",
                c.form, c.function, c.ir
            ))),
            Some(_) => {}
        }
    }
    for (form, n) in &f.forms_o3 {
        if *n == 0 {
            out.push(fail(format!(
                "-opt=3: `{form}` occurs nowhere in the PTX, though the device IR has it"
            )));
        }
    }
    let Some(calls) = f.mir_barrier_calls else {
        out.push(fail(
            "no MIR was given, so the barriers cannot be counted against the kernel's call sites",
        ));
        return out;
    };
    if f.ir_barriers != calls {
        out.push(fail(format!(
            "the device IR has {} barrier instruction(s), the MIR {calls} sync_threads call site(s)",
            f.ir_barriers
        )));
    }
    if f.bar_sync_o0 != calls {
        out.push(fail(format!(
            "-opt=0: {} `{BAR_SYNC}` instruction(s), the MIR {calls} call site(s)",
            f.bar_sync_o0
        )));
    }
    let unrolled = matches!(f.per_thread, Some(Ok(n)) if n == f.bar_sync_o3 as u64);
    if f.bar_sync_o3 != calls && !unrolled {
        let per_thread = match &f.per_thread {
            Some(Ok(n)) => n.to_string(),
            Some(Err(why)) => format!("unknown ({why})"),
            None => "not counted".into(),
        };
        out.push(fail(format!(
            "-opt=3: {} `{BAR_SYNC}` instruction(s), neither the {calls} call site(s) nor the \
             {per_thread} barrier(s) each thread executes (an unrolled loop)",
            f.bar_sync_o3
        )));
    }
    out
}
