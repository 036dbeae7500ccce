//! Integer functions that Rust has as methods (`count_ones`, `rotate_left`,
//! ...) and LLVM as intrinsics: bit counts, bit and byte reversal and
//! rotations. Saturating arithmetic is not among them: libNVVM's LLVM
//! (NVVM 7) predates `llvm.*.sat` and leaves them as calls to undefined
//! functions, so the lowering writes those with plain instructions.
//!
//! Every one is total on its operands (`leading_zeros(0)` is the bit width,
//! as in Rust and as `llvm.ctlz` with `is_zero_poison = false`), and its
//! operands and result share one integer type. Rust's bit counts return
//! `u32` whatever the operand's width; the lowering casts the result. The
//! lowering never emits one on `i128`: libNVVM's verifier refuses
//! `llvm.bswap.i128`, so mir-lower computes 128-bit ones from the halves.

/// An integer function of one integer type (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntFn {
    /// The number of one bits (`count_ones`, `llvm.ctpop`).
    CountOnes,
    /// The number of zero bits above the highest one (`leading_zeros`,
    /// `llvm.ctlz`); the bit width for zero.
    LeadingZeros,
    /// The number of zero bits below the lowest one (`trailing_zeros`,
    /// `llvm.cttz`); the bit width for zero.
    TrailingZeros,
    /// The bits in reverse order (`reverse_bits`, `llvm.bitreverse`).
    ReverseBits,
    /// The bytes in reverse order (`swap_bytes`, `llvm.bswap`; 16 bits or
    /// more).
    SwapBytes,
    /// `rotate_left(x, n)`: `n` is taken modulo the width (`llvm.fshl`).
    RotateLeft,
    /// `rotate_right(x, n)`: `n` is taken modulo the width (`llvm.fshr`).
    RotateRight,
}

impl IntFn {
    /// Every function, for tests and tables.
    pub const ALL: [IntFn; 7] = [
        IntFn::CountOnes,
        IntFn::LeadingZeros,
        IntFn::TrailingZeros,
        IntFn::ReverseBits,
        IntFn::SwapBytes,
        IntFn::RotateLeft,
        IntFn::RotateRight,
    ];

    /// How many operands it takes.
    pub fn arity(self) -> usize {
        match self {
            IntFn::CountOnes
            | IntFn::LeadingZeros
            | IntFn::TrailingZeros
            | IntFn::ReverseBits
            | IntFn::SwapBytes => 1,
            _ => 2,
        }
    }

    /// Its name in the text format: Rust's method name.
    pub fn name(self) -> &'static str {
        match self {
            IntFn::CountOnes => "count_ones",
            IntFn::LeadingZeros => "leading_zeros",
            IntFn::TrailingZeros => "trailing_zeros",
            IntFn::ReverseBits => "reverse_bits",
            IntFn::SwapBytes => "swap_bytes",
            IntFn::RotateLeft => "rotate_left",
            IntFn::RotateRight => "rotate_right",
        }
    }

    /// Whether it is defined for `bits`-wide integers (a byte swap needs
    /// whole bytes, at least two).
    pub fn accepts_width(self, bits: u32) -> bool {
        match self {
            IntFn::SwapBytes => bits >= 16 && bits.is_multiple_of(8),
            _ => bits >= 1,
        }
    }

    /// The value of the function on `bits`-wide operands, given as bit
    /// patterns (zero-extended); the result is a bit pattern of the same
    /// width. This is the semantics the printer's intrinsics have, stated
    /// once for interpreters. `args` holds [`IntFn::arity`] values.
    pub fn eval(self, bits: u32, args: &[u128]) -> u128 {
        let mask = if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        let x = args.first().copied().unwrap_or(0) & mask;
        let y = args.get(1).copied().unwrap_or(0) & mask;
        let out = match self {
            IntFn::CountOnes => u128::from(x.count_ones()),
            IntFn::LeadingZeros => u128::from(x.leading_zeros() - (128 - bits)),
            IntFn::TrailingZeros => u128::from(x.trailing_zeros().min(bits)),
            IntFn::ReverseBits => x.reverse_bits() >> (128 - bits),
            IntFn::SwapBytes => x.swap_bytes() >> (128 - bits),
            IntFn::RotateLeft | IntFn::RotateRight => {
                let n = (y % u128::from(bits)) as u32;
                let n = if self == IntFn::RotateLeft {
                    n
                } else {
                    (bits - n) % bits
                };
                if n == 0 {
                    x
                } else {
                    (x << n | x >> (bits - n)) & mask
                }
            }
        };
        out & mask
    }

    /// The LLVM intrinsic that computes it on `iN`, `N = bits`, and the
    /// constant operands that follow the function's own (`ctlz` and `cttz`
    /// take `i1 false`: zero is not poison).
    pub fn llvm(self, bits: u32) -> (String, &'static str) {
        let (base, extra) = match self {
            IntFn::CountOnes => ("ctpop", ""),
            IntFn::LeadingZeros => ("ctlz", ", i1 false"),
            IntFn::TrailingZeros => ("cttz", ", i1 false"),
            IntFn::ReverseBits => ("bitreverse", ""),
            IntFn::SwapBytes => ("bswap", ""),
            IntFn::RotateLeft => ("fshl", ""),
            IntFn::RotateRight => ("fshr", ""),
        };
        (format!("llvm.{base}.i{bits}"), extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each function against Rust's own method at every width we emit.
    #[test]
    fn eval_agrees_with_rusts_methods() {
        let samples: [u64; 6] = [0, 1, 0x80, 0x1234_5678_9abc_def0, u64::MAX, 0x7fff_ffff];
        for &a in &samples {
            for &b in &[0u64, 1, 7, 9, 33, 0xffff_fff0, u64::MAX] {
                macro_rules! check {
                    ($u:ty, $bits:expr) => {{
                        let x = a as $u;
                        let n = b as u32;
                        let ev = |f: IntFn, args: &[u128]| IntFn::eval(f, $bits, args);
                        let ux = u128::from(x);
                        assert_eq!(ev(IntFn::CountOnes, &[ux]), u128::from(x.count_ones()));
                        assert_eq!(
                            ev(IntFn::LeadingZeros, &[ux]),
                            u128::from(x.leading_zeros())
                        );
                        assert_eq!(
                            ev(IntFn::TrailingZeros, &[ux]),
                            u128::from(x.trailing_zeros())
                        );
                        assert_eq!(ev(IntFn::ReverseBits, &[ux]), u128::from(x.reverse_bits()));
                        if $bits >= 16 {
                            assert_eq!(ev(IntFn::SwapBytes, &[ux]), u128::from(x.swap_bytes()));
                        }
                        let un = u128::from(n);
                        assert_eq!(
                            ev(IntFn::RotateLeft, &[ux, un]),
                            u128::from(x.rotate_left(n))
                        );
                        assert_eq!(
                            ev(IntFn::RotateRight, &[ux, un]),
                            u128::from(x.rotate_right(n))
                        );
                    }};
                }
                check!(u8, 8);
                check!(u16, 16);
                check!(u32, 32);
                check!(u64, 64);
            }
        }
    }

    #[test]
    fn byte_swaps_need_whole_bytes() {
        assert!(!IntFn::SwapBytes.accepts_width(8));
        assert!(IntFn::SwapBytes.accepts_width(16));
        assert!(IntFn::CountOnes.accepts_width(1));
        assert_eq!(
            IntFn::LeadingZeros.llvm(32),
            ("llvm.ctlz.i32".into(), ", i1 false")
        );
    }
}
