//! Module-level checks: symbols, the type table and globals.

use std::collections::HashMap;

use cranelift_entity::EntityRef;

use super::{Location, Rule, Sink};
use crate::entities::GlobalId;
use crate::function::FunctionKind;
use crate::global::{Linkage, RelocTarget, Relocation};
use crate::layout::POINTER_SIZE;
use crate::types::{AddressSpace, INT_WIDTHS, TyKind};

/// The largest alignment LLVM accepts.
pub(super) const MAX_ALIGN: u64 = 1 << 29;

/// Whether `s` is a valid NVVM identifier that PTX also accepts: libNVVM requires
/// `[a-zA-Z$_][a-zA-Z$_0-9]*`, and `ptxas` refuses `_` alone (measured).
pub fn is_valid_symbol(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    (first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(word)
        && s != "_"
        && s != "$"
}

pub(super) fn check_symbols(sink: &mut Sink<'_>) {
    let m = sink.module;
    let mut seen: HashMap<&str, Location> = HashMap::new();
    let names = m
        .globals
        .iter()
        .map(|(id, g)| (Location::Global(id), g.symbol.as_str()))
        .chain(
            m.functions
                .iter()
                .map(|(id, f)| (Location::Function(id), f.name.as_str())),
        );
    for (loc, name) in names {
        if !is_valid_symbol(name) {
            sink.report(
                loc,
                Rule::Symbol,
                format!("`{name}` is not a valid NVVM identifier ([A-Za-z_$][A-Za-z0-9_$]*, not `_` or `$` alone)"),
            );
        }
        if name == crate::module::DYNAMIC_SHARED_SYMBOL {
            sink.report(
                loc,
                Rule::Symbol,
                format!("symbol `{name}` is reserved for the block's dynamic shared memory"),
            );
        }
        if let Some(first) = seen.get(name) {
            let first = match first {
                Location::Global(g) => g.to_string(),
                Location::Function(f) => f.to_string(),
                _ => String::new(),
            };
            sink.report(
                loc,
                Rule::Symbol,
                format!("symbol `{name}` is already used by {first}"),
            );
        } else {
            seen.insert(name, loc);
        }
    }
}

pub(super) fn check_types(sink: &mut Sink<'_>) {
    let m = sink.module;
    let mut bad = Vec::new();
    for (ty, kind) in m.types.iter() {
        if let TyKind::Int(bits) = kind
            && !INT_WIDTHS.contains(bits)
        {
            bad.push((ty, *bits));
        }
    }
    for (ty, bits) in bad {
        sink.report(
            Location::Type(ty),
            Rule::Type,
            format!("i{bits} is not a supported integer width (1, 8, 16, 32, 64 or 128)"),
        );
    }
}

pub(super) fn check_globals(sink: &mut Sink<'_>) {
    let m = sink.module;
    for (id, g) in m.globals.iter() {
        let loc = Location::Global(id);
        if !matches!(
            g.space,
            AddressSpace::Global | AddressSpace::Shared | AddressSpace::Constant
        ) {
            sink.report(
                loc,
                Rule::GlobalSpace,
                format!(
                    "a global cannot live in address space {}; use global (1), shared (3) or constant (4)",
                    g.space
                ),
            );
        }
        if !g.align.is_power_of_two() || u64::from(g.align) > MAX_ALIGN {
            sink.report(
                loc,
                Rule::Alignment,
                format!("alignment {} is not a power of two up to 2^29", g.align),
            );
        }
        if g.space == AddressSpace::Shared {
            if g.linkage == Linkage::ExternallyInitialized {
                sink.report(
                    loc,
                    Rule::SharedGlobal,
                    "a shared global is externally initialized; the host cannot write shared memory",
                );
            }
            if g.init.is_some() {
                sink.report(
                    loc,
                    Rule::SharedGlobal,
                    "a shared global has an initializer; shared memory cannot be initialized",
                );
            }
            if !g.mutable {
                sink.report(
                    loc,
                    Rule::SharedGlobal,
                    "a shared global is read-only; shared memory is always writable",
                );
            }
        }
        let Some(init) = &g.init else { continue };
        let len = init.len();
        if len != g.size {
            sink.report(
                loc,
                Rule::InitializerSize,
                format!(
                    "the initializer has {len} bytes but the global is {} bytes",
                    g.size
                ),
            );
        }
        let relocs = init.sorted_relocations();
        for r in &relocs {
            if r.offset
                .checked_add(POINTER_SIZE)
                .is_none_or(|end| end > g.size)
            {
                sink.report(
                    loc,
                    Rule::RelocationBounds,
                    format!(
                        "the relocation slot at bytes {}..{} lies outside the global's {} bytes",
                        r.offset,
                        r.offset.saturating_add(POINTER_SIZE),
                        g.size
                    ),
                );
            }
            check_target(sink, id, r);
        }
        for pair in relocs.windows(2) {
            if pair[1].offset < pair[0].offset.saturating_add(POINTER_SIZE) {
                sink.report(
                    loc,
                    Rule::RelocationOverlap,
                    format!(
                        "the relocation slots at offsets {} and {} overlap",
                        pair[0].offset, pair[1].offset
                    ),
                );
            }
        }
    }
}

/// Relocations must not form a cycle: PTX initializes globals in dependency order
/// and libNVVM refuses a cycle ("Circular dependency found in global variable
/// set", measured at `-opt=0`).
pub(super) fn check_relocation_cycles(sink: &mut Sink<'_>) {
    let m = sink.module;
    let n = m.globals.len();
    let edges: Vec<Vec<usize>> = m
        .globals
        .values()
        .map(|g| {
            let mut targets: Vec<usize> = g
                .init
                .iter()
                .flat_map(|i| &i.relocations)
                .filter_map(|r| match r.target {
                    RelocTarget::Global(t) => Some(t.index()),
                    // A function's code is no global: no initialization order.
                    RelocTarget::Func(_) => None,
                })
                .collect();
            targets.sort_unstable();
            targets.dedup();
            targets
        })
        .collect();
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; n];
    let mut cycles = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&succ) = edges[node].get(*next) {
                *next += 1;
                match state[succ] {
                    0 => {
                        state[succ] = 1;
                        stack.push((succ, 0));
                    }
                    1 => {
                        let start = stack.iter().position(|&(g, _)| g == succ).unwrap_or(0);
                        let path: Vec<usize> = stack[start..].iter().map(|&(g, _)| g).collect();
                        cycles.push(path);
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    for path in cycles {
        let ids: Vec<GlobalId> = path.iter().map(|&i| GlobalId::new(i)).collect();
        let names: Vec<String> = ids
            .iter()
            .chain(ids.first())
            .map(|&g| format!("{g} @{}", m.globals[g].symbol))
            .collect();
        sink.report(
            Location::Global(ids[ids.len() - 1]),
            Rule::RelocationCycle,
            format!(
                "relocations form a cycle ({}); PTX cannot initialize globals that point to each other in a cycle",
                names.join(" -> ")
            ),
        );
    }
}

fn check_target(sink: &mut Sink<'_>, id: GlobalId, r: &Relocation) {
    let m = sink.module;
    let loc = Location::Global(id);
    let t = match r.target {
        RelocTarget::Global(t) => &m.globals[t],
        RelocTarget::Func(f) => {
            let func = &m.functions[f];
            if func.kind == FunctionKind::Kernel {
                sink.report(
                    loc,
                    Rule::RelocationTarget,
                    format!(
                        "the relocation at offset {} points to kernel @{}; kernels are launched, never called through a pointer",
                        r.offset, func.name
                    ),
                );
            }
            if r.addend != 0 {
                sink.report(
                    loc,
                    Rule::RelocationTarget,
                    format!(
                        "the relocation at offset {} points {} bytes into function @{}; a function pointer is its entry",
                        r.offset, r.addend, func.name
                    ),
                );
            }
            return;
        }
    };
    if !matches!(t.space, AddressSpace::Global | AddressSpace::Constant) {
        sink.report(
            loc,
            Rule::RelocationTarget,
            format!(
                "the relocation at offset {} points to {} @{} in address space {}; a stored pointer may only point to global or constant memory",
                r.offset, r.target, t.symbol, t.space
            ),
        );
    }
    if r.addend < 0 || r.addend as u64 > t.size {
        sink.report(
            loc,
            Rule::RelocationTarget,
            format!(
                "the relocation at offset {} points {} bytes into {} @{}, which is {} bytes long",
                r.offset, r.addend, r.target, t.symbol, t.size
            ),
        );
    }
}
