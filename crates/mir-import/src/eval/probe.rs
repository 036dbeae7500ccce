//! The layout probe: asks rustc for the layouts `-Zprint-type-sizes` never prints.
//!
//! Tuples are absent from that report, and a tuple is not laid out like a tuple
//! struct with the same fields (DESIGN.md, "Measured facts"). So for each tuple
//! type that a constant's evaluation needs, the probe compiles the kernel again
//! with one extra module holding a static per tuple:
//! `[size_of::<T>(), align_of::<T>(), offset_of!(T, 0), ...]`, and reads the
//! numbers back from the static's printed bytes. Nothing is guessed.
//!
//! Enums that rustc lays out with a niche but Rust gives no guarantee about
//! (`Option<(usize, &T)>`, which `enumerate` yields) are probed the same way:
//! a static holding the field-less variant, whose printed bytes show exactly
//! which bytes store it. Where they are zeros in one place and everything
//! else is uninitialized, that place is the niche.
//!
//! Where the probe runs (inside the kernel's module) and how an item rustc
//! refuses is traced back to its probe: [`site`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::field_order::{self, FieldOrderProbe};
use super::layout::{ProbedNiche, ProbedVariant, TupleLayouts};
use crate::layout::{TagLayout, TypeShape, VariantLayout};
use crate::model::{
    Body, BodyKind, ConstOperand, Crate, GenericArg, Operand, PlaceElem, StatementKind, Ty,
    ValTree, proxy_fields, proxy_struct_declarations,
};
use crate::rustc::{RustcError, RustcOptions};

mod site;

pub use site::PROBE_MODULE;
pub(super) use site::{ProbeSite, private_probe_lines, root_line, run_probe};
use site::{probe_item, probe_module_path};

/// Every tuple type (other than `()`) that const, static and promoted bodies use.
pub fn tuple_types(krate: &Crate) -> BTreeSet<Ty> {
    let mut out = BTreeSet::new();
    for (_, b) in krate.bodies.iter() {
        // Function bodies of the kernel module too: lowering needs the layout
        // of every tuple it touches. The prelude's generic bodies hold type
        // parameters that the probe could not name.
        if matches!(b.kind, BodyKind::Fn { .. }) && !probed_fn(b) {
            continue;
        }
        collect_body(b, &mut out);
        // Tuple constants printed without a type (`(Const::<3>,
        // Const::<1>)`, nalgebra's shapes), typed by their elements.
        b.for_each_operand(|o| {
            if let Operand::Const(c @ ConstOperand::Value(ValTree::Tuple(None, _))) = o
                && let Some(t) = krate.const_ty(c)
            {
                collect(&t, &mut out);
            }
        });
    }
    // The structs that closures with several captures are laid out as, and
    // those inside them (a captured closure's, whose size the record of
    // the outer one's captures needs).
    for proxy in krate.closure_proxies().into_values() {
        collect_proxies(&proxy, &mut out);
        collect(&proxy, &mut out);
    }
    out.retain(nameable);
    out
}

/// Whether the types of function body `b` are probed: the kernel's
/// functions and the dependency functions imported from their crates' MIR
/// ([`crate::deps`]), not the prelude's generic bodies.
pub(super) fn probed_fn(b: &Body) -> bool {
    matches!(b.kind, BodyKind::Fn { .. })
        && b.path
            .segments
            .first()
            .is_some_and(|s| s.name != crate::prelude::PRELUDE_MODULE)
}

/// The structs and enums (and those in their arguments) that probed
/// functions hold in locals; with `dependencies_only`, only the functions
/// imported from a dependency's MIR.
pub(super) fn local_adts(krate: &Crate, dependencies_only: bool) -> BTreeSet<Ty> {
    let mut all = BTreeSet::new();
    for (_, b) in krate.bodies.iter() {
        let kernel = b.path.segments.first().is_some_and(|s| s.name == "kernel");
        if probed_fn(b) && !(dependencies_only && kernel) {
            for (_, l) in b.locals.iter() {
                collect_adts(&l.ty, &mut all);
            }
        }
    }
    all
}

/// `t` with each function item type inside it (`fn(&u32) -> u32
/// {load_value}`, which source cannot write) replaced by `()`. Both are
/// zero-sized and byte-aligned, so a type holding one is laid out as the
/// same type holding the other: the probe asks rustc for this one.
pub(super) fn fn_items_as_unit(t: &Ty) -> Ty {
    t.replace(&|t| t.is_fn_item().then(Ty::unit))
}

