//! Arithmetic, comparisons and conversions, with the semantics documented on
//! `device_ir::InstData`. What LLVM calls poison (division by zero, `MIN / -1`,
//! over-wide shifts, out-of-range float-to-int conversions) is a fault here.

use device_ir::{AddressSpace, BinaryOp, CastOp, FloatCC, IntCC, RmwOp, Ty, TyKind, Types};

use super::error::{Fault, FaultKind};
use super::memory::Memory;
use super::value::{Ptr, Val, mask, sext};

fn undef_use(what: &str) -> Fault {
    Fault::new(
        FaultKind::UndefUse,
        format!("{what} uses an undefined value (uninitialized memory or `undef`)"),
    )
}

/// A use of a [`Val::Partial`]: the bytes it lacks were never written.
pub(crate) fn partial_use(what: &str, origin: &str) -> Fault {
    Fault::new(
        FaultKind::Uninit,
        format!("{what} uses a value loaded from {origin}, which was never written"),
    )
}

fn internal(what: String) -> Fault {
    Fault::new(FaultKind::Internal, what)
}

fn arith(what: String) -> Fault {
    Fault::new(FaultKind::Arithmetic, what)
}

/// The integer in `v`, or a fault naming `what` if it is undefined.
pub(crate) fn as_int(v: &Val, what: &str) -> Result<(u16, u128), Fault> {
    match v {
        Val::Int { bits, v } => Ok((*bits, *v)),
        Val::Undef => Err(undef_use(what)),
        Val::Partial { origin, .. } => Err(partial_use(what, origin)),
        other => Err(internal(format!(
            "{what} expects an integer, got {}",
            other.kind()
        ))),
    }
}

/// The pointer in `v`.
pub(crate) fn as_ptr(v: &Val, what: &str) -> Result<Ptr, Fault> {
    match v {
        Val::Ptr(p) => Ok(*p),
        Val::Undef => Err(undef_use(what)),
        Val::Partial { origin, .. } => Err(partial_use(what, origin)),
        other => Err(internal(format!(
            "{what} expects a pointer, got {}",
            other.kind()
        ))),
    }
}

/// The float in `v`, as an `f64` plus whether it is an `f32`.
fn as_float(v: &Val, what: &str) -> Result<(f64, bool), Fault> {
    match v {
        Val::F32(b) => Ok((f64::from(f32::from_bits(*b)), true)),
        Val::F64(b) => Ok((f64::from_bits(*b), false)),
        Val::Undef => Err(undef_use(what)),
        Val::Partial { origin, .. } => Err(partial_use(what, origin)),
        other => Err(internal(format!(
            "{what} expects a float, got {}",
            other.kind()
        ))),
    }
}

fn float(x: f64, single: bool) -> Val {
    if single {
        Val::F32((x as f32).to_bits())
    } else {
        Val::F64(x.to_bits())
    }
}

