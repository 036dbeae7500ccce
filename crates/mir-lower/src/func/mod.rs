//! Lowering one MIR function body to a device-IR function.
//!
//! Locals that are never borrowed and whose representation is a scalar or a
//! scalar pair become SSA values, carried between blocks as block parameters
//! (every MIR block takes one parameter per SSA slot). Only the other locals
//! get stack slots: a borrowed local, or an aggregate. A reference constant is
//! never one of them: it is the address of its module-level global. Nor is a
//! local that only ever holds one by-value constant aggregate and is only read
//! (`_5 = const LUT; _6 = _5[_i]`): its home is that constant's interned,
//! read-only global, so a dynamically indexed `const` table is never copied to
//! the stack (rustc's own backend gets the same from a private global and a
//! memcpy that LLVM forwards).

mod arith;
mod atomics;
mod call;
mod casts;
mod constants;
mod doomed;
mod dyn_dispatch;

pub use dyn_dispatch::check_constant_vtables;
mod intrinsics;
mod liveness;
mod memory;
mod rvalue;
mod values;

use std::collections::{BTreeMap, BTreeSet};

use cranelift_entity::EntityRef;
use device_ir::{Block, FuncId, FunctionBuilder, Module, Ty as DTy, Value};

use mir_import::eval::Evaluation;
use mir_import::eval::layout::Layouts;
use mir_import::model::{
    BasicBlock, Body, ConstOperand, Crate, Local, Operand, PlaceElem, Rvalue, SourceInfo,
    StatementKind, TerminatorKind,
};

use crate::abi::{ArgAbi, FnAbi, RetAbi};
use crate::diag::{Diagnostic, Rule};
use crate::globals::Globals;
use crate::repr::{Repr, repr_of};

/// What every function lowering reads and shares.
pub struct Shared<'a> {
    /// The crate.
    pub krate: &'a Crate,
    /// Layouts.
    pub layouts: &'a Layouts<'a>,
    /// The device function and ABI of every function being lowered, by def path.
    pub fns: &'a BTreeMap<String, (FuncId, FnAbi)>,
    /// How to lower.
    pub options: crate::LowerOptions,
    /// The methods of each trait object's vtable, in slot order.
    pub vtables: &'a mir_import::model::VtableLayouts,
}

/// Where a local lives.
#[derive(Clone, Debug)]
enum Home {
    /// Nothing to store.
    Zst,
    /// SSA slots starting at this index (one for a scalar, two for a pair).
    Ssa(usize),
    /// Memory at this address (an `i8*`).
    Mem(Value),
}

/// The lowering state of one function.
pub struct FnLower<'a, 'm> {
    sh: &'a Shared<'a>,
    ev: &'a Evaluation,
    globals: &'a mut Globals,
    b: FunctionBuilder<'m>,
    body: &'a Body,
    item: String,
    abi: FnAbi,
    homes: Vec<Home>,
    reprs: Vec<Repr>,
    slot_tys: Vec<DTy>,
    /// The local each SSA slot belongs to.
    slot_locals: Vec<Local>,
    /// One `undef` per slot, made in the entry block: the value of a slot
    /// that is not live where a block starts.
    undefs: Vec<Value>,
    /// The locals live on entry to each MIR block ([`liveness`]): the slots
    /// its IR block takes as parameters.
    live: Vec<liveness::LocalSet>,
    cur: Vec<Value>,
    blocks: Vec<Block>,
    sret: Option<Value>,
    loc: String,
    /// The kernel span of the statement or terminator being lowered, for
    /// diagnostics (see [`Body::span_in`]).
    span: Option<mir_import::model::Span>,
    /// Stack slots for call results and by-reference arguments, made in the
    /// entry block (so a call in a loop never grows the stack), by MIR block.
    call_slots: std::collections::BTreeMap<BasicBlock, Vec<Value>>,
    cur_bb: Option<BasicBlock>,
    /// Locals whose home is a constant's global ([`constant_homed_locals`]):
    /// their one assignment writes nothing.
    constant_homed: BTreeSet<Local>,
    /// The blocks that can only end in a panic ([`doomed::doomed_blocks`]):
    /// each lowers to a trap.
    doomed: BTreeSet<BasicBlock>,
}

