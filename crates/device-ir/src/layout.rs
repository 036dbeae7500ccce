//! Sizes, alignments and field offsets under NVVM's 64-bit datalayout, the one the
//! printer emits:
//!
//! ```text
//! e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-
//! f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64
//! ```
//!
//! Little-endian; every pointer is 8 bytes with alignment 8, in every address space;
//! `iN` takes `N/8` bytes (`i1` one byte) aligned to its size; arrays are `len`
//! elements at a stride of the element's size; non-packed structs lay fields out as
//! C does; packed structs have no padding and alignment 1. The interpreter and the
//! printer both use these numbers, so a [`Gep`](crate::InstData::Gep) means the same
//! byte offset to both.
//!
//! All functions take handles of a verified type table. # Panics: on a handle that
//! is not in `types`.

use crate::entities::Ty;
use crate::types::{TyKind, Types};

/// The size of a pointer in bytes, in every address space.
pub const POINTER_SIZE: u64 = 8;

/// The datalayout string the printer emits and these functions implement.
pub const DATALAYOUT: &str = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64";

/// The ABI alignment of `ty` in bytes.
pub fn align_of(types: &Types, ty: Ty) -> u64 {
    match types.kind(ty) {
        TyKind::Int(bits) => int_bytes(*bits),
        TyKind::F32 => 4,
        TyKind::F64 => 8,
        TyKind::Ptr { .. } => POINTER_SIZE,
        TyKind::Array { elem, .. } => align_of(types, *elem),
        TyKind::Struct { fields, packed } => {
            if *packed {
                1
            } else {
                fields
                    .iter()
                    .map(|&f| align_of(types, f))
                    .max()
                    .unwrap_or(1)
            }
        }
    }
}

/// The allocation size of `ty` in bytes: the distance between consecutive array
/// elements, including trailing padding.
pub fn size_of(types: &Types, ty: Ty) -> u64 {
    match types.kind(ty) {
        TyKind::Int(bits) => int_bytes(*bits),
        TyKind::F32 => 4,
        TyKind::F64 => 8,
        TyKind::Ptr { .. } => POINTER_SIZE,
        TyKind::Array { elem, len } => size_of(types, *elem).saturating_mul(*len),
        TyKind::Struct { fields, packed } => {
            let (end, align) = struct_walk(types, fields, *packed, usize::MAX).1;
            round_up(end, align)
        }
    }
}

/// The byte offset of field `index` of struct type `ty`, or `None` if `ty` is not a
/// struct or has no such field.
pub fn field_offset(types: &Types, ty: Ty, index: usize) -> Option<u64> {
    match types.kind(ty) {
        TyKind::Struct { fields, packed } if index < fields.len() => {
            Some(struct_walk(types, fields, *packed, index).0)
        }
        _ => None,
    }
}

/// Walks the fields, returning (offset of field `stop`, (end of the last field, max
/// alignment)).
fn struct_walk(types: &Types, fields: &[Ty], packed: bool, stop: usize) -> (u64, (u64, u64)) {
    let mut offset = 0u64;
    let mut max_align = 1u64;
    let mut stop_offset = 0u64;
    for (i, &field) in fields.iter().enumerate() {
        let align = if packed { 1 } else { align_of(types, field) };
        max_align = max_align.max(align);
        offset = round_up(offset, align);
        if i == stop {
            stop_offset = offset;
        }
        offset = offset.saturating_add(size_of(types, field));
    }
    (stop_offset, (offset, max_align))
}

fn int_bytes(bits: u16) -> u64 {
    u64::from(bits).div_ceil(8).next_power_of_two()
}

fn round_up(x: u64, align: u64) -> u64 {
    x.div_ceil(align).saturating_mul(align)
}

/// One step of a [`Gep`](crate::InstData::Gep) path, once its index values are known:
/// the type it steps into and the byte offset it adds.
///
/// The first index scales by the size of the base's pointee; each later index
/// selects an array element (any integer, wrapping, sign-extended to 64 bits) or a
/// struct field (a constant).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GepStepKind {
    /// Multiply the index by `stride` bytes.
    Scaled {
        /// The element size.
        stride: u64,
    },
    /// Add a constant field offset.
    Field {
        /// The field's byte offset.
        offset: u64,
    },
}

