//! The string and char literals of printed MIR text. The rewrites of a
//! dependency's text (respelling re-exported paths, substituting a generic
//! item's parameters, finding the allocations a body points at) work on
//! words and must copy a literal whole: `"T"` is not the parameter `T`, and
//! `"{alloc1}"` points at nothing.

/// The length in bytes of the string or char literal `s` starts with,
/// quotes included, or `None` when it starts with neither: a `'` that
/// starts a lifetime (`'a`) starts no literal. A string that does not close
/// runs to the end of `s`.
pub(super) fn literal_len(s: &str) -> Option<usize> {
    match s.chars().next()? {
        '"' => Some(string_len(s)),
        '\'' => char_len(s),
        _ => None,
    }
}

fn string_len(s: &str) -> usize {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return i + 1,
            _ => {}
        }
    }
    s.len()
}

/// `'x'`, `'é'`, `'\n'`, `'\''`, `'\u{1F600}'`; `None` for a lifetime.
fn char_len(s: &str) -> Option<usize> {
    let mut chars = s.char_indices().skip(1);
    match chars.next()? {
        // The escaped character, then up to the closing quote.
        (_, '\\') => {
            let after = 2 + s[2..].chars().next()?.len_utf8();
            Some(after + s.get(after..)?.find('\'')? + 1)
        }
        (_, c) => {
            let end = 1 + c.len_utf8();
            s[end..].starts_with('\'').then_some(end + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::literal_len;

    #[test]
    fn strings_run_to_their_unescaped_closing_quote() {
        assert_eq!(literal_len(r#""T" T"#), Some(3));
        assert_eq!(literal_len(r#""a\"b" c"#), Some(6));
        assert_eq!(literal_len(r#""a\\" c"#), Some(5));
        assert_eq!(literal_len("\"é\" x"), Some(4));
        assert_eq!(literal_len("\"open"), Some(5));
    }

    #[test]
    fn chars_are_literals_and_lifetimes_are_not() {
        assert_eq!(literal_len("'x' y"), Some(3));
        assert_eq!(literal_len("'é' y"), Some(4));
        assert_eq!(literal_len("'\"' y"), Some(3));
        assert_eq!(literal_len(r"'\n' y"), Some(4));
        assert_eq!(literal_len(r"'\'' y"), Some(4));
        assert_eq!(literal_len(r"'\u{1F600}' y"), Some(11));
        assert_eq!(literal_len("'a, T>"), None);
        assert_eq!(literal_len("'static T"), None);
        assert_eq!(literal_len("T"), None);
    }
}
