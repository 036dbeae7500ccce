//! The `ptx-forms` shape check (ported from the memory model's "item 7"): the
//! PTX our pipeline emits holds the acquire, release and barrier forms the
//! memory model assumes, and the same check fails on PTX (or counts) that lack
//! them.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpu_harness::pipeline::Options;
use gpu_harness::report::StageStatus;
use gpu_harness::shape::ptx_forms::{self, BAR_SYNC, Findings, Form};
use gpu_harness::shape::{Artifacts, ShapeCheck};

const ACQUIRE_LOAD: &str = "ld.acquire.sys.u32";
const RELEASE_STORE: &str = "st.release.sys.u32";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

fn build(name: &str) -> Option<Artifacts> {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip(name)?;
    Some(Artifacts::build(&fixture(name).join("kernel.rs"), nvvm).unwrap())
}

fn form_count(f: &Findings, form: &str, function: &str) -> (usize, Option<usize>) {
    let c = f
        .forms
        .iter()
        .find(|c| c.form.to_string() == form && c.function == function)
        .unwrap_or_else(|| panic!("no {form} in {function}: {f:#?}"));
    (c.ir, c.ptx_o0)
}

fn o3_count(f: &Findings, form: &str) -> usize {
    f.forms_o3
        .iter()
        .find(|(k, _)| k.to_string() == form)
        .map_or(0, |(_, n)| *n)
}

#[test]
fn the_pipeline_emits_the_acquire_release_and_barrier_forms() {
    let Some(flag) = build("atomic_flag") else {
        return;
    };
    let f = ptx_forms::findings(&flag.input()).unwrap();
    assert_eq!(ptx_forms::judge(&f), vec![]);
    assert_eq!(
        form_count(&f, ACQUIRE_LOAD, "kernel__receive"),
        (2, Some(2))
    );
    assert_eq!(form_count(&f, RELEASE_STORE, "kernel__send"), (1, Some(1)));
    assert_eq!(o3_count(&f, ACQUIRE_LOAD), 2, "{f:#?}");
    assert_eq!(o3_count(&f, RELEASE_STORE), 1, "{f:#?}");
    assert_eq!(f.mir_barrier_calls, Some(0));

    let Some(red) = build("shared_reduction") else {
        return;
    };
    let f = ptx_forms::findings(&red.input()).unwrap();
    assert_eq!(ptx_forms::judge(&f), vec![]);
    assert_eq!(f.mir_barrier_calls, Some(2));
    assert_eq!(f.ir_barriers, 2);
    assert_eq!(f.bar_sync_o0, 2);
    // libNVVM unrolls the 3-round loop at -opt=3: the 4 barriers each thread
    // executes, counted on the virtual device.
    if f.bar_sync_o3 != 2 {
        assert_eq!(f.per_thread, Some(Ok(4)), "{f:#?}");
        assert_eq!(f.bar_sync_o3, 4, "{f:#?}");
    }
}

#[test]
fn the_check_fails_on_ptx_without_the_acquire_and_release_forms() {
    let Some(flag) = build("atomic_flag") else {
        return;
    };
    assert_eq!(ptx_forms::ptx_forms(&flag.input()), vec![]);
    // An acquire load weakened to relaxed, at one level only, is caught.
    let weak = flag.ptx_o0.replace(ACQUIRE_LOAD, "ld.relaxed.sys.u32");
    let mut input = flag.input();
    input.ptx_o0 = &weak;
    let failures = ptx_forms::ptx_forms(&input);
    assert!(
        failures.iter().any(|x| x.check == ShapeCheck::PtxForms
            && x.message.starts_with(&format!(
                "-opt=0: `{ACQUIRE_LOAD}` occurs 0 time(s) in kernel__receive"
            ))
            && x.message.contains("syntactic")),
        "{failures:?}"
    );
    let weak = flag.ptx_o3.replace(RELEASE_STORE, "st.relaxed.sys.u32");
    let mut input = flag.input();
    input.ptx_o3 = &weak;
    let failures = ptx_forms::ptx_forms(&input);
    assert!(
        failures.iter().any(|x| x
            .message
            .starts_with(&format!("-opt=3: `{RELEASE_STORE}` occurs nowhere"))),
        "{failures:?}"
    );
    // A form of another scope is not the model's form.
    let other = flag.ptx_o0.replace(ACQUIRE_LOAD, "ld.acquire.gpu.u32");
    let mut input = flag.input();
    input.ptx_o0 = &other;
    assert!(!ptx_forms::ptx_forms(&input).is_empty());
}

#[test]
fn the_check_fails_on_ptx_or_ir_without_the_barriers() {
    let Some(red) = build("shared_reduction") else {
        return;
    };
    let at = red
        .ptx_o0
        .find(BAR_SYNC)
        .unwrap_or_else(|| panic!("no bar.sync"));
    // One barrier dropped from the -opt=0 PTX.
    let mut dropped = red.ptx_o0.clone();
    dropped.replace_range(at..at + BAR_SYNC.len(), "membar.cta");
    let mut input = red.input();
    input.ptx_o0 = &dropped;
    let failures = ptx_forms::ptx_forms(&input);
    assert!(
        failures.iter().any(|x| x
            .message
            .starts_with("-opt=0: 1 `bar.sync` instruction(s), the MIR 2 call site(s)")),
        "{failures:?}"
    );
    // -opt=3 PTX with neither the static nor the unrolled count.
    let mut input = red.input();
    input.ptx_o3 = &dropped;
    let failures = ptx_forms::ptx_forms(&input);
    assert!(
        failures.iter().any(|x| x
            .message
            .starts_with("-opt=3: 1 `bar.sync` instruction(s), neither")),
        "{failures:?}"
    );
    // A lowering that lost a barrier.
    let mut f = ptx_forms::findings(&red.input()).unwrap();
    f.ir_barriers -= 1;
    let failures = ptx_forms::judge(&f);
    assert!(
        failures.iter().any(|x| x
            .message
            .starts_with("the device IR has 1 barrier instruction(s), the MIR 2")),
        "{failures:?}"
    );
    // Without the MIR the barriers cannot be counted: a failure, not a pass.
    let mut input = red.input();
    input.mir = None;
    assert!(
        ptx_forms::ptx_forms(&input)
            .iter()
            .any(|x| x.message.starts_with("no MIR was given"))
    );
}

