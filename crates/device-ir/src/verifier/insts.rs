//! Per-instruction checks: operand and result types, address spaces, read-only
//! memory, casts, calls, switches, atomics and inline asm.

use super::casts::{check_asm, check_cast};
use super::{Location, Rule, Sink};
use crate::entities::{Block, FuncId, GlobalId, Inst, Ty, Value};
use crate::function::{Body, FunctionKind};
use crate::instructions::{
    BinaryOp, CastOp, GepIndex, InstData, MathFn, Ordering, RmwOp, VoteMode,
};
use crate::layout;
use crate::types::{AddressSpace, TyKind, Types};

/// Errors of one instruction, reported together.
pub(super) struct Check<'a> {
    pub(super) t: &'a Types,
    pub(super) body: &'a Body,
    pub(super) errs: Vec<(Rule, String)>,
}

impl Check<'_> {
    pub(super) fn ty(&self, v: Value) -> Ty {
        self.body.values[v].ty
    }
    pub(super) fn show(&self, ty: Ty) -> String {
        self.t.display(ty).to_string()
    }
    pub(super) fn err(&mut self, rule: Rule, msg: String) {
        self.errs.push((rule, msg));
    }
    /// `v` must have type `want`.
    pub(super) fn expect(&mut self, what: &str, v: Value, want: Ty) {
        let got = self.ty(v);
        if got != want {
            let msg = format!(
                "{what} {v} has type {}, expected {}",
                self.show(got),
                self.show(want)
            );
            self.err(Rule::Type, msg);
        }
    }
    pub(super) fn expect_i32(&mut self, what: &str, v: Value) {
        if self.t.int_bits(self.ty(v)) != Some(32) {
            let msg = format!(
                "{what} {v} has type {}, expected i32",
                self.show(self.ty(v))
            );
            self.err(Rule::Type, msg);
        }
    }
    pub(super) fn expect_i1(&mut self, what: &str, v: Value) {
        if self.t.int_bits(self.ty(v)) != Some(1) {
            let msg = format!("{what} {v} has type {}, expected i1", self.show(self.ty(v)));
            self.err(Rule::Type, msg);
        }
    }
    /// The pointee and space of pointer operand `v`, or an error.
    pub(super) fn ptr(&mut self, what: &str, v: Value) -> Option<(Ty, AddressSpace)> {
        let parts = self.t.ptr_parts(self.ty(v));
        if parts.is_none() {
            let msg = format!(
                "{what} {v} has type {}, which is not a pointer",
                self.show(self.ty(v))
            );
            self.err(Rule::Type, msg);
        }
        parts
    }
    pub(super) fn align(&mut self, align: u32) {
        if !align.is_power_of_two() || u64::from(align) > super::globals::MAX_ALIGN {
            self.err(
                Rule::Alignment,
                format!("alignment {align} is not a power of two up to 2^29"),
            );
        }
    }
    /// Whether `ty` is a pointer to `pointee` in `space`.
    pub(super) fn is_ptr_to(&self, ty: Ty, pointee: Ty, space: AddressSpace) -> bool {
        self.t.ptr_parts(ty) == Some((pointee, space))
    }
}

