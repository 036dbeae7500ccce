//! `cargo run -p codegen-compare --bin compare-nvrtc [-- --json] [--ptx-dir DIR] [FIXTURE...]`:
//! our PTX against NVRTC's for every kernel written twice (see the crate
//! docs); `--ptx-dir` also writes both compilers' PTX there
//! (`<fixture>.ours.ptx`, `<fixture>.nvrtc.ptx`) for reading side by side.
//! Exits 1 when a compile fails, after printing what it could.

use std::process::ExitCode;

use codegen_compare::{Compared, PAIRS, compare_keeping_ptx, render_table, workspace_root};

fn main() -> ExitCode {
    let mut json = false;
    let mut only = Vec::new();
    let mut ptx_dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--ptx-dir" => match args.next() {
                Some(dir) => ptx_dir = Some(std::path::PathBuf::from(dir)),
                None => {
                    eprintln!("compare-nvrtc: --ptx-dir needs a folder");
                    return ExitCode::FAILURE;
                }
            },
            "-h" | "--help" => {
                println!(
                    "usage: compare-nvrtc [--json] [--ptx-dir DIR] [FIXTURE...]\nfixtures: {}",
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
        match compare_keeping_ptx(&root, pair) {
            Ok(c) => {
                if let Some(dir) = &ptx_dir
                    && let Err(e) = write_ptx(&c, pair.fixture, dir)
                {
                    failed = true;
                    eprintln!("compare-nvrtc: {}: {e}", pair.fixture);
                }
                rows.push(c.row);
            }
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
        println!();
        print!("{}", codegen_compare::targets::render(&rows));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes both PTX texts of `fixture`'s comparison into `dir`.
fn write_ptx(c: &Compared, fixture: &str, dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(format!("{fixture}.ours.ptx")), &c.ours_ptx)?;
    std::fs::write(dir.join(format!("{fixture}.nvrtc.ptx")), &c.nvrtc_ptx)
}
