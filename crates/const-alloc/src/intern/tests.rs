//! One test per interning rule, each rejection included.

#![allow(clippy::unwrap_used)] // A test that unwraps wants the panic.

use crate::{
    Allocation, Chunk, GlobalKind, InitMask, InternError, Interned, Interner, Key, Mutability,
    Root, SimpleGraph, SlotTarget, Target,
};

const PS: u64 = 8;

fn intern<'g>(
    graph: &'g SimpleGraph<u32>,
    roots: impl IntoIterator<Item = Root<u32>>,
) -> Result<Interned<'g, u32>, InternError<u32>> {
    Interner::new(PS).intern(graph, roots)
}

fn anon(ids: &[u32]) -> Vec<Root<u32>> {
    ids.iter().map(|&id| Root::Anonymous(id)).collect()
}

fn stat(symbol: &str, alloc: u32) -> Root<u32> {
    Root::Static {
        symbol: symbol.to_string(),
        alloc,
    }
}

fn data(bytes: &[u8]) -> Allocation<u32> {
    Allocation::new(bytes, 4)
}

fn ptr_to(target: u32, addend: i64) -> Allocation<u32> {
    Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Alloc(target), addend)
}

/// The content key of the single allocation `id` interned alone.
fn key_of(graph: &SimpleGraph<u32>, id: u32) -> Key {
    let interned = intern(graph, anon(&[id])).expect("interns");
    interned
        .global(interned.global_of(id).expect("reached"))
        .key()
}

fn single(alloc: Allocation<u32>) -> Key {
    let mut g = SimpleGraph::new();
    g.insert(0, alloc);
    key_of(&g, 0)
}

fn is_nvvm_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

// ---- Content keys ----

#[test]
fn key_covers_alignment_bytes_init_and_relocations() {
    let base = single(data(&[1, 2, 3, 4]));
    assert_eq!(base, single(data(&[1, 2, 3, 4])));
    assert_ne!(base, single(Allocation::new([1, 2, 3, 4], 8)), "alignment");
    assert_ne!(base, single(data(&[1, 2, 3, 5])), "bytes");
    assert_ne!(base, single(data(&[1, 2, 3])), "length");
    assert_ne!(
        base,
        single(data(&[1, 2, 3, 4]).with_uninit(3..4)),
        "init mask"
    );

    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(1, data(&[2]));
    g.insert(10, ptr_to(0, 0));
    g.insert(11, ptr_to(0, 1));
    g.insert(12, ptr_to(1, 0));
    g.insert(
        13,
        Allocation::new([0; 16], 8).with_pointer(8, 8, Target::Alloc(0), 0),
    );
    let keys: Vec<Key> = [10, 11, 12, 13].iter().map(|&id| key_of(&g, id)).collect();
    for i in 0..keys.len() {
        for j in i + 1..keys.len() {
            assert_ne!(keys[i], keys[j], "addend, target key and offset all count");
        }
    }
}

#[test]
fn key_ignores_uninit_values_and_bytes_under_pointers() {
    let a = single(data(&[1, 0xAA, 3, 4]).with_uninit(1..2));
    let b = single(data(&[1, 0xBB, 3, 4]).with_uninit(1..2));
    assert_eq!(a, b);

    let mut g = SimpleGraph::new();
    g.insert(0, data(&[9]));
    g.insert(
        1,
        Allocation::new([0x11; 8], 8).with_pointer(0, 8, Target::Alloc(0), 0),
    );
    g.insert(
        2,
        Allocation::new([0x22; 8], 8).with_pointer(0, 8, Target::Alloc(0), 0),
    );
    // Marking the pointer's bytes uninitialized changes nothing either.
    g.insert(
        3,
        Allocation::new([0; 8], 8)
            .with_pointer(0, 8, Target::Alloc(0), 0)
            .with_uninit(0..8),
    );
    assert_eq!(key_of(&g, 1), key_of(&g, 2));
    assert_eq!(key_of(&g, 1), key_of(&g, 3));
}

