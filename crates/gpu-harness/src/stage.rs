//! Why a stage of the pipeline failed: [`StageError`], one variant per kind of
//! failure, each keeping the human detail text of the report and naming its
//! [`FailureKind`] for the JSON report. The typed causes (a [`CompileError`],
//! a [`HostError`], a [`LaunchError`]) stay reachable through
//! [`std::error::Error::source`].

use compile_driver::CompileError;

use crate::host::HostError;
use crate::launch::LaunchError;
use crate::report::FailureKind;
use crate::shape::ShapeFailure;

/// A failed stage. Its `Display` is the report's detail text.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// rustc, the MIR reader or the constant evaluator failed.
    #[error("{source}")]
    Import {
        /// The driver's error, naming the kernel file.
        #[source]
        source: CompileError,
    },
    /// The lowering refused a kernel the manifest expects to compile (or
    /// refused it for other rules than the manifest expects).
    #[error("{rendered}")]
    LowerRefused {
        /// Every refusal, rendered against the kernel source (file, line and
        /// caret) where rustc's MIR gave a span.
        rendered: String,
        /// The driver's error, with every refusal.
        #[source]
        source: Box<CompileError>,
    },
    /// The lowering took a kernel that the manifest says must be refused.
    #[error("lowered, but it must be refused with `{rule}`")]
    LowerUnexpectedlyAccepted {
        /// The rule the manifest names.
        rule: String,
    },
    /// libNVVM cannot be loaded, and the run requires it.
    #[error("{source}")]
    LibnvvmMissing {
        /// Why, with the setup command.
        #[source]
        source: CompileError,
    },
    /// libNVVM's verify, PTX or LTOIR compile failed.
    #[error("{source}")]
    Libnvvm {
        /// The driver's error, naming the kernel and the step.
        #[source]
        source: CompileError,
    },
    /// The manifest names a shape check that does not exist.
    #[error("unknown shape check `{name}` in the manifest")]
    UnknownShapeCheck {
        /// The name as written.
        name: String,
    },
    /// Shape checks failed, one line each.
    #[error("{}", failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Shape {
        /// Every failure.
        failures: Vec<ShapeFailure>,
    },
    /// The host program (the expected values) failed.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The kernel's dependencies could not be built, or were refused.
    #[error(transparent)]
    Dependencies(#[from] kernel_deps::DepsError),
    /// The sandbox cannot be set up, so the user's code does not run.
    #[error("{why}")]
    SandboxUnavailable {
        /// Why, as the sandbox said.
        why: String,
    },
    /// `--device cuda` and there is no usable GPU.
    #[error("{why}")]
    NoGpu {
        /// What the probe found.
        why: String,
    },
    /// Loading, launching or reading back on the device failed.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The manifest expects a data race and the device found none.
    #[error("the manifest expects a data race, and the device found none")]
    RaceMissing,
    /// The manifest expects a trap, and `runner` ran every launch to its end.
    #[error("the manifest expects a trap, and the {runner} ran every launch to its end")]
    TrapMissing {
        /// `host run`, `virtual device`, `PTX device`.
        runner: String,
    },
    /// The host panicked in one launch and the device trapped in another.
    #[error("the host panicked in launch {host}, the {runner} trapped in launch {device}")]
    TrapMismatch {
        /// The device.
        runner: String,
        /// The launch the host panicked in.
        host: usize,
        /// The launch the device trapped in.
        device: usize,
    },
    /// Device values differ from the host run.
    #[error("{bad} of {total} values differ from the host run")]
    ComparisonMismatch {
        /// Values that differ.
        bad: usize,
        /// Values compared.
        total: usize,
    },
    /// The PTX device's values differ from the host run. Where the IR device
    /// agrees with the host at the first differing value, the difference lies
    /// between our IR and the PTX libNVVM made of it.
    #[error(
        "{bad} of {total} values differ from the host run on the PTX device (first: {first}){}",
        if *ir_agrees { "; the IR device agrees with the host there: a difference between our IR and libNVVM's PTX" } else { "" }
    )]
    PtxMismatch {
        /// Values that differ.
        bad: usize,
        /// Values compared.
        total: usize,
        /// The first differing value, named.
        first: String,
        /// Whether the IR device gave the host's value there.
        ir_agrees: bool,
    },
    /// The manifest's hand-written values disagree with the host run.
    #[error("{0}")]
    HandCheckMismatch(String),
}

