//! Layouts for constant evaluation, taken only from what rustc itself reported.
//!
//! Primitives, pointers and arrays have layouts fixed by the target (nvptx64 and
//! the x86-64 host agree: 8-byte pointers, `usize` and `u64` 8-aligned).
//! Structs and enums come from `-Zprint-type-sizes`. Tuples, which that report
//! never prints, come from the layout probe ([`super::probe`]), which asks rustc
//! for `size_of`, `align_of` and `offset_of!` of each tuple type. Nothing is
//! inferred from field order: DESIGN.md records that a tuple and a tuple struct
//! with the same fields are laid out differently.

use std::collections::{BTreeMap, BTreeSet};

use crate::layout::{FieldLayout, LayoutTable, TagLayout, TypeShape};
use crate::model::{ArrayLen, FloatTy, IntTy, Ty};

mod slice_tail;

pub use slice_tail::SliceTail;

/// The pointer size: the device's ([`device_ir::layout::POINTER_SIZE`]), which
/// the x86-64 host that prints the MIR shares. One declaration for the
/// workspace, so the evaluator's bytes and the device's globals cannot drift.
pub(crate) use device_ir::layout::POINTER_SIZE as PTR_SIZE;

/// Why a type's layout is not known to the evaluator. Nothing is guessed: a
/// layout rustc did not report is an error naming the type, and each message
/// names the construct that is not supported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownLayout {
    /// An array whose length is a generic or an unevaluated constant.
    #[error("arrays of a generic length are not supported (array length `{0}` is not a number)")]
    ArrayLength(Ty),
    /// A tuple the layout probe did not measure.
    #[error(
        "rustc's layout of tuple `{0}` is unknown (not probed), and a tuple of unknown layout is not supported"
    )]
    TupleNotProbed(Ty),
    /// An unsized type (`str`, `[T]`) or an opaque one.
    #[error("{}", unsized_message(.0))]
    Unsized(Ty),
    /// A struct or enum absent from `-Zprint-type-sizes`.
    #[error("{}", not_printed_message(.0))]
    NotPrinted(Ty),
    /// A name the report printed with two different layouts.
    #[error(
        "two types print as `{0}`, with different layouts (a closure of a generic function inlined at two types prints without its type arguments), and which one a value has is unknown"
    )]
    Ambiguous(Ty),
    /// An enum with no printed tag whose niche is not a proven null niche.
    #[error(
        "the niche encoding of `{0}` is not proven, and an enum whose niche is not proven is not supported"
    )]
    NicheUnproven(Ty),
    /// A union the report gives a field at a non-zero offset: rustc's
    /// layout code does not today, though the language does not promise it.
    #[error("rustc's layout report puts a field of union `{0}` at a non-zero offset")]
    UnionFieldOffset(Ty),
}

/// Names the construct behind a type with no sized layout.
fn unsized_message(ty: &Ty) -> String {
    let text = ty.to_string();
    let what = if text.contains("async fn body") || text.contains("coroutine") {
        "`async fn` and coroutine state machines are not supported"
    } else if text.starts_with("dyn ") || text.contains("dyn ") {
        "trait objects (`dyn Trait`) are not supported"
    } else {
        "values of a type without a sized layout are not supported"
    };
    format!("{what} (type `{ty}` has no sized layout)")
}

/// Names the construct behind a type rustc printed no layout for: a type
/// parameter means a generic function that stayed a call.
fn not_printed_message(ty: &Ty) -> String {
    match ty {
        Ty::Adt(p) if p.segments.len() == 1 && p.segments[0].args.is_empty() => format!(
            "generic functions that stay calls are not supported: `{ty}` is a type parameter, and rustc printed no layout for it (let rustc inline the function, or make it non-generic)"
        ),
        _ => format!(
            "rustc printed no layout for `{ty}`, and a type without a printed layout is not supported"
        ),
    }
}

