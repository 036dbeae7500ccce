//! Calls through a function pointer that can only hold known functions.
//!
//! Inlined code often passes a function as a value and calls it
//! (xxhash-rust's `xxh64` takes `get_unaligned_chunk::<u64>` as a reader):
//! after inlining, the body holds `_9 = f::<u64> as fn(..)
//! (PointerCoercion(ReifyFnPointer(..)))` and later `copy _9(args)`. When
//! every write of that local is such a reification and it is never
//! borrowed, a call through it calls one of those functions (an argument is
//! never such a local: it holds the caller's value first):
//!
//! - **One function**: the call becomes a direct call of it.
//! - **Several** (bitvec's `BitSlice::domain` picks one of six `Domain`
//!   constructors by branch, then calls the pointer once), when the local
//!   is read by calls only: each write stores the function's number in a
//!   new `u32` local instead, and each call becomes a `switchInt` on it to
//!   one direct call per function, all returning where the call did.
//!
//! The rest of the pipeline (shims, lowering) handles direct calls. Any
//! other call through a pointer is lowered as an indirect call of the
//! function's address (mir-lower's `indirect_call`), which a direct call
//! beats: LLVM can inline it.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    BasicBlock, BlockData, Body, Callee, CastKind, ConstOperand, IntTy, Local, LocalDecl, Operand,
    Path, Place, Rvalue, Scalar, StatementKind, Terminator, TerminatorKind, Ty,
};

/// The functions a function-pointer local may hold, in the order their
/// reifications appear; empty once it is written otherwise or borrowed.
type Holds = BTreeMap<Local, Option<Vec<Path>>>;

impl Body {
    /// The functions this body calls by name (`kernel::f(..)`), one per
    /// call, in block order.
    pub(crate) fn called_items(&self) -> impl Iterator<Item = &Path> {
        self.blocks
            .values()
            .filter_map(|bb| match &bb.terminator.kind {
                TerminatorKind::Call {
                    func: Callee::Item(c),
                    ..
                } => Some(c),
                _ => None,
            })
    }

    /// The calls of functions by name, each with its operands and
    /// destination, in block order.
    pub(crate) fn item_calls(&self) -> impl Iterator<Item = (&Path, &[Operand], &Place)> {
        self.blocks
            .values()
            .filter_map(|bb| match &bb.terminator.kind {
                TerminatorKind::Call {
                    func: Callee::Item(c),
                    args,
                    destination,
                    ..
                } => Some((c, args.as_slice(), destination)),
                _ => None,
            })
    }

    /// The functions this body takes the address of (`f as fn(..)`), one
    /// per reification, in block order.
    pub(crate) fn reified_fns(&self) -> impl Iterator<Item = &Path> {
        self.blocks
            .values()
            .flat_map(|bb| &bb.statements)
            .filter_map(|st| match &st.kind {
                StatementKind::Assign(_, rv) => reified(rv),
                _ => None,
            })
    }

