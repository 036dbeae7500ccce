//! The one classifier of calls whose meaning is fixed although rustc prints no
//! body for them: std/core intrinsics and hints, panics, and the device
//! prelude's primitives.
//!
//! Every stage that meets such a call (the evaluator, lowering, extraction
//! into the memory model) asks [`classify`], so that they cannot drift apart
//! on which paths they accept. rustc prints the same item as `core::…` or
//! `std::…` depending on how the source named it, so both spellings are
//! accepted everywhere.

use crate::model::{GenericArg, Path};
use device_ir::{IntFn, MathFn};

use crate::prelude::{self, Intrinsic};

mod atomics;

use atomics::generic_ordering;
pub use atomics::{AtomicOp, AtomicOrdering, OrderingArg, RmwKind};

/// `RangeInclusive`'s fields in declaration order (`core::ops::range`):
/// what [`KnownCall::RangeInclusiveNew`] writes, and the names MIR's field
/// indices stand for when no printed aggregate of the type says so.
pub const RANGE_INCLUSIVE_FIELDS: [&str; 3] = ["start", "end", "exhausted"];

/// `RangeInclusive`'s def path in each spelling rustc prints.
pub const RANGE_INCLUSIVE_PATHS: [&str; 3] = [
    "std::ops::RangeInclusive",
    "core::ops::RangeInclusive",
    "core::ops::range::RangeInclusive",
];

