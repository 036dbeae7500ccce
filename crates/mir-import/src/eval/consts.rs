//! Writing constants into memory: literals, named constants, promoteds,
//! statics and the allocations rustc dumped, and the integer limits and
//! scalars they are made of. The interpreter's statements and places are
//! in [`super::interp`]; value trees are in [`super::ops`].

use super::error::EvalError;
use super::interp::{Interp, PlaceRef};
use super::layout::{Layout, PTR_SIZE, Shape};
use super::memory::{Bytes, EvalAlloc, Reloc, Target};
use crate::model::{AllocId, BodyId, ConstOperand, Mutability, Path, Scalar, Ty, ValTree};

type R<T> = Result<T, EvalError>;

impl Interp<'_> {
    /// Writes a constant operand's value at `dest`.
    pub(super) fn write_const(&mut self, dest: &PlaceRef, c: &ConstOperand) -> R<()> {
        match c {
            ConstOperand::Scalar(s) => self.write(dest, &scalar_bytes(s)),
            // Uninitialized bytes stay as they are: never written.
            ConstOperand::Unit | ConstOperand::ZeroSized(_) | ConstOperand::Uninit => Ok(()),
            ConstOperand::Str(s) => self.write_str(dest, s.as_bytes()),
            ConstOperand::ByteStr(b) => {
                let a = self.new_bytes(b);
                self.write(dest, &Bytes::pointer(Target::Alloc(a), 0))
            }
            ConstOperand::Transmuted { bits, ty } => {
                let size = self.layout(ty)?.size;
                self.write(
                    dest,
                    &Bytes::plain(bits.to_le_bytes()[..size as usize].to_vec()),
                )
            }
            ConstOperand::Promoted { owner, index } => {
                let id = self.promoted_body(owner, *index)?;
                self.copy_body_value(dest, id)
            }
            ConstOperand::Item(path) => {
                let def = path.def_path();
                if let Some(id) = self.krate.item_body(&def) {
                    return self.copy_body_value(dest, id);
                }
                if let Some(v) = int_limit(path, &dest.ty) {
                    return self.write(dest, &v);
                }
                if let Some(t) = path.type_id_of() {
                    // Inside a constant's value the bytes would be kept,
                    // where the lowering cannot see how they are used.
                    if !self.active.is_empty() {
                        return Err(format!(
                            "`TypeId::of::<{t}>()` inside a constant's value is not supported \
                             (its value here is not rustc's)"
                        )
                        .into());
                    }
                    let bytes = Path::type_id_bytes(t).ok_or_else(|| {
                        EvalError::from(format!(
                            "`TypeId::of::<{t}>()`: the name of `{t}` may not tell which type it is \
                             (a type parameter, a function pointer or a closure), and rustc's value \
                             for it is not known"
                        ))
                    })?;
                    return self.write(dest, &Bytes::plain(bytes.to_vec()));
                }
                if let Some((ty, size)) = path.sized_property() {
                    let l = self.layout(&ty)?;
                    let v = if size { l.size } else { l.align };
                    return self.write(dest, &Bytes::plain(v.to_le_bytes().to_vec()));
                }
                if let Some(v) = super::std_consts::known_value(path) {
                    return self.write_valtree(dest, &v);
                }
                // Any other const item of the standard library that rustc
                // left unevaluated (an aggregate): its body is that
                // crate's, never printed.
                let std_crate = def
                    .split("::")
                    .next()
                    .filter(|c| ["core", "std", "alloc"].contains(c));
                let unit_value = matches!(
                    self.layout(&dest.ty).map(|l| l.shape),
                    Ok(Shape::Enum { .. } | Shape::Zst)
                );
                if let (Some(krate), false) = (std_crate, unit_value) {
                    return Err(EvalError::NotPrinted(format!(
                        "rustc left constant `{def}` of type `{}` unevaluated, and it belongs \
                         to `{krate}`, whose MIR is not printed (only a dependency's constants \
                         have a host twin)",
                        dest.ty
                    )));
                }
                // Not a const item: a unit enum variant or unit struct (`Option::<u32>::None`).
                self.write_valtree(dest, &ValTree::Path(path.clone()))
            }
            ConstOperand::Alloc { alloc, .. } => {
                let target = self.alloc_target(*alloc)?;
                self.write(dest, &Bytes::pointer(target, 0))
            }
            ConstOperand::StaticRef(p) => {
                self.write(dest, &Bytes::pointer(Target::Static(p.def_path()), 0))
            }
            ConstOperand::Indirect { alloc, offset, ty } => {
                let Target::Alloc(a) = self.alloc_target(*alloc)? else {
                    return Err("by-reference constant inside a static".into());
                };
                let size = self.layout(ty)?.size;
                let b = self.mem.read(a, *offset, size)?;
                self.write(dest, &b)
            }
            ConstOperand::Value(v) => self.write_valtree(dest, v),
            ConstOperand::FnItem(p) => Err(format!("function item `{p}` as a value").into()),
        }
    }

    /// The body of `owner`'s promoted `index`, or why there is none.
    pub(super) fn promoted_body(&self, owner: &Path, index: u32) -> R<BodyId> {
        self.krate
            .promoted(&owner.def_path(), index)
            .ok_or_else(|| {
                EvalError::NotPrinted(format!(
                    "rustc printed no body for {owner}::promoted[{index}]"
                ))
            })
    }

    pub(super) fn copy_body_value(&mut self, dest: &PlaceRef, id: BodyId) -> R<()> {
        let v = self
            .eval_body(id)
            .map_err(|e| EvalError::Item(Box::new(e)))?;
        let size = self.mem.allocs[v].size();
        let b = self.mem.read(v, 0, size)?;
        self.write(dest, &b)
    }

    pub(super) fn new_bytes(&mut self, b: &[u8]) -> EvalAlloc {
        let a = self.mem.alloc(b.len() as u64, 1);
        let alloc = &mut self.mem.allocs[a];
        alloc.bytes.copy_from_slice(b);
        alloc.init.iter_mut().for_each(|i| *i = true);
        a
    }

    pub(super) fn write_str(&mut self, dest: &PlaceRef, s: &[u8]) -> R<()> {
        let a = self.new_bytes(s);
        let mut fat = Bytes::pointer(Target::Alloc(a), 0);
        fat.bytes.extend((s.len() as u64).to_le_bytes());
        fat.init.extend([true; 8]);
        self.write(dest, &fat)
    }

    /// The target for rustc's `allocN`: a static by path, a function by
    /// path, or the dumped bytes imported as an evaluated allocation.
    pub(super) fn alloc_target(&mut self, id: AllocId) -> R<Target> {
        if let Some(path) = self.krate.static_names.get(&id) {
            return Ok(Target::Static(path.clone()));
        }
        if let Some(path) = self.krate.fn_names.get(&id) {
            return Ok(Target::Function(path.clone()));
        }
        if let Some((concrete, principal)) = self.krate.vtable_names.get(&id) {
            return Ok(Target::Alloc(self.vtable_alloc(concrete, principal)?));
        }
        let dump =
            self.krate.allocs.get(&id).ok_or_else(|| {
                EvalError::NotPrinted(format!("{id} was referenced but not printed"))
            })?;
        if let Some(path) = &dump.static_path {
            return Ok(Target::Static(path.clone()));
        }
        if let Some(a) = self.imported.get(&id) {
            return Ok(Target::Alloc(*a));
        }
        let a = self.mem.alloc(dump.size, dump.align);
        self.imported.insert(id, a);
        for (i, b) in dump.bytes.iter().enumerate() {
            self.mem.allocs[a].bytes[i] = b.unwrap_or(0);
            self.mem.allocs[a].init[i] = b.is_some();
        }
        for r in &dump.relocations {
            let target = self.alloc_target(r.target)?;
            self.mem.allocs[a].relocs.insert(
                r.offset,
                Reloc {
                    target,
                    addend: r.addend,
                },
            );
        }
        Ok(Target::Alloc(a))
    }
}

