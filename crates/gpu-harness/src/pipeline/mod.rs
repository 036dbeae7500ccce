//! The pipeline for one fixture: import → lower → NVVM IR → libNVVM verify,
//! PTX and LTOIR → shape checks → host run (expected values) → device run →
//! comparison, value by value. Every stage reports its verdict and time; a
//! failing stage stops the ones that need its output, never the report. The
//! compile stages are [`compile_driver`]'s, timed one by one; a failed stage
//! is a typed [`StageError`], whose kind the JSON report carries.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use compile_driver::{Artifacts, CompileError, RustcOptions};
use sandbox::Sandbox;
use serde::Serialize;

mod devices;

use devices::{device_stage, judge_trap, ptx_stages};

use crate::compare::{compare, hand_check};
use crate::device::virt::Limits;
use crate::fixture::Fixture;
use crate::report::{FailureKind, FixtureReport, Stage, StageStatus};
use crate::stage::StageError;

pub use crate::compare::show;

/// Which device runs the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum DeviceChoice {
    /// Both CPU devices: the IR device, then the PTX device on libNVVM's
    /// `-opt=3` PTX, each compared with the host run.
    Both,
    /// The virtual device on the CPU: it runs our device IR.
    Virtual,
    /// The PTX device on the CPU: it runs libNVVM's PTX, as a GPU would.
    Ptx,
    /// A real GPU through CUDA; "no GPU" if there is none.
    Cuda,
    /// A GPU when the driver loads, else the virtual device.
    Auto,
}

/// A fault injected into one fixture's pipeline, to test crash isolation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The pipeline panics.
    Panic(String),
    /// The pipeline never returns.
    Hang(String),
}

/// How to run fixtures.
#[derive(Clone, Debug)]
pub struct Options {
    /// The device.
    pub device: DeviceChoice,
    /// The virtual device's limits.
    pub limits: Limits,
    /// Scratch space for host programs.
    pub work_dir: PathBuf,
    /// Whether a missing libNVVM fails (`REQUIRE_LIBNVVM=1`) or skips.
    pub require_libnvvm: bool,
    /// Test-only fault injection.
    pub fault: Option<Fault>,
    /// The compile-only lane: stop after the shape checks (no host or device run).
    pub compile_only: bool,
    /// A deadline for every fixture, overriding the manifests' `timeout_s`.
    pub fixture_timeout: Option<Duration>,
    /// Where the user's code runs (rustc on the kernel, the host build and
    /// run): the confined sandbox, the unconfined runner the user asked for
    /// with `--unsandboxed`, or why the sandbox is unavailable, which fails
    /// every fixture loudly.
    pub sandbox: Result<Sandbox, String>,
    /// Keep each fixture's work folder (`--keep-work`) instead of removing it.
    pub keep_work: bool,
    /// The result cache, when the run uses one (`run` does unless
    /// `--no-cache`; tests and the library default do not).
    pub cache: Option<std::sync::Arc<crate::cache::ResultCache>>,
    /// Told each stage as it finishes (the service's progress reports).
    pub on_stage: Option<StageSink>,
}

/// A callback for each finished stage of a fixture.
#[derive(Clone)]
pub struct StageSink(pub std::sync::Arc<dyn Fn(&Stage) + Send + Sync>);

impl std::fmt::Debug for StageSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StageSink")
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            device: DeviceChoice::Both,
            limits: Limits::default(),
            work_dir: unique_work_dir(),
            require_libnvvm: std::env::var_os("REQUIRE_LIBNVVM").is_some_and(|v| v == "1"),
            fault: None,
            compile_only: false,
            fixture_timeout: None,
            sandbox: Sandbox::detect().map_err(|e| e.to_string()),
            keep_work: false,
            cache: None,
            on_stage: None,
        }
    }
}

/// A scratch folder no other run, in this process or another, shares.
pub fn unique_work_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "gpu-harness-{}-{}",
        std::process::id(),
        next_serial()
    ))
}

