//! Who may move: a thread waiting at a barrier, and a thread whose next
//! access conflicts with nothing another thread may do before it (then it
//! runs alone at that state).

use super::*;

pub(super) fn accesses(instr: &Instr) -> Option<(Loc, bool)> {
    match *instr {
        Instr::Load { loc, .. } => Some((loc, false)),
        Instr::Store { loc, .. } | Instr::Atom { loc, .. } | Instr::Red { loc, .. } => {
            Some((loc, true))
        }
        _ => None,
    }
}

fn successors(instr: &Instr, at: usize, labels: &BTreeMap<Label, usize>) -> Vec<usize> {
    match instr {
        Instr::Goto(l) => labels.get(l).copied().into_iter().collect(),
        Instr::Branch { target, .. } => {
            let mut out = vec![at + 1];
            out.extend(labels.get(target).copied());
            out
        }
        _ => vec![at + 1],
    }
}

impl Explorer<'_> {
    /// Whether `t` has just executed a barrier (`sync`, not `arrive`) that
    /// some barrier instruction of its instance, in its CTA and with its id,
    /// has not reached: it waits there. The instruction-level reading of
    /// [`crate::search`]: barriers of one instance in one CTA are one barrier.
    pub(super) fn waiting(&self, g: &Graph, t: usize) -> bool {
        let Some(ua) = g.threads[t].s.path.events.last().and_then(|e| e.barrier) else {
            return false;
        };
        if ua.arrive {
            return false;
        }
        let me = &self.test.threads[t];
        if self.barriers == BarrierMatching::ByCount {
            let k = usize::try_from(ua.instance).unwrap_or(usize::MAX);
            return g.threads.iter().enumerate().any(|(u, other)| {
                me.shares(&self.test.threads[u], crate::syntax::Scope::Cta)
                    && barrier_count(&other.s) < k
            });
        }
        self.test.threads.iter().enumerate().any(|(u, other)| {
            me.shares(other, crate::syntax::Scope::Cta)
                && other.code.iter().enumerate().any(|(line, l)| {
                    let Instr::Barrier { instance, id, .. } = l.instr else {
                        return false;
                    };
                    let same_id = match (id, ua.id) {
                        (None, None) => true,
                        (Some(crate::syntax::Operand::Const(v)), Some(x)) => v == x,
                        _ => false,
                    };
                    instance == ua.instance
                        && same_id
                        && !g.threads[u]
                            .s
                            .path
                            .events
                            .iter()
                            .any(|e| e.line == line && e.barrier.is_some())
                })
        })
    }

    /// Whether `t`'s next instruction conflicts with nothing that another
    /// thread may do before it.
    pub(super) fn independent(&self, g: &Graph, t: usize, s: &State) -> bool {
        let Some((loc, write)) = accesses(&self.test.threads[t].code[s.pc].instr) else {
            return true;
        };
        (0..g.threads.len()).all(|u| {
            u == t || g.threads[u].status == Status::Done || !self.may_conflict(g, t, u, loc, write)
        })
    }

    /// Whether `t` still has to reach a `sync` barrier instruction of
    /// `instance` with the id `id` (an operand, compared as `search` does):
    /// then no barrier of that instance in `t`'s CTA completes before `t`'s
    /// next event.
    fn holds_back(&self, g: &Graph, t: usize, instance: i64, id: Option<Option<i64>>) -> bool {
        let path = &g.threads[t].s.path;
        if self.barriers == BarrierMatching::ByCount {
            return (barrier_count(&g.threads[t].s) as i64) < instance;
        }
        self.test.threads[t]
            .code
            .iter()
            .enumerate()
            .any(|(line, l)| {
                let Instr::Barrier {
                    arrive: false,
                    instance: i,
                    id: mine,
                    ..
                } = l.instr
                else {
                    return false;
                };
                let same = match (mine, id) {
                    (None, None) => true,
                    (Some(crate::syntax::Operand::Const(v)), Some(Some(x))) => v == x,
                    _ => false,
                };
                i == instance
                    && same
                    && !path
                        .events
                        .iter()
                        .any(|e| e.line == line && e.barrier.is_some())
            })
    }

    /// Whether thread `u` may access `loc` in conflict with `t` (one of the
    /// two writes) before `t`'s next event: along `u`'s code from where it
    /// is, up to a barrier that `t` holds back when both share a CTA.
    fn may_conflict(&self, g: &Graph, t: usize, u: usize, loc: Loc, write: bool) -> bool {
        let same_cta =
            self.test.threads[t].shares(&self.test.threads[u], crate::syntax::Scope::Cta);
        let held = |instr: &Instr| match *instr {
            Instr::Barrier {
                arrive: false,
                instance,
                id,
                ..
            } => {
                let id = id.map(|op| match op {
                    crate::syntax::Operand::Const(v) => Some(v),
                    crate::syntax::Operand::Reg(_) => None,
                });
                same_cta && self.holds_back(g, t, instance, id)
            }
            _ => false,
        };
        // Waiting at a barrier that `t` holds back: `u` cannot move.
        if let Some(b) = g.threads[u].s.path.events.last().and_then(|e| e.barrier)
            && self.waiting(g, u)
            && !b.arrive
            && same_cta
            && self.holds_back(g, t, b.instance, b.id.map(Some))
        {
            return false;
        }
        let code = &self.test.threads[u].code;
        let mut seen = vec![false; code.len()];
        let mut stack = vec![g.threads[u].s.pc];
        while let Some(pc) = stack.pop() {
            if pc >= code.len() || seen[pc] {
                continue;
            }
            seen[pc] = true;
            let instr = &code[pc].instr;
            if held(instr) {
                continue;
            }
            if let Some((l, w)) = accesses(instr)
                && l == loc
                && (w || write)
            {
                return true;
            }
            stack.extend(successors(instr, pc, &self.labels[u]));
        }
        false
    }
}

/// How many barriers a thread has executed.
fn barrier_count(s: &State) -> usize {
    s.path
        .events
        .iter()
        .filter(|e| e.tags.contains(Tags::BAR))
        .count()
}