/// Why a GEP path does not fit its pointee type. `index` counts the GEP's
/// indices from 0 (the first, which scales by the whole pointee); `ty` is the
/// type stepped into, as the text format prints it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GepError {
    /// A field number past the struct's last field.
    #[error("index {index} selects field {field} of {ty}, which has {fields} fields")]
    NoSuchField {
        /// Which index.
        index: usize,
        /// The field number.
        field: u32,
        /// The struct.
        ty: String,
        /// How many fields it has.
        fields: usize,
    },
    /// A run-time or element index into a struct.
    #[error("index {index} steps into struct {ty} and must be a constant field number")]
    StructNeedsField {
        /// Which index.
        index: usize,
        /// The struct.
        ty: String,
    },
    /// A field number into an array.
    #[error("index {index} steps into array {ty} and must be an element index, not a field")]
    ArrayNeedsIndex {
        /// Which index.
        index: usize,
        /// The array.
        ty: String,
    },
    /// A step into a scalar or pointer.
    #[error("index {index} steps into {ty}, which is neither an array nor a struct")]
    NotAggregate {
        /// Which index.
        index: usize,
        /// The type.
        ty: String,
    },
}

/// Callers that report faults as text (the virtual device) take the message.
impl From<GepError> for String {
    fn from(e: GepError) -> String {
        e.to_string()
    }
}

/// The type reached by a GEP path over pointee `base`, with each step's kind, or a
/// message saying why the path does not fit the type.
///
/// `steps` gives, per index after the first, `Some(field)` for a struct field
/// index and `None` for a run-time or constant array index. The first index always
/// scales by `size_of(base)` and is included in the returned kinds.
pub fn gep_path(
    types: &Types,
    base: Ty,
    steps: &[Option<u32>],
) -> Result<(Ty, Vec<GepStepKind>), GepError> {
    let mut kinds = vec![GepStepKind::Scaled {
        stride: size_of(types, base),
    }];
    let mut cur = base;
    for (i, step) in steps.iter().enumerate() {
        match (types.kind(cur), step) {
            (TyKind::Array { elem, .. }, None) => {
                kinds.push(GepStepKind::Scaled {
                    stride: size_of(types, *elem),
                });
                cur = *elem;
            }
            (TyKind::Struct { fields, .. }, Some(field)) => {
                let idx = *field as usize;
                let Some(&fty) = fields.get(idx) else {
                    return Err(GepError::NoSuchField {
                        index: i + 1,
                        field: *field,
                        ty: types.display(cur).to_string(),
                        fields: fields.len(),
                    });
                };
                let offset = field_offset(types, cur, idx).unwrap_or(0);
                kinds.push(GepStepKind::Field { offset });
                cur = fty;
            }
            (TyKind::Struct { .. }, None) => {
                return Err(GepError::StructNeedsField {
                    index: i + 1,
                    ty: types.display(cur).to_string(),
                });
            }
            (TyKind::Array { .. }, Some(_)) => {
                return Err(GepError::ArrayNeedsIndex {
                    index: i + 1,
                    ty: types.display(cur).to_string(),
                });
            }
            _ => {
                return Err(GepError::NotAggregate {
                    index: i + 1,
                    ty: types.display(cur).to_string(),
                });
            }
        }
    }
    Ok((cur, kinds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_layout() {
        let mut t = Types::new();
        let i8t = t.i8();
        let i32t = t.i32();
        let i64t = t.i64();
        let i128t = t.int(128);
        let i1t = t.i1();
        let s = t.struct_of(&[i8t, i32t, i8t]);
        assert_eq!(size_of(&t, s), 12);
        assert_eq!(align_of(&t, s), 4);
        assert_eq!(field_offset(&t, s, 1), Some(4));
        assert_eq!(field_offset(&t, s, 2), Some(8));
        let p = t.packed_struct_of(&[i8t, i32t]);
        assert_eq!(size_of(&t, p), 5);
        assert_eq!(align_of(&t, p), 1);
        assert_eq!(size_of(&t, i128t), 16);
        assert_eq!(align_of(&t, i128t), 16);
        assert_eq!(size_of(&t, i1t), 1);
        let arr = t.array(s, 3);
        assert_eq!(size_of(&t, arr), 36);
        let s2 = t.struct_of(&[i8t, i64t]);
        assert_eq!(size_of(&t, s2), 16);
    }

    #[test]
    fn gep_paths() {
        let mut t = Types::new();
        let i32t = t.i32();
        let arr = t.array(i32t, 4);
        let s = t.struct_of(&[i32t, arr]);
        let (ty, kinds) = gep_path(&t, s, &[Some(1), None]).expect("fits");
        assert_eq!(ty, i32t);
        assert_eq!(
            kinds,
            vec![
                GepStepKind::Scaled { stride: 20 },
                GepStepKind::Field { offset: 4 },
                GepStepKind::Scaled { stride: 4 }
            ]
        );
        assert!(gep_path(&t, s, &[None]).is_err());
        assert!(gep_path(&t, s, &[Some(2)]).is_err());
        assert!(gep_path(&t, i32t, &[None]).is_err());
    }
}
