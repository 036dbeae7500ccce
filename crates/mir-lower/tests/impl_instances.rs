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