/// `lhs op rhs`.
pub(crate) fn binary(op: BinaryOp, lhs: &Val, rhs: &Val) -> Result<Val, Fault> {
    let name = op.name();
    if op.is_float() {
        // f32 arithmetic is done in f32, not rounded twice through f64.
        if let (Val::F32(a), Val::F32(b)) = (lhs, rhs) {
            let (a, b) = (f32::from_bits(*a), f32::from_bits(*b));
            let r = match op {
                BinaryOp::FAdd => a + b,
                BinaryOp::FSub => a - b,
                BinaryOp::FMul => a * b,
                BinaryOp::FDiv => a / b,
                _ => a % b,
            };
            return Ok(Val::F32(r.to_bits()));
        }
        let (a, single) = as_float(lhs, name)?;
        let (b, _) = as_float(rhs, name)?;
        let r = match op {
            BinaryOp::FAdd => a + b,
            BinaryOp::FSub => a - b,
            BinaryOp::FMul => a * b,
            BinaryOp::FDiv => a / b,
            _ => a % b,
        };
        return Ok(float(r, single));
    }
    let (bits, a) = as_int(lhs, name)?;
    let (_, b) = as_int(rhs, name)?;
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let min = sext(1u128 << (bits - 1).min(127), bits);
    let shift_ok = |b: u128| -> Result<u32, Fault> {
        if b >= u128::from(bits) {
            Err(arith(format!(
                "{name} by {b}, not less than the width {bits}"
            )))
        } else {
            Ok(b as u32)
        }
    };
    let nonzero = || -> Result<(), Fault> {
        if b == 0 {
            Err(arith(format!("{name} by zero")))
        } else {
            Ok(())
        }
    };
    let no_overflow = || -> Result<(), Fault> {
        if sa == min && sb == -1 {
            Err(arith(format!(
                "{name} of the minimum i{bits} by -1 overflows"
            )))
        } else {
            Ok(())
        }
    };
    let r: u128 = match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::UDiv => {
            nonzero()?;
            a / b
        }
        BinaryOp::URem => {
            nonzero()?;
            a % b
        }
        BinaryOp::SDiv => {
            nonzero()?;
            no_overflow()?;
            sa.wrapping_div(sb) as u128
        }
        BinaryOp::SRem => {
            nonzero()?;
            no_overflow()?;
            sa.wrapping_rem(sb) as u128
        }
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::Shl => a << shift_ok(b)?,
        BinaryOp::LShr => a >> shift_ok(b)?,
        BinaryOp::AShr => (sa >> shift_ok(b)?) as u128,
        _ => return Err(internal(format!("{name} on integers"))),
    };
    Ok(Val::int(bits, r))
}

/// Float negation: flips the sign bit.
pub(crate) fn fneg(v: &Val) -> Result<Val, Fault> {
    match v {
        Val::F32(b) => Ok(Val::F32(b ^ (1 << 31))),
        Val::F64(b) => Ok(Val::F64(b ^ (1 << 63))),
        Val::Undef => Err(undef_use("fneg")),
        other => Err(internal(format!("fneg of {}", other.kind()))),
    }
}

/// An integer or pointer comparison.
pub(crate) fn icmp(cond: IntCC, lhs: &Val, rhs: &Val) -> Result<Val, Fault> {
    let (bits, a, b) = match (lhs, rhs) {
        (Val::Ptr(p), Val::Ptr(q)) => (64, u128::from(p.addr()), u128::from(q.addr())),
        _ => {
            let (bits, a) = as_int(lhs, "icmp")?;
            (bits, a, as_int(rhs, "icmp")?.1)
        }
    };
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    Ok(Val::bool(match cond {
        IntCC::Eq => a == b,
        IntCC::Ne => a != b,
        IntCC::Ugt => a > b,
        IntCC::Uge => a >= b,
        IntCC::Ult => a < b,
        IntCC::Ule => a <= b,
        IntCC::Sgt => sa > sb,
        IntCC::Sge => sa >= sb,
        IntCC::Slt => sa < sb,
        IntCC::Sle => sa <= sb,
    }))
}

/// A float comparison.
pub(crate) fn fcmp(cond: FloatCC, lhs: &Val, rhs: &Val) -> Result<Val, Fault> {
    let (a, _) = as_float(lhs, "fcmp")?;
    let (b, _) = as_float(rhs, "fcmp")?;
    let uno = a.is_nan() || b.is_nan();
    Ok(Val::bool(match cond {
        FloatCC::Oeq => !uno && a == b,
        FloatCC::One => !uno && a != b,
        FloatCC::Ogt => !uno && a > b,
        FloatCC::Oge => !uno && a >= b,
        FloatCC::Olt => !uno && a < b,
        FloatCC::Ole => !uno && a <= b,
        FloatCC::Ord => !uno,
        FloatCC::Ueq => uno || a == b,
        FloatCC::Une => uno || a != b,
        FloatCC::Ugt => uno || a > b,
        FloatCC::Uge => uno || a >= b,
        FloatCC::Ult => uno || a < b,
        FloatCC::Ule => uno || a <= b,
        FloatCC::Uno => uno,
    }))
}

