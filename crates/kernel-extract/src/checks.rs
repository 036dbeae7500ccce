//! Checks on kernels extracted from the fixtures (`kernel-extract`).
//!
//! These run rustc, through `mir-import`, so they are kept out of
//! `memory_model::checks::all` and `memory-model theorems`, whose checks are
//! pure and fast. Each fixture gives one check (`extract.<fixture>`: extracted, with
//! its warnings), and the reduction gives two more: its outline against the
//! verified program, and the reduction theorem run on the extracted program.

use std::path::Path;
use std::time::Instant;

use crate as extract;
use crate::{ExtractError, Extraction, fixtures, outline};
use memory_model::checks::{Outcome, Report, report};
use std::collections::BTreeSet;

use memory_model::consistency::{self, Variant};
use memory_model::event::Who;
use memory_model::lang::{Access, Loc, Program, Space, Stmt};
use memory_model::litmus;
use memory_model::relaxed::{self, Search};

/// One fixture's extraction, timed.
pub struct Extracted {
    /// The fixture's name.
    pub fixture: String,
    /// The extraction, or why it failed.
    pub result: Result<Extraction, ExtractError>,
    /// Import plus extraction, in milliseconds (mostly rustc).
    pub millis: f64,
}

/// Imports and extracts the fixture `name` from `dir/name/kernel.rs`.
pub fn extract_fixture(dir: &Path, name: &str) -> Extracted {
    let start = Instant::now();
    let result = match fixtures::launch(name) {
        None => Err(ExtractError::NoLaunch {
            fixture: name.to_string(),
            known: fixtures::FIXTURES,
        }),
        Some(launch) => extract::extract_file(&dir.join(name).join("kernel.rs"), name, &launch),
    };
    Extracted {
        fixture: name.to_string(),
        result,
        millis: start.elapsed().as_secs_f64() * 1e3,
    }
}

/// `extract.<fixture>`: the kernel was extracted; its warnings and notes are
/// listed and the program is the witness.
pub fn fixture_report(x: &Extracted) -> Report {
    let mut o = Outcome::new();
    let statement = format!(
        "fixtures/{}: imported by mir-import and extracted into the kernel language; every construct \
         not translated exactly is a warning",
        x.fixture
    );
    match &x.result {
        Err(e) => o.require(false, format!("extraction failed: {e}")),
        Ok(ex) => {
            o.require(
                true,
                format!("extracted OK, {} warning(s)", ex.warnings.len()),
            );
            o.explored(1);
            for w in &ex.warnings {
                o.note(format!("warning: {w}"));
            }
            for n in &ex.notes {
                o.note(format!("note: {n}"));
            }
            o.witness(ex.program.to_string());
        }
    }
    report(&format!("extract.{}", x.fixture), &statement, o, x.millis)
}

/// `extract.reduction_outline`: the extracted reduction has the verified
/// program's typed shared-memory outline.
pub fn outline_outcome(ex: &Extraction) -> Outcome {
    let mut o = Outcome::new();
    let n = ex.program.threads();
    let verified = litmus::tree_reduction(n);
    let c = outline::compare(&verified, &ex.program);
    o.explored(2);
    o.note(format!("verified:  {}", c.structural.0));
    o.note(format!("extracted: {}", c.structural.1));
    o.require(
        c.problems.is_empty(),
        "same barrier placement, loop of log2 N rounds and ld/ld/st per round (statically, and per \
         thread with addresses)",
    );
    for p in c.problems.iter().take(8) {
        o.note(format!("difference: {p}"));
    }
    let rounds = outline::reduction_rounds(&ex.program);
    o.require(
        rounds.is_empty(),
        format!(
            "every thread: {} barriers; sh[tid] store, then per round ld sh[tid], ld sh[tid+stride], \
             st sh[tid] for tid < stride",
            n.trailing_zeros() + 1
        ),
    );
    for p in rounds.iter().take(8) {
        o.note(format!("difference: {p}"));
    }
    o.note(format!(
        "epilogue after the last barrier (read-only, allowed): {}",
        if c.epilogue.is_empty() {
            "none".to_string()
        } else {
            c.epilogue.join("; ")
        }
    ));
    o
}

/// `extract.reduction_theorem`: the reduction theorem on the extracted
/// program: one consistent trace, `sh[0]` = N(N+1)/2, and the kernel's output
/// word holds it too.
pub fn theorem_outcome(ex: &Extraction) -> Outcome {
    let mut o = Outcome::new();
    let p = &ex.program;
    let n = p.threads();
    let (cands, stats) = relaxed::candidates(p, Search::Pruned(Variant::REFERENCE_SUBSET));
    o.explored(stats.complete);
    let consistent: Vec<_> = cands
        .iter()
        .filter(|c| consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET))
        .collect();
    let traces: std::collections::BTreeSet<String> = consistent
        .iter()
        .map(|c| format!("{:?}", c.exec.events))
        .collect();
    o.require(
        !consistent.is_empty() && traces.len() == 1,
        format!(
            "{} consistent candidate(s), {} distinct trace(s)",
            consistent.len(),
            traces.len()
        ),
    );
    let want = memory_model::checks::reduction::expected_sum(n);
    if let Some(c) = consistent.first() {
        let sh0 = c.exec.final_value(Loc {
            space: Space::Shared,
            addr: 0,
        });
        o.require(
            sh0 == Some(want),
            format!("sh[0] = {sh0:?}, expected {want}"),
        );
        let out = p
            .names
            .iter()
            .find(|(_, name)| name.as_str() == "out")
            .map(|(a, _)| *a);
        let got = out.and_then(|a| {
            c.exec.final_value(Loc {
                space: Space::Global,
                addr: a,
            })
        });
        o.require(
            got == Some(want),
            format!("out[0] (block 0's word) = {got:?}, expected {want}"),
        );
        o.note(format!("{} events in the trace", c.exec.len()));
    }
    o
}

