//! Every pair compiles on both sides and is measured. Needs libNVVM, NVRTC
//! and ptxas: NOT RUN (loudly) where one is missing, unless `REQUIRE_NVRTC=1`
//! or `REQUIRE_LIBNVVM=1` make that a failure.

use codegen_compare::{PAIRS, compare, render_table, workspace_root};

#[test]
fn every_pair_compiles_and_is_measured() {
    let test = "every_pair_compiles_and_is_measured";
    if nvrtc::testing::nvrtc_or_skip(test).is_none()
        || nvrtc::testing::ptxas_or_skip(test).is_none()
    {
        return;
    }
    if let Err(e) = compile_driver::libnvvm() {
        let required = std::env::var("REQUIRE_LIBNVVM").is_ok_and(|v| !v.is_empty() && v != "0");
        assert!(!required, "{test}: REQUIRE_LIBNVVM=1 but {e}");
        eprintln!("\n*** NOT RUN: {test}: {e} ***");
        return;
    }
    let root = workspace_root();
    let rows: Vec<_> = PAIRS
        .iter()
        .map(|p| compare(&root, p).unwrap_or_else(|e| panic!("{}: {e}", p.fixture)))
        .collect();
    for row in &rows {
        for k in [
            Some(&row.ours),
            Some(&row.nvrtc_plain),
            row.nvrtc_restrict.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            assert!(k.instructions > 0, "{}: {k:?}", row.fixture);
            assert!(k.registers > 0, "{}: {k:?}", row.fixture);
        }
    }
    let reduction = rows
        .iter()
        .find(|r| r.fixture == "shared_reduction")
        .expect("row");
    assert_eq!(reduction.ours.smem, 32, "8 u32 of shared memory");
    assert_eq!(reduction.nvrtc_plain.smem, 32, "8 u32 of shared memory");
    let json = serde_json::to_value(&rows).expect("serializes");
    assert_eq!(json.as_array().map(Vec::len), Some(PAIRS.len()));
    assert_eq!(json[0]["ours"]["entry"], "saxpy");
    let table = render_table(&rows);
    assert_eq!(table.lines().count(), 1 + 3 + 2 + 3 + 3, "{table}");
}
