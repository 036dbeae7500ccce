//! Types: integers by bit width, `f32`/`f64`, pointers that carry an address space
//! and a pointee type, arrays and structs. Types are interned per module in
//! [`Types`], so a [`Ty`] handle compares structurally.
//!
//! Types display in the LLVM 7 typed-pointer syntax (`i32 addrspace(1)*`,
//! `[4 x i8]`, `{ i32, i64 }`, `<{ i8, i32 }>`), which is also the device-IR text
//! form. Sizes and alignments are in [`crate::layout`].

use std::collections::HashMap;
use std::fmt;

use cranelift_entity::PrimaryMap;

use crate::entities::Ty;

/// An NVVM address space. The numbers are NVVM's.
///
/// A pointer in any space is 64 bits wide (the NVVM 64-bit datalayout). Its value
/// is an address *in that space*: a generic pointer and a shared pointer to the
/// same byte differ in value, and only [`CastOp::AddrSpaceCast`] converts between
/// them.
///
/// [`CastOp::AddrSpaceCast`]: crate::CastOp::AddrSpaceCast
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddressSpace {
    /// 0: the generic space, which covers global, shared, local and constant memory.
    /// `alloca` yields generic pointers; Rust references are generic pointers.
    Generic,
    /// 1: device-global memory. Device statics and constants live here.
    Global,
    /// 3: per-block (CTA) shared memory.
    Shared,
    /// 4: constant memory, read-only for device code.
    Constant,
    /// 5: per-thread local memory (the stack).
    Local,
}

impl AddressSpace {
    /// Every address space, in numeric order.
    pub const ALL: [AddressSpace; 5] = [
        AddressSpace::Generic,
        AddressSpace::Global,
        AddressSpace::Shared,
        AddressSpace::Constant,
        AddressSpace::Local,
    ];

    /// NVVM's number for the space.
    pub fn number(self) -> u32 {
        match self {
            AddressSpace::Generic => 0,
            AddressSpace::Global => 1,
            AddressSpace::Shared => 3,
            AddressSpace::Constant => 4,
            AddressSpace::Local => 5,
        }
    }

    /// The space with NVVM's number `n`, if NVVM has one.
    pub fn from_number(n: u32) -> Option<AddressSpace> {
        AddressSpace::ALL.into_iter().find(|s| s.number() == n)
    }

    /// A short lowercase name (`generic`, `global`, `shared`, `constant`, `local`).
    pub fn name(self) -> &'static str {
        match self {
            AddressSpace::Generic => "generic",
            AddressSpace::Global => "global",
            AddressSpace::Shared => "shared",
            AddressSpace::Constant => "constant",
            AddressSpace::Local => "local",
        }
    }
}

impl fmt::Display for AddressSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.number(), self.name())
    }
}

/// The integer widths NVVM supports. Other widths are refused by the verifier.
pub const INT_WIDTHS: [u16; 6] = [1, 8, 16, 32, 64, 128];

/// The structure of a type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TyKind {
    /// An integer of the given bit width. Integers carry no signedness: operations
    /// that care (division, comparison, extension) say which they mean.
    Int(u16),
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// A pointer into `space` whose pointee is `pointee`. The pointee only matters
    /// for typing (loads, stores, GEP); at run time a pointer is a 64-bit address.
    Ptr {
        /// The type a load through this pointer yields.
        pointee: Ty,
        /// The address space the pointer's value is an address in.
        space: AddressSpace,
    },
    /// `len` elements of `elem`, each at a multiple of `elem`'s allocation size.
    Array {
        /// The element type.
        elem: Ty,
        /// The number of elements.
        len: u64,
    },
    /// Fields in order. A non-packed struct pads each field to its alignment, as C
    /// does; a packed struct has no padding and alignment 1.
    Struct {
        /// The field types, in memory order.
        fields: Vec<Ty>,
        /// Whether the struct is packed.
        packed: bool,
    },
}

/// The type table of a module: interned [`TyKind`]s.
#[derive(Clone, Debug, Default)]
pub struct Types {
    data: PrimaryMap<Ty, TyKind>,
    dedup: HashMap<TyKind, Ty>,
}

impl Types {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The handle of `kind`, interning it if it is new.
    pub fn intern(&mut self, kind: TyKind) -> Ty {
        if let Some(&ty) = self.dedup.get(&kind) {
            return ty;
        }
        let ty = self.data.push(kind.clone());
        self.dedup.insert(kind, ty);
        ty
    }

    /// The structure of `ty`.
    ///
    /// # Panics
    /// If `ty` is not a handle of this table.
    pub fn kind(&self, ty: Ty) -> &TyKind {
        &self.data[ty]
    }

    /// The structure of `ty`, or `None` for a handle outside this table.
    pub fn get(&self, ty: Ty) -> Option<&TyKind> {
        self.data.get(ty)
    }

    /// Whether `ty` is a handle of this table.
    pub fn contains(&self, ty: Ty) -> bool {
        self.data.is_valid(ty)
    }

    /// Every interned type, in interning order.
    pub fn iter(&self) -> impl Iterator<Item = (Ty, &TyKind)> {
        self.data.iter()
    }

