//! Two statics never share a device symbol. `kernel::a::B` and
//! `kernel::a__B` once both became `kernel__a__B`, and every reference to
//! the second read the first's global.

use mir_lower::static_symbol;

mod common;

#[test]
fn paths_that_read_alike_get_distinct_symbols() {
    assert_eq!(static_symbol("kernel::COEFFS"), "kernel__COEFFS");
    assert_eq!(static_symbol("kernel::a::B"), "kernel__a__B");
    let odd = static_symbol("kernel::a__B");
    assert_ne!(odd, "kernel__a__B");
    assert!(odd.starts_with("kernel__a__B$"), "{odd}");
    assert_eq!(odd.len(), "kernel__a__B$".len() + 16);
    for (x, y) in [
        ("kernel::a_::b", "kernel::a::_b"),
        ("kernel::x<u8>", "kernel::x_u8_"),
    ] {
        assert_ne!(static_symbol(x), static_symbol(y), "{x} / {y}");
    }
}

#[test]
fn each_static_keeps_its_own_global() {
    let source = r#"use crate::gpu::*;
pub mod a {
    pub static B: u32 = 1;
}
#[allow(non_upper_case_globals)]
pub static a__B: u32 = 2;
#[unsafe(no_mangle)]
pub extern "C" fn symbols(out: DisjointSlice<u32>) {
    if out.len() > 1 {
        out.set(0, unsafe { core::ptr::read_volatile(&a::B) });
        out.set(1, unsafe { core::ptr::read_volatile(&a__B) });
    }
}
"#;
    let l = common::lower_source("static-symbols", source).unwrap_or_else(|d| panic!("{d}"));
    let image = |symbol: &str| {
        let g = l
            .module
            .globals
            .values()
            .find(|g| g.symbol == symbol)
            .unwrap_or_else(|| panic!("no global {symbol}:\n{}", l.module));
        g.init.as_ref().expect("an initializer").image()
    };
    assert_eq!(image("kernel__a__B"), [1, 0, 0, 0].map(Some));
    assert_eq!(
        image(&static_symbol("kernel::a__B")),
        [2, 0, 0, 0].map(Some)
    );
}