#[test]
fn key_ignores_ids_and_relocation_order() {
    let mut g1 = SimpleGraph::new();
    g1.insert(0, data(&[5]));
    g1.insert(1, data(&[6]));
    g1.insert(
        2,
        Allocation::new([0; 16], 8)
            .with_pointer(0, 8, Target::Alloc(0), 0)
            .with_pointer(8, 8, Target::Alloc(1), 0),
    );
    let mut g2 = SimpleGraph::new();
    g2.insert(70, data(&[6]));
    g2.insert(90, data(&[5]));
    g2.insert(
        3,
        Allocation::new([0; 16], 8)
            .with_pointer(8, 8, Target::Alloc(70), 0)
            .with_pointer(0, 8, Target::Alloc(90), 0),
    );
    assert_eq!(key_of(&g1, 2), key_of(&g2, 3));
}

#[test]
fn static_enters_keys_by_symbol() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(1, ptr_to(0, 0));
    g.insert(
        2,
        Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Static("S".into()), 0),
    );
    let i = intern(&g, [stat("S", 0), Root::Anonymous(1), Root::Anonymous(2)]).expect("interns");
    // A pointer to the static's allocation and a pointer to its symbol are the same.
    assert_eq!(i.global_of(1), i.global_of(2));
    assert_eq!(i.symbol_of(0), Some("S"));

    // Changing the static's content does not change its referrers' keys.
    let mut g2 = g.clone();
    g2.insert(0, data(&[2]));
    let i2 = intern(&g2, [stat("S", 0), Root::Anonymous(1)]).expect("interns");
    assert_eq!(i.symbol_of(1), i2.symbol_of(1));
    // Renaming the static does.
    let i3 = intern(&g, [stat("T", 0), Root::Anonymous(1)]).expect("interns");
    assert_ne!(i.symbol_of(1), i3.symbol_of(1));
}

#[test]
fn extern_static_is_a_slot_target() {
    let mut g = SimpleGraph::new();
    g.insert(
        0,
        Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Static("EXT".into()), 4),
    );
    let i = intern(&g, anon(&[0])).expect("interns");
    let slot = i
        .global(i.global_of(0).unwrap())
        .relocations()
        .next()
        .cloned()
        .unwrap();
    assert_eq!(slot.target, SlotTarget::Extern("EXT".into()));
    assert_eq!(slot.addend, 4);
}

/// A table of two function pointers.
fn fn_table(first: &str, second: &str) -> Allocation<u32> {
    Allocation::new([0; 16], 8)
        .with_pointer(0, 8, Target::Function(first.into()), 0)
        .with_pointer(8, 8, Target::Function(second.into()), 0)
}

#[test]
fn function_pointers_are_slot_targets_keyed_by_symbol() {
    let mut g = SimpleGraph::new();
    g.insert(0, fn_table("square", "triple"));
    g.insert(1, fn_table("square", "triple"));
    g.insert(2, fn_table("triple", "square"));
    // Same bytes, but a static's pointer to `square` is not a function's.
    g.insert(
        3,
        Allocation::new([0; 16], 8)
            .with_pointer(0, 8, Target::Static("square".into()), 0)
            .with_pointer(8, 8, Target::Function("triple".into()), 0),
    );
    let i = intern(&g, anon(&[0, 1, 2, 3])).expect("interns");
    // The same functions in the same order: one global.
    assert_eq!(i.global_of(0), i.global_of(1));
    assert_ne!(i.global_of(0), i.global_of(2));
    assert_ne!(i.global_of(0), i.global_of(3));
    let slots: Vec<SlotTarget> = i
        .global(i.global_of(2).expect("interned"))
        .relocations()
        .map(|r| r.target.clone())
        .collect();
    assert_eq!(
        slots,
        [
            SlotTarget::Function("triple".into()),
            SlotTarget::Function("square".into())
        ]
    );
}