/// Lowers `body` into the already declared `func`.
pub fn lower_fn(
    sh: &Shared,
    ev: &Evaluation,
    globals: &mut Globals,
    m: &mut Module,
    func: FuncId,
    body: &Body,
    abi: FnAbi,
) -> Result<(), Diagnostic> {
    let item = body.path.def_path();
    let b = FunctionBuilder::new(m, func);
    let mut fl = FnLower {
        sh,
        ev,
        globals,
        b,
        body,
        item,
        abi,
        homes: Vec::new(),
        reprs: Vec::new(),
        slot_tys: Vec::new(),
        slot_locals: Vec::new(),
        undefs: Vec::new(),
        live: liveness::live_in(body),
        cur: Vec::new(),
        blocks: Vec::new(),
        sret: None,
        loc: "entry".into(),
        span: None,
        call_slots: std::collections::BTreeMap::new(),
        cur_bb: None,
        constant_homed: BTreeSet::new(),
        doomed: doomed::doomed_blocks(body),
    };
    if let Some(why) = body.type_id_misuse() {
        return Err(fl.unsupported(why));
    }
    fl.setup()?;
    for (bb, _) in body.blocks.iter() {
        fl.lower_block(bb)?;
    }
    Ok(())
}

/// Locals whose address is taken: `&_1`, `&raw const (_1.0: T)`, not `&(*_1)`.
fn borrowed_locals(body: &Body) -> BTreeSet<Local> {
    let mut out = BTreeSet::new();
    for bb in body.blocks.values() {
        for st in &bb.statements {
            if let StatementKind::Assign(_, Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p)) = &st.kind
                && !matches!(p.projection.first(), Some(PlaceElem::Deref))
            {
                out.insert(p.local);
            }
        }
    }
    out
}

/// Where a local that can live in a constant's global is assigned: the
/// statement's block and index, and the constant.
struct ConstantAssign<'b> {
    bb: BasicBlock,
    index: usize,
    constant: &'b ConstOperand,
}

/// The locals that may take a constant's read-only global as their home:
/// neither the return place nor an argument, assigned exactly once, whole,
/// from a named or promoted constant (`_5 = const LUT`), and never written
/// otherwise, borrowed or made a call's destination. Such a local is only
/// read (indexed, projected, copied or moved whole), so every read may go to
/// the global; MIR never reads a local before assigning it, so the global
/// holds its value wherever it is read. A write through a pointer
/// (`copy_nonoverlapping`'s destination, drop glue's `&raw mut`) needs a
/// borrow first, which excludes the local. Whether the constant is an aggregate
/// is decided by the caller, from the local's representation.
fn constant_homed_locals(body: &Body) -> BTreeMap<Local, ConstantAssign<'_>> {
    let mut assigns: BTreeMap<Local, Vec<ConstantAssign<'_>>> = BTreeMap::new();
    let mut written: BTreeSet<Local> = BTreeSet::new();
    for (bb, data) in body.blocks.iter() {
        for (index, st) in data.statements.iter().enumerate() {
            match &st.kind {
                StatementKind::Assign(place, rv) => {
                    if let Rvalue::Ref(_, p) | Rvalue::RawPtr(_, p) = rv {
                        written.insert(p.local);
                    }
                    match rv {
                        Rvalue::Use(Operand::Const(constant))
                            if place.projection.is_empty()
                                && !matches!(
                                    constant,
                                    ConstOperand::Scalar(_)
                                        | ConstOperand::Unit
                                        | ConstOperand::ZeroSized(_)
                                        | ConstOperand::FnItem(_)
                                ) =>
                        {
                            assigns
                                .entry(place.local)
                                .or_default()
                                .push(ConstantAssign {
                                    bb,
                                    index,
                                    constant,
                                });
                        }
                        _ => {
                            written.insert(place.local);
                        }
                    }
                }
                StatementKind::SetDiscriminant(place, _) | StatementKind::Deinit(place) => {
                    written.insert(place.local);
                }
                _ => {}
            }
        }
        if let TerminatorKind::Call { destination, .. } = &data.terminator.kind {
            written.insert(destination.local);
        }
    }
    assigns
        .into_iter()
        .filter(|(l, a)| {
            a.len() == 1 && !written.contains(l) && l.index() != 0 && !body.locals[*l].is_arg
        })
        .filter_map(|(l, mut a)| a.pop().map(|a| (l, a)))
        .collect()
}

