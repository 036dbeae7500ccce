//! The pipeline for one fixture: import → lower → NVVM IR → libNVVM verify,
//! PTX and LTOIR → shape checks → host run (expected values) → device run →
//! comparison, value by value. Every stage reports its verdict and time; a
//! failing stage stops the ones that need its output, never the report.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mir_import::rustc::RustcOptions;
use sandbox::Sandbox;
use serde::Serialize;

use crate::device::virt::{Limits, VirtualDevice};
use crate::device::{Buffer, Device, KernelArg, LaunchConfig, Program};
use crate::fixture::{Arg, ElemTy, Fixture};
use crate::report::{FixtureReport, Stage, StageStatus, ValueReport};

/// Which device runs the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The virtual device on the CPU.
    Virtual,
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            device: DeviceChoice::Virtual,
            limits: Limits::default(),
            work_dir: unique_work_dir(),
            require_libnvvm: std::env::var_os("REQUIRE_LIBNVVM").is_some_and(|v| v == "1"),
            fault: None,
            compile_only: false,
            fixture_timeout: None,
            sandbox: Sandbox::detect().map_err(|e| e.to_string()),
            keep_work: false,
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
    /// How rustc runs on this run's kernels.
    fn rustc(&self) -> Result<RustcOptions, String> {
        let sandbox = self.sandbox.clone()?;
        Ok(RustcOptions::confined(sandbox))
    }
}

/// What the NVVM stage produced.
#[derive(Clone, Debug, Default)]
pub struct Artifacts {
    /// The NVVM IR text.
    pub nvvm_ir: String,
    /// PTX at libNVVM's default `-opt=3`.
    pub ptx_o3: String,
    /// PTX at `-opt=0`, where `noinline` helpers survive for the shape checks.
    pub ptx_o0: String,
    /// LTOIR size in bytes.
    pub ltoir_bytes: usize,
}

struct Run {
    stages: Vec<Stage>,
}

impl Run {
    fn stage<T>(
        &mut self,
        name: &str,
        body: impl FnOnce() -> Result<(T, String), String>,
    ) -> Option<T> {
        let start = Instant::now();
        let r = body();
        let millis = start.elapsed().as_secs_f64() * 1e3;
        match r {
            Ok((v, detail)) => {
                self.stages.push(Stage {
                    name: name.into(),
                    status: StageStatus::Ok,
                    millis,
                    detail,
                });
                Some(v)
            }
            Err(detail) => {
                self.stages.push(Stage {
                    name: name.into(),
                    status: StageStatus::Failed,
                    millis,
                    detail,
                });
                None
            }
        }
    }

    /// Turns the last stage (a failure the manifest expects) into a pass.
    fn pass_last(&mut self, detail: String) {
        if let Some(last) = self.stages.iter_mut().rev().find(|s| s.name == "device") {
            last.status = StageStatus::Ok;
            last.detail = detail;
        }
    }

