//! Which locals are live on entry to each MIR block: the SSA locals a
//! block's IR parameters must carry.
//!
//! Every SSA local used to be a parameter of every block, so a function
//! carried blocks × locals values: with a dependency inlined whole (libm's
//! `sin`: 327 blocks, 926 SSA slots) that is 302,851 values for 2,827
//! instructions, and every jump passed ~900 arguments. A block now takes
//! only what is live on its entry: read on some path from there before
//! being written whole.
//!
//! A read is any mention of a local other than as the whole destination of
//! an assignment or call: an operand, a borrowed or projected place, an
//! index, and a destination with projections (a write to one field of an
//! SSA pair keeps the other). `return` reads `_0`. The analysis is the
//! usual backward fixed point over every successor edge, including unwind
//! edges the lowering never takes, which can only make it keep more.

use cranelift_entity::EntityRef;
use mir_import::model::{
    BasicBlock, Body, Callee, Local, Operand, Place, PlaceElem, Rvalue, StatementKind,
    TerminatorKind, UnwindAction,
};

/// A set of locals, one bit each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LocalSet(Vec<u64>);

impl LocalSet {
    fn new(n: usize) -> LocalSet {
        LocalSet(vec![0; n.div_ceil(64)])
    }

    fn insert(&mut self, l: Local) {
        let i = l.index();
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether `l` is in the set.
    pub(super) fn contains(&self, l: Local) -> bool {
        let i = l.index();
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds `other`; whether anything was new.
    fn union(&mut self, other: &LocalSet) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
}

/// What one block does to the locals: read before any whole write (`gen`),
/// written whole (`kill`).
struct Effect {
    gen_: LocalSet,
    kill: LocalSet,
}

impl Effect {
    fn read(&mut self, l: Local) {
        if !self.kill.contains(l) {
            self.gen_.insert(l);
        }
    }

    fn read_place(&mut self, p: &Place) {
        self.read(p.local);
        self.read_indices(p);
    }

    fn read_indices(&mut self, p: &Place) {
        for e in &p.projection {
            if let PlaceElem::Index(i) = e {
                self.read(*i);
            }
        }
    }

    fn operand(&mut self, o: &Operand) {
        if let Operand::Copy(p) | Operand::Move(p) = o {
            self.read_place(p);
        }
    }

    /// A destination: a whole local is written, a projected one read.
    fn write(&mut self, p: &Place) {
        if p.projection.is_empty() {
            self.kill.insert(p.local);
        } else {
            self.read_place(p);
        }
    }

    fn rvalue(&mut self, r: &Rvalue) {
        match r {
            Rvalue::Use(o)
            | Rvalue::Repeat(o, _)
            | Rvalue::UnaryOp(_, o)
            | Rvalue::Cast(_, o, _) => self.operand(o),
            Rvalue::Ref(_, p)
            | Rvalue::RawPtr(_, p)
            | Rvalue::Discriminant(p)
            | Rvalue::CopyForDeref(p) => self.read_place(p),
            Rvalue::BinaryOp(_, a, b) => {
                self.operand(a);
                self.operand(b);
            }
            Rvalue::Aggregate(_, ops) => ops.iter().for_each(|o| self.operand(o)),
            Rvalue::Nullary(..) => {}
        }
    }
}

fn effect(body: &Body, bb: BasicBlock, n: usize) -> Effect {
    let mut e = Effect {
        gen_: LocalSet::new(n),
        kill: LocalSet::new(n),
    };
    let data = &body.blocks[bb];
    for st in &data.statements {
        match &st.kind {
            StatementKind::Assign(p, r) => {
                e.rvalue(r);
                e.write(p);
            }
            StatementKind::SetDiscriminant(p, _)
            | StatementKind::Deinit(p)
            | StatementKind::PlaceMention(p) => e.read_place(p),
            StatementKind::Assume(o) => e.operand(o),
            StatementKind::CopyNonOverlapping { dst, src, count } => {
                e.operand(dst);
                e.operand(src);
                e.operand(count);
            }
            StatementKind::StorageLive(_)
            | StatementKind::StorageDead(_)
            | StatementKind::Nop
            | StatementKind::ConstEvalCounter => {}
        }
    }
    match &data.terminator.kind {
        TerminatorKind::SwitchInt { discr, .. } => e.operand(discr),
        TerminatorKind::Assert { cond, msg_args, .. } => {
            e.operand(cond);
            msg_args.iter().for_each(|o| e.operand(o));
        }
        TerminatorKind::Drop { place, .. } => e.read_place(place),
        TerminatorKind::Call {
            func,
            args,
            destination,
            ..
        } => {
            if let Callee::Operand(o) = func {
                e.operand(o);
            }
            args.iter().for_each(|o| e.operand(o));
            e.write(destination);
        }
        TerminatorKind::Return => e.read(Local::new(0)),
        // Its operands are not modelled: everything stays live (it is
        // refused anyway).
        TerminatorKind::InlineAsm { .. } => {
            for l in body.locals.keys() {
                e.read(l);
            }
        }
        TerminatorKind::Goto(_)
        | TerminatorKind::Unreachable
        | TerminatorKind::UnwindResume
        | TerminatorKind::Terminate => {}
    }
    e
}

/// Every block a terminator may go to.
pub(super) fn successors(body: &Body, bb: BasicBlock) -> Vec<BasicBlock> {
    let mut out = Vec::new();
    let unwind = |u: &UnwindAction, out: &mut Vec<BasicBlock>| {
        if let UnwindAction::Cleanup(b) = u {
            out.push(*b);
        }
    };
    match &body.blocks[bb].terminator.kind {
        TerminatorKind::Goto(t) => out.push(*t),
        TerminatorKind::SwitchInt {
            targets, otherwise, ..
        } => {
            out.extend(targets.iter().map(|(_, t)| *t));
            out.push(*otherwise);
        }
        TerminatorKind::Assert {
            target, unwind: u, ..
        }
        | TerminatorKind::Drop {
            target, unwind: u, ..
        } => {
            out.push(*target);
            unwind(u, &mut out);
        }
        TerminatorKind::Call {
            target, unwind: u, ..
        } => {
            out.extend(target.iter().copied());
            unwind(u, &mut out);
        }
        TerminatorKind::InlineAsm { target, .. } => out.extend(target.iter().copied()),
        TerminatorKind::Return
        | TerminatorKind::Unreachable
        | TerminatorKind::UnwindResume
        | TerminatorKind::Terminate => {}
    }
    out
}

/// The locals live on entry to each block, by block index.
pub(super) fn live_in(body: &Body) -> Vec<LocalSet> {
    let n = body.locals.len();
    let blocks: Vec<BasicBlock> = body.blocks.keys().collect();
    let effects: Vec<Effect> = blocks.iter().map(|&bb| effect(body, bb, n)).collect();
    let succs: Vec<Vec<BasicBlock>> = blocks.iter().map(|&bb| successors(body, bb)).collect();
    let mut live: Vec<LocalSet> = effects.iter().map(|e| e.gen_.clone()).collect();
    // Backward: reverse block order reaches the fixed point in few rounds.
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..blocks.len()).rev() {
            let mut out = LocalSet::new(n);
            for s in &succs[i] {
                if let Some(l) = live.get(s.index()) {
                    out.union(l);
                }
            }
            // live_in = gen ∪ (live_out − kill)
            for (w, k) in out.0.iter_mut().zip(&effects[i].kill.0) {
                *w &= !k;
            }
            changed |= live[i].union(&out);
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Body {
        mir_import::parse::parse_mir(text)
            .expect("parses")
            .bodies
            .remove(0)
    }

    fn live(b: &Body, bb: usize) -> Vec<usize> {
        let sets = live_in(b);
        (0..b.locals.len())
            .filter(|&i| sets[bb].contains(Local::new(i)))
            .collect()
    }

    /// `_2` is written in bb0 and read in bb2 through the loop in bb1;
    /// `_3` is written before every read; `_4` is written in one field
    /// only, so its other field is read.
    #[test]
    fn live_locals_follow_reads_before_whole_writes() {
        let b = body(
            "fn f(_1: u32) -> u32 {\n    let mut _0: u32;\n    let mut _2: u32;\n    let mut _3: bool;\n    let mut _4: (u32, u32);\n\n    \
             bb0: {\n        _2 = copy _1;\n        goto -> bb1;\n    }\n\n    \
             bb1: {\n        _3 = Lt(copy _2, const 10_u32);\n        switchInt(move _3) -> [0: bb3, otherwise: bb2];\n    }\n\n    \
             bb2: {\n        _2 = Add(copy _2, const 1_u32);\n        (_4.0: u32) = copy _2;\n        goto -> bb1;\n    }\n\n    \
             bb3: {\n        _0 = copy (_4.1: u32);\n        return;\n    }\n}\n",
        );
        assert_eq!(
            live(&b, 0),
            [1, 4],
            "the argument and the half-written pair"
        );
        assert_eq!(live(&b, 1), [2, 4]);
        assert_eq!(live(&b, 2), [2, 4]);
        assert_eq!(live(&b, 3), [4], "_0 is written before the return reads it");
    }
}