impl<'a, 'm> FnLower<'a, 'm> {
    fn err(&self, rule: Rule, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(rule, self.item.clone(), msg)
            .at(self.loc.clone())
            .with_span(self.span.clone())
    }

    /// The kernel span of `source`, if it leads into the kernel's file.
    fn kernel_span(&self, source: Option<&SourceInfo>) -> Option<mir_import::model::Span> {
        let file = self.sh.krate.source_file.as_deref()?;
        self.body.span_in(source?, file).cloned()
    }

    /// An unsupported-construct refusal here; `msg` is a message or a typed
    /// error (a layout, a representation), shown by its `Display`.
    fn unsupported(&self, msg: impl std::fmt::Display) -> Diagnostic {
        self.err(Rule::Unsupported, msg.to_string())
    }

    fn setup(&mut self) -> Result<(), Diagnostic> {
        let borrowed = borrowed_locals(self.body);
        let entry = self.b.entry_block();
        let params = self.b.block_params(entry);
        let mut param_iter = params.into_iter();
        if matches!(self.abi.ret, RetAbi::Sret(_)) {
            self.sret = param_iter.next();
        }
        let mut arg_values: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
        for (i, a) in self.abi.args.iter().enumerate() {
            let n = match a {
                ArgAbi::Zst => 0,
                ArgAbi::Direct(k) => *k,
                ArgAbi::ByRef | ArgAbi::ByVal { .. } => 1,
                ArgAbi::Disjoint => 2,
            };
            let mut vals: Vec<Value> = (0..n).filter_map(|_| param_iter.next()).collect();
            // The rest of the body sees a by-value aggregate's copy as the
            // byte pointer every memory home is.
            if let (ArgAbi::ByVal { .. }, [p]) = (a, vals.as_mut_slice()) {
                let i8p = crate::repr::generic_i8_ptr(self.b.module());
                *p = self.b.cast(device_ir::CastOp::Bitcast, *p, i8p);
            }
            arg_values.insert(i + 1, vals);
        }
        let constant_homed = if self.sh.options.copy_constant_aggregates {
            BTreeMap::new()
        } else {
            constant_homed_locals(self.body)
        };
        let only_doomed = doomed::locals_only_doomed(self.body, &self.doomed);
        for (local, decl) in self.body.locals.iter() {
            let idx = local.index();
            let repr = match repr_of(self.sh.layouts, &decl.ty) {
                Ok(repr) => repr,
                // Only code on the way to a panic names it, and that code
                // is a trap: it needs no home.
                Err(_) if only_doomed.contains(&local) => Repr::Zst,
                Err(e) => return Err(self.unsupported(format!("local {local}: {e}"))),
            };
            let ssa = repr.is_ssa() && !borrowed.contains(&local);
            let home = if repr == Repr::Zst {
                Home::Zst
            } else if ssa {
                let start = self.slot_tys.len();
                match &repr {
                    Repr::Scalar(s) => {
                        let t = s.ssa_ty(self.b.module());
                        self.slot_tys.push(t);
                    }
                    Repr::Pair(s0, _, s1, _) => {
                        let t0 = s0.ssa_ty(self.b.module());
                        let t1 = s1.ssa_ty(self.b.module());
                        self.slot_tys.push(t0);
                        self.slot_tys.push(t1);
                    }
                    _ => {}
                }
                self.slot_locals
                    .resize(self.slot_tys.len(), Local::new(idx));
                Home::Ssa(start)
            } else if let (Repr::Mem { .. }, Some(a)) = (&repr, constant_homed.get(&local)) {
                Home::Mem(self.constant_home(local, a)?)
            } else {
                let (Repr::Mem { .. } | Repr::Scalar(_) | Repr::Pair(..)) = &repr else {
                    return Err(self.internal("unreachable representation"));
                };
                Home::Mem(self.stack_slot_or_param(idx, decl.is_arg, &repr, &arg_values)?)
            };
            self.homes.push(home);
            self.reprs.push(repr);
        }
        // Initial SSA values: arguments from parameters, everything else undef.
        let mut cur = Vec::with_capacity(self.slot_tys.len());
        for t in self.slot_tys.clone() {
            cur.push(self.b.undef(t));
        }
        self.undefs = cur.clone();
        self.cur = cur;
        for (idx, vals) in &arg_values {
            if let Home::Ssa(s) = self.homes[*idx] {
                let vals = match (self.abi.args.get(idx - 1), vals.as_slice()) {
                    (Some(ArgAbi::ByVal { .. }), &[copy]) => self.load_by_value(*idx, copy)?,
                    _ => vals.clone(),
                };
                for (k, v) in vals.into_iter().enumerate() {
                    self.cur[s + k] = v;
                }
            }
        }
        for (bb, _) in self.body.blocks.iter() {
            let blk = self.b.create_block();
            for s in self.live_slots(bb) {
                let t = self.slot_tys[s];
                self.b.append_block_param(blk, t);
            }
            self.blocks.push(blk);
        }
        self.make_call_slots()?;
        self.jump_to(BasicBlock::new(0));
        Ok(())
    }

