//! `cargo run -p codegen-compare --bin compare-nvrtc [-- --json] [--ptx-dir DIR] [FIXTURE...]`:
//! our PTX against NVRTC's for every kernel written twice (see the crate
//! docs); `--ptx-dir` also writes both compilers' PTX there
//! (`<fixture>.ours.ptx`, `<fixture>.nvrtc.ptx`) for reading side by side.
//! Exits 1 when a compile fails, after printing what it could.

use std::process::ExitCode;

use codegen_compare::{PAIRS, compare, render_table, workspace_root};

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
        if let Some(dir) = &ptx_dir
            && let Err(e) = write_ptx(&root, pair, dir)
        {
            failed = true;
            eprintln!("compare-nvrtc: {}: {e}", pair.fixture);
        }
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
        println!();
        print!("{}", codegen_compare::targets::render(&rows));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes both compilers' PTX for `pair` into `dir`.
fn write_ptx(
    root: &std::path::Path,
    pair: &codegen_compare::Pair,
    dir: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let ours = codegen_compare::our_ptx(root, pair.fixture)?;
    std::fs::write(dir.join(format!("{}.ours.ptx", pair.fixture)), ours)?;
    let theirs = codegen_compare::nvrtc_ptx(root, &pair.cuda_file())?;
    std::fs::write(dir.join(format!("{}.nvrtc.ptx", pair.fixture)), theirs)?;
    Ok(())
}
