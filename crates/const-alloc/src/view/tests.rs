//! One test per view rule, each rejection included.

#![allow(clippy::unwrap_used)] // A test that unwraps wants the panic.

use super::*;
use crate::{Allocation, Interner, Root, SimpleGraph, Target};

/// A graph with:
/// - 0: `(u32, bool, [pad; 3], &u8)` = (0x0403_0201, true, pointer to 9 + 1), align 8;
/// - 1: a mutable static of 8 bytes;
/// - 9: the byte 42.
fn graph() -> SimpleGraph<u32> {
    let mut g = SimpleGraph::new();
    g.insert(
        0,
        Allocation::new([1, 2, 3, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 8)
            .with_uninit(5..8)
            .with_pointer(8, 8, Target::Alloc(9), 1),
    );
    g.insert(1, Allocation::new([0; 8], 8).mutable());
    g.insert(9, Allocation::new([42], 1));
    g
}

fn interned(g: &SimpleGraph<u32>) -> Interned<'_, u32> {
    Interner::new(8)
        .intern(
            g,
            [
                Root::Anonymous(0),
                Root::Static {
                    symbol: "M".into(),
                    alloc: 1,
                },
            ],
        )
        .expect("interns")
}

fn whole() -> SimpleLayout {
    SimpleLayout::new(16, 8)
        .scalar(0, 4, Validity::Any)
        .scalar(4, 1, Validity::BOOL)
        .pointer_at(8)
}

#[test]
fn accepts_whole_and_interior_views() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    assert_eq!(
        i.view(gid, 0, &whole()),
        Ok(View {
            global: gid,
            offset: 0,
            size: 16
        })
    );
    assert!(i.view(gid, 0, &SimpleLayout::int(4)).is_ok());
    assert!(
        i.view(gid, 2, &SimpleLayout::new(2, 2).scalar(0, 2, Validity::Any))
            .is_ok()
    );
    assert!(i.view(gid, 4, &SimpleLayout::bool()).is_ok());
    assert!(i.view(gid, 8, &SimpleLayout::pointer(8)).is_ok());
    // Padding may be uninitialized: a layout that leaves bytes 5..8 alone.
    assert!(
        i.view(gid, 0, &SimpleLayout::new(8, 4).scalar(0, 4, Validity::Any))
            .is_ok()
    );
}

#[test]
fn many_views_one_symbol_and_order_does_not_matter() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    let requests: Vec<(u64, SimpleLayout)> = vec![
        (0, whole()),
        (0, SimpleLayout::int(4)),
        (4, SimpleLayout::bool()),
        (8, SimpleLayout::pointer(8)),
        (4, SimpleLayout::int(4)), // rejected: reads padding
    ];
    let forward: Vec<_> = requests.iter().map(|(o, l)| i.view(gid, *o, l)).collect();
    let backward: Vec<_> = requests
        .iter()
        .rev()
        .map(|(o, l)| i.view(gid, *o, l))
        .collect();
    let mut backward = backward;
    backward.reverse();
    assert_eq!(forward, backward);
    let symbols: std::collections::BTreeSet<&str> = forward
        .iter()
        .flatten()
        .map(|v| i.global(v.global).symbol())
        .collect();
    assert_eq!(symbols.len(), 1);
    // Asking for views changes nothing in the result.
    assert_eq!(i, interned(&g));
}

#[test]
fn rejects_malformed_layouts() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    for layout in [
        SimpleLayout::new(4, 3),
        SimpleLayout::new(4, 4).scalar(0, 0, Validity::Any),
        SimpleLayout::new(32, 8).scalar(0, 17, Validity::Any),
        SimpleLayout::new(4, 4).scalar(2, 4, Validity::Any),
        SimpleLayout::new(4, 4).pointer_at(0),
    ] {
        let e = i.view(gid, 0, &layout).unwrap_err();
        assert_eq!(e.rule(), ViewRule::WellFormedLayout, "{layout:?}: {e}");
    }
}

#[test]
fn rejects_views_of_mutable_globals() {
    let g = graph();
    let i = interned(&g);
    let m = i.find("M").unwrap();
    assert_eq!(
        i.view(m, 0, &SimpleLayout::int(8)),
        Err(ViewError::Mutable { offset: 0 })
    );
}