/// Converts `v` to `to`.
pub(crate) fn cast(op: CastOp, v: &Val, to: Ty, types: &Types, mem: &Memory) -> Result<Val, Fault> {
    let name = op.name();
    let to_bits = types.int_bits(to).unwrap_or(0);
    let to_space = types.ptr_parts(to).map(|(_, s)| s);
    Ok(match op {
        CastOp::Trunc | CastOp::ZExt => Val::int(to_bits, as_int(v, name)?.1),
        CastOp::SExt => {
            let (bits, x) = as_int(v, name)?;
            Val::int(to_bits, sext(x, bits) as u128)
        }
        CastOp::FpTrunc | CastOp::FpExt => {
            let (x, _) = as_float(v, name)?;
            float(x, matches!(types.kind(to), TyKind::F32))
        }
        CastOp::FpToUi | CastOp::FpToSi => {
            let (x, _) = as_float(v, name)?;
            let t = x.trunc();
            let signed = op == CastOp::FpToSi;
            let w = i32::from(to_bits);
            let (lo, hi) = if signed {
                (-(2f64.powi(w - 1)), 2f64.powi(w - 1))
            } else {
                (0.0, 2f64.powi(w))
            };
            if t.is_nan() || t < lo || t >= hi {
                return Err(arith(format!("{name} of {x} does not fit i{to_bits}")));
            }
            let r = if signed { t as i128 as u128 } else { t as u128 };
            Val::int(to_bits, r)
        }
        CastOp::UiToFp | CastOp::SiToFp => {
            let (bits, x) = as_int(v, name)?;
            let single = matches!(types.kind(to), TyKind::F32);
            let f = if op == CastOp::SiToFp {
                let s = sext(x, bits) as i64;
                if single {
                    f64::from(s as f32)
                } else {
                    s as f64
                }
            } else {
                let u = x as u64;
                if single {
                    f64::from(u as f32)
                } else {
                    u as f64
                }
            };
            float(f, single)
        }
        CastOp::PtrToInt => Val::int(to_bits, u128::from(as_ptr(v, name)?.addr())),
        CastOp::IntToPtr => {
            let (_, x) = as_int(v, name)?;
            Val::Ptr(mem.ptr_from_addr(x as u64, to_space.unwrap_or(AddressSpace::Generic)))
        }
        CastOp::Bitcast => match (v, types.kind(to)) {
            (Val::Ptr(p), TyKind::Ptr { space, .. }) => Val::Ptr(Ptr {
                space: *space,
                ..*p
            }),
            (Val::Undef, _) => Val::Undef,
            (Val::Int { v, .. }, TyKind::F32) => Val::F32(*v as u32),
            (Val::Int { v, .. }, TyKind::F64) => Val::F64(*v as u64),
            (Val::F32(b), TyKind::Int(bits)) => Val::int(*bits, u128::from(*b)),
            (Val::F64(b), TyKind::Int(bits)) => Val::int(*bits, u128::from(*b)),
            (Val::F32(b), TyKind::F32) => Val::F32(*b),
            (Val::F64(b), TyKind::F64) => Val::F64(*b),
            (Val::Int { v, .. }, TyKind::Int(bits)) => Val::int(*bits, *v),
            (other, _) => {
                return Err(internal(format!(
                    "bitcast of {} to {}",
                    other.kind(),
                    types.display(to)
                )));
            }
        },
        CastOp::AddrSpaceCast => {
            let p = as_ptr(v, name)?;
            let space = to_space.unwrap_or(AddressSpace::Generic);
            if let (Some(id), true) = (p.target, space != AddressSpace::Generic)
                && let Some(a) = mem.get(id)
                && a.space != space
            {
                return Err(Fault::new(
                    FaultKind::BadCast,
                    format!(
                        "addrspacecast to {} of a pointer into {} memory",
                        space.name(),
                        a.space.name()
                    ),
                ));
            }
            Val::Ptr(Ptr { space, ..p })
        }
    })
}

