//! The device calling convention of lowered functions.
//!
//! - Scalars are passed and returned directly; fat pointers as two parameters
//!   (data pointer, `i64` length).
//! - A kernel's `DisjointSlice` parameter is passed as (pointer, length).
//! - A kernel's aggregate parameter (a struct, tuple, union, array or enum by
//!   value) is passed `byval`, as CUDA C and rustc's `ptx-kernel` ABI pass a
//!   struct: the launch copies its bytes into a `.param .align A .b8 p[N]`,
//!   which the kernel reads in place. The device IR types the pointer as
//!   `[N/A x iA]*`, so that its pointee has the aggregate's size and
//!   alignment.
//! - A device function's aggregate parameter is passed by reference to a copy
//!   the caller owns; an aggregate or pair result is returned through a
//!   caller-owned return slot (the first parameter). So a helper that returns
//!   a reference constant never needs a stack slot of its own.
//! - A kernel's shared-reference parameter to memory without interior
//!   mutability (`&[f32]`, `&u32`) is `noalias readonly`: Rust guarantees
//!   that nothing writes that memory while the reference lives, which is the
//!   whole launch, in any thread. LLVM then reads it through the read-only
//!   data path (`ld.global.nc`) and schedules around stores freely.
//!   `DisjointSlice` and `&[AtomicU32]` get nothing: other threads write them.

use device_ir::{Module, ParamAttrs, Ty as DTy};
use mir_import::eval::layout::Layouts;
use mir_import::model::{Body, Crate, Ty};
use mir_import::prelude;

use crate::repr::{Repr, ReprError, Scalar, generic_i8_ptr, repr_of};

/// How one argument is passed.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgAbi {
    /// Not passed at all.
    Zst,
    /// As this many scalar parameters (1 or 2).
    Direct(usize),
    /// As a pointer to a caller-owned copy.
    ByRef,
    /// A kernel's `DisjointSlice`: (pointer, length).
    Disjoint,
    /// A kernel's aggregate by value: one `byval` pointer to the launch's
    /// copy of its bytes.
    ByVal {
        /// The aggregate's size in bytes.
        size: u64,
        /// Its alignment.
        align: u64,
    },
}

/// How the result comes back.
#[derive(Clone, Debug, PartialEq)]
pub enum RetAbi {
    /// No result.
    Void,
    /// One scalar.
    Direct,
    /// Through a return slot passed as the first parameter.
    Sret(Repr),
}

/// A function's convention.
#[derive(Clone, Debug, PartialEq)]
pub struct FnAbi {
    /// Per MIR argument.
    pub args: Vec<ArgAbi>,
    /// The result.
    pub ret: RetAbi,
    /// Whether it is a kernel entry point.
    pub kernel: bool,
}

fn is_disjoint(ty: &Ty) -> bool {
    matches!(ty, Ty::Adt(p) if p.def_path() == prelude::DISJOINT_SLICE)
}

/// Whether `ty` certainly has no interior mutability (Rust's `Freeze`), so
/// that memory behind a `&ty` is immutable while the reference lives.
/// Conservative: scalars and arrays, slices and tuples of them; every ADT
/// (atomics, `Cell`, and structs that may hold them) is assumed mutable.
fn is_frozen(ty: &Ty) -> bool {
    match ty {
        Ty::Bool | Ty::Char | Ty::Int(_) | Ty::Float(_) | Ty::Str => true,
        Ty::Array(e, _) | Ty::Slice(e) => is_frozen(e),
        Ty::Tuple(items) => items.iter().all(is_frozen),
        _ => false,
    }
}

/// The promises a kernel parameter of type `ty` carries (see the module
/// docs); device functions get none, since a helper's reference may be one
/// the caller also reaches through another pointer.
fn kernel_param_attrs(ty: &Ty) -> ParamAttrs {
    match ty {
        Ty::Ref(mir_import::model::Mutability::Not, inner) if is_frozen(inner) => {
            ParamAttrs::NOALIAS | ParamAttrs::READONLY
        }
        _ => ParamAttrs::empty(),
    }
}

