//! Instances of a dependency's generic impl items, made from its MIR text.
//!
//! A dependency's MIR prints the items of a generic impl block once,
//! generically: `const vec::<impl at src/vec.rs:42:1: 42:34>::INIT:
//! [core::mem::MaybeUninit<T>; N] = { .. }`, for the block whose source
//! header reads `impl<T, const N: usize> Vec<T, N>`. The kernel names an
//! instance (`heapless::Vec::<u32, 8>::INIT`, where rustc's inliner left
//! the constant unevaluated). The header's self type (`Vec<T, N>`) lines
//! the block's parameters up with the instance's arguments (`T = u32`,
//! `N = 8`), and the item's text with each parameter replaced by its
//! argument is an ordinary monomorphic item, parsed under a name of its own
//! ([`instance_name`]).
//!
//! The replacement is textual, by whole identifiers outside string
//! literals; a const parameter used as a value (`const N`) becomes a typed
//! literal (`const 8_usize`). Only what the header shows is bound: a block
//! whose self type's argument is not a bare parameter, or an item with
//! generic parameters of its own, is not instantiated (the kernel's use of
//! it stays refused, by name).

use crate::model::{GenericArg, Path, closing_bracket, split_top_level, top_level_items};

/// An impl block's header, as far as instantiation needs it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ImplHeader {
    /// The block's type and const parameters, in order (lifetimes left out),
    /// each with its declared type for a const parameter.
    pub params: Vec<(String, Option<String>)>,
    /// The trait's last segment, for a trait impl block.
    pub trait_name: Option<String>,
    /// The self type's last segment (`Vec`).
    pub self_name: String,
    /// The self type's path as written, without arguments
    /// (`super::Lazy`).
    pub self_path: String,
    /// The self type's generic arguments as written, lifetimes left out.
    pub self_args: Vec<String>,
}

