//! IEEE 754 arithmetic with PTX's rounding modes, bit for bit.
//!
//! The host's float operations round to nearest, ties to even (`.rn`). PTX
//! also writes `.rz`, `.rm` and `.rp` (libdevice uses them), and its NaN
//! results are canonical. Each operation here is computed exactly or with an
//! error-free transformation whose residual's sign decides the directed
//! rounding:
//!
//! - `f32` operations run in `f64`: a product of two `f32`s is exact there;
//!   a sum, a quotient and a square root are rounded once to nearest and
//!   their exact residual (TwoSum, or `fma` for the remainder) says on which
//!   side of the rounded value the true result lies. Rounding that `f64`
//!   (plus the sign of its residual) to `f32` is then exact for every mode.
//! - `f64` sums, products, quotients and square roots take the same
//!   residuals in `f64` itself. They are exact except where a residual
//!   underflows below the smallest subnormal (a product or quotient whose
//!   result is within a factor 2^53 of the subnormal range), which no
//!   fixture reaches; [`Unsupported`] is returned for the one operation with
//!   no residual here, `fma.f64` with a directed rounding.
//!
//! NaN: every NaN result is the GPU's canonical NaN (`0x7fffffff`,
//! `0x7fffffffffffffff`), whatever the inputs' payloads.

/// A rounding mode of an IEEE instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// To nearest, ties to even (`.rn`).
    Nearest,
    /// Toward zero (`.rz`).
    Zero,
    /// Toward minus infinity (`.rm`).
    Down,
    /// Toward plus infinity (`.rp`).
    Up,
}

/// An operation this module cannot compute exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub &'static str);

/// The GPU's canonical single-precision NaN.
pub(crate) const NAN32: u32 = 0x7fff_ffff;
/// The GPU's canonical double-precision NaN.
pub(crate) const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// `f32` bits, a NaN made canonical.
pub(crate) fn bits32(x: f32) -> u32 {
    if x.is_nan() { NAN32 } else { x.to_bits() }
}

/// `f64` bits, a NaN made canonical.
pub(crate) fn bits64(x: f64) -> u64 {
    if x.is_nan() { NAN64 } else { x.to_bits() }
}

/// `s + e` exactly (TwoSum, Knuth): `s` is the rounded sum, `e` what it lost.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// The sign of an exact zero sum `a + b` (IEEE 754 §6.3): the operands' sign
/// when both are zeros of one sign, else `+0`, or `-0` when rounding down.
fn zero_sum_negative(a_neg: bool, b_neg: bool, both_zero: bool, mode: Round) -> bool {
    if both_zero && a_neg == b_neg {
        a_neg
    } else {
        mode == Round::Down
    }
}

/// Rounds the exact value `s + residual` to `f32` in `mode`, where `s` is an
/// `f64` and `|residual|` is at most half an `f64` ulp of `s` (only its sign
/// matters). Overflow follows the mode: toward zero it stops at `f32::MAX`.
pub(crate) fn round_to_f32(s: f64, residual: f64, mode: Round) -> f32 {
    if s.is_nan() {
        return f32::from_bits(NAN32);
    }
    if s.is_infinite() {
        return s as f32;
    }
    // The two f32 neighbours lo <= exact <= hi.
    let max = f64::from(f32::MAX);
    let (lo, hi) = if s > max {
        (f32::MAX, f32::INFINITY)
    } else if s < -max {
        (f32::NEG_INFINITY, f32::MIN)
    } else {
        let r = s as f32;
        let rv = f64::from(r);
        if rv == s {
            // On the grid: the residual alone decides.
            return match (mode, residual.partial_cmp(&0.0)) {
                (_, Some(std::cmp::Ordering::Equal) | None) | (Round::Nearest, _) => r,
                (Round::Up, Some(std::cmp::Ordering::Greater)) => r.next_up(),
                (Round::Down, Some(std::cmp::Ordering::Less)) => r.next_down(),
                (Round::Zero, Some(o)) => {
                    let away = (o == std::cmp::Ordering::Greater) == (r > 0.0);
                    if r != 0.0 && !away {
                        if r > 0.0 { r.next_down() } else { r.next_up() }
                    } else {
                        r
                    }
                }
                _ => r,
            };
        }
        if rv < s {
            (r, r.next_up())
        } else {
            (r.next_down(), r)
        }
    };
    match mode {
        Round::Down => lo,
        Round::Up => hi,
        Round::Zero => {
            if s > 0.0 {
                lo
            } else {
                hi
            }
        }
        Round::Nearest => {
            if s.abs() > max {
                // Past MAX: infinity from half an ulp above MAX on.
                return s as f32;
            }
            let (dl, dh) = (s - f64::from(lo), f64::from(hi) - s);
            let below = if dl == dh {
                // A tie in f64: the residual breaks it, else ties to even.
                if residual > 0.0 {
                    false
                } else if residual < 0.0 {
                    true
                } else {
                    lo.to_bits() & 1 == 0
                }
            } else {
                dl < dh
            };
            if below { lo } else { hi }
        }
    }
}

