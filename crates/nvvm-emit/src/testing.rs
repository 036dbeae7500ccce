//! Test helpers shared by every crate whose tests need libNVVM or `ptxas`.
//!
//! The contract: under the README's test command (`bash ci/test.sh`, which exports
//! `REQUIRE_LIBNVVM=1`) a missing libNVVM **fails** the test. Under a bare
//! `cargo test` it prints loudly that the test was not run, and the test returns.
//! `ptxas` is optional: when missing, the assembly check is skipped loudly, unless
//! `REQUIRE_PTXAS=1`.
//!
//! ```no_run
//! #[test]
//! fn compiles() {
//!     let Some(nvvm) = nvvm_emit::testing::libnvvm_or_skip("compiles") else { return };
//!     nvvm.verify("...").unwrap();
//! }
//! ```

use std::sync::OnceLock;

use crate::libnvvm::{CompileOptions, Libnvvm};
use crate::locate::SETUP_COMMAND;
use crate::ptxas::Ptxas;

/// The variable that turns a missing libNVVM into a failure.
pub const REQUIRE_LIBNVVM: &str = "REQUIRE_LIBNVVM";
/// The variable that turns a missing `ptxas` into a failure.
pub const REQUIRE_PTXAS: &str = "REQUIRE_PTXAS";

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether `REQUIRE_LIBNVVM` is set (to anything but empty or `0`).
pub fn libnvvm_required() -> bool {
    flag(REQUIRE_LIBNVVM)
}

/// The shared libNVVM, or `None` after a loud "not run" message when it is missing
/// and `REQUIRE_LIBNVVM` is unset.
///
/// # Panics
/// When libNVVM is missing and `REQUIRE_LIBNVVM=1`.
pub fn libnvvm_or_skip(test: &str) -> Option<&'static Libnvvm> {
    match Libnvvm::shared() {
        Ok(nvvm) => Some(nvvm),
        Err(e) if libnvvm_required() => {
            panic!("{test}: {REQUIRE_LIBNVVM}=1 but libNVVM is missing: {e}")
        }
        Err(e) => {
            not_run(&format!(
                "{test}: libNVVM is missing, so this libNVVM test was NOT run.\n{e}\n\
                 Run `{SETUP_COMMAND}`, or use `bash ci/test.sh`, where a missing libNVVM fails."
            ));
            None
        }
    }
}

/// Prints a "not run" notice straight to the process's stderr. libtest captures
/// `eprintln!` of passing tests, which would hide the notice under a bare
/// `cargo test`; writing to the stderr handle directly is not captured.
fn not_run(message: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n*** NOT RUN: {} ***",
        message.replace('\n', "\n*** ")
    );
}

/// The `ptxas` to use, or `None` after a loud "not run" message when it is
/// missing and `REQUIRE_PTXAS` is unset.
///
/// # Panics
/// When `ptxas` is missing and `REQUIRE_PTXAS=1`.
pub fn ptxas_or_skip(test: &str) -> Option<&'static Ptxas> {
    static PTXAS: OnceLock<Option<Ptxas>> = OnceLock::new();
    match PTXAS.get_or_init(Ptxas::find) {
        Some(p) => Some(p),
        None if flag(REQUIRE_PTXAS) => {
            panic!("{test}: {REQUIRE_PTXAS}=1 but ptxas is missing; run `{SETUP_COMMAND}`")
        }
        None => {
            not_run(&format!(
                "{test}: ptxas is missing, so the sm_90 assembly check was NOT run. Run `{SETUP_COMMAND}`."
            ));
            None
        }
    }
}

/// What [`check_nvvm`] produced.
#[derive(Clone, Debug)]
pub struct NvvmOutputs {
    /// PTX at `-opt=3`.
    pub ptx: String,
    /// PTX at `-opt=0`, where `noinline` helpers survive.
    pub ptx_opt0: String,
    /// LTO IR at `-opt=3`.
    pub ltoir: Vec<u8>,
}

/// Runs `ir` through libNVVM: verify, PTX at `-opt=3` and `-opt=0`, LTO IR; then
/// assembles both PTX files for `sm_{arch}` with `ptxas` when it is present.
/// Returns `None` when libNVVM is missing and not required (see
/// [`libnvvm_or_skip`]).
///
/// # Panics
/// On any failure, with the tool's log and the numbered IR.
pub fn check_nvvm(test: &str, ir: &str, arch: u32) -> Option<NvvmOutputs> {
    let nvvm = libnvvm_or_skip(test)?;
    let fail = |what: &str, log: &dyn std::fmt::Display| -> ! {
        panic!(
            "{test}: {what} failed:\n{log}\n--- NVVM IR ---\n{}",
            numbered(ir)
        )
    };
    if let Err(e) = nvvm.verify_with(ir, &CompileOptions::ptx(arch, 3)) {
        fail("libNVVM verify", &e);
    }
    let ptx = nvvm
        .compile(ir, &CompileOptions::ptx(arch, 3))
        .unwrap_or_else(|e| fail("PTX -opt=3", &e));
    let ptx_opt0 = nvvm
        .compile(ir, &CompileOptions::ptx(arch, 0))
        .unwrap_or_else(|e| fail("PTX -opt=0", &e));
    let ltoir = nvvm
        .compile(ir, &CompileOptions::ltoir(arch, 3))
        .unwrap_or_else(|e| fail("LTOIR", &e));
    if ltoir.is_empty() {
        fail("LTOIR", &"libNVVM returned no bytes");
    }
    if let Some(ptxas) = ptxas_or_skip(test) {
        for (name, text) in [("-opt=3", &ptx), ("-opt=0", &ptx_opt0)] {
            if let Err(e) = ptxas.assemble(text, arch) {
                panic!(
                    "{test}: ptxas sm_{arch} on the {name} PTX failed:\n{e}\n--- PTX ---\n{}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    Some(NvvmOutputs {
        ptx: text(ptx),
        ptx_opt0: text(ptx_opt0),
        ltoir,
    })
}

fn numbered(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}
