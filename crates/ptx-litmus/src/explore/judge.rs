//! A graph judged: its execution for the six axioms, its final outcomes
//! and whether it reaches the test's condition, and its canonical key.

use super::*;

impl Explorer<'_> {
    /// Whether the graph breaks none of the checked axioms.
    pub(super) fn consistent(&self, g: &Graph) -> Result<bool, NoVerdict> {
        let combo: Vec<&paths::Path> = g.threads.iter().map(|th| &th.s.path).collect();
        let base = Base::new(self.test, &combo).map_err(CheckError::Limit)?;
        let (x, d) = self.execution(&base, g);
        Ok(self
            .options
            .axioms
            .iter_axioms()
            .all(|a| a.check(&x, &d).is_none()))
    }

    pub(super) fn index(&self, g: &Graph, e: Ev) -> usize {
        match e {
            Ev::Init(l) => l as usize,
            Ev::At(t, i) => {
                self.test.locations.len()
                    + g.threads[..t as usize]
                        .iter()
                        .map(|th| th.s.path.events.len())
                        .sum::<usize>()
                    + i as usize
            }
        }
    }

    pub(super) fn execution(
        &self,
        base: &Base<'_>,
        g: &Graph,
    ) -> (crate::model::Execution, Derived) {
        let mut x = base.x.clone();
        let n = base.events.len();
        let mut rf = Rel::empty(n);
        for &(w, r) in &g.rf {
            rf.insert(self.index(g, w), self.index(g, r));
        }
        let mut co = Rel::empty(n);
        for (l, _) in self.test.locations.iter().enumerate() {
            for (e, _) in self.writes_to(g, Loc(l as u32)) {
                if e != Ev::Init(l as u32) {
                    co.insert(l, self.index(g, e));
                }
            }
        }
        for &(a, b) in &g.co {
            co.insert(self.index(g, a), self.index(g, b));
        }
        // The fence-SC order, restricted to the pairs whose scopes include
        // each other's thread (as `search` restricts each total order).
        let mut sync_fence = Rel::empty(n);
        for (i, &a) in g.sc.iter().enumerate() {
            for &b in &g.sc[i + 1..] {
                let (Ev::At(ta, _), Ev::At(tb, _)) = (a, b) else {
                    continue;
                };
                let (Some(ea), Some(eb)) = (self.event(g, a), self.event(g, b)) else {
                    continue;
                };
                let (pa, pb) = (
                    &self.test.threads[ta as usize],
                    &self.test.threads[tb as usize],
                );
                if let (Some(sa), Some(sb)) = (ea.scope, eb.scope)
                    && pa.shares(pb, sa)
                    && pb.shares(pa, sb)
                {
                    sync_fence.insert(self.index(g, a), self.index(g, b));
                }
            }
        }
        x.rf = rf;
        x.co = co;
        x.sync_fence = sync_fence;
        x.sync_barrier = base.sync_barrier(base.forced_barriers);
        let mut d = Derived::without_co(&x);
        d.with_co(&x);
        (x, d)
    }

    /// Records a complete graph's outcomes: with `co` partial, a location's
    /// final value is that of any `co`-maximal write.
    pub(super) fn complete(&mut self, g: &Graph) {
        self.out.executions += 1;
        if self.reaches(g) {
            self.out.reaching += 1;
        }
        let mut finals: Vec<(String, Vec<i64>)> = Vec::new();
        for &loc in &self.observe {
            let name = self.test.loc_name(loc).to_string();
            finals.push((name, self.last_values(g, loc)));
        }
        let mut pick = vec![0usize; finals.len()];
        loop {
            let outcome: Final = finals
                .iter()
                .zip(&pick)
                .map(|((name, values), &i)| (name.clone(), values[i]))
                .collect();
            if !self.out.outcomes.contains_key(&outcome) {
                let combo: Vec<&paths::Path> = g.threads.iter().map(|th| &th.s.path).collect();
                if let Ok(base) = Base::new(self.test, &combo) {
                    let (x, d) = self.execution(&base, g);
                    let mut witness = base.witness(&x, &d, Vec::new());
                    witness.registers = g
                        .threads
                        .iter()
                        .enumerate()
                        .flat_map(|(t, th)| {
                            let id = self.test.threads[t].id;
                            th.s.regs
                                .iter()
                                .map(move |(r, v)| (format!("P{id}:{r}"), *v))
                        })
                        .collect();
                    if (self.stop)(&outcome) {
                        self.out.stopped = true;
                    }
                    self.out.outcomes.insert(outcome, witness);
                }
            }
            if !crate::domain::next_choice(&mut pick, finals.iter().map(|(_, v)| v.len())) {
                break;
            }
        }
    }

    /// The final values a location may hold: those of its `co`-maximal
    /// writes, or its initial value when nothing writes it.
    pub(super) fn last_values(&self, g: &Graph, loc: Loc) -> Vec<i64> {
        let writes = self.writes_to(g, loc);
        if writes.len() == 1 {
            return vec![writes[0].1];
        }
        let last: BTreeSet<i64> = writes
            .iter()
            .filter(|(e, _)| !matches!(e, Ev::Init(_)))
            .filter(|(e, _)| !g.co.iter().any(|(a, _)| a == e))
            .map(|(_, v)| *v)
            .collect();
        last.into_iter().collect()
    }

    /// Whether a complete graph reaches the target: some choice of final
    /// values makes the condition hold (`exists`) or fail (`forall`).
    pub(super) fn reaches(&self, g: &Graph) -> bool {
        let want = self.test.quantifier != Quantifier::Forall;
        let finals: Vec<Vec<i64>> = (0..self.test.locations.len() as u32)
            .map(|l| self.last_values(g, Loc(l)))
            .collect();
        let mut pick = vec![0usize; finals.len()];
        loop {
            let value = |v: CondValue| match v {
                CondValue::Const(c) => c,
                CondValue::Reg(t, r) => g
                    .threads
                    .get(t as usize)
                    .and_then(|th| th.s.regs.get(&r).copied())
                    .unwrap_or(0),
                CondValue::Loc(l) => finals[l.0 as usize][pick[l.0 as usize]],
            };
            if self.test.cond.eval(&value) == want {
                return true;
            }
            if !crate::domain::next_choice(&mut pick, finals.iter().map(Vec::len)) {
                return false;
            }
        }
    }

    /// A canonical key of the graph: equal graphs reached in different
    /// orders have equal keys.
    pub(super) fn key(&self, g: &Graph) -> Vec<i64> {
        let mut k = Vec::new();
        let ev = |e: Ev| match e {
            Ev::Init(l) => -1 - i64::from(l),
            Ev::At(t, i) => (i64::from(t) << 32) | i64::from(i),
        };
        for th in &g.threads {
            k.push(th.s.pc as i64);
            k.push(i64::from(th.status == Status::Done));
            k.push(th.s.regs.len() as i64);
            for (r, v) in &th.s.regs {
                k.extend([i64::from(r.0), *v]);
            }
            k.push(th.s.back_jumps.len() as i64);
            for (at, n) in &th.s.back_jumps {
                k.extend([*at as i64, i64::from(*n)]);
            }
            k.push(th.s.path.events.len() as i64);
            for e in &th.s.path.events {
                k.extend([
                    i64::from(e.tags.bits()),
                    e.loc.map_or(-1, |l| i64::from(l.0)),
                    e.value,
                    e.line as i64,
                ]);
            }
        }
        let mut rf: Vec<(i64, i64)> = g.rf.iter().map(|&(w, r)| (ev(w), ev(r))).collect();
        rf.sort_unstable();
        k.push(rf.len() as i64);
        for (w, r) in rf {
            k.extend([w, r]);
        }
        k.push(g.co.len() as i64);
        for &(a, b) in &g.co {
            k.extend([ev(a), ev(b)]);
        }
        k.push(g.sc.len() as i64);
        k.extend(g.sc.iter().map(|&f| ev(f)));
        k
    }
}
