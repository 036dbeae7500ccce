//! Trait objects: the calls through `dyn Trait` and the coercions that make
//! one.
//!
//! rustc prints a call through a trait object as a call of the trait's
//! method on the object type, with no body (`<dyn kernel::Shape as
//! kernel::Shape>::area(copy _1)`): which body runs is the vtable's choice.
//! A vtable is made where a pointer to a concrete type becomes a pointer to
//! a trait object (`copy _4 as &dyn kernel::Shape (PointerCoercion(Unsize,
//! Implicit))`).
//!
//! rustc's vtables hold every method of the trait. Ours hold the methods
//! some reachable body calls through an object of that principal trait
//! ([`VtableLayouts`]), in one fixed order: a vtable then names only
//! functions a kernel can run, and each of its methods is the concrete
//! type's `<T as Trait>::m`, which reachability follows
//! ([`DispatchJoin`]) and linking resolves as any call of it.

use std::collections::{BTreeMap, BTreeSet};

use device_ir::layout::POINTER_SIZE;
use serde::Serialize;

use super::brackets::split_top_level;
use super::{Body, CastKind, Crate, Operand, Path, PathSegment, Place, Rvalue, StatementKind, Ty};

/// The bytes of a vtable before its slots: the drop function, the size
/// and the alignment of the concrete type, a pointer-sized field each
/// (rustc's order). The evaluator's vtables (for constants) and the
/// lowering's (for coercions in code) share this layout, so interning
/// makes one global of the two.
pub const VTABLE_HEADER: u64 = 3 * POINTER_SIZE;

/// Where a vtable holds the concrete type's size.
pub const VTABLE_SIZE: u64 = POINTER_SIZE;

/// Where a vtable holds the concrete type's alignment.
pub const VTABLE_ALIGN: u64 = 2 * POINTER_SIZE;

/// How many upcasts deep a vtable's vtables go at most (supertraits form
/// no cycle; the bound only keeps a wrong layout from recursing forever).
pub const MAX_UPCAST_DEPTH: u32 = 16;

/// Where a vtable holds its `k`th slot (a method's address, then the
/// upcasts' vtables).
pub fn vtable_slot_offset(k: usize) -> u64 {
    VTABLE_HEADER + k as u64 * POINTER_SIZE
}

/// The bytes of a vtable for a concrete type of `size` and `align` with
/// `slots` slots: the header with a null drop slot, then zeros where the
/// slots' pointers go (their relocations hold the targets).
pub fn vtable_bytes(size: u64, align: u64, slots: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; vtable_slot_offset(slots) as usize];
    let at = |field: u64| field as usize..(field + POINTER_SIZE) as usize;
    bytes[at(VTABLE_SIZE)].copy_from_slice(&size.to_le_bytes());
    bytes[at(VTABLE_ALIGN)].copy_from_slice(&align.to_le_bytes());
    bytes
}

/// A method called through a trait object.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct VirtualMethod {
    /// The trait as the call names it (`kernel::Shape`, `kernel::Scale<u32>`,
    /// a supertrait of the object's trait).
    pub trait_ref: String,
    /// The method's name.
    pub method: String,
}

impl VirtualMethod {
    /// The call of this method on `concrete`, as rustc prints a call of it
    /// (`<kernel::Sq as kernel::Shape>::area`).
    pub fn on(&self, concrete: &Ty) -> Path {
        Path {
            segments: vec![
                PathSegment {
                    name: format!("<{concrete} as {}>", self.trait_ref),
                    args: Vec::new(),
                },
                PathSegment {
                    name: self.method.clone(),
                    args: Vec::new(),
                },
            ],
        }
    }

    /// Whether this is a closure trait's method (`std::ops::Fn<(u32,)>::
    /// call`), whose arguments come in one tuple (the `rust-call` ABI) that
    /// the concrete method, a closure's body, takes spread.
    pub fn takes_argument_tuple(&self) -> bool {
        super::closure_trait_call(&self.on(&Ty::unit())).is_some()
    }

    /// The trait's last segment without its arguments (`Scale` for
    /// `kernel::Scale<u32>`, `Fn` for `std::ops::Fn<(u32,)>`).
    pub fn trait_name(&self) -> &str {
        let path = self.trait_ref.split('<').next().unwrap_or(&self.trait_ref);
        path.rsplit("::").next().unwrap_or(path)
    }
}

impl std::fmt::Display for VirtualMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{}", self.trait_ref, self.method)
    }
}

