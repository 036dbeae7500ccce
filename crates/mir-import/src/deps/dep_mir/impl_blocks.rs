//! The lookups among a dependency's impl blocks: its MIR prints an impl's
//! items under the block's source position (`m::<impl at src/m.rs:30:1:
//! 30:8>::new`), so the block a kernel's name means (`m::Ty::new`,
//! `<m::Ty as Trait>::new`) is the one whose source header reads so.

use std::collections::BTreeSet;

use super::{DepMir, header_path, impl_item, item_keyword};
use crate::deps::instances::ImplHeader;
use crate::deps::source;

impl DepMir {
    /// The body of the inherent method a call prints as `m::Ty::method`
    /// (the crate's name stripped): the crate's MIR prints it under the
    /// impl block (`m::<impl at src/m.rs:30:1: 30:8>::method`), and the one
    /// block of module `m` whose source header reads `impl Ty` is it.
    pub(super) fn find_inherent_method(&self, rest: &str) -> Option<&str> {
        // `Ty::m`, or an item of the method's own (`Ty::m::promoted[0]`, a
        // `const` declared in its body, `Ty::m::JUMP`), which the block
        // holds as `m::promoted[0]`, `m::JUMP`.
        self.find_inherent_item(rest, 1)
            .or_else(|| self.find_inherent_item(rest, 2))
    }

    /// [`Self::find_inherent_method`] with the item's last `depth` segments
    /// under the block.
    fn find_inherent_item(&self, rest: &str, depth: usize) -> Option<&str> {
        let segments: Vec<&str> = rest.split("::").collect();
        let at = segments.len().checked_sub(depth)?;
        let owner = segments[..at].join("::");
        let method = &segments[at..].join("::");
        let own_method = segments[at];
        let (module, ty_name) = owner.rsplit_once("::").unwrap_or(("", owner.as_str()));
        if ty_name.contains('<') || own_method.contains(['<', '[', '{']) {
            return None;
        }
        let in_module = |module: &str, ty_name: &str| {
            self.find_in_impl_blocks(module, method, ty_name, |h| {
                h.params.is_empty() && h.trait_name.is_none() && h.self_args.is_empty()
            })
        };
        if let Some(found) = in_module(module, ty_name) {
            return Some(found);
        }
        // A type printed through a re-export (`ethnum::U256`, which
        // `lib.rs` re-exports from `uint`): its impl blocks are in the
        // declaring module.
        let (module, text) = self.module_source(module)?;
        let declared = source::reexported_item(&text, &module, ty_name, source::Namespace::Type)?;
        let (own_name, declaring) = declared.split_last()?;
        in_module(&declaring.join("::"), own_name)
    }

