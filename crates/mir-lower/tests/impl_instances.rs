//! Methods of `impl` blocks on two instances of one generic type
//! (`impl Wrapper<u32>` and `impl Wrapper<u64>`, each with a `value`):
//! each call reaches its own instance's body, under a symbol of its own.
//! They once met at one symbol, and both calls ran one body. A block whose
//! arguments the source does not name certainly (a type alias) is left
//! unlinked, and its call is refused by name.

mod common;

const SOURCE: &str = r#"use crate::gpu::*;

struct Wrapper<T>(T);

impl Wrapper<u32> {
    #[inline(never)]
    fn value(self) -> u32 {
        self.0 + 1
    }
}

impl Wrapper<u64> {
    #[inline(never)]
    fn value(self) -> u32 {
        (self.0 as u32) * 2
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn instances(out: DisjointSlice<u32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        out.set(i, Wrapper::<u32>(i as u32).value() + Wrapper::<u64>(i as u64).value());
    }
}
"#;

#[test]
fn each_instance_s_method_is_its_own_function() {
    let l = common::lower_source("impl-instances", SOURCE).unwrap_or_else(|d| panic!("{d}"));
    let m = &l.module;
    let narrow = m
        .function_by_name("kernel__Wrapper_u32__value")
        .unwrap_or_else(|| panic!("no u32 instance:\n{m}"));
    let wide = m
        .function_by_name("kernel__Wrapper_u64__value")
        .unwrap_or_else(|| panic!("no u64 instance:\n{m}"));
    let k = m.function_by_name("instances").expect("the kernel");
    let called: Vec<_> = m.functions[k]
        .body
        .as_ref()
        .expect("a body")
        .insts
        .values()
        .filter_map(|i| match i {
            device_ir::InstData::Call { func, .. } => Some(*func),
            _ => None,
        })
        .collect();
    assert!(called.contains(&narrow) && called.contains(&wide), "{m}");
}

#[test]
fn an_instance_named_through_an_alias_is_refused_not_confused() {
    let source = SOURCE.replace(
        "impl Wrapper<u32>",
        "type Small = u32;\nimpl Wrapper<Small>",
    );
    let e = match common::lower_source("impl-instances-alias", &source) {
        Ok(l) => panic!("accepted:\n{}", l.module),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("rustc printed no MIR body for `kernel::Wrapper<u32>::value`"),
        "{e}"
    );
}

/// `impl Wrapper` (the default `u32`) beside a block whose argument does
/// not resolve: a call of the unresolved instance must not fall back to the
/// default's body through the path without arguments.
#[test]
fn an_unlinked_instance_blocks_the_path_without_arguments() {
    let source = r#"use crate::gpu::*;

struct Wrapper<T = u32>(T);

impl Wrapper {
    #[inline(never)]
    fn value(self) -> u32 {
        self.0 + 1
    }
}

type Big = u64;

impl Wrapper<Big> {
    #[inline(never)]
    fn value(self) -> u32 {
        (self.0 as u32) * 2
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn wide(out: DisjointSlice<u32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        out.set(i, Wrapper::<u64>(i as u64).value());
    }
}
"#;
    let e = match common::lower_source("impl-instances-default", source) {
        Ok(l) => panic!("accepted:\n{}", l.module),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("`kernel::Wrapper<u64>::value`"), "{e}");
}

/// Arguments that clean to one name (`&u8`, `(u8,)`) keep two symbols; a
/// block on a lifetime instance links as rustc prints it (`'_`).
#[test]
fn instance_names_stay_apart_and_lifetimes_link() {
    let source = r#"use crate::gpu::*;

struct Wrapper<T>(T);

impl Wrapper<&'static u8> {
    #[inline(never)]
    fn value(self) -> u32 {
        *self.0 as u32
    }
}

impl Wrapper<(u8,)> {
    #[inline(never)]
    fn value(self) -> u32 {
        self.0.0 as u32 * 2
    }
}

struct View<'a>(&'a u32);

impl View<'_> {
    #[inline(never)]
    fn get(&self) -> u32 {
        *self.0 + 3
    }
}

static SEVEN: u8 = 7;

#[unsafe(no_mangle)]
pub extern "C" fn names(out: DisjointSlice<u32>) {
    let i = global_idx_x() as usize;
    if i < out.len() {
        let n = i as u32;
        out.set(i, Wrapper(&SEVEN).value() + Wrapper((i as u8,)).value() + View(&n).get());
    }
}
"#;
    let l = common::lower_source("impl-instances-names", source).unwrap_or_else(|d| panic!("{d}"));
    let names: Vec<&str> = l
        .module
        .functions
        .values()
        .map(|f| f.name.as_str())
        .filter(|n| n.starts_with("kernel__Wrapper_") && n.ends_with("__value"))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}\n{}", l.module);
    assert_ne!(names[0], names[1]);
    assert!(names.iter().all(|n| n.contains('$')), "{names:?}");
    assert!(
        l.module.function_by_name("kernel__View__get").is_some(),
        "{}",
        l.module
    );
}
