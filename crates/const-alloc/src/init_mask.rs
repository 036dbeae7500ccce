//! Which bytes of an allocation are initialized.
//!
//! The mask is stored as runs, not as one bit per byte: a constant is almost
//! always initialized everywhere except for a few padding holes, so a 1 MiB
//! table costs one run, and asking whether a range is initialized is a binary
//! search. The representation is canonical (no empty runs, no two neighbouring
//! runs with the same state), so two masks are equal exactly when they mark
//! the same bytes.

use std::ops::Range;

/// Which bytes of an allocation are initialized, as a sequence of runs.
///
/// Invariant: `boundaries` is strictly increasing and every boundary lies in
/// `1..len`; the state flips at each boundary, starting with `first` at 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InitMask {
    len: u64,
    first: bool,
    boundaries: Vec<u64>,
}

impl InitMask {
    /// A mask of `len` bytes that are all initialized (`init == true`) or all
    /// uninitialized.
    pub fn new(len: u64, init: bool) -> Self {
        // An empty mask is always stored as `first == true`, to stay canonical.
        InitMask {
            len,
            first: init || len == 0,
            boundaries: Vec::new(),
        }
    }

    /// A mask with one entry per byte, `true` for initialized.
    pub fn from_bools(bools: impl IntoIterator<Item = bool>) -> Self {
        Self::from_runs(bools.into_iter().map(|b| (1, b)))
    }

    /// A mask from consecutive runs of `(length, initialized)`. Empty runs
    /// and neighbouring runs with the same state are merged.
    pub fn from_runs(runs: impl IntoIterator<Item = (u64, bool)>) -> Self {
        let mut mask = InitMask {
            len: 0,
            first: true,
            boundaries: Vec::new(),
        };
        let mut last: Option<bool> = None;
        for (len, init) in runs {
            if len == 0 {
                continue;
            }
            match last {
                None => mask.first = init,
                Some(prev) if prev != init => mask.boundaries.push(mask.len),
                Some(_) => {}
            }
            last = Some(init);
            mask.len += len;
        }
        mask
    }

    /// The number of bytes the mask covers.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the mask covers no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every byte is initialized.
    pub fn is_all_init(&self) -> bool {
        self.len == 0 || (self.first && self.boundaries.is_empty())
    }

    /// Whether the byte at `offset` is initialized.
    ///
    /// # Panics
    /// If `offset` is not below [`len`](Self::len).
    pub fn is_init(&self, offset: u64) -> bool {
        assert!(
            offset < self.len,
            "offset {offset} outside a mask of {} bytes",
            self.len
        );
        self.state_at(offset).0
    }

    /// Marks `range` as initialized (`init == true`) or uninitialized.
    ///
    /// # Panics
    /// If `range` reaches past [`len`](Self::len).
    pub fn set(&mut self, range: Range<u64>, init: bool) {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "range {range:?} outside a mask of {} bytes",
            self.len
        );
        let before = self.runs_in(0..range.start);
        let after = self.runs_in(range.end..self.len);
        let runs: Vec<(u64, bool)> = before
            .chain(std::iter::once((range.clone(), init)))
            .chain(after)
            .map(|(r, b)| (r.end - r.start, b))
            .collect();
        *self = Self::from_runs(runs);
    }

    /// The first uninitialized byte in `range`, if any.
    ///
    /// # Panics
    /// If `range` reaches past [`len`](Self::len).
    pub fn first_uninit(&self, range: Range<u64>) -> Option<u64> {
        self.runs_in(range)
            .find(|(_, init)| !init)
            .map(|(r, _)| r.start)
    }

    /// The runs of `(byte range, initialized)` in order, covering the mask.
    pub fn runs(&self) -> impl Iterator<Item = (Range<u64>, bool)> + '_ {
        self.runs_in(0..self.len)
    }

    /// The runs of `(byte range, initialized)` that cover `range`, clipped to it.
    ///
    /// # Panics
    /// If `range` reaches past [`len`](Self::len).
    pub fn runs_in(&self, range: Range<u64>) -> impl Iterator<Item = (Range<u64>, bool)> + '_ {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "range {range:?} outside a mask of {} bytes",
            self.len
        );
        let (mut state, mut next) = if range.start < range.end {
            self.state_at(range.start)
        } else {
            (true, self.boundaries.len())
        };
        let mut pos = range.start;
        std::iter::from_fn(move || {
            if pos >= range.end {
                return None;
            }
            let end = self
                .boundaries
                .get(next)
                .map_or(range.end, |&b| b.min(range.end));
            let run = (pos..end, state);
            pos = end;
            state = !state;
            next += 1;
            Some(run)
        })
    }

    /// The state at `offset` and the index of the next boundary after it.
    fn state_at(&self, offset: u64) -> (bool, usize) {
        let idx = self.boundaries.partition_point(|&b| b <= offset);
        (self.first ^ (idx % 2 == 1), idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bools(mask: &InitMask) -> Vec<bool> {
        (0..mask.len()).map(|i| mask.is_init(i)).collect()
    }

    #[test]
    fn set_and_query() {
        let mut m = InitMask::new(10, true);
        assert!(m.is_all_init());
        m.set(2..4, false);
        m.set(7..8, false);
        assert_eq!(
            bools(&m),
            [
                true, true, false, false, true, true, true, false, true, true
            ]
        );
        assert_eq!(m.first_uninit(0..10), Some(2));
        assert_eq!(m.first_uninit(4..7), None);
        assert_eq!(m.first_uninit(5..9), Some(7));
        m.set(0..10, true);
        assert_eq!(m, InitMask::new(10, true));
    }

    #[test]
    fn canonical() {
        let a = InitMask::from_bools([true, false, false, true]);
        let b = InitMask::from_runs([(1, true), (0, false), (1, false), (1, false), (1, true)]);
        assert_eq!(a, b);
        let runs: Vec<_> = a.runs().collect();
        assert_eq!(runs, [(0..1, true), (1..3, false), (3..4, true)]);
        let clipped: Vec<_> = a.runs_in(2..4).collect();
        assert_eq!(clipped, [(2..3, false), (3..4, true)]);
        assert_eq!(a.runs_in(2..2).count(), 0);
    }

    #[test]
    fn empty() {
        let m = InitMask::from_runs([]);
        assert!(m.is_empty() && m.is_all_init());
        assert_eq!(m.runs().count(), 0);
    }
}
