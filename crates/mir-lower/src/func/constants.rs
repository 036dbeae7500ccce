//! Constant operands: scalars, values read from mir-import's evaluated
//! allocations, and pointers to the interned globals that hold them.

use device_ir::{AddressSpace, CastOp, Value};
use mir_import::eval::{EvalAlloc, Target};
use mir_import::model::{ConstOperand, Scalar as MirScalar, Ty};

use super::FnLower;
use super::values::Val;
use crate::diag::{Diagnostic, Rule};
use crate::repr::{Repr, Scalar, generic_i8_ptr};
use crate::views;

impl FnLower<'_, '_> {
    /// The type of a constant operand, as mir-import's evaluator keys its
    /// value ([`mir_import::Crate::const_ty`]).
    pub(super) fn const_ty(&self, c: &ConstOperand) -> Result<Ty, Diagnostic> {
        if let Some(ty) = self.sh.krate.const_ty(c) {
            return Ok(ty);
        }
        Err(match c {
            ConstOperand::Promoted { owner, index } => {
                self.unsupported(format!("no body for {owner}::promoted[{index}]"))
            }
            // A function used as a value, not called: a function pointer.
            ConstOperand::FnItem(path) => self.unsupported(format!(
                "`{path}` used as a value (a function pointer) is not supported"
            )),
            ConstOperand::Uninit => self.unsupported(
                "an uninitialized value (`MaybeUninit::uninit()`) used as an operand is not supported",
            ),
            other => self.internal(&format!("the type of {other:?} is unknown here")),
        })
    }

    /// A constant operand's value. Scalars become immediates; pointers become
    /// the address of the pointed-to allocation's global plus the addend; an
    /// aggregate is read from its own read-only global.
    pub(super) fn const_val(&mut self, c: &ConstOperand, ty: &Ty) -> Result<Val, Diagnostic> {
        if let ConstOperand::Scalar(s) = c {
            return Ok(self.scalar_const(s));
        }
        if matches!(c, ConstOperand::Unit | ConstOperand::ZeroSized(_)) {
            return Ok(Val::Zst);
        }
        let repr = self.repr(ty)?;
        if repr == Repr::Zst {
            return Ok(Val::Zst);
        }
        let v = match self.ev.operand(c, ty) {
            Some(Ok(v)) => *v,
            Some(Err(e)) => {
                return Err(self.err(Rule::ConstEval, format!("constant `{c}`: {e}")));
            }
            // mir-import evaluates every constant operand of a reachable body
            // at the type it is read at; a miss is a disagreement between the
            // two about that type.
            None => {
                return Err(self.err(
                    Rule::Internal,
                    format!("constant `{c}` of type `{ty}` was not evaluated up front"),
                ));
            }
        };
        self.check_named_constant(c, v)?;
        match repr {
            Repr::Zst => Ok(Val::Zst),
            Repr::Scalar(s) => {
                let [t0, _] = crate::repr::slot_tys(self.sh.layouts, ty);
                let t0 = t0.unwrap_or_else(Ty::unit);
                Ok(Val::Immediate(self.scalar_from_mem(v, 0, s, &t0)?))
            }
            Repr::Pair(s0, o0, s1, o1) => {
                let [t0, t1] = crate::repr::slot_tys(self.sh.layouts, ty);
                let (t0, t1) = (t0.unwrap_or_else(Ty::unit), t1.unwrap_or_else(Ty::unit));
                let a = self.scalar_from_mem(v, o0, s0, &t0)?;
                let b = self.scalar_from_mem(v, o1, s1, &t1)?;
                Ok(Val::Pair(a, b))
            }
            Repr::Mem { .. } => {
                let item = self.item.clone();
                let sh = self.sh;
                let cx = crate::globals::Ctx {
                    krate: sh.krate,
                    layouts: sh.layouts,
                    fns: sh.fns,
                };
                let g = self
                    .globals
                    .alloc_global(self.b.module(), &cx, self.ev, v, &item, None)?;
                Ok(Val::ByRef(self.global_ptr(g, 0)))
            }
        }
    }

    /// Applies the shared-memory rules to a named constant the code uses.
    fn check_named_constant(&mut self, c: &ConstOperand, v: EvalAlloc) -> Result<(), Diagnostic> {
        let k = self.sh.krate;
        let (name, body) = match c {
            ConstOperand::Item(p) => match k.item_body(&p.def_path()) {
                Some(b) => (p.def_path(), &k.bodies[b]),
                None => return Ok(()),
            },
            ConstOperand::Promoted { owner, index } => {
                match k.promoted(&owner.def_path(), *index) {
                    Some(b) => (format!("{owner}::promoted[{index}]"), &k.bodies[b]),
                    None => return Ok(()),
                }
            }
            _ => return Ok(()),
        };
        crate::refusals::check_initializer(k, body, &self.ev.memory, v, &name)
    }

