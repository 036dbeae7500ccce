//! Values of the standard library's private constants that rustc leaves
//! unevaluated in the kernel's MIR (an aggregate constant of `core` is
//! printed by name, and `core`'s MIR is never printed). Each one here is a
//! table whose every entry its documentation defines exactly, so its value
//! is computed from that definition, independently of `core`'s code.
//! Any other such constant stays refused, by name.

use crate::model::{IntTy, Path, Scalar, ValTree};

/// The two spellings of the table behind `isqrt` (`u32::isqrt`,
/// `i64::isqrt`, ...): for each `u8` value `n`, its integer square root `r`
/// and the remainder `n - r * r`, as `[(u8, u8); 256]`.
const ISQRT_TABLE_PATHS: [&str; 2] = [
    "core::num::int_sqrt::U8_ISQRT_WITH_REMAINDER",
    "std::num::int_sqrt::U8_ISQRT_WITH_REMAINDER",
];

/// The value of the standard-library constant `path`, when it is one whose
/// entries its documentation defines; `None` for any other.
pub(super) fn known_value(path: &Path) -> Option<ValTree> {
    let def = path.def_path();
    ISQRT_TABLE_PATHS
        .contains(&def.as_str())
        .then(isqrt_with_remainder_table)
}

/// `[(isqrt(n), n - isqrt(n)²) for n in 0..=255]`, the root found as the
/// largest `r` whose square does not exceed `n`.
fn isqrt_with_remainder_table() -> ValTree {
    let byte = |v: u32| {
        ValTree::Scalar(Scalar::Int {
            bits: u128::from(v),
            ty: IntTy::U8,
        })
    };
    let entries = (0u32..256)
        .map(|n| {
            let root = (0u32..16).rev().find(|r| r * r <= n).unwrap_or(0);
            ValTree::Tuple(None, vec![byte(root), byte(n - root * root)])
        })
        .collect();
    ValTree::Array(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PathSegment;

    fn path(s: &str) -> Path {
        Path {
            segments: s
                .split("::")
                .map(|n| PathSegment {
                    name: n.to_string(),
                    args: Vec::new(),
                })
                .collect(),
        }
    }

    fn entry(table: &ValTree, n: usize) -> (u128, u128) {
        let ValTree::Array(entries) = table else {
            panic!("the table is an array");
        };
        let ValTree::Tuple(None, pair) = &entries[n] else {
            panic!("each entry is a pair");
        };
        let bits = |v: &ValTree| match v {
            ValTree::Scalar(Scalar::Int {
                bits,
                ty: IntTy::U8,
            }) => *bits,
            other => panic!("a u8, not {other:?}"),
        };
        (bits(&pair[0]), bits(&pair[1]))
    }

    #[test]
    fn the_isqrt_table_holds_each_bytes_root_and_remainder() {
        let table = known_value(&path("core::num::int_sqrt::U8_ISQRT_WITH_REMAINDER"))
            .expect("the isqrt table is known");
        // The documentation's own example, and the ends.
        assert_eq!(entry(&table, 17), (4, 1));
        assert_eq!(entry(&table, 0), (0, 0));
        assert_eq!(entry(&table, 255), (15, 30));
        for n in 0..256u128 {
            let (root, rem) = entry(&table, n as usize);
            assert_eq!(root * root + rem, n, "entry {n}");
            assert!((root + 1) * (root + 1) > n, "entry {n}: root too small");
        }
    }

    #[test]
    fn other_std_constants_stay_unknown() {
        assert!(known_value(&path("core::num::int_sqrt::OTHER")).is_none());
        assert!(known_value(&path("kernel::U8_ISQRT_WITH_REMAINDER")).is_none());
    }
}
