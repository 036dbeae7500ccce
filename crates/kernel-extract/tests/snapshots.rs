//! Snapshots of the extracted programs of the fixtures that extraction
//! handles (`kernel_extract::fixtures::FIXTURES`), as `lang::Program` prints
//! them, with every warning: a change in the translation shows up here as a
//! reviewed diff (these tests run rustc through mir-import).

use kernel_extract::fixtures;

fn extracted(name: &str) -> String {
    let path = fixtures::default_dir().join(name).join("kernel.rs");
    let launch = fixtures::launch(name).expect("a known fixture");
    let x = kernel_extract::extract_file(&path, name, &launch)
        .unwrap_or_else(|e| panic!("{name}: extraction failed: {e}"));
    let mut text = x.program.to_string();
    for w in &x.warnings {
        text.push_str(&format!("// warning: {w}\n"));
    }
    text
}

#[test]
fn extracted_saxpy() {
    insta::assert_snapshot!(extracted("saxpy"));
}

#[test]
fn extracted_atomic_flag() {
    insta::assert_snapshot!(extracted("atomic_flag"));
}

#[test]
fn extracted_shared_reduction() {
    insta::assert_snapshot!(extracted("shared_reduction"));
}

#[test]
fn every_fixture_has_a_snapshot() {
    assert_eq!(
        fixtures::FIXTURES,
        ["saxpy", "atomic_flag", "shared_reduction"]
    );
}