impl StageError {
    /// The kind the JSON report names.
    pub fn kind(&self) -> FailureKind {
        match self {
            StageError::Import { .. } => FailureKind::Import,
            StageError::LowerRefused { .. } => FailureKind::LowerRefused,
            StageError::LowerUnexpectedlyAccepted { .. } => FailureKind::LowerUnexpectedlyAccepted,
            StageError::LibnvvmMissing { .. } => FailureKind::LibnvvmMissing,
            StageError::Libnvvm { .. } => FailureKind::Libnvvm,
            StageError::UnknownShapeCheck { .. } => FailureKind::UnknownShapeCheck,
            StageError::Shape { .. } => FailureKind::Shape,
            StageError::Host(h) => match h {
                HostError::Generate(_) => FailureKind::HostProgram,
                HostError::Build { .. } => FailureKind::HostBuild,
                HostError::Run { .. } => FailureKind::HostRun,
                HostError::Panicked { .. } => FailureKind::HostPanic,
                HostError::Undefined { .. } => FailureKind::HostUndefined,
                HostError::Timeout(_) => FailureKind::HostTimeout,
                HostError::Readback(_) => FailureKind::HostReadback,
                HostError::Sandbox(_) | HostError::Io(_) => FailureKind::HostSandbox,
            },
            StageError::Dependencies(_) => FailureKind::Dependencies,
            StageError::SandboxUnavailable { .. } => FailureKind::SandboxUnavailable,
            StageError::NoGpu { .. } => FailureKind::NoGpu,
            StageError::Launch(l) => match l {
                LaunchError::Mismatch(_) => FailureKind::Launch,
                LaunchError::Device(_) | LaunchError::Trap { .. } => FailureKind::Device,
                LaunchError::Race { .. } => FailureKind::Race,
            },
            StageError::RaceMissing => FailureKind::RaceMissing,
            StageError::TrapMissing { .. } => FailureKind::TrapMissing,
            StageError::TrapMismatch { .. } => FailureKind::TrapMismatch,
            StageError::ComparisonMismatch { .. } => FailureKind::ComparisonMismatch,
            StageError::PtxMismatch { .. } => FailureKind::PtxMismatch,
            StageError::HandCheckMismatch(_) => FailureKind::HandCheckMismatch,
        }
    }
}

impl From<CompileError> for StageError {
    /// Sorts the driver's error by stage: import, lowering, missing libNVVM,
    /// or a libNVVM compile.
    fn from(source: CompileError) -> Self {
        match source {
            CompileError::Import { .. } => StageError::Import { source },
            CompileError::Lower { .. } => StageError::LowerRefused {
                rendered: source.to_string(),
                source: Box::new(source),
            },
            CompileError::Libnvvm { .. } => StageError::LibnvvmMissing { source },
            CompileError::Verify { .. } | CompileError::Ptx { .. } | CompileError::Ltoir { .. } => {
                StageError::Libnvvm { source }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_kebab_case_in_json() {
        let e = StageError::Host(HostError::Timeout(std::time::Duration::from_secs(2)));
        assert_eq!(e.kind(), FailureKind::HostTimeout);
        assert_eq!(
            serde_json::to_string(&e.kind()).ok().as_deref(),
            Some("\"host-timeout\"")
        );
        assert!(e.to_string().contains("timed out"));
        let e = StageError::ComparisonMismatch { bad: 1, total: 4 };
        assert_eq!(
            serde_json::to_string(&e.kind()).ok().as_deref(),
            Some("\"comparison-mismatch\"")
        );
        assert_eq!(e.to_string(), "1 of 4 values differ from the host run");
    }
}
