//! Device globals for constants and statics, interned by const-alloc.
//!
//! Every evaluated allocation that the code points at becomes exactly one
//! module-level global, named by its content key (const-alloc), in read-only
//! `addrspace(1)`. Interning happens per request, but a key depends only on
//! content, so two requests for equal contents meet at one symbol, and so at
//! one device global: every reference into one rustc allocation shares it.
//! Statics keep a symbol made from their path; `SharedArray` and `Barrier`
//! statics are uninitialized `addrspace(3)` globals.

use std::borrow::Cow;
use std::collections::BTreeMap;

use const_alloc::{
    AllocGraph, AllocRef, Allocation, Chunk, GlobalKind, InitMask, Interned, Interner, Mutability,
    Relocation as CRelocation, Root, SimpleGraph, SlotTarget, Target as CTarget,
};
use device_ir::layout::POINTER_SIZE;
use device_ir::{
    AddressSpace, FunctionKind, GlobalData, GlobalId, Initializer, Linkage, Module, RelocTarget,
    Relocation, Span,
};
use mir_import::eval::layout::Layouts;
use mir_import::eval::{EvalAlloc, Evaluation, Memory, Target};
use mir_import::model::{
    BodyKind, Crate, Mutability as MirMut, Ty, vtable_bytes, vtable_slot_offset,
};

use crate::diag::{Diagnostic, Rule};
use crate::refusals;

