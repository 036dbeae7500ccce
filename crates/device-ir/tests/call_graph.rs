//! Which functions a launch may run, indirect calls included: the shared
//! memory a kernel needs counts the functions whose address its own code
//! takes once it calls through a pointer, and no other kernel's.

use device_ir::{
    AddressSpace, FunctionBuilder, FunctionKind, GlobalData, Linkage, Module, Signature,
};

/// A device function `name` that takes the address of a fresh 256-byte
/// shared global (so that it counts for the kernels that may run it).
fn shared_user(m: &mut Module, name: &str) -> device_ir::FuncId {
    let g = m.add_global(GlobalData {
        symbol: format!("{name}_shared"),
        space: AddressSpace::Shared,
        mutable: true,
        linkage: Linkage::Internal,
        align: 4,
        size: 256,
        init: None,
    });
    let f = m.declare_function(
        name,
        FunctionKind::Device,
        Linkage::Internal,
        Signature::default(),
    );
    let mut b = FunctionBuilder::new(m, f);
    let i8t = b.types().i8();
    let shared = b.types().ptr(i8t, AddressSpace::Shared);
    b.global_addr(g, shared);
    b.ret(None);
    f
}

/// Kernel `a` takes `f`'s address and, when `calls`, calls through it;
/// kernel `b` takes `g`'s address only.
fn two_kernels(calls: bool) -> Module {
    let mut m = Module::new();
    let f = shared_user(&mut m, "f");
    let g = shared_user(&mut m, "g");
    for (name, target, call) in [("a", f, calls), ("b", g, false)] {
        let k = m.declare_function(
            name,
            FunctionKind::Kernel,
            Linkage::External,
            Signature::default(),
        );
        let mut b = FunctionBuilder::new(&mut m, k);
        let i8t = b.types().i8();
        let p = b.func_addr(target, i8t);
        if call {
            b.call_indirect(p, Signature::default(), &[]);
        }
        b.ret(None);
    }
    device_ir::verify(&m).expect("the module verifies");
    m
}

#[test]
fn an_indirect_call_reaches_the_functions_whose_address_the_launch_takes() {
    let m = two_kernels(true);
    let (a, b) = (
        m.function_by_name("a").expect("a"),
        m.function_by_name("b").expect("b"),
    );
    let (f, g) = (
        m.function_by_name("f").expect("f"),
        m.function_by_name("g").expect("g"),
    );
    let from_a = m.callable_from(a);
    assert!(from_a.contains(f) && !from_a.contains(g));
    assert_eq!(m.static_shared_bytes(a), 256);
    assert_eq!(m.static_shared_bytes(b), 0, "b never calls g");
    // Without the call, taking an address runs nothing.
    let m = two_kernels(false);
    assert!(!m.callable_from(a).contains(f));
    assert_eq!(m.static_shared_bytes(a), 0);
    assert_eq!(m.address_taken_functions(), [f, g]);
}