/// A number no other call in this process returns.
fn next_serial() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A fixture's own work folder under the run's, removed when dropped unless
/// the user keeps it: identical fixtures in one run never share one.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    fn new(opts: &Options, f: &Fixture) -> WorkDir {
        WorkDir {
            path: opts.work_dir.join(format!("{}-{}", f.name, next_serial())),
            keep: opts.keep_work,
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl Options {
    /// What in these options can change a report, as text for the result
    /// cache's key: the device, the lane, the limits, the deadlines, and
    /// where user code runs.
    pub fn identity(&self) -> String {
        let confinement = match &self.sandbox {
            Ok(s) => s.describe(),
            Err(why) => format!("no sandbox: {why}"),
        };
        format!(
            "device={:?} compile_only={} limits={:?} fixture_timeout={:?} require_libnvvm={} \
             fault={:?} confinement={confinement}",
            self.device,
            self.compile_only,
            self.limits,
            self.fixture_timeout,
            self.require_libnvvm,
            self.fault,
        )
    }

    /// How rustc runs on this run's kernels.
    fn rustc(&self) -> Result<RustcOptions, StageError> {
        let sandbox = self
            .sandbox
            .clone()
            .map_err(|why| StageError::SandboxUnavailable { why })?;
        Ok(RustcOptions::confined(sandbox))
    }
}

struct Run {
    stages: Vec<Stage>,
    sink: Option<StageSink>,
}

impl Run {
    fn stage<T>(
        &mut self,
        name: &str,
        body: impl FnOnce() -> Result<(T, String), StageError>,
    ) -> Option<T> {
        let start = Instant::now();
        let r = body();
        let millis = start.elapsed().as_secs_f64() * 1e3;
        let (status, kind, detail, value) = match r {
            Ok((v, detail)) => (StageStatus::Ok, None, detail, Some(v)),
            Err(e) => (StageStatus::Failed, Some(e.kind()), e.to_string(), None),
        };
        self.push(Stage {
            name: name.into(),
            status,
            kind,
            millis,
            detail,
        });
        value
    }

    fn push(&mut self, stage: Stage) {
        if let Some(sink) = &self.sink {
            (sink.0)(&stage);
        }
        self.stages.push(stage);
    }

    /// Whether the last stage failed with `kind`.
    fn last_failed_with(&self, kind: FailureKind) -> bool {
        self.stages.last().is_some_and(|s| s.kind == Some(kind))
    }

    fn skip(&mut self, name: &str, why: &str) {
        self.push(Stage {
            name: name.into(),
            status: StageStatus::Skipped,
            kind: None,
            millis: 0.0,
            detail: why.into(),
        });
    }
}

/// Runs the whole pipeline for `f`.
pub fn run_fixture(f: &Fixture, opts: &Options) -> FixtureReport {
    match &opts.fault {
        Some(Fault::Panic(n)) if *n == f.name => panic!("injected fault in {}", f.name),
        Some(Fault::Hang(n)) if *n == f.name => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        _ => {}
    }
    let mut run = Run {
        stages: Vec::new(),
        sink: opts.on_stage.clone(),
    };
    let expect_error = f.manifest.expect_error.clone();
    let work = WorkDir::new(opts, f);
    // The kernel's crates.io dependencies, built (or reused) before rustc
    // sees the kernel; every rustc run and the host build take them.
    let deps = match f.manifest.dependency_table() {
        Ok(table) if table.is_empty() => Some(None),
        Ok(table) => run
            .stage("dependencies", || dependencies_stage(f, &table, opts))
            .map(Some),
        Err(e) => {
            run.stage("dependencies", || -> Result<((), String), StageError> {
                Err(StageError::Dependencies(kernel_deps::DepsError::Io(
                    e.to_string(),
                )))
            });
            None
        }
    };
    let Some(deps) = deps else {
        return FixtureReport::new(f.name.clone(), run.stages, Vec::new());
    };
    let rustc = || -> Result<RustcOptions, StageError> {
        let mut r = opts.rustc()?;
        r.deps = deps.clone();
        Ok(r)
    };
    let imported = run.stage("import", || {
        let i = compile_driver::import(&f.kernel, &rustc()?)?;
        let n = i.krate.bodies.len();
        Ok((i, format!("{n} bodies")))
    });
    // The host run needs the kernels' parameter types, not the lowering: take
    // them from the import before the lowering consumes it.
    let params = match &imported {
        Some(imp) => kernel_param_types(f, &imp.krate),
        None => Err(crate::host::HostError::Generate(
            "the import failed, so the kernels' parameter types are unknown".into(),
        )),
    };
    let lowered = imported.and_then(|imp| {
        run.stage("lower", || lower_stage(f, &imp, expect_error.as_deref()))
            .map(|l| l.map(|l| (l, imp)))
    });
    let lowered = lowered.flatten();
    let artifacts = match &lowered {
        Some((l, _)) => run.stage("nvvm", || nvvm_stage(&f.kernel, l, opts.require_libnvvm)),
        None => {
            run.skip("nvvm", "nothing lowered");
            None
        }
    };
    match (&lowered, &artifacts) {
        (Some((l, imp)), Some(Some(a))) => {
            let checks = f.manifest.shape.clone();
            run.stage("shape", || {
                crate::shape_stage::run(f, l, &imp.krate, a, &checks, &rustc()?)
            });
        }
        _ => run.skip("shape", "no artifacts"),
    }
    if opts.compile_only {
        return FixtureReport::new(f.name.clone(), run.stages, Vec::new());
    }
    // The host run is the user's code: it runs only for a kernel that the
    // compiler took, so a refused kernel never runs anywhere.
    let expect_trap = f.manifest.expect_trap;
    let host = match (&lowered, &opts.sandbox) {
        (Some(_), Ok(sandbox)) => run.stage("host", || {
            let params = params.map_err(StageError::Host)?;
            let find = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, t)| t.clone());
            // The result cache's builds; else, in a test run, the run's.
            let builds = match &opts.cache {
                Some(c) => Some(build_cache::Store::at(c.dir().join("host-builds"))),
                None => build_cache::Store::from_env("host-builds"),
            };
            let ran = crate::host::run(
                f,
                &find,
                sandbox,
                &work.path,
                f.manifest.host_timeout(),
                builds.as_ref(),
                deps.as_deref(),
            );
            // The host judges a trap against the manifest, as the device
            // stage judges a race: an expected panic is its pass.
            let (rb, how) = match (ran, expect_trap) {
                (Ok(_), true) => {
                    return Err(StageError::TrapMissing {
                        runner: "host run".into(),
                    });
                }
                (
                    Err(crate::host::HostError::Panicked {
                        launch,
                        kernel,
                        stderr,
                    }),
                    true,
                ) => {
                    return Ok((
                        HostOutcome::Panicked(launch),
                        format!(
                            "launch {launch} (`{kernel}`) panicked, as the manifest expects: {stderr}"
                        ),
                    ));
                }
                (ran, _) => ran?,
            };
            let build = match how {
                crate::host::HostBuild::Built => "rustc -C opt-level=1",
                crate::host::HostBuild::Reused => "rustc -C opt-level=1 (build reused)",
            };
            Ok((
                HostOutcome::Values(rb),
                format!("{build}, simulated threads; {}", sandbox.describe()),
            ))
        }),
        (Some(_), Err(why)) => {
            run.stage("host", || -> Result<((), String), StageError> {
                Err(StageError::SandboxUnavailable { why: why.clone() })
            });
            None
        }
        (None, _) => {
            run.skip("host", "nothing lowered: the kernel never runs");
            None
        }
    };
    let (expected, host_trap) = match host {
        Some(HostOutcome::Values(rb)) => (Some(rb), None),
        Some(HostOutcome::Panicked(launch)) => (None, Some(launch)),
        None => (None, None),
    };
    let mut values = Vec::new();
    match &lowered {
        Some((l, _)) => {
            // The device runs even when the host run failed: both verdicts are news.
            let ptx = artifacts
                .as_ref()
                .and_then(|a| a.as_ref())
                .map(|a| a.ptx_o3.as_str());
            // The device stage judges a race against the manifest, as the
            // lower stage judges a refusal: an expected race is its pass.
            let device = run.stage("device", || {
                let (which, ran) = device_stage(f, l, ptx, opts);
                if expect_trap {
                    let runner = which.as_deref().unwrap_or("device");
                    return judge_trap(ran.map(|_| ()), runner, host_trap)
                        .map(|detail| (None, detail));
                }
                let ran = ran.map(|r| (r, which.unwrap_or_default()));
                match (ran, f.manifest.expect_race) {
                    (Err(e), true) if e.kind() == FailureKind::Race => Ok((
                        None,
                        format!("data race found, as the manifest expects:\n{e}"),
                    )),
                    (r, _) => r.map(|(readback, detail)| (Some(readback), detail)),
                }
            });
            if expect_trap {
                if run.last_failed_with(FailureKind::Race) {
                    run.skip("compare", "the device found a data race");
                    return FixtureReport::raced(f.name.clone(), run.stages);
                }
                // A GPU keeps nothing after a trap: there are no values.
                run.skip(
                    "compare",
                    "a fixture that expects a trap reads nothing back",
                );
                if opts.device == DeviceChoice::Both {
                    ptx_stages(
                        &mut run,
                        f,
                        l,
                        ptx,
                        opts,
                        None,
                        host_trap,
                        None,
                        &mut values,
                    );
                }
                return FixtureReport::new(f.name.clone(), run.stages, values);
            }
            let expected_race = matches!(device, Some(None));
            if expected_race || run.last_failed_with(FailureKind::Race) {
                // A race comes before any value: the values of a racy
                // kernel depend on the schedule, not on the compiler.
                run.skip("compare", "the device found a data race");
                return if expected_race {
                    FixtureReport::new(f.name.clone(), run.stages, values)
                } else {
                    FixtureReport::raced(f.name.clone(), run.stages)
                };
            }
            if f.manifest.expect_race {
                run.stage("race", || -> Result<((), String), StageError> {
                    Err(StageError::RaceMissing)
                });
            }
            let got = device.flatten();
            match (&got, &expected) {
                (Some((got, tolerance)), Some(exp)) => {
                    run.stage("compare", || compare(f, exp, got, tolerance, &mut values));
                }
                _ => run.skip("compare", "no device readback or no expected values"),
            }
            if opts.device == DeviceChoice::Both {
                let ir = got.as_ref().map(|(rb, _)| rb);
                ptx_stages(
                    &mut run,
                    f,
                    l,
                    ptx,
                    opts,
                    expected.as_ref(),
                    None,
                    ir,
                    &mut values,
                );
            }
        }
        None if expect_error.is_some() => {
            run.skip("device", "refused by the compiler, as the manifest expects");
        }
        None => run.skip("device", "no module"),
    }
    if let Some(exp) = &expected
        && !f.manifest.expected.is_empty()
    {
        run.stage("hand-check", || hand_check(f, exp));
    }
    FixtureReport::new(f.name.clone(), run.stages, values)
}