pub(super) fn check_inst(sink: &mut Sink<'_>, fid: FuncId, body: &Body, _block: Block, inst: Inst) {
    let m = sink.module;
    let t = &m.types;
    let mut c = Check {
        t,
        body,
        errs: Vec::new(),
    };
    let result = body.result(inst);
    let result_ty = result.map(|v| body.values[v].ty);
    let data = &body.insts[inst];
    // The result type the instruction must have: `Some(Some(ty))` for a known type,
    // `Some(None)` for no result; `None` when checked structurally below.
    let mut expected: Option<Option<Ty>> = None;
    match data {
        InstData::Iconst { ty, imm } => {
            expected = Some(Some(*ty));
            match t.int_bits(*ty) {
                Some(bits) if bits < 128 && (imm >> bits) != 0 => c.err(
                    Rule::Type,
                    format!("constant {imm:#x} does not fit in i{bits}; the bits above the width must be zero"),
                ),
                Some(_) => {}
                None => c.err(Rule::Type, format!("iconst of type {}, which is not an integer", c.show(*ty))),
            }
        }
        InstData::Fconst { ty, bits } => {
            expected = Some(Some(*ty));
            match t.kind(*ty) {
                TyKind::F32 if *bits > u64::from(u32::MAX) => c.err(
                    Rule::Type,
                    format!("f32 constant bits {bits:#x} do not fit in 32 bits"),
                ),
                TyKind::F32 | TyKind::F64 => {}
                _ => c.err(
                    Rule::Type,
                    format!("fconst of type {}, which is not a float", c.show(*ty)),
                ),
            }
        }
        InstData::Null { ty } => {
            expected = Some(Some(*ty));
            if !t.is_ptr(*ty) {
                c.err(
                    Rule::Type,
                    format!("null of type {}, which is not a pointer", c.show(*ty)),
                );
            }
        }
        InstData::Undef { ty } => expected = Some(Some(*ty)),
        InstData::GlobalAddr { global, ty } => {
            expected = Some(Some(*ty));
            let g = &m.globals[*global];
            match t.ptr_parts(*ty) {
                None => c.err(Rule::Type, format!("global_addr of type {}, which is not a pointer", c.show(*ty))),
                Some((_, space)) if space != g.space => c.err(
                    Rule::AccessSpace,
                    format!(
                        "views {global} @{} as a pointer in address space {space}, but the global lives in {}",
                        g.symbol, g.space
                    ),
                ),
                Some(_) => {}
            }
        }
        InstData::FuncAddr { func, ty } => {
            expected = Some(Some(*ty));
            let f = &m.functions[*func];
            match t.ptr_parts(*ty) {
                None => c.err(
                    Rule::Type,
                    format!("func_addr of type {}, which is not a pointer", c.show(*ty)),
                ),
                Some((_, space)) if space != AddressSpace::Generic => c.err(
                    Rule::AccessSpace,
                    format!(
                        "views {func} @{} as a pointer in address space {space}; a function's address is generic",
                        f.name
                    ),
                ),
                Some(_) => {}
            }
            if f.kind == FunctionKind::Kernel {
                c.err(
                    Rule::Call,
                    format!(
                        "takes the address of kernel {func} @{}; kernels are launched, never called",
                        f.name
                    ),
                );
            }
        }
        InstData::Alloca { ty, align } => {
            c.align(*align);
            if !result_ty.is_some_and(|r| c.is_ptr_to(r, *ty, AddressSpace::Generic)) {
                c.err(
                    Rule::Type,
                    format!("the result must be a generic pointer to {}", c.show(*ty)),
                );
            }
        }
        InstData::Load { ty, ptr, align, .. } => {
            expected = Some(Some(*ty));
            c.align(*align);
            if let Some((pointee, _)) = c.ptr("the address", *ptr)
                && pointee != *ty
            {
                let msg = format!(
                    "loads {} through a pointer to {}",
                    c.show(*ty),
                    c.show(pointee)
                );
                c.err(Rule::Type, msg);
            }
        }
        InstData::Store {
            ptr, value, align, ..
        } => {
            expected = Some(None);
            c.align(*align);
            if let Some((pointee, space)) = c.ptr("the address", *ptr) {
                if pointee != c.ty(*value) {
                    let msg = format!(
                        "stores {} through a pointer to {}",
                        c.show(c.ty(*value)),
                        c.show(pointee)
                    );
                    c.err(Rule::Type, msg);
                }
                if space == AddressSpace::Constant {
                    c.err(
                        Rule::AccessSpace,
                        "stores through a constant-space (4) pointer; constant memory is read-only on the device"
                            .to_owned(),
                    );
                }
            }
            check_read_only(sink, &mut c, *ptr, "stores");
        }
        InstData::Gep { base, indices } => {
            if let Some((pointee, space)) = c.ptr("the base", *base) {
                let mut steps = Vec::new();
                for (i, index) in indices.iter().enumerate() {
                    match index {
                        GepIndex::Field(f) if i == 0 => c.err(
                            Rule::Type,
                            format!("the first index is field .{f}; it must be an element index"),
                        ),
                        GepIndex::Field(f) => steps.push(Some(*f)),
                        GepIndex::Const(_) => steps.push(None),
                        GepIndex::Value(v) => {
                            if !t.is_int(c.ty(*v)) {
                                let msg = format!(
                                    "index {i} is {v} of type {}, not an integer",
                                    c.show(c.ty(*v))
                                );
                                c.err(Rule::Type, msg);
                            }
                            steps.push(None);
                        }
                    }
                }
                if indices.is_empty() {
                    c.err(Rule::Type, "a gep needs at least one index".to_owned());
                } else if c.errs.is_empty() {
                    match layout::gep_path(t, pointee, &steps[1..]) {
                        Err(e) => c.err(Rule::Type, e.to_string()),
                        Ok((reached, _)) => {
                            if !result_ty.is_some_and(|r| c.is_ptr_to(r, reached, space)) {
                                let msg = format!(
                                    "the result must be a pointer to {} in address space {space}",
                                    c.show(reached)
                                );
                                c.err(Rule::Type, msg);
                            }
                        }
                    }
                }
            }
        }
        InstData::ByteOffset { base, offset } => {
            expected = Some(Some(c.ty(*base)));
            c.ptr("the base", *base);
            if t.int_bits(c.ty(*offset)) != Some(64) {
                let msg = format!(
                    "the offset {offset} has type {}, expected i64",
                    c.show(c.ty(*offset))
                );
                c.err(Rule::Type, msg);
            }
        }
        InstData::Cast { op, value, ty } => {
            expected = Some(Some(*ty));
            check_cast(&mut c, *op, *value, *ty);
        }
        InstData::Binary { op, lhs, rhs } => {
            let lt = c.ty(*lhs);
            expected = Some(Some(lt));
            c.expect("the right operand", *rhs, lt);
            let fits = if op.is_float() {
                t.is_float(lt)
            } else {
                t.is_int(lt)
            };
            if !fits {
                let kind = if op.is_float() {
                    "a float"
                } else {
                    "an integer"
                };
                c.err(
                    Rule::Type,
                    format!("{} needs {kind} type, not {}", op.name(), c.show(lt)),
                );
            }
            let divides = matches!(
                op,
                BinaryOp::UDiv | BinaryOp::SDiv | BinaryOp::URem | BinaryOp::SRem
            );
            if divides && t.int_bits(lt) == Some(1) {
                // Measured: libNVVM 2.0 at -opt=0 fails with "unsupported operation".
                c.err(
                    Rule::Unsupported,
                    format!("{} on i1: NVVM cannot compile 1-bit division", op.name()),
                );
            }
        }
        InstData::Unary { value, .. } => {
            let vt = c.ty(*value);
            expected = Some(Some(vt));
            if !t.is_float(vt) {
                c.err(
                    Rule::Type,
                    format!("fneg needs a float type, not {}", c.show(vt)),
                );
            }
        }
        InstData::Icmp { lhs, rhs, .. } => {
            let lt = c.ty(*lhs);
            c.expect("the right operand", *rhs, lt);
            if !(t.is_int(lt) || t.is_ptr(lt)) {
                c.err(
                    Rule::Type,
                    format!("icmp needs integers or pointers, not {}", c.show(lt)),
                );
            }
            expect_i1_result(&mut c, result_ty);
            expected = None;
        }
        InstData::Fcmp { lhs, rhs, .. } => {
            let lt = c.ty(*lhs);
            c.expect("the right operand", *rhs, lt);
            if !t.is_float(lt) {
                c.err(Rule::Type, format!("fcmp needs floats, not {}", c.show(lt)));
            }
            expect_i1_result(&mut c, result_ty);
        }
        InstData::Select {
            cond,
            if_true,
            if_false,
        } => {
            c.expect_i1("the condition", *cond);
            let tt = c.ty(*if_true);
            c.expect("the false value", *if_false, tt);
            expected = Some(Some(tt));
        }
        InstData::Call { func, args } => {
            let callee = &m.functions[*func];
            expected = Some(callee.sig.ret);
            if callee.kind == FunctionKind::Kernel {
                c.err(
                    Rule::Call,
                    format!(
                        "calls kernel {func} @{}; kernels are launched, never called",
                        callee.name
                    ),
                );
            }
            if args.len() != callee.sig.params.len() {
                c.err(
                    Rule::Call,
                    format!(
                        "passes {} arguments to @{}, which takes {}",
                        args.len(),
                        callee.name,
                        callee.sig.params.len()
                    ),
                );
            } else {
                for (i, (&a, &p)) in args.iter().zip(&callee.sig.params).enumerate() {
                    if c.ty(a) != p {
                        let msg = format!(
                            "argument {i} is {a} of type {}, but @{} takes {}",
                            c.show(c.ty(a)),
                            callee.name,
                            c.show(p)
                        );
                        c.err(Rule::Call, msg);
                    }
                }
            }
        }
        InstData::CallIndirect { callee, sig, args } => {
            expected = Some(sig.ret);
            match t.ptr_parts(c.ty(*callee)) {
                Some((_, AddressSpace::Generic)) => {}
                _ => {
                    let msg = format!(
                        "calls through {callee} of type {}; a function's address is a generic pointer",
                        c.show(c.ty(*callee))
                    );
                    c.err(Rule::Call, msg);
                }
            }
            if let Some(f) = func_of(c.body, *callee) {
                let target = &m.functions[f];
                if target.sig != *sig {
                    let msg = format!(
                        "calls {f} @{} through {callee} with another signature than its own",
                        target.name
                    );
                    c.err(Rule::Call, msg);
                }
            }
            if args.len() != sig.params.len() {
                c.err(
                    Rule::Call,
                    format!(
                        "passes {} arguments through {callee} to a signature of {}",
                        args.len(),
                        sig.params.len()
                    ),
                );
            } else {
                for (i, (&a, &p)) in args.iter().zip(&sig.params).enumerate() {
                    if c.ty(a) != p {
                        let msg = format!(
                            "argument {i} is {a} of type {}, but the signature takes {}",
                            c.show(c.ty(a)),
                            c.show(p)
                        );
                        c.err(Rule::Call, msg);
                    }
                }
            }
        }
        InstData::Jump { .. } | InstData::Unreachable => expected = Some(None),
        InstData::Brif { cond, .. } => {
            expected = Some(None);
            c.expect_i1("the condition", *cond);
        }
        InstData::Switch { value, cases, .. } => {
            expected = Some(None);
            match t.int_bits(c.ty(*value)) {
                None => {
                    let msg = format!(
                        "switch on {} of type {}, not an integer",
                        value,
                        c.show(c.ty(*value))
                    );
                    c.err(Rule::Type, msg);
                }
                Some(bits) => {
                    let mut seen = std::collections::HashSet::new();
                    for (k, _) in cases {
                        if bits < 128 && (k >> bits) != 0 {
                            c.err(Rule::Switch, format!("case {k:#x} does not fit in i{bits}"));
                        }
                        if !seen.insert(*k) {
                            c.err(Rule::Switch, format!("case {k:#x} appears twice"));
                        }
                    }
                }
            }
        }
        InstData::Return { value } => {
            expected = Some(None);
            let sig_ret = m.functions[fid].sig.ret;
            match (value, sig_ret) {
                (None, None) => {}
                (Some(v), Some(r)) => c.expect("the returned value", *v, r),
                (Some(v), None) => c.err(
                    Rule::Type,
                    format!("returns {v} from a function that returns nothing"),
                ),
                (None, Some(r)) => {
                    let msg = format!("returns nothing from a function that returns {}", c.show(r));
                    c.err(Rule::Type, msg);
                }
            }
        }
        InstData::SpecialReg { .. } => {
            if result_ty.and_then(|r| t.int_bits(r)) != Some(32) {
                c.err(Rule::Type, "a special register reads as i32".to_owned());
            }
        }
        InstData::Barrier => expected = Some(None),
        InstData::Math { func, args } => {
            if args.len() != func.arity() {
                c.err(
                    Rule::Type,
                    format!(
                        "math {} takes {} operands, not {}",
                        func.name(),
                        func.arity(),
                        args.len()
                    ),
                );
            } else {
                let ft = c.ty(args[0]);
                if !t.is_float(ft) {
                    c.err(
                        Rule::Type,
                        format!("math {} needs f32 or f64, not {}", func.name(), c.show(ft)),
                    );
                }
                for (i, &a) in args.iter().enumerate().skip(1) {
                    if *func == MathFn::Powi {
                        c.expect_i32("the exponent of powi", a);
                    } else {
                        c.expect(&format!("operand {i} of math {}", func.name()), a, ft);
                    }
                }
                expected = Some(Some(ft));
            }
        }
        InstData::IntFn { func, args } => {
            if args.len() != func.arity() {
                c.err(
                    Rule::Type,
                    format!(
                        "int {} takes {} operands, not {}",
                        func.name(),
                        func.arity(),
                        args.len()
                    ),
                );
            } else {
                let it = c.ty(args[0]);
                match t.int_bits(it) {
                    Some(bits) if func.accepts_width(u32::from(bits)) => {}
                    _ => c.err(
                        Rule::Type,
                        format!("int {} is not defined on {}", func.name(), c.show(it)),
                    ),
                }
                for (i, &a) in args.iter().enumerate().skip(1) {
                    c.expect(&format!("operand {i} of int {}", func.name()), a, it);
                }
                expected = Some(Some(it));
            }
        }
        InstData::Shuffle {
            mask,
            value,
            lane,
            clamp,
            ..
        } => {
            c.expect_i32("the shuffle mask", *mask);
            c.expect_i32("the shuffled value", *value);
            c.expect_i32("the shuffle lane", *lane);
            if let Some(clamp) = clamp {
                c.expect_i32("the shuffle clamp", *clamp);
            }
            result_bits(&mut c, result_ty, 32, "a shuffle");
        }
        InstData::Vote { mode, mask, pred } => {
            c.expect_i32("the vote mask", *mask);
            c.expect_i1("the vote predicate", *pred);
            let bits = if *mode == VoteMode::Ballot { 32 } else { 1 };
            result_bits(&mut c, result_ty, bits, "a vote");
        }
        InstData::WarpReduce { mask, value, .. } => {
            c.expect_i32("the reduction mask", *mask);
            c.expect_i32("the reduced value", *value);
            result_bits(&mut c, result_ty, 32, "a warp reduction");
        }
        InstData::WarpMatch { mask, value, .. } => {
            c.expect_i32("the match mask", *mask);
            if !matches!(c.t.int_bits(c.ty(*value)), Some(32 | 64)) {
                let msg = format!(
                    "the matched value {value} has type {}, expected i32 or i64",
                    c.show(c.ty(*value))
                );
                c.err(Rule::Type, msg);
            }
            result_bits(&mut c, result_ty, 32, "a warp match");
        }
        InstData::WarpSync { mask } => {
            expected = Some(None);
            c.expect_i32("the warp mask", *mask);
        }
        InstData::ActiveMask => result_bits(&mut c, result_ty, 32, "an active mask"),
        InstData::DynamicShared { align } => {
            c.align(*align);
            let parts = result_ty.and_then(|r| t.ptr_parts(r));
            if !parts.is_some_and(|(p, s)| t.int_bits(p) == Some(8) && s == AddressSpace::Shared) {
                c.err(
                    Rule::Type,
                    "dynamic shared memory yields an `i8 addrspace(3)*`".to_owned(),
                );
            }
        }
        InstData::AtomicLoad {
            ty, ptr, ordering, ..
        } => {
            expected = Some(Some(*ty));
            if !matches!(
                ordering,
                Ordering::Relaxed | Ordering::Acquire | Ordering::SeqCst
            ) {
                c.err(
                    Rule::Atomic,
                    format!("an atomic load cannot be {}", ordering.name()),
                );
            }
            atomic_int(&mut c, *ty);
            atomic_ptr(&mut c, *ptr, *ty);
        }
        InstData::AtomicStore {
            ptr,
            value,
            ordering,
            ..
        } => {
            expected = Some(None);
            if !matches!(
                ordering,
                Ordering::Relaxed | Ordering::Release | Ordering::SeqCst
            ) {
                c.err(
                    Rule::Atomic,
                    format!("an atomic store cannot be {}", ordering.name()),
                );
            }
            let vt = c.ty(*value);
            atomic_int(&mut c, vt);
            atomic_ptr(&mut c, *ptr, vt);
            check_read_only(sink, &mut c, *ptr, "atomically stores");
        }
        InstData::AtomicRmw { op, ptr, value, .. } => {
            let vt = c.ty(*value);
            expected = Some(Some(vt));
            if *op == RmwOp::FAdd {
                if !t.is_float(vt) {
                    c.err(
                        Rule::Atomic,
                        format!("atomic fadd needs f32 or f64, not {}", c.show(vt)),
                    );
                }
            } else {
                atomic_int(&mut c, vt);
            }
            atomic_ptr(&mut c, *ptr, vt);
            check_read_only(sink, &mut c, *ptr, "atomically modifies");
        }
        InstData::AtomicCas {
            ptr,
            expected: e,
            new,
            ..
        } => {
            let et = c.ty(*e);
            expected = Some(Some(et));
            c.expect("the new value", *new, et);
            atomic_int(&mut c, et);
            atomic_ptr(&mut c, *ptr, et);
            check_read_only(sink, &mut c, *ptr, "atomically modifies");
        }
        InstData::Fence { ordering, .. } => {
            expected = Some(None);
            if *ordering == Ordering::Relaxed {
                c.err(Rule::Atomic, "a fence cannot be relaxed".to_owned());
            }
        }
        InstData::InlineAsm {
            constraints,
            args,
            ret,
            ..
        } => {
            expected = Some(*ret);
            check_asm(&mut c, constraints, args, *ret);
        }
    }
    if let Some(want) = expected
        && want != result_ty
    {
        let show = |ty: Option<Ty>| ty.map_or_else(|| "no result".to_owned(), |ty| c.show(ty));
        let msg = format!("has {}, expected {}", show(result_ty), show(want));
        c.err(Rule::Type, msg);
    }
    for (rule, msg) in c.errs {
        sink.report(Location::Inst(fid, inst), rule, msg);
    }
}

