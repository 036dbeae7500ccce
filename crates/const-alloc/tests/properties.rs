//! Property tests: keys ignore ids and unrelated allocations, identical
//! immutable contents share a global while mutable ones never do, and neither
//! the order of the roots nor the order of the views changes anything.

#![allow(clippy::unwrap_used)] // A test that unwraps wants the panic.

use std::collections::{BTreeMap, BTreeSet};

use const_alloc::{
    Allocation, Chunk, GlobalId, InitMask, Interned, Interner, Mutability, Root, SimpleGraph,
    SimpleLayout, SlotTarget, Target,
};
use proptest::prelude::*;

const PS: u64 = 8;

/// One 8-byte slot of a generated allocation.
#[derive(Clone, Debug)]
enum SlotSpec {
    Data([u8; 8]),
    /// A pointer to allocation `target % n` (see [`build`] for how cycles are
    /// kept to statics).
    Ptr {
        target: usize,
        addend: i8,
    },
    /// A pointer to an external static.
    Extern {
        k: u8,
        addend: i8,
    },
}

#[derive(Clone, Debug)]
struct AllocSpec {
    slots: Vec<SlotSpec>,
    tail: Vec<u8>,
    init: Vec<bool>,
    align_log: u32,
    is_static: bool,
    mutable: bool,
    root: bool,
}

fn slot() -> impl Strategy<Value = SlotSpec> {
    prop_oneof![
        3 => any::<[u8; 8]>().prop_map(SlotSpec::Data),
        3 => (any::<usize>(), any::<i8>()).prop_map(|(target, addend)| SlotSpec::Ptr { target, addend }),
        1 => (0u8..3, any::<i8>()).prop_map(|(k, addend)| SlotSpec::Extern { k, addend }),
    ]
}

fn alloc_spec() -> impl Strategy<Value = AllocSpec> {
    (
        prop::collection::vec(slot(), 0..4),
        // Few distinct tails, so that identical contents are common.
        prop::collection::vec(0u8..3, 0..5),
        prop::collection::vec(prop::bool::weighted(0.9), 40),
        0u32..4,
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.7),
    )
        .prop_map(
            |(slots, tail, init, align_log, is_static, mutable, root)| AllocSpec {
                slots,
                tail,
                init,
                align_log,
                is_static,
                mutable,
                root,
            },
        )
}

fn graph_spec() -> impl Strategy<Value = Vec<AllocSpec>> {
    prop::collection::vec(alloc_spec(), 1..10)
}

/// Builds the graph of `spec`, naming allocation `k` with `id(k)` and statics
/// with `prefix`. Allocation `n + k` is an owner static added for each mutable
/// anonymous allocation `k`. A pointer from `i` to `j >= i` is kept only if `j`
/// is a static, so every cycle passes through a static.
fn build(
    spec: &[AllocSpec],
    id: impl Fn(usize) -> u32,
    prefix: &str,
    graph: &mut SimpleGraph<u32>,
    roots: &mut Vec<Root<u32>>,
) {
    let n = spec.len();
    for (i, a) in spec.iter().enumerate() {
        let mut bytes = Vec::new();
        let mut relocs = Vec::new();
        for (s, slot) in a.slots.iter().enumerate() {
            let offset = 8 * s as u64;
            match *slot {
                SlotSpec::Data(b) => bytes.extend_from_slice(&b),
                SlotSpec::Ptr { target, addend } => {
                    let j = target % n;
                    if j < i || spec[j].is_static {
                        bytes.extend_from_slice(&[0xEE; 8]);
                        relocs.push((offset, Target::Alloc(id(j)), i64::from(addend)));
                    } else {
                        bytes.extend_from_slice(&[j as u8; 8]);
                    }
                }
                SlotSpec::Extern { k, addend } => {
                    bytes.extend_from_slice(&[0xDD; 8]);
                    relocs.push((offset, Target::Static(format!("EXT{k}")), i64::from(addend)));
                }
            }
        }
        bytes.extend_from_slice(&a.tail);
        let len = bytes.len();
        let mut alloc = Allocation::new(bytes, 1 << a.align_log);
        alloc.init = InitMask::from_bools(a.init.iter().copied().cycle().take(len));
        for (offset, target, addend) in relocs {
            alloc = alloc.with_pointer(offset, PS, target, addend);
        }
        if a.mutable {
            alloc = alloc.mutable();
        }
        graph.insert(id(i), alloc);
        if a.is_static {
            roots.push(Root::Static {
                symbol: format!("{prefix}S{i}"),
                alloc: id(i),
            });
        } else if a.mutable {
            let owner = Allocation::new([0; 8], 8).with_pointer(0, PS, Target::Alloc(id(i)), 0);
            graph.insert(id(n + i), owner);
            roots.push(Root::Static {
                symbol: format!("{prefix}OWN{i}"),
                alloc: id(n + i),
            });
        } else if a.root {
            roots.push(Root::Anonymous(id(i)));
        }
    }
}

