//! Constant memory the host writes between launches (`ConstantMemory`,
//! CUDA's `__constant__` and `cudaMemcpyToSymbol`), on both CPU devices:
//!
//! - each write reaches the launches after it, and only those; without the
//!   writes, the kernels read the static's zeros;
//! - the global must stay `externally_initialized`: printed as an LLVM
//!   `constant`, libNVVM folds every read into the initializer's zeros;
//! - a write of the wrong size, to an unknown symbol or to a global the host
//!   does not write is refused, naming the symbol.

mod common;

use common::run_on;
use device_ir::Linkage;
use gpu_harness::device::ptx::PtxDevice;
use gpu_harness::device::virt::VirtualDevice;
use gpu_harness::device::{Device, DeviceError, Program};
use gpu_harness::fixture::Fixture;
use gpu_harness::host::Readback;
use gpu_harness::launch::LaunchError;
use gpu_harness::shape::Artifacts;

fn build() -> Option<(Fixture, Artifacts)> {
    let nvvm = nvvm_emit::testing::libnvvm_or_skip("constant memory")?;
    let f = Fixture::load(&common::fixture_dir("oxide_constant_memory")).expect("the fixture");
    let a = Artifacts::build(&f.kernel, nvvm).expect("it builds");
    Some((f, a))
}

/// Buffer `name` of a readback, as `f32`s.
fn floats(r: &Readback, name: &str) -> Vec<f32> {
    r.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no buffer {name}"))
        .1
        .iter()
        .map(|&b| f32::from_bits(b as u32))
        .collect()
}

