//! The orders the search enumerates: every permutation (the fence-SC
//! order) and every strict partial order on up to
//! [`MAX_WRITES_PER_LOCATION`] writes (PTX's coherence need not be total),
//! computed once per size and cached.

use std::sync::OnceLock;

use crate::search::MAX_WRITES_PER_LOCATION;

/// Calls `visit` with every permutation of `items`.
pub(crate) fn permutations(items: &[usize], visit: &mut dyn FnMut(&[usize])) {
    fn go(items: &mut Vec<usize>, k: usize, visit: &mut dyn FnMut(&[usize])) {
        if k == items.len() {
            visit(items);
            return;
        }
        for i in k..items.len() {
            items.swap(k, i);
            go(items, k + 1, visit);
            items.swap(k, i);
        }
    }
    go(&mut items.to_vec(), 0, visit);
}

/// Every strict partial order on `k` elements, as lists of pairs (transitive).
pub(crate) fn posets(k: usize) -> &'static [Vec<(usize, usize)>] {
    type Posets = OnceLock<Vec<Vec<(usize, usize)>>>;
    static CACHE: [Posets; MAX_WRITES_PER_LOCATION + 1] =
        [const { OnceLock::new() }; MAX_WRITES_PER_LOCATION + 1];
    let k = k.min(MAX_WRITES_PER_LOCATION);
    CACHE[k].get_or_init(|| posets_of(k))
}

/// Every strict partial order on `0..k`, in the order of the bit masks
/// over the pairs `(a, b)`, `a != b`, listed row by row.
///
/// Built by adding one element at a time: a partial order on `0..=e`
/// is one on `0..e` plus the set `below` of elements under `e` (closed
/// downwards), the set `above` over it (closed upwards), disjoint, with
/// everything below `e` under everything above it. Filtering all `2^20`
/// relations on five elements instead took a third of a second in a debug
/// build, uninterruptible by the deadline.
fn posets_of(k: usize) -> Vec<Vec<(usize, usize)>> {
    // Row `a` holds the `b`s with a < b.
    type Rows = [u8; MAX_WRITES_PER_LOCATION];
    let mut orders: Vec<Rows> = vec![[0; MAX_WRITES_PER_LOCATION]];
    for e in 0..k {
        let mut grown = Vec::new();
        for rows in &orders {
            let down_closed = |set: u8| (0..e).all(|c| rows[c] & set == 0 || set & (1 << c) != 0);
            let up_closed = |set: u8| (0..e).all(|u| set & (1 << u) == 0 || rows[u] & !set == 0);
            for below in (0u8..1 << e).filter(|&b| down_closed(b)) {
                for above in (0u8..1 << e).filter(|&a| a & below == 0 && up_closed(a)) {
                    let linked = (0..e).all(|d| below & (1 << d) == 0 || rows[d] & above == above);
                    if !linked {
                        continue;
                    }
                    let mut next = *rows;
                    for d in (0..e).filter(|&d| below & (1 << d) != 0) {
                        next[d] |= 1 << e;
                    }
                    next[e] = above;
                    grown.push(next);
                }
            }
        }
        orders = grown;
    }
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|a| (0..k).filter(move |&b| b != a).map(move |b| (a, b)))
        .collect();
    let mut out: Vec<(u64, Vec<(usize, usize)>)> = orders
        .iter()
        .map(|rows| {
            let mut mask = 0u64;
            let mut list = Vec::new();
            for (i, &(a, b)) in pairs.iter().enumerate() {
                if rows[a] & (1 << b) != 0 {
                    mask |= 1 << i;
                    list.push((a, b));
                }
            }
            (mask, list)
        })
        .collect();
    out.sort_unstable_by_key(|(mask, _)| *mask);
    out.into_iter().map(|(_, list)| list).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poset_counts_are_the_known_ones() {
        // OEIS A001035: labelled posets on 0..5 points.
        let counts: Vec<usize> = (0..=5).map(|k| posets(k).len()).collect();
        assert_eq!(counts, vec![1, 1, 3, 19, 219, 4231]);
    }

    /// The posets by brute force: every relation over the pairs, in mask
    /// order, kept when antisymmetric and transitive.
    fn posets_by_filtering(k: usize) -> Vec<Vec<(usize, usize)>> {
        let pairs: Vec<(usize, usize)> = (0..k)
            .flat_map(|a| (0..k).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        let mut out = Vec::new();
        for mask in 0u64..(1u64 << pairs.len()) {
            let has = |a: usize, b: usize| {
                pairs
                    .iter()
                    .position(|&p| p == (a, b))
                    .is_some_and(|i| mask & (1 << i) != 0)
            };
            let antisymmetric = pairs.iter().all(|&(a, b)| !(has(a, b) && has(b, a)));
            let transitive = pairs
                .iter()
                .all(|&(a, b)| !has(a, b) || (0..k).all(|c| c == a || !has(b, c) || has(a, c)));
            if antisymmetric && transitive {
                out.push(
                    pairs
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, &p)| p)
                        .collect(),
                );
            }
        }
        out
    }

    #[test]
    fn posets_grown_one_element_at_a_time_are_those_found_by_filtering() {
        // Same set, same order (the order decides which witness is shown).
        for k in 0..=4 {
            assert_eq!(posets_of(k), posets_by_filtering(k), "k = {k}");
        }
    }
}
