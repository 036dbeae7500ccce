//! `mir-dump <kernel.rs>`: prints the imported model of a kernel as JSON.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

/// Imports a kernel's MIR and prints the model (items, bodies, layouts and
/// static allocations) as JSON.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// The kernel source file (uses the device prelude as `crate::gpu`).
    kernel: PathBuf,
    /// Read MIR text from this file instead of running rustc.
    #[arg(long)]
    mir: Option<PathBuf>,
    /// With --mir: the `-Zprint-type-sizes` report to read.
    #[arg(long)]
    type_sizes: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let krate = match &args.mir {
        Some(mir) => {
            let text = std::fs::read_to_string(mir).with_context(|| mir.display().to_string())?;
            let sizes = match &args.type_sizes {
                Some(p) => std::fs::read_to_string(p).with_context(|| p.display().to_string())?,
                None => String::new(),
            };
            let src = std::fs::read_to_string(&args.kernel)
                .with_context(|| args.kernel.display().to_string())?;
            let name = args.kernel.display().to_string();
            mir_import::import_text(&text, &sizes, Some((&src, &name)))?
        }
        None => mir_import::import_file(&args.kernel, &Default::default())?,
    };
    println!("{}", serde_json::to_string_pretty(&krate)?);
    Ok(())
}
