//! Calls: device functions, atomics and panics (the prelude's intrinsics
//! are `intrinsics.rs`). Which calls have a fixed meaning is mir-import's
//! [`calls::classify`]; this module only gives each its device form.

use device_ir::{CastOp, IntFn, MemFlags, Ordering as DOrd, RmwOp, Scope, Value};
use mir_import::calls::{self, AtomicOp, AtomicOrdering, KnownCall, MinMax, OrderingArg, RmwKind};
use mir_import::model::{
    ArrayLen, BasicBlock, Callee, ConstOperand, IntTy, Operand, Place, Ty, ValTree,
};

use super::FnLower;
use super::values::{PlaceRef, Val};
use crate::abi::{ArgAbi, RetAbi};
use crate::diag::Diagnostic;
use crate::repr::Repr;

fn int_info(ty: &mir_import::model::Ty) -> Option<(u16, bool)> {
    match ty {
        mir_import::model::Ty::Int(i) => Some(((i.size() * 8) as u16, i.is_signed())),
        _ => None,
    }
}

/// What a device call calls: a function, or the function at an address.
pub(super) enum CallTarget {
    Direct(device_ir::FuncId),
    Indirect(Value, device_ir::Signature),
}

/// An atomic's ordering: fixed by a generic argument, or named by an operand.
#[derive(Clone, Copy)]
enum OrdFrom<'o> {
    Known(DOrd),
    Operand(&'o Operand),
}

/// The device ordering of a Rust ordering.
pub(super) fn device_ordering(o: AtomicOrdering) -> DOrd {
    match o {
        AtomicOrdering::Relaxed => DOrd::Relaxed,
        AtomicOrdering::Acquire => DOrd::Acquire,
        AtomicOrdering::Release => DOrd::Release,
        AtomicOrdering::AcqRel => DOrd::AcqRel,
        AtomicOrdering::SeqCst => DOrd::SeqCst,
    }
}

impl FnLower<'_, '_> {
    pub(super) fn lower_call(
        &mut self,
        func: &Callee,
        args: &[Operand],
        dest: &Place,
        target: Option<BasicBlock>,
    ) -> Result<(), Diagnostic> {
        let path = match func {
            Callee::Item(path) => path,
            Callee::Operand(callee) => {
                let result = self.indirect_call(callee, args, dest)?;
                return self.finish_call(result, dest, target);
            }
        };
        if let Some((object, method)) = self.sh.krate.virtual_call(path) {
            let Some(principal) = mir_import::model::principal(object) else {
                return Err(self.internal("a trait object without a principal trait"));
            };
            let result = self.virtual_call(&principal, &method, args, dest)?;
            return self.finish_call(result, dest, target);
        }
        let known = calls::classify(path);
        // A panic, or a validity assertion about `!`, which always fails.
        let asserted = match path.generic_args() {
            [mir_import::model::GenericArg::Type(t)] => Some(t),
            _ => None,
        };
        let never = asserted.is_some_and(known_uninhabited);
        if known == Some(KnownCall::Panic) || (known == Some(KnownCall::AssertValid) && never) {
            self.trap();
            return Ok(());
        }
        // Any other validity assertion holds for plain numbers and raw
        // pointers (every byte pattern, zero or not, is one of them); for
        // other types rustc may panic, which is not decided here.
        if known == Some(KnownCall::AssertValid) && !asserted.is_some_and(plain_data) {
            return Err(self.unsupported(format!(
                "`{path}` about a type other than numbers and raw pointers is not supported"
            )));
        }
        let result = if let Some(v) = match known {
            Some(k) => self.known_call(k, args, dest)?,
            None => None,
        } {
            v
        } else if let Some((f, abi)) = self
            .sh
            .fns
            .get(&self.sh.krate.resolve_callee(path))
            .cloned()
        {
            self.device_call(CallTarget::Direct(f), &abi, args, dest, None)?
        } else {
            // A call that stayed generic (`f::<T>`, `<O as Trait>::m`) is
            // an instance of generic code nobody monomorphised.
            let generic = path.segments.iter().any(|s| !s.args.is_empty())
                || path.to_string().starts_with('<');
            let closure = path.to_string().contains("{closure@");
            // A call monomorphisation recognised and left, for its reason.
            if let Some(reason) = self.sh.krate.left_calls.get(&path.to_string()) {
                return Err(self.unsupported(format!("{reason}: `{path}`")));
            }
            let what = if closure {
                "calls with a closure that could not be instantiated are not supported (the body of a closure defined inside a generic function is generic too, and is not instantiated; a generic function of the standard library that rustc did not inline has no body here; let rustc inline the call, or define the closure outside generic code)"
            } else if generic {
                "calls to generic functions or trait methods that rustc did not inline are not supported"
            } else {
                "calls to functions without a device body are not supported"
            };
            return Err(self.unsupported(format!(
                "{what}: rustc printed no MIR body for `{path}` that the device can run"
            )));
        };
        self.finish_call(result, dest, target)
    }

