//! Reports: a table for people and JSON for machines. Per fixture, each
//! stage's verdict and time, and each value compared (expected, got).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// A stage's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StageStatus {
    /// It did its job.
    Ok,
    /// It failed; `detail` says why.
    Failed,
    /// It did not run; `detail` says why.
    Skipped,
}

/// What kind of failure a failed stage had, for machines: the JSON report's
/// `"kind"` (kebab-case, `"host-timeout"`), so that a script tells a refused
/// kernel from a timed-out host run without reading the detail text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The kernel's crates.io dependencies could not be built, or were
    /// refused (`std`, generated code, a source outside crates.io).
    Dependencies,
    /// rustc, the MIR reader or the constant evaluator failed.
    Import,
    /// The lowering refused a kernel that must compile.
    LowerRefused,
    /// The lowering accepted a kernel that the manifest says it must refuse.
    LowerUnexpectedlyAccepted,
    /// libNVVM is missing and the run requires it.
    LibnvvmMissing,
    /// libNVVM rejected the NVVM IR (verify, PTX or LTOIR).
    Libnvvm,
    /// The manifest names a shape check that does not exist.
    UnknownShapeCheck,
    /// A shape check failed.
    Shape,
    /// The host program could not be generated for the kernel's parameters.
    HostProgram,
    /// rustc rejected the host program.
    HostBuild,
    /// The host program failed or was killed.
    HostRun,
    /// A kernel panicked on the host (a trap on a GPU), and the manifest
    /// expects no trap.
    HostPanic,
    /// A launch on the host did what a GPU leaves undefined (a barrier
    /// that can never complete, lanes of one mask at different
    /// collectives): the prelude's check stopped it.
    HostUndefined,
    /// The host program ran past its deadline.
    HostTimeout,
    /// The host program's readback is not what the manifest describes.
    HostReadback,
    /// The host job's sandbox or work folder failed.
    HostSandbox,
    /// The sandbox cannot be set up, so no user code runs.
    SandboxUnavailable,
    /// `--device cuda` and there is no usable GPU.
    NoGpu,
    /// The manifest's launch does not fit the module (kernel, arguments, buffers).
    Launch,
    /// The device failed: a fault, a timeout, a refused load or allocation.
    Device,
    /// The device found a data race the manifest does not expect.
    Race,
    /// The manifest expects a data race and the device found none.
    RaceMissing,
    /// The manifest expects a trap, and the host or a device ran every
    /// launch to its end.
    TrapMissing,
    /// The host panicked in one launch and a device trapped in another.
    TrapMismatch,
    /// Device values differ from the host run's.
    ComparisonMismatch,
    /// The PTX device's values differ from the host run's (libNVVM's PTX,
    /// executed, against our IR's meaning).
    PtxMismatch,
    /// The manifest's hand-written values differ from the host run's.
    HandCheckMismatch,
    /// The fixture's folder or manifest was refused before anything ran.
    Manifest,
    /// The pipeline panicked.
    Panic,
    /// The pipeline did not finish within its deadline.
    Hang,
}

/// One stage of one fixture.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stage {
    /// Its name (`import`, `lower`, `nvvm`, `shape`, `host`, `device`, `compare`).
    pub name: String,
    /// Its outcome.
    pub status: StageStatus,
    /// For a failed stage, what kind of failure; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<FailureKind>,
    /// Wall time in milliseconds.
    pub millis: f64,
    /// What it found.
    pub detail: String,
}

/// One value read back.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ValueReport {
    /// The buffer.
    pub buffer: String,
    /// The element index.
    pub index: usize,
    /// The host run's value.
    pub expected: String,
    /// The device's value.
    pub got: String,
    /// Whether they agree: bit-identical, or within `within`.
    pub ok: bool,
    /// Why different bits were accepted: the float function and documented
    /// error bound that allowed them (see [`crate::tolerance`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// The device that gave `got` when it is not the run's main one (`ptx`
    /// for the PTX device of a run on both CPU devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

/// A fixture's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every stage that ran passed.
    Pass,
    /// A stage failed.
    Fail,
    /// The pipeline panicked or hung.
    Crash,
    /// The virtual device found a data race: the kernel's values depend on
    /// the schedule, so they were not compared.
    Race,
}

/// One fixture's report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FixtureReport {
    /// The fixture.
    pub name: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether this report was served from the result cache
    /// ([`crate::cache`]) instead of a run: its stage times are the run's
    /// that stored it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// The stages in order.
    pub stages: Vec<Stage>,
    /// The values compared.
    pub values: Vec<ValueReport>,
}