/// The type of a field from its printed value: a scalar's, a constant's, an
/// integer limit's (`i32::MIN`), or for a unit struct its path
/// (`std::marker::PhantomData::<u32>` is a value of the type it names; a
/// unit variant's path names no type, and its layout lookup then fails).
pub(super) fn valtree_field_ty(v: &ValTree) -> R<Ty> {
    match v {
        ValTree::Scalar(s) => Ok(scalar_ty(s)),
        ValTree::Const(c) => const_ty(c),
        ValTree::Path(p) => Ok(p
            .int_limit_type()
            .map_or_else(|| Ty::Adt(p.clone()), Ty::Int)),
        // A struct printed by its path and fields (`State { state: 0_u32 }`)
        // is a value of the type its path names.
        ValTree::Struct(p, _) | ValTree::Tuple(Some(p), _) => Ok(Ty::Adt(p.clone())),
        // A tuple (`Ok(())`'s `()`) is the tuple of its elements' types.
        ValTree::Tuple(None, elems) => Ok(Ty::Tuple(
            elems.iter().map(valtree_field_ty).collect::<R<Vec<_>>>()?,
        )),
        _ => Err(format!("nested printed value `{v}` is not supported").into()),
    }
}

/// The offset of field `name` of a struct, tuple or enum variant.
pub(super) fn field_offset(l: &Layout, variant: Option<&str>, name: &str) -> R<u64> {
    match (&l.shape, variant) {
        (Shape::Struct { fields }, None) => fields
            .get(name)
            .copied()
            .ok_or_else(|| format!("no field `{name}` in the layout").into()),
        (Shape::Enum { variants, .. }, Some(v)) => {
            let var = variants
                .iter()
                .find(|x| x.name == v)
                .ok_or_else(|| format!("no variant `{v}` in the layout"))?;
            var.fields
                .get(name)
                .copied()
                .ok_or_else(|| format!("no field `{v}.{name}`").into())
        }
        (Shape::Zst, _) => Ok(0),
        (Shape::FatPointer, None) => match name {
            "0" => Ok(0),
            "1" => Ok(PTR_SIZE),
            _ => Err(format!("no field `{name}` in a fat pointer").into()),
        },
        (s, _) => Err(format!("field `{name}` of a {s:?}").into()),
    }
}

