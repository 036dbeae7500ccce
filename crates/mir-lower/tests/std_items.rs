//! Items of the standard library that rustc prints no body for: the
//! compiler hints and panics the lowering knows by name, and the
//! constants of `core` that it cannot evaluate, refused naming the crate.

mod common;

/// A kernel writing `value` (an expression of `xs[i]`) to `out[i]`.
fn kernel_writing(value: &str) -> String {
    format!(
        "use crate::gpu::*;\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(xs: &[u32], out: DisjointSlice<u32>) {{\n\
             let i = global_idx_x() as usize;\n\
             if i < xs.len() && i < out.len() {{\n\
                 out.set(i, {value});\n\
             }}\n\
         }}\n"
    )
}

/// `u32::pow` asks `intrinsics::is_val_statically_known` whether the
/// exponent is a constant; `ilog10` panics out of line through
/// `num::int_log10::panic_for_nonpositive_argument`. Both have no body
/// here, and the kernel must lower (it was refused, naming them).
#[test]
fn integer_methods_with_bodiless_hints_and_panics_lower() {
    let source = kernel_writing("xs[i].pow(3) + xs[i].ilog10()");
    let lowered = common::lower_source("std-hints", &source).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(lowered.kernels.len(), 1, "{:?}", lowered.kernels);
}

/// `u32::isqrt` reads `core::num::int_sqrt::U8_ISQRT_WITH_REMAINDER`, an
/// aggregate constant rustc leaves unevaluated and whose body is `core`'s;
/// its value is known from its definition (`eval::std_consts`), so the
/// kernel lowers (it was refused, naming the constant).
#[test]
fn isqrt_reads_the_known_core_table() {
    let source = kernel_writing(
        "xs[i].isqrt() + (xs[i] as i32).isqrt() as u32 + (xs[i] as u16).isqrt() as u32",
    );
    let lowered = common::lower_source("std-isqrt", &source).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(lowered.kernels.len(), 1, "{:?}", lowered.kernels);
}

/// Any other such constant of `core` is refused naming it and its crate:
/// `align_offset` with a stride that is not a power of two reads
/// `core::ptr::align_offset::mod_inv::INV_TABLE_MOD_16` (printed under
/// `std`, the crate the kernel names).
#[test]
fn an_unevaluated_core_constant_is_refused_naming_its_crate() {
    let source = kernel_writing(
        "(unsafe { (xs.as_ptr() as *const u8).add(i) } as *const [u8; 3]).align_offset(8) as u32",
    );
    let d =
        common::lower_source("std-const", &source).expect_err("INV_TABLE_MOD_16 has no value here");
    let text = d.to_string();
    assert!(
        text.contains("ptr::align_offset::mod_inv::INV_TABLE_MOD_16")
            && text.contains("belongs to `std`, whose MIR is not printed"),
        "{text}"
    );
}
