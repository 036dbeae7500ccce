//! How each MIR type is represented on the device.
//!
//! rustc's codegen makes the same split: scalars and scalar pairs (fat
//! pointers, `(T, bool)` from checked arithmetic) can live in SSA values when
//! their local is never borrowed; everything else lives in memory laid out
//! byte for byte as rustc laid it out (offsets from rustc's own report and the
//! layout probe), so a constant's bytes can be read through any typed view.

use device_ir::layout::POINTER_SIZE;
use device_ir::{AddressSpace, Module, Ty as DTy};
use mir_import::eval::layout::{Encoding, Layout, Layouts, Shape, UnknownLayout, Variant};
use mir_import::model::{FloatTy, IntTy, Ty};

/// Why a type has no device representation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReprError {
    /// Its layout is not known (see mir-import's evaluator layouts).
    #[error(transparent)]
    Layout(#[from] UnknownLayout),
    /// A float width the device does not have (`f16`, `f128`).
    #[error("`{}` is not supported on the device", Ty::Float(*.0))]
    Float(FloatTy),
    /// A `(int, bool)` pair whose layout is not a struct with fields 0 and 1.
    #[error("no field offsets for `{0}`")]
    PairFields(Ty),
    /// `NonNull` printed without its pointee type.
    #[error("`{0}` without its pointee")]
    NoPointee(Ty),
}

/// A scalar's device kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// An integer of this many bits (`char` is 32).
    Int(u16),
    /// `bool`: `i1` in SSA, one byte in memory.
    Bool,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// A thin pointer: a generic `i8*`.
    Ptr,
}

impl Scalar {
    /// Bytes in memory.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Int(b) => u64::from(b) / 8,
            Scalar::Bool => 1,
            Scalar::F32 => 4,
            Scalar::F64 => 8,
            Scalar::Ptr => POINTER_SIZE,
        }
    }

    /// An integer or a float: one `bitcast` turns it into another of its
    /// size.
    pub fn is_number(self) -> bool {
        matches!(self, Scalar::Int(_) | Scalar::F32 | Scalar::F64)
    }

    /// The SSA type.
    pub fn ssa_ty(self, m: &mut Module) -> DTy {
        match self {
            Scalar::Int(b) => m.types.int(b),
            Scalar::Bool => m.types.i1(),
            Scalar::F32 => m.types.f32(),
            Scalar::F64 => m.types.f64(),
            Scalar::Ptr => generic_i8_ptr(m),
        }
    }

    /// The type used to load or store it.
    pub fn mem_ty(self, m: &mut Module) -> DTy {
        match self {
            Scalar::Bool => m.types.i8(),
            other => other.ssa_ty(m),
        }
    }
}

/// A generic `i8*`: how every MIR pointer is carried.
pub fn generic_i8_ptr(m: &mut Module) -> DTy {
    let i8 = m.types.i8();
    m.types.ptr(i8, AddressSpace::Generic)
}

/// A type's representation.
#[derive(Clone, Debug, PartialEq)]
pub enum Repr {
    /// Nothing to store.
    Zst,
    /// One scalar.
    Scalar(Scalar),
    /// Two scalars at byte offsets: a fat pointer (data, length) or `(T, bool)`.
    Pair(Scalar, u64, Scalar, u64),
    /// Bytes in memory.
    Mem {
        /// Size in bytes.
        size: u64,
        /// Alignment in bytes.
        align: u64,
    },
}

impl Repr {
    /// Whether an unborrowed local of this representation can be an SSA value.
    pub fn is_ssa(&self) -> bool {
        matches!(self, Repr::Scalar(_) | Repr::Pair(..))
    }

    /// Bytes and alignment of a stack slot that holds it: a scalar is
    /// naturally aligned, a pair spans both its scalars (`(u128, bool)` is
    /// 32 bytes), rounded up to the larger alignment.
    pub fn size_align(&self) -> (u64, u64) {
        match self {
            Repr::Zst => (0, 1),
            Repr::Scalar(s) => (s.size(), s.size()),
            Repr::Pair(s0, o0, s1, o1) => {
                let align = s0.size().max(s1.size());
                let end = (o0 + s0.size()).max(o1 + s1.size());
                (end.div_ceil(align) * align, align)
            }
            Repr::Mem { size, align } => (*size, *align),
        }
    }
}