#[test]
fn rejects_views_that_do_not_fit() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    assert_eq!(
        i.view(gid, 8, &whole()),
        Err(ViewError::OutOfBounds {
            offset: 8,
            size: 16,
            global_size: 16
        })
    );
    assert_eq!(
        i.view(gid, u64::MAX, &SimpleLayout::int(1))
            .unwrap_err()
            .rule(),
        ViewRule::Fits
    );
}

#[test]
fn rejects_misaligned_views() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    assert_eq!(
        i.view(gid, 2, &SimpleLayout::int(4)),
        Err(ViewError::MisalignedOffset {
            offset: 2,
            align: 4
        })
    );
    // A 2-byte global with alignment 1: a 2-aligned view of it is refused
    // even at offset 0.
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new([1, 0], 1));
    let i = Interner::new(8).intern(&g, [Root::Anonymous(0)]).unwrap();
    assert_eq!(
        i.view(i.global_of(0).unwrap(), 0, &SimpleLayout::int(2)),
        Err(ViewError::AlignAboveGlobal {
            offset: 0,
            align: 2,
            global_align: 1
        })
    );
}

#[test]
fn rejects_pointer_slot_without_relocation() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    assert_eq!(
        i.view(gid, 0, &SimpleLayout::pointer(8)),
        Err(ViewError::PointerWithoutRelocation { offset: 0 })
    );
}

#[test]
fn rejects_relocation_without_pointer_slot() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    // The pointer sits in padding of the view's type.
    assert_eq!(
        i.view(
            gid,
            0,
            &SimpleLayout::new(16, 8).scalar(0, 4, Validity::Any)
        ),
        Err(ViewError::UnexpectedRelocation { offset: 8 })
    );
    // A view that cuts the pointer in half.
    assert_eq!(
        i.view(gid, 12, &SimpleLayout::new(4, 4)),
        Err(ViewError::UnexpectedRelocation { offset: 8 })
    );
}

#[test]
fn rejects_scalar_holding_a_relocation() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    assert_eq!(
        i.view(gid, 8, &SimpleLayout::int(8)),
        Err(ViewError::RelocationInScalar {
            offset: 8,
            relocation: 8
        })
    );
    assert_eq!(
        i.view(gid, 12, &SimpleLayout::int(4)),
        Err(ViewError::RelocationInScalar {
            offset: 12,
            relocation: 8
        })
    );
}

#[test]
fn rejects_uninitialized_scalar_bytes() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    assert_eq!(
        i.view(gid, 4, &SimpleLayout::int(4)),
        Err(ViewError::UninitScalar { offset: 4, byte: 5 })
    );
    let e = i
        .view(gid, 0, &SimpleLayout::new(8, 8).scalar(0, 8, Validity::Any))
        .unwrap_err();
    assert_eq!(e, ViewError::UninitScalar { offset: 0, byte: 5 });
}

#[test]
fn rejects_values_outside_their_validity() {
    let g = graph();
    let i = interned(&g);
    let gid = i.global_of(0).unwrap();
    // Byte 0 holds 1, byte 1 holds 2: 2 is no bool.
    assert!(i.view(gid, 0, &SimpleLayout::bool()).is_ok());
    assert_eq!(
        i.view(gid, 1, &SimpleLayout::bool()),
        Err(ViewError::InvalidValue {
            offset: 1,
            value: 2,
            validity: Validity::BOOL
        })
    );
    // Enum tags from an explicit set, read little-endian.
    let tags = |set: Vec<u128>| SimpleLayout::new(4, 4).scalar(0, 4, Validity::OneOf(set));
    assert!(i.view(gid, 0, &tags(vec![0, 0x0403_0201])).is_ok());
    assert_eq!(
        i.view(gid, 0, &tags(vec![0, 1])).unwrap_err().rule(),
        ViewRule::ScalarValidity
    );
}

#[test]
fn validity_ranges_wrap() {
    let r = Validity::Range { start: 254, end: 1 };
    assert!(r.contains(255) && r.contains(0) && r.contains(1) && r.contains(254));
    assert!(!r.contains(2) && !r.contains(253));
    let nonzero = Validity::Range { start: 1, end: 255 };
    assert!(!nonzero.contains(0) && nonzero.contains(1));
    assert!(Validity::Any.contains(u128::MAX));
}

#[test]
fn errors_name_the_rule_and_offset() {
    let e = ViewError::UninitScalar { offset: 4, byte: 5 };
    assert_eq!((e.rule(), e.offset()), (ViewRule::ScalarInit, 4));
    assert_eq!(
        e.to_string(),
        "scalar slot at offset 4 reads the uninitialized byte at offset 5"
    );
}
