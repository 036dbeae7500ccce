//! Paths source can reach, learned from rustc's own suggestions.
//!
//! rustc prints a dependency's type by the path it is defined at where the
//! kernel crate has no shorter visible one: a type of a crate the kernel
//! reaches only through another (`blake3`'s `Hasher` holds an
//! `arrayvec::arrayvec::ArrayVec`) keeps its definition's module, which the
//! crate keeps private and re-exports the type from its root. A shim that
//! names such a path is refused (E0603), and rustc's error says which path
//! to write instead ("consider importing this struct instead", with the
//! line rewritten). [`suggested_paths`] reads those rewrites and
//! [`rewrite`] writes the shims again with them, so the round that printed
//! the refusal runs once more instead of giving the shim up.

use std::collections::BTreeMap;

/// The paths rustc's errors in `stderr` suggest in place of a private one:
/// defined path to suggested path (`arrayvec::arrayvec::ArrayVec` to
/// `arrayvec::ArrayVec`). Read from the help of an E0603 ("is private")
/// that offers exactly one rewritten line: a `-` line and a `+` line of the
/// same number that differ in one path, which keeps its crate and its last
/// segment (the same item, reached through a public module).
pub fn suggested_paths(stderr: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let lines: Vec<&str> = stderr.lines().collect();
    let mut in_private_error = false;
    for (k, line) in lines.iter().enumerate() {
        // Each diagnostic starts at column 0 (`error[..]`, `warning: ..`).
        if line.starts_with("error") || line.starts_with("warning") {
            in_private_error = line.starts_with("error[E0603]");
            continue;
        }
        if !in_private_error || !line.starts_with("help: consider importing this") {
            continue;
        }
        // The diff follows the help line after a `|` gutter line:
        // `26 - old`, `26 + new`.
        let diff: Vec<&str> = lines[k + 1..]
            .iter()
            .skip_while(|l| l.trim() == "|")
            .take_while(|l| diff_line(l).is_some())
            .copied()
            .collect();
        let [old, new] = diff[..] else { continue };
        let (Some((n_old, '-', old)), Some((n_new, '+', new))) = (diff_line(old), diff_line(new))
        else {
            continue;
        };
        if n_old != n_new {
            continue;
        }
        if let Some((from, to)) = changed_path(old, new) {
            found.insert(from, to);
        }
    }
    found
}

/// Adds `learned` to `paths` (a path already known keeps its public one),
/// each value followed through the map to a path that is not itself
/// rewritten (`a::x::T` to `a::y::T` to `a::T`). Whether `paths` grew.
pub fn learn(paths: &mut BTreeMap<String, String>, learned: BTreeMap<String, String>) -> bool {
    let before = paths.len();
    for (from, to) in learned {
        paths.entry(from).or_insert(to);
    }
    let resolved: Vec<(String, String)> = paths
        .iter()
        .map(|(from, to)| {
            let mut to = to.clone();
            // At most one step per entry: a cycle cannot keep it going.
            for _ in 0..paths.len() {
                match paths.get(&to) {
                    Some(next) if next != from => to = next.clone(),
                    _ => break,
                }
            }
            (from.clone(), to)
        })
        .collect();
    paths.extend(resolved);
    paths.len() > before
}

/// A line of rustc's suggestion diff, `26 - text` or `26 + text`: its
/// number, its sign and its text.
fn diff_line(line: &str) -> Option<(u32, char, &str)> {
    let (number, rest) = line.trim_start().split_once(' ')?;
    let number = number.parse().ok()?;
    let mut chars = rest.chars();
    let sign = chars.next().filter(|c| matches!(c, '-' | '+'))?;
    Some((number, sign, chars.as_str().strip_prefix(' ').unwrap_or("")))
}

