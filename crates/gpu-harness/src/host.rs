//! Expected values: the same kernel source, compiled for the host by rustc and
//! run with the prelude's host implementation (simulated threads, real
//! barriers, per-block shared memory). The readback is what the device must
//! produce, value for value.
//!
//! The generated program mounts the prelude and the kernel exactly as
//! mir-import does, creates the manifest's buffers, launches each kernel with
//! `gpu::host::launch`, and prints each buffer's readback as hex bit patterns.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mir_import::model::{Mutability, Ty};

use crate::fixture::{Arg, ElemTy, Fixture};

/// Why the host run failed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The program could not be generated for this kernel's parameters.
    #[error("host program: {0}")]
    Generate(String),
    /// rustc rejected the host program; its output is kept whole.
    #[error("host build failed:\n{0}")]
    Build(String),
    /// The program failed or was killed.
    #[error("host run failed: {0}")]
    Run(String),
    /// The program ran past its time.
    #[error("host run timed out after {0:?}")]
    Timeout(Duration),
    /// Files or processes could not be handled.
    #[error("host: {0}")]
    Io(String),
}

/// The readback of each buffer, by name, as bit patterns.
pub type Readback = Vec<(String, Vec<u64>)>;

fn literal(t: ElemTy, bits: u64) -> String {
    match t {
        ElemTy::F32 => format!("f32::from_bits({bits:#x})"),
        ElemTy::F64 => format!("f64::from_bits({bits:#x})"),
        _ => format!("({bits:#x}u64 as {})", t.rust()),
    }
}

/// The Rust expression that passes `arg` for a parameter of MIR type `ty`.
fn arg_expr(f: &Fixture, ty: &Ty, arg: &Arg) -> Result<String, String> {
    let buf = |name: &str| format!("b_{name}");
    match (ty, arg) {
        (_, Arg::Scalar(t, bits)) => Ok(literal(*t, *bits)),
        (Ty::Ref(Mutability::Not, inner), Arg::Buffer(b)) if matches!(**inner, Ty::Slice(_)) => {
            Ok(format!("&{}[..]", buf(b)))
        }
        (Ty::Ref(Mutability::Not, inner), Arg::Buffer(b)) => {
            let t = mir_import::eval::probe::rust_source(inner);
            Ok(format!(
                "unsafe {{ &*({}.as_ptr() as *const {t}) }}",
                buf(b)
            ))
        }
        (Ty::Adt(p), Arg::Buffer(b)) if p.def_path() == mir_import::prelude::DISJOINT_SLICE => {
            Ok(format!("gpu::DisjointSlice::new(&mut {}[..])", buf(b)))
        }
        (t, Arg::Buffer(b)) => Err(format!(
            "fixture {}: buffer `{b}` cannot be passed as a `{t}` parameter on the host",
            f.name
        )),
    }
}

