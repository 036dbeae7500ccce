//! Calls through a function pointer that can only hold one function.
//!
//! Inlined code often passes a function as a value and calls it
//! (xxhash-rust's `xxh64` takes `get_unaligned_chunk::<u64>` as a reader):
//! after inlining, the body holds `_9 = f::<u64> as fn(..)
//! (PointerCoercion(ReifyFnPointer(..)))` and later `copy _9(args)`. When
//! that local is written exactly once, by such a reification, and never
//! borrowed, every call through it calls `f::<u64>`, and becomes a direct
//! call, which the rest of the pipeline (shims, lowering) handles (an
//! argument is never such a local: it holds the caller's value first). Any
//! other call through a pointer stays refused by the lowering.

use std::collections::HashMap;

use super::{
    Body, Callee, CastKind, ConstOperand, Local, Operand, Path, Rvalue, StatementKind,
    TerminatorKind,
};

impl Body {
    /// Turns each call through a local that holds one known function into
    /// a direct call of it; returns how many it turned.
    pub fn devirtualize_fn_pointers(&mut self) -> usize {
        // Per local: the function it holds, or `None` once it is written
        // otherwise, written twice, or borrowed.
        let mut holds: HashMap<Local, Option<Path>> = HashMap::new();
        let spoil = |holds: &mut HashMap<Local, Option<Path>>, l: Local| {
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
                let reified = match rv {
                    Rvalue::Cast(
                        CastKind::PointerCoercion(kind),
                        Operand::Const(ConstOperand::FnItem(f)),
                        _,
                    ) if kind.starts_with("ReifyFnPointer") => Some(f),
                    _ => None,
                };
                match (dest.projection.is_empty(), reified) {
                    (true, Some(f)) if !holds.contains_key(&dest.local) => {
                        holds.insert(dest.local, Some(f.clone()));
                    }
                    _ => spoil(&mut holds, dest.local),
                }
            }
            if let TerminatorKind::Call { destination, .. } = &bb.terminator.kind {
                spoil(&mut holds, destination.local);
            }
        }
        let mut turned = 0;
        for bb in self.blocks.values_mut() {
            let TerminatorKind::Call { func, .. } = &mut bb.terminator.kind else {
                continue;
            };
            let Callee::Operand(Operand::Copy(p) | Operand::Move(p)) = func else {
                continue;
            };
            if !p.projection.is_empty() {
                continue;
            }
            if let Some(Some(f)) = holds.get(&p.local) {
                *func = Callee::Item(f.clone());
                turned += 1;
            }
        }
        // A pointer that nothing reads any more needs no value: its
        // reification (a function used as a value, which the lowering
        // refuses) goes.
        let mut read = std::collections::HashSet::new();
        self.for_each_operand(|o| {
            if let Operand::Copy(p) | Operand::Move(p) = o {
                read.insert(p.local);
            }
        });
        for bb in self.blocks.values_mut() {
            for st in &mut bb.statements {
                if let StatementKind::Assign(dest, _) = &st.kind
                    && dest.projection.is_empty()
                    && matches!(holds.get(&dest.local), Some(Some(_)))
                    && !read.contains(&dest.local)
                {
                    st.kind = StatementKind::Nop;
                }
            }
        }
        turned
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
        // Written a second time, or borrowed: it stays a pointer call.
        for spoiled in [
            "        _2 = dep::other as for<'a> fn(&'a [u8], usize) -> u64 (PointerCoercion(ReifyFnPointer(Safe), Implicit));\n",
            "        _3 = &mut _2;\n",
        ] {
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
}