/// How an enum's variant is encoded, as far as it can be proven.
#[derive(Clone, Debug, PartialEq)]
pub enum Encoding {
    /// A tag at `offset`, `size` bytes, with a value per variant.
    Direct {
        /// The tag's offset.
        offset: u64,
        /// The tag's size.
        size: u64,
    },
    /// A niche: the untagged variant stores its fields and leaves the niche
    /// field as it is, every other variant writes its value into the niche
    /// field (bytes the untagged variant's fields never hold, since rustc
    /// took them from outside that field's valid range). The nullable pointer
    /// (`Option<&T>`, `Option<NonNull<T>>`, `Option<NonZero*>`) is the one
    /// Rust guarantees: `None` is zero at offset 0. Every other niche comes
    /// from the layout probe: `Option<Ordering>` stores `None` as 2, and
    /// `Result<&[u8], E>` stores `Err` as a null pointer with `E` beside it.
    Niche {
        /// Where the niche field starts.
        offset: u64,
        /// The niche field's size in bytes.
        size: u64,
        /// The variant that writes nothing into the niche field.
        untagged: String,
        /// Each other variant with the value it stores there.
        tagged: Vec<(String, u128)>,
    },
    /// No tag and one printed variant: every other variant is uninhabited
    /// (`Option<Infallible>` is always `None`), so the variant is a constant.
    Single {
        /// The one inhabited variant.
        variant: String,
    },
}

/// One enum variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The variant's name.
    pub name: String,
    /// Field offsets by field name (`0`, `1`, or a named field).
    pub fields: BTreeMap<String, u64>,
    /// The tag value, for direct encodings, when known.
    pub tag_value: Option<u128>,
}

/// A type's layout as the evaluator needs it.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A scalar of `size` bytes (integers, floats, bool, char, thin pointers).
    Scalar,
    /// A fat pointer: data pointer at 0, length at 8.
    FatPointer,
    /// `[T; N]`: elements every `stride` bytes.
    Array {
        /// The element type.
        elem: Ty,
        /// The element count.
        count: u64,
        /// Bytes between elements.
        stride: u64,
    },
    /// A struct or tuple: field offsets by name.
    Struct {
        /// Offsets by field name.
        fields: BTreeMap<String, u64>,
    },
    /// An enum.
    Enum {
        /// How the variant is stored.
        encoding: Encoding,
        /// The variants.
        variants: Vec<Variant>,
    },
    /// A zero-sized type with nothing to write.
    Zst,
}

/// A type's size, alignment and shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// What is inside.
    pub shape: Shape,
}

/// What the layout probe measured: tuple layouts (size, alignment and each
/// field's offset), and the niches of enums rustc printed no tag for.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TupleLayouts {
    /// By the tuple type as printed.
    pub by_type: BTreeMap<String, (u64, u64, Vec<u64>)>,
    /// By the enum type as printed: where its niche is and what it stores.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub niches: BTreeMap<String, ProbedNiche>,
}

/// A niche encoding as the probe measured it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProbedNiche {
    /// Where the niche field starts.
    pub offset: u64,
    /// The niche field's size in bytes (1, 2, 4, 8 or 16).
    pub size: u64,
    /// The variant that stores nothing in the niche field.
    pub untagged: ProbedVariant,
    /// The other variants, each with the value it stores there.
    pub tagged: Vec<(ProbedVariant, u128)>,
    /// The whole enum's size in bytes, as measured: what shows that a
    /// closure's proxy enum is laid out as the enum it stands for.
    #[serde(skip)]
    pub enum_size: u64,
}

/// A variant as the probe names it: by name where it built the variant, by
/// declaration index where rustc's layout report gave it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ProbedVariant {
    /// The variant's name.
    Name(String),
    /// The variant's index in declaration order.
    Index(u32),
}

/// Where layouts come from.
pub struct Layouts<'a> {
    /// rustc's report.
    pub table: &'a LayoutTable,
    /// The probe's tuple layouts.
    pub tuples: &'a TupleLayouts,
    /// Discriminant values of the crate's own enums, by def path.
    pub discriminants: &'a BTreeMap<String, Vec<(String, i128)>>,
    /// Field names in declaration order of the crate's own structs, by def
    /// path: MIR projects fields by index, the report lists them by name.
    pub field_names: &'a BTreeMap<String, Vec<String>>,
    /// Def paths of the unions whose source was read (the kernel's, and a
    /// dependency's where its item attributes are linked), which the report
    /// prints as one-variant enums.
    pub unions: &'a BTreeSet<String>,
}