/// A call with a known meaning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KnownCall {
    /// A call that only panics (`core::panicking::*`, `unwrap_failed`, the
    /// slice-index failures): it never returns.
    Panic,
    /// `intrinsics::cold_path()`: a hint with no effect on values.
    ColdPath,
    /// `intrinsics::write_bytes(dst, byte, count)` (`ptr::write_bytes`,
    /// `[T]::fill` of a one-byte type): `count` elements at `dst` set to
    /// `byte` (a `memset`).
    WriteBytes,
    /// `RangeInclusive::new(start, end)`, a `const fn` of std whose body
    /// rustc does not print: a constant `'a'..='f'` (promoted, for
    /// `contains`) calls it. Its fields are `start`, `end` and `exhausted`
    /// (false).
    RangeInclusiveNew,
    /// `intrinsics::black_box(v)` (`hint::black_box`): `v` itself; the
    /// hint asks the compiler not to see through it, which nothing here
    /// does across a call's result anyway.
    BlackBox,
    /// `intrinsics::is_val_statically_known(v)` (`pow` and `wrapping_pow`
    /// ask it of the exponent to pick an unrolled loop, `checked_ilog` of
    /// the base): a hint whose answer Rust leaves to the compiler; `false`
    /// is always correct and takes the general path.
    StaticallyKnown,
    /// `<T as Ord>::min` or `max`; only integers have a fixed meaning, so the
    /// caller checks the operand type.
    MinMax(MinMax),
    /// `intrinsics::arith_offset(p, n)`: `p.wrapping_offset(n)`, `n` elements.
    ArithOffset,
    /// `intrinsics::ptr_offset_from(a, b)` (or `_unsigned`): the distance in
    /// elements.
    OffsetFrom {
        /// Whether it is `ptr_offset_from_unsigned`.
        unsigned: bool,
    },
    /// `ptr::null()` or `ptr::null_mut()`: address 0.
    NullPtr,
    /// `intrinsics::copy(src, dst, count)` (`ptr::copy`): `count` elements
    /// from `src` to `dst`, which may overlap (a `memmove`).
    CopyOverlapping,
    /// `intrinsics::compare_bytes(a, b, n)` (`==` and `cmp` on byte
    /// slices): `memcmp`, of which Rust promises only the sign.
    CompareBytes,
    /// `intrinsics::raw_eq::<T>(a, b)` (`==` on byte arrays): whether the
    /// bytes of `*a` and `*b` are equal.
    RawEq,
    /// `intrinsics::assert_inhabited::<T>()` (and `assert_zero_valid`,
    /// `assert_mem_uninitialized_valid`): rustc removes them once `T` is
    /// known, but a dependency's generic MIR, instantiated here, keeps them.
    /// Nothing for numbers and raw pointers, a trap for `!`; the lowering
    /// refuses any other type.
    AssertValid,
    /// `MaybeUninit::<T>::uninit()`: a value none of whose bytes is written
    /// (a dependency's generic constant, `heapless`' `ELEM`, calls it).
    Uninit,
    /// `intrinsics::select_unpredictable(c, a, b)` (`hint::select_unpredictable`,
    /// libcore's branchless helpers): `if c { a } else { b }` without a branch.
    Select,
    /// `intrinsics::exact_div(a, b)` (`as_chunks`): a division that Rust
    /// promises leaves no remainder.
    ExactDiv,
    /// `intrinsics::typed_swap_nonoverlapping(a, b)`, which is what
    /// `mem::swap` leaves after inlining (and `mem::swap(a, b)` itself, when
    /// rustc keeps the call): exchange the two pointees.
    Swap,
    /// `ptr::swap_nonoverlapping_bytes(x, y, n)` and its
    /// `swap_nonoverlapping_short` (`n` bytes), or its
    /// `swap_nonoverlapping_chunks::<N>(x, y, n)` (`n` chunks of `N`
    /// bytes), or `ptr::swap_chunk::<N>(x, y)` (one chunk): libcore's untyped swap of two disjoint ranges, behind
    /// `[T]::rotate_left` and `ptr::swap_nonoverlapping`; private to `core`,
    /// so rustc prints no body once its inliner stops.
    SwapBytes {
        /// The bytes each unit of the count stands for.
        chunk: u64,
    },
    /// `intrinsics::carrying_mul_add(a, b, c, d)` (`u32::carrying_mul_add`
    /// and `carrying_mul`): `a * b + c + d` in twice the width, as the pair
    /// (low half, high half).
    CarryingMulAdd,
    /// `intrinsics::volatile_load(p)` (`ptr::read_volatile`, which libm's
    /// `force_eval!` leaves): a read of `*p` that the compiler may not
    /// remove, merge or reorder with other volatile accesses.
    VolatileLoad,
    /// `intrinsics::volatile_store(p, v)` (`ptr::write_volatile`): a write
    /// of `v` to `*p`, kept as written likewise.
    VolatileStore,
    /// `intrinsics::size_of_val(p)` or `align_of_val(p)` (`mem::size_of_val`,
    /// bytemuck's `cast_slice`): the pointee's size or alignment, from the
    /// slice length for `[T]` and `str`.
    SizeOfVal {
        /// `align_of_val` rather than `size_of_val`.
        align: bool,
    },
    /// A device-prelude primitive (`gpu::thread_idx_x`, `gpu::sync_threads`).
    Device(Intrinsic),
    /// A float math intrinsic (`intrinsics::sinf32`) or std's libm shim
    /// (`sys::cmath::tanhf`, `num::libm::cbrtf`); the width is the operand's.
    Math(MathFn),
    /// An integer intrinsic (`intrinsics::ctpop`, `intrinsics::rotate_left`).
    /// The bit counts return `u32` whatever the operand's width.
    Int(IntFn),
    /// `intrinsics::saturating_add` / `saturating_sub`, of the operands'
    /// signedness.
    Saturating {
        /// Subtraction rather than addition.
        sub: bool,
    },
    /// An atomic intrinsic (`intrinsics::atomic_xadd`, `sync::atomic::atomic_load`).
    Atomic {
        /// The operation.
        op: AtomicOp,
        /// Where its memory ordering comes from.
        ordering: OrderingArg,
    },
}

/// `Ord::min` or `Ord::max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinMax {
    /// `min`
    Min,
    /// `max`
    Max,
}

