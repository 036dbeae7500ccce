//! What the model knows of closures' captures: their types, from the
//! aggregates that build a closure or its body's reads ([`Crate::closure_captures`]),
//! and their offsets, which rustc's layout report leaves out, from the
//! layout probe's measurement of a struct laid out as the closure is
//! ([`Crate::closure_proxies`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::unambiguous::Unambiguous;

use super::Crate;
use super::body::{Body, Local, PlaceElem};
use super::ty::Ty;

impl Crate {
    /// The closures `b` builds (an aggregate of a closure type), each by
    /// its type's name with its captures' types, in the order built.
    pub fn closures_built_in(&self, b: &Body) -> Vec<(String, Vec<Ty>)> {
        let mut out = Vec::new();
        for bb in b.blocks.values() {
            for st in &bb.statements {
                let super::StatementKind::Assign(
                    dest,
                    super::Rvalue::Aggregate(super::AggregateKind::Opaque(_), ops),
                ) = &st.kind
                else {
                    continue;
                };
                // The report names a closure as the destination's type
                // does (std's by path, `{closure@std::iter::..::map_fold<..>
                // ::{closure#0}}`), not as the aggregate does (by span).
                let Some(Ty::Opaque(name)) = b.place_ty(dest) else {
                    continue;
                };
                if !name.starts_with("{closure@") {
                    continue;
                }
                let tys: Option<Vec<Ty>> = ops.iter().map(|op| self.operand_ty(b, op)).collect();
                if let Some(tys) = tys {
                    out.push((name, tys));
                }
            }
        }
        out
    }

    /// The capture types of each closure type, by its printed name: from
    /// the aggregates that build one (`{closure@..} { a: copy _5 }`), and
    /// else from its body's reads of its captures (`((*_1).0: u8)`), which
    /// name every capture, since a closure captures only what its body uses.
    /// A closure that neither shows completely is absent, and so is a name
    /// that two different capture lists (without type parameters) share:
    /// rustc prints a closure's type without its generic arguments, so a
    /// closure of a generic function inlined at two types, or one a macro
    /// expands twice, is two types under one name.
    pub fn closure_captures(&self) -> BTreeMap<String, Vec<Ty>> {
        let mut found: Unambiguous<Vec<Ty>> = Unambiguous::default();
        // A generic function's own copy (`[T]`) is not one of the types that
        // share the name, its instances are; it counts only where no
        // instance shows.
        let mut generic: BTreeMap<String, Vec<Ty>> = BTreeMap::new();
        let mut record = |found: &mut Unambiguous<Vec<Ty>>, name: String, tys: Vec<Ty>| {
            if tys.iter().any(Ty::mentions_type_parameter) {
                generic.entry(name).or_insert(tys);
            } else {
                found.insert(name, tys);
            }
        };
        for b in self.bodies.values() {
            for (name, tys) in self.closures_built_in(b) {
                record(&mut found, name, tys);
            }
        }
        // The closures aggregates built: their bodies' reads are not needed.
        let built: BTreeSet<String> = found.names().cloned().collect();
        for b in self.bodies.values() {
            let Some((by, name)) = b.closure_receiver() else {
                continue;
            };
            let by_ref = by.is_some();
            if built.contains(name) {
                continue;
            }
            let mut fields: BTreeMap<u32, Ty> = BTreeMap::new();
            b.for_each_place(|p| {
                if p.local != Local::from_u32(1) {
                    return;
                }
                let field = if by_ref {
                    match p.projection.as_slice() {
                        [PlaceElem::Deref, PlaceElem::Field(i, t), ..] => Some((i, t)),
                        _ => None,
                    }
                } else {
                    match p.projection.as_slice() {
                        [PlaceElem::Field(i, t), ..] => Some((i, t)),
                        _ => None,
                    }
                };
                if let Some((i, t)) = field {
                    fields.insert(*i, t.clone());
                }
            });
            // Every index from 0 on, with no gap.
            if fields.keys().copied().eq(0..fields.len() as u32) {
                record(&mut found, name.to_string(), fields.into_values().collect());
            }
        }
        let (mut found, ambiguous) = found.into_parts();
        for (name, tys) in generic {
            if !ambiguous.contains(&name) {
                found.entry(name).or_insert(tys);
            }
        }
        // `core` closures that no printed body builds or reads, whose
        // captures their function's generic arguments say.
        for name in self.layouts.types.keys() {
            if !found.contains_key(name)
                && let Some(tys) = known_std_captures(name)
            {
                found.insert(name.to_string(), tys);
            }
        }
        found
    }