fn int_scalar(i: IntTy) -> Scalar {
    Scalar::Int((i.size() * 8) as u16)
}

/// The representation of `ty`.
///
/// # Errors
///
/// [`ReprError`] when the type's layout is unknown or the device has no form
/// for it.
pub fn repr_of(layouts: &Layouts, ty: &Ty) -> Result<Repr, ReprError> {
    Ok(match ty {
        Ty::Bool => Repr::Scalar(Scalar::Bool),
        Ty::Char => Repr::Scalar(Scalar::Int(32)),
        Ty::Int(i) => Repr::Scalar(int_scalar(*i)),
        Ty::Float(FloatTy::F32) => Repr::Scalar(Scalar::F32),
        Ty::Float(FloatTy::F64) => Repr::Scalar(Scalar::F64),
        Ty::Float(f) => return Err(ReprError::Float(*f)),
        // A trait object's metadata is its vtable's address.
        Ty::Ref(_, p) | Ty::RawPtr(_, p) if p.trait_object().is_some() => {
            Repr::Pair(Scalar::Ptr, 0, Scalar::Ptr, POINTER_SIZE)
        }
        Ty::Ref(_, p) | Ty::RawPtr(_, p) if layouts.is_unsized(p) => {
            Repr::Pair(Scalar::Ptr, 0, Scalar::Int(64), POINTER_SIZE)
        }
        // A `fn` pointer is a code address (`func_addr`), carried as any
        // pointer is.
        Ty::Ref(..) | Ty::RawPtr(..) | Ty::FnPtr(..) => Repr::Scalar(Scalar::Ptr),
        Ty::Never => Repr::Zst,
        Ty::Tuple(e) if e.is_empty() => Repr::Zst,
        // A tuple of one or two scalars is what rustc's codegen calls a
        // `Scalar` or `ScalarPair` value: a closure's argument tuple `(x,)`,
        // `(usize, &f32)` from `enumerate`, `(T, bool)` from checked
        // arithmetic.
        Ty::Tuple(e) if e.len() <= 2 => match scalar_tuple(layouts, ty, e)? {
            Some(r) => r,
            None => mem(layouts, ty)?,
        },
        // `NonZero<T>` is a transparent wrapper of the integer `T` (its
        // field's pattern type only adds the niche).
        Ty::Adt(p) if p.def_path().ends_with("num::NonZero") => match p.generic_args() {
            [mir_import::model::GenericArg::Type(t @ Ty::Int(_))] => return repr_of(layouts, t),
            _ => return Err(ReprError::NoPointee(ty.clone())),
        },
        // std's wrappers that hold their type argument as it is.
        Ty::Adt(p) if is_std_path(p, STD_WRAPPERS) => match p.generic_args() {
            [mir_import::model::GenericArg::Type(inner)] => wrapper(layouts, ty, inner)?,
            _ => mem(layouts, ty)?,
        },
        // A slice iterator is two pointers: where it is and where it ends.
        // Its fields are known by index only where some body built one.
        Ty::Adt(p) if is_std_path(p, &["slice::Iter", "slice::IterMut"]) => {
            match first_two_offsets(&layouts.of(ty)?) {
                Some((o0, o1)) => Repr::Pair(Scalar::Ptr, o0, Scalar::Ptr, o1),
                None => mem(layouts, ty)?,
            }
        }
        // `NonNull<T>` is a transparent wrapper of `*const T`.
        Ty::Adt(p) if p.def_path().ends_with("ptr::NonNull") => match p.generic_args() {
            [mir_import::model::GenericArg::Type(t)] => {
                return repr_of(
                    layouts,
                    &Ty::RawPtr(mir_import::model::Mutability::Not, Box::new(t.clone())),
                );
            }
            _ => return Err(ReprError::NoPointee(ty.clone())),
        },
        _ => {
            let l = layouts.of(ty)?;
            match &l.shape {
                Shape::Zst => Repr::Zst,
                // A struct or union of zero-sized fields (`ZeroHolder {
                // value: ZeroUnion }`, `union { unit: (), m: PhantomData<u64> }`).
                Shape::Struct { .. } if l.size == 0 => Repr::Zst,
                // An enum with no inhabited variant that stores anything
                // (`Option<Infallible>`).
                Shape::Enum { .. } if l.size == 0 => Repr::Zst,
                Shape::Enum {
                    encoding:
                        Encoding::Niche {
                            offset: 0,
                            size,
                            untagged,
                            tagged,
                        },
                    ..
                } if l.size == POINTER_SIZE
                    && *size == POINTER_SIZE
                    && matches!(tagged.as_slice(), [(_, 0)]) =>
                {
                    // `Option<NonZero<u64>>` (and `ControlFlow<Option<
                    // Infallible>, NonZero<usize>>`, `advance_by`'s) is its
                    // integer; `Option<&T>`, `Option<NonNull<T>>` and the
                    // rest are their pointer.
                    let payload =
                        single_variant_field_ty(ty, untagged).map(|t| repr_of(layouts, &t));
                    match payload {
                        Some(Ok(Repr::Scalar(Scalar::Int(64)))) => Repr::Scalar(Scalar::Int(64)),
                        _ => Repr::Scalar(Scalar::Ptr),
                    }
                }
                Shape::Enum { encoding, variants } => {
                    match scalar_enum(layouts, ty, &l, encoding, variants)? {
                        Some(r) => r,
                        None => Repr::Mem {
                            size: l.size,
                            align: l.align,
                        },
                    }
                }
                _ => Repr::Mem {
                    size: l.size,
                    align: l.align,
                },
            }
        }
    })
}