    /// The address of the read-only global that holds constant-homed
    /// `local`'s one value, made in the entry block. A refusal of the
    /// constant points at its assignment.
    fn constant_home(&mut self, local: Local, a: &ConstantAssign<'_>) -> Result<Value, Diagnostic> {
        let saved = (self.loc.clone(), self.span.take());
        self.loc = format!("{}[{}]", a.bb, a.index);
        let source = self.body.blocks[a.bb].statements[a.index].source.as_ref();
        self.span = self.kernel_span(source);
        let ty = self.local_ty(local);
        let v = self.const_val(a.constant, &ty);
        (self.loc, self.span) = saved;
        match v? {
            values::Val::ByRef(addr) => {
                self.constant_homed.insert(local);
                Ok(addr)
            }
            other => Err(self.internal(&format!(
                "constant aggregate {:?} of `{ty}` lowered to {other:?}",
                a.constant
            ))),
        }
    }

    /// Whether a call returning `repr` through a return slot can write
    /// straight into `dest`: a whole local that lives in memory.
    pub(super) fn sret_direct(&self, repr: &Repr, dest: &mir_import::model::Place) -> bool {
        matches!(repr, Repr::Mem { .. })
            && dest.projection.is_empty()
            && matches!(self.homes.get(dest.local.index()), Some(Home::Mem(_)))
    }

    /// Makes, in the entry block, the stack slots every call will need: one
    /// for a result returned through a return slot, one per aggregate passed
    /// by reference, in that order.
    fn make_call_slots(&mut self) -> Result<(), Diagnostic> {
        for (bb, data) in self.body.blocks.iter() {
            if self.doomed.contains(&bb) {
                continue;
            }
            let TerminatorKind::Call { func, args, .. } = &data.terminator.kind else {
                continue;
            };
            // What the call passes: a call through a trait object spreads
            // a closure trait's argument tuple.
            let mut virtual_args = None;
            let abi = match func {
                // A call through a trait object: the convention of its
                // operands' types.
                mir_import::model::Callee::Item(path)
                    if let Some((_, method)) = self.sh.krate.virtual_call(path) =>
                {
                    let destination = match &data.terminator.kind {
                        TerminatorKind::Call { destination, .. } => destination,
                        _ => continue,
                    };
                    let Ok(passed) = self.virtual_call_args(&method, args) else {
                        continue;
                    };
                    let abi = self.virtual_call_abi(&passed, destination).ok();
                    virtual_args = Some(passed);
                    abi.map(|(abi, _)| abi)
                }
                mir_import::model::Callee::Item(path) => self
                    .sh
                    .fns
                    .get(&self.sh.krate.resolve_callee(path))
                    .map(|(_, abi)| abi.clone()),
                // A call through a `fn` pointer: the convention of its type
                // (a type without one is the call's error, reported when
                // the call is lowered).
                mir_import::model::Callee::Operand(callee) => match self.operand_ty(callee)? {
                    mir_import::model::Ty::FnPtr(inputs, output) => {
                        crate::abi::fn_ptr_abi(self.sh.layouts, self.b.module(), &inputs, &output)
                            .ok()
                            .map(|(abi, _)| abi)
                    }
                    _ => None,
                },
            };
            let Some(abi) = abi else {
                continue;
            };
            let mut sizes = Vec::new();
            if let (RetAbi::Sret(repr), TerminatorKind::Call { destination, .. }) =
                (&abi.ret, &data.terminator.kind)
                && !self.sret_direct(repr, destination)
            {
                sizes.push(repr.size_align());
            }
            let passed = virtual_args.as_deref().unwrap_or(args);
            for (op, a) in passed.iter().zip(&abi.args) {
                if *a == ArgAbi::ByRef {
                    let ty = self.operand_ty(op)?;
                    let l = self.layout_of(&ty)?;
                    sizes.push((l.size, l.align));
                }
            }
            let slots = sizes
                .into_iter()
                .map(|(size, align)| self.scratch(size, align))
                .collect();
            self.call_slots.insert(bb, slots);
        }
        Ok(())
    }