/// The float math function a std-relative path names: a float intrinsic
/// (`intrinsics::sqrtf32`, `intrinsics::round_ties_even_f64`) or one of the
/// C libm functions std calls for the rest (`sys::cmath::tanhf`,
/// `num::libm::cbrt`), with or without the `f` of the `f32` version.
fn math_fn(rest: &str) -> Option<MathFn> {
    if let Some(name) = rest.strip_prefix("intrinsics::") {
        let base = name
            .strip_suffix("f32")
            .or_else(|| name.strip_suffix("f64"))?;
        let base = base.strip_suffix('_').unwrap_or(base);
        return Some(match base {
            "sqrt" => MathFn::Sqrt,
            "floor" => MathFn::Floor,
            "ceil" => MathFn::Ceil,
            "trunc" => MathFn::Trunc,
            "round" => MathFn::Round,
            "round_ties_even" | "rint" | "nearbyint" => MathFn::RoundEven,
            "fabs" => MathFn::Abs,
            "copysign" => MathFn::CopySign,
            "minnum" => MathFn::Min,
            "maxnum" => MathFn::Max,
            "fma" => MathFn::Fma,
            "sin" => MathFn::Sin,
            "cos" => MathFn::Cos,
            "exp" => MathFn::Exp,
            "exp2" => MathFn::Exp2,
            "log" => MathFn::Ln,
            "log2" => MathFn::Log2,
            "log10" => MathFn::Log10,
            "pow" => MathFn::Pow,
            "powi" => MathFn::Powi,
            _ => return None,
        });
    }
    let name = rest
        .strip_prefix("sys::cmath::")
        .or_else(|| rest.strip_prefix("num::libm::"))?;
    let known = |n: &str| {
        Some(match n {
            "acos" => MathFn::Acos,
            "asin" => MathFn::Asin,
            "atan" => MathFn::Atan,
            "atan2" => MathFn::Atan2,
            "cosh" => MathFn::Cosh,
            "sinh" => MathFn::Sinh,
            "tan" => MathFn::Tan,
            "tanh" => MathFn::Tanh,
            "expm1" => MathFn::ExpM1,
            "log1p" => MathFn::Ln1p,
            "hypot" => MathFn::Hypot,
            "cbrt" => MathFn::Cbrt,
            _ => return None,
        })
    };
    known(name).or_else(|| known(name.strip_suffix('f')?))
}

/// The integer function an intrinsic names (`ctpop`, `bitreverse`,
/// `rotate_left`, ...). The `_nonzero` bit counts are the total ones: they
/// agree wherever the intrinsic is defined.
fn int_fn(name: &str) -> Option<IntFn> {
    Some(match name {
        "ctpop" => IntFn::CountOnes,
        "ctlz" | "ctlz_nonzero" => IntFn::LeadingZeros,
        "cttz" | "cttz_nonzero" => IntFn::TrailingZeros,
        "bitreverse" => IntFn::ReverseBits,
        "bswap" => IntFn::SwapBytes,
        "rotate_left" => IntFn::RotateLeft,
        "rotate_right" => IntFn::RotateRight,
        _ => return None,
    })
}

/// `path` without a leading `core::` or `std::`, if it has one.
pub(crate) fn std_relative(def: &str) -> Option<&str> {
    def.strip_prefix("core::")
        .or_else(|| def.strip_prefix("std::"))
}

/// Whether an `assert` terminator's message is one of the overflow checks
/// that rustc's codegen leaves out when overflow checks are off (its
/// `AssertKind::is_optional_overflow_check`: `+`, `-`, `*`, negation and
/// shifts, not division or remainder). MIR keeps them in the bodies marked
/// `#[rustc_inherit_overflow_checks]` (core's operator impls, `Sum`,
/// `Step`) wherever they are inlined, and the kernel, its dependencies and
/// its host twin are all built without overflow checks (`-C opt-level` of
/// 1 or more, no `-C overflow-checks`): there such an operation wraps.
pub fn is_optional_overflow_check(msg: &str) -> bool {
    [
        "attempt to compute `{} + {}`, which would overflow",
        "attempt to compute `{} - {}`, which would overflow",
        "attempt to compute `{} * {}`, which would overflow",
        "attempt to negate `{}`, which would overflow",
        "attempt to shift left by `{}`, which would overflow",
        "attempt to shift right by `{}`, which would overflow",
    ]
    .contains(&msg)
}

