//! Expected values: the same kernel source, compiled for the host by rustc and
//! run with the prelude's host implementation (simulated threads, real
//! barriers, per-block shared memory). The readback is what the device must
//! produce, value for value.
//!
//! The kernel is untrusted code, and so is the manifest. Hence:
//! - **nothing from the manifest is pasted into code.** Buffers are named
//!   `b0`, `b1`, … by position; their contents reach the program as a data
//!   file (`buffers.bin`, each buffer's little-endian bytes in manifest
//!   order), so a 100-million-element buffer costs rustc nothing; scalars are
//!   printed from their bit patterns; a kernel name is called by path only
//!   after the manifest proved it an identifier ([`Fixture::load`]).
//! - **the build and the run are sandbox jobs** ([`sandbox::Sandbox`]): the
//!   fixture's folder read-only at `/src`, the work folder writable at
//!   `/work`, nothing else of the machine; rustc and the program each under
//!   a deadline that kills their whole process tree.
//! - **the readback comes back as a file** (`readback.bin`, the first
//!   `readback` elements of each buffer that has one, in manifest order), so
//!   that a chatty kernel cannot block on a pipe or forge a readback line.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use mir_import::model::{IntTy, Mutability, Ty};
use sandbox::{Job, Sandbox};

use crate::fixture::{Arg, ElemTy, Fixture};

mod files;

pub(crate) use files::le_word;
pub use files::{parse_readback, write_buffers, write_numbers};

/// How long rustc may take to build a host program.
const BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// Why the host run failed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The program could not be generated for this kernel's parameters.
    #[error("host program: {0}")]
    Generate(String),
    /// rustc rejected the host program; its output is kept whole.
    #[error("host build failed ({status}):\n{stderr}")]
    Build {
        /// How rustc ended.
        status: String,
        /// What it printed.
        stderr: String,
    },
    /// The program failed or was killed.
    #[error("host run failed ({status}): {stderr}")]
    Run {
        /// How it ended.
        status: String,
        /// The end of what it printed on stderr.
        stderr: String,
    },
    /// A launch did what a GPU leaves undefined (a deadlocked barrier,
    /// lanes of one mask at different collectives): the prelude's check
    /// stopped the program, so there is no readback and no value to expect.
    #[error("host run: launch {launch} (`{kernel}`) does what a GPU leaves undefined: {message}")]
    Undefined {
        /// The launch, counted from 0 in manifest order.
        launch: usize,
        /// Its kernel.
        kernel: String,
        /// What the check found (and where in the prelude).
        message: String,
    },
    /// A kernel panicked: on a GPU, the launch traps. The program stops at
    /// that launch, so there is no readback.
    #[error("host run: launch {launch} (`{kernel}`) panicked: {stderr}")]
    Panicked {
        /// The launch, counted from 0 in manifest order.
        launch: usize,
        /// Its kernel.
        kernel: String,
        /// The end of what the program printed on stderr (the panic message).
        stderr: String,
    },
    /// The program ran past its time; its whole process tree was killed.
    #[error("host run timed out after {0:?}; its whole process tree was killed")]
    Timeout(Duration),
    /// The readback file is not what the manifest describes.
    #[error("host readback: {0}")]
    Readback(String),
    /// The sandbox could not run the job.
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
    /// Files could not be written or read.
    #[error("host work folder: {0}")]
    Io(#[from] std::io::Error),
}

/// The exit status of a host program whose kernel panicked, after a last
/// stderr line of [`PANIC_MARKER`] and the launch's index.
const PANIC_EXIT: i32 = 86;

/// What the host program prints before the index of a launch that panicked.
const PANIC_MARKER: &str = "gpu-harness: panicked in launch ";

/// The exit status of a host program stopped by a check of what a GPU
/// leaves undefined, after a last stderr line of [`UNDEFINED_MARKER`], the
/// launch's index, `: ` and the check's message.
const UNDEFINED_EXIT: i32 = 87;

/// What the host program prints before the index of a launch that did what
/// a GPU leaves undefined.
const UNDEFINED_MARKER: &str = "gpu-harness: undefined in launch ";

