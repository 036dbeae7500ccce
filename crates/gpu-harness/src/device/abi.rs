//! The kernel ABI: finding a kernel and checking launch arguments against its
//! parameters, shared by both devices so they refuse the same launches.
//!
//! An integer parameter takes an argument of its exact width, a float
//! parameter one of its precision, a generic or global pointer parameter a
//! buffer address or null, and a `byval` parameter (an aggregate by value)
//! exactly as many bytes as its pointee. Nothing else is passed.

use device_ir::{
    AddressSpace, FuncId, FunctionKind, GlobalId, Linkage, Module, ParamAttrs, TyKind,
};

use super::{DeviceError, KernelArg};

/// The kernel named `name`, which must be a kernel with a body.
pub fn find_kernel(module: &Module, name: &str) -> Result<FuncId, DeviceError> {
    let func = module
        .function_by_name(name)
        .ok_or_else(|| DeviceError::NoSuchKernel(name.to_owned()))?;
    let data = &module.functions[func];
    if data.kind != FunctionKind::Kernel {
        return Err(DeviceError::NotLaunchable {
            name: name.to_owned(),
            reason: "it is a device function, not a kernel",
        });
    }
    if data.body.is_none() {
        return Err(DeviceError::NotLaunchable {
            name: name.to_owned(),
            reason: "it is a declaration without a body",
        });
    }
    Ok(func)
}

/// The global `symbol` of `module`, which the host may write whole with
/// `len` bytes: it exists, its linkage says the host writes it
/// (`ExternallyInitialized`: a `ConstantMemory` static), and it has exactly
/// `len` bytes. Every device checks a host write here first.
pub fn host_written_global(
    module: &Module,
    symbol: &str,
    len: usize,
) -> Result<GlobalId, DeviceError> {
    let bad = |message: String| DeviceError::bad_symbol(symbol, message);
    let (id, g) = module
        .globals
        .iter()
        .find(|(_, g)| g.symbol == symbol)
        .ok_or_else(|| bad("no global of the module has this symbol".to_owned()))?;
    if g.linkage != Linkage::ExternallyInitialized {
        return Err(bad(format!(
            "a {} global the host does not write (only constant memory is written between launches)",
            match g.linkage {
                Linkage::Internal => "module-internal",
                _ => "device",
            }
        )));
    }
    if g.size != len as u64 {
        return Err(bad(format!(
            "the host writes {len} bytes into a global of {} bytes",
            g.size
        )));
    }
    Ok(id)
}

/// The shared memory a block gets without the kernel's opt-in attribute
/// (`cudaFuncAttributeMaxDynamicSharedMemorySize`), static and dynamic
/// together: 48 KiB on every GPU.
pub const BLOCK_SHARED_BYTES: u64 = 48 << 10;

/// Checks that a block of `func` launched with `dynamic` bytes of dynamic
/// shared memory fits in [`BLOCK_SHARED_BYTES`] with its static shared
/// memory, as a CUDA launch would.
pub fn check_shared_memory(module: &Module, func: FuncId, dynamic: u32) -> Result<(), DeviceError> {
    let fixed = module.static_shared_bytes(func);
    let total = fixed + u64::from(dynamic);
    if total > BLOCK_SHARED_BYTES {
        return Err(DeviceError::Unsupported(format!(
            "kernel `{}` needs {total} bytes of shared memory per block ({fixed} static, {dynamic} dynamic); a block gets at most {BLOCK_SHARED_BYTES} without the kernel's opt-in",
            module.functions[func].name
        )));
    }
    Ok(())
}

