//! Parse throughput, and mir-import's time as a ratio to rustc's own time
//! printing the same MIR, both measured in this run.
//!
//! `cargo bench -p mir-import --bench parse`

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mir_import::rustc::{RustcOptions, run_rustc};

fn corpus() -> Vec<PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
}

fn bench(c: &mut Criterion) {
    let opts = RustcOptions::default();
    let files = corpus();
    // rustc's own time: one `--emit=mir -Zprint-type-sizes` run per source.
    let mut outputs = Vec::new();
    let rustc_start = Instant::now();
    for f in &files {
        outputs.push(run_rustc(f, &opts).expect("rustc"));
    }
    let rustc_time = rustc_start.elapsed();
    let bytes: usize = outputs.iter().map(|o| o.mir.len()).sum();

    let import_all = || {
        for o in &outputs {
            let k = mir_import::import_text(&o.mir, &o.type_sizes, Some((&o.source, "k.rs")))
                .expect("imports");
            black_box(k);
        }
    };
    // Our time for the same sources, best of several runs.
    let mut best = Duration::MAX;
    for _ in 0..10 {
        let t = Instant::now();
        import_all();
        best = best.min(t.elapsed());
    }
    println!(
        "corpus: {} sources, {:.1} KiB of MIR; rustc {:.1?}, mir-import {:.1?} => {:.2}% of rustc's time, {:.1} MiB/s",
        files.len(),
        bytes as f64 / 1024.0,
        rustc_time,
        best,
        100.0 * best.as_secs_f64() / rustc_time.as_secs_f64(),
        bytes as f64 / best.as_secs_f64() / (1024.0 * 1024.0),
    );

    let mut group = c.benchmark_group("mir-import");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("import corpus (parse + layouts + attrs)", |b| {
        b.iter(import_all)
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
