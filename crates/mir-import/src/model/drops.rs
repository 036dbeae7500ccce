//! Which values need no drop: MIR keeps a `drop` wherever a generic body's
//! value might have drop glue, and instances (ours and rustc's inlined std
//! code) keep them at types that have none. Such a `drop` does nothing.

use std::collections::BTreeMap;

use super::Crate;
use super::ty::Ty;
use crate::prelude::{KERNEL_MODULE, PRELUDE_MODULE};

/// Standard-library types, by their path under `std` or `core`, that have
/// drop glue only through their type arguments: no `Drop` impl, or one
/// that only drops the values of their type argument that they still hold.
/// Each names how many of its leading type arguments it holds by value; the
/// rest it holds only behind a reference, so their drop glue is not its
/// own.
const DROPS_ONLY_ELEMENTS: &[(&str, usize)] = &[
    // `[T; N]::map` drains its input through `Drain<'l, 'f, T, N, F>`, whose
    // `Drop` drops the elements not yet taken. It holds `f: &'f mut F`, so
    // the closure is dropped by its owner (a dependency's closure whose
    // captures the kernel's MIR never shows: tinyvec's `Array::default`,
    // which `ArrayVec::new` calls, maps `[(); N]` with one).
    ("array::drain::Drain", 1),
    // `for x in [a, b, c]`: the array's by-value iterator, whose `Drop`
    // drops the elements not yet taken.
    ("array::IntoIter", 1),
    // No `Drop` impl: a closure and a `PhantomData` (`[T; N]::map`'s wrapper).
    ("ops::try_trait::Wrapped", usize::MAX),
    // `core`'s iterators and adapters that hold only their type arguments
    // (and plain data, pointers): no `Drop` impl, so dropping one drops
    // what it holds. rustc leaves such a drop in a shim printed generic
    // over a kernel closure (`Skip<Map<Iter<'_, u32>, F0>>`); the instance
    // at a closure without drop glue drops nothing. Not `Peekable` nor
    // `Flatten`, which hold an item type no argument names. A slice's
    // iterators hold their elements behind a pointer.
    ("slice::Iter", 0),
    ("slice::IterMut", 0),
    ("iter::Map", usize::MAX),
    ("iter::Filter", usize::MAX),
    ("iter::FilterMap", usize::MAX),
    ("iter::Enumerate", usize::MAX),
    ("iter::Skip", usize::MAX),
    ("iter::Take", usize::MAX),
    ("iter::SkipWhile", usize::MAX),
    ("iter::TakeWhile", usize::MAX),
    ("iter::Rev", usize::MAX),
    ("iter::Zip", usize::MAX),
    ("iter::Chain", usize::MAX),
    ("iter::Copied", usize::MAX),
    ("iter::Cloned", usize::MAX),
    ("iter::StepBy", usize::MAX),
    ("iter::Inspect", usize::MAX),
    ("iter::FromFn", usize::MAX),
];

impl Crate {
    /// Whether dropping a value of `ty` does nothing: no type in it has drop
    /// glue. Conservative: scalars, references, pointers, closures over such
    /// captures, the kernel's and the prelude's own types when the kernel's
    /// source implements `Drop` for nothing (the prelude implements it only
    /// in its host half), and [`DROPS_ONLY_ELEMENTS`] over such types.
    pub fn trivially_dropped(&self, ty: &Ty) -> bool {
        let mut captures = None;
        self.trivially_dropped_with(ty, &mut captures)
    }