/// The launch that did what a GPU leaves undefined and the check's
/// message, from a host run's exit status and stderr; `None` for any
/// other failure.
fn undefined_launch(status: Option<i32>, stderr: &str) -> Option<(usize, String)> {
    if status != Some(UNDEFINED_EXIT) {
        return None;
    }
    let line = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(UNDEFINED_MARKER))?;
    let (n, message) = line.split_once(": ")?;
    Some((n.trim().parse().ok()?, message.to_owned()))
}

/// The launch whose panic ended a host run, from its exit status and
/// stderr; `None` for any other failure.
fn panicked_launch(status: Option<i32>, stderr: &str) -> Option<usize> {
    if status != Some(PANIC_EXIT) {
        return None;
    }
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(PANIC_MARKER))
        .and_then(|n| n.trim().parse().ok())
}

/// The readback of each buffer, by name, as bit patterns.
pub type Readback = Vec<(String, Vec<u64>)>;

/// The host-side variable of the `i`-th buffer.
fn var(i: usize) -> String {
    format!("b{i}")
}

/// The expression that reads the next scalar of type `t` from the numbers
/// file (its bit pattern, see [`write_numbers`]).
fn scalar(t: ElemTy) -> String {
    match t {
        ElemTy::F32 => "f32::from_bits(nums.next() as u32)".into(),
        ElemTy::F64 => "f64::from_bits(nums.next())".into(),
        ElemTy::Bool => "(nums.next() != 0)".into(),
        _ => format!("(nums.next() as {})", t.rust()),
    }
}

/// Wraps a raw pointer so that the launch closure (`Fn + Sync`) may capture
/// it; the kernel's own `unsafe` contract covers its use.
const SHARED_PTR: &str = "#[derive(Clone, Copy)] struct SharedPtr<T>(T);\n\
     unsafe impl<T> Sync for SharedPtr<T> {}\n\
     unsafe impl<T> Send for SharedPtr<T> {}\n\
     impl<T: Copy> SharedPtr<T> { fn get(self) -> T { self.0 } }\n\
     impl<T> SharedPtr<T> { fn by_ref(&self) -> &T { &self.0 } }\n";

/// How the launch closure passes a bound argument to the kernel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pass {
    /// As it is bound.
    Direct,
    /// Out of its [`SHARED_PTR`] (a raw pointer).
    Shared,
    /// As `&mut *ptr` from the raw pointer in its [`SHARED_PTR`]: every
    /// simulated thread gets the same `&mut [T]` (or `&mut T`), as every GPU
    /// thread gets the same pointer (rust-gpu's storage buffers); the kernel
    /// is trusted to write disjoint elements, as on the device.
    SharedMutSlice,
    /// A bitwise copy for each simulated thread of the value in its
    /// [`SHARED_PTR`], which the launching thread read from the bytes and
    /// checked (see the prelude's `gpu::host::by_value`); its type is
    /// inferred from the kernel's parameter.
    ByValue,
}