/// Builds the kernel's dependencies, or reuses the build kept in the
/// cache folder (the result cache's, else `kernel_deps::default_cache_dir`).
fn dependencies_stage(
    f: &Fixture,
    table: &kernel_deps::DependencyTable,
    opts: &Options,
) -> Result<(std::sync::Arc<kernel_deps::BuiltDeps>, String), StageError> {
    let sandbox = opts
        .sandbox
        .clone()
        .map_err(|why| StageError::SandboxUnavailable { why })?;
    let cache = match &opts.cache {
        Some(c) => c.dir().join("kernel-deps"),
        None => kernel_deps::default_cache_dir(),
    };
    let lock = f.dir.join("Cargo.lock");
    let (built, how) = kernel_deps::build(table, &lock, &cache, &sandbox)?;
    let names: Vec<String> = built
        .crates
        .iter()
        .map(|c| c.package.rsplit('#').next().unwrap_or(&c.name).to_string())
        .collect();
    let how = match how {
        kernel_deps::Obtained::Built => "built",
        kernel_deps::Obtained::Reused => "build reused",
    };
    Ok((
        std::sync::Arc::new(built),
        format!(
            "{} ({how}; cargo, {})",
            names.join(", "),
            sandbox.describe()
        ),
    ))
}

/// The lowering, judged by the manifest: `Some` lowering for a kernel that
/// must compile, `None` for one refused by the rule the manifest expects.
fn lower_stage(
    f: &Fixture,
    imp: &compile_driver::Imported,
    expect_error: Option<&str>,
) -> Result<(Option<mir_lower::Lowered>, String), StageError> {
    match (compile_driver::lower(&f.kernel, imp), expect_error) {
        (Ok(l), None) => {
            let d = format!(
                "{} functions, {} globals",
                l.module.functions.len(),
                l.module.globals.len()
            );
            Ok((Some(l), d))
        }
        (Ok(_), Some(rule)) => Err(StageError::LowerUnexpectedlyAccepted { rule: rule.into() }),
        (Err(CompileError::Lower { source: d, .. }), Some(rule))
            if d.0.iter().any(|x| x.rule.name() == rule) =>
        {
            Ok((None, format!("refused as expected:\n{}", render(f, &d))))
        }
        (Err(e @ CompileError::Lower { .. }), _) => {
            let rendered = match &e {
                CompileError::Lower { source: d, .. } => render(f, d),
                _ => e.to_string(),
            };
            Err(StageError::LowerRefused {
                rendered,
                source: Box::new(e),
            })
        }
        (Err(e), _) => Err(e.into()),
    }
}