/// Discriminants of standard enums that constants use, in declaration order
/// (`core::option::Option` declares `None` then `Some`).
const STD_DISCRIMINANTS: &[(&str, &[(&str, i128)])] = &[
    ("std::option::Option", &[("None", 0), ("Some", 1)]),
    ("core::option::Option", &[("None", 0), ("Some", 1)]),
    ("std::result::Result", &[("Ok", 0), ("Err", 1)]),
    ("core::result::Result", &[("Ok", 0), ("Err", 1)]),
    // `enum ControlFlow<B, C = ()> { Continue(C), Break(B) }` (the `?` and
    // `try_fold` machinery that `[T; N]::map` inlines).
    ("std::ops::ControlFlow", &[("Continue", 0), ("Break", 1)]),
    ("core::ops::ControlFlow", &[("Continue", 0), ("Break", 1)]),
    // `enum Bound<T> { Included(T), Excluded(T), Unbounded }` (a range
    // argument, `copy_within(0..6, 2)`), re-exported in `std::collections`.
    (
        "std::collections::Bound",
        &[("Included", 0), ("Excluded", 1), ("Unbounded", 2)],
    ),
    (
        "std::ops::Bound",
        &[("Included", 0), ("Excluded", 1), ("Unbounded", 2)],
    ),
    (
        "core::ops::Bound",
        &[("Included", 0), ("Excluded", 1), ("Unbounded", 2)],
    ),
    // `#[repr(i8)]` with explicit discriminants: not their positions.
    (
        "std::cmp::Ordering",
        &[("Less", -1), ("Equal", 0), ("Greater", 1)],
    ),
    (
        "core::cmp::Ordering",
        &[("Less", -1), ("Equal", 0), ("Greater", 1)],
    ),
];

