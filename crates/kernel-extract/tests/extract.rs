//! Extraction of the fixtures through mir-import (these tests run rustc).
//!
//! Each test asserts something that a wrong extraction would break, and the
//! outline and message-passing checks are each shown to fail on a mutated
//! program.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use kernel_extract::checks::{
    ATOMIC_FLAG_PAYLOAD, all_relaxed, mp_outcome, outline_outcome, theorem_outcome,
};
use kernel_extract::{ExtractError, Extraction, Launch, WarningKind, fixtures, outline};
use memory_model::lang::{Access, BarrierKind, Program, Space, Stmt, Ty};
use memory_model::litmus;
use memory_model::machine;

fn fixture(name: &str) -> &'static Extraction {
    static CACHE: OnceLock<Vec<(String, Extraction)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        fixtures::FIXTURES
            .iter()
            .map(|f| {
                let path = fixtures::default_dir().join(f).join("kernel.rs");
                let launch = fixtures::launch(f).expect("a known fixture");
                let x = kernel_extract::extract_file(&path, f, &launch)
                    .unwrap_or_else(|e| panic!("{f}: extraction failed: {e}"));
                (f.to_string(), x)
            })
            .collect()
    });
    &all.iter().find(|(n, _)| n == name).expect("a fixture").1
}

fn count(p: &Program, f: impl Fn(&Stmt) -> bool) -> usize {
    p.stmts.iter().filter(|s| f(s)).count()
}

#[test]
fn saxpy_keeps_its_float_accesses_and_abstracts_the_arithmetic() {
    let x = fixture("saxpy");
    let p = &x.program;
    assert_eq!(p.threads(), 128);
    let f32_loads = count(p, |s| {
        matches!(
            s,
            Stmt::Load {
                space: Space::Global,
                ty: Ty::F32,
                access: Access::Plain,
                ..
            }
        )
    });
    let f32_stores = count(p, |s| {
        matches!(
            s,
            Stmt::Store {
                space: Space::Global,
                ty: Ty::F32,
                access: Access::Plain,
                ..
            }
        )
    });
    assert_eq!((f32_loads, f32_stores), (2, 1), "{p}");
    assert_eq!(count(p, |s| matches!(s, Stmt::Barrier(_))), 0);
    // The two bounds checks hold for all 128 threads of block 0: folded.
    assert_eq!(count(p, |s| matches!(s, Stmt::If { .. })), 0, "{p}");
    assert_eq!(x.warnings.len(), 4, "{:#?}", x.warnings);
    for construct in ["f32 Mul", "f32 Add"] {
        assert!(
            x.warnings.iter().any(|w| w.construct == construct
                && w.function == "kernel::axpy"
                && w.kind == WarningKind::Value),
            "{construct}: {:#?}",
            x.warnings
        );
    }
    assert!(x.warnings.iter().any(|w| w.construct == "gpu::block_idx_x"));
}

#[test]
fn atomic_flag_keeps_its_orderings_and_warns_about_the_spin_loop() {
    let x = fixture("atomic_flag");
    let p = &x.program;
    let has = |want: Access, store: bool| {
        p.stmts.iter().any(|s| match s {
            Stmt::Store { access, .. } if store => *access == want,
            Stmt::Load { access, .. } if !store => *access == want,
            _ => false,
        })
    };
    assert!(
        has(Access::RELEASE, true) && has(Access::RELAXED, true),
        "{p}"
    );
    assert!(
        has(Access::ACQUIRE, false) && has(Access::RELAXED, false),
        "{p}"
    );
    assert_eq!(x.warnings.len(), 1, "{:#?}", x.warnings);
    let w = &x.warnings[0];
    assert_eq!(w.kind, WarningKind::ControlFlow);
    assert_eq!(
        (w.function.as_str(), w.block.as_str()),
        ("kernel::receive", "bb1")
    );
    assert!(w.construct.contains("loop"), "{w}");
    // data, flag and the three words of out are zero-initialized.
    assert_eq!(p.init.len(), 5);
}

