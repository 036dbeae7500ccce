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
            Param::Buffer { name, init } => Some((name.as_str(), init.as_slice())),
            _ => None,
        })
    }
}

fn buffer(name: &str, len: usize) -> Param {
    Param::Buffer {
        name: name.to_string(),
        init: vec![0; len],
    }
}

/// The kernels the check knows, by fixture name.
pub const KERNELS: &[&str] = &["atomic_flag", "shared_reduction", "spin_lock"];

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
        // The spin lock across two CTAs, one thread each by default.
        "spin_lock" => (
            threads.unwrap_or(1),
            2,
            vec![buffer("word", 1), buffer("counter", 1)],
        ),
        _ => return None,
    };
    Some(Launch {
        fixture: fixture.to_string(),
        kernel: fixture.to_string(),
        threads,
        ctas,
        params,
    })
}
