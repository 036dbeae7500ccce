//! Which structs are dynamically sized, so that a pointer to one is fat.
//!
//! rustc's type-size report prints a dynamically sized struct's sized prefix
//! as its layout (`Packet { n: u32, data: [u32] }`: 4 bytes), so it cannot
//! tell. Three sources settle it, in this order:
//!
//! - the MIR's own use ([`by_use`]): the type of a by-value local and the
//!   element of an array or slice are sized; a field projected out of a
//!   struct with an unsized type (`((*_1).1: [u32])`), a pointer's metadata
//!   that is not `()`, or a cast of a pointer to a fat pointer shows the
//!   struct unsized; and a pointer field projected out of a struct the
//!   report lays out shows its pointee sized (8 bytes) or not (16);
//! - the layout probe, for each struct that no use settles and that a body
//!   makes pointers to from something else (a `transmute`, a cast of a fat
//!   pointer, an unsizing coercion, a raw pointer from its parts) or
//!   compares pointers to, where source can name it: `size_of::<*const
//!   T>()` is 16 for a dynamically sized `T` ([`super::probe`]). std's own
//!   types are not asked about;
//! - the rest stays unknown and is laid out as sized: its tail is never
//!   projected, its length never read, and a pointer to it never kept in a
//!   struct field the report lays out, so a thin pointer loses nothing.
//!   Where a fat pointer would still differ (a pointer comparison,
//!   `size_of_val`, a cast from a fat pointer to a struct with an unsized
//!   type argument), the lowering refuses.

use std::collections::{BTreeMap, BTreeSet};

use crate::layout::{LayoutTable, std_spelling};
use crate::model::{
    AggregateKind, CastKind, Crate, Operand, PlaceElem, Rvalue, StatementKind, Ty, UnOp,
};

/// What the MIR's use shows, by type name in std's spelling
/// ([`std_spelling`]: a `no_std` dependency prints `core::`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByUse {
    /// Structs a tail projection, a pointer's metadata, a cast to a fat
    /// pointer or a 16-byte pointer field shows unsized.
    pub unsized_adts: BTreeSet<String>,
    /// Structs and enums held by value, as array or slice elements, or
    /// behind an 8-byte pointer field.
    pub sized_adts: BTreeSet<String>,
}

/// What the bodies of `krate` show about the sizedness of its types.
pub fn by_use(krate: &Crate) -> ByUse {
    let mut sized = BTreeSet::new();
    for (_, b) in krate.bodies.iter() {
        for (_, l) in b.locals.iter() {
            collect_sized(&l.ty, true, &mut sized);
        }
    }
    let mut unsized_adts = unsized_by_use(krate);
    for (name, is_sized) in by_printed_fields(krate) {
        if is_sized {
            sized.insert(name);
        } else {
            unsized_adts.insert(name);
        }
    }
    ByUse {
        unsized_adts,
        sized_adts: sized,
    }
}

/// What rustc's report says of the pointees of pointer fields: a field
/// projected as `*const X`, `&X` or `NonNull<X>` out of a struct the report
/// lays out is 16 bytes when `X` is dynamically sized and 8 when it is not
/// (by name in std's spelling, whether sized). A pointer to `X` kept in a
/// struct field is read and written by that projection, so its width there
/// must be rustc's.
fn by_printed_fields(krate: &Crate) -> BTreeMap<String, bool> {
    let names = super::field_name_map(krate);
    let mut out = BTreeMap::new();
    for (_, b) in krate.bodies.iter() {
        b.for_each_typed_projection(|ty, e| {
            if let (PlaceElem::Field(i, t), Ty::Adt(path)) = (e, ty)
                && let Some(pointee @ Ty::Adt(_)) = pointer_target(t)
                && let Some(size) = printed_field_size(krate, ty, &path.def_path(), *i, &names)
            {
                match size {
                    8 => out.insert(std_spelling(&pointee.to_string()), true),
                    16 => out.insert(std_spelling(&pointee.to_string()), false),
                    _ => None,
                };
            }
        });
    }
    out
}

