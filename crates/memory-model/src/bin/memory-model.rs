//! `memory-model`: runs the checked theorems of the reference's small model
//! (`theorems`), the tree reduction at any thread count (`reduction`), and
//! every interleaving of it with the race check (`drf`).
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
    /// Every interleaving of the tree reduction for N threads, with the
    /// happens-before race check (the source side of a refinement check).
    Drf {
        /// The thread count: a power of two.
        #[arg(long, short = 'n')]
        threads: u32,
        /// Seconds allowed.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
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
        Command::Drf { threads, timeout } => {
            if !threads.is_power_of_two() || threads > 1024 {
                eprintln!("error: --threads {threads}: a power of two from 1 to 1024");
                return ExitCode::from(2);
            }
            let program = memory_model::litmus::tree_reduction(threads);
            let limits = memory_model::drf::Limits {
                time: std::time::Duration::from_secs(timeout),
                ..memory_model::drf::Limits::default()
            };
            match memory_model::drf::explore(&program, &limits) {
                Ok(report) => {
                    println!("{report}");
                    if report.race_free() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    }
                }
                Err(e) => {
                    println!("no verdict: {e}");
                    ExitCode::FAILURE
                }
            }
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
