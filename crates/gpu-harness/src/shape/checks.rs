//! The checks that read one build: no helper alloca or `.local` depot,
//! reference constants in read-only `addrspace(1)` globals, and no constant
//! aggregate copied to the stack.

use std::collections::BTreeMap;

use device_ir::{AddressSpace, FunctionKind, GlobalId, InstData, Module, RelocTarget};
use mir_lower::GlobalOrigin;

use super::{ShapeCheck, ShapeFailure, ShapeInput};
use ptx_reader::{StateSpace, Type};

/// The prefix of a content-key symbol (const-alloc's `SYMBOL_PREFIX`).
pub const CONST_PREFIX: &str = "__const_";

/// The helpers of a module: device functions with a body, by name.
pub fn helpers(module: &Module) -> Vec<(device_ir::FuncId, &str)> {
    module
        .functions
        .iter()
        .filter(|(_, f)| f.kind == FunctionKind::Device && f.body.is_some())
        .map(|(id, f)| (id, f.name.as_str()))
        .collect()
}

/// No helper has an `Alloca` in its device IR, and in the `-opt=0` PTX every
/// helper is defined and declares no `.local` variable and makes no `.local`
/// access. A helper missing from the PTX is a failure: the check would
/// otherwise inspect nothing.
pub fn no_helper_alloca(input: &ShapeInput<'_>) -> Vec<ShapeFailure> {
    let fail = |m: String| ShapeFailure::new(ShapeCheck::NoHelperAlloca, m);
    let module = &input.lowered.module;
    let mut failures = Vec::new();
    for (id, name) in helpers(module) {
        let Some(body) = &module.functions[id].body else {
            continue;
        };
        for block in body.blocks.values() {
            for &inst in &block.insts {
                if matches!(body.insts[inst], InstData::Alloca { .. }) {
                    failures.push(fail(format!(
                        "helper {name} has an alloca in its device IR: {}",
                        device_ir::display::display_inst(module, body, inst)
                    )));
                }
            }
        }
    }
    let ptx = match ptx_reader::parse(input.ptx_o0) {
        Ok(p) => p,
        Err(e) => {
            failures.push(fail(format!("the -opt=0 PTX: {e}")));
            return failures;
        }
    };
    for (_, name) in helpers(module) {
        let Some(f) = ptx.definition(name) else {
            failures.push(fail(format!(
                "helper {name} is not defined in the -opt=0 PTX, so its .local depot cannot be checked"
            )));
            continue;
        };
        let locals: Vec<&str> = f.locals().map(|v| v.name.as_str()).collect();
        if !locals.is_empty() {
            failures.push(fail(format!(
                "helper {name} declares .local storage in the -opt=0 PTX: {}",
                locals.join(", ")
            )));
        }
        if let Some(access) = f.local_accesses().next() {
            failures.push(fail(format!(
                "helper {name} accesses .local memory in the -opt=0 PTX: `{access}`"
            )));
        }
    }
    failures
}

/// The smallest constant the `no-constant-stack-copy` check calls a table:
/// 64 bytes, eight 8-byte words. A smaller constant aggregate (a pair, a small
/// struct) may well be copied into a local that is then written; a table
/// that large is only ever read, and copying it is the cost the check exists
/// to catch.
pub const TABLE_BYTES: u64 = 64;

/// The smallest constant table (a constant global of at least
/// [`TABLE_BYTES`]) that `func` takes the address of, if any.
pub fn smallest_constant_table<'m>(
    module: &'m Module,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
    func: device_ir::FuncId,
) -> Option<(u64, &'m str)> {
    let body = module.functions[func].body.as_ref()?;
    body.insts
        .values()
        .filter_map(|i| match i {
            InstData::GlobalAddr { global, .. }
                if origins.get(global) == Some(&GlobalOrigin::Constant) =>
            {
                module.globals.get(*global)
            }
            _ => None,
        })
        .filter(|g| g.size >= TABLE_BYTES)
        .map(|g| (g.size, g.symbol.as_str()))
        .min()
}

/// What an address is derived from, through byte offsets, GEPs and casts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Root {
    /// A stack slot (the `Alloca`).
    Slot(device_ir::Inst),
    /// A constant table.
    Table,
}

/// What a value stored to a stack slot is known to be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// An immediate whose bits are all zero.
    Zero,
    /// Any other immediate, or a value loaded from a constant table.
    Constant,
}

