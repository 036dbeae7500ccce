//! Entering a function: the frame of a direct or indirect call, the depth
//! limit, and which function an indirect call's address names.

use cranelift_entity::EntityRef;
use device_ir::{Body, FuncId, Module, Signature, Value};

use super::error::{Fault, FaultKind};
use super::exec::{Ctx, Frame, new_frame};
use super::ops;
use super::value::Val;

/// Refuses a call that would pass the call-stack limit.
pub(super) fn check_depth(ctx: &Ctx<'_>, depth: usize) -> Result<(), Fault> {
    if depth >= ctx.max_call_depth {
        return Err(Fault::new(
            FaultKind::StackOverflow,
            format!("the call stack passed {} frames", ctx.max_call_depth),
        ));
    }
    Ok(())
}

/// The frame of a call of `callee` from `caller` with `args`, whose result
/// goes to `ret_to`.
pub(super) fn call_frame(
    module: &Module,
    caller: &Frame,
    callee: FuncId,
    args: &[Value],
    ret_to: Option<Value>,
) -> Result<Frame, Fault> {
    let args = args
        .iter()
        .map(|&a| caller.get(a))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(new_frame(body_of(module, callee)?, callee, args, ret_to))
}

pub(super) fn body_of(module: &Module, func: FuncId) -> Result<&Body, Fault> {
    let f = &module.functions[func];
    f.body.as_ref().ok_or_else(|| {
        Fault::new(
            FaultKind::Unsupported,
            format!("call to @{}, a declaration without a body", f.name),
        )
    })
}

/// The function an indirect call through `target` runs: the one whose code
/// allocation `target` points at (its start), if its signature is `sig`.
pub(super) fn indirect_callee(
    ctx: &Ctx<'_>,
    module: &Module,
    target: &Val,
    sig: &Signature,
) -> Result<FuncId, Fault> {
    let p = ops::as_ptr(target, "an indirect call")?;
    let code = p
        .target
        .filter(|_| p.offset == 0)
        .and_then(|a| ctx.code.iter().position(|&c| c == a));
    let Some(index) = code else {
        let what = match p.target.and_then(|a| ctx.mem.get(a)) {
            Some(a) => format!("{} at offset {}", a.owner.describe(), p.offset),
            None => "null or a wild address".to_owned(),
        };
        return Err(Fault::new(
            FaultKind::BadCall,
            format!("an indirect call through a pointer to {what}, not to a device function"),
        ));
    };
    let callee = FuncId::new(index);
    let f = &module.functions[callee];
    if f.sig != *sig {
        return Err(Fault::new(
            FaultKind::BadCall,
            format!(
                "an indirect call as {} of @{}, which is {}",
                sig.display(&module.types),
                f.name,
                f.sig.display(&module.types)
            ),
        ));
    }
    Ok(callee)
}
