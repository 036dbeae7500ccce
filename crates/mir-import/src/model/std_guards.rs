//! std's private drop guards, by what their `Drop` does.
//!
//! Inlined std code leaves `drop`s of guards that std declares privately
//! (`core::slice::sort::shared::smallsort::CopyOnDrop<u32>`, from the
//! insertion sort that `[u32; 9]::sort_unstable` runs). rustc prints no MIR
//! for their `Drop::drop` (it is std's), and source cannot name a private
//! type, so the drop-glue shims of [`crate::mono::drop_glue`] cannot reach
//! them. Each guard here is written as the statements its `Drop` runs,
//! replacing the `drop`.
//!
//! The model is only used when the MIR itself shows the guard built with
//! the expected fields, in the expected order and of the expected types
//! (an aggregate `CopyOnDrop::<u32> { src: .., dst: .., len: .. }` of a
//! `*const u32`, a `*mut u32` and a `usize`): a std whose guard changed
//! shape keeps its `drop`, refused by the lowering. A std that kept
//! the shape and changed what `Drop` does would be caught by the host
//! comparison, not here.

use super::{
    AggregateKind, Crate, GenericArg, Operand, Path, PlaceElem, Rvalue, StatementKind,
    TerminatorKind, Ty,
};
use super::{IntTy, Mutability, Statement};

/// A guard whose `Drop` copies `len` values of `T` from `src` to `dst`
/// (`ptr::copy_nonoverlapping`): sorting's insertion step puts the element
/// it holds back into the gap, whether the comparison returned or not.
const COPY_ON_DROP: [&str; 2] = [
    "core::slice::sort::shared::smallsort::CopyOnDrop",
    "std::slice::sort::shared::smallsort::CopyOnDrop",
];

/// `CopyOnDrop`'s fields in declaration order.
const COPY_ON_DROP_FIELDS: [&str; 3] = ["src", "dst", "len"];

/// The `T` of a `CopyOnDrop<T>` printed as `path`.
fn copy_on_drop_elem(path: &Path) -> Option<Ty> {
    path.segments.last()?.args.iter().find_map(|a| match a {
        GenericArg::Type(t) => Some(t.clone()),
        _ => None,
    })
}

/// The types of `CopyOnDrop<elem>`'s fields, in declaration order:
/// `*const T`, `*mut T`, `usize`.
fn copy_on_drop_field_types(elem: &Ty) -> [Ty; 3] {
    [
        Ty::RawPtr(Mutability::Not, Box::new(elem.clone())),
        Ty::RawPtr(Mutability::Mut, Box::new(elem.clone())),
        Ty::Int(IntTy::Usize),
    ]
}

impl Crate {
    /// Replaces each `drop` of a modelled std guard with the statements its
    /// `Drop` runs and a jump to the drop's target. Cleanup blocks keep
    /// theirs (the device never unwinds).
    pub fn expand_std_guard_drops(&mut self) {
        if !self.builds_guard_with_fields(&COPY_ON_DROP, &COPY_ON_DROP_FIELDS) {
            return;
        }
        for body in self.bodies.values_mut() {
            let mut rewrites = Vec::new();
            for (bb, data) in body.blocks.iter() {
                if data.cleanup {
                    continue;
                }
                let TerminatorKind::Drop { place, target, .. } = &data.terminator.kind else {
                    continue;
                };
                let Some(Ty::Adt(path)) = body.place_ty(place) else {
                    continue;
                };
                if !COPY_ON_DROP.contains(&path.def_path().as_str()) {
                    continue;
                }
                let Some(elem) = copy_on_drop_elem(&path) else {
                    continue;
                };
                rewrites.push((bb, place.clone(), *target, elem));
            }
            for (bb, place, target, elem) in rewrites {
                let field = |i: u32, ty: Ty| {
                    let mut p = place.clone();
                    p.projection.push(PlaceElem::Field(i, ty));
                    Operand::Copy(p)
                };
                let [src_ty, dst_ty, len_ty] = copy_on_drop_field_types(&elem);
                let (src, dst, count) = (field(0, src_ty), field(1, dst_ty), field(2, len_ty));
                let data = &mut body.blocks[bb];
                data.statements.push(Statement {
                    kind: StatementKind::CopyNonOverlapping { dst, src, count },
                    pos: data.terminator.pos,
                    source: data.terminator.source.clone(),
                });
                data.terminator.kind = TerminatorKind::Goto(target);
            }
        }
    }

