//! The stable-keys check: a perturbed copy of the fixture, with extra kernels,
//! helpers and reference constants placed before the originals, must keep every
//! helper's globals under the same symbols with the same contents.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use compile_driver::CompileError;
use mir_import::rustc::RustcOptions;

use device_ir::{GlobalId, InstData, Module};
use mir_lower::Lowered;

use super::checks::{constant_globals, content, helpers};
use super::{ShapeCheck, ShapeFailure, TempDir};

/// The code placed before the fixture's items: two kernels with their own
/// reference constants (named, nested, promoted, and one whose content equals
/// a common fixture constant, `&(3, 4)`) returned from `#[inline(never)]` helpers.
/// Every path is written out, so it does not rely on the fixture's `use` lines.
pub const PERTURBATION: &str = r#"
// ---- stable-keys perturbation: extra kernels and constants before the originals
pub const ZZ_PERTURB_PAIR: &(u32, u32) = &(90, 91);
pub const ZZ_PERTURB_NESTED: &&u32 = &&92;
pub const ZZ_PERTURB_SAME: &(u32, u32) = &(3, 4);
#[inline(never)]
pub fn zz_perturb_pair() -> &'static (u32, u32) { ZZ_PERTURB_PAIR }
#[inline(never)]
pub fn zz_perturb_promoted() -> &'static u32 { &77 }
#[inline(never)]
pub fn zz_perturb_nested() -> &'static &'static u32 { ZZ_PERTURB_NESTED }
#[inline(never)]
pub fn zz_perturb_same() -> &'static (u32, u32) { ZZ_PERTURB_SAME }
#[unsafe(no_mangle)]
pub extern "C" fn zz_perturb_a(out: crate::gpu::DisjointSlice<u32>) {
    if crate::gpu::thread_idx_x() == 0 && out.len() >= 3 {
        out.set(0, zz_perturb_pair().1);
        out.set(1, *zz_perturb_promoted());
        out.set(2, **zz_perturb_nested());
    }
}
#[unsafe(no_mangle)]
pub extern "C" fn zz_perturb_b(out: crate::gpu::DisjointSlice<u32>) {
    if crate::gpu::thread_idx_x() == 0 && out.len() >= 2 {
        out.set(0, zz_perturb_same().0 + *zz_perturb_promoted());
        out.set(1, *&78u32);
    }
}
// ---- end of the perturbation
"#;

/// The names of the perturbation's kernels.
pub const PERTURBATION_KERNELS: [&str; 2] = ["zz_perturb_a", "zz_perturb_b"];

/// `source` with [`PERTURBATION`] inserted before its first item: after the
/// leading inner doc comments, inner attributes, blank lines, comments and
/// `use` lines, which must stay first.
pub fn perturb_source(source: &str) -> String {
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let t = line.trim();
        let header = t.is_empty()
            || t.starts_with("//")
            || t.starts_with("#![")
            || (t.starts_with("use ") && t.ends_with(';'))
            || (t.starts_with("pub use ") && t.ends_with(';'));
        if !header {
            break;
        }
        offset += line.len();
    }
    let (head, tail) = source.split_at(offset);
    let sep = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{head}{sep}{PERTURBATION}\n{tail}")
}

fn fail(m: impl Into<String>) -> ShapeFailure {
    ShapeFailure::new(ShapeCheck::StableKeys, m)
}

/// Imports and lowers `kernel` through the driver (twin fallback on),
/// running rustc as `opts` say.
pub fn lower_kernel(kernel: &Path, opts: &RustcOptions) -> Result<Lowered, CompileError> {
    compile_driver::import_and_lower(kernel, opts).map(|(_, lowered)| lowered)
}

/// Lowers `kernel` and its perturbed copy, and compares them.
pub fn stable_keys(kernel: &Path, opts: &RustcOptions) -> Result<(), ShapeFailure> {
    let original = lower_kernel(kernel, opts).map_err(|e| fail(e.to_string()))?;
    stable_keys_for(&original, kernel, opts)
}

/// Compares `original` (the lowering of `kernel`) with the lowering of the
/// perturbed copy of `kernel`.
pub fn stable_keys_for(
    original: &Lowered,
    kernel: &Path,
    opts: &RustcOptions,
) -> Result<(), ShapeFailure> {
    stable_keys_with(original, kernel, opts, &|_| {})
}