/// A function's device signature: parameter types, the promises about each
/// parameter, and the result type (`None` for `void`).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSig {
    /// The parameter types.
    pub params: Vec<DTy>,
    /// Per parameter; all empty for device functions.
    pub param_attrs: Vec<ParamAttrs>,
    /// The result type.
    pub ret: Option<DTy>,
}

/// Why a function has no device calling convention.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AbiError {
    /// A parameter's or the result's type has no device representation.
    #[error(transparent)]
    Repr(#[from] ReprError),
    /// A kernel entry point returns a value (CUDA kernels return `void`).
    #[error("a kernel returns nothing")]
    KernelReturns,
    /// The body declares fewer locals than its argument count.
    #[error("missing argument")]
    MissingArgument,
    /// A kernel parameter that holds a function pointer or a trait
    /// object's vtable: the launch would pass a host address, which a
    /// device call through it would jump to.
    #[error(
        "kernel parameter {index} of type `{ty}` holds {what}, which is not \
         supported: a launch passes host addresses, which device code cannot call"
    )]
    FnPointerKernelParam {
        /// The parameter, from 1.
        index: usize,
        /// Its type.
        ty: Ty,
        /// What it holds.
        what: CodeAddress,
    },
    /// A kernel parameter with a struct field (at any depth) that holds a
    /// function pointer or a trait object, as the kernel's source declares
    /// the struct.
    #[error(
        "kernel parameter {index} of type `{ty}` holds {what} in field `{field}`, \
         which is not supported: a launch passes host addresses, which device code cannot call"
    )]
    FnPointerKernelParamField {
        /// The parameter, from 1.
        index: usize,
        /// Its type.
        ty: Ty,
        /// The field, as a path from the parameter (`step.f`).
        field: String,
        /// What it holds.
        what: CodeAddress,
    },
    /// A kernel's aggregate parameter whose alignment no `.param` of an
    /// integer array can carry.
    #[error(
        "kernel parameter {index} of type `{ty}` is aligned to {align} bytes; a kernel takes \
         aggregates by value aligned to at most {MAX_BYVAL_ALIGN}"
    )]
    OverAlignedKernelParam {
        /// The parameter, from 1.
        index: usize,
        /// Its type.
        ty: Ty,
        /// Its alignment.
        align: u64,
    },
}

/// A code address a value may hold, which a launch cannot pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeAddress {
    /// A `fn` pointer.
    FnPointer,
    /// A pointer to a trait object, whose vtable holds function addresses.
    TraitObject,
}

impl std::fmt::Display for CodeAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CodeAddress::FnPointer => "a function pointer",
            CodeAddress::TraitObject => {
                "a trait object pointer (its vtable holds function addresses)"
            }
        })
    }
}

/// The code address `ty` holds where its type shows it: itself, or behind
/// a reference, raw pointer, array, slice or tuple, or as a generic
/// argument (`Option<fn()>`). A struct's own fields are not seen.
fn holds_code_address(ty: &Ty) -> Option<CodeAddress> {
    match ty {
        Ty::FnPtr(..) => Some(CodeAddress::FnPointer),
        // A trait object, behind a pointer or as a type argument
        // (`NonNull<dyn Shape>`): a pointer to it is fat with a vtable
        // address.
        t if t.trait_object().is_some() => Some(CodeAddress::TraitObject),
        Ty::Ref(_, t) | Ty::RawPtr(_, t) | Ty::Array(t, _) | Ty::Slice(t) => holds_code_address(t),
        Ty::Tuple(items) => items.iter().find_map(holds_code_address),
        Ty::Adt(p) => p.generic_args().iter().find_map(|a| match a {
            mir_import::model::GenericArg::Type(t) => holds_code_address(t),
            _ => None,
        }),
        _ => None,
    }
}

