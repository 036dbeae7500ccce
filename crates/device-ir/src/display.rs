//! The device-IR text form, for debugging and for verifier messages.
//!
//! ```text
//! gv0 = constant addrspace(1) internal @k_3f2a, size 8, align 4, init [bytes 01 00 00 00, undef 4]
//! fn0 = kernel external @k(i32 addrspace(1)*) {
//! block0(v0: i32 addrspace(1)*):
//!     v1 = sreg tid.x
//!     store v1, v0, align 4
//!     return
//! }
//! ```
//!
//! Displaying never panics, even on a module that fails verification: a handle
//! out of bounds prints as itself.

use std::fmt::{self, Write as _};

use crate::entities::{Block, FuncId, GlobalId, Inst};
use crate::function::{Body, FunctionData, FunctionKind, ParamAttrs};
use crate::global::{GlobalData, Linkage, RelocTarget, Span};
use crate::instructions::{BlockCall, GepIndex, InstData, MemFlags};
use crate::module::Module;
use crate::types::{TyKind, Types};

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (id, g) in self.globals.iter() {
            writeln!(f, "{}", display_global(self, id, g))?;
        }
        for (id, func) in self.functions.iter() {
            if !self.globals.is_empty() || id.as_u32() > 0 {
                writeln!(f)?;
            }
            write_function(f, self, id, func)?;
        }
        Ok(())
    }
}

/// One line describing a global.
pub fn display_global(module: &Module, id: GlobalId, g: &GlobalData) -> String {
    let mut s = format!(
        "{id} = {} addrspace({}) {} @{}, size {}, align {}",
        if g.mutable { "global" } else { "constant" },
        g.space.number(),
        linkage_name(g.linkage),
        g.symbol,
        g.size,
        g.align
    );
    if let Some(init) = &g.init {
        s.push_str(", init [");
        let mut first = true;
        let mut sep = |s: &mut String| {
            if !std::mem::take(&mut first) {
                s.push_str(", ");
            }
        };
        for span in &init.spans {
            sep(&mut s);
            match span {
                Span::Bytes(bytes) => {
                    s.push_str("bytes");
                    for b in bytes {
                        let _ = write!(s, " {b:02x}");
                    }
                }
                Span::Undef(n) => {
                    let _ = write!(s, "undef {n}");
                }
            }
        }
        for r in &init.relocations {
            sep(&mut s);
            let _ = write!(s, "reloc @{} {}+{}", r.offset, r.target, r.addend);
            let name = match r.target {
                RelocTarget::Global(t) => module.globals.get(t).map(|t| &t.symbol),
                RelocTarget::Func(f) => module.functions.get(f).map(|f| &f.name),
            };
            if let Some(name) = name {
                let _ = write!(s, " (@{name})");
            }
        }
        s.push(']');
    }
    s
}

fn linkage_name(l: Linkage) -> &'static str {
    match l {
        Linkage::Internal => "internal",
        Linkage::External => "external",
        Linkage::ExternallyInitialized => "externally_initialized",
    }
}

fn write_function(
    f: &mut fmt::Formatter<'_>,
    module: &Module,
    id: FuncId,
    func: &FunctionData,
) -> fmt::Result {
    let t = &module.types;
    let kind = match func.kind {
        FunctionKind::Kernel => "kernel",
        FunctionKind::Device => "device",
    };
    write!(
        f,
        "{id} = {kind} {} @{}(",
        linkage_name(func.linkage),
        func.name
    )?;
    for (i, &p) in func.sig.params.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{}", t.display(p))?;
        let attrs = func.param_attrs.get(i).copied().unwrap_or_default();
        if attrs.contains(ParamAttrs::NOALIAS) {
            f.write_str(" noalias")?;
        }
        if attrs.contains(ParamAttrs::READONLY) {
            f.write_str(" readonly")?;
        }
        if attrs.contains(ParamAttrs::BYVAL) {
            f.write_str(" byval")?;
        }
    }
    f.write_str(")")?;
    if let Some(ret) = func.sig.ret {
        write!(f, " -> {}", t.display(ret))?;
    }
    if !func.attrs.is_empty() {
        f.write_str(" noinline")?;
    }
    let Some(body) = &func.body else {
        return writeln!(f);
    };
    writeln!(f, " {{")?;
    for (block, data) in body.blocks.iter() {
        writeln!(f, "{}:", display_block_header(t, body, block))?;
        for &inst in &data.insts {
            writeln!(f, "    {}", display_inst(module, body, inst))?;
        }
    }
    writeln!(f, "}}")
}

