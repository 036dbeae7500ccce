//! `refinement`: checks fixtures' compiled PTX against their source.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use refinement::mutate::Mutant;
use refinement::{Check, CheckError, Options, check_ptx, compile_fixture, launch};

/// Checks that a data-race-free kernel's compiled PTX admits only its
/// source's outcomes, for a small launch. Exit status: 0 when every check
/// refines, 1 when one does not (or has no verdict, or its source races),
/// 2 for a bad argument.
#[derive(Parser)]
struct Args {
    /// Fixtures to check (all the known ones when none is given).
    fixtures: Vec<String>,
    /// The fixtures folder.
    #[arg(long, default_value = "fixtures")]
    dir: PathBuf,
    /// Threads per CTA, instead of the fixture's launch.
    #[arg(long)]
    threads: Option<u32>,
    /// Check a mutant of the PTX instead: acquire, release, scope, or bar<N>.
    #[arg(long)]
    mutant: Option<String>,
    /// Loop bound of the compiled side.
    #[arg(long, default_value_t = 2)]
    bound: u32,
    /// Print JSON (one document with every check) instead of text.
    #[arg(long)]
    json: bool,
    /// Print the extracted source program and the translated PTX program.
    #[arg(long)]
    programs: bool,
    /// Seconds allowed to each side of each check.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let options = Options {
        bound: args.bound,
        time: Duration::from_secs(args.timeout),
    };
    let fixtures: Vec<String> = if args.fixtures.is_empty() {
        launch::KERNELS.iter().map(ToString::to_string).collect()
    } else {
        args.fixtures.clone()
    };
    let mutant = match args.mutant.as_deref().map(parse_mutant) {
        None => None,
        Some(Some(m)) => Some(m),
        Some(None) => {
            eprintln!("--mutant: expected acquire, release, scope or bar<N>");
            return ExitCode::from(2);
        }
    };
    let mut ok = true;
    let mut docs = Vec::new();
    for f in &fixtures {
        match run(&args, f, mutant, &options) {
            Ok(check) if args.json => {
                ok &= check.refines();
                docs.push(check.to_json());
            }
            Ok(check) => {
                print!("{}", check.render());
                if args.programs {
                    println!("{}", check.source.program);
                }
                ok &= check.refines();
            }
            Err(e) if args.json => {
                ok = false;
                docs.push(serde_json::json!({ "fixture": f, "verdict": "no-verdict", "error": e }));
            }
            Err(e) => {
                println!("{f}: no verdict: {e}");
                ok = false;
            }
        }
    }
    if args.json {
        let doc = serde_json::json!({ "checks": docs });
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn parse_mutant(text: &str) -> Option<Mutant> {
    Some(match text {
        "acquire" => Mutant::AcquireToRelaxed,
        "release" => Mutant::ReleaseToRelaxed,
        "scope" => Mutant::NarrowScope,
        _ => Mutant::DropBarrier(text.strip_prefix("bar")?.parse().ok()?),
    })
}

fn run(
    args: &Args,
    fixture: &str,
    mutant: Option<Mutant>,
    options: &Options,
) -> Result<Check, String> {
    let launch = launch::launch(fixture, args.threads)
        .ok_or_else(|| CheckError::UnknownKernel(fixture.to_string()).to_string())?;
    let (krate, ptx) = compile_fixture(&args.dir.join(fixture)).map_err(|e| e.to_string())?;
    let ptx = match mutant {
        Some(m) => m.apply(&ptx).map_err(|e| e.to_string())?,
        None => ptx,
    };
    check_ptx(&krate, &ptx, &launch, options).map_err(|e| e.to_string())
}
