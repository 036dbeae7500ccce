//! Symbolic values of MIR locals, and the translation of places, operands
//! and rvalues into expressions and memory actions.
//!
//! A local that is assigned once is *substituted*: it stands for its
//! expression. A local assigned more than once (a loop variable, a value
//! merged after an `if`) lives in a register, with an assignment per
//! definition. Pointers are never values of the language: they are resolved
//! here to a memory space and an address expression, so that a load or store
//! through them names its location.

use mir_import::model::{
    BinOp as MirBinOp, CastKind, ConstOperand, Local, Operand, Place, PlaceElem, Rvalue, Scalar,
    Ty as MirTy, UnOp,
};

use crate::WarningKind;
use crate::structure::Extractor;
use memory_model::lang::{Access, BinOp, Expr, Reg, Space, Stmt, StmtId, Ty, Value};

/// The symbolic value of a local.
#[derive(Clone, Debug, PartialEq)]
pub enum Sym {
    /// An integer (or bool, or float bits) value.
    Val(Expr),
    /// A pointer to one element: its space, the address expression, and the
    /// element type.
    Ptr {
        /// The memory.
        space: Space,
        /// The address.
        addr: Expr,
        /// The element type.
        elem: Ty,
    },
    /// A buffer: a kernel argument (`&[T]`, `DisjointSlice<T>`, `&AtomicU32`)
    /// or a `SharedArray` static, or a reference to one.
    Buffer {
        /// The memory.
        space: Space,
        /// The address of element 0.
        base: Value,
        /// The length in elements.
        len: Value,
        /// The element type.
        elem: Ty,
    },
    /// A tuple.
    Tuple(Vec<Sym>),
    /// `()` and other zero-sized values.
    Unit,
}

impl Sym {
    /// Whether the value reads register `r`.
    pub fn mentions(&self, r: Reg) -> bool {
        match self {
            Sym::Val(e) | Sym::Ptr { addr: e, .. } => expr_mentions(e, r),
            Sym::Tuple(items) => items.iter().any(|s| s.mentions(r)),
            Sym::Buffer { .. } | Sym::Unit => false,
        }
    }

    /// The value with register `r` read as `by` instead.
    pub fn rename(&self, r: Reg, by: Reg) -> Sym {
        match self {
            Sym::Val(e) => Sym::Val(expr_rename(e, r, by)),
            Sym::Ptr { space, addr, elem } => Sym::Ptr {
                space: *space,
                addr: expr_rename(addr, r, by),
                elem: *elem,
            },
            Sym::Tuple(items) => Sym::Tuple(items.iter().map(|s| s.rename(r, by)).collect()),
            other => other.clone(),
        }
    }
}

fn expr_mentions(e: &Expr, r: Reg) -> bool {
    match e {
        Expr::Reg(q) => *q == r,
        Expr::Bin(_, a, b) => expr_mentions(a, r) || expr_mentions(b, r),
        Expr::Const(_) | Expr::Tid => false,
    }
}

fn expr_rename(e: &Expr, r: Reg, by: Reg) -> Expr {
    match e {
        Expr::Reg(q) if *q == r => Expr::Reg(by),
        Expr::Bin(op, a, b) => Expr::Bin(
            *op,
            Box::new(expr_rename(a, r, by)),
            Box::new(expr_rename(b, r, by)),
        ),
        other => other.clone(),
    }
}

/// What a place names.
#[derive(Clone, Debug)]
pub enum Resolved {
    /// A value.
    Sym(Sym),
    /// A memory location.
    Mem {
        /// The memory.
        space: Space,
        /// The address.
        addr: Expr,
        /// The type tag.
        ty: Ty,
    },
    /// The inside of a buffer (`*slice`, `(*atomic).0`): addressable, not a value.
    Inner(Sym),
}

/// The type tag of an element type, when the model has one.
pub fn elem_ty(ty: &MirTy) -> Option<Ty> {
    match ty {
        MirTy::Int(i) if i.size() == 4 => Some(Ty::U32),
        MirTy::Float(mir_import::model::FloatTy::F32) => Some(Ty::F32),
        MirTy::Adt(p) if p.def_path() == "std::sync::atomic::AtomicU32" => Some(Ty::U32),
        _ => None,
    }
}

/// `a op b` with constants folded, so that extracted expressions read like the
/// source (`tid + 1`, not `(tid + 0) + 1`).
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    match (op, &a, &b) {
        (_, Expr::Const(x), Expr::Const(y)) => Expr::Const(op.apply(*x, *y)),
        (BinOp::Add | BinOp::Sub | BinOp::Shl | BinOp::Shr, _, Expr::Const(0)) => a,
        (BinOp::Add, Expr::Const(0), _) => b,
        _ => a.bin(op, b),
    }
}

