//! Code quality against NVIDIA's own compiler: each fixture in [`PAIRS`] is
//! compiled by our path (`compile_driver`, libNVVM at `-opt=3`) and its CUDA
//! C++ twin in `bench/cuda` by NVRTC (plain pointers and `__restrict__`), and
//! each kernel's PTX is measured: the static instruction count of its entry
//! (read with `ptx_reader`) and `ptxas -v`'s figures for `sm_90` (registers,
//! spills, stack frame, local memory).
//!
//! Each compile also runs on the PTX device (`gpu_harness::device::ptx`) with
//! the fixture's buffers and launches (the twins take the same flat
//! parameters, so the same arguments): the dynamic count is every thread's
//! executed instructions, summed, and NVRTC's values must equal ours, so the
//! counts compare code that computes the same thing.
//!
//! Static and dynamic counts and register figures are no timing, but a
//! kernel that needs twice NVRTC's instructions or registers, or spills where
//! NVRTC does not, is worth a look; a gap between the plain and restrict
//! columns shows what aliasing information buys.
//!
//! **Border:** reads our compile path and NVRTC; changes neither.

#![deny(missing_docs)]

pub mod targets;

use std::path::{Path, PathBuf};

use gpu_harness::device::Program;
use gpu_harness::device::ptx::PtxDevice;
use gpu_harness::fixture::Fixture;
use gpu_harness::launch::{launch_fixture_as, read_back};
use serde::Serialize;

/// NVRTC's options: our `compute_90`, and Rust's float semantics (no
/// contraction, subnormals kept, IEEE division and square root), the same
/// four choices our libNVVM path passes, so neither side wins by being less
/// exact.
pub const NVRTC_OPTIONS: [&str; 5] = [
    nvrtc::ARCH_OPTION,
    "--fmad=false",
    "--ftz=false",
    "--prec-div=true",
    "--prec-sqrt=true",
];

/// One fixture and its CUDA C++ twin, `bench/cuda/<fixture>.cu`, whose
/// entries are `<rust_entry>_plain` and, where aliasing can matter,
/// `<rust_entry>_restrict` (one naming rule, so that a row cannot point at
/// another kernel's twin).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The fixture folder under `fixtures/`.
    pub fixture: &'static str,
    /// The Rust entry's name.
    pub rust_entry: &'static str,
    /// Whether the twin has a `__restrict__` variant (kernels with a single
    /// pointer have none).
    pub has_restrict: bool,
}

impl Pair {
    /// The `.cu` file under `bench/cuda/`.
    pub fn cuda_file(&self) -> String {
        format!("{}.cu", self.fixture)
    }

    /// The plain-pointer CUDA entry.
    pub fn plain(&self) -> String {
        format!("{}_plain", self.rust_entry)
    }

    /// The `__restrict__` CUDA entry, where there is one.
    pub fn restrict(&self) -> Option<String> {
        self.has_restrict
            .then(|| format!("{}_restrict", self.rust_entry))
    }
}

const fn pair(fixture: &'static str, rust_entry: &'static str, has_restrict: bool) -> Pair {
    Pair {
        fixture,
        rust_entry,
        has_restrict,
    }
}

/// The kernels written twice.
pub const PAIRS: [Pair; 11] = [
    pair("saxpy", "saxpy", true),
    pair("shared_reduction", "shared_reduction", false),
    pair("atomic_slice_histogram", "histogram", true),
    pair("stencil_3d", "stencil_3d", true),
    pair("warp_reduce", "warp_reduce", true),
    pair("tiled_gemm", "tiled_gemm", true),
    pair("prefix_scan", "prefix_scan", true),
    pair("transpose_shared", "transpose_shared", true),
    pair("softmax_rows", "softmax_rows", true),
    pair("stencil_2d", "stencil_2d", true),
    pair("aes_round", "aes_round", true),
];