#[test]
fn cycle_through_a_static_is_fine() {
    // static S: &A, A: &S.
    let mut g = SimpleGraph::new();
    g.insert(0, ptr_to(1, 0));
    g.insert(1, ptr_to(0, 0));
    let i = intern(&g, [stat("S", 0)]).expect("cycles through statics are fine");
    let s = i.global_of(0).unwrap();
    let a = i.global_of(1).unwrap();
    let target = |g| i.global(g).relocations().next().unwrap().target.clone();
    assert_eq!(target(s), SlotTarget::Global(a));
    assert_eq!(target(a), SlotTarget::Global(s));
    // Self-reference of a static, too.
    let mut g = SimpleGraph::new();
    g.insert(0, ptr_to(0, 0));
    assert!(intern(&g, [stat("S", 0)]).is_ok());
}

#[test]
fn anonymous_cycle_is_an_error() {
    let mut g = SimpleGraph::new();
    g.insert(0, ptr_to(1, 0));
    g.insert(1, ptr_to(2, 0));
    g.insert(2, ptr_to(0, 0));
    g.insert(3, ptr_to(0, 0));
    match intern(&g, anon(&[3])) {
        Err(InternError::AnonymousCycle { mut cycle }) => {
            cycle.sort();
            assert_eq!(cycle, [0, 1, 2]);
        }
        other => panic!("expected a cycle, got {other:?}"),
    }
    // Even with a static elsewhere on the way in.
    assert!(matches!(
        intern(&g, [stat("S", 3)]),
        Err(InternError::AnonymousCycle { .. })
    ));
    // And a self-loop.
    let mut g = SimpleGraph::new();
    g.insert(7, ptr_to(7, 0));
    assert_eq!(
        intern(&g, anon(&[7])),
        Err(InternError::AnonymousCycle { cycle: vec![7] })
    );
}

#[test]
fn deep_chain_does_not_recurse() {
    let mut g = SimpleGraph::new();
    let n = 50_000;
    g.insert(0, data(&[1]));
    for id in 1..n {
        g.insert(id, ptr_to(id - 1, 0));
    }
    let i = intern(&g, anon(&[n - 1])).expect("interns");
    assert_eq!(i.globals().len(), n as usize);
}

// ---- Interning ----

#[test]
fn identical_immutable_contents_share_one_global() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[3, 0, 0, 0]));
    g.insert(1, data(&[3, 0, 0, 0]));
    g.insert(2, ptr_to(0, 0));
    g.insert(3, ptr_to(1, 0));
    g.insert(4, data(&[4, 0, 0, 0]));
    let i = intern(&g, anon(&[2, 3, 4])).expect("interns");
    assert_eq!(i.globals().len(), 3);
    assert_eq!(i.global_of(0), i.global_of(1));
    assert_eq!(i.global_of(2), i.global_of(3));
    assert_ne!(i.global_of(0), i.global_of(4));
    // Every reference into the allocation points at its global.
    let p = i.global(i.global_of(2).unwrap());
    assert_eq!(p.kind(), &GlobalKind::Constant);
    let slot = p.relocations().next().unwrap();
    assert_eq!(slot.target, SlotTarget::Global(i.global_of(0).unwrap()));
}

#[test]
fn globals_are_in_symbol_order_and_findable() {
    let mut g = SimpleGraph::new();
    for id in 0..20 {
        g.insert(id, data(&[id as u8]));
    }
    let i = intern(&g, anon(&(0..20).collect::<Vec<_>>())).expect("interns");
    let symbols: Vec<&str> = i.globals().map(|g| g.symbol()).collect();
    assert!(symbols.windows(2).all(|w| w[0] < w[1]));
    for (index, s) in symbols.iter().enumerate() {
        assert_eq!(i.find(s).map(|g| g.index()), Some(index));
    }
    assert_eq!(i.find("nope"), None);
}

#[test]
fn symbols_are_prefix_plus_hex_and_valid_identifiers() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1, 2]));
    g.insert(1, Allocation::new([0; 8], 8).mutable());
    g.insert(2, ptr_to(1, 0).mutable());
    let i = intern(&g, [Root::Anonymous(0), stat("S", 2)]).expect("interns");
    let c = i.global(i.global_of(0).unwrap());
    assert_eq!(c.symbol(), format!("__const_{}", c.key().to_hex()));
    let m = i.global(i.global_of(1).unwrap());
    assert!(m.symbol().starts_with("__const_mut_"));
    assert_eq!(m.symbol().len(), "__const_mut_".len() + 64);
    for g in i.globals() {
        assert!(is_nvvm_identifier(g.symbol()), "{}", g.symbol());
        assert!(!g.symbol().contains('.'));
    }
}

