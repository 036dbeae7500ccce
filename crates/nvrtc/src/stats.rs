//! `ptxas -v` resource figures: what the assembler reports per function
//! (registers, spills, stack frame, local, shared and constant memory). These
//! are the figures that decide occupancy and memory traffic, so they are what
//! a code-quality comparison between two compilers of one kernel reads.
//!
//! The text `ptxas -v` prints (on stderr) looks like:
//!
//! ```text
//! ptxas info    : 0 bytes gmem
//! ptxas info    : Compiling entry function 'saxpy' for 'sm_90'
//! ptxas info    : Function properties for saxpy
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 8 registers, used 1 barriers, 32 bytes smem
//! ```
//!
//! (Older releases and other architectures also print `N bytes lmem` and
//! `N bytes cmem[B]`; a function with a stack gets `N bytes cumulative stack
//! size`.)
//!
//! [`parse`] reads it; [`ptxas_stats`] runs `ptxas` and reads it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The real architecture the figures are taken for (`sm_90`, the machine of
/// our `compute_90` PTX).
pub const STATS_ARCH: &str = "sm_90";

/// Whether a function is a kernel or a device function.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// A `.entry` (ptxas says "Compiling entry function").
    Entry,
    /// A `.func` that survived into the PTX (ptxas says "Function properties"
    /// without compiling it as an entry).
    Func,
}

/// The `ptxas -v` figures of one function. Absent figures are 0, which is
/// what ptxas means by leaving them out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// The PTX name.
    pub name: String,
    /// Entry or device function (`None` only while parsing).
    pub kind: Option<FunctionKind>,
    /// Registers per thread ("Used N registers").
    pub registers: u32,
    /// Named barriers ("used N barriers").
    pub barriers: u32,
    /// Bytes of stack frame per thread.
    pub stack_frame: u64,
    /// Bytes stored to spill slots per thread.
    pub spill_stores: u64,
    /// Bytes loaded from spill slots per thread.
    pub spill_loads: u64,
    /// Bytes of local memory per thread ("N bytes lmem"; older ptxas only,
    /// 12.9 reports the stack frame and the cumulative stack instead).
    pub lmem: u64,
    /// Bytes of stack per thread including every callee ("N bytes cumulative
    /// stack size", printed by ptxas 12.x when there is a stack).
    pub cumulative_stack: u64,
    /// Bytes of static shared memory per block ("N bytes smem").
    pub smem: u64,
    /// Bytes of constant memory, summed over banks ("N bytes cmem[B]";
    /// ptxas 12.9 no longer prints it for sm_90, so it is 0 there).
    pub cmem: u64,
}

/// Every function's figures from one `ptxas -v` run, in the order printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasStats {
    /// Bytes of global memory the module declares ("N bytes gmem").
    pub gmem: u64,
    /// The functions.
    pub functions: Vec<FunctionStats>,
}

impl PtxasStats {
    /// The figures of the function named `name`.
    pub fn function(&self, name: &str) -> Option<&FunctionStats> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The kernels only.
    pub fn entries(&self) -> impl Iterator<Item = &FunctionStats> {
        self.functions
            .iter()
            .filter(|f| f.kind == Some(FunctionKind::Entry))
    }
}

/// Why the figures could not be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    /// No `ptxas` was found.
    #[error(
        "ptxas not found; install it with `{}` or set PTXAS_PATH",
        crate::locate::SETUP_COMMAND
    )]
    NoPtxas,
    /// `ptxas` could not be run, or refused the PTX.
    #[error("ptxas {} failed (exit status {status:?}):\n{log}", path.display())]
    Ptxas {
        /// The executable.
        path: PathBuf,
        /// The exit status, if it ran.
        status: Option<i32>,
        /// Its output (stderr, then stdout), or why it could not run.
        log: String,
    },
    /// A line of the `ptxas -v` output that looked like a figure could not
    /// be read (a format change we must learn about rather than misreport).
    #[error("cannot read ptxas -v line {line}: {text:?}")]
    Parse {
        /// 1-based line number in the output.
        line: usize,
        /// The line.
        text: String,
    },
}

