//! Lowers the imported MIR of a kernel crate to a device-IR module.
//!
//! **Owns:** the translation of MIR bodies to device functions ([`func`]), the
//! device calling convention ([`abi`]), the representation of MIR types
//! ([`repr`]), the globals behind reference constants and statics
//! ([`globals`]), typed views ([`views`]) and the shared-memory refusals
//! ([`refusals`]), each refusal a [`Diagnostic`] naming the item, the MIR
//! location, the rule and, where rustc printed one, the span in the kernel's
//! source ([`Diagnostic::render`] draws it).
//!
//! **The rule it exists for:** every rustc allocation behind a reference
//! constant becomes exactly one module-level, read-only `addrspace(1)` global,
//! interned by const-alloc under its content key. No such constant is ever an
//! alloca in the function that names it, so an `#[inline(never)]` helper that
//! returns one hands its caller a pointer that stays valid.
//!
//! **Does not own:** parsing or evaluating MIR (mir-import), content keys
//! (const-alloc), printing NVVM IR (nvvm-emit).
//!
//! **Border:** [`lower`] takes a [`mir_import::Imported`] and returns a
//! verified [`device_ir::Module`] with a [`Lowered`] summary.
#![deny(missing_docs)]

pub mod abi;
pub mod diag;
pub mod func;
pub mod globals;
pub mod refusals;
pub mod repr;
pub mod views;

use std::collections::BTreeMap;

use device_ir::{FuncAttrs, FunctionKind, Linkage, Module, Signature};
use mir_import::Imported;
use mir_import::eval::layout::Layouts;
use mir_import::eval::{ItemKind, discriminant_map, field_name_map, union_set};
use mir_import::model::InlineHint;

pub use diag::{Diagnostic, Diagnostics, Rule};
pub use globals::{GlobalOrigin, HostConstant, MAX_CONSTANT_MEMORY, static_symbol};

/// A lowered kernel crate.
#[derive(Debug)]
pub struct Lowered {
    /// The verified module.
    pub module: Module,
    /// Kernel entry points, by device name, with their MIR def paths.
    pub kernels: Vec<(String, String)>,
    /// Device functions by MIR def path.
    pub functions: BTreeMap<String, String>,
    /// Where each global came from.
    pub origins: BTreeMap<device_ir::GlobalId, GlobalOrigin>,
    /// Each kernel's parameters, by device name, in MIR order.
    pub kernel_params: BTreeMap<String, Vec<KernelParam>>,
    /// Every `ConstantMemory` static of the crate, by path, whether or not
    /// a kernel reads it (then its global is in the module).
    pub host_constants: BTreeMap<String, HostConstant>,
}

/// How a kernel's MIR parameter arrives on the device (see [`abi`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelParam {
    /// The MIR type, as printed (`&[f32]`, `gpu::DisjointSlice<'_, u32>`).
    pub ty: mir_import::model::Ty,
    /// How many device parameters it takes: 0 (zero-sized), 1 (a scalar, a
    /// thin pointer or an aggregate by value) or 2 (pointer and length: a
    /// slice or a `DisjointSlice`).
    pub slots: usize,
    /// For an aggregate passed by value, its size in bytes: the launch
    /// passes exactly that many.
    pub by_value_size: Option<u64>,
}

/// The device name of a function: a kernel keeps its `#[no_mangle]` name;
/// any other function's path becomes an NVVM identifier.
fn device_name(path: &str, kernel: bool) -> String {
    if kernel {
        path.rsplit("::").next().unwrap_or(path).to_string()
    } else {
        globals::readable_symbol(path)
    }
}

/// Choices of [`lower_with`]. [`Default`] is the real lowering; the other
/// settings bring back an old lowering, so that a test can prove the check
/// that guards against it fails on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// Copy a by-value constant aggregate (`_5 = const LUT`) into its local's
    /// own stack slot, as the old lowering did, instead of making the
    /// constant's interned read-only global the local's home. A dynamically
    /// indexed table then costs a stack array and a copy in every call; the
    /// gpu-harness check `no-constant-stack-copy` fails on it.
    pub copy_constant_aggregates: bool,
}

/// Lowers a kernel crate. Every refusal is collected; any refusal fails the
/// lowering with all of them.
///
/// The import is only read: mir-import evaluated every constant the code
/// uses up front, so lowering the same import twice gives the same module.
pub fn lower(imp: &Imported) -> Result<Lowered, Diagnostics> {
    lower_with(imp, LowerOptions::default())
}

