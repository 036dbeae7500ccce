//! Interning throughput against raw SHA-256 over the same bytes.
//!
//! Two workloads: one 1 MiB table, and 1,000 / 10,000 small constants (16
//! bytes each, a quarter of them holding a pointer to another constant, like
//! `&[u32]` fat references). Criterion reports each one's throughput; then,
//! in the same run, an interleaved measurement prints interning throughput as
//! a ratio to `sha2` over the same bytes (1.0 = as fast as hashing alone), and
//! the time per constant at 10,000 over that at 1,000, and at 100,000 over
//! that at 10,000 (1.0 = linear; the report only, not Criterion, runs 100,000).
//!
//! `cargo bench -p const-alloc --bench intern -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::time::{Duration, Instant};

use const_alloc::{Allocation, Interner, Root, SimpleGraph, Target};
use criterion::{BenchmarkId, Criterion, Throughput};
use sha2::{Digest, Sha256};

const MIB: usize = 1 << 20;

/// Deterministic pseudo-random bytes.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

fn big_table() -> (SimpleGraph<u32>, Vec<Root<u32>>) {
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new(noise(MIB, 0x1234_5678), 8));
    (g, vec![Root::Anonymous(0)])
}

fn small_constants(n: u32) -> (SimpleGraph<u32>, Vec<Root<u32>>) {
    let mut g = SimpleGraph::new();
    for i in 0..n {
        let alloc = if i % 4 == 3 {
            let len = u64::from(i).to_le_bytes();
            Allocation::new([[0; 8], len].concat(), 8).with_pointer(0, 8, Target::Alloc(i - 1), 0)
        } else {
            let v = u64::from(i);
            Allocation::new([v.to_le_bytes(), (v * 31 + 7).to_le_bytes()].concat(), 8)
        };
        g.insert(i, alloc);
    }
    (g, (0..n).map(Root::Anonymous).collect())
}

/// The bytes a raw hash would see: every allocation's bytes, one digest each.
fn payloads(g: &SimpleGraph<u32>) -> Vec<Vec<u8>> {
    g.iter().map(|(_, a)| a.bytes.clone()).collect()
}

fn total(p: &[Vec<u8>]) -> u64 {
    p.iter().map(|b| b.len() as u64).sum()
}

fn raw_sha(p: &[Vec<u8>]) -> [u8; 32] {
    let mut acc = [0u8; 32];
    for bytes in p {
        let d: [u8; 32] = Sha256::digest(bytes).into();
        acc[0] ^= d[0];
    }
    acc
}

fn intern(g: &SimpleGraph<u32>, roots: &[Root<u32>]) -> usize {
    let interned = Interner::new(8)
        .intern(g, roots.iter().cloned())
        .expect("interns");
    interned.globals().len()
}

fn criterion_benches(c: &mut Criterion) {
    let (g, roots) = big_table();
    let p = payloads(&g);
    let mut group = c.benchmark_group("big_table_1MiB");
    group.throughput(Throughput::Bytes(total(&p)));
    group.bench_function("sha2", |b| b.iter(|| raw_sha(black_box(&p))));
    group.bench_function("intern", |b| b.iter(|| intern(black_box(&g), &roots)));
    group.finish();

    let mut group = c.benchmark_group("small_constants");
    for n in [1_000u32, 10_000] {
        let (g, roots) = small_constants(n);
        let p = payloads(&g);
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_with_input(BenchmarkId::new("sha2", n), &p, |b, p| {
            b.iter(|| raw_sha(black_box(p)))
        });
        group.bench_with_input(BenchmarkId::new("intern", n), &g, |b, g| {
            b.iter(|| intern(black_box(g), &roots))
        });
    }
    group.finish();
}

/// Seconds per call of `a` and of `b`, measured in alternating batches for
/// about `budget`, each the fastest of its batches: on a shared machine the
/// fastest batch is the one least disturbed by other work.
fn paired(budget: Duration, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    // Size a batch to roughly 10 ms of `a`.
    a();
    b();
    let t = Instant::now();
    a();
    let one = t.elapsed().as_secs_f64().max(1e-7);
    let per_batch = ((0.01 / one) as usize).max(1);
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while start.elapsed() < budget || ta.len() < 10 {
        let t = Instant::now();
        for _ in 0..per_batch {
            a();
        }
        ta.push(t.elapsed().as_secs_f64() / per_batch as f64);
        let t = Instant::now();
        for _ in 0..per_batch {
            b();
        }
        tb.push(t.elapsed().as_secs_f64() / per_batch as f64);
    }
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    (fastest(&ta), fastest(&tb))
}

fn ratio_report() {
    let budget = Duration::from_secs(2);
    println!("\nconst-alloc: interning throughput as a ratio to raw sha2 over the same bytes");
    let (g, roots) = big_table();
    let p = payloads(&g);
    let (sha, int) = paired(
        budget,
        || {
            black_box(raw_sha(&p));
        },
        || {
            black_box(intern(&g, &roots));
        },
    );
    let gib = total(&p) as f64 / (1u64 << 30) as f64;
    println!(
        "  big table 1 MiB:       sha2 {:7.3} GiB/s  intern {:7.3} GiB/s  ratio {:.3}",
        gib / sha,
        gib / int,
        sha / int
    );
    let mut per_constant = Vec::new();
    for n in [1_000u32, 10_000, 100_000] {
        let (g, roots) = small_constants(n);
        let p = payloads(&g);
        let (sha, int) = paired(
            budget,
            || {
                black_box(raw_sha(&p));
            },
            || {
                black_box(intern(&g, &roots));
            },
        );
        let per = int / f64::from(n);
        per_constant.push(per);
        println!(
            "  {n:>6} small constants: sha2 {:7.1} ns/const  intern {:7.1} ns/const  ratio {:.3}",
            sha / f64::from(n) * 1e9,
            per * 1e9,
            sha / int
        );
    }
    println!(
        "  growth: time per constant at 10,000 / at 1,000 = {:.3}, at 100,000 / at 10,000 = {:.3} (1.0 = linear)",
        per_constant[1] / per_constant[0],
        per_constant[2] / per_constant[1]
    );
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
    // Only under `cargo bench`, not when the bench is run as a test.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list") {
        ratio_report();
    }
}