/// `block1(v3: i32, v4: float)`, or `block1` without parameters.
pub fn display_block_header(types: &Types, body: &Body, block: Block) -> String {
    let mut s = block.to_string();
    let Some(data) = body.blocks.get(block) else {
        return s;
    };
    if !data.params.is_empty() {
        s.push('(');
        for (i, &p) in data.params.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            match body.values.get(p) {
                Some(v) => {
                    let _ = write!(s, "{p}: {}", types.display(v.ty));
                }
                None => {
                    let _ = write!(s, "{p}");
                }
            }
        }
        s.push(')');
    }
    s
}

/// One instruction in the text form, with its result: `v3 = load i32, v2, align 4`.
pub fn display_inst(module: &Module, body: &Body, inst: Inst) -> String {
    let t = &module.types;
    let Some(data) = body.insts.get(inst) else {
        return format!("{inst} (not in this function)");
    };
    let mut s = String::new();
    if let Some(Some(v)) = body.results.get(inst).map(|r| r.expand()) {
        let _ = write!(s, "{v} = ");
    }
    let call = |c: &BlockCall| {
        let mut s = c.block.to_string();
        if !c.args.is_empty() {
            s.push('(');
            s.push_str(&join(c.args.iter()));
            s.push(')');
        }
        s
    };
    let flags = |f: &MemFlags| {
        if f.contains(MemFlags::VOLATILE) {
            " volatile"
        } else {
            ""
        }
    };
    let _ = match data {
        InstData::Iconst { ty, imm } => {
            write!(s, "iconst {} {}", t.display(*ty), signed_imm(t, *ty, *imm))
        }
        InstData::Fconst { ty, bits } => {
            let text = match t.get(*ty) {
                Some(TyKind::F32) => fmt_float(f64::from(f32::from_bits(*bits as u32)), *bits),
                _ => fmt_float(f64::from_bits(*bits), *bits),
            };
            write!(s, "fconst {} {text}", t.display(*ty))
        }
        InstData::Null { ty } => write!(s, "null {}", t.display(*ty)),
        InstData::Undef { ty } => write!(s, "undef {}", t.display(*ty)),
        InstData::GlobalAddr { global, ty } => {
            let name = module
                .globals
                .get(*global)
                .map(|g| g.symbol.as_str())
                .unwrap_or("?");
            write!(s, "global_addr {global} @{name} as {}", t.display(*ty))
        }
        InstData::FuncAddr { func, ty } => {
            let name = module
                .functions
                .get(*func)
                .map(|f| f.name.as_str())
                .unwrap_or("?");
            write!(s, "func_addr {func} @{name} as {}", t.display(*ty))
        }
        InstData::Alloca { ty, align } => write!(s, "alloca {}, align {align}", t.display(*ty)),
        InstData::Load {
            ty,
            ptr,
            align,
            flags: fl,
        } => {
            write!(
                s,
                "load{} {}, {ptr}, align {align}",
                flags(fl),
                t.display(*ty)
            )
        }
        InstData::Store {
            ptr,
            value,
            align,
            flags: fl,
        } => {
            write!(s, "store{} {value}, {ptr}, align {align}", flags(fl))
        }
        InstData::Gep { base, indices } => {
            let idx: Vec<String> = indices
                .iter()
                .map(|i| match i {
                    GepIndex::Value(v) => v.to_string(),
                    GepIndex::Const(c) => c.to_string(),
                    GepIndex::Field(n) => format!(".{n}"),
                })
                .collect();
            write!(s, "gep {base}, [{}]", idx.join(", "))
        }
        InstData::ByteOffset { base, offset } => write!(s, "byte_offset {base}, {offset}"),
        InstData::Cast { op, value, ty } => {
            write!(s, "{} {value} to {}", op.name(), t.display(*ty))
        }
        InstData::Binary { op, lhs, rhs } => write!(s, "{} {lhs}, {rhs}", op.name()),
        InstData::Unary { value, .. } => write!(s, "fneg {value}"),
        InstData::Icmp { cond, lhs, rhs } => write!(s, "icmp {} {lhs}, {rhs}", cond.name()),
        InstData::Fcmp { cond, lhs, rhs } => write!(s, "fcmp {} {lhs}, {rhs}", cond.name()),
        InstData::Select {
            cond,
            if_true,
            if_false,
        } => {
            write!(s, "select {cond}, {if_true}, {if_false}")
        }
        InstData::Call { func, args } => {
            let name = module
                .functions
                .get(*func)
                .map(|f| f.name.as_str())
                .unwrap_or("?");
            write!(s, "call {func} @{name}({})", join(args.iter()))
        }
        InstData::CallIndirect { callee, sig, args } => write!(
            s,
            "call_indirect {callee}({}) as {}",
            join(args.iter()),
            sig.display(t)
        ),
        InstData::Jump { dest } => write!(s, "jump {}", call(dest)),
        InstData::Brif {
            cond,
            then_dest,
            else_dest,
        } => {
            write!(s, "brif {cond}, {}, {}", call(then_dest), call(else_dest))
        }
        InstData::Switch {
            value,
            default,
            cases,
        } => {
            let ty = body.values.get(*value).map(|v| v.ty);
            let cases: Vec<String> = cases
                .iter()
                .map(|(k, c)| {
                    let fits = ty
                        .and_then(|ty| t.int_bits(ty))
                        .is_some_and(|b| b >= 128 || k >> b == 0);
                    let k = match ty {
                        Some(ty) if fits => signed_imm(t, ty, *k),
                        _ => format!("{k:#x}"),
                    };
                    format!("{k}: {}", call(c))
                })
                .collect();
            write!(
                s,
                "switch {value}, {}, [{}]",
                call(default),
                cases.join(", ")
            )
        }
        InstData::Return { value: Some(v) } => write!(s, "return {v}"),
        InstData::Return { value: None } => write!(s, "return"),
        InstData::Unreachable => write!(s, "unreachable"),
        InstData::SpecialReg { reg } => write!(s, "sreg {}", reg.name()),
        InstData::Barrier => write!(s, "barrier"),
        InstData::Math { func, args } => {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            write!(s, "math {} {}", func.name(), args.join(", "))
        }
        InstData::IntFn { func, args } => {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            write!(s, "int {} {}", func.name(), args.join(", "))
        }
        InstData::Shuffle {
            mode,
            mask,
            value,
            lane,
            clamp,
        } => {
            let clamp = clamp.map(|c| format!(", {c}")).unwrap_or_default();
            write!(s, "shuffle {} {mask}, {value}, {lane}{clamp}", mode.name())
        }
        InstData::Vote { mode, mask, pred } => write!(s, "vote {} {mask}, {pred}", mode.name()),
        InstData::WarpReduce { op, mask, value } => {
            write!(s, "warp_reduce {} {mask}, {value}", op.name())
        }
        InstData::WarpMatch { mode, mask, value } => {
            write!(s, "warp_match {} {mask}, {value}", mode.name())
        }
        InstData::WarpSync { mask } => write!(s, "warp_sync {mask}"),
        InstData::ActiveMask => write!(s, "active_mask"),
        InstData::DynamicShared { align } => write!(s, "dynamic_shared align {align}"),
        InstData::AtomicLoad {
            ty,
            ptr,
            ordering,
            scope,
        } => write!(
            s,
            "atomic_load {} {} {}, {ptr}",
            ordering.name(),
            scope.name(),
            t.display(*ty)
        ),
        InstData::AtomicStore {
            ptr,
            value,
            ordering,
            scope,
        } => {
            write!(
                s,
                "atomic_store {} {} {value}, {ptr}",
                ordering.name(),
                scope.name()
            )
        }
        InstData::AtomicRmw {
            op,
            ptr,
            value,
            ordering,
            scope,
        } => write!(
            s,
            "atomic_rmw {} {} {} {ptr}, {value}",
            op.name(),
            ordering.name(),
            scope.name()
        ),
        InstData::AtomicCas {
            ptr,
            expected,
            new,
            ordering,
            scope,
        } => write!(
            s,
            "atomic_cas {} {} {ptr}, {expected}, {new}",
            ordering.name(),
            scope.name()
        ),
        InstData::Fence { ordering, scope } => {
            write!(s, "fence {} {}", ordering.name(), scope.name())
        }
        InstData::InlineAsm {
            template,
            constraints,
            args,
            ret,
            side_effects,
        } => {
            let _ = write!(
                s,
                "inline_asm {template:?}, {constraints:?}({})",
                join(args.iter())
            );
            if let Some(ret) = ret {
                let _ = write!(s, " -> {}", t.display(*ret));
            }
            if *side_effects {
                s.push_str(" sideeffect");
            }
            Ok(())
        }
    };
    s
}

fn join<T: fmt::Display>(items: impl Iterator<Item = T>) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

/// `imm` read as a signed integer of `ty`'s width (`true`/`false` for `i1`).
pub fn signed_imm(types: &Types, ty: crate::Ty, imm: u128) -> String {
    match types.int_bits(ty) {
        Some(1) => if imm & 1 == 1 { "true" } else { "false" }.to_owned(),
        Some(bits) if bits < 128 && bits > 0 => {
            let shift = 128 - u32::from(bits);
            (((imm << shift) as i128) >> shift).to_string()
        }
        _ => (imm as i128).to_string(),
    }
}

fn fmt_float(value: f64, bits: u64) -> String {
    if value.is_nan() {
        format!("nan(0x{bits:x})")
    } else {
        format!("{value:?}")
    }
}
