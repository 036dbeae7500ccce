//! Calls that are not inlined (device intrinsics, atomics, panics) and the
//! kernel's memory: its buffer arguments and its `SharedArray` statics.
//!
//! Which call is which comes from `mir_import::calls::classify`, the one
//! classifier the lowering uses too, so that the two cannot drift apart on
//! the paths they accept (`core::` and `std::` spellings alike). The model
//! has one one-dimensional CTA: `threadIdx.x` is the thread id, `blockDim.x`
//! the launch's thread count, and `blockIdx`/`gridDim` are block 0 of a grid
//! of 1, with a warning. Atomics are the loads and stores that
//! `core::sync::atomic` bottoms out in (`atomic_load::<u32>` and
//! `atomic_store`, under `sync::atomic::` or `intrinsics::`), with their
//! ordering (an `Ordering` operand or a generic argument). A call that only
//! panics, and the `cold_path` hint, have no memory action.

use std::collections::BTreeMap;

use mir_import::calls::{AtomicOp, AtomicOrdering, KnownCall, OrderingArg, RmwKind, classify};
use mir_import::model::{Callee, ConstOperand, Local, Operand, Place, Ty as MirTy};
use mir_import::prelude::Intrinsic;

use crate::structure::Extractor;
use crate::value::{Sym, elem_ty};
use crate::{ExtractError, WarningKind};
use memory_model::lang::{
    Access, BarrierKind, BinOp, Expr, InitStore, Loc, Ordering, Reg, RmwOp, Space, Stmt, StmtId,
    Ty, Value,
};

impl Extractor<'_, '_> {
    /// The `SharedArray` static an allocation pointer names, laid out in
    /// shared memory on first use.
    pub(super) fn shared_static(
        &mut self,
        alloc: mir_import::model::AllocId,
        ty: &MirTy,
    ) -> Option<Sym> {
        if let Some(s) = self.shared.get(&alloc) {
            return Some(s.clone());
        }
        let krate = self.flat.krate;
        let path = krate
            .allocs
            .get(&alloc)
            .and_then(|a| a.static_path.clone())
            .or_else(|| krate.static_names.get(&alloc).cloned())?;
        let MirTy::Adt(adt) = ty.pointee()? else {
            return None;
        };
        if !mir_import::prelude::is_shared_type(&adt.def_path()) {
            return None;
        }
        let args = adt.generic_args();
        let elem = args.iter().find_map(|a| match a {
            mir_import::model::GenericArg::Type(t) => elem_ty(t),
            _ => None,
        })?;
        let len = args.iter().find_map(|a| match a {
            mir_import::model::GenericArg::Const(c) => c.parse::<Value>().ok(),
            _ => None,
        })?;
        let sym = Sym::Buffer {
            space: Space::Shared,
            base: self.next_shared,
            len,
            elem,
        };
        self.notes.push(format!(
            "static {path}: sh[{}..{}] ({len} × {elem:?})",
            self.next_shared,
            self.next_shared + len
        ));
        self.next_shared += len;
        self.shared.insert(alloc, sym.clone());
        Some(sym)
    }