/// The stores of constants into one stack slot.
#[derive(Clone, Copy, Default)]
struct SlotStores {
    /// How many stores write the slot an immediate or a table value.
    constant: u64,
    /// Whether any of them writes something other than zero.
    nonzero: bool,
}

impl SlotStores {
    /// Whether these stores, into a slot of `slot_bytes`, could be a copy of
    /// a `table_bytes` table: the slot holds it and the stores are enough to
    /// write it 8 bytes at a time. A slot that only ever receives zeros is
    /// being cleared (`[0u64; 25]`), not given a table.
    fn could_copy(self, slot_bytes: u64, table_bytes: u64) -> bool {
        self.nonzero && slot_bytes >= table_bytes && self.constant >= table_bytes / 8
    }
}

/// For each stack slot of `body`, the stores that write it a value that is an
/// immediate or was loaded from a constant table: the stores that copy a
/// constant into the slot, in whatever chunks.
fn constant_stores_per_slot(
    body: &device_ir::Body,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
    module: &Module,
) -> BTreeMap<device_ir::Inst, SlotStores> {
    let mut roots: BTreeMap<device_ir::Value, Root> = BTreeMap::new();
    let mut constant_values: BTreeMap<device_ir::Value, Stored> = BTreeMap::new();
    let mut stores: BTreeMap<device_ir::Inst, SlotStores> = BTreeMap::new();
    for block in body.blocks.values() {
        for &inst in &block.insts {
            let result = body.result(inst);
            match &body.insts[inst] {
                InstData::Alloca { .. } => {
                    if let Some(v) = result {
                        roots.insert(v, Root::Slot(inst));
                    }
                }
                InstData::GlobalAddr { global, .. }
                    if origins.get(global) == Some(&GlobalOrigin::Constant)
                        && module
                            .globals
                            .get(*global)
                            .is_some_and(|g| g.size >= TABLE_BYTES) =>
                {
                    if let Some(v) = result {
                        roots.insert(v, Root::Table);
                    }
                }
                InstData::ByteOffset { base, .. } | InstData::Gep { base, .. } => {
                    if let (Some(v), Some(r)) = (result, roots.get(base).copied()) {
                        roots.insert(v, r);
                    }
                }
                InstData::Cast { value, .. } => {
                    if let (Some(v), Some(r)) = (result, roots.get(value).copied()) {
                        roots.insert(v, r);
                    }
                }
                InstData::Iconst { imm, .. } => {
                    if let Some(v) = result {
                        let kind = if *imm == 0 {
                            Stored::Zero
                        } else {
                            Stored::Constant
                        };
                        constant_values.insert(v, kind);
                    }
                }
                InstData::Fconst { bits, .. } => {
                    if let Some(v) = result {
                        let kind = if *bits == 0 {
                            Stored::Zero
                        } else {
                            Stored::Constant
                        };
                        constant_values.insert(v, kind);
                    }
                }
                InstData::Load { ptr, .. } if roots.get(ptr) == Some(&Root::Table) => {
                    if let Some(v) = result {
                        constant_values.insert(v, Stored::Constant);
                    }
                }
                InstData::Store { ptr, value, .. } => {
                    if let Some(Root::Slot(slot)) = roots.get(ptr)
                        && let Some(&kind) = constant_values.get(value)
                    {
                        let entry = stores.entry(*slot).or_default();
                        entry.constant += 1;
                        entry.nonzero |= kind == Stored::Constant;
                    }
                }
                _ => {}
            }
        }
    }
    stores
}

/// The bytes of a PTX variable (an unsized dimension counts as zero).
fn ptx_var_bytes(v: &ptx_reader::Variable) -> u64 {
    v.dims
        .iter()
        .fold(Type::size(v.ty), |n, d| n.saturating_mul(d.unwrap_or(0)))
}

