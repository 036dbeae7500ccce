//! Allocation dumps: `allocN (static: S, size: 16, align: 8) { ... }`.
//!
//! Rows hold up to 16 bytes as hex pairs, `__` for uninitialized bytes, and
//! relocation boxes `╾──allocN+0xK<imm>──╼` that span the pointer's bytes (three
//! columns per byte). Allocations over 16 bytes prefix each row with a `0xNN │`
//! offset column. Every row ends with an ASCII rendering after `│`, which is
//! ignored.

use super::error::{ParseError, Pos};
use crate::model::{AllocDump, AllocId, Relocation};

/// Parses the header line of an allocation dump.
pub fn parse_alloc_header(line: &str, pos: Pos) -> Result<AllocDump, ParseError> {
    let err = |m: &str| ParseError::new(pos, m, line);
    let rest = line
        .strip_prefix("alloc")
        .ok_or_else(|| err("expected `allocN`"))?;
    let (num, rest) = rest
        .split_once(' ')
        .ok_or_else(|| err("bad allocation header"))?;
    let id = AllocId(num.parse().map_err(|_| err("bad allocation number"))?);
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(") {").or_else(|| r.strip_suffix(") {}")))
        .ok_or_else(|| err("expected `(...) {` after the allocation id"))?;
    let mut dump = AllocDump {
        id,
        static_path: None,
        size: 0,
        align: 0,
        bytes: Vec::new(),
        relocations: Vec::new(),
    };
    let (mut have_size, mut have_align) = (false, false);
    for part in inner.split(", ") {
        let (key, value) = part
            .split_once(": ")
            .ok_or_else(|| err("bad allocation attribute"))?;
        match key {
            "static" => dump.static_path = Some(value.to_string()),
            "size" => {
                dump.size = value.parse().map_err(|_| err("bad allocation size"))?;
                have_size = true;
            }
            "align" => {
                dump.align = value.parse().map_err(|_| err("bad allocation alignment"))?;
                have_align = true;
            }
            _ => return Err(err(&format!("unknown allocation attribute `{key}`"))),
        }
    }
    if !(have_size && have_align) {
        return Err(err("allocation header lacks its size or alignment"));
    }
    if !dump.align.is_power_of_two() {
        return Err(err("allocation alignment is not a power of two"));
    }
    Ok(dump)
}

/// What an allocation printed only by name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocName {
    /// `allocN (static: PATH)`: a static whose bytes are not dumped there.
    Static(String),
    /// `allocN (fn: PATH)`: a function, the target of a `fn` pointer stored
    /// in a constant.
    Function(crate::model::Path),
    /// `allocN (vtable: impl kernel::Shape + std::marker::Sync for
    /// kernel::Sq)`: the vtable making a concrete type an object of a
    /// principal trait, the metadata of a trait object pointer in a
    /// constant.
    Vtable {
        /// The concrete type.
        concrete: crate::model::Ty,
        /// The principal trait.
        principal: String,
    },
}

/// Parses `allocN (static: PATH)` or `allocN (fn: PATH)`: an allocation
/// named without its bytes.
pub fn parse_alloc_name(line: &str, pos: Pos) -> Result<(AllocId, AllocName), ParseError> {
    let err = |m: String| ParseError::new(pos, m, line);
    let bad = || err("bad allocation name line".into());
    let rest = line.trim_end().strip_prefix("alloc").ok_or_else(bad)?;
    let (num, rest) = rest.split_once(" (").ok_or_else(bad)?;
    let id = AllocId(num.parse().map_err(|_| bad())?);
    let inner = rest.strip_suffix(')').ok_or_else(bad)?;
    let (kind, path) = inner.split_once(": ").ok_or_else(bad)?;
    let name = match kind {
        "static" => AllocName::Static(path.to_string()),
        // `kernel::f - shim(reify)`: code rustc makes (a `#[track_caller]`
        // function's or a closure's shim), which has no body in the MIR.
        "fn" if path.contains(" - shim") => {
            return Err(err(format!(
                "allocation {id} points to `{path}`, a shim rustc generates: a `fn` pointer to it in a constant is not supported"
            )));
        }
        "fn" => AllocName::Function(super::parse_value_path(path).map_err(|e| {
            err(format!(
                "the function of allocation {id} (`{path}`) is not a path: {}",
                e.message
            ))
        })?),
        "vtable" => {
            let bad_vtable = || {
                err(format!(
                    "the vtable of allocation {id} (`{path}`) is not `impl TRAIT for TYPE` with a principal trait"
                ))
            };
            let implemented = path.strip_prefix("impl ").ok_or_else(bad_vtable)?;
            let (bounds, concrete) =
                crate::model::split_top_level(implemented, " for ").ok_or_else(bad_vtable)?;
            let principal =
                crate::model::principal(&format!("dyn {bounds}")).ok_or_else(bad_vtable)?;
            let concrete = super::parse_type(concrete).map_err(|e| {
                err(format!(
                    "the type of vtable allocation {id} (`{concrete}`) is not a type: {}",
                    e.message
                ))
            })?;
            AllocName::Vtable {
                concrete,
                principal,
            }
        }
        other => {
            return Err(err(format!(
                "allocation {id} is a `{other}` allocation, which is not supported (only statics, functions and vtables are)"
            )));
        }
    };
    Ok((id, name))
}