/// Why a comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// Our compile path failed.
    #[error(transparent)]
    Ours(#[from] compile_driver::CompileError),
    /// NVRTC could not be loaded.
    #[error(transparent)]
    NvrtcLoad(#[from] nvrtc::LoadError),
    /// NVRTC refused the CUDA twin (the log is in the message).
    #[error(transparent)]
    Nvrtc(#[from] nvrtc::NvrtcError),
    /// A `.cu` file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// `ptx_reader` could not read a PTX.
    #[error("reading the PTX of {what}: {source}")]
    Parse {
        /// Which compile.
        what: String,
        /// Where and why.
        #[source]
        source: ptx_reader::ParseError,
    },
    /// `ptxas -v` failed or printed what we cannot read.
    #[error("ptxas -v on {what}: {source}")]
    Stats {
        /// Which compile.
        what: String,
        /// Why.
        #[source]
        source: nvrtc::stats::StatsError,
    },
    /// The fixture's folder or manifest could not be read.
    #[error(transparent)]
    Fixture(#[from] gpu_harness::fixture::FixtureError),
    /// A launch of the fixture on the PTX device failed.
    #[error("{what} on the PTX device: {source}")]
    Run {
        /// Which compile.
        what: String,
        /// Why.
        #[source]
        source: gpu_harness::launch::LaunchError,
    },
    /// NVRTC's code read back other values than ours on the PTX device: the
    /// twins do not compute the same thing, and their counts compare nothing.
    #[error("{what} reads back other values than our kernel on the PTX device ({first})")]
    ValuesDiffer {
        /// Which compile.
        what: String,
        /// The first differing value.
        first: String,
    },
    /// A kernel the table expects is not in its PTX.
    #[error("{what}: no entry `{entry}` in the PTX or in ptxas's figures")]
    MissingEntry {
        /// Which compile.
        what: String,
        /// The entry.
        entry: String,
    },
}

/// The figures of one kernel as one compiler made it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelFigures {
    /// The entry's name in its PTX.
    pub entry: String,
    /// Instructions in the entry's body (static, not executed).
    pub instructions: usize,
    /// `.func` definitions left in the module (called, not inlined).
    pub funcs: usize,
    /// Instructions in those `.func` bodies.
    pub func_instructions: usize,
    /// Loads from `.global` memory (entry plus surviving functions, static).
    pub global_loads: usize,
    /// Of those, loads through the read-only data path (`ld.global.nc`):
    /// what LLVM emits where it proves the memory unwritten by the kernel
    /// (a `noalias readonly` kernel parameter, a constant global).
    pub nc_loads: usize,
    /// `ptxas -v`: registers per thread.
    pub registers: u32,
    /// `ptxas -v`: spill store bytes (entry plus surviving functions).
    pub spill_stores: u64,
    /// `ptxas -v`: spill load bytes (entry plus surviving functions).
    pub spill_loads: u64,
    /// `ptxas -v`: the entry's stack frame bytes.
    pub stack_frame: u64,
    /// `ptxas -v`: stack including callees ("cumulative stack size").
    pub cumulative_stack: u64,
    /// `ptxas -v`: local memory bytes (older ptxas releases only).
    pub lmem: u64,
    /// `ptxas -v`: static shared memory bytes.
    pub smem: u64,
}

/// One row of the table: a fixture, ours against NVRTC's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The fixture.
    pub fixture: String,
    /// Our compile (libNVVM `-opt=3`).
    pub ours: KernelFigures,
    /// NVRTC, plain pointers.
    pub nvrtc_plain: KernelFigures,
    /// NVRTC, `__restrict__` pointers (where aliasing can matter).
    pub nvrtc_restrict: Option<KernelFigures>,
    /// Thread-instructions each compile executes for the fixture's launches
    /// on the PTX device, after a check that the values agree.
    pub dynamic: Dynamic,
    /// The targets met and missed, and the advantages over plain C++
    /// ([`targets::evaluate`] of the figures above).
    pub standing: targets::Standing,
}

/// Dynamic instruction counts for a fixture's launches: every thread's
/// instructions, summed, on the PTX device (`gpu_harness::device::ptx`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dynamic {
    /// Our PTX.
    pub ours: u64,
    /// NVRTC's plain-pointer twin.
    pub nvrtc_plain: u64,
    /// NVRTC's `__restrict__` twin, where there is one.
    pub nvrtc_restrict: Option<u64>,
}

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// Measures `entry` in `ptx`, which `what` names in errors.
///
/// # Errors
/// [`CompareError::Parse`], [`CompareError::Stats`],
/// [`CompareError::MissingEntry`].
pub fn measure(ptx: &str, entry: &str, what: &str) -> Result<KernelFigures, CompareError> {
    let module = ptx_reader::parse(ptx).map_err(|source| CompareError::Parse {
        what: what.to_owned(),
        source,
    })?;
    let missing = || CompareError::MissingEntry {
        what: what.to_owned(),
        entry: entry.to_owned(),
    };
    let function = module.definition(entry).ok_or_else(missing)?;
    let funcs: Vec<_> = module
        .functions
        .iter()
        .filter(|f| f.defined() && !f.is_entry())
        .collect();
    let stats = nvrtc::stats::ptxas_stats(ptx).map_err(|source| CompareError::Stats {
        what: what.to_owned(),
        source,
    })?;
    let e = stats.function(entry).ok_or_else(missing)?;
    let func_stats = stats
        .functions
        .iter()
        .filter(|f| f.kind == Some(nvrtc::stats::FunctionKind::Func));
    let (mut spill_stores, mut spill_loads) = (e.spill_stores, e.spill_loads);
    for f in func_stats {
        spill_stores += f.spill_stores;
        spill_loads += f.spill_loads;
    }
    let loads = || {
        std::iter::once(function)
            .chain(funcs.iter().copied())
            .flat_map(|f| f.instructions())
            .filter(|i| i.is("ld", &["global"]))
    };
    Ok(KernelFigures {
        entry: entry.to_owned(),
        global_loads: loads().count(),
        nc_loads: loads().filter(|i| i.has_modifier("nc")).count(),
        instructions: function.instructions().count(),
        funcs: funcs.len(),
        func_instructions: funcs.iter().map(|f| f.instructions().count()).sum(),
        registers: e.registers,
        spill_stores,
        spill_loads,
        stack_frame: e.stack_frame,
        cumulative_stack: e.cumulative_stack,
        lmem: e.lmem,
        smem: e.smem,
    })
}

