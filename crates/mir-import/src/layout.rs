//! rustc's own layouts, read from `-Zprint-type-sizes`.
//!
//! The report lists, per type, its size and alignment, then its fields in memory
//! order with padding between them; enums list a discriminant line (when the tag
//! is stored directly) and each variant's fields. Offsets are derived by walking
//! that listing. Where the report does not say enough to be certain (a niche
//! encoding prints no discriminant line; tag values are never printed) the table
//! records `Unknown` instead of guessing, and later stages use a typed view.
//!
//! The report does not print tuples or arrays at all (see DESIGN.md, "Measured
//! facts"); their layouts are absent from the table.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use crate::model::Ty;

/// A field's place in memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldLayout {
    /// The field's name as printed, without the leading `.` (`0`, `start`).
    pub name: String,
    /// Byte offset from the start of the type.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// Alignment, when printed (rustc prints it only when it differs from size).
    pub align: Option<u64>,
}

/// One variant of an enum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VariantLayout {
    /// The variant's name.
    pub name: String,
    /// Its size as printed (from the start of the type, including the tag).
    pub size: u64,
    /// Its fields in memory order, with offsets from the start of the type.
    pub fields: Vec<FieldLayout>,
}

/// How an enum stores which variant it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum TagLayout {
    /// A discriminant stored directly at `offset`, `size` bytes wide. Its values
    /// per variant are not printed by rustc.
    Direct {
        /// Byte offset of the tag.
        offset: u64,
        /// Tag size in bytes.
        size: u64,
    },
    /// No discriminant line: a niche encoding or a single-variant enum. Where
    /// the niche lives is not printed.
    Unknown,
}

/// The layout of a struct, union, closure or enum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum TypeShape {
    /// A struct-like type: fields in memory order.
    Struct {
        /// Its fields.
        fields: Vec<FieldLayout>,
    },
    /// An enum.
    Enum {
        /// How the variant is stored.
        tag: TagLayout,
        /// The variants, in the order printed (largest first, not declaration order).
        variants: Vec<VariantLayout>,
    },
}

/// One type's layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TypeLayout {
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// Fields or variants.
    pub shape: TypeShape,
}

/// Layouts by type name as rustc prints it (with untrimmed paths).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LayoutTable {
    /// The layouts.
    pub types: BTreeMap<String, TypeLayout>,
    /// The structs known to be dynamically sized (`struct Packet { n: u32,
    /// data: [u32] }`), by name in std's spelling ([`std_spelling`]), from
    /// the MIR's use or the layout probe (`eval::sizedness`).
    /// The report cannot tell them apart: it prints a DST's sized prefix as
    /// its layout, and a pointer to it is fat.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub unsized_adts: BTreeSet<String>,
    /// The structs and enums known to be sized, by the same sources: one in
    /// neither set is unknown.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub sized_adts: BTreeSet<String>,
    /// Names the report printed with two different layouts: two types
    /// that print alike (a generic function's closure at two types), none
    /// of whose layouts is used.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub ambiguous: BTreeSet<String>,
}

/// A line of the report the reader did not understand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("type-size report line {line}: {message}: `{text}`")]
pub struct LayoutError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
    /// The line.
    pub text: String,
}

const PREFIX: &str = "print-type-size ";

/// `name` with every path that starts at `core::` spelled from `std::`
/// (`rand_core::X` is left alone: only a whole first segment counts).
pub fn std_spelling(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find("core::") {
        let before = &rest[..at];
        let boundary = before
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'));
        out.push_str(before);
        out.push_str(if boundary { "std::" } else { "core::" });
        rest = &rest[at + "core::".len()..];
    }
    out.push_str(rest);
    out
}

impl LayoutTable {
    /// Whether a pointer to `ty` is fat: a slice, `str`, `dyn Trait`, a
    /// struct known to be dynamically sized, or a tuple ending in one of
    /// these. A struct of unknown sizedness counts as sized here;
    /// [`Self::sizedness`] tells it apart.
    pub fn is_unsized(&self, ty: &Ty) -> bool {
        self.sizedness(ty) == Some(false)
    }