    /// For each closure with several captures whose offsets the report
    /// leaves unknown, the type whose layout the probe measures instead: a
    /// generic tuple struct of its capture types ([`proxy_struct`]). rustc
    /// lays a closure out as it lays out such a struct, whose last field is
    /// a sized type parameter; not as a tuple, whose last field may be
    /// unsized and so stays in place and keeps the largest niche from
    /// moving to the end. The test `closure_layouts_are_proxy_struct_layouts`
    /// pins this on rustc itself.
    ///
    /// A capture that is itself a closure (`core`'s `Take::try_fold`'s
    /// `check` captures the fold's closure beside a `&mut usize`), which
    /// source cannot name, is replaced by its own proxy, recursively, and a
    /// pointer to one by a pointer to `()`: each is laid out as what it
    /// stands for (size, alignment, niche), so the outer struct's fields are
    /// reordered as the closure's are.
    pub fn closure_proxies(&self) -> BTreeMap<String, Ty> {
        let captures = self.closure_captures();
        captures
            .iter()
            .filter(|(name, tys)| {
                tys.len() >= 2
                    && self.layouts.get(name).is_some_and(|l| {
                        matches!(&l.shape, crate::layout::TypeShape::Struct { fields } if fields.is_empty())
                            && l.size > 0
                    })
            })
            .filter_map(|(name, _)| {
                let proxy = self.proxy_with(&Ty::Opaque(name.clone()), &captures)?;
                Some((name.clone(), proxy))
            })
            .collect()
    }

    /// `ty` with each closure inside it replaced by its proxy struct, and
    /// each pointer to a type holding one by a pointer to `()`, as
    /// [`Crate::closure_proxies`] builds them: a type source can name
    /// and rustc lays out as `ty` (size, alignment, niche), which the
    /// layout probe can measure for it (`Option<Map<Iter<'_, u32>,
    /// {closure}>>`, which `FlatMap` holds). `None` if a closure's captures
    /// are unknown.
    pub fn closure_proxy(&self, ty: &Ty) -> Option<Ty> {
        self.proxy_with(ty, &self.closure_captures())
    }

    /// [`Crate::closure_proxy`] with the closures' captures given.
    fn proxy_with(&self, ty: &Ty, captures: &BTreeMap<String, Vec<Ty>>) -> Option<Ty> {
        // Zero-sized and byte-aligned, as `()` is.
        let zero_sized = |closure: &str| {
            self.layouts
                .get(closure)
                .is_some_and(|l| l.size == 0 && l.align == 1)
        };
        // The report prints a layout for sized types only.
        let sized = |t: &Ty| {
            self.layouts.sizedness(t) == Some(true) || self.layouts.get(&t.to_string()).is_some()
        };
        closure_proxy(ty, captures, &zero_sized, &sized, 0)
    }

    /// Gives each closure of [`Crate::closure_proxies`] its capture
    /// offsets from the probed layout of its tuple, where the tuple's size and
    /// alignment are the closure's (as rustc printed them).
    pub fn record_closure_offsets(&mut self, probed: &crate::eval::TupleLayouts) {
        for (name, proxy) in self.closure_proxies() {
            let Some(tys) = proxy_fields(&proxy) else {
                continue;
            };
            let Some((size, align, offsets)) = probed.by_type.get(&proxy.to_string()) else {
                continue;
            };
            // A captured closure the report does not print is as large as
            // its proxy, which the probe measured too.
            let sizes: Option<Vec<u64>> = tys
                .iter()
                .map(|t| {
                    self.plain_size(t).or_else(|| {
                        if *t == &Ty::unit() {
                            return Some(0);
                        }
                        proxy_fields(t)?;
                        probed.by_type.get(&t.to_string()).map(|(size, _, _)| *size)
                    })
                })
                .collect();
            if let Some(sizes) = sizes {
                self.layouts
                    .record_capture_offsets(&name, *size, *align, &sizes, offsets);
            }
        }
    }

