//! Liveness of flat locals, for substitution's one hazard.
//!
//! A local assigned once stands for its expression. When that expression
//! reads a register that is assigned again while the local is still live
//! (`k = i; i = i + 1; use(k)`), the register's old value must be kept, and
//! the extractor snapshots it. Liveness says when: the textbook backward
//! data-flow over the flat graph, with an inlined call defining the callee's
//! arguments and a callee's `return` using its `_0` and defining the caller's
//! destination.

use std::collections::BTreeSet;

use mir_import::model::{Operand, Place, PlaceElem, Rvalue, StatementKind, TerminatorKind};

use crate::flat::{Flat, NodeId};

/// Live-out sets of every node.
#[derive(Debug)]
pub struct Liveness {
    live_out: Vec<BTreeSet<usize>>,
}

/// Uses and definitions of one statement or terminator, in flat locals.
#[derive(Default)]
struct Effect {
    uses: Vec<usize>,
    defs: Vec<usize>,
}

impl Liveness {
    /// Computes liveness for the whole graph.
    pub fn compute(flat: &Flat<'_>) -> Liveness {
        let n = flat.nodes.len();
        let mut live_in: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        let mut live_out: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                let out: BTreeSet<usize> = flat.succs[b]
                    .iter()
                    .flat_map(|&s| live_in[s].iter().copied())
                    .collect();
                let inn = transfer(flat, b, 0, out.clone());
                if out != live_out[b] || inn != live_in[b] {
                    live_out[b] = out;
                    live_in[b] = inn;
                    changed = true;
                }
            }
        }
        Liveness { live_out }
    }

    /// The locals live just after statement `i` of node `b` (`None`: after
    /// the terminator).
    pub fn after(&self, flat: &Flat<'_>, b: NodeId, i: Option<usize>) -> BTreeSet<usize> {
        match i {
            None => self.live_out[b].clone(),
            Some(i) => transfer(flat, b, i + 1, self.live_out[b].clone()),
        }
    }
}

/// Runs a node backwards from `live` (after its terminator) down to its
/// statement `from`, giving what is live before that statement.
fn transfer(flat: &Flat<'_>, b: NodeId, from: usize, mut live: BTreeSet<usize>) -> BTreeSet<usize> {
    let node = flat.nodes[b];
    let block = &flat.body(node.frame).blocks[node.bb];
    let mut effects = vec![terminator_effect(flat, b)];
    for st in block.statements.iter().skip(from).rev() {
        let mut e = Effect::default();
        let frame = node.frame;
        if let StatementKind::Assign(p, rv) = &st.kind {
            place_effect(flat, frame, p, true, &mut e);
            rvalue_uses(flat, frame, rv, &mut e);
        }
        effects.push(e);
    }
    for e in effects {
        for d in e.defs {
            live.remove(&d);
        }
        live.extend(e.uses);
    }
    live
}

fn terminator_effect(flat: &Flat<'_>, b: NodeId) -> Effect {
    let node = flat.nodes[b];
    let frame = node.frame;
    let mut e = Effect::default();
    match &flat.body(frame).blocks[node.bb].terminator.kind {
        TerminatorKind::SwitchInt { discr, .. } => operand_uses(flat, frame, discr, &mut e),
        TerminatorKind::Assert { cond, .. } => operand_uses(flat, frame, cond, &mut e),
        TerminatorKind::Call {
            args, destination, ..
        } => {
            for a in args {
                operand_uses(flat, frame, a, &mut e);
            }
            match flat.inlined.get(&b) {
                Some(&callee) => {
                    e.defs
                        .extend((1..=args.len()).map(|i| flat.frames[callee].base + i));
                }
                None => place_effect(flat, frame, destination, true, &mut e),
            }
        }
        TerminatorKind::Return => {
            if let Some((call, _)) = flat.frames[frame].caller {
                e.uses.push(flat.frames[frame].base);
                let cn = flat.nodes[call];
                if let TerminatorKind::Call { destination, .. } =
                    &flat.body(cn.frame).blocks[cn.bb].terminator.kind
                {
                    place_effect(flat, cn.frame, destination, true, &mut e);
                }
            }
        }
        _ => {}
    }
    e
}

fn place_effect(flat: &Flat<'_>, frame: usize, p: &Place, written: bool, e: &mut Effect) {
    let l = flat.local(frame, p.local);
    if written && p.projection.is_empty() {
        e.defs.push(l);
    } else {
        e.uses.push(l);
    }
    for elem in &p.projection {
        if let PlaceElem::Index(i) = elem {
            e.uses.push(flat.local(frame, *i));
        }
    }
}

fn operand_uses(flat: &Flat<'_>, frame: usize, op: &Operand, e: &mut Effect) {
    if let Operand::Copy(p) | Operand::Move(p) = op {
        place_effect(flat, frame, p, false, e);
    }
}

fn rvalue_uses(flat: &Flat<'_>, frame: usize, rv: &Rvalue, e: &mut Effect) {
    match rv {
        Rvalue::Use(o) | Rvalue::Repeat(o, _) | Rvalue::Cast(_, o, _) | Rvalue::UnaryOp(_, o) => {
            operand_uses(flat, frame, o, e)
        }
        Rvalue::BinaryOp(_, a, b) => {
            operand_uses(flat, frame, a, e);
            operand_uses(flat, frame, b, e);
        }
        Rvalue::Aggregate(_, ops) => ops.iter().for_each(|o| operand_uses(flat, frame, o, e)),
        Rvalue::Ref(_, p)
        | Rvalue::RawPtr(_, p)
        | Rvalue::Discriminant(p)
        | Rvalue::CopyForDeref(p) => place_effect(flat, frame, p, false, e),
        Rvalue::Nullary(..) => {}
    }
}