/// The host program for `f`, given each launched kernel's MIR parameter types.
pub fn program(
    f: &Fixture,
    prelude: &Path,
    params: &dyn Fn(&str) -> Option<Vec<Ty>>,
) -> Result<String, String> {
    let mut s = String::new();
    let kernel = std::path::absolute(&f.kernel).map_err(|e| e.to_string())?;
    let _ = writeln!(
        s,
        "#![allow(unused, dead_code, improper_ctypes_definitions)]"
    );
    let _ = writeln!(s, "#[path = {prelude:?}] pub mod gpu;");
    let _ = writeln!(s, "#[path = {kernel:?}] pub mod kernel;");
    s.push_str(
        "trait Bits { fn bits(&self) -> u64; }\n\
         macro_rules! int_bits { ($($t:ty),*) => { $(impl Bits for $t { fn bits(&self) -> u64 { *self as u64 } })* } }\n\
         int_bits!(u8, u16, u32, u64);\n\
         impl Bits for i8 { fn bits(&self) -> u64 { *self as u8 as u64 } }\n\
         impl Bits for i16 { fn bits(&self) -> u64 { *self as u16 as u64 } }\n\
         impl Bits for i32 { fn bits(&self) -> u64 { *self as u32 as u64 } }\n\
         impl Bits for i64 { fn bits(&self) -> u64 { *self as u64 } }\n\
         impl Bits for f32 { fn bits(&self) -> u64 { self.to_bits() as u64 } }\n\
         impl Bits for f64 { fn bits(&self) -> u64 { self.to_bits() } }\n\
         fn show<T: Bits>(name: &str, v: &[T]) {\n\
         \x20   let words: Vec<String> = v.iter().map(|x| format!(\"{:x}\", x.bits())).collect();\n\
         \x20   println!(\"readback {} {}\", name, words.join(\" \"));\n\
         }\n\
         fn main() {\n",
    );
    for b in &f.manifest.buffer {
        let vals: Vec<String> = b.initial_bits().iter().map(|x| literal(b.ty, *x)).collect();
        let _ = writeln!(
            s,
            "    let mut b_{}: Vec<{}> = vec![{}];",
            b.name,
            b.ty.rust(),
            vals.join(", ")
        );
    }
    for l in &f.manifest.launch {
        let tys =
            params(&l.kernel).ok_or_else(|| format!("no kernel `{}` in the source", l.kernel))?;
        if tys.len() != l.args.len() {
            return Err(format!(
                "kernel `{}` takes {} arguments, the manifest gives {}",
                l.kernel,
                tys.len(),
                l.args.len()
            ));
        }
        s.push_str("    {\n");
        let mut names = Vec::new();
        for (i, (ty, a)) in tys.iter().zip(&l.args).enumerate() {
            let arg = a.resolve()?;
            let _ = writeln!(s, "        let a{i} = {};", arg_expr(f, ty, &arg)?);
            names.push(format!("a{i}"));
        }
        let _ = writeln!(
            s,
            "        gpu::host::launch(({}, {}), ({}, {}), || kernel::{}({}));",
            l.grid[0],
            l.grid[1],
            l.block[0],
            l.block[1],
            l.kernel,
            names.join(", ")
        );
        s.push_str("    }\n");
    }
    for b in f.manifest.buffer.iter().filter(|b| b.readback > 0) {
        let _ = writeln!(
            s,
            "    show({:?}, &b_{}[..{}]);",
            b.name, b.name, b.readback
        );
    }
    s.push_str("}\n");
    Ok(s)
}

/// Builds and runs the host program in `work`, within `timeout`.
pub fn run(source: &str, work: &Path, timeout: Duration) -> Result<Readback, HostError> {
    let io = |e: std::io::Error| HostError::Io(e.to_string());
    std::fs::create_dir_all(work).map_err(io)?;
    let src = work.join("host.rs");
    let bin = work.join("host-bin");
    std::fs::write(&src, source).map_err(io)?;
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args([
            "--edition",
            "2024",
            "-C",
            "opt-level=1",
            "-C",
            "codegen-units=1",
            "-o",
        ])
        .arg(&bin)
        .arg(&src)
        .output()
        .map_err(io)?;
    if !out.status.success() {
        return Err(HostError::Build(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    let mut child = Command::new(&bin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io)?;
    let start = Instant::now();
    loop {
        match child.try_wait().map_err(io)? {
            Some(_) => break,
            None if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(HostError::Timeout(timeout));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let out = child.wait_with_output().map_err(io)?;
    if !out.status.success() {
        return Err(HostError::Run(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    parse_readback(&String::from_utf8_lossy(&out.stdout)).map_err(HostError::Run)
}

fn parse_readback(text: &str) -> Result<Readback, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("readback ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let name = words
            .next()
            .ok_or("readback line without a name")?
            .to_string();
        let vals: Result<Vec<u64>, _> = words.map(|w| u64::from_str_radix(w, 16)).collect();
        out.push((name, vals.map_err(|e| format!("bad readback value: {e}"))?));
    }
    Ok(out)
}