/// An NVVM identifier for a static's path: `kernel::DEV` is `kernel__DEV`.
/// Two statics never share one: where the readable form could also be
/// another path's (a segment holding `__`, starting or ending with `_`, or
/// a character that is no identifier's, as `kernel::a__B` would meet
/// `kernel::a::B`), the symbol ends in `$` and 16 hex digits of the path's
/// SHA-256; `$` is in no Rust identifier, so no readable symbol ends so.
pub fn static_symbol(path: &str) -> String {
    let readable = readable_symbol(path);
    let plain = path.split("::").all(|seg| {
        !seg.is_empty()
            && !seg.contains("__")
            && !seg.starts_with('_')
            && !seg.ends_with('_')
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if plain {
        return readable;
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(path.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{readable}${hex}")
}

/// The readable NVVM identifier for a path: `::` as `__`, any other
/// character that is no identifier's as `_`.
pub(crate) fn readable_symbol(path: &str) -> String {
    path.replace("::", "__")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The evaluator's memory seen as a const-alloc graph.
struct MemGraph<'a> {
    mem: &'a Memory,
    /// Resolves a function's printed path to the name const-alloc keys it
    /// by ([`function_symbol`]).
    krate: &'a Crate,
}

impl AllocGraph for MemGraph<'_> {
    type Id = EvalAlloc;

    fn get(&self, id: EvalAlloc) -> Option<AllocRef<'_, EvalAlloc>> {
        let a = self.mem.allocs.get(id)?;
        let relocations = a
            .relocs
            .iter()
            .map(|(o, r)| {
                let target = match &r.target {
                    Target::Alloc(t) => CTarget::Alloc(*t),
                    Target::Static(p) => CTarget::Static(static_symbol(p)),
                    Target::Function(p) => CTarget::Function(function_symbol(self.krate, p)),
                };
                CRelocation::new(*o, POINTER_SIZE, target, r.addend as i64)
            })
            .collect::<Vec<_>>();
        Some(AllocRef {
            bytes: &a.bytes,
            init: Cow::Owned(InitMask::from_bools(a.init.iter().copied())),
            align: a.align,
            mutability: if a.mutable {
                Mutability::Mutable
            } else {
                Mutability::Immutable
            },
            relocations: Cow::Owned(relocations),
        })
    }
}

/// The name a function pointer target is keyed by: the function's stable
/// name (`kernel::Inc_as_Step::step`), which, unlike its def path
/// (`kernel::<impl at kernel.rs:29:1: 29:19>::step`), does not move when
/// code above it does, so neither does the content key of a table holding
/// it.
pub(crate) fn function_symbol(krate: &Crate, printed: &mir_import::model::Path) -> String {
    krate.stable_name(&krate.resolve_callee(printed))
}

/// The device function a `fn` pointer stored in a constant points to, by
/// [`function_symbol`]: one of the functions being lowered, no kernel, and
/// its entry (`addend` 0).
pub(crate) fn fn_pointer_target(
    m: &Module,
    cx: &Ctx,
    symbol: &str,
    addend: i64,
    item: &str,
) -> Result<device_ir::FuncId, Diagnostic> {
    let refuse = |why: String| Err(Diagnostic::new(Rule::Unsupported, item, why));
    let found = cx
        .fns
        .iter()
        .find(|(def, _)| cx.krate.stable_name(def) == symbol);
    let Some((_, &(f, _))) = found else {
        return refuse(format!(
            "a constant holds a pointer to `{symbol}`, which is not a device function of this kernel"
        ));
    };
    if m.functions[f].kind == FunctionKind::Kernel {
        return refuse(format!(
            "a constant holds the address of kernel `{symbol}`: kernels are launched, never called"
        ));
    }
    if addend != 0 {
        return refuse(format!(
            "a constant holds a pointer {addend} bytes into function `{symbol}`, not to its entry"
        ));
    }
    Ok(f)
}

/// What a vtable holds: rustc's header (the drop function, the size and
/// the alignment of the concrete type), then the address of each function
/// in `methods` (by [`function_symbol`]), then the address of the same
/// concrete type's vtable for each trait its objects are upcast to, in
/// slot order. The drop slot is null: the device has no owned trait
/// objects (`Box<dyn Trait>`), so nothing drops through a vtable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VtableSpec {
    /// The concrete type's size.
    pub size: u64,
    /// The concrete type's alignment.
    pub align: u64,
    /// The methods' functions, by symbol.
    pub methods: Vec<String>,
    /// The vtables of the upcasts.
    pub upcasts: Vec<VtableSpec>,
}

impl VtableSpec {
    /// Adds this vtable as allocation `*next` of `graph`, and the vtables
    /// it points to after it.
    fn add_to(&self, graph: &mut SimpleGraph<u32>, next: &mut u32) {
        let id = *next;
        *next += 1;
        let slots = self.methods.len() + self.upcasts.len();
        let bytes = vtable_bytes(self.size, self.align, slots);
        let mut vtable = Allocation::new(bytes, POINTER_SIZE);
        for (k, symbol) in self.methods.iter().enumerate() {
            vtable = vtable.with_pointer(
                vtable_slot_offset(k),
                POINTER_SIZE,
                CTarget::Function(symbol.clone()),
                0,
            );
        }
        for (k, up) in self.upcasts.iter().enumerate() {
            let target = *next;
            up.add_to(graph, next);
            vtable = vtable.with_pointer(
                vtable_slot_offset(self.methods.len() + k),
                POINTER_SIZE,
                CTarget::Alloc(target),
                0,
            );
        }
        graph.insert(id, vtable);
    }
}

/// What the lowering knows about each global it made, for shape checks.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum GlobalOrigin {
    /// Anonymous constant memory (a promoted, a const's allocation).
    Constant,
    /// Mutable anonymous memory owned by a static.
    MutableAnonymous,
    /// A device static, by path.
    Static(String),
    /// A `SharedArray` or `Barrier` static, by path.
    Shared(String),
    /// A `ConstantMemory` static, by path: constant memory the host writes
    /// between launches.
    HostConstant(String),
}

/// The globals made so far.
#[derive(Default)]
pub struct Globals {
    by_symbol: BTreeMap<String, GlobalId>,
    static_paths: BTreeMap<String, String>,
    /// Where each global came from.
    pub origins: BTreeMap<GlobalId, GlobalOrigin>,
    in_progress: Vec<String>,
}

