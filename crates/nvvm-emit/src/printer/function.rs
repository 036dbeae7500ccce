//! Function bodies.

use std::fmt::Write as _;

use cranelift_entity::SecondaryMap;
use device_ir::display::signed_imm;
use device_ir::{
    Block, Body, DYNAMIC_SHARED_SYMBOL, FuncAttrs, FuncId, FunctionKind, GepIndex, InstData, IntFn,
    Linkage, MemFlags, ParamAttrs, Ty, TyKind, UnaryOp, Value, ValueDef, VoteMode,
};

use super::{Printer, atomics, text};

/// Per-function state: the incoming edges of each block.
struct Fn<'b> {
    body: &'b Body,
    /// For each block, (predecessor, arguments) per incoming edge, in order.
    incoming: SecondaryMap<Block, Vec<(Block, &'b [Value])>>,
}

impl Printer<'_> {
    pub(crate) fn function(&mut self, id: FuncId) {
        let m = self.m;
        let f = &m.functions[id];
        let ret = f.sig.ret.map_or("void", |r| self.ty(r)).to_owned();
        let Some(body) = &f.body else {
            let params: Vec<&str> = f.sig.params.iter().map(|&p| self.ty(p)).collect();
            let _ = writeln!(self.out, "declare {ret} @{}({})", f.name, params.join(", "));
            return;
        };
        let entry = body.entry();
        let params: Vec<String> = body.blocks[entry]
            .params
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let attrs = f.param_attrs.get(i).copied().unwrap_or_default();
                let mut s = self.ty(body.values[p].ty).to_owned();
                if attrs.contains(ParamAttrs::NOALIAS) {
                    s.push_str(" noalias");
                }
                if attrs.contains(ParamAttrs::READONLY) {
                    s.push_str(" readonly");
                }
                // LLVM 7's form: the copy's type is the pointee; the
                // alignment becomes the `.param`'s, which the launch's
                // layout of the bytes must match.
                if attrs.contains(ParamAttrs::BYVAL) {
                    let ty = body.values[p].ty;
                    let align = m.types.ptr_parts(ty).map_or(1, |(pointee, _)| {
                        device_ir::layout::align_of(&m.types, pointee)
                    });
                    let _ = write!(s, " byval align {align}");
                }
                format!("{s} %{p}")
            })
            .collect();
        let linkage = if f.linkage == Linkage::Internal {
            "internal "
        } else {
            ""
        };
        // A device function that runs a collective is one itself; a kernel
        // is never called, so the attribute would say nothing there.
        let convergent = f.kind == FunctionKind::Device && self.convergent.contains(id);
        let mut attrs = String::new();
        if convergent {
            attrs.push_str(" convergent");
        }
        if f.attrs.contains(FuncAttrs::NOINLINE) {
            attrs.push_str(" noinline");
        }
        let _ = writeln!(
            self.out,
            "define {linkage}{ret} @{}({}){attrs} {{",
            f.name,
            params.join(", ")
        );

        let mut incoming: SecondaryMap<Block, Vec<(Block, &[Value])>> = SecondaryMap::new();
        for (block, data) in body.blocks.iter() {
            if let Some(&term) = data.insts.last() {
                for call in body.insts[term].branch_targets() {
                    incoming[call.block].push((block, call.args.as_slice()));
                }
            }
        }
        let fx = Fn { body, incoming };
        for (block, data) in body.blocks.iter() {
            if block != entry {
                self.out.push('\n');
            }
            let _ = writeln!(self.out, "{block}:");
            if !fx.incoming[block].is_empty() {
                for (k, &p) in data.params.iter().enumerate() {
                    let entries: Vec<String> = fx.incoming[block]
                        .iter()
                        .map(|(pred, args)| format!("[ {}, %{pred} ]", self.operand(&fx, args[k])))
                        .collect();
                    let _ = writeln!(
                        self.out,
                        "  %{p} = phi {} {}",
                        self.ty(body.values[p].ty).to_owned(),
                        entries.join(", ")
                    );
                }
            }
            for &inst in &data.insts {
                self.inst(&fx, inst);
            }
        }
        self.out.push_str("}\n");
    }

    /// The LLVM spelling of `ty`, computed once per type.
    pub(crate) fn ty(&self, ty: Ty) -> &str {
        &self.ty_text[ty]
    }

    /// How a use of `v` is printed: a constant inline, `undef` for a parameter of a
    /// block that nothing branches to (it can never run), else `%vN`.
    fn operand(&self, fx: &Fn<'_>, v: Value) -> String {
        let body = fx.body;
        match body.values[v].def {
            ValueDef::Result(inst) => match &body.insts[inst] {
                InstData::Iconst { ty, imm } => signed_imm(&self.m.types, *ty, *imm),
                InstData::Fconst { ty, bits } => {
                    text::float_literal(*bits, matches!(self.m.types.kind(*ty), TyKind::F32))
                }
                InstData::Null { .. } => "null".to_owned(),
                InstData::Undef { .. } => "undef".to_owned(),
                InstData::GlobalAddr { global, ty } => {
                    let g = &self.m.globals[*global];
                    format!(
                        "bitcast ({} addrspace({})* @{} to {})",
                        self.global_ty[*global],
                        g.space.number(),
                        g.symbol,
                        self.ty(*ty)
                    )
                }
                InstData::FuncAddr { func, ty } => {
                    let f = &self.m.functions[*func];
                    format!(
                        "bitcast ({}* @{} to {})",
                        self.fn_ty(&f.sig),
                        f.name,
                        self.ty(*ty)
                    )
                }
                _ => format!("%{v}"),
            },
            ValueDef::Param(block, _) => {
                if block != body.entry() && fx.incoming[block].is_empty() {
                    "undef".to_owned()
                } else {
                    format!("%{v}")
                }
            }
        }
    }

    /// `type operand`.
    fn typed(&self, fx: &Fn<'_>, v: Value) -> String {
        format!("{} {}", self.ty(fx.body.values[v].ty), self.operand(fx, v))
    }

    /// The LLVM function type of `sig`: `i32 (i32, i8*)`.
    pub(super) fn fn_ty(&self, sig: &device_ir::Signature) -> String {
        let ret = sig.ret.map_or("void", |r| self.ty(r));
        let params: Vec<&str> = sig.params.iter().map(|&p| self.ty(p)).collect();
        format!("{ret} ({})", params.join(", "))
    }

    fn bits(&self, ty: Ty) -> u32 {
        self.m.types.scalar_bits(ty).unwrap_or(64)
    }

    fn inst(&mut self, fx: &Fn<'_>, inst: device_ir::Inst) {
        let body = fx.body;
        let data = &body.insts[inst];
        if data.is_constant() {
            return;
        }
        let res = body.result(inst);
        let lhs = res.map_or_else(String::new, |v| format!("%{v} = "));
        let vty = |v: Value| body.values[v].ty;
        let line = match data {
            InstData::Iconst { .. }
            | InstData::Fconst { .. }
            | InstData::Null { .. }
            | InstData::Undef { .. }
            | InstData::GlobalAddr { .. }
            | InstData::FuncAddr { .. } => return,
            InstData::Alloca { ty, align } => format!("alloca {}, align {align}", self.ty(*ty)),
            InstData::Load {
                ty,
                ptr,
                align,
                flags,
            } => format!(
                "load{} {}, {}, align {align}",
                volatile(*flags),
                self.ty(*ty),
                self.typed(fx, *ptr)
            ),
            InstData::Store {
                ptr,
                value,
                align,
                flags,
            } => format!(
                "store{} {}, {}, align {align}",
                volatile(*flags),
                self.typed(fx, *value),
                self.typed(fx, *ptr)
            ),
            InstData::Gep { base, indices } => {
                let pointee = self
                    .m
                    .types
                    .ptr_parts(vty(*base))
                    .map_or(vty(*base), |(p, _)| p);
                let mut s = format!(
                    "getelementptr {}, {}",
                    self.ty(pointee),
                    self.typed(fx, *base)
                );
                for index in indices {
                    let _ = match index {
                        GepIndex::Value(v) => write!(s, ", {}", self.typed(fx, *v)),
                        GepIndex::Const(k) => write!(s, ", i64 {k}"),
                        GepIndex::Field(n) => write!(s, ", i32 {n}"),
                    };
                }
                s
            }
            InstData::ByteOffset { base, offset } => {
                let Some(v) = res else { return };
                let pt = self.ty(vty(*base)).to_owned();
                let space = self
                    .m
                    .types
                    .ptr_parts(vty(*base))
                    .map_or(0, |(_, s)| s.number());
                let i8p = if space == 0 {
                    "i8*".to_owned()
                } else {
                    format!("i8 addrspace({space})*")
                };
                let _ = writeln!(
                    self.out,
                    "  %{v}.0 = bitcast {} to {i8p}",
                    self.typed(fx, *base)
                );
                let _ = writeln!(
                    self.out,
                    "  %{v}.1 = getelementptr i8, {i8p} %{v}.0, {}",
                    self.typed(fx, *offset)
                );
                format!("bitcast {i8p} %{v}.1 to {pt}")
            }
            InstData::Cast { op, value, ty } => {
                format!(
                    "{} {} to {}",
                    op.name(),
                    self.typed(fx, *value),
                    self.ty(*ty)
                )
            }
            InstData::Binary { op, lhs, rhs } => {
                format!(
                    "{} {}, {}",
                    op.name(),
                    self.typed(fx, *lhs),
                    self.operand(fx, *rhs)
                )
            }
            InstData::Unary {
                op: UnaryOp::FNeg,
                value,
            } => {
                // LLVM 7 has no `fneg`; `fsub -0.0, x` is its negation idiom.
                format!(
                    "fsub {} 0x8000000000000000, {}",
                    self.ty(vty(*value)),
                    self.operand(fx, *value)
                )
            }
            InstData::Icmp { cond, lhs, rhs } => {
                format!(
                    "icmp {} {}, {}",
                    cond.name(),
                    self.typed(fx, *lhs),
                    self.operand(fx, *rhs)
                )
            }
            InstData::Fcmp { cond, lhs, rhs } => {
                format!(
                    "fcmp {} {}, {}",
                    cond.name(),
                    self.typed(fx, *lhs),
                    self.operand(fx, *rhs)
                )
            }
            InstData::Select {
                cond,
                if_true,
                if_false,
            } => format!(
                "select {}, {}, {}",
                self.typed(fx, *cond),
                self.typed(fx, *if_true),
                self.typed(fx, *if_false)
            ),
            InstData::Call { func, args } => {
                let callee = &self.m.functions[*func];
                let ret = callee.sig.ret.map_or("void", |r| self.ty(r)).to_owned();
                let args: Vec<String> = args.iter().map(|&a| self.typed(fx, a)).collect();
                format!("call {ret} @{}({})", callee.name, args.join(", "))
            }
            InstData::CallIndirect { callee, sig, args } => {
                // LLVM calls through a pointer to the function type: the
                // generic pointer is cast to it first.
                let ret = sig.ret.map_or("void", |r| self.ty(r)).to_owned();
                let _ = writeln!(
                    self.out,
                    "  %{inst}.callee = bitcast {} to {}*",
                    self.typed(fx, *callee),
                    self.fn_ty(sig)
                );
                let args: Vec<String> = args.iter().map(|&a| self.typed(fx, a)).collect();
                let convergent = if self.indirect_convergent {
                    " convergent"
                } else {
                    ""
                };
                format!("call {ret} %{inst}.callee({}){convergent}", args.join(", "))
            }
            InstData::Jump { dest } => format!("br label %{}", dest.block),
            InstData::Brif {
                cond,
                then_dest,
                else_dest,
            } => format!(
                "br {}, label %{}, label %{}",
                self.typed(fx, *cond),
                then_dest.block,
                else_dest.block
            ),
            InstData::Switch {
                value,
                default,
                cases,
            } => {
                let ty = vty(*value);
                let tys = self.ty(ty);
                let mut s = format!(
                    "switch {}, label %{} [",
                    self.typed(fx, *value),
                    default.block
                );
                for (k, call) in cases {
                    let _ = write!(
                        s,
                        "\n    {tys} {}, label %{}",
                        signed_imm(&self.m.types, ty, *k),
                        call.block
                    );
                }
                s.push_str("\n  ]");
                s
            }
            InstData::Return { value: Some(v) } => format!("ret {}", self.typed(fx, *v)),
            InstData::Return { value: None } => "ret void".to_owned(),
            InstData::Unreachable => "unreachable".to_owned(),
            InstData::SpecialReg { reg } => {
                let name = format!("llvm.nvvm.read.ptx.sreg.{}", reg.name());
                self.intrinsic(format!("declare i32 @{name}()"));
                format!("call i32 @{name}()")
            }
            InstData::DynamicShared { .. } => format!(
                "getelementptr [0 x i8], [0 x i8] addrspace(3)* @{DYNAMIC_SHARED_SYMBOL}, i64 0, i64 0"
            ),
            InstData::Barrier => {
                self.intrinsic("declare void @llvm.nvvm.barrier0()".to_owned());
                "call void @llvm.nvvm.barrier0()".to_owned()
            }
            // The verifier guarantees at least one operand.
            InstData::Math { args, .. } if args.is_empty() => "unreachable".to_owned(),
            InstData::Math { func, args } => {
                let ty = vty(args[0]);
                let fty = self.ty(ty).to_owned();
                let name = func.libdevice(self.bits(ty) == 64);
                let params: Vec<String> =
                    args.iter().map(|&a| self.ty(vty(a)).to_owned()).collect();
                self.intrinsic(format!("declare {fty} @{name}({})", params.join(", ")));
                let args: Vec<String> = args.iter().map(|&a| self.typed(fx, a)).collect();
                format!("call {fty} @{name}({})", args.join(", "))
            }
            InstData::IntFn { args, .. } if args.is_empty() => "unreachable".to_owned(),
            InstData::IntFn { func, args } => {
                let ty = vty(args[0]);
                let ity = self.ty(ty).to_owned();
                let (name, extra) = func.llvm(self.bits(ty));
                // A rotation is a funnel shift of the value with itself.
                let operands: Vec<Value> = match func {
                    IntFn::RotateLeft | IntFn::RotateRight => vec![args[0], args[0], args[1]],
                    _ => args.clone(),
                };
                let params = vec![ity.as_str(); operands.len()].join(", ");
                let extra_ty = if extra.is_empty() { "" } else { ", i1" };
                self.intrinsic(format!("declare {ity} @{name}({params}{extra_ty})"));
                let args: Vec<String> = operands.iter().map(|&a| self.typed(fx, a)).collect();
                format!("call {ity} @{name}({}{extra})", args.join(", "))
            }
            InstData::Shuffle {
                mode,
                mask,
                value,
                lane,
                clamp,
            } => {
                // PTX's `c`: CUDA's full warp width unless the shuffle has
                // its own (`ShuffleMode::source` reads it the same way).
                let clamp = match clamp {
                    Some(c) => self.typed(fx, *c),
                    None => format!("i32 {}", mode.full_warp_clamp()),
                };
                let name = format!("llvm.nvvm.shfl.sync.{}.i32", mode.name());
                self.intrinsic(format!("declare i32 @{name}(i32, i32, i32, i32)"));
                format!(
                    "call i32 @{name}({}, {}, {}, {clamp})",
                    self.typed(fx, *mask),
                    self.typed(fx, *value),
                    self.typed(fx, *lane)
                )
            }
            InstData::Vote { mode, mask, pred } => {
                let ret = if *mode == VoteMode::Ballot {
                    "i32"
                } else {
                    "i1"
                };
                let name = format!("llvm.nvvm.vote.{}.sync", mode.name());
                self.intrinsic(format!("declare {ret} @{name}(i32, i1)"));
                format!(
                    "call {ret} @{name}({}, {})",
                    self.typed(fx, *mask),
                    self.typed(fx, *pred)
                )
            }
            InstData::WarpSync { mask } => {
                self.intrinsic("declare void @llvm.nvvm.bar.warp.sync(i32)".to_owned());
                format!(
                    "call void @llvm.nvvm.bar.warp.sync({})",
                    self.typed(fx, *mask)
                )
            }
            // libNVVM has no `redux.sync` intrinsic (it calls an undefined
            // `llvm.nvvm.redux.sync.add`), and `match.all`'s returns a pair:
            // inline PTX, `convergent` so that LLVM moves it across no branch.
            InstData::WarpReduce { op, mask, value } => convergent_asm(
                "i32",
                &format!("redux.sync.{} $0, $1, $2;", op.ptx_suffix()),
                "=r,r,r",
                &[self.typed(fx, *value), self.typed(fx, *mask)],
            ),
            InstData::WarpMatch { mode, mask, value } => {
                let bits = self.bits(vty(*value));
                let c = if bits == 64 { "l" } else { "r" };
                convergent_asm(
                    "i32",
                    &format!("match.{}.sync.b{bits} $0, $1, $2;", mode.name()),
                    &format!("=r,{c},r"),
                    &[self.typed(fx, *value), self.typed(fx, *mask)],
                )
            }
            // Inline PTX with effects, so that LLVM neither hoists nor merges
            // it across branches: its value depends on where it runs.
            InstData::ActiveMask => asm_call("i32", "activemask.b32 $0;", "=r", &[]),
            InstData::AtomicLoad {
                ty,
                ptr,
                ordering,
                scope,
            } => {
                let (_, space) = self
                    .m
                    .types
                    .ptr_parts(vty(*ptr))
                    .unwrap_or((*ty, device_ir::AddressSpace::Generic));
                let bits = self.bits(*ty);
                let tmpl = atomics::load(*ordering, *scope, space, bits);
                let c = atomics::reg_constraint(bits, false);
                asm_call(
                    self.ty(*ty),
                    &tmpl,
                    &format!("={c},l,~{{memory}}"),
                    &[self.typed(fx, *ptr)],
                )
            }
            InstData::AtomicStore {
                ptr,
                value,
                ordering,
                scope,
            } => {
                let space = self.space_of(vty(*ptr));
                let bits = self.bits(vty(*value));
                let tmpl = atomics::store(*ordering, *scope, space, bits);
                let c = atomics::reg_constraint(bits, false);
                asm_call(
                    "void",
                    &tmpl,
                    &format!("l,{c},~{{memory}}"),
                    &[self.typed(fx, *ptr), self.typed(fx, *value)],
                )
            }
            InstData::AtomicRmw {
                op,
                ptr,
                value,
                ordering,
                scope,
            } => {
                let space = self.space_of(vty(*ptr));
                let t = vty(*value);
                let bits = self.bits(t);
                let float = self.m.types.is_float(t);
                let tmpl = atomics::rmw(*op, *ordering, *scope, space, bits);
                let c = atomics::reg_constraint(bits, float);
                asm_call(
                    self.ty(t),
                    &tmpl,
                    &format!("={c},l,{c},~{{memory}}"),
                    &[self.typed(fx, *ptr), self.typed(fx, *value)],
                )
            }
            InstData::AtomicCas {
                ptr,
                expected,
                new,
                ordering,
                scope,
            } => {
                let space = self.space_of(vty(*ptr));
                let t = vty(*expected);
                let bits = self.bits(t);
                let tmpl = atomics::cas(*ordering, *scope, space, bits);
                let c = atomics::reg_constraint(bits, false);
                asm_call(
                    self.ty(t),
                    &tmpl,
                    &format!("={c},l,{c},{c},~{{memory}}"),
                    &[
                        self.typed(fx, *ptr),
                        self.typed(fx, *expected),
                        self.typed(fx, *new),
                    ],
                )
            }
            InstData::Fence { ordering, scope } => {
                asm_call("void", &atomics::fence(*ordering, *scope), "~{memory}", &[])
            }
            InstData::InlineAsm {
                template,
                constraints,
                args,
                ret,
                side_effects,
            } => {
                let ret = ret.map_or("void", |r| self.ty(r)).to_owned();
                let args: Vec<String> = args.iter().map(|&a| self.typed(fx, a)).collect();
                let mut s = format!(
                    "call {ret} asm {}\"",
                    if *side_effects { "sideeffect " } else { "" }
                );
                text::escape(&mut s, template.as_bytes());
                s.push_str("\", \"");
                text::escape(&mut s, constraints.as_bytes());
                let _ = write!(s, "\"({})", args.join(", "));
                s
            }
        };
        let _ = writeln!(self.out, "  {lhs}{line}");
    }

    fn space_of(&self, ptr_ty: Ty) -> device_ir::AddressSpace {
        self.m
            .types
            .ptr_parts(ptr_ty)
            .map_or(device_ir::AddressSpace::Generic, |(_, s)| s)
    }

    fn intrinsic(&mut self, decl: String) {
        self.intrinsics.insert(decl);
    }
}

