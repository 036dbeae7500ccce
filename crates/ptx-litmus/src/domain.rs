//! The value domain of each location: every value some execution can store
//! there, grown from the initial values to a fixed point.
//!
//! Guessing from every value a path *could* store does not converge: an
//! `atom.add` that reads 2 stores 3, which another could read, and so on. A
//! value enters the domain only when it is stored in a combination of paths
//! whose every read can read some write of its value with `rf | dep`
//! acyclic. That is necessary for consistency (the No-Thin-Air axiom), so no
//! consistent execution's value is missed, and a chain of increments stops
//! where the program runs out of writes. Paths cut by the loop bound take
//! part here (their stores happen before the cut), though they are never
//! counted as executions.

use std::collections::BTreeSet;

use crate::budget::{Deadline, NoVerdict, Stage};
use crate::error::Limit;
use crate::paths::{self, Path, Tags, ThreadPaths};
use crate::rel::{MAX_EVENTS, Rel};
use crate::syntax::Test;

/// How often the domains may grow before the checker gives up.
const MAX_ROUNDS: usize = 16;
/// The most values a location may hold.
const MAX_DOMAIN: usize = 64;

/// The value domains at their fixed point, and every thread's paths under
/// them.
#[derive(Clone, Debug)]
pub struct FixedPoint {
    /// Each location's values.
    pub domains: Vec<BTreeSet<i64>>,
    /// Each thread's paths.
    pub threads: Vec<ThreadPaths>,
    /// The rounds it took (the last one found nothing new).
    pub rounds: usize,
}

/// The domains and every thread's paths under them.
///
/// # Errors
/// [`NoVerdict::Error`] when a thread cannot be run, or the domains do not
/// converge; [`NoVerdict::Timeout`] when `deadline` passes first, with the
/// rounds completed.
pub fn fixed_point(test: &Test, bound: u32, deadline: &Deadline) -> Result<FixedPoint, NoVerdict> {
    let initial: Vec<BTreeSet<i64>> = test
        .locations
        .iter()
        .map(|(_, v)| BTreeSet::from([*v]))
        .collect();
    let mut domains = initial.clone();
    for round in 0..MAX_ROUNDS {
        let rounds_done = |e: NoVerdict| match e {
            NoVerdict::Timeout(mut t) => {
                t.progress.domain_rounds = round;
                NoVerdict::Timeout(t)
            }
            e @ NoVerdict::Error(_) => e,
        };
        let threads = (0..test.threads.len())
            .map(|t| paths::thread_paths(test, t, &domains, bound, deadline))
            .collect::<Result<Vec<_>, _>>()
            .map_err(rounds_done)?;
        let mut next = initial.clone();
        // Cut paths count here: a spin loop's first, failing read must not
        // keep the store that ends it out of the domain.
        let with_cut: Vec<ThreadPaths> = threads
            .iter()
            .map(|t| ThreadPaths {
                complete: t.complete.iter().chain(&t.cut).cloned().collect(),
                cut: Vec::new(),
            })
            .collect();
        for_each_combination(&with_cut, &mut |combo| {
            deadline.check(Stage::Domains)?;
            if justified(test, combo, deadline)? {
                for path in combo {
                    for e in path.events.iter().filter(|e| e.tags.contains(Tags::W)) {
                        if let Some(loc) = e.loc {
                            next[loc.0 as usize].insert(e.value);
                        }
                    }
                }
            }
            Ok(())
        })
        .map_err(rounds_done)?;
        let mut grown = false;
        for (d, n) in domains.iter_mut().zip(&next) {
            let before = d.len();
            d.extend(n);
            grown |= d.len() > before;
        }
        // The paths were run under the domains as they were; if nothing new
        // was stored, they are the paths under the fixed point.
        if !grown {
            return Ok(FixedPoint {
                domains,
                threads,
                rounds: round + 1,
            });
        }
        if let Some((l, _)) = domains
            .iter()
            .enumerate()
            .find(|(_, d)| d.len() > MAX_DOMAIN)
        {
            return Err(Limit::Domain {
                location: test.locations[l].0.clone(),
                max: MAX_DOMAIN,
            }
            .into());
        }
    }
    Err(Limit::NoFixedPoint { rounds: MAX_ROUNDS }.into())
}

