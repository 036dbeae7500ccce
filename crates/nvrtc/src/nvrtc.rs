//! The NVRTC binding, loaded at run time with libloading.
//!
//! Every compile goes through a fresh `nvrtcProgram`, so one [`Nvrtc`] may be
//! shared by threads (NVRTC's API is thread-safe across programs).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

use crate::locate::{self, SETUP_COMMAND, Source};

type Program = *mut c_void;
type NvrtcResult = c_int;

/// The architecture option the comparison compiles for: the same virtual
/// architecture as our libNVVM path (`compute_90`), so the PTX of both
/// compilers targets one machine.
pub const ARCH_OPTION: &str = "-arch=compute_90";

/// The NVRTC functions this crate calls.
struct Api {
    get_error_string: unsafe extern "C" fn(NvrtcResult) -> *const c_char,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult,
    create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> NvrtcResult,
    destroy_program: unsafe extern "C" fn(*mut Program) -> NvrtcResult,
    compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    log: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
}

/// Why NVRTC could not be loaded. Each message names the setup command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No candidate file exists.
    #[error(
        "NVRTC not found; tried {}. Install it with `{SETUP_COMMAND}` (into tools/nvrtc), or set NVRTC_PATH to libnvrtc.so or CUDA_HOME to a CUDA toolkit",
        describe(.tried)
    )]
    NotFound {
        /// The candidates, in lookup order.
        tried: Vec<(String, PathBuf)>,
    },
    /// A candidate exists but could not be opened, or lacks a function.
    #[error(
        "NVRTC at {path} (from {source_name}) could not be loaded: {reason}. Install it with `{SETUP_COMMAND}`, or fix {source_name}"
    )]
    Open {
        /// The file.
        path: PathBuf,
        /// Where the path came from.
        source_name: String,
        /// The loader's message.
        reason: String,
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

/// What NVRTC was asked to do when it failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `nvrtcCreateProgram`.
    Create,
    /// `nvrtcCompileProgram`: the source did not compile.
    Compile,
    /// Reading the PTX back.
    Result,
}

/// An NVRTC failure, with the program log whole (NVRTC's compile errors,
/// with line numbers, are only in the log).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NvrtcError {
    /// An NVRTC call returned an error.
    #[error("NVRTC {stage:?} of {name} failed with {status} ({code}){}", if log.trim().is_empty() { String::new() } else { format!(":\n{}", log.trim_end()) })]
    Call {
        /// The failing step.
        stage: Stage,
        /// The program name given to [`Nvrtc::compile`].
        name: String,
        /// The `nvrtcResult` code.
        code: i32,
        /// NVRTC's name for the code (`NVRTC_ERROR_COMPILATION`, ...).
        status: String,
        /// The program log, whole (empty when NVRTC wrote none).
        log: String,
    },
    /// The source, the name or an option holds a NUL byte, which a C string
    /// cannot carry; nothing was passed to NVRTC, so there is no log.
    #[error("NVRTC input {what} of {name} contains a NUL byte")]
    Nul {
        /// The program name.
        name: String,
        /// Which input (`source`, `name`, `option N`).
        what: String,
    },
}

impl NvrtcError {
    /// NVRTC's program log (empty for [`NvrtcError::Nul`]).
    pub fn log(&self) -> &str {
        match self {
            NvrtcError::Call { log, .. } => log,
            NvrtcError::Nul { .. } => "",
        }
    }
}

/// What [`Nvrtc::compile`] produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptx {
    /// The PTX text, without NVRTC's trailing NUL.
    pub text: String,
    /// The program log of the successful compile (warnings; often empty).
    pub log: String,
}

/// A loaded NVRTC.
pub struct Nvrtc {
    api: Api,
    path: PathBuf,
    version: (i32, i32),
    // Keeps the function pointers in `api` valid; dropped last.
    _lib: Library,
}

impl fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish()
    }
}