/// The Rust expression that passes `arg` for a parameter of MIR type `ty`,
/// and how the launch closure hands it over.
fn arg_expr(f: &Fixture, ty: &Ty, arg: &Arg) -> Result<(String, Pass), String> {
    let index = |name: &str| {
        f.manifest
            .buffer
            .iter()
            .position(|b| b.name == name)
            .map(var)
            .ok_or_else(|| format!("unknown buffer `{name}`"))
    };
    let elem = |inner: &Ty| inner.to_rust_source();
    match (ty, arg) {
        (_, Arg::Scalar(t, _)) => Ok((scalar(*t), Pass::Direct)),
        // Two numbers, the low half first (see `write_numbers`).
        (_, Arg::Wide(t, _)) => Ok((
            format!(
                "{{ let lo = nums.next() as u128; let hi = nums.next() as u128; (lo | hi << 64) as {} }}",
                t.rust()
            ),
            Pass::Direct,
        )),
        // Its length, one number per byte, then each pointer field's offset
        // (see `write_numbers`), where the host buffer's address goes.
        (_, Arg::ByValue(a)) => {
            let mut expr =
                "{ let mut v = (0..nums.next()).map(|_| nums.next() as u8).collect::<Vec<u8>>(); "
                    .to_owned();
            for (_, name) in &a.buffers {
                // Written as a pointer, not its address's bytes, so that the
                // value `by_value` reads keeps the buffer's provenance.
                let _ = write!(
                    expr,
                    "let at = nums.next() as usize; assert!(at + 8 <= v.len()); \
                     unsafe {{ v.as_mut_ptr().add(at).cast::<*mut u8>().write_unaligned({}.as_mut_ptr().cast()) }}; ",
                    index(name)?
                );
            }
            expr.push_str("SharedPtr(unsafe { gpu::host::by_value(&v) }) }");
            Ok((expr, Pass::ByValue))
        }
        (Ty::Ref(Mutability::Not, inner), Arg::Buffer(b)) => match &**inner {
            // `&[AtomicU32]` and friends view the buffer's integers in place.
            Ty::Slice(e) if elem(e).contains("Atomic") => Ok((
                format!(
                    "unsafe {{ &*(&mut {}[..] as *mut [_] as *const [{}]) }}",
                    index(b)?,
                    elem(e)
                ),
                Pass::Direct,
            )),
            Ty::Slice(_) => Ok((format!("&{}[..]", index(b)?), Pass::Direct)),
            t => Ok((
                format!(
                    "unsafe {{ &*{} }}",
                    sized_view(&index(b)?, b, &elem(t), "as_ptr", "*const")
                ),
                Pass::Direct,
            )),
        },
        (Ty::Ref(Mutability::Mut, inner), Arg::Buffer(b)) if matches!(**inner, Ty::Slice(_)) => {
            Ok((
                format!("SharedPtr(&mut {}[..] as *mut [_])", index(b)?),
                Pass::SharedMutSlice,
            ))
        }
        // `&mut [[u32; 16]; 8]`: like `&mut [T]`, every simulated thread
        // gets the same reference.
        (Ty::Ref(Mutability::Mut, inner), Arg::Buffer(b)) => Ok((
            format!(
                "SharedPtr({})",
                sized_view(&index(b)?, b, &elem(inner), "as_mut_ptr", "*mut")
            ),
            Pass::SharedMutSlice,
        )),
        (Ty::RawPtr(Mutability::Mut, _), Arg::Buffer(b)) => Ok((
            format!("SharedPtr({}.as_mut_ptr() as *mut _)", index(b)?),
            Pass::Shared,
        )),
        (Ty::RawPtr(Mutability::Not, _), Arg::Buffer(b)) => Ok((
            format!("SharedPtr({}.as_ptr() as *const _)", index(b)?),
            Pass::Shared,
        )),
        (Ty::Adt(p), Arg::Buffer(b)) if p.def_path() == mir_import::prelude::DISJOINT_SLICE => {
            Ok((
                format!("gpu::DisjointSlice::new(&mut {}[..])", index(b)?),
                Pass::Direct,
            ))
        }
        (t, Arg::Buffer(b)) => Err(format!(
            "buffer `{b}` cannot be passed as a `{t}` parameter on the host"
        )),
    }
}

/// An expression for a `*const T` / `*mut T` (`ptr`) to buffer variable
/// `var`'s elements, which first checks that the buffer holds a whole,
/// aligned `T`: the host program panics, naming the buffer, where a short
/// buffer would otherwise be read past its end.
fn sized_view(var: &str, name: &str, ty: &str, method: &str, ptr: &str) -> String {
    let message = format!("buffer `{name}` holds no whole, aligned `{ty}`");
    format!(
        "{{ assert!(std::mem::size_of_val(&{var}[..]) >= std::mem::size_of::<{ty}>() \
         && {var}.as_ptr() as usize % std::mem::align_of::<{ty}>() == 0, \
         \"{{}}\", {message:?}); \
         {var}.{method}() as {ptr} {ty} }}"
    )
}