/// What `t` points to, if it is a reference, a raw pointer or a `NonNull`.
fn pointer_target(t: &Ty) -> Option<&Ty> {
    match t {
        Ty::Ref(_, p) | Ty::RawPtr(_, p) => Some(p),
        Ty::Adt(path) if path.def_path().ends_with("ptr::NonNull") => match path.generic_args() {
            [crate::model::GenericArg::Type(p)] => Some(p),
            _ => None,
        },
        _ => None,
    }
}

/// The size rustc's report prints for field `index` of the struct `ty`
/// (def path `def_path`), whose declaration-order names `names` may give.
fn printed_field_size(
    krate: &Crate,
    ty: &Ty,
    def_path: &str,
    index: u32,
    names: &BTreeMap<String, Vec<String>>,
) -> Option<u64> {
    let layout = krate.layouts.get(&ty.to_string())?;
    let crate::layout::TypeShape::Struct { fields } = &layout.shape else {
        return None;
    };
    let name = match names.get(def_path) {
        Some(declared) => declared.get(index as usize)?.clone(),
        None => index.to_string(),
    };
    fields.iter().find(|f| f.name == name).map(|f| f.size)
}

/// The structs and enums whose pointers a body makes from something else
/// (where a fat pointer to a dynamically sized struct is born: a
/// `transmute`, a cast of a fat pointer, an unsizing coercion, a raw
/// pointer built from its parts) or compares, and whose sizedness `known`
/// does not settle: the ones to ask the probe about. Anywhere else a
/// struct whose tail nothing reads can be taken for sized with nothing
/// lost, and asking rustc costs a compilation.
pub fn probe_candidates(krate: &Crate, known: &ByUse) -> BTreeSet<Ty> {
    let fat = |t: &Ty| {
        t.pointee().is_some_and(|p| {
            p.is_unsized()
                || matches!(p, Ty::Adt(_))
                    && known.unsized_adts.contains(&std_spelling(&p.to_string()))
        })
    };
    let mut out = BTreeSet::new();
    for (_, b) in krate.bodies.iter() {
        let ty_of = |op: &Operand| match op {
            Operand::Copy(p) | Operand::Move(p) => b.place_ty(p),
            _ => None,
        };
        for st in b.blocks.values().flat_map(|bb| &bb.statements) {
            let StatementKind::Assign(_, rv) = &st.kind else {
                continue;
            };
            match rv {
                // A pointee on both sides (`*const T` to `NonNull<T>`) is
                // thin or fat on both.
                Rvalue::Cast(CastKind::Transmute, op, to) => {
                    let (mut before, mut after) = (BTreeSet::new(), BTreeSet::new());
                    collect_pointees(to, false, &mut after);
                    if let Some(from) = ty_of(op) {
                        collect_pointees(&from, false, &mut before);
                    }
                    out.extend(before.symmetric_difference(&after).cloned());
                }
                Rvalue::Cast(CastKind::PtrToPtr, op, to) if ty_of(op).is_some_and(|t| fat(&t)) => {
                    out.extend(adt_pointee(to));
                }
                Rvalue::Cast(CastKind::PointerCoercion(k), _, to) if k.starts_with("Unsize") => {
                    out.extend(adt_pointee(to));
                }
                // `*const T from (data, meta)` with a metadata that is not `()`.
                Rvalue::Aggregate(AggregateKind::RawPtr(t, _), ops)
                    if ops.get(1).and_then(ty_of).is_some_and(|m| m != Ty::unit()) =>
                {
                    out.extend(adt_pointee(t).or(matches!(t, Ty::Adt(_)).then(|| t.clone())));
                }
                // Pointers compare their metadata too: the lowering refuses
                // a comparison of pointers to a struct of unknown sizedness.
                Rvalue::BinaryOp(op, a, _) if *op != crate::model::BinOp::Offset => {
                    if let Some(t) = ty_of(a) {
                        out.extend(adt_pointee(&t));
                    }
                }
                _ => {}
            }
        }
    }
    // The standard library's own pointer casts (`fmt::Arguments::new`
    // transmutes `&[Argument; N]` to `NonNull<Argument>`) would cost a probe
    // run in nearly every kernel, and its private types cannot be named.
    out.retain(|t| {
        let name = std_spelling(&t.to_string());
        !name.starts_with("std::")
            && !name.starts_with("alloc::")
            && !known.sized_adts.contains(&name)
            && !known.unsized_adts.contains(&name)
    });
    out
}