    /// Lays out the kernel's buffer arguments in global memory, in order.
    pub(super) fn params(&mut self) -> Result<(), ExtractError> {
        let body = self.flat.body(0);
        let mut names: BTreeMap<Local, String> = BTreeMap::new();
        for d in &body.debug {
            if let mir_import::model::DebugValue::Place(p) = &d.value
                && p.projection.is_empty()
            {
                names.insert(p.local, d.name.clone());
            }
        }
        let mut next: Value = 0;
        for i in 1..=body.arg_count as usize {
            let local = Local::from_u32(i as u32);
            let name = names
                .get(&local)
                .cloned()
                .unwrap_or_else(|| format!("{local}"));
            let ty = &body.locals[local].ty;
            let buffer = |elem: Option<Ty>, len: Value| elem.map(|elem| (elem, len));
            let len_of = |n: &str| self.launch.lens.get(n).copied();
            let shape = match ty {
                MirTy::Ref(_, inner) => match &**inner {
                    MirTy::Slice(t) => buffer(elem_ty(t), len_of(&name).unwrap_or(0)),
                    t @ MirTy::Adt(_) => buffer(elem_ty(t), 1),
                    _ => None,
                },
                // A raw pointer argument (`counter: *mut u32`) points to one
                // element unless the launch gives it a length.
                MirTy::RawPtr(_, t) => buffer(elem_ty(t), len_of(&name).unwrap_or(1)),
                MirTy::Adt(p) if p.def_path() == mir_import::prelude::DISJOINT_SLICE => {
                    let elem = p.generic_args().iter().find_map(|a| match a {
                        mir_import::model::GenericArg::Type(t) => elem_ty(t),
                        _ => None,
                    });
                    buffer(elem, len_of(&name).unwrap_or(0))
                }
                _ => None,
            };
            let sym = match shape {
                Some((elem, len)) => {
                    if len == 0 {
                        self.warn(
                            WarningKind::Value,
                            &format!("argument {name}"),
                            "no length in the launch; taken as 0",
                        );
                    }
                    self.names.insert(next, name.clone());
                    let values = self.launch.values.get(&name);
                    if values.is_some() || self.launch.zero_init.contains(&name) {
                        for (k, a) in (next..next + len).enumerate() {
                            self.init.push(InitStore {
                                loc: Loc {
                                    space: Space::Global,
                                    addr: a,
                                },
                                ty: elem,
                                val: values.and_then(|v| v.get(k)).copied().unwrap_or(0),
                            });
                        }
                    }
                    // A raw pointer is a pointer to the buffer's first
                    // element (`*counter`); the others are buffers.
                    let s = if matches!(ty, MirTy::RawPtr(..)) {
                        Sym::Ptr {
                            space: Space::Global,
                            addr: Expr::Const(next),
                            elem,
                        }
                    } else {
                        Sym::Buffer {
                            space: Space::Global,
                            base: next,
                            len,
                            elem,
                        }
                    };
                    next += len.max(1);
                    s
                }
                None if matches!(ty, MirTy::Int(_) | MirTy::Float(_) | MirTy::Bool) => self.opaque(
                    WarningKind::Value,
                    &format!("argument {name}: {ty}"),
                    "a scalar argument is not tracked; an unconstrained value",
                ),
                None => {
                    return Err(ExtractError::Unsupported {
                        function: self.flat.frames[0].name.clone(),
                        block: "arguments".into(),
                        message: format!("argument {name}: {ty} has no memory model counterpart"),
                    });
                }
            };
            self.env[self.flat.local(0, local)] = Some(sym);
        }
        Ok(())
    }