fn log2(v: u128) -> Option<u32> {
    (v.is_power_of_two() && v <= u128::from(u32::MAX)).then(|| v.trailing_zeros())
}

impl Extractor<'_, '_> {
    /// The symbolic value of a frame's local.
    pub(super) fn local_sym(&mut self, frame: usize, local: Local) -> Sym {
        let flat = self.flat.local(frame, local);
        let unit = self.flat.body(frame).locals[local].ty == MirTy::unit();
        match &self.env[flat] {
            Some(s) => s.clone(),
            None if unit => Sym::Unit,
            None => self.opaque(
                WarningKind::Value,
                &format!("read of {local} before its definition"),
                "an unconstrained value",
            ),
        }
    }

    /// Resolves a place to a value, a memory location or a buffer's inside.
    pub(super) fn resolve(&mut self, frame: usize, place: &Place) -> Resolved {
        let mut cur = Resolved::Sym(self.local_sym(frame, place.local));
        for elem in &place.projection {
            cur = match (cur, elem) {
                (Resolved::Sym(Sym::Ptr { space, addr, elem }), PlaceElem::Deref) => {
                    Resolved::Mem {
                        space,
                        addr,
                        ty: elem,
                    }
                }
                (Resolved::Sym(b @ Sym::Buffer { .. }), PlaceElem::Deref) => Resolved::Inner(b),
                (Resolved::Sym(Sym::Tuple(items)), PlaceElem::Field(k, _)) => {
                    match items.get(*k as usize) {
                        Some(s) => Resolved::Sym(s.clone()),
                        None => return self.unresolved(place, "tuple field out of range"),
                    }
                }
                (
                    Resolved::Sym(Sym::Buffer {
                        space,
                        base,
                        len,
                        elem,
                    }),
                    PlaceElem::Field(k, _),
                ) => match k {
                    0 => Resolved::Sym(Sym::Ptr {
                        space,
                        addr: Expr::Const(base),
                        elem,
                    }),
                    1 => Resolved::Sym(Sym::Val(Expr::Const(len))),
                    _ => return self.unresolved(place, "buffer field beyond (ptr, len)"),
                },
                (Resolved::Inner(b), PlaceElem::Field(0, _)) => Resolved::Inner(b),
                // Field 0 of an element in memory: `AtomicU32`'s `UnsafeCell`
                // and the `u32` in it share its address and its type.
                (m @ Resolved::Mem { .. }, PlaceElem::Field(0, _)) => m,
                // A variant's fields are kept as a tuple (see `rvalue`).
                (Resolved::Sym(t @ Sym::Tuple(_)), PlaceElem::Downcast(_)) => Resolved::Sym(t),
                (
                    Resolved::Inner(Sym::Buffer {
                        space, base, elem, ..
                    }),
                    PlaceElem::Index(i),
                ) => {
                    let Sym::Val(idx) = self.local_sym(frame, *i) else {
                        return self.unresolved(place, "index is not an integer");
                    };
                    Resolved::Mem {
                        space,
                        addr: bin(BinOp::Add, Expr::Const(base), idx),
                        ty: elem,
                    }
                }
                (_, elem) => {
                    return self.unresolved(place, &format!("projection {elem:?}"));
                }
            };
        }
        cur
    }

    fn unresolved(&mut self, place: &Place, why: &str) -> Resolved {
        Resolved::Sym(self.opaque(
            WarningKind::Value,
            &format!("place {place:?}"),
            &format!("not resolved ({why}); an unconstrained value"),
        ))
    }

    /// The value of an operand; a read through a pointer becomes a load.
    pub(super) fn operand(&mut self, frame: usize, op: &Operand, out: &mut Vec<StmtId>) -> Sym {
        match op {
            Operand::Copy(p) | Operand::Move(p) => match self.resolve(frame, p) {
                Resolved::Sym(s) => s,
                Resolved::Mem { space, addr, ty } => {
                    let name = self.load_name();
                    let dst = self.fresh_reg(&name);
                    out.push(self.push(Stmt::Load {
                        dst,
                        space,
                        addr,
                        ty,
                        access: Access::Plain,
                    }));
                    Sym::Val(Expr::Reg(dst))
                }
                Resolved::Inner(_) => self.opaque(
                    WarningKind::Value,
                    "a buffer's contents used as a value",
                    "not modelled; an unconstrained value",
                ),
            },
            Operand::Const(c) => self.constant(c),
        }
    }