/// Rounds the exact value `s + residual` (residual the error of an `f64`
/// operation rounded to nearest) in `mode`. `overflowed` says that `s` is an
/// infinity from finite operands.
fn round_f64(s: f64, residual: f64, overflowed: bool, mode: Round) -> f64 {
    if s.is_nan() {
        return f64::from_bits(NAN64);
    }
    if overflowed {
        return match (mode, s > 0.0) {
            (Round::Nearest, _) | (Round::Up, true) | (Round::Down, false) => s,
            (_, true) => f64::MAX,
            (_, false) => f64::MIN,
        };
    }
    match mode {
        Round::Nearest => s,
        Round::Up if residual > 0.0 => s.next_up(),
        Round::Down if residual < 0.0 => s.next_down(),
        Round::Zero if residual != 0.0 && (residual > 0.0) != (s > 0.0) && s != 0.0 => {
            if s > 0.0 {
                s.next_down()
            } else {
                s.next_up()
            }
        }
        _ => s,
    }
}

/// `a + b` in `f32`.
pub(crate) fn add32(a: f32, b: f32, mode: Round) -> f32 {
    if !a.is_finite() || !b.is_finite() {
        return a + b;
    }
    let (s, e) = two_sum(f64::from(a), f64::from(b));
    if s == 0.0 && e == 0.0 {
        let neg = zero_sum_negative(
            a.is_sign_negative(),
            b.is_sign_negative(),
            a == 0.0 && b == 0.0,
            mode,
        );
        return if neg { -0.0 } else { 0.0 };
    }
    round_to_f32(s, e, mode)
}

/// `a * b` in `f32`.
pub(crate) fn mul32(a: f32, b: f32, mode: Round) -> f32 {
    // Exact in f64: 24 + 24 significant bits, exponents well inside range.
    round_to_f32(f64::from(a) * f64::from(b), 0.0, mode)
}

/// `a * b + c` in `f32`, rounded once.
pub(crate) fn fma32(a: f32, b: f32, c: f32, mode: Round) -> f32 {
    let p = f64::from(a) * f64::from(b);
    if !p.is_finite() || !c.is_finite() {
        return a.mul_add(b, c);
    }
    let (s, e) = two_sum(p, f64::from(c));
    if s == 0.0 && e == 0.0 {
        let neg = zero_sum_negative(
            p.is_sign_negative(),
            c.is_sign_negative(),
            p == 0.0 && c == 0.0,
            mode,
        );
        return if neg { -0.0 } else { 0.0 };
    }
    round_to_f32(s, e, mode)
}

/// `a / b` in `f32`.
pub(crate) fn div32(a: f32, b: f32, mode: Round) -> f32 {
    if !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return a / b;
    }
    let (a, b) = (f64::from(a), f64::from(b));
    let q = a / b;
    // a - q*b exactly; the true quotient exceeds q when it has b's sign.
    let r = (-q).mul_add(b, a);
    round_to_f32(q, if b > 0.0 { r } else { -r }, mode)
}

/// `sqrt(a)` in `f32`.
pub(crate) fn sqrt32(a: f32, mode: Round) -> f32 {
    if !a.is_finite() || a <= 0.0 {
        return a.sqrt();
    }
    let a = f64::from(a);
    let s = a.sqrt();
    round_to_f32(s, (-s).mul_add(s, a), mode)
}

