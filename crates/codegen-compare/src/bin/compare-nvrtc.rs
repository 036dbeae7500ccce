//! `cargo run -p codegen-compare --bin compare-nvrtc [-- --json] [FIXTURE...]`:
//! our PTX against NVRTC's for every kernel written twice (see the crate
//! docs). Exits 1 when a compile fails, after printing what it could.

use std::process::ExitCode;

use codegen_compare::{PAIRS, compare, render_table, workspace_root};

fn main() -> ExitCode {
    let mut json = false;
    let mut only = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--json" => json = true,
            "-h" | "--help" => {
                println!(
                    "usage: compare-nvrtc [--json] [FIXTURE...]\nfixtures: {}",
                    PAIRS.map(|p| p.fixture).join(", ")
                );
                return ExitCode::SUCCESS;
            }
            name => only.push(name.to_owned()),
        }
    }
    let root = workspace_root();
    let mut rows = Vec::new();
    let mut failed = false;
    for pair in PAIRS
        .iter()
        .filter(|p| only.is_empty() || only.iter().any(|o| o == p.fixture))
    {
        match compare(&root, pair) {
            Ok(row) => rows.push(row),
            Err(e) => {
                failed = true;
                eprintln!("compare-nvrtc: {}: {e}", pair.fixture);
            }
        }
    }
    if json {
        match serde_json::to_string_pretty(&rows) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("compare-nvrtc: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", render_table(&rows));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
