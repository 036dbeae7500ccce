//! `kernel-extract`: takes fixtures through `mir-import` (runs rustc),
//! extracts each kernel into the memory model's kernel language and runs the
//! checks over the extracted programs (formerly `memory-model extract`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use kernel_extract::{checks, fixtures};

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
    memory_model::checks::print_reports(&reports, cli.json, start.elapsed().as_secs_f64() * 1e3)
}