#[test]
fn the_stride_loop_becomes_a_counted_loop_of_three() {
    let x = fixture("shared_reduction");
    let p = &x.program;
    let loops: Vec<u32> = p
        .stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::For { count, .. } => Some(*count),
            _ => None,
        })
        .collect();
    assert_eq!(loops, [3], "{p}");
    assert_eq!(
        count(p, |s| matches!(s, Stmt::Barrier(BarrierKind::Shared))),
        2,
        "one barrier before the loop, one in it"
    );
    assert!(
        x.notes
            .iter()
            .any(|n| n.contains("stride = 4, 2, 1 (3 iterations)")),
        "{:#?}",
        x.notes
    );
    assert_eq!(x.warnings.len(), 1, "{:#?}", x.warnings);
    assert_eq!(x.warnings[0].construct, "gpu::block_idx_x");
}

#[test]
fn the_extracted_reduction_has_the_verified_outline() {
    let x = fixture("shared_reduction");
    let o = outline_outcome(x);
    assert!(o.holds, "{:#?}", o.details);
    let c = outline::compare(&litmus::tree_reduction(8), &x.program);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.epilogue, ["T0: ld.u32 sh[0]"]);
    assert_eq!(
        c.structural.0,
        "st.u32 bar for3{ if{ ld.u32 ld.u32 st.u32 } bar }"
    );
    assert!(outline::reduction_rounds(&x.program).is_empty());
}

/// Replaces the first statement that `pick` selects.
fn mutate(p: &Program, pick: impl Fn(&Stmt) -> bool, by: Stmt) -> Program {
    let mut m = p.clone();
    let i = m
        .stmts
        .iter()
        .position(pick)
        .expect("a statement to mutate");
    m.stmts[i] = by;
    m
}

#[test]
fn a_mutated_outline_fails_the_check() {
    let x = fixture("shared_reduction");
    let verified = litmus::tree_reduction(8);
    // 1. The barrier before the rounds is dropped.
    let no_barrier = mutate(
        &x.program,
        |s| matches!(s, Stmt::Barrier(_)),
        Stmt::Seq(Vec::new()),
    );
    // 2. Two rounds instead of three.
    let two_rounds = mutate(
        &x.program,
        |s| matches!(s, Stmt::For { .. }),
        match x
            .program
            .stmts
            .iter()
            .find(|s| matches!(s, Stmt::For { .. }))
        {
            Some(Stmt::For { var, body, .. }) => Stmt::For {
                var: *var,
                count: 2,
                body: *body,
            },
            _ => unreachable!(),
        },
    );
    // 3. The round's store becomes a load: ld/ld/ld.
    let no_store = {
        let pick = |s: &Stmt| matches!(s, Stmt::Store { space: Space::Shared, val: e, .. } if !matches!(e, memory_model::lang::Expr::Bin(memory_model::lang::BinOp::Add, a, _) if **a == memory_model::lang::Expr::Tid));
        let dst = x
            .program
            .stmts
            .iter()
            .find_map(|s| match s {
                Stmt::Load { dst, .. } => Some(*dst),
                _ => None,
            })
            .expect("a load");
        let addr = match x.program.stmts.iter().find(|s| pick(s)) {
            Some(Stmt::Store { addr, .. }) => addr.clone(),
            _ => panic!("a round store"),
        };
        mutate(
            &x.program,
            pick,
            Stmt::Load {
                dst,
                space: Space::Shared,
                addr,
                ty: Ty::U32,
                access: Access::Plain,
            },
        )
    };
    for (what, program) in [
        ("no first barrier", no_barrier),
        ("two rounds", two_rounds),
        ("ld/ld/ld", no_store),
    ] {
        let c = outline::compare(&verified, &program);
        assert!(!c.problems.is_empty(), "{what}: the comparison must fail");
        let mutated = Extraction {
            program,
            ..x.clone()
        };
        let o = outline_outcome(&mutated);
        assert!(!o.holds, "{what}: the check must fail: {:#?}", o.details);
    }
}

