//! Trait objects: each concrete type made an object gets one read-only
//! vtable global holding the methods called through objects of its trait,
//! a method reached only through a vtable is lowered, and what cannot work
//! on a device is refused by name.

mod common;

use device_ir::{InstData, RelocTarget};
use mir_lower::{GlobalOrigin, Lowered};

const SHAPES: &str = r#"use crate::gpu::*;

pub trait Shape {
    fn area(&self) -> f32;
    fn corners(&self) -> u32 {
        4
    }
    fn perimeter(&self) -> f32;
}

pub struct Sq(pub f32);
pub struct Tri(pub f32);

impl Shape for Sq {
    fn area(&self) -> f32 {
        self.0 * self.0
    }
    fn perimeter(&self) -> f32 {
        4.0 * self.0
    }
}

impl Shape for Tri {
    fn area(&self) -> f32 {
        self.0 * 0.5
    }
    fn corners(&self) -> u32 {
        3
    }
    fn perimeter(&self) -> f32 {
        3.0 * self.0
    }
}

#[inline(never)]
fn score(s: &dyn Shape) -> f32 {
    s.area() + s.corners() as f32
}

#[inline(never)]
fn again(s: &dyn Shape) -> f32 {
    s.area()
}

#[unsafe(no_mangle)]
pub extern "C" fn k(xs: &[f32], out: DisjointSlice<f32>) {
    let i = global_idx_x() as usize;
    if i < xs.len() && i < out.len() {
        let sq = Sq(xs[i]);
        let tri = Tri(xs[i]);
        let s: &dyn Shape = if i % 2 == 0 { &sq } else { &tri };
        out.set(i, score(s) + again(&sq));
    }
}
"#;

/// A vtable: its symbol, its size, and the functions it holds by offset.
type Vtable = (String, u64, Vec<(u64, String)>);

/// Each vtable of the module, ordered by the functions it holds.
fn vtables(l: &Lowered) -> Vec<Vtable> {
    let m = &l.module;
    let mut out = Vec::new();
    for (id, g) in m.globals.iter() {
        let Some(init) = &g.init else { continue };
        let mut fns: Vec<(u64, String)> = init
            .relocations
            .iter()
            .filter_map(|r| match r.target {
                RelocTarget::Func(f) => Some((r.offset, m.functions[f].name.clone())),
                RelocTarget::Global(_) => None,
            })
            .collect();
        if fns.is_empty() {
            continue;
        }
        assert_eq!(l.origins.get(&id), Some(&GlobalOrigin::Constant));
        assert!(!g.mutable, "{} is writable", g.symbol);
        fns.sort();
        out.push((g.symbol.clone(), g.size, fns));
    }
    out.sort_by(|a, b| a.2.cmp(&b.2));
    out
}

#[test]
fn each_concrete_type_gets_one_vtable_of_the_methods_called_through_objects() {
    let l = common::lower_source("trait-objects", SHAPES).unwrap_or_else(|d| panic!("{d}"));
    let tables = vtables(&l);
    // `Sq` is made an object twice (in `k`, for `score` and for `again`):
    // one global. `perimeter` is called through no object: in no vtable,
    // and not lowered at all. The header is three pointers; `area` and
    // `corners` follow, sorted.
    let held: Vec<Vec<(u64, String)>> = tables.iter().map(|t| t.2.clone()).collect();
    assert_eq!(held.len(), 2, "{tables:?}");
    assert_eq!(tables.iter().map(|t| t.1).collect::<Vec<_>>(), [40, 40]);
    assert_eq!(held[0][0], (24, "kernel__Sq_as_Shape__area".to_string()));
    // `Sq` takes the default `corners`: a shim rustc inlined it into.
    assert!(held[0][1].1.contains("__dep_call_corners_"), "{held:?}");
    assert_eq!(
        held[1],
        [
            (24, "kernel__Tri_as_Shape__area".to_string()),
            (32, "kernel__Tri_as_Shape__corners".to_string())
        ]
    );
    let names: Vec<&str> = l
        .module
        .functions
        .values()
        .map(|f| f.name.as_str())
        .collect();
    assert!(!names.iter().any(|n| n.contains("perimeter")), "{names:?}");
    // The call through the object loads the slot and calls it.
    let f = l.module.function_by_name("kernel__score").expect("score");
    let body = l.module.functions[f].body.as_ref().expect("body");
    let indirect = body
        .insts
        .values()
        .filter(|i| matches!(i, InstData::CallIndirect { .. }))
        .count();
    assert_eq!(indirect, 2);
}