/// How a kernel parameter of MIR type `ty` holds the buffer passed to it.
fn hold(ty: &Ty) -> Option<&'static str> {
    match ty {
        Ty::Ref(Mutability::Not, _) => Some("a shared reference"),
        Ty::Ref(Mutability::Mut, _) => Some("a mutable reference"),
        Ty::Adt(p) if p.def_path() == mir_import::prelude::DISJOINT_SLICE => {
            Some("a `DisjointSlice`")
        }
        Ty::RawPtr(Mutability::Mut, _) => Some("a `*mut` pointer"),
        _ => None,
    }
}

/// Refuses a launch that passes one buffer to a shared-reference parameter
/// and to a writable one (or to two exclusive ones): Rust forbids that
/// aliasing, and the device code is compiled assuming it away (a kernel's
/// `&[T]` is `noalias readonly`), so no run could mean anything. A pointer
/// field of a `by_value` aggregate holds its buffer as a `*mut` does.
fn check_aliasing(
    kernel: &str,
    tys: &[Ty],
    args: &[crate::fixture::ArgSpec],
) -> Result<(), String> {
    let field = Ty::RawPtr(Mutability::Mut, Box::new(Ty::Int(IntTy::U8)));
    let shared = |t: &Ty| matches!(t, Ty::Ref(Mutability::Not, _));
    let writable = |t: &Ty| hold(t).is_some() && !shared(t);
    let raw = |t: &Ty| matches!(t, Ty::RawPtr(..));
    let label = |t: &Ty, in_field: bool| {
        if in_field {
            "a pointer field of `by_value`"
        } else {
            hold(t).unwrap_or("a pointer")
        }
    };
    let mut seen: Vec<(String, usize, &Ty, bool)> = Vec::new();
    for (i, (ty, a)) in tys.iter().zip(args).enumerate() {
        let held: Vec<(String, &Ty, bool)> = match a.resolve() {
            Ok(Arg::Buffer(b)) => vec![(b, ty, false)],
            Ok(Arg::ByValue(agg)) => agg
                .buffers
                .into_iter()
                .map(|(_, b)| (b, &field, true))
                .collect(),
            _ => continue,
        };
        for (b, ty, in_field) in held {
            for (other, j, oty, o_field) in &seen {
                let conflict = (shared(ty) && writable(oty))
                    || (writable(ty) && shared(oty))
                    || (writable(ty) && writable(oty) && !(raw(ty) && raw(oty)));
                if *other == b && conflict {
                    return Err(format!(
                        "kernel `{kernel}`: buffer `{b}` is passed as {} (argument {j}) and as {} \
                         (argument {i}); Rust forbids that aliasing, and the device code assumes \
                         it away",
                        label(oty, *o_field),
                        label(ty, in_field),
                    ));
                }
            }
            seen.push((b, i, ty, in_field));
        }
    }
    Ok(())
}