/// An enum rustc printed with no tag, as the probe names it, with its
/// size and variants.
pub(super) type UntaggedEnum<'k> = (Ty, u64, &'k [VariantLayout]);

/// The enums that probed functions hold in locals, that source can name
/// and that rustc printed with no tag, each with its size and variants:
/// the ones whose niche the probes measure. One that holds a closure
/// (`Option<Map<Iter<'_, u32>, {closure}>>`, inside `FlatMap`) is probed
/// as its proxy ([`Crate::closure_proxy`]), which rustc lays out the same:
/// the map gives, for each proxy's name, the enums it stands for.
pub(super) fn untagged_enums(
    krate: &Crate,
) -> (Vec<UntaggedEnum<'_>>, BTreeMap<String, Vec<String>>) {
    let mut stands_for: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let enums = local_adts(krate, false)
        .into_iter()
        .filter_map(|t| {
            let l = krate.layouts.get(&t.to_string())?;
            let TypeShape::Enum {
                tag: TagLayout::Unknown,
                variants,
            } = &l.shape
            else {
                return None;
            };
            let probed = if nameable(&t) {
                t
            } else {
                let proxy = krate.closure_proxy(&t).filter(nameable)?;
                let of = stands_for.entry(proxy.to_string()).or_default();
                of.push(t.to_string());
                proxy
            };
            Some((probed, l.size, variants.as_slice()))
        })
        .collect();
    (enums, stands_for)
}