impl Layouts<'_> {
    /// Whether a pointer to `ty` is fat ([`LayoutTable::is_unsized`]).
    pub fn is_unsized(&self, ty: &Ty) -> bool {
        self.table.is_unsized(ty)
    }

    /// The layout of `ty`, or why it is unknown.
    ///
    /// # Errors
    ///
    /// [`UnknownLayout`] when rustc's report and the probe do not give it.
    pub fn of(&self, ty: &Ty) -> Result<Layout, UnknownLayout> {
        let scalar = |size: u64| Layout {
            size,
            align: size,
            shape: Shape::Scalar,
        };
        Ok(match ty {
            Ty::Bool => scalar(1),
            Ty::Char => scalar(4),
            Ty::Int(i) => Layout {
                size: i.size(),
                align: int_align(*i),
                shape: Shape::Scalar,
            },
            Ty::Float(f) => scalar(float_size(*f)),
            Ty::Ref(_, t) | Ty::RawPtr(_, t) => {
                if self.is_unsized(t) {
                    Layout {
                        size: 2 * PTR_SIZE,
                        align: PTR_SIZE,
                        shape: Shape::FatPointer,
                    }
                } else {
                    scalar(PTR_SIZE)
                }
            }
            Ty::FnPtr(..) => scalar(PTR_SIZE),
            Ty::Never => Layout {
                size: 0,
                align: 1,
                shape: Shape::Zst,
            },
            // A function item names its function in its type and holds
            // nothing (`sort_unstable` passes `<u32 as PartialOrd>::lt`).
            t if t.is_fn_item() => Layout {
                size: 0,
                align: 1,
                shape: Shape::Zst,
            },
            Ty::Tuple(elems) if elems.is_empty() => Layout {
                size: 0,
                align: 1,
                shape: Shape::Zst,
            },
            Ty::Array(elem, len) => {
                let ArrayLen::Known(count) = len else {
                    return Err(UnknownLayout::ArrayLength(ty.clone()));
                };
                let e = self.of(elem)?;
                Layout {
                    size: e.size * count,
                    align: e.align,
                    shape: Shape::Array {
                        elem: (**elem).clone(),
                        count: *count,
                        stride: e.size,
                    },
                }
            }
            Ty::Tuple(_) => {
                let key = ty.to_string();
                let (size, align, offsets) = self
                    .tuples
                    .by_type
                    .get(&key)
                    .ok_or_else(|| UnknownLayout::TupleNotProbed(ty.clone()))?;
                let fields = offsets
                    .iter()
                    .enumerate()
                    .map(|(i, o)| (i.to_string(), *o))
                    .collect();
                Layout {
                    size: *size,
                    align: *align,
                    shape: Shape::Struct { fields },
                }
            }
            Ty::Adt(path) => return self.adt(ty, &path.def_path()),
            // A closure's layout is in the report under its printed name.
            Ty::Opaque(name) if name.starts_with("{closure@") => return self.adt(ty, name),
            Ty::Str | Ty::Slice(_) | Ty::Opaque(_) => {
                return Err(UnknownLayout::Unsized(ty.clone()));
            }
        })
    }

    fn adt(&self, ty: &Ty, def_path: &str) -> Result<Layout, UnknownLayout> {
        let key = ty.to_string();
        if self.table.ambiguous.contains(&key) {
            return Err(UnknownLayout::Ambiguous(ty.clone()));
        }
        let l = self
            .table
            .get(&key)
            .ok_or_else(|| UnknownLayout::NotPrinted(ty.clone()))?;
        let shape = match &l.shape {
            // The report prints a union as one variant named like it, as it
            // prints a one-variant enum; the crate's own unions are known
            // from the source, and std's `MaybeUninit<T>` (`union { uninit:
            // (), value: ManuallyDrop<T> }`) is the one union std code
            // leaves in kernels.
            TypeShape::Enum { variants, .. }
                if variants.len() == 1
                    && (self.unions.contains(def_path)
                        || matches!(
                            def_path,
                            "std::mem::MaybeUninit" | "core::mem::MaybeUninit"
                        )) =>
            {
                union_fields(
                    &variants[0].fields,
                    self.field_names.get(def_path).map(Vec::as_slice),
                )
                .ok_or_else(|| UnknownLayout::UnionFieldOffset(ty.clone()))?
            }
            TypeShape::Struct { fields } if fields.is_empty() && l.size == 0 => Shape::Zst,
            TypeShape::Struct { fields } => {
                let mut map: BTreeMap<String, u64> =
                    fields.iter().map(|f| (f.name.clone(), f.offset)).collect();
                // Index aliases for named fields, from the declaration order.
                if let Some(names) = self.field_names.get(def_path) {
                    for (i, n) in names.iter().enumerate() {
                        if let Some(o) = map.get(n).copied() {
                            map.entry(i.to_string()).or_insert(o);
                        }
                    }
                }
                // A single field is field 0 whatever its name (`AtomicU32 { v }`).
                if fields.len() == 1 {
                    map.entry("0".to_string()).or_insert(fields[0].offset);
                }
                Shape::Struct { fields: map }
            }
            TypeShape::Enum { tag, variants } => {
                let decl_order = self.declaration_order(def_path);
                let tag_of = |name: &str| -> Option<u128> {
                    let order = decl_order.as_ref()?;
                    let (_, v) = order.iter().find(|(n, _)| n == name)?;
                    Some(*v as u128)
                };
                let vs: Vec<Variant> = variants
                    .iter()
                    .map(|v| {
                        let mut fields: BTreeMap<String, u64> = v
                            .fields
                            .iter()
                            .map(|f| (f.name.clone(), f.offset))
                            .collect();
                        // Index aliases for a struct variant's named fields,
                        // from the declaration order, as for structs.
                        if let Some(names) =
                            self.field_names.get(&format!("{def_path}::{}", v.name))
                        {
                            for (i, n) in names.iter().enumerate() {
                                if let Some(o) = fields.get(n).copied() {
                                    fields.entry(i.to_string()).or_insert(o);
                                }
                            }
                        }
                        Variant {
                            name: v.name.clone(),
                            fields,
                            tag_value: tag_of(&v.name),
                        }
                    })
                    .collect();
                let encoding = match tag {
                    TagLayout::Direct { offset, size } => Encoding::Direct {
                        offset: *offset,
                        size: *size,
                    },
                    TagLayout::Unknown if variants.len() == 1 => Encoding::Single {
                        variant: variants[0].name.clone(),
                    },
                    TagLayout::Unknown => null_niche(ty, l.size, variants)
                        .or_else(|| self.probed_niche(&key, def_path, l.size, variants))
                        .ok_or_else(|| UnknownLayout::NicheUnproven(ty.clone()))?,
                };
                Shape::Enum {
                    encoding,
                    variants: vs,
                }
            }
        };
        Ok(Layout {
            size: l.size,
            align: l.align,
            shape,
        })
    }

    /// The niche the probe measured for the enum printed as `key`, with its
    /// variants named. `None` when the probe did not measure it, or when what
    /// it measured does not fit the printed layout: every variant named once,
    /// the niche field inside the value and apart from every tagged
    /// variant's fields.
    fn probed_niche(
        &self,
        key: &str,
        def_path: &str,
        size: u64,
        variants: &[crate::layout::VariantLayout],
    ) -> Option<Encoding> {
        let probed = self.tuples.niches.get(key)?;
        let order = self.declaration_order(def_path);
        let name = |v: &ProbedVariant| -> Option<String> {
            match v {
                ProbedVariant::Name(n) => Some(n.clone()),
                ProbedVariant::Index(i) => Some(order.as_ref()?.get(*i as usize)?.0.clone()),
            }
        };
        let untagged = name(&probed.untagged)?;
        let tagged: Vec<(String, u128)> = probed
            .tagged
            .iter()
            .map(|(v, value)| Some((name(v)?, *value)))
            .collect::<Option<_>>()?;
        let (start, end) = (probed.offset, probed.offset.checked_add(probed.size)?);
        let printed = |n: &str| variants.iter().find(|v| v.name == n);
        let apart = |n: &str| {
            printed(n).is_some_and(|v| {
                v.fields
                    .iter()
                    .all(|f| f.offset >= end || f.offset + f.size <= start)
            })
        };
        let mut names: Vec<&str> = tagged.iter().map(|(n, _)| n.as_str()).collect();
        names.push(&untagged);
        names.sort_unstable();
        names.dedup();
        let every_variant_once = names.len() == tagged.len() + 1
            && variants.iter().all(|v| names.contains(&v.name.as_str()));
        let fits = end <= size && printed(&untagged).is_some();
        let proven = every_variant_once && fits && tagged.iter().all(|(n, _)| apart(n));
        proven.then_some(Encoding::Niche {
            offset: start,
            size: probed.size,
            untagged,
            tagged,
        })
    }

    /// The declared discriminant of variant `name` of the enum `ty`.
    pub fn discriminant_of(&self, ty: &Ty, name: &str) -> Option<u128> {
        let Ty::Adt(p) = ty else { return None };
        let order = self.declaration_order(&p.def_path())?;
        order
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v as u128)
    }

    /// Whether the enum `ty` declares a negative discriminant: its tag is
    /// then a signed integer, sign-extended to the discriminant's width as
    /// rustc's codegen does (`enum S { Neg = -1, Pos = 1 }` has an `i8` tag).
    pub fn has_negative_discriminant(&self, ty: &Ty) -> bool {
        let Ty::Adt(p) = ty else { return false };
        self.declaration_order(&p.def_path())
            .is_some_and(|order| order.iter().any(|(_, v)| *v < 0))
    }

    fn declaration_order(&self, def_path: &str) -> Option<Vec<(String, i128)>> {
        if let Some(v) = self.discriminants.get(def_path) {
            return Some(v.clone());
        }
        STD_DISCRIMINANTS
            .iter()
            .find(|(p, _)| *p == def_path)
            .map(|(_, variants)| variants.iter().map(|(n, v)| (n.to_string(), *v)).collect())
    }
}