/// std's wrappers of one type argument `T` that hold a `T` and nothing else
/// that takes room (`MaybeUninit`'s other field is `()`), after `std::` or
/// `core::`.
const STD_WRAPPERS: &[&str] = &[
    "mem::ManuallyDrop",
    "mem::MaybeUninit",
    "mem::MaybeDangling",
    "cell::Cell",
    "cell::UnsafeCell",
    "num::Wrapping",
    "num::Saturating",
    "cmp::Reverse",
    "iter::Rev",
    "iter::Copied",
    "iter::Cloned",
];

/// Whether `p` is `std::X` or `core::X` for an `X` in `names`.
fn is_std_path(p: &mir_import::model::Path, names: &[&str]) -> bool {
    let path = p.def_path();
    let Some(rest) = path
        .strip_prefix("std::")
        .or_else(|| path.strip_prefix("core::"))
    else {
        return false;
    };
    names.contains(&rest)
}

/// A wrapper of `inner` is held as `inner` is, a scalar or a pair, where the
/// layouts agree that it is no larger; otherwise it is in memory.
fn wrapper(layouts: &Layouts, ty: &Ty, inner: &Ty) -> Result<Repr, ReprError> {
    let l = layouts.of(ty)?;
    if l.size == 0 {
        return Ok(Repr::Zst);
    }
    let same_size = layouts
        .of(inner)
        .is_ok_and(|i| i.size == l.size && i.align == l.align);
    match repr_of(layouts, inner) {
        Ok(r @ (Repr::Scalar(_) | Repr::Pair(..))) if same_size => Ok(r),
        _ => mem(layouts, ty),
    }
}

/// `ty` in memory, as its layout gives it.
fn mem(layouts: &Layouts, ty: &Ty) -> Result<Repr, ReprError> {
    let l = layouts.of(ty)?;
    Ok(Repr::Mem {
        size: l.size,
        align: l.align,
    })
}

/// A tuple `(a,)` of a scalar is that scalar; a tuple `(a, b)` of two
/// scalars is their pair, field `i` in slot `i` at the offset rustc gave it.
/// `None` for any other tuple.
fn scalar_tuple(layouts: &Layouts, ty: &Ty, elems: &[Ty]) -> Result<Option<Repr>, ReprError> {
    let mut scalars = Vec::with_capacity(elems.len());
    for e in elems {
        match repr_of(layouts, e) {
            Ok(Repr::Scalar(s)) => scalars.push(s),
            _ => return Ok(None),
        }
    }
    Ok(match scalars.as_slice() {
        [s] => Some(Repr::Scalar(*s)),
        [s0, s1] => {
            first_two_offsets(&layouts.of(ty)?).map(|(o0, o1)| Repr::Pair(*s0, o0, *s1, o1))
        }
        _ => None,
    })
}

