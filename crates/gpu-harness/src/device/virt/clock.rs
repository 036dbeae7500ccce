//! Vector clocks for the race detector, compressed for GPU launches.
//!
//! A full vector clock has one entry per thread, and a launch has up to a million
//! threads, so one clock per thread would cost the square of that. Two facts
//! make a compact form exact:
//!
//! - Barriers are the usual synchronization, and every thread of a block passes
//!   the same barriers together: a thread's *phase* is how many barriers it has
//!   passed, and after a block's barrier number `g` completes, every thread of
//!   the block knows every event of every thread of the block in phases `< g`.
//!   One number per block, the *generation*, says that.
//! - Other knowledge comes only from release/acquire pairs, and is sparse.
//!
//! So an event of a thread is stamped with an [`Epoch`] (phase, then a counter
//! that release operations advance within the phase), and a [`Clock`] holds
//! generations for some blocks and epochs for some threads, both sparse. A
//! clock knows an event if the event's block generation is past its phase, or
//! the event's thread epoch is at least its epoch. Joins are pointwise maxima,
//! so the compression loses nothing.

/// When an event happened on its thread: `(phase << 32) | counter`, so that
/// epochs order by phase, then by the counter.
pub(crate) type Epoch = u64;

/// The epoch of the `n`-th release interval of phase `phase`.
pub(crate) fn epoch(phase: u32, n: u32) -> Epoch {
    (u64::from(phase) << 32) | u64::from(n)
}

/// The phase of an epoch.
pub(crate) fn phase_of(e: Epoch) -> u32 {
    (e >> 32) as u32
}

/// What one thread knows of the others (or what a release published): sparse
/// block generations and thread epochs, each sorted by its key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Clock {
    /// `(block, generation)`: every event of the block's threads in a phase below
    /// the generation is known.
    gens: Vec<(u32, u32)>,
    /// `(thread, epoch)`: every event of the thread up to the epoch is known.
    threads: Vec<(u32, Epoch)>,
}

/// Raises the value of `key` in the sorted `map` to at least `v`.
fn raise<V: Ord + Copy>(map: &mut Vec<(u32, V)>, key: u32, v: V) {
    match map.binary_search_by_key(&key, |&(k, _)| k) {
        Ok(i) => {
            if map[i].1 < v {
                map[i].1 = v;
            }
        }
        Err(i) => map.insert(i, (key, v)),
    }
}

/// The pointwise maximum of two sorted maps, into `a`.
fn join_map<V: Ord + Copy>(a: &mut Vec<(u32, V)>, b: &[(u32, V)]) {
    if b.is_empty() {
        return;
    }
    if a.is_empty() {
        a.extend_from_slice(b);
        return;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (ka, va) = a[i];
        let (kb, vb) = b[j];
        if ka < kb {
            out.push((ka, va));
            i += 1;
        } else if kb < ka {
            out.push((kb, vb));
            j += 1;
        } else {
            out.push((ka, va.max(vb)));
            i += 1;
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    *a = out;
}

fn lookup<V: Copy>(map: &[(u32, V)], key: u32) -> Option<V> {
    match map {
        [] => None,
        [(k, v)] => (*k == key).then_some(*v),
        _ => map
            .binary_search_by_key(&key, |&(k, _)| k)
            .ok()
            .map(|i| map[i].1),
    }
}

impl Clock {
    /// Whether the clock knows nothing.
    pub fn is_empty(&self) -> bool {
        self.gens.is_empty() && self.threads.is_empty()
    }

    /// Whether the event at `e` of thread `tid`, of block `block`, is known.
    pub fn knows(&self, tid: u32, block: u32, e: Epoch) -> bool {
        lookup(&self.gens, block).is_some_and(|g| phase_of(e) < g)
            || lookup(&self.threads, tid).is_some_and(|t| e <= t)
    }

    /// Learns every event of `block` in a phase below `generation`.
    pub fn raise_gen(&mut self, block: u32, generation: u32) {
        raise(&mut self.gens, block, generation);
    }

    /// Learns every event of `tid` up to `e`.
    pub fn raise_thread(&mut self, tid: u32, e: Epoch) {
        raise(&mut self.threads, tid, e);
    }

    /// Learns everything `other` knows.
    pub fn join(&mut self, other: &Clock) {
        join_map(&mut self.gens, &other.gens);
        join_map(&mut self.threads, &other.threads);
    }

    /// Forgets what a completed barrier of `block` now implies: the block's
    /// generation, and its threads' epochs in phases below `generation`.
    pub fn forget_block(&mut self, block: u32, generation: u32, block_of: impl Fn(u32) -> u32) {
        self.gens.retain(|&(b, _)| b != block);
        self.threads
            .retain(|&(t, e)| !(block_of(t) == block && phase_of(e) < generation));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_are_pointwise_maxima() {
        let mut a = Clock::default();
        a.raise_thread(3, epoch(0, 5));
        a.raise_gen(1, 2);
        let mut b = Clock::default();
        b.raise_thread(3, epoch(0, 2));
        b.raise_thread(1, epoch(1, 0));
        b.raise_gen(0, 4);
        a.join(&b);
        assert!(a.knows(3, 0, epoch(0, 5)));
        assert!(!a.knows(3, 9, epoch(0, 6)));
        assert!(a.knows(1, 9, epoch(1, 0)));
        // Block 0's generation 4 covers phases 0 to 3 of any of its threads.
        assert!(a.knows(7, 0, epoch(3, 99)));
        assert!(!a.knows(7, 0, epoch(4, 0)));
        a.forget_block(0, 4, |_| 0);
        assert!(!a.knows(7, 0, epoch(3, 99)));
        assert!(!a.is_empty());
    }
}