    /// Gives the captures of each closure type whose layout is certain
    /// their offsets (see [`crate::layout::LayoutTable::record_captures`]):
    /// the report prints a closure's captures as padding, and rustc reorders
    /// fields, so only a closure with at most one capture that is not
    /// zero-sized, filling the closure, has offsets that follow (all 0).
    pub fn record_closure_captures(&mut self) {
        let mut found = Vec::new();
        for (name, tys) in self.closure_captures() {
            let sizes: Option<Vec<u64>> = tys.iter().map(|t| self.plain_size(t)).collect();
            if let Some(sizes) = sizes {
                found.push((name, sizes));
            }
        }
        for (name, sizes) in found {
            self.layouts.record_captures(&name, &sizes);
        }
    }

    /// The size of `ty` where it needs no probe: scalars, thin and fat
    /// pointers, and types the report prints (closures, ADTs).
    fn plain_size(&self, ty: &Ty) -> Option<u64> {
        use super::ty::FloatTy;
        Some(match ty {
            Ty::Bool => 1,
            Ty::Char => 4,
            Ty::Int(i) => i.size(),
            Ty::Float(FloatTy::F32) => 4,
            Ty::Float(FloatTy::F64) => 8,
            Ty::Ref(_, t) | Ty::RawPtr(_, t) if self.layouts.is_unsized(t) => 16,
            Ty::Ref(..) | Ty::RawPtr(..) | Ty::FnPtr(..) => 8,
            Ty::Tuple(e) if e.is_empty() => 0,
            other => self.layouts.get(&other.to_string())?.size,
        })
    }
}

/// The captures of a `core` closure whose source fixes them, from the
/// generic arguments in its name, in the order its body first names them:
/// `Filter::fold`'s `filter_fold<T, Acc, P, F>` captures `predicate: P`,
/// then `fold: F`; `Enumerate::fold`'s `enumerate<T, Acc, F>`, `fold: F`
/// then `count: usize`. `None` for any other closure.
fn known_std_captures(name: &str) -> Option<Vec<Ty>> {
    let def = name
        .strip_prefix("{closure@")?
        .strip_suffix("::{closure#0}}")?;
    let (function, args) = super::brackets::trailing_generic_args(def)?;
    let items = super::brackets::top_level_items(args);
    let closure = |t: &str| t.starts_with("{closure@") && t.ends_with('}');
    if crate::calls::std_relative(function) == Some("iter::adapters::filter::filter_fold") {
        let [_, _, predicate, fold] = items.as_slice() else {
            return None;
        };
        return (closure(predicate) && closure(fold)).then(|| {
            vec![
                Ty::Opaque(predicate.to_string()),
                Ty::Opaque(fold.to_string()),
            ]
        });
    }
    // `Enumerate::fold`'s `enumerate<T, Acc, F>(count, fold)`: `move |acc,
    // item| { let acc = fold(acc, (count, item)); count += 1; acc }`, which
    // captures `fold` first (rustc prints `{ 0: fold, 1: count }`). rustc
    // passes it as a constant where `count` is 0 and `fold` takes no space.
    let (self_ty, trait_path, method) = super::split_qualified(function)?;
    let enumerate = crate::calls::std_relative(self_ty).is_some_and(|s| {
        s.starts_with("iter::Enumerate<") || s.starts_with("iter::adapters::enumerate::Enumerate<")
    }) && matches!(
        crate::calls::std_relative(trait_path),
        Some("iter::Iterator" | "iter::traits::iterator::Iterator")
    ) && method == "fold::enumerate";
    let [_, _, fold] = items.as_slice() else {
        return None;
    };
    (enumerate && closure(fold))
        .then(|| vec![Ty::Opaque(fold.to_string()), Ty::Int(super::IntTy::Usize)])
}

/// How deep [`closure_proxy`] follows closures inside closures.
const PROXY_DEPTH: usize = 8;

