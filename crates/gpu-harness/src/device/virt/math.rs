//! Float math functions ([`MathFn`]) on the virtual device.
//!
//! Each is computed in its own width with Rust's `f32`/`f64` methods, which
//! is what the host run calls too. For the exact functions (`sqrt`, `floor`,
//! `mul_add`, ...) that is the one right answer, bit for bit. For the others
//! it is the host's GNU libm; the GPU's libdevice may differ from it by the
//! bound [`MathFn::max_ulp`] plus [`MathFn::host_ulp`], which the comparison
//! with a device that runs libdevice's code (the GPU) allows and reports.

use device_ir::MathFn;

use super::error::{Fault, FaultKind};
use super::ops::as_int;
use super::value::Val;

fn bad(func: MathFn, msg: &str) -> Fault {
    Fault::new(FaultKind::Internal, format!("math {}: {msg}", func.name()))
}

/// `func` on `x` (and `y`, `z`, `n` where it takes them), in the width of
/// `x`: one body for `f32` and `f64`.
macro_rules! apply {
    ($func:expr, $x:expr, $y:expr, $z:expr, $n:expr) => {{
        let (x, y, z) = ($x, $y, $z);
        match $func {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Trunc => x.trunc(),
            MathFn::Round => x.round(),
            MathFn::RoundEven => x.round_ties_even(),
            MathFn::Abs => x.abs(),
            MathFn::CopySign => x.copysign(y()?),
            MathFn::Min => x.min(y()?),
            MathFn::Max => x.max(y()?),
            MathFn::Fma => x.mul_add(y()?, z()?),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Asin => x.asin(),
            MathFn::Acos => x.acos(),
            MathFn::Atan => x.atan(),
            MathFn::Atan2 => x.atan2(y()?),
            MathFn::Sinh => x.sinh(),
            MathFn::Cosh => x.cosh(),
            MathFn::Tanh => x.tanh(),
            MathFn::Exp => x.exp(),
            MathFn::Exp2 => x.exp2(),
            MathFn::ExpM1 => x.exp_m1(),
            MathFn::Ln => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Log10 => x.log10(),
            MathFn::Ln1p => x.ln_1p(),
            MathFn::Pow => x.powf(y()?),
            MathFn::Powi => x.powi($n()?),
            MathFn::Cbrt => x.cbrt(),
            MathFn::Hypot => x.hypot(y()?),
        }
    }};
}

/// `func(args)`.
pub(crate) fn math(func: MathFn, args: &[Val]) -> Result<Val, Fault> {
    let missing = || bad(func, "missing operand");
    let n = || exponent(func, args);
    match args.first() {
        Some(Val::F32(b)) => {
            let f = |i: usize| match args.get(i) {
                Some(Val::F32(b)) => Ok(f32::from_bits(*b)),
                Some(_) => Err(bad(func, "mixed operand types")),
                None => Err(missing()),
            };
            let r: f32 = apply!(func, f32::from_bits(*b), || f(1), || f(2), n);
            Ok(Val::F32(r.to_bits()))
        }
        Some(Val::F64(b)) => {
            let f = |i: usize| match args.get(i) {
                Some(Val::F64(b)) => Ok(f64::from_bits(*b)),
                Some(_) => Err(bad(func, "mixed operand types")),
                None => Err(missing()),
            };
            let r: f64 = apply!(func, f64::from_bits(*b), || f(1), || f(2), n);
            Ok(Val::F64(r.to_bits()))
        }
        Some(Val::Undef) => Err(Fault::new(
            FaultKind::UndefUse,
            format!("math {} of an undefined value", func.name()),
        )),
        _ => Err(bad(func, "expects a float")),
    }
}

/// `powi`'s `i32` exponent.
fn exponent(func: MathFn, args: &[Val]) -> Result<i32, Fault> {
    let v = args.get(1).ok_or_else(|| bad(func, "missing exponent"))?;
    Ok(as_int(v, "powi")?.1 as u32 as i32)
}
