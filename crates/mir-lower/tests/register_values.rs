//! Tuples and enums that the device holds in registers (rustc's `Scalar`
//! and `ScalarPair` values) are still refused as kernel parameters: a launch
//! passes numbers, pointers and slices, and has no form for `(u32, u32)` or
//! `Option<u32>` however the device would hold them. Pointer wrappers
//! (`Option<&T>`, `NonNull<T>`) stay parameters, as before.

mod common;

use common::lower_source;

/// Asserts that a kernel whose first parameter `p` has type `param` (read
/// by `read`, a `u32` expression) is refused, naming `printed`.
fn assert_refused_parameter(tag: &str, param: &str, read: &str, printed: &str) {
    let source = format!(
        "use crate::gpu::*;\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(p: {param}, out: DisjointSlice<u32>) {{ out.set(0, {read}); }}\n"
    );
    let msg = match lower_source(tag, &source) {
        Ok(_) => panic!("{tag}: the kernel was lowered"),
        Err(d) => d.to_string(),
    };
    let want = format!("kernel parameter 1 of type `{printed}` is an aggregate");
    assert!(msg.contains(&want), "{tag}: {msg}");
}

#[test]
fn a_pair_of_numbers_is_no_kernel_parameter() {
    assert_refused_parameter("pair-param", "(u32, u32)", "p.0 + p.1", "(u32, u32)");
}

#[test]
fn an_option_of_a_number_is_no_kernel_parameter() {
    assert_refused_parameter(
        "option-param",
        "Option<u32>",
        "p.unwrap_or(7)",
        "std::option::Option<u32>",
    );
}

#[test]
fn a_reference_stays_a_kernel_parameter() {
    lower_source(
        "ref-param",
        "use crate::gpu::*;\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(p: &u32, out: DisjointSlice<u32>) { out.set(0, *p); }\n",
    )
    .unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn pointer_wrappers_stay_kernel_parameters() {
    for (tag, param, read) in [
        ("option-ref-param", "Option<&u32>", "p.map_or(7, |x| *x)"),
        (
            "nonnull-param",
            "core::ptr::NonNull<u32>",
            "unsafe { *p.as_ptr() }",
        ),
    ] {
        let source = format!(
            "use crate::gpu::*;\n\
             #[unsafe(no_mangle)]\n\
             pub extern \"C\" fn k(p: {param}, out: DisjointSlice<u32>) {{ out.set(0, {read}); }}\n"
        );
        lower_source(tag, &source).unwrap_or_else(|d| panic!("{tag}: {d}"));
    }
}
