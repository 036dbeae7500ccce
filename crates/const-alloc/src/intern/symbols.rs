//! The symbols of the interner's groups, and their order without building
//! them: a static keeps its own; anonymous memory is named by its key.

use super::{Group, MUTABLE_SYMBOL_PREFIX, SYMBOL_PREFIX};

/// Appends a group's symbol to `out`.
pub(super) fn push_symbol(out: &mut String, group: Group<'_>) {
    let (prefix, key) = match group {
        Group::Static(symbol) => return out.push_str(symbol),
        Group::Constant(key) => (SYMBOL_PREFIX, key),
        Group::Mutable(key) => (MUTABLE_SYMBOL_PREFIX, key),
    };
    out.push_str(prefix);
    key.write_hex(out);
}

/// The symbol of a group.
fn symbol(group: Group<'_>) -> String {
    let mut s = String::new();
    push_symbol(&mut s, group);
    s
}

/// The first 16 bytes of a group's symbol as a big-endian number, padded with
/// zeros: comparing these orders symbols as comparing the strings would,
/// except among symbols that share the 16 bytes.
pub(super) fn symbol_prefix(group: Group<'_>) -> u128 {
    let mut buf = [0u8; 16];
    match group {
        Group::Static(symbol) => {
            let len = symbol.len().min(16);
            buf[..len].copy_from_slice(&symbol.as_bytes()[..len]);
        }
        Group::Constant(key) | Group::Mutable(key) => {
            let prefix = match group {
                Group::Mutable(_) => MUTABLE_SYMBOL_PREFIX,
                _ => SYMBOL_PREFIX,
            };
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
            for (i, slot) in buf[prefix.len()..].iter_mut().enumerate() {
                let byte = key.0[i / 2];
                let nibble = if i % 2 == 0 { byte >> 4 } else { byte & 15 };
                *slot = DIGITS[nibble as usize];
            }
        }
    }
    u128::from_be_bytes(buf)
}

/// Compares two groups' symbols without building them where it can.
pub(super) fn cmp_symbols(a: Group<'_>, b: Group<'_>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Group::Constant(x), Group::Constant(y)) | (Group::Mutable(x), Group::Mutable(y)) => {
            x.cmp(&y)
        }
        // After the shared prefix `__const_`, a hex digit sorts before `m`.
        (Group::Constant(_), Group::Mutable(_)) => Ordering::Less,
        (Group::Mutable(_), Group::Constant(_)) => Ordering::Greater,
        (Group::Static(x), Group::Static(y)) => x.cmp(y),
        _ => symbol(a).cmp(&symbol(b)),
    }
}