impl Nvrtc {
    /// Finds and loads NVRTC (see [`crate::locate`] for the order).
    ///
    /// # Errors
    /// [`LoadError`], whose message names `bash ci/setup-tools.sh`.
    pub fn load() -> Result<Self, LoadError> {
        let candidates = locate::nvrtc_candidates();
        for (source, path) in &candidates {
            if *source == Source::NvrtcPath || path.is_file() {
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

    /// One NVRTC per process, loaded on first use (the library is 100 MB;
    /// loading it once keeps a comparison run fast).
    ///
    /// # Errors
    /// The [`LoadError`] of the first attempt.
    pub fn shared() -> Result<&'static Nvrtc, LoadError> {
        static SHARED: OnceLock<Result<Nvrtc, LoadError>> = OnceLock::new();
        SHARED
            .get_or_init(Self::load)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Loads the NVRTC at `path`.
    ///
    /// # Errors
    /// [`LoadError::Open`].
    pub fn load_path(path: &Path) -> Result<Self, LoadError> {
        Self::load_from(path, &Source::NvrtcPath)
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
        // SAFETY: loading NVRTC runs its initializers, which have no
        // preconditions; the library is NVIDIA's, found where the user or the
        // setup script put it.
        let lib = unsafe { Library::new(path) }.map_err(|e| open_err(e.to_string()))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol's type is the one nvrtc.h declares.
                *unsafe { lib.get($name) }.map_err(|e| open_err(e.to_string()))?
            };
        }
        let api = Api {
            get_error_string: sym!("nvrtcGetErrorString"),
            version: sym!("nvrtcVersion"),
            create_program: sym!("nvrtcCreateProgram"),
            destroy_program: sym!("nvrtcDestroyProgram"),
            compile_program: sym!("nvrtcCompileProgram"),
            ptx_size: sym!("nvrtcGetPTXSize"),
            ptx: sym!("nvrtcGetPTX"),
            log_size: sym!("nvrtcGetProgramLogSize"),
            log: sym!("nvrtcGetProgramLog"),
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: out-pointers to live locals.
        unsafe { (api.version)(&mut major, &mut minor) };
        Ok(Nvrtc {
            api,
            path: path.to_owned(),
            version: (major, minor),
            _lib: lib,
        })
    }

    /// The library file loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// NVRTC's version (`nvrtcVersion`), the CUDA version, e.g. (12, 9).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// Compiles the CUDA C++ `source` (named `name` in NVRTC's messages) with
    /// `options` (for instance [`ARCH_OPTION`]; NVRTC's own default
    /// architecture is older) and returns the PTX.
    ///
    /// # Errors
    /// [`NvrtcError`] with NVRTC's program log.
    pub fn compile<S: AsRef<str>>(
        &self,
        source: &str,
        name: &str,
        options: &[S],
    ) -> Result<Ptx, NvrtcError> {
        let nul = |what: String| NvrtcError::Nul {
            name: name.to_owned(),
            what,
        };
        let c_source = CString::new(source).map_err(|_| nul("source".to_owned()))?;
        let c_name = CString::new(name).map_err(|_| nul("name".to_owned()))?;
        let c_options = options
            .iter()
            .enumerate()
            .map(|(i, o)| CString::new(o.as_ref()).map_err(|_| nul(format!("option {i}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let option_ptrs: Vec<*const c_char> = c_options.iter().map(|c| c.as_ptr()).collect();

        let mut raw: Program = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; source and name are NUL-terminated
        // and outlive the call; no headers (0, null arrays).
        let code = unsafe {
            (self.api.create_program)(
                &mut raw,
                c_source.as_ptr(),
                c_name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if code != 0 {
            return Err(self.error(Stage::Create, name, code, String::new()));
        }
        let prog = ProgramGuard(raw, self);
        let count = c_int::try_from(option_ptrs.len()).unwrap_or(c_int::MAX);
        // SAFETY: `prog` is live; `option_ptrs` holds `count` NUL-terminated
        // strings that outlive the call.
        let code = unsafe { (self.api.compile_program)(prog.0, count, option_ptrs.as_ptr()) };
        if code != 0 {
            return Err(self.error(Stage::Compile, name, code, self.log(&prog)));
        }
        let mut size = 0usize;
        // SAFETY: live program, out-pointer to a local.
        let code = unsafe { (self.api.ptx_size)(prog.0, &mut size) };
        if code != 0 {
            return Err(self.error(Stage::Result, name, code, self.log(&prog)));
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` has the size NVRTC reported.
        let code = unsafe { (self.api.ptx)(prog.0, buf.as_mut_ptr().cast()) };
        if code != 0 {
            return Err(self.error(Stage::Result, name, code, self.log(&prog)));
        }
        while buf.last() == Some(&0) {
            buf.pop();
        }
        Ok(Ptx {
            text: String::from_utf8_lossy(&buf).into_owned(),
            log: self.log(&prog),
        })
    }

    fn error(&self, stage: Stage, name: &str, code: NvrtcResult, log: String) -> NvrtcError {
        // SAFETY: nvrtcGetErrorString returns a static string for any code.
        let status = unsafe {
            let p = (self.api.get_error_string)(code);
            if p.is_null() {
                format!("error {code}")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        NvrtcError::Call {
            stage,
            name: name.to_owned(),
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
        // SAFETY: `buf` has the size NVRTC reported.
        if unsafe { (self.api.log)(prog.0, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        while buf.last() == Some(&0) {
            buf.pop();
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// Destroys the program when dropped, on every path out of a compile.
struct ProgramGuard<'a>(Program, &'a Nvrtc);

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is
        // destroyed once.
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
                PathBuf::from("/w/tools/nvrtc/lib/libnvrtc.so.12"),
            )],
        };
        let msg = e.to_string();
        assert!(msg.contains("bash ci/setup-tools.sh"), "{msg}");
        assert!(
            msg.contains("/w/tools/nvrtc/lib/libnvrtc.so.12 (tools folder)"),
            "{msg}"
        );
    }

    #[test]
    fn errors_carry_the_log() {
        let e = NvrtcError::Call {
            stage: Stage::Compile,
            name: "k.cu".to_owned(),
            code: 6,
            status: "NVRTC_ERROR_COMPILATION".to_owned(),
            log: "k.cu(1): error: identifier \"x\" is undefined\n".to_owned(),
        };
        let msg = e.to_string();
        assert!(msg.contains("k.cu(1): error"), "{msg}");
        assert!(msg.contains("NVRTC_ERROR_COMPILATION"), "{msg}");
        assert_eq!(e.log(), "k.cu(1): error: identifier \"x\" is undefined\n");
    }

    #[test]
    fn compile_errors_and_nul() {
        let Some(nvrtc) = crate::testing::nvrtc_or_skip("compile_errors_and_nul") else {
            return;
        };
        assert_eq!(nvrtc.version().0, 12, "{nvrtc:?}");
        let e = nvrtc
            .compile(
                "__global__ void k() { undefined_name = 1; }",
                "bad.cu",
                &[ARCH_OPTION],
            )
            .expect_err("bad source compiles");
        assert!(
            matches!(
                e,
                NvrtcError::Call {
                    stage: Stage::Compile,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.log().contains("undefined_name"), "{e}");
        let e = nvrtc
            .compile("a\0b", "nul.cu", &[ARCH_OPTION])
            .expect_err("NUL accepted");
        assert!(matches!(e, NvrtcError::Nul { .. }), "{e}");
    }
}
