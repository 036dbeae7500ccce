//! Item 7, the PTX forms: the PTX that this project's own pipeline emits
//! (mir-import → mir-lower → nvvm-emit → libNVVM) for the fixtures whose
//! memory-model behaviour the theorems cover holds the instruction forms the
//! model assumes.
//!
//! - `atomic_flag`: the release store and the acquire load are
//!   `st.release.sys.u32` and `ld.acquire.sys.u32` (nvvm-emit writes them as
//!   inline PTX with generic addresses, so there is no state-space suffix).
//! - `shared_reduction`: the number of `bar.sync` instructions equals the
//!   barriers the kernel implies: at `-opt=0`, the `sync_threads` call sites
//!   of its MIR (which are also the device IR's `barrier` instructions); at
//!   `-opt=3`, where libNVVM may unroll the counted loop, either that or the
//!   barriers each thread executes in the extracted program.
//!
//! This is a **syntactic** check of the PTX text: it reads opcodes, it does
//! not give PTX a semantics, and every report says so.

use std::path::Path;
use std::time::Instant;

use device_ir::InstData;
use mir_import::model::{Callee, TerminatorKind};
use mir_import::prelude::Intrinsic;
use nvvm_emit::{CompileOptions, Libnvvm};

use crate::checks::{Outcome, Report, report};
use crate::extract::{self, fixtures};
use crate::lang::{BarrierKind, Program, Stmt, StmtId};

/// The words every report of this module carries.
pub const SYNTACTIC: &str =
    "a syntactic check of the PTX text (opcodes only), not a semantics of PTX";

/// The architecture compiled for (`compute_90`).
pub const ARCH: u32 = 90;

/// The acquire-load form the model's `ld.acquire` stands for.
pub const ACQUIRE_LOAD: &str = "ld.acquire.sys.u32";
/// The release-store form the model's `st.release` stands for.
pub const RELEASE_STORE: &str = "st.release.sys.u32";
/// The CTA barrier the model's shared barrier stands for.
pub const BAR_SYNC: &str = "bar.sync";

/// One fixture through the pipeline.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// PTX at `-opt=3`.
    pub ptx_o3: String,
    /// PTX at `-opt=0`.
    pub ptx_o0: String,
    /// `sync_threads` / `barrier_wait` call sites in the MIR of the lowered functions.
    pub mir_barrier_calls: usize,
    /// `barrier` instructions in the device IR.
    pub ir_barriers: usize,
    /// The imported crate, for extraction.
    pub krate: mir_import::Crate,
}

/// Runs fixture `name` of `dir` through mir-import (twin fallback on),
/// mir-lower, the NVVM printer and `nvvm` at `-opt=3` and `-opt=0`.
pub fn compile(dir: &Path, name: &str, nvvm: &Libnvvm) -> Result<Compiled, String> {
    let kernel = dir.join(name).join("kernel.rs");
    let mut imp = mir_import::import_and_evaluate(&kernel, &Default::default(), true)
        .map_err(|e| format!("import of {}: {e}", kernel.display()))?;
    let lowered =
        mir_lower::lower(&mut imp).map_err(|e| format!("lowering of {}: {e}", kernel.display()))?;
    let mir_barrier_calls = lowered
        .functions
        .keys()
        .filter_map(|path| imp.krate.fn_body(path))
        .flat_map(|id| imp.krate.bodies[id].blocks.values())
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
        .count();
    let ir_barriers = lowered
        .module
        .functions
        .values()
        .filter_map(|f| f.body.as_ref())
        .flat_map(|b| b.insts.values())
        .filter(|i| matches!(i, InstData::Barrier))
        .count();
    let ir = nvvm_emit::print_module(&lowered.module);
    let ptx = |opt: u8| {
        nvvm.compile(&ir, &CompileOptions::ptx(ARCH, opt))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| format!("libNVVM -opt={opt} on {name}: {e}"))
    };
    Ok(Compiled {
        ptx_o3: ptx(3)?,
        ptx_o0: ptx(0)?,
        mir_barrier_calls,
        ir_barriers,
        krate: imp.krate,
    })
}

/// One PTX instruction: the function it is in, and its text without `;`,
/// whitespace collapsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxInst {
    /// The enclosing `.entry` or `.func`.
    pub function: String,
    /// The instruction.
    pub text: String,
}

impl PtxInst {
    /// The opcode: the first token after any `@p` guard.
    pub fn opcode(&self) -> &str {
        let mut t = self.text.split_whitespace();
        let first = t.next().unwrap_or("");
        if first.starts_with('@') {
            t.next().unwrap_or("")
        } else {
            first
        }
    }
}