/// `Option<P>` with no printed tag, where `P` is a reference, a function
/// pointer, `NonNull` or `NonZero`: the representation Rust guarantees to be
/// the nullable pointer, `None` as all-zero bytes. Anything else (a `bool` or
/// enum niche, say) stays unproven. The niche is the pointer (the data
/// pointer of a wide one) or the whole integer: `Option<NonZero<u128>>`'s
/// `Some(1 << 64)` has a zero low word.
pub(super) fn null_niche(
    ty: &Ty,
    size: u64,
    variants: &[crate::layout::VariantLayout],
) -> Option<Encoding> {
    let Ty::Adt(path) = ty else { return None };
    let def = path.def_path();
    if def != "std::option::Option" && def != "core::option::Option" {
        return None;
    }
    let niche_size = match path.generic_args() {
        [crate::model::GenericArg::Type(t)] => match t {
            Ty::Ref(..) | Ty::FnPtr(..)
                if !t.pointee().is_some_and(Ty::is_unsized) || size == 16 =>
            {
                PTR_SIZE
            }
            Ty::Adt(p) if p.def_path().ends_with("ptr::NonNull") => PTR_SIZE,
            Ty::Adt(p) if p.def_path().ends_with("num::NonZero") => size,
            _ => return None,
        },
        _ => return None,
    };
    if variants.len() != 2 {
        return None;
    }
    let (data, empty) = if variants[0].fields.is_empty() {
        (&variants[1], &variants[0])
    } else {
        (&variants[0], &variants[1])
    };
    let fills = data.fields.len() == 1 && data.fields[0].offset == 0 && data.fields[0].size == size;
    (empty.fields.is_empty() && empty.name == "None" && fills).then(|| Encoding::Niche {
        offset: 0,
        size: niche_size.min(size),
        untagged: data.name.clone(),
        tagged: vec![(empty.name.clone(), 0)],
    })
}

