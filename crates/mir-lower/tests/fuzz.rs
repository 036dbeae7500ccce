//! Fuzzing the whole front half (parse, evaluate, lower) with proptest: real
//! MIR text of the fixtures, damaged by random edits, must give a lowered
//! module or diagnostics, never a panic.
//!
//! `cargo test` runs a short burst; for a long run:
//! `MIR_FUZZ_SECONDS=300 cargo test --release -p mir-lower --test fuzz -- --ignored --nocapture`

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mir_import::eval::{TupleLayouts, evaluate};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

struct Seed {
    mir: String,
    sizes: String,
    source: String,
    tuples: TupleLayouts,
}

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        [
            "promoted_ref_return",
            "shared_reduction",
            "kernel_reference_validity",
            "atomic_flag",
        ]
        .iter()
        .map(|f| {
            let k = dir.join(f).join("kernel.rs");
            let out = mir_import::rustc::run_rustc(&k, &Default::default()).expect("rustc");
            let imp =
                mir_import::import_and_evaluate(&k, &Default::default(), false).expect("import");
            Seed {
                mir: out.mir,
                sizes: out.type_sizes,
                source: out.source,
                tuples: imp.tuples,
            }
        })
        .collect()
    })
}

fn damage(text: &str, cuts: &[(usize, usize, u8)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(at, len, op) in cuts {
        if lines.is_empty() {
            break;
        }
        let i = at % lines.len();
        match op % 4 {
            0 => {
                let end = (i + len % 4 + 1).min(lines.len());
                lines.drain(i..end);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert((i + len) % lines.len(), l);
            }
            2 => {
                let l = &mut lines[i];
                let cut = (len % (l.len() + 1)).min(l.len());
                let mut c = cut;
                while !l.is_char_boundary(c) {
                    c -= 1;
                }
                l.truncate(c);
            }
            _ => {
                let j = (i + len) % lines.len();
                lines.swap(i, j);
            }
        }
    }
    lines.join("\n")
}

fn run(cases: u32, budget: Option<Duration>) -> u64 {
    let ran = Cell::new(0u64);
    let start = Instant::now();
    for round in 0u64.. {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&round.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
        let config = Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, rng);
        let strategy = (
            0usize..4,
            proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u8>()), 1..5),
        );
        let result = runner.run(&strategy, |(s, cuts)| {
            ran.set(ran.get() + 1);
            let seed = &seeds()[s % seeds().len()];
            let text = damage(&seed.mir, &cuts);
            if let Ok(krate) =
                mir_import::import_text(&text, &seed.sizes, Some((&seed.source, "k.rs")))
            {
                let eval = evaluate(&krate, &seed.tuples);
                let mut imp = mir_import::Imported {
                    krate,
                    eval,
                    tuples: seed.tuples.clone(),
                };
                let _ = mir_lower::lower(&mut imp);
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("fuzz found a failure after {} inputs: {e}", ran.get());
        }
        match budget {
            Some(b) if start.elapsed() < b => continue,
            _ => break,
        }
    }
    ran.get()
}

#[test]
fn damaged_mir_never_panics_the_lowering() {
    let n = run(64, None);
    eprintln!("lowering fuzz: {n} inputs, no panic");
}

#[test]
#[ignore = "long run: set MIR_FUZZ_SECONDS"]
fn damaged_mir_never_panics_the_lowering_long() {
    let secs = std::env::var("MIR_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let start = Instant::now();
    let n = run(500, Some(Duration::from_secs(secs)));
    eprintln!(
        "lowering fuzz: {n} inputs in {:.1?}, no panic",
        start.elapsed()
    );
}
