//! Item 7: the PTX forms our pipeline emits, checked syntactically, and the
//! same checks failing on PTX that lacks the forms.

use memory_model::extract::fixtures::default_dir;
use memory_model::ptx_forms::{self, ACQUIRE_LOAD, BAR_SYNC, RELEASE_STORE};

#[test]
fn the_pipeline_emits_the_acquire_release_and_barrier_forms() {
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("ptx forms") else {
        return;
    };
    let reports = ptx_forms::reports(&default_dir(), nvvm);
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert!(r.holds, "{r}");
        assert!(r.statement.contains("syntactic"), "{r}");
    }
    let forms = &reports[0].details;
    for level in ["-opt=3", "-opt=0"] {
        assert!(
            forms.contains(&format!(
                "ok: {level}: `{ACQUIRE_LOAD}` occurs 2 time(s), in kernel__receive"
            )),
            "{forms:?}"
        );
        assert!(
            forms.contains(&format!(
                "ok: {level}: `{RELEASE_STORE}` occurs 1 time(s), in kernel__send"
            )),
            "{forms:?}"
        );
    }
    let barriers = &reports[1].details;
    assert!(
        barriers.contains(
            &"ok: -opt=0: 2 `bar.sync` instruction(s) (in shared_reduction) = 2 MIR call site(s)"
                .to_string()
        ),
        "{barriers:?}"
    );
}

#[test]
fn the_checks_fail_on_ptx_without_the_forms() {
    let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("ptx forms mutants") else {
        return;
    };
    let dir = default_dir();
    let flag = ptx_forms::compile(&dir, "atomic_flag", nvvm).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx_forms::forms_outcome(&flag.ptx_o3, &flag.ptx_o0).holds);
    // An acquire load weakened to relaxed, at one level only, is caught.
    let weak = flag.ptx_o0.replace(ACQUIRE_LOAD, "ld.relaxed.sys.u32");
    assert!(!ptx_forms::forms_outcome(&flag.ptx_o3, &weak).holds);
    let weak = flag.ptx_o3.replace(RELEASE_STORE, "st.relaxed.sys.u32");
    assert!(!ptx_forms::forms_outcome(&weak, &flag.ptx_o0).holds);

    let red = ptx_forms::compile(&dir, "shared_reduction", nvvm).unwrap_or_else(|e| panic!("{e}"));
    let ok = |calls, ir, o3: &str, o0: &str| {
        ptx_forms::barriers_outcome(calls, ir, Some(4), o3, o0).holds
    };
    assert!(ok(
        red.mir_barrier_calls,
        red.ir_barriers,
        &red.ptx_o3,
        &red.ptx_o0
    ));
    // One barrier dropped from the -opt=0 PTX.
    let at = red
        .ptx_o0
        .find(BAR_SYNC)
        .unwrap_or_else(|| panic!("no bar.sync"));
    let mut dropped = red.ptx_o0.clone();
    dropped.replace_range(at..at + BAR_SYNC.len(), "membar.cta");
    assert!(!ok(
        red.mir_barrier_calls,
        red.ir_barriers,
        &red.ptx_o3,
        &dropped
    ));
    // A lowering that lost a barrier.
    assert!(!ok(
        red.mir_barrier_calls,
        red.ir_barriers - 1,
        &red.ptx_o3,
        &red.ptx_o0
    ));
    // -opt=3 PTX with neither the static nor the unrolled count.
    assert!(!ok(
        red.mir_barrier_calls,
        red.ir_barriers,
        &dropped,
        &red.ptx_o0
    ));
}

#[test]
fn the_reader_splits_bodies_and_skips_declarations() {
    let ptx = "\
.version 8.8
.target sm_90
.global .align 4 .b8 g[8] = {1, 2};
.func  (.param .b32 func_retval0) f(
\t.param .b64 f_param_0
)
{
\t.reg .b32 %r<3>; // registers
$L__BB0_1:
\tld.acquire.sys.u32 %r1, [%rd1];
\t{ .param .b32 t; }
\t@%p1 bra $L__BB0_1;
\tret;
}
.visible .entry k()
{
\tbar.sync \t0;
}
";
    let insts = ptx_forms::instructions(ptx);
    let listed: Vec<(&str, &str)> = insts
        .iter()
        .map(|i| (i.function.as_str(), i.opcode()))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("f", "ld.acquire.sys.u32"),
            ("f", "bra"),
            ("f", "ret"),
            ("k", "bar.sync")
        ]
    );
    assert_eq!(insts[3].text, "bar.sync 0");
}

#[test]
fn the_cli_prints_the_ptx_checks_as_json() {
    if nvvm_emit::testing::libnvvm_or_skip("memory-model ptx").is_none() {
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memory-model"))
        .args(["ptx", "--json"])
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let names: Vec<&str> = doc["checks"]
        .as_array()
        .expect("a list of checks")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["ptx.atomic_flag_forms", "ptx.shared_reduction_barriers"]
    );
    assert_eq!(doc["failed"], 0);
}
