//! `gpu-harness`: the test oracle's command line.
//!
//! - `gpu-harness run [DIR...]`: every fixture (default: the workspace's
//!   `fixtures/`) through the whole pipeline; a table, or JSON with `--json`;
//!   `--report FILE` also writes the JSON to FILE. Reports come from the
//!   result cache when nothing that decides them changed (`--no-cache`,
//!   `--cache-dir DIR`).
//!   `--remote URL` runs them on an oracle service instead (same output).
//! - `gpu-harness serve --state DIR --tokens FILE`: the oracle as an HTTP
//!   service (`oracle_service`).
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
        cache: CacheArgs,
        #[command(flatten)]
        confinement: Confinement,
        /// Run the fixtures on the oracle service at URL
        /// (`http://host:port`) instead of here; the table, the JSON and
        /// the exit code are the same.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        /// With `--remote`: the file holding the bearer token (default:
        /// `$GPU_HARNESS_TOKEN`).
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
    /// Serves the oracle over HTTP: clients send fixtures, get reports.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8790")]
        listen: std::net::SocketAddr,
        /// Folder for the job store and the jobs' files.
        #[arg(long, value_name = "DIR")]
        state: PathBuf,
        /// Bearer tokens: one `client:token` per line.
        #[arg(long, value_name = "FILE")]
        tokens: PathBuf,
        /// Jobs run at once.
        #[arg(long, default_value_t = 1)]
        workers: usize,
        /// Which device runs the kernels.
        #[arg(long, value_enum, default_value = "both")]
        device: DeviceChoice,
        /// The largest request, in bytes.
        #[arg(long, default_value_t = 4 << 20)]
        max_request_bytes: usize,
        /// Unfinished jobs one client may have.
        #[arg(long, default_value_t = 256)]
        per_client_jobs: u64,
        /// Seconds one job may run.
        #[arg(long, default_value_t = 3600)]
        job_deadline_s: u64,
        #[command(flatten)]
        cache: CacheArgs,
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

/// The result cache.
#[derive(clap::Args)]
struct CacheArgs {
    /// Run every fixture, neither reading nor writing the result cache.
    #[arg(long)]
    no_cache: bool,
    /// The result cache's folder (default: `$GPU_HARNESS_CACHE`, else
    /// `$XDG_CACHE_HOME/gpu-harness`, else `~/.cache/gpu-harness`).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

impl CacheArgs {
    /// The cache, or none with `--no-cache`; a cache that cannot be set up
    /// is a warning, and the run goes on without it.
    fn open(&self) -> Option<std::sync::Arc<gpu_harness::cache::ResultCache>> {
        use gpu_harness::cache::{ResultCache, Toolchain};
        if self.no_cache {
            return None;
        }
        let dir = self
            .cache_dir
            .clone()
            .unwrap_or_else(ResultCache::default_dir);
        let opened = Toolchain::detect().and_then(|t| ResultCache::open(&dir, t));
        match opened {
            Ok(c) => Some(std::sync::Arc::new(c)),
            Err(e) => {
                eprintln!("WARNING: no result cache at {}: {e}", dir.display());
                None
            }
        }
    }
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

/// Prints a run's report (table or JSON), writes it to `report_file`, and
/// exits 1 unless every fixture passed.
fn finish(
    report: &gpu_harness::report::Report,
    json: bool,
    report_file: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    if let Some(path) = report_file {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .map_err(|e| anyhow::anyhow!("cannot write the report to {}: {e}", path.display()))?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", report.table());
    }
    if !report.all_passed() {
        std::process::exit(1);
    }
    Ok(())
}

/// `run --remote`: the fixtures on the service at `url`.
fn remote_run(
    url: &str,
    token_file: Option<&std::path::Path>,
    dirs: &[PathBuf],
    progress: bool,
) -> anyhow::Result<gpu_harness::report::Report> {
    let token = match token_file {
        Some(f) => std::fs::read_to_string(f)
            .map_err(|e| anyhow::anyhow!("token file {}: {e}", f.display()))?,
        None => std::env::var("GPU_HARNESS_TOKEN").map_err(|_| {
            anyhow::anyhow!("--remote needs a token: --token-file FILE or $GPU_HARNESS_TOKEN")
        })?,
    };
    let client = oracle_service::client::Client::new(url, token.trim());
    client
        .health()
        .map_err(|e| anyhow::anyhow!("the oracle service is not answering: {e}"))?;
    let bar = progress.then(|| indicatif::ProgressBar::new(dirs.len() as u64));
    let deadline = std::time::Duration::from_secs(6 * 3600);
    let report = gpu_harness::remote::run_remote(&client, dirs, deadline, &mut |r| {
        if let Some(b) = &bar {
            b.set_message(r.name.clone());
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(report)
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
            cache,
            confinement,
            remote,
            token_file,
        } => {
            let dirs = fixture_dirs(dirs)?;
            if let Some(url) = remote {
                let report = remote_run(&url, token_file.as_deref(), &dirs, !json)?;
                return finish(&report, json, report_file.as_deref());
            }
            let threads = threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let opts = confinement.options(Options {
                device,
                cache: cache.open(),
                ..Options::default()
            })?;
            let report = gpu_harness::run::run_all(&dirs, &opts, threads, !json);
            finish(&report, json, report_file.as_deref())?;
        }
        Cmd::Serve {
            listen,
            state,
            tokens,
            workers,
            device,
            max_request_bytes,
            per_client_jobs,
            job_deadline_s,
            cache,
            confinement,
        } => {
            let tokens = oracle_service::server::Tokens::load(&tokens)?;
            let opts = confinement.options(Options {
                device,
                cache: cache.open(),
                ..Options::default()
            })?;
            let mut config = oracle_service::server::Config::new(state, tokens);
            config.workers = workers;
            config.max_request_bytes = max_request_bytes;
            config.per_client_jobs = per_client_jobs;
            config.job_deadline = std::time::Duration::from_secs(job_deadline_s);
            let runner = std::sync::Arc::new(gpu_harness::remote::OracleRunner::new(opts));
            let service = oracle_service::server::start(listen, config, runner)?;
            eprintln!("gpu-harness serve: listening on {}", service.url());
            service.wait();
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
            let sandbox = confinement.sandbox()?;
            let mut rustc = mir_import::rustc::RustcOptions::confined(sandbox.clone());
            // A kernel beside a manifest with `[dependencies]` gets them built
            // (or reused), confined, as `run` does.
            rustc.deps = mir_import::rustc::kernel_dependencies(
                &kernel,
                &sandbox,
                &kernel_deps::default_cache_dir(),
            )?
            .map(std::sync::Arc::new);
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