/// Runs `ptxas -v -arch=sm_90` (found by [`crate::locate::find_ptxas`]) on
/// `ptx` and parses its figures.
///
/// # Errors
/// [`StatsError`].
pub fn ptxas_stats(ptx: &str) -> Result<PtxasStats, StatsError> {
    let path = crate::locate::find_ptxas().ok_or(StatsError::NoPtxas)?;
    ptxas_stats_with(&path, ptx, STATS_ARCH)
}

/// Runs the `ptxas` at `ptxas` with `-v -arch={arch}` on `ptx` and parses its
/// figures. The cubin is written to a temporary file and removed.
///
/// # Errors
/// [`StatsError`].
pub fn ptxas_stats_with(ptxas: &Path, ptx: &str, arch: &str) -> Result<PtxasStats, StatsError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem = std::env::temp_dir().join(format!("nvrtc-stats-{}-{n}", std::process::id()));
    let input = stem.with_extension("ptx");
    let output = stem.with_extension("cubin");
    let fail = |status: Option<i32>, log: String| StatsError::Ptxas {
        path: ptxas.to_owned(),
        status,
        log,
    };
    std::fs::write(&input, ptx)
        .map_err(|e| fail(None, format!("cannot write {}: {e}", input.display())))?;
    let result = Command::new(ptxas)
        .arg("-v")
        .arg(format!("-arch={arch}"))
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output();
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    let out = result.map_err(|e| fail(None, format!("cannot run: {e}")))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    if !out.status.success() {
        return Err(fail(out.status.code(), text));
    }
    parse(&text)
}

/// Parses the text `ptxas -v` prints. Lines it does not know (warnings,
/// "Compile time", ...) are skipped; a figure line it cannot read is an error.
///
/// # Errors
/// [`StatsError::Parse`].
pub fn parse(text: &str) -> Result<PtxasStats, StatsError> {
    let mut stats = PtxasStats::default();
    // The function the next figures belong to (ptxas names it first).
    let mut current: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let bad = || StatsError::Parse {
            line: i + 1,
            text: raw.to_owned(),
        };
        let line = raw.trim();
        let info = line
            .strip_prefix("ptxas info")
            .map(|r| r.trim_start().trim_start_matches(':').trim());
        match info {
            Some(rest) => {
                if let Some(name) = rest
                    .strip_prefix("Compiling entry function '")
                    .and_then(|r| r.split('\'').next())
                {
                    current = Some(function_index(&mut stats, name));
                    if let Some(f) = current.map(|c| &mut stats.functions[c]) {
                        f.kind = Some(FunctionKind::Entry);
                    }
                } else if let Some(name) = rest.strip_prefix("Function properties for ") {
                    let idx = function_index(&mut stats, name.trim());
                    let f = &mut stats.functions[idx];
                    if f.kind.is_none() {
                        f.kind = Some(FunctionKind::Func);
                    }
                    current = Some(idx);
                } else if rest.starts_with("Used ") {
                    let idx = current.ok_or_else(bad)?;
                    figures(&mut stats.functions[idx], rest).ok_or_else(bad)?;
                } else if let Some(g) = rest.strip_suffix(" bytes gmem") {
                    stats.gmem = g.trim().parse().map_err(|_| bad())?;
                }
            }
            None if line.contains("bytes stack frame") => {
                let idx = current.ok_or_else(bad)?;
                figures(&mut stats.functions[idx], line).ok_or_else(bad)?;
            }
            None => {}
        }
    }
    Ok(stats)
}

fn function_index(stats: &mut PtxasStats, name: &str) -> usize {
    if let Some(i) = stats.functions.iter().position(|f| f.name == name) {
        return i;
    }
    stats.functions.push(FunctionStats {
        name: name.to_owned(),
        ..Default::default()
    });
    stats.functions.len() - 1
}