fn devices() -> [(&'static str, Box<dyn Device>); 2] {
    [
        ("IR device", Box::new(VirtualDevice::new())),
        ("PTX device", Box::new(PtxDevice::new())),
    ]
}

#[test]
fn each_write_reaches_the_launches_after_it_on_both_cpu_devices() {
    let Some((f, a)) = build() else {
        return;
    };
    let scaled: Vec<f32> = (0..8).map(|i| i as f32 * 3.0).collect();
    for (name, mut dev) in devices() {
        let r = run_on(&f, &a, dev.as_mut(), &a.ptx_o3).expect(name);
        assert_eq!(floats(&r, "scaled"), scaled, "{name}");
        // The last launch writes nothing: `SCALE` still holds 3.0.
        assert_eq!(floats(&r, "scaled_again"), scaled, "{name}");
        // `apply` ran twice, each time with the coefficients written just
        // before it: 1 + 2x + x^2/2 - x^3/4 and x^2 - 3.
        assert_eq!(floats(&r, "poly_a")[..4], [1.0, 3.25, 5.0, 4.75], "{name}");
        assert_eq!(floats(&r, "poly_b")[..4], [-3.0, -2.0, 1.0, 6.0], "{name}");
        let linear: Vec<f32> = (0..10).map(|i| i as f32 + 2.0).collect();
        assert_eq!(floats(&r, "linear"), linear, "{name}");
    }
    // Without the writes, every kernel reads `ConstantMemory::UNINIT`'s zeros.
    let mut bare = f.clone();
    for l in &mut bare.manifest.launch {
        l.constants.clear();
    }
    for (name, mut dev) in devices() {
        let r = run_on(&bare, &a, dev.as_mut(), &a.ptx_o3).expect(name);
        assert_eq!(floats(&r, "scaled"), vec![0.0; 8], "{name}");
        assert_eq!(floats(&r, "linear"), vec![0.0; 10], "{name}");
        assert_eq!(floats(&r, "poly_a"), vec![0.0; 256], "{name}");
    }
}

#[test]
fn a_write_naming_no_constant_or_of_another_size_is_refused_before_the_launch() {
    let Some((f, a)) = build() else {
        return;
    };
    let with = |name: &str, values: usize| {
        let mut g = f.clone();
        g.manifest.launch[0].constants = vec![gpu_harness::fixture::ConstantWrite {
            name: name.to_owned(),
            ty: gpu_harness::fixture::ElemTy::F32,
            values: vec![gpu_harness::fixture::Number::Float(1.0); values],
        }];
        g
    };
    for (g, why) in [
        (
            with("MISSING", 1),
            "kernel.rs has no `static MISSING: ConstantMemory<_>` at its top level",
        ),
        // `UNUSED` is in no kernel, so no device could check its size.
        (with("UNUSED", 2), "8 bytes for a constant of 4 bytes"),
        (with("COEFFS", 3), "12 bytes for a constant of 16 bytes"),
    ] {
        for (name, mut dev) in devices() {
            match run_on(&g, &a, dev.as_mut(), &a.ptx_o3) {
                Err(LaunchError::Mismatch(m)) => {
                    assert!(
                        m.starts_with("the launch of `multiply` writes constant"),
                        "{name}: {m}"
                    );
                    assert!(m.contains(why), "{name}: {m}");
                }
                other => panic!("{name}: {why}: {other:?}"),
            }
        }
    }
    // The unread constant with its own size: nothing to write on a device.
    let g = with("UNUSED", 1);
    for (name, mut dev) in devices() {
        run_on(&g, &a, dev.as_mut(), &a.ptx_o3).expect(name);
    }
}

#[test]
fn as_an_llvm_constant_the_reads_fold_into_the_initializer() {
    let Some((f, a)) = build() else {
        return;
    };
    assert!(
        a.ptx_o3
            .contains(".visible .const .align 4 .b8 kernel__SCALE[4];")
    );
    assert!(a.ptx_o3.contains("ld.const.f32"), "{}", a.ptx_o3);
    let folded_ir = a
        .nvvm_ir
        .replace("externally_initialized global", "constant");
    assert_ne!(
        folded_ir, a.nvvm_ir,
        "the NVVM IR has no externally initialized global"
    );
    let nvvm = nvvm_emit::testing::libnvvm_or_skip("folded constants").expect("libNVVM");
    let ptx = nvvm
        .compile(&folded_ir, &compile_driver::ptx_options(3))
        .expect("it compiles");
    let ptx = String::from_utf8(ptx).expect("PTX is text");
    assert!(!ptx.contains("ld.const"), "{ptx}");
    let r = run_on(&f, &a, &mut PtxDevice::new(), &ptx).expect("it runs");
    assert_eq!(floats(&r, "scaled"), vec![0.0; 8]);
}

#[test]
fn a_write_of_the_wrong_size_or_to_another_global_is_refused_by_name() {
    let Some((_, a)) = build() else {
        return;
    };
    let program = Program::with_ptx(&a.lowered.module, &a.ptx_o3);
    for (name, mut dev) in devices() {
        let h = dev.load(&program).expect(name);
        dev.write_symbol(h, "kernel__SCALE", &3f32.to_le_bytes())
            .expect(name);
        let e = dev
            .write_symbol(h, "kernel__SCALE", &[0; 8])
            .expect_err("8 bytes into 4");
        assert!(matches!(e, DeviceError::BadSymbol { .. }), "{name}: {e:?}");
        assert_eq!(
            e.to_string(),
            "symbol `kernel__SCALE`: the host writes 8 bytes into a global of 4 bytes",
            "{name}"
        );
        let e = dev
            .write_symbol(h, "kernel__MISSING", &[0; 4])
            .expect_err("no such global");
        assert!(
            e.to_string().contains("no global of the module"),
            "{name}: {e}"
        );
    }
    // A read-only table the lowering made (a `static`, not `ConstantMemory`).
    let mut m = device_ir::Module::new();
    let table = common::ro_global(&mut m, "table", vec![1, 2, 3, 4], 4);
    assert_eq!(m.globals[table].linkage, Linkage::Internal);
    let mut dev = VirtualDevice::new();
    let h = dev.load(&Program::ir(&m)).expect("loads");
    let e = dev
        .write_symbol(h, "table", &[0; 4])
        .expect_err("the host does not write it");
    assert!(
        e.to_string()
            .contains("module-internal global the host does not write"),
        "{e}"
    );
    // Without device IR, the PTX device writes `.const` variables only.
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .global .align 4 .b8 data[4];\n\
               .visible .const .align 4 .b8 bank[4];\n";
    let mut dev = PtxDevice::new();
    let h = dev.load(&Program::ptx_only(ptx)).expect("loads");
    dev.write_symbol(h, "bank", &[1, 2, 3, 4]).expect(".const");
    let e = dev.write_symbol(h, "data", &[0; 4]).expect_err(".global");
    assert!(e.to_string().contains("bytes of .global"), "{e}");
}
