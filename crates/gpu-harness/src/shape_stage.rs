//! The shape stage of the pipeline: the manifest's checks, by name, through
//! [`crate::shape::check_all`] (plus the fixture's `verify-code-shape.sh`).

use compile_driver::Artifacts;

use crate::fixture::Fixture;
use crate::shape::{ShapeCheck, ShapeInput, check_all};
use crate::stage::StageError;

/// Runs the shape checks that the manifest names on the artifacts of `l`
/// (lowered from the import `krate`).
pub fn run(
    f: &Fixture,
    l: &mir_lower::Lowered,
    krate: &mir_import::Crate,
    a: &Artifacts,
    checks: &[String],
    rustc: &mir_import::rustc::RustcOptions,
) -> Result<((), String), StageError> {
    let which = checks
        .iter()
        .map(|name| {
            ShapeCheck::BUILT_IN
                .into_iter()
                .find(|c| c.name() == name)
                .ok_or_else(|| StageError::UnknownShapeCheck { name: name.clone() })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let input = ShapeInput {
        kernel: &f.kernel,
        lowered: l,
        mir: Some(krate),
        nvvm_ir: &a.nvvm_ir,
        ptx_o3: &a.ptx_o3,
        ptx_o0: &a.ptx_o0,
        rustc,
    };
    let failures = check_all(&input, &which);
    if failures.is_empty() {
        let names: Vec<&str> = which.iter().map(|c| c.name()).collect();
        Ok(((), format!("passed: {}", names.join(", "))))
    } else {
        Err(StageError::Shape { failures })
    }
}