    /// The integer type of `bits` bits.
    pub fn int(&mut self, bits: u16) -> Ty {
        self.intern(TyKind::Int(bits))
    }
    /// `i1`, the type of comparisons and branch conditions.
    pub fn i1(&mut self) -> Ty {
        self.int(1)
    }
    /// `i8`.
    pub fn i8(&mut self) -> Ty {
        self.int(8)
    }
    /// `i16`.
    pub fn i16(&mut self) -> Ty {
        self.int(16)
    }
    /// `i32`.
    pub fn i32(&mut self) -> Ty {
        self.int(32)
    }
    /// `i64`.
    pub fn i64(&mut self) -> Ty {
        self.int(64)
    }
    /// `float`.
    pub fn f32(&mut self) -> Ty {
        self.intern(TyKind::F32)
    }
    /// `double`.
    pub fn f64(&mut self) -> Ty {
        self.intern(TyKind::F64)
    }
    /// A pointer to `pointee` in `space`.
    pub fn ptr(&mut self, pointee: Ty, space: AddressSpace) -> Ty {
        self.intern(TyKind::Ptr { pointee, space })
    }
    /// `[len x elem]`.
    pub fn array(&mut self, elem: Ty, len: u64) -> Ty {
        self.intern(TyKind::Array { elem, len })
    }
    /// A non-packed struct of `fields`.
    pub fn struct_of(&mut self, fields: &[Ty]) -> Ty {
        self.intern(TyKind::Struct {
            fields: fields.to_vec(),
            packed: false,
        })
    }
    /// A packed struct of `fields`.
    pub fn packed_struct_of(&mut self, fields: &[Ty]) -> Ty {
        self.intern(TyKind::Struct {
            fields: fields.to_vec(),
            packed: true,
        })
    }

    /// The width of integer type `ty`, or `None` if it is not an integer.
    pub fn int_bits(&self, ty: Ty) -> Option<u16> {
        match self.get(ty)? {
            TyKind::Int(bits) => Some(*bits),
            _ => None,
        }
    }
    /// Whether `ty` is an integer type.
    pub fn is_int(&self, ty: Ty) -> bool {
        self.int_bits(ty).is_some()
    }
    /// Whether `ty` is `f32` or `f64`.
    pub fn is_float(&self, ty: Ty) -> bool {
        matches!(self.get(ty), Some(TyKind::F32 | TyKind::F64))
    }
    /// The bit width of a scalar (integer, float or pointer) type.
    pub fn scalar_bits(&self, ty: Ty) -> Option<u32> {
        match self.get(ty)? {
            TyKind::Int(bits) => Some(u32::from(*bits)),
            TyKind::F32 => Some(32),
            TyKind::F64 => Some(64),
            TyKind::Ptr { .. } => Some(64),
            _ => None,
        }
    }
    /// Whether `ty` is a pointer type.
    pub fn is_ptr(&self, ty: Ty) -> bool {
        self.ptr_parts(ty).is_some()
    }
    /// The pointee and address space of pointer type `ty`.
    pub fn ptr_parts(&self, ty: Ty) -> Option<(Ty, AddressSpace)> {
        match self.get(ty)? {
            TyKind::Ptr { pointee, space } => Some((*pointee, *space)),
            _ => None,
        }
    }
    /// Whether `ty` is an array or a struct.
    pub fn is_aggregate(&self, ty: Ty) -> bool {
        matches!(
            self.get(ty),
            Some(TyKind::Array { .. } | TyKind::Struct { .. })
        )
    }

    /// A value displaying `ty` in the LLVM 7 typed-pointer syntax.
    pub fn display(&self, ty: Ty) -> DisplayTy<'_> {
        DisplayTy { types: self, ty }
    }
}

/// Displays a type in LLVM syntax; see [`Types::display`].
pub struct DisplayTy<'a> {
    types: &'a Types,
    ty: Ty,
}

impl fmt::Display for DisplayTy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.types;
        let Some(kind) = t.get(self.ty) else {
            return write!(f, "<invalid {}>", self.ty);
        };
        match kind {
            TyKind::Int(bits) => write!(f, "i{bits}"),
            TyKind::F32 => f.write_str("float"),
            TyKind::F64 => f.write_str("double"),
            TyKind::Ptr { pointee, space } => {
                write!(f, "{}", t.display(*pointee))?;
                if *space != AddressSpace::Generic {
                    write!(f, " addrspace({})", space.number())?;
                }
                f.write_str("*")
            }
            TyKind::Array { elem, len } => write!(f, "[{len} x {}]", t.display(*elem)),
            TyKind::Struct { fields, packed } => {
                let (open, close) = if *packed { ("<{", "}>") } else { ("{", "}") };
                if fields.is_empty() {
                    return write!(f, "{open}{close}");
                }
                write!(f, "{open} ")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", t.display(*field))?;
                }
                write!(f, " {close}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_structural() {
        let mut t = Types::new();
        let a = t.i32();
        let b = t.int(32);
        assert_eq!(a, b);
        let p1 = t.ptr(a, AddressSpace::Global);
        let p2 = t.ptr(b, AddressSpace::Global);
        let p3 = t.ptr(a, AddressSpace::Shared);
        assert_eq!(p1, p2);
        assert_ne!(p1, p3);
    }

    #[test]
    fn displays_llvm_syntax() {
        let mut t = Types::new();
        let i32t = t.i32();
        let i64t = t.i64();
        let p = t.ptr(i32t, AddressSpace::Global);
        let g = t.ptr(p, AddressSpace::Generic);
        let arr = t.array(i32t, 4);
        let s = t.struct_of(&[i32t, i64t]);
        let ps = t.packed_struct_of(&[arr]);
        assert_eq!(t.display(p).to_string(), "i32 addrspace(1)*");
        assert_eq!(t.display(g).to_string(), "i32 addrspace(1)**");
        assert_eq!(t.display(arr).to_string(), "[4 x i32]");
        assert_eq!(t.display(s).to_string(), "{ i32, i64 }");
        assert_eq!(t.display(ps).to_string(), "<{ [4 x i32] }>");
    }
}