/// The offsets of fields 0 and 1 of a struct or tuple layout, where the
/// layout names both by index.
fn first_two_offsets(l: &Layout) -> Option<(u64, u64)> {
    let Shape::Struct { fields } = &l.shape else {
        return None;
    };
    Some((*fields.get("0")?, *fields.get("1")?))
}

/// Whether the niche enum's `untagged` variant holds one field, at offset 0:
/// the payload is then the whole value or its leading bytes.
fn untagged_payload_at_zero(variants: &[Variant], untagged: &str) -> bool {
    variants
        .iter()
        .find(|v| v.name == untagged)
        .is_some_and(|v| v.fields.get("0") == Some(&0) && v.fields.len() == 1)
}

/// The enums rustc's codegen keeps in registers, where the layout proves
/// their form:
///
/// - a fieldless enum with its tag at offset 0 filling the whole value
///   (`Ordering`) is that tag, an integer;
/// - `Option<T>` whose niche at offset 0 fills the whole value and holds `T`
///   (`Option<char>`, `Option<Ordering>`) is that integer: `Some(x)` is `x`,
///   `None` the niche value;
/// - `Option<T>` whose niche is one scalar of the pair `T`
///   (`Option<(usize, &f32)>`) is that pair;
/// - `Option<T>` or `Result<T, E>` with a direct tag, whose variants hold at
///   most one field each, all of one scalar form at one offset
///   (`Option<usize>`, `Result<u32, u32>`), is a pair: the tag in slot 0,
///   the field in slot 1.
///
/// `None` for every other enum, which stays in memory.
fn scalar_enum(
    layouts: &Layouts,
    ty: &Ty,
    l: &Layout,
    encoding: &Encoding,
    variants: &[Variant],
) -> Result<Option<Repr>, ReprError> {
    match encoding {
        Encoding::Direct { offset: 0, size } if *size == l.size => {
            let fieldless = variants.iter().all(|v| v.fields.is_empty());
            Ok(fieldless.then(|| Repr::Scalar(Scalar::Int((size * 8) as u16))))
        }
        Encoding::Niche {
            offset: 0,
            size,
            untagged,
            ..
        } if *size == l.size => {
            let Some(payload) = option_payload(ty) else {
                return Ok(None);
            };
            let whole = Scalar::Int((size * 8) as u16);
            let at_zero = untagged_payload_at_zero(variants, untagged);
            Ok(
                (at_zero && repr_of(layouts, payload).ok() == Some(Repr::Scalar(whole)))
                    .then_some(Repr::Scalar(whole)),
            )
        }
        // `Option<(usize, &f32)>`: the niche is one scalar of a pair, and
        // `Some` holds the pair as it is.
        Encoding::Niche {
            offset,
            size,
            untagged,
            ..
        } => {
            let Some(payload) = option_payload(ty) else {
                return Ok(None);
            };
            let at_zero = untagged_payload_at_zero(variants, untagged);
            let same_size = layouts.of(payload).is_ok_and(|p| p.size == l.size);
            let Ok(r @ Repr::Pair(s0, o0, s1, o1)) = repr_of(layouts, payload) else {
                return Ok(None);
            };
            let niche_slot = |s: Scalar, o: u64| {
                o == *offset && s.size() == *size && matches!(s, Scalar::Int(_) | Scalar::Ptr)
            };
            Ok((at_zero && same_size && (niche_slot(s0, o0) || niche_slot(s1, o1))).then_some(r))
        }
        Encoding::Direct { offset, size } => {
            let Some(field_tys) = variant_field_tys(ty) else {
                return Ok(None);
            };
            let tag = Scalar::Int((size * 8) as u16);
            let mut payload: Option<(Scalar, u64)> = None;
            for v in variants {
                let field_ty = field_tys
                    .iter()
                    .find(|(n, _)| *n == v.name)
                    .map(|(_, t)| *t);
                let Ok(field_repr) = field_ty.map(|t| repr_of(layouts, t)).transpose() else {
                    return Ok(None);
                };
                match (v.fields.len(), v.fields.get("0"), field_repr) {
                    // No field, or a zero-sized one (`Err(())`).
                    (0, ..) | (1, Some(_), Some(Repr::Zst)) => {}
                    (1, Some(&off), Some(Repr::Scalar(s))) => {
                        if payload.is_some_and(|p| p != (s, off)) {
                            return Ok(None);
                        }
                        payload = Some((s, off));
                    }
                    _ => return Ok(None),
                }
            }
            // A pair must span the enum as its layout does: a zero-sized
            // payload may raise the alignment (`Result<u32, Z>` with an
            // `align(16)` `Z` is 16 bytes, the pair `(u32, u32)` only 8),
            // and a slot sized from the pair would be too small.
            Ok(payload
                .map(|(s, off)| Repr::Pair(tag, *offset, s, off))
                .filter(|r| r.size_align() == (l.size, l.align)))
        }
        // One inhabited variant (`ControlFlow<&u32, Infallible>`, the
        // residual of `try_fold`'s `?`): a wrapper of its one field, when
        // that field is the whole enum.
        Encoding::Single { variant } => {
            let Some(v) = variants.iter().find(|v| v.name == *variant) else {
                return Ok(None);
            };
            let (1, Some(0)) = (v.fields.len(), v.fields.get("0").copied()) else {
                return Ok(None);
            };
            let Some(field) = single_variant_field_ty(ty, variant) else {
                return Ok(None);
            };
            Ok(repr_of(layouts, &field)
                .ok()
                .filter(|r| matches!(r, Repr::Scalar(_) | Repr::Pair(..)))
                .filter(|r| r.size_align() == (l.size, l.align)))
        }
    }
}

