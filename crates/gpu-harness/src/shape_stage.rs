//! The shape stage of the pipeline: the manifest's checks, by name, through
//! [`crate::shape::check_all`] (plus the fixture's `verify-code-shape.sh`).

use crate::fixture::Fixture;
use crate::pipeline::Artifacts;
use crate::shape::{ShapeCheck, ShapeInput, check_all};

/// Runs the shape checks that the manifest names.
pub fn run(
    f: &Fixture,
    l: &mir_lower::Lowered,
    a: &Artifacts,
    checks: &[String],
    rustc: &mir_import::rustc::RustcOptions,
) -> Result<((), String), String> {
    let which = checks
        .iter()
        .map(|name| {
            ShapeCheck::BUILT_IN
                .into_iter()
                .find(|c| c.name() == name)
                .ok_or_else(|| format!("unknown shape check `{name}` in the manifest"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let input = ShapeInput {
        kernel: &f.kernel,
        lowered: l,
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
        let lines: Vec<String> = failures.iter().map(|x| x.to_string()).collect();
        Err(lines.join("\n"))
    }
}