/// The type the layout probe measures for `ty`: a closure as the proxy
/// struct of its captures' proxies (see [`Crate::closure_proxies`]),
/// a pointer to a closure, or to a type that `sized` knows to be sized and
/// that holds one (`StepBy`'s `nth` closure's `&mut Skip<Map<I,
/// {closure}>>`), as a pointer to `()` (a thin pointer either way), tuples
/// and arrays element by element, a struct or enum holding a closure
/// argument by argument, anything else as it is; a closure whose captures
/// are not known but that the report prints zero-sized and byte-aligned
/// as `()`. `None` for any other closure whose captures are not known.
fn closure_proxy(
    ty: &Ty,
    captures: &BTreeMap<String, Vec<Ty>>,
    zero_sized: &dyn Fn(&str) -> bool,
    sized: &dyn Fn(&Ty) -> bool,
    depth: usize,
) -> Option<Ty> {
    if depth > PROXY_DEPTH {
        return None;
    }
    let closure = |t: &Ty| matches!(t, Ty::Opaque(n) if n.starts_with("{closure@"));
    let holds_closure = |t: &Ty| {
        let found = std::cell::Cell::new(false);
        t.replace(&|inner| {
            found.set(found.get() || closure(inner));
            None
        });
        found.get()
    };
    let thin = |t: &Ty| closure(t) || (holds_closure(t) && sized(t));
    Some(match ty {
        Ty::Opaque(name) if closure(ty) => match captures.get(name) {
            Some(of) => {
                let fields: Vec<Ty> = of
                    .iter()
                    .map(|c| closure_proxy(c, captures, zero_sized, sized, depth + 1))
                    .collect::<Option<_>>()?;
                proxy_struct(fields)?
            }
            None if zero_sized(name) => Ty::unit(),
            None => return None,
        },
        Ty::Ref(m, inner) if thin(inner) => Ty::Ref(*m, Box::new(Ty::unit())),
        Ty::RawPtr(m, inner) if thin(inner) => Ty::RawPtr(*m, Box::new(Ty::unit())),
        Ty::Tuple(items) => Ty::Tuple(
            items
                .iter()
                .map(|t| closure_proxy(t, captures, zero_sized, sized, depth + 1))
                .collect::<Option<_>>()?,
        ),
        Ty::Array(item, len) => Ty::Array(
            Box::new(closure_proxy(item, captures, zero_sized, sized, depth + 1)?),
            len.clone(),
        ),
        // A struct or enum holding a closure (`Map<I, {closure}>`) is laid
        // out as the same one holding its proxy.
        Ty::Adt(path) if holds_closure(ty) => {
            let mut path = path.clone();
            for segment in &mut path.segments {
                for arg in &mut segment.args {
                    if let crate::model::GenericArg::Type(t) = arg {
                        *t = closure_proxy(t, captures, zero_sized, sized, depth + 1)?;
                    }
                }
            }
            Ty::Adt(path)
        }
        other => other.clone(),
    })
}

/// The most captures a closure's proxy struct has ([`proxy_struct`]).
pub const MAX_PROXY_FIELDS: usize = 16;

/// The generic tuple struct a closure with `fields` as captures is probed
/// as: `self::ClosureProxyN<..>`, declared in each probe module
/// ([`proxy_struct_declarations`]). A struct whose last field is a sized
/// type parameter is laid out as a closure is (rustc's `AlwaysSized`
/// kind, which may move the largest niche to the end), and a tuple is not:
/// `(u8, bool, u16, ())` puts `bool` at 2, a closure of those captures at
/// 3. `None` past [`MAX_PROXY_FIELDS`].
fn proxy_struct(fields: Vec<Ty>) -> Option<Ty> {
    if fields.len() > MAX_PROXY_FIELDS {
        return None;
    }
    let segment = |name: String, args: Vec<crate::model::GenericArg>| crate::model::PathSegment {
        name,
        args,
    };
    let name = format!("ClosureProxy{}", fields.len());
    let args = fields
        .into_iter()
        .map(crate::model::GenericArg::Type)
        .collect();
    Some(Ty::Adt(crate::model::Path {
        segments: vec![segment("self".to_string(), Vec::new()), segment(name, args)],
    }))
}

/// The captures' stand-ins of a proxy struct ([`proxy_struct`]); `None`
/// for any other type.
pub fn proxy_fields(ty: &Ty) -> Option<Vec<&Ty>> {
    let Ty::Adt(path) = ty else { return None };
    let [first, proxy] = path.segments.as_slice() else {
        return None;
    };
    let arity = proxy
        .name
        .strip_prefix("ClosureProxy")?
        .parse::<usize>()
        .ok()?;
    let fields: Vec<&Ty> = proxy.type_args().collect();
    (first.name == "self" && first.args.is_empty() && fields.len() == arity).then_some(fields)
}

