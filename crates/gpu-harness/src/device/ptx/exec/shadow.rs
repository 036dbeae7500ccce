//! Which bytes of a register hold no written value, through the few
//! instructions that move such bytes without using them (and `add`, `sub`,
//! `mul.lo` and `neg`, whose carries only move them up, and `not`, which
//! keeps each byte in place).
//!
//! libNVVM copies a struct with wide loads and stores that span its padding
//! (`ld.local.v2.u64` over a `u8` field and the seven bytes after it), then
//! masks the field out (`and.b64 %rd, %rd, 255`, or `cvt.u16.u64` then
//! `and.b16`). PTX makes that legal: the padding is read, carried and
//! dropped, never used. So a register carries one bit per byte, set where
//! the byte came from memory nobody wrote, the way Memcheck follows
//! definedness (at byte rather than bit precision); any other use of such a
//! byte is a fault. All masks here are a `u8`: bit `k` is byte `k`.

use super::super::decode::{Base, Inst, Op, Opd};
use super::{Exec, bits, describe_inst, is_float, signed};
use crate::device::virt::{Fault, FaultKind, Step};

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

/// `add`, `sub` or `mul.lo` of two integers of `bytes` bytes: carries and
/// partial products only move up, so a result byte is known when every
/// byte at or below it is known in both operands (libNVVM subtracts from a
/// field whose high byte is padding, then keeps two bits: `sub.s16` then
/// `and.b16 3`). Memcheck's "left" propagation, at byte precision.
pub(super) fn upward(a: u8, b: u8, bytes: u32) -> u8 {
    let undef = (a | b) & bytes_mask(bytes);
    if undef == 0 {
        return 0;
    }
    let lowest = undef.trailing_zeros();
    bytes_mask(bytes) & !bytes_mask(lowest)
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

/// Whether the shadow follows integer `add`/`sub`/`mul` `i` ([`upward`]):
/// not `mul.hi` or `.wide`, whose low result bytes depend on high operand
/// bytes, nor the carry chain or saturation.
pub(super) fn upward_carried(i: &Inst) -> bool {
    let f = i.flags;
    !is_float(i.ty) && !f.hi && !f.wide && !f.cc && !f.carry_in && !f.sat && i.ops.len() == 3
}

/// An instruction that uses a byte nobody wrote.
pub(super) fn undefined_use(i: &Inst) -> Fault {
    Fault::new(
        FaultKind::Uninit,
        format!(
            "{} uses a value loaded from memory that was never written",
            describe_inst(Some(i))
        ),
    )
}

impl Exec<'_, '_> {
    /// Which bytes of a source operand hold no written value.
    pub(super) fn undef(&self, o: &Opd) -> u8 {
        match o {
            Opd::Reg(r) => self.frame().undef[*r as usize],
            Opd::NotPred(r) => self.frame().undef[*r as usize] & 1,
            Opd::Addr(Base::Reg(r), _) => self.frame().undef[*r as usize],
            Opd::Vector(parts) | Opd::List(parts) => parts.iter().fold(0, |m, p| m | self.undef(p)),
            _ => 0,
        }
    }

    /// Marks bytes of destination `o` (just [`Exec::set`]) as never written.
    pub(super) fn set_undef(&mut self, o: &Opd, undef: u8) {
        if let Opd::Reg(r) = o {
            self.frame_mut().undef[*r as usize] = undef;
        }
    }

    /// Refuses an instruction that uses a byte never written: anything but
    /// moving it (`mov`, `ld`, `st`, an integer `cvt`), masking it off
    /// (`and`), shifting it by a constant, inverting it (`not`), carrying it
    /// upward (`add`, `sub`, `mul.lo`, `neg`) or selecting between it and another value (`selp`
    /// on a known predicate), which the shadow follows. An
    /// address register must be wholly written for every instruction.
    pub(super) fn check_defined(&self, i: &Inst) -> Result<(), Fault> {
        let addresses = i
            .ops
            .iter()
            .any(|o| matches!(o, Opd::Addr(Base::Reg(_), _)) && self.undef(o) != 0);
        if addresses {
            return Err(undefined_use(i));
        }
        let followed = match i.op {
            Op::Mov | Op::Ld | Op::St => true,
            Op::Cvt => !is_float(i.ty) && !is_float(i.ty2.unwrap_or(i.ty)) && !i.flags.sat,
            Op::And => !is_float(i.ty),
            Op::Shl | Op::Shr => matches!(i.ops.get(2), Some(Opd::Imm(_))),
            // A select copies the operand its predicate picks, which must
            // be known; the other may be anything (libNVVM loads both sides
            // of `opt.unwrap_or(d)` and selects).
            Op::Selp => i.ops.get(3).is_some_and(|p| self.undef(p) & 1 == 0),
            // Followed while the low byte is known: a result with no known
            // byte carries nothing, and is refused here, where it is made.
            Op::Add | Op::Sub | Op::Mul => {
                upward_carried(i) && (self.undef(&i.ops[1]) | self.undef(&i.ops[2])) & 1 == 0
            }
            // `neg` is `0 - x`: followed as a `sub` is.
            Op::Neg => !is_float(i.ty) && i.ops.len() == 2 && self.undef(&i.ops[1]) & 1 == 0,
            Op::Not => !is_float(i.ty) && i.ops.len() == 2,
            _ => false,
        };
        if followed {
            return Ok(());
        }
        // The destination of an instruction that has one is not read.
        let writes_first = !matches!(
            i.op,
            Op::St | Op::Red | Op::Bra | Op::Call | Op::BarSync | Op::WarpSync
        );
        let sources = &i.ops[usize::from(writes_first).min(i.ops.len())..];
        if sources.iter().any(|o| self.undef(o) != 0) {
            return Err(undefined_use(i));
        }
        Ok(())
    }

    /// `and` of an operand with bytes never written: the result's bytes
    /// that an immediate's zero bytes decide are known.
    pub(super) fn and_following(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        // Before the result is written: the destination may be a source.
        let undef = and(
            (self.undef(&ops[1]), &ops[1]),
            (self.undef(&ops[2]), &ops[2]),
            (bits(i.ty) / 8).max(1),
        );
        self.arith(i)?;
        self.set_undef(&ops[0], undef);
        Ok(Step::Continue)
    }

    /// `add`, `sub` or `mul.lo` of a value with bytes never written.
    pub(super) fn upward_following(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let undef = upward(
            self.undef(&ops[1]),
            self.undef(&ops[2]),
            (bits(i.ty) / 8).max(1),
        );
        self.arith(i)?;
        self.set_undef(&ops[0], undef);
        Ok(Step::Continue)
    }

    /// Integer `neg` (`0 - x`, [`upward`]) or `not` (byte for byte) of a
    /// value with bytes never written.
    pub(super) fn unary_following(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let bytes = (bits(i.ty) / 8).max(1);
        let undef = match i.op {
            Op::Neg => upward(self.undef(&ops[1]), 0, bytes),
            _ => part(self.undef(&ops[1]), 0, bytes),
        };
        self.arith(i)?;
        self.set_undef(&ops[0], undef);
        Ok(Step::Continue)
    }

    /// `selp` of operands with bytes never written: the result's bytes are
    /// the picked operand's ([`Exec::check_defined`] refused an unknown
    /// predicate).
    pub(super) fn select_following(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let picked = if self.val(&ops[3])? & 1 == 1 {
            &ops[1]
        } else {
            &ops[2]
        };
        let undef = part(self.undef(picked), 0, (bits(i.ty) / 8).max(1));
        self.arith(i)?;
        self.set_undef(&ops[0], undef);
        Ok(Step::Continue)
    }

    /// A shift by a constant of a value with bytes never written.
    pub(super) fn shift_following(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let Opd::Imm(by) = ops[2] else {
            return Err(undefined_use(i));
        };
        let undef = shift(
            self.undef(&ops[1]),
            by,
            (bits(i.ty) / 8).max(1),
            i.op == Op::Shl,
            signed(i.ty),
        );
        self.arith(i)?;
        self.set_undef(&ops[0], undef);
        Ok(Step::Continue)
    }

    /// An integer `cvt` of a value with bytes never written (a float or
    /// saturating one uses them).
    pub(super) fn convert_following(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let st = i.ty2.unwrap_or(i.ty);
        if is_float(i.ty) || is_float(st) || i.flags.sat {
            return Err(undefined_use(i));
        }
        let undef = resize(
            self.undef(&ops[1]),
            (bits(st) / 8).max(1),
            (bits(i.ty) / 8).max(1),
            signed(st),
        );
        self.convert(i)?;
        self.set_undef(&ops[0], undef);
        Ok(Step::Continue)
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
    fn carries_spread_unknown_bytes_upward_only() {
        // md-5's finalize: `sub.s16 3, x` with x's byte 1 padding keeps
        // byte 0 known, and `and.b16 3` then knows the whole result.
        let diff = upward(0, 0b10, 2);
        assert_eq!(diff, 0b10);
        assert_eq!(and((diff, &Opd::Reg(0)), (0, &Opd::Imm(3)), 2), 0);
        // An unknown low byte makes every byte above it unknown.
        assert_eq!(upward(0b0001, 0, 4), 0b1111);
        assert_eq!(upward(0b0100, 0b0010, 4), 0b1110);
        assert_eq!(upward(0, 0, 8), 0);
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