/// Context the global manager reads.
pub struct Ctx<'a> {
    /// The crate.
    pub krate: &'a Crate,
    /// Layouts.
    pub layouts: &'a Layouts<'a>,
    /// The device function of every function being lowered, by def path:
    /// the targets of `fn` pointers stored in constants.
    pub fns: &'a BTreeMap<String, (device_ir::FuncId, crate::abi::FnAbi)>,
}

impl Globals {
    /// The global holding evaluated allocation `alloc` (anonymous memory).
    /// With `view` (an offset and a layout), the view is first validated
    /// against the global's bytes through const-alloc's typed-view rules, on
    /// the same interning.
    pub fn alloc_global(
        &mut self,
        m: &mut Module,
        cx: &Ctx,
        ev: &Evaluation,
        alloc: EvalAlloc,
        item: &str,
        view: Option<(u64, &const_alloc::SimpleLayout)>,
    ) -> Result<GlobalId, Diagnostic> {
        let graph = MemGraph {
            mem: &ev.memory,
            krate: cx.krate,
        };
        let interned = Interner::new(POINTER_SIZE)
            .intern(&graph, [Root::Anonymous(alloc)])
            .map_err(|e| Diagnostic::new(Rule::Interning, item, e.to_string()))?;
        let g = interned
            .global_of(alloc)
            .ok_or_else(|| Diagnostic::new(Rule::Interning, item, "allocation not interned"))?;
        if let Some((offset, layout)) = view {
            interned.view(g, offset, layout).map_err(|e| {
                Diagnostic::new(
                    Rule::ViewMismatch,
                    item,
                    format!(
                        "typed view at offset {offset} does not match the constant's bytes: {e}"
                    ),
                )
            })?;
        }
        self.materialize(m, cx, ev, &interned, item)?;
        let symbol = interned.global(g).symbol();
        self.by_symbol
            .get(symbol)
            .copied()
            .ok_or_else(|| Diagnostic::new(Rule::Interning, item, "global not materialized"))
    }

    /// The global of the static at `path`.
    pub fn static_global(
        &mut self,
        m: &mut Module,
        cx: &Ctx,
        ev: &Evaluation,
        path: &str,
    ) -> Result<GlobalId, Diagnostic> {
        let symbol = static_symbol(path);
        if let Some(g) = self.by_symbol.get(&symbol) {
            return Ok(*g);
        }
        self.static_paths.insert(symbol.clone(), path.to_string());
        let body_id = cx.krate.item_body(path).ok_or_else(|| {
            Diagnostic::new(
                Rule::Unsupported,
                path,
                "rustc printed no initializer for this static",
            )
        })?;
        let body = &cx.krate.bodies[body_id];
        if refusals::is_shared_type(&body.return_ty) {
            let size = cx
                .layouts
                .of(&body.return_ty)
                .map(|l| (l.size, l.align))
                .map_err(|e| {
                    Diagnostic::new(Rule::Unsupported, path, format!("shared static: {e}"))
                })?;
            let g = m.add_global(GlobalData {
                symbol: symbol.clone(),
                space: AddressSpace::Shared,
                mutable: true,
                linkage: Linkage::Internal,
                align: size.1 as u32,
                size: size.0,
                init: None,
            });
            self.by_symbol.insert(symbol, g);
            self.origins
                .insert(g, GlobalOrigin::Shared(path.to_string()));
            return Ok(g);
        }
        if refusals::is_constant_memory_type(&body.return_ty) {
            let g = host_constant(m, cx, ev, path, symbol.clone(), &body.return_ty)?;
            self.by_symbol.insert(symbol, g);
            self.origins
                .insert(g, GlobalOrigin::HostConstant(path.to_string()));
            return Ok(g);
        }
        if self.in_progress.contains(&symbol) {
            return Err(Diagnostic::new(
                Rule::Unsupported,
                path,
                "static refers to itself",
            ));
        }
        let value = ev.value(path).ok_or_else(|| {
            let why = ev
                .items
                .get(path)
                .and_then(|i| i.value.as_ref().err())
                .map(|e| e.to_string());
            Diagnostic::new(
                Rule::ConstEval,
                path,
                why.unwrap_or_else(|| "the static was not evaluated".into()),
            )
        })?;
        refusals::check_initializer(cx.krate, body, &ev.memory, value, path)?;
        let mutable = matches!(body.kind, BodyKind::Static(MirMut::Mut))
            || refusals::interior_mutable(&body.return_ty);
        let graph = MemGraph {
            mem: &ev.memory,
            krate: cx.krate,
        };
        let interned = Interner::new(POINTER_SIZE)
            .intern(
                &graph,
                [Root::Static {
                    symbol: symbol.clone(),
                    alloc: value,
                }],
            )
            .map_err(|e| Diagnostic::new(Rule::Interning, path, e.to_string()))?;
        self.in_progress.push(symbol.clone());
        let r = self.materialize(m, cx, ev, &interned, path);
        self.in_progress.pop();
        r?;
        let g = *self
            .by_symbol
            .get(&symbol)
            .ok_or_else(|| Diagnostic::new(Rule::Interning, path, "static not materialized"))?;
        m.globals[g].mutable = mutable;
        self.origins
            .insert(g, GlobalOrigin::Static(path.to_string()));
        Ok(g)
    }