fn volatile(flags: MemFlags) -> &'static str {
    if flags.contains(MemFlags::VOLATILE) {
        " volatile"
    } else {
        ""
    }
}

/// `call RET asm "TEMPLATE", "CONSTRAINTS"(ARGS) convergent`: inline PTX of
/// a warp collective whose value depends on its operands and its mask's
/// lanes alone (no `sideeffect`, unlike `activemask`), `convergent` so that
/// no transformation makes it depend on more or fewer branches than the
/// source.
fn convergent_asm(ret: &str, template: &str, constraints: &str, args: &[String]) -> String {
    let mut s = asm_text(ret, "", template, constraints, args);
    s.push_str(" convergent");
    s
}

/// `call RET asm sideeffect "TEMPLATE", "CONSTRAINTS"(ARGS)`.
fn asm_call(ret: &str, template: &str, constraints: &str, args: &[String]) -> String {
    asm_text(ret, "sideeffect ", template, constraints, args)
}

/// `call RET asm FLAGS"TEMPLATE", "CONSTRAINTS"(ARGS)`, the template escaped.
fn asm_text(ret: &str, flags: &str, template: &str, constraints: &str, args: &[String]) -> String {
    let mut s = format!("call {ret} asm {flags}\"");
    text::escape(&mut s, template.as_bytes());
    let _ = write!(s, "\", \"{constraints}\"({})", args.join(", "));
    s
}
