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

use std::collections::BTreeSet;
use std::path::Path;

use super::layout::TupleLayouts;
use crate::layout::{TagLayout, TypeShape};
use crate::model::{Body, BodyKind, Crate, GenericArg, PlaceElem, StatementKind, Ty};
use crate::rustc::{RustcError, RustcOptions, run_rustc_with_module};

/// The module name of the probe inside the crate root.
pub const PROBE_MODULE: &str = "__layout_probe";

/// Every tuple type (other than `()`) that const, static and promoted bodies use.
pub fn tuple_types(krate: &Crate) -> BTreeSet<Ty> {
    let mut out = BTreeSet::new();
    for (_, b) in krate.bodies.iter() {
        // Function bodies of the kernel module too: lowering needs the layout
        // of every tuple it touches. The prelude's generic bodies hold type
        // parameters that the probe could not name.
        let kernel_fn = b.path.segments.first().is_some_and(|s| s.name == "kernel");
        if matches!(b.kind, BodyKind::Fn { .. }) && !kernel_fn {
            continue;
        }
        collect_body(b, &mut out);
    }
    // The tuples that closures with several captures are laid out as.
    out.extend(krate.closure_proxy_tuples().into_values());
    out.retain(nameable);
    out
}

/// Every two-variant enum with a field-less variant that kernel functions use
/// and rustc printed without a tag, except those whose encoding Rust
/// guarantees: the niche probe measures these.
pub fn niche_enum_types(krate: &Crate) -> BTreeSet<Ty> {
    let mut all = BTreeSet::new();
    for (_, b) in krate.bodies.iter() {
        let kernel_fn = b.path.segments.first().is_some_and(|s| s.name == "kernel");
        if matches!(b.kind, BodyKind::Fn { .. }) && kernel_fn {
            for (_, l) in b.locals.iter() {
                collect_adts(&l.ty, &mut all);
            }
        }
    }
    all.into_iter()
        .filter(|t| {
            let Some(l) = krate.layouts.get(&t.to_string()) else {
                return false;
            };
            let TypeShape::Enum {
                tag: TagLayout::Unknown,
                variants,
            } = &l.shape
            else {
                return false;
            };
            variants.len() == 2 && variants.iter().any(|v| v.fields.is_empty()) && nameable(t)
        })
        .collect()
}

fn collect_adts(ty: &Ty, out: &mut BTreeSet<Ty>) {
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
fn nameable(ty: &Ty) -> bool {
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

/// The probe module's source for `tuples` and, for each of `niche_enums`
/// with its field-less variant's name, a static holding that variant.
pub fn probe_source(tuples: &[Ty], niche_enums: &[(Ty, String)]) -> String {
    let mut s = String::from(
        "#[allow(unused_imports)]\nuse crate::kernel::*;\nuse core::mem::{align_of, offset_of, size_of};\n",
    );
    for (i, t) in tuples.iter().enumerate() {
        let Ty::Tuple(elems) = t else { continue };
        let src = t.to_rust_source();
        let mut items = vec![
            format!("size_of::<{src}>()"),
            format!("align_of::<{src}>()"),
        ];
        items.extend((0..elems.len()).map(|f| format!("offset_of!({src}, {f})")));
        s.push_str(&format!(
            "pub static PROBE_{i}: [usize; {}] = [{}];\n",
            items.len(),
            items.join(", ")
        ));
    }
    for (i, (t, variant)) in niche_enums.iter().enumerate() {
        let src = t.to_rust_source();
        s.push_str(&format!(
            "pub static NICHE_{i}: {src} = <{src}>::{variant};\n"
        ));
    }
    s.push_str("#[inline(never)]\npub fn touch() -> usize {\n    0");
    for i in 0..tuples.len() {
        s.push_str(&format!(" + (&raw const PROBE_{i} as usize)"));
    }
    for i in 0..niche_enums.len() {
        s.push_str(&format!(" + (&raw const NICHE_{i} as usize)"));
    }
    s.push_str("\n}\n");
    s
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
    /// A probe static has fewer than two words (size and alignment).
    #[error("layout probe: {0} is too short")]
    TooShort(String),
}

/// Runs the probe for `krate`'s tuple types; the kernel at `kernel` is compiled
/// again with the probe module added.
pub fn probe_tuples(
    kernel: &Path,
    krate: &Crate,
    opts: &RustcOptions,
) -> Result<TupleLayouts, ProbeError> {
    let tuples: Vec<Ty> = tuple_types(krate).into_iter().collect();
    let niche_enums: Vec<(Ty, String)> = niche_enum_types(krate)
        .into_iter()
        .filter_map(|t| {
            let l = krate.layouts.get(&t.to_string())?;
            let TypeShape::Enum { variants, .. } = &l.shape else {
                return None;
            };
            let empty = variants.iter().find(|v| v.fields.is_empty())?;
            Some((t, empty.name.clone()))
        })
        .collect();
    let mut out = TupleLayouts::default();
    if tuples.is_empty() && niche_enums.is_empty() {
        return Ok(out);
    }
    let src = probe_source(&tuples, &niche_enums);
    let res = run_rustc_with_module(kernel, opts, Some((PROBE_MODULE, &src)))?;
    let parsed = crate::parse::parse_mir(&res.mir).map_err(ProbeError::Parse)?;
    for (i, t) in tuples.iter().enumerate() {
        let name = format!("{PROBE_MODULE}::PROBE_{i}");
        let dump = parsed
            .allocs
            .values()
            .find(|a| a.static_path.as_deref() == Some(name.as_str()))
            .ok_or_else(|| ProbeError::Missing(name.clone()))?;
        let words: Option<Vec<u64>> = dump
            .bytes
            .chunks(8)
            .map(|c| {
                let bytes: Option<Vec<u8>> = c.iter().copied().collect();
                Some(u64::from_le_bytes(bytes?.try_into().ok()?))
            })
            .collect();
        let words = words.ok_or_else(|| ProbeError::NotWords(name.clone()))?;
        let [size, align, offsets @ ..] = words.as_slice() else {
            return Err(ProbeError::TooShort(name));
        };
        out.by_type
            .insert(t.to_string(), (*size, *align, offsets.to_vec()));
    }
    for (i, (t, _)) in niche_enums.iter().enumerate() {
        let name = format!("{PROBE_MODULE}::NICHE_{i}");
        let dump = parsed
            .allocs
            .values()
            .find(|a| a.static_path.as_deref() == Some(name.as_str()))
            .ok_or_else(|| ProbeError::Missing(name.clone()))?;
        if let Some(niche) = zero_niche(&dump.bytes) {
            out.niches.insert(t.to_string(), niche);
        }
    }
    Ok(out)
}

/// The (offset, size) of the one run of initialized bytes in a static's
/// printed bytes, when they are all zero and the run is 1, 2, 4 or 8 bytes:
/// the niche that stores a field-less variant. `None` for anything else,
/// which leaves the enum's encoding unproven.
pub fn zero_niche(bytes: &[Option<u8>]) -> Option<(u64, u64)> {
    let start = bytes.iter().position(Option::is_some)?;
    let len = bytes[start..].iter().take_while(|b| b.is_some()).count();
    let rest_uninit = bytes[start + len..].iter().all(Option::is_none);
    let zeros = bytes[start..start + len].iter().all(|b| *b == Some(0));
    (rest_uninit && zeros && matches!(len, 1 | 2 | 4 | 8)).then_some((start as u64, len as u64))
}
