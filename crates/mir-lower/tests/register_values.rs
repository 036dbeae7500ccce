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

/// A borrowed zero-sized value has the address rustc gives one, its
/// alignment (`NonNull::dangling`), never null: `Some(&z)` must stay
/// `Some`, and an over-aligned one's address must be aligned. A zero-sized
/// struct with fields held no stack slot first as a one-byte alloca, then
/// (briefly) as a null address.
#[test]
fn a_borrowed_zero_sized_value_is_aligned_and_not_null() {
    let l = lower_source(
        "zst-address",
        "use crate::gpu::*;\n\
         #[repr(align(16))]\n\
         #[derive(Clone, Copy)]\n\
         pub struct Z { _m: core::marker::PhantomData<u64> }\n\
         #[inline(never)]\n\
         pub fn addr(z: &Z) -> u32 { z as *const Z as usize as u32 }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) {\n\
             let z = Z { _m: core::marker::PhantomData };\n\
             out.set(0, addr(&z));\n\
         }\n",
    )
    .unwrap_or_else(|d| panic!("{d}"));
    let text = l.module.to_string();
    let kernel = &text[text.find("@k(").expect("the kernel")..];
    let call = kernel
        .lines()
        .find(|line| line.contains("@kernel__addr("))
        .expect("a call of addr");
    assert!(!call.contains("null"), "{call}");
    let arg = call
        .rsplit_once('(')
        .and_then(|(_, a)| a.strip_suffix(')'))
        .expect("one argument");
    let def = kernel
        .lines()
        .find(|line| line.trim_start().starts_with(&format!("{arg} = ")))
        .expect("the argument's definition");
    assert!(def.contains("inttoptr"), "{def}");
    let int = def.split_whitespace().nth(3).expect("the integer operand");
    let konst = kernel
        .lines()
        .find(|line| line.trim_start().starts_with(&format!("{int} = ")))
        .expect("the integer's definition");
    assert!(konst.ends_with("iconst i64 16"), "{konst}");
}

/// `transmute` into or out of a zero-sized struct carries nothing. A review
/// feared it refused once such structs stopped being zero-byte memory; it
/// is not (an assignment to a zero-sized place never reaches the
/// transmute), and this pins that.
#[test]
fn a_transmute_of_nothing_is_lowered() {
    lower_source(
        "zst-transmute",
        "use crate::gpu::*;\n\
         #[derive(Clone, Copy)]\n\
         pub struct Z { _m: core::marker::PhantomData<u64> }\n\
         #[inline(never)]\n\
         pub fn make() -> Z { unsafe { core::mem::transmute::<[u32; 0], Z>([]) } }\n\
         #[inline(never)]\n\
         pub fn back(z: Z) -> usize { unsafe { core::mem::transmute::<Z, [u32; 0]>(z) }.len() }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) { out.set(0, back(make()) as u32 + 1); }\n",
    )
    .unwrap_or_else(|d| panic!("{d}"));
}

/// An enum whose zero-sized payload raises its alignment
/// (`Result<u32, Z>` with an `align(16)` `Z`: 16 bytes) is no register
/// pair (8 bytes): a borrowed one gets a slot of the layout's size.
#[test]
fn an_over_aligned_zero_sized_payload_keeps_the_enum_in_memory() {
    let l = lower_source(
        "zst-aligned-payload",
        "use crate::gpu::*;\n\
         #[repr(align(16))]\n\
         #[derive(Clone, Copy)]\n\
         pub struct Z { _m: core::marker::PhantomData<u64> }\n\
         #[inline(never)]\n\
         pub fn pick(r: &Result<u32, Z>) -> u32 { match r { Ok(v) => *v, Err(_) => 7 } }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(x: u32, out: DisjointSlice<u32>) {\n\
             let r: Result<u32, Z> = if x > 3 { Ok(x) } else { Err(Z { _m: core::marker::PhantomData }) };\n\
             out.set(0, pick(&r));\n\
         }\n",
    )
    .unwrap_or_else(|d| panic!("{d}"));
    let text = l.module.to_string();
    let kernel = &text[text.find("@k(").expect("the kernel")..];
    let kernel = &kernel[..kernel.find("\n}").unwrap_or(kernel.len())];
    let allocas: Vec<&str> = kernel.lines().filter(|l| l.contains("alloca")).collect();
    assert!(
        allocas.iter().any(|a| a.contains("[16 x i8], align 16")),
        "{allocas:?}"
    );
    assert!(
        !allocas.iter().any(|a| a.contains("[8 x i8]")),
        "{allocas:?}"
    );
}