    /// [`Crate::trivially_dropped`] of each of `tys`, the closures'
    /// captures read once for all of them.
    pub fn trivially_dropped_each<'t>(&self, tys: impl IntoIterator<Item = &'t Ty>) -> Vec<bool> {
        let mut captures = None;
        tys.into_iter()
            .map(|ty| self.trivially_dropped_with(ty, &mut captures))
            .collect()
    }

    fn trivially_dropped_with(
        &self,
        ty: &Ty,
        captures: &mut Option<BTreeMap<String, Vec<Ty>>>,
    ) -> bool {
        match ty {
            Ty::Bool | Ty::Char | Ty::Int(_) | Ty::Float(_) | Ty::Never | Ty::Str => true,
            Ty::Ref(..) | Ty::RawPtr(..) | Ty::FnPtr(..) => true,
            // A function item holds nothing.
            t if t.is_fn_item() => true,
            Ty::Tuple(v) => v.iter().all(|t| self.trivially_dropped_with(t, captures)),
            Ty::Array(e, _) | Ty::Slice(e) => self.trivially_dropped_with(e, captures),
            Ty::Opaque(name) if name.starts_with("{closure@") => {
                let tys = captures
                    .get_or_insert_with(|| self.closure_captures())
                    .get(name)
                    .cloned();
                tys.is_some_and(|c| c.iter().all(|t| self.trivially_dropped_with(t, captures)))
            }
            Ty::Adt(p) => {
                let def = p.def_path();
                let module = p.segments.first().map(|s| s.name.as_str());
                let own = !self.kernel_implements_drop
                    && matches!(module, Some(KERNEL_MODULE | PRELUDE_MODULE));
                let std_relative = crate::calls::std_relative(&def);
                let std_elements = DROPS_ONLY_ELEMENTS
                    .iter()
                    .find(|(path, _)| Some(*path) == std_relative)
                    .map(|&(_, held)| held);
                // `PhantomData` holds nothing.
                let phantom = std_relative == Some("marker::PhantomData");
                let held = std_elements.unwrap_or(usize::MAX);
                (own || std_elements.is_some() || phantom)
                    && p.segments.iter().all(|s| {
                        s.type_args()
                            .take(held)
                            .all(|t| self.trivially_dropped_with(t, captures))
                    })
            }
            Ty::Opaque(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GenericArg, IntTy, Mutability, Path, PathSegment};

    fn adt(segments: &[&str], args: Vec<Ty>) -> Ty {
        let n = segments.len();
        Ty::Adt(Path {
            segments: segments
                .iter()
                .enumerate()
                .map(|(i, s)| PathSegment {
                    name: s.to_string(),
                    args: if i + 1 == n {
                        args.iter().cloned().map(GenericArg::Type).collect()
                    } else {
                        vec![]
                    },
                })
                .collect(),
        })
    }

    #[test]
    fn drop_glue_is_found_conservatively() {
        let mut k = Crate::default();
        let u32_ = Ty::Int(IntTy::U32);
        assert!(k.trivially_dropped(&Ty::Tuple(vec![
            u32_.clone(),
            Ty::Ref(Mutability::Mut, Box::new(u32_.clone()))
        ])));
        let drain = adt(&["std", "array", "drain", "Drain"], vec![u32_.clone()]);
        assert!(k.trivially_dropped(&drain));
        let own = adt(&["kernel", "Pair"], vec![u32_.clone()]);
        assert!(k.trivially_dropped(&own));
        // Another std type, a closure nobody builds, and the kernel's own
        // types once it implements `Drop`.
        assert!(!k.trivially_dropped(&adt(&["std", "vec", "Vec"], vec![u32_.clone()])));
        assert!(!k.trivially_dropped(&Ty::Opaque("{closure@k.rs:1:1: 1:4}".into())));
        assert!(!k.trivially_dropped(&adt(
            &["std", "array", "drain", "Drain"],
            vec![adt(&["std", "vec", "Vec"], vec![u32_.clone()])]
        )));
        // `Drain` holds its closure behind `&mut`: a closure whose captures
        // are unknown does not make it droppable, its elements do.
        let closure = Ty::Opaque("{closure@dep::f::{closure#0}}".into());
        assert!(k.trivially_dropped(&adt(
            &["core", "array", "drain", "Drain"],
            vec![Ty::Tuple(vec![]), closure.clone()]
        )));
        assert!(!k.trivially_dropped(&adt(
            &["core", "array", "drain", "Drain"],
            vec![
                adt(&["std", "vec", "Vec"], vec![u32_.clone()]),
                closure.clone()
            ]
        )));
        // `Wrapped` holds its closure by value.
        assert!(!k.trivially_dropped(&adt(
            &["core", "ops", "try_trait", "Wrapped"],
            vec![u32_.clone(), Ty::Tuple(vec![]), closure.clone()]
        )));
        // `core`'s adapters drop what they hold; a slice's iterator holds
        // its elements behind a pointer.
        let vec = adt(&["std", "vec", "Vec"], vec![u32_.clone()]);
        let iter = adt(&["std", "slice", "Iter"], vec![vec.clone()]);
        let skip = |inner: Ty| adt(&["std", "iter", "Skip"], vec![inner]);
        let map = |f: Ty| adt(&["std", "iter", "Map"], vec![iter.clone(), f]);
        assert!(k.trivially_dropped(&skip(iter.clone())));
        assert!(k.trivially_dropped(&skip(map(Ty::FnPtr(vec![], Box::new(u32_.clone()))))));
        assert!(!k.trivially_dropped(&skip(map(closure))));
        assert!(!k.trivially_dropped(&skip(vec)));
        k.kernel_implements_drop = true;
        assert!(!k.trivially_dropped(&own));
    }
}