/// The instructions of every function body of `ptx`, in order. Comments,
/// directives, declarations and labels are skipped; a body is the balanced
/// braces after an `.entry` or `.func` header.
pub fn instructions(ptx: &str) -> Vec<PtxInst> {
    let text: String = ptx
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut function: Option<String> = None;
    let mut stmt = String::new();
    for c in text.chars() {
        match c {
            '{' | '}' | ';' => {
                let s = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
                stmt.clear();
                if c == '{' && depth == 0 {
                    function = header_name(&s);
                    // An initializer (`= {..}`) is not a body.
                    if function.is_none() {
                        depth += 1;
                        continue;
                    }
                }
                if depth > 0
                    && let Some(f) = &function
                    && !s.is_empty()
                    && !s.starts_with('.')
                {
                    let s = strip_labels(&s);
                    if !s.is_empty() {
                        out.push(PtxInst {
                            function: f.clone(),
                            text: s.to_string(),
                        });
                    }
                }
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            function = None;
                        }
                    }
                    _ => {}
                }
            }
            _ => stmt.push(c),
        }
    }
    out
}

fn strip_labels(mut s: &str) -> &str {
    while let Some((label, rest)) = s.split_once(':') {
        if !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        {
            s = rest.trim_start();
        } else {
            break;
        }
    }
    s
}

/// The function name of a header (`.visible .entry k(...)`, `.func (.param ..) f(..)`).
fn header_name(s: &str) -> Option<String> {
    if s.contains('=') {
        return None;
    }
    let at = s
        .find(".entry")
        .map(|i| i + ".entry".len())
        .or_else(|| s.find(".func").map(|i| i + ".func".len()))?;
    let mut rest = s[at..].trim_start();
    if rest.starts_with('(') {
        let close = rest.find(')')?;
        rest = rest[close + 1..].trim_start();
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The instructions whose opcode is exactly `op`.
pub fn with_opcode<'a>(insts: &'a [PtxInst], op: &str) -> Vec<&'a PtxInst> {
    insts.iter().filter(|i| i.opcode() == op).collect()
}

/// The distinct opcodes of loads and stores that carry a memory-order
/// qualifier (`.acquire`, `.release`, `.relaxed`, `.volatile`), sorted.
pub fn ordered_forms(insts: &[PtxInst]) -> Vec<String> {
    let mut forms: Vec<String> = insts
        .iter()
        .map(PtxInst::opcode)
        .filter(|op| op.starts_with("ld.") || op.starts_with("st.") || op.starts_with("atom."))
        .filter(|op| {
            op.split('.')
                .any(|q| matches!(q, "acquire" | "release" | "relaxed" | "volatile"))
        })
        .map(str::to_string)
        .collect();
    forms.sort();
    forms.dedup();
    forms
}

fn where_found(found: &[&PtxInst]) -> String {
    let mut fns: Vec<&str> = found.iter().map(|i| i.function.as_str()).collect();
    fns.dedup();
    fns.join(", ")
}

/// The `atomic_flag` forms, on PTX text at both levels.
pub fn forms_outcome(ptx_o3: &str, ptx_o0: &str) -> Outcome {
    let mut o = Outcome::new();
    o.note(format!("this is {SYNTACTIC}"));
    for (level, ptx) in [("-opt=3", ptx_o3), ("-opt=0", ptx_o0)] {
        let insts = instructions(ptx);
        o.explored(insts.len() as u64);
        o.expect(
            !insts.is_empty(),
            format!("{level}: the PTX has instructions"),
        );
        for form in [ACQUIRE_LOAD, RELEASE_STORE] {
            let found = with_opcode(&insts, form);
            o.expect(
                !found.is_empty(),
                format!(
                    "{level}: `{form}` occurs {} time(s), in {}",
                    found.len(),
                    where_found(&found)
                ),
            );
        }
        o.note(format!(
            "{level}: every ordered load/store form: {}",
            ordered_forms(&insts).join(", ")
        ));
    }
    o
}