    /// The vtable of a trait object ([`VtableSpec`]): a read-only global
    /// interned by content like any constant, so two identical vtables
    /// are one global; the vtables it points to (for upcasts) are globals
    /// of their own, interned with it.
    pub fn vtable_global(
        &mut self,
        m: &mut Module,
        cx: &Ctx,
        ev: &Evaluation,
        spec: &VtableSpec,
        item: &str,
    ) -> Result<GlobalId, Diagnostic> {
        let mut graph = SimpleGraph::new();
        spec.add_to(&mut graph, &mut 0);
        let interned = Interner::new(POINTER_SIZE)
            .intern(&graph, [Root::Anonymous(0u32)])
            .map_err(|e| Diagnostic::new(Rule::Interning, item, e.to_string()))?;
        let g = interned
            .global_of(0)
            .ok_or_else(|| Diagnostic::new(Rule::Interning, item, "vtable not interned"))?;
        self.materialize(m, cx, ev, &interned, item)?;
        self.by_symbol
            .get(interned.global(g).symbol())
            .copied()
            .ok_or_else(|| Diagnostic::new(Rule::Interning, item, "vtable not materialized"))
    }

    /// Creates the device globals of an interning result (those not made yet)
    /// and fills their initializers.
    fn materialize<Id: Copy + Ord + std::hash::Hash + std::fmt::Debug>(
        &mut self,
        m: &mut Module,
        cx: &Ctx,
        ev: &Evaluation,
        interned: &Interned<'_, Id>,
        item: &str,
    ) -> Result<(), Diagnostic> {
        let mut fresh = Vec::new();
        for g in interned.globals() {
            if self.by_symbol.contains_key(g.symbol()) {
                continue;
            }
            let (mutable, origin) = match g.kind() {
                GlobalKind::Constant => (false, GlobalOrigin::Constant),
                GlobalKind::MutableAnonymous { .. } => (true, GlobalOrigin::MutableAnonymous),
                GlobalKind::Static => (false, GlobalOrigin::Static(item.to_string())),
            };
            let id = m.add_global(GlobalData {
                symbol: g.symbol().to_string(),
                space: AddressSpace::Global,
                mutable,
                linkage: Linkage::Internal,
                align: g.align() as u32,
                size: g.size(),
                init: None,
            });
            self.by_symbol.insert(g.symbol().to_string(), id);
            self.origins.insert(id, origin);
            fresh.push((id, g));
        }
        for (id, g) in fresh {
            let mut init = Initializer::default();
            for chunk in g.chunks() {
                match chunk {
                    Chunk::Bytes { bytes, .. } => init.spans.push(Span::Bytes(bytes.to_vec())),
                    Chunk::Undef { len, .. } => init.spans.push(Span::Undef(*len)),
                    Chunk::Pointer(slot) => {
                        let target =
                            match &slot.target {
                                SlotTarget::Global(t) => {
                                    let sym = interned.global(*t).symbol().to_string();
                                    let g = *self.by_symbol.get(&sym).ok_or_else(|| {
                                        Diagnostic::new(Rule::Interning, item, "missing target")
                                    })?;
                                    RelocTarget::Global(g)
                                }
                                SlotTarget::Extern(sym) => {
                                    self.extern_static(m, cx, ev, sym, item)?.into()
                                }
                                SlotTarget::Function(symbol) => RelocTarget::Func(
                                    fn_pointer_target(m, cx, symbol, slot.addend, item)?,
                                ),
                            };
                        init.spans.push(Span::Bytes(vec![0; slot.size as usize]));
                        init.relocations.push(Relocation {
                            offset: slot.offset,
                            target,
                            addend: slot.addend,
                        });
                    }
                }
            }
            m.globals[id].init = Some(init);
        }
        Ok(())
    }

