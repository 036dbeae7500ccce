//! `refinement`: the reference development's open theorem, checked per
//! kernel and per launch. *If a kernel is data-race-free under the source
//! model, its compiled PTX admits only executions whose outcomes the source
//! allows.*
//!
//! ```text
//! kernel.rs ─ mir-import ─ kernel-extract ─ memory_model::drf   every interleaving,
//!                                                               race check, outcomes
//!          └─ compile-driver (-opt=3 PTX) ─ ptx-reader ─ translate ─ ptx_litmus::explore
//!                                                               consistent executions
//!                                                               under the six axioms
//! ```
//!
//! **Owns:** the launches it checks ([`launch`]), the translation of PTX to
//! the full model's program form ([`translate`]), the source side's naming
//! of outcomes ([`source`]), the comparison and its report ([`check_ptx`],
//! [`Check`]), and the PTX mutants that show the check is not vacuous
//! ([`mutate`]). **Does not own:** either model: the small model and its
//! race check are `memory-model`'s, the six axioms `ptx-litmus`'s.
//! **Border:** [`check_fixture`] (a fixture folder in, a [`Check`] out) and
//! [`check_ptx`] (an imported crate and PTX text in).
//!
//! This checks bounded launches of particular kernels, not the theorem for
//! all programs; the README says exactly what is and is not covered.

#![deny(missing_docs)]

pub mod launch;
pub mod mutate;
pub mod source;
pub mod translate;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use ptx_litmus::explore::{self, Explored};
use ptx_litmus::{Deadline, NoVerdict};

pub use launch::Launch;

/// A final outcome: each observed location's value, by name (`out[0]`).
pub type Final = BTreeMap<String, i64>;

/// How far each side may go.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Loop bound for the compiled side: a backward jump (a spin loop on
    /// memory) is taken at most `bound - 1` times per execution.
    pub bound: u32,
    /// Time allowed to each side.
    pub time: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bound: 2,
            time: Duration::from_secs(60),
        }
    }
}

/// Why a check has no verdict.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// No launch is known for the fixture.
    #[error("no launch is known for fixture `{0}` (known: {known:?}, racy: {racy:?})", known = launch::KERNELS, racy = launch::RACY)]
    UnknownKernel(String),
    /// Compiling the kernel failed.
    #[error("{0}")]
    Compile(#[from] compile_driver::CompileError),
    /// The PTX does not read.
    #[error("PTX: {0}")]
    Ptx(#[from] ptx_reader::ParseError),
    /// The PTX could not be translated.
    #[error("{0}")]
    Translate(#[from] translate::TranslateError),
    /// The source side could not be checked.
    #[error("source: {0}")]
    Source(#[from] source::SourceError),
    /// The compiled side has no verdict (a limit or its time ran out).
    #[error("compiled side: {}", match .0 {
        NoVerdict::Timeout(t) => format!("the exploration passed its time limit ({:.0} ms)", t.limit_millis),
        NoVerdict::Error(e) => ptx_litmus::error::chain(e),
    })]
    Compiled(NoVerdict),
}

/// The verdict of one check.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Data-race-free, and every compiled outcome is a source outcome.
    Refines,
    /// A compiled outcome the source does not allow, with its execution.
    NotRefined {
        /// The outcome.
        outcome: Final,
        /// Its execution under the full model, as text.
        execution: String,
    },
    /// The source has a data race: the theorem's premise fails, and the
    /// refinement was not checked.
    Racy {
        /// The race, with its interleaving.
        race: String,
    },
    /// No compiled execution terminates within the loop bound: there is no
    /// outcome to compare, which is not a pass.
    NoCompiledOutcome,
}

/// One kernel, one launch, both sides.
#[derive(Debug)]
pub struct Check {
    /// The launch.
    pub launch: Launch,
    /// The source side.
    pub source: source::Source,
    /// The compiled side (absent when the premise failed).
    pub compiled: Option<Explored>,
    /// The translation's notes.
    pub notes: Vec<String>,
    /// The verdict.
    pub verdict: Verdict,
}

