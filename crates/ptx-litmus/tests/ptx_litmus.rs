//! The full PTX litmus checker (`ptx_litmus`): agreement with Dat3M's
//! recorded verdicts on its 135-test corpus, one test per axiom that only
//! that axiom rejects, positioned errors, and the candidate counts.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use ptx_litmus::corpus::{self, FileResult};
use ptx_litmus::expect::Expected;
use ptx_litmus::parse::{ErrorKind, parse};
use ptx_litmus::{Axiom, Axioms, Options, Outcome, Verdict, check_text, search};

/// The corpus, read in place from `shared/` beside the workspace.
fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus/dat3m-ptx");
    if dir.join("PTXv6_0-expected.csv").exists() {
        return Some(dir);
    }
    let message = format!(
        "the Dat3M PTX corpus is not at {}: the 135-test agreement check did NOT run",
        dir.display()
    );
    assert!(
        std::env::var_os("REQUIRE_LITMUS_CORPUS").is_none(),
        "{message} (REQUIRE_LITMUS_CORPUS is set)"
    );
    // Straight to the process's stderr, past the harness's capture.
    let _ = writeln!(std::io::stderr(), "NOT RUN: {message}");
    None
}

/// Tests the checker cannot support, by name, with the reason. Empty: all 135 are supported.
const UNSUPPORTED: &[(&str, &str)] = &[];

