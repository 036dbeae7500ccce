//! The whole fixture suite with 1 and with 2 worker threads, in the same run:
//! the speedup, and each stage's share of the time.
//!
//! `cargo bench -p gpu-harness --bench suite`

use std::collections::BTreeMap;

use gpu_harness::pipeline::Options;
use gpu_harness::run::run_all;

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let Ok(dirs) = gpu_harness::fixture::Fixture::discover(&root) else {
        eprintln!("no fixtures under {}", root.display());
        return;
    };
    let opts = Options::default();
    // A warm-up run, so that both timed runs find the same caches.
    let _ = run_all(&dirs, &opts, 2, false);
    let one = run_all(&dirs, &opts, 1, false);
    let two = run_all(&dirs, &opts, 2, false);
    println!(
        "suite: {} fixtures; 1 thread {:.2} s, 2 threads {:.2} s; speedup {:.2}x (target >= 1.7x)",
        dirs.len(),
        one.millis / 1e3,
        two.millis / 1e3,
        one.millis / two.millis
    );
    let mut shares: BTreeMap<String, f64> = BTreeMap::new();
    for f in &one.fixtures {
        for s in &f.stages {
            *shares.entry(s.name.clone()).or_default() += s.millis;
        }
    }
    let total: f64 = shares.values().sum();
    for (stage, ms) in &shares {
        println!("  {stage:<10} {:>8.0} ms  {:>5.1}%", ms, 100.0 * ms / total);
    }
    if !one.all_passed() || !two.all_passed() {
        println!("warning: not every fixture passed:\n{}", one.table());
    }
}
