//! How each MIR type is represented on the device.
//!
//! rustc's codegen makes the same split: scalars and scalar pairs (fat
//! pointers, `(T, bool)` from checked arithmetic) can live in SSA values when
//! their local is never borrowed; everything else lives in memory laid out
//! byte for byte as rustc laid it out (offsets from rustc's own report and the
//! layout probe), so a constant's bytes can be read through any typed view.

use device_ir::layout::POINTER_SIZE;
use device_ir::{AddressSpace, Module, Ty as DTy};
use mir_import::eval::layout::{Encoding, Layout, Layouts, Shape, UnknownLayout};
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
        Ty::Ref(_, p) | Ty::RawPtr(_, p) if layouts.is_unsized(p) => {
            Repr::Pair(Scalar::Ptr, 0, Scalar::Int(64), POINTER_SIZE)
        }
        Ty::Ref(..) | Ty::RawPtr(..) => Repr::Scalar(Scalar::Ptr),
        Ty::Never => Repr::Zst,
        Ty::Tuple(e) if e.is_empty() => Repr::Zst,
        Ty::Tuple(e) if e.len() == 2 && e[1] == Ty::Bool && matches!(e[0], Ty::Int(_)) => {
            let l = layouts.of(ty)?;
            let (Shape::Struct { fields }, Ty::Int(i)) = (&l.shape, &e[0]) else {
                return Err(ReprError::PairFields(ty.clone()));
            };
            let (Some(o0), Some(o1)) = (fields.get("0"), fields.get("1")) else {
                return Err(ReprError::PairFields(ty.clone()));
            };
            Repr::Pair(int_scalar(*i), *o0, Scalar::Bool, *o1)
        }
        // `NonZero<T>` is a transparent wrapper of the integer `T` (its
        // field's pattern type only adds the niche).
        Ty::Adt(p) if p.def_path().ends_with("num::NonZero") => match p.generic_args() {
            [mir_import::model::GenericArg::Type(t @ Ty::Int(_))] => return repr_of(layouts, t),
            _ => return Err(ReprError::NoPointee(ty.clone())),
        },
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
                Shape::Enum {
                    encoding:
                        Encoding::Niche {
                            offset: 0,
                            size,
                            tagged,
                            ..
                        },
                    ..
                } if l.size == POINTER_SIZE
                    && *size == POINTER_SIZE
                    && matches!(tagged.as_slice(), [(_, 0)]) =>
                {
                    // `Option<NonZero<u64>>` is its integer; `Option<&T>`,
                    // `Option<NonNull<T>>` and the rest are their pointer.
                    match option_payload(ty).map(|t| repr_of(layouts, t)) {
                        Some(Ok(Repr::Scalar(Scalar::Int(64)))) => Repr::Scalar(Scalar::Int(64)),
                        _ => Repr::Scalar(Scalar::Ptr),
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
