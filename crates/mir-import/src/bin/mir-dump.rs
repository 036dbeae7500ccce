//! `mir-dump <kernel.rs>`: prints the imported model of a kernel as JSON, with
//! every constant's evaluated allocation graph.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use serde::Serialize;

/// Imports a kernel's MIR and prints the model (items, bodies, layouts and
/// static allocations) and each constant's evaluated graph as JSON.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// The kernel source file (uses the device prelude as `crate::gpu`).
    kernel: PathBuf,
    /// Read MIR text from this file instead of running rustc (no layout probe,
    /// no twin fallback).
    #[arg(long)]
    mir: Option<PathBuf>,
    /// With --mir: the `-Zprint-type-sizes` report to read.
    #[arg(long)]
    type_sizes: Option<PathBuf>,
    /// Print only the evaluated constants, not the whole model.
    #[arg(long)]
    constants_only: bool,
    /// Run rustc on the kernel WITHOUT the sandbox (bubblewrap): its macros,
    /// `include_str!` and `env!` then run with your rights.
    #[arg(long)]
    unsandboxed: bool,
}

#[derive(Serialize)]
struct Dump<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a mir_import::Crate>,
    constants: Vec<mir_import::eval::report::ItemView>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (krate, eval) = match &args.mir {
        Some(mir) => {
            let text = std::fs::read_to_string(mir).with_context(|| mir.display().to_string())?;
            let sizes = match &args.type_sizes {
                Some(p) => std::fs::read_to_string(p).with_context(|| p.display().to_string())?,
                None => String::new(),
            };
            let src = std::fs::read_to_string(&args.kernel)
                .with_context(|| args.kernel.display().to_string())?;
            let name = args.kernel.display().to_string();
            let k = mir_import::import_text(&text, &sizes, Some((&src, &name)))?;
            let ev = mir_import::eval::evaluate(&k, &Default::default());
            (k, ev)
        }
        None => {
            let sandbox = if args.unsandboxed {
                eprintln!("WARNING: --unsandboxed: rustc runs on the kernel without confinement");
                sandbox::Sandbox::unconfined()?
            } else {
                sandbox::Sandbox::detect()?
            };
            let opts = mir_import::rustc::RustcOptions::confined(sandbox);
            let imported = mir_import::import_and_evaluate(&args.kernel, &opts, true)?;
            (imported.krate, imported.eval)
        }
    };
    let dump = Dump {
        model: (!args.constants_only).then_some(&krate),
        constants: mir_import::eval::report::view(&eval, "kernel::"),
    };
    println!("{}", serde_json::to_string_pretty(&dump)?);
    Ok(())
}
