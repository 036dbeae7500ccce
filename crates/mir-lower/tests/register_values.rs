//! Tuples and enums that the device holds in registers (rustc's `Scalar`
//! and `ScalarPair` values) are kernel parameters by value, as structs
//! are: a launch passes their bytes (`byval`), however the device holds
//! them afterwards. Pointer wrappers (`Option<&T>`, `NonNull<T>`) stay
//! pointer parameters, as before.

mod common;

use common::lower_source;
use device_ir::ParamAttrs;

/// Asserts that a kernel whose first parameter `p` has type `param` (read
/// by `read`, a `u32` expression) takes it by value as `size` bytes:
/// one `byval` pointer to an array of `words`.
fn assert_by_value_parameter(tag: &str, param: &str, read: &str, size: u64, words: &str) {
    let source = format!(
        "use crate::gpu::*;\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(p: {param}, out: DisjointSlice<u32>) {{ out.set(0, {read}); }}\n"
    );
    let l = lower_source(tag, &source).unwrap_or_else(|d| panic!("{tag}: {d}"));
    let k = l.module.function_by_name("k").expect("kernel");
    assert_eq!(
        l.module.functions[k].param_attrs[0],
        ParamAttrs::BYVAL,
        "{tag}"
    );
    assert_eq!(l.kernel_params["k"][0].by_value_size, Some(size), "{tag}");
    let text = l.module.to_string();
    let sig = text.lines().find(|l| l.contains("@k(")).expect("signature");
    assert!(
        sig.contains(&format!("@k({words}* byval, i8*, i64)")),
        "{tag}: {sig}"
    );
}

#[test]
fn a_pair_of_numbers_is_passed_by_value() {
    assert_by_value_parameter("pair-param", "(u32, u32)", "p.0 + p.1", 8, "[2 x i32]");
}

#[test]
fn an_option_of_a_number_is_passed_by_value() {
    assert_by_value_parameter(
        "option-param",
        "Option<u32>",
        "p.unwrap_or(7)",
        8,
        "[2 x i32]",
    );
}

/// The `.param`'s alignment is the type's, not its registers': a `u32`
/// in an `align(16)` wrapper is 16 bytes aligned to 16.
#[test]
fn an_over_aligned_wrapper_keeps_its_layout() {
    let source = "use crate::gpu::*;\n\
         #[derive(Clone, Copy)] #[repr(align(16))] pub struct A16(pub u32);\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(p: A16, out: DisjointSlice<u32>) { out.set(0, p.0); }\n";
    let l = lower_source("align16-param", source).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(l.kernel_params["k"][0].by_value_size, Some(16));
    let text = l.module.to_string();
    let sig = text.lines().find(|l| l.contains("@k(")).expect("signature");
    assert!(sig.contains("@k([1 x i128]* byval"), "{sig}");
}

/// No integer array has the alignment of a 32-byte aligned aggregate.
#[test]
fn an_aggregate_aligned_past_16_bytes_is_refused() {
    let source = "use crate::gpu::*;\n\
         #[derive(Clone, Copy)] #[repr(align(32))] pub struct A32(pub u32);\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(p: A32, out: DisjointSlice<u32>) { out.set(0, p.0); }\n";
    let msg = match lower_source("align32-param", source) {
        Ok(_) => panic!("an over-aligned parameter was lowered"),
        Err(d) => d.to_string(),
    };
    assert!(
        msg.contains("kernel parameter 1 of type `kernel::A32` is aligned to 32 bytes"),
        "{msg}"
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

/// A borrowed one-scalar aggregate by value (`(u32,)`) is homed in a stack
/// slot holding a copy of the launch's bytes. Its parameter was stored
/// into the slot as if it were the value before, which the device-IR
/// verifier refused (an internal error); a pointer-sized one would have
/// stored the copy's address silently. The values are the
/// `by_value_params` fixture's `borrowed_params`.
#[test]
fn a_borrowed_one_scalar_aggregate_is_copied_not_its_address_stored() {
    let source = "use crate::gpu::*;\n\
         #[inline(never)] fn first(t: &(u32,)) -> u32 { t.0 }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(one: (u32,), out: DisjointSlice<u32>) { out.set(0, first(&one)); }\n";
    let l = lower_source("borrowed-one-param", source).unwrap_or_else(|d| panic!("{d}"));
    device_ir::verify(&l.module).unwrap_or_else(|e| panic!("{e}"));
    let text = l.module.to_string();
    let k = text
        .split("kernel external @k(")
        .nth(1)
        .expect("the kernel's body");
    let k = &k[..k.find("\n}").expect("its end")];
    // The copy reads the launch's word (`memcpy` of 4 bytes is one load).
    assert!(k.contains("load i32"), "{k}");
}
