//! The lexical forms: constants, registers, thread ids, labels, identifiers.

use crate::syntax::{Label, Reg};

pub(super) fn constant(s: &str) -> Option<i64> {
    let (neg, digits) = s.strip_prefix('-').map_or((false, s), |d| (true, d));
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A register `r<n>`. Dat3M compares register names as text, so a number
/// with a leading zero (`r01`) is not read: it would silently be `r1`.
pub(super) fn register(s: &str) -> Option<Reg> {
    let n = s.strip_prefix('r')?;
    let canonical = n == "0" || (!n.starts_with('0') && !n.is_empty());
    (canonical && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok().map(Reg))
        .flatten()
}

pub(super) fn thread_id(s: &str) -> Option<u32> {
    let n = s.strip_prefix('P').unwrap_or(s);
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

pub(super) fn label_of(s: &str) -> Option<Label> {
    let n = s.strip_prefix("LC")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Label {
        number: n.parse().ok()?,
        digits: u8::try_from(n.len()).ok()?,
    })
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