/// The type of the one field of `variant` of `ty`, where the type names it:
/// `Option`'s and `Result`'s variants ([`variant_field_tys`]) and
/// `ControlFlow<B, C>`'s (`C` is `()` when rustc prints no second argument).
fn single_variant_field_ty(ty: &Ty, variant: &str) -> Option<Ty> {
    if let Some(tys) = variant_field_tys(ty) {
        return tys
            .into_iter()
            .find(|(n, _)| *n == variant)
            .map(|(_, t)| t.clone());
    }
    let Ty::Adt(p) = ty else { return None };
    let flow = [
        "std::ops::ControlFlow",
        "core::ops::ControlFlow",
        "core::ops::control_flow::ControlFlow",
    ];
    if !flow.contains(&p.def_path().as_str()) {
        return None;
    }
    let types: Vec<&Ty> = p
        .generic_args()
        .iter()
        .filter_map(|a| match a {
            mir_import::model::GenericArg::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match (variant, types.as_slice()) {
        ("Break", [b, ..]) => Some((*b).clone()),
        ("Continue", [_, c]) => Some((*c).clone()),
        ("Continue", [_]) => Some(Ty::unit()),
        _ => None,
    }
}

/// The field type of each variant of `Option<T>` and `Result<T, E>`, the
/// enums whose variant fields the type itself names.
fn variant_field_tys(ty: &Ty) -> Option<Vec<(&'static str, &Ty)>> {
    let Ty::Adt(p) = ty else { return None };
    let path = p.def_path();
    match p.generic_args() {
        [mir_import::model::GenericArg::Type(t)] if path.ends_with("option::Option") => {
            Some(vec![("Some", t)])
        }
        [
            mir_import::model::GenericArg::Type(t),
            mir_import::model::GenericArg::Type(e),
        ] if path.ends_with("result::Result") => Some(vec![("Ok", t), ("Err", e)]),
        _ => None,
    }
}

/// The MIR type of each scalar of a register form of `ty`, where one is
/// known: the pointer type a constant's pointer is validated against. A
/// fat pointer's data pointer carries the fat pointer's own type (its
/// pointee gives the view); a tuple's slots are its elements; a wrapper's,
/// a niche `Option`'s and a one-variant enum's (`ControlFlow<&T,
/// Infallible>`) are their payload's; an enum pair's tag has none.
pub fn slot_tys(layouts: &Layouts, ty: &Ty) -> [Option<Ty>; 2] {
    if let Some(field) = single_variant_payload(layouts, ty) {
        return slot_tys(layouts, &field);
    }
    match ty {
        Ty::Ref(..) | Ty::RawPtr(..) => [Some(ty.clone()), None],
        Ty::Tuple(e) => [e.first().cloned(), e.get(1).cloned()],
        Ty::Adt(p) => {
            let inner = match p.generic_args() {
                [mir_import::model::GenericArg::Type(t)] => Some(t),
                _ => None,
            };
            match inner {
                Some(t) if is_std_path(p, STD_WRAPPERS) => slot_tys(layouts, t),
                Some(t) if option_payload(ty).is_some() => match repr_of(layouts, t) {
                    // `Some(p)` is held as `p`, in either form.
                    Ok(Repr::Pair(..)) => slot_tys(layouts, t),
                    Ok(Repr::Scalar(_))
                        if repr_of(layouts, ty).ok() == repr_of(layouts, t).ok() =>
                    {
                        slot_tys(layouts, t)
                    }
                    // A direct tag, then the payload.
                    _ => [None, Some(t.clone())],
                },
                _ => [Some(ty.clone()), None],
            }
        }
        _ => [Some(ty.clone()), None],
    }
}

/// The field an enum with one inhabited variant is held as
/// ([`Encoding::Single`], when its register form is that field's).
fn single_variant_payload(layouts: &Layouts, ty: &Ty) -> Option<Ty> {
    let l = layouts.of(ty).ok()?;
    let Shape::Enum {
        encoding: Encoding::Single { variant },
        ..
    } = &l.shape
    else {
        return None;
    };
    let field = single_variant_field_ty(ty, variant)?;
    let held = repr_of(layouts, ty).ok()?;
    (repr_of(layouts, &field).ok()? == held).then_some(field)
}

/// `T` of `Option<T>`.
fn option_payload(ty: &Ty) -> Option<&Ty> {
    match ty {
        Ty::Adt(p) if p.def_path().ends_with("option::Option") => match p.generic_args() {
            [mir_import::model::GenericArg::Type(t)] => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The layout of `ty`, or why it is unknown.
pub fn layout_of(layouts: &Layouts, ty: &Ty) -> Result<Layout, UnknownLayout> {
    layouts.of(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_slot_spans_both_scalars_at_the_larger_alignment() {
        // `(u128, bool)` from checked arithmetic: 32 bytes, not 16.
        let wide = Repr::Pair(Scalar::Int(128), 0, Scalar::Bool, 16);
        assert_eq!(wide.size_align(), (32, 16));
        // `(u8, u32)` reordered by rustc: the `u32` at 0, the `u8` at 4.
        let reordered = Repr::Pair(Scalar::Int(8), 4, Scalar::Int(32), 0);
        assert_eq!(reordered.size_align(), (8, 4));
        // A fat pointer.
        let fat = Repr::Pair(Scalar::Ptr, 0, Scalar::Int(64), 8);
        assert_eq!(fat.size_align(), (16, 8));
        assert_eq!(Repr::Scalar(Scalar::Bool).size_align(), (1, 1));
    }

    #[test]
    fn a_single_variants_field_type_comes_from_the_enums_arguments() {
        let ty = |s: &str| mir_import::parse::parse_type(s).expect("a type");
        let residual = ty("std::ops::ControlFlow<&u32, std::convert::Infallible>");
        assert_eq!(
            single_variant_field_ty(&residual, "Break"),
            Some(ty("&u32"))
        );
        assert_eq!(
            single_variant_field_ty(&residual, "Continue"),
            Some(ty("std::convert::Infallible"))
        );
        // `C` defaults to `()`, which rustc leaves unprinted.
        let flow = ty("std::ops::ControlFlow<u64>");
        assert_eq!(single_variant_field_ty(&flow, "Continue"), Some(Ty::unit()));
        let ok = ty("std::result::Result<u8, std::convert::Infallible>");
        assert_eq!(single_variant_field_ty(&ok, "Ok"), Some(ty("u8")));
        assert_eq!(single_variant_field_ty(&ty("kernel::E<u8>"), "A"), None);
    }
}