/// [`lower`], with `options` (see [`LowerOptions`]).
pub fn lower_with(imp: &Imported, options: LowerOptions) -> Result<Lowered, Diagnostics> {
    let discriminants = discriminant_map(&imp.krate);
    let field_names = field_name_map(&imp.krate);
    let unions = union_set(&imp.krate);
    let krate = &imp.krate;
    let layouts = Layouts {
        table: &krate.layouts,
        tuples: &imp.tuples,
        discriminants: &discriminants,
        field_names: &field_names,
        unions: &unions,
    };
    let mut diags = Vec::new();
    let mut m = Module::new();
    let mut fns = BTreeMap::new();
    let (reachable, vtables) = krate.reachable_and_vtables();
    for (path, &id) in &reachable {
        let body = &krate.bodies[id];
        let attrs = krate.attrs.get(path).cloned().unwrap_or_default();
        if attrs.kernel
            && let Some(e) = abi::kernel_param_fn_pointer_field(krate, body)
        {
            diags.push(Diagnostic::new(
                Rule::Unsupported,
                path.clone(),
                e.to_string(),
            ));
            continue;
        }
        match abi::fn_abi(&layouts, &mut m, body, attrs.kernel) {
            Ok((abi, sig)) => {
                let kind = if attrs.kernel {
                    FunctionKind::Kernel
                } else {
                    FunctionKind::Device
                };
                let linkage = if attrs.kernel {
                    Linkage::External
                } else {
                    Linkage::Internal
                };
                let f = m.declare_function(
                    device_name(&krate.stable_name(path), attrs.kernel),
                    kind,
                    linkage,
                    Signature::new(&sig.params, sig.ret),
                );
                if sig.param_attrs.iter().any(|a| !a.is_empty()) {
                    m.functions[f].param_attrs = sig.param_attrs;
                }
                if attrs.inline == Some(InlineHint::Never) {
                    m.functions[f].attrs |= FuncAttrs::NOINLINE;
                }
                fns.insert(path.clone(), (f, abi));
            }
            Err(e) => diags.push(Diagnostic::new(
                Rule::Unsupported,
                path.clone(),
                e.to_string(),
            )),
        }
    }
    let shared = func::Shared {
        krate,
        layouts: &layouts,
        fns: &fns,
        options,
        vtables: &vtables,
    };
    let mut globals = globals::Globals::default();
    for (path, (f, abi)) in &fns {
        let Some(&id) = reachable.get(path) else {
            continue;
        };
        let body = &krate.bodies[id];
        if let Err(d) = func::lower_fn(
            &shared,
            &imp.eval,
            &mut globals,
            &mut m,
            *f,
            body,
            abi.clone(),
        ) {
            diags.push(d);
        }
    }
    diags.extend(func::check_constant_vtables(
        krate,
        &layouts,
        &mut m,
        &fns,
        &vtables,
        &imp.eval.memory,
    ));
    let host_constants = globals::host_constants(krate, &layouts).unwrap_or_else(|d| {
        diags.extend(d);
        BTreeMap::new()
    });
    // The shared-memory rules hold for every constant and static of the
    // kernel, used by the code or not.
    for (name, item) in &imp.eval.items {
        let (Ok(v), true) = (&item.value, name.starts_with("kernel::")) else {
            continue;
        };
        if item.kind == ItemKind::Promoted {
            continue;
        }
        if let Some(b) = krate.item_body(name)
            && let Err(d) =
                refusals::check_initializer(krate, &krate.bodies[b], &imp.eval.memory, *v, name)
            && !diags.contains(&d)
        {
            diags.push(d);
        }
    }
    if diags.is_empty()
        && let Err(errors) = device_ir::verify(&m)
    {
        diags.push(Diagnostic::new(
            Rule::Verifier,
            "module",
            errors.to_string(),
        ));
    }
    if !diags.is_empty() {
        diag::item_spans(krate, &mut diags);
        diags.sort_by(|a, b| {
            (&a.item, &a.location, &a.message).cmp(&(&b.item, &b.location, &b.message))
        });
        return Err(Diagnostics(diags));
    }
    let kernels = fns
        .iter()
        .filter(|(_, (_, a))| a.kernel)
        .map(|(p, (f, _))| (m.functions[*f].name.clone(), p.clone()))
        .collect();
    let functions = fns
        .iter()
        .map(|(p, (f, _))| (p.clone(), m.functions[*f].name.clone()))
        .collect();
    let mut kernel_params = BTreeMap::new();
    for (path, (f, a)) in fns.iter().filter(|(_, (_, a))| a.kernel) {
        let Some(&id) = reachable.get(path) else {
            continue;
        };
        let body = &krate.bodies[id];
        let params = a
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| KernelParam {
                ty: body
                    .locals
                    .values()
                    .nth(i + 1)
                    .map(|l| l.ty.clone())
                    .unwrap_or_else(mir_import::model::Ty::unit),
                slots: match arg {
                    abi::ArgAbi::Zst => 0,
                    abi::ArgAbi::Direct(n) => *n,
                    abi::ArgAbi::ByRef | abi::ArgAbi::ByVal { .. } => 1,
                    abi::ArgAbi::Disjoint => 2,
                },
                by_value_size: match arg {
                    abi::ArgAbi::ByVal { size, .. } => Some(*size),
                    _ => None,
                },
            })
            .collect();
        kernel_params.insert(m.functions[*f].name.clone(), params);
    }
    Ok(Lowered {
        module: m,
        kernels,
        functions,
        origins: globals.origins,
        kernel_params,
        host_constants,
    })
}