/// The host program for `f`, given each launched kernel's MIR parameter
/// types and the paths of the prelude and the kernel as rustc sees them.
pub fn program(
    f: &Fixture,
    prelude: &Path,
    kernel: &Path,
    params: &dyn Fn(&str) -> Option<Vec<Ty>>,
) -> Result<String, HostError> {
    let gen_err = HostError::Generate;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "#![allow(unused, dead_code, improper_ctypes_definitions, unused_unsafe)]"
    );
    let _ = writeln!(s, "#[path = {prelude:?}] pub mod gpu;");
    let _ = writeln!(s, "#[path = {kernel:?}] pub mod kernel;");
    s.push_str(SHARED_PTR);
    s.push_str(
        "trait Elem: Copy { const N: usize; fn from_le(b: &[u8]) -> Self; fn to_le(self, out: &mut Vec<u8>); }\n\
         macro_rules! elem { ($($t:ty),*) => { $(impl Elem for $t {\n\
         \x20   const N: usize = std::mem::size_of::<$t>();\n\
         \x20   fn from_le(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().expect(\"element size\")) }\n\
         \x20   fn to_le(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) }\n\
         })* } }\n\
         elem!(u8, u16, u32, u64, i8, i16, i32, i64, usize, isize, f32, f64);\n\
         fn take<T: Elem>(data: &[u8], at: &mut usize, len: usize) -> Vec<T> {\n\
         \x20   let bytes = &data[*at..*at + len * T::N];\n\
         \x20   *at += len * T::N;\n\
         \x20   bytes.chunks_exact(T::N).map(T::from_le).collect()\n\
         }\n\
         fn put<T: Elem>(out: &mut Vec<u8>, v: &[T]) { for x in v { x.to_le(out); } }\n\
         struct Numbers(std::vec::IntoIter<u64>);\n\
         impl Numbers { fn next(&mut self) -> u64 { self.0.next().expect(\"numbers.bin is short\") } }\n\
         static LAUNCH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(usize::MAX);\n\
         fn main() {\n\
         \x20   let args: Vec<String> = std::env::args().collect();\n\
         \x20   let data = std::fs::read(&args[1]).expect(\"buffers.bin\");\n\
         \x20   let raw = std::fs::read(&args[3]).expect(\"numbers.bin\");\n\
         \x20   let mut nums = Numbers(raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect(\"8 bytes\"))).collect::<Vec<_>>().into_iter());\n\
         \x20   let mut at = 0usize;\n",
    );
    for (i, b) in f.manifest.buffer.iter().enumerate() {
        let _ = writeln!(
            s,
            "    let (len{i}, readback{i}) = (nums.next() as usize, nums.next() as usize);\n    \
             let mut {}: Vec<{}> = take(&data, &mut at, len{i});",
            var(i),
            b.ty.rust(),
        );
    }
    s.push_str("    drop(data);\n");
    // A kernel's panic inside a launch stops the program at once with a
    // status and a last line that name the launch, as a trap ends a GPU
    // launch. A panic cannot unwind out of an `extern \"C\"` kernel (the
    // process aborts), so the hook, which runs first, does it. Only a
    // simulated thread's panic in the kernel counts, not the launching
    // thread's. A prelude check of what a GPU leaves undefined (a warp
    // mask, a deadlock) stops it likewise, with its own status and last
    // line, which carries the check's message. Only the first panicking
    // thread speaks, and without its OS
    // thread id or its simulated ids: where all panic alike, the report
    // stays the same from run to run (where threads panic differently,
    // the first one's message is the scheduler's choice).
    let _ = writeln!(
        s,
        "    let default_hook = std::panic::take_hook();\n    \
         static FIRST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);\n    \
         std::panic::set_hook(Box::new(move |info| {{\n        \
         let n = LAUNCH.load(std::sync::atomic::Ordering::SeqCst);\n        \
         if n == usize::MAX || !gpu::host::in_kernel() {{ return default_hook(info); }}\n        \
         if !FIRST.swap(false, std::sync::atomic::Ordering::SeqCst) {{ loop {{ std::thread::park(); }} }}\n        \
         if let Some(m) = info.payload_as_str().and_then(|m| m.strip_prefix(gpu::host::UNDEFINED_ON_GPU)) {{\n            \
         eprintln!(\"{UNDEFINED_MARKER}{{n}}: {{m}}\");\n            \
         std::process::exit({UNDEFINED_EXIT});\n        \
         }}\n        \
         let at = info.location().map_or_else(String::new, |l| format!(\" at {{}}:{{}}:{{}}\", l.file(), l.line(), l.column()));\n        \
         eprintln!(\"a kernel thread panicked{{at}}: {{}}\", info.payload_as_str().unwrap_or(\"(a payload that is not a string)\"));\n        \
         eprintln!(\"{PANIC_MARKER}{{n}}\");\n        \
         std::process::exit({PANIC_EXIT});\n    \
         }}));"
    );
    for (n, l) in f.manifest.launch.iter().enumerate() {
        let tys = params(&l.kernel)
            .ok_or_else(|| gen_err(format!("no kernel `{}` in the source", l.kernel)))?;
        if tys.len() != l.args.len() {
            return Err(gen_err(format!(
                "kernel `{}` takes {} parameters, the manifest gives {} arguments",
                l.kernel,
                tys.len(),
                l.args.len()
            )));
        }
        check_aliasing(&l.kernel, &tys, &l.args).map_err(gen_err)?;
        s.push_str("    {\n");
        // Constant memory first, as the devices write it before the launch:
        // its byte count, then one number per byte (see `write_numbers`).
        for c in &l.constants {
            if !crate::fixture::is_identifier(&c.name) {
                return Err(gen_err(format!(
                    "constant {:?} is not an identifier",
                    c.name
                )));
            }
            let _ = writeln!(
                s,
                "        {{ let v = (0..nums.next()).map(|_| nums.next() as u8).collect::<Vec<u8>>(); \
                 unsafe {{ gpu::host::write_constant(&kernel::{}, &v) }}; }}",
                c.name
            );
        }
        let mut names = Vec::new();
        for (i, (ty, a)) in tys.iter().zip(&l.args).enumerate() {
            let arg = a.resolve().map_err(|e| gen_err(e.to_string()))?;
            let (expr, pass) = arg_expr(f, ty, &arg)
                .map_err(|m| gen_err(format!("kernel `{}`, argument {i}: {m}", l.kernel)))?;
            let _ = writeln!(s, "        let a{i} = {expr};");
            names.push(match pass {
                Pass::Direct => format!("a{i}"),
                Pass::Shared => format!("a{i}.get()"),
                Pass::SharedMutSlice => format!("&mut *a{i}.get()"),
                // Through a method, so that the closure captures the whole
                // `SharedPtr` (which is `Sync`), not the field (which need
                // not be: edition 2024 captures places).
                Pass::ByValue => format!("core::ptr::read(&**a{i}.by_ref())"),
            });
        }
        // `unsafe` covers `unsafe extern "C" fn` kernels (Rust-CUDA's style).
        s.push_str("        let mut dim = || nums.next() as u32;\n");
        s.push_str("        let (grid, block) = ((dim(), dim(), dim()), (dim(), dim(), dim()));\n");
        s.push_str("        let shared_bytes = nums.next() as usize;\n");
        // The panic hook names the launch that `LAUNCH` holds.
        let _ = writeln!(
            s,
            "        LAUNCH.store({n}, std::sync::atomic::Ordering::SeqCst);\n        \
             gpu::host::launch_with_shared(grid, block, shared_bytes, || unsafe {{ kernel::{}({}) }});\n        \
             LAUNCH.store(usize::MAX, std::sync::atomic::Ordering::SeqCst);",
            l.kernel,
            names.join(", ")
        );
        s.push_str("    }\n");
    }
    s.push_str("    let mut out = Vec::new();\n");
    for i in 0..f.manifest.buffer.len() {
        let _ = writeln!(s, "    put(&mut out, &{}[..readback{i}]);", var(i));
    }
    s.push_str("    std::fs::write(&args[2], out).expect(\"readback.bin\");\n}\n");
    Ok(s)
}

