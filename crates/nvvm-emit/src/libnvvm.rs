//! The libNVVM binding, loaded at run time with libloading.
//!
//! ```no_run
//! use nvvm_emit::{CompileOptions, Libnvvm, Target};
//! let nvvm = Libnvvm::load()?;
//! let ir = "...";
//! nvvm.verify(ir)?;
//! let ptx = nvvm.compile(ir, &CompileOptions::default())?;
//! let ltoir = nvvm.compile(ir, &CompileOptions { target: Target::Ltoir, ..Default::default() })?;
//! // Rust's float semantics (`-fma=0 -ftz=0 -prec-div=1 -prec-sqrt=1`) come with
//! // every constructor; see the crate's "Float semantics" section.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every libNVVM call goes through a fresh program, so one [`Libnvvm`] may be
//! shared by threads (libNVVM's API is thread-safe across programs; the test suite
//! compiles concurrently and compares).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

use crate::locate::{self, SETUP_COMMAND, Source};
use crate::printer::NVVM_IR_VERSION;

mod result_cache;

type Program = *mut c_void;
type NvvmResult = c_int;

/// The libNVVM functions this crate calls.
struct Api {
    get_error_string: unsafe extern "C" fn(NvvmResult) -> *const c_char,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvvmResult,
    ir_version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int, *mut c_int) -> NvvmResult,
    create_program: unsafe extern "C" fn(*mut Program) -> NvvmResult,
    destroy_program: unsafe extern "C" fn(*mut Program) -> NvvmResult,
    add_module: unsafe extern "C" fn(Program, *const c_char, usize, *const c_char) -> NvvmResult,
    lazy_add_module:
        unsafe extern "C" fn(Program, *const c_char, usize, *const c_char) -> NvvmResult,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvvmResult,
    verify: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvvmResult,
    result_size: unsafe extern "C" fn(Program, *mut usize) -> NvvmResult,
    result: unsafe extern "C" fn(Program, *mut c_char) -> NvvmResult,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> NvvmResult,
    log: unsafe extern "C" fn(Program, *mut c_char) -> NvvmResult,
}

/// Whether `ir` calls into libdevice: it declares a `__nv_*` function, as the
/// printer does for every float math function it uses.
pub fn uses_libdevice(ir: &str) -> bool {
    ir.lines()
        .any(|l| l.starts_with("declare") && l.contains("@__nv_"))
}

/// libNVVM's IR version pair and debug-metadata version pair.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IrVersion {
    /// NVVM IR major version.
    pub major: i32,
    /// NVVM IR minor version.
    pub minor: i32,
    /// Debug metadata major version.
    pub debug_major: i32,
    /// Debug metadata minor version.
    pub debug_minor: i32,
}

/// Why libNVVM could not be loaded. Each message names the setup command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No candidate file exists.
    #[error(
        "libNVVM not found; tried {}. Install it with `{SETUP_COMMAND}` (into tools/cuda), or set LIBNVVM_PATH to libnvvm.so or CUDA_HOME to a CUDA toolkit",
        describe(.tried)
    )]
    NotFound {
        /// The candidates, in lookup order.
        tried: Vec<(String, PathBuf)>,
    },
    /// A candidate exists but could not be opened, or lacks a function.
    #[error(
        "libNVVM at {path} (from {source_name}) could not be loaded: {reason}. Install it with `{SETUP_COMMAND}`, or fix {source_name}"
    )]
    Open {
        /// The file.
        path: PathBuf,
        /// Where the path came from.
        source_name: String,
        /// The loader's message.
        reason: String,
    },
    /// The library supports another NVVM IR version than the printer writes.
    #[error("libNVVM at {path} supports NVVM IR {major}.{minor}, but nvvm-emit writes {}.{}; install the 12.x libNVVM with `{SETUP_COMMAND}`", NVVM_IR_VERSION.0, NVVM_IR_VERSION.1)]
    IrVersion {
        /// The file.
        path: PathBuf,
        /// Its IR major version.
        major: i32,
        /// Its IR minor version.
        minor: i32,
    },
}

