//! Which bytes of a register hold no written value, through the few
//! instructions that move such bytes without using them.
//!
//! libNVVM copies a struct with wide loads and stores that span its padding
//! (`ld.local.v2.u64` over a `u8` field and the seven bytes after it), then
//! masks the field out (`and.b64 %rd, %rd, 255`, or `cvt.u16.u64` then
//! `and.b16`). PTX makes that legal: the padding is read, carried and
//! dropped, never used. So a register carries one bit per byte, set where
//! the byte came from memory nobody wrote, the way Memcheck follows
//! definedness (at byte rather than bit precision); any other use of such a
//! byte is a fault. All masks here are a `u8`: bit `k` is byte `k`.

use super::super::decode::Opd;

/// The low `bytes` bits set.
fn bytes_mask(bytes: u32) -> u8 {
    ((1u16 << bytes.min(8)) - 1) as u8
}

/// The `bytes` bytes of `undef` from byte `from` on, as bytes `0..`.
pub(super) fn part(undef: u8, from: u32, bytes: u32) -> u8 {
    (u16::from(undef) >> from.min(8)) as u8 & bytes_mask(bytes)
}

/// `and` of two operands of `bytes` bytes: a byte is known when an
/// immediate operand's byte is zero, whatever the other holds; otherwise it
/// is unknown when either operand's is.
pub(super) fn and(a: (u8, &Opd), b: (u8, &Opd), bytes: u32) -> u8 {
    let zero_bytes = |o: &Opd| match o {
        Opd::Imm(v) => (0..8)
            .filter(|k| v >> (8 * k) & 0xff == 0)
            .fold(0u8, |m, k| m | 1 << k),
        _ => 0,
    };
    ((a.0 | b.0) & !(zero_bytes(a.1) | zero_bytes(b.1))) & bytes_mask(bytes)
}

/// A shift by the constant `by` of a value of `bytes` bytes: a result byte
/// is unknown when any source byte that reaches it is (for an arithmetic
/// right shift, also the top byte, whose sign fills the vacated bits).
pub(super) fn shift(undef: u8, by: u64, bytes: u32, left: bool, arith: bool) -> u8 {
    let width = 8 * u64::from(bytes);
    let bit_undef = |bit: u64| -> bool {
        if bit >= width {
            // Vacated by a right shift: zero, or the sign bit.
            arith && undef >> (bytes - 1) & 1 == 1
        } else {
            undef >> (bit / 8) & 1 == 1
        }
    };
    let mut out = 0u8;
    for k in 0..u64::from(bytes) {
        let lo = 8 * k;
        let unknown = (lo..lo + 8).any(|bit| {
            if left {
                bit >= by && bit_undef(bit - by)
            } else {
                bit_undef(bit.saturating_add(by))
            }
        });
        if unknown {
            out |= 1 << k;
        }
    }
    out
}

/// An integer of `from` bytes truncated or extended to `to` bytes: a
/// sign extension copies the top byte's state into the new bytes; a zero
/// extension writes known zeros.
pub(super) fn resize(undef: u8, from: u32, to: u32, signed: bool) -> u8 {
    let kept = undef & bytes_mask(from.min(to));
    if signed && to > from && undef >> (from - 1) & 1 == 1 {
        kept | (bytes_mask(to) & !bytes_mask(from))
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_masked_off_is_known_and_kept_bytes_stay_unknown() {
        // `ld.v2.u64` high half: byte 0 written (a `u8` field), 1..7 not.
        let hi = 0b1111_1110;
        let r = Opd::Reg(0);
        assert_eq!(and((hi, &r), (0, &Opd::Imm(255)), 8), 0);
        assert_eq!(and((hi, &r), (0, &Opd::Imm(0x1ff)), 8), 0b10);
        assert_eq!(and((hi, &r), (0, &Opd::Reg(1)), 8), hi);
        // `cvt.u16.u64` keeps bytes 0 and 1; `and.b16 255` drops byte 1.
        let cut = resize(hi, 8, 2, false);
        assert_eq!(cut, 0b10);
        assert_eq!(and((cut, &r), (0, &Opd::Imm(255)), 2), 0);
        // Loads: a zero-extended byte is known above, a sign-extended
        // unknown byte is not.
        assert_eq!(resize(0b1, 1, 8, false), 0b1);
        assert_eq!(resize(0b1, 1, 8, true), 0xff);
        assert_eq!(part(0b1111_0000, 4, 4), 0b1111);
        assert_eq!(part(0xff, 0, 8), 0xff);
    }

    #[test]
    fn shifts_move_unknown_bytes() {
        // Byte 1 unknown: `shr 8` brings it to byte 0, `shl 8` to byte 2.
        assert_eq!(shift(0b10, 8, 8, false, false), 0b1);
        assert_eq!(shift(0b10, 8, 8, true, false), 0b100);
        // A shift by 4 straddles two bytes.
        assert_eq!(shift(0b10, 4, 4, false, false), 0b11);
        // `shr.s` fills from an unknown sign byte.
        assert_eq!(shift(0b1000, 8, 4, false, true), 0b1100);
        assert_eq!(shift(0b1000, 8, 4, false, false), 0b0100);
        // Shifted out entirely.
        assert_eq!(shift(0b1000, 32, 4, true, false), 0);
    }
}