    /// A call that is not inlined: an intrinsic, an atomic, a panic, or unknown.
    pub(super) fn call(
        &mut self,
        frame: usize,
        func: &Callee,
        args: &[Operand],
        dest: &Place,
        out: &mut Vec<StmtId>,
    ) {
        let Callee::Item(path) = func else {
            self.warn(
                WarningKind::Action,
                "indirect call",
                "not modelled; dropped",
            );
            return;
        };
        let def = path.def_path();
        let known = classify(path);
        if let Some(KnownCall::Device(i)) = known {
            let ctas = self.launch.ctas.max(1);
            let n = self.launch.threads;
            let sym = match i {
                // Threads are numbered CTA by CTA: `tid % n` within the CTA,
                // `tid / n` the CTA.
                Intrinsic::ThreadIdx(0) if ctas > 1 => {
                    Some(Sym::Val(Expr::Tid.bin(BinOp::Rem, Expr::Const(n))))
                }
                Intrinsic::BlockIdx(0) if ctas > 1 => {
                    Some(Sym::Val(Expr::Tid.bin(BinOp::Div, Expr::Const(n))))
                }
                Intrinsic::GridDim(0) if ctas > 1 => Some(Sym::Val(Expr::Const(ctas))),
                Intrinsic::ThreadIdx(0) => Some(Sym::Val(Expr::Tid)),
                Intrinsic::BlockDim(0) => Some(Sym::Val(Expr::Const(self.launch.threads))),
                Intrinsic::ThreadIdx(_) | Intrinsic::BlockDim(_) => {
                    self.warn(
                        WarningKind::Value,
                        &def,
                        "the model's CTA is one-dimensional; taken as its y value in a (N, 1) block",
                    );
                    Some(Sym::Val(Expr::Const(
                        if matches!(i, Intrinsic::BlockDim(_)) {
                            1
                        } else {
                            0
                        },
                    )))
                }
                Intrinsic::BlockIdx(_) | Intrinsic::GridDim(_) => {
                    self.warn(
                        WarningKind::Value,
                        &def,
                        "the model has one CTA; taken as block 0 of a grid of 1",
                    );
                    Some(Sym::Val(Expr::Const(u32::from(matches!(
                        i,
                        Intrinsic::GridDim(_)
                    )))))
                }
                Intrinsic::SyncThreads | Intrinsic::BarrierWait => {
                    out.push(self.push(Stmt::Barrier(BarrierKind::Shared)));
                    Some(Sym::Unit)
                }
                // The model has no warps: a collective's value is unconstrained.
                Intrinsic::LaneId
                | Intrinsic::LaneMask(_)
                | Intrinsic::Shuffle(_)
                | Intrinsic::Vote(_)
                | Intrinsic::Reduce(_)
                | Intrinsic::Match(_)
                | Intrinsic::ActiveMask => Some(self.opaque(
                    WarningKind::Value,
                    &def,
                    "the model has no warps; an unconstrained value",
                )),
                Intrinsic::SyncWarp => {
                    self.warn(
                        WarningKind::Action,
                        &def,
                        "the model has no warps; `__syncwarp` is dropped",
                    );
                    Some(Sym::Unit)
                }
                Intrinsic::DynamicShared => Some(self.opaque(
                    WarningKind::Value,
                    &def,
                    "dynamic shared memory is not modelled; an unconstrained pointer",
                )),
                Intrinsic::AtomicFAdd => Some(self.opaque(
                    WarningKind::Action,
                    &def,
                    "float atomics are not modelled; the add is dropped and its old value unconstrained",
                )),
            };
            if let Some(s) = sym {
                self.assign(frame, dest, s, out);
            }
            return;
        }
        if let Some(KnownCall::Atomic { op, ordering }) = &known {
            let ordering = match ordering {
                OrderingArg::Generic(o) => Some(*o),
                OrderingArg::Arguments => match args.last() {
                    Some(Operand::Const(ConstOperand::Item(p))) => {
                        AtomicOrdering::from_name(p.last_name())
                    }
                    _ => None,
                },
            };
            let ord = match (op, ordering) {
                (AtomicOp::Load | AtomicOp::Store, Some(AtomicOrdering::Relaxed)) => {
                    Some(Ordering::Relaxed)
                }
                (AtomicOp::Load, Some(AtomicOrdering::Acquire)) => Some(Ordering::Acquire),
                (AtomicOp::Store, Some(AtomicOrdering::Release)) => Some(Ordering::Release),
                _ => None,
            };
            let ptr = args
                .first()
                .map(|a| self.operand(frame, a, out))
                .unwrap_or(Sym::Unit);
            if let AtomicOp::CompareExchange { .. }
            | AtomicOp::Sub
            | AtomicOp::Rmw(RmwKind::Add | RmwKind::Xchg) = op
                && let Sym::Ptr { space, addr, elem } = ptr.clone()
                && let Some((success, failure)) = rmw_orderings(path, args, op)
            {
                let value = |this: &mut Self, i: usize, out: &mut Vec<StmtId>, what: &str| {
                    let v = match args.get(i) {
                        Some(a) => this.operand(frame, a, out),
                        None => Sym::Unit,
                    };
                    let e = this.value_expr(v, what);
                    // Kept in a register of its own: the expression may read
                    // registers that change before the result is used.
                    let r = this.fresh_reg(what);
                    out.push(this.push(Stmt::Assign { dst: r, val: e }));
                    Expr::Reg(r)
                };
                let name = self.load_name();
                let (rmw, result): (RmwOp, Box<dyn Fn(Reg) -> Sym>) = match op {
                    AtomicOp::CompareExchange { .. } => {
                        let expected = value(self, 1, out, "expected");
                        let new = value(self, 2, out, "new");
                        let cmp = expected.clone();
                        (
                            RmwOp::Cas {
                                expected,
                                new,
                                failure,
                            },
                            Box::new(move |r| {
                                Sym::Tuple(vec![
                                    Sym::Val(Expr::Reg(r)),
                                    Sym::Val(Expr::Reg(r).equals(cmp.clone())),
                                ])
                            }),
                        )
                    }
                    AtomicOp::Sub => {
                        let v = value(self, 1, out, "operand");
                        (
                            RmwOp::Add(Expr::Const(0).bin(BinOp::Sub, v)),
                            Box::new(|r| Sym::Val(Expr::Reg(r))),
                        )
                    }
                    AtomicOp::Rmw(RmwKind::Add) => (
                        RmwOp::Add(value(self, 1, out, "operand")),
                        Box::new(|r| Sym::Val(Expr::Reg(r))),
                    ),
                    _ => (
                        RmwOp::Exchange(value(self, 1, out, "operand")),
                        Box::new(|r| Sym::Val(Expr::Reg(r))),
                    ),
                };
                let dst = self.fresh_reg(&name);
                out.push(self.push(Stmt::Rmw {
                    dst,
                    space,
                    addr,
                    ty: elem,
                    op: rmw,
                    ordering: success,
                }));
                let sym = result(dst);
                self.assign(frame, dest, sym, out);
                return;
            }
            if *op == AtomicOp::Fence {
                let named = ordering.map_or_else(String::new, |o| format!("{o:?}"));
                self.warn(
                    WarningKind::Action,
                    &format!("{def} ({named})"),
                    "fences are not modelled: no memory action",
                );
                self.assign(frame, dest, Sym::Unit, out);
                return;
            }
            match (op, ord, ptr) {
                (AtomicOp::Load, Some(ord), Sym::Ptr { space, addr, elem }) => {
                    let at = (space, addr, elem);
                    self.load_call(frame, at, Access::Atomic(ord), dest, out);
                }
                (AtomicOp::Store, Some(ord), Sym::Ptr { space, addr, elem }) => {
                    let at = (space, addr, elem);
                    let access = Access::Atomic(ord);
                    self.store_call(frame, at, access, args, "atomic store value", dest, out);
                }
                _ => {
                    let named = ordering.map_or_else(String::new, |o| format!("{o:?}"));
                    let s = self.opaque(
                        WarningKind::Action,
                        &format!("{def} ({named})"),
                        "SeqCst atomics, AcqRel loads and stores, and RMWs other than \
                         compare-exchange, add, sub and swap are not modelled: no memory action; \
                         the result is",
                    );
                    self.assign(frame, dest, s, out);
                }
            }
            return;
        }
        if let Some(k @ (KnownCall::VolatileLoad | KnownCall::VolatileStore)) = known {
            self.volatile(frame, k == KnownCall::VolatileLoad, &def, args, dest, out);
            return;
        }
        match known {
            // A call that only panics never returns: the block it ends is
            // cut off (see `structure`), and it has no memory action.
            Some(KnownCall::Panic) => return,
            // A hint: no value, no memory action.
            Some(KnownCall::ColdPath) => {
                self.assign(frame, dest, Sym::Unit, out);
                return;
            }
            // A hint answered `false`, as the lowering answers it.
            Some(KnownCall::StaticallyKnown) => {
                self.assign(frame, dest, Sym::Val(Expr::Const(0)), out);
                return;
            }
            // `black_box(v)` is `v`.
            Some(KnownCall::BlackBox) if args.len() == 1 => {
                let v = self.operand(frame, &args[0], out);
                self.assign(frame, dest, v, out);
                return;
            }
            _ => {}
        }
        let s = self.opaque(
            WarningKind::Action,
            &format!("call {def}"),
            "no body in the crate and not a known primitive: no memory action; the result is",
        );
        self.assign(frame, dest, s, out);
    }