    /// Writes a call's `result` (unless the call wrote `dest` itself) and
    /// goes on to `target`; a call that never returns ends its block.
    fn finish_call(
        &mut self,
        result: Option<Val>,
        dest: &Place,
        target: Option<BasicBlock>,
    ) -> Result<(), Diagnostic> {
        if let Some(v) = result {
            let r = self.place(dest)?;
            self.write_place(&r, v)?;
        }
        match target {
            Some(bb) => self.jump_to(bb),
            None => {
                self.b.unreachable();
            }
        }
        Ok(())
    }

    /// A call through a `fn` pointer: the device function at the pointer's
    /// address, called with the convention every device function of the
    /// pointer's signature has.
    fn indirect_call(
        &mut self,
        callee: &Operand,
        args: &[Operand],
        dest: &Place,
    ) -> Result<Option<Val>, Diagnostic> {
        let ty = self.operand_ty(callee)?;
        let Ty::FnPtr(inputs, output) = &ty else {
            return Err(self.unsupported(format!(
                "a call through `{ty}`, which is not a function pointer"
            )));
        };
        let (abi, sig) = crate::abi::fn_ptr_abi(self.sh.layouts, self.b.module(), inputs, output)
            .map_err(|e| self.unsupported(format!("a call through `{ty}`: {e}")))?;
        let address = self.scalar_operand(callee)?;
        let sig = device_ir::Signature::new(&sig.params, sig.ret);
        self.device_call(CallTarget::Indirect(address, sig), &abi, args, dest, None)
    }

    /// A call whose meaning is fixed although rustc prints no body for it
    /// (mir-import's [`calls::classify`]): hints, `Ord::min`/`max` on
    /// integers, pointer offsets, atomics and the prelude's primitives.
    /// `Ok(None)` when the call is not one this lowering gives a meaning to
    /// after all (`min` on a non-integer): it is then an ordinary call.
    /// `Ok(Some(None))` when the call wrote its result into `dest` itself (a
    /// compare-exchange's `Result<T, T>`, which lives in memory).
    fn known_call(
        &mut self,
        k: KnownCall,
        args: &[Operand],
        dest: &Place,
    ) -> Result<Option<Option<Val>>, Diagnostic> {
        let v = match k {
            KnownCall::Atomic {
                op: op @ AtomicOp::CompareExchange { .. },
                ordering,
            } => return self.compare_exchange(&op, ordering, args, dest),
            KnownCall::Swap => {
                self.swap(args)?;
                Some(Val::Zst)
            }
            KnownCall::WriteBytes => {
                self.write_bytes(args)?;
                Some(Val::Zst)
            }
            KnownCall::SwapBytes { chunk } => {
                self.swap_bytes(args, chunk)?;
                Some(Val::Zst)
            }
            KnownCall::AssertValid => Some(Val::Zst),
            KnownCall::CopyOverlapping => {
                let [src, dst, count] = args else {
                    return Err(self.unsupported("`intrinsics::copy` without three operands"));
                };
                self.copy_elements(dst, src, count, true)?;
                Some(Val::Zst)
            }
            KnownCall::VolatileLoad if args.len() == 1 => {
                return self.volatile_load(&args[0], dest);
            }
            k => self.known_value(k, args)?,
        };
        Ok(v.map(Some))
    }