    /// A relocation to a static by symbol: refused for shared statics.
    fn extern_static(
        &mut self,
        m: &mut Module,
        cx: &Ctx,
        ev: &Evaluation,
        symbol: &str,
        item: &str,
    ) -> Result<GlobalId, Diagnostic> {
        let path = self.static_paths.get(symbol).cloned().or_else(|| {
            cx.krate
                .bodies
                .values()
                .filter(|b| matches!(b.kind, BodyKind::Static(_)))
                .map(|b| b.path.def_path())
                .find(|p| static_symbol(p) == symbol)
        });
        let path = path.ok_or_else(|| {
            Diagnostic::new(
                Rule::Unsupported,
                item,
                format!("pointer to unknown static `{symbol}`"),
            )
        })?;
        if let Some(body) = cx.krate.item_body(&path).map(|b| &cx.krate.bodies[b])
            && refusals::is_shared_type(&body.return_ty)
        {
            return Err(Diagnostic::new(
                Rule::SharedStaticRelocation,
                item,
                format!(
                    "stores a pointer to the shared-memory static `{path}` (type `{}`); shared \
                     memory is per block and has no address a constant or static could hold",
                    body.return_ty
                ),
            ));
        }
        self.static_global(m, cx, ev, &path)
    }
}

/// The most bytes of constant memory a module's `ConstantMemory` statics
/// may take together: 64 KiB, a GPU's constant bank for user data.
pub const MAX_CONSTANT_MEMORY: u64 = 64 << 10;

/// A `ConstantMemory` static of the kernel crate, which the host may write
/// whether or not a kernel reads it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HostConstant {
    /// The symbol of its global, when a kernel reads it.
    pub symbol: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Whether `ty` holds a `ConstantMemory` inside an array, a tuple or a
/// generic argument (what the type shows; a user struct's fields it does
/// not).
fn holds_constant_memory(ty: &Ty) -> bool {
    match ty {
        t if refusals::is_constant_memory_type(t) => true,
        Ty::Adt(p) => p.generic_args().iter().any(
            |a| matches!(a, mir_import::model::GenericArg::Type(t) if holds_constant_memory(t)),
        ),
        Ty::Array(e, _) | Ty::Slice(e) => holds_constant_memory(e),
        Ty::Tuple(es) => es.iter().any(holds_constant_memory),
        _ => false,
    }
}

