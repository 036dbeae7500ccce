//! Reading rustc's printed types and paths as text, where brackets must
//! balance: `<>`, `()`, `[]` and `{}` nest (a closure's type, `{closure@..}`,
//! and a function item's, `fn() -> u32 {f}`, hold paths of their own), and
//! the `>` of a function pointer's `->` closes nothing.

/// How byte `i` of `bytes` moves the bracket depth: 1 opens, -1 closes.
fn depth_step(bytes: &[u8], i: usize) -> i32 {
    match bytes[i] {
        b'<' | b'(' | b'[' | b'{' => 1,
        // `->` closes nothing.
        b'>' if i > 0 && bytes[i - 1] == b'-' => 0,
        b'>' | b')' | b']' | b'}' => -1,
        _ => 0,
    }
}

/// `text` split at the first `sep` (which starts with a space) outside any
/// brackets.
pub(crate) fn split_top_level<'t>(text: &'t str, sep: &str) -> Option<(&'t str, &'t str)> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    for i in 0..bytes.len() {
        depth += depth_step(bytes, i);
        if bytes[i] == b' ' && depth == 0 && text[i..].starts_with(sep) {
            return Some((&text[..i], &text[i + sep.len()..]));
        }
    }
    None
}

/// The index of the bracket that closes the one at byte `open` of `text`.
pub(crate) fn closing_bracket(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if open >= bytes.len() || depth_step(bytes, open) != 1 {
        return None;
    }
    let mut depth = 0i32;
    for i in open..bytes.len() {
        depth += depth_step(bytes, i);
        if depth == 0 {
            return Some(i);
        }
        if depth < 0 {
            return None;
        }
    }
    None
}

/// The comma-separated items of `text` (generic arguments), commas inside
/// brackets skipped, each trimmed; none for blank text.
pub(crate) fn top_level_items(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for i in 0..bytes.len() {
        depth += depth_step(bytes, i);
        if bytes[i] == b',' && depth == 0 {
            items.push(text[start..i].trim());
            start = i + 1;
        }
    }
    items.push(text[start..].trim());
    items.retain(|a| !a.is_empty());
    items
}

/// A name followed by generic arguments that end the text
/// (`copy_fold<u32, {closure@..}>`): the name, and the arguments' text
/// between the brackets.
pub(crate) fn trailing_generic_args(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    for i in 0..bytes.len() {
        if depth == 0 && bytes[i] == b'<' && closing_bracket(text, i) == Some(bytes.len() - 1) {
            return Some((&text[..i], &text[i + 1..bytes.len() - 1]));
        }
        depth += depth_step(bytes, i);
    }
    None
}

/// `<SELF as TRAIT>::REST` split into its three parts (angle brackets
/// balanced, so `SELF` and `TRAIT` may hold generic arguments).
pub(crate) fn split_qualified(text: &str) -> Option<(&str, &str, &str)> {
    let close = closing_bracket(text, 0).filter(|_| text.starts_with('<'))?;
    let (self_ty, trait_path) = split_top_level(&text[1..close], " as ")?;
    let rest = &text[close + 1..];
    Some((self_ty, trait_path, rest.strip_prefix("::").unwrap_or(rest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_balance_and_arrows_close_nothing() {
        let t = "m<A<B>, fn(u8) -> u8>";
        assert_eq!(closing_bracket(t, 1), Some(t.len() - 1));
        assert_eq!(closing_bracket("a<X>::b<Y>", 1), Some(3));
        assert_eq!(
            closing_bracket("{closure@a<{closure@b}>} as X", 0),
            Some(23)
        );
        assert_eq!(closing_bracket("m", 0), None);
        assert_eq!(closing_bracket("<a", 0), None);
    }

    #[test]
    fn items_split_at_top_level_commas() {
        assert_eq!(
            top_level_items("(u8, u16), fn(u8, u8) -> u8, {closure@k.rs:1:2: 1:3}"),
            vec!["(u8, u16)", "fn(u8, u8) -> u8", "{closure@k.rs:1:2: 1:3}"]
        );
        assert!(top_level_items("").is_empty());
    }

    #[test]
    fn trailing_arguments_are_the_last_group_only() {
        assert_eq!(
            trailing_generic_args("<u32 as Sum>::sum<Map<I, {closure@a<b>}>>"),
            Some(("<u32 as Sum>::sum", "Map<I, {closure@a<b>}>"))
        );
        assert_eq!(trailing_generic_args("a<X>::b"), None);
        assert_eq!(trailing_generic_args("a<X>::b<Y>"), Some(("a<X>::b", "Y")));
    }

    #[test]
    fn splits_happen_outside_brackets() {
        assert_eq!(
            split_top_level("fn(&u32) -> bool {<u32 as Ord>::lt} as Fn", " as "),
            Some(("fn(&u32) -> bool {<u32 as Ord>::lt}", "Fn"))
        );
    }
}