/// One call through a trait object in a body.
pub struct VirtualCall<'b> {
    /// The object's principal trait ([`principal`]).
    pub principal: String,
    /// The method called.
    pub method: VirtualMethod,
    /// The call's operands, the object pointer first.
    pub args: &'b [Operand],
    /// Where the result goes.
    pub destination: &'b Place,
}

impl VirtualCall<'_> {
    /// The types this call passes besides the receiver, and gets back, as
    /// the body holding it (`body`) types its operands.
    pub fn types(&self, krate: &Crate, body: &Body) -> Option<SlotTypes> {
        let mut args: Vec<Ty> = self
            .args
            .iter()
            .skip(1)
            .map(|a| krate.operand_ty(body, a))
            .collect::<Option<_>>()?;
        if self.method.takes_argument_tuple() {
            let [Ty::Tuple(elems)] = &args[..] else {
                return None;
            };
            args = elems.clone();
        }
        Some(SlotTypes {
            args,
            ret: body.place_ty(self.destination)?,
        })
    }
}

/// The principal trait of a trait object type (`kernel::Shape` for `dyn
/// kernel::Shape + std::marker::Send`): rustc prints it first, before the
/// auto traits, which add no method. Objects of one principal share a
/// vtable layout, so dropping an auto trait keeps the vtable. `None` for a
/// type that is no trait object.
pub fn principal(object: &str) -> Option<String> {
    let bounds = object.strip_prefix("dyn ")?;
    let first = split_top_level(bounds, " + ").map_or(bounds, |(p, _)| p);
    Some(first.trim().to_string())
}

/// The trait object type a pointer type points to (`&dyn kernel::Shape`
/// gives `dyn kernel::Shape`).
pub fn object_pointee(ty: &Ty) -> Option<&str> {
    ty.pointee()?.trait_object()
}

/// The object type and method of a call through a trait object
/// (`<dyn kernel::Shape as kernel::Shape>::area`); `None` for any other
/// path.
pub fn virtual_call(path: &Path) -> Option<(&str, VirtualMethod)> {
    let [qualified, method] = &path.segments[..] else {
        return None;
    };
    if !method.args.is_empty() {
        return None;
    }
    let inner = qualified.name.strip_prefix('<')?.strip_suffix('>')?;
    let (object, trait_ref) = split_top_level(inner, " as ")?;
    if !object.starts_with("dyn ") {
        return None;
    }
    Some((
        object,
        VirtualMethod {
            trait_ref: trait_ref.to_string(),
            method: method.name.clone(),
        },
    ))
}

impl Crate {
    /// The object type and method of a call through a trait object, as
    /// [`virtual_call`] reads the path, unless the kernel implements the
    /// method's trait for a trait object type: `<dyn Shape as
    /// Describe>::d` may then be `impl Describe for dyn Shape`'s method,
    /// which no vtable holds, and the call stays an ordinary one (refused
    /// by name: no body is linked to it).
    pub fn virtual_call<'p>(&self, path: &'p Path) -> Option<(&'p str, VirtualMethod)> {
        let (object, method) = virtual_call(path)?;
        let name = method.trait_name();
        let implemented = |t: &str| self.trait_object_impls.contains(t);
        (!implemented(name) && !implemented(crate::attrs::ANY_TRAIT)).then_some((object, method))
    }
}

impl Body {
    /// Every call through a trait object, in block order.
    pub fn virtual_calls<'b>(&'b self, krate: &Crate) -> impl Iterator<Item = VirtualCall<'b>> {
        self.item_calls().filter_map(|(path, args, destination)| {
            let (object, method) = krate.virtual_call(path)?;
            Some(VirtualCall {
                principal: principal(object)?,
                method,
                args,
                destination,
            })
        })
    }

    /// Every coercion of a pointer to a concrete type into a pointer to a
    /// trait object, as (the concrete type, the object's principal trait),
    /// in statement order. A coercion between two objects is not one.
    pub fn dyn_coercions(&self, krate: &Crate) -> Vec<(Ty, String)> {
        self.unsizings_to_objects(krate)
            .into_iter()
            .filter_map(|(from, to)| match from {
                Unsized::Concrete(t) => Some((t, to)),
                Unsized::Object(_) => None,
            })
            .collect()
    }

    /// Every unsizing coercion to a trait object pointer: what it comes
    /// from, and the object's principal trait.
    pub(crate) fn unsizings_to_objects(&self, krate: &Crate) -> Vec<(Unsized, String)> {
        let mut out = Vec::new();
        for st in self.blocks.values().flat_map(|bb| &bb.statements) {
            let StatementKind::Assign(_, Rvalue::Cast(CastKind::PointerCoercion(k), op, to)) =
                &st.kind
            else {
                continue;
            };
            if !k.starts_with("Unsize") {
                continue;
            }
            let Some(object) = object_pointee(to) else {
                continue;
            };
            let from = krate.operand_ty(self, op);
            let Some(pointee) = from.as_ref().and_then(Ty::pointee) else {
                continue;
            };
            let from = match pointee.trait_object() {
                Some(source) => match principal(source) {
                    Some(p) => Unsized::Object(p),
                    None => continue,
                },
                None => Unsized::Concrete(pointee.clone()),
            };
            if let Some(p) = principal(object) {
                out.push((from, p));
            }
        }
        out
    }
}