fn describe(tried: &[(String, PathBuf)]) -> String {
    if tried.is_empty() {
        return "no locations".to_owned();
    }
    tried
        .iter()
        .map(|(s, p)| format!("{} ({s})", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What libNVVM was asked to do when it failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Creating the program or adding the module.
    AddModule,
    /// `nvvmVerifyProgram`.
    Verify,
    /// `nvvmCompileProgram`.
    Compile,
    /// Reading the result back.
    Result,
}

/// A libNVVM failure, with libNVVM's log whole.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("libNVVM {stage:?} failed with {status} ({code}){}", if log.trim().is_empty() { String::new() } else { format!(":\n{}", log.trim_end()) })]
pub struct NvvmError {
    /// The failing step.
    pub stage: Stage,
    /// The `nvvmResult` code.
    pub code: i32,
    /// libNVVM's name for the code (`NVVM_ERROR_INVALID_IR`, ...).
    pub status: String,
    /// The program log, whole.
    pub log: String,
}

/// What to compile to.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// PTX assembly text.
    #[default]
    Ptx,
    /// LTO IR (`-gen-lto`), for linking with nvJitLink.
    Ltoir,
}

/// The libNVVM options that change numeric results, each passed explicitly (see
/// the crate's "Float semantics" section for every decision and the test that
/// pins it).
///
/// [`FloatSemantics::RUST`] (the [`Default`]) is the only setting that matches
/// Rust: no contraction, subnormals kept, correctly rounded `/` and `sqrt`. The
/// other settings exist so that tests (and mutants) can show that the checks
/// which pin these options fail when an option is flipped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FloatSemantics {
    /// `-fma=`: whether libNVVM may contract a separate `fmul` and `fadd` into one
    /// `fma` (one rounding instead of two). Rust never contracts: `false`.
    pub fma: bool,
    /// `-ftz=`: whether single-precision operations flush subnormal inputs and
    /// results to zero (`.ftz` in PTX). Rust keeps subnormals: `false`.
    pub ftz: bool,
    /// `-prec-div=`: whether single-precision division and reciprocal are IEEE
    /// round-to-nearest (`div.rn.f32`) rather than approximate (`div.full.f32`).
    /// Rust's `/` is correctly rounded: `true`.
    pub prec_div: bool,
    /// `-prec-sqrt=`: whether single-precision square root is IEEE
    /// round-to-nearest (`sqrt.rn.f32`) rather than approximate
    /// (`sqrt.approx.f32`). `f32::sqrt` is correctly rounded: `true`.
    pub prec_sqrt: bool,
}

impl FloatSemantics {
    /// Rust's float semantics: `-fma=0 -ftz=0 -prec-div=1 -prec-sqrt=1`.
    pub const RUST: FloatSemantics = FloatSemantics {
        fma: false,
        ftz: false,
        prec_div: true,
        prec_sqrt: true,
    };

    /// The four option strings, always all four, in the order `-fma`, `-ftz`,
    /// `-prec-div`, `-prec-sqrt`. nvJitLink spells its link-time options the
    /// same way, so a caller that links our LTO IR passes these strings to the
    /// linker too (LTO IR does not record them; see the crate docs).
    pub fn to_args(self) -> [String; 4] {
        let bit = |b: bool| u8::from(b);
        [
            format!("-fma={}", bit(self.fma)),
            format!("-ftz={}", bit(self.ftz)),
            format!("-prec-div={}", bit(self.prec_div)),
            format!("-prec-sqrt={}", bit(self.prec_sqrt)),
        ]
    }
}

impl Default for FloatSemantics {
    /// [`FloatSemantics::RUST`]: the default must never be anything else.
    fn default() -> Self {
        FloatSemantics::RUST
    }
}

/// Options for [`Libnvvm::compile`] and [`Libnvvm::verify_with`].
///
/// Every option that can change a result is passed explicitly, never left to
/// libNVVM's default, so that a new libNVVM with other defaults cannot change
/// what our kernels compute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// The virtual architecture: `-arch=compute_{arch}`. Default 90 (libNVVM's
    /// own default is an older one, so it is always passed).
    pub arch: u32,
    /// `-opt=`: 0 or 3 (default). At 3 libNVVM folds `noinline` helpers that return
    /// constant addresses, so shape checks on helpers need an `-opt=0` compile.
    pub opt_level: u8,
    /// PTX (default) or LTO IR.
    pub target: Target,
    /// `-fma`, `-ftz`, `-prec-div`, `-prec-sqrt`; [`FloatSemantics::RUST`] by
    /// default. Change them with the `with_*` methods, for tests only.
    pub float: FloatSemantics,
    /// More options, passed as they are, after all the others. An option that
    /// repeats one of the above (e.g. `-fma=1`) is refused by libNVVM
    /// (`NVVM_ERROR_INVALID_OPTION`, "-fma defined more than once"), so `extra`
    /// cannot silently override [`CompileOptions::float`]; set the field instead.
    pub extra: Vec<String>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            arch: 90,
            opt_level: 3,
            target: Target::Ptx,
            float: FloatSemantics::RUST,
            extra: Vec::new(),
        }
    }
}

