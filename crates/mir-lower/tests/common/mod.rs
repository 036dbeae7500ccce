//! Scaffolding the lowering tests share.

/// Kernel source `source`, written to a scratch folder named after `tag`,
/// imported with its constants evaluated and lowered.
pub fn lower_source(tag: &str, source: &str) -> Result<mir_lower::Lowered, mir_lower::Diagnostics> {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kernel = dir.join("kernel.rs");
    std::fs::write(&kernel, source).expect("write kernel");
    let imp = mir_import::import_and_evaluate(&kernel, &Default::default(), true)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    mir_lower::lower(&imp)
}