/// `u8::MAX`, `i32::MIN`, `core::num::<impl usize>::MAX`: primitive integer
/// limits, which rustc prints as paths because their bodies live in `core`.
pub(super) fn int_limit(path: &crate::model::Path, ty: &Ty) -> Option<Bytes> {
    let Ty::Int(it) = ty else { return None };
    // The owner in one of rustc's spellings ([`crate::model::Path::
    // int_limit_type`]), for `BITS` too.
    let mut as_max = path.clone();
    as_max.segments.last_mut()?.name = "MAX".into();
    if as_max.int_limit_type() != Some(*it) {
        return None;
    }
    let bits = it.size() * 8;
    let all = if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let v = match (path.last_name(), it.is_signed()) {
        ("MAX", false) => all,
        ("MAX", true) => all >> 1,
        ("MIN", false) => 0,
        ("MIN", true) => (all >> 1) + 1,
        ("BITS", _) => u128::from(bits),
        _ => return None,
    };
    let size = if path.last_name() == "BITS" {
        4
    } else {
        it.size()
    };
    Some(uint_bytes(v, size))
}

pub(super) fn sign_extend(v: u128, size: u64) -> u128 {
    if size >= 16 {
        return v;
    }
    let bits = size * 8;
    let sign = 1u128 << (bits - 1);
    if v & sign != 0 {
        v | !((1u128 << bits) - 1)
    } else {
        v
    }
}

pub(super) fn uint_bytes(v: u128, size: u64) -> Bytes {
    Bytes::plain(v.to_le_bytes()[..size as usize].to_vec())
}

pub(super) fn scalar_ty(s: &Scalar) -> Ty {
    match s {
        Scalar::Int { ty, .. } => Ty::Int(*ty),
        Scalar::Bool(_) => Ty::Bool,
        Scalar::Char(_) => Ty::Char,
        Scalar::Float { ty, .. } => Ty::Float(*ty),
    }
}

pub(super) fn scalar_bytes(s: &Scalar) -> Bytes {
    match s {
        Scalar::Int { bits, ty } => uint_bytes(*bits, ty.size()),
        Scalar::Bool(b) => uint_bytes(u128::from(*b), 1),
        Scalar::Char(c) => uint_bytes(u128::from(u32::from(*c)), 4),
        Scalar::Float { bits, ty } => uint_bytes(*bits, ty.size()),
    }
}

pub(super) fn const_ty(c: &ConstOperand) -> R<Ty> {
    Ok(match c {
        ConstOperand::Scalar(s) => scalar_ty(s),
        ConstOperand::Unit => Ty::unit(),
        ConstOperand::Str(_) => Ty::Ref(Mutability::Not, Box::new(Ty::Str)),
        ConstOperand::Alloc { ty, .. }
        | ConstOperand::Indirect { ty, .. }
        | ConstOperand::ZeroSized(ty)
        | ConstOperand::Transmuted { ty, .. } => ty.clone(),
        other => return Err(format!("the type of constant {other:?} is not known here").into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntTy;

    #[test]
    fn integer_limits_are_read_only_for_rustcs_spellings() {
        let limit = |text: &str, it: IntTy| match crate::parse::parse_type(text) {
            Ok(Ty::Adt(p)) => int_limit(&p, &Ty::Int(it)).map(|b| b.bytes),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            limit("i32::MAX", IntTy::I32),
            Some(i32::MAX.to_le_bytes().to_vec())
        );
        assert_eq!(limit("core::num::<impl u8>::MIN", IntTy::U8), Some(vec![0]));
        assert_eq!(
            limit("u32::BITS", IntTy::U32),
            Some(32u32.to_le_bytes().to_vec())
        );
        assert_eq!(
            limit("kernel::i32::MAX", IntTy::I32),
            None,
            "a module called i32"
        );
        assert_eq!(limit("i32::MAX", IntTy::U32), None, "read at another type");
    }
}