/// The one path in which `old` and `new` differ, widened to the whole
/// path on each side, when both name the same item: the same first and
/// last segment, and more segments in the old one.
fn changed_path(old: &str, new: &str) -> Option<(String, String)> {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let suffix = old
        .chars()
        .rev()
        .zip(new.chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>()
        .min(old.len() - prefix)
        .min(new.len() - prefix);
    let start = old[..prefix]
        .rfind(|c| !is_path_char(c))
        .map_or(0, |i| i + 1);
    let widen = |text: &str, end: usize| {
        text[end..]
            .find(|c| !is_path_char(c))
            .map_or(text.len(), |i| end + i)
    };
    // A turbofish (`T::<u8>::new`) or a leading `::` leaves a separator at
    // an end.
    let from = old[start..widen(old, old.len() - suffix)].trim_matches(':');
    let to = new[start..widen(new, new.len() - suffix)].trim_matches(':');
    let segments = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    let (f, t) = (segments(from), segments(to));
    let same_item = f.len() > t.len()
        && t.len() >= 2
        && f.first() == t.first()
        && f.last() == t.last()
        && f.iter().chain(&t).all(|s| !s.is_empty());
    same_item.then(|| (from.to_string(), to.to_string()))
}

/// A character a path is written with: an identifier's, or `:`.
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// `source` with each whole path of `paths`' keys written as its value: a
/// key counts where no path character comes before it and no identifier
/// character after it (`arrayvec::arrayvec::ArrayVec<` and
/// `arrayvec::arrayvec::ArrayVec::new`, not `x_arrayvec::arrayvec::ArrayVecs`).
pub fn rewrite(source: &str, paths: &BTreeMap<String, String>) -> String {
    let mut text = source.to_string();
    for (from, to) in paths {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (i, _) in text.match_indices(from.as_str()) {
            // The character before a match is read from the whole text,
            // a skipped match's last included.
            let before = text[..i].chars().next_back();
            let after = text[i + from.len()..].chars().next();
            // A path may go on after the match (`ArrayVec::new`), an
            // identifier may not.
            let whole = !before.is_some_and(is_path_char)
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            out.push_str(&text[at..i]);
            out.push_str(if whole { to } else { from });
            at = i + from.len();
        }
        out.push_str(&text[at..]);
        text = out;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rustc 1.95's error on a shim naming `arrayvec`'s private module,
    /// as printed (two of them, the second on another line).
    const STDERR: &str = "\
error[E0603]: module `arrayvec` is private
  --> /src/kernel.rs:26:36
   |
26 | pub fn call<'a>(a0: *mut arrayvec::arrayvec::ArrayVec<[u8; 32], 55>) -> () {
   |                                    ^^^^^^^^ private module
   |
note: the module `arrayvec` is defined here
  --> /work/vendor/arrayvec-0.7.9/src/lib.rs:61:0
help: consider importing this struct instead
   |
26 - pub fn call<'a>(a0: *mut arrayvec::arrayvec::ArrayVec<[u8; 32], 55>) -> () {
26 + pub fn call<'a>(a0: *mut arrayvec::ArrayVec<[u8; 32], 55>) -> () {
   |

error[E0603]: module `join` is private
  --> /src/kernel.rs:38:57
   |
38 |     unsafe { blake3::Hasher::update_with_join::<blake3::join::SerialJoin>(a0, a1) }
   |                                                         ^^^^  ---------- enum `SerialJoin` is not publicly re-exported
   |                                                         |
   |                                                         private module

error: aborting due to 2 previous errors
";

    #[test]
    fn a_private_module_suggestion_gives_the_public_path() {
        let found = suggested_paths(STDERR);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            [(
                "arrayvec::arrayvec::ArrayVec".to_string(),
                "arrayvec::ArrayVec".to_string()
            )]
        );
    }

    #[test]
    fn a_suggestion_outside_a_privacy_error_or_of_another_item_is_ignored() {
        let other_error = STDERR.replace("error[E0603]", "error[E0412]");
        assert!(suggested_paths(&other_error).is_empty());
        let other_item = STDERR.replace(
            "26 + pub fn call<'a>(a0: *mut arrayvec::ArrayVec<",
            "26 + pub fn call<'a>(a0: *mut arrayvec::Vec<",
        );
        assert!(suggested_paths(&other_item).is_empty());
        let other_line = STDERR.replace("26 + pub", "27 + pub");
        assert!(suggested_paths(&other_line).is_empty());
    }

    #[test]
    fn chained_suggestions_resolve_to_the_last_public_path() {
        let mut paths = BTreeMap::new();
        let one = |a: &str, b: &str| BTreeMap::from([(a.to_string(), b.to_string())]);
        assert!(learn(&mut paths, one("a::x::y::T", "a::y::T")));
        assert!(learn(&mut paths, one("a::y::T", "a::T")));
        assert_eq!(paths["a::x::y::T"], "a::T");
        // Nothing new: not grown, and a known path keeps its public one.
        assert!(!learn(&mut paths, one("a::y::T", "a::z::T")));
        assert_eq!(paths["a::y::T"], "a::T");
    }

    #[test]
    fn a_turbofish_or_a_second_diagnostic_does_not_spoil_the_suggestion() {
        let turbofish = STDERR
            .replace(
                "26 - pub fn call<'a>(a0: *mut arrayvec::arrayvec::ArrayVec<[u8; 32], 55>) -> () {",
                "26 -     unsafe { arrayvec::arrayvec::ArrayVec::<u8, 4>::new() }",
            )
            .replace(
                "26 + pub fn call<'a>(a0: *mut arrayvec::ArrayVec<[u8; 32], 55>) -> () {",
                "26 +     unsafe { arrayvec::ArrayVec::<u8, 4>::new() }",
            );
        assert_eq!(
            suggested_paths(&turbofish)
                .get("arrayvec::arrayvec::ArrayVec")
                .map(String::as_str),
            Some("arrayvec::ArrayVec")
        );
        // A warning's help after the error is not the error's.
        let warned = STDERR.replace(
            "help: consider importing this struct instead",
            "warning: unused import\nhelp: consider importing this struct instead",
        );
        assert!(suggested_paths(&warned).is_empty());
    }

    #[test]
    fn rewriting_replaces_whole_paths_only() {
        let paths = suggested_paths(STDERR);
        let src = "a0: *mut arrayvec::arrayvec::ArrayVec<u8, 4>, \
                   arrayvec::arrayvec::ArrayVec::<u8, 4>::new(), \
                   x_arrayvec::arrayvec::ArrayVec<u8>, arrayvec::arrayvec::ArrayVecs, \
                   my::arrayvec::arrayvec::ArrayVec";
        assert_eq!(
            rewrite(src, &paths),
            "a0: *mut arrayvec::ArrayVec<u8, 4>, arrayvec::ArrayVec::<u8, 4>::new(), \
             x_arrayvec::arrayvec::ArrayVec<u8>, arrayvec::arrayvec::ArrayVecs, \
             my::arrayvec::arrayvec::ArrayVec"
        );
        // A whole path right after a skipped one is still whole.
        let paths = BTreeMap::from([("a::b".to_string(), "c".to_string())]);
        assert_eq!(rewrite("x::a::b a::b", &paths), "x::a::b c");
        assert_eq!(rewrite("ya::ba::b", &paths), "ya::ba::b");
    }
}