/// No function copies a constant table it reads to the stack.
///
/// A by-value `const` table (`const LUT: [f32; 256]`, indexed at run time)
/// must be read from its one read-only global; the old lowering copied it
/// into a stack array in every call, which costs a 1 KiB `.local` depot, a
/// copy per call and, in libNVVM, seconds of optimization. A copy of an
/// `n`-byte table takes at least `n / 8` stores (8 bytes is the widest
/// scalar), so, for a function whose smallest table read is `n` bytes
/// ([`TABLE_BYTES`] at least):
///
/// - in the device IR, no alloca of `n` bytes or more receives `n / 8` or
///   more stores of immediates or of values loaded from a table, at least
///   one of them not zero (a slot given only zeros is cleared, not copied
///   into; an all-zero table copied to the stack is the one case this misses);
/// - in the `-opt=0` PTX, where every function survives, the function is
///   defined and has no `.local` variable of `n` bytes or more together with
///   `n / 8` or more stores of constants (non-zero immediates, values loaded
///   from a constant table: [`super::ptx_stores`]) to `.local` or generic
///   addresses (the stack slot is written through its generic address there);
/// - in the `-opt=3` PTX, where helpers are inlined into their callers, no
///   defined function has that, for the smallest table any function reads.
pub fn no_constant_stack_copy(input: &ShapeInput<'_>) -> Vec<ShapeFailure> {
    let fail = |m: String| ShapeFailure::new(ShapeCheck::NoConstantStackCopy, m);
    let module = &input.lowered.module;
    let origins = &input.lowered.origins;
    let mut failures = Vec::new();
    let mut readers = Vec::new();
    for (id, f) in module.functions.iter() {
        let Some(body) = &f.body else {
            continue;
        };
        let Some((size, symbol)) = smallest_constant_table(module, origins, id) else {
            continue;
        };
        readers.push((f.name.as_str(), size, symbol));
        for (slot, slot_stores) in constant_stores_per_slot(body, origins, module) {
            let InstData::Alloca { ty, .. } = &body.insts[slot] else {
                continue;
            };
            let bytes = device_ir::layout::size_of(&module.types, *ty);
            if slot_stores.could_copy(bytes, size) {
                let stores = slot_stores.constant;
                failures.push(fail(format!(
                    "{} reads the {size}-byte constant {symbol} and copies constants into a {bytes}-byte alloca with {stores} stores in its device IR: {}",
                    f.name,
                    device_ir::display::display_inst(module, body, slot)
                )));
            }
        }
    }
    for (level, text) in [("-opt=0", input.ptx_o0), ("-opt=3", input.ptx_o3)] {
        let ptx = match ptx_reader::parse(text) {
            Ok(p) => p,
            Err(e) => {
                failures.push(fail(format!("the {level} PTX: {e}")));
                continue;
            }
        };
        let checked: Vec<(&str, u64, &str)> = if level == "-opt=0" {
            readers.clone()
        } else {
            let Some(&(_, size, symbol)) = readers.iter().min_by_key(|r| r.1) else {
                continue;
            };
            ptx.functions
                .iter()
                .filter(|f| f.defined())
                .map(|f| (f.name.as_str(), size, symbol))
                .collect()
        };
        for (name, size, symbol) in checked {
            let Some(f) = ptx.definition(name) else {
                failures.push(fail(format!(
                    "{name} is not defined in the {level} PTX, so its .local storage cannot be checked"
                )));
                continue;
            };
            let local_stores = super::ptx_stores::constant_stores_to_stack(f);
            if local_stores < size / 8 {
                continue;
            }
            for v in f.locals() {
                let bytes = ptx_var_bytes(v);
                if bytes >= size {
                    failures.push(fail(format!(
                        "{name} declares {bytes} bytes of .local storage ({}) and makes {local_stores} stores of constants to .local or generic addresses in the {level} PTX, enough to copy the {size}-byte constant {symbol}",
                        v.name
                    )));
                }
            }
        }
    }
    failures
}

/// The content of a global, with relocation targets named by symbol so that
/// two builds (or two globals) compare by content, not by id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Content {
    /// The size in bytes.
    pub size: u64,
    /// The alignment.
    pub align: u32,
    /// The byte image, `None` for undefined bytes; `None` overall without an
    /// initializer.
    pub image: Option<Vec<Option<u8>>>,
    /// The relocations as (offset, target symbol, addend), sorted.
    pub relocations: Vec<(u64, String, i64)>,
}

