//! Fuzzing the whole front half (parse, evaluate, lower) with proptest: real
//! MIR text of the fixtures, damaged by random edits, must give a lowered
//! module or diagnostics, never a panic.
//!
//! Damage that no input survives would make the property vacuous, so every run
//! counts how many inputs reach the lowering (they imported) and asserts that
//! at least [`LOWER_FLOOR`] of them do; `MIR_FUZZ_LOWER_FLOOR` overrides the
//! floor (set it to `1` to watch the assertion fail).
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

/// The least share of damaged inputs that must reach the lowering. Measured
/// on the short run: 5 of 64 (7.8%; the runner's seeds are fixed, so the
/// draw repeats). Most damage breaks a line the parser then refuses; the
/// floor catches damage that nothing survives.
const LOWER_FLOOR: f64 = 0.05;

/// How far the inputs of one run got.
#[derive(Debug, Default)]
struct Reached {
    /// Inputs tried.
    ran: u64,
    /// Inputs imported and handed to the lowering (the last stage).
    lowered: u64,
    /// Of those, inputs that lowered to a verified module.
    modules: u64,
}

impl Reached {
    fn lowered_share(&self) -> f64 {
        self.lowered as f64 / self.ran.max(1) as f64
    }

    /// Prints the shares and fails when too few inputs reached the lowering.
    fn check(&self, what: &str) {
        let floor = std::env::var("MIR_FUZZ_LOWER_FLOOR")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(LOWER_FLOOR);
        eprintln!(
            "{what}: {} inputs, {} reached the lowering ({:.1}%), {} lowered to a module \
             ({:.1}%), no panic",
            self.ran,
            self.lowered,
            100.0 * self.lowered_share(),
            self.modules,
            100.0 * self.modules as f64 / self.ran.max(1) as f64,
        );
        assert!(
            self.lowered_share() >= floor,
            "{what}: only {:.1}% of the damaged inputs reached the lowering, under the floor \
             of {:.1}%: the fuzz no longer exercises it",
            100.0 * self.lowered_share(),
            100.0 * floor
        );
    }
}

fn run(cases: u32, budget: Option<Duration>) -> Reached {
    let ran = Cell::new(0u64);
    let lowered = Cell::new(0u64);
    let modules = Cell::new(0u64);
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
                let imp = mir_import::Imported {
                    krate,
                    eval,
                    tuples: seed.tuples.clone(),
                };
                lowered.set(lowered.get() + 1);
                if mir_lower::lower(&imp).is_ok() {
                    modules.set(modules.get() + 1);
                }
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
    Reached {
        ran: ran.get(),
        lowered: lowered.get(),
        modules: modules.get(),
    }
}

#[test]
fn damaged_mir_never_panics_the_lowering() {
    run(64, None).check("lowering fuzz");
}

#[test]
#[ignore = "long run: set MIR_FUZZ_SECONDS"]
fn damaged_mir_never_panics_the_lowering_long() {
    let secs = std::env::var("MIR_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let start = Instant::now();
    let reached = run(500, Some(Duration::from_secs(secs)));
    reached.check(&format!("lowering fuzz ({:.1?})", start.elapsed()));
}
