//! A bounded load test of the oracle service on loopback: 16 concurrent
//! clients send 200 jobs in all, first of fixtures the cache has never
//! seen (each `saxpy` with a distinct comment, so each runs the pipeline),
//! then of one fixture the cache holds. Each request's latency is from
//! submission to the report in hand. Prints throughput and p50/p99 for
//! both, and fails if a request is lost or answered with a 5xx.
//!
//! `cargo bench -p gpu-harness --bench service_load`

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_harness::cache::{ResultCache, Toolchain};
use gpu_harness::pipeline::Options;
use gpu_harness::remote::OracleRunner;
use oracle_service::api::JobRequest;
use oracle_service::client::{Client, ClientError, request_from_dir};
use oracle_service::server::{Config, Tokens, start};

const CLIENTS: usize = 16;
const REQUESTS: usize = 200;
const TOKEN: &str = "load-0123456789abcdef0123";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Sends `jobs` from `CLIENTS` threads; each thread's jobs one after the
/// other. Returns the latencies and the failures.
fn load(url: &str, jobs: Vec<JobRequest>) -> (Duration, Vec<Duration>, Vec<String>) {
    let jobs = Arc::new(std::sync::Mutex::new(jobs));
    let start = Instant::now();
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let jobs = jobs.clone();
            let url = url.to_owned();
            std::thread::spawn(move || {
                let client = Client::new(&url, TOKEN);
                let (mut lat, mut bad) = (Vec::new(), Vec::new());
                // The guard moves into `and_then` and drops there: the
                // clients never hold the lock while a job runs.
                while let Some(job) = jobs.lock().ok().and_then(|mut j| j.pop()) {
                    let t = Instant::now();
                    let r = client.submit(&job).and_then(|v| {
                        client.wait(v.id, Duration::from_millis(10), Duration::from_secs(1800))
                    });
                    match r {
                        Ok(v) if v.report.is_some() => lat.push(t.elapsed()),
                        Ok(v) => bad.push(format!("job {} done without a report", v.id)),
                        Err(ClientError::Refused { status, error }) => {
                            bad.push(format!("{status} {}: {}", error.error, error.message));
                        }
                        Err(e) => bad.push(e.to_string()),
                    }
                }
                (lat, bad)
            })
        })
        .collect();
    let (mut lat, mut bad) = (Vec::new(), Vec::new());
    for t in threads {
        match t.join() {
            Ok((l, b)) => {
                lat.extend(l);
                bad.extend(b);
            }
            Err(_) => bad.push("a client thread panicked".into()),
        }
    }
    lat.sort();
    (start.elapsed(), lat, bad)
}

fn report(what: &str, wall: Duration, lat: &[Duration]) {
    if lat.is_empty() {
        println!("{what}: no request finished");
        return;
    }
    println!(
        "{what}: {} requests in {:.2} s = {:.1} jobs/s; latency p50 {:.0} ms, p99 {:.0} ms",
        lat.len(),
        wall.as_secs_f64(),
        lat.len() as f64 / wall.as_secs_f64(),
        percentile(lat, 0.50).as_secs_f64() * 1e3,
        percentile(lat, 0.99).as_secs_f64() * 1e3
    );
}

fn main() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/saxpy");
    let root: PathBuf = std::env::temp_dir().join(format!("service-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let Ok(toolchain) = Toolchain::detect() else {
        eprintln!("service_load: no toolchain");
        std::process::exit(1);
    };
    let Ok(cache) = ResultCache::open(root.join("cache"), toolchain) else {
        eprintln!("service_load: no cache folder");
        std::process::exit(1);
    };
    let runner = OracleRunner::new(Options {
        cache: Some(Arc::new(cache)),
        ..Options::default()
    });
    let Ok(tokens) = Tokens::parse(&format!("load:{TOKEN}\n")) else {
        std::process::exit(1);
    };
    let mut config = Config::new(root.join("state"), tokens);
    config.workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let svc = match start(
        "127.0.0.1:0".parse().expect("an address"),
        config,
        Arc::new(runner),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("service_load: {e}");
            std::process::exit(1);
        }
    };
    let Ok(base) = request_from_dir(&fixture) else {
        eprintln!("service_load: cannot read {}", fixture.display());
        std::process::exit(1);
    };
    // Distinct kernels (a comment apart): every one misses the cache.
    let fresh: Vec<JobRequest> = (0..REQUESTS)
        .map(|i| {
            let mut r = base.clone();
            if let Some(k) = r.files.get_mut("kernel.rs") {
                k.push_str(&format!("\n// load {i}\n"));
            }
            r
        })
        .collect();
    let (wall, lat, mut bad) = load(&svc.url(), fresh);
    report("uncached", wall, &lat);
    // One kernel, cached after its first run.
    let (wall, lat, b) = load(&svc.url(), vec![base; REQUESTS]);
    report("cached  ", wall, &lat);
    bad.extend(b);
    svc.stop();
    let _ = std::fs::remove_dir_all(&root);
    if !bad.is_empty() {
        eprintln!("service_load: {} requests failed:", bad.len());
        for b in bad.iter().take(10) {
            eprintln!("  {b}");
        }
        std::process::exit(1);
    }
    println!("no request lost, no 5xx");
}
