//! Where the probe runs and where rustc's errors about it point: the probe
//! module is appended inside the kernel's own module, and a probe item that
//! rustc refuses (a dependency's private type) is found by the line of the
//! compiled copy that rustc's error points at.

use std::path::Path;

use crate::prelude::KERNEL_MODULE;
use crate::rustc::{
    RustcError, RustcOptions, RustcOutput, appended_first_line, run_rustc_appended,
};

/// The name of the probe module, which the probe appends inside the
/// kernel's own module.
pub const PROBE_MODULE: &str = "__layout_probe";

/// Compiles the kernel with the probe module `src` appended inside the
/// kernel's module, where the kernel's private types (a private enum in a
/// tuple) can be named, as monomorphisation's instances are.
pub(in crate::eval) fn run_probe(
    kernel: &Path,
    opts: &RustcOptions,
    src: &str,
) -> Result<RustcOutput, RustcError> {
    run_rustc_appended(
        kernel,
        opts,
        &format!("pub mod {PROBE_MODULE} {{\n{src}}}\n"),
        &[],
    )
}

/// The printed path of the probe module (`kernel::__layout_probe`).
pub(super) fn probe_module_path() -> String {
    format!("{KERNEL_MODULE}::{PROBE_MODULE}")
}

/// The printed path of the probe's item `name` (`kernel::__layout_probe::PROBE_0`).
pub(super) fn probe_item(name: &str) -> String {
    format!("{}::{name}", probe_module_path())
}

/// Where rustc's errors about the probe module point: the kernel's path as
/// rustc prints it ([`crate::rustc::printed_kernel_path`]) and the line
/// (1-based) of the probe's first line in the compiled copy, after the
/// kernel's lines and the `pub mod` line.
pub(in crate::eval) struct ProbeSite {
    printed: String,
    first_line: usize,
}

impl ProbeSite {
    /// The site of a probe appended to `kernel`.
    pub(in crate::eval) fn of(kernel: &Path) -> ProbeSite {
        let source = std::fs::read_to_string(kernel).unwrap_or_default();
        ProbeSite {
            printed: crate::rustc::printed_kernel_path(kernel),
            first_line: appended_first_line(&source) + 1,
        }
    }

    /// The probe line (0-based) one of rustc's `--> /src/kernel.rs:112:1`
    /// lines points at, if it points into the probe.
    fn probe_line(&self, l: &str) -> Option<usize> {
        let rest = l.trim_start().strip_prefix("--> ")?;
        let mut parts = rest.rsplitn(3, ':');
        let (_col, line, path) = (parts.next()?, parts.next()?, parts.next()?);
        if path != self.printed {
            return None;
        }
        line.parse::<usize>().ok()?.checked_sub(self.first_line)
    }
}

/// The probe statics (`PROBE_3`, `NICHE_0`, `SIZED_1`) and functions
/// (`FIELD_2_0`) on the lines of the probe module `src` that rustc's errors
/// point at (`--> /src/kernel.rs:112:40`).
pub(in crate::eval) fn private_probe_lines(
    stderr: &str,
    src: &str,
    site: &ProbeSite,
) -> Vec<String> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    for l in stderr.lines() {
        let Some(text) = site.probe_line(l).and_then(|i| lines.get(i)) else {
            continue;
        };
        if let Some(name) = text
            .strip_prefix("pub static ")
            .and_then(|t| t.split(':').next())
            .or_else(|| {
                text.strip_prefix("pub fn ")
                    .and_then(|t| t.split('(').next())
            })
        {
            out.push(name.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The root.rs line number of one of rustc's `--> /work/root.rs:12:1` lines.
pub(in crate::eval) fn root_line(l: &str) -> Option<usize> {
    let rest = l.trim_start().strip_prefix("--> ")?;
    rest.split("root.rs:")
        .nth(1)?
        .split(':')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::field_order::FieldOrderProbe;
    use crate::eval::probe::{ProbeRequest, probe_source};
    use crate::model::{IntTy, Ty};

    fn adt(path: &str) -> Ty {
        crate::parse::parse_type(path).expect("a type")
    }

    /// The probe site of a kernel of 100 lines (a temporary file), and the
    /// line of the compiled copy where the probe item starting with
    /// `prefix` stands: where rustc's errors about it point.
    fn site_and_line(src: &str, prefix: &str) -> (ProbeSite, usize) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("probe-site-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let kernel = dir.join("kernel.rs");
        std::fs::write(&kernel, "// a line\n".repeat(100)).expect("kernel");
        let site = ProbeSite::of(&kernel);
        let _ = std::fs::remove_dir_all(&dir);
        // 100 lines, the newline the copy adds, the `pub mod` line.
        assert_eq!(site.first_line, 103);
        let line = site.first_line
            + src
                .lines()
                .position(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("no line starts with {prefix}"));
        (site, line)
    }

    #[test]
    fn private_types_are_traced_to_their_probe_statics() {
        let src = probe_source(&ProbeRequest {
            tuples: vec![
                Ty::Tuple(vec![Ty::Int(IntTy::U8), Ty::Int(IntTy::U32)]),
                Ty::Tuple(vec![adt("dep::Hidden"), Ty::Int(IntTy::U32)]),
            ],
            ..ProbeRequest::default()
        });
        let (site, line) = site_and_line(&src, "pub static PROBE_1");
        // A dependency's file of the kernel's name, at PROBE_0's line, is
        // not the probe.
        let (_, other) = site_and_line(&src, "pub static PROBE_0");
        let stderr = format!(
            "error[E0603]: struct `Hidden` is private\n  --> /src/kernel.rs:{line}:82\n\
             note: defined here\n  --> /deps/dep/src/kernel.rs:{other}:1\n"
        );
        assert_eq!(private_probe_lines(&stderr, &src, &site), ["PROBE_1"]);
    }

    #[test]
    fn a_refused_field_probe_drops_its_whole_struct() {
        let probe = |names: &[&str]| FieldOrderProbe {
            ty: adt("dep::S"),
            names: names.iter().map(|n| n.to_string()).collect(),
        };
        let req = ProbeRequest {
            field_orders: vec![probe(&["a", "hidden"]), probe(&["x", "y"])],
            ..ProbeRequest::default()
        };
        let src = probe_source(&req);
        let (site, line) = site_and_line(&src, "pub fn FIELD_0_1(");
        let stderr = format!(
            "error[E0616]: field `hidden` of struct `S` is private\n  --> /src/kernel.rs:{line}:60\n"
        );
        let refused = private_probe_lines(&stderr, &src, &site);
        assert_eq!(refused, ["FIELD_0_1"]);
        let rest = req.without(&refused);
        assert_eq!(rest.field_orders.len(), 1);
        assert_eq!(rest.field_orders[0].names, ["x", "y"]);
    }
}
