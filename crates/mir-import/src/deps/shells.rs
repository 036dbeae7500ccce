//! Source expressions for dependency constants that have no declaring
//! path, so that rustc can evaluate them through twins when the
//! interpreter cannot: instances of generic constants
//! (`<::crypto_bigint::Uint<4>>::ZERO`) and trait constants no MIR prints
//! (`<::crypto_bigint::Uint<4> as ::crypto_bigint::Zero>::ZERO`).

use std::collections::{BTreeMap, BTreeSet};

use kernel_deps::BuiltDeps;

use super::dep_mir;
use crate::model::{BodyKind, ConstOperand, Crate, Path, Ty};

/// Gives each trait constant of a dependency that a reachable body reads
/// (`<crypto_bigint::Uint<4> as crypto_bigint::Zero>::ZERO`), and that no
/// MIR printed (a generic impl's associated constant is printed nowhere), a
/// body with no statements at the type it is read at, and records its
/// source expression (`<::crypto_bigint::Uint<4> as ::crypto_bigint::Zero>
/// ::ZERO`): the evaluator fails on it by name, and rustc then evaluates it
/// through a twin ([`crate::import_and_evaluate`]). Only a self type of a
/// dependency or a primitive one, which the twin can name.
pub(crate) fn add_trait_constant_shells(krate: &mut Crate, deps: &BuiltDeps) {
    let crates: BTreeSet<&str> = deps.crates.iter().map(|c| c.name.as_str()).collect();
    // The items that have bodies, once (`Crate::item_body` scans them all).
    let items: BTreeSet<String> = krate
        .bodies
        .values()
        .filter(|b| matches!(b.kind, BodyKind::Const | BodyKind::Static(_)))
        .map(|b| b.path.def_path())
        .collect();
    let mut shells: BTreeMap<String, (Path, Ty, String)> = BTreeMap::new();
    for body in krate.reachable_bodies() {
        for (c, ty) in body.const_operands(krate) {
            let ConstOperand::Item(p) = c else { continue };
            let def = p.def_path();
            if shells.contains_key(&def)
                || items.contains(&def)
                || p.int_limit_type().is_some()
                || p.type_id_of().is_some()
                || p.sized_property().is_some()
            {
                continue;
            }
            if let Some(source) = trait_constant_source(&def, &crates) {
                shells.insert(def, (p.clone(), ty, source));
            }
        }
    }
    for (def, (path, ty, source)) in shells {
        let mut locals = cranelift_entity::PrimaryMap::new();
        locals.push(crate::model::LocalDecl {
            ty: ty.clone(),
            mutable: true,
            is_arg: false,
        });
        krate.bodies.push(crate::model::Body {
            path,
            kind: BodyKind::Const,
            return_ty: ty,
            arg_count: 0,
            locals,
            debug: Vec::new(),
            scopes: Vec::new(),
            blocks: cranelift_entity::PrimaryMap::new(),
            value: None,
            pos: crate::model::Pos { line: 0, col: 0 },
            span: None,
        });
        krate.dependency_paths.insert(def, source);
    }
}

/// `<::A as ::c::Trait>::NAME` for the trait constant `def` (`<A as
/// c::Trait>::NAME`) when the trait is a dependency's (`c` in `crates`)
/// and `A` is a dependency's type or a primitive.
fn trait_constant_source(def: &str, crates: &BTreeSet<&str>) -> Option<String> {
    let (qualified, item) = def.strip_prefix('<')?.rsplit_once(">::")?;
    let (self_ty, trait_path) = qualified.split_once(" as ")?;
    let first = |path: &str| path.split("::").next().unwrap_or("").to_string();
    if !crates.contains(first(trait_path).as_str())
        || item.contains(['<', '{', '[', ':'])
        || self_ty.contains(['{', '&', '*', '(', '[', ' '])
    {
        return None;
    }
    let self_src = if crates.contains(first(self_ty).as_str()) {
        format!("::{self_ty}")
    } else if dep_mir::is_primitive(self_ty) {
        self_ty.to_string()
    } else {
        return None;
    };
    Some(format!("<{self_src} as ::{trait_path}>::{item}"))
}

/// The source expression of the generic constant instance `printed`
/// (`crypto_bigint::Uint::<4>::ZERO`): `<::crypto_bigint::Uint<4>>::ZERO`,
/// from the crate root so that no kernel item captures the path.
pub(super) fn instance_source(printed: &Path) -> Option<String> {
    let (item, owner) = printed.segments.split_last()?;
    if !item.args.is_empty()
        || owner.is_empty()
        || owner.iter().any(|s| s.name.contains(['<', '{']))
    {
        return None;
    }
    let owner = Ty::Adt(Path {
        segments: owner.to_vec(),
    });
    crate::mono::nameable(&owner).then(|| format!("<::{}>::{}", owner.to_rust_source(), item.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trait_constant_is_named_from_the_crate_root() {
        let crates: BTreeSet<&str> = ["crypto_bigint", "num_traits"].into();
        assert_eq!(
            trait_constant_source(
                "<crypto_bigint::Uint<4> as crypto_bigint::Zero>::ZERO",
                &crates
            )
            .as_deref(),
            Some("<::crypto_bigint::Uint<4> as ::crypto_bigint::Zero>::ZERO")
        );
        assert_eq!(
            trait_constant_source("<u32 as num_traits::Bounded>::MAX", &crates).as_deref(),
            Some("<u32 as ::num_traits::Bounded>::MAX")
        );
        // A kernel's own type, a trait of std, a reference: not named here.
        assert_eq!(
            trait_constant_source("<kernel::T as num_traits::Z>::Z", &crates),
            None
        );
        assert_eq!(
            trait_constant_source("<u32 as std::ops::Add>::X", &crates),
            None
        );
        assert_eq!(
            trait_constant_source("<&u32 as num_traits::Z>::Z", &crates),
            None
        );
    }

    #[test]
    fn a_constant_instance_is_named_from_the_crate_root() {
        let printed = |text: &str| match crate::parse::parse_type(text) {
            Ok(Ty::Adt(p)) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            instance_source(&printed("crypto_bigint::Uint::<4>::ZERO")).as_deref(),
            Some("<::crypto_bigint::Uint<4>>::ZERO")
        );
        assert_eq!(
            instance_source(&printed("heapless::Vec::<u32, 8>::INIT")).as_deref(),
            Some("<::heapless::Vec<u32, 8>>::INIT")
        );
        assert_eq!(
            instance_source(&printed("m::<impl at /s/a.rs:1:1: 1:9>::X")),
            None
        );
        assert_eq!(instance_source(&printed("ZERO")), None);
    }
}