#[test]
fn the_extracted_reduction_satisfies_the_reduction_theorem() {
    let o = theorem_outcome(fixture("shared_reduction"));
    assert!(o.holds, "{:#?}", o.details);
}

#[test]
fn message_passing_on_the_extracted_kernel_needs_its_orderings() {
    let x = fixture("atomic_flag");
    let o = mp_outcome(x);
    assert!(o.holds, "{:#?}", o.details);
    // The same check on the kernel with relaxed orderings must fail: the
    // reader then sees flag = 1 with a stale out[0].
    let weak = Extraction {
        program: all_relaxed(&x.program),
        ..x.clone()
    };
    let o = mp_outcome(&weak);
    assert!(!o.holds, "{:#?}", o.details);
    assert!(
        o.details
            .iter()
            .any(|d| d.starts_with("FAILED: flag = 1 implies out[0] = payload")),
        "{:#?}",
        o.details
    );
    assert_eq!(ATOMIC_FLAG_PAYLOAD, 305_419_896);
}

#[test]
fn an_unknown_kernel_is_a_typed_error() {
    let path = fixtures::default_dir().join("saxpy/kernel.rs");
    let launch = Launch::new(1, &[], &[]);
    match kernel_extract::extract_file(&path, "axpy", &launch) {
        Err(ExtractError::NoKernel { name, known }) => {
            assert_eq!(name, "axpy", "axpy is a helper, not a kernel");
            assert_eq!(known, ["kernel::saxpy"]);
        }
        other => panic!("expected NoKernel, got {other:?}"),
    }
    let missing = PathBuf::from("/nonexistent/kernel.rs");
    assert!(matches!(
        kernel_extract::extract_file(&missing, "k", &launch),
        Err(ExtractError::Import(_))
    ));
}

#[test]
fn an_out_of_bounds_block_target_is_a_typed_error() {
    use mir_import::model::TerminatorKind;
    let path = fixtures::default_dir().join("shared_reduction/kernel.rs");
    let mut krate = mir_import::import_file(&path, &mir_import::rustc::RustcOptions::default())
        .expect("imports");
    let launch = fixtures::launch("shared_reduction").expect("known");
    assert!(kernel_extract::extract_crate(&krate, "shared_reduction", &launch).is_ok());
    let id = krate
        .fn_body("kernel::reduce_round")
        .expect("the helper's body");
    let (_, block) = krate.bodies[id].blocks.iter_mut().next().expect("a block");
    block.terminator.kind = TerminatorKind::Goto(mir_import::model::BasicBlock::from_u32(99));
    match kernel_extract::extract_crate(&krate, "shared_reduction", &launch) {
        Err(ExtractError::Unsupported {
            function,
            block,
            message,
        }) => {
            assert_eq!(
                (function.as_str(), block.as_str()),
                ("kernel::reduce_round", "bb0")
            );
            assert!(message.contains("bb99"), "{message}");
        }
        other => panic!("expected a typed error, got {other:?}"),
    }
}

#[test]
fn extraction_is_deterministic() {
    let path = fixtures::default_dir().join("shared_reduction/kernel.rs");
    let launch = fixtures::launch("shared_reduction").expect("known");
    let a = kernel_extract::extract_file(&path, "shared_reduction", &launch).expect("extracts");
    assert_eq!(
        a.program.to_string(),
        fixture("shared_reduction").program.to_string()
    );
    assert_eq!(a.warnings, fixture("shared_reduction").warnings);
    assert_eq!(a.notes, fixture("shared_reduction").notes);
}

/// A kernel written for this test: a `for k in 0..4` range loop (through the
/// iterator's `AddWithOverflow` and `Option::Some`) and a `while` loop whose
/// bound is an argument.
const LOOPS: &str = r#"
use crate::gpu::*;

