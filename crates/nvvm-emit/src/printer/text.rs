//! Small lexical helpers: LLVM string escapes, constants.

use std::fmt::Write as _;

/// Escapes `bytes` for an LLVM `c"..."` or asm string: printable ASCII other than
/// `"` and `\` as is, everything else as `\XX` (uppercase hex).
pub(crate) fn escape(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        if (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\' {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\{b:02X}");
        }
    }
}

/// An LLVM float literal for `bits` of an `f32` (low 32 bits) or `f64`: always the
/// 16-digit hexadecimal double form, which LLVM reads exactly for both types. An
/// `f32` is widened exactly, NaN payloads included.
pub(crate) fn float_literal(bits: u64, is_f32: bool) -> String {
    let wide = if is_f32 {
        widen_f32_bits(bits as u32)
    } else {
        bits
    };
    format!("0x{wide:016X}")
}

/// The bits of the `f64` equal to the `f32` with bits `b`, computed by hand so that
/// NaN payloads are kept exactly (shifted into the high mantissa bits, as LLVM does).
fn widen_f32_bits(b: u32) -> u64 {
    let sign = u64::from(b >> 31) << 63;
    let exp = (b >> 23) & 0xff;
    let mant = u64::from(b & 0x7f_ffff);
    if exp == 0xff {
        return sign | (0x7ff << 52) | (mant << 29);
    }
    // Finite values (subnormals included) widen exactly through `as`.
    f64::from(f32::from_bits(b)).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        assert_eq!(
            float_literal(1.5f32.to_bits().into(), true),
            "0x3FF8000000000000"
        );
        assert_eq!(
            float_literal((-0.0f32).to_bits().into(), true),
            "0x8000000000000000"
        );
        assert_eq!(
            float_literal(f32::INFINITY.to_bits().into(), true),
            "0x7FF0000000000000"
        );
        assert_eq!(float_literal(0x7fc0_0001, true), "0x7FF8000020000000");
        assert_eq!(float_literal(0.1f64.to_bits(), false), "0x3FB999999999999A");
        assert_eq!(
            float_literal(1, true),
            format!("0x{:016X}", f64::from(f32::from_bits(1)).to_bits())
        );
    }

    #[test]
    fn escapes() {
        let mut s = String::new();
        escape(&mut s, b"a\"b\\c\n\x00\xff");
        assert_eq!(s, "a\\22b\\5Cc\\0A\\00\\FF");
    }
}
