//! The launches the refinement check runs: what the MIR and the PTX do not
//! say (thread and block counts, buffer contents), for each kernel, in one
//! table.
//!
//! A launch is small on purpose: every interleaving of the source and every
//! consistent execution of the PTX are enumerated. The values follow each
//! fixture's manifest, scaled down to one or two CTAs.

/// One parameter of the PTX entry, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    /// A pointer to a buffer of `u32`s (`&AtomicU32`, a slice's data, a raw
    /// pointer), with its initial contents.
    Buffer {
        /// The buffer's name (the kernel's parameter name).
        name: String,
        /// Its initial values: one location per element.
        init: Vec<u32>,
        /// Whether no thread writes it (an input, `&[u32]`): its loads are
        /// known values in the compiled program, and a write to it is refused.
        read_only: bool,
    },
    /// The length of the buffer at parameter index `of` (a slice's second half).
    Len {
        /// The buffer's parameter index.
        of: usize,
    },
    /// A scalar argument.
    Scalar(u64),
}

/// A launch of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The fixture (its folder under `fixtures/`).
    pub fixture: String,
    /// The kernel (entry) name.
    pub kernel: String,
    /// Threads per CTA (x).
    pub threads: u32,
    /// CTAs (x).
    pub ctas: u32,
    /// The PTX entry's parameters.
    pub params: Vec<Param>,
}

impl Launch {
    /// The buffers: `(name, initial values)`.
    pub fn buffers(&self) -> impl Iterator<Item = (&str, &[u32])> {
        self.params.iter().filter_map(|p| match p {
            Param::Buffer { name, init, .. } => Some((name.as_str(), init.as_slice())),
            _ => None,
        })
    }
}

fn buffer(name: &str, len: usize) -> Param {
    Param::Buffer {
        name: name.to_string(),
        init: vec![0; len],
        read_only: false,
    }
}

fn input(name: &str, values: Vec<u32>) -> Param {
    Param::Buffer {
        name: name.to_string(),
        init: values,
        read_only: true,
    }
}

/// The kernels the check knows whose source is data-race-free: the
/// command line's default list.
pub const KERNELS: &[&str] = &[
    "atomic_flag",
    "shared_reduction",
    "mp_across_ctas",
    "spin_lock",
    "ticket_lock",
    "spsc_ring",
    "atomic_slice_histogram",
];

/// Kernels the check knows whose source races: the premise fails.
pub const RACY: &[&str] = &["race_message_passing"];

/// The launch of `fixture` with `threads` threads per CTA (its default when
/// `None`); `None` for an unknown fixture.
pub fn launch(fixture: &str, threads: Option<u32>) -> Option<Launch> {
    let (threads, ctas, params) = match fixture {
        // Message passing in one CTA of 64: thread 0 sends, thread 32 receives.
        "atomic_flag" => (
            threads.unwrap_or(64),
            1,
            vec![
                buffer("data", 1),
                buffer("flag", 1),
                buffer("out", 3),
                Param::Len { of: 2 },
            ],
        ),
        // The tree reduction over a SharedArray<u32, 8>, one CTA.
        "shared_reduction" => (
            threads.unwrap_or(8),
            1,
            vec![buffer("out", 4), Param::Len { of: 0 }],
        ),
        // Message passing between two CTAs (the racy one with relaxed flags).
        "mp_across_ctas" | "race_message_passing" => (
            threads.unwrap_or(1),
            2,
            vec![
                buffer("data", 1),
                buffer("flag", 1),
                buffer("out", 1),
                Param::Len { of: 2 },
            ],
        ),
        // The ticket lock across two CTAs, one thread each by default.
        "ticket_lock" => (
            threads.unwrap_or(1),
            2,
            vec![
                buffer("next", 1),
                buffer("serving", 1),
                buffer("counter", 1),
            ],
        ),
        // The ring between threads 0 and 32 of one CTA.
        "spsc_ring" => (
            threads.unwrap_or(33),
            1,
            vec![
                buffer("slots", 2),
                buffer("head", 1),
                buffer("tail", 1),
                buffer("out", 3),
                Param::Len { of: 3 },
            ],
        ),
        // Four inputs (the manifest's iota 7, 12, 17, ...) into two bins with
        // `fetch_add`, across two CTAs.
        "atomic_slice_histogram" => (
            threads.unwrap_or(2),
            2,
            vec![
                input("data", vec![7, 12, 17, 22]),
                Param::Len { of: 0 },
                buffer("bins", 2),
                Param::Len { of: 2 },
            ],
        ),
        // The spin lock across two CTAs, one thread each by default.
        "spin_lock" => (
            threads.unwrap_or(1),
            2,
            vec![buffer("word", 1), buffer("counter", 1)],
        ),
        _ => return None,
    };
    let kernel = match fixture {
        "atomic_slice_histogram" => "histogram",
        other => other,
    };
    Some(Launch {
        fixture: fixture.to_string(),
        kernel: kernel.to_string(),
        threads,
        ctas,
        params,
    })
}
