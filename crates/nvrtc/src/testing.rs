//! Test helpers for every crate whose tests need NVRTC, mirroring
//! `nvvm_emit::testing`.
//!
//! The contract: with `REQUIRE_NVRTC=1` a missing NVRTC **fails** the test.
//! Under a bare `cargo test` it prints loudly that the test was NOT RUN, and
//! the test returns, so a machine without the tools still builds and tests.
//!
//! ```no_run
//! #[test]
//! fn compiles() {
//!     let Some(nvrtc) = nvrtc::testing::nvrtc_or_skip("compiles") else { return };
//!     nvrtc.compile("__global__ void k() {}", "k.cu", &[nvrtc::ARCH_OPTION]).unwrap();
//! }
//! ```

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::locate::SETUP_COMMAND;
use crate::nvrtc::Nvrtc;

/// The variable that turns a missing NVRTC into a failure.
pub const REQUIRE_NVRTC: &str = "REQUIRE_NVRTC";
/// The variable that turns a missing `ptxas` into a failure (shared with
/// `nvvm_emit::testing`).
pub const REQUIRE_PTXAS: &str = "REQUIRE_PTXAS";

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether `REQUIRE_NVRTC` is set (to anything but empty or `0`).
pub fn nvrtc_required() -> bool {
    flag(REQUIRE_NVRTC)
}

/// The shared NVRTC, or `None` after a loud "not run" message when it is
/// missing and `REQUIRE_NVRTC` is unset.
///
/// # Panics
/// When NVRTC is missing and `REQUIRE_NVRTC=1`.
pub fn nvrtc_or_skip(test: &str) -> Option<&'static Nvrtc> {
    match Nvrtc::shared() {
        Ok(n) => Some(n),
        Err(e) if nvrtc_required() => {
            panic!("{test}: {REQUIRE_NVRTC}=1 but NVRTC is missing: {e}")
        }
        Err(e) => {
            not_run(&format!(
                "{test}: NVRTC is missing, so this NVRTC test was NOT run.\n{e}\n\
                 Run `{SETUP_COMMAND}`, or set {REQUIRE_NVRTC}=1 to make this a failure."
            ));
            None
        }
    }
}

/// The `ptxas` to use, or `None` after a loud "not run" message when it is
/// missing and `REQUIRE_PTXAS` is unset.
///
/// # Panics
/// When `ptxas` is missing and `REQUIRE_PTXAS=1`.
pub fn ptxas_or_skip(test: &str) -> Option<&'static PathBuf> {
    static PTXAS: OnceLock<Option<PathBuf>> = OnceLock::new();
    match PTXAS.get_or_init(crate::locate::find_ptxas) {
        Some(p) => Some(p),
        None if flag(REQUIRE_PTXAS) => {
            panic!("{test}: {REQUIRE_PTXAS}=1 but ptxas is missing; run `{SETUP_COMMAND}`")
        }
        None => {
            not_run(&format!(
                "{test}: ptxas is missing, so the ptxas -v figures were NOT taken. Run `{SETUP_COMMAND}`."
            ));
            None
        }
    }
}

/// Prints a "not run" notice straight to the process's stderr: libtest
/// captures `eprintln!` of passing tests, which would hide it.
fn not_run(message: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n*** NOT RUN: {} ***",
        message.replace('\n', "\n*** ")
    );
}