/// The result must be an integer of `bits` bits.
fn result_bits(c: &mut Check<'_>, result_ty: Option<Ty>, bits: u16, what: &str) {
    if result_ty.and_then(|r| c.t.int_bits(r)) != Some(bits) {
        c.err(Rule::Type, format!("{what} yields an i{bits}"));
    }
}

fn expect_i1_result(c: &mut Check<'_>, result_ty: Option<Ty>) {
    if result_ty.and_then(|r| c.t.int_bits(r)) != Some(1) {
        c.err(Rule::Type, "a comparison yields i1".to_owned());
    }
}

fn atomic_int(c: &mut Check<'_>, ty: Ty) {
    if !matches!(c.t.int_bits(ty), Some(32 | 64)) {
        c.err(
            Rule::Atomic,
            format!("atomics work on i32 or i64, not {}", c.show(ty)),
        );
    }
}

fn atomic_ptr(c: &mut Check<'_>, ptr: Value, ty: Ty) {
    if let Some((pointee, space)) = c.ptr("the address", ptr) {
        if pointee != ty {
            let msg = format!(
                "accesses {} through a pointer to {}",
                c.show(ty),
                c.show(pointee)
            );
            c.err(Rule::Type, msg);
        }
        if !matches!(
            space,
            AddressSpace::Generic | AddressSpace::Global | AddressSpace::Shared
        ) {
            c.err(
                Rule::AccessSpace,
                format!("an atomic through a pointer in address space {space}; atomics need generic, global or shared memory"),
            );
        }
    }
}