impl FixtureReport {
    /// A report from its stages: it passes if no stage failed.
    pub fn new(name: String, stages: Vec<Stage>, values: Vec<ValueReport>) -> Self {
        let failed = stages.iter().any(|s| s.status == StageStatus::Failed);
        let verdict = if failed { Verdict::Fail } else { Verdict::Pass };
        FixtureReport {
            name,
            verdict,
            cached: false,
            stages,
            values,
        }
    }

    /// A fixture whose pipeline panicked ([`FailureKind::Panic`]) or hung
    /// ([`FailureKind::Hang`]).
    pub fn crashed(name: String, kind: FailureKind, why: String) -> Self {
        let stage = Stage {
            name: "pipeline".into(),
            status: StageStatus::Failed,
            kind: Some(kind),
            millis: 0.0,
            detail: why,
        };
        FixtureReport {
            name,
            verdict: Verdict::Crash,
            cached: false,
            stages: vec![stage],
            values: Vec::new(),
        }
    }

    /// A fixture whose kernel races (and whose manifest does not expect it).
    pub fn raced(name: String, stages: Vec<Stage>) -> Self {
        FixtureReport {
            name,
            verdict: Verdict::Race,
            cached: false,
            stages,
            values: Vec::new(),
        }
    }

    /// A fixture whose folder or manifest was refused before anything ran.
    pub fn rejected(name: String, why: String) -> Self {
        let stage = Stage {
            name: "manifest".into(),
            status: StageStatus::Failed,
            kind: Some(FailureKind::Manifest),
            millis: 0.0,
            detail: why,
        };
        FixtureReport {
            name,
            verdict: Verdict::Fail,
            cached: false,
            stages: vec![stage],
            values: Vec::new(),
        }
    }

    /// The stage called `name`.
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }
}

/// All fixtures of one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Which device ran the kernels.
    pub device: String,
    /// Worker threads.
    pub threads: usize,
    /// Wall time of the whole run, in milliseconds.
    pub millis: f64,
    /// The fixtures, sorted by name.
    pub fixtures: Vec<FixtureReport>,
}

impl Report {
    /// Whether every fixture passed.
    pub fn all_passed(&self) -> bool {
        self.fixtures.iter().all(|f| f.verdict == Verdict::Pass)
    }

    /// The table for people.
    pub fn table(&self) -> String {
        let stages = [
            "import",
            "lower",
            "nvvm",
            "shape",
            "host",
            "device",
            "compare",
            "ptx-device",
            "ptx-compare",
        ];
        let mut s = String::new();
        let _ = write!(s, "{:<34}", "fixture");
        for st in stages {
            let head = match st {
                "ptx-device" => "ptx",
                "ptx-compare" => "ptx-cmp",
                other => other,
            };
            let _ = write!(s, " {head:>9}");
        }
        let _ = writeln!(s, "  verdict");
        for f in &self.fixtures {
            let _ = write!(s, "{:<34}", f.name);
            for st in stages {
                let cell = match f.stage(st) {
                    Some(x) => match x.status {
                        StageStatus::Ok => format!("{:.0}ms", x.millis),
                        StageStatus::Failed => "FAIL".into(),
                        StageStatus::Skipped => "-".into(),
                    },
                    None => "".into(),
                };
                let _ = write!(s, " {cell:>9}");
            }
            let cached = if f.cached { " (cached)" } else { "" };
            let _ = writeln!(s, "  {:?}{cached}", f.verdict);
        }
        for f in self.fixtures.iter().filter(|f| f.verdict != Verdict::Pass) {
            for st in f.stages.iter().filter(|s| s.status == StageStatus::Failed) {
                let _ = writeln!(s, "\n{} / {}:\n{}", f.name, st.name, st.detail);
            }
            for v in f.values.iter().filter(|v| !v.ok).take(10) {
                let on = v
                    .device
                    .as_ref()
                    .map_or_else(String::new, |d| format!(" on the {d} device"));
                let _ = writeln!(
                    s,
                    "  {}[{}]: expected {}, got {}{on}",
                    v.buffer, v.index, v.expected, v.got
                );
            }
        }
        let passed = self
            .fixtures
            .iter()
            .filter(|f| f.verdict == Verdict::Pass)
            .count();
        let failed = self.fixtures.len() - passed;
        let cached = self.fixtures.iter().filter(|f| f.cached).count();
        let _ = writeln!(
            s,
            "\ndevice: {}; {} threads; {:.1} s",
            self.device,
            self.threads,
            self.millis / 1e3
        );
        let _ = writeln!(s, "fixtures: {passed} passed, {failed} failed");
        if cached > 0 {
            let _ = writeln!(
                s,
                "{cached} of them from the result cache (`--no-cache` runs them all)"
            );
        }
        s
    }
}
