//! Mutants: deliberate rewrites of a lowered module that bring back a bug the
//! oracle must catch. They exist so that tests can prove each check can fail.
//!
//! - [`alloca_constants`]: the old lowering of reference constants, a stack
//!   slot in every function that names one. `promoted_ref_return` must then
//!   fail on the virtual device with a stale-frame error naming a helper.
//! - [`helper_alloca`]: a stack slot in a helper (fails `no-helper-alloca`).
//! - [`constant_mutable`] and [`duplicate_constant`]: a writable constant, and
//!   one allocation split over two globals (fail `constants-read-only`).
//! - [`rename_constant`]: a constant whose symbol is not its key in one build
//!   (fails `stable-keys` when applied to the perturbed build).
//!
//! Every mutant leaves a module that `device_ir::verify` accepts.

use std::collections::{BTreeMap, BTreeSet};

use device_ir::{
    AddressSpace, CastOp, FuncId, FunctionBuilder, FunctionKind, GlobalId, Inst, InstData,
    MemFlags, Module, RelocTarget, Value,
};
use mir_lower::GlobalOrigin;

fn is_constant(origins: &BTreeMap<GlobalId, GlobalOrigin>, g: GlobalId) -> bool {
    origins.get(&g) == Some(&GlobalOrigin::Constant)
}

/// The `addrspacecast`s to generic of a constant global's address in `func`:
/// (the cast, the global, the cast's result type).
fn constant_casts(
    module: &Module,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
    func: FuncId,
) -> Vec<(Inst, GlobalId, device_ir::Ty)> {
    let Some(body) = &module.functions[func].body else {
        return Vec::new();
    };
    let mut addrs: BTreeMap<Value, GlobalId> = BTreeMap::new();
    for (inst, data) in body.insts.iter() {
        if let InstData::GlobalAddr { global, .. } = data
            && is_constant(origins, *global)
            && let Some(v) = body.result(inst)
        {
            addrs.insert(v, *global);
        }
    }
    let mut out = Vec::new();
    for block in body.blocks.values() {
        for &inst in &block.insts {
            if let InstData::Cast {
                op: CastOp::AddrSpaceCast,
                value,
                ty,
            } = &body.insts[inst]
                && let Some(&g) = addrs.get(value)
            {
                out.push((inst, g, *ty));
            }
        }
    }
    out
}

/// Moves the instructions appended to `func`'s entry block after its first
/// `from` instructions to the front of the block.
fn hoist_appended(module: &mut Module, func: FuncId, from: usize) {
    if let Some(body) = &mut module.functions[func].body {
        let entry = body.entry();
        let insts = &mut body.blocks[entry].insts;
        let mut appended = insts.split_off(from);
        appended.append(insts);
        *insts = appended;
    }
}

fn entry_len(module: &Module, func: FuncId) -> usize {
    module.functions[func]
        .body
        .as_ref()
        .map_or(0, |b| b.blocks[b.entry()].insts.len())
}

/// Builds, at the end of `func`'s entry block, a stack slot holding a copy of
/// global `g`'s initializer: its defined bytes as `i8` stores, its relocation
/// slots as the targets' generic addresses. Returns the slot (`[N x i8]*`).
fn build_slot(b: &mut FunctionBuilder<'_>, g: GlobalId) -> Value {
    let data = b.module().globals[g].clone();
    let i8t = b.types().i8();
    let i64t = b.types().i64();
    let array = b.types().array(i8t, data.size);
    let slot = b.alloca_aligned(array, data.align);
    let bytes = b.ptr_bitcast(slot, i8t);
    let Some(init) = &data.init else {
        return slot;
    };
    let covered: BTreeSet<u64> = init.relocations.iter().flat_map(|r| r.range()).collect();
    for (offset, byte) in init.image().into_iter().enumerate() {
        let offset = offset as u64;
        let Some(byte) = byte else { continue };
        if covered.contains(&offset) {
            continue;
        }
        let v = b.iconst(i8t, i128::from(byte));
        let off = b.iconst(i64t, i128::from(offset));
        let p = b.byte_offset(bytes, off);
        b.store_with(v, p, 1, MemFlags::empty());
    }
    for r in init.sorted_relocations() {
        let target = match r.target {
            RelocTarget::Global(g) => {
                let target = b.global_addr(g, i8t);
                b.addrspacecast(target, AddressSpace::Generic)
            }
            RelocTarget::Func(f) => b.func_addr(f, i8t),
        };
        let addend = b.iconst(i64t, i128::from(r.addend));
        let target = b.byte_offset(target, addend);
        let off = b.iconst(i64t, i128::from(r.offset));
        let at = b.byte_offset(bytes, off);
        let i8p = b.types().ptr(i8t, AddressSpace::Generic);
        let at = b.ptr_bitcast(at, i8p);
        b.store_with(target, at, 1, MemFlags::empty());
    }
    slot
}