impl CompileOptions {
    /// PTX for `compute_{arch}` at `-opt={opt_level}`, with Rust's float
    /// semantics.
    pub fn ptx(arch: u32, opt_level: u8) -> Self {
        CompileOptions {
            arch,
            opt_level,
            ..Default::default()
        }
    }

    /// LTO IR for `compute_{arch}` at `-opt={opt_level}`, with Rust's float
    /// semantics (which the linker must be given as well: see
    /// [`FloatSemantics::to_args`]).
    pub fn ltoir(arch: u32, opt_level: u8) -> Self {
        CompileOptions {
            arch,
            opt_level,
            target: Target::Ltoir,
            ..Default::default()
        }
    }

    /// These options with `float` in place of the float semantics.
    #[must_use]
    pub fn with_float(mut self, float: FloatSemantics) -> Self {
        self.float = float;
        self
    }

    /// These options with `-fma={fma}`. `true` breaks Rust's semantics; it exists
    /// so that tests can show that the no-contraction check can fail.
    #[must_use]
    pub fn with_fma(mut self, fma: bool) -> Self {
        self.float.fma = fma;
        self
    }

    /// These options with `-ftz={ftz}`. `true` breaks Rust's semantics (tests only).
    #[must_use]
    pub fn with_ftz(mut self, ftz: bool) -> Self {
        self.float.ftz = ftz;
        self
    }

    /// These options with `-prec-div={prec_div}`. `false` breaks Rust's
    /// semantics (tests only).
    #[must_use]
    pub fn with_prec_div(mut self, prec_div: bool) -> Self {
        self.float.prec_div = prec_div;
        self
    }

    /// These options with `-prec-sqrt={prec_sqrt}`. `false` breaks Rust's
    /// semantics (tests only).
    #[must_use]
    pub fn with_prec_sqrt(mut self, prec_sqrt: bool) -> Self {
        self.float.prec_sqrt = prec_sqrt;
        self
    }

    /// The option strings passed to libNVVM: `-arch`, `-opt`, the four float
    /// options, `-gen-lto` for LTO IR, then [`CompileOptions::extra`].
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("-arch=compute_{}", self.arch),
            format!("-opt={}", self.opt_level),
        ];
        args.extend(self.float.to_args());
        if self.target == Target::Ltoir {
            args.push("-gen-lto".to_owned());
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// A loaded libNVVM.
pub struct Libnvvm {
    api: Api,
    path: PathBuf,
    version: (i32, i32),
    ir_version: IrVersion,
    // Keeps the function pointers in `api` valid; dropped last.
    _lib: Library,
}

impl fmt::Debug for Libnvvm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Libnvvm")
            .field("path", &self.path)
            .field("version", &self.version)
            .field("ir_version", &self.ir_version)
            .finish()
    }
}

impl Libnvvm {
    /// Finds and loads libNVVM (see [`crate::locate`] for the order), and checks
    /// that it takes NVVM IR 2.0.
    ///
    /// # Errors
    /// [`LoadError`], whose message names `bash ci/setup-tools.sh`.
    pub fn load() -> Result<Self, LoadError> {
        let candidates = locate::libnvvm_candidates();
        for (source, path) in &candidates {
            if *source == Source::LibnvvmPath || path.is_file() {
                return Self::load_from(path, source);
            }
        }
        Err(LoadError::NotFound {
            tried: candidates
                .into_iter()
                .map(|(s, p)| (s.to_string(), p))
                .collect(),
        })
    }

