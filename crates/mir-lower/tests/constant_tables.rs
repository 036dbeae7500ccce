//! By-value constant aggregates (issue: real kernels, lookup tables): a local
//! that only holds `const LUT` and is only read has the constant's interned,
//! read-only `addrspace(1)` global as its home. `fixtures/lookup_table`
//! indexes `const CRC_TABLE: [u32; 256]` in a helper and `const LUT: [f32;
//! 256]` in a loop: neither may become a stack array, and each is one global.

use std::path::Path;

use device_ir::layout::size_of;
use device_ir::{AddressSpace, InstData, Module};
use mir_lower::{GlobalOrigin, LowerOptions, Lowered};

fn lower(options: LowerOptions) -> Lowered {
    let kernel =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/lookup_table/kernel.rs");
    let imp = mir_import::import_and_evaluate(&kernel, &Default::default(), true)
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.display()));
    mir_lower::lower_with(&imp, options).unwrap_or_else(|d| panic!("{d}"))
}

mod common;

/// Kernel source `source`, lowered; a refusal fails the test.
fn lower_source(tag: &str, source: &str) -> Lowered {
    common::lower_source(tag, source).unwrap_or_else(|d| panic!("{d}"))
}

/// The byte sizes of the allocas of function `name`.
fn alloca_sizes(m: &Module, name: &str) -> Vec<u64> {
    let f = m
        .function_by_name(name)
        .unwrap_or_else(|| panic!("no function {name}"));
    let body = m.functions[f].body.as_ref().expect("body");
    body.insts
        .values()
        .filter_map(|i| match i {
            InstData::Alloca { ty, .. } => Some(size_of(&m.types, *ty)),
            _ => None,
        })
        .collect()
}

/// The constant globals function `name` takes the address of: (symbol, size).
fn constants_read(l: &Lowered, name: &str) -> Vec<(String, u64)> {
    let m = &l.module;
    let f = m
        .function_by_name(name)
        .unwrap_or_else(|| panic!("no function {name}"));
    let body = m.functions[f].body.as_ref().expect("body");
    let mut out: Vec<(String, u64)> = body
        .insts
        .values()
        .filter_map(|i| match i {
            InstData::GlobalAddr { global, .. }
                if l.origins.get(global) == Some(&GlobalOrigin::Constant) =>
            {
                let g = &m.globals[*global];
                Some((g.symbol.clone(), g.size))
            }
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

const CRC_STEP: &str = "kernel__crc_step";
const LUT_SUM: &str = "kernel__lut_sum";

#[test]
fn a_by_value_table_is_read_from_its_global_not_a_stack_copy() {
    let l = lower(LowerOptions::default());
    for f in [CRC_STEP, LUT_SUM] {
        assert_eq!(
            alloca_sizes(&l.module, f),
            Vec::<u64>::new(),
            "{f} has an alloca"
        );
        let read = constants_read(&l, f);
        assert_eq!(read.len(), 1, "{f} reads {read:?}");
        assert_eq!(read[0].1, 1024, "{f} reads {read:?}");
        let g = l
            .module
            .globals
            .values()
            .find(|g| g.symbol == read[0].0)
            .expect("global");
        assert!(!g.mutable && g.space == AddressSpace::Global, "{g:?}");
    }
    // The two tables differ, so they are two globals.
    assert_ne!(constants_read(&l, CRC_STEP), constants_read(&l, LUT_SUM));
}

#[test]
fn the_old_lowering_copies_the_table_to_the_stack() {
    // The mutant the gpu-harness check `no-constant-stack-copy` must catch.
    let l = lower(LowerOptions {
        copy_constant_aggregates: true,
    });
    for f in [CRC_STEP, LUT_SUM] {
        assert!(
            alloca_sizes(&l.module, f).contains(&1024),
            "{f}: {:?}",
            alloca_sizes(&l.module, f)
        );
    }
}

#[test]
fn one_table_used_by_two_functions_is_one_global() {
    let l = lower_source(
        "constant-tables",
        r#"use crate::gpu::*;

pub const T: [u32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

#[inline(never)]
pub fn first(i: usize) -> u32 {
    T[i & 7]
}

#[inline(never)]
pub fn second(i: usize) -> u32 {
    let t = T;
    t[(i + 3) & 7] + t[i & 7]
}

#[inline(never)]
pub fn by_ref(i: usize) -> u32 {
    const R: &[u32; 8] = &T;
    R[i & 7]
}

#[unsafe(no_mangle)]
pub extern "C" fn two_users(out: DisjointSlice<u32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        out.set(i, first(i) + second(i) + by_ref(i));
    }
}
"#,
    );
    let a = constants_read(&l, "kernel__first");
    let b = constants_read(&l, "kernel__second");
    let c = constants_read(&l, "kernel__by_ref");
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a, b);
    assert_eq!(
        a, c,
        "the by-value and the reference constant share the global"
    );
    for f in ["kernel__first", "kernel__second", "kernel__by_ref"] {
        assert_eq!(alloca_sizes(&l.module, f), Vec::<u64>::new(), "{f}");
    }
}

/// rustc prints a field holding an integer's limit as a path inside a
/// structured constant (`Fixed::<u8> { bits: i32::MIN, .. }`), as `fixed`'s
/// `FixedI32::MIN` reaches a kernel: the field is the limit's bytes.
#[test]
fn an_integer_limit_inside_a_printed_struct_is_its_value() {
    let l = lower_source(
        "constant-limits",
        r#"use crate::gpu::*;
use core::marker::PhantomData;

#[derive(Clone, Copy)]
pub struct Fixed<F> {
    bits: i32,
    frac: PhantomData<F>,
}

impl<F> Fixed<F> {
    pub const MIN: Self = Fixed { bits: i32::MIN, frac: PhantomData };
    pub const MAX: Self = Fixed { bits: i32::MAX, frac: PhantomData };
}

#[inline(never)]
pub fn pick(i: u32) -> Fixed<u8> {
    if i % 2 == 0 { Fixed::<u8>::MIN } else { Fixed::<u8>::MAX }
}

#[unsafe(no_mangle)]
pub extern "C" fn limits(n: u32, out: DisjointSlice<u32>) {
    let i = global_idx_x();
    if i < n {
        out.set(i as usize, pick(i).bits as u32);
    }
}
"#,
    );
    let mut images: Vec<Vec<Option<u8>>> = l
        .module
        .globals
        .values()
        .filter_map(|g| g.init.as_ref())
        .map(|init| init.image())
        .collect();
    images.sort();
    let defined = |v: i32| v.to_le_bytes().map(Some).to_vec();
    assert_eq!(images, [defined(i32::MIN), defined(i32::MAX)]);
}
