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
