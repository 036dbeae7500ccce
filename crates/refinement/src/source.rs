//! The source side: the kernel's MIR, extracted into the small model's
//! language, explored over every interleaving with the happens-before race
//! check (`memory_model::drf`).

use std::collections::{BTreeMap, BTreeSet};

use memory_model::drf::{self, Limits, Verdict};
use memory_model::lang::{Loc, Program, Space};

use crate::Final;
use crate::launch::Launch;

/// Why the source side could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Extraction failed.
    #[error("extraction: {0}")]
    Extract(#[from] kernel_extract::ExtractError),
    /// The exploration ran out of states or time.
    #[error("{0}")]
    Exhausted(#[from] drf::Exhausted),
}

/// What the source side found.
#[derive(Clone, Debug)]
pub struct Source {
    /// The extracted program.
    pub program: Program,
    /// Extraction warnings, as text.
    pub warnings: Vec<String>,
    /// The exploration's report.
    pub report: drf::Report,
    /// The outcomes by location name (`out[0]`), when race-free.
    pub outcomes: Option<BTreeSet<Final>>,
}

/// The extraction's launch for `launch`, with spin loops bounded at
/// `spin_bound` iterations.
pub fn extract_launch(
    launch: &Launch,
    spin_bound: u32,
) -> Result<kernel_extract::Launch, SourceError> {
    let lens: Vec<(&str, u32)> = launch
        .buffers()
        .map(|(name, init)| (name, init.len() as u32))
        .collect();
    let zero: Vec<&str> = launch
        .buffers()
        .filter(|(_, init)| init.iter().all(|v| *v == 0))
        .map(|(name, _)| name)
        .collect();
    let mut out = kernel_extract::Launch::new(launch.threads, &lens, &zero)
        .with_ctas(launch.ctas)
        .with_spin_bound(spin_bound);
    for (name, init) in launch.buffers() {
        if init.iter().any(|v| *v != 0) {
            out = out.with_values(name, init);
        }
    }
    Ok(out)
}

/// Names a global location `buffer[i]`: the extraction lays buffers out one
/// after another and names each one's first address.
pub fn location_name(program: &Program, launch: &Launch, loc: Loc) -> String {
    debug_assert_eq!(loc.space, Space::Global);
    let start = program
        .names
        .range(..=loc.addr)
        .next_back()
        .map(|(a, n)| (*a, n.clone()));
    match start {
        Some((a, name)) if launch.buffers().any(|(b, _)| b == name) => {
            format!("{name}[{}]", loc.addr - a)
        }
        _ => program.loc_name(loc),
    }
}

/// Extracts the kernel from `krate` (spin loops bounded at `spin_bound`
/// iterations) and explores it.
///
/// # Errors
/// Extraction failing, a launch the source cannot model, or the exploration
/// stopping at its limits.
pub fn check(
    krate: &mir_import::Crate,
    launch: &Launch,
    spin_bound: u32,
    limits: &Limits,
) -> Result<Source, SourceError> {
    let extraction =
        kernel_extract::extract_crate(krate, &launch.kernel, &extract_launch(launch, spin_bound)?)?;
    let program = extraction.program;
    let report = drf::explore(&program, limits)?;
    let outcomes = match &report.verdict {
        Verdict::RaceFree { outcomes } => Some(
            outcomes
                .iter()
                .map(|o| {
                    o.iter()
                        .map(|(l, v)| (location_name(&program, launch, *l), i64::from(*v)))
                        .collect::<BTreeMap<_, _>>()
                })
                .collect(),
        ),
        Verdict::Race(_) => None,
    };
    Ok(Source {
        warnings: extraction
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect(),
        program,
        report,
        outcomes,
    })
}
