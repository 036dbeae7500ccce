//! `ptr::read_volatile` / `write_volatile`: each access through a pointer
//! the function did not make itself is a volatile load or store of the
//! device IR (LLVM's `load volatile`, PTX `ld.volatile`), one per scalar, so
//! libNVVM can neither fold a write-then-read round trip nor hoist a polled
//! flag out of its loop. An access to the function's own stack slot stays
//! plain: no other thread can see it, and a volatile one would only keep the
//! slot in local memory (libm's `force_eval!`).

use device_ir::{InstData, MemFlags, Module};

mod common;

/// Kernel source `source`, lowered; a refusal fails the test.
fn lower_source(tag: &str, source: &str) -> mir_lower::Lowered {
    common::lower_source(tag, source).unwrap_or_else(|d| panic!("{d}"))
}

/// The (volatile loads, volatile stores, plain loads, plain stores) of
/// function `name`.
fn accesses(m: &Module, name: &str) -> (usize, usize, usize, usize) {
    let f = m
        .function_by_name(name)
        .unwrap_or_else(|| panic!("no function {name}"));
    let body = m.functions[f].body.as_ref().expect("body");
    let mut n = (0, 0, 0, 0);
    for i in body.insts.values() {
        match i {
            InstData::Load { flags, .. } if flags.contains(MemFlags::VOLATILE) => n.0 += 1,
            InstData::Store { flags, .. } if flags.contains(MemFlags::VOLATILE) => n.1 += 1,
            InstData::Load { .. } => n.2 += 1,
            InstData::Store { .. } => n.3 += 1,
            _ => {}
        }
    }
    n
}

const SOURCE: &str = r#"use crate::gpu::*;

#[derive(Clone, Copy)]
pub struct Quad {
    pub w: [u32; 4],
}

/// Two volatile writes and two volatile reads of one `u32`.
#[unsafe(no_mangle)]
pub extern "C" fn scalar_round_trip(scratch: &mut [u32]) {
    let i = global_idx_x() as usize;
    if let Some(slot) = scratch.get_mut(i) {
        let p = slot as *mut u32;
        unsafe {
            core::ptr::write_volatile(p, 7);
            let a = core::ptr::read_volatile(p as *const u32);
            core::ptr::write_volatile(p, a + 1);
            let _ = core::ptr::read_volatile(p as *const u32);
        }
    }
}

/// A volatile read and a volatile write of a 16-byte aggregate: four
/// 4-byte accesses each.
#[unsafe(no_mangle)]
pub extern "C" fn aggregate_copy(quads: &mut [Quad]) {
    let i = global_idx_x() as usize;
    if i + 1 < quads.len() {
        let p = quads.as_mut_ptr();
        unsafe {
            let q = core::ptr::read_volatile(p.add(i + 1) as *const Quad);
            core::ptr::write_volatile(p.add(i), q);
        }
    }
}

/// `force_eval!`'s pattern: a volatile read of a local of its own frame.
#[unsafe(no_mangle)]
pub extern "C" fn own_local(out: &mut [f32]) {
    let i = global_idx_x() as usize;
    if let Some(o) = out.get_mut(i) {
        let x = i as f32 * 0.5;
        let y = unsafe { core::ptr::read_volatile(&x) };
        *o = y;
    }
}
"#;

#[test]
fn accesses_through_a_pointer_are_volatile_one_per_scalar() {
    let l = lower_source("volatile-accesses", SOURCE);
    let (vl, vs, _, _) = accesses(&l.module, "scalar_round_trip");
    assert_eq!((vl, vs), (2, 2), "scalar_round_trip");
    let (vl, vs, _, _) = accesses(&l.module, "aggregate_copy");
    assert_eq!((vl, vs), (4, 4), "aggregate_copy: 16 bytes at align 4");
    // What LLVM is given: `load volatile` / `store volatile`.
    let ir = nvvm_emit::print_module(&l.module);
    assert!(ir.contains("load volatile i32"), "{ir}");
    assert!(ir.contains("store volatile i32"), "{ir}");
}

#[test]
fn a_volatile_read_of_the_own_frame_stays_plain() {
    let l = lower_source("volatile-own-frame", SOURCE);
    let (vl, vs, plain_loads, _) = accesses(&l.module, "own_local");
    assert_eq!((vl, vs), (0, 0), "own_local");
    assert!(plain_loads >= 1, "the read itself is still there");
}

/// A volatile `u128` is two volatile 64-bit halves, low first: libNVVM
/// miscompiles `load volatile i128` at `-opt=3` (the value comes from two
/// plain loads it adds beside the volatile ones) and makes a `store
/// volatile i128` two plain stores.
#[test]
fn a_volatile_u128_is_two_volatile_halves() {
    let source = r#"use crate::gpu::*;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn wide(src: *mut u128, out: *mut u128) {
    unsafe {
        let v = core::ptr::read_volatile(src);
        core::ptr::write_volatile(out, v + 1);
    }
}
"#;
    let l = lower_source("volatile-u128", source);
    let (vl, vs, _, _) = accesses(&l.module, "wide");
    assert_eq!((vl, vs), (2, 2), "two halves each way");
    let ir = nvvm_emit::print_module(&l.module);
    assert!(!ir.contains("volatile i128"), "{ir}");
    assert_eq!(ir.matches("load volatile i64").count(), 2, "{ir}");
    let Some(out) = nvvm_emit::testing::check_nvvm("volatile-u128", &ir, 90) else {
        return;
    };
    for ptx in [&out.ptx, &out.ptx_opt0] {
        // Memory accesses other than the parameters': (opcode, volatile).
        let accesses: Vec<(&str, bool)> = ptx
            .lines()
            .map(str::trim)
            .filter(|l| (l.starts_with("ld.") || l.starts_with("st.")) && !l.contains(".param"))
            .map(|l| (&l[..2], l.contains(".volatile.") && l.contains(".u64")))
            .collect();
        assert_eq!(
            accesses,
            [("ld", true), ("ld", true), ("st", true), ("st", true)],
            "{ptx}"
        );
    }
}