/// The first and last `max / 2` bytes of `text`: a panic message comes
/// first, and an abort's forced backtrace after it.
fn abridged(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_string();
    }
    let boundary = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let head = boundary(max / 2);
    let tail = boundary(text.len() - max / 2);
    format!(
        "{}\n[... {} bytes ...]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// How the host program was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostBuild {
    /// rustc built it.
    Built,
    /// The build of an earlier run with the same key was reused.
    Reused,
}

/// The key of a host build: the program's text (which holds no number of
/// the manifest), every file of the fixture folder but the manifest (the
/// kernel and what it includes), the prelude, rustc's `-vV` and the build's
/// own arguments.
fn build_key(f: &Fixture, program: &str, args: &[std::ffi::OsString]) -> std::io::Result<String> {
    let mut h = build_cache::KeyHasher::new("gpu-harness host build v1");
    h.field(crate::cache::rustc_version().unwrap_or_default().as_bytes());
    h.field(mir_import::rustc::PRELUDE_SOURCE.as_bytes());
    h.field(program.as_bytes());
    for a in args {
        h.field(a.as_encoded_bytes());
    }
    let mut files: Vec<_> = std::fs::read_dir(&f.dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "manifest.toml"))
        .collect();
    files.sort();
    for p in files {
        h.field(
            p.file_name()
                .map(|n| n.as_encoded_bytes())
                .unwrap_or_default(),
        );
        h.field(&std::fs::read(&p)?);
    }
    Ok(h.finish())
}