    fn scalar_const(&mut self, s: &MirScalar) -> Val {
        match s {
            MirScalar::Int { bits, ty } => {
                Val::Immediate(self.iconst((ty.size() * 8) as u16, *bits as i128))
            }
            MirScalar::Bool(b) => Val::Immediate(self.iconst(1, i128::from(*b))),
            MirScalar::Char(c) => Val::Immediate(self.iconst(32, i128::from(u32::from(*c)))),
            MirScalar::Float { bits, ty } => match ty {
                mir_import::model::FloatTy::F32 => {
                    Val::Immediate(self.b.f32const(f32::from_bits(*bits as u32)))
                }
                _ => Val::Immediate(self.b.f64const(f64::from_bits(*bits as u64))),
            },
        }
    }

    /// Reads one scalar of an evaluated value; a relocation there is a pointer
    /// to a global. `ty` is the value's MIR type, for the typed view.
    fn scalar_from_mem(
        &mut self,
        v: EvalAlloc,
        off: u64,
        s: Scalar,
        ty: &Ty,
    ) -> Result<Value, Diagnostic> {
        let a = &self.ev.memory.allocs[v];
        if let Some(r) = a.relocs.get(&off).cloned() {
            if s != Scalar::Ptr {
                return Err(self.unsupported("pointer bytes read as a number"));
            }
            return self.pointer_to(&r.target, r.addend, ty);
        }
        let n = s.size() as usize;
        let o = off as usize;
        if o + n > a.bytes.len() {
            return Err(self.unsupported(format!(
                "a {}-byte constant is read as `{ty}` at offset {off}",
                a.bytes.len()
            )));
        }
        if a.init[o..o + n].iter().any(|i| !i) {
            if s == Scalar::Ptr {
                // An uninitialized pointer word is `None` of a niche (only the
                // niche word counts): treat as null.
                return Ok(self.null_ptr());
            }
            return Ok(self.undef_of(s));
        }
        let mut bits: u128 = 0;
        for (i, byte) in a.bytes[o..o + n].iter().enumerate() {
            bits |= u128::from(*byte) << (8 * i);
        }
        Ok(match s {
            Scalar::Int(w) => self.iconst(w, bits as i128),
            Scalar::Bool => self.iconst(1, (bits != 0) as i128),
            Scalar::F32 => self.b.f32const(f32::from_bits(bits as u32)),
            Scalar::F64 => self.b.f64const(f64::from_bits(bits as u64)),
            Scalar::Ptr if bits == 0 => self.null_ptr(),
            Scalar::Ptr => {
                let i = self.iconst(64, bits as i128);
                let p = generic_i8_ptr(self.b.module());
                self.b.cast(CastOp::IntToPtr, i, p)
            }
        })
    }

    pub(super) fn null_ptr(&mut self) -> Value {
        let t = generic_i8_ptr(self.b.module());
        self.b.null(t)
    }

    /// A generic `i8*` to `global` plus `addend`.
    pub(super) fn global_ptr(&mut self, g: device_ir::GlobalId, addend: u64) -> Value {
        let i8t = self.b.types().i8();
        let p = self.b.global_addr(g, i8t);
        let p = self.b.addrspacecast(p, AddressSpace::Generic);
        self.offset(p, addend)
    }

    /// The address `target + addend`, for a pointer whose MIR type is `ty`.
    pub(super) fn pointer_to(
        &mut self,
        target: &Target,
        addend: u64,
        ty: &Ty,
    ) -> Result<Value, Diagnostic> {
        let item = self.item.clone();
        let sh = self.sh;
        let cx = crate::globals::Ctx {
            krate: sh.krate,
            layouts: sh.layouts,
            fns: sh.fns,
        };
        let g = match target {
            // A `fn` pointer read out of a constant: the function's address.
            Target::Function(p) => {
                let symbol = crate::globals::function_symbol(sh.krate, p);
                let f = crate::globals::fn_pointer_target(
                    self.b.module(),
                    &cx,
                    &symbol,
                    addend as i64,
                    &item,
                )?;
                let i8 = self.b.types().i8();
                return Ok(self.b.func_addr(f, i8));
            }
            Target::Alloc(a) => {
                let view = views::view_layout(&cx, &self.ev.memory, *a, addend, ty, &item)?;
                let view = view.as_ref().map(|l| (addend, l));
                self.globals
                    .alloc_global(self.b.module(), &cx, self.ev, *a, &item, view)?
            }
            Target::Static(p) => self
                .globals
                .static_global(self.b.module(), &cx, self.ev, p)?,
        };
        Ok(self.global_ptr(g, addend))
    }
}
