//! The niche probe's last resort: rustc's own layout report.
//!
//! `-Zprint-type-sizes` prints no tag for a niche-encoded enum, and the
//! static probe ([`super::probe`]) only sees a niche through a field-less
//! variant it can build. `Result<&[u8], PodCastError>` (bytemuck's
//! `try_cast_slice`) has none: `Err` stores a null pointer and the error
//! beside it. For such enums the kernel is compiled once more with
//! `#[rustc_layout(debug)]` on a type alias of each (`rustc_attrs`, under
//! the `RUSTC_BOOTSTRAP=1` the import already sets), and rustc reports the
//! layout it chose as an error: the tag's scalar and field, the untagged
//! variant, the niche variants and the niche's first value. Nothing is
//! inferred: an enum whose report is missing or does not read as a niche
//! stays unproven, and the lowering refuses it by name as before.
//!
//! The report is rustc's `Debug` output, which is not a stable format; the
//! reader takes only the six fields it needs, and its unit test pins the
//! text of the toolchain this workspace is built with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::layout::{ProbedNiche, ProbedVariant};
use super::probe::{ProbeError, behind_stand_ins, root_line};
use crate::layout::VariantLayout;
use crate::model::Ty;
use crate::rustc::{RustcOptions, extra_module_first_line, run_rustc_layout_report};

/// The module name of the report's aliases inside the crate root.
pub const REPORT_MODULE: &str = "__layout_report";

/// Of `untagged` ([`super::probe::untagged_enums`]), the enums with more
/// than one variant, except the nullable pointers Rust guarantees.
pub fn candidates(untagged: &[(Ty, u64, &[VariantLayout])]) -> BTreeSet<Ty> {
    untagged
        .iter()
        .filter(|(t, size, variants)| {
            variants.len() >= 2 && super::layout::null_niche(t, *size, variants).is_none()
        })
        .map(|(t, _, _)| t.clone())
        .collect()
}

/// The module with one reported alias per enum (`LAYOUT_3`). References get
/// `'static`, which a type alias needs and which changes no layout.
pub fn report_source(enums: &[Ty]) -> String {
    let mut s = String::from("#[allow(unused_imports)]\nuse crate::kernel::*;\n");
    // Closures' proxies, inside an enum that holds a closure.
    s.push_str(&crate::model::proxy_struct_declarations());
    for (i, t) in enums.iter().enumerate() {
        let src = behind_stand_ins(t)
            .to_rust_source()
            .replace('&', "&'static ");
        s.push_str(&format!(
            "#[rustc_layout(debug)]\npub type LAYOUT_{i} = {src};\n"
        ));
    }
    s
}

/// rustc's niches for `enums`, by type as printed. An enum rustc's report
/// does not give (a private type the module cannot name, a report that does
/// not read as a niche) is left out.
///
/// # Errors
///
/// [`ProbeError`] when rustc cannot be run at all.
pub fn probe(
    kernel: &Path,
    opts: &RustcOptions,
    enums: &[Ty],
) -> Result<BTreeMap<String, ProbedNiche>, ProbeError> {
    let mut out = BTreeMap::new();
    if enums.is_empty() {
        return Ok(out);
    }
    let src = report_source(enums);
    let stderr = run_rustc_layout_report(kernel, opts, (REPORT_MODULE, &src))?;
    let reports = reports_by_line(&stderr);
    let private = stderr.contains("E0603");
    // The root.rs line of each enum's alias.
    let first = extra_module_first_line();
    let lines: Vec<&str> = src.lines().collect();
    let alias_lines: Vec<Option<usize>> = (0..enums.len())
        .map(|i| {
            let alias = format!("pub type LAYOUT_{i} ");
            lines
                .iter()
                .position(|l| l.starts_with(&alias))
                .map(|at| first + at)
        })
        .collect();
    let mut unreported = false;
    for (t, line) in enums.iter().zip(&alias_lines) {
        let Some(line) = line else { continue };
        match reports.get(line) {
            Some(r) => {
                if let Some(n) = read_niche(r) {
                    out.insert(t.to_string(), n);
                }
            }
            None => unreported = true,
        }
    }
    // A private type stops rustc before any layout is reported: the rest
    // are asked again without the ones it named, once.
    if private && out.is_empty() && unreported {
        let named = private_lines(&stderr);
        let keep: Vec<Ty> = enums
            .iter()
            .zip(&alias_lines)
            .filter(|(_, line)| !line.is_some_and(|l| named.contains(&l)))
            .map(|(t, _)| t.clone())
            .collect();
        if keep.len() < enums.len() && !keep.is_empty() {
            return probe(kernel, opts, &keep);
        }
    }
    Ok(out)
}

/// Each `layout_of(..) = Layout { .. }` report of `stderr`, by the root.rs
/// line its `-->` names.
fn reports_by_line(stderr: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    for chunk in stderr.split("error: layout_of(").skip(1) {
        let Some(line) = chunk.lines().find_map(root_line) else {
            continue;
        };
        out.entry(line).or_insert_with(|| chunk.to_string());
    }
    out
}

/// The root.rs lines of rustc's E0603 (private item) errors.
fn private_lines(stderr: &str) -> BTreeSet<usize> {
    stderr
        .split("error[E0603]")
        .skip(1)
        .filter_map(|chunk| chunk.lines().find_map(root_line))
        .collect()
}