    /// `Some(true)` for a type known to be sized, `Some(false)` for one known
    /// to be dynamically sized, `None` for a struct or enum (or a tuple
    /// ending in one) whose sizedness neither the MIR's use nor the probe
    /// showed.
    pub fn sizedness(&self, ty: &Ty) -> Option<bool> {
        if ty.is_unsized() {
            return Some(false);
        }
        let Ty::Adt(_) = ty else {
            // A tuple is as sized as its last element (`(u16, [u8])` is not).
            return match ty {
                Ty::Tuple(elems) => elems.last().map_or(Some(true), |t| self.sizedness(t)),
                _ => Some(true),
            };
        };
        let name = std_spelling(&ty.to_string());
        if self.unsized_adts.contains(&name) {
            Some(false)
        } else if self.sized_adts.contains(&name) {
            Some(true)
        } else {
            None
        }
    }

    /// The layout of the type printed as `name`.
    ///
    /// A `no_std` dependency's MIR spells std's types through `core`
    /// (`core::slice::Iter<'_, u8>`) where the kernel's report, whose crate
    /// links std, prints `std::slice::Iter<'_, u8>`: the same type, so a
    /// name not found as printed is looked up in std's spelling.
    pub fn get(&self, name: &str) -> Option<&TypeLayout> {
        self.types
            .get(name)
            .or_else(|| self.types.get(&std_spelling(name)))
    }

    /// Records the captures of the closure type printed as `closure`, of
    /// `sizes` bytes each, where their offsets are certain. The report prints
    /// a closure's captures as end padding, and rustc reorders fields, so in
    /// general they are unknown; but zero-sized captures need no offset (0
    /// will do), and a single capture that is not zero-sized and fills the
    /// closure can only be at 0. Any other closure keeps no fields, and an
    /// access to one refuses.
    pub fn record_captures(&mut self, closure: &str, sizes: &[u64]) {
        let Some(l) = self.types.get_mut(closure) else {
            return;
        };
        let sized: Vec<u64> = sizes.iter().copied().filter(|&s| s > 0).collect();
        let certain = match sized.as_slice() {
            [] => true,
            [only] => *only == l.size,
            _ => false,
        };
        // A zero-sized closure is `Shape::Zst` as it is.
        if let TypeShape::Struct { fields } = &mut l.shape
            && fields.is_empty()
            && certain
            && l.size > 0
        {
            for (i, &size) in sizes.iter().enumerate() {
                fields.push(FieldLayout {
                    name: i.to_string(),
                    offset: 0,
                    size,
                    align: None,
                });
            }
        }
    }

    /// Records the captures of the closure type printed as `closure` at
    /// `offsets` (with `sizes`), measured on a tuple laid out as the closure
    /// is (see [`crate::Crate::closure_proxies`]) whose size and
    /// alignment were `size` and `align`. Nothing is recorded unless those are
    /// the closure's own, as the report printed them.
    pub fn record_capture_offsets(
        &mut self,
        closure: &str,
        size: u64,
        align: u64,
        sizes: &[u64],
        offsets: &[u64],
    ) {
        let Some(l) = self.types.get_mut(closure) else {
            return;
        };
        if l.size != size || l.align != align || offsets.len() < sizes.len() {
            return;
        }
        if let TypeShape::Struct { fields } = &mut l.shape
            && fields.is_empty()
        {
            for (i, (&size, &offset)) in sizes.iter().zip(offsets).enumerate() {
                fields.push(FieldLayout {
                    name: i.to_string(),
                    offset,
                    size,
                    align: None,
                });
            }
        }
    }

    /// Reads a `-Zprint-type-sizes` report. Lines without the report's prefix
    /// (other compiler output) are ignored.
    pub fn parse(report: &str) -> Result<LayoutTable, LayoutError> {
        // rustc may print the same type twice (once per codegen use),
        // identically; two types that print alike may differ.
        let mut types = crate::unambiguous::Unambiguous::default();
        let mut current: Option<(String, Builder)> = None;
        for (idx, raw) in report.lines().enumerate() {
            let Some(body) = raw.strip_prefix(PREFIX) else {
                continue;
            };
            let err = |m: &str| LayoutError {
                line: idx + 1,
                message: m.into(),
                text: raw.into(),
            };
            let indent = body.len() - body.trim_start().len();
            let body = body.trim_start();
            if indent == 0 {
                if let Some((name, b)) = current.take() {
                    types.insert(name, b.finish());
                }
                let (name, size, align) =
                    parse_type_line(body).ok_or_else(|| err("bad type line"))?;
                current = Some((name, Builder::new(size, align)));
                continue;
            }
            let (_, b) = current
                .as_mut()
                .ok_or_else(|| err("entry before any type line"))?;
            b.entry(indent, body).map_err(err)?;
        }
        if let Some((name, b)) = current.take() {
            types.insert(name, b.finish());
        }
        let (types, ambiguous) = types.into_parts();
        Ok(LayoutTable {
            types,
            ambiguous,
            ..LayoutTable::default()
        })
    }
}

