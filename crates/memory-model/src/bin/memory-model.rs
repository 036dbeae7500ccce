//! `memory-model`: runs the checked theorems of the reference's small model
//! (`theorems`) and the tree reduction at any thread count (`reduction`).
//! Extraction from real kernels is `kernel-extract`; the full PTX litmus
//! checker is `ptx-litmus`.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use memory_model::checks::{self, Report};

/// Exhaustively checked theorems of the Rust-to-PTX memory model.
#[derive(Debug, Parser)]
#[command(name = "memory-model", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every named check; print each verdict, the executions explored and the time.
    Theorems {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Run only the checks whose name contains this text.
        #[arg(long)]
        only: Option<String>,
    },
    /// The tree reduction for N threads, with the pruned search.
    Reduction {
        /// The thread count: a power of two, at most 1024 (a CTA's limit).
        #[arg(long, short = 'n')]
        threads: u32,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let start = Instant::now();
    match cli.command {
        Command::Theorems { json, only } => {
            let reports: Vec<Report> = checks::all()
                .iter()
                .filter(|c| only.as_deref().is_none_or(|o| c.name.contains(o)))
                .map(checks::run)
                .collect();
            checks::print_reports(&reports, json, start.elapsed().as_secs_f64() * 1e3)
        }
        Command::Reduction { threads, json } => {
            if !threads.is_power_of_two() || threads > 1024 {
                eprintln!(
                    "error: --threads {threads}: the tree reduction needs a power of two from 1 to 1024 \
                     (a CTA holds at most 1024 threads)"
                );
                return ExitCode::from(2);
            }
            let outcome = checks::reduction::scaling(threads);
            let millis = start.elapsed().as_secs_f64() * 1e3;
            let statement = format!(
                "N = {threads}: a unique consistent trace of {} events, sh[0] = {}",
                checks::reduction::expected_events(threads),
                checks::reduction::expected_sum(threads)
            );
            let report = checks::report(
                &format!("reduction.n{threads}"),
                &statement,
                outcome,
                millis,
            );
            checks::print_reports(&[report], json, millis)
        }
    }
}