impl Check {
    /// The check as JSON: the launch, both sides' sizes, times and outcome
    /// sets, and the verdict with its counterexample or race.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let r = &self.source.report;
        let (verdict, detail) = match &self.verdict {
            Verdict::Refines => ("refines", json!(null)),
            Verdict::NotRefined { outcome, execution } => (
                "not-refined",
                json!({ "outcome": outcome, "execution": execution }),
            ),
            Verdict::Racy { race } => ("racy", json!({ "race": race })),
            Verdict::NoCompiledOutcome => ("no-compiled-outcome", json!(null)),
        };
        json!({
            "fixture": self.launch.fixture,
            "kernel": self.launch.kernel,
            "ctas": self.launch.ctas,
            "threads": self.launch.threads,
            "verdict": verdict,
            "detail": detail,
            "source": {
                "race_free": r.race_free(),
                "states": r.states,
                "transitions": r.transitions,
                "completed": r.completed,
                "stuck": r.stuck,
                "millis": r.elapsed.as_secs_f64() * 1e3,
                "outcomes": self.source.outcomes,
                "warnings": self.source.warnings,
            },
            "compiled": self.compiled.as_ref().map(|c| json!({
                "graphs": c.states,
                "pruned": c.pruned,
                "executions": c.executions,
                "cut": c.cut,
                "blocked": c.blocked,
                "stopped": c.stopped,
                "millis": c.millis,
                "outcomes": c.outcomes.keys().collect::<Vec<_>>(),
            })),
            "notes": self.notes,
        })
    }

    /// Whether the check passed.
    pub fn refines(&self) -> bool {
        matches!(self.verdict, Verdict::Refines)
    }

    /// The report: both sides' sizes and times, both outcome sets, and the
    /// counterexample or race when there is one.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let l = &self.launch;
        let _ = writeln!(
            out,
            "{} ({} CTA x {} threads)",
            l.fixture, l.ctas, l.threads
        );
        let _ = writeln!(out, "  source:   {}", self.source.report);
        for w in &self.source.warnings {
            let _ = writeln!(out, "  source warning: {w}");
        }
        if let Some(outcomes) = &self.source.outcomes {
            for o in outcomes {
                let _ = writeln!(out, "            {}", explore::render_final(o));
            }
        }
        if let Some(c) = &self.compiled {
            let _ = writeln!(out, "  compiled: {c}");
            if c.stopped {
                let _ = writeln!(
                    out,
                    "            (stopped at the first outcome outside the source's: the set is partial)"
                );
            }
            for o in c.outcomes.keys() {
                let _ = writeln!(out, "            {}", explore::render_final(o));
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        match &self.verdict {
            Verdict::Refines => {
                let _ = writeln!(
                    out,
                    "  verdict: data-race-free; compiled outcomes ⊆ source outcomes"
                );
            }
            Verdict::NotRefined { outcome, execution } => {
                let _ = writeln!(
                    out,
                    "  verdict: NOT REFINED: the compiled program reaches {}, which no interleaving of the source reaches; its execution under the PTX model:\n{execution}",
                    explore::render_final(outcome)
                );
            }
            Verdict::Racy { race } => {
                let _ = writeln!(
                    out,
                    "  verdict: the source has a data race, so the theorem's premise fails and the refinement was not checked:\n{race}"
                );
            }
            Verdict::NoCompiledOutcome => {
                let _ = writeln!(
                    out,
                    "  verdict: NO VERDICT: no compiled execution terminates within the loop bound"
                );
            }
        }
        out
    }
}