/// NVRTC's PTX for `bench/cuda/<file>` under `root`, with [`NVRTC_OPTIONS`]
/// and `bench/cuda` as an include path (for the twins' shared
/// `rust_twin.h`).
///
/// # Errors
/// [`CompareError::Read`], [`CompareError::NvrtcLoad`], [`CompareError::Nvrtc`].
pub fn nvrtc_ptx(root: &Path, file: &str) -> Result<String, CompareError> {
    let path = root.join("bench/cuda").join(file);
    let source = std::fs::read_to_string(&path).map_err(|source| CompareError::Read {
        path: path.clone(),
        source,
    })?;
    let nvrtc = nvrtc::Nvrtc::shared()?;
    let include = format!("--include-path={}", root.join("bench/cuda").display());
    let options: Vec<&str> = NVRTC_OPTIONS
        .iter()
        .copied()
        .chain([include.as_str()])
        .collect();
    Ok(nvrtc.compile(&source, file, &options)?.text)
}

/// Runs `fixture`'s launches on a fresh PTX device, with the kernel
/// `rust_entry` replaced by `entry` of `ptx` (the twins take the same flat
/// parameters); the readback and the thread-instructions executed.
fn run_on_ptx_device(
    fixture: &Fixture,
    lowered: &mir_lower::Lowered,
    ptx: &str,
    rust_entry: &str,
    entry: &str,
    ir: bool,
) -> Result<(gpu_harness::host::Readback, u64), gpu_harness::launch::LaunchError> {
    let mut dev = PtxDevice::new();
    let program = if ir {
        Program::with_ptx(&lowered.module, ptx)
    } else {
        Program::ptx_only(ptx)
    };
    let rename = |k: &str| {
        if k == rust_entry {
            entry.to_owned()
        } else {
            k.to_owned()
        }
    };
    let bufs = launch_fixture_as(fixture, lowered, &mut dev, &program, &rename)?;
    let out = read_back(fixture, &mut dev, &bufs)?;
    Ok((out, dev.instructions()))
}