/// The proxy structs' declarations, for a module that names them
/// (`self::ClosureProxyN`).
pub fn proxy_struct_declarations() -> String {
    (0..=MAX_PROXY_FIELDS)
        .map(|n| {
            let params: Vec<String> = (0..n).map(|i| format!("T{i}")).collect();
            let fields: Vec<String> = params.iter().map(|p| format!("pub {p}")).collect();
            if n == 0 {
                "#[allow(dead_code)]\npub struct ClosureProxy0;\n".to_string()
            } else {
                format!(
                    "#[allow(dead_code)]\npub struct ClosureProxy{n}<{}>({});\n",
                    params.join(", "),
                    fields.join(", ")
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntTy;

    #[test]
    fn a_captured_closure_stands_in_as_its_own_proxy_struct() {
        let closure = |n: &str| Ty::Opaque(format!("{{closure@{n}}}"));
        let usize_ty = Ty::Int(IntTy::Usize);
        let by_ref = |t: Ty| Ty::Ref(crate::model::Mutability::Mut, Box::new(t));
        let captures: BTreeMap<String, Vec<Ty>> = [
            // `enumerate(count, fold)`, `fold` a closure over a key closure
            // that borrows.
            (
                "{closure@enumerate}".to_string(),
                vec![closure("fold"), usize_ty.clone()],
            ),
            ("{closure@fold}".to_string(), vec![closure("key")]),
            (
                "{closure@key}".to_string(),
                vec![Ty::Ref(
                    crate::model::Mutability::Not,
                    Box::new(Ty::Int(IntTy::U32)),
                )],
            ),
            // `check(n, fold)` over a closure the report prints zero-sized,
            // whose captures no printed body shows.
            (
                "{closure@check}".to_string(),
                vec![by_ref(usize_ty.clone()), closure("empty")],
            ),
            (
                "{closure@pointing}".to_string(),
                vec![by_ref(closure("unknown")), closure("unknown")],
            ),
        ]
        .into();
        let zero_sized = |n: &str| n == "{closure@empty}";
        let sized = |t: &Ty| t.to_string().starts_with("kernel::Sized");
        let proxy = |n: &str| {
            closure_proxy(&closure(n), &captures, &zero_sized, &sized, 0).map(|t| t.to_string())
        };
        assert_eq!(
            proxy("enumerate").as_deref(),
            Some("self::ClosureProxy2<self::ClosureProxy1<self::ClosureProxy1<&u32>>, usize>")
        );
        assert_eq!(
            proxy("check").as_deref(),
            Some("self::ClosureProxy2<&mut usize, ()>")
        );
        // A pointer to a closure is a thin pointer whatever it points to;
        // a closure neither printed zero-sized nor with known captures has
        // no proxy.
        assert_eq!(proxy("pointing"), None);
        let pointer_only: BTreeMap<String, Vec<Ty>> = [(
            "{closure@p}".to_string(),
            vec![by_ref(closure("unknown")), usize_ty.clone()],
        )]
        .into();
        assert_eq!(
            closure_proxy(&closure("p"), &pointer_only, &zero_sized, &sized, 0)
                .map(|t| t.to_string()),
            Some("self::ClosureProxy2<&mut (), usize>".to_string())
        );
        // So is a pointer to a sized type that holds a closure (`StepBy`'s
        // `nth` closure's `&mut Skip<Map<I, F>>`), which the probe cannot
        // name; one whose sizedness is unknown keeps its type.
        let holder = |name: &str| {
            crate::parse::parse_type(&format!("kernel::{name}<{{closure@unknown}}>"))
                .expect("a type")
        };
        let holding: BTreeMap<String, Vec<Ty>> = [
            (
                "{closure@sized}".to_string(),
                vec![by_ref(holder("Sized")), usize_ty.clone()],
            ),
            (
                "{closure@unsure}".to_string(),
                vec![by_ref(holder("Maybe")), usize_ty],
            ),
        ]
        .into();
        let holding_proxy = |n: &str| {
            closure_proxy(&closure(n), &holding, &zero_sized, &sized, 0).map(|t| t.to_string())
        };
        assert_eq!(
            holding_proxy("sized").as_deref(),
            Some("self::ClosureProxy2<&mut (), usize>")
        );
        assert_eq!(
            holding_proxy("unsure").as_deref(),
            Some("self::ClosureProxy2<&mut kernel::Maybe<{closure@unknown}>, usize>")
        );
        // A struct or enum holding a closure (`FlatMap`'s `Option<Map<I,
        // F>>`) holds its proxy instead; none if the closure has none.
        let fused = |f: &str| {
            crate::parse::parse_type(&format!(
                "std::option::Option<std::iter::Map<std::slice::Iter<'_, u32>, {{closure@{f}}}>>"
            ))
            .expect("a type")
        };
        let adt_proxy = |f: &str| {
            closure_proxy(&fused(f), &captures, &zero_sized, &sized, 0).map(|t| t.to_string())
        };
        assert_eq!(
            adt_proxy("key").as_deref(),
            Some(
                "std::option::Option<std::iter::Map<std::slice::Iter<'_, u32>, self::ClosureProxy1<&u32>>>"
            )
        );
        assert_eq!(
            adt_proxy("empty").as_deref(),
            Some("std::option::Option<std::iter::Map<std::slice::Iter<'_, u32>, ()>>")
        );
        assert_eq!(adt_proxy("unknown"), None);
    }

    #[test]
    fn filter_folds_captures_are_its_predicate_then_its_fold() {
        let (p, f) = (
            "{closure@/src/kernel.rs:1:2: 1:3}",
            "{closure@/src/kernel.rs:4:5: 4:6}",
        );
        let name = format!(
            "{{closure@std::iter::adapters::filter::filter_fold<u32, u32, {p}, {f}>::{{closure#0}}}}"
        );
        assert_eq!(
            known_std_captures(&name),
            Some(vec![Ty::Opaque(p.into()), Ty::Opaque(f.into())])
        );
        // Any other closure of `core`, or another index, says nothing.
        assert_eq!(
            known_std_captures(&name.replace("filter_fold", "map_fold")),
            None
        );
        assert_eq!(
            known_std_captures(&name.replace("{closure#0}}", "{closure#1}}")),
            None
        );
    }

    #[test]
    fn enumerate_folds_captures_are_its_fold_then_its_count() {
        let f = "{closure@/src/kernel.rs:4:5: 4:6}";
        let name = format!(
            "{{closure@<std::iter::Enumerate<I> as std::iter::Iterator>::fold::enumerate<&u32, u32, {f}>::{{closure#0}}}}"
        );
        assert_eq!(
            known_std_captures(&name),
            Some(vec![Ty::Opaque(f.into()), Ty::Int(IntTy::Usize)])
        );
        // `try_fold`'s captures `&mut count`; `rfold`'s is another trait's.
        for other in [
            "Iterator>::try_fold::enumerate",
            "DoubleEndedIterator>::rfold::enumerate",
        ] {
            let renamed = name.replace("Iterator>::fold::enumerate", other);
            assert_eq!(known_std_captures(&renamed), None, "{renamed}");
        }
    }

    /// A kernel that builds the closure `{closure@/src/kernel.rs:3:13: 3:16}`
    /// twice, capturing `_1: u32` and then `_2` of type `second`.
    fn two_builds(second: &str) -> Crate {
        let mir = format!(
            "fn kernel::k(_1: u32, _2: {second}) -> () {{
    let mut _0: ();
    let mut _3: {{closure@/src/kernel.rs:3:13: 3:16}};
    let mut _4: {{closure@/src/kernel.rs:3:13: 3:16}};

    bb0: {{
        _3 = {{closure@/src/kernel.rs:3:13: 3:16}} {{ n: copy _1 }};
        _4 = {{closure@/src/kernel.rs:3:13: 3:16}} {{ n: copy _2 }};
        return;
    }}
}}
"
        );
        crate::import_text(&mir, "", None).expect("the MIR imports")
    }

    #[test]
    fn one_closure_name_with_two_capture_lists_has_none() {
        let name = "{closure@/src/kernel.rs:3:13: 3:16}";
        let same = two_builds("u32").closure_captures();
        assert_eq!(same.get(name), Some(&vec![Ty::Int(IntTy::U32)]));
        // A generic function's closure inlined at two types prints as one.
        let two = two_builds("u64").closure_captures();
        assert_eq!(two.get(name), None, "{two:?}");
        // The generic function's own copy, capturing `T`, is neither.
        let generic = two_builds("T").closure_captures();
        assert_eq!(generic.get(name), Some(&vec![Ty::Int(IntTy::U32)]));
    }
}
