//! `DynamicSharedArray` lowers to the block's dynamic shared memory: one
//! `dynamic_shared` instruction per use, at the use's alignment, and an
//! alignment that is no constant power of two is refused by name.

use device_ir::InstData;

mod common;

const SOURCE: &str = r#"use crate::gpu::*;

#[unsafe(no_mangle)]
pub extern "C" fn two_views(out: DisjointSlice<u32>) {
    let t = thread_idx_x() as usize;
    let words: *mut u32 = DynamicSharedArray::<u32>::get();
    let wide: *mut u32 = DynamicSharedArray::<u32, 256>::offset(1024);
    unsafe {
        *words.add(t) = t as u32;
        *wide.add(t) = 2 * t as u32;
    }
    sync_threads();
    if t < out.len() {
        out.set(t, unsafe { *words.add(t) + *wide.add(t) });
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn runtime_alignment(align: usize, out: DisjointSlice<u32>) {
    let p = dynamic_shared_memory(align) as *mut u32;
    if out.len() > 0 {
        out.set(0, unsafe { *p });
    }
}
"#;

#[test]
fn each_use_is_the_block_s_dynamic_shared_memory_at_its_alignment() {
    let good = SOURCE
        .split("#[unsafe(no_mangle)]\npub extern \"C\" fn runtime_alignment")
        .next()
        .expect("the first kernel");
    let l = common::lower_source("dynamic-shared", good).unwrap_or_else(|d| panic!("{d}"));
    let m = &l.module;
    let f = m.function_by_name("two_views").expect("the kernel");
    let body = m.functions[f].body.as_ref().expect("a body");
    let mut aligns: Vec<u32> = body
        .insts
        .values()
        .filter_map(|i| match i {
            InstData::DynamicShared { align } => Some(*align),
            _ => None,
        })
        .collect();
    aligns.sort_unstable();
    assert_eq!(aligns, [16, 256]);
    assert_eq!(m.dynamic_shared_align(), Some(256));
}

#[test]
fn an_alignment_that_is_not_a_constant_is_refused() {
    let e = match common::lower_source("dynamic-shared-runtime", SOURCE) {
        Ok(_) => panic!("a runtime alignment was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("the alignment of dynamic shared memory must be a constant"),
        "{e}"
    );
    assert!(e.contains("runtime_alignment"), "{e}");
}
