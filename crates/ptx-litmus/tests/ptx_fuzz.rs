//! Malformed litmus text never panics the checker: it gets a verdict or an
//! error. Inputs are the test fixtures with random edits (deleted spans,
//! inserted litmus tokens, swapped lines).

use proptest::prelude::*;
use ptx_litmus::{Options, check_text};

const SEEDS: &[&str] = &[
    include_str!("litmus/MP-rel-acq.litmus"),
    include_str!("litmus/CoWW-final.litmus"),
    include_str!("litmus/WW-cause-co.litmus"),
    include_str!("litmus/RMW-both-read-init.litmus"),
    include_str!("litmus/LB-ctrl.litmus"),
    include_str!("litmus/FenceSC-cross-cta.litmus"),
];

const TOKENS: &[&str] = &[
    "|",
    ";",
    ",",
    "{",
    "}",
    "(",
    ")",
    ":",
    "=",
    "==",
    "!=",
    "/\\",
    "\\/",
    "~",
    "\"",
    "\n",
    " ",
    "P0",
    "P7",
    "r0",
    "r99",
    "x",
    "LC00",
    "LC00:",
    "goto LC00",
    "beq r0, 0, LC00",
    "ld.weak",
    "st.relaxed.gpu",
    "atom.acq_rel.gpu.cas",
    "red.relaxed.sys.add",
    "fence.sc.cta",
    "bar.cta.sync 1, r0, 2",
    "bar.cta.arrive",
    "div r1, r0, r0",
    "@cta 0,gpu 0",
    "exists",
    "forall",
    "~exists",
    "-9223372036854775808",
    "0x",
    "99999999999999999999",
];

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, usize),
    SwapLines(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0usize..12).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(a, t)| Edit::Insert(a, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        match *e {
            Edit::Delete(at, n) if !chars.is_empty() => {
                let at = at % chars.len();
                let end = (at + n).min(chars.len());
                chars.drain(at..end);
            }
            Edit::Insert(at, t) => {
                let at = at % (chars.len() + 1);
                chars.splice(at..at, TOKENS[t].chars());
            }
            Edit::SwapLines(a, b) => {
                let s: String = chars.iter().collect();
                let mut lines: Vec<&str> = s.lines().collect();
                if !lines.is_empty() {
                    let (a, b) = (a % lines.len(), b % lines.len());
                    lines.swap(a, b);
                }
                chars = lines.join("\n").chars().collect();
            }
            Edit::Delete(..) => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn edited_tests_get_a_verdict_or_an_error(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec(edit(), 1..6),
        bound in 1u32..3,
    ) {
        let text = apply(SEEDS[seed], &edits);
        let options = Options { bound, ..Options::default() };
        match check_text(&text, &options) {
            Ok(o) => prop_assert!(o.consistent <= o.candidates),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