/// `a + b` in `f64`.
pub(crate) fn add64(a: f64, b: f64, mode: Round) -> f64 {
    if !a.is_finite() || !b.is_finite() {
        return a + b;
    }
    let (s, e) = two_sum(a, b);
    if s.is_infinite() {
        return round_f64(s, 0.0, true, mode);
    }
    if s == 0.0 && e == 0.0 {
        let neg = zero_sum_negative(
            a.is_sign_negative(),
            b.is_sign_negative(),
            a == 0.0 && b == 0.0,
            mode,
        );
        return if neg { -0.0 } else { 0.0 };
    }
    round_f64(s, e, false, mode)
}

/// `a * b` in `f64`.
pub(crate) fn mul64(a: f64, b: f64, mode: Round) -> f64 {
    let p = a * b;
    if !a.is_finite() || !b.is_finite() || p == 0.0 && (a == 0.0 || b == 0.0) {
        return p;
    }
    if p.is_infinite() {
        return round_f64(p, 0.0, true, mode);
    }
    if p == 0.0 {
        // Underflow past the smallest subnormal: the exact product is tiny.
        let tiny = if p.is_sign_negative() { -1.0 } else { 1.0 };
        return round_f64(p, tiny, false, mode);
    }
    round_f64(p, a.mul_add(b, -p), false, mode)
}

/// `a / b` in `f64`.
pub(crate) fn div64(a: f64, b: f64, mode: Round) -> f64 {
    let q = a / b;
    if !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return q;
    }
    if q.is_infinite() {
        return round_f64(q, 0.0, true, mode);
    }
    let r = (-q).mul_add(b, a);
    round_f64(q, if b > 0.0 { r } else { -r }, false, mode)
}

/// `sqrt(a)` in `f64`.
pub(crate) fn sqrt64(a: f64, mode: Round) -> f64 {
    let s = a.sqrt();
    if !a.is_finite() || a <= 0.0 {
        return s;
    }
    round_f64(s, (-s).mul_add(s, a), false, mode)
}

/// `a * b + c` in `f64`, rounded once.
pub(crate) fn fma64(a: f64, b: f64, c: f64, mode: Round) -> Result<f64, Unsupported> {
    match mode {
        Round::Nearest => Ok(a.mul_add(b, c)),
        _ => Err(Unsupported(
            "fma.f64 with a directed rounding (.rz/.rm/.rp)",
        )),
    }
}

/// PTX `min.f32`/`min.f64`: a NaN operand gives the other one, two NaNs the
/// canonical NaN, and `-0.0` is below `+0.0`.
pub(crate) fn min64(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::from_bits(NAN64),
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            if a.is_sign_negative() {
                a
            } else {
                b
            }
        }
        _ => a.min(b),
    }
}

/// PTX `max.f32`/`max.f64`, the mirror of [`min64`].
pub(crate) fn max64(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::from_bits(NAN64),
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            if a.is_sign_negative() {
                b
            } else {
                a
            }
        }
        _ => a.max(b),
    }
}

/// Flushes an `f32` subnormal to a zero of its sign (`.ftz`).
pub(crate) fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        if x.is_sign_negative() { -0.0 } else { 0.0 }
    } else {
        x
    }
}

/// An integer value (as `i128`) rounded to `f64` in `mode`.
pub(crate) fn int_to_f64(v: i128, mode: Round) -> f64 {
    let r = v as f64;
    // r is an integer below 2^128 in magnitude: exact in i128 unless 2^127.
    let rv = if r >= 1.7e38 { i128::MAX } else { r as i128 };
    let residual = (v - rv).signum() as f64;
    round_f64(r, residual, false, mode)
}

/// An integer value (as `i128`) rounded to `f32` in `mode`.
pub(crate) fn int_to_f32(v: i128, mode: Round) -> f32 {
    let r = v as f64;
    let rv = if r >= 1.7e38 { i128::MAX } else { r as i128 };
    round_to_f32(r, (v - rv).signum() as f64, mode)
}