/// Calls that only panic: the panic machinery, `Option`/`Result`'s
/// `unwrap_failed`/`expect_failed`, and the slice-index failures.
fn is_panic(def: &str) -> bool {
    if def.ends_with("unwrap_failed") || def.ends_with("expect_failed") {
        return true;
    }
    let Some(rest) = std_relative(def) else {
        return false;
    };
    rest.starts_with("panicking::")
        || rest.starts_with("rt::panic")
        || rest.starts_with("slice::index::slice_")
        // The integer methods' out-of-line panics, each `-> !`
        // (`num::int_log10::panic_for_nonpositive_argument` behind `ilog2`
        // and `ilog10`, `num::overflow_panic::add` behind `strict_add`).
        || rest.starts_with("num::overflow_panic::")
        || rest.starts_with("num::") && rest.rsplit("::").next().is_some_and(|f| f.starts_with("panic_"))
        // The slice and string methods' out-of-line panics
        // (`slice::index::slice_end_index_len_fail`,
        // `slice::copy_from_slice_impl::len_mismatch_fail`,
        // `str::slice_error_fail`): each only formats a message and panics.
        || (rest.starts_with("slice::") || rest.starts_with("str::"))
            && (rest.ends_with("_fail") || rest.ends_with("_fail_rt"))
}