    fn skip(&mut self, name: &str, why: &str) {
        self.stages.push(Stage {
            name: name.into(),
            status: StageStatus::Skipped,
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
    let mut run = Run { stages: Vec::new() };
    let expect_error = f.manifest.expect_error.clone();
    let work = WorkDir::new(opts, f);
    let rustc = opts.rustc();
    let imported = run.stage("import", || {
        let rustc = rustc.clone()?;
        mir_import::import_and_evaluate(&f.kernel, &rustc, true)
            .map(|i| {
                let n = i.krate.bodies.len();
                (i, format!("{n} bodies"))
            })
            .map_err(|e| e.to_string())
    });
    // The host run needs the kernels' parameter types, not the lowering: take
    // them from the import before the lowering consumes it.
    let params = match &imported {
        Some(imp) => kernel_param_types(f, &imp.krate),
        None => Err("the import failed, so the kernels' parameter types are unknown".into()),
    };
    let lowered = imported.and_then(|mut imp| {
        run.stage("lower", || {
            match (mir_lower::lower(&mut imp), &expect_error) {
                (Ok(l), None) => {
                    let d = format!(
                        "{} functions, {} globals",
                        l.module.functions.len(),
                        l.module.globals.len()
                    );
                    Ok((Some((l, imp)), d))
                }
                (Ok(_), Some(rule)) => {
                    Err(format!("lowered, but it must be refused with `{rule}`"))
                }
                (Err(d), Some(rule)) if d.0.iter().any(|x| x.rule.name() == rule) => {
                    Ok((None, format!("refused as expected:\n{d}")))
                }
                (Err(d), _) => Err(d.to_string()),
            }
        })
    });
    let lowered = lowered.flatten();
    let artifacts = match &lowered {
        Some((l, _)) => run.stage("nvvm", || nvvm_stage(l, opts.require_libnvvm)),
        None => {
            run.skip("nvvm", "nothing lowered");
            None
        }
    };
    match (&lowered, &artifacts) {
        (Some((l, _)), Some(Some(a))) => {
            let checks = f.manifest.shape.clone();
            run.stage("shape", || {
                crate::shape_stage::run(f, l, a, &checks, &rustc.clone()?)
            });
        }
        _ => run.skip("shape", "no artifacts"),
    }
    if opts.compile_only {
        return FixtureReport::new(f.name.clone(), run.stages, Vec::new());
    }
    // The host run is the user's code: it runs only for a kernel that the
    // compiler took, so a refused kernel never runs anywhere.
    let expected = match (&lowered, &opts.sandbox) {
        (Some(_), Ok(sandbox)) => run.stage("host", || {
            let params = params.clone()?;
            let find = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, t)| t.clone());
            let rb = crate::host::run(f, &find, sandbox, &work.path, f.manifest.host_timeout())
                .map_err(|e| e.to_string())?;
            Ok((
                rb,
                format!(
                    "rustc -C opt-level=1, simulated threads; {}",
                    sandbox.describe()
                ),
            ))
        }),
        (Some(_), Err(why)) => {
            run.stage("host", || -> Result<((), String), String> {
                Err(why.clone())
            });
            None
        }
        (None, _) => {
            run.skip("host", "nothing lowered: the kernel never runs");
            None
        }
    };
    let mut values = Vec::new();
    match &lowered {
        Some((l, _)) => {
            // The device runs even when the host run failed: both verdicts are news.
            let ptx = artifacts
                .as_ref()
                .and_then(|a| a.as_ref())
                .map(|a| a.ptx_o3.clone());
            let mut race = None;
            let got = run.stage("device", || {
                device_stage(f, l, ptx.as_deref(), opts, &mut race)
            });
            if let Some(race) = race {
                // A race comes before any value: the values of a racy
                // kernel depend on the schedule, not on the compiler.
                run.skip("compare", "the device found a data race");
                if f.manifest.expect_race {
                    run.pass_last(format!("data race found, as the manifest expects:\n{race}"));
                    return FixtureReport::new(f.name.clone(), run.stages, values);
                }
                return FixtureReport::raced(f.name.clone(), run.stages);
            }
            if f.manifest.expect_race {
                run.stages.push(Stage {
                    name: "race".into(),
                    status: StageStatus::Failed,
                    millis: 0.0,
                    detail: "the manifest expects a data race, and the device found none".into(),
                });
            }
            match (got, &expected) {
                (Some(got), Some(exp)) => {
                    run.stage("compare", || compare(f, exp, &got, &mut values));
                }
                _ => run.skip("compare", "no device readback or no expected values"),
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

fn nvvm_stage(
    l: &mir_lower::Lowered,
    require: bool,
) -> Result<(Option<Artifacts>, String), String> {
    let ir = nvvm_emit::print_module(&l.module);
    let nvvm = match nvvm_emit::Libnvvm::shared() {
        Ok(n) => n,
        Err(e) if !require => return Ok((None, format!("libNVVM NOT RUN: {e}"))),
        Err(e) => return Err(e.to_string()),
    };
    nvvm.verify(&ir)
        .map_err(|e| format!("libNVVM verify: {e}"))?;
    let ptx = |o| {
        nvvm.compile(&ir, &nvvm_emit::CompileOptions::ptx(90, o))
            .map_err(|e| format!("libNVVM PTX -opt={o}: {e}"))
    };
    let ptx_o3 = String::from_utf8_lossy(&ptx(3)?).into_owned();
    let ptx_o0 = String::from_utf8_lossy(&ptx(0)?).into_owned();
    let lto = nvvm
        .compile(&ir, &nvvm_emit::CompileOptions::ltoir(90, 3))
        .map_err(|e| format!("libNVVM LTOIR: {e}"))?;
    let detail = format!(
        "verified; PTX {} bytes; LTOIR {} bytes",
        ptx_o3.len(),
        lto.len()
    );
    Ok((
        Some(Artifacts {
            nvvm_ir: ir,
            ptx_o3,
            ptx_o0,
            ltoir_bytes: lto.len(),
        }),
        detail,
    ))
}

/// The MIR parameter types of each launched kernel.
fn kernel_param_types(
    f: &Fixture,
    k: &mir_import::Crate,
) -> Result<Vec<(String, Vec<mir_import::model::Ty>)>, String> {
    let mut out = Vec::new();
    for l in &f.manifest.launch {
        let path = format!("kernel::{}", l.kernel);
        let id = k
            .fn_body(&path)
            .ok_or_else(|| format!("no kernel `{}`", l.kernel))?;
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

fn scalar_arg(t: ElemTy, bits: u64) -> KernelArg {
    match t {
        ElemTy::U8 => KernelArg::U8(bits as u8),
        ElemTy::U16 => KernelArg::U16(bits as u16),
        ElemTy::U32 => KernelArg::U32(bits as u32),
        ElemTy::U64 => KernelArg::U64(bits),
        ElemTy::I8 => KernelArg::I8(bits as u8 as i8),
        ElemTy::I16 => KernelArg::I16(bits as u16 as i16),
        ElemTy::I32 => KernelArg::I32(bits as u32 as i32),
        ElemTy::I64 => KernelArg::I64(bits as i64),
        ElemTy::F32 => KernelArg::F32(f32::from_bits(bits as u32)),
        ElemTy::F64 => KernelArg::F64(f64::from_bits(bits)),
        ElemTy::Usize => KernelArg::U64(bits),
        ElemTy::Isize => KernelArg::I64(bits as i64),
        ElemTy::Bool => KernelArg::Bool(bits != 0),
    }
}

fn device_for(opts: &Options, limits: Limits) -> Result<(Box<dyn Device>, String), String> {
    match opts.device {
        DeviceChoice::Virtual => Ok((
            Box::new(VirtualDevice::with_limits(limits)),
            "virtual device".into(),
        )),
        DeviceChoice::Auto => {
            let a = crate::device::auto(limits);
            let why = a
                .no_gpu
                .as_ref()
                .map_or_else(|| "GPU".to_string(), |n| format!("virtual device ({n})"));
            let d = a.device.describe();
            Ok((a.device, format!("{why}: {d}")))
        }
        DeviceChoice::Cuda => match crate::device::cuda::probe() {
            crate::device::cuda::Probe::Gpu(g) => {
                let d = g.describe();
                Ok((Box::new(g), d))
            }
            crate::device::cuda::Probe::NoGpu(n) => Err(n.to_string()),
        },
    }
}

type Readback = crate::host::Readback;

fn device_stage(
    f: &Fixture,
    l: &mir_lower::Lowered,
    ptx: Option<&str>,
    opts: &Options,
    race: &mut Option<String>,
) -> Result<(Readback, String), String> {
    let mut limits = opts.limits;
    if let Some(steps) = f.manifest.step_limit {
        limits.max_steps = steps;
    }
    let (mut dev, which) = device_for(opts, limits)?;
    let program = match ptx {
        Some(p) => Program::with_ptx(&l.module, p),
        None => Program::ir(&l.module),
    };
    let module = dev.load(&program).map_err(|e| e.to_string())?;
    let mut bufs: Vec<(String, ElemTy, Buffer, usize)> = Vec::new();
    for b in &f.manifest.buffer {
        let bytes = b.initial_bytes();
        let buf = dev.alloc(bytes.len().max(1)).map_err(|e| e.to_string())?;
        dev.write(buf, 0, &bytes).map_err(|e| e.to_string())?;
        bufs.push((b.name.clone(), b.ty, buf, b.len));
    }
    for launch in &f.manifest.launch {
        let params = l
            .kernel_params
            .get(&launch.kernel)
            .ok_or_else(|| format!("no kernel `{}` in the module", launch.kernel))?;
        if params.len() != launch.args.len() {
            return Err(format!(
                "kernel `{}` takes {} parameters, the manifest gives {} arguments",
                launch.kernel,
                params.len(),
                launch.args.len()
            ));
        }
        let mut args = Vec::new();
        for (p, a) in params.iter().zip(&launch.args) {
            match (a.resolve()?, p.slots) {
                (_, 0) => {}
                (Arg::Scalar(t, bits), 1) => args.push(scalar_arg(t, bits)),
                (Arg::Buffer(name), slots) => {
                    let (_, _, buf, len) = bufs
                        .iter()
                        .find(|(n, ..)| *n == name)
                        .ok_or_else(|| format!("unknown buffer `{name}`"))?;
                    args.push(KernelArg::Buffer(*buf));
                    if slots == 2 {
                        args.push(KernelArg::U64(*len as u64));
                    }
                }
                (a, s) => return Err(format!("argument {a:?} for a parameter of {s} slots")),
            }
        }
        let cfg = LaunchConfig::xy(
            (launch.grid[0], launch.grid[1]),
            (launch.block[0], launch.block[1]),
        );
        if let Err(e) = dev.launch(module, &launch.kernel, cfg, &args) {
            if let Some(r) = e.race() {
                let m = race_message(f, &bufs, r);
                *race = Some(m.clone());
                return Err(m);
            }
            return Err(e.to_string());
        }
    }
    let mut out = Vec::new();
    for (b, spec) in bufs.iter().zip(&f.manifest.buffer) {
        if spec.readback == 0 {
            continue;
        }
        let bytes = dev.read(b.2).map_err(|e| e.to_string())?;
        let n = b.1.size();
        let vals = bytes
            .chunks(n)
            .take(spec.readback)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..n].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        out.push((b.0.clone(), vals));
    }
    Ok((out, which))
}

/// The device's race report, with each access's buffer and element index
/// named as the manifest names them.
fn race_message(
    f: &Fixture,
    bufs: &[(String, ElemTy, Buffer, usize)],
    r: &crate::device::virt::RaceReport,
) -> String {
    use crate::device::virt::RaceMemory;
    let place = |a: &crate::device::virt::RaceAccess| match &a.memory {
        RaceMemory::Buffer { buffer } => bufs
            .iter()
            .find(|b| b.2 == *buffer)
            .map(|(name, ty, ..)| {
                format!(
                    "buffer `{name}`, element {} ({})",
                    a.offset / ty.size() as u64,
                    ty.rust()
                )
            })
            .unwrap_or_else(|| format!("buffer #{}", buffer.index())),
        other => other.to_string(),
    };
    format!(
        "fixture {}: {r}\n  first access:  {}\n  second access: {}",
        f.name,
        place(&r.first),
        place(&r.second)
    )
}

fn elem_ty(f: &Fixture, buffer: &str) -> ElemTy {
    f.manifest
        .buffer
        .iter()
        .find(|b| b.name == buffer)
        .map_or(ElemTy::U64, |b| b.ty)
}

/// Shows a bit pattern as a value of the buffer's type.
pub fn show(t: ElemTy, bits: u64) -> String {
    match t {
        ElemTy::F32 => format!("{}", f32::from_bits(bits as u32)),
        ElemTy::F64 => format!("{}", f64::from_bits(bits)),
        ElemTy::I8 => format!("{}", bits as u8 as i8),
        ElemTy::I16 => format!("{}", bits as u16 as i16),
        ElemTy::I32 => format!("{}", bits as u32 as i32),
        ElemTy::I64 | ElemTy::Isize => format!("{}", bits as i64),
        ElemTy::Bool => format!("{}", bits != 0),
        _ => format!("{bits}"),
    }
}

fn compare(
    f: &Fixture,
    exp: &Readback,
    got: &Readback,
    values: &mut Vec<ValueReport>,
) -> Result<((), String), String> {
    let mut bad = 0;
    for (name, e) in exp {
        let t = elem_ty(f, name);
        let g = got
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[]);
        for (i, ev) in e.iter().enumerate() {
            let gv = g.get(i).copied();
            let ok = gv == Some(*ev);
            bad += usize::from(!ok);
            values.push(ValueReport {
                buffer: name.clone(),
                index: i,
                expected: show(t, *ev),
                got: gv.map_or_else(|| "missing".into(), |v| show(t, v)),
                ok,
            });
        }
    }
    let n = values.len();
    if bad == 0 {
        Ok(((), format!("{n} values equal to the host run")))
    } else {
        Err(format!("{bad} of {n} values differ from the host run"))
    }
}

/// The manifest's hand-written values, checked against the host run: a second
/// check of the oracle itself, never the only one.
fn hand_check(f: &Fixture, exp: &Readback) -> Result<((), String), String> {
    for (name, want) in &f.manifest.expected {
        let t = elem_ty(f, name);
        let host = exp
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("no readback of `{name}`"))?;
        for (i, w) in want.iter().enumerate() {
            let wb = t.bits_of(*w);
            if host.get(i) != Some(&wb) {
                return Err(format!(
                    "host `{name}[{i}]` = {:?}, the manifest says {}",
                    host.get(i).map(|v| show(t, *v)),
                    show(t, wb)
                ));
            }
        }
    }
    Ok(((), "hand-written values agree with the host run".into()))
}
