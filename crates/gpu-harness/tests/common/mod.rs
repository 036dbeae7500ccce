//! Shared helpers for the device tests: small hand-built modules.

#![allow(dead_code, clippy::unwrap_used)]

use device_ir::*;
use gpu_harness::device::virt::{ExecError, FaultKind, Limits, VirtualDevice};
use gpu_harness::device::{Device, DeviceError, KernelArg, LaunchConfig, ModuleHandle, Program};

/// Declares a kernel with `params` and returns its id.
pub fn kernel(m: &mut Module, name: &str, params: &[Ty]) -> FuncId {
    m.declare_function(
        name,
        FunctionKind::Kernel,
        Linkage::External,
        Signature::new(params, None),
    )
}

/// Declares an internal `noinline` device function.
pub fn helper(m: &mut Module, name: &str, params: &[Ty], ret: Option<Ty>) -> FuncId {
    let f = m.declare_function(
        name,
        FunctionKind::Device,
        Linkage::Internal,
        Signature::new(params, ret),
    );
    m.functions[f].attrs |= FuncAttrs::NOINLINE;
    f
}

/// `ctaid.x * ntid.x + tid.x`.
pub fn global_index(b: &mut FunctionBuilder<'_>) -> Value {
    let ctaid = b.special_reg(SpecialReg::CtaidX);
    let ntid = b.special_reg(SpecialReg::NtidX);
    let tid = b.special_reg(SpecialReg::TidX);
    let base = b.imul(ctaid, ntid);
    b.iadd(base, tid)
}

/// A read-only global in the global space holding `bytes`.
pub fn ro_global(m: &mut Module, symbol: &str, bytes: Vec<u8>, align: u32) -> GlobalId {
    m.add_global(GlobalData {
        symbol: symbol.to_owned(),
        space: AddressSpace::Global,
        mutable: false,
        linkage: Linkage::Internal,
        align,
        size: bytes.len() as u64,
        init: Some(Initializer::from_bytes(bytes)),
    })
}

/// Loads `m` on a fresh virtual device.
pub fn load(m: &Module) -> (VirtualDevice, ModuleHandle) {
    load_with(m, Limits::default())
}

/// Loads `m` on a fresh virtual device with `limits`.
pub fn load_with(m: &Module, limits: Limits) -> (VirtualDevice, ModuleHandle) {
    verify(m).unwrap_or_else(|e| panic!("test module does not verify:\n{e}"));
    let mut dev = VirtualDevice::with_limits(limits);
    let h = dev.load(&Program::ir(m)).unwrap();
    (dev, h)
}

/// Launches and expects a kernel fault of `kind`; returns it.
pub fn expect_fault(
    dev: &mut VirtualDevice,
    h: ModuleHandle,
    kernel: &str,
    cfg: LaunchConfig,
    args: &[KernelArg],
    kind: FaultKind,
) -> ExecError {
    match dev.launch(h, kernel, cfg, args) {
        Err(DeviceError::Exec(e)) => {
            assert_eq!(e.kind, kind, "wrong fault: {e}");
            *e
        }
        Err(other) => panic!("expected a {kind:?} fault, got another error: {other}"),
        Ok(()) => panic!("expected a {kind:?} fault, but the launch succeeded"),
    }
}