    /// `ptr::read_volatile` (`load`) or `write_volatile`: the model's plain
    /// access. Rust makes no volatile access atomic (two that race are a
    /// data race like any other), so volatile orders nothing here; what it
    /// adds on the device (the access is kept as written) is the lowering's
    /// business.
    fn volatile(
        &mut self,
        frame: usize,
        load: bool,
        def: &str,
        args: &[Operand],
        dest: &Place,
        out: &mut Vec<StmtId>,
    ) {
        let ptr = match args.first() {
            Some(a) => self.operand(frame, a, out),
            None => Sym::Unit,
        };
        let Sym::Ptr { space, addr, elem } = ptr else {
            let s = self.opaque(
                WarningKind::Action,
                &format!("call {def}"),
                "a volatile access through a pointer that is not resolved: no memory action; \
                 the result is",
            );
            self.assign(frame, dest, s, out);
            return;
        };
        let at = (space, addr, elem);
        if load {
            self.load_call(frame, at, Access::Plain, dest, out);
        } else {
            let what = "volatile store value";
            self.store_call(frame, at, Access::Plain, args, what, dest, out);
        }
    }

    /// A call that loads `at` (space, address, type) with `access`: the
    /// model's load into a fresh register, which `dest` takes.
    fn load_call(
        &mut self,
        frame: usize,
        (space, addr, ty): (Space, Expr, Ty),
        access: Access,
        dest: &Place,
        out: &mut Vec<StmtId>,
    ) {
        let name = self.load_name();
        let dst = self.fresh_reg(&name);
        out.push(self.push(Stmt::Load {
            dst,
            space,
            addr,
            ty,
            access,
        }));
        self.assign(frame, dest, Sym::Val(Expr::Reg(dst)), out);
    }