/// The old lowering: in every function that takes the address of a `Constant`
/// global (and, as the lowering does, casts it to generic), a stack slot at the
/// start of the entry block holds a copy of the global, and every such cast is
/// replaced by the slot's address. Returns the number of uses rewritten.
pub fn alloca_constants(module: &mut Module, origins: &BTreeMap<GlobalId, GlobalOrigin>) -> usize {
    let funcs: Vec<FuncId> = module.functions.keys().collect();
    let mut rewritten = 0;
    for func in funcs {
        let casts = constant_casts(module, origins, func);
        if casts.is_empty() {
            continue;
        }
        let globals: BTreeSet<GlobalId> = casts.iter().map(|(_, g, _)| *g).collect();
        let before = entry_len(module, func);
        let mut slots = BTreeMap::new();
        {
            let mut b = FunctionBuilder::new(module, func);
            for g in globals {
                slots.insert(g, build_slot(&mut b, g));
            }
        }
        hoist_appended(module, func, before);
        if let Some(body) = &mut module.functions[func].body {
            for (inst, g, ty) in casts {
                body.insts[inst] = InstData::Cast {
                    op: CastOp::Bitcast,
                    value: slots[&g],
                    ty,
                };
                rewritten += 1;
            }
        }
    }
    rewritten
}

/// The first helper (device function with a body), in function order.
fn first_helper(module: &Module) -> Option<FuncId> {
    module
        .functions
        .iter()
        .find(|(_, f)| f.kind == FunctionKind::Device && f.body.is_some())
        .map(|(id, _)| id)
}

/// Gives the first helper a stack slot that it writes (an `i32` alloca and a
/// volatile store at the start of its entry block). Returns the helper's name.
pub fn helper_alloca(module: &mut Module) -> Option<String> {
    let func = first_helper(module)?;
    let before = entry_len(module, func);
    {
        let mut b = FunctionBuilder::new(module, func);
        let i32t = b.types().i32();
        let slot = b.alloca(i32t);
        let v = b.iconst(i32t, 0x5eed);
        b.store_with(v, slot, 4, MemFlags::VOLATILE);
    }
    hoist_appended(module, func, before);
    Some(module.functions[func].name.clone())
}

/// The first `Constant` global whose address a helper takes, with that helper.
fn helper_constant(
    module: &Module,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
) -> Option<(FuncId, Inst, GlobalId)> {
    module
        .functions
        .iter()
        .filter(|(_, f)| f.kind == FunctionKind::Device)
        .find_map(|(id, f)| {
            let body = f.body.as_ref()?;
            body.insts.iter().find_map(|(inst, data)| match data {
                InstData::GlobalAddr { global, .. } if is_constant(origins, *global) => {
                    Some((id, inst, *global))
                }
                _ => None,
            })
        })
}

/// Makes the first constant global a helper refers to writable. Returns it.
pub fn constant_mutable(
    module: &mut Module,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
) -> Option<GlobalId> {
    let (_, _, g) = helper_constant(module, origins)?;
    module.globals[g].mutable = true;
    Some(g)
}

/// Splits one allocation over two globals: a copy of the first constant global
/// a helper refers to, under another content-key-shaped symbol, which that
/// helper's reference now names. Records the copy's origin as `Constant`.
/// Returns (original, copy).
pub fn duplicate_constant(
    module: &mut Module,
    origins: &mut BTreeMap<GlobalId, GlobalOrigin>,
) -> Option<(GlobalId, GlobalId)> {
    let (func, inst, g) = helper_constant(module, origins)?;
    let mut copy = module.globals[g].clone();
    copy.symbol = format!("__const_{}", "d".repeat(64));
    let dup = module.add_global(copy);
    origins.insert(dup, GlobalOrigin::Constant);
    if let Some(body) = &mut module.functions[func].body
        && let InstData::GlobalAddr { global, .. } = &mut body.insts[inst]
    {
        *global = dup;
    }
    Some((g, dup))
}

/// Renames the first constant global a helper refers to, as a build whose keys
/// depended on declaration order would. Returns (old symbol, new symbol).
pub fn rename_constant(
    module: &mut Module,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
) -> Option<(String, String)> {
    let (_, _, g) = helper_constant(module, origins)?;
    let old = module.globals[g].symbol.clone();
    let new = format!("__const_{}", "e".repeat(64));
    module.globals[g].symbol = new.clone();
    Some((old, new))
}
