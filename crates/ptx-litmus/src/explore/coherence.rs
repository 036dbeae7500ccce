//! Where a new write goes in coherence: every placement relative to the
//! writes already there, each a strict partial order, none built to be
//! discarded.

use super::*;

/// Where an earlier write goes relative to a new one in coherence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Before,
    After,
    Unordered,
}

impl Explorer<'_> {
    /// Every placement of the new write `w` in its location's coherence: for
    /// each earlier write, before `w`, after `w`, or (when the two are not
    /// morally strong) unordered with it, such that the result is a strict
    /// partial order that leaves the earlier writes' order as it was. The
    /// writes are decided in an order compatible with `co`, and a choice
    /// that transitivity would contradict is never made, so every placement
    /// comes out once and none is built to be thrown away.
    pub(super) fn place_in_co(&self, g: &Graph, w: Ev) -> Vec<Graph> {
        let Some(loc) = self.event(g, w).and_then(|e| e.loc) else {
            return vec![g.clone()];
        };
        let mut others: Vec<Ev> = self
            .writes_to(g, loc)
            .into_iter()
            .map(|(e, _)| e)
            .filter(|&e| e != w && !matches!(e, Ev::Init(_)))
            .collect();
        // `co` is transitively closed: fewer predecessors first is a
        // topological order.
        let all = others.clone();
        let preds = |e: Ev| -> Vec<Ev> {
            all.iter()
                .copied()
                .filter(|&p| g.co.contains(&(p, e)))
                .collect()
        };
        others.sort_by_key(|&e| preds(e).len());
        let preds: Vec<Vec<Ev>> = others.iter().map(|&e| preds(e)).collect();
        let strong: Vec<bool> = others
            .iter()
            .map(|&e| self.morally_strong(g, e, w))
            .collect();
        let mut out = Vec::new();
        let mut side = vec![Side::Unordered; others.len()];
        self.place_from(g, w, &others, &preds, &strong, 0, &mut side, &mut out);
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn place_from(
        &self,
        g: &Graph,
        w: Ev,
        others: &[Ev],
        preds: &[Vec<Ev>],
        strong: &[bool],
        i: usize,
        side: &mut Vec<Side>,
        out: &mut Vec<Graph>,
    ) {
        if i == others.len() {
            let mut child = g.clone();
            for (k, &e) in others.iter().enumerate() {
                match side[k] {
                    Side::Before => {
                        child.co.insert((e, w));
                    }
                    Side::After => {
                        child.co.insert((w, e));
                    }
                    Side::Unordered => {}
                }
            }
            debug_assert!(close(&child.co, &g.co, w).is_some_and(|c| c == child.co));
            out.push(child);
            return;
        }
        let e = others[i];
        let of = |x: Ev| others.iter().position(|&o| o == x).map(|k| side[k]);
        let any_after = side[..i].contains(&Side::After);
        let pred_after = preds[i].iter().any(|&p| of(p) == Some(Side::After));
        let preds_before = preds[i].iter().all(|&p| of(p) == Some(Side::Before));
        // Before `w`: nothing decided is after `w` (it would have to follow
        // `e`, and it comes earlier in the order), and `e`'s predecessors are
        // before `w` too.
        let mut options = Vec::new();
        if !any_after && preds_before {
            options.push(Side::Before);
        }
        // After `w`: every write before `w` precedes `e` already.
        let befores_precede = others[..i]
            .iter()
            .enumerate()
            .filter(|(k, _)| side[*k] == Side::Before)
            .all(|(_, &b)| g.co.contains(&(b, e)));
        if befores_precede {
            options.push(Side::After);
        }
        // Unordered: only writes that are not morally strong, and not after
        // a write that is after `w`.
        if !strong[i] && !pred_after {
            options.push(Side::Unordered);
        }
        if pred_after {
            options.retain(|s| *s == Side::After);
        }
        for choice in options {
            side[i] = choice;
            self.place_from(g, w, others, preds, strong, i + 1, side, out);
        }
        side[i] = Side::Unordered;
    }

    /// Whether two events are morally strong: in program order, or both
    /// strong (not `.weak`) with each one's scope including the other's
    /// thread.
    fn morally_strong(&self, g: &Graph, a: Ev, b: Ev) -> bool {
        let (Ev::At(ta, _), Ev::At(tb, _)) = (a, b) else {
            return false;
        };
        if ta == tb {
            return true;
        }
        let (Some(ea), Some(eb)) = (self.event(g, a), self.event(g, b)) else {
            return false;
        };
        let (pa, pb) = (
            &self.test.threads[ta as usize],
            &self.test.threads[tb as usize],
        );
        match (ea.scope, eb.scope) {
            (Some(sa), Some(sb)) => pa.shares(pb, sa) && pb.shares(pa, sb),
            _ => false,
        }
    }
}

/// The transitive closure of `co`, if it is a strict partial order that
/// relates the writes other than `w` exactly as `before` did.
fn close(
    co: &BTreeSet<(Ev, Ev)>,
    before: &BTreeSet<(Ev, Ev)>,
    w: Ev,
) -> Option<BTreeSet<(Ev, Ev)>> {
    let mut closed = co.clone();
    loop {
        let mut added = Vec::new();
        for &(a, b) in &closed {
            for &(c, d) in &closed {
                if b == c && !closed.contains(&(a, d)) {
                    added.push((a, d));
                }
            }
        }
        if added.is_empty() {
            break;
        }
        closed.extend(added);
    }
    if closed.iter().any(|(a, b)| a == b) {
        return None;
    }
    let old_changed = closed
        .iter()
        .any(|&(a, b)| a != w && b != w && !before.contains(&(a, b)));
    (!old_changed).then_some(closed)
}