/// Parses one row of bytes into `dump`. `first_line` is the row's position.
pub fn parse_alloc_row(dump: &mut AllocDump, line: &str, pos: Pos) -> Result<(), ParseError> {
    let err = |m: String| ParseError::new(pos, m, line);
    let trimmed = line.trim_start();
    let (offset, hex) = if let Some(after) = trimmed.strip_prefix("0x") {
        let (off, rest) = after
            .split_once('│')
            .ok_or_else(|| err("bad allocation row".into()))?;
        let off = u64::from_str_radix(off.trim(), 16).map_err(|_| err("bad row offset".into()))?;
        let (hex, _ascii) = rest
            .split_once('│')
            .ok_or_else(|| err("row lacks `│`".into()))?;
        (off, hex)
    } else {
        let (hex, _ascii) = trimmed
            .split_once('│')
            .ok_or_else(|| err("row lacks `│`".into()))?;
        (dump.bytes.len() as u64, hex)
    };
    if offset != dump.bytes.len() as u64 {
        return Err(err(format!(
            "row starts at offset {offset:#x}, but {} bytes were read",
            dump.bytes.len()
        )));
    }
    for word in hex.split_whitespace() {
        if let Some(inner) = word.strip_prefix('╾') {
            let inner = inner
                .strip_suffix('╼')
                .ok_or_else(|| err(format!("relocation box `{word}` is not closed on its row")))?;
            let width = word.chars().count() as u64;
            if !(width + 1).is_multiple_of(3) {
                return Err(err(format!("relocation box `{word}` has an odd width")));
            }
            let size = (width + 1) / 3;
            let reloc_offset = dump.bytes.len() as u64;
            let (target, addend, immutable) = parse_reloc_label(inner.trim_matches('─'))
                .ok_or_else(|| err(format!("bad relocation `{word}`")))?;
            let addend_bytes = addend.to_le_bytes();
            for i in 0..size as usize {
                dump.bytes
                    .push(Some(addend_bytes.get(i).copied().unwrap_or(0)));
            }
            dump.relocations.push(Relocation {
                offset: reloc_offset,
                size,
                target,
                addend,
                immutable,
            });
        } else if word == "__" {
            dump.bytes.push(None);
        } else if word.len() == 2 {
            let b = u8::from_str_radix(word, 16).map_err(|_| err(format!("bad byte `{word}`")))?;
            dump.bytes.push(Some(b));
        } else {
            return Err(err(format!("bad allocation byte `{word}`")));
        }
    }
    Ok(())
}

/// `alloc6`, `alloc6+0x4`, `alloc6<imm>`, `a6+0x4<imm>`.
fn parse_reloc_label(label: &str) -> Option<(AllocId, u64, bool)> {
    let (label, immutable) = match label.strip_suffix("<imm>") {
        Some(l) => (l, true),
        None => (label, false),
    };
    let label = label
        .strip_prefix("alloc")
        .or_else(|| label.strip_prefix('a'))?;
    let (num, addend) = match label.split_once("+0x") {
        Some((n, a)) => (n, u64::from_str_radix(a, 16).ok()?),
        None => (label, 0),
    };
    Some((AllocId(num.parse().ok()?), addend, immutable))
}

/// Checks a finished dump: every byte present, relocations inside.
pub fn finish_alloc(dump: &AllocDump, pos: Pos) -> Result<(), ParseError> {
    if dump.bytes.len() as u64 != dump.size {
        return Err(ParseError::new(
            pos,
            format!(
                "{} declares {} bytes but its rows hold {}",
                dump.id,
                dump.size,
                dump.bytes.len()
            ),
            "",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Pos = Pos { line: 1, col: 1 };

    #[test]
    fn relocation_box_spans_pointer_bytes() {
        let mut d = parse_alloc_header("alloc4 (static: S, size: 16, align: 8) {", P).expect("hdr");
        parse_alloc_row(
            &mut d,
            "    ╾─────alloc6<imm>─────╼ 02 00 00 00 00 00 00 00 │ ╾──────╼........",
            P,
        )
        .expect("row");
        assert_eq!(d.relocations.len(), 1);
        assert_eq!(d.relocations[0].offset, 0);
        assert_eq!(d.relocations[0].size, 8);
        assert_eq!(d.relocations[0].target, AllocId(6));
        assert!(d.relocations[0].immutable);
        assert_eq!(d.bytes[8], Some(2));
        finish_alloc(&d, P).expect("complete");
    }

    #[test]
    fn addend_is_read_in_hex() {
        assert_eq!(
            parse_reloc_label("alloc9+0x1c<imm>"),
            Some((AllocId(9), 0x1c, true))
        );
    }

    #[test]
    fn bad_row_is_positioned() {
        let empty = parse_alloc_header("alloc7 (size: 0, align: 1) {}", P).expect("hdr");
        assert_eq!((empty.size, empty.align), (0, 1));
        assert!(finish_alloc(&empty, P).is_ok());
        let mut d = parse_alloc_header("alloc1 (size: 4, align: 4) {", P).expect("hdr");
        let at = Pos { line: 7, col: 1 };
        let e = parse_alloc_row(&mut d, "    0g 00 00 00 │ ....", at).expect_err("bad byte");
        assert_eq!(e.pos, at);
        assert!(e.message.contains("0g"), "{}", e.message);
    }
}