/// Checks `args` against the parameters of kernel `func`.
pub fn check_args(module: &Module, func: FuncId, args: &[KernelArg]) -> Result<(), DeviceError> {
    let data = &module.functions[func];
    let bad = |message: String| DeviceError::BadArgs {
        kernel: data.name.clone(),
        message,
    };
    if args.len() != data.sig.params.len() {
        return Err(bad(format!(
            "takes {} arguments, {} given",
            data.sig.params.len(),
            args.len()
        )));
    }
    for (i, (&ty, arg)) in data.sig.params.iter().zip(args).enumerate() {
        if let Some(size) = byval_size(module, func, i) {
            match arg {
                KernelArg::Bytes(a) if a.bytes.len() as u64 != size => {
                    return Err(bad(format!(
                        "parameter {i} is an aggregate of {size} bytes by value; {} bytes given",
                        a.bytes.len()
                    )));
                }
                KernelArg::Bytes(a) => match a
                    .pointers
                    .iter()
                    .find(|(at, _)| at.checked_add(8).is_none_or(|end| end > size))
                {
                    Some((at, _)) => {
                        return Err(bad(format!(
                            "parameter {i} is an aggregate of {size} bytes by value; a pointer \
                             field at byte {at} does not fit"
                        )));
                    }
                    None => continue,
                },
                _ => {
                    return Err(bad(format!(
                        "parameter {i} is an aggregate of {size} bytes by value, which argument \
                         {arg:?} is not"
                    )));
                }
            }
        }
        let kind = module.types.get(ty);
        let fits = match (kind, arg) {
            (Some(TyKind::Int(bits)), _) => int_bits(arg) == Some(*bits),
            (Some(TyKind::F32), KernelArg::F32(_)) | (Some(TyKind::F64), KernelArg::F64(_)) => true,
            (Some(TyKind::Ptr { .. }), KernelArg::Null) => true,
            (Some(TyKind::Ptr { space, .. }), KernelArg::Buffer(_) | KernelArg::BufferAt(..)) => {
                matches!(space, AddressSpace::Generic | AddressSpace::Global)
            }
            _ => false,
        };
        if !fits {
            return Err(bad(format!(
                "parameter {i} has type {}, which argument {arg:?} does not fit",
                module.types.display(ty)
            )));
        }
    }
    Ok(())
}

/// The size of parameter `i` of `func` if it is `byval`: its pointee's.
pub fn byval_size(module: &Module, func: FuncId, i: usize) -> Option<u64> {
    let data = &module.functions[func];
    if !data.param_attrs.get(i)?.contains(ParamAttrs::BYVAL) {
        return None;
    }
    let (pointee, _) = module.types.ptr_parts(*data.sig.params.get(i)?)?;
    Some(device_ir::layout::size_of(&module.types, pointee))
}

/// The width of an integer argument, or `None` for floats and pointers.
pub fn int_bits(arg: &KernelArg) -> Option<u16> {
    Some(match arg {
        KernelArg::Bool(_) => 1,
        KernelArg::U8(_) | KernelArg::I8(_) => 8,
        KernelArg::U16(_) | KernelArg::I16(_) => 16,
        KernelArg::U32(_) | KernelArg::I32(_) => 32,
        KernelArg::U64(_) | KernelArg::I64(_) => 64,
        KernelArg::U128(_) | KernelArg::I128(_) => 128,
        _ => return None,
    })
}

/// The bit pattern of a scalar argument (integers zero-extended, floats as IEEE
/// bits), or `None` for pointers.
pub fn scalar_bits(arg: &KernelArg) -> Option<u128> {
    Some(match *arg {
        KernelArg::Bool(b) => u128::from(b),
        KernelArg::U8(v) => u128::from(v),
        KernelArg::I8(v) => u128::from(v as u8),
        KernelArg::U16(v) => u128::from(v),
        KernelArg::I16(v) => u128::from(v as u16),
        KernelArg::U32(v) => u128::from(v),
        KernelArg::I32(v) => u128::from(v as u32),
        KernelArg::U64(v) => u128::from(v),
        KernelArg::I64(v) => u128::from(v as u64),
        KernelArg::U128(v) => v,
        KernelArg::I128(v) => v as u128,
        KernelArg::F32(v) => u128::from(v.to_bits()),
        KernelArg::F64(v) => u128::from(v.to_bits()),
        KernelArg::Buffer(_) | KernelArg::BufferAt(..) | KernelArg::Null | KernelArg::Bytes(_) => {
            return None;
        }
    })
}

/// The size in bytes the argument takes in the launch's parameter buffer.
pub fn arg_size(arg: &KernelArg) -> usize {
    match arg {
        KernelArg::Bool(_) | KernelArg::U8(_) | KernelArg::I8(_) => 1,
        KernelArg::U16(_) | KernelArg::I16(_) => 2,
        KernelArg::U32(_) | KernelArg::I32(_) | KernelArg::F32(_) => 4,
        KernelArg::U128(_) | KernelArg::I128(_) => 16,
        KernelArg::Bytes(a) => a.bytes.len(),
        _ => 8,
    }
}
