//! Every mir-import corpus kernel that stays inside the supported subset
//! lowers, passes the device-IR verifier (inside `lower`) and libNVVM verify,
//! and compiles to PTX. Kernels outside the subset must be refused with
//! `unsupported-construct` or `constant-evaluation` diagnostics only — never a
//! panic, never a module libNVVM rejects.

use std::path::{Path, PathBuf};

use mir_lower::Rule;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mir-import/tests/corpus");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    v.sort();
    v
}

/// Corpus kernels that use constructs outside the supported subset, each with
/// the reason (the test prints the diagnostic). A kernel leaving this list is
/// progress; one joining it is a regression.
const OUTSIDE_SUBSET: &[&str] = &[
    "coroutine_set_discriminant", // async fn state machine
];

#[test]
fn corpus_kernels_lower_or_are_refused_cleanly() {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip("corpus_kernels_lower_or_are_refused_cleanly");
    let (mut lowered, mut refused) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    for file in corpus() {
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        let imported = mir_import::import_and_evaluate(&file, &Default::default(), true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        match mir_lower::lower(&imported) {
            Ok(l) => {
                let ir = nvvm_emit::print_module(&l.module);
                if let Some(nvvm) = nvvm
                    && let Err(e) = nvvm.compile(&ir, &nvvm_emit::CompileOptions::ptx(90, 3))
                {
                    failures.push(format!("{name}: libNVVM: {e}"));
                    continue;
                }
                lowered.push(name);
            }
            Err(d) => {
                let bad: Vec<_> =
                    d.0.iter()
                        .filter(|x| {
                            !matches!(
                                x.rule,
                                Rule::Unsupported | Rule::ConstEval | Rule::InteriorViewUnprovable
                            )
                        })
                        .collect();
                if !bad.is_empty() {
                    failures.push(format!("{name}: unexpected refusal: {d}"));
                }
                // Each refusal names its construct and says so.
                for x in d.0.iter().filter(|x| !x.message.contains("not supported")) {
                    failures.push(format!(
                        "{name}: a refusal that does not say what is not supported: {x}"
                    ));
                }
                refused.push(format!("{name}: {}", d.0[0]));
            }
        }
    }
    eprintln!(
        "corpus: {} lowered and compiled, {} outside the subset:",
        lowered.len(),
        refused.len()
    );
    for r in &refused {
        eprintln!("  {r}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let mut outside: Vec<&str> = refused.iter().filter_map(|r| r.split(':').next()).collect();
    outside.sort_unstable();
    assert_eq!(
        outside, OUTSIDE_SUBSET,
        "the set of kernels outside the supported subset changed"
    );
}
