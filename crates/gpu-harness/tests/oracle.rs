//! The oracle's verdicts: the compile-only lane passes; one failing,
//! panicking or hanging fixture never hides the others; races, traps,
//! panics and refusals each get their own verdict and detail. (That every
//! fixture passes is `suite.rs`, whose one local run of the whole suite the
//! service's comparison reads too.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use gpu_harness::pipeline::{Fault, Options};
use gpu_harness::report::{FailureKind, StageStatus, Verdict};
use gpu_harness::run::run_all;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    gpu_harness::fixture::Fixture::discover(&root).expect("fixtures")
}

fn opts() -> Options {
    Options {
        require_libnvvm: nvvm_emit::testing::libnvvm_required(),
        ..Options::default()
    }
}

#[test]
fn the_compile_only_lane_passes() {
    // One fixture of each kind the lane judges differently: a plain one, a
    // refused one, one with crates.io dependencies, one that races and one
    // that traps. Their compile stages are the ones the full run
    // (`suite.rs`) takes for every fixture.
    let kinds = [
        "saxpy",
        "error_shared_pointer_constant",
        "siphash_vectors",
        "race_same_slot",
        "oxide_device_panic_trap",
    ];
    let dirs: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|d| kinds.iter().any(|k| d.ends_with(k)))
        .collect();
    assert_eq!(dirs.len(), kinds.len(), "{dirs:?}");
    let o = Options {
        compile_only: true,
        ..opts()
    };
    let report = run_all(&dirs, &o, 2, false);
    assert!(report.all_passed(), "{}", report.table());
    for f in &report.fixtures {
        assert!(f.stage("host").is_none(), "{}: the lane ran it", f.name);
        assert!(f.stage("device").is_none(), "{}: the lane ran it", f.name);
        let last = f.stages.last().map(|s| s.name.as_str());
        assert_eq!(last, Some("shape"), "{}: {:?}", f.name, f.stages);
    }
}

/// A fixture whose kernel loops forever, written to a temporary folder.
fn looping_fixture(dir: &Path) -> PathBuf {
    let d = dir.join("loops_forever");
    std::fs::create_dir_all(&d).expect("dir");
    std::fs::write(
        d.join("kernel.rs"),
        "use crate::gpu::*;\n#[unsafe(no_mangle)]\npub extern \"C\" fn loops_forever(out: DisjointSlice<u32>) {\n    let mut i = 0u32;\n    while !out.is_empty() { i = i.wrapping_add(1); }\n    out.set(0, i);\n}\n",
    )
    .expect("kernel");
    std::fs::write(
        d.join("manifest.toml"),
        "timeout_s = 5\n[[buffer]]\nname = \"out\"\nty = \"u32\"\nlen = 1\nreadback = 1\n\n[[launch]]\nkernel = \"loops_forever\"\ngrid = [1, 1]\nblock = [1, 1]\nargs = [{ buffer = \"out\" }]\n",
    )
    .expect("manifest");
    d
}

