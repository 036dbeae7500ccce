//! How far a device that runs libdevice's code (the GPU, the PTX device) may
//! differ from the host run, value by value, and why.
//!
//! Only the approximate float functions ([`MathFn::max_ulp`] above 0) open a
//! tolerance: a fixture whose kernel calls none is compared bit for bit. When
//! it calls some, a float readback value may differ from the host's by the
//! largest `max_ulp + host_ulp` among them (the GPU's documented error plus
//! the host libm's, since the host is the reference, not the exact result),
//! and the report names that function and bound. This is per fixture, not
//! per value: the oracle cannot tell which function a stored value went
//! through, so the bound is the loosest one the kernel uses, and the report
//! says so. Integers, NaN against a number, and values of different sign
//! are never within a tolerance; a NaN against a NaN always is, whatever
//! their bits, since Rust leaves a NaN's sign and payload unspecified.

use device_ir::{InstData, MathFn, Module, Types};

use crate::fixture::ElemTy;

/// The tolerance of one float width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The allowed difference in units in the last place.
    pub ulps: u32,
    /// The function whose bound it is.
    pub func: MathFn,
    /// The device's documented error for it, part of `ulps`.
    pub device_ulps: u32,
}

/// The tolerances of a kernel, per float width; `None` is bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tolerance {
    /// For `f32` values.
    pub f32: Option<Bound>,
    /// For `f64` values.
    pub f64: Option<Bound>,
}

impl Tolerance {
    /// The tolerance that the approximate math functions of `module` open.
    pub fn of_module(module: &Module) -> Tolerance {
        let mut t = Tolerance::default();
        for (_, f) in module.functions.iter() {
            let Some(body) = &f.body else { continue };
            for (_, inst) in body.insts.iter() {
                let InstData::Math { func, args } = inst else {
                    continue;
                };
                let Some(&first) = args.first() else { continue };
                let double = is_f64(&module.types, body.value_ty(first));
                let device_ulps = func.max_ulp(double);
                if device_ulps == 0 {
                    continue;
                }
                let b = Bound {
                    ulps: device_ulps + func.host_ulp(double),
                    func: *func,
                    device_ulps,
                };
                let slot = if double { &mut t.f64 } else { &mut t.f32 };
                if slot.is_none_or(|old| (b.ulps, b.func) > (old.ulps, old.func)) {
                    *slot = Some(b);
                }
            }
        }
        t
    }

    /// Whether `got` may stand for `expected` in a buffer of `ty`: `None` if
    /// not, or why it may (`"sinf: 3 ulp (2 documented + 1 host)"`). Equal
    /// bits need no reason and are not asked about.
    pub fn allows(&self, ty: ElemTy, expected: u64, got: u64) -> Option<String> {
        if both_nan(ty, expected, got) {
            return Some(
                "both NaN: Rust does not fix a NaN's sign or payload (RFC 3514), and x86 and the GPU make different ones"
                    .to_owned(),
            );
        }
        let (bound, diff) = match ty {
            ElemTy::F32 => (
                self.f32?,
                ulp_distance_f32(f32::from_bits(expected as u32), f32::from_bits(got as u32))?,
            ),
            ElemTy::F64 => (
                self.f64?,
                ulp_distance_f64(f64::from_bits(expected), f64::from_bits(got))?,
            ),
            _ => return None,
        };
        let double = ty == ElemTy::F64;
        (diff <= u64::from(bound.ulps)).then(|| {
            format!(
                "{} ulp apart, within {}{}'s {} ulp ({} documented for the GPU + {} for the host's libm)",
                diff,
                bound.func.name(),
                if double { " (f64)" } else { " (f32)" },
                bound.ulps,
                bound.device_ulps,
                bound.ulps - bound.device_ulps
            )
        })
    }
}

/// Whether both bit patterns are NaNs of the float type `ty`.
fn both_nan(ty: ElemTy, a: u64, b: u64) -> bool {
    match ty {
        ElemTy::F32 => f32::from_bits(a as u32).is_nan() && f32::from_bits(b as u32).is_nan(),
        ElemTy::F64 => f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan(),
        _ => false,
    }
}