/// The first value where `b` differs from `a`, named.
fn first_difference(
    a: &gpu_harness::host::Readback,
    b: &gpu_harness::host::Readback,
) -> Option<String> {
    for ((name, xs), (_, ys)) in a.iter().zip(b) {
        if let Some(i) = (0..xs.len().max(ys.len())).find(|&i| xs.get(i) != ys.get(i)) {
            return Some(format!(
                "{name}[{i}]: ours {:?}, theirs {:?}",
                xs.get(i),
                ys.get(i)
            ));
        }
    }
    None
}

/// The dynamic counts of one pair: our PTX and NVRTC's, each run on the PTX
/// device with the fixture's buffers and launches; NVRTC's values must be
/// ours.
///
/// # Errors
/// [`CompareError::Run`], [`CompareError::ValuesDiffer`].
pub fn dynamic(
    root: &Path,
    pair: &Pair,
    lowered: &mir_lower::Lowered,
    ours_ptx: &str,
    cu_ptx: &str,
) -> Result<Dynamic, CompareError> {
    let fixture = Fixture::load(&root.join("fixtures").join(pair.fixture))?;
    let run = |ptx: &str, entry: &str, ir: bool, what: &str| {
        run_on_ptx_device(&fixture, lowered, ptx, pair.rust_entry, entry, ir).map_err(|source| {
            CompareError::Run {
                what: what.to_owned(),
                source,
            }
        })
    };
    let (want, ours) = run(ours_ptx, pair.rust_entry, true, "our PTX")?;
    let theirs = |entry: &str| -> Result<u64, CompareError> {
        let what = format!("bench/cuda/{} `{entry}`", pair.cuda_file());
        let (got, n) = run(cu_ptx, entry, false, &what)?;
        match first_difference(&want, &got) {
            Some(first) => Err(CompareError::ValuesDiffer { what, first }),
            None => Ok(n),
        }
    };
    Ok(Dynamic {
        ours,
        nvrtc_plain: theirs(&pair.plain())?,
        nvrtc_restrict: pair.restrict().map(|e| theirs(&e)).transpose()?,
    })
}

/// Compiles and measures one pair.
///
/// # Errors
/// Any [`CompareError`].
pub fn compare(root: &Path, pair: &Pair) -> Result<Row, CompareError> {
    compare_keeping_ptx(root, pair).map(|c| c.row)
}

/// A pair's row and the two PTX texts it measured.
#[derive(Clone, Debug)]
pub struct Compared {
    /// The row.
    pub row: Row,
    /// Our PTX (libNVVM `-opt=3`).
    pub ours_ptx: String,
    /// NVRTC's PTX of the twin (both entries).
    pub nvrtc_ptx: String,
}

