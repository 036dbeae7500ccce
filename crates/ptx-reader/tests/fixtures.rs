//! Every fixture's PTX, compiled through the pipeline at `-opt=3` and
//! `-opt=0`, reads without error; a summary of three is pinned.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ptx_reader::{Module, Statement};
use rayon::prelude::*;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("fixtures/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("kernel.rs").is_file())
        .collect();
    out.sort();
    out
}

fn name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// Function names, their parameters and instruction counts by full opcode.
fn summary(m: &Module) -> String {
    let mut s = String::new();
    let v = m.version.unwrap_or_default();
    writeln!(
        s,
        ".version {}.{} .target {:?} .address_size {:?}",
        v.0, v.1, m.target, m.address_size
    )
    .unwrap();
    for g in &m.globals {
        let relocs = match &g.init {
            Some(ptx_reader::Initializer::List(items)) => items
                .iter()
                .filter(|i| {
                    matches!(
                        i,
                        ptx_reader::Initializer::Value(ptx_reader::InitValue::Address { .. })
                    )
                })
                .count(),
            _ => 0,
        };
        // Content keys are long hashes: eight digits name them well enough here.
        let shown = match g.name.strip_prefix("__const_") {
            Some(hex) => format!("__const_{}..", &hex[..hex.len().min(8)]),
            None => g.name.clone(),
        };
        writeln!(
            s,
            "{} {shown} .{} {:?}, {relocs} relocation slot(s)",
            g.space.directive(),
            g.ty,
            g.dims
        )
        .unwrap();
    }
    for f in &m.functions {
        let kind = if f.is_entry() { "entry" } else { "func" };
        let body = if f.defined() {
            "definition"
        } else {
            "prototype"
        };
        writeln!(
            s,
            "{kind} {} ({body}, {} returns, {} params)",
            f.name,
            f.returns.len(),
            f.params.len()
        )
        .unwrap();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for i in f.instructions() {
            *counts.entry(i.full_opcode()).or_default() += 1;
        }
        for (op, n) in counts {
            writeln!(s, "  {op} {n}").unwrap();
        }
        let labels = f
            .statements()
            .iter()
            .filter(|s| matches!(s, Statement::Label(_)))
            .count();
        if f.defined() {
            writeln!(s, "  labels {labels}, locals {}", f.locals().count()).unwrap();
        }
    }
    s
}

const PINNED: [&str; 3] = ["atomic_flag", "promoted_ref_return", "shared_reduction"];

/// The PTX of `dir`'s kernel at `-opt=3` and `-opt=0`, or `None` for an
/// `error_*` fixture, which the lowering refuses.
fn compile_both_levels(
    dir: &Path,
    nvvm: &nvvm_emit::Libnvvm,
) -> Option<[(&'static str, String); 2]> {
    let n = name(dir);
    let rustc = mir_import::rustc::RustcOptions::for_kernel(&dir.join("kernel.rs"))
        .unwrap_or_else(|e| panic!("{n}: {e}"));
    match compile_driver::compile(&dir.join("kernel.rs"), &rustc, nvvm) {
        Ok(c) => Some([("o3", c.artifacts.ptx_o3), ("o0", c.artifacts.ptx_o0)]),
        Err(e) if n.starts_with("error_") && e.stage() == "lower" => None,
        Err(e) => panic!("{n}: {e}"),
    }
}

#[test]
fn every_fixture_ptx_reads_at_both_levels() {
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("ptx-reader fixtures") else {
        return;
    };
    let dirs = fixtures();
    // Compiled one per core at a time; read here, in the fixtures' order.
    let compiled: Vec<_> = dirs
        .par_iter()
        .map(|dir| compile_both_levels(dir, nvvm))
        .collect();
    let mut count = 0;
    let mut failures = Vec::new();
    for (dir, levels) in dirs.iter().zip(compiled) {
        let Some(levels) = levels else { continue };
        let n = name(dir);
        count += 1;
        for (level, ptx) in levels {
            match ptx_reader::parse(&ptx) {
                Ok(m) => {
                    assert!(
                        m.functions.iter().any(|f| f.defined()),
                        "{n} {level}: no function"
                    );
                    if PINNED.contains(&n.as_str()) {
                        insta::assert_snapshot!(format!("{n}.{level}"), summary(&m));
                    }
                }
                Err(e) => failures.push(format!("{n} -opt={}: {e}", &level[1..])),
            }
        }
    }
    assert!(count >= 10, "only {count} fixtures compiled");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
