//! Calls: device functions, prelude intrinsics, atomics and panics.

use device_ir::{CastOp, Ordering as DOrd, RmwOp, Scope, SpecialReg, Value};
use mir_import::model::{BasicBlock, Callee, ConstOperand, Operand, Place, ValTree};
use mir_import::prelude::{self, Intrinsic};

use super::FnLower;
use super::values::{PlaceRef, Val};
use crate::abi::{ArgAbi, RetAbi};
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar};

fn int_info(ty: &mir_import::model::Ty) -> Option<(u16, bool)> {
    match ty {
        mir_import::model::Ty::Int(i) => Some(((i.size() * 8) as u16, i.is_signed())),
        _ => None,
    }
}

/// Calls that only panic: lowered to a trap.
fn is_panic(def: &str) -> bool {
    def.starts_with("core::panicking::")
        || def.starts_with("std::panicking::")
        || def.starts_with("std::rt::panic")
        || def.ends_with("unwrap_failed")
        || def.ends_with("expect_failed")
        || def.starts_with("core::slice::index::slice_")
        || def.starts_with("core::slice::index::")
            && (def.ends_with("_fail") || def.ends_with("_fail_rt"))
        || def.starts_with("core::option::unwrap_failed")
}

impl FnLower<'_, '_> {
    pub(super) fn lower_call(
        &mut self,
        func: &Callee,
        args: &[Operand],
        dest: &Place,
        target: Option<BasicBlock>,
    ) -> Result<(), Diagnostic> {
        let Callee::Item(path) = func else {
            return Err(self.unsupported("calls through function pointers are not supported"));
        };
        let def = path.def_path();
        if is_panic(&def) {
            self.trap();
            return Ok(());
        }
        let result = if let Some(v) = self.known_std_call(&def, path, args)? {
            Some(v)
        } else if let Some(i) = prelude::intrinsic(&def) {
            self.intrinsic(i)
        } else if let Some(op) = def
            .strip_prefix("std::sync::atomic::")
            .or_else(|| def.strip_prefix("core::sync::atomic::"))
            .or_else(|| def.strip_prefix("core::intrinsics::"))
            .filter(|n| n.starts_with("atomic_"))
        {
            self.atomic(op, args)?
        } else if let Some((f, abi)) = self.sh.fns.get(&def).cloned() {
            self.device_call(f, &abi, args, dest)?
        } else {
            return Err(self.unsupported(format!(
                "call to `{path}`: rustc printed no MIR body for it that the device can run"
            )));
        };
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

    /// Standard-library calls whose bodies rustc does not print but whose
    /// meaning is fixed: hints, `Ord::min`/`max` on integers, `ptr_offset_from`,
    /// and the atomic intrinsics that carry their ordering as a generic.
    fn known_std_call(
        &mut self,
        def: &str,
        path: &mir_import::model::Path,
        args: &[Operand],
    ) -> Result<Option<Val>, Diagnostic> {
        if def == "std::intrinsics::cold_path" || def == "core::intrinsics::cold_path" {
            return Ok(Some(Val::Zst));
        }
        let last = path.last_name();
        let first = path.segments.first().map(|s| s.name.as_str()).unwrap_or("");
        if (last == "min" || last == "max")
            && first.starts_with('<')
            && first.contains(" as std::cmp::Ord>")
            && args.len() == 2
        {
            let ty = self.operand_ty(&args[0])?;
            let Some((_, signed)) = int_info(&ty) else {
                return Ok(None);
            };
            let (a, b) = (
                self.scalar_operand(&args[0])?,
                self.scalar_operand(&args[1])?,
            );
            let cc = match (last, signed) {
                ("min", true) => device_ir::IntCC::Slt,
                ("min", false) => device_ir::IntCC::Ult,
                (_, true) => device_ir::IntCC::Sgt,
                (_, false) => device_ir::IntCC::Ugt,
            };
            let c = self.b.icmp(cc, a, b);
            return Ok(Some(Val::S(self.b.select(c, a, b))));
        }
        if def.ends_with("intrinsics::arith_offset") && args.len() == 2 {
            // Wrapping `ptr.wrapping_offset(n)`: n elements, no bounds promise.
            let ty = self.operand_ty(&args[0])?;
            let elem = ty
                .pointee()
                .cloned()
                .ok_or_else(|| self.unsupported("arith_offset"))?;
            let size = self
                .sh
                .layouts
                .of(&elem)
                .map_err(|e| self.unsupported(e))?
                .size;
            let (p, n) = (
                self.scalar_operand(&args[0])?,
                self.scalar_operand(&args[1])?,
            );
            let s = self.iconst(64, size as i128);
            let off = self.b.imul(n, s);
            return Ok(Some(Val::S(self.b.byte_offset(p, off))));
        }
        if def.ends_with("intrinsics::ptr_offset_from")
            || def.ends_with("intrinsics::ptr_offset_from_unsigned")
        {
            let ty = self.operand_ty(&args[0])?;
            let elem = ty
                .pointee()
                .cloned()
                .ok_or_else(|| self.unsupported("offset_from"))?;
            let size = self
                .sh
                .layouts
                .of(&elem)
                .map_err(|e| self.unsupported(e))?
                .size
                .max(1);
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
            return Ok(Some(Val::S(self.b.binary(device_ir::BinaryOp::SDiv, d, s))));
        }
        // `atomic_xadd::<u32, u32, AtomicOrdering::Relaxed>(p, v)`: the ordering is a generic.
        let generic_ordering = path.generic_args().iter().find_map(|a| match a {
            mir_import::model::GenericArg::Type(mir_import::model::Ty::Adt(p))
                if p.def_path().contains("AtomicOrdering") =>
            {
                Some(p.last_name().to_string())
            }
            mir_import::model::GenericArg::Const(c) if c.contains("AtomicOrdering::") => {
                c.rsplit("::").next().map(str::to_string)
            }
            _ => None,
        });
        if let Some(ord) = generic_ordering
            && let Some(op) = def.rsplit("::").next().filter(|n| n.starts_with("atomic_"))
        {
            let ord_op = Operand::Const(ConstOperand::Item(mir_import::model::Path {
                segments: vec![mir_import::model::PathSegment {
                    name: ord,
                    args: Vec::new(),
                }],
            }));
            let mut full: Vec<Operand> = args.to_vec();
            match op {
                "atomic_cxchg" | "atomic_cxchgweak" => {
                    full.push(ord_op.clone());
                    full.push(ord_op);
                }
                _ => full.push(ord_op),
            }
            return self.atomic(op, &full);
        }
        Ok(None)
    }

    fn intrinsic(&mut self, i: Intrinsic) -> Option<Val> {
        let reg = |axis: u8, x: SpecialReg, y: SpecialReg| if axis == 0 { x } else { y };
        let r = match i {
            Intrinsic::ThreadIdx(a) => reg(a, SpecialReg::TidX, SpecialReg::TidY),
            Intrinsic::BlockIdx(a) => reg(a, SpecialReg::CtaidX, SpecialReg::CtaidY),
            Intrinsic::BlockDim(a) => reg(a, SpecialReg::NtidX, SpecialReg::NtidY),
            Intrinsic::GridDim(a) => reg(a, SpecialReg::NctaidX, SpecialReg::NctaidY),
            Intrinsic::SyncThreads | Intrinsic::BarrierWait => {
                self.b.barrier();
                return Some(Val::Zst);
            }
        };
        Some(Val::S(self.b.special_reg(r)))
    }

    fn ordering(&self, op: &Operand) -> Result<DOrd, Diagnostic> {
        let name = match op {
            Operand::Const(ConstOperand::Item(p)) => p.last_name().to_string(),
            Operand::Const(ConstOperand::Value(ValTree::Path(p))) => p.last_name().to_string(),
            other => {
                return Err(
                    self.unsupported(format!("atomic ordering {other:?} is not a constant"))
                );
            }
        };
        Ok(match name.as_str() {
            "Relaxed" => DOrd::Relaxed,
            "Acquire" => DOrd::Acquire,
            "Release" => DOrd::Release,
            "AcqRel" => DOrd::AcqRel,
            "SeqCst" => DOrd::SeqCst,
            n => return Err(self.unsupported(format!("atomic ordering `{n}`"))),
        })
    }

    /// `core::intrinsics::atomic_*` at system scope (Rust's atomics order
    /// against every observer, host included).
    fn atomic(&mut self, op: &str, args: &[Operand]) -> Result<Option<Val>, Diagnostic> {
        let ptr_op = args
            .first()
            .ok_or_else(|| self.unsupported("atomic without a pointer"))?;
        let elem = self
            .operand_ty(ptr_op)?
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported("atomic on a non-pointer"))?;
        let Repr::Scalar(s @ Scalar::Int(_)) = self.repr(&elem)? else {
            return Err(self.unsupported(format!("atomic on `{elem}`")));
        };
        let t = s.ssa_ty(self.b.module());
        let p = self.scalar_operand(ptr_op)?;
        let typed = self.b.ptr_bitcast(p, t);
        let scope = Scope::Sys;
        let v = match (op, args) {
            ("atomic_load", [_, ord]) => {
                let o = self.ordering(ord)?;
                Val::S(self.b.atomic_load(t, typed, o, scope))
            }
            ("atomic_store", [_, val, ord]) => {
                let o = self.ordering(ord)?;
                let x = self.scalar_operand(val)?;
                self.b.atomic_store(x, typed, o, scope);
                Val::Zst
            }
            ("atomic_cxchg" | "atomic_cxchgweak", [_, old, new, ord, _]) => {
                let o = self.ordering(ord)?;
                let (e, n) = (self.scalar_operand(old)?, self.scalar_operand(new)?);
                let prev = self.b.atomic_cas(typed, e, n, o, scope);
                let ok = self.b.icmp(device_ir::IntCC::Eq, prev, e);
                Val::P(prev, ok)
            }
            (name, [_, val, ord]) => {
                let rmw = match name {
                    "atomic_xadd" => RmwOp::Add,
                    "atomic_xchg" => RmwOp::Xchg,
                    "atomic_and" => RmwOp::And,
                    "atomic_or" => RmwOp::Or,
                    "atomic_xor" => RmwOp::Xor,
                    "atomic_max" => RmwOp::SMax,
                    "atomic_min" => RmwOp::SMin,
                    "atomic_umax" => RmwOp::UMax,
                    "atomic_umin" => RmwOp::UMin,
                    "atomic_xsub" => {
                        let o = self.ordering(ord)?;
                        let x = self.scalar_operand(val)?;
                        let zero = self.b.iconst(t, 0);
                        let neg = self.b.binary(device_ir::BinaryOp::Sub, zero, x);
                        return Ok(Some(Val::S(self.b.atomic_rmw(
                            RmwOp::Add,
                            typed,
                            neg,
                            o,
                            scope,
                        ))));
                    }
                    n => return Err(self.unsupported(format!("atomic intrinsic `{n}`"))),
                };
                let o = self.ordering(ord)?;
                let x = self.scalar_operand(val)?;
                Val::S(self.b.atomic_rmw(rmw, typed, x, o, scope))
            }
            (n, _) => return Err(self.unsupported(format!("atomic intrinsic `{n}`"))),
        };
        Ok(Some(v))
    }

