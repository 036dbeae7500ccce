//! The Dat3M PTX litmus suite (`shared/litmus/dat3m-ptx`, read in place) as
//! extra inputs: every test in the subset that `herd` reads must get Dat3M's
//! recorded verdict, except the ones listed below with the reason.

use std::path::PathBuf;

use memory_model::herd;
use memory_model::model::Model;

fn suite() -> Option<PathBuf> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The workspace sits beside `shared/`, both locally and in CI.
    let dir = here.join("../../../shared/litmus/dat3m-ptx");
    dir.join("PTXv6_0-expected.csv").exists().then_some(dir)
}

/// Tests in the subset whose verdict differs, with the limitation that explains it.
const KNOWN: &[(&str, &str)] = &[];

#[test]
fn dat3m_verdicts_in_the_subset() {
    let Some(dir) = suite() else {
        eprintln!("skipped: shared/litmus/dat3m-ptx is not beside the workspace");
        return;
    };
    let csv = std::fs::read_to_string(dir.join("PTXv6_0-expected.csv")).expect("readable CSV");
    let (mut agreed, mut refused, mut mismatched) = (Vec::new(), 0, Vec::new());
    for line in csv
        .lines()
        .filter(|l| !l.starts_with("//") && !l.trim().is_empty())
    {
        let Some((path, expected)) = line.split_once(',') else {
            continue;
        };
        let rel = path.trim_start_matches("litmus/PTX/");
        let Ok(text) = std::fs::read_to_string(dir.join(rel)) else {
            continue;
        };
        match herd::parse(&text) {
            Err(_) => refused += 1,
            Ok(litmus) => {
                let (pass, explored) = herd::verdict(&litmus, &Model::PTX);
                let expected = expected.trim() == "1";
                if pass == expected {
                    agreed.push(format!("{} ({explored} candidates)", litmus.name));
                } else if !KNOWN.iter().any(|(n, _)| *n == litmus.name) {
                    mismatched.push(format!(
                        "{}: model says {pass}, Dat3M {expected}",
                        litmus.name
                    ));
                }
            }
        }
    }
    eprintln!("agreed: {agreed:?}\nrefused (outside the subset): {refused}");
    assert!(mismatched.is_empty(), "verdicts differ: {mismatched:#?}");
    assert!(
        agreed.iter().any(|a| a.starts_with("MP-sys ")),
        "{agreed:?}"
    );
}