/// The lowering's refusals with the lines of `kernel.rs` they are about
/// (plain text where no span or source is at hand).
fn render(f: &Fixture, d: &mir_lower::Diagnostics) -> String {
    match std::fs::read_to_string(&f.kernel) {
        Ok(source) => d.render(&source, &f.kernel.display().to_string()),
        Err(_) => d.to_string(),
    }
}

/// libNVVM's verify, PTX at both levels and LTOIR, through the driver. A
/// missing libNVVM is a skip (`None`) unless the run requires it.
fn nvvm_stage(
    kernel: &std::path::Path,
    l: &mir_lower::Lowered,
    require: bool,
) -> Result<(Option<Artifacts>, String), StageError> {
    let nvvm = match compile_driver::libnvvm() {
        Ok(n) => n,
        Err(CompileError::Libnvvm { source }) if !require => {
            return Ok((None, format!("libNVVM NOT RUN: {source}")));
        }
        Err(e) => return Err(e.into()),
    };
    let a = compile_driver::compile_lowered(kernel, l, nvvm)?;
    let detail = format!(
        "verified; PTX {} bytes; LTOIR {} bytes",
        a.ptx_o3.len(),
        a.ltoir_bytes
    );
    Ok((Some(a), detail))
}

/// The MIR parameter types of each launched kernel.
fn kernel_param_types(
    f: &Fixture,
    k: &mir_import::Crate,
) -> Result<Vec<(String, Vec<mir_import::model::Ty>)>, crate::host::HostError> {
    let mut out = Vec::new();
    for l in &f.manifest.launch {
        let path = format!("kernel::{}", l.kernel);
        let id = k
            .fn_body(&path)
            .ok_or_else(|| crate::host::HostError::Generate(format!("no kernel `{}`", l.kernel)))?;
        let b = &k.bodies[id];
        let tys = b
            .locals
            .values()
            .skip(1)
            .take(b.arg_count as usize)
            .map(|d| d.ty.clone())
            .collect();
        out.push((l.kernel.clone(), tys));
    }
    Ok(out)
}

/// What the host run gave: the readback, or the launch in which a kernel
/// panicked where the manifest expects it to.
enum HostOutcome {
    Values(crate::host::Readback),
    Panicked(usize),
}
