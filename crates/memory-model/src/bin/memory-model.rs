//! `memory-model`: runs the checked theorems of the memory model.

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
    /// Extract fixtures through mir-import (runs rustc) and check them.
    Extract {
        /// Fixture names (default: saxpy, atomic_flag, shared_reduction).
        fixtures: Vec<String>,
        /// The fixture directory (default: this checkout's `fixtures/`).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The PTX forms (item 7): compile atomic_flag and shared_reduction through
    /// our pipeline and libNVVM, and check the PTX syntactically.
    Ptx {
        /// The fixture directory (default: this checkout's `fixtures/`).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check PTX litmus tests against the full PTX memory model.
    Litmus {
        /// `.litmus` files, or folders to search for them.
        #[arg(required = true)]
        paths: Vec<std::path::PathBuf>,
        /// Recorded verdicts (Dat3M's `PTXv6_0-expected.csv`); exit non-zero
        /// when a test disagrees.
        #[arg(long)]
        expect: Option<std::path::PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Print each test's witness, or its closest rejected candidate.
        #[arg(long)]
        explain: bool,
        /// Each loop body runs at most this many times (Dat3M's bound).
        #[arg(long, default_value_t = 1)]
        bound: u32,
        /// Drop an axiom from the model (repeatable), to see what it forbids.
        #[arg(long = "without", value_name = "AXIOM")]
        without: Vec<String>,
        /// The time bound per test, in seconds: a test past it is reported
        /// as `timeout` (never a verdict) and the run goes on to the next.
        #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
        timeout: f64,
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
    match cli.command {
        Command::Theorems { json, only } => {
            let reports: Vec<Report> = checks::all()
                .iter()
                .filter(|c| only.as_deref().is_none_or(|o| c.name.contains(o)))
                .map(checks::run)
                .collect();
            print(&reports, json, start.elapsed().as_secs_f64() * 1e3)
        }
        Command::Extract {
            fixtures,
            dir,
            json,
        } => {
            let names: Vec<String> = if fixtures.is_empty() {
                memory_model::extract::fixtures::FIXTURES
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            } else {
                fixtures
            };
            let dir = dir.unwrap_or_else(memory_model::extract::fixtures::default_dir);
            let reports = checks::extract::reports(&dir, &names);
            print(&reports, json, start.elapsed().as_secs_f64() * 1e3)
        }
        Command::Ptx { dir, json } => {
            let nvvm = match nvvm_emit::Libnvvm::shared() {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("error: the PTX check needs libNVVM: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let dir = dir.unwrap_or_else(memory_model::extract::fixtures::default_dir);
            let reports = memory_model::ptx_forms::reports(&dir, nvvm);
            print(&reports, json, start.elapsed().as_secs_f64() * 1e3)
        }
        Command::Litmus {
            paths,
            expect,
            json,
            explain,
            bound,
            without,
            timeout,
        } => litmus(
            &paths,
            expect.as_deref(),
            &LitmusFlags {
                json,
                explain,
                bound,
                without,
                timeout,
            },
        ),
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
            print(&[report], json, millis)
        }
    }
}

/// The `litmus` flags that shape the run and its printing.
struct LitmusFlags {
    json: bool,
    explain: bool,
    bound: u32,
    without: Vec<String>,
    timeout: f64,
}

fn litmus(
    paths: &[std::path::PathBuf],
    expect: Option<&std::path::Path>,
    flags: &LitmusFlags,
) -> ExitCode {
    use memory_model::ptx::{Axiom, Axioms, NoVerdict, Options, corpus, expect::Expected};
    let &LitmusFlags {
        json,
        explain,
        bound,
        ref without,
        timeout,
    } = flags;
    if bound == 0 {
        eprintln!("error: --bound 0: a loop body runs at least once");
        return ExitCode::from(2);
    }
    let limit = match std::time::Duration::try_from_secs_f64(timeout) {
        Ok(limit) if !limit.is_zero() => limit,
        _ => {
            eprintln!("error: --timeout {timeout}: the bound is a positive number of seconds");
            return ExitCode::from(2);
        }
    };
    let mut axioms = Axioms::all();
    for name in without.iter() {
        let Some(axiom) = Axiom::from_name(name) else {
            let names: Vec<&str> = Axiom::ALL.iter().map(|a| a.name()).collect();
            eprintln!(
                "error: --without {name}: no such axiom (one of {})",
                names.join(", ")
            );
            return ExitCode::from(2);
        };
        axioms = axioms.without(axiom);
    }
    let expected = match expect.map(|p| {
        std::fs::read_to_string(p)
            .map_err(|e| format!("{}: {e}", p.display()))
            .and_then(|t| Expected::parse(&t).map_err(|e| format!("{}: {e}", p.display())))
    }) {
        None => None,
        Some(Ok(e)) => Some(e),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let files = match corpus::collect(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let options = Options { bound, axioms };
    let results = corpus::run_within(&files, &options, Some(limit), expected.as_ref());
    let summary = corpus::Summary::of(&results, expected.is_some());
    if json {
        let doc = serde_json::json!({ "tests": results, "summary": summary });
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: cannot print JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        for r in &results {
            match &r.outcome {
                Ok(o) => {
                    let text = if explain {
                        o.explain()
                    } else {
                        format!("{}\n", o.line())
                    };
                    let mark = match r.expected {
                        Some(e) if o.verdict.dat3m_pass() != e => {
                            format!("  DISAGREES: Dat3M records {}\n", u8::from(e))
                        }
                        _ => String::new(),
                    };
                    print!("{text}{mark}");
                }
                Err(NoVerdict::Timeout(t)) => {
                    let mark = match r.expected {
                        Some(e) => {
                            format!("  DISAGREES: no verdict, Dat3M records {}\n", u8::from(e))
                        }
                        None => String::new(),
                    };
                    print!("{}\n  {t}\n{mark}", t.line());
                }
                Err(NoVerdict::Error(e)) => println!("{}: error: {e}", r.path.display()),
            }
        }
        let slowest = summary
            .slowest
            .as_ref()
            .map_or_else(String::new, |(n, ms)| format!(", slowest {n} ({ms:.1} ms)"));
        println!(
            "{} tests checked, {} errors, {} timed out (bound {timeout} s); {} agree and {} disagree with the recorded verdicts, {} unrecorded; {:.1} ms in total{slowest}",
            summary.checked,
            summary.errors,
            summary.timed_out,
            summary.agree,
            summary.disagree,
            summary.unrecorded,
            summary.total_millis
        );
    }
    if summary.disagree > 0 || summary.errors > 0 || summary.timed_out > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