#[test]
fn mutable_anonymous_memory_is_never_merged() {
    // Two statics, each owning an identical mutable array, and one static
    // owning two identical mutable arrays.
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new([0; 8], 4).mutable());
    g.insert(1, Allocation::new([0; 8], 4).mutable());
    g.insert(2, Allocation::new([0; 8], 4).mutable());
    g.insert(3, Allocation::new([0; 8], 4).mutable());
    g.insert(10, ptr_to(0, 0).mutable());
    g.insert(11, ptr_to(1, 0).mutable());
    g.insert(
        12,
        Allocation::new([0; 16], 8)
            .mutable()
            .with_pointer(0, 8, Target::Alloc(2), 0)
            .with_pointer(8, 8, Target::Alloc(3), 0),
    );
    let i = intern(&g, [stat("A", 10), stat("B", 11), stat("C", 12)]).expect("interns");
    let ids: Vec<_> = (0..4).map(|a| i.global_of(a).unwrap()).collect();
    for x in 0..4 {
        for y in x + 1..4 {
            assert_ne!(ids[x], ids[y]);
        }
    }
    // They keep one content key, and are named after owner and path.
    let m = |a| i.global(i.global_of(a).unwrap());
    assert_eq!(m(0).key(), m(1).key());
    assert_eq!(
        m(3).kind(),
        &GlobalKind::MutableAnonymous {
            owner: "C".into(),
            path: vec![8]
        }
    );
    assert_eq!(m(3).mutability(), Mutability::Mutable);
    // And the statics that point at them stay apart too.
    assert_ne!(i.global_of(10), i.global_of(11));
}

#[test]
fn mutable_symbol_depends_only_on_content_owner_and_path() {
    let build = |extra: bool| {
        let mut g = SimpleGraph::new();
        g.insert(5, Allocation::new([1, 2, 3, 4], 4).mutable());
        g.insert(6, ptr_to(5, 0).mutable());
        let mut roots = vec![stat("OWNER", 6)];
        if extra {
            g.insert(1, Allocation::new([1, 2, 3, 4], 4).mutable());
            g.insert(2, ptr_to(1, 0).mutable());
            roots.push(stat("OTHER", 2));
        }
        let i = intern(&g, roots).expect("interns");
        i.symbol_of(5).unwrap().to_string()
    };
    assert_eq!(build(false), build(true));
}

#[test]
fn mutable_owner_is_the_least_path() {
    // B (static) and A (static) both reach the mutable M; the owner is the
    // shortest path, ties broken by symbol: A at depth 1 wins over B at depth 2,
    // and Z at depth 1 loses to A on the symbol.
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new([0; 4], 4).mutable());
    g.insert(1, ptr_to(0, 0)); // anonymous, immutable
    g.insert(10, ptr_to(1, 0)); // B -> 1 -> M
    g.insert(
        11,
        Allocation::new([0; 16], 8).with_pointer(8, 8, Target::Alloc(0), 0),
    ); // A -> M
    g.insert(12, ptr_to(0, 0)); // Z -> M
    let i = intern(&g, [stat("B", 10), stat("Z", 12), stat("A", 11)]).expect("interns");
    assert_eq!(
        i.global(i.global_of(0).unwrap()).kind(),
        &GlobalKind::MutableAnonymous {
            owner: "A".into(),
            path: vec![8]
        }
    );
}

#[test]
fn immutable_memory_pointing_at_distinct_mutable_memory_is_not_merged() {
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new([0; 4], 4).mutable());
    g.insert(1, Allocation::new([0; 4], 4).mutable());
    g.insert(2, ptr_to(0, 0));
    g.insert(3, ptr_to(1, 0));
    g.insert(10, ptr_to(2, 0));
    g.insert(11, ptr_to(3, 0));
    let i = intern(&g, [stat("A", 10), stat("B", 11)]).expect("interns");
    assert_ne!(i.global_of(2), i.global_of(3));
}