    /// Turns each call through a local that holds only known functions
    /// into direct calls of them; returns how many calls it turned.
    pub fn devirtualize_fn_pointers(&mut self) -> usize {
        let holds = self.reified_fn_locals();
        // A local holding several functions must be read by calls only:
        // its value becomes a number, which nothing else could use.
        let read_otherwise = self.read_other_than_as_callee();
        let mut selectors: BTreeMap<Local, Local> = BTreeMap::new();
        for (&l, fns) in &holds {
            if let Some(fns) = fns
                && fns.len() > 1
                && !read_otherwise.contains(&l)
            {
                let s = self.locals.push(LocalDecl {
                    ty: Ty::Int(IntTy::U32),
                    mutable: true,
                    is_arg: false,
                });
                selectors.insert(l, s);
            }
        }
        let mut turned = 0;
        let blocks: Vec<BasicBlock> = self.blocks.keys().collect();
        for bb in blocks {
            let TerminatorKind::Call { func, .. } = &self.blocks[bb].terminator.kind else {
                continue;
            };
            let Callee::Operand(Operand::Copy(p) | Operand::Move(p)) = func else {
                continue;
            };
            if !p.projection.is_empty() {
                continue;
            }
            let local = p.local;
            match holds.get(&local) {
                Some(Some(fns)) if fns.len() == 1 => {
                    if let TerminatorKind::Call { func, .. } = &mut self.blocks[bb].terminator.kind
                    {
                        *func = Callee::Item(fns[0].clone());
                        turned += 1;
                    }
                }
                Some(Some(fns)) if selectors.contains_key(&local) => {
                    self.dispatch_call(bb, selectors[&local], fns);
                    turned += 1;
                }
                _ => {}
            }
        }
        for bb in self.blocks.values_mut() {
            for st in &mut bb.statements {
                let StatementKind::Assign(dest, _) = &st.kind else {
                    continue;
                };
                if !dest.projection.is_empty() {
                    continue;
                }
                let Some(Some(fns)) = holds.get(&dest.local) else {
                    continue;
                };
                let StatementKind::Assign(dest, rv) = &mut st.kind else {
                    continue;
                };
                if let Some(&s) = selectors.get(&dest.local) {
                    // The function's number, for the calls' `switchInt`.
                    let Some(k) = reified(rv).and_then(|f| fns.iter().position(|g| g == f)) else {
                        continue;
                    };
                    dest.local = s;
                    *rv = Rvalue::Use(Operand::Const(ConstOperand::Scalar(Scalar::Int {
                        bits: k as u128,
                        ty: IntTy::U32,
                    })));
                } else if fns.len() == 1 && !read_otherwise.contains(&dest.local) {
                    // A pointer that nothing reads any more needs no value:
                    // its reification (a function used as a value, which the
                    // lowering refuses) goes.
                    st.kind = StatementKind::Nop;
                }
            }
        }
        turned
    }

    /// The locals some operand reads other than as a call's callee.
    fn read_other_than_as_callee(&self) -> BTreeSet<Local> {
        let mut reads: BTreeMap<Local, usize> = BTreeMap::new();
        self.for_each_operand(|o| {
            if let Operand::Copy(p) | Operand::Move(p) = o {
                *reads.entry(p.local).or_default() += 1;
            }
        });
        for bb in self.blocks.values() {
            if let TerminatorKind::Call {
                func: Callee::Operand(Operand::Copy(p) | Operand::Move(p)),
                ..
            } = &bb.terminator.kind
                && p.projection.is_empty()
                && let Some(n) = reads.get_mut(&p.local)
            {
                *n -= 1;
            }
        }
        reads
            .into_iter()
            .filter_map(|(l, n)| (n > 0).then_some(l))
            .collect()
    }

