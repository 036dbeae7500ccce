//! Blocks that can only end in a panic, and the locals only they use.
//!
//! A panic traps on the device and the launch fails, whatever the code on
//! the way computed. With inlining, the way to a `panic!("{x:?}")` is often
//! several blocks long: it builds `fmt::Arguments` from private `core::fmt`
//! types (`fmt::rt::ArgumentType`, whose niche nothing proves) and reifies
//! `Debug::fmt` functions the device has no body for. Such blocks lower to
//! a trap, and a local only they use needs no home, so neither refuses the
//! kernel.

use std::collections::BTreeSet;

use cranelift_entity::EntityRef;

use mir_import::calls::{self, KnownCall};
use mir_import::model::{BasicBlock, Body, Callee, Local, PlaceElem, TerminatorKind};

use super::liveness::successors;

/// The blocks every path from which reaches a panicking call: the blocks
/// ending in one that does not return, then, to a fixed point, the blocks whose every successor
/// (unwinding aside) is such a block. Cleanup blocks are never in it; a
/// loop is in it only through a block that leaves it for a panic on every
/// edge, so a path that may loop forever keeps its code.
pub(super) fn doomed_blocks(body: &Body) -> BTreeSet<BasicBlock> {
    let mut doomed: BTreeSet<BasicBlock> = body
        .blocks
        .iter()
        .filter(|(_, data)| {
            !data.cleanup
                && matches!(
                    &data.terminator.kind,
                    TerminatorKind::Call { func: Callee::Item(path), target: None, .. }
                        if calls::classify(path) == Some(KnownCall::Panic)
                )
        })
        .map(|(bb, _)| bb)
        .collect();
    loop {
        let before = doomed.len();
        for (bb, data) in body.blocks.iter() {
            if data.cleanup || doomed.contains(&bb) {
                continue;
            }
            let next: Vec<BasicBlock> = successors(body, bb)
                .into_iter()
                .filter(|s| !body.blocks[*s].cleanup)
                .collect();
            if !next.is_empty() && next.iter().all(|s| doomed.contains(s)) {
                doomed.insert(bb);
            }
        }
        if doomed.len() == before {
            return doomed;
        }
    }
}

/// The locals that only blocks of `doomed` name: not the return place, not
/// an argument, and mentioned by no block outside `doomed` and cleanup.
pub(super) fn locals_only_doomed(body: &Body, doomed: &BTreeSet<BasicBlock>) -> BTreeSet<Local> {
    let mut in_use: BTreeSet<Local> = body
        .locals
        .iter()
        .filter(|(l, decl)| l.index() == 0 || decl.is_arg)
        .map(|(l, _)| l)
        .collect();
    let mut in_doomed = BTreeSet::new();
    for (bb, data) in body.blocks.iter() {
        if data.cleanup {
            continue;
        }
        let set = if doomed.contains(&bb) {
            &mut in_doomed
        } else {
            &mut in_use
        };
        data.for_each_place(|p| {
            set.insert(p.local);
            for elem in &p.projection {
                if let PlaceElem::Index(l) = elem {
                    set.insert(*l);
                }
            }
        });
    }
    in_doomed.difference(&in_use).copied().collect()
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

    /// bb1 builds a message (`_3`) and goes to bb2, which panics: both are
    /// doomed. bb4 loops on itself with a way out to the panic: a path
    /// that may loop forever, so it is kept. bb3 returns.
    #[test]
    fn only_blocks_every_path_from_which_panics_are_doomed() {
        let b = body(
            "fn f(_1: u32) -> u32 {\n    let mut _0: u32;\n    let mut _2: bool;\n    let mut _3: u32;\n\n    \
             bb0: {\n        _2 = Lt(copy _1, const 10_u32);\n        switchInt(move _2) -> [0: bb1, 1: bb4, otherwise: bb3];\n    }\n\n    \
             bb1: {\n        _3 = Add(copy _1, const 1_u32);\n        goto -> bb2;\n    }\n\n    \
             bb2: {\n        _0 = core::panicking::panic(const \"x\") -> unwind unreachable;\n    }\n\n    \
             bb3: {\n        _0 = copy _1;\n        return;\n    }\n\n    \
             bb4: {\n        switchInt(copy _1) -> [0: bb4, otherwise: bb2];\n    }\n}\n",
        );
        let doomed = doomed_blocks(&b);
        assert_eq!(
            doomed.iter().map(|bb| bb.index()).collect::<Vec<_>>(),
            [1, 2]
        );
        let only: Vec<usize> = locals_only_doomed(&b, &doomed)
            .iter()
            .map(|l| l.index())
            .collect();
        assert_eq!(only, [3], "_3 is only built for the panic");
    }
}