    /// The scalars of by-value argument `idx` held in registers, read from
    /// the launch's copy at `copy`.
    fn load_by_value(&mut self, idx: usize, copy: Value) -> Result<Vec<Value>, Diagnostic> {
        let repr = self.reprs[idx].clone();
        Ok(match self.load_repr(copy, &repr) {
            values::Val::Immediate(x) => vec![x],
            values::Val::Pair(x, y) => vec![x, y],
            _ => return Err(self.internal("a by-value argument in registers")),
        })
    }

    /// The memory home of a non-SSA local: a by-reference argument's pointer,
    /// the return slot, or a fresh stack slot.
    fn stack_slot_or_param(
        &mut self,
        idx: usize,
        is_arg: bool,
        repr: &Repr,
        args: &BTreeMap<usize, Vec<Value>>,
    ) -> Result<Value, Diagnostic> {
        let (size, align) = repr.size_align();
        if is_arg && matches!(self.abi.args.get(idx - 1), Some(ArgAbi::ByRef)) {
            return args
                .get(&idx)
                .and_then(|v| v.first().copied())
                .ok_or_else(|| self.internal("missing by-reference parameter"));
        }
        // A return place in memory (an aggregate, or a borrowed pair) is
        // the caller's return slot itself.
        if idx == 0
            && let Some(p) = self.sret
        {
            return Ok(p);
        }
        let i8t = self.b.types().i8();
        let arr = self.b.types().array(i8t, size.max(1));
        let slot = self.b.alloca_aligned(arr, align.max(1) as u32);
        let i8p = crate::repr::generic_i8_ptr(self.b.module());
        let slot = self.b.cast(device_ir::CastOp::Bitcast, slot, i8p);
        // A stack-homed argument is stored from its parameters on entry.
        if is_arg && let Some(vals) = args.get(&idx) {
            let vals = vals.clone();
            match (repr, self.abi.args.get(idx - 1)) {
                (_, Some(ArgAbi::Disjoint)) => {
                    self.store_scalar_at(slot, 0, crate::repr::Scalar::Ptr, vals[0]);
                    let len_at = device_ir::layout::POINTER_SIZE;
                    self.store_scalar_at(slot, len_at, crate::repr::Scalar::Int(64), vals[1]);
                }
                // The kernel's own copy of the launch's bytes, which it may
                // write: LLVM reads the `.param` in place where nothing does.
                // Before the scalar arm: a borrowed one-scalar aggregate
                // (`(u32,)`) is stack-homed too, and its parameter is the
                // copy's address, not its value.
                (_, Some(ArgAbi::ByVal { size: n, align: a })) => {
                    if *n != size {
                        return Err(self.internal(&format!(
                            "a by-value argument of {n} bytes for a slot of {size}"
                        )));
                    }
                    let a = (*a).min(align);
                    self.memcpy(slot, vals[0], size, a);
                }
                (Repr::Scalar(s), _) => self.store_scalar_at(slot, 0, *s, vals[0]),
                (Repr::Pair(s0, o0, s1, o1), _) => {
                    self.store_scalar_at(slot, *o0, *s0, vals[0]);
                    self.store_scalar_at(slot, *o1, *s1, vals[1]);
                }
                _ => return Err(self.unsupported("aggregate argument passed by value")),
            }
        }
        Ok(slot)
    }