#[test]
fn an_upcast_reads_the_supertrait_vtable_from_the_subtrait_vtable() {
    let source = r#"use crate::gpu::*;

pub trait Shape {
    fn area(&self) -> f32;
}
pub trait Named: Shape {
    fn id(&self) -> u32;
}
pub struct Sq(pub f32);
impl Shape for Sq {
    fn area(&self) -> f32 {
        self.0 * self.0
    }
}
impl Named for Sq {
    fn id(&self) -> u32 {
        1
    }
}

#[inline(never)]
fn up(n: &dyn Named) -> f32 {
    let s: &dyn Shape = n;
    s.area() + n.id() as f32
}

#[unsafe(no_mangle)]
pub extern "C" fn k(out: DisjointSlice<f32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        out.set(i, up(&Sq(i as f32)));
    }
}
"#;
    let l = common::lower_source("trait-objects-upcast", source).unwrap_or_else(|d| panic!("{d}"));
    let m = &l.module;
    // `Sq`'s `Named` vtable: the header, `id`, then `Sq`'s `Shape` vtable,
    // which holds `area` (the only method called through a `dyn Shape`).
    let named = m
        .globals
        .values()
        .find(|g| g.size == 40)
        .unwrap_or_else(|| panic!("no 40-byte vtable:\n{m}"));
    let init = named.init.as_ref().expect("initialized");
    let mut slots: Vec<(u64, &RelocTarget)> = init
        .relocations
        .iter()
        .map(|r| (r.offset, &r.target))
        .collect();
    slots.sort_by_key(|s| s.0);
    let [
        (24, RelocTarget::Func(id)),
        (32, RelocTarget::Global(shape)),
    ] = slots[..]
    else {
        panic!("{slots:?}\n{m}");
    };
    assert_eq!(m.functions[*id].name, "kernel__Sq_as_Named__id");
    let shape = &m.globals[*shape];
    assert!(!shape.mutable);
    let held: Vec<String> = shape
        .init
        .as_ref()
        .expect("initialized")
        .relocations
        .iter()
        .filter_map(|r| match r.target {
            RelocTarget::Func(f) => Some(m.functions[f].name.clone()),
            RelocTarget::Global(_) => None,
        })
        .collect();
    assert_eq!(held, ["kernel__Sq_as_Shape__area"]);
}

#[test]
fn a_constant_trait_object_shares_the_vtable_the_code_makes() {
    let source = r#"use crate::gpu::*;

pub trait Shape {
    fn area(&self) -> f32;
}
pub struct Sq(pub f32);
impl Shape for Sq {
    fn area(&self) -> f32 {
        self.0 * self.0
    }
}

const FIXED: &[&dyn Shape] = &[&Sq(2.0), &Sq(3.0)];

#[inline(never)]
fn area(s: &dyn Shape) -> f32 {
    s.area()
}

#[unsafe(no_mangle)]
pub extern "C" fn k(out: DisjointSlice<f32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        let here = Sq(i as f32);
        out.set(i, area(&here) + area(FIXED[i % 2]));
    }
}
"#;
    let l =
        common::lower_source("trait-objects-constant", source).unwrap_or_else(|d| panic!("{d}"));
    // One vtable for `Sq`, which the constant's pointers and the code's
    // coercion share.
    let tables = vtables(&l);
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert_eq!(tables[0].2, [(24, "kernel__Sq_as_Shape__area".to_string())]);
    let vtable = &tables[0].0;
    let m = &l.module;
    let pointing: Vec<&str> = m
        .globals
        .values()
        .filter(|g| {
            g.init.as_ref().is_some_and(|i| {
                i.relocations.iter().any(|r| match r.target {
                    RelocTarget::Global(t) => m.globals[t].symbol == *vtable,
                    RelocTarget::Func(_) => false,
                })
            })
        })
        .map(|g| g.symbol.as_str())
        .collect();
    assert_eq!(pointing.len(), 1, "the constant's table: {pointing:?}\n{m}");
    // Made an object only in the constant: its method is reached through
    // the constant's vtable.
    let only = source.replace("area(&here) + ", "");
    let l = common::lower_source("trait-objects-constant-only", &only)
        .unwrap_or_else(|d| panic!("{d}"));
    let tables = vtables(&l);
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert_eq!(tables[0].2, [(24, "kernel__Sq_as_Shape__area".to_string())]);
}

