//! The declaration order of a dependency struct's fields, asked of rustc.
//!
//! MIR projects a field by its index in declaration order (`(*_3).0`); the
//! layout report names fields, in memory order. For the kernel's structs
//! the source gives the order, for others an aggregate that builds the
//! struct or a constant of it ([`super::field_name_map`]), or the source of
//! the dependency module that declares it. A dependency's struct that the
//! kernel only reads through a pointer and that a macro declares (nalgebra's
//! `XYZ<f32>`, which `Vector3` derefs to) has none of these. The layout
//! probe then asks rustc, one function per field:
//!
//! ```text
//! pub fn FIELD_3_1(v: &nalgebra::coordinates::XYZ<f32>) -> *const u8 { (&raw const v.r#y).cast() }
//! ```
//!
//! whose MIR takes `&raw const ((*_1).1: f32)`: `y` is field 1. A field the
//! probe cannot reach (a private one) costs its struct the probe, and the
//! lowering refuses what reads it, as before.

use std::collections::{BTreeMap, BTreeSet};

use crate::layout::TypeShape;
use crate::model::{Crate, Local, PlaceElem, Rvalue, StatementKind, Ty};
use crate::parse::ParsedMir;

/// The prefix of the probe functions' names (`FIELD_3_1`: struct 3, field 1
/// in memory order).
pub const FIELD_PREFIX: &str = "FIELD";

/// A struct whose field order the probe asks for.
#[derive(Clone, Debug)]
pub struct FieldOrderProbe {
    /// The struct, with its arguments.
    pub ty: Ty,
    /// Its fields' names, in the layout report's (memory) order.
    pub names: Vec<String>,
}

/// The dependency structs among `adts` whose field order nothing printed
/// and whose fields the report names (not a tuple struct's `0`, `1`).
pub fn candidates(krate: &Crate, adts: &BTreeSet<Ty>) -> Vec<FieldOrderProbe> {
    let known = super::field_name_map(krate);
    adts.iter()
        .filter(|t| super::probe::foreign(t) && super::probe::nameable(t))
        .filter_map(|t| {
            let Ty::Adt(p) = t else { return None };
            if known.contains_key(&p.def_path()) {
                return None;
            }
            let layout = krate.layouts.get(&t.to_string())?;
            let TypeShape::Struct { fields } = &layout.shape else {
                return None;
            };
            let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
            (names.len() >= 2 && names.iter().all(|n| is_identifier(n))).then(|| FieldOrderProbe {
                ty: t.clone(),
                names,
            })
        })
        .collect()
}

/// Whether `name` is a plain identifier (a named field, not a keyword's
/// raw form or a tuple index).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The probe functions for struct `i`, one line each, so that an error
/// rustc reports on a line names the function. Fields are written as raw
/// identifiers (`v.r#type`): a field may be named by a keyword.
pub fn source(i: usize, probe: &FieldOrderProbe) -> String {
    let ty = probe.ty.to_rust_source();
    probe
        .names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            format!(
                "pub fn {FIELD_PREFIX}_{i}_{k}(v: &{ty}) -> *const u8 {{ (&raw const v.r#{name}).cast() }}\n"
            )
        })
        .collect()
}

/// Whether the probe function `name` (`FIELD_3_1`) belongs to struct `i`.
pub fn is_probe_of(name: &str, i: usize) -> bool {
    name.strip_prefix(&format!("{FIELD_PREFIX}_{i}_"))
        .is_some_and(|k| k.chars().all(|c| c.is_ascii_digit()))
}

/// The field names of struct `i` in declaration order, read from the
/// probe's MIR (`module` is the probe module's printed path): `None` unless each
/// function projects a different field and together they cover them all.
pub fn read(
    parsed: &ParsedMir,
    module: &str,
    i: usize,
    probe: &FieldOrderProbe,
) -> Option<Vec<String>> {
    let mut by_index: BTreeMap<u32, String> = BTreeMap::new();
    for (k, name) in probe.names.iter().enumerate() {
        let path = format!("{module}::{FIELD_PREFIX}_{i}_{k}");
        let body = parsed.bodies.iter().find(|b| b.path.def_path() == path)?;
        let index = body.blocks.values().find_map(|bb| {
            bb.statements.iter().find_map(|st| match &st.kind {
                StatementKind::Assign(_, Rvalue::RawPtr(_, place))
                    if place.local == Local::from_u32(1) =>
                {
                    match place.projection.as_slice() {
                        [PlaceElem::Deref, PlaceElem::Field(n, _)] => Some(*n),
                        _ => None,
                    }
                }
                _ => None,
            })
        })?;
        if by_index.insert(index, name.clone()).is_some() {
            return None;
        }
    }
    let complete = by_index.keys().copied().eq(0..probe.names.len() as u32);
    complete.then(|| by_index.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xyz() -> FieldOrderProbe {
        FieldOrderProbe {
            ty: Ty::Adt(crate::model::Path::plain("dep::XYZ")),
            // Memory order, as the report prints it.
            names: vec!["y".into(), "x".into()],
        }
    }

    fn probe_mir(first: u32, second: u32) -> ParsedMir {
        let f = |k: u32, n: u32| {
            format!(
                "fn __probe::FIELD_0_{k}(_1: &dep::XYZ) -> *const u8 {{
    let mut _0: *const u8;
    let mut _2: *const u32;

    bb0: {{
        _2 = &raw const ((*_1).{n}: u32);
        _0 = copy _2 as *const u8 (PtrToPtr);
        return;
    }}
}}
"
            )
        };
        let text = format!("{}\n{}", f(0, first), f(1, second));
        crate::parse::parse_mir(&text).expect("the probe's MIR parses")
    }

    #[test]
    fn the_projected_indices_give_the_declaration_order() {
        let order = read(&probe_mir(1, 0), "__probe", 0, &xyz());
        assert_eq!(order, Some(vec!["x".to_string(), "y".to_string()]));
    }

    #[test]
    fn indices_that_repeat_or_leave_a_gap_give_nothing() {
        assert_eq!(read(&probe_mir(0, 0), "__probe", 0, &xyz()), None);
        assert_eq!(read(&probe_mir(0, 2), "__probe", 0, &xyz()), None);
        // A function rustc refused (absent from the MIR) leaves it unknown.
        assert_eq!(read(&probe_mir(1, 0), "__probe", 1, &xyz()), None);
    }

    #[test]
    fn probe_lines_name_their_struct() {
        let src = source(3, &xyz());
        assert_eq!(
            src.lines().next(),
            Some("pub fn FIELD_3_0(v: &dep::XYZ) -> *const u8 { (&raw const v.r#y).cast() }")
        );
        assert!(is_probe_of("FIELD_3_1", 3));
        assert!(!is_probe_of("FIELD_31_1", 3));
        assert!(!is_identifier("0") && !is_identifier("r#type") && is_identifier("x_1"));
    }
}
