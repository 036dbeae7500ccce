//! `gpu-harness`: the test oracle's command line.
//!
//! - `gpu-harness run [DIR...]`: every fixture (default: the workspace's
//!   `fixtures/`) through the whole pipeline; a table, or JSON with `--json`;
//!   `--report FILE` also writes the JSON to FILE.
//! - `gpu-harness compile <kernel.rs> --emit mir|ir|nvvm|ptx|ltoir`.
//! - `gpu-harness check`: the compile-only lane (shape checks, libNVVM verify
//!   and LTOIR for every fixture; no kernel runs).

use std::path::PathBuf;

use anyhow::bail;
use clap::{Parser, Subcommand, ValueEnum};
use gpu_harness::pipeline::{DeviceChoice, Options};

#[derive(Parser)]
#[command(
    version,
    about = "The test oracle: fixtures through the whole pipeline"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Runs fixtures: a fixture folder, or a folder of fixtures.
    Run {
        /// Fixture folders or folders of fixtures (default: fixtures/).
        dirs: Vec<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Which device runs the kernels.
        #[arg(long, value_enum, default_value = "both")]
        device: DeviceChoice,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Also write the JSON report to FILE (the table, or `--json`, still
        /// goes to stdout): one run gives both, as the GPU lane needs.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        #[command(flatten)]
        confinement: Confinement,
    },
    /// Compiles one kernel and prints one stage's output.
    Compile {
        /// The kernel source.
        kernel: PathBuf,
        /// What to print.
        #[arg(long, value_enum, default_value = "nvvm")]
        emit: Emit,
        #[command(flatten)]
        confinement: Confinement,
    },
    /// The compile-only lane: shape checks, libNVVM verify and LTOIR.
    Check {
        /// Fixture folders or folders of fixtures (default: fixtures/).
        dirs: Vec<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        confinement: Confinement,
    },
}

/// Where the user's code runs.
#[derive(clap::Args)]
struct Confinement {
    /// Run rustc on the kernels and their host programs WITHOUT the sandbox
    /// (bubblewrap): kernel code then runs with your rights.
    #[arg(long)]
    unsandboxed: bool,
    /// Keep each fixture's work folder under the system's temporary folder.
    #[arg(long)]
    keep_work: bool,
}

impl Confinement {
    /// The sandbox, or a loud refusal when it cannot be set up.
    fn sandbox(&self) -> anyhow::Result<sandbox::Sandbox> {
        if self.unsandboxed {
            eprintln!(
                "WARNING: --unsandboxed: kernel code, its build and its host run are NOT confined"
            );
            return Ok(sandbox::Sandbox::unconfined()?);
        }
        Ok(sandbox::Sandbox::detect()?)
    }

    fn options(&self, base: Options) -> anyhow::Result<Options> {
        Ok(Options {
            sandbox: Ok(self.sandbox()?),
            keep_work: self.keep_work,
            ..base
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    Mir,
    Ir,
    Nvvm,
    Ptx,
    Ltoir,
}

fn fixture_dirs(dirs: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    let dirs = if dirs.is_empty() {
        vec![PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures"
        ))]
    } else {
        dirs
    };
    let mut out = Vec::new();
    for d in dirs {
        if d.join("kernel.rs").exists() {
            out.push(d);
        } else {
            out.extend(gpu_harness::fixture::Fixture::discover(&d)?);
        }
    }
    if out.is_empty() {
        bail!("no fixtures found");
    }
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().cmd {
        Cmd::Run {
            dirs,
            json,
            device,
            threads,
            report: report_file,
            confinement,
        } => {
            let dirs = fixture_dirs(dirs)?;
            let threads = threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let opts = confinement.options(Options {
                device,
                ..Options::default()
            })?;
            let report = gpu_harness::run::run_all(&dirs, &opts, threads, !json);
            if let Some(path) = &report_file {
                let text = serde_json::to_string_pretty(&report)?;
                std::fs::write(path, text + "\n").map_err(|e| {
                    anyhow::anyhow!("cannot write the report to {}: {e}", path.display())
                })?;
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.table());
            }
            if !report.all_passed() {
                std::process::exit(1);
            }
        }
        Cmd::Check {
            dirs,
            json,
            confinement,
        } => {
            let dirs = fixture_dirs(dirs)?;
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let opts = confinement.options(Options {
                compile_only: true,
                require_libnvvm: true,
                ..Options::default()
            })?;
            let report = gpu_harness::run::run_all(&dirs, &opts, threads, !json);
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.table());
            }
            if !report.all_passed() {
                std::process::exit(1);
            }
        }
        Cmd::Compile {
            kernel,
            emit,
            confinement,
        } => {
            let rustc = mir_import::rustc::RustcOptions::confined(confinement.sandbox()?);
            // A driver error's message already holds its causes: printed
            // once, not again as anyhow's "Caused by" chain.
            let flat = |e: compile_driver::CompileError| anyhow::anyhow!("{e}");
            let imp = compile_driver::import(&kernel, &rustc).map_err(flat)?;
            if let Emit::Mir = emit {
                println!("{}", serde_json::to_string_pretty(&imp.krate)?);
                return Ok(());
            }
            let lowered = compile_driver::lower(&kernel, &imp).map_err(flat)?;
            match emit {
                Emit::Ir => print!("{}", lowered.module),
                Emit::Nvvm => print!("{}", compile_driver::print(&lowered)),
                Emit::Ptx | Emit::Ltoir => {
                    let ir = compile_driver::print(&lowered);
                    let nvvm = compile_driver::libnvvm().map_err(flat)?;
                    let out = match emit {
                        Emit::Ptx => {
                            compile_driver::ptx(&kernel, nvvm, &ir, compile_driver::OPT_DEFAULT)
                                .map_err(flat)?
                                .into_bytes()
                        }
                        _ => compile_driver::ltoir(&kernel, nvvm, &ir).map_err(flat)?,
                    };
                    use std::io::Write;
                    std::io::stdout().write_all(&out)?;
                }
                Emit::Mir => {}
            }
        }
    }
    Ok(())
}