    /// `volatile_load(p)`: `*p` read now, with [`Self::volatile_flags`].
    /// An aggregate is read chunk by chunk straight into `dest` (handing
    /// back its address would leave the reading to the destination's plain
    /// copy), which [`Self::known_call`]'s `Ok(Some(None))` says.
    fn volatile_load(
        &mut self,
        ptr: &Operand,
        dest: &Place,
    ) -> Result<Option<Option<Val>>, Diagnostic> {
        let elem = self
            .operand_ty(ptr)?
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported("`volatile_load` of a non-pointer"))?;
        let p = self.scalar_operand(ptr)?;
        let flags = self.volatile_flags(p);
        let repr = self.repr(&elem)?;
        if let Repr::Mem { size, align } = repr {
            let PlaceRef::Mem { addr, .. } = self.place(dest)? else {
                return Err(self.internal("a volatile read of an aggregate into registers"));
            };
            self.memcpy_with(addr, p, size, align, flags, MemFlags::empty());
            return Ok(Some(None));
        }
        Ok(Some(Some(self.load_repr_with(p, &repr, flags))))
    }

    /// A known call whose result is one value (see [`Self::known_call`]).
    fn known_value(&mut self, k: KnownCall, args: &[Operand]) -> Result<Option<Val>, Diagnostic> {
        match k {
            KnownCall::ColdPath => Ok(Some(Val::Zst)),
            KnownCall::StaticallyKnown => Ok(Some(Val::Immediate(self.iconst(1, 0)))),
            KnownCall::BlackBox => match args {
                [v] => Ok(Some(self.read_operand(v)?)),
                _ => Ok(None),
            },
            KnownCall::CompareBytes => Ok(Some(Val::Immediate(self.compare_bytes(args)?))),
            KnownCall::RawEq => Ok(Some(Val::Immediate(self.raw_eq(args)?))),
            KnownCall::Device(i) => self.intrinsic(i, args),
            KnownCall::Math(f) => {
                if args.len() != f.arity() {
                    return Err(self.unsupported(format!(
                        "float function `{}` with {} operands",
                        f.name(),
                        args.len()
                    )));
                }
                let vals = args
                    .iter()
                    .map(|a| self.scalar_operand(a))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Some(Val::Immediate(self.b.math(f, &vals))))
            }
            KnownCall::Int(f) => {
                if args.len() != f.arity() {
                    return Err(self.unsupported(format!(
                        "integer function `{}` with {} operands",
                        f.name(),
                        args.len()
                    )));
                }
                let x = self.scalar_operand(&args[0])?;
                let ty = self.b.value_ty(x);
                let mut vals = vec![x];
                if let Some(n) = args.get(1) {
                    // A rotation's count is a `u32` whatever the value's width.
                    let n = self.scalar_operand(n)?;
                    vals.push(self.zext_or_trunc(n, ty));
                }
                let bits = self.b.types().int_bits(ty);
                let v = if bits == Some(128) {
                    self.int_fn_128(f, &vals)
                } else if f == IntFn::SwapBytes && bits == Some(8) {
                    // One byte in reverse order is itself (`u8::swap_bytes`,
                    // `bswap` of a `u8`); LLVM's `bswap` has no 8-bit form.
                    x
                } else {
                    self.b.int_fn(f, &vals)
                };
                Ok(Some(Val::Immediate(match f {
                    // Rust's bit counts are `u32`s.
                    IntFn::CountOnes | IntFn::LeadingZeros | IntFn::TrailingZeros => {
                        let u32t = self.b.types().i32();
                        self.zext_or_trunc(v, u32t)
                    }
                    _ => v,
                })))
            }
            KnownCall::Saturating { sub } if args.len() == 2 => {
                let Some((bits, signed, x, y)) = self.int_operands(args)? else {
                    return Ok(None);
                };
                let v = self.saturating(sub, x, y, bits, signed)?;
                Ok(Some(Val::Immediate(v)))
            }
            KnownCall::Atomic { op, ordering } => self.atomic(&op, ordering, args),
            KnownCall::MinMax(which) if args.len() == 2 => {
                let Some((_, signed, a, b)) = self.int_operands(args)? else {
                    return Ok(None);
                };
                let cc = match (which, signed) {
                    (MinMax::Min, true) => device_ir::IntCC::Slt,
                    (MinMax::Min, false) => device_ir::IntCC::Ult,
                    (MinMax::Max, true) => device_ir::IntCC::Sgt,
                    (MinMax::Max, false) => device_ir::IntCC::Ugt,
                };
                let c = self.b.icmp(cc, a, b);
                Ok(Some(Val::Immediate(self.b.select(c, a, b))))
            }
            KnownCall::Select if args.len() == 3 => {
                // Scalars and pairs part by part; a value in memory (std
                // selects `MaybeUninit<T>`) by its address, whose bytes the
                // write to the destination then copies.
                let c = self.scalar_operand(&args[0])?;
                let v = match (self.read_operand(&args[1])?, self.read_operand(&args[2])?) {
                    (Val::Zst, Val::Zst) => Val::Zst,
                    (Val::Immediate(a), Val::Immediate(b)) => {
                        Val::Immediate(self.b.select(c, a, b))
                    }
                    (Val::ByRef(a), Val::ByRef(b)) => Val::ByRef(self.b.select(c, a, b)),
                    (Val::Pair(a0, a1), Val::Pair(b0, b1)) => {
                        Val::Pair(self.b.select(c, a0, b0), self.b.select(c, a1, b1))
                    }
                    _ => return Ok(None),
                };
                Ok(Some(v))
            }
            KnownCall::ExactDiv if args.len() == 2 => {
                // The quotient, as `udiv exact` / `sdiv exact` give it when
                // the promise holds (an inexact division is undefined).
                let Some((_, signed, a, b)) = self.int_operands(args)? else {
                    return Ok(None);
                };
                let op = if signed {
                    device_ir::BinaryOp::SDiv
                } else {
                    device_ir::BinaryOp::UDiv
                };
                Ok(Some(Val::Immediate(self.b.binary(op, a, b))))
            }
            KnownCall::SizeOfVal { align } if args.len() == 1 => {
                let pointee = self
                    .operand_ty(&args[0])?
                    .pointee()
                    .cloned()
                    .ok_or_else(|| self.unsupported("`size_of_val` of a non-pointer"))?;
                let usize_ty = self.b.types().i64();
                let (elem, unsized_len) = match &pointee {
                    Ty::Slice(e) => ((**e).clone(), true),
                    Ty::Str => (Ty::Int(IntTy::U8), true),
                    // A struct ending in a slice: its prefix and tail,
                    // rounded up to its alignment.
                    dst if let Some(tail) = self.sh.layouts.slice_tail(dst) => {
                        return self.size_of_struct_with_slice_tail(&args[0], &tail, align);
                    }
                    // A trait object's: its vtable's.
                    t if t.trait_object().is_some() => {
                        return self.object_size_or_align(&args[0], align).map(Some);
                    }
                    // A `dyn` tail's size and alignment are dynamic.
                    dst if self.sh.layouts.table.sizedness(dst) != Some(true) => {
                        return Err(self.unsupported(format!(
                            "`size_of_val` or `align_of_val` of `{dst}`, which is dynamically sized or whose sizedness the layout probe could not learn"
                        )));
                    }
                    sized => (sized.clone(), false),
                };
                let l = self.layout_of(&elem)?;
                if align || !unsized_len {
                    let v = if align { l.align } else { l.size };
                    return Ok(Some(Val::Immediate(self.b.iconst(usize_ty, v as i128))));
                }
                // A slice's size is its length times the element's size
                // (which is its stride: sizes are multiples of alignments).
                let Val::Pair(_, len) = self.read_operand(&args[0])? else {
                    return Err(self.internal("`size_of_val` of a thin slice pointer"));
                };
                let size = self.b.iconst(usize_ty, l.size as i128);
                Ok(Some(Val::Immediate(self.b.binary(
                    device_ir::BinaryOp::Mul,
                    len,
                    size,
                ))))
            }
            KnownCall::CarryingMulAdd if args.len() == 4 => {
                let ty = self.operand_ty(&args[0])?;
                let Some((bits, signed)) = int_info(&ty) else {
                    return Ok(None);
                };
                if bits > 64 {
                    return Err(self.unsupported(format!(
                        "`carrying_mul_add` on `{ty}`: its product needs {} bits, and the device has \
                         no integers wider than 128",
                        2 * bits
                    )));
                }
                // Exact in twice the width: (2^N - 1)^2 + 2 (2^N - 1) is
                // 2^2N - 1, and the signed extremes fit likewise.
                let wide = self.b.types().int(2 * bits);
                let narrow = self.b.types().int(bits);
                let ext = if signed { CastOp::SExt } else { CastOp::ZExt };
                let mut terms = Vec::with_capacity(4);
                for a in args {
                    let v = self.scalar_operand(a)?;
                    terms.push(self.b.cast(ext, v, wide));
                }
                let product = self.b.imul(terms[0], terms[1]);
                let sum = self.b.iadd(product, terms[2]);
                let sum = self.b.iadd(sum, terms[3]);
                let low = self.b.cast(CastOp::Trunc, sum, narrow);
                let shift = self.b.iconst(wide, i128::from(bits));
                let shr = if signed {
                    device_ir::BinaryOp::AShr
                } else {
                    device_ir::BinaryOp::LShr
                };
                let high = self.b.binary(shr, sum, shift);
                let high = self.b.cast(CastOp::Trunc, high, narrow);
                Ok(Some(Val::Pair(low, high)))
            }
            KnownCall::VolatileStore if args.len() == 2 => {
                let elem = self
                    .operand_ty(&args[0])?
                    .pointee()
                    .cloned()
                    .ok_or_else(|| self.unsupported("`volatile_store` to a non-pointer"))?;
                let p = self.scalar_operand(&args[0])?;
                let v = self.read_operand(&args[1])?;
                let flags = self.volatile_flags(p);
                self.write_mem_with(p, &elem, v, flags)?;
                Ok(Some(Val::Zst))
            }
            KnownCall::ArithOffset if args.len() == 2 => {
                // Wrapping `ptr.wrapping_offset(n)`: n elements, no bounds promise.
                let size = self.pointee_size(&args[0], "arith_offset")?;
                let (p, n) = (
                    self.scalar_operand(&args[0])?,
                    self.scalar_operand(&args[1])?,
                );
                let s = self.iconst(64, size as i128);
                let off = self.b.imul(n, s);
                Ok(Some(Val::Immediate(self.b.byte_offset(p, off))))
            }
            KnownCall::OffsetFrom { .. } => {
                let size = self.pointee_size(&args[0], "offset_from")?.max(1);
                let (a, b) = (
                    self.scalar_operand(&args[0])?,
                    self.scalar_operand(&args[1])?,
                );
                let t = self.b.types().i64();
                let (ia, ib) = (
                    self.b.cast(CastOp::PtrToInt, a, t),
                    self.b.cast(CastOp::PtrToInt, b, t),
                );
                let d = self.b.binary(device_ir::BinaryOp::Sub, ia, ib);
                let s = self.b.iconst(t, size as i128);
                Ok(Some(Val::Immediate(self.b.binary(
                    device_ir::BinaryOp::SDiv,
                    d,
                    s,
                ))))
            }
            KnownCall::MinMax(_)
            | KnownCall::Select
            | KnownCall::ExactDiv
            | KnownCall::VolatileLoad
            | KnownCall::VolatileStore
            | KnownCall::CarryingMulAdd
            | KnownCall::SizeOfVal { .. }
            | KnownCall::Saturating { .. }
            | KnownCall::ArithOffset
            | KnownCall::NullPtr
            | KnownCall::Uninit
            | KnownCall::Swap
            | KnownCall::SwapBytes { .. }
            | KnownCall::WriteBytes
            | KnownCall::RangeInclusiveNew
            | KnownCall::CopyOverlapping
            | KnownCall::AssertValid
            | KnownCall::Panic => Ok(None),
        }
    }

    /// The first two operands, when the first is an integer: its width and
    /// signedness, and both values. `None` for any other type (the call is
    /// then not the known one after all).
    fn int_operands(
        &mut self,
        args: &[Operand],
    ) -> Result<Option<(u16, bool, Value, Value)>, Diagnostic> {
        let ty = self.operand_ty(&args[0])?;
        let Some((bits, signed)) = int_info(&ty) else {
            return Ok(None);
        };
        Ok(Some((
            bits,
            signed,
            self.scalar_operand(&args[0])?,
            self.scalar_operand(&args[1])?,
        )))
    }

    /// `size_of_val` (or with `align`, `align_of_val`) of a struct ending
    /// in a slice, through the fat pointer `op`: the tail's offset plus
    /// length times element size, rounded up to the struct's alignment, as
    /// rustc computes it.
    fn size_of_struct_with_slice_tail(
        &mut self,
        op: &Operand,
        tail: &mir_import::eval::layout::SliceTail,
        align: bool,
    ) -> Result<Option<Val>, Diagnostic> {
        let usize_ty = self.b.types().i64();
        if align {
            return Ok(Some(Val::Immediate(
                self.b.iconst(usize_ty, tail.align as i128),
            )));
        }
        let Val::Pair(_, len) = self.read_operand(op)? else {
            return Err(
                self.internal("`size_of_val` of a thin pointer to a struct ending in a slice")
            );
        };
        let elem_size = self.b.iconst(usize_ty, tail.elem_size as i128);
        let tail_bytes = self.b.binary(device_ir::BinaryOp::Mul, len, elem_size);
        // offset + tail + (align - 1), then the low bits cleared.
        let bias = self
            .b
            .iconst(usize_ty, (tail.offset + tail.align - 1) as i128);
        let unrounded = self.b.binary(device_ir::BinaryOp::Add, tail_bytes, bias);
        let mask = self.b.iconst(usize_ty, !(tail.align as i128 - 1));
        Ok(Some(Val::Immediate(self.b.binary(
            device_ir::BinaryOp::And,
            unrounded,
            mask,
        ))))
    }

    /// The size of what the pointer operand `op` points to; `what` names the
    /// call for the diagnostic.
    pub(super) fn pointee_size(&self, op: &Operand, what: &str) -> Result<u64, Diagnostic> {
        let ty = self.operand_ty(op)?;
        let elem = ty
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported(what))?;
        Ok(self.layout_of(&elem)?.size)
    }

    /// The ordering an argument names (`Ordering::Acquire`, printed as a
    /// path or a value).
    pub(super) fn ordering(&self, op: &Operand) -> Result<DOrd, Diagnostic> {
        let name = match op {
            Operand::Const(ConstOperand::Item(p)) => p.last_name().to_string(),
            Operand::Const(ConstOperand::Value(ValTree::Path(p))) => p.last_name().to_string(),
            _ => {
                return Err(self.unsupported(
                    "an atomic ordering that is not a constant `Ordering` is not supported",
                ));
            }
        };
        AtomicOrdering::from_name(&name)
            .map(device_ordering)
            .ok_or_else(|| self.unsupported(format!("atomic ordering `{name}`")))
    }

    /// `atomic_fence::<ORD>()`, at system scope as Rust's atomics are: a
    /// `Relaxed` fence, on which `core::sync::atomic::fence` panics, is
    /// refused here by name.
    fn fence(&mut self, ordering: OrderingArg, args: &[Operand]) -> Result<(), Diagnostic> {
        let o = match (ordering, args) {
            (OrderingArg::Generic(o), []) => device_ordering(o),
            (OrderingArg::Arguments, [o]) => self.ordering(o)?,
            _ => {
                return Err(self.unsupported("an `atomic_fence` whose ordering is not known"));
            }
        };
        if o == DOrd::Relaxed {
            return Err(self.unsupported("a `Relaxed` fence (core panics on one)"));
        }
        self.b.fence(o, Scope::Sys);
        Ok(())
    }

    /// An atomic intrinsic at system scope (Rust's atomics order against
    /// every observer, host included). Its ordering is the trailing
    /// argument(s), or a generic argument that stands for all of them.
    fn atomic(
        &mut self,
        op: &AtomicOp,
        ordering: OrderingArg,
        args: &[Operand],
    ) -> Result<Option<Val>, Diagnostic> {
        if *op == AtomicOp::Fence {
            return self.fence(ordering, args).map(|()| Some(Val::Zst));
        }
        let ptr_op = args
            .first()
            .ok_or_else(|| self.unsupported("atomic without a pointer"))?;
        let (typed, t, _) = self.atomic_ptr(ptr_op)?;
        let scope = Scope::Sys;
        let unknown = || format!("atomic intrinsic `{}`", op.name());
        // The value operands, and the ordering (compare-exchange, with its
        // two orderings, is `compare_exchange` in atomics.rs).
        let (values, ord) = match ordering {
            OrderingArg::Generic(o) => (&args[1..], OrdFrom::Known(device_ordering(o))),
            OrderingArg::Arguments => match args.len().checked_sub(1) {
                Some(k) if k >= 1 => (&args[1..k], OrdFrom::Operand(&args[k])),
                _ => return Err(self.unsupported(unknown())),
            },
        };
        let v = match (op, values) {
            (AtomicOp::Load, []) => {
                let o = self.ord(ord)?;
                Val::Immediate(self.b.atomic_load(t, typed, o, scope))
            }
            (AtomicOp::Store, [val]) => {
                let o = self.ord(ord)?;
                let x = self.scalar_operand(val)?;
                self.b.atomic_store(x, typed, o, scope);
                Val::Zst
            }
            (AtomicOp::Sub, [val]) => {
                let o = self.ord(ord)?;
                let x = self.scalar_operand(val)?;
                let zero = self.b.iconst(t, 0);
                let neg = self.b.binary(device_ir::BinaryOp::Sub, zero, x);
                Val::Immediate(self.b.atomic_rmw(RmwOp::Add, typed, neg, o, scope))
            }
            (AtomicOp::Rmw(kind), [val]) => {
                let rmw = match kind {
                    RmwKind::Add => RmwOp::Add,
                    RmwKind::Xchg => RmwOp::Xchg,
                    RmwKind::And => RmwOp::And,
                    RmwKind::Or => RmwOp::Or,
                    RmwKind::Xor => RmwOp::Xor,
                    RmwKind::Max => RmwOp::SMax,
                    RmwKind::Min => RmwOp::SMin,
                    RmwKind::UMax => RmwOp::UMax,
                    RmwKind::UMin => RmwOp::UMin,
                };
                let o = self.ord(ord)?;
                let x = self.scalar_operand(val)?;
                Val::Immediate(self.b.atomic_rmw(rmw, typed, x, o, scope))
            }
            _ => return Err(self.unsupported(unknown())),
        };
        Ok(Some(v))
    }

    fn ord(&self, from: OrdFrom) -> Result<DOrd, Diagnostic> {
        match from {
            OrdFrom::Known(o) => Ok(o),
            OrdFrom::Operand(op) => self.ordering(op),
        }
    }

    /// A call of `callee` with `args` under `abi`; `receiver`, when given,
    /// is passed for the first argument instead of its operand's value (a
    /// trait object's data pointer for the object).
    pub(super) fn device_call(
        &mut self,
        callee: CallTarget,
        abi: &crate::abi::FnAbi,
        args: &[Operand],
        dest: &Place,
        receiver: Option<Value>,
    ) -> Result<Option<Val>, Diagnostic> {
        let mut params: Vec<Value> = Vec::new();
        let sret_slot = match &abi.ret {
            RetAbi::Sret(repr) => {
                // A whole memory local receives the result directly; anything
                // else goes through the slot made for this call.
                let slot = match self.place(dest)? {
                    PlaceRef::Mem { addr, .. } if self.sret_direct(repr, dest) => addr,
                    _ => self.call_slot()?,
                };
                params.push(slot);
                Some(slot)
            }
            _ => None,
        };
        for (k, (op, a)) in args.iter().zip(&abi.args).enumerate() {
            let v = match receiver {
                Some(data) if k == 0 => Val::Immediate(data),
                _ => self.read_operand(op)?,
            };
            match (a, v) {
                (ArgAbi::Zst, _) => {}
                (ArgAbi::Direct(1), Val::Immediate(x)) => params.push(x),
                (ArgAbi::Direct(2), Val::Pair(x, y)) => {
                    params.push(x);
                    params.push(y);
                }
                (ArgAbi::ByRef, Val::ByRef(src)) => {
                    let ty = self.operand_ty(op)?;
                    let l = self.layout_of(&ty)?;
                    let copy = self.call_slot()?;
                    self.memcpy(copy, src, l.size, l.align);
                    params.push(copy);
                }
                (ArgAbi::ByVal { .. } | ArgAbi::Disjoint, _) => {
                    return Err(self.unsupported(
                        "a call of a kernel that takes an aggregate by value or a \
                         `DisjointSlice`: a kernel is launched, not called",
                    ));
                }
                (a, v) => return Err(self.internal(&format!("argument {v:?} for {a:?}"))),
            }
        }
        let r = match callee {
            CallTarget::Direct(f) => self.b.call(f, &params),
            CallTarget::Indirect(address, sig) => self.b.call_indirect(address, sig, &params),
        };
        Ok(match (&abi.ret, sret_slot) {
            (RetAbi::Void, _) => Some(Val::Zst),
            (RetAbi::Direct, _) => r.map(Val::Immediate),
            (RetAbi::Sret(Repr::Mem { .. }), Some(slot)) => match self.place(dest)? {
                PlaceRef::Mem { addr, .. } if addr == slot => None,
                _ => Some(Val::ByRef(slot)),
            },
            (RetAbi::Sret(repr @ Repr::Pair(..)), Some(slot)) => Some(self.load_repr(slot, repr)),
            _ => return Err(self.internal("return convention")),
        })
    }

    /// The next entry-block slot prepared for this block's call.
    fn call_slot(&mut self) -> Result<Value, Diagnostic> {
        let bb = self
            .cur_bb
            .ok_or_else(|| self.internal("call outside a block"))?;
        match self.call_slots.get_mut(&bb) {
            Some(slots) if !slots.is_empty() => Ok(slots.remove(0)),
            _ => Err(self.internal("no stack slot was prepared for this call")),
        }
    }

    /// The flags of a volatile access through `p`: volatile, so that
    /// libNVVM keeps each access as written (`ld.volatile`, `st.volatile`),
    /// except into this function's own stack slots, which nothing but this
    /// thread's code holding the pointer can see: there a volatile access
    /// would only keep the slot in local memory (libm's `force_eval!` reads
    /// its own locals so).
    fn volatile_flags(&self, p: Value) -> MemFlags {
        if self.b.body_so_far().stack_slot_of(p).is_some() {
            MemFlags::empty()
        } else {
            MemFlags::VOLATILE
        }
    }

    /// A stack slot in the calling function.
    pub(super) fn scratch(&mut self, size: u64, align: u64) -> Value {
        let i8t = self.b.types().i8();
        let arr = self.b.types().array(i8t, size.max(1));
        let slot = self.b.alloca_aligned(arr, align.max(1) as u32);
        let p = crate::repr::generic_i8_ptr(self.b.module());
        self.b.cast(CastOp::Bitcast, slot, p)
    }
}

/// Whether `t` has no values: `!`, `Infallible`, or a tuple or array of
/// one (a validity assertion about it always panics). Other empty enums are
/// not recognised: the MIR does not say a type has no variants.
fn known_uninhabited(t: &Ty) -> bool {
    match t {
        Ty::Never => true,
        Ty::Adt(p) => matches!(
            p.def_path().as_str(),
            "core::convert::Infallible" | "std::convert::Infallible"
        ),
        Ty::Tuple(v) => v.iter().any(known_uninhabited),
        Ty::Array(e, n) => matches!(n, ArrayLen::Known(k) if *k > 0) && known_uninhabited(e),
        _ => false,
    }
}

/// Whether every byte pattern of `t` is a valid value: integers, floats,
/// raw pointers, and arrays and tuples of them.
fn plain_data(t: &Ty) -> bool {
    match t {
        Ty::Int(_) | Ty::Float(_) | Ty::RawPtr(..) => true,
        Ty::Array(e, _) => plain_data(e),
        Ty::Tuple(v) => v.iter().all(plain_data),
        _ => false,
    }
}
