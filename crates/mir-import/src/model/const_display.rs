//! Constants written back in rustc's MIR syntax, for diagnostics: a refused
//! constant is named the way the user would find it in `--emit=mir`, not as
//! the importer's data structure.

use std::fmt::{self, Display, Formatter};

use super::body::{ConstOperand, Scalar, ValTree};
use super::ty::FloatTy;

impl Display for Scalar {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int { bits, ty } => {
                let size = ty.size() * 8;
                if ty.is_signed() && size < 128 && bits >> (size - 1) & 1 == 1 {
                    // Sign-extend the two's-complement bits.
                    let value = (*bits as i128) - (1i128 << size);
                    write!(f, "{value}_{}", ty.name())
                } else if ty.is_signed() && size == 128 {
                    write!(f, "{}_{}", *bits as i128, ty.name())
                } else {
                    write!(f, "{bits}_{}", ty.name())
                }
            }
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Char(c) => write!(f, "{c:?}"),
            Scalar::Float { bits, ty } => match ty {
                FloatTy::F32 => write!(f, "{:?}_f32", f32::from_bits(*bits as u32)),
                FloatTy::F64 => write!(f, "{:?}_f64", f64::from_bits(*bits as u64)),
                FloatTy::F16 => write!(f, "{{0x{bits:04x}: f16}}"),
                FloatTy::F128 => write!(f, "{{0x{bits:032x}: f128}}"),
            },
        }
    }
}

/// `a, b, c`.
fn list<T: Display>(f: &mut Formatter<'_>, items: impl IntoIterator<Item = T>) -> fmt::Result {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl Display for ValTree {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ValTree::Scalar(s) => write!(f, "{s}"),
            ValTree::Str(s) => write!(f, "{s:?}"),
            ValTree::ByteStr(b) => write!(f, "b\"{}\"", b.escape_ascii()),
            ValTree::Tuple(path, elems) => {
                if let Some(p) = path {
                    write!(f, "{p}")?;
                }
                f.write_str("(")?;
                list(f, elems)?;
                if path.is_none() && elems.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            ValTree::Struct(path, fields) => {
                write!(f, "{path} {{ ")?;
                list(f, fields.iter().map(|(n, v)| format!("{n}: {v}")))?;
                f.write_str(" }")
            }
            ValTree::Array(elems) => {
                f.write_str("[")?;
                list(f, elems)?;
                f.write_str("]")
            }
            ValTree::Path(p) => write!(f, "{p}"),
            ValTree::Const(c) => write!(f, "{{{c}}}"),
        }
    }
}

impl Display for ConstOperand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ConstOperand::Scalar(s) => write!(f, "{s}"),
            ConstOperand::Unit => f.write_str("()"),
            ConstOperand::Str(s) => write!(f, "{s:?}"),
            ConstOperand::ByteStr(b) => write!(f, "b\"{}\"", b.escape_ascii()),
            ConstOperand::Item(p) | ConstOperand::FnItem(p) => write!(f, "{p}"),
            ConstOperand::Promoted { owner, index } => write!(f, "{owner}::promoted[{index}]"),
            ConstOperand::Alloc { alloc, ty } => write!(f, "{{{alloc}: {ty}}}"),
            ConstOperand::Indirect { alloc, offset, ty } => write!(
                f,
                "Indirect {{ alloc_id: {alloc}, offset: Size({offset} bytes) }}: {ty}"
            ),
            ConstOperand::Transmuted { bits, ty } => write!(f, "{{transmute(0x{bits:x}): {ty}}}"),
            ConstOperand::ZeroSized(ty) => write!(f, "ZeroSized: {ty}"),
            ConstOperand::StaticRef(p) => write!(f, "<static({p})>"),
            ConstOperand::Value(v) => write!(f, "{v}"),
            ConstOperand::Uninit => f.write_str("<uninit>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntTy, Path};

    #[test]
    fn a_printed_struct_reads_as_rustc_wrote_it() {
        let v = ConstOperand::Value(ValTree::Struct(
            Path::plain("kernel::Fixed"),
            vec![
                ("bits".into(), ValTree::Path(Path::plain("i32::MIN"))),
                (
                    "pair".into(),
                    ValTree::Tuple(
                        None,
                        vec![
                            ValTree::Scalar(Scalar::Int {
                                bits: 0xff,
                                ty: IntTy::I8,
                            }),
                            ValTree::Scalar(Scalar::Float {
                                bits: u128::from(1.5f32.to_bits()),
                                ty: FloatTy::F32,
                            }),
                        ],
                    ),
                ),
                (
                    "one".into(),
                    ValTree::Tuple(None, vec![ValTree::Scalar(Scalar::Bool(true))]),
                ),
            ],
        ));
        assert_eq!(
            v.to_string(),
            "kernel::Fixed { bits: i32::MIN, pair: (-1_i8, 1.5_f32), one: (true,) }"
        );
    }

    #[test]
    fn signed_and_unsigned_integers_keep_their_values() {
        let int = |bits, ty| Scalar::Int { bits, ty }.to_string();
        assert_eq!(int(u128::from(u32::MAX), IntTy::U32), "4294967295_u32");
        assert_eq!(int(u128::from(u32::MAX), IntTy::I32), "-1_i32");
        assert_eq!(int(u128::MAX, IntTy::I128), "-1_i128");
        assert_eq!(int(7, IntTy::I64), "7_i64");
    }
}