/// A union's fields, every one at offset 0, by name and by index: MIR
/// projects a union's field by its declaration index, and since every
/// field starts at 0 the index needs no order, only the count the report
/// prints (zero-sized fields included). `declared` adds the source's names
/// (an aggregate may name one field only). `None` when the report puts a
/// field elsewhere.
fn union_fields(printed: &[FieldLayout], declared: Option<&[String]>) -> Option<Shape> {
    if printed.iter().any(|f| f.offset != 0) {
        return None;
    }
    let mut fields = BTreeMap::new();
    for (i, f) in printed.iter().enumerate() {
        fields.insert(f.name.clone(), 0);
        fields.insert(i.to_string(), 0);
    }
    for name in declared.into_iter().flatten() {
        fields.insert(name.clone(), 0);
    }
    Some(Shape::Struct { fields })
}

fn int_align(i: IntTy) -> u64 {
    match i {
        IntTy::I128 | IntTy::U128 => 16,
        other => other.size(),
    }
}

fn float_size(f: FloatTy) -> u64 {
    f.size()
}

/// Whether field `name` (a declaration index or a name), read without a
/// downcast, of a type the layout report prints as `variants` is a field
/// of a union whose declaration mir-import did not read
/// (`ppv_lite86::vec128_storage`, declared inside a macro): the report
/// prints a union as one variant named like it, with every field at 0,
/// and MIR reaches an enum's fields only through a downcast, so an enum
/// never gets here. (A one-variant enum with one field at 0 would look the
/// same, and is laid out the same.) The field must exist: an index below
/// the field count, or a printed name.
pub fn undeclared_union_field(variants: &[Variant], name: &str) -> bool {
    let [only] = variants else {
        return false;
    };
    let exists = name.parse::<usize>().map_or_else(
        |_| only.fields.contains_key(name),
        |i| i < only.fields.len(),
    );
    exists && only.fields.values().all(|&o| o == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{FieldLayout, VariantLayout};

    /// `Option<payload>` of `size` bytes as rustc prints it: `None` empty,
    /// `Some` the whole value.
    fn option(payload: &str, size: u64) -> Option<Encoding> {
        let ty =
            crate::parse::parse_type(&format!("std::option::Option<{payload}>")).expect("type");
        let variants = [
            VariantLayout {
                name: "None".into(),
                size: 0,
                fields: Vec::new(),
            },
            VariantLayout {
                name: "Some".into(),
                size,
                fields: vec![FieldLayout {
                    name: "0".into(),
                    offset: 0,
                    size,
                    align: None,
                }],
            },
        ];
        null_niche(&ty, size, &variants)
    }

    fn niche_size(e: Option<Encoding>) -> Option<u64> {
        match e? {
            Encoding::Niche { size, .. } => Some(size),
            _ => None,
        }
    }

    /// What a [`Layouts`] borrows, owned by a test: a report, and by
    /// default nothing else.
    #[derive(Default)]
    pub(super) struct Sources {
        pub(super) table: crate::layout::LayoutTable,
        pub(super) tuples: TupleLayouts,
        pub(super) discriminants: BTreeMap<String, Vec<(String, i128)>>,
        pub(super) field_names: BTreeMap<String, Vec<String>>,
        pub(super) unions: BTreeSet<String>,
    }

    impl Sources {
        pub(super) fn report(text: &str) -> Sources {
            Sources {
                table: crate::layout::LayoutTable::parse(text).expect("a report"),
                ..Sources::default()
            }
        }

        pub(super) fn layouts(&self) -> Layouts<'_> {
            Layouts {
                table: &self.table,
                tuples: &self.tuples,
                discriminants: &self.discriminants,
                field_names: &self.field_names,
                unions: &self.unions,
            }
        }
    }

    #[test]
    fn a_non_zero_integers_niche_is_the_whole_integer() {
        assert_eq!(niche_size(option("std::num::NonZero<u128>", 16)), Some(16));
        assert_eq!(niche_size(option("std::num::NonZero<i128>", 16)), Some(16));
        assert_eq!(niche_size(option("std::num::NonZero<u32>", 4)), Some(4));
    }

    #[test]
    fn a_function_items_type_is_zero_sized() {
        let sources = Sources::default();
        let layouts = sources.layouts();
        let item =
            Ty::Opaque("fn(&'a u32, &'b u32) -> bool {<u32 as std::cmp::PartialOrd>::lt}".into());
        let l = layouts.of(&item).expect("a layout");
        assert_eq!((l.size, l.align, l.shape), (0, 1, Shape::Zst));
        let closure = Ty::Opaque("{closure@/src/kernel.rs:3:9: 3:12}".into());
        assert!(
            layouts.of(&closure).is_err(),
            "a closure's comes from the report"
        );
    }

    /// rustc's report for `union Bits { word: u32, bytes: [u8; 4] }` and
    /// for `enum One { One { word: u32 } }`: both one variant named like
    /// the type.
    const UNION_AND_ONE_VARIANT_ENUM: &str = "\
print-type-size type: `kernel::Bits`: 4 bytes, alignment: 4 bytes
print-type-size     variant `Bits`: 4 bytes
print-type-size         field `.word`: 4 bytes
print-type-size         field `.bytes`: 4 bytes, offset: 0 bytes, alignment: 1 bytes
print-type-size type: `kernel::One`: 4 bytes, alignment: 4 bytes
print-type-size     variant `One`: 4 bytes
print-type-size         field `.word`: 4 bytes
";

    #[test]
    fn a_unions_fields_are_all_at_zero_by_name_and_index_and_only_unions_are_read_so() {
        let sources = Sources {
            // The source declares `bytes` second: MIR reads it as field 1.
            field_names: BTreeMap::from([(
                "kernel::Bits".to_string(),
                vec!["word".to_string(), "bytes".to_string()],
            )]),
            unions: BTreeSet::from(["kernel::Bits".to_string()]),
            ..Sources::report(UNION_AND_ONE_VARIANT_ENUM)
        };
        let layouts = sources.layouts();
        let bits = crate::parse::parse_type("kernel::Bits").expect("type");
        let Shape::Struct { fields } = layouts.of(&bits).expect("a layout").shape else {
            panic!("a union reads as a struct whose fields all start at 0");
        };
        for name in ["0", "1", "word", "bytes"] {
            assert_eq!(fields.get(name), Some(&0), "field {name}");
        }
        assert_eq!(fields.len(), 4);
        // The same printed form for an enum the source does not call a
        // union stays an enum.
        let one = crate::parse::parse_type("kernel::One").expect("type");
        assert!(matches!(
            layouts.of(&one).expect("a layout").shape,
            Shape::Enum { .. }
        ));
        // A field the report puts elsewhere is no union's.
        let printed = [FieldLayout {
            name: "word".into(),
            offset: 4,
            size: 4,
            align: None,
        }];
        assert_eq!(union_fields(&printed, None), None);
    }

    #[test]
    fn a_pointers_niche_is_the_data_pointer() {
        assert_eq!(niche_size(option("&u32", 8)), Some(8));
        assert_eq!(niche_size(option("&[u8]", 16)), Some(8));
        assert_eq!(niche_size(option("std::ptr::NonNull<u8>", 8)), Some(8));
        assert_eq!(niche_size(option("bool", 1)), None, "not a null niche");
    }
}