fn intern(graph: &SimpleGraph<u32>, roots: Vec<Root<u32>>) -> Interned<'_, u32> {
    match Interner::new(PS).intern(graph, roots) {
        Ok(i) => i,
        Err(e) => panic!("generated graphs always intern: {e}"),
    }
}

/// A global with its relocation targets as symbols, so that it compares
/// across results with different global numbering.
fn describe(i: &Interned<'_, u32>, g: GlobalId) -> String {
    let global = i.global(g);
    let mut out = format!(
        "{} key={} size={} align={} {:?} {:?}",
        global.symbol(),
        global.key(),
        global.size(),
        global.align(),
        global.mutability(),
        global.kind()
    );
    for c in global.chunks() {
        match c {
            Chunk::Bytes { offset, bytes } => out += &format!(" @{offset}={bytes:?}"),
            Chunk::Undef { offset, len } => out += &format!(" @{offset}=undef*{len}"),
            Chunk::Pointer(s) => {
                let target = match &s.target {
                    SlotTarget::Global(t) => i.global(*t).symbol().to_string(),
                    SlotTarget::Extern(symbol) => symbol.clone(),
                    SlotTarget::Function(symbol) => format!("fn {symbol}"),
                };
                out += &format!(" @{}=&{}+{}", s.offset, target, s.addend);
            }
        }
    }
    out
}