fn is_f64(types: &Types, ty: device_ir::Ty) -> bool {
    types.scalar_bits(ty) == Some(64)
}

/// The number of representable `f32`s between `a` and `b`; `None` when
/// either is NaN or their signs differ (a tolerance never crosses zero).
pub fn ulp_distance_f32(a: f32, b: f32) -> Option<u64> {
    if a.is_nan() || b.is_nan() || a.is_sign_negative() != b.is_sign_negative() {
        return None;
    }
    let (x, y) = (a.to_bits() & 0x7fff_ffff, b.to_bits() & 0x7fff_ffff);
    Some(u64::from(x.abs_diff(y)))
}

/// The number of representable `f64`s between `a` and `b`; `None` when
/// either is NaN or their signs differ.
pub fn ulp_distance_f64(a: f64, b: f64) -> Option<u64> {
    if a.is_nan() || b.is_nan() || a.is_sign_negative() != b.is_sign_negative() {
        return None;
    }
    let mask = 0x7fff_ffff_ffff_ffff;
    Some((a.to_bits() & mask).abs_diff(b.to_bits() & mask))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sin_bound() -> Tolerance {
        Tolerance {
            f32: Some(Bound {
                ulps: MathFn::Sin.max_ulp(false) + MathFn::Sin.host_ulp(false),
                func: MathFn::Sin,
                device_ulps: MathFn::Sin.max_ulp(false),
            }),
            f64: None,
        }
    }

    #[test]
    fn ulp_distance_counts_representable_values() {
        let x = 1.0f32;
        let next = f32::from_bits(x.to_bits() + 3);
        assert_eq!(ulp_distance_f32(x, next), Some(3));
        assert_eq!(ulp_distance_f32(-x, -next), Some(3));
        assert_eq!(ulp_distance_f32(x, -x), None);
        assert_eq!(ulp_distance_f32(f32::NAN, f32::NAN), None);
        assert_eq!(
            ulp_distance_f64(2.0, f64::from_bits(2.0f64.to_bits() + 1)),
            Some(1)
        );
    }

    #[test]
    fn a_bound_allows_up_to_its_ulps_and_names_its_function() {
        let t = sin_bound();
        let e = 0.5f32;
        let at = |k: u32| u64::from(f32::from_bits(e.to_bits() + k).to_bits());
        let why = t.allows(ElemTy::F32, u64::from(e.to_bits()), at(3));
        assert!(why.as_deref().is_some_and(|w| w.contains("sin")), "{why:?}");
        assert_eq!(t.allows(ElemTy::F32, u64::from(e.to_bits()), at(4)), None);
        // No bound for f64, and never for integers.
        assert_eq!(t.allows(ElemTy::F64, 1, 2), None);
        assert_eq!(t.allows(ElemTy::U32, 1, 2), None);
    }

    #[test]
    fn any_nan_stands_for_any_nan_but_not_for_a_number() {
        let exact = Tolerance::default();
        let (x86, gpu) = (0xffc0_0000u64, 0x7fff_ffffu64);
        assert!(exact.allows(ElemTy::F32, x86, gpu).is_some());
        assert!(exact.allows(ElemTy::F32, x86, 0).is_none());
        assert!(exact.allows(ElemTy::U32, x86, gpu).is_none());
        let (a, b) = (f64::NAN.to_bits(), (-f64::NAN).to_bits());
        assert!(exact.allows(ElemTy::F64, a, b).is_some());
    }

    #[test]
    fn exact_functions_open_no_tolerance() {
        for f in MathFn::ALL {
            let exact = matches!(
                f,
                MathFn::Sqrt
                    | MathFn::Floor
                    | MathFn::Ceil
                    | MathFn::Trunc
                    | MathFn::Round
                    | MathFn::RoundEven
                    | MathFn::Abs
                    | MathFn::CopySign
                    | MathFn::Min
                    | MathFn::Max
                    | MathFn::Fma
            );
            for double in [false, true] {
                assert_eq!(f.max_ulp(double) == 0, exact, "{f:?}");
                assert_eq!(f.host_ulp(double) == 0, exact, "{f:?}");
            }
        }
    }
}