/// The first struct field of `ty`, at any depth, that holds a function
/// pointer or a trait object, as a path (`step.f`), and which: what
/// [`holds_code_address`] cannot see,
/// since a struct's type does not show its fields. The kernel's source
/// says them (`ItemAttrs::field_types`); a field of a type it does not
/// declare is not looked into.
pub fn fn_pointer_field(krate: &Crate, ty: &Ty) -> Option<(String, CodeAddress)> {
    fn walk(krate: &Crate, ty: &Ty, depth: u32) -> Option<(String, CodeAddress)> {
        let p = match ty {
            Ty::Ref(_, t) | Ty::RawPtr(_, t) | Ty::Array(t, _) | Ty::Slice(t) => {
                return walk(krate, t, depth);
            }
            Ty::Tuple(items) => return items.iter().find_map(|t| walk(krate, t, depth)),
            Ty::Adt(p) => p,
            _ => return None,
        };
        // `DisjointSlice<Step>`, `Option<&Step>`: the arguments' fields.
        let in_args = p.generic_args().iter().find_map(|a| match a {
            mir_import::model::GenericArg::Type(t) => walk(krate, t, depth),
            _ => None,
        });
        if in_args.is_some() {
            return in_args;
        }
        let attrs = krate.attrs.get(&p.def_path())?;
        let types = attrs.field_types.as_ref()?;
        for (i, src) in types.iter().enumerate() {
            let name = attrs
                .field_names
                .as_ref()
                .and_then(|n| n.get(i).cloned())
                .unwrap_or_else(|| i.to_string());
            if mir_import::attrs::source_type_holds_fn_pointer(src) {
                return Some((name, CodeAddress::FnPointer));
            }
            if mir_import::attrs::source_type_holds_trait_object(src) {
                return Some((name, CodeAddress::TraitObject));
            }
            let inner = mir_import::attrs::resolve_source_type(src, krate);
            if depth > 0
                && let Some((deeper, what)) = inner.and_then(|t| walk(krate, &t, depth - 1))
            {
                return Some((format!("{name}.{deeper}"), what));
            }
        }
        None
    }
    walk(krate, ty, 8)
}

/// The refusal of a kernel whose parameter holds a function pointer in a
/// struct field ([`fn_pointer_field`]), if one does.
pub fn kernel_param_fn_pointer_field(krate: &Crate, body: &Body) -> Option<AbiError> {
    (1..=body.arg_count as usize).find_map(|index| {
        let ty = &body
            .locals
            .get(<mir_import::model::Local as cranelift_entity::EntityRef>::new(index))?
            .ty;
        let (field, what) = fn_pointer_field(krate, ty)?;
        Some(AbiError::FnPointerKernelParamField {
            index,
            ty: ty.clone(),
            field,
            what,
        })
    })
}

/// The largest alignment of a kernel's by-value aggregate: that of `i128`,
/// the widest integer the pointee array can be made of.
pub const MAX_BYVAL_ALIGN: u64 = 16;

/// Whether a kernel parameter of type `ty`, held as the scalar or pair
/// `repr`, is passed as itself (numbers, pointers, slices): anything but a
/// tuple or a struct, plus the pointer wrappers a launch passes as pointers
/// (`NonNull<T>`, `Option<&T>`) and `NonZero<T>`. The rest is an aggregate,
/// passed by value as its bytes, whatever registers the device would hold
/// it in (`(u32, u32)`, `Option<u32>`).
fn passed_as_scalars(ty: &Ty, repr: &Repr) -> bool {
    match ty {
        Ty::Tuple(_) | Ty::Array(..) => false,
        Ty::Adt(p) => {
            let path = p.def_path();
            path.ends_with("ptr::NonNull")
                || path.ends_with("num::NonZero")
                || path.ends_with("option::Option")
                    && matches!(repr, Repr::Scalar(Scalar::Ptr | Scalar::Int(64)))
        }
        _ => true,
    }
}

/// The device type of a `byval` pointer to `size` bytes aligned to
/// `align`: a generic pointer to `[size/align x i(8*align)]`.
fn byval_ptr(m: &mut Module, size: u64, align: u64) -> DTy {
    let word = m.types.int((8 * align) as u16);
    let words = m.types.array(word, size / align);
    m.types.ptr(words, device_ir::AddressSpace::Generic)
}