#[test]
fn crashes_and_hangs_are_reported_and_the_rest_still_pass() {
    let tmp = std::env::temp_dir().join(format!("gpu-harness-isolation-{}", std::process::id()));
    let mut dirs: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|d| {
            d.ends_with("saxpy")
                || d.ends_with("shared_reduction")
                || d.ends_with("array_const_identity")
        })
        .collect();
    dirs.push(looping_fixture(&tmp));
    let mut o = opts();
    o.fault = Some(Fault::Panic("saxpy".into()));
    o.limits.max_steps = 2_000_000;
    let report = run_all(&dirs, &o, 2, false);
    let by = |n: &str| report.fixtures.iter().find(|f| f.name == n).expect(n);
    assert_eq!(by("saxpy").verdict, Verdict::Crash);
    assert!(
        by("saxpy").stages[0].detail.contains("panicked"),
        "{:?}",
        by("saxpy").stages
    );
    assert_eq!(by("saxpy").stages[0].kind, Some(FailureKind::Panic));
    let looping = by("loops_forever");
    assert_eq!(looping.verdict, Verdict::Fail, "{}", report.table());
    let dev = looping.stage("device").expect("device stage");
    assert!(
        dev.detail.to_lowercase().contains("step") || dev.detail.contains("timeout"),
        "{}",
        dev.detail
    );
    let host = looping.stage("host").expect("host stage");
    assert!(host.detail.contains("timed out"), "{}", host.detail);
    assert_eq!(host.kind, Some(FailureKind::HostTimeout));
    assert_eq!(by("shared_reduction").verdict, Verdict::Pass);
    assert_eq!(by("array_const_identity").verdict, Verdict::Pass);

    // A pipeline that never returns is reported once its deadline passes.
    let mut o = opts();
    o.fault = Some(Fault::Hang("shared_reduction".into()));
    o.fixture_timeout = Some(Duration::from_secs(20));
    let two: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| d.ends_with("shared_reduction") || d.ends_with("array_const_identity"))
        .cloned()
        .collect();
    let report = run_all(&two, &o, 2, false);
    let hung = report
        .fixtures
        .iter()
        .find(|f| f.name == "shared_reduction")
        .expect("hung");
    assert_eq!(hung.verdict, Verdict::Crash);
    assert_eq!(hung.stages[0].kind, Some(FailureKind::Hang));
    assert!(
        hung.stages[0].detail.contains("did not finish"),
        "{:?}",
        hung.stages
    );
    assert_eq!(
        report
            .fixtures
            .iter()
            .find(|f| f.name == "array_const_identity")
            .map(|f| f.verdict),
        Some(Verdict::Pass)
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn the_report_serializes_to_json_with_every_value() {
    let dirs: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|d| d.ends_with("shared_reduction"))
        .collect();
    let report = run_all(&dirs, &opts(), 1, false);
    let json: serde_json::Value = serde_json::to_value(&report).expect("json");
    let values = &json["fixtures"][0]["values"];
    // Four from the IR device, then the same four from the PTX device.
    assert_eq!(values.as_array().map(Vec::len), Some(8));
    assert_eq!(values[0]["expected"], "36");
    assert_eq!(values[0]["got"], "36");
    assert!(values[0].get("device").is_none(), "{}", values[0]);
    assert_eq!(values[4]["device"], "ptx");
    assert_eq!(values[4]["got"], "36");
}