    /// The one item `method` (`new`, or `new::promoted[1]`) of an impl
    /// block of `module` for the type named `self_name` whose source header
    /// `is_it` accepts (see [`Self::impl_block_candidates`]).
    fn find_in_impl_blocks(
        &self,
        module: &str,
        method: &str,
        self_name: &str,
        is_it: impl Fn(&ImplHeader) -> bool,
    ) -> Option<&str> {
        match self.impl_block_candidates(module, method, self_name, is_it)[..] {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The items `method` of the impl blocks of `module` for the type named
    /// `self_name` whose source header `is_it` accepts. A block a macro
    /// writes for a metavariable (`impl VariableOutputCore for $name`) is
    /// printed once per expansion under the same span; such a block counts
    /// only when the metavariable is its header's one, and only through the
    /// expansion whose item's signature shows `self_name` where the self
    /// type goes ([`Self::signature_shows_self`]). A promoted or closure
    /// follows its owner's expansion.
    fn impl_block_candidates(
        &self,
        module: &str,
        method: &str,
        self_name: &str,
        is_it: impl Fn(&ImplHeader) -> bool,
    ) -> Vec<&str> {
        let prefix = if module.is_empty() {
            "<impl at ".to_string()
        } else {
            format!("{module}::<impl at ")
        };
        let suffix = format!(">::{method}");
        self.items
            .keys()
            .filter(|k| {
                let Some(span) = k
                    .strip_prefix(&prefix)
                    .and_then(|rest| rest.strip_suffix(&suffix))
                    .filter(|span| !span.contains('>'))
                else {
                    return false;
                };
                let Some(text) = self.impl_header(span) else {
                    return false;
                };
                ImplHeader::parse(&text).is_some_and(|h| {
                    is_it(&h)
                        && (h.self_name == self_name
                            || (h.self_name.starts_with('$')
                                && metavariables(&text) == 1
                                && self.signature_shows_self(k, self_name)))
                })
            })
            .map(String::as_str)
            .collect()
    }

    /// Whether the signature of the impl item `key` belongs to shows the
    /// type named `ty_name` (no arguments) where a macro-written block's
    /// self type goes: a constant's type (`ZERO: u32`), a method's first
    /// parameter (`_1: u32`, `_1: &mut T`), or its result or the result's
    /// first argument (`-> Result<Blake2sVarCore, ..>`).
    fn signature_shows_self(&self, key: &str, ty_name: &str) -> bool {
        let Some(&(from, to)) = impl_item(key).and_then(|owner| self.items.get(owner)) else {
            return false;
        };
        let line = self.text[from..to].lines().next().unwrap_or("");
        let Some((_, rest)) = item_keyword(line) else {
            return false;
        };
        let signature = &rest[header_path(rest).len()..];
        // The type's last segment, with no arguments of its own.
        let is_it = |t: &str| {
            let t = t.trim();
            let t = t
                .strip_prefix("&mut ")
                .or_else(|| t.strip_prefix('&'))
                .unwrap_or(t)
                .trim_start();
            !t.contains(['<', '[', '(', ' ']) && t.rsplit("::").next() == Some(ty_name)
        };
        if let Some(ty) = signature.strip_prefix(": ") {
            // `ZERO: u32 = const 0_u32;` or `ZERO: u32 = {`.
            return ty.split(" = ").next().is_some_and(is_it);
        }
        let Some(params) = signature.strip_prefix('(') else {
            return false;
        };
        let first_param = params
            .split_once(": ")
            .map(|(_, t)| t.split([',', ')']).next().unwrap_or(t));
        let result = signature
            .split_once(") -> ")
            .map(|(_, r)| r.trim_end_matches(['{', ' ']));
        let result_arg = result
            .and_then(|r| r.split_once('<'))
            .map(|(_, a)| a.split([',', '>']).next().unwrap_or(a));
        [first_param, result, result_arg]
            .into_iter()
            .flatten()
            .any(is_it)
    }

    /// The item `item` of the one inherent impl block, in any module, whose
    /// header names the self type `owner` (its last segment), with that
    /// header: the generic item an instance names (`Vec::<u32, 8>::INIT`).
    pub(in crate::deps) fn find_generic(
        &self,
        owner: &str,
        item: &str,
    ) -> Option<(&str, ImplHeader)> {
        let suffix = format!(">::{item}");
        let mut found = self.items.keys().filter_map(|k| {
            let span = k.strip_suffix(&suffix)?.rsplit_once("<impl at ")?.1;
            if span.contains('>') {
                return None;
            }
            let h = ImplHeader::parse(&self.impl_header(span)?)?;
            (h.trait_name.is_none() && h.self_name == owner).then_some((k.as_str(), h))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// The body of the trait method the kernel calls `<A as T>::m`, with `A`
    /// a type of this crate. Its own MIR prints the method under the impl
    /// block's position (`rngs::xoshiro256plusplus::<impl at src/..:28:1:
    /// 28:40>::from_seed`), and the trait by its defining crate where the
    /// kernel prints a re-export (`rand_core::SeedableRng` for
    /// `rand::SeedableRng`). So the candidates are the blocks of `A`'s module
    /// with a method `m`, and the one whose source reads `impl .. T .. for A`
    /// is it; none or several leave the call unresolved. `m` may name an
    /// item of the method's own (`new::promoted[1]`).
    ///
    /// A primitive `A` (`<f32 as ryu::buffer::Sealed>::format_nonfinite`, a
    /// sealed trait of this crate) has no module here: the blocks of the
    /// trait's module are the candidates. They are also where a type's
    /// block is looked for last (`impl Sealed for super::Lazy` in
    /// block_buffer's `sealed`).
    pub(super) fn find_trait_method(&self, name: &str) -> Option<&str> {
        let (self_ty, trait_name, method) = crate::model::impls::trait_call(name)?;
        let own = format!("{}::", self.crate_name);
        // `m`, or an item of its own (`m::promoted[1]`).
        let own_method = method.split("::").next().unwrap_or(method);
        if self_ty.contains('<') || own_method.contains(['<', '[', '{']) {
            return None;
        }
        let trait_path = name.split_once(" as ")?.1.split('>').next()?;
        let trait_module = trait_path
            .strip_prefix(&own)
            .map(|t| t.rsplit_once("::").map_or("", |(m, _)| m));
        let (module, ty_name) = match self_ty.strip_prefix(&own) {
            Some(ty) => ty.rsplit_once("::").unwrap_or(("", ty)),
            None if is_primitive(self_ty) => (trait_module?, self_ty),
            None => return None,
        };
        let is_it =
            |h: &ImplHeader| h.params.is_empty() && h.trait_name.as_deref() == Some(trait_name);
        let in_module = self.impl_block_candidates(module, method, ty_name, is_it);
        match in_module[..] {
            [only] => return Some(only),
            [] => {}
            _ => return None,
        }
        // A sealed trait's impls sit beside the trait (`impl Sealed for
        // super::Lazy` in `sealed`): a block there counts when its header's
        // self path, read from that module, is the type's own.
        let trait_module = trait_module.filter(|m| *m != module)?;
        let own_path: Vec<String> = module
            .split("::")
            .filter(|m| !m.is_empty())
            .chain([ty_name])
            .map(str::to_string)
            .collect();
        let trait_segments: Vec<String> = trait_module.split("::").map(str::to_string).collect();
        self.find_in_impl_blocks(trait_module, method, ty_name, |h| {
            let written: Vec<String> = h.self_path.split("::").map(str::to_string).collect();
            is_it(h)
                && written.len() > 1
                && source::resolve_use_path(&written, &trait_segments).as_ref() == Some(&own_path)
        })
    }

    /// The generic parameters of method `method`, whose item (or one of
    /// its promoteds) has key `key` under an `<impl at ..>` span, as its
    /// block's source declares them.
    pub(in crate::deps) fn method_params(
        &self,
        key: &str,
        method: &str,
    ) -> Option<Vec<(String, Option<String>)>> {
        let open = key.rfind("<impl at ")?;
        let span = &key[open + "<impl at ".len()..];
        let (text, span) = self.span_source(&span[..span.find('>')?])?;
        let (line, column) = span.start;
        source::impl_method_params(&text, line, column, method)
    }
}

/// Whether `ty` is a primitive type's name (`f32`, `u64`, `bool`).
pub(in crate::deps) fn is_primitive(ty: &str) -> bool {
    matches!(ty, "bool" | "char" | "str")
        || crate::model::IntTy::from_name(ty).is_some()
        || matches!(ty, "f16" | "f32" | "f64" | "f128")
}

/// How many distinct macro metavariables (`$name`) an impl header's text
/// holds.
fn metavariables(header: &str) -> usize {
    let mut names = BTreeSet::new();
    for (at, _) in header.match_indices('$') {
        let rest = &header[at + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        names.insert(&rest[..end]);
    }
    names.len()
}

#[cfg(test)]
mod tests {
    use super::super::tests::dep_tree;
    use super::*;

    #[test]
    fn metavariables_are_counted_once_each() {
        assert_eq!(metavariables("impl From<$a> for $b where $b: X"), 2);
        assert_eq!(metavariables("impl Tr for $t"), 1);
        assert_eq!(metavariables("impl Tr for Ty"), 0);
    }

    /// `rand`'s MIR prints trait methods under their impl block's position
    /// and the trait by its defining crate; the kernel prints the type and a
    /// re-export of the trait.
    #[test]
    fn trait_methods_are_found_by_the_impl_header_their_span_covers() {
        let body = |block: &str, m: &str| {
            format!(
                "fn rngs::xo::<impl at /work/vendor/rand-0.8.8/src/rngs/xo.rs:{block}>::{m}(_1: u64) -> rngs::xo::Xo {{\n    let mut _0: rngs::xo::Xo;\n\n    bb0: {{\n        _0 = rngs::xo::Xo;\n        return;\n    }}\n}}\n\n"
            )
        };
        let text = [
            body("2:1: 2:25", "seed_from_u64"),
            body("4:1: 5:11", "seed_from_u64"),
            body("4:1: 5:11", "next"),
            body("7:1: 7:8", "new"),
        ]
        .concat();
        let source = "pub struct Xo;\nimpl SeedableRng for Xo {\n}\nimpl RngCore\n    for Xo {\n}\nimpl Xo {\n}\n";
        let (_tmp, d) = dep_tree("rand", "rand-0.8.8", &text, &[("src/rngs/xo.rs", source)]);
        let name = "<rand::rngs::xo::Xo as rand::SeedableRng>::seed_from_u64";
        let header = d.find(name).expect("found");
        assert_eq!(
            header,
            "rngs::xo::<impl at /work/vendor/rand-0.8.8/src/rngs/xo.rs:2:1: 2:25>::seed_from_u64"
        );
        // The other block's header spans two lines.
        assert!(
            d.find("<rand::rngs::xo::Xo as rand_core::RngCore>::next")
                .is_some()
        );
        assert_eq!(
            d.find("<rand::rngs::xo::Xo as rand::Other>::seed_from_u64"),
            None
        );
        // An inherent method: printed by its type in the call, under its
        // block in the crate's MIR; a trait's block does not count.
        assert_eq!(
            d.find("rand::rngs::xo::Xo::new"),
            Some("rngs::xo::<impl at /work/vendor/rand-0.8.8/src/rngs/xo.rs:7:1: 7:8>::new")
        );
        assert_eq!(d.find("rand::rngs::xo::Xo::next"), None);
        let renamed = d.item_text(header, name).expect("text");
        assert!(
            renamed.starts_with(&format!("fn {name}(_1: u64) -> rand::rngs::xo::Xo {{")),
            "{renamed}"
        );
        let parsed = crate::parse::parse_mir_named(&renamed, "gpu").expect("parses");
        assert_eq!(parsed.bodies[0].path.def_path(), name);
    }

    /// `ethnum::U256::ZERO`: the type is re-exported at the root from
    /// `uint`, where its impl block (and so the constant's MIR) lives.
    #[test]
    fn an_inherent_item_of_a_reexported_type_is_found_in_the_declaring_module() {
        let mir = "const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::ZERO: uint::U256 = uint::U256([const 0_u128, const 0_u128]);\n\
                   const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::promoted[0]: &[u64; 1] = const 7_u64;\n\
                   const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::JUMP: [u64; 1] = const 7_u64;\n\
                   const uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:3:1: 3:16>::ZERO: uint::U256 = uint::U256([const 1_u128, const 0_u128]);\n";
        let lib = "mod uint;\npub use uint::U256;\n";
        let uint = "pub struct U256(pub [u128; 2]);\nimpl U256 {}\nimpl Other for U256 {}\n";
        let (_tmp, d) = dep_tree(
            "ethnum",
            "ethnum-1.5.3",
            mir,
            &[("src/lib.rs", lib), ("src/uint.rs", uint)],
        );
        assert_eq!(
            d.find("ethnum::U256::ZERO"),
            Some("uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::ZERO")
        );
        assert_eq!(d.find("ethnum::I256::ZERO"), None);
        // An inherent method's promoted (rand_xoshiro's `jump`'s table).
        assert_eq!(
            d.find("ethnum::U256::jump::promoted[0]"),
            Some(
                "uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::promoted[0]"
            )
        );
        assert_eq!(
            d.find("ethnum::uint::U256::jump::JUMP"),
            Some("uint::<impl at /work/vendor/ethnum-1.5.3/src/uint.rs:2:1: 2:10>::jump::JUMP")
        );
        assert_eq!(d.find("ethnum::U256::jump::promoted[1]"), None);
    }

    /// blake2's `impl VariableOutputCore for $name`, expanded for
    /// `Blake2bVarCore` and then `Blake2sVarCore`: both expansions print
    /// their items, promoteds included, under the macro's one span.
    #[test]
    fn a_macro_expanded_block_is_told_apart_by_its_signatures() {
        let span = "/work/vendor/blake2-0.10.6/src/macros.rs:3:9: 3:42";
        let expansion = |ty: &str, len: u32| {
            format!(
                "fn <impl at {span}>::new(_1: usize) -> Result<{ty}, E> {{\n    bb0: {{\n        return;\n    }}\n}}\n\n\
                 const <impl at {span}>::new::promoted[1]: &[u8; {len}] = {{\n    let mut _0: &[u8; {len}];\n    let mut _1: [u8; {len}];\n\n    bb0: {{\n        _1 = [const 0_u8; {len}];\n        _0 = &_1;\n        return;\n    }}\n}}\n\n"
            )
        };
        let mir = [
            expansion("Blake2bVarCore", 2),
            expansion("Blake2sVarCore", 3),
        ]
        .concat();
        let macros = "macro_rules! blake2_impl {\n    ($name:ident) => {\n        impl VariableOutputCore for $name {\n        }\n    };\n}\n";
        let (_tmp, d) = dep_tree(
            "blake2",
            "blake2-0.10.6",
            &mir,
            &[("src/macros.rs", macros)],
        );
        let name =
            "<blake2::Blake2sVarCore as digest::core_api::VariableOutputCore>::new::promoted[1]";
        let key = d.find(name).expect("the second expansion's promoted");
        let text = d.item_text(key, name).expect("text");
        assert!(text.contains("[u8; 3]"), "{text}");
        let parsed = crate::parse::parse_mir_named(&text, "gpu").expect("parses");
        assert_eq!(parsed.bodies.len(), 1);
        let b = d
            .find("<blake2::Blake2bVarCore as digest::core_api::VariableOutputCore>::new")
            .expect("the first expansion's method");
        assert!(
            d.item_text(b, "x")
                .expect("text")
                .contains("Blake2bVarCore")
        );
        // The first expansion's promoted follows the first expansion.
        let b1 = d
            .find("<blake2::Blake2bVarCore as digest::core_api::VariableOutputCore>::new::promoted[1]")
            .expect("the first expansion's promoted");
        assert!(d.item_text(b1, "x").expect("text").contains("[u8; 2]"));
        // A type no expansion's signature names, or another trait.
        assert_eq!(
            d.find("<blake2::Other as digest::core_api::VariableOutputCore>::new"),
            None
        );
        assert_eq!(
            d.find("<blake2::Blake2sVarCore as digest::Other>::new"),
            None
        );
    }

    /// block_buffer's `impl Sealed for super::Lazy` sits in `sealed`, beside
    /// the trait, not in the type's module; its generic method's promoted
    /// is found there, with the method's parameters.
    #[test]
    fn a_sealed_traits_impl_is_found_in_the_traits_module() {
        let span = "/work/vendor/block-buffer-0.10.4/src/sealed.rs:2:1: 2:28";
        let mir = format!(
            "const sealed::<impl at {span}>::split::promoted[1]: &[Block<N>; 0] = {{\n    let mut _0: &[Block<N>; 0];\n    let mut _1: [Block<N>; 0];\n\n    bb0: {{\n        _1 = [];\n        _0 = &_1;\n        return;\n    }}\n}}\n"
        );
        let sealed = "pub trait Sealed {}\nimpl Sealed for super::Lazy {\n    fn split<N: Len>(d: &[u8]) {}\n}\n";
        let (_tmp, d) = dep_tree(
            "block_buffer",
            "block-buffer-0.10.4",
            &mir,
            &[
                ("src/lib.rs", "mod sealed;\npub struct Lazy;\n"),
                ("src/sealed.rs", sealed),
            ],
        );
        let name = "<block_buffer::Lazy as block_buffer::sealed::Sealed>::split::promoted[1]";
        let key = d.find(name).expect("found beside the trait");
        assert_eq!(
            d.method_params(key, "split"),
            Some(vec![("N".to_string(), None)])
        );
        assert_eq!(
            d.find("<block_buffer::Eager as block_buffer::sealed::Sealed>::split::promoted[1]"),
            None
        );
        // A bare self name beside the trait may be any `Lazy` the module
        // imports: not taken.
        let bare = sealed.replace("super::Lazy", "Lazy");
        let (_tmp2, d) = dep_tree(
            "block_buffer",
            "block-buffer-0.10.4",
            &mir,
            &[
                ("src/lib.rs", "mod sealed;\npub struct Lazy;\n"),
                ("src/sealed.rs", &bare),
            ],
        );
        assert_eq!(d.find(name), None);
    }

    /// Blocks a macro writes are refused where the expansion cannot be
    /// told from the signature: two metavariables in the header, a self
    /// type with arguments of its own, the type only in a parameter after
    /// the first.
    #[test]
    fn macro_blocks_are_refused_where_the_signature_does_not_tell() {
        let mir = "const <impl at /work/vendor/w-1.0.0/src/lib.rs:3:9: 3:30>::X: Wrapper<u8> = const 1_u8;\n\
                   fn <impl at /work/vendor/w-1.0.0/src/lib.rs:4:9: 4:34>::from(_1: u8, _2: Other) -> Y {\n    bb0: {\n        return;\n    }\n}\n\n\
                   fn <impl at /work/vendor/w-1.0.0/src/lib.rs:5:9: 5:22>::f(_1: u16, _2: Other) -> u32 {\n    bb0: {\n        return;\n    }\n}\n";
        let lib = "macro_rules! m {\n    ($t:ty, $u:ty) => {\n        impl Konst for $t {\n        impl From<$u> for $t {\n        impl Tr for $t {\n    };\n}\n";
        let (_tmp, d) = dep_tree("w", "w-1.0.0", mir, &[("src/lib.rs", lib)]);
        assert_eq!(d.find("<w::Wrapper as w::Konst>::X"), None);
        assert_eq!(d.find("<w::Y as w::From>::from"), None);
        assert_eq!(d.find("<w::Other as w::Tr>::f"), None);
        assert!(d.find("<u16 as w::Tr>::f").is_some());
    }
}
