//! The device calling convention of lowered functions.
//!
//! - Scalars are passed and returned directly; fat pointers as two parameters
//!   (data pointer, `i64` length).
//! - A kernel's `DisjointSlice` parameter is passed as (pointer, length), so a
//!   kernel's parameters are all scalars: the oracle passes buffer addresses
//!   and numbers only.
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
use mir_import::model::{Body, Ty};
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
    /// A kernel parameter passed by value as an aggregate.
    #[error(
        "kernel parameter {index} of type `{ty}` is an aggregate; kernels take scalars, \
         references, slices and `DisjointSlice`"
    )]
    AggregateKernelParam {
        /// The parameter, from 1.
        index: usize,
        /// Its type.
        ty: Ty,
    },
}

/// Whether a kernel parameter of type `ty`, held as the scalar or pair
/// `repr`, is one a launch passes: anything but a tuple or a struct, plus
/// the pointer wrappers a launch passes as pointers (`NonNull<T>`,
/// `Option<&T>`) and `NonZero<T>`.
fn launchable(ty: &Ty, repr: &Repr) -> bool {
    match ty {
        Ty::Tuple(_) => false,
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
    let mut params = Vec::new();
    let mut param_attrs = Vec::new();
    let ret_repr = repr_of(layouts, &body.return_ty)?;
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
    for i in 1..=body.arg_count as usize {
        let decl = body
            .locals
            .get(<mir_import::model::Local as cranelift_entity::EntityRef>::new(i))
            .ok_or(AbiError::MissingArgument)?;
        let repr = repr_of(layouts, &decl.ty)?;
        // A host passes a kernel numbers, pointers and slices: a tuple or
        // struct that the device would hold in registers (`(u32, u32)`,
        // `Option<u32>`) has no launch form, whatever its representation.
        if kernel
            && matches!(repr, Repr::Scalar(_) | Repr::Pair(..))
            && !launchable(&decl.ty, &repr)
        {
            return Err(AbiError::AggregateKernelParam {
                index: i,
                ty: decl.ty.clone(),
            });
        }
        let first = params.len();
        let abi = match &repr {
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
            Repr::Mem { .. } if kernel && is_disjoint(&decl.ty) => {
                params.push(generic_i8_ptr(m));
                params.push(m.types.i64());
                ArgAbi::Disjoint
            }
            Repr::Mem { .. } if kernel => {
                return Err(AbiError::AggregateKernelParam {
                    index: i,
                    ty: decl.ty.clone(),
                });
            }
            Repr::Mem { .. } => {
                params.push(generic_i8_ptr(m));
                ArgAbi::ByRef
            }
        };
        // The data pointer comes first (a slice's length follows it).
        param_attrs.resize(params.len(), ParamAttrs::empty());
        if kernel && params.len() > first && m.types.is_ptr(params[first]) {
            param_attrs[first] = kernel_param_attrs(&decl.ty);
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