/// What the call to `path` is, if its meaning is fixed.
pub fn classify(path: &Path) -> Option<KnownCall> {
    let def = path.def_path();
    if is_panic(&def) {
        return Some(KnownCall::Panic);
    }
    if let Some(i) = prelude::intrinsic(&def) {
        return Some(KnownCall::Device(i));
    }
    // `<u32 as std::cmp::Ord>::min`: the trait path is in the first segment.
    let first = path.segments.first().map_or("", |s| s.name.as_str());
    let ord_impl = first.starts_with('<')
        && (first.contains(" as std::cmp::Ord>") || first.contains(" as core::cmp::Ord>"));
    if ord_impl {
        match path.last_name() {
            "min" => return Some(KnownCall::MinMax(MinMax::Min)),
            "max" => return Some(KnownCall::MinMax(MinMax::Max)),
            _ => {}
        }
    }
    let rest = std_relative(&def)?;
    if let Some(name) = rest.strip_prefix("intrinsics::") {
        match name {
            "cold_path" => return Some(KnownCall::ColdPath),
            "is_val_statically_known" => return Some(KnownCall::StaticallyKnown),
            "black_box" => return Some(KnownCall::BlackBox),
            "write_bytes" => return Some(KnownCall::WriteBytes),
            "arith_offset" => return Some(KnownCall::ArithOffset),
            "ptr_offset_from" => return Some(KnownCall::OffsetFrom { unsigned: false }),
            "ptr_offset_from_unsigned" => {
                return Some(KnownCall::OffsetFrom { unsigned: true });
            }
            "typed_swap_nonoverlapping" => return Some(KnownCall::Swap),
            "copy" => return Some(KnownCall::CopyOverlapping),
            "compare_bytes" => return Some(KnownCall::CompareBytes),
            "raw_eq" => return Some(KnownCall::RawEq),
            "assert_inhabited" | "assert_zero_valid" | "assert_mem_uninitialized_valid" => {
                return Some(KnownCall::AssertValid);
            }
            "select_unpredictable" => return Some(KnownCall::Select),
            "exact_div" => return Some(KnownCall::ExactDiv),
            "volatile_load" => return Some(KnownCall::VolatileLoad),
            "volatile_store" => return Some(KnownCall::VolatileStore),
            "carrying_mul_add" => return Some(KnownCall::CarryingMulAdd),
            "size_of_val" => return Some(KnownCall::SizeOfVal { align: false }),
            "align_of_val" | "min_align_of_val" => {
                return Some(KnownCall::SizeOfVal { align: true });
            }
            _ => {}
        }
        if let Some(f) = int_fn(name) {
            return Some(KnownCall::Int(f));
        }
        match name {
            "saturating_add" => return Some(KnownCall::Saturating { sub: false }),
            "saturating_sub" => return Some(KnownCall::Saturating { sub: true }),
            _ => {}
        }
    }
    if let Some(f) = math_fn(rest) {
        return Some(KnownCall::Math(f));
    }
    if matches!(rest, "ptr::null" | "ptr::null_mut") {
        return Some(KnownCall::NullPtr);
    }
    if matches!(
        rest,
        "mem::MaybeUninit::uninit" | "mem::maybe_uninit::MaybeUninit::uninit"
    ) {
        return Some(KnownCall::Uninit);
    }
    if rest == "mem::swap" {
        return Some(KnownCall::Swap);
    }
    if RANGE_INCLUSIVE_PATHS
        .iter()
        .any(|p| def.strip_suffix("::new") == Some(p))
    {
        return Some(KnownCall::RangeInclusiveNew);
    }
    if matches!(
        rest,
        "ptr::swap_nonoverlapping_bytes"
            | "ptr::swap_nonoverlapping_bytes::swap_nonoverlapping_short"
    ) {
        return Some(KnownCall::SwapBytes { chunk: 1 });
    }
    if matches!(
        rest,
        "ptr::swap_nonoverlapping_bytes::swap_nonoverlapping_chunks" | "ptr::swap_chunk"
    ) {
        let chunk = path.generic_args().iter().find_map(|a| match a {
            GenericArg::Const(c) => c
                .trim_end_matches("_usize")
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0),
            _ => None,
        })?;
        return Some(KnownCall::SwapBytes { chunk });
    }
    let name = rest
        .strip_prefix("intrinsics::")
        .or_else(|| rest.strip_prefix("sync::atomic::"))?;
    let op = AtomicOp::from_name(name)?;
    let ordering = generic_ordering(path).map_or(OrderingArg::Arguments, OrderingArg::Generic);
    Some(KnownCall::Atomic { op, ordering })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntTy, PathSegment, Ty};

    fn path(s: &str, args: Vec<GenericArg>) -> Path {
        let mut segments: Vec<PathSegment> = s
            .split("::")
            .map(|n| PathSegment {
                name: n.to_string(),
                args: Vec::new(),
            })
            .collect();
        if let Some(last) = segments.last_mut() {
            last.args = args;
        }
        Path { segments }
    }

    #[test]
    fn both_spellings_of_atomics_are_atomics() {
        for p in [
            "core::sync::atomic::atomic_load",
            "std::sync::atomic::atomic_load",
            "core::intrinsics::atomic_load",
            "std::intrinsics::atomic_load",
        ] {
            assert_eq!(
                classify(&path(p, Vec::new())),
                Some(KnownCall::Atomic {
                    op: AtomicOp::Load,
                    ordering: OrderingArg::Arguments
                }),
                "{p}"
            );
        }
    }

    #[test]
    fn a_generic_ordering_is_read() {
        let ord = GenericArg::Const("AtomicOrdering::Relaxed".into());
        let p = path("core::intrinsics::atomic_xadd", vec![ord]);
        assert_eq!(
            classify(&p),
            Some(KnownCall::Atomic {
                op: AtomicOp::Rmw(RmwKind::Add),
                ordering: OrderingArg::Generic(AtomicOrdering::Relaxed)
            })
        );
    }

    #[test]
    fn float_math_paths_name_their_function() {
        let c = |s: &str| classify(&path(s, Vec::new()));
        for (p, f) in [
            ("std::intrinsics::sqrtf32", MathFn::Sqrt),
            ("core::intrinsics::sinf64", MathFn::Sin),
            ("std::intrinsics::round_ties_even_f32", MathFn::RoundEven),
            ("std::intrinsics::maxnumf64", MathFn::Max),
            ("std::intrinsics::powif32", MathFn::Powi),
            ("std::sys::cmath::tanhf", MathFn::Tanh),
            ("std::sys::cmath::atan2", MathFn::Atan2),
            ("core::num::libm::cbrtf", MathFn::Cbrt),
        ] {
            assert_eq!(c(p), Some(KnownCall::Math(f)), "{p}");
        }
        // Not float math: an integer intrinsic and an unknown libm name.
        assert!(!matches!(
            c("std::intrinsics::ctpop"),
            Some(KnownCall::Math(_))
        ));
        assert_eq!(c("std::sys::cmath::lgammaf_r"), None);
    }

    #[test]
    fn integer_intrinsics_name_their_function() {
        let c = |s: &str| classify(&path(s, vec![GenericArg::Type(Ty::Int(IntTy::U16))]));
        assert_eq!(
            c("std::intrinsics::ctpop"),
            Some(KnownCall::Int(IntFn::CountOnes))
        );
        assert_eq!(
            c("core::intrinsics::cttz_nonzero"),
            Some(KnownCall::Int(IntFn::TrailingZeros))
        );
        assert_eq!(
            c("std::intrinsics::rotate_right"),
            Some(KnownCall::Int(IntFn::RotateRight))
        );
        assert_eq!(
            c("std::intrinsics::saturating_sub"),
            Some(KnownCall::Saturating { sub: true })
        );
        assert_eq!(c("std::intrinsics::unchecked_funnel_shl"), None);
    }

    #[test]
    fn two_generic_orderings_join() {
        let ords = vec![
            GenericArg::Type(Ty::Int(IntTy::I32)),
            GenericArg::Const("std::intrinsics::AtomicOrdering::Release".into()),
            GenericArg::Const("std::intrinsics::AtomicOrdering::Acquire".into()),
        ];
        let p = path("std::intrinsics::atomic_cxchg", ords);
        assert_eq!(
            generic_ordering(&p),
            Some(AtomicOrdering::AcqRel),
            "a release-acquire compare-exchange needs both halves"
        );
        use AtomicOrdering::*;
        assert_eq!(Relaxed.join(Acquire), Acquire);
        assert_eq!(Acquire.join(SeqCst), SeqCst);
        assert_eq!(Acquire.join(Acquire), Acquire);
        assert_eq!(AcqRel.join(Release), AcqRel);
    }

    #[test]
    fn hints_offsets_panics_and_the_prelude() {
        let c = |s: &str| classify(&path(s, Vec::new()));
        assert_eq!(c("std::intrinsics::cold_path"), Some(KnownCall::ColdPath));
        assert_eq!(
            c("core::num::int_log10::panic_for_nonpositive_argument"),
            Some(KnownCall::Panic)
        );
        assert_eq!(c("core::num::overflow_panic::mul"), Some(KnownCall::Panic));
        assert_eq!(
            c("core::num::int_sqrt::panic_for_negative_argument"),
            Some(KnownCall::Panic)
        );
        assert_eq!(
            c("std::ptr::swap_nonoverlapping_bytes"),
            Some(KnownCall::SwapBytes { chunk: 1 })
        );
        assert_eq!(
            classify(&path(
                "core::ptr::swap_nonoverlapping_bytes::swap_nonoverlapping_chunks",
                vec![GenericArg::Const("8".into())]
            )),
            Some(KnownCall::SwapBytes { chunk: 8 })
        );
        assert_eq!(
            classify(&path(
                "std::ptr::swap_chunk",
                vec![GenericArg::Const("4".into())]
            )),
            Some(KnownCall::SwapBytes { chunk: 4 })
        );
        assert_eq!(
            c("core::ptr::swap_nonoverlapping_bytes::swap_nonoverlapping_chunks"),
            None,
            "a chunk size is needed"
        );
        assert_eq!(c("core::num::int_log10::u32"), None);
        assert_eq!(c("std::intrinsics::black_box"), Some(KnownCall::BlackBox));
        assert_eq!(
            c("std::ops::RangeInclusive::new"),
            Some(KnownCall::RangeInclusiveNew)
        );
        assert_eq!(
            c("core::intrinsics::write_bytes"),
            Some(KnownCall::WriteBytes)
        );
        assert_eq!(
            c("core::intrinsics::is_val_statically_known"),
            Some(KnownCall::StaticallyKnown)
        );
        assert_eq!(
            c("core::intrinsics::arith_offset"),
            Some(KnownCall::ArithOffset)
        );
        assert_eq!(
            c("core::intrinsics::ptr_offset_from_unsigned"),
            Some(KnownCall::OffsetFrom { unsigned: true })
        );
        assert_eq!(c("core::ptr::null_mut"), Some(KnownCall::NullPtr));
        assert_eq!(c("core::mem::MaybeUninit::uninit"), Some(KnownCall::Uninit));
        assert_eq!(c("std::intrinsics::copy"), Some(KnownCall::CopyOverlapping));
        assert_eq!(
            c("core::intrinsics::compare_bytes"),
            Some(KnownCall::CompareBytes)
        );
        assert_eq!(c("std::intrinsics::raw_eq"), Some(KnownCall::RawEq));
        assert_eq!(
            c("core::intrinsics::assert_inhabited"),
            Some(KnownCall::AssertValid)
        );
        assert_eq!(
            c("core::intrinsics::select_unpredictable"),
            Some(KnownCall::Select)
        );
        assert_eq!(c("std::intrinsics::exact_div"), Some(KnownCall::ExactDiv));
        assert_eq!(
            c("core::intrinsics::volatile_load"),
            Some(KnownCall::VolatileLoad)
        );
        assert_eq!(
            c("std::intrinsics::volatile_store"),
            Some(KnownCall::VolatileStore)
        );
        assert_eq!(
            c("std::intrinsics::carrying_mul_add"),
            Some(KnownCall::CarryingMulAdd)
        );
        assert_eq!(c("core::panicking::panic"), Some(KnownCall::Panic));
        assert_eq!(
            c("core::slice::index::slice_end_index_len_fail"),
            Some(KnownCall::Panic)
        );
        assert_eq!(
            c("core::slice::copy_from_slice_impl::len_mismatch_fail"),
            Some(KnownCall::Panic)
        );
        assert_eq!(c("core::str::slice_error_fail"), Some(KnownCall::Panic));
        assert_eq!(c("core::slice::sort::stable::sort"), None);
        assert_eq!(
            c("gpu::thread_idx_x"),
            Some(KnownCall::Device(Intrinsic::ThreadIdx(0)))
        );
        assert_eq!(c("kernel::helper"), None);
        assert_eq!(c("core::intrinsics::transmute"), None);
    }

    /// What `AtomicU32::compare_exchange(_weak)` and `mem::swap` leave in
    /// rustc's optimized MIR (measured on the pinned toolchain).
    #[test]
    fn compare_exchange_and_swap_as_rustc_leaves_them() {
        let c = |s: &str| classify(&path(s, vec![GenericArg::Type(Ty::Int(IntTy::U32))]));
        for (p, weak) in [
            ("std::sync::atomic::atomic_compare_exchange", false),
            ("core::sync::atomic::atomic_compare_exchange_weak", true),
            ("core::intrinsics::atomic_cxchg", false),
            ("std::intrinsics::atomic_cxchgweak", true),
        ] {
            assert_eq!(
                c(p),
                Some(KnownCall::Atomic {
                    op: AtomicOp::CompareExchange { weak },
                    ordering: OrderingArg::Arguments
                }),
                "{p}"
            );
        }
        assert_eq!(
            c("std::intrinsics::typed_swap_nonoverlapping"),
            Some(KnownCall::Swap)
        );
        assert_eq!(c("core::mem::swap"), Some(KnownCall::Swap));
        assert_eq!(c("core::mem::replace"), None);
    }

    #[test]
    fn ord_min_and_max_in_either_spelling() {
        for first in ["<u32 as std::cmp::Ord>", "<i64 as core::cmp::Ord>"] {
            let p = Path {
                segments: vec![
                    PathSegment {
                        name: first.into(),
                        args: Vec::new(),
                    },
                    PathSegment {
                        name: "max".into(),
                        args: Vec::new(),
                    },
                ],
            };
            assert_eq!(classify(&p), Some(KnownCall::MinMax(MinMax::Max)));
        }
    }
}