    /// Whether some body builds a `CopyOnDrop` guard, and each that does
    /// builds it with [`COPY_ON_DROP_FIELDS`] in that order, typed as the
    /// model reads them: `*const T`, `*mut T`, `usize`.
    fn builds_guard_with_fields(&self, paths: &[&str], fields: &[&str]) -> bool {
        let mut seen = false;
        for body in self.bodies.values() {
            for data in body.blocks.values() {
                for st in &data.statements {
                    let StatementKind::Assign(
                        _,
                        Rvalue::Aggregate(AggregateKind::Adt { path, field_names }, ops),
                    ) = &st.kind
                    else {
                        continue;
                    };
                    if !paths.contains(&path.def_path().as_str()) {
                        continue;
                    }
                    if field_names
                        .iter()
                        .map(String::as_str)
                        .ne(fields.iter().copied())
                    {
                        return false;
                    }
                    let Some(elem) = copy_on_drop_elem(path) else {
                        return false;
                    };
                    let typed = ops.iter().map(|o| self.operand_ty(body, o));
                    if typed.ne(copy_on_drop_field_types(&elem).into_iter().map(Some)) {
                        return false;
                    }
                    seen = true;
                }
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use crate::import_text;
    use crate::model::{StatementKind, TerminatorKind};

    /// Insertion sort's tail step as rustc prints it inlined: the guard is
    /// built, then dropped on the way out.
    fn mir(fields: &str) -> String {
        format!(
            "fn kernel::f(_1: *const u32, _2: *mut u32) -> () {{
    let mut _0: ();
    let mut _3: core::slice::sort::shared::smallsort::CopyOnDrop<u32>;

    bb0: {{
        _3 = core::slice::sort::shared::smallsort::CopyOnDrop::<u32> {{ {fields} }};
        drop(_3) -> [return: bb1, unwind: bb2];
    }}

    bb1: {{
        return;
    }}

    bb2 (cleanup): {{
        drop(_3) -> [return: bb3, unwind terminate(cleanup)];
    }}

    bb3 (cleanup): {{
        resume;
    }}
}}
"
        )
    }

    fn blocks(fields: &str) -> (StatementKind, TerminatorKind, TerminatorKind) {
        // The import expands the guards.
        let k = import_text(&mir(fields), "", None).expect("the MIR imports");
        let f = k.bodies.values().next().expect("one body");
        let bb0 = f.blocks.values().next().expect("bb0");
        let bb2 = f.blocks.values().nth(2).expect("bb2");
        (
            bb0.statements.last().expect("a statement").kind.clone(),
            bb0.terminator.kind.clone(),
            bb2.terminator.kind.clone(),
        )
    }

    #[test]
    fn copy_on_drop_becomes_its_copy() {
        let (copy, term, cleanup) = blocks("src: copy _1, dst: copy _2, len: const 1_usize");
        let StatementKind::CopyNonOverlapping { dst, src, count } = copy else {
            panic!("no copy: {copy:?}");
        };
        assert_eq!(format!("{src:?}").matches("Field(0").count(), 1, "{src:?}");
        assert_eq!(format!("{dst:?}").matches("Field(1").count(), 1, "{dst:?}");
        assert_eq!(
            format!("{count:?}").matches("Field(2").count(),
            1,
            "{count:?}"
        );
        // The copy moves `u32`s, and control goes where the drop went.
        assert!(
            format!("{src:?}").contains("RawPtr(Not, Int(U32))"),
            "{src:?}"
        );
        assert!(
            matches!(term, TerminatorKind::Goto(t) if t.as_u32() == 1),
            "{term:?}"
        );
        // The cleanup path is left as it was.
        assert!(
            matches!(cleanup, TerminatorKind::Drop { .. }),
            "{cleanup:?}"
        );
    }

    #[test]
    fn a_guard_of_another_shape_keeps_its_drop() {
        // Fields in another order, or of other types.
        let (_, term, _) = blocks("dst: copy _2, src: copy _1, len: const 1_usize");
        assert!(matches!(term, TerminatorKind::Drop { .. }), "{term:?}");
        let (_, term, _) = blocks("src: copy _1, dst: copy _2, len: const 1_u32");
        assert!(matches!(term, TerminatorKind::Drop { .. }), "{term:?}");
        let (_, term, _) = blocks("src: copy _2, dst: copy _2, len: const 1_usize");
        assert!(matches!(term, TerminatorKind::Drop { .. }), "{term:?}");
    }

    #[test]
    fn a_guard_no_body_builds_keeps_its_drop() {
        let text = mir("src: copy _1, dst: copy _2, len: const 1_usize").replace(
            "        _3 = core::slice::sort::shared::smallsort::CopyOnDrop::<u32> { src: copy _1, dst: copy _2, len: const 1_usize };\n",
            "",
        );
        let k = import_text(&text, "", None).expect("the MIR imports");
        let f = k.bodies.values().next().expect("one body");
        let bb0 = f.blocks.values().next().expect("bb0");
        assert!(
            bb0.statements.is_empty(),
            "the aggregate is gone: {:?}",
            bb0.statements
        );
        assert!(matches!(bb0.terminator.kind, TerminatorKind::Drop { .. }));
    }
}