pub static BUF: SharedArray<u32, 16> = SharedArray::new();

#[unsafe(no_mangle)]
pub extern "C" fn loops(n: u32, out: DisjointSlice<u32>) {
    let t = thread_idx_x() as usize;
    for k in 0..4 {
        unsafe { BUF.write(t, k as u32 + 10) };
        sync_threads();
    }
    let mut i = 0;
    while i < n {
        i += 1;
    }
    if t < out.len() {
        out.set(t, i);
    }
}
"#;

/// Extracts a kernel written for a test, from a scratch directory.
fn extract_source(tag: &str, source: &str, name: &str, launch: &Launch) -> Extraction {
    let dir = std::env::temp_dir().join(format!("mm-extract-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("kernel.rs");
    std::fs::write(&path, source).expect("write kernel");
    let x = kernel_extract::extract_file(&path, name, launch);
    let _ = std::fs::remove_dir_all(&dir);
    x.unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_range_loop_is_counted_and_an_argument_bound_loop_is_a_warning() {
    let launch = Launch::new(4, &[("out", 4)], &[]);
    let x = extract_source("loops", LOOPS, "loops", &launch);
    let p = &x.program;
    let loops: Vec<u32> = p
        .stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::For { count, .. } => Some(*count),
            _ => None,
        })
        .collect();
    assert_eq!(loops, [4], "{p}");
    assert!(
        x.warnings.iter().any(|w| w.kind == WarningKind::ControlFlow
            && w.construct == "loop without a constant bound"),
        "{:#?}",
        x.warnings
    );
    // Each thread's last store is k + 10 for k = 3: the value read before
    // the iterator advanced, not after (the substitution hazard).
    let run = machine::run_canonical(p).expect("runs");
    for t in 0..4 {
        let v = run.exec.final_value(memory_model::lang::Loc {
            space: Space::Shared,
            addr: t,
        });
        assert_eq!(v, Some(13), "sh[{t}] in\n{p}");
    }
    let barriers = run
        .exec
        .events
        .iter()
        .filter(|e| matches!(e.action, memory_model::event::Action::Barrier { .. }))
        .count();
    assert_eq!(barriers, 16, "4 threads × 4 iterations");
}

/// A kernel with an array bounds check (`assert` in MIR) on the thread id.
const INDEX: &str = r#"
use crate::gpu::*;

pub static S: SharedArray<u32, 8> = SharedArray::new();

#[unsafe(no_mangle)]
pub extern "C" fn idx(out: DisjointSlice<u32>) {
    let t = thread_idx_x() as usize;
    let a = [5u32, 6, 7, 8];
    unsafe { S.write(t, a[t]) };
    sync_threads();
    if t < out.len() {
        out.set(t, unsafe { S.read(t) });
    }
}
"#;

#[test]
fn an_assert_is_folded_when_it_holds_for_every_thread_and_a_warning_otherwise() {
    let is_assert_warning = |w: &kernel_extract::Warning| {
        w.kind == WarningKind::ControlFlow && w.construct.starts_with("assert (index out of bounds")
    };
    // 4 threads: a[t] is in bounds for every thread.
    let x = extract_source("idx4", INDEX, "idx", &Launch::new(4, &[("out", 8)], &[]));
    assert!(
        !x.warnings.iter().any(is_assert_warning),
        "{:#?}",
        x.warnings
    );
    assert!(
        x.notes
            .iter()
            .any(|n| n.contains("assert (index out of bounds") && n.ends_with("folded"))
    );
    assert_eq!(
        count(&x.program, |s| matches!(s, Stmt::If { .. })),
        0,
        "{}",
        x.program
    );
    // 8 threads: threads 4..8 would panic; the rest of the kernel is guarded.
    let x = extract_source("idx8", INDEX, "idx", &Launch::new(8, &[("out", 8)], &[]));
    let w: Vec<_> = x.warnings.iter().filter(|w| is_assert_warning(w)).collect();
    assert_eq!(w.len(), 1, "{:#?}", x.warnings);
    assert_eq!(
        (w[0].function.as_str(), w[0].block.as_str()),
        ("kernel::idx", "bb1")
    );
    assert_eq!(
        count(&x.program, |s| matches!(s, Stmt::If { .. })),
        1,
        "{}",
        x.program
    );
    // The local array is not modelled: its value is a warning too.
    assert!(x.warnings.iter().any(|w| w.construct == "rvalue Aggregate"));
}

#[test]
fn the_cli_extract_subcommand_reports_every_check() {
    let out = Command::new(env!("CARGO_BIN_EXE_kernel-extract"))
        .args(["--json"])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let names: Vec<&str> = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "extract.saxpy",
            "extract.atomic_flag",
            "extract.atomic_flag_mp",
            "extract.shared_reduction",
            "extract.reduction_outline",
            "extract.reduction_theorem"
        ]
    );
    assert_eq!(doc["failed"], 0);
    let bad = Command::new(env!("CARGO_BIN_EXE_kernel-extract"))
        .args(["no_such_fixture"])
        .output()
        .expect("the binary runs");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stdout).contains("no launch is known"));
}