    fn device_call(
        &mut self,
        f: device_ir::FuncId,
        abi: &crate::abi::FnAbi,
        args: &[Operand],
        dest: &Place,
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
        for (op, a) in args.iter().zip(&abi.args) {
            let v = self.read_operand(op)?;
            match (a, v) {
                (ArgAbi::Zst, _) => {}
                (ArgAbi::Direct(1), Val::S(x)) => params.push(x),
                (ArgAbi::Direct(2), Val::P(x, y)) => {
                    params.push(x);
                    params.push(y);
                }
                (ArgAbi::ByRef, Val::M(src)) => {
                    let ty = self.operand_ty(op)?;
                    let l = self.sh.layouts.of(&ty).map_err(|e| self.unsupported(e))?;
                    let copy = self.call_slot()?;
                    self.memcpy(copy, src, l.size, l.align);
                    params.push(copy);
                }
                (a, v) => return Err(self.unsupported(format!("argument {v:?} for {a:?}"))),
            }
        }
        let r = self.b.call(f, &params);
        Ok(match (&abi.ret, sret_slot) {
            (RetAbi::Void, _) => Some(Val::Zst),
            (RetAbi::Direct, _) => r.map(Val::S),
            (RetAbi::Sret(Repr::Mem { .. }), Some(slot)) => match self.place(dest)? {
                PlaceRef::Mem { addr, .. } if addr == slot => None,
                _ => Some(Val::M(slot)),
            },
            (RetAbi::Sret(Repr::Pair(s0, o0, s1, o1)), Some(slot)) => {
                let (s0, o0, s1, o1) = (*s0, *o0, *s1, *o1);
                Some(Val::P(
                    self.load_scalar_at(slot, o0, s0),
                    self.load_scalar_at(slot, o1, s1),
                ))
            }
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

    /// A stack slot in the calling function.
    pub(super) fn scratch(&mut self, size: u64, align: u64) -> Value {
        let i8t = self.b.types().i8();
        let arr = self.b.types().array(i8t, size.max(1));
        let slot = self.b.alloca_aligned(arr, align.max(1) as u32);
        let p = crate::repr::generic_i8_ptr(self.b.module());
        self.b.cast(CastOp::Bitcast, slot, p)
    }
}
