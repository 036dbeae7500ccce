//! A `ConstantMemory` static lowers to one global in constant memory that
//! the host may write: `addrspace(4)`, read-only for device code, linkage
//! `ExternallyInitialized`, named by the static's path, holding its
//! initializer's bytes; one that would hold a pointer is refused by name.

use device_ir::{AddressSpace, Linkage};
use mir_lower::GlobalOrigin;

mod common;

const SOURCE: &str = r#"use crate::gpu::*;

pub static SEVEN: ConstantMemory<[u32; 2]> = ConstantMemory::new([7, 0x0102_0304]);
pub static ZEROS: ConstantMemory<f64> = ConstantMemory::UNINIT;
pub static UNREAD: ConstantMemory<u16> = ConstantMemory::UNINIT;

#[unsafe(no_mangle)]
pub extern "C" fn reads(out: DisjointSlice<u32>) {
    if out.len() > 1 {
        out.set(0, SEVEN.get()[0] + ZEROS.get() as u32);
        out.set(1, SEVEN.get_ref()[1]);
    }
}
"#;

#[test]
fn a_constant_memory_static_is_one_host_written_constant_space_global() {
    let l = common::lower_source("constant-memory", SOURCE).unwrap_or_else(|d| panic!("{d}"));
    let m = &l.module;
    let find = |symbol: &str| {
        m.globals
            .iter()
            .find(|(_, g)| g.symbol == symbol)
            .unwrap_or_else(|| panic!("no global {symbol}:\n{m}"))
    };
    let (id, seven) = find("kernel__SEVEN");
    assert_eq!(seven.space, AddressSpace::Constant);
    assert_eq!(seven.linkage, Linkage::ExternallyInitialized);
    assert!(!seven.mutable);
    assert_eq!((seven.size, seven.align), (8, 4));
    let image: Vec<Option<u8>> = seven.init.as_ref().expect("an initializer").image();
    assert_eq!(image, [7, 0, 0, 0, 4, 3, 2, 1].map(Some));
    assert_eq!(
        l.origins.get(&id),
        Some(&GlobalOrigin::HostConstant("kernel::SEVEN".to_owned()))
    );
    let (_, zeros) = find("kernel__ZEROS");
    assert_eq!(zeros.init.as_ref().expect("zeros").image(), [Some(0); 8]);
    assert_eq!(
        l.host_constants["kernel::SEVEN"],
        mir_lower::HostConstant {
            symbol: "kernel__SEVEN".to_owned(),
            size: 8
        }
    );
    assert_eq!(l.host_constants["kernel::UNREAD"].size, 2);
    assert!(
        !m.globals.values().any(|g| g.symbol == "kernel__UNREAD"),
        "a constant no kernel reads is not in the module"
    );
    // Both statics, once each: no content-keyed copy of either.
    let constant_space = m
        .globals
        .values()
        .filter(|g| g.space == AddressSpace::Constant)
        .count();
    assert_eq!(constant_space, 2, "{m}");
}

#[test]
fn constant_memory_holding_a_pointer_is_refused() {
    let source = r#"use crate::gpu::*;

#[derive(Clone, Copy)]
pub struct Holder(&'static u32);
unsafe impl ConstantMemoryValue for Holder {}

static TARGET: u32 = 5;
pub static HELD: ConstantMemory<Holder> = ConstantMemory::new(Holder(&TARGET));

#[unsafe(no_mangle)]
pub extern "C" fn reads(out: DisjointSlice<u32>) {
    if out.len() > 0 {
        out.set(0, *HELD.get().0);
    }
}
"#;
    let e = match common::lower_source("constant-memory-pointer", source) {
        Ok(_) => panic!("a pointer in constant memory was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("kernel::HELD"), "{e}");
    assert!(
        e.contains("holds a pointer at byte 0; the host writes its bytes"),
        "{e}"
    );
}

/// Refuses `source`, whose diagnostics must name `item` and say `why`.
fn refused(tag: &str, source: &str, item: &str, why: &str) {
    let e = match common::lower_source(tag, source) {
        Ok(_) => panic!("{tag}: accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains(item), "{tag}: {e}");
    assert!(e.contains(why), "{tag}: {e}");
}

const READER: &str = r#"
#[unsafe(no_mangle)]
pub extern "C" fn reads(out: DisjointSlice<u32>) {
    if out.len() > 0 {
        out.set(0, 1);
    }
}
"#;

#[test]
fn constant_memory_that_the_host_could_not_write_is_refused() {
    refused(
        "constant-memory-mut",
        &format!(
            "use crate::gpu::*;\npub static mut M: ConstantMemory<u32> = ConstantMemory::UNINIT;\n{READER}"
        ),
        "kernel::M",
        "a `static mut` of type `ConstantMemory`",
    );
    refused(
        "constant-memory-nested",
        &format!(
            "use crate::gpu::*;\npub static PAIR: [ConstantMemory<u32>; 2] = [ConstantMemory::UNINIT, ConstantMemory::UNINIT];\n{READER}"
        ),
        "kernel::PAIR",
        "holds a `ConstantMemory` inside another type",
    );
    refused(
        "constant-memory-64k",
        &format!(
            "use crate::gpu::*;\npub static A: ConstantMemory<[u8; 40000]> = ConstantMemory::UNINIT;\n\
             pub static B: ConstantMemory<[u8; 30000]> = ConstantMemory::UNINIT;\n{READER}"
        ),
        "kernel::",
        "statics take 70000 bytes with this one; constant memory holds 65536",
    );
}