/// What an unsizing to a trait object starts from.
#[derive(Debug, PartialEq)]
pub(crate) enum Unsized {
    /// A concrete type.
    Concrete(Ty),
    /// Another trait object, by principal trait.
    Object(String),
}

/// What a call through an object passes besides the receiver (a closure
/// trait's argument tuple spread, as the call passes it on) and gets back:
/// what the function in the slot must take and return.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SlotTypes {
    /// The arguments after the receiver.
    pub args: Vec<Ty>,
    /// The result.
    pub ret: Ty,
}

/// The methods each trait object's vtable holds, by principal trait, in
/// slot order (sorted: the same in every run).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VtableLayouts {
    /// The methods by principal trait, each with the types its calls pass
    /// (`None` where a call's types are not known).
    pub slots: BTreeMap<String, Vec<(VirtualMethod, Option<SlotTypes>)>>,
    /// The concrete types made into objects of each principal trait
    /// (directly, or by upcasting an object of another).
    pub concrete: BTreeMap<String, BTreeSet<Ty>>,
    /// The principal traits each principal trait's objects are upcast to:
    /// its vtables hold, after the methods, the address of the same
    /// concrete type's vtable for each (sorted), as rustc's hold their
    /// supertraits'.
    pub upcasts: BTreeMap<String, BTreeSet<String>>,
}

impl VtableLayouts {
    /// The slot of `method` in the vtables of `principal`'s objects.
    pub fn slot(&self, principal: &str, method: &VirtualMethod) -> Option<usize> {
        self.slots
            .get(principal)?
            .iter()
            .position(|(m, _)| m == method)
    }

    /// The methods of `principal`'s vtables, in slot order, with their
    /// calls' types.
    pub fn methods(&self, principal: &str) -> &[(VirtualMethod, Option<SlotTypes>)] {
        self.slots.get(principal).map_or(&[], Vec::as_slice)
    }

    /// The principal traits `principal`'s objects are upcast to, in slot
    /// order (after the methods).
    pub fn upcasts(&self, principal: &str) -> impl Iterator<Item = &str> {
        self.upcasts
            .get(principal)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// The slot of the vtable for `to` in the vtables of `from`'s objects.
    pub fn upcast_slot(&self, from: &str, to: &str) -> Option<usize> {
        let k = self.upcasts(from).position(|t| t == to)?;
        Some(self.methods(from).len() + k)
    }
}

impl Crate {
    /// Every concrete method that a call through a trait object in any
    /// body may run (every coercion of the crate, and every vtable rustc
    /// dumped, joined with every such call): the paths
    /// [`Crate::link_impl_methods`] must link, whether or not a kernel
    /// reaches them.
    pub(crate) fn dispatched_methods(&self) -> Vec<Path> {
        let mut join = DispatchJoin::default();
        let mut out: Vec<Path> = self
            .bodies
            .values()
            .flat_map(|b| join.visit(self, b))
            .collect();
        // Objects rustc evaluated into a dumped allocation (a static's).
        for (t, p) in self.vtable_names.values() {
            out.extend(join.made_object(t.clone(), p));
        }
        out
    }
}

/// Joins, while reachability walks the bodies, the coercions it has seen
/// with the calls through objects it has seen: each (concrete type, method
/// of its object's trait) pair names `<T as Trait>::m`, which a kernel may
/// run.
#[derive(Default)]
pub(crate) struct DispatchJoin {
    layouts: VtableLayouts,
    called: BTreeMap<String, BTreeMap<VirtualMethod, Option<SlotTypes>>>,
}

impl DispatchJoin {
    /// Records `body`'s coercions and calls through objects; returns the
    /// concrete methods they newly make reachable.
    pub(crate) fn visit(&mut self, krate: &Crate, body: &Body) -> Vec<Path> {
        let mut out = Vec::new();
        for call in body.virtual_calls(krate) {
            let methods = self.called.entry(call.principal.clone()).or_default();
            if methods.contains_key(&call.method) {
                continue;
            }
            methods.insert(call.method.clone(), call.types(krate, body));
            for t in self
                .layouts
                .concrete
                .get(&call.principal)
                .into_iter()
                .flatten()
            {
                out.push(call.method.on(t));
            }
        }
        for (from, to) in body.unsizings_to_objects(krate) {
            match from {
                Unsized::Concrete(t) => self.make_object(t, &to, &mut out),
                Unsized::Object(from) if from != to => self.upcast(from, to, &mut out),
                // An auto trait dropped: the same vtable.
                Unsized::Object(_) => {}
            }
        }
        out
    }