/// Every `ConstantMemory` static of the kernel crate, by path; refuses a
/// `static mut` one, one nested in another type (it would be ordinary
/// read-only memory the host cannot write), and statics that together pass
/// [`MAX_CONSTANT_MEMORY`].
pub fn host_constants(
    krate: &Crate,
    layouts: &Layouts<'_>,
) -> Result<BTreeMap<String, HostConstant>, Vec<Diagnostic>> {
    let mut out = BTreeMap::new();
    let mut diags = Vec::new();
    let mut total = 0u64;
    for body in krate.bodies.values() {
        let BodyKind::Static(mutability) = body.kind else {
            continue;
        };
        let path = body.path.def_path();
        let ty = &body.return_ty;
        if !refusals::is_constant_memory_type(ty) {
            if holds_constant_memory(ty) {
                diags.push(Diagnostic::new(
                    Rule::Unsupported,
                    &path,
                    format!(
                        "`{ty}` holds a `ConstantMemory` inside another type; only a static of \
                         type `ConstantMemory<T>` is constant memory the host can write"
                    ),
                ));
            }
            continue;
        }
        if mutability == MirMut::Mut {
            diags.push(Diagnostic::new(
                Rule::Unsupported,
                &path,
                "a `static mut` of type `ConstantMemory` (device code only reads constant \
                 memory; declare it `pub static`)",
            ));
            continue;
        }
        let size = match layouts.of(ty) {
            Ok(l) => l.size,
            Err(e) => {
                diags.push(Diagnostic::new(
                    Rule::Unsupported,
                    &path,
                    format!("constant memory: {e}"),
                ));
                continue;
            }
        };
        total += size;
        if total > MAX_CONSTANT_MEMORY {
            diags.push(Diagnostic::new(
                Rule::Unsupported,
                &path,
                format!(
                    "the kernel's `ConstantMemory` statics take {total} bytes with this one; \
                     constant memory holds {MAX_CONSTANT_MEMORY}"
                ),
            ));
        }
        let symbol = static_symbol(&path);
        out.insert(path, HostConstant { symbol, size });
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// The constant-memory global of the `ConstantMemory` static at `path`:
/// `addrspace(4)`, read-only for device code, externally initialized (the
/// host writes it between launches, by `symbol`), holding the static's
/// initializer until then. A pointer in it is refused: the host's bytes
/// replace it, and no host address means anything on the device.
fn host_constant(
    m: &mut Module,
    cx: &Ctx,
    ev: &Evaluation,
    path: &str,
    symbol: String,
    ty: &Ty,
) -> Result<GlobalId, Diagnostic> {
    let layout = cx
        .layouts
        .of(ty)
        .map_err(|e| Diagnostic::new(Rule::Unsupported, path, format!("constant memory: {e}")))?;
    let value = ev
        .value(path)
        .ok_or_else(|| Diagnostic::new(Rule::ConstEval, path, "the static was not evaluated"))?;
    let alloc = ev.memory.allocs.get(value).ok_or_else(|| {
        Diagnostic::new(Rule::ConstEval, path, "the static's allocation is missing")
    })?;
    if let Some(offset) = alloc.relocs.keys().next() {
        return Err(Diagnostic::new(
            Rule::Unsupported,
            path,
            format!(
                "constant memory (`{ty}`) holds a pointer at byte {offset}; the host writes \
                 its bytes, and no host address is one on the device"
            ),
        ));
    }
    let n = alloc.bytes.len();
    if n as u64 != layout.size || alloc.init.len() != n {
        return Err(Diagnostic::new(
            Rule::ConstEval,
            path,
            format!("the initializer has {n} bytes; `{ty}` has {}", layout.size),
        ));
    }
    let mut init = Initializer::default();
    for (run, defined) in InitMask::from_bools(alloc.init.iter().copied()).runs() {
        init.spans.push(if defined {
            Span::Bytes(alloc.bytes[run.start as usize..run.end as usize].to_vec())
        } else {
            Span::Undef(run.end - run.start)
        });
    }
    Ok(m.add_global(GlobalData {
        symbol,
        space: AddressSpace::Constant,
        mutable: false,
        linkage: Linkage::ExternallyInitialized,
        align: layout.align as u32,
        size: layout.size,
        init: Some(init),
    }))
}

/// The MIR type of the static at `path`, if any.
pub fn static_type<'k>(krate: &'k Crate, path: &str) -> Option<&'k Ty> {
    krate.item_body(path).map(|b| &krate.bodies[b].return_ty)
}