#[test]
fn mutable_without_owner_is_an_error() {
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new([0; 4], 4).mutable());
    g.insert(1, ptr_to(0, 0));
    assert_eq!(
        intern(&g, anon(&[1])),
        Err(InternError::MutableWithoutOwner { alloc: 0 })
    );
    assert_eq!(
        intern(&g, anon(&[0])),
        Err(InternError::MutableWithoutOwner { alloc: 0 })
    );
    // As a static it is fine.
    assert!(intern(&g, [stat("M", 0)]).is_ok());
}

#[test]
fn statics_are_never_merged() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(1, data(&[1]));
    g.insert(2, data(&[1]));
    let i = intern(&g, [stat("X", 0), stat("Y", 1), Root::Anonymous(2)]).expect("interns");
    assert_eq!(i.globals().len(), 3);
    assert_eq!(i.symbol_of(0), Some("X"));
    assert_eq!(
        i.global(i.global_of(0).unwrap()).kind(),
        &GlobalKind::Static
    );
    // A root given as both static and anonymous is the static.
    let i = intern(&g, [stat("X", 0), Root::Anonymous(0)]).expect("interns");
    assert_eq!(i.globals().len(), 1);
}

#[test]
fn initializer_is_bytes_undef_and_pointers() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[7]));
    let mut a = Allocation::new((0..24).collect::<Vec<u8>>(), 8)
        .with_pointer(8, 8, Target::Alloc(0), 3)
        .with_uninit(20..24);
    a.init.set(2..4, false);
    g.insert(1, a);
    let i = intern(&g, anon(&[1])).expect("interns");
    let gl = i.global(i.global_of(1).unwrap());
    let target = SlotTarget::Global(i.global_of(0).unwrap());
    assert_eq!(
        gl.chunks(),
        [
            Chunk::Bytes {
                offset: 0,
                bytes: &[0, 1][..]
            },
            Chunk::Undef { offset: 2, len: 2 },
            Chunk::Bytes {
                offset: 4,
                bytes: &[4, 5, 6, 7][..]
            },
            Chunk::Pointer(crate::RelocSlot {
                offset: 8,
                size: 8,
                target,
                addend: 3
            }),
            Chunk::Bytes {
                offset: 16,
                bytes: &[16, 17, 18, 19][..]
            },
            Chunk::Undef { offset: 20, len: 4 },
        ]
    );
    assert_eq!(
        (gl.size(), gl.align(), gl.mutability()),
        (24, 8, Mutability::Immutable)
    );
    // Chunks cover the global exactly.
    let mut end = 0;
    for c in gl.chunks() {
        assert_eq!(c.range().start, end);
        end = c.range().end;
    }
    assert_eq!(end, 24);
}

#[test]
fn unreached_allocations_are_left_out() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(1, data(&[2]));
    let i = intern(&g, anon(&[0])).expect("interns");
    assert_eq!(i.globals().len(), 1);
    assert_eq!(i.global_of(1), None);
    assert_eq!(i.allocations().collect::<Vec<_>>().len(), 1);
}

// ---- Rejections ----

#[test]
fn rejects_unknown_root_and_dangling_relocation() {
    let mut g = SimpleGraph::new();
    g.insert(0, ptr_to(9, 0));
    assert_eq!(
        intern(&g, anon(&[5])),
        Err(InternError::UnknownRoot { alloc: 5 })
    );
    assert_eq!(
        intern(&g, anon(&[0])),
        Err(InternError::DanglingRelocation {
            alloc: 0,
            offset: 0,
            target: 9
        })
    );
}