/// `saxpy(n, a, x, y)`: `y[i] = a * x[i] + y[i]` for `i < n`.
pub fn saxpy_module() -> Module {
    let mut m = Module::new();
    let (i32t, f32t) = (m.types.i32(), m.types.f32());
    let pf = m.types.ptr(f32t, AddressSpace::Global);
    let k = kernel(&mut m, "saxpy", &[i32t, f32t, pf, pf]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = b.block_params(b.entry_block());
    let (n, a, x, y) = (p[0], p[1], p[2], p[3]);
    let i = global_index(&mut b);
    let body = b.create_block();
    let exit = b.create_block();
    let inside = b.icmp(IntCC::Slt, i, n);
    b.brif(inside, body, &[], exit, &[]);
    b.switch_to_block(body);
    let xi = b.gep(x, &[GepIndex::Value(i)]);
    let yi = b.gep(y, &[GepIndex::Value(i)]);
    let xv = b.load(f32t, xi);
    let yv = b.load(f32t, yi);
    let ax = b.binary(BinaryOp::FMul, a, xv);
    let r = b.binary(BinaryOp::FAdd, ax, yv);
    b.store(r, yi);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret(None);
    m
}

/// The folder of fixture `name` in the workspace's `fixtures/`.
pub fn fixture_dir(name: &str) -> std::path::PathBuf {
    fixtures_root().join(name)
}

/// The workspace's `fixtures/` folder.
pub fn fixtures_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// Loads the fixture in `dir` and compiles its kernel: import (rustc's MIR and
/// evaluated constants) → lower → a device-IR module.
pub fn compile_fixture(
    dir: &std::path::Path,
) -> (gpu_harness::fixture::Fixture, mir_lower::Lowered) {
    let f = gpu_harness::fixture::Fixture::load(dir)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", dir.display()));
    let rustc = mir_import::rustc::RustcOptions::for_kernel(&f.kernel)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", dir.display()));
    let l = gpu_harness::shape::stable::lower_kernel(&f.kernel, &rustc)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", dir.display()));
    (f, l)
}

/// What [`run_fixture`] leaves: the device, and each manifest buffer's name
/// and handle, in manifest order.
pub struct FixtureRun {
    pub dev: VirtualDevice,
    pub buffers: Vec<(String, gpu_harness::device::Buffer)>,
}

/// Runs every launch of fixture `f` (compiled as `l`) on a fresh virtual
/// device with `limits`: buffers made and filled as the manifest says, each
/// buffer argument followed by its length where the parameter takes two slots
/// (as the pipeline passes them). Yields the first device error.
pub fn run_fixture(
    f: &gpu_harness::fixture::Fixture,
    l: &mir_lower::Lowered,
    limits: Limits,
) -> Result<FixtureRun, DeviceError> {
    let mut dev = VirtualDevice::with_limits(limits);
    let h = dev.load(&Program::ir(&l.module))?;
    let mut buffers = Vec::new();
    for b in &f.manifest.buffer {
        let size = b.ty.size();
        let bytes: Vec<u8> = b
            .initial_bits()
            .iter()
            .flat_map(|v| v.to_le_bytes()[..size].to_vec())
            .collect();
        let buf = dev.alloc(bytes.len().max(1))?;
        dev.write(buf, 0, &bytes)?;
        buffers.push((b.name.clone(), buf, b.len));
    }
    for launch in &f.manifest.launch {
        let params = &l.kernel_params[&launch.kernel];
        let find = |name: &str| {
            buffers
                .iter()
                .find(|(n, ..)| n == name)
                .map(|&(_, b, len)| (b, len))
        };
        let args =
            gpu_harness::launch::launch_arguments(&launch.kernel, params, &launch.args, &find)
                .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        gpu_harness::launch::write_constants(l, &mut dev, h, launch)
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        let cfg = launch.config();
        dev.launch(h, &launch.kernel, cfg, &args)?;
    }
    let buffers = buffers.into_iter().map(|(n, b, _)| (n, b)).collect();
    Ok(FixtureRun { dev, buffers })
}

/// Every launch of fixture `f` on `dev`, from its lowered module and
/// `ptx`, and the readback.
pub fn run_on(
    f: &gpu_harness::fixture::Fixture,
    a: &gpu_harness::shape::Artifacts,
    dev: &mut dyn Device,
    ptx: &str,
) -> Result<gpu_harness::host::Readback, gpu_harness::launch::LaunchError> {
    let program = Program::with_ptx(&a.lowered.module, ptx);
    let bufs = gpu_harness::launch::launch_fixture(f, &a.lowered, dev, &program)?;
    gpu_harness::launch::read_back(f, dev, &bufs)
}