/// Rounds to an integral value (`cvt.rni`/`rzi`/`rmi`/`rpi` to a float).
pub(crate) fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::Nearest => x.round_ties_even(),
        Round::Zero => x.trunc(),
        Round::Down => x.floor(),
        Round::Up => x.ceil(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_matches_the_host_bit_for_bit() {
        let xs = [
            0.1f32,
            -0.3,
            3.0,
            1e-45,
            -1.5e-39,
            f32::MAX,
            f32::MIN_POSITIVE,
            7.0e37,
            -0.0,
            0.0,
            1.0,
            123_456.79,
        ];
        for &a in &xs {
            for &b in &xs {
                assert_eq!(
                    add32(a, b, Round::Nearest).to_bits(),
                    (a + b).to_bits(),
                    "{a} + {b}"
                );
                assert_eq!(
                    mul32(a, b, Round::Nearest).to_bits(),
                    (a * b).to_bits(),
                    "{a} * {b}"
                );
                if b != 0.0 {
                    assert_eq!(
                        div32(a, b, Round::Nearest).to_bits(),
                        (a / b).to_bits(),
                        "{a} / {b}"
                    );
                }
                for &c in &xs {
                    assert_eq!(
                        fma32(a, b, c, Round::Nearest).to_bits(),
                        a.mul_add(b, c).to_bits(),
                        "fma({a}, {b}, {c})"
                    );
                }
                let (a, b) = (f64::from(a) * 1.1, f64::from(b) * 0.7);
                assert_eq!(add64(a, b, Round::Nearest).to_bits(), (a + b).to_bits());
                assert_eq!(mul64(a, b, Round::Nearest).to_bits(), (a * b).to_bits());
            }
            assert_eq!(
                sqrt32(a, Round::Nearest).to_bits(),
                a.sqrt().to_bits(),
                "sqrt {a}"
            );
        }
    }

    #[test]
    fn directed_roundings_bracket_the_exact_result() {
        // 1/3 is not representable: down < nearest-or-up, and up is the next float.
        let d = div32(1.0, 3.0, Round::Down);
        let u = div32(1.0, 3.0, Round::Up);
        assert_eq!(u, d.next_up());
        assert!(f64::from(d) < 1.0 / 3.0 && 1.0 / 3.0 < f64::from(u));
        assert_eq!(div32(1.0, 3.0, Round::Zero), d);
        assert_eq!(div32(-1.0, 3.0, Round::Zero), -d);
        assert_eq!(div32(-1.0, 3.0, Round::Down), -u);
        // 1 + 2^-30: exact in f64, between 1 and the next f32.
        let tiny = 2f32.powi(-30);
        assert_eq!(add32(1.0, tiny, Round::Nearest), 1.0);
        assert_eq!(add32(1.0, tiny, Round::Up), 1f32.next_up());
        assert_eq!(add32(1.0, -tiny, Round::Zero), 1f32.next_down());
        // Far apart: f64 cannot hold the sum, TwoSum keeps its sign.
        let far = 1e-40f32;
        assert_eq!(add32(1e30, far, Round::Up), 1e30f32.next_up());
        assert_eq!(add32(1e30, far, Round::Down), 1e30);
        // Overflow stops at MAX toward zero.
        assert_eq!(mul32(f32::MAX, 2.0, Round::Zero), f32::MAX);
        assert_eq!(mul32(f32::MAX, 2.0, Round::Nearest), f32::INFINITY);
        assert_eq!(add64(f64::MAX, f64::MAX, Round::Down), f64::MAX);
        // x - x is -0 only when rounding down.
        assert!(add32(1.5, -1.5, Round::Down).is_sign_negative());
        assert!(add32(1.5, -1.5, Round::Nearest).is_sign_positive());
        // f64 directed.
        assert_eq!(
            div64(1.0, 3.0, Round::Up),
            div64(1.0, 3.0, Round::Down).next_up()
        );
        assert_eq!(sqrt64(2.0, Round::Up), sqrt64(2.0, Round::Down).next_up());
        assert_eq!(sqrt32(2.0, Round::Up), sqrt32(2.0, Round::Down).next_up());
    }

    /// Random f32s (xorshift), finite, of every magnitude.
    fn samples(n: usize, seed: u64) -> Vec<f32> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                f32::from_bits(x as u32)
            })
            .filter(|v| v.is_finite())
            .collect()
    }

    /// `lo` and `hi` bracket `exact` as Down and Up must: equal where it is
    /// representable, adjacent floats around it otherwise; Zero and Nearest
    /// are among them.
    fn check_bracket(exact: f64, r: [f32; 4], what: &str) {
        let [near, zero, down, up] = r;
        if exact.is_finite() && exact.abs() <= f64::from(f32::MAX) {
            assert!(
                f64::from(down) <= exact && exact <= f64::from(up),
                "{what}: {down} {exact} {up}"
            );
            if f64::from(down) == exact {
                assert_eq!(down.to_bits(), up.to_bits(), "{what}");
            } else {
                assert_eq!(up, down.next_up(), "{what}");
            }
            let toward_zero = if exact >= 0.0 { down } else { up };
            assert_eq!(zero, toward_zero, "{what}");
            assert!(near == down || near == up, "{what}");
        }
    }

    #[test]
    fn directed_products_and_sums_bracket_the_exact_value() {
        let xs = samples(4000, 0x9e37_79b9_7f4a_7c15);
        let ys = samples(4000, 0x2545_f491_4f6c_dd1d);
        let modes = [Round::Nearest, Round::Zero, Round::Down, Round::Up];
        for (&a, &b) in xs.iter().zip(&ys) {
            // Products are exact in f64.
            let exact = f64::from(a) * f64::from(b);
            check_bracket(exact, modes.map(|m| mul32(a, b, m)), &format!("{a} * {b}"));
            assert_eq!(mul32(a, b, Round::Nearest).to_bits(), (a * b).to_bits());
            // Sums of operands of nearby magnitude are exact in f64.
            let b2 = b.abs().copysign(b) * 2f32.powi(a.abs().log2() as i32 - b.abs().log2() as i32);
            if b2.is_finite() && b2 != 0.0 {
                let exact = f64::from(a) + f64::from(b2);
                check_bracket(
                    exact,
                    modes.map(|m| add32(a, b2, m)),
                    &format!("{a} + {b2}"),
                );
                assert_eq!(add32(a, b2, Round::Nearest).to_bits(), (a + b2).to_bits());
            }
            assert_eq!(
                fma32(a, b, a, Round::Nearest).to_bits(),
                a.mul_add(b, a).to_bits()
            );
            if b != 0.0 {
                assert_eq!(
                    div32(a, b, Round::Nearest).to_bits(),
                    (a / b).to_bits(),
                    "{a} / {b}"
                );
                let (d, u) = (div32(a, b, Round::Down), div32(a, b, Round::Up));
                assert!(d == u || u == d.next_up(), "{a} / {b}: {d} {u}");
            }
        }
    }

    #[test]
    fn a_midpoint_in_f64_is_decided_by_the_residual() {
        // 1 + 2^-24 is the midpoint of 1 and next_up(1); a tiny extra pushes it up.
        let half = 2f32.powi(-24);
        assert_eq!(add32(1.0, half, Round::Nearest), 1.0); // ties to even
        let p = f64::from(1.0f32) + f64::from(half);
        assert_eq!(round_to_f32(p, 1e-30, Round::Nearest), 1f32.next_up());
        assert_eq!(round_to_f32(p, -1e-30, Round::Nearest), 1.0);
    }

    #[test]
    fn conversions_from_integers_round_in_every_mode() {
        let v = (1i128 << 24) + 1; // between two f32s
        assert_eq!(int_to_f32(v, Round::Nearest), 16_777_216.0);
        assert_eq!(int_to_f32(v, Round::Up), 16_777_218.0);
        assert_eq!(int_to_f32(-v, Round::Zero), -16_777_216.0);
        assert_eq!(int_to_f32(-v, Round::Down), -16_777_218.0);
        let w = (1i128 << 53) + 1;
        assert_eq!(int_to_f64(w, Round::Up), 9_007_199_254_740_994.0);
        assert_eq!(
            int_to_f64(i128::from(u64::MAX), Round::Zero),
            18_446_744_073_709_549_568.0
        );
    }

    #[test]
    fn min_and_max_follow_ptx() {
        assert_eq!(min64(f64::NAN, 1.0), 1.0);
        assert_eq!(max64(2.0, f64::NAN), 2.0);
        assert_eq!(min64(f64::NAN, f64::NAN).to_bits(), NAN64);
        assert!(min64(0.0, -0.0).is_sign_negative());
        assert!(max64(-0.0, 0.0).is_sign_positive());
    }
}