/// The niche of one report, or `None` when it is not a niche encoding.
pub fn read_niche(report: &str) -> Option<ProbedNiche> {
    let text: String = report.chars().filter(|c| !c.is_whitespace()).collect();
    let (outer, multiple) = text.split_once("variants:Multiple{")?;
    let tag = after(multiple, "tag:Initialized{value:")?;
    let size = if tag.starts_with("Pointer(") {
        8
    } else {
        match tag.strip_prefix("Int(")?.split(',').next()? {
            "I8" => 1,
            "I16" => 2,
            "I32" => 4,
            "I64" => 8,
            "I128" => 16,
            _ => return None,
        }
    };
    let niche = after(multiple, "tag_encoding:Niche{")?;
    let untagged: u32 = number(after(niche, "untagged_variant:")?)?;
    let range = after(niche, "niche_variants:")?;
    let (first, last) = range.split_once("..=")?;
    let (first, last): (u32, u32) = (number(first)?, number(last)?);
    let start: u128 = number(after(niche, "niche_start:")?)?;
    let tag_field: usize = number(after(multiple, "tag_field:")?)?;
    let offsets = after(outer, "fields:Arbitrary{offsets:[")?;
    let offsets = offsets.split(']').next()?;
    let offset: u64 = number(offsets.split("Size(").nth(tag_field + 1)?)?;
    let mask = if size == 16 {
        u128::MAX
    } else {
        (1u128 << (8 * size)) - 1
    };
    let tagged = (first..=last)
        .filter(|&v| v != untagged)
        .map(|v| {
            let value = start.wrapping_add(u128::from(v - first)) & mask;
            (ProbedVariant::Index(v), value)
        })
        .collect();
    // The outer layout's size comes first, before any variant's.
    let enum_size: u64 = number(after(outer, "size:Size(")?)?;
    Some(ProbedNiche {
        offset,
        size,
        untagged: ProbedVariant::Index(untagged),
        tagged,
        enum_size,
    })
}

/// The text after the first `key` in `text`.
fn after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.split_once(key).map(|(_, rest)| rest)
}

/// The decimal number at the start of `text`.
fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report rustc 1.95 prints for `Result<&[u8], E>` with `E` a
    /// four-variant field-less enum, cut to the top level (the per-variant
    /// layouts follow `variants: [`).
    const RESULT_SLICE: &str = "Result<&[u8], PodCastError>) = Layout {
           size: Size(16 bytes),
           align: AbiAlign {
               abi: Align(8 bytes),
           },
           backend_repr: Memory {
               sized: true,
           },
           fields: Arbitrary {
               offsets: [
                   Size(0 bytes),
               ],
               in_memory_order: [
                   0,
               ],
           },
           largest_niche: None,
           uninhabited: false,
           variants: Multiple {
               tag: Initialized {
                   value: Pointer(
                       AddressSpace(
                           0,
                       ),
                   ),
                   valid_range: (..=0) | (1..),
               },
               tag_encoding: Niche {
                   untagged_variant: 0,
                   niche_variants: 1..=1,
                   niche_start: 0,
               },
               tag_field: 0,
               variants: [
                   Layout {
                       size: Size(16 bytes),
 --> /work/root.rs:9:1
";

    #[test]
    fn a_pointer_niche_is_read_with_its_variant_indices() {
        let n = read_niche(RESULT_SLICE).expect("a niche");
        assert_eq!((n.offset, n.size), (0, 8));
        assert_eq!(n.untagged, ProbedVariant::Index(0));
        assert_eq!(n.tagged, [(ProbedVariant::Index(1), 0)]);
        assert_eq!(n.enum_size, 16);
        // The whole enum's size is the outer layout's, not a variant's.
        let larger = RESULT_SLICE.replacen("size: Size(16 bytes)", "size: Size(24 bytes)", 1);
        assert_eq!(read_niche(&larger).map(|n| n.enum_size), Some(24));
    }

    #[test]
    fn niche_values_count_from_niche_start_and_wrap_in_the_tag() {
        // `enum E { A(bool), B, C }` in a byte at offset 4: B and C store
        // 2 and 3; a start of 255 wraps to 0 for the next variant.
        let report = RESULT_SLICE
            .replace("Size(0 bytes),\n               ],\n               in_memory_order", "Size(4 bytes),\n               ],\n               in_memory_order")
            .replace("value: Pointer(\n                       AddressSpace(\n                           0,\n                       ),\n                   ),", "value: Int(\n                       I8,\n                       false,\n                   ),")
            .replace("niche_variants: 1..=1", "niche_variants: 0..=2")
            .replace("niche_start: 0", "niche_start: 254");
        let n = read_niche(&report).expect("a niche");
        assert_eq!((n.offset, n.size), (4, 1));
        assert_eq!(
            n.tagged,
            [(ProbedVariant::Index(1), 255), (ProbedVariant::Index(2), 0)]
        );
    }

    #[test]
    fn a_direct_tag_is_not_read_as_a_niche() {
        let report = RESULT_SLICE.replace(
            "tag_encoding: Niche {\n                   untagged_variant: 0,\n                   niche_variants: 1..=1,\n                   niche_start: 0,\n               },",
            "tag_encoding: Direct,",
        );
        assert_eq!(read_niche(&report), None);
    }

    #[test]
    fn reports_are_found_by_the_line_rustc_names() {
        let stderr = format!("warning: x\nerror: layout_of({RESULT_SLICE}\nerror: aborting\n");
        let by_line = reports_by_line(&stderr);
        assert_eq!(by_line.keys().copied().collect::<Vec<_>>(), [9]);
    }
}