    fn block_of(&self, bb: BasicBlock) -> Block {
        self.blocks[bb.index()]
    }

    /// The SSA slots live on entry to `bb`, in slot order: its IR block's
    /// parameters.
    fn live_slots(&self, bb: BasicBlock) -> Vec<usize> {
        let live = &self.live[bb.index()];
        (0..self.slot_tys.len())
            .filter(|&s| live.contains(self.slot_locals[s]))
            .collect()
    }

    /// The arguments of a jump to `bb`: the current values of its live slots.
    fn block_args(&self, bb: BasicBlock) -> Vec<Value> {
        self.live_slots(bb)
            .into_iter()
            .map(|s| self.cur[s])
            .collect()
    }

    fn jump_to(&mut self, bb: BasicBlock) {
        let blk = self.block_of(bb);
        let args = self.block_args(bb);
        self.b.jump(blk, &args);
    }

    fn lower_block(&mut self, bb: BasicBlock) -> Result<(), Diagnostic> {
        let blk = self.block_of(bb);
        self.b.switch_to_block(blk);
        let mut cur = self.undefs.clone();
        for (s, v) in self
            .live_slots(bb)
            .into_iter()
            .zip(self.b.block_params(blk))
        {
            cur[s] = v;
        }
        self.cur = cur;
        self.cur_bb = Some(bb);
        let data = &self.body.blocks[bb];
        // A cleanup block runs only while unwinding, and the device never
        // unwinds: a panic traps, and no call's unwind edge is lowered, so
        // nothing branches here (MIR enters cleanup blocks only from unwind
        // edges and other cleanup blocks). Its statements and terminator
        // (with inlining, often a `drop` of a dependency's guard type that
        // has drop glue) are not lowered.
        if data.cleanup {
            self.b.unreachable();
            return Ok(());
        }
        // A block that can only end in a panic builds the panic's message
        // (with inlining, `fmt::Arguments`, its `&str` pieces and its
        // formatters): the device traps there and the launch fails whatever
        // the blocks on the way computed, so they are not lowered.
        if self.doomed.contains(&bb) {
            self.trap();
            return Ok(());
        }
        for (i, st) in data.statements.iter().enumerate() {
            self.loc = format!("{bb}[{i}]");
            self.span = self.kernel_span(st.source.as_ref());
            self.lower_statement(&st.kind).map_err(|d| self.locate(d))?;
        }
        self.loc = format!("{bb}[{}]", data.statements.len());
        self.span = self.kernel_span(data.terminator.source.as_ref());
        self.lower_terminator(&data.terminator.kind)
            .map_err(|d| self.locate(d))
    }

    /// Places at the current statement a diagnostic about this function
    /// that a helper (globals, views) raised without a location. One about
    /// another item, such as a static the function reads, keeps that
    /// item's own place.
    fn locate(&self, mut d: Diagnostic) -> Diagnostic {
        if d.item == self.item && d.location.is_none() {
            d.location = Some(self.loc.clone());
            if d.span.is_none() {
                d.span = self.span.clone();
            }
        }
        d
    }

    fn lower_statement(&mut self, st: &StatementKind) -> Result<(), Diagnostic> {
        match st {
            StatementKind::Assign(place, rv) => self.assign(place, rv),
            StatementKind::SetDiscriminant(place, variant) => {
                self.set_discriminant(place, *variant)
            }
            StatementKind::StorageLive(_)
            | StatementKind::StorageDead(_)
            | StatementKind::Nop
            | StatementKind::ConstEvalCounter
            | StatementKind::PlaceMention(_)
            | StatementKind::Deinit(_)
            | StatementKind::Assume(_) => Ok(()),
            StatementKind::CopyNonOverlapping { dst, src, count } => {
                self.copy_nonoverlapping(dst, src, count)
            }
        }
    }

    fn trap(&mut self) {
        self.b.inline_asm("trap;", "", &[], None, true);
        self.b.unreachable();
    }