/// Builds and runs the host program for `f` in `work` (a private folder of
/// this fixture), both as jobs of `sandbox`; the run gets `timeout`. With
/// `builds`, a store of earlier builds, a build with the same key is
/// reused instead of running rustc, and a new one is kept there.
pub fn run(
    f: &Fixture,
    params: &dyn Fn(&str) -> Option<Vec<Ty>>,
    sandbox: &Sandbox,
    work: &Path,
    timeout: Duration,
    builds: Option<&build_cache::Store>,
    deps: Option<&kernel_deps::BuiltDeps>,
) -> Result<(Readback, HostBuild), HostError> {
    std::fs::create_dir_all(work)?;
    let folder = std::path::absolute(&f.dir)?;
    let kernel = std::path::absolute(&f.kernel)?;
    let mut build = Job::in_folders(sandbox.rustc(), &folder, work);
    if let Some(d) = deps {
        // The same rlibs as the kernel's: the expected values come from the
        // same dependency code.
        build = build.read_only(&d.root, mir_import::rustc::DEPS_DIR);
    }
    let seen = |p: &Path| sandbox.path_in(&build, p);
    let prelude = work.join("gpu.rs");
    std::fs::write(&prelude, mir_import::rustc::PRELUDE_SOURCE)?;
    let src = work.join("host.rs");
    let bin = work.join("host-bin");
    let data = work.join("buffers.bin");
    let numbers = work.join("numbers.bin");
    let readback = work.join("readback.bin");
    let text = program(f, &seen(&prelude), &seen(&kernel), params)?;
    std::fs::write(&src, &text)?;
    write_buffers(f, &data)?;
    write_numbers(f, &numbers)?;
    let (src_in, bin_in, data_in, numbers_in, readback_in) = (
        seen(&src),
        seen(&bin),
        seen(&data),
        seen(&numbers),
        seen(&readback),
    );
    build.args = vec![
        "--edition".into(),
        "2024".into(),
        "-C".into(),
        "opt-level=1".into(),
        "-C".into(),
        "codegen-units=1".into(),
        // The standard library's debug info is 9 in 10 bytes of a host
        // program, and the test run keeps one program per fixture.
        "-C".into(),
        "strip=debuginfo".into(),
        "-C".into(),
        format!("linker={}", sandbox.linker().display()).into(),
    ];
    if let Some(d) = deps {
        let view = build.clone();
        build
            .args
            .extend(d.rustc_args(&|p: &Path| sandbox.path_in(&view, p)));
    }
    build.args.extend([
        "-o".into(),
        bin_in.clone().into_os_string(),
        src_in.into_os_string(),
    ]);
    build.cwd = Some(work.to_path_buf());
    build.timeout = BUILD_TIMEOUT;
    // A build kept from an earlier run (its key covers everything rustc
    // reads), or a new one, kept for the next run.
    let kept = match builds {
        // The flags, not `-o` and the paths, which differ per run outside
        // the sandbox.
        Some(store) => Some((
            store,
            build_key(f, &text, &build.args[..build.args.len() - 3])?,
        )),
        None => None,
    };
    let how = match &kept {
        Some((store, key)) if store.copy_out(key, &bin) => HostBuild::Reused,
        _ => {
            let built = sandbox.run(&build)?;
            if !built.success() {
                return Err(HostError::Build {
                    status: built.describe(&build),
                    stderr: built.stderr_text(),
                });
            }
            if let Some((store, key)) = &kept
                && let Err(e) = store.copy_in(key, &bin)
            {
                tracing::warn!("the host build was not kept: {e}");
            }
            HostBuild::Built
        }
    };
    let mut job = Job::in_folders(bin_in, &folder, work);
    job.args = vec![
        data_in.into_os_string(),
        readback_in.into_os_string(),
        numbers_in.into_os_string(),
    ];
    job.cwd = Some(work.to_path_buf());
    job.timeout = timeout;
    // One OS thread per simulated GPU thread of a block.
    job.limits.processes = 4096;
    job.limits.cpu_seconds = timeout.as_secs().saturating_mul(2).saturating_add(1);
    job.output_cap = 64 << 10;
    let ran = sandbox.run(&job)?;
    if ran.timed_out {
        return Err(HostError::Timeout(timeout));
    }
    if !ran.status.success() {
        let stderr = ran.stderr_text();
        if let Some((launch, message)) = undefined_launch(ran.status.code(), &stderr)
            && let Some(l) = f.manifest.launch.get(launch)
        {
            return Err(HostError::Undefined {
                launch,
                kernel: l.kernel.clone(),
                message,
            });
        }
        if let Some(launch) = panicked_launch(ran.status.code(), &stderr)
            && let Some(l) = f.manifest.launch.get(launch)
        {
            return Err(HostError::Panicked {
                launch,
                kernel: l.kernel.clone(),
                stderr: abridged(&stderr, 4000),
            });
        }
        return Err(HostError::Run {
            status: ran.describe(&job),
            stderr: abridged(&stderr, 4000),
        });
    }
    let bytes = std::fs::read(&readback)
        .map_err(|e| HostError::Readback(format!("{}: {e}", readback.display())))?;
    Ok((parse_readback(f, &bytes)?, how))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer in a pointer field of a `by_value` aggregate holds it as a
    /// `*mut` does: beside another raw pointer it is allowed, beside a
    /// reference or a `DisjointSlice` refused, naming both arguments.
    #[test]
    fn a_pointer_field_aliases_like_a_raw_pointer() {
        let spec = |t: &str| toml::from_str::<crate::fixture::ArgSpec>(t).expect("an argument");
        let ty = |t: &str| mir_import::parse::parse_type(t).expect("a type");
        let field = spec("by_value = [{ buffer = \"x\" }, { u64 = 8 }]");
        let raw = [ty("kernel::Views"), ty("*mut f32")];
        let args = [field.clone(), spec("buffer = \"x\"")];
        check_aliasing("k", &raw, &args).expect("two raw pointers may alias");
        let shared = [ty("kernel::Views"), ty("&[f32]")];
        let e = check_aliasing("k", &shared, &args).expect_err("refused");
        assert!(
            e.contains(
                "buffer `x` is passed as a pointer field of `by_value` (argument 0) and as a \
                 shared reference (argument 1)"
            ),
            "{e}"
        );
        let unrelated = [field, spec("buffer = \"y\"")];
        check_aliasing("k", &shared, &unrelated).expect("another buffer");
    }

    #[test]
    fn only_the_panic_status_with_its_marker_names_a_launch() {
        let stderr = format!("a kernel thread panicked at k.rs:3:5: boom\n{PANIC_MARKER}2\n");
        assert_eq!(panicked_launch(Some(PANIC_EXIT), &stderr), Some(2));
        // Another status (an abort, a panic outside a launch) names none.
        assert_eq!(panicked_launch(Some(101), &stderr), None);
        assert_eq!(panicked_launch(None, &stderr), None);
        // The status alone, from a program that exits 86 for its own reasons.
        assert_eq!(panicked_launch(Some(PANIC_EXIT), "exit 86\n"), None);
        assert_eq!(
            panicked_launch(Some(PANIC_EXIT), &format!("{PANIC_MARKER}x\n")),
            None
        );
    }

    #[test]
    fn only_the_undefined_status_with_its_marker_names_a_launch_and_a_message() {
        let stderr = format!("{UNDEFINED_MARKER}1: deadlock: a barrier: never\n");
        assert_eq!(
            undefined_launch(Some(UNDEFINED_EXIT), &stderr),
            Some((1, "deadlock: a barrier: never".to_owned()))
        );
        assert_eq!(undefined_launch(Some(PANIC_EXIT), &stderr), None);
        assert_eq!(undefined_launch(None, &stderr), None);
        assert_eq!(undefined_launch(Some(UNDEFINED_EXIT), "exit 87\n"), None);
        let no_index = format!("{UNDEFINED_MARKER}x: message\n");
        assert_eq!(undefined_launch(Some(UNDEFINED_EXIT), &no_index), None);
    }
}