    /// Records objects of `from` upcast to objects of `to`: every concrete
    /// type made an object of `from`, now or later, is one of `to` too.
    fn upcast(&mut self, from: String, to: String, out: &mut Vec<Path>) {
        let made: Vec<Ty> = self
            .layouts
            .concrete
            .get(&from)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        if !self
            .layouts
            .upcasts
            .entry(from)
            .or_default()
            .insert(to.clone())
        {
            return;
        }
        for t in made {
            self.make_object(t, &to, out);
        }
    }

    /// Records `t` made an object of `principal` by a constant; returns
    /// the methods that makes reachable.
    pub(crate) fn made_object(&mut self, t: Ty, principal: &str) -> Vec<Path> {
        let mut out = Vec::new();
        self.make_object(t, principal, &mut out);
        out
    }

    /// Records `t` made an object of `principal`, and so of every
    /// principal that one is upcast to; pushes the methods that makes
    /// reachable onto `out`.
    fn make_object(&mut self, t: Ty, principal: &str, out: &mut Vec<Path>) {
        if !self
            .layouts
            .concrete
            .entry(principal.to_string())
            .or_default()
            .insert(t.clone())
        {
            return;
        }
        for m in self
            .called
            .get(principal)
            .into_iter()
            .flat_map(BTreeMap::keys)
        {
            out.push(m.on(&t));
        }
        let upcasts: Vec<String> = self.layouts.upcasts(principal).map(String::from).collect();
        for to in upcasts {
            self.make_object(t.clone(), &to, out);
        }
    }

