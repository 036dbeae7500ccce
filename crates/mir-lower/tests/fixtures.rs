//! Every fixture kernel through the whole lowering: the device-IR verifier,
//! libNVVM verify and PTX; the printed NVVM IR of each is pinned by a snapshot.
//! The negative fixtures (`error_*`) must be refused with their rule.

use std::path::{Path, PathBuf};

use mir_lower::Rule;
use rayon::prelude::*;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("kernel.rs").exists())
        .collect();
    v.sort();
    v
}

pub fn lower_fixture(dir: &Path) -> Result<mir_lower::Lowered, mir_lower::Diagnostics> {
    let kernel = dir.join("kernel.rs");
    let opts = mir_import::rustc::RustcOptions::for_kernel(&kernel)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let imported = mir_import::import_and_evaluate(&kernel, &opts, true)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    mir_lower::lower(&imported)
}

/// The globals and function headers of printed NVVM IR, and its size in
/// lines.
fn outline(ir: &str) -> String {
    let mut out: Vec<&str> = ir
        .lines()
        .filter(|l| l.starts_with('@') || l.starts_with("define") || l.starts_with("declare"))
        .collect();
    let lines = format!("; {} lines of NVVM IR", ir.lines().count());
    out.push(&lines);
    out.join("\n")
}

/// What the lowering and libNVVM made of one fixture: the text its
/// snapshot pins, or why it has none.
enum Outcome {
    /// An `error_*` fixture, refused as it must be.
    Refused,
    Failed(String),
    Pinned(String),
}

/// Lowers `dir`'s kernel, verifies and compiles its NVVM IR with libNVVM
/// where there is one, and returns the text to pin.
fn lower_and_compile(dir: &Path, name: &str, nvvm: Option<&nvvm_emit::Libnvvm>) -> Outcome {
    let result = lower_fixture(dir);
    if name.starts_with("error_") {
        return match result {
            Ok(_) => Outcome::Failed(format!("{name}: lowered, but must be refused")),
            Err(d) => {
                // The rendered text is pinned in tests/diagnostics.rs.
                let source = std::fs::read_to_string(dir.join("kernel.rs")).unwrap_or_default();
                let file = format!("fixtures/{name}/kernel.rs");
                eprintln!("{name}: refused as expected:\n{}", d.render(&source, &file));
                Outcome::Refused
            }
        };
    }
    let lowered = match result {
        Ok(l) => l,
        Err(d) => return Outcome::Failed(format!("{name}: {d}")),
    };
    let ir = nvvm_emit::print_module(&lowered.module);
    if let Some(nvvm) = nvvm {
        if let Err(e) = nvvm.verify(&ir) {
            return Outcome::Failed(format!("{name}: libNVVM verify: {e}"));
        }
        if let Err(e) = nvvm.compile(&ir, &nvvm_emit::CompileOptions::ptx(90, 3)) {
            return Outcome::Failed(format!("{name}: libNVVM compile: {e}"));
        }
    }
    // A kernel with crates.io dependencies has their code inlined (tens of
    // MB of IR for libm): its snapshot pins the module's outline, the
    // globals and functions; the values are the oracle's.
    Outcome::Pinned(if dir.join("Cargo.lock").exists() {
        outline(&ir)
    } else {
        ir
    })
}

#[test]
fn fixtures_lower_verify_and_compile() {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip("fixtures_lower_verify_and_compile");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let named: Vec<(PathBuf, String)> = fixtures()
        .into_iter()
        .map(|dir| {
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("?");
            let name = name.to_string();
            (dir, name)
        })
        .collect();
    // The fixtures lower one per core at a time; the snapshots are then
    // compared here, in the fixtures' order (insta's settings are this
    // thread's).
    let outcomes: Vec<Outcome> = named
        .par_iter()
        .map(|(dir, name)| lower_and_compile(dir, name, nvvm))
        .collect();
    let mut failures = Vec::new();
    for ((_, name), outcome) in named.iter().zip(outcomes) {
        match outcome {
            Outcome::Refused => {}
            Outcome::Failed(why) => failures.push(why),
            Outcome::Pinned(text) => {
                settings.bind(|| insta::assert_snapshot!(name.as_str(), text));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn refusals_name_their_rule() {
    let expect = [
        (
            "error_shared_pointer_constant",
            Rule::SharedPointerInConstant,
        ),
        (
            "error_shared_static_relocation",
            Rule::SharedStaticRelocation,
        ),
        (
            "error_interior_view_unprovable",
            Rule::InteriorViewUnprovable,
        ),
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    for (name, rule) in expect {
        let d = lower_fixture(&dir.join(name)).expect_err(name);
        assert!(
            d.0.iter().any(|x| x.rule == rule),
            "{name}: expected {rule:?}, got:\n{d}"
        );
    }
}