/// Whether anonymous allocation `k` reaches mutable anonymous memory through
/// anonymous allocations (itself included).
fn reaches_mutable(spec: &[AllocSpec], k: usize) -> bool {
    let n = spec.len();
    let mut seen = BTreeSet::new();
    let mut stack = vec![k];
    while let Some(i) = stack.pop() {
        if spec[i].is_static || !seen.insert(i) {
            continue;
        }
        if spec[i].mutable {
            return true;
        }
        for slot in &spec[i].slots {
            if let SlotSpec::Ptr { target, .. } = slot {
                let j = target % n;
                if j < i || spec[j].is_static {
                    stack.push(j);
                }
            }
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn keys_ignore_renumbering(
        (spec, perm) in graph_spec().prop_flat_map(|s| {
            let ids: Vec<u32> = (0..2 * s.len() as u32).map(|k| k * 7 + 3).collect();
            (Just(s), Just(ids).prop_shuffle())
        })
    ) {
        let (mut g1, mut r1) = (SimpleGraph::new(), Vec::new());
        build(&spec, |k| k as u32, "", &mut g1, &mut r1);
        let (mut g2, mut r2) = (SimpleGraph::new(), Vec::new());
        build(&spec, |k| perm[k], "", &mut g2, &mut r2);
        let i1 = intern(&g1, r1);
        let i2 = intern(&g2, r2);
        prop_assert!(i1.globals().eq(i2.globals()));
        let symbols: Vec<&str> = i1.globals().map(|g| g.symbol()).collect();
        prop_assert!(symbols.windows(2).all(|w| w[0] < w[1]), "globals in symbol order");
        for (a, g) in i1.allocations() {
            prop_assert_eq!(Some(g), i2.global_of(perm[a as usize]));
        }
    }

    #[test]
    fn keys_ignore_unrelated_allocations(spec in graph_spec(), other in graph_spec()) {
        let (mut g1, mut r1) = (SimpleGraph::new(), Vec::new());
        build(&spec, |k| k as u32, "", &mut g1, &mut r1);
        let i1 = intern(&g1, r1.clone());

        let (mut g2, mut r2) = (g1.clone(), r1);
        build(&other, |k| 100_000 + k as u32, "U", &mut g2, &mut r2);
        let i2 = intern(&g2, r2);
        for (a, g) in i1.allocations() {
            let g2 = i2.global_of(a).expect("still reached");
            prop_assert_eq!(describe(&i1, g), describe(&i2, g2));
        }
    }

    #[test]
    fn identical_immutable_share_mutable_never(spec in graph_spec()) {
        // Every anonymous allocation gets a twin at id + 1000 with the same
        // content; pointers to anonymous memory go to the twins, pointers to
        // statics stay. Every allocation is a root, so all are reached.
        let n = spec.len();
        let (mut g, mut roots) = (SimpleGraph::new(), Vec::new());
        build(&spec, |k| k as u32, "", &mut g, &mut roots);
        let twin = |k: usize| -> u32 {
            if k < n && spec[k].is_static { k as u32 } else { 1000 + k as u32 }
        };
        for (k, a) in spec.iter().enumerate() {
            if a.is_static {
                continue;
            }
            let mut copy = g.allocation(k as u32).cloned().expect("built");
            for r in &mut copy.relocations {
                if let Target::Alloc(t) = r.target {
                    r.target = Target::Alloc(twin(t as usize));
                }
            }
            g.insert(twin(k), copy);
            if a.mutable {
                let owner = Allocation::new([0; 8], 8).with_pointer(0, PS, Target::Alloc(twin(k)), 0);
                g.insert(5000 + k as u32, owner);
                roots.push(Root::Static { symbol: format!("TWIN_OWN{k}"), alloc: 5000 + k as u32 });
            } else {
                roots.push(Root::Anonymous(k as u32));
                roots.push(Root::Anonymous(twin(k)));
            }
        }
        let i = intern(&g, roots);
        let mut holders: BTreeMap<GlobalId, usize> = BTreeMap::new();
        for (_, gid) in i.allocations() {
            *holders.entry(gid).or_default() += 1;
        }
        for (k, a) in spec.iter().enumerate() {
            if a.is_static {
                continue;
            }
            let (g1, g2) = (i.global_of(k as u32), i.global_of(twin(k)));
            prop_assert!(g1.is_some() && g2.is_some());
            if a.mutable {
                prop_assert_ne!(g1, g2);
                prop_assert_eq!(holders[&g1.unwrap()], 1);
                prop_assert_eq!(i.global(g1.unwrap()).mutability(), Mutability::Mutable);
            } else if reaches_mutable(&spec, k) {
                // Pointing at distinct mutable memory makes the contents differ.
                prop_assert_ne!(g1, g2);
            } else {
                prop_assert_eq!(g1, g2);
            }
        }
    }

    #[test]
    fn order_of_roots_and_views_does_not_matter(
        (spec, seed) in graph_spec().prop_flat_map(|s| (Just(s), any::<u64>()))
    ) {
        let (mut g, mut roots) = (SimpleGraph::new(), Vec::new());
        build(&spec, |k| k as u32, "", &mut g, &mut roots);
        let i1 = intern(&g, roots.clone());
        let mut shuffled = roots.clone();
        shuffle(&mut shuffled, seed);
        shuffled.extend(roots.iter().take(2).cloned()); // repeats are harmless
        let i2 = intern(&g, shuffled);
        prop_assert_eq!(&i1, &i2);

        let layouts = [
            SimpleLayout::int(1),
            SimpleLayout::int(2),
            SimpleLayout::int(4),
            SimpleLayout::int(8),
            SimpleLayout::bool(),
            SimpleLayout::pointer(PS),
            SimpleLayout::new(16, 8).pointer_at(0).scalar(8, 4, const_alloc::Validity::Any),
        ];
        let mut requests = Vec::new();
        for (k, global) in i1.globals().enumerate() {
            for offset in 0..=global.size() {
                for l in 0..layouts.len() {
                    requests.push((GlobalId(k as u32), offset, l));
                }
            }
        }
        let ask = |i: &Interned<'_, u32>, reqs: &[(GlobalId, u64, usize)]| {
            reqs.iter().map(|&(g, o, l)| ((g, o, l), i.view(g, o, &layouts[l]))).collect::<BTreeMap<_, _>>()
        };
        let forward = ask(&i1, &requests);
        shuffle(&mut requests, seed ^ 0x9E37_79B9);
        let backward = ask(&i2, &requests);
        prop_assert_eq!(&forward, &backward);
        for ((g, _, _), result) in &forward {
            if let Ok(view) = result {
                prop_assert_eq!(view.global, *g);
            }
        }
        prop_assert_eq!(&i1, &intern(&g, roots));
    }
}

/// A small deterministic shuffle, so the orders differ from run to run of the
/// generator but not within one case.
fn shuffle<T>(v: &mut [T], mut seed: u64) {
    for i in (1..v.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.swap(i, (seed >> 33) as usize % (i + 1));
    }
}