    /// A call that stores its second argument (`what`, for the warning when
    /// it is no value) to `at` with `access`; `dest` takes `()`.
    #[allow(clippy::too_many_arguments)]
    fn store_call(
        &mut self,
        frame: usize,
        (space, addr, ty): (Space, Expr, Ty),
        access: Access,
        args: &[Operand],
        what: &str,
        dest: &Place,
        out: &mut Vec<StmtId>,
    ) {
        let v = match args.get(1) {
            Some(a) => self.operand(frame, a, out),
            None => Sym::Unit,
        };
        let val = self.value_expr(v, what);
        out.push(self.push(Stmt::Store {
            space,
            addr,
            ty,
            val,
            access,
        }));
        self.assign(frame, dest, Sym::Unit, out);
    }
}

/// A read-modify-write's orderings: on success, and on failure (a
/// compare-exchange's second; the same as the first otherwise). `None` for
/// `SeqCst`, which the model does not have.
fn rmw_orderings(
    path: &mir_import::model::Path,
    args: &[Operand],
    op: &AtomicOp,
) -> Option<(Ordering, Ordering)> {
    use mir_import::model::GenericArg;
    let mut named: Vec<AtomicOrdering> = path
        .generic_args()
        .iter()
        .filter_map(|a| match a {
            GenericArg::Type(mir_import::model::Ty::Adt(p))
                if p.def_path().contains("AtomicOrdering") =>
            {
                AtomicOrdering::from_name(p.last_name())
            }
            GenericArg::Const(c) if c.contains("AtomicOrdering::") => {
                c.rsplit("::").next().and_then(AtomicOrdering::from_name)
            }
            _ => None,
        })
        .collect();
    if named.is_empty() {
        // `compare_exchange(p, old, new, success, failure)` and
        // `fetch_add(p, v, order)`: the trailing arguments.
        let count = if matches!(op, AtomicOp::CompareExchange { .. }) {
            2
        } else {
            1
        };
        named = args
            .iter()
            .rev()
            .take(count)
            .rev()
            .filter_map(|a| match a {
                Operand::Const(ConstOperand::Item(p)) => AtomicOrdering::from_name(p.last_name()),
                _ => None,
            })
            .collect();
    }
    let map = |o: AtomicOrdering| match o {
        AtomicOrdering::Relaxed => Some(Ordering::Relaxed),
        AtomicOrdering::Acquire => Some(Ordering::Acquire),
        AtomicOrdering::Release => Some(Ordering::Release),
        AtomicOrdering::AcqRel => Some(Ordering::AcqRel),
        AtomicOrdering::SeqCst => None,
    };
    let success = map(*named.first()?)?;
    let failure = match named.get(1) {
        Some(o) => map(*o)?,
        None => match success {
            Ordering::Acquire | Ordering::AcqRel => Ordering::Acquire,
            _ => Ordering::Relaxed,
        },
    };
    Some((success, failure))
}