/// Calls `visit` with every choice of one complete path per thread, until
/// it returns an error (a timeout, or a test the search cannot handle).
///
/// # Errors
/// The first error `visit` returns.
pub fn for_each_combination(
    threads: &[ThreadPaths],
    visit: &mut dyn FnMut(&[&Path]) -> Result<(), NoVerdict>,
) -> Result<(), NoVerdict> {
    if threads.iter().any(|t| t.complete.is_empty()) {
        return Ok(());
    }
    let mut choice = vec![0usize; threads.len()];
    loop {
        let combo: Vec<&Path> = choice
            .iter()
            .zip(threads)
            .map(|(&i, t)| &t.complete[i])
            .collect();
        visit(&combo)?;
        if !next_choice(&mut choice, threads.iter().map(|t| t.complete.len())) {
            return Ok(());
        }
    }
}

/// How many combinations [`for_each_combination`] visits.
#[must_use]
pub fn combination_count(threads: &[ThreadPaths]) -> u64 {
    threads
        .iter()
        .map(|t| t.complete.len() as u64)
        .fold(1, u64::saturating_mul)
}

/// Advances an odometer over choices of the given sizes; false when it wraps
/// around to all zeros.
pub(super) fn next_choice(choice: &mut [usize], sizes: impl Iterator<Item = usize>) -> bool {
    for (c, size) in choice.iter_mut().zip(sizes) {
        *c += 1;
        if *c < size {
            return true;
        }
        *c = 0;
    }
    false
}

/// Whether every read of the combination can read a write of its location
/// and value, with `rf | dep` acyclic.
///
/// The choices of writes multiply over the reads, so this loop alone can
/// outlast the deadline; it ticks it.
fn justified(test: &Test, combo: &[&Path], deadline: &Deadline) -> Result<bool, NoVerdict> {
    // Initial writes first, then each path's events.
    let mut loc_value: Vec<(Option<u32>, i64, bool)> = test
        .locations
        .iter()
        .enumerate()
        .map(|(l, (_, v))| (u32::try_from(l).ok(), *v, true))
        .collect();
    let mut dep_pairs = Vec::new();
    let mut reads = Vec::new();
    for path in combo {
        let o = loc_value.len();
        for (i, e) in path.events.iter().enumerate() {
            if e.tags.contains(Tags::R) {
                reads.push(o + i);
            }
            loc_value.push((e.loc.map(|l| l.0), e.value, e.tags.contains(Tags::W)));
            for d in super::rel::members(path.deps[i]) {
                dep_pairs.push((o + d, o + i));
            }
        }
    }
    let n = loc_value.len();
    if n > MAX_EVENTS {
        // Too big to enumerate; the search reports it.
        return Ok(true);
    }
    let options: Vec<Vec<usize>> = reads
        .iter()
        .map(|&r| {
            (0..n)
                .filter(|&w| {
                    loc_value[w].2
                        && loc_value[w].0 == loc_value[r].0
                        && loc_value[w].1 == loc_value[r].1
                })
                .collect()
        })
        .collect();
    if options.iter().any(Vec::is_empty) {
        return Ok(false);
    }
    let mut dep = Rel::empty(n);
    for (a, b) in dep_pairs {
        dep.insert(a, b);
    }
    let mut choice = vec![0usize; reads.len()];
    loop {
        deadline.tick(Stage::Domains)?;
        let mut g = dep.clone();
        for (k, &r) in reads.iter().enumerate() {
            g.insert(options[k][choice[k]], r);
        }
        if g.is_acyclic() {
            return Ok(true);
        }
        if !next_choice(&mut choice, options.iter().map(Vec::len)) {
            return Ok(false);
        }
    }
}
