//! Launch parameters: what a kernel's MIR does not say but its launch does.
//!
//! A launch here is the block size, the grid size (one CTA unless a caller
//! asks for more), the length of each buffer argument, and which buffers
//! the host zero-initializes. The
//! values for the fixtures are copied from each fixture's README (its
//! "Launch" and "Buffers" lines), one table, so that a change there has one
//! place to follow it here.

use std::collections::BTreeMap;

/// A kernel launch, as the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Threads per CTA: the block's x size.
    pub threads: u32,
    /// CTAs: the grid's x size (1 unless [`Launch::with_ctas`]).
    pub ctas: u32,
    /// The length, in elements, of each buffer argument, by parameter name.
    /// `&AtomicU32` arguments are one element and need no entry.
    pub lens: BTreeMap<String, u32>,
    /// Buffer arguments that the host zero-initializes before the launch.
    pub zero_init: Vec<String>,
    /// Buffer arguments the host fills with these values before the launch
    /// (one per element).
    pub values: BTreeMap<String, Vec<u32>>,
    /// How a loop without a constant bound (a spin loop) is extracted: `None`
    /// as its first test only (a thread that would iterate again is cut off
    /// and skips the rest of its region), `Some(n)` as a `loop` of at most
    /// `n` iterations (a run that needs more does not complete).
    pub spin_bound: Option<u32>,
}

impl Launch {
    /// A launch of `threads` threads with the given buffer lengths.
    pub fn new(threads: u32, lens: &[(&str, u32)], zero_init: &[&str]) -> Launch {
        Launch {
            threads,
            ctas: 1,
            lens: lens.iter().map(|(n, l)| (n.to_string(), *l)).collect(),
            zero_init: zero_init.iter().map(|n| n.to_string()).collect(),
            values: BTreeMap::new(),
            spin_bound: None,
        }
    }

    /// The same launch with the buffer `name` filled with `values`.
    pub fn with_values(mut self, name: &str, values: &[u32]) -> Launch {
        self.values.insert(name.to_string(), values.to_vec());
        self
    }

    /// The same launch with `ctas` CTAs of `threads` threads each.
    pub fn with_ctas(mut self, ctas: u32) -> Launch {
        self.ctas = ctas.max(1);
        self
    }

    /// The same launch with spin loops extracted as bounded loops.
    pub fn with_spin_bound(mut self, bound: u32) -> Launch {
        self.spin_bound = Some(bound);
        self
    }
}

/// The fixtures that extraction is checked on.
pub const FIXTURES: &[&str] = &["saxpy", "atomic_flag", "shared_reduction"];

/// The launch of a fixture, from its README; `None` for an unknown name.
pub fn launch(fixture: &str) -> Option<Launch> {
    Some(match fixture {
        // grid (2, 1), block (128, 1); x and y hold 256 f32 each.
        "saxpy" => Launch::new(128, &[("x", 256), ("y", 256)], &[]),
        // grid (1, 1), block (64, 1); data and flag zero-initialized, out 3 × u32.
        "atomic_flag" => Launch::new(64, &[("out", 3)], &["data", "flag", "out"]),
        // grid (4, 1), block (8, 1); out is one u32 per block.
        "shared_reduction" => Launch::new(8, &[("out", 4)], &["out"]),
        _ => return None,
    })
}

/// The fixture directory of this checkout (`<workspace>/fixtures`).
pub fn default_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}