/// Records in `table` what the MIR's use and the probe (`probed`: by
/// name, whether sized) found.
pub fn record(table: &mut LayoutTable, by_use: ByUse, probed: BTreeMap<String, bool>) {
    table.unsized_adts.extend(by_use.unsized_adts);
    table.sized_adts.extend(by_use.sized_adts);
    for (name, is_sized) in probed {
        let name = std_spelling(&name);
        if is_sized {
            table.sized_adts.insert(name);
        } else {
            table.unsized_adts.insert(name);
        }
    }
}

/// The structs and enums in `ty` that are sized because of where they are:
/// `ty` itself when held `by_value`, array and slice elements, and the
/// elements of a tuple held by value.
fn collect_sized(ty: &Ty, by_value: bool, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Adt(p) => {
            if by_value {
                out.insert(std_spelling(&ty.to_string()));
            }
            for a in p.segments.iter().flat_map(|s| &s.args) {
                if let crate::model::GenericArg::Type(t) = a {
                    collect_sized(t, false, out);
                }
            }
        }
        Ty::Tuple(ts) => ts.iter().for_each(|t| collect_sized(t, by_value, out)),
        Ty::Array(e, _) | Ty::Slice(e) => collect_sized(e, true, out),
        Ty::Ref(_, e) | Ty::RawPtr(_, e) => collect_sized(e, false, out),
        _ => {}
    }
}

/// The struct or enum that the pointer type `t` points to, or that ends
/// the tuple it points to (`*const (u32, Cfg)` is as sized as `Cfg`).
fn adt_pointee(t: &Ty) -> Option<Ty> {
    let mut p = t.pointee()?;
    while let Ty::Tuple(elems) = p {
        p = elems.last()?;
    }
    matches!(p, Ty::Adt(_)).then(|| p.clone())
}

/// The structs and enums in `ty` that are pointees: behind a reference,
/// a raw pointer or a `NonNull` (`behind`). An array or slice element is
/// sized, so it is not one.
fn collect_pointees(ty: &Ty, behind: bool, out: &mut BTreeSet<Ty>) {
    match ty {
        Ty::Adt(p) => {
            if behind {
                out.insert(ty.clone());
            }
            let wraps_pointer = p.def_path().ends_with("ptr::NonNull");
            for a in p.segments.iter().flat_map(|s| &s.args) {
                if let crate::model::GenericArg::Type(t) = a {
                    collect_pointees(t, wraps_pointer, out);
                }
            }
        }
        Ty::Tuple(ts) => ts.iter().for_each(|t| collect_pointees(t, behind, out)),
        Ty::Array(e, _) | Ty::Slice(e) => collect_pointees(e, false, out),
        Ty::Ref(_, e) | Ty::RawPtr(_, e) => collect_pointees(e, true, out),
        _ => {}
    }
}

