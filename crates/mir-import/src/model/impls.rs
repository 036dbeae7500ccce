//! Methods of the kernel's `impl` blocks: rustc prints a method's body under
//! the block's position (`kernel::<impl at kernel.rs:17:1: 17:35>::mul`) but
//! its calls under the type (`kernel::Complex32::norm`) or the trait
//! (`<kernel::Complex32 as std::ops::Mul>::mul`). [`Crate::link_impl_methods`]
//! joins the two, with the blocks' self types and traits that
//! [`crate::attrs`] recovers from the source.

use std::collections::BTreeMap;

use super::{BodyKind, Crate};

/// `<impl at FILE:L:C: L2:C2>` as `<impl@L:C>`, the key [`crate::attrs`]
/// records a block's methods under; `None` for any other segment. The file is
/// left out: the module path in front of the segment already tells the kernel
/// from the prelude.
pub fn normalize_impl_segment(segment: &str) -> Option<String> {
    let inner = segment.strip_prefix("<impl at ")?.strip_suffix('>')?;
    let start = inner.split(": ").next()?;
    let mut parts = start.rsplitn(3, ':');
    let col: u32 = parts.next()?.parse().ok()?;
    let line: u32 = parts.next()?.parse().ok()?;
    Some(format!("<impl@{line}:{col}>"))
}

/// A type written in the source as the MIR type rustc would print, when
/// that is certain (`crate::attrs::resolve_source_type`: the model reads no
/// source itself).
pub type ResolveType = dyn Fn(&str, &Crate) -> Option<super::Ty>;

/// A method body of an impl block whose self type and trait are known.
struct Method {
    /// The def path rustc printed the body under.
    body: String,
    /// The self type as calls print it, with the module in front of the
    /// impl segment (`kernel::Foo`, `&kernel::Foo`).
    self_ty: String,
    trait_name: Option<String>,
    name: String,
}

/// `<A as T>::m` split into `A`, the last segment of `T` without its generic
/// arguments, and `m`.
pub(crate) fn trait_call(def: &str) -> Option<(&str, &str, &str)> {
    let rest = def.strip_prefix('<')?;
    let (qualified, method) = rest.rsplit_once(">::")?;
    let (self_ty, trait_path) = qualified.split_once(" as ")?;
    let trait_path = trait_path.split('<').next()?;
    let trait_name = trait_path.rsplit("::").next()?;
    Some((self_ty, trait_name, method))
}

impl Crate {
    /// Gives each method body of a non-generic impl block of the source its
    /// attributes (an `#[inline(never)]` method stays a separate function) and
    /// records, in [`Crate::call_aliases`], the call paths that name it: the
    /// inherent path `module::Type::method` (`kernel::Wrapper<u32>::value`
    /// for a block on one instance of a generic type), and each
    /// `<module::Type as path::Trait>::method` that some body calls. A call
    /// path that two blocks, or an unlinked block, could answer is left out:
    /// its calls are refused, never sent to another block's body.
    pub fn link_impl_methods(&mut self, resolve_type: &ResolveType) {
        let mut methods = Vec::new();
        let mut body_attrs = Vec::new();
        let mut instances = Vec::new();
        let mut unlinked = std::collections::BTreeSet::new();
        for b in self.bodies.values() {
            if !matches!(b.kind, BodyKind::Fn { ctfe: false }) {
                continue;
            }
            let segs = &b.path.segments;
            let Some(at) = segs.iter().position(|s| s.name.starts_with("<impl at ")) else {
                continue;
            };
            if at + 2 != segs.len() {
                continue;
            }
            let Some(block) = normalize_impl_segment(&segs[at].name) else {
                continue;
            };
            let module: Vec<&str> = segs[..at].iter().map(|s| s.name.as_str()).collect();
            let module = module.join("::");
            let name = segs[at + 1].name.clone();
            let Some(attrs) = self.attrs.get(&format!("{module}::{block}::{name}")) else {
                continue;
            };
            let Some(of) = attrs.impl_of.clone() else {
                continue;
            };
            let body = b.path.def_path();
            body_attrs.push((body.clone(), attrs.clone()));
            // A block on one instance of a generic type (`impl
            // Wrapper<u32>`) is called as rustc prints that instance
            // (`kernel::Wrapper<u32>::value`); arguments the source does not
            // name certainly leave its methods unlinked (refused), never
            // linked to another instance's.
            let Some(self_ty) = self.instance_self_ty(&of, &module, resolve_type) else {
                // Left unlinked: no call may reach another body through
                // the path without arguments either.
                unlinked.insert(format!("{}::{name}", of.qualified_self_ty(&module)));
                continue;
            };
            if of.self_ty_args.is_some() {
                instances.push(body.clone());
            }
            methods.push(Method {
                body,
                self_ty,
                trait_name: of.trait_name,
                name,
            });
        }
        for (body, attrs) in body_attrs {
            self.attrs.entry(body).or_insert(attrs);
        }
        self.instance_methods = instances.into_iter().collect();
        let mut aliases = BTreeMap::new();
        let mut inherent: BTreeMap<String, Vec<&Method>> = BTreeMap::new();
        for m in methods.iter().filter(|m| m.trait_name.is_none()) {
            inherent
                .entry(format!("{}::{}", m.self_ty, m.name))
                .or_default()
                .push(m);
        }
        // A call path two bodies answer is linked to neither, nor one that
        // an unlinked block's method could also answer: `resolve_callee`
        // falls back to the path without generic arguments, where that
        // block's call would land (`impl Wrapper` beside `impl
        // Wrapper<Alias>`).
        for (call, found) in inherent {
            if let [m] = found[..]
                && !unlinked.contains(&call)
            {
                aliases.insert(call, m.body.clone());
            }
        }
        // The trait paths some body calls, some body (a function's, a
        // constant's) reifies to a `fn` pointer, or a constant's bytes
        // point to (`allocN (fn: <T as Tr>::m)`), and the methods a call
        // through a trait object may run.
        let dispatched = self.dispatched_methods();
        let named = self
            .bodies
            .values()
            .flat_map(|b| b.called_items().chain(b.reified_fns()))
            .chain(self.fn_names.values())
            .chain(&dispatched);
        for c in named {
            let def = c.def_path();
            let Some((self_ty, trait_name, method)) = trait_call(&def) else {
                continue;
            };
            // The trait's generic arguments are not recorded: two
            // blocks of one trait on one type (`Mul<Foo>` and
            // `Mul<&Foo>` for `&Foo`) are told apart by nothing here,
            // so such a call links to neither, and stays refused.
            let mut found = methods.iter().filter(|m| {
                m.trait_name.as_deref() == Some(trait_name)
                    && m.name == method
                    && self_ty == m.self_ty
            });
            if let (Some(m), None) = (found.next(), found.next()) {
                aliases.insert(def, m.body.clone());
            }
        }
        self.call_aliases = aliases;
    }