/// The new memory value of an atomic read-modify-write.
pub(crate) fn rmw(op: RmwOp, old: &Val, operand: &Val) -> Result<Val, Fault> {
    let name = op.name();
    if op == RmwOp::FAdd {
        return binary(BinaryOp::FAdd, old, operand);
    }
    if op == RmwOp::Xchg {
        return Ok(operand.clone());
    }
    let (bits, a) = as_int(old, name)?;
    let (_, b) = as_int(operand, name)?;
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let r = match op {
        RmwOp::Add => a.wrapping_add(b),
        RmwOp::And => a & b,
        RmwOp::Or => a | b,
        RmwOp::Xor => a ^ b,
        RmwOp::SMax => sa.max(sb) as u128,
        RmwOp::SMin => sa.min(sb) as u128,
        RmwOp::UMax => a.max(b),
        RmwOp::UMin => a.min(b),
        _ => return Err(internal(format!("atomic {name}"))),
    };
    Ok(Val::Int {
        bits,
        v: r & mask(bits),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_edge_cases() {
        let i8v = |v: i128| Val::int(8, v as u128);
        assert_eq!(
            binary(BinaryOp::Add, &i8v(127), &i8v(1)).ok(),
            Some(i8v(-128))
        );
        assert_eq!(
            binary(BinaryOp::SDiv, &i8v(-7), &i8v(2)).ok(),
            Some(i8v(-3))
        );
        assert_eq!(
            binary(BinaryOp::SRem, &i8v(-7), &i8v(2)).ok(),
            Some(i8v(-1))
        );
        assert_eq!(
            binary(BinaryOp::AShr, &i8v(-8), &i8v(1)).ok(),
            Some(i8v(-4))
        );
        assert_eq!(
            binary(BinaryOp::LShr, &i8v(-8), &i8v(1)).ok(),
            Some(i8v(124))
        );
        let e = binary(BinaryOp::SDiv, &i8v(-128), &i8v(-1));
        assert_eq!(e.err().map(|f| f.kind), Some(FaultKind::Arithmetic));
        let e = binary(BinaryOp::UDiv, &i8v(1), &i8v(0));
        assert_eq!(e.err().map(|f| f.kind), Some(FaultKind::Arithmetic));
        let e = binary(BinaryOp::Shl, &i8v(1), &i8v(8));
        assert_eq!(e.err().map(|f| f.kind), Some(FaultKind::Arithmetic));
        let e = binary(BinaryOp::Add, &Val::Undef, &i8v(8));
        assert_eq!(e.err().map(|f| f.kind), Some(FaultKind::UndefUse));
        assert_eq!(
            icmp(IntCC::Slt, &i8v(-1), &i8v(0)).ok(),
            Some(Val::bool(true))
        );
        assert_eq!(
            icmp(IntCC::Ult, &i8v(-1), &i8v(0)).ok(),
            Some(Val::bool(false))
        );
    }

    #[test]
    fn floats() {
        let f = |x: f32| Val::F32(x.to_bits());
        assert_eq!(
            binary(BinaryOp::FRem, &f(-7.5), &f(2.0)).ok(),
            Some(f(-1.5))
        );
        assert_eq!(fneg(&f(1.0)).ok(), Some(f(-1.0)));
        let nan = f(f32::NAN);
        assert_eq!(fcmp(FloatCC::Oeq, &nan, &nan).ok(), Some(Val::bool(false)));
        assert_eq!(fcmp(FloatCC::Une, &nan, &nan).ok(), Some(Val::bool(true)));
    }
}