/// The content of global `id`.
pub fn content(module: &Module, id: GlobalId) -> Content {
    let g = &module.globals[id];
    let symbol = |t: RelocTarget| match t {
        RelocTarget::Global(t) => module
            .globals
            .get(t)
            .map_or_else(|| format!("<missing {t}>"), |g| g.symbol.clone()),
        RelocTarget::Func(f) => module
            .functions
            .get(f)
            .map_or_else(|| format!("<missing {f}>"), |f| format!("fn {}", f.name)),
    };
    Content {
        size: g.size,
        align: g.align,
        image: g.init.as_ref().map(|i| {
            let mut image = i.image();
            // The bytes under a slot are ignored; the relocation says what is there.
            for r in &i.relocations {
                for b in r.range() {
                    if let Some(slot) = image.get_mut(b as usize) {
                        *slot = None;
                    }
                }
            }
            image
        }),
        relocations: g
            .init
            .as_ref()
            .map(|i| {
                i.sorted_relocations()
                    .iter()
                    .map(|r| (r.offset, symbol(r.target), r.addend))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Whether `symbol` is a content key: the prefix and lowercase hex digits.
pub fn is_content_key(symbol: &str) -> bool {
    symbol.strip_prefix(CONST_PREFIX).is_some_and(|hex| {
        !hex.is_empty()
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Every global whose origin is `Constant` is immutable, in `addrspace(1)`,
/// initialized, named by a content key, distinct in content from every other
/// constant global, defined `addrspace(1) constant` in the NVVM IR, and
/// declared `.global` in the `-opt=0` PTX.
pub fn constants_read_only(input: &ShapeInput<'_>) -> Vec<ShapeFailure> {
    let fail = |m: String| ShapeFailure::new(ShapeCheck::ConstantsReadOnly, m);
    let module = &input.lowered.module;
    let mut failures = Vec::new();
    let constants = constant_globals(module, &input.lowered.origins);
    let mut by_content: BTreeMap<Content, &str> = BTreeMap::new();
    for &id in &constants {
        let g = &module.globals[id];
        let s = &g.symbol;
        if g.mutable {
            failures.push(fail(format!("constant global {s} ({id}) is mutable")));
        }
        if g.space != AddressSpace::Global {
            failures.push(fail(format!(
                "constant global {s} ({id}) is in addrspace({}), not addrspace(1)",
                g.space.number()
            )));
        }
        if g.init.is_none() {
            failures.push(fail(format!(
                "constant global {s} ({id}) has no initializer"
            )));
        }
        if !is_content_key(s) {
            failures.push(fail(format!(
                "constant global {id} is named {s}, not a content key ({CONST_PREFIX}<hex>)"
            )));
        }
        let c = content(module, id);
        if let Some(first) = by_content.insert(c, s) {
            failures.push(fail(format!(
                "constant globals {first} and {s} hold the same allocation: one global per allocation"
            )));
        }
    }
    let ir_globals = ir_global_definitions(input.nvvm_ir);
    for &id in &constants {
        let s = &module.globals[id].symbol;
        match ir_globals.get(s.as_str()) {
            None => failures.push(fail(format!("constant global {s} is not defined in the NVVM IR"))),
            Some(def) if !(def.space == 1 && def.constant) => failures.push(fail(format!(
                "constant global {s} is defined as `addrspace({}) {}` in the NVVM IR, not `addrspace(1) constant`",
                def.space,
                if def.constant { "constant" } else { "global" }
            ))),
            Some(_) => {}
        }
    }
    match ptx_reader::parse(input.ptx_o0) {
        Err(e) => failures.push(fail(format!("the -opt=0 PTX: {e}"))),
        Ok(p) => {
            for &id in &constants {
                let s = &module.globals[id].symbol;
                match p.global(s) {
                    None => failures.push(fail(format!(
                        "constant global {s} is not declared in the -opt=0 PTX"
                    ))),
                    Some(v) if v.space != StateSpace::Global => failures.push(fail(format!(
                        "constant global {s} is declared {} in the -opt=0 PTX, not .global",
                        v.space.directive()
                    ))),
                    Some(_) => {}
                }
            }
        }
    }
    failures
}

/// The globals whose origin is `Constant`, in id order.
pub fn constant_globals(
    module: &Module,
    origins: &BTreeMap<GlobalId, GlobalOrigin>,
) -> Vec<GlobalId> {
    origins
        .iter()
        .filter(|(id, o)| **o == GlobalOrigin::Constant && module.globals.get(**id).is_some())
        .map(|(id, _)| *id)
        .collect()
}

/// A global definition line of NVVM IR, as far as the check needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct IrGlobal {
    space: u32,
    constant: bool,
}

/// Reads `@sym = [linkage] [addrspace(N)] (constant|global) ...` definitions.
fn ir_global_definitions(ir: &str) -> BTreeMap<&str, IrGlobal> {
    let mut out = BTreeMap::new();
    for line in ir.lines() {
        let Some(rest) = line.strip_prefix('@') else {
            continue;
        };
        let Some((name, def)) = rest.split_once(" = ") else {
            continue;
        };
        let mut space = 0;
        let mut constant = None;
        for token in def.split_whitespace() {
            if let Some(n) = token
                .strip_prefix("addrspace(")
                .and_then(|t| t.strip_suffix(')'))
            {
                space = n.parse().unwrap_or(u32::MAX);
            } else if token == "constant" || token == "global" {
                constant = Some(token == "constant");
                break;
            }
        }
        if let Some(constant) = constant {
            out.insert(name.trim_matches('"'), IrGlobal { space, constant });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn content_keys() {
        assert!(is_content_key("__const_0a9f"));
        assert!(!is_content_key("__const_"));
        assert!(!is_content_key("__const_mut_0a"));
        assert!(!is_content_key("kernel__DEV"));
    }

    /// A helper that reads a 192-byte constant table and stores 25 `i64`
    /// constants (`zeros` of them zero) into a 200-byte stack slot.
    fn table_reader_storing(zeros: usize) -> (Module, BTreeMap<GlobalId, GlobalOrigin>) {
        use device_ir::{FunctionBuilder, GlobalData, Linkage, Signature};
        let mut m = Module::new();
        let table = m.add_global(GlobalData {
            symbol: "__const_table".into(),
            space: AddressSpace::Global,
            mutable: false,
            linkage: Linkage::Internal,
            align: 8,
            size: 192,
            init: None,
        });
        let origins = BTreeMap::from([(table, GlobalOrigin::Constant)]);
        let i64t = m.types.i64();
        let table_ty = m.types.array(i64t, 24);
        let slot_ty = m.types.array(i64t, 25);
        let f = m.declare_function(
            "helper",
            FunctionKind::Device,
            Linkage::Internal,
            Signature::new(&[], Some(i64t)),
        );
        let mut b = FunctionBuilder::new(&mut m, f);
        let t = b.global_addr(table, table_ty);
        let first = b.load(i64t, t);
        let slot = b.alloca(slot_ty);
        for i in 0..25 {
            let offset = b.iconst(i64t, 8 * i as i128);
            let at = b.byte_offset(slot, offset);
            let value = b.iconst(i64t, if i < zeros { 0 } else { 0x5a });
            b.store(value, at);
        }
        b.ret(Some(first));
        (m, origins)
    }

    #[test]
    fn a_slot_given_only_zeros_is_cleared_not_a_table_copy() {
        let (m, origins) = table_reader_storing(25);
        let f = m.function_by_name("helper").unwrap();
        let body = m.functions[f].body.as_ref().unwrap();
        let stores = constant_stores_per_slot(body, &origins, &m);
        let [(_, s)] = stores.into_iter().collect::<Vec<_>>()[..] else {
            panic!("one slot expected");
        };
        assert_eq!((s.constant, s.nonzero), (25, false));
        assert!(!s.could_copy(200, 192));

        let (m, origins) = table_reader_storing(24);
        let body = m.functions[f].body.as_ref().unwrap();
        let stores = constant_stores_per_slot(body, &origins, &m);
        let [(_, s)] = stores.into_iter().collect::<Vec<_>>()[..] else {
            panic!("one slot expected");
        };
        assert_eq!((s.constant, s.nonzero), (25, true));
        assert!(s.could_copy(200, 192));
        assert!(!s.could_copy(184, 192), "the slot cannot hold the table");
        assert!(!s.could_copy(200, 208), "too few stores for the table");
    }

    #[test]
    fn reads_ir_global_definitions() {
        let ir = "@a = internal addrspace(1) constant <{ [4 x i8] }> zeroinitializer, align 4\n\
                  @b = internal addrspace(3) global [32 x i8] undef, align 4\n\
                  define void @k() {\n";
        let g = ir_global_definitions(ir);
        assert_eq!(
            g["a"],
            IrGlobal {
                space: 1,
                constant: true
            }
        );
        assert_eq!(
            g["b"],
            IrGlobal {
                space: 3,
                constant: false
            }
        );
        assert_eq!(g.len(), 2);
    }
}