/// The convention of `body`, and its device signature.
///
/// # Errors
///
/// [`AbiError`] naming the parameter or result the device cannot take.
pub fn fn_abi(
    layouts: &Layouts,
    m: &mut Module,
    body: &Body,
    kernel: bool,
) -> Result<(FnAbi, DeviceSig), AbiError> {
    let inputs = (1..=body.arg_count as usize)
        .map(|i| {
            body.locals
                .get(<mir_import::model::Local as cranelift_entity::EntityRef>::new(i))
                .map(|decl| decl.ty.clone())
                .ok_or(AbiError::MissingArgument)
        })
        .collect::<Result<Vec<Ty>, _>>()?;
    convention(layouts, m, &inputs, &body.return_ty, kernel)
}

/// The convention of a call through a `fn(inputs) -> output` pointer: that
/// of every device function of that signature, which is what the pointer
/// may hold (kernels have no address).
///
/// # Errors
///
/// [`AbiError`] naming the parameter or result the device cannot take.
pub fn fn_ptr_abi(
    layouts: &Layouts,
    m: &mut Module,
    inputs: &[Ty],
    output: &Ty,
) -> Result<(FnAbi, DeviceSig), AbiError> {
    convention(layouts, m, inputs, output, false)
}

/// The convention of a function taking `inputs` and returning `output`.
fn convention(
    layouts: &Layouts,
    m: &mut Module,
    inputs: &[Ty],
    output: &Ty,
    kernel: bool,
) -> Result<(FnAbi, DeviceSig), AbiError> {
    let mut params = Vec::new();
    let mut param_attrs = Vec::new();
    let ret_repr = repr_of(layouts, output)?;
    let (ret, ret_ty) = match &ret_repr {
        Repr::Zst => (RetAbi::Void, None),
        Repr::Scalar(s) => (RetAbi::Direct, Some(s.ssa_ty(m))),
        r => {
            if kernel {
                return Err(AbiError::KernelReturns);
            }
            params.push(generic_i8_ptr(m));
            (RetAbi::Sret(r.clone()), None)
        }
    };
    let mut args = Vec::new();
    for (i, ty) in (1..).zip(inputs) {
        if kernel && let Some(what) = holds_code_address(ty) {
            return Err(AbiError::FnPointerKernelParam {
                index: i,
                ty: ty.clone(),
                what,
            });
        }
        let repr = repr_of(layouts, ty)?;
        let first = params.len();
        let by_value = match &repr {
            Repr::Zst => false,
            Repr::Scalar(_) | Repr::Pair(..) => !passed_as_scalars(ty, &repr),
            Repr::Mem { .. } => !is_disjoint(ty),
        };
        let abi = match &repr {
            _ if kernel && by_value => {
                // The type's own layout: the one the host's bytes follow.
                let layout = layouts.of(ty).map_err(ReprError::from)?;
                let (size, align) = (layout.size, layout.align);
                if align > MAX_BYVAL_ALIGN {
                    return Err(AbiError::OverAlignedKernelParam {
                        index: i,
                        ty: ty.clone(),
                        align,
                    });
                }
                params.push(byval_ptr(m, size, align));
                ArgAbi::ByVal { size, align }
            }
            Repr::Zst => ArgAbi::Zst,
            Repr::Scalar(s) => {
                params.push(s.ssa_ty(m));
                ArgAbi::Direct(1)
            }
            Repr::Pair(a, _, b, _) => {
                params.push(a.ssa_ty(m));
                params.push(b.ssa_ty(m));
                ArgAbi::Direct(2)
            }
            Repr::Mem { .. } if kernel => {
                params.push(generic_i8_ptr(m));
                params.push(m.types.i64());
                ArgAbi::Disjoint
            }
            Repr::Mem { .. } => {
                params.push(generic_i8_ptr(m));
                ArgAbi::ByRef
            }
        };
        // The data pointer comes first (a slice's length follows it).
        param_attrs.resize(params.len(), ParamAttrs::empty());
        if let ArgAbi::ByVal { .. } = abi {
            param_attrs[first] = ParamAttrs::BYVAL;
        } else if kernel && params.len() > first && m.types.is_ptr(params[first]) {
            param_attrs[first] = kernel_param_attrs(ty);
        }
        args.push(abi);
    }
    param_attrs.resize(params.len(), ParamAttrs::empty());
    let sig = DeviceSig {
        params,
        param_attrs,
        ret: ret_ty,
    };
    Ok((FnAbi { args, ret, kernel }, sig))
}