#[test]
fn rejects_bad_alignment_and_init_mask() {
    let mut g = SimpleGraph::new();
    g.insert(0, Allocation::new([0; 4], 3));
    assert_eq!(
        intern(&g, anon(&[0])),
        Err(InternError::InvalidAlign { alloc: 0, align: 3 })
    );
    g.insert(0, Allocation::new([0; 4], 0));
    assert_eq!(
        intern(&g, anon(&[0])),
        Err(InternError::InvalidAlign { alloc: 0, align: 0 })
    );
    let mut a = data(&[0; 4]);
    a.init = InitMask::new(5, true);
    g.insert(0, a);
    assert_eq!(
        intern(&g, anon(&[0])),
        Err(InternError::InitMaskLength {
            alloc: 0,
            bytes: 4,
            mask: 5
        })
    );
}

#[test]
fn rejects_relocation_that_is_not_pointer_sized() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(
        1,
        Allocation::new([0; 8], 8).with_pointer(0, 4, Target::Alloc(0), 0),
    );
    assert_eq!(
        intern(&g, anon(&[1])),
        Err(InternError::RelocationSize {
            alloc: 1,
            offset: 0,
            size: 4,
            pointer_size: 8
        })
    );
}

#[test]
fn rejects_misaligned_relocation() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(
        1,
        Allocation::new([0; 16], 8).with_pointer(4, 8, Target::Alloc(0), 0),
    );
    assert_eq!(
        intern(&g, anon(&[1])),
        Err(InternError::MisalignedRelocation {
            alloc: 1,
            offset: 4,
            pointer_size: 8
        })
    );
}

#[test]
fn rejects_relocation_outside_the_allocation() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(
        1,
        Allocation::new([0; 12], 8).with_pointer(8, 8, Target::Alloc(0), 0),
    );
    assert_eq!(
        intern(&g, anon(&[1])),
        Err(InternError::RelocationOutOfBounds {
            alloc: 1,
            offset: 8,
            size: 8,
            alloc_size: 12
        })
    );
    g.insert(
        1,
        Allocation::new([0; 12], 8).with_pointer(u64::MAX - 7, 8, Target::Alloc(0), 0),
    );
    assert!(matches!(
        intern(&g, anon(&[1])),
        Err(InternError::RelocationOutOfBounds { .. })
    ));
}

#[test]
fn rejects_overlapping_relocations() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(
        1,
        Allocation::new([0; 16], 8)
            .with_pointer(8, 8, Target::Alloc(0), 0)
            .with_pointer(8, 8, Target::Alloc(0), 1),
    );
    assert_eq!(
        intern(&g, anon(&[1])),
        Err(InternError::OverlappingRelocations {
            alloc: 1,
            offset: 8,
            previous: 8
        })
    );
    // Overlap is checked with the interner's pointer size, whatever the order.
    let i4 = Interner::new(4);
    g.insert(
        1,
        Allocation::new([0; 16], 8)
            .with_pointer(4, 4, Target::Alloc(0), 0)
            .with_pointer(0, 4, Target::Alloc(0), 0),
    );
    assert!(i4.intern(&g, anon(&[1])).is_ok());
}

#[test]
fn rejects_clashing_statics() {
    let mut g = SimpleGraph::new();
    g.insert(0, data(&[1]));
    g.insert(1, data(&[2]));
    assert_eq!(
        intern(&g, [stat("S", 1), stat("S", 0)]),
        Err(InternError::StaticSymbolClash {
            symbol: "S".into(),
            first: 0,
            second: 1
        })
    );
    assert_eq!(
        intern(&g, [stat("T", 0), stat("S", 0)]),
        Err(InternError::StaticAllocTwice {
            alloc: 0,
            first: "S".into(),
            second: "T".into()
        })
    );
    for bad in ["", "__const_x"] {
        assert_eq!(
            intern(&g, [stat(bad, 0)]),
            Err(InternError::InvalidStaticSymbol { symbol: bad.into() })
        );
    }
}

#[test]
fn errors_name_the_allocation_and_offset() {
    let e: InternError<u32> = InternError::MisalignedRelocation {
        alloc: 3,
        offset: 4,
        pointer_size: 8,
    };
    assert_eq!(
        e.to_string(),
        "allocation 3: the pointer at offset 4 is not aligned to 8"
    );
}

#[test]
#[should_panic(expected = "not a power of two")]
fn pointer_size_must_be_a_power_of_two() {
    let _ = Interner::new(6);
}
