//! The slice tail of a dynamically sized struct: where it starts and what
//! it holds, read from two listings of rustc's layout report that must
//! agree (see [`Layouts::slice_tail`]).

use super::Layouts;
use crate::layout::{TypeShape, std_spelling};
use crate::model::Ty;

/// The slice tail of a dynamically sized struct ([`Layouts::slice_tail`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceTail {
    /// Where the tail's first element starts.
    pub offset: u64,
    /// The element type.
    pub elem: Ty,
    /// The element's size, which is its stride.
    pub elem_size: u64,
    /// The struct's alignment, the tail's included.
    pub align: u64,
}

/// The unsized types (slices, `str`, `dyn`) among the type arguments of
/// `ty`, at any depth.
fn unsized_leaves<'t>(ty: &'t Ty, out: &mut Vec<&'t Ty>) {
    if let Ty::Adt(path) = ty {
        for arg in path.generic_args() {
            if let crate::model::GenericArg::Type(t) = arg {
                if t.is_unsized() {
                    out.push(t);
                } else {
                    unsized_leaves(t, out);
                }
            }
        }
    }
}

impl Layouts<'_> {
    /// Where the slice tail of the dynamically sized struct `ty` starts and
    /// what it holds, so that `size_of_val` can add the tail's length:
    /// `P<[u8]>` with `struct P<T: ?Sized> { a: u32, n: u8, data: T }` has
    /// its `[u8]` at 5 and alignment 4.
    ///
    /// Two listings of rustc's report must agree. The unsized struct's own
    /// prints the tail last, as a field of 0 bytes at its offset, with the
    /// struct's alignment (its printed size is the prefix's rounded up, not
    /// the tail's offset); but not the tail's type, which may not be the
    /// type argument (`{ p: PhantomData<T>, tail: [u64] }` at `T = [u8]`).
    /// A sized twin does: the same struct with the array `[E; N]` in place
    /// of the one unsized type argument `[E]` (`P<[u8; 2]>`), known sized,
    /// whose last field is exactly `N` elements wide, so that field is the
    /// type argument. rustc keeps a maybe-unsized last field last in every
    /// instantiation, but the fields before it may differ where they
    /// mention `T` (`p: *const T` is fat in one and thin in the other), so
    /// the twin's tail offset and alignment must equal the unsized
    /// struct's.
    ///
    /// `None` where either listing is missing or they disagree (a pointer
    /// built from parts, a struct declaring `[E]` itself), or where the
    /// tail is `dyn` or `str`.
    pub fn slice_tail(&self, ty: &Ty) -> Option<SliceTail> {
        if !self.is_unsized(ty) {
            return None;
        }
        let mut leaves = Vec::new();
        unsized_leaves(ty, &mut leaves);
        let [leaf @ Ty::Slice(elem)] = leaves.as_slice() else {
            return None;
        };
        let elem_size = self.of(elem).ok()?.size;
        let own = self.table.get(&ty.to_string())?;
        let TypeShape::Struct { fields } = &own.shape else {
            return None;
        };
        let tail = fields.last().filter(|f| f.size == 0)?;
        // The report's keys are in std's spelling; a dependency's MIR says
        // `core::`.
        let name = std_spelling(&ty.to_string());
        let leaf_name = std_spelling(&leaf.to_string());
        let at = name.find(&leaf_name)?;
        if name[at + 1..].contains(&leaf_name) {
            return None;
        }
        let before = format!("{}{}; ", &name[..at], &leaf_name[..leaf_name.len() - 1]);
        let after = format!("]{}", &name[at + leaf_name.len()..]);
        let twin_agrees = self
            .table
            .types
            .range(before.clone()..)
            .take_while(|(twin, _)| twin.starts_with(&before))
            .any(|(twin, layout)| {
                let Some(n) = twin[before.len()..]
                    .strip_suffix(&after)
                    .and_then(|n| n.parse::<u64>().ok())
                else {
                    return false;
                };
                let TypeShape::Struct { fields } = &layout.shape else {
                    return false;
                };
                fields.last().is_some_and(|t| {
                    self.table.sized_adts.contains(twin)
                        && n.checked_mul(elem_size) == Some(t.size)
                        && t.offset == tail.offset
                        && layout.align == own.align
                })
            });
        twin_agrees.then(|| SliceTail {
            offset: tail.offset,
            elem: (**elem).clone(),
            elem_size,
            align: own.align,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::Sources;
    use super::*;
    use crate::model::IntTy;

    /// rustc's report for `struct P<T: ?Sized> { a: u32, n: u8, data: T }`
    /// at `[u8; 2]` and `[u8]`; for `R<T: ?Sized> { p: *const T, n: u8,
    /// tail: T }`, whose pointer is thin in the twin and fat in the unsized
    /// struct, so the tails start at 9 and 17; and for `Q` at `[u64; 2]`
    /// and `[u64]` with a 12-byte last field in the twin. No real struct
    /// gives the `Q` pair (a twin whose last field is not the type argument
    /// makes the unsized one sized too): it exercises the width check.
    const SLICE_TAILS: &str = "\
print-type-size type: `kernel::P<[u8; 2]>`: 8 bytes, alignment: 4 bytes
print-type-size     field `.a`: 4 bytes
print-type-size     field `.n`: 1 bytes
print-type-size     field `.data`: 2 bytes
print-type-size     end padding: 1 bytes
print-type-size type: `kernel::P<[u8]>`: 8 bytes, alignment: 4 bytes
print-type-size     field `.a`: 4 bytes
print-type-size     field `.n`: 1 bytes
print-type-size     field `.data`: 0 bytes
print-type-size     end padding: 3 bytes
print-type-size type: `kernel::R<[u8; 3]>`: 16 bytes, alignment: 8 bytes
print-type-size     field `.p`: 8 bytes
print-type-size     field `.n`: 1 bytes
print-type-size     field `.tail`: 3 bytes
print-type-size     end padding: 4 bytes
print-type-size type: `kernel::R<[u8]>`: 24 bytes, alignment: 8 bytes
print-type-size     field `.p`: 16 bytes
print-type-size     field `.n`: 1 bytes
print-type-size     field `.tail`: 0 bytes
print-type-size     end padding: 7 bytes
print-type-size type: `kernel::Q<[u64; 2]>`: 12 bytes, alignment: 4 bytes
print-type-size     field `.p`: 0 bytes
print-type-size     field `.tail`: 12 bytes
print-type-size type: `kernel::Q<[u64]>`: 12 bytes, alignment: 4 bytes
print-type-size     field `.p`: 0 bytes
print-type-size     field `.tail`: 0 bytes
print-type-size type: `kernel::X<[u8], &[u8]>`: 8 bytes, alignment: 4 bytes
print-type-size     field `.a`: 4 bytes
print-type-size     field `.data`: 0 bytes
";

    #[test]
    fn a_slice_tail_needs_the_unsized_listing_and_a_sized_twin_that_agree() {
        let mut sources = Sources::report(SLICE_TAILS);
        let ty = |t: &str| crate::parse::parse_type(t).expect("type");
        let [p, q, r, x] = [
            "kernel::P<[u8]>",
            "kernel::Q<[u64]>",
            "kernel::R<[u8]>",
            "kernel::X<[u8], &[u8]>",
        ]
        .map(ty);
        sources
            .table
            .unsized_adts
            .extend([&p, &q, &r, &x].map(ToString::to_string));
        // The twin's layout counts only where its sizedness is known.
        assert_eq!(sources.layouts().slice_tail(&p), None);
        sources.table.sized_adts.extend(
            [
                "kernel::P<[u8; 2]>",
                "kernel::Q<[u64; 2]>",
                "kernel::R<[u8; 3]>",
            ]
            .map(String::from),
        );
        let layouts = sources.layouts();
        // The tail at 5, not at the printed size 8; the alignment is 4.
        assert_eq!(
            layouts.slice_tail(&p),
            Some(SliceTail {
                offset: 5,
                elem: Ty::Int(IntTy::U8),
                elem_size: 1,
                align: 4,
            })
        );
        // 12 bytes are not two u64: the twin's last field is not `T`.
        assert_eq!(layouts.slice_tail(&q), None);
        // The twin's tail is at 9, the unsized struct's at 17.
        assert_eq!(layouts.slice_tail(&r), None);
        // `[u8]` twice in the name: which one the twin replaces is unclear.
        assert_eq!(layouts.slice_tail(&x), None);
        // A sized struct has no tail to read.
        assert_eq!(layouts.slice_tail(&ty("kernel::P<[u8; 2]>")), None);
    }
}
