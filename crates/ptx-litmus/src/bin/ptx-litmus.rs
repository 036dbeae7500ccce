//! `ptx-litmus`: checks PTX litmus tests against the full PTX memory model.
//!
//! The flags are those of the former `memory-model litmus`: files or
//! folders, `--expect` (Dat3M's recorded verdicts), `--json`, `--explain`,
//! `--bound`, `--without AXIOM` and `--timeout SECONDS`. The exit status is
//! 0 when every test has a verdict that agrees with its record, 1 when one
//! disagrees, errs or times out, and 2 for a bad argument.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use ptx_litmus::error::chain;
use ptx_litmus::expect::Expected;
use ptx_litmus::{Axiom, Axioms, NoVerdict, Options, corpus};

/// Check PTX litmus tests against the full PTX memory model.
#[derive(Debug, Parser)]
#[command(name = "ptx-litmus", version)]
struct Cli {
    /// `.litmus` files, or folders to search for them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Recorded verdicts (Dat3M's `PTXv6_0-expected.csv`); exit non-zero
    /// when a test disagrees.
    #[arg(long)]
    expect: Option<PathBuf>,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    litmus(
        &cli.paths,
        cli.expect.as_deref(),
        &LitmusFlags {
            json: cli.json,
            explain: cli.explain,
            bound: cli.bound,
            without: cli.without,
            timeout: cli.timeout,
        },
    )
}

/// The `litmus` flags that shape the run and its printing.
struct LitmusFlags {
    json: bool,
    explain: bool,
    bound: u32,
    without: Vec<String>,
    timeout: f64,
}

fn litmus(paths: &[PathBuf], expect: Option<&Path>, flags: &LitmusFlags) -> ExitCode {
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
            eprintln!("error: {}", chain(&e));
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
                Err(NoVerdict::Error(e)) => {
                    println!("{}: error: {}", r.path.display(), chain(e));
                }
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