    /// Per local written by a reification of a function item: the
    /// functions, or `None` where it is also written otherwise, borrowed,
    /// or an argument.
    fn reified_fn_locals(&self) -> Holds {
        let mut holds: Holds = BTreeMap::new();
        let spoil = |holds: &mut Holds, l: Local| {
            holds.insert(l, None);
        };
        // An argument holds what the caller passed before any write.
        for (l, decl) in self.locals.iter() {
            if decl.is_arg {
                spoil(&mut holds, l);
            }
        }
        for bb in self.blocks.values() {
            for st in &bb.statements {
                let StatementKind::Assign(dest, rv) = &st.kind else {
                    continue;
                };
                if let Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p) = rv {
                    spoil(&mut holds, p.local);
                }
                match (dest.projection.is_empty(), reified(rv)) {
                    (true, Some(f)) => match holds.entry(dest.local).or_insert(Some(Vec::new())) {
                        Some(fns) if !fns.contains(f) => fns.push(f.clone()),
                        _ => {}
                    },
                    _ => spoil(&mut holds, dest.local),
                }
            }
            if let TerminatorKind::Call { destination, .. } = &bb.terminator.kind {
                spoil(&mut holds, destination.local);
            }
        }
        holds
    }

    /// Replaces the call through a pointer that ends `bb` with a
    /// `switchInt` on `selector` to one direct call of each of `fns`, in
    /// new blocks; the last function takes `otherwise`, since the selector
    /// holds one of their numbers.
    fn dispatch_call(&mut self, bb: BasicBlock, selector: Local, fns: &[Path]) {
        let call = self.blocks[bb].terminator.clone();
        let cleanup = self.blocks[bb].cleanup;
        let mut targets = Vec::with_capacity(fns.len());
        for f in fns {
            let mut direct = call.clone();
            if let TerminatorKind::Call { func, .. } = &mut direct.kind {
                *func = Callee::Item(f.clone());
            }
            targets.push(self.blocks.push(BlockData {
                cleanup,
                statements: Vec::new(),
                terminator: direct,
            }));
        }
        let Some(otherwise) = targets.pop() else {
            return;
        };
        self.blocks[bb].terminator = Terminator {
            kind: TerminatorKind::SwitchInt {
                discr: Operand::Copy(Place::local(selector)),
                targets: targets
                    .into_iter()
                    .enumerate()
                    .map(|(k, t)| (k as u128, t))
                    .collect(),
                otherwise,
            },
            ..call
        };
    }
}