    fn lower_terminator(&mut self, t: &TerminatorKind) -> Result<(), Diagnostic> {
        match t {
            TerminatorKind::Goto(bb) => {
                self.jump_to(*bb);
                Ok(())
            }
            TerminatorKind::Return => self.lower_return(),
            TerminatorKind::Unreachable => {
                self.b.unreachable();
                Ok(())
            }
            TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } => {
                let v = self.scalar_operand(discr)?;
                let ty = self.b.value_ty(v);
                let default = device_ir::BlockCall::new(
                    self.block_of(*otherwise),
                    &self.block_args(*otherwise),
                );
                if self.b.types().int_bits(ty) == Some(1) {
                    // `switchInt` on a bool: 0 is false.
                    let zero_target = targets.iter().find(|(k, _)| *k == 0).map(|(_, b)| *b);
                    let one_target = targets.iter().find(|(k, _)| *k == 1).map(|(_, b)| *b);
                    let f = zero_target.unwrap_or(*otherwise);
                    let tr = one_target.unwrap_or(*otherwise);
                    let (fb, tb) = (self.block_of(f), self.block_of(tr));
                    let (fa, ta) = (self.block_args(f), self.block_args(tr));
                    self.b.brif(v, tb, &ta, fb, &fa);
                    return Ok(());
                }
                let cases = targets
                    .iter()
                    .map(|(k, bb)| {
                        (
                            *k,
                            device_ir::BlockCall::new(self.block_of(*bb), &self.block_args(*bb)),
                        )
                    })
                    .collect();
                self.b.switch(v, default, cases);
                Ok(())
            }
            TerminatorKind::Assert {
                cond,
                expected,
                target,
                msg,
                ..
            } => {
                // Overflow checks are off, so rustc's codegen drops these and
                // the operation wraps.
                if mir_import::calls::is_optional_overflow_check(msg) {
                    self.jump_to(*target);
                    return Ok(());
                }
                let c = self.scalar_operand(cond)?;
                let ok = self.block_of(*target);
                let fail = self.b.create_block();
                let args = self.block_args(*target);
                if *expected {
                    self.b.brif(c, ok, &args, fail, &[]);
                } else {
                    self.b.brif(c, fail, &[], ok, &args);
                }
                self.b.switch_to_block(fail);
                self.trap();
                Ok(())
            }
            TerminatorKind::Call {
                func,
                args,
                destination,
                target,
                ..
            } => self.lower_call(func, args, destination, *target),
            // A drop of a value without drop glue does nothing.
            TerminatorKind::Drop { place, target, .. } => {
                let ty = self.place_ty(place)?;
                if !self.sh.krate.trivially_dropped(&ty) {
                    return Err(self.unsupported(format!(
                        "`drop` of `{ty}`, which may have drop glue, is not supported"
                    )));
                }
                self.jump_to(*target);
                Ok(())
            }
            TerminatorKind::InlineAsm { text, .. } => {
                // Where it was written: a dependency's file, when rustc
                // inlined the dependency into the kernel.
                let at = self
                    .cur_bb
                    .and_then(|bb| self.body.blocks[bb].terminator.source.as_ref())
                    .map(|s| format!(" (at {}:{}:{})", s.span.file, s.span.line, s.span.col))
                    .unwrap_or_default();
                let template = text.split(',').next().unwrap_or(text);
                Err(self.unsupported(format!(
                    "inline assembly (`asm!({template}, ..)`{at}) is for the host's architecture and is not supported on the device"
                )))
            }
            TerminatorKind::UnwindResume | TerminatorKind::Terminate => {
                self.trap();
                Ok(())
            }
        }
    }

    fn lower_return(&mut self) -> Result<(), Diagnostic> {
        match self.abi.ret.clone() {
            RetAbi::Void => {
                self.b.ret(None);
            }
            RetAbi::Direct => {
                let v = self.read_local_scalar(Local::new(0))?;
                self.b.ret(Some(v));
            }
            RetAbi::Sret(_) => {
                let sret = self
                    .sret
                    .ok_or_else(|| self.internal("missing return slot"))?;
                if let Home::Ssa(_) = self.homes[0] {
                    let val = self.read_operand(&Operand::Copy(
                        mir_import::model::Place::local(Local::new(0)),
                    ))?;
                    let ty = self.body.locals[Local::new(0)].ty.clone();
                    self.write_mem(sret, &ty, val)?;
                }
                self.b.ret(None);
            }
        }
        Ok(())
    }
}