    /// One libNVVM per process, loaded on first use.
    ///
    /// # Errors
    /// The [`LoadError`] of the first attempt.
    pub fn shared() -> Result<&'static Libnvvm, LoadError> {
        static SHARED: OnceLock<Result<Libnvvm, LoadError>> = OnceLock::new();
        SHARED
            .get_or_init(Self::load)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Loads the libNVVM at `path`.
    ///
    /// # Errors
    /// [`LoadError::Open`] or [`LoadError::IrVersion`].
    pub fn load_path(path: &Path) -> Result<Self, LoadError> {
        Self::load_from(path, &Source::LibnvvmPath)
    }

    fn load_from(path: &Path, source: &Source) -> Result<Self, LoadError> {
        let open_err = |reason: String| LoadError::Open {
            path: path.to_owned(),
            source_name: source.to_string(),
            reason,
        };
        if !path.is_file() {
            return Err(open_err("no such file".to_owned()));
        }
        // SAFETY: loading libNVVM runs its initializers, which have no
        // preconditions; the library is NVIDIA's, found where the user or the setup
        // script put it.
        let lib = unsafe { Library::new(path) }.map_err(|e| open_err(e.to_string()))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol's type is the one nvvm.h declares.
                *unsafe { lib.get($name) }.map_err(|e| open_err(e.to_string()))?
            };
        }
        let api = Api {
            get_error_string: sym!("nvvmGetErrorString"),
            version: sym!("nvvmVersion"),
            ir_version: sym!("nvvmIRVersion"),
            create_program: sym!("nvvmCreateProgram"),
            destroy_program: sym!("nvvmDestroyProgram"),
            add_module: sym!("nvvmAddModuleToProgram"),
            lazy_add_module: sym!("nvvmLazyAddModuleToProgram"),
            compile: sym!("nvvmCompileProgram"),
            verify: sym!("nvvmVerifyProgram"),
            result_size: sym!("nvvmGetCompiledResultSize"),
            result: sym!("nvvmGetCompiledResult"),
            log_size: sym!("nvvmGetProgramLogSize"),
            log: sym!("nvvmGetProgramLog"),
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: out-pointers to live locals.
        unsafe { (api.version)(&mut major, &mut minor) };
        let mut v = [0 as c_int; 4];
        // SAFETY: out-pointers to live locals.
        unsafe { (api.ir_version)(&mut v[0], &mut v[1], &mut v[2], &mut v[3]) };
        let ir_version = IrVersion {
            major: v[0],
            minor: v[1],
            debug_major: v[2],
            debug_minor: v[3],
        };
        if (ir_version.major, ir_version.minor) != NVVM_IR_VERSION {
            return Err(LoadError::IrVersion {
                path: path.to_owned(),
                major: v[0],
                minor: v[1],
            });
        }
        Ok(Libnvvm {
            api,
            path: path.to_owned(),
            version: (major, minor),
            ir_version,
            _lib: lib,
        })
    }

    /// The library file loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// libNVVM's own version (`nvvmVersion`), e.g. (2, 0).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The NVVM IR and debug-metadata versions libNVVM supports (`nvvmIRVersion`).
    pub fn ir_version(&self) -> IrVersion {
        self.ir_version
    }

    /// Verifies `ir` for the default architecture (compute_90).
    ///
    /// # Errors
    /// [`NvvmError`] with libNVVM's log.
    pub fn verify(&self, ir: &str) -> Result<(), NvvmError> {
        self.verify_with(ir, &CompileOptions::default())
    }

    /// Verifies `ir` with `options` (only `-arch` and the extras matter).
    ///
    /// # Errors
    /// [`NvvmError`] with libNVVM's log.
    pub fn verify_with(&self, ir: &str, options: &CompileOptions) -> Result<(), NvvmError> {
        let opts = CompileOptions {
            target: Target::Ptx,
            ..options.clone()
        };
        let args = opts.to_args();
        let kept = result_cache::Entry::new(self, "verify", &args, ir);
        if kept.as_ref().is_some_and(|k| k.load().is_some()) {
            return Ok(());
        }
        let prog = self.program(ir, false)?;
        self.run(&prog, Stage::Verify, self.api.verify, &args)?;
        if let Some(k) = kept {
            k.keep(&[], "");
        }
        Ok(())
    }

    /// Compiles `ir` to PTX text (without the trailing NUL) or LTO IR bytes.
    ///
    /// # Errors
    /// [`NvvmError`] with libNVVM's log.
    pub fn compile(&self, ir: &str, options: &CompileOptions) -> Result<Vec<u8>, NvvmError> {
        self.compile_with_log(ir, options).map(|(bytes, _)| bytes)
    }

    /// Like [`Libnvvm::compile`], also returning libNVVM's log (warnings).
    ///
    /// # Errors
    /// [`NvvmError`] with libNVVM's log.
    pub fn compile_with_log(
        &self,
        ir: &str,
        options: &CompileOptions,
    ) -> Result<(Vec<u8>, String), NvvmError> {
        let args = options.to_args();
        let kept = result_cache::Entry::new(self, "compile", &args, ir);
        if let Some(hit) = kept.as_ref().and_then(result_cache::Entry::load) {
            return Ok(hit);
        }
        let prog = self.program(ir, true)?;
        self.run(&prog, Stage::Compile, self.api.compile, &args)?;
        let mut size = 0usize;
        // SAFETY: `prog` is a live program; out-pointer to a local.
        let code = unsafe { (self.api.result_size)(prog.0, &mut size) };
        self.check(&prog, Stage::Result, code)?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` has the size libNVVM reported.
        let code = unsafe { (self.api.result)(prog.0, buf.as_mut_ptr().cast()) };
        self.check(&prog, Stage::Result, code)?;
        if options.target == Target::Ptx {
            while buf.last() == Some(&0) {
                buf.pop();
            }
        }
        let log = self.log(&prog);
        if let Some(k) = kept {
            k.keep(&buf, &log);
        }
        Ok((buf, log))
    }

    /// A program holding `ir` and, with `link` when `ir` calls into it,
    /// libdevice. Verification leaves libdevice out: libNVVM's verifier
    /// refuses the LLVM intrinsics libdevice's own bodies use
    /// (`llvm.copysign.f32`), which its compiler accepts; the kernel's calls
    /// are checked against their declarations either way.
    fn program(&self, ir: &str, link: bool) -> Result<ProgramGuard<'_>, NvvmError> {
        let mut raw: Program = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        let code = unsafe { (self.api.create_program)(&mut raw) };
        if code != 0 {
            return Err(self.error(Stage::AddModule, code, String::new()));
        }
        let prog = ProgramGuard(raw, self);
        let name = c"module";
        // SAFETY: `ir` is valid for `ir.len()` bytes; the name is NUL-terminated.
        let code =
            unsafe { (self.api.add_module)(prog.0, ir.as_ptr().cast(), ir.len(), name.as_ptr()) };
        self.check(&prog, Stage::AddModule, code)?;
        if link && uses_libdevice(ir) {
            let bitcode = self.libdevice()?;
            let name = c"libdevice";
            // SAFETY: `bitcode` is valid for its length; the name is
            // NUL-terminated. Added lazily, as NVIDIA recommends for
            // libdevice: only the functions the module calls are linked.
            let code = unsafe {
                (self.api.lazy_add_module)(
                    prog.0,
                    bitcode.as_ptr().cast(),
                    bitcode.len(),
                    name.as_ptr(),
                )
            };
            self.check(&prog, Stage::AddModule, code)?;
        }
        Ok(prog)
    }

    /// The path of libdevice (`libdevice.10.bc`), which NVIDIA ships beside
    /// libNVVM: `nvvm/libdevice/` next to `nvvm/lib64/libnvvm.so`.
    pub fn libdevice_path(&self) -> PathBuf {
        let nvvm = self
            .path
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        nvvm.join("libdevice").join("libdevice.10.bc")
    }

    fn libdevice(&self) -> Result<Vec<u8>, NvvmError> {
        let path = self.libdevice_path();
        std::fs::read(&path).map_err(|e| NvvmError {
            stage: Stage::AddModule,
            code: -1,
            status: format!("cannot read libdevice at {}: {e}", path.display()),
            log: String::new(),
        })
    }

    fn run(
        &self,
        prog: &ProgramGuard<'_>,
        stage: Stage,
        f: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvvmResult,
        args: &[String],
    ) -> Result<(), NvvmError> {
        let cstrs: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.replace('\0', "")).unwrap_or_default())
            .collect();
        let ptrs: Vec<*const c_char> = cstrs.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: `ptrs` holds `ptrs.len()` NUL-terminated strings alive across the call.
        let code = unsafe { f(prog.0, ptrs.len() as c_int, ptrs.as_ptr()) };
        self.check(prog, stage, code)
    }

    fn check(
        &self,
        prog: &ProgramGuard<'_>,
        stage: Stage,
        code: NvvmResult,
    ) -> Result<(), NvvmError> {
        if code == 0 {
            Ok(())
        } else {
            Err(self.error(stage, code, self.log(prog)))
        }
    }

    fn error(&self, stage: Stage, code: NvvmResult, log: String) -> NvvmError {
        // SAFETY: nvvmGetErrorString returns a static string for any code.
        let status = unsafe {
            let p = (self.api.get_error_string)(code);
            if p.is_null() {
                format!("error {code}")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        NvvmError {
            stage,
            code,
            status,
            log,
        }
    }

    fn log(&self, prog: &ProgramGuard<'_>) -> String {
        let mut size = 0usize;
        // SAFETY: live program, out-pointer to a local.
        if unsafe { (self.api.log_size)(prog.0, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` has the size libNVVM reported.
        if unsafe { (self.api.log)(prog.0, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        while buf.last() == Some(&0) {
            buf.pop();
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// Destroys the program when dropped.
struct ProgramGuard<'a>(Program, &'a Libnvvm);

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvvmCreateProgram and is destroyed once.
        unsafe { (self.1.api.destroy_program)(&mut self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_names_the_setup_command() {
        let e = LoadError::NotFound {
            tried: vec![(
                "tools folder".to_owned(),
                PathBuf::from("/w/tools/cuda/nvvm/lib64/libnvvm.so"),
            )],
        };
        let msg = e.to_string();
        assert!(msg.contains("bash ci/setup-tools.sh"), "{msg}");
        assert!(
            msg.contains("/w/tools/cuda/nvvm/lib64/libnvvm.so (tools folder)"),
            "{msg}"
        );
    }

    #[test]
    fn options() {
        // Every float option is explicit, with Rust's values, in every
        // constructor: a libNVVM with other defaults cannot change our results.
        let rust = ["-fma=0", "-ftz=0", "-prec-div=1", "-prec-sqrt=1"];
        assert_eq!(
            CompileOptions::default().to_args(),
            [&["-arch=compute_90", "-opt=3"][..], &rust].concat()
        );
        assert_eq!(
            CompileOptions::ptx(90, 0).to_args(),
            [&["-arch=compute_90", "-opt=0"][..], &rust].concat()
        );
        assert_eq!(
            CompileOptions::ltoir(80, 0).to_args(),
            [&["-arch=compute_80", "-opt=0"][..], &rust, &["-gen-lto"]].concat()
        );
        assert_eq!(FloatSemantics::default(), FloatSemantics::RUST);
        assert_eq!(FloatSemantics::RUST.to_args(), rust);
        // The overrides change exactly their own option.
        let o = CompileOptions::ptx(90, 3)
            .with_fma(true)
            .with_ftz(true)
            .with_prec_div(false)
            .with_prec_sqrt(false);
        assert_eq!(
            o.to_args(),
            [
                "-arch=compute_90",
                "-opt=3",
                "-fma=1",
                "-ftz=1",
                "-prec-div=0",
                "-prec-sqrt=0"
            ]
        );
        assert_eq!(
            CompileOptions::ptx(90, 3).with_float(o.float),
            o,
            "with_float sets all four"
        );
    }

    #[test]
    fn versions_and_log() {
        let Some(nvvm) = crate::testing::libnvvm_or_skip("versions_and_log") else {
            return;
        };
        assert_eq!(nvvm.version(), (2, 0));
        assert_eq!(
            (nvvm.ir_version().major, nvvm.ir_version().minor),
            NVVM_IR_VERSION
        );
        let e = nvvm.verify("this is not IR").expect_err("garbage verifies");
        assert_eq!(e.stage, Stage::Verify, "{e}");
        assert!(!e.log.is_empty(), "{e}");
        let bad = "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @f() {\n  ret i32 0\n}\n";
        let e = nvvm
            .compile(bad, &CompileOptions::default())
            .expect_err("bad IR compiles");
        assert!(!e.log.is_empty(), "libNVVM's log is kept: {e}");
    }
}
