//! The mir-import corpus: every source under `tests/corpus/` goes through the real
//! rustc and the parser. Its structure is pinned by an insta snapshot, and the
//! `//@` facts written in the source are checked against the import.

mod common;

use mir_import::rustc::RustcOptions;

#[test]
fn corpus_parses_matches_snapshots_and_facts() {
    let files = common::corpus_files();
    assert!(
        files.len() >= 30,
        "the corpus needs at least 30 sources, has {}",
        files.len()
    );
    let mut facts = 0;
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for file in &files {
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name");
        let krate = mir_import::import_file(file, &RustcOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let source = std::fs::read_to_string(file).expect("read source");
        let n = common::check_facts(&krate, &source, name);
        assert!(
            n >= 1,
            "{name}: every corpus source needs at least one `//@` fact"
        );
        facts += n;
        settings.bind(|| insta::assert_snapshot!(name, common::summary(&krate)));
    }
    eprintln!("corpus: {} sources, {facts} facts checked", files.len());
}

#[test]
fn a_wrong_fact_fails() {
    let file = common::corpus_dir().join("saxpy_kernel.rs");
    let krate = mir_import::import_file(&file, &RustcOptions::default()).expect("imports");
    let bogus = "//@ local kernel::saxpy _0: u64\n";
    let caught = std::panic::catch_unwind(|| common::check_facts(&krate, bogus, "bogus"));
    assert!(
        caught.is_err(),
        "a wrong local type must fail the fact check"
    );
}
