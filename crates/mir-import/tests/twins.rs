//! The main test of constant evaluation: rustc itself is the oracle.
//!
//! For every top-level const of every corpus source and fixture kernel, the
//! evaluator's allocation graph must equal the graph rustc prints for the
//! const's `static` twin: same bytes, init mask, alignment, relocations
//! (offsets, addends, targets recursively) and nested mutability. A const the
//! evaluator cannot reach must say why, and then rustc's twin evaluates it.

mod common;

use std::path::PathBuf;

use mir_import::eval::twin;
use mir_import::rustc::RustcOptions;
use rayon::prelude::*;

fn sources() -> Vec<PathBuf> {
    let mut files = common::corpus_files();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut fx: Vec<PathBuf> = std::fs::read_dir(fixtures)
        .expect("fixtures dir")
        .filter_map(|e| e.ok().map(|e| e.path().join("kernel.rs")))
        .filter(|p| p.exists())
        .collect();
    fx.sort();
    files.extend(fx);
    files
}

/// What comparing one source's constants with their twins found.
#[derive(Default)]
struct Tally {
    compared: usize,
    fallback: usize,
    statics: usize,
    failures: Vec<String>,
}

/// Compares every const of `file` with rustc's twin, and every static with
/// the bytes rustc prints for it.
fn compare_file(file: &std::path::Path) -> Tally {
    let mut t = Tally::default();
    let name = file.display().to_string();
    // A fixture's crates.io dependencies, built as its manifest says.
    let opts = RustcOptions::for_kernel(file).unwrap_or_else(|e| panic!("{name}: {e}"));
    let imported = mir_import::import_and_evaluate(file, &opts, false)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let twins = twin::build_twins(file, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    for c in &twins.consts {
        let path = format!("kernel::{c}");
        let Some(theirs) = twins.twin_alloc(&path) else {
            t.failures
                .push(format!("{name}: rustc printed no twin for {path}"));
            continue;
        };
        let item = imported.eval.items.get(&path);
        match item.map(|i| &i.value) {
            Some(Ok(ours)) => {
                t.compared += 1;
                if let Err(e) = twin::compare(&imported.eval.memory, *ours, &twins.krate, theirs) {
                    t.failures.push(format!("{name}: {path}: {e}"));
                }
            }
            Some(Err(why)) => {
                t.fallback += 1;
                eprintln!("{name}: {path} left to rustc: {why}");
            }
            None => t
                .failures
                .push(format!("{name}: {path} was not evaluated at all")),
        }
    }
    // Statics: rustc prints their evaluated bytes directly.
    for (item, ev) in &imported.eval.items {
        let (Some(dump), Ok(ours)) = (imported.krate.static_alloc(item), &ev.value) else {
            continue;
        };
        t.statics += 1;
        if let Err(e) = twin::compare(&imported.eval.memory, *ours, &imported.krate, dump.id) {
            t.failures.push(format!("{name}: static {item}: {e}"));
        }
    }
    t
}

#[test]
fn every_const_matches_its_rustc_twin() {
    // One source per core at a time; the failures keep the sources' order.
    let tallies: Vec<Tally> = sources().par_iter().map(|f| compare_file(f)).collect();
    let compared: usize = tallies.iter().map(|t| t.compared).sum();
    let fallback: usize = tallies.iter().map(|t| t.fallback).sum();
    let statics: usize = tallies.iter().map(|t| t.statics).sum();
    let failures: Vec<&String> = tallies.iter().flat_map(|t| &t.failures).collect();
    eprintln!(
        "twins: {compared} constants compared with rustc's twins, {statics} statics with rustc's \
         own bytes, {fallback} constants left to rustc's twin"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(compared >= 60, "only {compared} constants were compared");
}