/// The payload `atomic_flag`'s writer stores (its `PAYLOAD`).
pub const ATOMIC_FLAG_PAYLOAD: u32 = 0x1234_5678;

/// What the reader of an extracted `atomic_flag` saw, over the consistent
/// executions of `program`: (flag seen, data seen) pairs, plus the count of
/// completed candidates.
fn reader_outcomes(program: &Program) -> (BTreeSet<(u32, u32)>, u64) {
    let (cands, stats) = relaxed::candidates(program, Search::Naive);
    let addr = |name: &str| {
        program
            .names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(a, _)| *a)
    };
    let mut seen = BTreeSet::new();
    if let (Some(flag), Some(out)) = (addr("flag"), addr("out")) {
        for c in cands
            .iter()
            .filter(|c| consistency::consistent(&c.exec, &Variant::REFERENCE_SUBSET))
        {
            let f = c.exec.reads(
                Who::Thread(32),
                Loc {
                    space: Space::Global,
                    addr: flag,
                },
            );
            let d = c.exec.final_value(Loc {
                space: Space::Global,
                addr: out,
            });
            if let (Some(&f), Some(d)) = (f.first(), d) {
                seen.insert((f, d));
            }
        }
    }
    (seen, stats.complete)
}

/// The same program with every acquire and release weakened to relaxed.
pub fn all_relaxed(program: &Program) -> Program {
    let mut p = program.clone();
    for s in &mut p.stmts {
        if let Stmt::Load { access, .. } | Stmt::Store { access, .. } = s
            && *access != Access::Plain
        {
            *access = Access::RELAXED;
        }
    }
    p.name = format!("{}.all_relaxed", p.name);
    p
}

/// `extract.atomic_flag_mp`: message passing on the extracted kernel. When
/// thread 32's acquire load reads flag = 1, `out[0]` holds the payload in
/// every consistent execution; with the orderings weakened to relaxed, the
/// stale `out[0] = 0` is consistent.
pub fn mp_outcome(ex: &Extraction) -> Outcome {
    let mut o = Outcome::new();
    let (seen, explored) = reader_outcomes(&ex.program);
    o.explored(explored);
    o.note(format!("(flag, out[0]) seen by T32, consistent: {seen:?}"));
    o.require(
        seen.contains(&(1, ATOMIC_FLAG_PAYLOAD)),
        "the reader can see flag = 1 and the payload",
    );
    o.require(
        seen.iter()
            .all(|&(f, d)| f != 1 || d == ATOMIC_FLAG_PAYLOAD),
        "flag = 1 implies out[0] = payload in every consistent execution",
    );
    let weak = all_relaxed(&ex.program);
    let (weak_seen, weak_explored) = reader_outcomes(&weak);
    o.explored(weak_explored);
    o.require(
        weak_seen.contains(&(1, 0)),
        format!("all-relaxed variant: flag = 1 with out[0] = 0 is consistent ({weak_seen:?})"),
    );
    o
}

/// Every report for the given fixtures, in order, plus the reduction's two
/// checks when `shared_reduction` is among them.
pub fn reports(dir: &Path, names: &[String]) -> Vec<Report> {
    let mut out = Vec::new();
    for name in names {
        let x = extract_fixture(dir, name);
        out.push(fixture_report(&x));
        let Ok(ex) = &x.result else { continue };
        let timed = |name: &str, statement: &str, f: &dyn Fn(&Extraction) -> Outcome| {
            let start = Instant::now();
            let o = f(ex);
            report(name, statement, o, start.elapsed().as_secs_f64() * 1e3)
        };
        if name == "atomic_flag" {
            out.push(timed(
                "extract.atomic_flag_mp",
                "the extracted atomic_flag: flag = 1 read by the acquire load implies out[0] = payload \
                 in every consistent execution; with relaxed orderings the stale read is consistent",
                &mp_outcome,
            ));
        }
        if name == "shared_reduction" {
            out.push(timed(
                "extract.reduction_outline",
                "the extracted shared_reduction has the verified reduction's typed shared-memory \
                 outline: barrier placement, three rounds, ld/ld/st in each round",
                &outline_outcome,
            ));
            out.push(timed(
                "extract.reduction_theorem",
                "the extracted shared_reduction has one consistent trace, and sh[0] and out[0] hold \
                 N(N+1)/2",
                &theorem_outcome,
            ));
        }
    }
    out
}
