//! Per-instruction checks: operand and result types, address spaces, read-only
//! memory, casts, calls, switches, atomics and inline asm.

use super::{Location, Rule, Sink};
use crate::entities::{Block, FuncId, GlobalId, Inst, Ty, Value};
use crate::function::{Body, FunctionKind};
use crate::instructions::{BinaryOp, CastOp, GepIndex, InstData, Ordering, RmwOp};
use crate::layout;
use crate::types::{AddressSpace, TyKind, Types};

/// Errors of one instruction, reported together.
struct Check<'a> {
    t: &'a Types,
    body: &'a Body,
    errs: Vec<(Rule, String)>,
}

impl Check<'_> {
    fn ty(&self, v: Value) -> Ty {
        self.body.values[v].ty
    }
    fn show(&self, ty: Ty) -> String {
        self.t.display(ty).to_string()
    }
    fn err(&mut self, rule: Rule, msg: String) {
        self.errs.push((rule, msg));
    }
    /// `v` must have type `want`.
    fn expect(&mut self, what: &str, v: Value, want: Ty) {
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
    fn expect_i1(&mut self, what: &str, v: Value) {
        if self.t.int_bits(self.ty(v)) != Some(1) {
            let msg = format!("{what} {v} has type {}, expected i1", self.show(self.ty(v)));
            self.err(Rule::Type, msg);
        }
    }
    /// The pointee and space of pointer operand `v`, or an error.
    fn ptr(&mut self, what: &str, v: Value) -> Option<(Ty, AddressSpace)> {
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
    fn align(&mut self, align: u32) {
        if !align.is_power_of_two() || u64::from(align) > super::globals::MAX_ALIGN {
            self.err(
                Rule::Alignment,
                format!("alignment {align} is not a power of two up to 2^29"),
            );
        }
    }
    /// Whether `ty` is a pointer to `pointee` in `space`.
    fn is_ptr_to(&self, ty: Ty, pointee: Ty, space: AddressSpace) -> bool {
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
                        Err(msg) => c.err(Rule::Type, msg),
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

/// The read-only global `ptr` is derived from, through casts, GEPs and offsets.
fn root_global(body: &Body, mut v: Value) -> Option<GlobalId> {
    for _ in 0..body.insts.len() + 1 {
        match body.def_data(v)? {
            InstData::GlobalAddr { global, .. } => return Some(*global),
            InstData::Cast {
                op: CastOp::Bitcast | CastOp::AddrSpaceCast,
                value,
                ..
            } => v = *value,
            InstData::Gep { base, .. } | InstData::ByteOffset { base, .. } => v = *base,
            _ => return None,
        }
    }
    None
}

fn check_read_only(sink: &Sink<'_>, c: &mut Check<'_>, ptr: Value, verb: &str) {
    if let Some(g) = root_global(c.body, ptr) {
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
}

fn check_cast(c: &mut Check<'_>, op: CastOp, value: Value, to: Ty) {
    let t = c.t;
    let from = c.ty(value);
    let (fk, tk) = (t.kind(from), t.kind(to));
    let bad = |c: &mut Check<'_>, why: &str| {
        let msg = format!(
            "{} from {} to {}: {why}",
            op.name(),
            c.show(from),
            c.show(to)
        );
        c.err(Rule::Type, msg);
    };
    let int_bits = |k: &TyKind| match k {
        TyKind::Int(b) => Some(*b),
        _ => None,
    };
    let is_float = |k: &TyKind| matches!(k, TyKind::F32 | TyKind::F64);
    let float_bits = |k: &TyKind| match k {
        TyKind::F32 => 32,
        _ => 64,
    };
    match op {
        CastOp::Trunc | CastOp::ZExt | CastOp::SExt => match (int_bits(fk), int_bits(tk)) {
            (Some(a), Some(b)) => {
                let ok = if op == CastOp::Trunc { b < a } else { b > a };
                if !ok {
                    bad(
                        c,
                        if op == CastOp::Trunc {
                            "the result must be narrower"
                        } else {
                            "the result must be wider"
                        },
                    );
                }
            }
            _ => bad(c, "both sides must be integers"),
        },
        CastOp::FpTrunc | CastOp::FpExt => {
            if !(is_float(fk) && is_float(tk)) {
                bad(c, "both sides must be floats");
            } else {
                let (a, b) = (float_bits(fk), float_bits(tk));
                let ok = if op == CastOp::FpTrunc { b < a } else { b > a };
                if !ok {
                    bad(
                        c,
                        if op == CastOp::FpTrunc {
                            "the result must be narrower"
                        } else {
                            "the result must be wider"
                        },
                    );
                }
            }
        }
        CastOp::FpToUi | CastOp::FpToSi => match int_bits(tk) {
            Some(bits) if is_float(fk) => {
                if bits == 128 {
                    c.err(
                        Rule::Unsupported,
                        format!(
                            "{} to i128: NVPTX has no 128-bit float conversion",
                            op.name()
                        ),
                    );
                }
            }
            _ => bad(c, "converts a float to an integer"),
        },
        CastOp::UiToFp | CastOp::SiToFp => match int_bits(fk) {
            Some(bits) if is_float(tk) => {
                if bits == 128 {
                    c.err(
                        Rule::Unsupported,
                        format!(
                            "{} from i128: NVPTX has no 128-bit float conversion",
                            op.name()
                        ),
                    );
                }
            }
            _ => bad(c, "converts an integer to a float"),
        },
        CastOp::PtrToInt => {
            if !(matches!(fk, TyKind::Ptr { .. }) && int_bits(tk).is_some()) {
                bad(c, "converts a pointer to an integer");
            }
        }
        CastOp::IntToPtr => {
            if !(int_bits(fk).is_some() && matches!(tk, TyKind::Ptr { .. })) {
                bad(c, "converts an integer to a pointer");
            }
        }
        CastOp::Bitcast => match (fk, tk) {
            (TyKind::Ptr { space: a, .. }, TyKind::Ptr { space: b, .. }) => {
                if a != b {
                    let msg = format!(
                        "bitcast from {} to {} changes the address space from {a} to {b}; use addrspacecast",
                        c.show(from),
                        c.show(to)
                    );
                    c.err(Rule::BitcastSpace, msg);
                }
            }
            (TyKind::Ptr { .. }, _) | (_, TyKind::Ptr { .. }) => bad(
                c,
                "a pointer converts to or from an integer with ptrtoint or inttoptr",
            ),
            _ => {
                let (a, b) = (t.scalar_bits(from), t.scalar_bits(to));
                if a.is_none() || b.is_none() {
                    bad(c, "aggregates cannot be bitcast");
                } else if a != b {
                    bad(c, "the sizes differ");
                }
            }
        },
        CastOp::AddrSpaceCast => match (fk, tk) {
            (
                TyKind::Ptr {
                    pointee: pa,
                    space: a,
                },
                TyKind::Ptr {
                    pointee: pb,
                    space: b,
                },
            ) => {
                if *a == *b {
                    let msg =
                        format!("addrspacecast within address space {a}; it must change the space");
                    c.err(Rule::AddrSpaceCast, msg);
                } else if *a != AddressSpace::Generic && *b != AddressSpace::Generic {
                    let msg = format!(
                        "addrspacecast from {} to {} is between two non-generic spaces ({a} and {b}); cast through generic",
                        c.show(from),
                        c.show(to)
                    );
                    c.err(Rule::AddrSpaceCast, msg);
                }
                if pa != pb {
                    bad(
                        c,
                        "addrspacecast keeps the pointee type; bitcast separately",
                    );
                }
            }
            _ => bad(c, "both sides must be pointers"),
        },
    }
}

/// Checks an LLVM inline-asm constraint string: outputs (`=...`) first, at most one
/// and only with a result; then one input per argument; then clobbers (`~{...}`).
///
/// Only the NVPTX register classes whose type is unambiguous are accepted: `h`
/// (i16), `r` (i32), `l` (i64 or a pointer), `f` (f32), `d` (f64), and `n` (an
/// integer constant). libNVVM accepts other pairings and mistranslates them, and
/// crashes on an `i128` output (measured), so the verifier refuses them.
fn check_asm(c: &mut Check<'_>, constraints: &str, args: &[Value], ret: Option<Ty>) {
    let parts: Vec<&str> = if constraints.is_empty() {
        Vec::new()
    } else {
        constraints.split(',').collect()
    };
    let outputs: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| p.starts_with('='))
        .collect();
    let inputs: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.starts_with('=') && !p.starts_with('~'))
        .collect();
    if outputs.len() != usize::from(ret.is_some()) {
        let msg = format!(
            "the constraints declare {} output(s), but the asm has {}",
            outputs.len(),
            if ret.is_some() {
                "a result"
            } else {
                "no result"
            }
        );
        c.err(Rule::InlineAsm, msg);
    }
    if inputs.len() != args.len() {
        c.err(
            Rule::InlineAsm,
            format!(
                "the constraints declare {} input(s), but the asm has {} argument(s)",
                inputs.len(),
                args.len()
            ),
        );
    }
    let mut phase = 0; // 0 outputs, 1 inputs, 2 clobbers
    for p in &parts {
        let this = if p.starts_with('=') {
            0
        } else if p.starts_with('~') {
            2
        } else {
            1
        };
        if this < phase {
            c.err(
                Rule::InlineAsm,
                format!("constraint `{p}` is out of order: outputs, then inputs, then clobbers"),
            );
        }
        phase = phase.max(this);
        if this == 2 && !(p.starts_with("~{") && p.ends_with('}') && !p.contains('"')) {
            c.err(
                Rule::InlineAsm,
                format!("clobber `{p}` is malformed; write `~{{name}}`"),
            );
        }
    }
    if let (Some(out), Some(ty)) = (outputs.first(), ret) {
        check_operand(c, &out[1..], ty, None, "the result");
    }
    for (k, (code, &arg)) in inputs.iter().zip(args).enumerate() {
        let ty = c.ty(arg);
        check_operand(c, code, ty, Some(arg), &format!("input {k} ({arg})"));
    }
}

/// Checks one operand against its constraint code.
fn check_operand(c: &mut Check<'_>, code: &str, ty: Ty, arg: Option<Value>, what: &str) {
    let t = c.t;
    let ok = match code {
        "h" => t.int_bits(ty) == Some(16),
        "r" => t.int_bits(ty) == Some(32),
        "l" => t.int_bits(ty) == Some(64) || t.is_ptr(ty),
        "f" => matches!(t.kind(ty), TyKind::F32),
        "d" => matches!(t.kind(ty), TyKind::F64),
        "n" => {
            let is_const =
                arg.is_some_and(|a| matches!(c.body.def_data(a), Some(InstData::Iconst { .. })));
            is_const && matches!(t.int_bits(ty), Some(8 | 16 | 32 | 64))
        }
        _ => {
            c.err(
                Rule::InlineAsm,
                format!("constraint `{code}` is not supported; use h, r, l, f, d or n"),
            );
            return;
        }
    };
    if !ok {
        let want = match code {
            "h" => "i16",
            "r" => "i32",
            "l" => "i64 or a pointer",
            "f" => "f32",
            "d" => "f64",
            _ => "an integer constant of 8 to 64 bits",
        };
        let msg = format!(
            "{what} has type {} but constraint `{code}` needs {want}",
            c.show(ty)
        );
        c.err(Rule::InlineAsm, msg);
    }
}