/// Each thread writes its slot of a shared array with `write_volatile` and
/// reads its neighbour's with `read_volatile`, with `BARRIER` between.
const VOLATILE: &str = r#"
use crate::gpu::*;

pub static S: SharedArray<u32, 8> = SharedArray::new();

#[unsafe(no_mangle)]
pub extern "C" fn handoff(out: DisjointSlice<u32>) {
    let t = thread_idx_x() as usize;
    let p = S.as_mut_ptr();
    unsafe { core::ptr::write_volatile(p.add(t), t as u32 + 1) };
    BARRIER
    let v = unsafe { core::ptr::read_volatile(p.add((t + 1) % 2)) };
    if t < out.len() {
        out.set(t, v);
    }
}
"#;

/// Volatile accesses are plain accesses of the model (Rust makes none of
/// them atomic): the neighbour's read races with its write unless a
/// barrier separates them, and with one each thread reads `neighbour + 1`.
#[test]
fn volatile_accesses_are_plain_accesses_that_can_race() {
    let launch = Launch::new(2, &[("out", 2)], &[]);
    let limits = memory_model::drf::Limits::default();
    let source = |barrier: &str| VOLATILE.replace("BARRIER", barrier);

    let x = extract_source("volatile-race", &source(""), "handoff", &launch);
    let p = &x.program;
    let plain_shared = |s: &Stmt, load: bool| match s {
        Stmt::Load {
            space: Space::Shared,
            access: Access::Plain,
            ..
        } => load,
        Stmt::Store {
            space: Space::Shared,
            access: Access::Plain,
            ..
        } => !load,
        _ => false,
    };
    assert_eq!(count(p, |s| plain_shared(s, true)), 1, "{p}");
    assert_eq!(count(p, |s| plain_shared(s, false)), 1, "{p}");
    assert!(
        !x.warnings.iter().any(|w| w.construct.contains("volatile")),
        "{:#?}",
        x.warnings
    );
    let report = memory_model::drf::explore(p, &limits).expect("explores");
    assert!(!report.race_free(), "{report}\n{p}");

    let x = extract_source(
        "volatile-synced",
        &source("sync_threads();"),
        "handoff",
        &launch,
    );
    let report = memory_model::drf::explore(&x.program, &limits).expect("explores");
    assert!(report.race_free(), "{report}\n{}", x.program);
    let outcomes = report.outcomes().expect("race-free");
    assert_eq!(outcomes.len(), 1, "{report}");
    let rendered =
        memory_model::drf::render_outcome(&x.program, outcomes.iter().next().expect("one outcome"));
    // `out` is the buffer's first word, `g[1]` its second.
    assert_eq!(rendered, "{out=2, g[1]=1}");
}
