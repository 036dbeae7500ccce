//! The device-IR text form of a small module.

#![allow(clippy::unwrap_used)]

use device_ir::*;

#[test]
fn text_form() {
    let mut m = Module::new();
    let leaf = m.add_global(GlobalData {
        symbol: "leaf".to_owned(),
        space: AddressSpace::Constant,
        mutable: false,
        linkage: Linkage::Internal,
        align: 4,
        size: 8,
        init: Some(Initializer::from_bytes([1, 2, 3, 4, 5, 6, 7, 8])),
    });
    let g = m.add_global(GlobalData {
        symbol: "pair".to_owned(),
        space: AddressSpace::Global,
        mutable: false,
        linkage: Linkage::Internal,
        align: 4,
        size: 16,
        init: Some(Initializer {
            spans: vec![
                Span::Bytes(vec![3, 0, 0, 0]),
                Span::Undef(4),
                Span::Undef(8),
            ],
            relocations: vec![Relocation {
                offset: 8,
                target: leaf.into(),
                addend: 4,
            }],
        }),
    });
    let i32t = m.types.i32();
    let out = m.types.ptr(i32t, AddressSpace::Global);
    let f = m.declare_function(
        "helper",
        FunctionKind::Device,
        Linkage::Internal,
        Signature::new(&[i32t], Some(i32t)),
    );
    let mut b = FunctionBuilder::new(&mut m, f);
    b.add_attrs(FuncAttrs::NOINLINE);
    let x = b.block_params(b.entry_block())[0];
    let next = b.create_block();
    let y = b.append_block_param(next, i32t);
    let one = b.iconst(i32t, -1);
    let s = b.iadd(x, one);
    b.jump(next, &[s]);
    b.switch_to_block(next);
    b.ret(Some(y));
    let k = m.declare_function(
        "k",
        FunctionKind::Kernel,
        Linkage::External,
        Signature::new(&[out], None),
    );
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block())[0];
    let addr = b.global_addr(g, i32t);
    let v = b.load(i32t, addr);
    let r = b.call(f, &[v]).unwrap();
    let old = b.atomic_rmw(RmwOp::Add, p, r, Ordering::AcqRel, Scope::Gpu);
    b.atomic_store(old, p, Ordering::Release, Scope::Sys);
    b.ret(None);
    verify(&m).unwrap();
    insta::assert_snapshot!(m.to_string());
}
