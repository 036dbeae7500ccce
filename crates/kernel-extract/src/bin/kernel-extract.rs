//! `kernel-extract`: takes fixtures through `mir-import` (runs rustc),
//! extracts each kernel into the memory model's kernel language and runs the
//! checks over the extracted programs (formerly `memory-model extract`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use kernel_extract::{checks, fixtures};
use memory_model::checks::Report;

/// Extract fixtures through mir-import (runs rustc) and check them.
#[derive(Debug, Parser)]
#[command(name = "kernel-extract", version)]
struct Cli {
    /// Fixture names (default: saxpy, atomic_flag, shared_reduction).
    fixtures: Vec<String>,
    /// The fixture directory (default: this checkout's `fixtures/`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn print(reports: &[Report], json: bool, total_ms: f64) -> ExitCode {
    let failed = reports.iter().filter(|r| !r.holds).count();
    if json {
        let doc = serde_json::json!({
            "checks": reports,
            "passed": reports.len() - failed,
            "failed": failed,
            "total_millis": total_ms,
        });
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: cannot print JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        for r in reports {
            println!("{r}");
        }
        println!(
            "{} passed, {} failed ({total_ms:.1} ms)",
            reports.len() - failed,
            failed
        );
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let start = Instant::now();
    let names: Vec<String> = if cli.fixtures.is_empty() {
        fixtures::FIXTURES.iter().map(|s| s.to_string()).collect()
    } else {
        cli.fixtures
    };
    let dir = cli.dir.unwrap_or_else(fixtures::default_dir);
    let reports = checks::reports(&dir, &names);
    print(&reports, cli.json, start.elapsed().as_secs_f64() * 1e3)
}