    /// The value of a constant operand.
    pub(super) fn constant(&mut self, c: &ConstOperand) -> Sym {
        match c {
            ConstOperand::Scalar(Scalar::Int { bits, .. }) => {
                if *bits > u128::from(u32::MAX) {
                    self.warn(
                        WarningKind::Value,
                        "wide constant",
                        &format!("{bits} truncated to 32 bits"),
                    );
                }
                Sym::Val(Expr::Const(*bits as u32))
            }
            ConstOperand::Scalar(Scalar::Bool(b)) => Sym::Val(Expr::Const(u32::from(*b))),
            ConstOperand::Scalar(Scalar::Float { bits, .. }) => Sym::Val(Expr::Const(*bits as u32)),
            ConstOperand::Unit | ConstOperand::ZeroSized(_) => Sym::Unit,
            ConstOperand::Alloc { alloc, ty } => match self.shared_static(*alloc, ty) {
                Some(s) => s,
                None => self.opaque(
                    WarningKind::Value,
                    &format!("constant {alloc:?}: {ty}"),
                    "not a SharedArray static; an unconstrained value",
                ),
            },
            other => self.opaque(
                WarningKind::Value,
                &format!("constant {other:?}"),
                "not modelled; an unconstrained value",
            ),
        }
    }

    /// The value of an rvalue; `dest_ty` is the destination's type.
    pub(super) fn rvalue(
        &mut self,
        frame: usize,
        rv: &Rvalue,
        dest_ty: Option<&MirTy>,
        out: &mut Vec<StmtId>,
    ) -> Sym {
        let is_float = matches!(dest_ty, Some(MirTy::Float(_)));
        match rv {
            Rvalue::Use(op) => self.operand(frame, op, out),
            Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p) => match self.resolve(frame, p) {
                Resolved::Inner(Sym::Buffer {
                    space, base, elem, ..
                }) => Sym::Ptr {
                    space,
                    addr: Expr::Const(base),
                    elem,
                },
                Resolved::Mem { space, addr, ty } => Sym::Ptr {
                    space,
                    addr,
                    elem: ty,
                },
                _ => self.opaque(
                    WarningKind::Value,
                    "reference to a local",
                    "locals have no address in the model; an unconstrained value",
                ),
            },
            Rvalue::Cast(kind, op, _) => {
                let v = self.operand(frame, op, out);
                match kind {
                    CastKind::IntToInt
                    | CastKind::PtrToPtr
                    | CastKind::PointerCoercion(_)
                    | CastKind::Transmute
                        if !is_float =>
                    {
                        v
                    }
                    other => self.opaque(
                        WarningKind::Value,
                        &format!("cast {other:?}"),
                        "float conversion not modelled; an unconstrained value",
                    ),
                }
            }
            Rvalue::BinaryOp(op, a, b) => {
                let a = self.operand(frame, a, out);
                let b = self.operand(frame, b, out);
                if is_float {
                    return self.opaque(
                        WarningKind::Value,
                        &format!("f32 {op:?}"),
                        "IEEE arithmetic is not modelled; the result is an unconstrained value",
                    );
                }
                self.binary(*op, a, b)
            }
            Rvalue::UnaryOp(op, a) => {
                let a = self.operand(frame, a, out);
                match (op, a) {
                    (UnOp::PtrMetadata, Sym::Buffer { len, .. }) => Sym::Val(Expr::Const(len)),
                    (UnOp::Not, Sym::Val(e)) if matches!(dest_ty, Some(MirTy::Bool)) => {
                        Sym::Val(bin(BinOp::Eq, e, Expr::Const(0)))
                    }
                    (UnOp::Neg, Sym::Val(e)) if !is_float => {
                        Sym::Val(bin(BinOp::Sub, Expr::Const(0), e))
                    }
                    (op, _) => self.opaque(
                        WarningKind::Value,
                        &format!("{op:?}"),
                        "not modelled; an unconstrained value",
                    ),
                }
            }
            Rvalue::Aggregate(mir_import::model::AggregateKind::Tuple, ops) => {
                let items = ops.iter().map(|o| self.operand(frame, o, out)).collect();
                Sym::Tuple(items)
            }
            // A struct or enum variant (`Option::Some(k)` from a range
            // iterator): its fields, as a tuple. The discriminant is not
            // kept; reading it is a warning (`Discriminant` below).
            Rvalue::Aggregate(mir_import::model::AggregateKind::Adt { .. }, ops) => {
                let items = ops.iter().map(|o| self.operand(frame, o, out)).collect();
                Sym::Tuple(items)
            }
            other => self.opaque(
                WarningKind::Value,
                &format!("rvalue {}", rvalue_name(other)),
                "not modelled; an unconstrained value",
            ),
        }
    }

    fn binary(&mut self, op: MirBinOp, a: Sym, b: Sym) -> Sym {
        use MirBinOp as M;
        if op == M::Offset
            && let (Sym::Ptr { space, addr, elem }, Sym::Val(n)) = (&a, &b)
        {
            return Sym::Ptr {
                space: *space,
                addr: bin(BinOp::Add, addr.clone(), n.clone()),
                elem: *elem,
            };
        }
        let (Sym::Val(x), Sym::Val(y)) = (a, b) else {
            return self.opaque(
                WarningKind::Value,
                &format!("{op:?} on non-integers"),
                "not modelled; an unconstrained value",
            );
        };
        let c = |e: &Expr| match e {
            Expr::Const(v) => Some(u128::from(*v)),
            _ => None,
        };
        let e = match op {
            M::AddWithOverflow | M::SubWithOverflow | M::MulWithOverflow => {
                let plain = match op {
                    M::AddWithOverflow => M::Add,
                    M::SubWithOverflow => M::Sub,
                    _ => M::Mul,
                };
                let v = self.binary(plain, Sym::Val(x), Sym::Val(y));
                self.warn(
                    WarningKind::Value,
                    &format!("{op:?}"),
                    "the overflow flag is taken as false (values are 32-bit patterns, and no trap \
                     is modelled)",
                );
                return Sym::Tuple(vec![v, Sym::Val(Expr::Const(0))]);
            }
            M::Add | M::AddUnchecked => bin(BinOp::Add, x, y),
            M::Sub | M::SubUnchecked => bin(BinOp::Sub, x, y),
            M::Shl | M::ShlUnchecked => bin(BinOp::Shl, x, y),
            M::Shr | M::ShrUnchecked => bin(BinOp::Shr, x, y),
            M::Lt => bin(BinOp::Lt, x, y),
            M::Gt => bin(BinOp::Lt, y, x),
            M::Le => bin(BinOp::Eq, bin(BinOp::Lt, y, x), Expr::Const(0)),
            M::Ge => bin(BinOp::Eq, bin(BinOp::Lt, x, y), Expr::Const(0)),
            M::Eq => bin(BinOp::Eq, x, y),
            M::Ne => bin(BinOp::Ne, x, y),
            M::Mul | M::MulUnchecked => match (c(&x), c(&y)) {
                (Some(a), Some(b)) => Expr::Const((a * b) as u32),
                (Some(0), _) | (_, Some(0)) => Expr::Const(0),
                (_, Some(k)) if log2(k).is_some() => {
                    bin(BinOp::Shl, x, Expr::Const(k.trailing_zeros()))
                }
                (Some(k), _) if log2(k).is_some() => {
                    bin(BinOp::Shl, y, Expr::Const(k.trailing_zeros()))
                }
                _ => bin(BinOp::Mul, x, y),
            },
            M::Div => match (c(&x), c(&y)) {
                (Some(a), Some(b)) if b != 0 => Expr::Const((a / b) as u32),
                (_, Some(k)) if log2(k).is_some() => {
                    bin(BinOp::Shr, x, Expr::Const(k.trailing_zeros()))
                }
                _ => bin(BinOp::Div, x, y),
            },
            M::Rem if c(&y).is_some_and(|k| k != 0) => match (c(&x), c(&y)) {
                (Some(a), Some(b)) => Expr::Const((a % b) as u32),
                _ => bin(BinOp::Rem, x, y),
            },
            M::BitAnd => bin(BinOp::And, x, y),
            M::BitOr => bin(BinOp::Or, x, y),
            M::BitXor => bin(BinOp::Xor, x, y),
            other => match (c(&x), c(&y)) {
                (Some(a), Some(b)) => match mir_const(other, a, b) {
                    Some(v) => Expr::Const(v),
                    None => return self.unsupported_op(other),
                },
                _ => return self.unsupported_op(other),
            },
        };
        Sym::Val(e)
    }

    fn unsupported_op(&mut self, op: MirBinOp) -> Sym {
        self.opaque(
            WarningKind::Value,
            &format!("{op:?}"),
            "not in the language; an unconstrained value",
        )
    }
}

/// The rest of MIR's integer operators, on constants only.
fn mir_const(op: MirBinOp, a: u128, b: u128) -> Option<u32> {
    let v = match op {
        MirBinOp::Rem if b != 0 => a % b,
        MirBinOp::BitAnd => a & b,
        MirBinOp::BitOr => a | b,
        MirBinOp::BitXor => a ^ b,
        _ => return None,
    };
    Some(v as u32)
}

fn rvalue_name(rv: &Rvalue) -> &'static str {
    match rv {
        Rvalue::Use(_) => "Use",
        Rvalue::Repeat(..) => "Repeat",
        Rvalue::Ref(..) => "Ref",
        Rvalue::RawPtr(..) => "RawPtr",
        Rvalue::Cast(..) => "Cast",
        Rvalue::BinaryOp(..) => "BinaryOp",
        Rvalue::UnaryOp(..) => "UnaryOp",
        Rvalue::Discriminant(_) => "Discriminant",
        Rvalue::Aggregate(..) => "Aggregate",
        Rvalue::CopyForDeref(_) => "CopyForDeref",
        Rvalue::Nullary(..) => "Nullary",
    }
}
