//! Snapshots of what a reader sees: the `--explain` text of three tests (a
//! forbidden outcome with its closest candidate, the same test with the axiom
//! dropped and its witness, and a No-Thin-Air case), and a rendered reading
//! error with its position. The time is zeroed, so that the text is stable.

use std::path::Path;

use ptx_litmus::error::chain;
use ptx_litmus::{Axiom, Axioms, Options, check_text};

fn explain(name: &str, axioms: Axioms) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/litmus")
        .join(format!("{name}.litmus"));
    let text = std::fs::read_to_string(&path).expect("a test fixture");
    let mut o = check_text(&text, &Options { bound: 1, axioms }).expect("checks");
    o.millis = 0.0;
    o.explain()
}

#[test]
fn explain_mp_rel_acq_forbidden() {
    insta::assert_snapshot!(explain("MP-rel-acq", Axioms::all()));
}

#[test]
fn explain_mp_rel_acq_without_causality() {
    insta::assert_snapshot!(explain(
        "MP-rel-acq",
        Axioms::all().without(Axiom::Causality)
    ));
}

#[test]
fn explain_lb_ctrl_forbidden() {
    insta::assert_snapshot!(explain("LB-ctrl", Axioms::all()));
}

#[test]
fn a_reading_error_keeps_its_position() {
    let text = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.volatile x, 1 ;\nexists (x == 1)\n";
    let err = check_text(text, &Options::default()).expect_err("unsupported");
    insta::assert_snapshot!(chain(&err));
}