/// Reads a comma-separated figure list into `f`; `None` on an unknown item.
fn figures(f: &mut FunctionStats, list: &str) -> Option<()> {
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<&str> = item.split_whitespace().collect();
        match words.as_slice() {
            ["Used", n, "registers"] | ["used", n, "registers"] => f.registers = n.parse().ok()?,
            ["used", n, "barriers"] | ["Used", n, "barriers"] => f.barriers = n.parse().ok()?,
            [n, "bytes", "stack", "frame"] => f.stack_frame = n.parse().ok()?,
            [n, "bytes", "spill", "stores"] => f.spill_stores = n.parse().ok()?,
            [n, "bytes", "spill", "loads"] => f.spill_loads = n.parse().ok()?,
            [n, "bytes", "lmem"] => f.lmem = n.parse().ok()?,
            [n, "bytes", "cumulative", "stack", "size"] => {
                f.cumulative_stack = n.parse().ok()?;
            }
            [n, "bytes", "smem"] => f.smem = n.parse().ok()?,
            [n, "bytes", bank] if bank.starts_with("cmem[") => {
                f.cmem += n.parse::<u64>().ok()?;
            }
            // Figures we do not compare (texture, sampler, surface counts).
            [_, "textures"] | [_, "samplers"] | [_, "surfaces"] => {}
            _ => return None,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `ptxas -v -arch=sm_90` (CUDA 12.9) on a kernel with a
    /// dynamically indexed `int a[256]`.
    const CAPTURED_12_9: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'local_array' for 'sm_90'
ptxas info    : Function properties for local_array
    1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 1024 bytes cumulative stack size
ptxas info    : Compile time = 20.405 ms
";

    #[test]
    fn reads_captured_12_9_output() {
        let s = parse(CAPTURED_12_9).expect("parses");
        assert_eq!(
            s.functions,
            [FunctionStats {
                name: "local_array".to_owned(),
                kind: Some(FunctionKind::Entry),
                registers: 40,
                stack_frame: 1024,
                cumulative_stack: 1024,
                ..Default::default()
            }]
        );
    }

    /// The older and fuller form (lmem and cmem banks, as earlier ptxas
    /// releases print them), with a surviving device function, a kernel with
    /// shared memory and barriers, and a spilling kernel.
    const CAPTURED: &str = "\
ptxas info    : 4 bytes gmem
ptxas info    : Function properties for helper
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function 'reduce' for 'sm_90'
ptxas info    : Function properties for reduce
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'spiller' for 'sm_90'
ptxas info    : Function properties for spiller
    48 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, 48 bytes lmem, 380 bytes cmem[0], 8 bytes cmem[2]
";

    #[test]
    fn reads_captured_output() {
        let s = parse(CAPTURED).expect("parses");
        assert_eq!(s.gmem, 4);
        assert_eq!(s.functions.len(), 3);
        let helper = s.function("helper").expect("helper");
        assert_eq!(helper.kind, Some(FunctionKind::Func));
        assert_eq!(
            (helper.stack_frame, helper.spill_stores, helper.spill_loads),
            (8, 4, 4)
        );
        let reduce = s.function("reduce").expect("reduce");
        assert_eq!(
            reduce,
            &FunctionStats {
                name: "reduce".to_owned(),
                kind: Some(FunctionKind::Entry),
                registers: 10,
                barriers: 1,
                smem: 1024,
                cmem: 368,
                ..Default::default()
            }
        );
        let sp = s.function("spiller").expect("spiller");
        assert_eq!(sp.registers, 255);
        assert_eq!(
            (sp.stack_frame, sp.spill_stores, sp.spill_loads),
            (48, 16, 12)
        );
        assert_eq!(sp.lmem, 48);
        assert_eq!(sp.cmem, 388, "banks summed");
        assert_eq!(
            s.entries().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["reduce", "spiller"]
        );
    }

    #[test]
    fn unknown_figure_is_an_error_not_a_zero() {
        let text = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                    ptxas info    : Used 8 registers, 7 bogons\n";
        let e = parse(text).expect_err("unknown figure read");
        assert_eq!(
            e,
            StatsError::Parse {
                line: 2,
                text: "ptxas info    : Used 8 registers, 7 bogons".to_owned()
            }
        );
        let orphan = "ptxas info    : Used 8 registers\n";
        assert!(parse(orphan).is_err(), "figures before any function");
    }

    #[test]
    fn skips_other_lines() {
        let text = "ptxas warning : something\n\
                    ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                    ptxas info    : Function properties for k\n\
                    \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                    ptxas info    : Used 4 registers, 352 bytes cmem[0]\n\
                    ptxas info    : Compile time = 1.234 ms\n";
        let s = parse(text).expect("parses");
        assert_eq!(s.functions[0].registers, 4);
        assert_eq!(s.functions[0].cmem, 352);
    }
}