/// Kernel source with `body` in a kernel over `out`, after the `Shape`
/// trait of [`SHAPES`] with `decls` added.
fn refused(tag: &str, decls: &str, params: &str, body: &str) -> String {
    let source = format!(
        "use crate::gpu::*;\n\
         pub trait Shape {{ fn area(&self) -> f32; }}\n\
         pub struct Sq(pub f32);\n\
         impl Shape for Sq {{ fn area(&self) -> f32 {{ self.0 }} }}\n\
         {decls}\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k({params}out: DisjointSlice<f32>) {{\n\
             let i = global_idx_x() as usize;\n\
             if i < out.len() {{ {body} }}\n\
         }}\n"
    );
    match common::lower_source(tag, &source) {
        Ok(l) => panic!("{tag} accepted:\n{}", l.module),
        Err(e) => e.to_string(),
    }
}

#[test]
fn what_a_device_cannot_do_with_trait_objects_is_refused_by_name() {
    let e = refused(
        "trait-objects-param",
        "",
        "s: &dyn Shape, ",
        "out.set(i, s.area());",
    );
    assert!(
        e.contains("kernel parameter 1 of type `&dyn kernel::Shape` holds a trait object pointer"),
        "{e}"
    );
    let e = refused(
        "trait-objects-field",
        "pub struct Holder<'a> { pub s: &'a dyn Shape }",
        "h: &Holder, ",
        "out.set(i, h.s.area());",
    );
    assert!(
        e.contains(
            "holds a trait object pointer (its vtable holds function addresses) in field `s`"
        ),
        "{e}"
    );
    let e = refused(
        "trait-objects-nonnull-param",
        "",
        "s: core::ptr::NonNull<dyn Shape>, ",
        "out.set(i, unsafe { s.as_ref() }.area());",
    );
    assert!(
        e.contains("of type `std::ptr::NonNull<dyn kernel::Shape>` holds a trait object pointer"),
        "{e}"
    );
    // `<dyn Shape as Describe>::d` is the impl's method, not a call
    // through the object: never sent to a vtable.
    let e = refused(
        "trait-objects-impl-for-dyn",
        "pub trait Describe { fn d(&self) -> u32; }\n\
         impl Describe for Sq { fn d(&self) -> u32 { 1 } }\n\
         impl Describe for dyn Shape + '_ { #[inline(never)] fn d(&self) -> u32 { 2 } }\n\
         #[inline(never)] fn d_of(s: &dyn Shape) -> u32 { s.d() }",
        "",
        "out.set(i, d_of(&Sq(1.0)) as f32);",
    );
    assert!(
        e.contains("rustc printed no MIR body for `<dyn kernel::Shape as kernel::Describe>::d`"),
        "{e}"
    );
    // A function item has no receiver to take the object's data pointer.
    let e = refused(
        "trait-objects-fn-item",
        "fn double(x: u32) -> u32 { x * 2 }\n\
         #[inline(never)] fn call(f: &dyn Fn(u32) -> u32) -> u32 { f(3) }",
        "",
        "out.set(i, call(&double) as f32);",
    );
    assert!(
        e.contains("a `dyn std::ops::Fn(u32) -> u32` needs `<fn(u32) -> u32 {kernel::double} as std::ops::Fn<(u32,)>>::call`"),
        "{e}"
    );
    // A constant reborrowing another's object: the evaluator's places
    // carry a length, not a vtable.
    let e = refused(
        "trait-objects-constant-reborrow",
        "const SYNCED: &(dyn Shape + Sync) = &Sq(4.0);\n\
         const PLAIN: &dyn Shape = SYNCED;",
        "",
        "out.set(i, PLAIN.area());",
    );
    assert!(
        e.contains("a place behind the trait object pointer `&dyn kernel::Shape + std::marker::Sync` (`&*object`) is not supported in a constant"),
        "{e}"
    );
    // A default method rustc keeps a call: the shim still calls it.
    let e = refused(
        "trait-objects-noinline-default",
        "pub trait Tagged { #[inline(never)] fn tag(&self) -> u32 { 5 } }\n\
         impl Tagged for Sq {}\n\
         #[inline(never)] fn tag_of(t: &dyn Tagged) -> u32 { t.tag() }",
        "",
        "out.set(i, tag_of(&Sq(1.0)) as f32);",
    );
    assert!(
        e.contains(
            "making `kernel::Sq` a `dyn kernel::Tagged` needs `<kernel::Sq as kernel::Tagged>::tag`"
        ),
        "{e}"
    );
}