/// What a pointer is derived from, through casts, GEPs and offsets: a
/// global, or a function's code.
enum Root {
    Global(GlobalId),
    Func(FuncId),
}

/// The global or function `ptr` is derived from, through casts, GEPs and
/// offsets.
fn root_of(body: &Body, v: Value) -> Option<Root> {
    trace(body, v, true)
}

/// The function whose address `v` is, through casts only (an offset from
/// it is no function's address).
fn func_of(body: &Body, v: Value) -> Option<FuncId> {
    match trace(body, v, false)? {
        Root::Func(f) => Some(f),
        Root::Global(_) => None,
    }
}

/// What `v` is derived from, through casts and, when `through_offsets`,
/// GEPs and byte offsets.
fn trace(body: &Body, mut v: Value, through_offsets: bool) -> Option<Root> {
    for _ in 0..body.insts.len() + 1 {
        match body.def_data(v)? {
            InstData::GlobalAddr { global, .. } => return Some(Root::Global(*global)),
            InstData::FuncAddr { func, .. } => return Some(Root::Func(*func)),
            InstData::Cast {
                op: CastOp::Bitcast | CastOp::AddrSpaceCast,
                value,
                ..
            } => v = *value,
            InstData::Gep { base, .. } | InstData::ByteOffset { base, .. } if through_offsets => {
                v = *base
            }
            _ => return None,
        }
    }
    None
}

fn check_read_only(sink: &Sink<'_>, c: &mut Check<'_>, ptr: Value, verb: &str) {
    match root_of(c.body, ptr) {
        Some(Root::Global(g)) => {
            let data = &sink.module.globals[g];
            if !data.mutable {
                c.err(
                    Rule::ReadOnly,
                    format!(
                        "{verb} through {ptr}, which points into read-only global {g} @{}",
                        data.symbol
                    ),
                );
            }
        }
        Some(Root::Func(f)) => c.err(
            Rule::ReadOnly,
            format!(
                "{verb} through {ptr}, which points at the code of {f} @{}",
                sink.module.functions[f].name
            ),
        ),
        None => {}
    }
}