/// Compares both sides for an imported kernel and its PTX.
///
/// # Errors
/// The PTX not reading or not translating, or either side without a verdict.
pub fn check_ptx(
    krate: &mir_import::Crate,
    ptx: &str,
    launch: &Launch,
    options: &Options,
) -> Result<Check, CheckError> {
    let limits = memory_model::drf::Limits {
        time: options.time,
        ..memory_model::drf::Limits::default()
    };
    // One more iteration than the compiled side's bound allows, so that
    // every compiled run that terminates has a source run that does too.
    let source = source::check(krate, launch, options.bound + 1, &limits)?;
    // The source's outcomes as the 32-bit words memory holds.
    let Some(allowed) = source
        .outcomes
        .as_ref()
        .map(|o| o.iter().map(word).collect::<BTreeSet<Final>>())
    else {
        let race = match &source.report.verdict {
            memory_model::drf::Verdict::Race(r) => r.render(&source.program),
            memory_model::drf::Verdict::RaceFree { .. } => String::new(),
        };
        return Ok(Check {
            launch: launch.clone(),
            source,
            compiled: None,
            notes: Vec::new(),
            verdict: Verdict::Racy { race },
        });
    };
    let module = ptx_reader::parse(ptx)?;
    let translated = translate::translate(&module, &launch.kernel, launch)?;
    let reject = |o: &Final| !allowed.contains(&word(o));
    let exploration = explore::Exploration {
        observe: Some(&translated.observed),
        // `bar.sync 0`: the k-th barrier of every thread of a CTA is one.
        barriers: explore::BarrierMatching::ByCount,
        stop: &reject,
    };
    let explored = explore::outcomes_until(
        &translated.test,
        &ptx_litmus::Options {
            bound: options.bound,
            ..ptx_litmus::Options::default()
        },
        &exploration,
        &Deadline::after(options.time),
    )
    .map_err(CheckError::Compiled)?;
    let verdict = compare(&allowed, &explored);
    Ok(Check {
        launch: launch.clone(),
        source,
        compiled: Some(explored),
        notes: translated.notes,
        verdict,
    })
}

/// An outcome with its values as the 32-bit words they are in memory.
fn word(o: &Final) -> Final {
    o.iter()
        .map(|(k, v)| (k.clone(), i64::from(*v as u32)))
        .collect()
}

/// Every compiled outcome must be a source outcome (`allowed`, as words),
/// compared as words.
fn compare(allowed: &BTreeSet<Final>, compiled: &Explored) -> Verdict {
    if compiled.outcomes.is_empty() {
        return Verdict::NoCompiledOutcome;
    }
    for (outcome, witness) in &compiled.outcomes {
        if !allowed.contains(&word(outcome)) {
            return Verdict::NotRefined {
                outcome: outcome.clone(),
                execution: execution_text(witness),
            };
        }
    }
    Verdict::Refines
}

/// The relations printed in full with a counterexample; the derived ones
/// (`cause`, `dep`, the barrier pairs) are quadratic in a kernel's events
/// and are summarized by their size.
const PRINTED_RELATIONS: &[&str] = &["rf", "co", "fr", "rmw", "observation", "sync"];

fn execution_text(witness: &ptx_litmus::report::Witness) -> String {
    let mut shown = witness.clone();
    let mut sizes = Vec::new();
    shown.relations.retain(|(name, pairs)| {
        let keep = PRINTED_RELATIONS.contains(&name.as_str());
        if !keep && !pairs.is_empty() {
            sizes.push(format!("{name}: {} pairs", pairs.len()));
        }
        keep
    });
    let mut text = shown.to_string();
    if !sizes.is_empty() {
        let _ = writeln!(text, "    (not shown: {})", sizes.join(", "));
    }
    text
}

/// Compiles the fixture in `fixtures/<fixture>` (MIR through rustc, PTX at
/// `-opt=3` through libNVVM): its imported crate and its PTX.
///
/// # Errors
/// Any compile stage failing, libNVVM missing included.
pub fn compile_fixture(dir: &Path) -> Result<(mir_import::Crate, String), CheckError> {
    let kernel = dir.join("kernel.rs");
    // The launches of `launch` are for kernels without dependencies.
    let rustc = compile_driver::RustcOptions::default();
    let (imported, lowered) = compile_driver::import_and_lower(&kernel, &rustc)?;
    let nvvm = compile_driver::libnvvm()?;
    let ir = compile_driver::print(&lowered);
    let ptx = compile_driver::ptx(&kernel, nvvm, &ir, compile_driver::OPT_DEFAULT)?;
    Ok((imported.krate, ptx))
}

/// Checks the fixture `fixture` under `root` (the workspace's `fixtures/`)
/// with its known launch, optionally with another thread count.
///
/// # Errors
/// An unknown fixture, a compile failure, or either side without a verdict.
pub fn check_fixture(
    root: &Path,
    fixture: &str,
    threads: Option<u32>,
    options: &Options,
) -> Result<Check, CheckError> {
    let launch = launch::launch(fixture, threads)
        .ok_or_else(|| CheckError::UnknownKernel(fixture.to_string()))?;
    let (krate, ptx) = compile_fixture(&root.join(fixture))?;
    check_ptx(&krate, &ptx, &launch, options)
}