/// A racy kernel whose manifest does not expect the race gets the verdict
/// `race`, with both accesses named by buffer and element, and no value is
/// compared; the same in every run.
#[test]
fn an_unexpected_race_is_its_own_verdict() {
    let tmp = std::env::temp_dir().join(format!("oracle-race-{}", std::process::id()));
    let dir = tmp.join("racy");
    std::fs::create_dir_all(&dir).expect("dir");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/race_same_slot");
    std::fs::copy(ours.join("kernel.rs"), dir.join("kernel.rs")).expect("kernel");
    let manifest = std::fs::read_to_string(ours.join("manifest.toml")).expect("manifest");
    std::fs::write(
        dir.join("manifest.toml"),
        manifest.replace("expect_race = true", ""),
    )
    .expect("manifest");
    let run = || run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let report = run();
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Race, "{}", report.table());
    let device = f.stage("device").expect("device");
    assert_eq!(device.status, StageStatus::Failed);
    assert!(device.detail.contains("data race"), "{}", device.detail);
    assert!(
        device.detail.contains("buffer `out`, element 0"),
        "{}",
        device.detail
    );
    assert!(f.values.is_empty());
    assert_eq!(
        f.stage("compare").map(|s| s.status),
        Some(StageStatus::Skipped)
    );
    assert!(!report.all_passed());
    let again = run();
    assert_eq!(
        again.fixtures[0].stage("device").expect("device").detail,
        device.detail
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A kernel the lowering refuses, without a manifest that expects it: the
/// lower stage fails as `lower-refused` and shows the line of `kernel.rs`
/// with a caret under the construct.
#[test]
fn a_refusal_points_at_the_kernel_line() {
    let tmp = std::env::temp_dir().join(format!("oracle-refusal-{}", std::process::id()));
    let dir = tmp.join("refused");
    std::fs::create_dir_all(&dir).expect("dir");
    let ours =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/error_shared_pointer_constant");
    std::fs::copy(ours.join("kernel.rs"), dir.join("kernel.rs")).expect("kernel");
    let manifest = std::fs::read_to_string(ours.join("manifest.toml")).expect("manifest");
    let manifest: String = manifest
        .lines()
        .filter(|l| !l.starts_with("expect_error"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("manifest.toml"), manifest).expect("manifest");
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let lower = report.fixtures[0].stage("lower").expect("lower").clone();
    let json = serde_json::to_value(&lower).expect("json");
    assert_eq!(lower.status, StageStatus::Failed, "{}", report.table());
    assert_eq!(json["kind"], "lower-refused");
    assert!(lower.detail.contains("kernel.rs:"), "{}", lower.detail);
    assert!(lower.detail.contains(" | "), "{}", lower.detail);
    assert!(lower.detail.contains('^'), "{}", lower.detail);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A race-free kernel whose manifest expects a race fails with the kind
/// `race-missing`, and its values are still compared.
#[test]
fn a_missing_expected_race_fails() {
    let tmp = std::env::temp_dir().join(format!("oracle-no-race-{}", std::process::id()));
    let dir = tmp.join("calm");
    std::fs::create_dir_all(&dir).expect("dir");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/saxpy");
    std::fs::copy(ours.join("kernel.rs"), dir.join("kernel.rs")).expect("kernel");
    let manifest = std::fs::read_to_string(ours.join("manifest.toml")).expect("manifest");
    std::fs::write(
        dir.join("manifest.toml"),
        format!("expect_race = true\n{manifest}"),
    )
    .expect("manifest");
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Fail, "{}", report.table());
    let race = serde_json::to_value(f.stage("race").expect("a race stage")).expect("json");
    assert_eq!(race["kind"], "race-missing");
    assert_eq!(f.stage("device").map(|s| s.status), Some(StageStatus::Ok));
    assert_eq!(f.stage("compare").map(|s| s.status), Some(StageStatus::Ok));
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A buffer too short for the `&[u32; 8]` parameter it is passed to stops
/// the host program with the buffer's name, where the host twin read past
/// the buffer's end before; the devices refuse the read too.
#[test]
fn a_buffer_too_short_for_a_reference_parameter_stops_the_host_by_name() {
    let (tmp, dir) = fixture_variant("rustgpu_const_fold_int", "short", &|m| {
        replaced_without_expected(
            m,
            "name = \"input_patterns\"\nty = \"u32\"\nlen = 8",
            "name = \"input_patterns\"\nty = \"u32\"\nlen = 4",
        )
    });
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let host = report.fixtures[0].stage("host").expect("a host stage");
    assert_eq!(host.status, StageStatus::Failed, "{}", report.table());
    assert!(
        host.detail
            .contains("buffer `input_patterns` holds no whole, aligned `[u32; 8]`"),
        "{}",
        host.detail
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A copy of fixture `name` in a folder of its own, its manifest changed
/// by `edit`: the scratch root to remove afterwards, and the fixture.
fn fixture_variant(name: &str, tag: &str, edit: &dyn Fn(&str) -> String) -> (PathBuf, PathBuf) {
    let tmp = std::env::temp_dir().join(format!("oracle-{tag}-{}", std::process::id()));
    let dir = tmp.join(tag);
    std::fs::create_dir_all(&dir).expect("dir");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::copy(ours.join("kernel.rs"), dir.join("kernel.rs")).expect("kernel");
    let manifest = std::fs::read_to_string(ours.join("manifest.toml")).expect("manifest");
    let edited = edit(&manifest);
    assert_ne!(edited, manifest, "{tag}: the edit changes the manifest");
    std::fs::write(dir.join("manifest.toml"), edited).expect("manifest");
    (tmp, dir)
}

/// Manifest `m` with `from` replaced by `to` (which must occur) and its
/// `[expected]` table dropped: the values a broken launch cannot give.
fn replaced_without_expected(m: &str, from: &str, to: &str) -> String {
    let edited = m.replace(from, to);
    assert_ne!(edited, m, "the manifest holds {from:?}");
    edited[..edited.find("[expected]").expect("an [expected] table")].to_string()
}

/// [`fixture_variant`] of `oxide_device_panic_trap`.
fn panic_trap_variant(tag: &str, edit: &dyn Fn(&str) -> String) -> (PathBuf, PathBuf) {
    fixture_variant("oxide_device_panic_trap", tag, edit)
}

/// The kernel's `panic!` in launch 1 is a panic on the host and a trap on
/// both CPU devices, in that launch; nothing is compared.
#[test]
fn an_expected_trap_passes_where_the_host_and_every_device_stop_in_one_launch() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/oxide_device_panic_trap");
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Pass, "{}", report.table());
    let detail = |s: &str| f.stage(s).map(|s| s.detail.clone()).unwrap_or_default();
    assert!(
        detail("host").contains("launch 1 (`scale_checked`) panicked")
            && detail("host").contains("input exceeds the supported range"),
        "{}",
        detail("host")
    );
    // Each names the device that trapped.
    for (stage, device) in [("device", "virtual device"), ("ptx-device", "PTX device")] {
        assert!(
            detail(stage).starts_with(&format!("{device}: launch 1 (`scale_checked`) trapped")),
            "{stage}: {}",
            detail(stage)
        );
    }
    assert_eq!(
        f.stage("compare").map(|s| s.status),
        Some(StageStatus::Skipped)
    );
    assert!(f.values.is_empty());
}

/// Without the launch that panics, a fixture expecting a trap fails on the
/// host and on both devices with `trap-missing`.
#[test]
fn a_missing_expected_trap_fails_everywhere() {
    let (tmp, dir) = panic_trap_variant("no-trap", &|m| {
        m[..m.rfind("[[launch]]").expect("a second launch")].to_string()
    });
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Fail, "{}", report.table());
    for stage in ["host", "device", "ptx-device"] {
        let s = serde_json::to_value(f.stage(stage).expect("a stage")).expect("json");
        assert_eq!(s["kind"], "trap-missing", "{stage}: {s}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A panic the manifest does not expect fails the host as `host-panic`,
/// naming the launch and the message, and the device as a fault.
#[test]
fn an_unexpected_panic_is_a_host_panic() {
    let (tmp, dir) = panic_trap_variant("unexpected-panic", &|m| {
        m.replace("expect_trap = true\n", "")
    });
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Fail, "{}", report.table());
    let host = f.stage("host").expect("a host stage");
    let json = serde_json::to_value(host).expect("json");
    assert_eq!(json["kind"], "host-panic", "{json}");
    assert!(
        host.detail.contains("launch 1 (`scale_checked`) panicked")
            && host.detail.contains("input exceeds the supported range"),
        "{}",
        host.detail
    );
    let device = serde_json::to_value(f.stage("device").expect("a device stage")).expect("json");
    assert_eq!(device["kind"], "device", "{device}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Every thread of the trapping launch panics: one of them speaks, the
/// rest wait for the program's end, and the report is the same each run.
#[test]
fn a_launch_where_every_thread_panics_stops_once_and_reports_alike() {
    let (tmp, dir) = panic_trap_variant("all-panic", &|m| {
        let at = m
            .find("name = \"inputs_out_of_range\"")
            .expect("the buffer");
        let (head, tail) = m.split_at(at);
        let end = tail.find("\n\n").expect("the buffer's end");
        format!(
            "{head}name = \"inputs_out_of_range\"\nty = \"u32\"\nlen = 1024\ninit = {{ fill = 1001 }}{}",
            &tail[end..]
        )
    });
    let run = || run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let (first, second) = (run(), run());
    let f = &first.fixtures[0];
    assert_eq!(f.verdict, Verdict::Pass, "{}", first.table());
    let host = |r: &gpu_harness::report::Report| {
        r.fixtures[0]
            .stage("host")
            .map(|s| s.detail.clone())
            .unwrap_or_default()
    };
    assert!(
        host(&first).contains("launch 1 (`scale_checked`) panicked"),
        "{}",
        host(&first)
    );
    assert_eq!(
        host(&first).matches("a kernel thread panicked").count(),
        1,
        "{}",
        host(&first)
    );
    assert_eq!(host(&first), host(&second));
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A `by_value` argument one byte short of its aggregate stops the host
/// program before the kernel runs (a launch error, not a kernel panic) and
/// every device before the launch, each naming the parameter's type and
/// both sizes.
#[test]
fn a_by_value_argument_of_the_wrong_size_is_refused_by_name() {
    let (tmp, dir) = fixture_variant("by_value_params", "by_value_short", &|m| {
        replaced_without_expected(
            m,
            "{ by_value = [{ u32 = 1000 }, { u16 = 2 }, { u8 = 0x40 }, { u8 = 0 }] }",
            "{ by_value = [{ u32 = 1000 }, { u16 = 2 }, { u8 = 0x40 }] }",
        )
    });
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Fail, "{}", report.table());
    let host = serde_json::to_value(f.stage("host").expect("a host stage")).expect("json");
    assert_eq!(host["kind"], "host-run", "{host}");
    let detail = host["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("`by_value` gives 7 bytes for a parameter of type `")
            && detail.contains("::kernel::Acc`, which has 8")
            && detail.matches("`by_value` gives").count() == 1,
        "{detail}"
    );
    for stage in ["device", "ptx-device"] {
        let s = f.stage(stage).expect("a device stage");
        assert_eq!(s.status, StageStatus::Failed, "{stage}");
        assert!(
            s.detail.contains(
                "kernel `mutated_params`, argument 0: parameter type `kernel::Acc` is an \
                 aggregate of 8 bytes passed by value; `by_value` gives 7 bytes"
            ),
            "{stage}: {}",
            s.detail
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Lanes of one mask at two different warp reductions (`reduce_min_sync`
/// on even lanes, `reduce_max_sync` on odd ones) execute two instructions,
/// which a GPU leaves undefined: the host twin stops with the message that
/// says so, naming both, and the virtual device faults; neither gives a
/// value.
#[test]
fn lanes_at_different_warp_reductions_stop_the_host_and_the_device() {
    let tmp = std::env::temp_dir().join(format!("oracle-mixed-redux-{}", std::process::id()));
    let dir = tmp.join("mixed_redux");
    std::fs::create_dir_all(&dir).expect("dir");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/oxide_redux_minmax");
    let kernel = std::fs::read_to_string(ours.join("kernel.rs")).expect("kernel");
    let from = "let umin = reduce_min_sync(FULL_MASK, v as u32);";
    assert!(kernel.contains(from), "the kernel holds {from:?}");
    let mixed = kernel.replace(
        from,
        "let umin = if lane % 2 == 0 { reduce_min_sync(FULL_MASK, v as u32) } else { reduce_max_sync(FULL_MASK, v as u32) };",
    );
    std::fs::write(dir.join("kernel.rs"), mixed).expect("kernel");
    std::fs::copy(ours.join("manifest.toml"), dir.join("manifest.toml")).expect("manifest");
    let report = run_all(std::slice::from_ref(&dir), &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Fail, "{}", report.table());
    let host = serde_json::to_value(f.stage("host").expect("a host stage")).expect("json");
    assert_eq!(host["kind"], "host-undefined", "{host}");
    let detail = host["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("launch 0 (`redux_minmax_signedness`) does what a GPU leaves undefined")
            && detail.contains("reduce_min_sync")
            && detail.contains("reduce_max_sync"),
        "{detail}"
    );
    let device = serde_json::to_value(f.stage("device").expect("a device stage")).expect("json");
    assert_eq!(device["kind"], "device", "{device}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A copy of `oxide_barrier` whose kernel has `from` replaced by `to`, its
/// `[expected]` table dropped and a host deadline of 60 s (the default is
/// 120): the scratch root to remove afterwards, and the fixture.
fn barrier_variant(tag: &str, from: &str, to: &str) -> (PathBuf, PathBuf) {
    let tmp = std::env::temp_dir().join(format!("oracle-{tag}-{}", std::process::id()));
    let dir = tmp.join(tag);
    std::fs::create_dir_all(&dir).expect("dir");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/oxide_barrier");
    let kernel = std::fs::read_to_string(ours.join("kernel.rs")).expect("kernel");
    assert!(kernel.contains(from), "the kernel holds {from:?}");
    std::fs::write(dir.join("kernel.rs"), kernel.replacen(from, to, 1)).expect("kernel");
    let manifest = std::fs::read_to_string(ours.join("manifest.toml")).expect("manifest");
    let launches = &manifest[..manifest.find("[expected]").expect("an [expected] table")];
    std::fs::write(
        dir.join("manifest.toml"),
        format!("timeout_s = 60\n{launches}"),
    )
    .expect("manifest");
    (tmp, dir)
}

/// The host twin's stage of a variant that must stop: failed, as what a
/// GPU leaves undefined (not at the deadline), as both devices do; its
/// detail.
fn undefined_host_detail(dir: &Path) -> String {
    let report = run_all(&[dir.to_path_buf()], &opts(), 1, false);
    let f = &report.fixtures[0];
    assert_eq!(f.verdict, Verdict::Fail, "{}", report.table());
    let host = serde_json::to_value(f.stage("host").expect("a host stage")).expect("json");
    assert_eq!(host["kind"], "host-undefined", "{host}");
    let detail = host["detail"].as_str().unwrap_or_default().to_owned();
    assert!(
        detail
            .contains("launch 0 (`barrier_sync_test`) does what a GPU leaves undefined: deadlock"),
        "{detail}"
    );
    for stage in ["device", "ptx-device"] {
        let s = f.stage(stage).expect("a device stage");
        assert!(s.detail.contains("deadlock"), "{stage}: {}", s.detail);
    }
    detail
}

/// Thread 0 returns before the block's first barrier, which the others
/// then wait at forever (the devices report the barrier as a deadlock):
/// the host twin says so at once, instead of hanging until its deadline.
#[test]
fn a_barrier_after_a_thread_has_returned_stops_the_host_at_once() {
    let (tmp, dir) = barrier_variant(
        "early-return-barrier",
        "if tid == 0 {}",
        "if tid == 0 { return; }",
    );
    let detail = undefined_host_detail(&dir);
    assert!(
        detail.contains("can never complete") && detail.contains("exited"),
        "{detail}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Lane 0 waits at the block barrier while the rest of its warp waits for
/// it at `sync_warp`: every thread waits and none can go on.
#[test]
fn a_warp_collective_waiting_on_a_lane_at_the_barrier_stops_the_host_at_once() {
    let (tmp, dir) = barrier_variant(
        "collective-barrier",
        "BAR.wait();",
        "if tid == 0 { BAR.wait(); } else if tid < 32 { sync_warp(FULL_MASK); } else { BAR.wait(); }",
    );
    let detail = undefined_host_detail(&dir);
    assert!(
        detail.contains(
            "every thread of the block that has not exited waits, 225 at the block barrier \
             and 31 at warp collectives (sync_warp)"
        ),
        "{detail}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Lane 0 reads `active_mask` while the rest of the block goes on to the
/// barrier. On a GPU `activemask` does not wait; the host simulation (like
/// the CPU devices) gathers the warp's live lanes for it, so this is a
/// deadlock of the simulation, and the message says so.
#[test]
fn active_mask_beside_a_barrier_is_named_as_the_simulation_s_deadlock() {
    let (tmp, dir) = barrier_variant(
        "active-mask-barrier",
        "if tid == 0 {}",
        "if tid == 0 && active_mask() == 0 { return; }",
    );
    let detail = undefined_host_detail(&dir);
    assert!(
        detail.contains("(active_mask)")
            && detail.contains("`active_mask` waits for its warp's live lanes in this simulation"),
        "{detail}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