impl ImplHeader {
    /// Reads `impl<T, const N: usize> Vec<T, N>` (or `impl<..> Tr for
    /// Ty<..>`, a `where` clause ignored).
    pub fn parse(header: &str) -> Option<ImplHeader> {
        let rest = header.trim().strip_prefix("impl")?;
        let (params, rest) = if rest.starts_with('<') {
            let close = closing_bracket(rest, 0)?;
            (top_level_items(&rest[1..close]), &rest[close + 1..])
        } else {
            (Vec::new(), rest)
        };
        let rest = rest.split(" where ").next().unwrap_or(rest).trim();
        let (trait_name, self_ty) = match split_top_level(rest, " for ") {
            Some((tr, ty)) => (Some(last_segment(tr)), ty),
            None => (None, rest),
        };
        let self_ty = self_ty.trim();
        let (name, args) = match self_ty.find('<') {
            Some(open) => {
                let close = closing_bracket(self_ty, open)?;
                (&self_ty[..open], top_level_items(&self_ty[open + 1..close]))
            }
            None => (self_ty, Vec::new()),
        };
        let params = params
            .into_iter()
            .filter(|p| !p.starts_with('\''))
            .map(|p| match p.strip_prefix("const ") {
                Some(c) => {
                    let (n, ty) = c.split_once(':')?;
                    Some((n.trim().to_string(), Some(ty.trim().to_string())))
                }
                None => Some((p.split(':').next()?.trim().to_string(), None)),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(ImplHeader {
            params,
            trait_name,
            self_name: last_segment(name),
            self_path: name.trim().to_string(),
            self_args: args
                .into_iter()
                .filter(|a| !a.starts_with('\''))
                .map(str::to_string)
                .collect(),
        })
    }

    /// Each parameter's replacement for the self type's arguments `args`
    /// (as the kernel's MIR printed them, lifetimes included or not): a
    /// parameter the self type shows bare is bound; `None` when the counts
    /// differ or a parameter stays unbound.
    pub fn bind(&self, args: &[GenericArg]) -> Option<Vec<Binding>> {
        let args: Vec<&GenericArg> = args
            .iter()
            .filter(|a| !matches!(a, GenericArg::Lifetime(_)))
            .collect();
        if args.len() != self.self_args.len() {
            return None;
        }
        self.params
            .iter()
            .map(|(name, const_ty)| {
                let k = self.self_args.iter().position(|a| a == name)?;
                let text = match args[k] {
                    GenericArg::Type(t) => t.to_string(),
                    GenericArg::Const(c) => c.clone(),
                    GenericArg::Lifetime(_) => return None,
                };
                Some(Binding {
                    name: name.clone(),
                    text,
                    const_ty: const_ty.clone(),
                })
            })
            .collect()
    }
}

/// The generic parameters of function `name` as its module's source
/// `text` declares them (`fn get_unaligned_chunk<T: Copy>(..)`), as a
/// header whose "self type" lists them in order, so that
/// [`ImplHeader::bind`] binds them to a call's turbofish. `None` unless
/// exactly one `fn name<` is in the text.
pub(super) fn fn_generics(text: &str, name: &str) -> Option<ImplHeader> {
    let needle = format!("fn {name}<");
    let mut found = text.match_indices(&needle).filter(|(i, _)| {
        text[..*i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
    });
    let (at, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    // From the `<` that ends the needle.
    let rest = &text[at + needle.len() - 1..];
    let close = closing_bracket(rest, 0)?;
    let header = ImplHeader::parse(&format!("impl<{}> F", &rest[1..close]))?;
    Some(own_params_header(name, header.params))
}

/// A header that binds the parameters `params` of function or method
/// `name`, in order, to its turbofish (see [`fn_generics`]).
pub(super) fn own_params_header(name: &str, params: Vec<(String, Option<String>)>) -> ImplHeader {
    ImplHeader {
        self_args: params.iter().map(|(p, _)| p.clone()).collect(),
        params,
        trait_name: None,
        self_name: name.to_string(),
        self_path: name.to_string(),
    }
}

/// One parameter and the argument that replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Binding {
    /// The parameter.
    name: String,
    /// The argument as the MIR prints it (`u32`, `8`).
    text: String,
    /// A const parameter's type (`usize`), for its value as a literal.
    const_ty: Option<String>,
}

impl Binding {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The name of the instance of dependency item `def` (a def path) of crate
/// `krate` at the printed arguments `args`: the crate's name, a module
/// named like the kernel's own instances ([`crate::mono::module_name`]),
/// and the item's last segment.
pub(super) fn instance_name(krate: &str, def: &str, args: &Path) -> String {
    let last = def.rsplit("::").next().unwrap_or(def);
    let module = crate::mono::module_name(
        def,
        args.segments.iter().flat_map(|s| &s.args).map(|a| match a {
            GenericArg::Type(t) => t.to_string(),
            GenericArg::Const(c) | GenericArg::Lifetime(c) => c.clone(),
        }),
    );
    format!("{krate}::{module}::{last}")
}

/// `text` with every parameter of `binds` replaced by its argument: whole
/// identifiers outside string literals, not after `::` (a path's later
/// segment); `const N` becomes a typed literal (`const 8_usize`).
pub(super) fn substitute(text: &str, binds: &[Binding]) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        // A string or char literal (`"N"`, `'N'`) is copied whole; a
        // lifetime (`'a`) starts none and goes on as a word.
        if matches!(c, b'"' | b'\'')
            && let Some(len) = super::literals::literal_len(&text[i..])
        {
            out.push_str(&text[i..i + len]);
            i += len;
            continue;
        }
        let starts_word = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts_word {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let end = text[i..]
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .map_or(text.len(), |e| i + e);
        let word = &text[i..end];
        let after_path = text[..i].ends_with("::");
        match binds.iter().find(|b| b.name == word) {
            Some(b) if !after_path => {
                let as_value = text[..i].ends_with("const ");
                match (&b.const_ty, as_value) {
                    (Some(ty), true) => out.push_str(&format!("{}_{ty}", b.text)),
                    _ => out.push_str(&b.text),
                }
            }
            _ => out.push_str(word),
        }
        i = end;
    }
    out
}

/// A path's last segment without generic arguments.
fn last_segment(p: &str) -> String {
    let p = p.trim();
    let p = p.split('<').next().unwrap_or(p);
    p.rsplit("::").next().unwrap_or(p).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntTy, PathSegment, Ty};

    #[test]
    fn impl_headers_line_parameters_up_with_the_self_type() {
        let h = ImplHeader::parse("impl<T, const N: usize> Vec<T, N> ").expect("parses");
        assert_eq!(
            h.params,
            [("T".into(), None), ("N".into(), Some("usize".into()))]
        );
        assert_eq!(
            (h.self_name.as_str(), h.trait_name.as_deref()),
            ("Vec", None)
        );
        let binds = h
            .bind(&[
                GenericArg::Type(Ty::Int(IntTy::U32)),
                GenericArg::Const("8".into()),
            ])
            .expect("binds");
        assert_eq!(
            substitute(
                "const X: [core::mem::MaybeUninit<T>; N] = {\n    _0 = [const Vec::<T, N>::ELEM; N];\n    _1 = const N;\n    assert(\"é T N\");\n    _2 = m::T::f;\n    _3 = const 'N';\n    _4 = const '\\'';\n    _5 = &'a T;\n}",
                &binds
            ),
            "const X: [core::mem::MaybeUninit<u32>; 8] = {\n    _0 = [const Vec::<u32, 8>::ELEM; 8];\n    _1 = const 8_usize;\n    assert(\"é T N\");\n    _2 = m::T::f;\n    _3 = const 'N';\n    _4 = const '\\'';\n    _5 = &'a u32;\n}"
        );
        // A trait block, a lifetime, a bound and a where clause.
        let t = ImplHeader::parse(
            "impl<'a, T: Copy, const N: usize> ops::Deref for View<'a, T, N> where T: Sized",
        )
        .expect("parses");
        assert_eq!(t.trait_name.as_deref(), Some("Deref"));
        assert_eq!(t.self_args, ["T", "N"]);
        let args = [
            GenericArg::Lifetime("{erased}".into()),
            GenericArg::Type(Ty::Int(IntTy::U8)),
            GenericArg::Const("4".into()),
        ];
        assert!(t.bind(&args).is_some());
        // A bound with an arrow, and a const block: `->` closes nothing,
        // and braces nest.
        let arrow = ImplHeader::parse("impl<F: Fn(u32) -> u32, const N: usize> Map<F, { N }>")
            .expect("parses");
        assert_eq!(
            arrow.params,
            [("F".into(), None), ("N".into(), Some("usize".into()))]
        );
        assert_eq!(arrow.self_args, ["F", "{ N }"]);
        assert_eq!(arrow.self_name, "Map");
        let over = ImplHeader::parse("impl<G: FnMut(u8) -> u8> Tr<fn(u8) -> u8> for Over<G>")
            .expect("parses");
        assert_eq!(over.trait_name.as_deref(), Some("Tr"));
        assert_eq!(over.self_args, ["G"]);
        // A self type argument that is not a bare parameter leaves one
        // unbound; a count that differs binds nothing.
        let fixed = ImplHeader::parse("impl<T> Pair<[T; 2]>").expect("parses");
        assert_eq!(fixed.bind(&[GenericArg::Type(Ty::Int(IntTy::U8))]), None);
        assert_eq!(h.bind(&[GenericArg::Type(Ty::Int(IntTy::U8))]), None);
    }

    #[test]
    fn a_functions_own_parameters_come_from_its_source() {
        let src = "pub(crate) fn not_get_unaligned_chunk<X>() {}\n#[inline(always)]\npub(crate) fn get_unaligned_chunk<T: Copy, const N: usize>(data: &[u8], offset: usize) -> T {}\n";
        let h = fn_generics(src, "get_unaligned_chunk").expect("found");
        assert_eq!(h.self_args, ["T", "N"]);
        assert!(
            h.bind(&[
                GenericArg::Type(Ty::Int(IntTy::U64)),
                GenericArg::Const("2".into())
            ])
            .is_some()
        );
        let arrow = fn_generics("fn apply<F: Fn(u32) -> u32, const K: u8>(f: F) {}", "apply")
            .expect("found");
        assert_eq!(arrow.self_args, ["F", "K"]);
        // Two functions of that name: which one is not guessed.
        assert!(fn_generics(&format!("{src}{src}"), "get_unaligned_chunk").is_none());
    }

    #[test]
    fn instances_are_named_by_their_item_and_arguments() {
        let printed = Path {
            segments: vec![
                PathSegment {
                    name: "heapless".into(),
                    args: vec![],
                },
                PathSegment {
                    name: "Vec".into(),
                    args: vec![
                        GenericArg::Type(Ty::Int(IntTy::U32)),
                        GenericArg::Const("8".into()),
                    ],
                },
                PathSegment {
                    name: "INIT".into(),
                    args: vec![],
                },
            ],
        };
        let a = instance_name("heapless", "heapless::Vec::INIT", &printed);
        assert!(a.starts_with("heapless::__mono_INIT__u32__8_"), "{a}");
        assert!(a.ends_with("::INIT"), "{a}");
        let mut other = printed.clone();
        other.segments[1].args[1] = GenericArg::Const("4".into());
        assert_ne!(instance_name("heapless", "heapless::Vec::INIT", &other), a);
    }
}
