//! Every pair compiles on both sides and is measured, statically and on the
//! PTX device (with NVRTC's values checked against ours). Needs libNVVM, NVRTC
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
    // Every compile ran the fixture's launches on the PTX device, with
    // NVRTC's values equal to ours (else `compare` fails).
    for row in &rows {
        let d = &row.dynamic;
        assert!(d.ours > 0 && d.nvrtc_plain > 0, "{}: {d:?}", row.fixture);
        assert_eq!(d.nvrtc_restrict.is_some(), row.nvrtc_restrict.is_some());
    }
    let json = serde_json::to_value(&rows).expect("serializes");
    assert!(json[0]["dynamic"]["ours"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(json.as_array().map(Vec::len), Some(PAIRS.len()));
    assert!(PAIRS.len() >= 10, "the issue asks for at least 10 kernels");
    assert!(json[0]["standing"]["misses"].is_array());
    assert_eq!(json[0]["ours"]["entry"], "saxpy");
    let table = render_table(&rows);
    let compiles: usize = PAIRS.iter().map(|p| 2 + usize::from(p.has_restrict)).sum();
    assert_eq!(table.lines().count(), 1 + compiles, "{table}");
    // The targets (≤ 1.10× NVRTC's registers and instructions, no
    // spills or local memory where NVRTC has none). Two kernels miss them
    // for a reason in the Rust source that NVRTC's twin does not share
    // (README, "Code quality against NVRTC"); every other kernel must keep
    // meeting them.
    let documented_misses = ["transpose_shared", "softmax_rows"];
    for row in &rows {
        assert_eq!(row.standing, codegen_compare::targets::evaluate(row));
        if !documented_misses.contains(&row.fixture.as_str()) {
            assert!(
                row.standing.misses.is_empty(),
                "{} now misses its targets: {:?}\n{table}",
                row.fixture,
                row.standing.misses
            );
        }
        let spills = |k: &codegen_compare::KernelFigures| k.spill_stores + k.spill_loads;
        assert_eq!(spills(&row.ours), 0, "{}: ours spills", row.fixture);
    }
    // Rust's `&[T]` is `noalias readonly`: where the plain-pointer C++ has no
    // read-only loads, ours has some.
    let nc = rows
        .iter()
        .filter(|r| r.ours.nc_loads > 0 && r.nvrtc_plain.nc_loads == 0)
        .count();
    assert!(
        nc >= 5,
        "only {nc} kernels read through ld.global.nc where plain C++ cannot\n{table}"
    );
}

#[test]
fn a_twin_that_computes_something_else_is_refused() {
    let test = "a_twin_that_computes_something_else_is_refused";
    if nvrtc::testing::nvrtc_or_skip(test).is_none() {
        return;
    }
    let Ok(nvvm) = compile_driver::libnvvm() else {
        let required = std::env::var("REQUIRE_LIBNVVM").is_ok_and(|v| !v.is_empty() && v != "0");
        assert!(
            !required,
            "{test}: REQUIRE_LIBNVVM=1 but libNVVM is missing"
        );
        eprintln!("\n*** NOT RUN: {test}: no libNVVM ***");
        return;
    };
    let root = workspace_root();
    let pair = &PAIRS[0];
    assert_eq!(pair.fixture, "saxpy");
    let kernel = root.join("fixtures/saxpy/kernel.rs");
    let compiled = compile_driver::compile(&kernel, &Default::default(), nvvm).expect("compiles");
    let cu = codegen_compare::nvrtc_ptx(&root, &pair.cuda_file()).expect("NVRTC compiles");
    let ours = &compiled.artifacts.ptx_o3;
    codegen_compare::dynamic(&root, pair, &compiled.lowered, ours, &cu).expect("the twins agree");
    // The C++ twin's product turned into a sum: other values, refused.
    assert!(cu.contains("mul.rn.f32"), "{cu}");
    let wrong = cu.replace("mul.rn.f32", "add.rn.f32");
    let e = codegen_compare::dynamic(&root, pair, &compiled.lowered, ours, &wrong)
        .expect_err("a product turned into a sum must be refused");
    assert!(
        matches!(e, codegen_compare::CompareError::ValuesDiffer { .. })
            && e.to_string().contains("y["),
        "{e}"
    );
}