/// Of `untagged` ([`untagged_enums`]), every two-variant enum with a
/// field-less variant: the static probe measures these.
fn niche_statics(untagged: &[UntaggedEnum<'_>]) -> Vec<NicheStatic> {
    untagged
        .iter()
        .filter_map(|(t, _, variants)| {
            let [a, b] = variants else {
                return None;
            };
            let (empty, data) = if a.fields.is_empty() { (a, b) } else { (b, a) };
            empty.fields.is_empty().then(|| NicheStatic {
                ty: t.clone(),
                empty: empty.name.clone(),
                data: data.name.clone(),
            })
        })
        .collect()
}

pub(super) fn collect_adts(ty: &Ty, out: &mut BTreeSet<Ty>) {
    match ty {
        Ty::Tuple(e) => e.iter().for_each(|e| collect_adts(e, out)),
        Ty::Array(e, _) | Ty::Slice(e) | Ty::Ref(_, e) | Ty::RawPtr(_, e) => collect_adts(e, out),
        Ty::Adt(p) => {
            out.insert(ty.clone());
            for seg in &p.segments {
                for a in &seg.args {
                    if let GenericArg::Type(t) = a {
                        collect_adts(t, out);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Whether the probe can name `ty` in the crate: no type parameters (a
/// single-segment path such as `T`), closures or unknown array lengths.
pub(super) fn nameable(ty: &Ty) -> bool {
    match ty {
        Ty::Tuple(e) => e.iter().all(nameable),
        Ty::Array(e, crate::model::ArrayLen::Known(_)) | Ty::Slice(e) => nameable(e),
        Ty::Array(_, _) => false,
        Ty::Ref(_, e) | Ty::RawPtr(_, e) => nameable(e),
        Ty::Adt(p) => {
            p.segments.len() > 1
                && p.segments.iter().all(|s| {
                    !s.name.starts_with('<')
                        && !s.name.starts_with('{')
                        && s.args.iter().all(|a| match a {
                            GenericArg::Type(t) => nameable(t),
                            GenericArg::Lifetime(_) => true,
                            GenericArg::Const(c) => c.parse::<u64>().is_ok(),
                        })
                })
        }
        Ty::Opaque(_) | Ty::FnPtr(..) => false,
        _ => true,
    }
}

fn collect_body(b: &Body, out: &mut BTreeSet<Ty>) {
    for (_, l) in b.locals.iter() {
        collect(&l.ty, out);
    }
    for bb in b.blocks.values() {
        for st in &bb.statements {
            if let StatementKind::Assign(p, _) = &st.kind {
                for e in &p.projection {
                    if let PlaceElem::Field(_, t) = e {
                        collect(t, out);
                    }
                }
            }
        }
    }
}

fn collect(ty: &Ty, out: &mut BTreeSet<Ty>) {
    match ty {
        Ty::Tuple(elems) if !elems.is_empty() => {
            out.insert(ty.clone());
            elems.iter().for_each(|e| collect(e, out));
        }
        Ty::Array(e, _) | Ty::Slice(e) | Ty::Ref(_, e) | Ty::RawPtr(_, e) => collect(e, out),
        Ty::Adt(p) => {
            for seg in &p.segments {
                for a in &seg.args {
                    if let GenericArg::Type(t) = a {
                        collect(t, out);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Adds to `out` each closure proxy struct in `ty` ([`proxy_fields`]), the
/// outer one first.
fn collect_proxies(ty: &Ty, out: &mut BTreeSet<Ty>) {
    if let Some(fields) = proxy_fields(ty) {
        out.insert(ty.clone());
        for f in fields {
            collect_proxies(f, out);
        }
    }
}

/// A two-variant enum whose field-less variant the probe stores in a static.
#[derive(Clone, Debug)]
pub struct NicheStatic {
    /// The enum.
    pub ty: Ty,
    /// Its field-less variant, which the static holds.
    pub empty: String,
    /// The other variant.
    pub data: String,
}

/// What one probe run asks rustc.
#[derive(Clone, Debug, Default)]
pub struct ProbeRequest {
    /// Tuples: size, alignment and each field's offset.
    pub tuples: Vec<Ty>,
    /// Enums whose field-less variant a static holds.
    pub niche_enums: Vec<NicheStatic>,
    /// Structs and enums: the size of a pointer to each, 16 bytes for a
    /// dynamically sized one.
    pub sizedness: Vec<Ty>,
    /// Dependency structs whose fields' declaration order nothing printed.
    pub field_orders: Vec<FieldOrderProbe>,
}

impl ProbeRequest {
    fn is_empty(&self) -> bool {
        self.tuples.is_empty()
            && self.niche_enums.is_empty()
            && self.sizedness.is_empty()
            && self.field_orders.is_empty()
    }

    /// The request without the statics rustc refused (`PROBE_3`, `NICHE_0`,
    /// `SIZED_1`: a dependency's private type).
    fn without(&self, refused: &[String]) -> ProbeRequest {
        fn keep<T: Clone>(items: &[T], prefix: &str, refused: &[String]) -> Vec<T> {
            items
                .iter()
                .enumerate()
                .filter(|(i, _)| !refused.contains(&format!("{prefix}_{i}")))
                .map(|(_, t)| t.clone())
                .collect()
        }
        ProbeRequest {
            tuples: keep(&self.tuples, "PROBE", refused),
            niche_enums: keep(&self.niche_enums, "NICHE", refused),
            sizedness: keep(&self.sizedness, "SIZED", refused),
            field_orders: self
                .field_orders
                .iter()
                .enumerate()
                .filter(|(i, _)| !refused.iter().any(|r| field_order::is_probe_of(r, *i)))
                .map(|(_, p)| p.clone())
                .collect(),
        }
    }
}

/// The probe module's source for `req`: per tuple a static of its size,
/// alignment and field offsets; per niche enum a static holding its
/// field-less variant; per sizedness candidate the size of a pointer to it.
pub fn probe_source(req: &ProbeRequest) -> String {
    let mut s = String::from(
        "#[allow(unused_imports)]\nuse crate::kernel::*;\nuse core::mem::{align_of, offset_of, size_of};\n",
    );
    s.push_str(&proxy_struct_declarations());
    for (i, t) in req.tuples.iter().enumerate() {
        let fields = match (t, proxy_fields(t)) {
            (Ty::Tuple(elems), _) => elems.len(),
            (_, Some(fields)) => fields.len(),
            _ => continue,
        };
        let src = behind_stand_ins(t).to_rust_source();
        let mut items = vec![
            format!("size_of::<{src}>()"),
            format!("align_of::<{src}>()"),
        ];
        items.extend((0..fields).map(|f| format!("offset_of!({src}, {f})")));
        s.push_str(&format!(
            "pub static PROBE_{i}: [usize; {}] = [{}];\n",
            items.len(),
            items.join(", ")
        ));
    }
    for (i, NicheStatic { ty, empty, .. }) in req.niche_enums.iter().enumerate() {
        let src = ty.to_rust_source();
        s.push_str(&format!(
            "pub static NICHE_{i}: {src} = <{src}>::{empty};\n"
        ));
    }
    for (i, t) in req.sizedness.iter().enumerate() {
        let src = fn_items_as_unit(t).to_rust_source();
        s.push_str(&format!(
            "pub static SIZED_{i}: usize = size_of::<*const {src}>();\n"
        ));
    }
    for (i, p) in req.field_orders.iter().enumerate() {
        s.push_str(&field_order::source(i, p));
    }
    s.push_str("#[inline(never)]\npub fn touch() -> usize {\n    0");
    for i in 0..req.tuples.len() {
        s.push_str(&format!(" + (&raw const PROBE_{i} as usize)"));
    }
    for i in 0..req.niche_enums.len() {
        s.push_str(&format!(" + (&raw const NICHE_{i} as usize)"));
    }
    for i in 0..req.sizedness.len() {
        s.push_str(&format!(" + (&raw const SIZED_{i} as usize)"));
    }
    s.push_str("\n}\n");
    s
}

/// Gives each enum holding a closure the niche measured on its proxy
/// ([`untagged_enums`]), where the proxy is as large as rustc printed the
/// enum; otherwise the enum stays unproven (and is refused by name where
/// the lowering needs its niche) rather than read through a layout that
/// is not its own.
fn copy_proxy_niches(
    out: &mut TupleLayouts,
    stands_for: &BTreeMap<String, Vec<String>>,
    krate: &Crate,
) {
    for (proxy, enums) in stands_for {
        let Some(niche) = out.niches.get(proxy).cloned() else {
            continue;
        };
        for e in enums {
            let printed = krate.layouts.get(e).map(|l| l.size);
            if printed == Some(niche.enum_size) {
                out.niches.insert(e.clone(), niche.clone());
            } else {
                tracing::warn!(
                    enum_ty = %e,
                    proxy = %proxy,
                    proxy_size = niche.enum_size,
                    ?printed,
                    "a closure's proxy enum is not the size of the enum it stands for; its niche is not used"
                );
            }
        }
    }
}

/// `ty` with each reference or raw pointer to a dependency's type (an ADT
/// outside the kernel, the prelude and the standard library) replaced by
/// the same pointer to `u8`: a thin pointer to a sized type is laid out the
/// same whatever it points to (a reference keeps its non-null niche), and
/// a dependency's private type cannot be named in the probe.
pub(super) fn behind_stand_ins(ty: &Ty) -> Ty {
    let byte = || Box::new(Ty::Int(crate::model::IntTy::U8));
    match ty {
        Ty::Ref(m, t) if foreign(t) => Ty::Ref(*m, byte()),
        Ty::RawPtr(m, t) if foreign(t) => Ty::RawPtr(*m, byte()),
        Ty::Ref(m, t) => Ty::Ref(*m, Box::new(behind_stand_ins(t))),
        Ty::RawPtr(m, t) => Ty::RawPtr(*m, Box::new(behind_stand_ins(t))),
        Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(behind_stand_ins).collect()),
        Ty::Array(t, n) => Ty::Array(Box::new(behind_stand_ins(t)), n.clone()),
        // A closure's proxy struct, field by field, as the tuple it was.
        Ty::Adt(path) if proxy_fields(ty).is_some() => {
            let mut path = path.clone();
            for segment in &mut path.segments {
                for arg in &mut segment.args {
                    if let GenericArg::Type(t) = arg {
                        *t = behind_stand_ins(t);
                    }
                }
            }
            Ty::Adt(path)
        }
        other => other.clone(),
    }
}

/// Whether `t` is a dependency's struct or enum: not the kernel's, the
/// prelude's or the standard library's.
pub(super) fn foreign(t: &Ty) -> bool {
    match t {
        Ty::Adt(p) => {
            p.segments.len() > 1
                && !matches!(
                    p.segments[0].name.as_str(),
                    "std"
                        | "core"
                        | "alloc"
                        | crate::prelude::KERNEL_MODULE
                        | crate::prelude::PRELUDE_MODULE
                )
        }
        _ => false,
    }
}

/// Why probing failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// rustc failed on the probe.
    #[error("layout probe: {0}")]
    Rustc(#[from] RustcError),
    /// The probe's MIR could not be parsed.
    #[error("layout probe: {0}")]
    Parse(#[source] crate::parse::ParseError),
    /// rustc printed no bytes for a probe static.
    #[error("layout probe: rustc printed no bytes for {0}")]
    Missing(String),
    /// A probe static's bytes are not whole initialized words.
    #[error("layout probe: {0} is not plain words")]
    NotWords(String),
    /// The report of the layout run did not parse.
    #[error("layout probe: rustc's type-size report: {0}")]
    Layouts(String),
    /// A probe static has fewer than two words (size and alignment).
    #[error("layout probe: {0} is too short")]
    TooShort(String),
}

/// Runs the probe for `krate`'s tuple types, the niches of its untagged
/// enums and the sizedness of its structs; the kernel at `kernel` is
/// compiled again with the probe module added. What it learns of sizedness
/// goes into `krate`'s layout table ([`crate::layout::LayoutTable::sizedness`]).
pub fn probe_tuples(
    kernel: &Path,
    krate: &mut Crate,
    opts: &RustcOptions,
) -> Result<TupleLayouts, ProbeError> {
    let (untagged, stands_for) = untagged_enums(krate);
    let by_use = super::sizedness::by_use(krate);
    let req = ProbeRequest {
        tuples: tuple_types(krate).into_iter().collect(),
        niche_enums: niche_statics(&untagged),
        sizedness: super::sizedness::probe_candidates(krate, &by_use)
            .into_iter()
            .filter(|t| nameable(&fn_items_as_unit(t)))
            .collect(),
        field_orders: field_order::candidates(krate, &local_adts(krate, false)),
    };
    let (mut out, probed, orders) = probe_named(kernel, opts, &req)?;
    // What the statics could not show (a niche whose variants all have
    // fields, `Result<&[u8], E>`), rustc's layout report does.
    let rest: Vec<Ty> = super::niche_report::candidates(&untagged)
        .into_iter()
        .filter(|t| !out.niches.contains_key(&t.to_string()))
        .collect();
    out.niches
        .extend(super::niche_report::probe(kernel, opts, &rest)?);
    copy_proxy_niches(&mut out, &stands_for, krate);
    for (def_path, names) in orders {
        let attrs = krate.attrs.entry(def_path).or_default();
        attrs.field_names.get_or_insert(names);
    }
    super::sizedness::record(&mut krate.layouts, by_use, probed);
    // A tuple holding a pointer to a dependency's type was probed with a
    // pointer to `u8` in its place ([`behind_stand_ins`]), which is right
    // only for a sized pointee.
    let fat_stand_in: Vec<String> = req
        .tuples
        .iter()
        .filter(|t| stands_in_for_unsized(t, &krate.layouts))
        .map(Ty::to_string)
        .collect();
    for t in fat_stand_in {
        out.by_type.remove(&t);
    }
    Ok(out)
}

/// Whether [`behind_stand_ins`] replaced, in `ty`, a pointer to a type
/// that `table` knows to be dynamically sized (so the stand-in, a thin
/// pointer, has the wrong size). A pointee of unknown sizedness keeps the
/// stand-in's layout, as it is laid out as sized everywhere else
/// (`eval::sizedness`): dropping it would refuse every tuple holding a
/// reference to a dependency's type that no use settles.
fn stands_in_for_unsized(ty: &Ty, table: &crate::layout::LayoutTable) -> bool {
    match ty {
        Ty::Ref(_, t) | Ty::RawPtr(_, t) if foreign(t) => table.sizedness(t) == Some(false),
        Ty::Ref(_, t) | Ty::RawPtr(_, t) | Ty::Array(t, _) => stands_in_for_unsized(t, table),
        Ty::Tuple(ts) => ts.iter().any(|t| stands_in_for_unsized(t, table)),
        _ => false,
    }
}

/// What one probe run learnt: tuple and niche layouts, whether each
/// sizedness candidate is sized, and struct field orders by def path.
type ProbeAnswers = (
    TupleLayouts,
    BTreeMap<String, bool>,
    BTreeMap<String, Vec<String>>,
);

/// Runs the probe for `req` as given: the tuple and niche measurements,
/// for each sizedness candidate, by name, whether it is sized, and the
/// field orders rustc showed.
fn probe_named(
    kernel: &Path,
    opts: &RustcOptions,
    req: &ProbeRequest,
) -> Result<ProbeAnswers, ProbeError> {
    let mut out = TupleLayouts::default();
    let mut sized = BTreeMap::new();
    let mut orders = BTreeMap::new();
    if req.is_empty() {
        return Ok((out, sized, orders));
    }
    tracing::debug!(
        tuples = req.tuples.len(),
        niches = req.niche_enums.len(),
        sizedness = ?req.sizedness.iter().map(Ty::to_string).collect::<Vec<_>>(),
        field_orders = req.field_orders.len(),
        "layout probe"
    );
    let src = probe_source(req);
    let res = match run_probe(kernel, opts, &src) {
        Err(RustcError::Failed {
            stderr,
            status,
            path,
        }) => {
            // A dependency's private type cannot be named here: those
            // probes are dropped (their layouts stay unknown, and the
            // lowering refuses what needs them), the rest run again.
            let refused = private_probe_lines(&stderr, &src, &ProbeSite::of(kernel));
            if refused.is_empty() {
                let status = if stderr.contains("E0603") {
                    "a private type in the layout probe".into()
                } else {
                    status
                };
                return Err(ProbeError::Rustc(RustcError::Failed {
                    path,
                    status,
                    stderr,
                }));
            }
            tracing::debug!("layout probes refused by rustc: {refused:?}");
            return probe_named(kernel, opts, &req.without(&refused));
        }
        other => other?,
    };
    let parsed = crate::parse::parse_mir(&res.mir).map_err(ProbeError::Parse)?;
    // The printed bytes of the probe static `name`.
    let bytes_of = |name: &str| -> Result<&[Option<u8>], ProbeError> {
        parsed
            .allocs
            .values()
            .find(|a| a.static_path.as_deref() == Some(name))
            .map(|a| a.bytes.as_slice())
            .ok_or_else(|| ProbeError::Missing(name.to_string()))
    };
    let words_of = |name: &str| -> Result<Vec<u64>, ProbeError> {
        let words: Option<Vec<u64>> = bytes_of(name)?
            .chunks(8)
            .map(|c| {
                let bytes: Option<Vec<u8>> = c.iter().copied().collect();
                Some(u64::from_le_bytes(bytes?.try_into().ok()?))
            })
            .collect();
        words.ok_or_else(|| ProbeError::NotWords(name.to_string()))
    };
    for (i, t) in req.tuples.iter().enumerate() {
        let name = probe_item(&format!("PROBE_{i}"));
        let words = words_of(&name)?;
        let [size, align, offsets @ ..] = words.as_slice() else {
            return Err(ProbeError::TooShort(name));
        };
        out.by_type
            .insert(t.to_string(), (*size, *align, offsets.to_vec()));
    }
    for (i, n) in req.niche_enums.iter().enumerate() {
        let name = probe_item(&format!("NICHE_{i}"));
        let bytes = bytes_of(&name)?;
        let enum_size = bytes.len() as u64;
        if let Some((offset, size, value)) = value_niche(bytes) {
            out.niches.insert(
                n.ty.to_string(),
                ProbedNiche {
                    offset,
                    size,
                    untagged: ProbedVariant::Name(n.data.clone()),
                    tagged: vec![(ProbedVariant::Name(n.empty.clone()), value)],
                    enum_size,
                },
            );
        }
    }
    for (i, t) in req.sizedness.iter().enumerate() {
        let name = probe_item(&format!("SIZED_{i}"));
        match words_of(&name)?.as_slice() {
            [8] => sized.insert(t.to_string(), true),
            [16] => sized.insert(t.to_string(), false),
            _ => return Err(ProbeError::NotWords(name)),
        };
    }
    for (i, p) in req.field_orders.iter().enumerate() {
        if let (Ty::Adt(path), Some(names)) = (
            &p.ty,
            field_order::read(&parsed, &probe_module_path(), i, p),
        ) {
            orders.insert(path.def_path(), names);
        }
    }
    Ok((out, sized, orders))
}

/// The (offset, size, value) of the one run of initialized bytes in a
/// static's printed bytes, when the run is 1, 2, 4, 8 or 16 bytes: the niche
/// field and the value that stores a field-less variant (zero for
/// `Option<(usize, &T)>`'s `None`, 2 for `Option<Ordering>`'s). `None` for
/// anything else, which leaves the enum's encoding unproven.
pub fn value_niche(bytes: &[Option<u8>]) -> Option<(u64, u64, u128)> {
    let start = bytes.iter().position(Option::is_some)?;
    let run: Vec<u8> = bytes[start..].iter().map_while(|b| *b).collect();
    let rest_uninit = bytes[start + run.len()..].iter().all(Option::is_none);
    let value = run
        .iter()
        .rev()
        .fold(0u128, |v, b| (v << 8) | u128::from(*b));
    (rest_uninit && matches!(run.len(), 1 | 2 | 4 | 8 | 16)).then_some((
        start as u64,
        run.len() as u64,
        value,
    ))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntTy, Mutability};

    fn adt(path: &str) -> Ty {
        crate::parse::parse_type(path).expect("a type")
    }

    #[test]
    fn a_proxy_niche_goes_only_to_an_enum_of_the_proxy_size() {
        let of = |e: &str| {
            format!(
                "print-type-size type: `{e}`: 16 bytes, alignment: 8 bytes\n\
                 print-type-size     variant `Some`: 16 bytes\n\
                 print-type-size         field `.0`: 16 bytes\n\
                 print-type-size     variant `None`: 0 bytes\n"
            )
        };
        let (same, other) = (
            "Option<{closure@k.rs:1:2: 1:3}>",
            "Option<{closure@k.rs:4:5: 4:6}>",
        );
        let krate = Crate {
            layouts: crate::layout::LayoutTable::parse(&format!("{}{}", of(same), of(other)))
                .expect("the report parses"),
            ..Crate::default()
        };
        let niche = |enum_size| ProbedNiche {
            offset: 8,
            size: 8,
            untagged: ProbedVariant::Name("Some".into()),
            tagged: vec![(ProbedVariant::Name("None".into()), 0)],
            enum_size,
        };
        let mut out = TupleLayouts::default();
        out.niches.insert("P16".into(), niche(16));
        out.niches.insert("P24".into(), niche(24));
        let stands_for = BTreeMap::from([
            ("P16".to_string(), vec![same.to_string()]),
            ("P24".to_string(), vec![other.to_string()]),
        ]);
        copy_proxy_niches(&mut out, &stands_for, &krate);
        assert_eq!(out.niches.get(same), Some(&niche(16)));
        // A proxy laid out larger than the enum stands for nothing.
        assert_eq!(out.niches.get(other), None);
    }

    #[test]
    fn function_item_types_are_probed_as_unit() {
        let t = crate::parse::parse_type(
            "std::iter::Map<std::slice::Iter<'_, u32>, fn(&'a u32) -> u32 {dep::load}>",
        )
        .expect("parses");
        assert!(!nameable(&t), "the fact the probe works around");
        let probed = fn_items_as_unit(&t);
        assert!(nameable(&probed));
        assert_eq!(
            probed.to_string(),
            "std::iter::Map<std::slice::Iter<'_, u32>, ()>"
        );
        // A function pointer is a pointer, not a function item.
        let ptr = crate::parse::parse_type("fn(u32) -> u32").expect("parses");
        assert_eq!(fn_items_as_unit(&ptr), ptr);
    }

    #[test]
    fn pointers_to_dependency_types_are_probed_as_pointers_to_bytes() {
        let t = Ty::Tuple(vec![
            Ty::Ref(Mutability::Mut, Box::new(adt("sha1_smol::Sha1State"))),
            Ty::RawPtr(Mutability::Not, Box::new(adt("dep::m::Private"))),
            Ty::Ref(Mutability::Not, Box::new(adt("kernel::Mine"))),
            Ty::Ref(Mutability::Not, Box::new(adt("core::option::Option"))),
            adt("dep::ByValue"),
            Ty::Int(IntTy::U32),
        ]);
        assert_eq!(
            behind_stand_ins(&t).to_rust_source(),
            "(&mut u8, *const u8, &crate::kernel::Mine, &core::option::Option, dep::ByValue, u32)"
        );
    }

    #[test]
    fn the_probe_asks_for_the_size_of_a_pointer_and_drops_what_rustc_refused() {
        let req = ProbeRequest {
            tuples: vec![Ty::Tuple(vec![Ty::Int(IntTy::U8), Ty::Int(IntTy::U32)])],
            niche_enums: vec![],
            sizedness: vec![adt("kernel::Packet"), adt("dep::Hidden")],
            field_orders: vec![],
        };
        let src = probe_source(&req);
        assert!(
            src.contains("pub static SIZED_1: usize = size_of::<*const dep::Hidden>();"),
            "{src}"
        );
        assert!(src.contains("(&raw const SIZED_1 as usize)"), "{src}");
        let kept = req.without(&["SIZED_1".into()]);
        assert_eq!(
            (kept.tuples.len(), kept.sizedness.as_slice()),
            (1, [adt("kernel::Packet")].as_slice())
        );
    }
}
