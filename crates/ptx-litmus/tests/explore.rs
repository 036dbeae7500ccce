//! The operational explorer (`explore`) against the complete candidate
//! search (`search`) on Dat3M's PTX corpus: wherever the explorer has a
//! verdict, it is the search's, except where the search's witness needs a
//! `po | rf` cycle (load buffering), which the explorer does not build.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use ptx_litmus::error::Limit;
use ptx_litmus::expect::Expected;
use ptx_litmus::explore::outcomes_within;
use ptx_litmus::report::Witness;
use ptx_litmus::{CheckError, Deadline, NoVerdict, Options, Verdict, check_text, parse};

fn corpus() -> Option<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus/dat3m-ptx");
    if !dir.join("PTXv6_0-expected.csv").exists() {
        assert!(
            std::env::var_os("REQUIRE_LITMUS_CORPUS").is_none(),
            "the Dat3M corpus is missing and REQUIRE_LITMUS_CORPUS is set"
        );
        let _ = writeln!(
            std::io::stderr(),
            "NOT RUN: the Dat3M PTX corpus is not at {}",
            dir.display()
        );
        return None;
    }
    let csv = std::fs::read_to_string(dir.join("PTXv6_0-expected.csv")).expect("readable CSV");
    let expected = Expected::parse(&csv).expect("well-formed CSV");
    Some(expected.verdicts.keys().map(|k| dir.join(k)).collect())
}

/// Whether the witness's `po | rf` has a cycle: events of one thread are in
/// program order by index.
fn porf_cyclic(w: &Witness) -> bool {
    let n = w.events.len();
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (i, a) in w.events.iter().enumerate() {
        for (j, b) in w.events.iter().enumerate().skip(i + 1) {
            if a.thread == b.thread && a.thread != "init" {
                edges[i].insert(j);
            }
        }
    }
    for (name, pairs) in &w.relations {
        if name == "rf" {
            for &(a, b) in pairs {
                edges[a].insert(b);
            }
        }
    }
    // Depth-first search for a back edge.
    let mut state = vec![0u8; n];
    fn visit(v: usize, edges: &[BTreeSet<usize>], state: &mut [u8]) -> bool {
        state[v] = 1;
        for &u in &edges[v] {
            if state[u] == 1 || (state[u] == 0 && visit(u, edges, state)) {
                return true;
            }
        }
        state[v] = 2;
        false
    }
    (0..n).any(|v| state[v] == 0 && visit(v, &edges, &mut state))
}

#[test]
fn explorer_agrees_with_the_complete_search_on_the_corpus() {
    let Some(files) = corpus() else { return };
    assert_eq!(files.len(), 135);
    let (mut agree, mut refused, mut load_buffering) = (0, Vec::new(), Vec::new());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable test");
        let test = parse::parse(&text).expect("the corpus parses");
        let name = path
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        let explored = match outcomes_within(&test, &Options::default(), None, &Deadline::none()) {
            Ok(e) => e,
            Err(NoVerdict::Error(CheckError::Limit(Limit::Exploration { what }))) => {
                refused.push(format!("{name}: {what}"));
                continue;
            }
            Err(e) => panic!("{name}: {e:?}"),
        };
        let complete = check_text(&text, &Options::default()).expect("a verdict");
        let mine = explored.verdict(test.quantifier);
        if mine == complete.verdict {
            agree += 1;
            continue;
        }
        // The only allowed difference: the search reaches the target with
        // a witness whose `po | rf` is cyclic.
        let witness = complete.witness.as_ref();
        let reachable = matches!(complete.verdict, Verdict::Allowed | Verdict::Fails);
        if reachable && explored.reaching == 0 && witness.is_some_and(porf_cyclic) {
            load_buffering.push(name);
        } else {
            failures.push(format!(
                "{name}: explorer {mine}, search {}",
                complete.verdict
            ));
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "explore vs search: {agree} agree, {} load buffering, {} refused: {refused:?}; lb: {load_buffering:?}",
        load_buffering.len(),
        refused.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    // Pinned, so that a change in either engine shows here.
    assert_eq!(
        load_buffering,
        [
            "LB+RMW-a.litmus",
            "LB-dlb-no-fence-1.litmus",
            "LB-dlb-no-fence-2.litmus",
            "MICRO24-Fig4b.litmus",
            "SL-future-minus.litmus"
        ]
    );
    assert_eq!(refused.len(), 10, "{refused:?}");
    assert_eq!(agree, 120);
}