#[test]
fn agrees_with_every_recorded_dat3m_verdict() {
    let Some(dir) = corpus_dir() else { return };
    let csv = std::fs::read_to_string(dir.join("PTXv6_0-expected.csv")).expect("readable CSV");
    let expected = Expected::parse(&csv).expect("well-formed CSV");
    assert_eq!(expected.verdicts.len(), 135, "the CSV lists 135 tests");
    let files: Vec<PathBuf> = expected.verdicts.keys().map(|k| dir.join(k)).collect();
    let results = corpus::run(&files, &Options::default(), Some(&expected));
    let mut failures = Vec::new();
    let mut supported = 0;
    for r in &results {
        let name = r.path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let listed = UNSUPPORTED.iter().any(|(n, _)| Some(*n) == name.as_deref());
        match &r.outcome {
            Err(e) if !listed => failures.push(format!("{}: {e}", r.path.display())),
            Err(_) => {}
            Ok(_) if r.disagrees() => failures.push(describe(r)),
            Ok(_) => supported += 1,
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(supported >= 125, "only {supported} tests supported");
    assert_eq!(supported + UNSUPPORTED.len(), 135);
    // Both recorded values occur, and both are reproduced.
    let passes = results
        .iter()
        .filter(|r| r.outcome.as_ref().is_ok_and(|o| o.verdict.dat3m_pass()))
        .count();
    assert!(passes > 0 && passes < 135, "{passes}");
}

fn describe(r: &FileResult) -> String {
    match &r.outcome {
        Ok(o) => format!(
            "{}: checker says {} (PASS={}), Dat3M records {:?}",
            r.path.display(),
            o.verdict,
            u8::from(o.verdict.dat3m_pass()),
            r.expected.map(u8::from)
        ),
        Err(e) => format!("{}: {e}", r.path.display()),
    }
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/litmus")
        .join(format!("{name}.litmus"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run(name: &str, axioms: Axioms) -> Outcome {
    check_text(&fixture(name), &Options { bound: 1, axioms })
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The full model forbids the outcome; without `axiom` it is allowed, and the
/// witness then breaks `axiom` and nothing else.
fn rejected_by_alone(name: &str, axiom: Axiom) {
    let full = run(name, Axioms::all());
    assert_eq!(full.verdict, Verdict::Forbidden, "{}", full.explain());
    let closest = full
        .closest
        .as_ref()
        .expect("a candidate reaches the outcome");
    assert!(!closest.violations.is_empty());
    let without = run(name, Axioms::all().without(axiom));
    assert_eq!(without.verdict, Verdict::Allowed, "{}", without.explain());
    let witness = without.witness.as_ref().expect("a witness");
    assert_eq!(witness.breaks_dropped, vec![axiom], "{}", without.explain());
    assert!(witness.violations.is_empty());
}

#[test]
fn message_passing_with_release_acquire_is_rejected_by_causality_alone() {
    rejected_by_alone("MP-rel-acq", Axiom::Causality);
}

#[test]
fn cause_between_stores_must_be_in_co_coherence_alone() {
    rejected_by_alone("WW-cause-co", Axiom::Coherence);
}

#[test]
fn cta_fences_in_different_ctas_under_fence_sc_alone() {
    rejected_by_alone("FenceSC-cross-cta", Axiom::FenceSc);
}

#[test]
fn two_rmws_reading_the_initial_value_break_atomicity_alone() {
    rejected_by_alone("RMW-both-read-init", Axiom::Atomicity);
}

#[test]
fn load_buffering_with_control_dependencies_breaks_no_thin_air_alone() {
    rejected_by_alone("LB-ctrl", Axiom::NoThinAir);
}

#[test]
fn coherence_against_program_order_breaks_sc_per_location_alone() {
    rejected_by_alone("CoWW-final", Axiom::ScPerLocation);
}

#[test]
fn strong_corr_is_rejected_by_sc_per_location_and_by_causality() {
    // CoRR with relaxed accesses: `observation; po-loc` is in `cause`, so
    // Causality rejects it as well as SC-per-Location; dropping either alone
    // does not flip it, dropping both does.
    let text = "PTX CoRR-strong\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
                st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;\n | ld.relaxed.gpu r1, x ;\n\
                exists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    let with = |axioms| check_text(text, &Options { bound: 1, axioms }).expect("checks");
    assert_eq!(with(Axioms::all()).verdict, Verdict::Forbidden);
    for axiom in [Axiom::ScPerLocation, Axiom::Causality] {
        assert_eq!(
            with(Axioms::all().without(axiom)).verdict,
            Verdict::Forbidden
        );
    }
    let both = Axioms::all()
        .without(Axiom::ScPerLocation)
        .without(Axiom::Causality);
    assert_eq!(with(both).verdict, Verdict::Allowed);
}

#[test]
fn coherence_is_any_partial_order_and_candidates_are_counted() {
    // Two same-location stores and no reads: the candidates are the three
    // partial orders on them (unordered, one way, the other); only po order
    // is consistent.
    let o = run("CoWW-final", Axioms::all());
    assert_eq!((o.candidates, o.consistent), (3, 1), "{}", o.explain());
    // Two reads of a location with two values, two paths each: four candidates.
    let o = run("MP-rel-acq", Axioms::all());
    assert_eq!((o.candidates, o.consistent), (4, 3), "{}", o.explain());
}

#[test]
fn an_allowed_outcome_prints_a_witness_with_its_relations() {
    let o = run("MP-rel-acq", Axioms::all().without(Axiom::Causality));
    let text = o.explain();
    for needle in ["witness", "rf ", "fr ", "sync ", "cause ", "P1:r1=0"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let forbidden = run("MP-rel-acq", Axioms::all()).explain();
    assert!(forbidden.contains("rejected by Causality"), "{forbidden}");
}

#[test]
fn loops_are_bounded_and_cut_paths_are_reported() {
    let text = "PTX spin\n{ flag=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
                st.release.gpu flag, 1 | LC00: ;\n | ld.acquire.gpu r0, flag ;\n \
                | beq r0, 0, LC00 ;\nforall (P1:r0 == 1)\n";
    let one = check_text(text, &Options::default()).expect("checks");
    assert_eq!(one.verdict, Verdict::Holds);
    assert_eq!(one.cut_paths, 1, "the first read of 0 loops and is cut");
    let two = check_text(
        text,
        &Options {
            bound: 2,
            ..Options::default()
        },
    )
    .expect("checks");
    assert_eq!(two.verdict, Verdict::Holds);
    assert!(two.candidates > one.candidates);
}

#[test]
fn a_blocked_barrier_leaves_no_terminating_execution() {
    // Quorum 3 with two threads: nobody passes; `exists` finds nothing even
    // though the registers would keep their initial values.
    let text = "PTX hang\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
                bar.cta.sync 1, 1, 3 | bar.cta.sync 1, 1, 3 ;\n | ld.weak r0, x ;\n\
                exists (P1:r0 == 0)\n";
    let o = check_text(text, &Options::default()).expect("checks");
    assert_eq!(o.verdict, Verdict::Forbidden);
    assert_eq!((o.candidates, o.blocked), (0, 1));
}

#[test]
fn unsupported_constructs_are_refused_with_their_position() {
    let base = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n";
    for (row, line, col, what) in [
        (" fence.proxy.alias ;", 4, 2, "proxy fences"),
        (" tld.weak r0, x ;", 4, 2, "proxies"),
        (" ld.volatile r0, x ;", 4, 2, "memory order .volatile"),
        (" bar.sync 0 ;", 4, 2, "only bar.cta.sync"),
        (" atom.sc.gpu.add r0, x, 1 ;", 4, 2, "atom .sc"),
        (" st.relaxed.cluster x, 1 ;", 4, 2, "scope .cluster"),
        (" mov r0, 1 ;", 4, 2, "instruction `mov`"),
    ] {
        let text = format!("{base}{row}\nexists (x == 0)\n");
        let err = parse(&text).expect_err(row);
        assert_eq!(err.kind, ErrorKind::Unsupported, "{row}: {err}");
        assert_eq!((err.pos.line, err.pos.col), (line, col), "{row}: {err}");
        assert!(err.to_string().contains(what), "{row}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("{line}:{col}: unsupported: "))
        );
    }
    let pointer =
        parse("PTX t\n{ x=0; P0:r1=&x; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == 0)\n")
            .expect_err("pointer init");
    assert_eq!(
        (pointer.kind, pointer.pos.line, pointer.pos.col),
        (ErrorKind::Unsupported, 2, 8)
    );
    let locations = parse(
        "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nlocations [x;]\nexists (x == 0)\n",
    )
    .expect_err("locations");
    assert_eq!(
        (locations.kind, locations.pos.line),
        (ErrorKind::Unsupported, 5)
    );
}

#[test]
fn malformed_tests_are_syntax_errors_with_their_position() {
    for (text, line, what) in [
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == 0)\n",
            4,
            "columns",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n goto LC07 ;\nexists (x == 0)\n",
            4,
            "no label LC07",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak.gpu r0, x ;\nexists (x == 0)\n",
            4,
            "weak access has no scope",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (P3:r0 == 0)\n",
            5,
            "P3",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == 0\n",
            5,
            "expected `)`",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n",
            4,
            "no final condition",
        ),
        ("X86 t\n{ x=0; }\n", 1, "PTX"),
    ] {
        let err = parse(text).expect_err(text);
        assert_eq!(err.kind, ErrorKind::Syntax, "{err}");
        assert_eq!(err.pos.line, line, "{err}");
        assert!(err.to_string().contains(what), "{err}");
    }
}

#[test]
fn division_by_zero_is_an_error_not_a_verdict() {
    let text = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n div r1, 1, r0 ;\nexists (P0:r1 == 0)\n";
    let err = check_text(text, &Options::default()).expect_err("0 / 0");
    assert!(
        err.to_string().contains("division by zero") && err.to_string().starts_with("5:2"),
        "{err}"
    );
}

#[test]
fn conditions_read_final_memory_from_any_co_maximal_store() {
    // Unordered weak stores from two threads: either can be last.
    let text =
        "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | st.weak x, 2 ;\n";
    for (cond, verdict) in [
        ("exists (x == 1)", Verdict::Allowed),
        ("exists (x == 2)", Verdict::Allowed),
        ("exists (x == 0)", Verdict::Forbidden),
        ("forall (x == 1 \\/ x == 2)", Verdict::Holds),
        ("~exists (x == 2)", Verdict::Fails),
    ] {
        let o = check_text(&format!("{text}{cond}\n"), &Options::default()).expect(cond);
        assert_eq!(o.verdict, verdict, "{cond}\n{}", o.explain());
    }
}

#[test]
fn checking_is_deterministic() {
    let a = run("RMW-both-read-init", Axioms::all());
    let b = run("RMW-both-read-init", Axioms::all());
    assert_eq!(
        (a.candidates, a.consistent, a.closest.map(|w| w.to_string())),
        (b.candidates, b.consistent, b.closest.map(|w| w.to_string()))
    );
}

#[test]
fn too_many_writes_to_one_location_is_refused_not_approximated() {
    let stores: String = (1..=6).map(|v| format!(" st.weak x, {v} ;\n")).collect();
    let text = format!("PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{stores}exists (x == 0)\n");
    let err =
        search::check(&parse(&text).expect("parses"), &Options::default()).expect_err("6 writes");
    assert!(
        err.to_string().starts_with("unsupported: 6 writes to `x`"),
        "{err}"
    );
}

#[test]
fn rmw_semantics_follow_dat3m() {
    // `exch` stores its operand: the store does not depend on the read, so
    // this load buffering through an exchange is not thin air.
    let exch = "PTX exch\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
                atom.relaxed.gpu.exch r0, x, 1 | ld.weak r1, x ;\n | st.weak x, r1 ;\n\
                exists (P0:r0 == 1 /\\ P1:r1 == 1)\n";
    let o = check_text(exch, &Options::default()).expect("checks");
    assert_eq!(o.verdict, Verdict::Allowed, "{}", o.explain());
    // `cas` loads into its destination first, so an operand naming it sees
    // the old value: `cas r0, x, r0, 2` always succeeds.
    let cas = "PTX cas\n{ x=1; P0:r0=0; }\n P0@cta 0,gpu 0 ;\n atom.relaxed.gpu.cas r0, x, r0, 2 ;\n\
               forall (x == 2)\n";
    let o = check_text(cas, &Options::default()).expect("checks");
    assert_eq!(o.verdict, Verdict::Holds, "{}", o.explain());
    // Integer division is Euclidean, as in Dat3M's SMT integers.
    let div = "PTX div\n{ x=-7; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n div r1, r0, 2 ;\n\
               forall (P0:r1 == -4)\n";
    let o = check_text(div, &Options::default()).expect("checks");
    assert_eq!(o.verdict, Verdict::Holds, "{}", o.explain());
}

#[test]
fn forms_dat3m_reads_differently_are_refused() {
    for (text, what) in [
        // Column i is thread P<i> in Dat3M.
        (
            "PTX t\n{ x=0; }\n P1@cta 0,gpu 0 | P0@cta 0,gpu 0 ;\n ld r0, 1 | ld r0, 2 ;\nexists (P0:r0 == 1)\n",
            "in order",
        ),
        // A location on the right of a comparison is its address in Dat3M.
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (0 == x)\n",
            "right of a comparison",
        ),
        // Names are text in Dat3M: `r01` is not `r1`.
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r01, x ;\nexists (x == 0)\n",
            "not a register",
        ),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n bar.cta.sync 01 ;\nexists (x == 0)\n",
            "plain number",
        ),
        // A store without a memory order.
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st x, 1 ;\nexists (x == 0)\n",
            "memory order",
        ),
    ] {
        let err = parse(text).expect_err(text);
        assert!(err.to_string().contains(what), "{err}");
    }
    // Labels keep their digits: LC01 and LC1 are two labels.
    let labels = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n goto LC1 ;\n LC01: ;\nexists (x == 0)\n";
    assert!(
        parse(labels)
            .expect_err("LC1 undefined")
            .to_string()
            .contains("no label LC1")
    );
}

#[test]
fn errors_are_typed_values_with_their_causes() {
    use ptx_litmus::error::chain;
    use ptx_litmus::{CheckError, NoVerdict};
    let text = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.volatile x, 1 ;\nexists (x == 1)\n";
    match check_text(text, &Options::default()) {
        Err(NoVerdict::Error(CheckError::Parse(p))) => {
            assert_eq!(
                (p.pos.line, p.pos.col, p.kind),
                (4, 2, ErrorKind::Unsupported)
            );
        }
        other => panic!("a positioned parse error, not {other:?}"),
    }
    let missing = PathBuf::from("/nonexistent/no-such.litmus");
    let results = corpus::run(std::slice::from_ref(&missing), &Options::default(), None);
    let Err(NoVerdict::Error(e @ CheckError::Read { path, .. })) = &results[0].outcome else {
        panic!("a read error, not {:?}", results[0].outcome);
    };
    assert_eq!(path, &missing);
    assert!(
        std::error::Error::source(e).is_some(),
        "the io::Error is the source"
    );
    assert!(chain(e).starts_with("cannot read: "), "{}", chain(e));
}
