//! The same program built twice: the second build has extra, unrelated
//! constants (declared first, so every id shifts). Every allocation the two
//! builds share keeps its symbol.

#![allow(clippy::unwrap_used)] // A test that unwraps wants the panic.

use std::collections::BTreeMap;

use const_alloc::{Allocation, Interner, Root, SimpleGraph, Target};

/// The program's allocations, by name. A name stands for one rustc allocation;
/// its id is assigned per build.
#[derive(Default)]
struct Build {
    graph: SimpleGraph<u32>,
    ids: BTreeMap<&'static str, u32>,
    roots: Vec<Root<u32>>,
    next: u32,
}

impl Build {
    fn add(&mut self, name: &'static str, alloc: Allocation<u32>) -> u32 {
        let id = self.next;
        self.next += 1;
        self.graph.insert(id, alloc);
        self.ids.insert(name, id);
        id
    }

    /// An allocation holding one pointer to `to` plus `addend`.
    fn reference(&mut self, name: &'static str, to: &str, addend: i64) -> u32 {
        let to = self.ids[to];
        self.add(
            name,
            Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Alloc(to), addend),
        )
    }

    /// A const item or promoted, by the allocation of its value.
    fn constant(&mut self, root: u32) {
        self.roots.push(Root::Anonymous(root));
    }

    fn static_(&mut self, symbol: &str, alloc: u32) {
        self.roots.push(Root::Static {
            symbol: symbol.to_string(),
            alloc,
        });
    }
}

/// The program shared by both builds.
fn program(b: &mut Build) {
    // const PAIR: &(u32, u32) = &(3, 4);
    b.add("pair", Allocation::new([3, 0, 0, 0, 4, 0, 0, 0], 4));
    let r = b.reference("PAIR", "pair", 0);
    b.constant(r);
    // const SECOND: &u32 = &PAIR.1;  (points into the same allocation)
    let r = b.reference("SECOND", "pair", 4);
    b.constant(r);
    // A promoted `&42u8`.
    let p = b.add("promoted", Allocation::new([42], 1));
    b.constant(p);
    // const OPT: &Option<u32> = &Some(13);
    b.add("opt", Allocation::new([1, 0, 0, 0, 13, 0, 0, 0], 4));
    let r = b.reference("OPT", "opt", 0);
    b.constant(r);
    // static S: &[u32] = &[1, 2];  (fat pointer: data pointer + length)
    let data = b.add("slice", Allocation::new([1, 0, 0, 0, 2, 0, 0, 0], 4));
    let s = b.add(
        "S",
        Allocation::new([0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0], 8).with_pointer(
            0,
            8,
            Target::Alloc(data),
            0,
        ),
    );
    b.static_("S", s);
    // static mut COUNTERS: &mut [u32; 2] = &mut [0, 0];
    let m = b.add("counters", Allocation::new([0; 8], 4).mutable());
    let c = b.add(
        "COUNTERS",
        Allocation::new([0; 8], 8)
            .mutable()
            .with_pointer(0, 8, Target::Alloc(m), 0),
    );
    b.static_("COUNTERS", c);
    // static NEXT: &&S = &&S; (a chain through an anonymous allocation to a static)
    let inner = b.add(
        "to_s",
        Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Static("S".into()), 0),
    );
    let next = b.add(
        "NEXT",
        Allocation::new([0; 8], 8).with_pointer(0, 8, Target::Alloc(inner), 0),
    );
    b.static_("NEXT", next);
}

fn unrelated(b: &mut Build) {
    // Extra kernels' constants: new values, and one identical to PAIR's.
    let x = b.add(
        "extra_table",
        Allocation::new((0..64).collect::<Vec<u8>>(), 8),
    );
    b.constant(x);
    let y = b.add("extra_pair", Allocation::new([3, 0, 0, 0, 4, 0, 0, 0], 4));
    b.constant(y);
    let m = b.add("extra_mut", Allocation::new([0; 8], 4).mutable());
    let s = b.add(
        "EXTRA",
        Allocation::new([0; 8], 8)
            .mutable()
            .with_pointer(0, 8, Target::Alloc(m), 0),
    );
    b.static_("EXTRA", s);
}

#[test]
fn shared_allocations_keep_their_symbols_across_builds() {
    let mut one = Build::default();
    program(&mut one);

    let mut two = Build {
        next: 500,
        ..Build::default()
    };
    unrelated(&mut two); // declared first: every id of the program shifts
    program(&mut two);
    two.roots.reverse(); // and the roots come in another order

    let interner = Interner::new(8);
    let i1 = interner
        .intern(&one.graph, one.roots.clone())
        .expect("build one interns");
    let i2 = interner
        .intern(&two.graph, two.roots.clone())
        .expect("build two interns");

    assert_eq!(i1.allocations().count(), one.ids.len());
    for (name, &id1) in &one.ids {
        let id2 = two.ids[name];
        assert_ne!(id1, id2, "ids differ between the builds");
        let s1 = i1.symbol_of(id1).expect("reached");
        let s2 = i2.symbol_of(id2).expect("reached");
        assert_eq!(s1, s2, "{name} keeps its symbol");
    }
    // The extra pair is identical to PAIR's allocation and shares its global.
    assert_eq!(
        i2.global_of(two.ids["extra_pair"]),
        i2.global_of(two.ids["pair"])
    );
    // But the extra mutable array does not share the program's one.
    assert_ne!(
        i2.global_of(two.ids["extra_mut"]),
        i2.global_of(two.ids["counters"])
    );
    // Both references into `pair` point at the same global.
    let pair = i1.global_of(one.ids["pair"]).expect("reached");
    for r in ["PAIR", "SECOND"] {
        let g = i1.global(i1.global_of(one.ids[r]).expect("reached"));
        let slot = g.relocations().next().expect("a pointer");
        assert_eq!(slot.target, const_alloc::SlotTarget::Global(pair));
    }
}