/// [`compare`], keeping both PTX texts (`compare-nvrtc --ptx-dir`).
///
/// # Errors
/// Any [`CompareError`].
pub fn compare_keeping_ptx(root: &Path, pair: &Pair) -> Result<Compared, CompareError> {
    let kernel = root.join("fixtures").join(pair.fixture).join("kernel.rs");
    let nvvm = compile_driver::libnvvm()?;
    let compiled =
        compile_driver::compile(&kernel, &compile_driver::RustcOptions::default(), nvvm)?;
    let ours_ptx = compiled.artifacts.ptx_o3.clone();
    let ours = measure(
        &ours_ptx,
        pair.rust_entry,
        &format!("fixtures/{}", pair.fixture),
    )?;
    let cu_ptx = nvrtc_ptx(root, &pair.cuda_file())?;
    let what = format!("bench/cuda/{}", pair.cuda_file());
    let nvrtc_plain = measure(&cu_ptx, &pair.plain(), &what)?;
    let nvrtc_restrict = pair
        .restrict()
        .map(|entry| measure(&cu_ptx, &entry, &what))
        .transpose()?;
    let dynamic = dynamic(root, pair, &compiled.lowered, &ours_ptx, &cu_ptx)?;
    let mut row = Row {
        fixture: pair.fixture.to_owned(),
        ours,
        nvrtc_plain,
        nvrtc_restrict,
        dynamic,
        standing: targets::Standing::default(),
    };
    row.standing = targets::evaluate(&row);
    Ok(Compared {
        row,
        ours_ptx,
        nvrtc_ptx: cu_ptx,
    })
}

/// The table for people: one line per fixture and compiler.
pub fn render_table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<24} {:<16} {:>6} {:>7} {:>6} {:>9} {:>7} {:>5} {:>7} {:>7} {:>6} {:>5} {:>5}\n",
        "fixture",
        "compiler",
        "insts",
        "funcs",
        "total",
        "dynamic",
        "nc/ld",
        "regs",
        "spill-s",
        "spill-l",
        "stack",
        "lmem",
        "smem"
    );
    for row in rows {
        let mut line = |who: &str, k: &KernelFigures, dynamic: u64| {
            let funcs = if k.funcs == 0 {
                "-".to_owned()
            } else {
                format!("{}+{}", k.funcs, k.func_instructions)
            };
            out.push_str(&format!(
                "{:<24} {:<16} {:>6} {:>7} {:>6} {:>9} {:>7} {:>5} {:>7} {:>7} {:>6} {:>5} {:>5}\n",
                row.fixture,
                who,
                k.instructions,
                funcs,
                k.instructions + k.func_instructions,
                dynamic,
                format!("{}/{}", k.nc_loads, k.global_loads),
                k.registers,
                k.spill_stores,
                k.spill_loads,
                k.stack_frame,
                k.lmem,
                k.smem
            ));
        };
        let d = &row.dynamic;
        line("ours (libNVVM)", &row.ours, d.ours);
        line("nvrtc plain", &row.nvrtc_plain, d.nvrtc_plain);
        if let Some(r) = &row.nvrtc_restrict {
            line("nvrtc restrict", r, d.nvrtc_restrict.unwrap_or(0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_has_its_files() {
        let root = workspace_root();
        for p in PAIRS {
            assert!(
                root.join("fixtures")
                    .join(p.fixture)
                    .join("kernel.rs")
                    .is_file(),
                "{p:?}"
            );
            let cu = std::fs::read_to_string(root.join("bench/cuda").join(p.cuda_file()))
                .unwrap_or_else(|e| panic!("{p:?}: {e}"));
            for entry in std::iter::once(p.plain()).chain(p.restrict()) {
                assert!(
                    cu.contains(&format!("void {entry}(")),
                    "{} lacks {entry}",
                    p.cuda_file()
                );
            }
        }
    }

    #[test]
    fn the_table_has_a_line_per_compile() {
        let k = KernelFigures {
            entry: "k".to_owned(),
            instructions: 12,
            registers: 8,
            ..Default::default()
        };
        let rows = [Row {
            fixture: "saxpy".to_owned(),
            ours: k.clone(),
            nvrtc_plain: k.clone(),
            nvrtc_restrict: None,
            dynamic: Dynamic::default(),
            standing: targets::Standing::default(),
        }];
        let t = render_table(&rows);
        assert_eq!(t.lines().count(), 3, "{t}");
        assert!(t.contains("ours (libNVVM)"), "{t}");
    }
}
