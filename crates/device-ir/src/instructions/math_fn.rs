//! Float math functions, the one float operation family that is not an
//! LLVM instruction: calls into libdevice with documented error bounds.

/// Float math functions: Rust's `f32`/`f64` methods and float intrinsics, as
/// calls into libdevice (`__nv_sinf`, ...) that libNVVM links.
///
/// The correctly rounded or exact ones (`max_ulp` is `Some(0)`) give the same
/// bits everywhere. For the others the GPU's value may differ from the host's
/// libm by at most the bound the CUDA C++ Programming Guide documents for the
/// libdevice function (appendix "Mathematical Functions", full-range, without
/// `-use_fast_math`), which `max_ulp` returns.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MathFn {
    /// `sqrt` (correctly rounded under `-prec-sqrt=1`).
    Sqrt,
    /// `floor`.
    Floor,
    /// `ceil`.
    Ceil,
    /// `trunc`.
    Trunc,
    /// `round`: half away from zero.
    Round,
    /// `round_ties_even`.
    RoundEven,
    /// `abs`.
    Abs,
    /// `copysign(x, sign)`.
    CopySign,
    /// `min`: IEEE minNum, the non-NaN operand if one is NaN.
    Min,
    /// `max`: IEEE maxNum.
    Max,
    /// `mul_add(a, b, c)`: one rounding.
    Fma,
    /// `sin`.
    Sin,
    /// `cos`.
    Cos,
    /// `tan`.
    Tan,
    /// `asin`.
    Asin,
    /// `acos`.
    Acos,
    /// `atan`.
    Atan,
    /// `atan2(y, x)`.
    Atan2,
    /// `sinh`.
    Sinh,
    /// `cosh`.
    Cosh,
    /// `tanh`.
    Tanh,
    /// `exp`.
    Exp,
    /// `exp2`.
    Exp2,
    /// `exp_m1`.
    ExpM1,
    /// `ln`.
    Ln,
    /// `log2`.
    Log2,
    /// `log10`.
    Log10,
    /// `ln_1p`.
    Ln1p,
    /// `powf(x, y)`.
    Pow,
    /// `powi(x, n)` with an `i32` exponent.
    Powi,
    /// `cbrt`.
    Cbrt,
    /// `hypot(x, y)`.
    Hypot,
}

impl MathFn {
    /// Every function.
    pub const ALL: [MathFn; 32] = [
        MathFn::Sqrt,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
        MathFn::Round,
        MathFn::RoundEven,
        MathFn::Abs,
        MathFn::CopySign,
        MathFn::Min,
        MathFn::Max,
        MathFn::Fma,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Atan2,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::ExpM1,
        MathFn::Ln,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Ln1p,
        MathFn::Pow,
        MathFn::Powi,
        MathFn::Cbrt,
        MathFn::Hypot,
    ];

    /// The device-IR name, which is also Rust's method name where one exists.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Trunc => "trunc",
            MathFn::Round => "round",
            MathFn::RoundEven => "round_ties_even",
            MathFn::Abs => "abs",
            MathFn::CopySign => "copysign",
            MathFn::Min => "min",
            MathFn::Max => "max",
            MathFn::Fma => "mul_add",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::ExpM1 => "exp_m1",
            MathFn::Ln => "ln",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Ln1p => "ln_1p",
            MathFn::Pow => "powf",
            MathFn::Powi => "powi",
            MathFn::Cbrt => "cbrt",
            MathFn::Hypot => "hypot",
        }
    }

    /// The libdevice function for `f32` (`double = false`) or `f64`.
    pub fn libdevice(self, double: bool) -> String {
        let base = match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Trunc => "trunc",
            MathFn::Round => "round",
            MathFn::RoundEven => "rint",
            MathFn::Abs => "fabs",
            MathFn::CopySign => "copysign",
            MathFn::Min => "fmin",
            MathFn::Max => "fmax",
            MathFn::Fma => "fma",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::ExpM1 => "expm1",
            MathFn::Ln => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Ln1p => "log1p",
            MathFn::Pow => "pow",
            MathFn::Powi => "powi",
            MathFn::Cbrt => "cbrt",
            MathFn::Hypot => "hypot",
        };
        format!("__nv_{base}{}", if double { "" } else { "f" })
    }

    /// How many float operands it takes (`powi`'s second operand is an `i32`).
    pub fn arity(self) -> usize {
        match self {
            MathFn::CopySign
            | MathFn::Min
            | MathFn::Max
            | MathFn::Atan2
            | MathFn::Pow
            | MathFn::Powi
            | MathFn::Hypot => 2,
            MathFn::Fma => 3,
            _ => 1,
        }
    }

    /// The most units in the last place by which the GPU's result may differ
    /// from the correctly rounded one, for `f32` or `f64` (`double`): 0 for the
    /// exact functions; otherwise the CUDA C++ Programming Guide's maximum
    /// error for the libdevice function. `powi` has no documented bound of
    /// its own; it is taken as `pow`'s.
    pub fn max_ulp(self, double: bool) -> u32 {
        let (single, dbl) = match self {
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
            | MathFn::Fma => (0, 0),
            MathFn::Sin | MathFn::Cos => (2, 2),
            MathFn::Tan => (4, 2),
            MathFn::Asin | MathFn::Acos | MathFn::Atan => (2, 2),
            MathFn::Atan2 => (3, 2),
            MathFn::Sinh => (3, 2),
            MathFn::Cosh | MathFn::Tanh => (2, 1),
            MathFn::Exp | MathFn::Exp2 => (2, 1),
            MathFn::ExpM1 => (1, 1),
            MathFn::Ln | MathFn::Log2 => (1, 1),
            MathFn::Log10 => (2, 1),
            MathFn::Ln1p => (1, 1),
            MathFn::Pow | MathFn::Powi => (4, 2),
            MathFn::Cbrt => (1, 1),
            MathFn::Hypot => (3, 2),
        };
        if double { dbl } else { single }
    }

    /// The most ulps by which the x86-64 host's GNU libm may differ from the
    /// correctly rounded result (the glibc manual's "Errors in Math
    /// Functions"); the host run is the oracle's reference, so a device value
    /// may differ from it by `max_ulp + host_ulp`. 0 for the exact functions.
    pub fn host_ulp(self, double: bool) -> u32 {
        let (single, dbl) = match self {
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
            | MathFn::Fma => (0, 0),
            MathFn::Sin | MathFn::Cos | MathFn::Tan => (1, 1),
            MathFn::Asin | MathFn::Acos | MathFn::Atan => (1, 1),
            MathFn::Atan2 => (2, 1),
            MathFn::Sinh | MathFn::Cosh | MathFn::Tanh => (2, 2),
            MathFn::Exp | MathFn::Exp2 | MathFn::ExpM1 => (1, 1),
            MathFn::Ln | MathFn::Ln1p => (1, 1),
            MathFn::Log2 => (1, 2),
            MathFn::Log10 => (2, 2),
            // Rust's `powi` is `__powisf2`, repeated multiplication: its
            // error grows with the exponent; `pow`'s bound is a floor.
            MathFn::Pow | MathFn::Powi => (1, 1),
            MathFn::Cbrt => (1, 4),
            MathFn::Hypot => (1, 1),
        };
        if double { dbl } else { single }
    }
}