    /// The self type of `of`'s block as rustc prints it at a call in
    /// `module` (`&kernel::Foo`, `kernel::Wrapper<u32>`), each generic
    /// argument through `resolve_type`; `None` when one is not certain.
    ///
    /// Only a block at the kernel's root with a one-segment self path is
    /// linked as an instance: the source's type names are resolved from
    /// the root (`kernel::Foo`), so in another module, or for a type named
    /// through other modules, they could name another type. A lifetime
    /// argument is `'_`, as rustc prints erased lifetimes (two blocks
    /// cannot differ by a lifetime alone); a const argument is not
    /// resolved.
    fn instance_self_ty(
        &self,
        of: &super::ImplOf,
        module: &str,
        resolve_type: &ResolveType,
    ) -> Option<String> {
        let base = of.qualified_self_ty(module);
        let Some(args) = &of.self_ty_args else {
            return Some(base);
        };
        if module != "kernel" || of.self_ty_qualified {
            return None;
        }
        let printed = args
            .iter()
            .map(|a| {
                if a.starts_with('\'') {
                    Some("'_".to_owned())
                } else {
                    resolve_type(a, self).map(|t| t.to_string())
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(format!("{base}<{}>", printed.join(", ")))
    }

    /// A name for the body at `def` that does not move with the source: an
    /// impl method by its type and trait (`kernel::Complex32::norm`,
    /// `kernel::Complex32_as_Mul::mul`) rather than by the block's position,
    /// which an edit above it changes; any other path as it is.
    pub fn stable_name(&self, def: &str) -> String {
        let Some((owner, method)) = def.rsplit_once("::") else {
            return def.to_string();
        };
        let Some((module, block)) = owner.rsplit_once("::") else {
            return def.to_string();
        };
        match self.attrs.get(def).and_then(|a| a.impl_of.as_ref()) {
            Some(of) if block.starts_with("<impl at ") => {
                // Only a linked instance's arguments (a mono instance's
                // block names its parameters, which mean nothing here).
                let ty = of.self_ty_name(self.instance_methods.contains(def));
                match &of.trait_name {
                    None => format!("{module}::{ty}::{method}"),
                    Some(t) => format!("{module}::{ty}_as_{t}::{method}"),
                }
            }
            _ => def.to_string(),
        }
    }

    /// The def path of the body a call to `def` runs: its alias from
    /// [`Crate::link_impl_methods`], or `def` itself.
    pub fn resolve_call<'a>(&'a self, def: &'a str) -> &'a str {
        self.call_aliases.get(def).map_or(def, String::as_str)
    }

    /// The def path of the body a call of `path` runs: an instance of a
    /// generic function by the whole printed path with its arguments
    /// (`kernel::twice::<kernel::AddN>`, see [`crate::mono`]), else as
    /// [`Crate::resolve_call`] resolves its def path.
    pub fn resolve_callee(&self, path: &crate::model::Path) -> String {
        match self.call_aliases.get(&path.to_string()) {
            Some(body) => body.clone(),
            None => self.resolve_call(&path.def_path()).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impl_segments_normalize_to_their_start() {
        assert_eq!(
            normalize_impl_segment("<impl at /src/kernel.rs:17:1: 17:35>").as_deref(),
            Some("<impl@17:1>")
        );
        assert_eq!(
            normalize_impl_segment("<impl at m.rs:1:10: 1:15>").as_deref(),
            Some("<impl@1:10>")
        );
        assert_eq!(normalize_impl_segment("Complex32"), None);
        assert_eq!(normalize_impl_segment("<impl at nowhere>"), None);
    }

    #[test]
    fn trait_calls_split_into_type_trait_and_method() {
        assert_eq!(
            trait_call("<kernel::Complex32 as std::ops::Mul>::mul"),
            Some(("kernel::Complex32", "Mul", "mul"))
        );
        assert_eq!(
            trait_call("<kernel::V as std::ops::Add<kernel::V>>::add"),
            Some(("kernel::V", "Add", "add"))
        );
        assert_eq!(trait_call("kernel::Complex32::norm"), None);
    }
}