    /// The layouts of everything visited.
    pub(crate) fn finish(mut self) -> VtableLayouts {
        self.layouts.slots = self
            .called
            .into_iter()
            .map(|(p, ms)| (p, ms.into_iter().collect()))
            .collect();
        self.layouts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(segments: &[&str]) -> Path {
        Path {
            segments: segments
                .iter()
                .map(|s| PathSegment {
                    name: (*s).to_string(),
                    args: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_call_through_an_object_names_its_object_and_method() {
        let call = path(&["<dyn kernel::Shape as kernel::Shape>", "area"]);
        let (object, m) = virtual_call(&call).expect("a virtual call");
        assert_eq!(object, "dyn kernel::Shape");
        assert_eq!(m.trait_ref, "kernel::Shape");
        assert_eq!(m.method, "area");
        assert_eq!(
            m.on(&Ty::Adt(Path::plain("kernel::Sq"))).to_string(),
            "<kernel::Sq as kernel::Shape>::area"
        );
        assert!(virtual_call(&path(&["<kernel::Sq as kernel::Shape>", "area"])).is_none());
        assert!(virtual_call(&path(&["kernel", "area"])).is_none());
    }

    /// A helper calling `area` through an object, and a function making
    /// `kernel::Sq` an object of `Shape + Send` (the same principal).
    const CALL_AND_COERCION: &str = "fn kernel::total(_1: &dyn kernel::Shape) -> f32 {
    let mut _0: f32;

    bb0: {
        _0 = <dyn kernel::Shape as kernel::Shape>::area(copy _1) -> [return: bb1, unwind unreachable];
    }

    bb1: {
        return;
    }
}

fn kernel::make(_1: &kernel::Sq) -> &dyn kernel::Shape + std::marker::Send {
    let mut _0: &dyn kernel::Shape + std::marker::Send;

    bb0: {
        _0 = copy _1 as &dyn kernel::Shape + std::marker::Send (PointerCoercion(Unsize, Implicit));
        return;
    }
}
";

    #[test]
    fn coercions_and_calls_through_objects_join_in_either_order() {
        let k = crate::import_text(CALL_AND_COERCION, "", None).expect("the MIR imports");
        let [call, coercion] = [0, 1].map(|i| &k.bodies[crate::model::BodyId::from_u32(i)]);
        assert_eq!(
            coercion.dyn_coercions(&k),
            vec![(
                Ty::Adt(Path::plain("kernel::Sq")),
                "kernel::Shape".to_string()
            )]
        );
        let expected = vec!["<kernel::Sq as kernel::Shape>::area".to_string()];
        for order in [[call, coercion], [coercion, call]] {
            let mut join = DispatchJoin::default();
            let found: Vec<String> = order
                .iter()
                .flat_map(|b| join.visit(&k, b))
                .map(|p| p.to_string())
                .collect();
            assert_eq!(found, expected);
            let layouts = join.finish();
            let area = VirtualMethod {
                trait_ref: "kernel::Shape".into(),
                method: "area".into(),
            };
            assert_eq!(layouts.slot("kernel::Shape", &area), Some(0));
        }
        // Alone, neither names a method.
        for b in [call, coercion] {
            assert!(DispatchJoin::default().visit(&k, b).is_empty());
        }
        assert_eq!(
            k.dispatched_methods()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            expected
        );
    }

    /// `kernel::Sq` made a `dyn Named`, and a `dyn Named` upcast to a `dyn
    /// Shape`.
    const UPCAST: &str = "fn kernel::make(_1: &kernel::Sq) -> &dyn kernel::Named {
    let mut _0: &dyn kernel::Named;

    bb0: {
        _0 = copy _1 as &dyn kernel::Named (PointerCoercion(Unsize, Implicit));
        return;
    }
}

fn kernel::up(_1: &dyn kernel::Named) -> &dyn kernel::Shape {
    let mut _0: &dyn kernel::Shape;

    bb0: {
        _0 = copy _1 as &dyn kernel::Shape (PointerCoercion(Unsize, Implicit));
        return;
    }
}
";

    #[test]
    fn an_upcast_makes_the_concrete_types_objects_of_the_supertrait() {
        // The upcast, and `total`'s call of `area` through a `dyn Shape`.
        let call = CALL_AND_COERCION
            .split("\nfn kernel::make")
            .next()
            .expect("the call");
        let mir = format!("{UPCAST}\n{call}");
        let k = crate::import_text(&mir, "", None).expect("the MIR imports");
        let up = &k.bodies[crate::model::BodyId::from_u32(1)];
        assert_eq!(
            up.unsizings_to_objects(&k),
            vec![(
                Unsized::Object("kernel::Named".to_string()),
                "kernel::Shape".to_string()
            )]
        );
        assert!(up.dyn_coercions(&k).is_empty());
        // Whatever the order, `Sq` (made a `Named`, upcast to `Shape`)
        // meets `Shape::area`'s call.
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1]] {
            let mut join = DispatchJoin::default();
            let found: Vec<String> = order
                .iter()
                .flat_map(|&i| join.visit(&k, &k.bodies[crate::model::BodyId::from_u32(i)]))
                .map(|p| p.to_string())
                .collect();
            assert_eq!(found, ["<kernel::Sq as kernel::Shape>::area"], "{order:?}");
            let layouts = join.finish();
            assert_eq!(
                layouts.upcast_slot("kernel::Named", "kernel::Shape"),
                Some(0)
            );
            assert!(
                layouts.concrete["kernel::Shape"].contains(&Ty::Adt(Path::plain("kernel::Sq")))
            );
        }
    }

    #[test]
    fn generic_traits_and_auto_traits_split_at_the_top_level() {
        let p = path(&[
            "<dyn kernel::Scale<std::option::Option<u32>> + std::marker::Send as kernel::Scale<std::option::Option<u32>>>",
            "apply",
        ]);
        let (object, m) = virtual_call(&p).expect("a virtual call");
        assert_eq!(m.trait_ref, "kernel::Scale<std::option::Option<u32>>");
        assert_eq!(
            principal(object).as_deref(),
            Some("kernel::Scale<std::option::Option<u32>>")
        );
        assert_eq!(
            principal("dyn std::ops::Fn(u32) -> u32 + std::marker::Sync").as_deref(),
            Some("std::ops::Fn(u32) -> u32")
        );
        assert_eq!(principal("kernel::Sq"), None);
    }
}