/// The function item `rv` reifies to a function pointer, if it does.
pub(crate) fn reified(rv: &Rvalue) -> Option<&Path> {
    match rv {
        Rvalue::Cast(
            CastKind::PointerCoercion(kind),
            Operand::Const(ConstOperand::FnItem(f)),
            _,
        ) if kind.starts_with("ReifyFnPointer") => Some(f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_mir;

    fn body(assign: &str) -> String {
        format!(
            "fn kernel::f(_1: &[u8]) -> u64 {{\n    let mut _0: u64;\n    let _2: for<'a> fn(&'a [u8], usize) -> u64;\n\n    bb0: {{\n        _2 = dep::read::<u64> as for<'a> fn(&'a [u8], usize) -> u64 (PointerCoercion(ReifyFnPointer(Safe), Implicit));\n{assign}        _0 = copy _2(copy _1, const 0_usize) -> [return: bb1, unwind unreachable];\n    }}\n\n    bb1: {{\n        return;\n    }}\n}}\n"
        )
    }

    fn callee(text: &str) -> String {
        let mut parsed = parse_mir(text).unwrap_or_else(|e| panic!("{e}"));
        let b = &mut parsed.bodies[0];
        b.devirtualize_fn_pointers();
        let first = b.blocks.values().next().expect("bb0");
        format!("{:?}", first.terminator.kind)
    }

    #[test]
    fn a_pointer_written_once_by_a_reification_is_a_direct_call() {
        let direct = callee(&body(""));
        assert!(direct.contains("func: Item("), "{direct}");
        // The pointer is no longer read: its reification is gone.
        let mut parsed = parse_mir(&body("")).unwrap_or_else(|e| panic!("{e}"));
        parsed.bodies[0].devirtualize_fn_pointers();
        let bb0 = parsed.bodies[0].blocks.values().next().expect("bb0");
        assert!(matches!(
            bb0.statements[0].kind,
            crate::model::StatementKind::Nop
        ));
        assert!(direct.contains("\"read\""), "{direct}");
        // Written again by the same function: still a direct call.
        let again = callee(&body(
            "        _2 = dep::read::<u64> as for<'a> fn(&'a [u8], usize) -> u64 (PointerCoercion(ReifyFnPointer(Safe), Implicit));\n",
        ));
        assert!(again.contains("func: Item("), "{again}");
        // Written otherwise, or borrowed: it stays a pointer call.
        for spoiled in ["        _2 = copy _3;\n", "        _3 = &mut _2;\n"] {
            let text = body(spoiled).replace(
                "    let _2:",
                "    let mut _3: &mut for<'a> fn(&'a [u8], usize) -> u64;\n    let _2:",
            );
            let kept = callee(&text);
            assert!(kept.contains("func: Operand("), "{spoiled}: {kept}");
        }
        // An argument holds the caller's function until the write: a call
        // through it stays a pointer call.
        let arg = body("").replace(
            "fn kernel::f(_1: &[u8]) -> u64 {\n    let mut _0: u64;\n    let _2: for<'a> fn(&'a [u8], usize) -> u64;",
            "fn kernel::f(_1: &[u8], _2: for<'a> fn(&'a [u8], usize) -> u64) -> u64 {\n    let mut _0: u64;",
        );
        assert!(arg.contains("_2: for<'a> fn"), "{arg}");
        let kept = callee(&arg);
        assert!(kept.contains("func: Operand("), "argument: {kept}");
    }

    /// bitvec's `domain`: one of two functions by branch, then one call.
    fn chosen(extra_read: &str) -> String {
        format!(
            "fn kernel::f(_1: bool) -> u64 {{\n    let mut _0: u64;\n    let _2: fn(usize) -> u64;\n    let mut _3: fn(usize) -> u64;\n\n    bb0: {{\n        switchInt(copy _1) -> [0: bb1, otherwise: bb2];\n    }}\n\n    bb1: {{\n        _2 = dep::a as fn(usize) -> u64 (PointerCoercion(ReifyFnPointer(Safe), Implicit));\n        goto -> bb3;\n    }}\n\n    bb2: {{\n        _2 = dep::b as fn(usize) -> u64 (PointerCoercion(ReifyFnPointer(Safe), Implicit));\n        goto -> bb3;\n    }}\n\n    bb3: {{\n{extra_read}        _0 = copy _2(const 7_usize) -> [return: bb4, unwind unreachable];\n    }}\n\n    bb4: {{\n        return;\n    }}\n}}\n"
        )
    }

    #[test]
    fn a_pointer_chosen_among_functions_is_a_switch_to_direct_calls() {
        use crate::model::{Callee, StatementKind, TerminatorKind};
        let mut parsed = parse_mir(&chosen("")).unwrap_or_else(|e| panic!("{e}"));
        let b = &mut parsed.bodies[0];
        assert_eq!(b.devirtualize_fn_pointers(), 1);
        let blocks: Vec<_> = b.blocks.values().collect();
        // Each write stores its function's number in the new selector.
        let selector = b.locals.keys().next_back().expect("a local");
        for (bb, k) in [(1, "0"), (2, "1")] {
            let StatementKind::Assign(dest, rv) = &blocks[bb].statements[0].kind else {
                panic!("bb{bb}: {:?}", blocks[bb].statements[0].kind);
            };
            assert_eq!(dest.local, selector);
            assert!(format!("{rv:?}").contains(&format!("bits: {k}")), "{rv:?}");
        }
        let TerminatorKind::SwitchInt {
            targets, otherwise, ..
        } = &blocks[3].terminator.kind
        else {
            panic!("{:?}", blocks[3].terminator.kind);
        };
        let called = |t: crate::model::BasicBlock| match &b.blocks[t].terminator.kind {
            TerminatorKind::Call {
                func: Callee::Item(p),
                target,
                ..
            } => (p.def_path(), target.map(|t| t.as_u32())),
            other => panic!("{other:?}"),
        };
        assert_eq!(targets.len(), 1);
        assert_eq!(targets[0].0, 0);
        assert_eq!(called(targets[0].1), ("dep::a".to_string(), Some(4)));
        assert_eq!(called(*otherwise), ("dep::b".to_string(), Some(4)));
        // Read other than by a call, the pointer's value is needed: kept.
        let mut parsed =
            parse_mir(&chosen("        _3 = copy _2;\n")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.bodies[0].devirtualize_fn_pointers(), 0);
    }
}