/// The structs that some body's MIR shows to be dynamically sized: a field
/// projected out of one has an unsized type (`((*_1).1: [u32])`), the
/// metadata of a pointer to one is not `()` (`_2 = PtrMetadata(copy _1)`
/// with `_2: usize`), or a pointer to one is cast to a fat pointer
/// (`copy _1 as *const [u8] (PtrToPtr)`). A struct's tail can only be read
/// through such a projection or its metadata, or by such a cast (a
/// `transmute` that would need it fat is refused for its size).
fn unsized_by_use(krate: &Crate) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let is_unsized = |t: &Ty, found: &BTreeSet<String>| {
        t.is_unsized() || matches!(t, Ty::Adt(_)) && found.contains(&std_spelling(&t.to_string()))
    };
    // A nested struct's tail shows its parent unsized once it is known to
    // be: repeat until nothing changes.
    loop {
        let before = found.len();
        for (_, b) in krate.bodies.iter() {
            b.for_each_typed_projection(|ty, e| {
                if let (PlaceElem::Field(_, t), Ty::Adt(_)) = (e, ty)
                    && is_unsized(t, &found)
                {
                    found.insert(std_spelling(&ty.to_string()));
                }
            });
            for st in b.blocks.values().flat_map(|bb| &bb.statements) {
                let StatementKind::Assign(dst, rv) = &st.kind else {
                    continue;
                };
                // `PtrMetadata(p)` is `()` for a thin `p`; a pointer cast
                // keeps the metadata, so one to a fat pointer is from one.
                // The target of an unsizing coercion is dynamically sized
                // by definition (`T: Unsize<U>` makes `U` a DST): `&S<[T;
                // N]>` to `&S<[T]>` shows `S<[T]>` unsized, even where no
                // source can name `S` for the probe (a struct declared in
                // a `const` block).
                if let Rvalue::Cast(CastKind::PointerCoercion(k), _, to) = rv
                    && k.starts_with("Unsize")
                    && let Some(pointee @ Ty::Adt(_)) = pointer_target(to)
                {
                    found.insert(std_spelling(&pointee.to_string()));
                    continue;
                }
                let (src, fat_result) = match rv {
                    Rvalue::UnaryOp(UnOp::PtrMetadata, Operand::Copy(src) | Operand::Move(src)) => {
                        (src, b.place_ty(dst).is_some_and(|t| t != Ty::unit()))
                    }
                    Rvalue::Cast(
                        CastKind::PtrToPtr,
                        Operand::Copy(src) | Operand::Move(src),
                        to,
                    ) => (src, to.pointee().is_some_and(|p| is_unsized(p, &found))),
                    _ => continue,
                };
                if let Some(Ty::Ref(_, pointee) | Ty::RawPtr(_, pointee)) = b.place_ty(src)
                    && fat_result
                    && matches!(*pointee, Ty::Adt(_))
                {
                    found.insert(std_spelling(&pointee.to_string()));
                }
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntTy;

    fn adt(path: &str) -> Ty {
        crate::parse::parse_type(path).expect("a type")
    }

    #[test]
    fn the_target_of_an_unsizing_coercion_is_unsized() {
        // `S` is declared in a `const` block: no source can name it for the
        // probe, so only the coercion tells.
        let mir = "const kernel::main_cs::{constant#0}: &kernel::main_cs::{constant#0}::S<[()]> = {
    let mut _0: &kernel::main_cs::{constant#0}::S<[()]>;
    let mut _1: &kernel::main_cs::{constant#0}::S<[(); 0]>;

    bb0: {
        _0 = copy _1 as &kernel::main_cs::{constant#0}::S<[()]> (PointerCoercion(Unsize, Implicit));
        return;
    }
}
";
        let krate = crate::import_text(mir, "", None).expect("imports");
        let known = by_use(&krate);
        assert_eq!(
            known.unsized_adts.iter().collect::<Vec<_>>(),
            ["kernel::main_cs::{constant#0}::S<[()]>"]
        );
    }

    #[test]
    fn a_struct_is_unsized_where_its_tail_or_its_metadata_is_used() {
        // `h` comes first: `Outer` is found in the second pass.
        let mir = "fn kernel::h(_1: &kernel::Outer) -> usize {
    let mut _0: usize;
    let mut _2: &[u64];

    bb0: {
        _2 = &(((*_1).1: kernel::Words).3: [u64]);
        _0 = PtrMetadata(copy _2);
        return;
    }
}

fn kernel::f(_1: &kernel::Words) -> usize {
    let mut _0: usize;
    let mut _2: &[u64];

    bb0: {
        _2 = &((*_1).3: [u64]);
        _0 = PtrMetadata(copy _2);
        return;
    }
}

fn kernel::g(_1: *const kernel::Hidden, _2: *const kernel::Plain) -> usize {
    let mut _0: usize;
    let mut _3: ();
    let mut _4: u32;
    let mut _5: (kernel::Plain, u8);
    let mut _6: &[kernel::Elem];
    let mut _7: *const kernel::Behind<std::ptr::NonNull<kernel::Arg>>;
    let mut _8: *const kernel::Lone;
    let mut _9: *const [u8];
    let mut _10: *const kernel::Compared;
    let mut _11: bool;
    let mut _12: *const (u32, kernel::Last);

    bb0: {
        _0 = PtrMetadata(copy _1);
        _3 = PtrMetadata(copy _2);
        _4 = copy ((*_2).0: u32);
        _7 = copy _9 as *const kernel::Behind<std::ptr::NonNull<kernel::Arg>> (PtrToPtr);
        _11 = Eq(copy _10, copy _10);
        _11 = Lt(copy _12, copy _12);
        _12 = Offset(copy _12, const 1_usize);
        return;
    }
}

";
        let krate = crate::import_text(mir, "", None).expect("imports");
        let known = by_use(&krate);
        // `Outer` holds `Words` as its tail: found once `Words` is.
        assert_eq!(
            known.unsized_adts.iter().collect::<Vec<_>>(),
            ["kernel::Hidden", "kernel::Outer", "kernel::Words"]
        );
        // Held by value (in a tuple) or as a slice's element: sized.
        assert_eq!(
            known.sized_adts.iter().collect::<Vec<_>>(),
            ["kernel::Elem", "kernel::Plain"]
        );
        // What neither settles goes to the probe where a pointer to it is
        // made from a fat one or compared (`Last` ends a compared tuple);
        // `Lone`, behind a pointer nothing makes or compares, and `Arg`,
        // inside the pointee, are not asked about.
        let asked: Vec<String> = probe_candidates(&krate, &known)
            .iter()
            .map(Ty::to_string)
            .collect();
        assert_eq!(
            asked,
            [
                "kernel::Behind<std::ptr::NonNull<kernel::Arg>>",
                "kernel::Compared",
                "kernel::Last"
            ]
        );
    }

    #[test]
    fn sizedness_is_known_for_probed_structs_and_unknown_for_the_rest() {
        let mut table = crate::layout::LayoutTable::default();
        table.unsized_adts.insert("kernel::Packet".into());
        table.sized_adts.insert("std::option::Option".into());
        assert_eq!(table.sizedness(&adt("kernel::Packet")), Some(false));
        assert!(table.is_unsized(&adt("kernel::Packet")));
        // A `no_std` dependency prints std's types through `core`.
        assert_eq!(table.sizedness(&adt("core::option::Option")), Some(true));
        assert_eq!(table.sizedness(&adt("dep::Hidden")), None);
        assert!(!table.is_unsized(&adt("dep::Hidden")));
        assert_eq!(table.sizedness(&Ty::Slice(Box::new(Ty::Bool))), Some(false));
        assert_eq!(table.sizedness(&Ty::Int(IntTy::U8)), Some(true));
    }

    #[test]
    fn a_pointer_field_shows_its_pointee_sized_or_not_by_its_printed_width() {
        let mir = "fn kernel::f(_1: &kernel::W, _2: &kernel::V) -> () {
    let mut _0: ();
    let mut _3: *const kernel::Header;
    let mut _4: std::ptr::NonNull<kernel::Small>;

    bb0: {
        _3 = copy ((*_1).0: *const kernel::Header);
        _4 = copy ((*_2).0: std::ptr::NonNull<kernel::Small>);
        return;
    }
}
";
        let sizes = "print-type-size type: `kernel::W`: 16 bytes, alignment: 8 bytes
print-type-size     field `.0`: 16 bytes
print-type-size type: `kernel::V`: 8 bytes, alignment: 8 bytes
print-type-size     field `.0`: 8 bytes
";
        let krate = crate::import_text(mir, sizes, None).expect("imports");
        let known = by_use(&krate);
        assert!(known.unsized_adts.contains("kernel::Header"), "{known:?}");
        assert!(known.sized_adts.contains("kernel::Small"), "{known:?}");
    }
}