/// The barriers each thread executes in `program`'s thread-0 body: `None`
/// when a conditional has a different count on each side.
pub fn dynamic_barriers(program: &Program) -> Option<u64> {
    fn count(p: &Program, id: StmtId) -> Option<u64> {
        match p.stmt(id) {
            Stmt::Barrier(BarrierKind::Shared) => Some(1),
            Stmt::Barrier(BarrierKind::LegacyGlobal)
            | Stmt::Assign { .. }
            | Stmt::Load { .. }
            | Stmt::Store { .. } => Some(0),
            Stmt::Seq(items) => items.iter().map(|&s| count(p, s)).sum(),
            Stmt::If { then, els, .. } => {
                let (a, b) = (count(p, *then)?, count(p, *els)?);
                (a == b).then_some(a)
            }
            Stmt::For { count: n, body, .. } => Some(u64::from(*n) * count(p, *body)?),
        }
    }
    count(program, *program.bodies.first()?)
}

/// The `shared_reduction` barrier counts.
pub fn barriers_outcome(
    mir_barrier_calls: usize,
    ir_barriers: usize,
    dynamic: Option<u64>,
    ptx_o3: &str,
    ptx_o0: &str,
) -> Outcome {
    let mut o = Outcome::new();
    o.note(format!("this is {SYNTACTIC}"));
    let (i3, i0) = (instructions(ptx_o3), instructions(ptx_o0));
    o.explored((i3.len() + i0.len()) as u64);
    let (b3, b0) = (with_opcode(&i3, BAR_SYNC), with_opcode(&i0, BAR_SYNC));
    o.expect(
        mir_barrier_calls > 0,
        format!("the kernel's MIR has {mir_barrier_calls} sync_threads call site(s)"),
    );
    o.expect(
        ir_barriers == mir_barrier_calls,
        format!("the device IR has {ir_barriers} barrier instruction(s), one per MIR call site"),
    );
    o.expect(
        b0.len() == mir_barrier_calls,
        format!(
            "-opt=0: {} `bar.sync` instruction(s) (in {}) = {mir_barrier_calls} MIR call site(s)",
            b0.len(),
            where_found(&b0)
        ),
    );
    let dyn_text = dynamic.map_or("unknown".to_string(), |d| d.to_string());
    o.expect(
        b3.len() == mir_barrier_calls || dynamic == Some(b3.len() as u64),
        format!(
            "-opt=3: {} `bar.sync` instruction(s) = the {mir_barrier_calls} call site(s) or the \
             {dyn_text} barrier(s) each thread executes in the extracted program (an unrolled loop)",
            b3.len()
        ),
    );
    let forms: Vec<&str> = b0.iter().chain(&b3).map(|i| i.text.as_str()).collect();
    o.note(format!("bar.sync forms: {}", {
        let mut f = forms;
        f.sort();
        f.dedup();
        f.join(", ")
    }));
    o
}

/// Both checks on the fixtures of `dir`; one failing report per fixture that
/// does not build.
pub fn reports(dir: &Path, nvvm: &Libnvvm) -> Vec<Report> {
    let mut out = Vec::new();
    let start = Instant::now();
    let statement = format!(
        "the PTX our pipeline emits for fixtures/atomic_flag (mir-import, mir-lower, nvvm-emit, \
         libNVVM compute_{ARCH}) holds `{ACQUIRE_LOAD}` and `{RELEASE_STORE}` at -opt=3 and -opt=0; \
         {SYNTACTIC}"
    );
    let o = match compile(dir, "atomic_flag", nvvm) {
        Ok(c) => forms_outcome(&c.ptx_o3, &c.ptx_o0),
        Err(e) => failed(e),
    };
    out.push(report(
        "ptx.atomic_flag_forms",
        &statement,
        o,
        start.elapsed().as_secs_f64() * 1e3,
    ));
    let start = Instant::now();
    let statement = format!(
        "the PTX our pipeline emits for fixtures/shared_reduction holds as many `bar.sync` as the \
         kernel's barriers imply: its MIR call sites at -opt=0, and at -opt=3 those or the \
         unrolled per-thread count; {SYNTACTIC}"
    );
    let o = match compile(dir, "shared_reduction", nvvm) {
        Ok(c) => {
            let dynamic = fixtures::launch("shared_reduction")
                .and_then(|l| extract::extract_crate(&c.krate, "shared_reduction", &l).ok())
                .and_then(|x| dynamic_barriers(&x.program));
            barriers_outcome(
                c.mir_barrier_calls,
                c.ir_barriers,
                dynamic,
                &c.ptx_o3,
                &c.ptx_o0,
            )
        }
        Err(e) => failed(e),
    };
    out.push(report(
        "ptx.shared_reduction_barriers",
        &statement,
        o,
        start.elapsed().as_secs_f64() * 1e3,
    ));
    out
}

fn failed(e: String) -> Outcome {
    let mut o = Outcome::new();
    o.expect(false, e);
    o
}