#[test]
fn forms_match_by_modifiers_in_any_state_space() {
    let form = Form {
        opcode: "ld",
        order: "acquire",
        scope: Some("sys"),
        class: 'u',
        bits: 32,
    };
    let i = |s: &str| ptx_reader::parse_instruction(s).unwrap();
    assert_eq!(form.to_string(), ACQUIRE_LOAD);
    assert!(form.matches(&i("ld.acquire.sys.u32 %r1, [%rd1]")));
    assert!(form.matches(&i("ld.acquire.sys.global.u32 %r1, [%rd1]")));
    assert!(!form.matches(&i("ld.relaxed.sys.u32 %r1, [%rd1]")));
    assert!(!form.matches(&i("ld.acquire.sys.u64 %rd2, [%rd1]")));
    assert!(!form.matches(&i("st.acquire.sys.u32 [%rd1], %r1")));
}

#[test]
fn volatile_forms_match_by_width_whatever_the_type_letter() {
    let form = Form {
        opcode: "st",
        order: "volatile",
        scope: None,
        class: 'u',
        bits: 8,
    };
    let i = |s: &str| ptx_reader::parse_instruction(s).unwrap();
    assert_eq!(form.to_string(), "st.volatile.u8");
    assert!(form.matches(&i("st.volatile.global.u8 [%rd1], %rs1")));
    assert!(form.matches(&i("st.volatile.b8 [%rd1], %rs1")));
    assert!(!form.matches(&i("st.global.u8 [%rd1], %rs1")));
    assert!(!form.matches(&i("st.volatile.u16 [%rd1], %rs1")));
    assert!(!form.matches(&i("ld.volatile.u8 %rs1, [%rd1]")));
    // One width, two classes: an `f32` and a `u32` volatile load of one
    // function are two forms, each counting only its own instructions.
    let ld = |class| Form {
        opcode: "ld",
        order: "volatile",
        scope: None,
        class,
        bits: 32,
    };
    assert!(ld('f').matches(&i("ld.volatile.global.f32 %f1, [%rd1]")));
    assert!(!ld('f').matches(&i("ld.volatile.global.u32 %r1, [%rd1]")));
    assert!(!ld('u').matches(&i("ld.volatile.global.f32 %f1, [%rd1]")));
}

/// `oxide_volatile_memory` writes and reads one `u32` through a pointer
/// twice each: the PTX keeps all four as `.volatile` at `-opt=0` and at
/// `-opt=3` (where plain ones would fold into one store), and PTX that
/// lost one is caught.
#[test]
fn the_pipeline_keeps_volatile_accesses_volatile() {
    let Some(v) = build("oxide_volatile_memory") else {
        return;
    };
    let f = ptx_forms::findings(&v.input()).unwrap();
    assert_eq!(ptx_forms::judge(&f), vec![]);
    assert_eq!(
        form_count(&f, "ld.volatile.u32", "round_trip"),
        (2, Some(2))
    );
    assert_eq!(
        form_count(&f, "st.volatile.u32", "round_trip"),
        (2, Some(2))
    );
    assert_eq!(o3_count(&f, "ld.volatile.u32"), 2, "{f:#?}");
    assert_eq!(o3_count(&f, "st.volatile.u32"), 2, "{f:#?}");
    // The same PTX with its volatile loads made plain fails at both levels.
    let plain = |ptx: &str| ptx.replace("ld.volatile.", "ld.");
    let (o0, o3) = (plain(&v.ptx_o0), plain(&v.ptx_o3));
    let mut input = v.input();
    input.ptx_o0 = &o0;
    input.ptx_o3 = &o3;
    let failures = ptx_forms::ptx_forms(&input);
    let messages: Vec<&str> = failures.iter().map(|x| x.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("-opt=0: `ld.volatile.u32` occurs 0 time(s) in round_trip")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("-opt=3: `ld.volatile.u32` occurs nowhere")),
        "{messages:?}"
    );
}

/// The two fixtures list the check in their manifests, and the compile-only
/// lane runs it.
#[test]
fn the_manifests_run_the_check_in_the_compile_only_lane() {
    if nvvm_emit::testing::libnvvm_or_skip("ptx-forms lane").is_none() {
        return;
    }
    let opts = Options {
        compile_only: true,
        require_libnvvm: true,
        ..Options::default()
    };
    if opts.sandbox.is_err() && std::env::var_os("REQUIRE_SANDBOX").is_none_or(|v| v != "1") {
        eprintln!("NOT RUN: no sandbox");
        return;
    }
    let dirs = [fixture("atomic_flag"), fixture("shared_reduction")];
    let report = gpu_harness::run::run_all(&dirs, &opts, 2, false);
    for f in &report.fixtures {
        let shape = f.stage("shape").unwrap();
        assert_eq!(shape.status, StageStatus::Ok, "{}: {shape:?}", f.name);
        assert!(shape.detail.contains("ptx-forms"), "{}: {shape:?}", f.name);
    }
}
