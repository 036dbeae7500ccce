//! Binary relations over the events of one execution, as rows of bits.
//!
//! An execution of a litmus test has few events, so a relation is one `u128`
//! per event: row `a` holds the `b`s with `a → b`. Composition, closure and
//! the cat operators are then a handful of word operations per row.

use std::fmt;

/// The most events one execution may have.
pub const MAX_EVENTS: usize = 128;

/// A set of events, one bit each.
pub type Set = u128;

/// The set with only `a`.
#[must_use]
pub fn bit(a: usize) -> Set {
    1u128 << a
}

/// The members of a set, lowest first.
pub fn members(mut s: Set) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (s != 0).then(|| {
            let a = s.trailing_zeros() as usize;
            s &= s - 1;
            a
        })
    })
}

/// A relation over `n` events.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Rel {
    rows: Vec<Set>,
}

impl fmt::Debug for Rel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.pairs()).finish()
    }
}

impl Rel {
    /// The empty relation over `n` events.
    #[must_use]
    pub fn empty(n: usize) -> Self {
        debug_assert!(n <= MAX_EVENTS);
        Rel { rows: vec![0; n] }
    }

    /// The identity on the events of `s`: cat's `[s]`.
    #[must_use]
    pub fn id(n: usize, s: Set) -> Self {
        let mut r = Rel::empty(n);
        for a in members(s) {
            r.rows[a] = bit(a);
        }
        r
    }

    /// Every pair from `a` to `b`: cat's `a * b`.
    #[must_use]
    pub fn product(n: usize, a: Set, b: Set) -> Self {
        let mut r = Rel::empty(n);
        for x in members(a) {
            r.rows[x] = b;
        }
        r
    }

    /// How many events the relation is over.
    #[must_use]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it is over no events.
    #[must_use]
    pub fn is_over_nothing(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds `a → b`.
    pub fn insert(&mut self, a: usize, b: usize) {
        self.rows[a] |= bit(b);
    }

    /// Whether `a → b`.
    #[must_use]
    pub fn contains(&self, a: usize, b: usize) -> bool {
        self.rows[a] & bit(b) != 0
    }

    /// The successors of `a`.
    #[must_use]
    pub fn row(&self, a: usize) -> Set {
        self.rows[a]
    }

    /// Every pair, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(a, &row)| members(row).map(move |b| (a, b)))
    }

    /// Whether there is no pair.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(|&r| r == 0)
    }

    /// `self | other`.
    #[must_use]
    pub fn union(&self, other: &Rel) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .zip(&other.rows)
                .map(|(a, b)| a | b)
                .collect(),
        }
    }

    /// `self & other`.
    #[must_use]
    pub fn inter(&self, other: &Rel) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .zip(&other.rows)
                .map(|(a, b)| a & b)
                .collect(),
        }
    }

    /// `self \ other`.
    #[must_use]
    pub fn minus(&self, other: &Rel) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .zip(&other.rows)
                .map(|(a, b)| a & !b)
                .collect(),
        }
    }

    /// `self^-1`.
    #[must_use]
    pub fn inverse(&self) -> Rel {
        let mut r = Rel::empty(self.len());
        for (a, b) in self.pairs() {
            r.insert(b, a);
        }
        r
    }

    /// `self ; other`.
    #[must_use]
    pub fn seq(&self, other: &Rel) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .map(|&row| members(row).fold(0, |acc, m| acc | other.rows[m]))
                .collect(),
        }
    }

    /// `[dom] ; self ; [ran]`.
    #[must_use]
    pub fn restrict(&self, dom: Set, ran: Set) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .enumerate()
                .map(|(a, &row)| if dom & bit(a) != 0 { row & ran } else { 0 })
                .collect(),
        }
    }

    /// `self?`: with the identity added.
    #[must_use]
    pub fn opt(&self) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .enumerate()
                .map(|(a, &row)| row | bit(a))
                .collect(),
        }
    }

    /// `self \ id`.
    #[must_use]
    pub fn without_id(&self) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .enumerate()
                .map(|(a, &row)| row & !bit(a))
                .collect(),
        }
    }

    /// `self+`: the transitive closure (Warshall, a row at a time).
    #[must_use]
    pub fn plus(&self) -> Rel {
        let mut rows = self.rows.clone();
        for k in 0..rows.len() {
            let via = rows[k];
            let kb = bit(k);
            for row in &mut rows {
                if *row & kb != 0 {
                    *row |= via;
                }
            }
        }
        Rel { rows }
    }

    /// Whether no event relates to itself.
    #[must_use]
    pub fn is_irreflexive(&self) -> bool {
        self.reflexive_events() == 0
    }

    /// The events related to themselves: `a` with `a → a`.
    #[must_use]
    pub fn reflexive_events(&self) -> Set {
        self.rows
            .iter()
            .enumerate()
            .fold(0, |acc, (a, &row)| acc | (row & bit(a)))
    }

    /// The events on a cycle, if any: `a` with `a → a` in `self+`.
    #[must_use]
    pub fn cyclic_events(&self) -> Set {
        self.plus().reflexive_events()
    }

    /// Whether `self+` is irreflexive.
    #[must_use]
    pub fn is_acyclic(&self) -> bool {
        self.cyclic_events() == 0
    }

    /// One cycle through the lowest cyclic event, as a list of events, if any.
    #[must_use]
    pub fn a_cycle(&self) -> Option<Vec<usize>> {
        let start = members(self.cyclic_events()).next()?;
        // Breadth-first search back to `start`, remembering parents.
        let mut parent = vec![usize::MAX; self.len()];
        let mut frontier = vec![start];
        let mut seen = bit(start);
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &a in &frontier {
                for b in members(self.rows[a]) {
                    if b == start {
                        let mut path = vec![a];
                        let mut at = a;
                        while at != start {
                            at = parent[at];
                            path.push(at);
                        }
                        path.reverse();
                        return Some(path);
                    }
                    if seen & bit(b) == 0 {
                        seen |= bit(b);
                        parent[b] = a;
                        next.push(b);
                    }
                }
            }
            frontier = next;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_composition_and_cycles() {
        let mut r = Rel::empty(4);
        r.insert(0, 1);
        r.insert(1, 2);
        assert!(r.plus().contains(0, 2));
        assert!(!r.contains(0, 2));
        assert!(r.is_acyclic());
        assert_eq!(r.seq(&r).pairs().collect::<Vec<_>>(), vec![(0, 2)]);
        r.insert(2, 0);
        assert!(!r.is_acyclic());
        assert_eq!(r.a_cycle(), Some(vec![0, 1, 2]));
        assert_eq!(r.inverse().pairs().count(), 3);
        assert!(r.restrict(bit(0), bit(1)).contains(0, 1));
        assert_eq!(r.restrict(bit(0), bit(2)).pairs().count(), 0);
        assert!(r.opt().contains(3, 3));
    }
}