/// `type: `E`: 8 bytes, alignment: 4 bytes`
fn parse_type_line(body: &str) -> Option<(String, u64, u64)> {
    let rest = body.strip_prefix("type: `")?;
    let (name, rest) = rest.rsplit_once("`: ")?;
    let (size, align) = rest.split_once(", alignment: ")?;
    Some((name.to_string(), bytes(size)?, bytes(align)?))
}

/// `8 bytes` -> 8
fn bytes(s: &str) -> Option<u64> {
    s.trim()
        .strip_suffix(" bytes")
        .or_else(|| s.trim().strip_suffix(" byte"))?
        .parse()
        .ok()
}

/// `field `.0`: 4 bytes, alignment: 4 bytes` or `field `.x`: 4 bytes, offset: 0 bytes, ...`
fn parse_field(rest: &str) -> Option<(String, u64, Option<u64>, Option<u64>)> {
    let rest = rest.strip_prefix('`')?;
    let (name, rest) = rest.split_once("`: ")?;
    let mut parts = rest.split(", ");
    let size = bytes(parts.next()?)?;
    let (mut align, mut offset) = (None, None);
    for p in parts {
        if let Some(a) = p.strip_prefix("alignment: ") {
            align = Some(bytes(a)?);
        } else if let Some(o) = p.strip_prefix("offset: ") {
            offset = Some(bytes(o)?);
        } else {
            return None;
        }
    }
    Some((
        name.trim_start_matches('.').to_string(),
        size,
        align,
        offset,
    ))
}

struct Builder {
    size: u64,
    align: u64,
    fields: Vec<FieldLayout>,
    cursor: u64,
    tag: Option<(u64, u64)>,
    variants: Vec<VariantLayout>,
}

impl Builder {
    fn new(size: u64, align: u64) -> Self {
        Builder {
            size,
            align,
            fields: Vec::new(),
            cursor: 0,
            tag: None,
            variants: Vec::new(),
        }
    }

