//! Building real dependency tables from crates.io, confined.

use kernel_deps::{DependencyTable, DepsError, Obtained, build};

fn table(text: &str) -> DependencyTable {
    let t: toml::Table = toml::from_str(text).expect("toml");
    DependencyTable::from_toml(&t).expect("accepted")
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kernel-deps-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

#[test]
fn a_no_std_crate_is_built_with_its_mir_and_kept() {
    let Some(sandbox) = sandbox::testing::confined_or_not_run() else {
        return;
    };
    let dir = scratch("libm");
    let deps = table("libm = { version = \"=0.2.16\", default-features = false }");
    let lock = dir.join("Cargo.lock");
    let (built, how) = build(&deps, &lock, &dir.join("cache"), &sandbox).expect("libm builds");
    assert_eq!(how, Obtained::Built);
    assert!(
        lock.is_file(),
        "the lock file is written beside the fixture"
    );
    let libm = built.krate("libm").expect("libm is built");
    assert!(libm.direct);
    let mir = std::fs::read_to_string(built.path(&libm.mir)).expect("its MIR text");
    assert!(
        mir.contains("fn math::sinf::sinf(_1: f32) -> f32"),
        "sinf's MIR is there"
    );
    assert!(built.path(&libm.rlib).is_file());
    // A second build of the same table and lock reuses the first, whole.
    let (again, how) = build(&deps, &lock, &dir.join("cache"), &sandbox).expect("reused");
    assert_eq!(how, Obtained::Reused);
    assert_eq!(again, built);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crate_that_needs_std_is_refused_by_name() {
    let Some(sandbox) = sandbox::testing::confined_or_not_run() else {
        return;
    };
    let dir = scratch("std");
    // `itoa` with no features is no_std; `hex` with its default `std`
    // feature links std.
    let deps = table("hex = \"=0.4.3\"");
    let err =
        build(&deps, &dir.join("Cargo.lock"), &dir.join("cache"), &sandbox).expect_err("refused");
    match err {
        DepsError::NeedsStd { krate, .. } => assert_eq!(krate, "hex"),
        other => panic!("wrong refusal: {other}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crate_that_compiles_build_script_output_is_refused_by_name() {
    let Some(sandbox) = sandbox::testing::confined_or_not_run() else {
        return;
    };
    let dir = scratch("generated");
    // typenum 1.15 includes the `consts.rs` and `op.rs` its build script
    // writes (`include!(concat!(env!("OUT_DIR"), "/consts.rs"))`); later
    // versions check the generated code in.
    let deps = table("typenum = \"=1.15.0\"");
    let err =
        build(&deps, &dir.join("Cargo.lock"), &dir.join("cache"), &sandbox).expect_err("refused");
    match err {
        DepsError::GeneratedCode {
            krate,
            file,
            generated,
        } => {
            assert_eq!(krate, "typenum-1.15.0");
            assert_eq!(file, "typenum-1.15.0/src/lib.rs");
            // The first generated file rustc read (its dep-info's order).
            assert_eq!(generated, "OUT_DIR/op.rs");
        }
        other => panic!("wrong refusal: {other}"),
    }
    assert!(
        !dir.join("cache")
            .read_dir()
            .is_ok_and(|mut d| d
                .any(|e| e.is_ok_and(|e| !e.file_name().to_string_lossy().starts_with('.')))),
        "nothing is kept for a refused table"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