/// As [`stable_keys_for`], with `perturb` applied to the perturbed build's
/// lowering before the comparison: the hook that lets a test prove the check
/// can fail.
pub fn stable_keys_with(
    original: &Lowered,
    kernel: &Path,
    opts: &RustcOptions,
    perturb: &dyn Fn(&mut Lowered),
) -> Result<(), ShapeFailure> {
    let source = std::fs::read_to_string(kernel)
        .map_err(|e| fail(format!("cannot read {}: {e}", kernel.display())))?;
    let dir = TempDir::new("stable-keys").map_err(|e| fail(e.to_string()))?;
    let copy = dir.path().join("kernel.rs");
    std::fs::write(&copy, perturb_source(&source))
        .map_err(|e| fail(format!("cannot write {}: {e}", copy.display())))?;
    let mut perturbed =
        lower_kernel(&copy, opts).map_err(|e| fail(format!("the perturbed copy: {e}")))?;
    perturb(&mut perturbed);
    compare_keys(original, &perturbed)
}

/// The globals a function's body takes the address of, and every global they
/// reach through initializer relocations, by symbol.
pub fn referenced_globals(module: &Module, func: device_ir::FuncId) -> BTreeSet<GlobalId> {
    let mut todo: Vec<GlobalId> = Vec::new();
    if let Some(body) = &module.functions[func].body {
        for data in body.insts.values() {
            if let InstData::GlobalAddr { global, .. } = data {
                todo.push(*global);
            }
        }
    }
    let mut seen = BTreeSet::new();
    while let Some(g) = todo.pop() {
        if !seen.insert(g) {
            continue;
        }
        if let Some(init) = module.globals.get(g).and_then(|d| d.init.as_ref()) {
            todo.extend(init.relocations.iter().filter_map(|r| r.target.global()));
        }
    }
    seen
}

/// Checks that every helper of `original` exists in `perturbed` and refers to
/// exactly the same global symbols, with identical contents, and that the
/// perturbation really added kernels and constants (else the check would
/// compare a build with itself).
pub fn compare_keys(original: &Lowered, perturbed: &Lowered) -> Result<(), ShapeFailure> {
    let (a, b) = (&original.module, &perturbed.module);
    let mut problems = Vec::new();
    for kernel in PERTURBATION_KERNELS {
        if b.function_by_name(kernel).is_none() {
            problems.push(format!(
                "the perturbed build lacks the extra kernel {kernel}"
            ));
        }
    }
    let symbols = |m: &Module, o: &Lowered| -> BTreeSet<String> {
        constant_globals(m, &o.origins)
            .into_iter()
            .map(|g| m.globals[g].symbol.clone())
            .collect()
    };
    if symbols(b, perturbed).is_subset(&symbols(a, original)) {
        problems.push("the perturbed build has no constant global of its own".to_string());
    }
    for (fa, name) in helpers(a) {
        let Some(fb) = b.function_by_name(name) else {
            problems.push(format!("helper {name} is missing from the perturbed build"));
            continue;
        };
        let by_symbol = |m: &Module, f| -> BTreeMap<String, GlobalId> {
            referenced_globals(m, f)
                .into_iter()
                .map(|g| (m.globals[g].symbol.clone(), g))
                .collect()
        };
        let (ga, gb) = (by_symbol(a, fa), by_symbol(b, fb));
        if ga.keys().ne(gb.keys()) {
            let only_a: Vec<&str> = ga
                .keys()
                .filter(|s| !gb.contains_key(*s))
                .map(String::as_str)
                .collect();
            let only_b: Vec<&str> = gb
                .keys()
                .filter(|s| !ga.contains_key(*s))
                .map(String::as_str)
                .collect();
            problems.push(format!(
                "helper {name} refers to other globals in the perturbed build: only in the original [{}], only in the perturbed [{}]",
                only_a.join(", "),
                only_b.join(", ")
            ));
            continue;
        }
        for (symbol, &ida) in &ga {
            if content(a, ida) != content(b, gb[symbol]) {
                problems.push(format!(
                    "helper {name}: global {symbol} has other contents in the perturbed build"
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(fail(problems.join("; ")))
    }
}