    /// Reads one entry line; the error, a fixed phrase, is positioned by the
    /// caller into a [`LayoutError`].
    fn entry(&mut self, indent: usize, body: &str) -> Result<(), &'static str> {
        let in_variant = indent >= 8;
        if in_variant && self.variants.is_empty() {
            return Err("nested entry outside a variant");
        }
        if let Some(rest) = body.strip_prefix("discriminant: ") {
            let size = bytes(rest).ok_or("bad discriminant size")?;
            self.tag = Some((self.cursor, size));
            self.cursor += size;
        } else if let Some(rest) = body.strip_prefix("variant `") {
            let (name, size) = rest.split_once("`: ").ok_or("bad variant line")?;
            let size = bytes(size).ok_or("bad variant size")?;
            self.variants.push(VariantLayout {
                name: name.into(),
                size,
                fields: Vec::new(),
            });
            self.cursor = self.tag.map_or(0, |(off, sz)| off + sz);
        } else if let Some(rest) = body.strip_prefix("padding: ") {
            self.cursor += bytes(rest).ok_or("bad padding")?;
        } else if let Some(rest) = body.strip_prefix("end padding: ") {
            bytes(rest).ok_or("bad end padding")?;
        } else if let Some(rest) = body
            .strip_prefix("field ")
            .or_else(|| body.strip_prefix("upvar "))
            .or_else(|| body.strip_prefix("local "))
        {
            let (name, size, align, offset) = parse_field(rest).ok_or("bad field line")?;
            let offset = offset.unwrap_or(self.cursor);
            self.cursor = offset + size;
            let field = FieldLayout {
                name,
                offset,
                size,
                align,
            };
            match (in_variant, self.variants.last_mut()) {
                (true, Some(v)) => v.fields.push(field),
                _ => self.fields.push(field),
            }
        } else {
            return Err("unknown entry");
        }
        Ok(())
    }

    fn finish(self) -> TypeLayout {
        let shape = if self.variants.is_empty() && self.tag.is_none() {
            TypeShape::Struct {
                fields: self.fields,
            }
        } else {
            let tag = match self.tag {
                Some((offset, size)) => TagLayout::Direct { offset, size },
                None => TagLayout::Unknown,
            };
            TypeShape::Enum {
                tag,
                variants: self.variants,
            }
        };
        TypeLayout {
            size: self.size,
            align: self.align,
            shape,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_paths_are_looked_up_in_std_spelling() {
        assert_eq!(
            std_spelling("core::option::Option<&mut [core::slice::Iter<'_, rand_core::X>]>"),
            "std::option::Option<&mut [std::slice::Iter<'_, rand_core::X>]>"
        );
        assert_eq!(
            std_spelling("<core::a::B as core::C>::d"),
            "<std::a::B as std::C>::d"
        );
        assert_eq!(std_spelling("my::core::T"), "my::core::T");
    }

    const REPORT: &str = "\
print-type-size type: `E`: 8 bytes, alignment: 4 bytes
print-type-size     discriminant: 1 bytes
print-type-size     variant `B`: 7 bytes
print-type-size         padding: 3 bytes
print-type-size         field `.0`: 4 bytes, alignment: 4 bytes
print-type-size     variant `A`: 1 bytes
print-type-size         field `.0`: 1 bytes
print-type-size     variant `C`: 0 bytes
print-type-size type: `P`: 8 bytes, alignment: 4 bytes
print-type-size     field `.1`: 4 bytes
print-type-size     field `.2`: 2 bytes
print-type-size     field `.0`: 1 bytes
print-type-size     end padding: 1 bytes
print-type-size type: `std::option::Option<&u32>`: 8 bytes, alignment: 8 bytes
print-type-size     variant `Some`: 8 bytes
print-type-size         field `.0`: 8 bytes
print-type-size     variant `None`: 0 bytes
";

    #[test]
    fn one_name_printed_with_two_layouts_has_none() {
        let closure = |size: u64| {
            format!(
                "print-type-size type: `{{closure@k.rs:3:13: 3:16}}`: {size} bytes, alignment: {size} bytes\n"
            )
        };
        // Printed twice alike: one type, printed once per use.
        let same = LayoutTable::parse(&format!("{}{}", closure(4), closure(4))).expect("parses");
        assert_eq!(
            same.get("{closure@k.rs:3:13: 3:16}").map(|l| l.size),
            Some(4)
        );
        // A generic function's closure at `u32` and at `u64`.
        let two = LayoutTable::parse(&format!("{}{}", closure(4), closure(8))).expect("parses");
        assert!(two.get("{closure@k.rs:3:13: 3:16}").is_none());
        assert!(two.ambiguous.contains("{closure@k.rs:3:13: 3:16}"));
    }

    #[test]
    fn struct_offsets_follow_memory_order() {
        let t = LayoutTable::parse(REPORT).expect("parses");
        let TypeShape::Struct { fields } = &t.get("P").expect("P").shape else {
            panic!("P is a struct")
        };
        let offs: Vec<(&str, u64)> = fields.iter().map(|f| (f.name.as_str(), f.offset)).collect();
        assert_eq!(offs, vec![("1", 0), ("2", 4), ("0", 6)]);
    }

    #[test]
    fn enum_variant_fields_start_after_the_tag() {
        let t = LayoutTable::parse(REPORT).expect("parses");
        let TypeShape::Enum { tag, variants } = &t.get("E").expect("E").shape else {
            panic!("E is an enum")
        };
        assert_eq!(*tag, TagLayout::Direct { offset: 0, size: 1 });
        assert_eq!(variants[0].fields[0].offset, 4);
        assert_eq!(variants[1].fields[0].offset, 1);
    }

    #[test]
    fn niche_enum_tag_is_unknown() {
        let t = LayoutTable::parse(REPORT).expect("parses");
        let l = t.get("std::option::Option<&u32>").expect("Option");
        assert!(matches!(
            &l.shape,
            TypeShape::Enum {
                tag: TagLayout::Unknown,
                ..
            }
        ));
    }

    #[test]
    fn garbage_line_is_an_error() {
        let e = LayoutTable::parse("print-type-size type: `X` 4 bytes").expect_err("bad");
        assert_eq!(e.line, 1);
    }
}
