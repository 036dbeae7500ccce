//! Types as rustc's MIR printer writes them.

use serde::Serialize;

/// Whether a reference or pointer allows mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Mutability {
    /// `&T`, `*const T`.
    Not,
    /// `&mut T`, `*mut T`.
    Mut,
}

/// Integer types, signed and unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum IntTy {
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `i128`
    I128,
    /// `isize`
    Isize,
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `u128`
    U128,
    /// `usize`
    Usize,
}

impl IntTy {
    /// Parses a primitive integer name.
    pub fn from_name(name: &str) -> Option<IntTy> {
        Some(match name {
            "i8" => IntTy::I8,
            "i16" => IntTy::I16,
            "i32" => IntTy::I32,
            "i64" => IntTy::I64,
            "i128" => IntTy::I128,
            "isize" => IntTy::Isize,
            "u8" => IntTy::U8,
            "u16" => IntTy::U16,
            "u32" => IntTy::U32,
            "u64" => IntTy::U64,
            "u128" => IntTy::U128,
            "usize" => IntTy::Usize,
            _ => return None,
        })
    }

    /// Its size in bytes, with 8-byte `usize` (nvptx64 and the x86-64 host alike).
    pub fn size(self) -> u64 {
        match self {
            IntTy::I8 | IntTy::U8 => 1,
            IntTy::I16 | IntTy::U16 => 2,
            IntTy::I32 | IntTy::U32 => 4,
            IntTy::I64 | IntTy::U64 | IntTy::Isize | IntTy::Usize => 8,
            IntTy::I128 | IntTy::U128 => 16,
        }
    }

    /// Whether it is signed.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            IntTy::I8 | IntTy::I16 | IntTy::I32 | IntTy::I64 | IntTy::I128 | IntTy::Isize
        )
    }

    /// The unsigned type of its size (itself if unsigned).
    pub fn to_unsigned(self) -> IntTy {
        match self {
            IntTy::I8 => IntTy::U8,
            IntTy::I16 => IntTy::U16,
            IntTy::I32 => IntTy::U32,
            IntTy::I64 => IntTy::U64,
            IntTy::I128 => IntTy::U128,
            IntTy::Isize => IntTy::Usize,
            unsigned => unsigned,
        }
    }

    /// Its name as Rust writes it.
    pub fn name(self) -> &'static str {
        match self {
            IntTy::I8 => "i8",
            IntTy::I16 => "i16",
            IntTy::I32 => "i32",
            IntTy::I64 => "i64",
            IntTy::I128 => "i128",
            IntTy::Isize => "isize",
            IntTy::U8 => "u8",
            IntTy::U16 => "u16",
            IntTy::U32 => "u32",
            IntTy::U64 => "u64",
            IntTy::U128 => "u128",
            IntTy::Usize => "usize",
        }
    }
}

/// Float types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum FloatTy {
    /// `f16`
    F16,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `f128`
    F128,
}

impl FloatTy {
    /// Parses a primitive float name.
    pub fn from_name(name: &str) -> Option<FloatTy> {
        Some(match name {
            "f16" => FloatTy::F16,
            "f32" => FloatTy::F32,
            "f64" => FloatTy::F64,
            "f128" => FloatTy::F128,
            _ => return None,
        })
    }

    /// Its size in bytes.
    pub fn size(self) -> u64 {
        match self {
            FloatTy::F16 => 2,
            FloatTy::F32 => 4,
            FloatTy::F64 => 8,
            FloatTy::F128 => 16,
        }
    }
}

/// An array length: a number, or a generic parameter in a generic body.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ArrayLen {
    /// A known element count.
    Known(u64),
    /// A const generic (`N`) or an unevaluated expression, as printed.
    Unknown(String),
}

/// A generic argument of a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum GenericArg {
    /// A lifetime (`'_`, `'static`); kept so types print back the same.
    Lifetime(String),
    /// A type.
    Type(Ty),
    /// A const argument, as printed (`8`, `N`).
    Const(String),
}

impl GenericArg {
    /// The argument as Rust source inside the kernel crate (a type as
    /// [`Ty::to_rust_source`] writes it).
    pub fn to_rust_source(&self) -> String {
        match self {
            GenericArg::Lifetime(l) => format!("'{l}"),
            GenericArg::Type(t) => t.to_rust_source(),
            GenericArg::Const(c) => c.clone(),
        }
    }
}

/// One segment of a path with its generic arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PathSegment {
    /// The name (`Option`, `<impl at f.rs:1:2: 3:4>`, `{constant#0}`, `<T as Trait>`).
    pub name: String,
    /// Generic arguments, empty if none.
    pub args: Vec<GenericArg>,
}

impl PathSegment {
    /// The segment's type arguments, in order, without its lifetimes and
    /// constants.
    pub fn type_args(&self) -> impl Iterator<Item = &Ty> {
        self.args.iter().filter_map(|a| match a {
            GenericArg::Type(t) => Some(t),
            _ => None,
        })
    }
}

/// A path such as `std::option::Option::<u32>::Some`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Path {
    /// Its segments, outermost first.
    pub segments: Vec<PathSegment>,
}

impl Path {
    /// The path of `def_path`'s names (`a::b::C`), none with arguments.
    pub fn plain(def_path: &str) -> Path {
        Path {
            segments: def_path
                .split("::")
                .map(|name| PathSegment {
                    name: name.to_string(),
                    args: Vec::new(),
                })
                .collect(),
        }
    }

    /// The path's names joined by `::`, without generic arguments
    /// (`std::option::Option::Some`). This is what recognition by path uses.
    pub fn def_path(&self) -> String {
        let names: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        names.join("::")
    }

    /// The last segment's name.
    pub fn last_name(&self) -> &str {
        self.segments.last().map_or("", |s| s.name.as_str())
    }

    /// For `u64::MAX`, `i32::MIN` or `core::num::<impl usize>::MAX`: the
    /// primitive integer type whose limit the path names. rustc prints these
    /// as paths because their bodies live in `core`.
    ///
    /// Only the spellings rustc uses: `i32::MIN`, `core::num::<impl
    /// i32>::MIN` and std's old module constants (`core::i32::MIN`); a
    /// crate's own module that happens to be called `i32` is not a type.
    pub fn int_limit_type(&self) -> Option<IntTy> {
        if !matches!(self.last_name(), "MAX" | "MIN") {
            return None;
        }
        let names: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        let owner = match names[..] {
            [.., owner, _] if owner.starts_with("<impl ") => {
                owner.strip_prefix("<impl ")?.strip_suffix('>')?
            }
            [owner, _] | ["core" | "std", owner, _] => owner,
            _ => return None,
        };
        IntTy::from_name(owner)
    }

    /// `<T as core::mem::SizedTypeProperties>::SIZE` (or `ALIGN`), which a
    /// dependency's generic MIR keeps for `size_of::<T>()` and which its
    /// instances name at a concrete `T`: that type, and whether it is the
    /// size (else the alignment).
    pub fn sized_property(&self) -> Option<(Ty, bool)> {
        let [owner, item] = self.segments.as_slice() else {
            return None;
        };
        let size = match item.name.as_str() {
            "SIZE" => true,
            "ALIGN" => false,
            _ => return None,
        };
        let inner = owner.name.strip_prefix('<')?.strip_suffix('>')?;
        let (ty, tr) = inner.rsplit_once(" as ")?;
        if !matches!(
            tr,
            "core::mem::SizedTypeProperties" | "std::mem::SizedTypeProperties"
        ) {
            return None;
        }
        Some((crate::parse::parse_type(ty).ok()?, size))
    }

    /// `std::any::TypeId::of::<T>::{constant#0}`, the inline constant that
    /// `TypeId::of` is (specialisation by `TypeId` comparison, as bitvec
    /// does, leaves it in the MIR): that `T`.
    pub fn type_id_of(&self) -> Option<&Ty> {
        let names: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        if !matches!(
            names.as_slice(),
            ["std" | "core", "any", "TypeId", "of", "{constant#0}"]
        ) {
            return None;
        }
        match self.segments[3].args.as_slice() {
            [GenericArg::Type(t)] => Some(t),
            _ => None,
        }
    }

    /// The 16 bytes this implementation gives `TypeId::of::<t>()`: the
    /// first half of the SHA-256 of `t` in std's spelling. Not rustc's
    /// value (a stable hash only the compiler computes), but equal exactly
    /// when the types are, as long as one printer named them: rustc prints
    /// one type by one path in the kernel's MIR, while a body made from a
    /// dependency's MIR spells the dependency's types its own way, which
    /// `Body::type_id_misuse` refuses. A type parameter, a function pointer
    /// (printed without `unsafe`, its ABI or its `for<'a>`), a closure or
    /// another opaque type, whose printed name does not tell the type,
    /// gives `None`. The lowering refuses any use of the value but an
    /// equality comparison.
    pub fn type_id_bytes(t: &Ty) -> Option<[u8; 16]> {
        use sha2::Digest;
        if !names_itself(t) {
            return None;
        }
        let name = crate::layout::std_spelling(&t.to_string()).replace("alloc::", "std::");
        let digest = sha2::Sha256::digest(name.as_bytes());
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        Some(out)
    }

    /// `std::any::TypeId`.
    pub fn type_id_type() -> Ty {
        Ty::Adt(Path {
            segments: ["std", "any", "TypeId"]
                .into_iter()
                .map(|name| PathSegment {
                    name: name.to_string(),
                    args: Vec::new(),
                })
                .collect(),
        })
    }

    /// All generic arguments of the last segment that carries any.
    pub fn generic_args(&self) -> &[GenericArg] {
        self.segments
            .iter()
            .rev()
            .find(|s| !s.args.is_empty())
            .map_or(&[], |s| s.args.as_slice())
    }
}

/// A type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Ty {
    /// `bool`
    Bool,
    /// `char`
    Char,
    /// An integer.
    Int(IntTy),
    /// A float.
    Float(FloatTy),
    /// `str`
    Str,
    /// `!`
    Never,
    /// A tuple; `()` is the empty one.
    Tuple(Vec<Ty>),
    /// `[T; N]`
    Array(Box<Ty>, ArrayLen),
    /// `[T]`
    Slice(Box<Ty>),
    /// `&T` / `&mut T`.
    Ref(Mutability, Box<Ty>),
    /// `*const T` / `*mut T`.
    RawPtr(Mutability, Box<Ty>),
    /// A struct, enum or union by path, or a type parameter (`T`).
    Adt(Path),
    /// A function pointer `fn(A) -> R`.
    FnPtr(Vec<Ty>, Box<Ty>),
    /// Anything the lowering never needs to look inside: closures, coroutines,
    /// `dyn Trait`, function item types. The text is kept as printed.
    Opaque(String),
}

impl Ty {
    /// The unit type `()`.
    pub fn unit() -> Ty {
        Ty::Tuple(Vec::new())
    }

    /// Whether this is a closure's type, as printed
    /// (`{closure@kernel.rs:12:20: 12:23}`).
    pub fn is_closure(&self) -> bool {
        matches!(self, Ty::Opaque(s) if s.starts_with("{closure@"))
    }

    /// The type of function item `path` where its signature is not printed
    /// (a function item read as a value: MIR prints no type for it), written
    /// `fn(..) {path}`. It is zero-sized and byte-aligned, which is all a
    /// function item's value needs: calls of it name the function itself
    /// ([`super::Body::call_fn_items_directly`]).
    pub fn fn_item_of(path: &Path) -> Ty {
        Ty::Opaque(format!("fn(..) {{{path}}}"))
    }

    /// The function a function item's type names (`fn(u32) -> u32
    /// {kernel::halve}`, or `fn(..) {kernel::halve}` where no signature is
    /// printed, gives `kernel::halve`), as a call names it.
    pub fn fn_item_name(&self) -> Option<Path> {
        let Ty::Opaque(text) = self else { return None };
        if !self.is_fn_item() {
            return None;
        }
        let (_, name) = super::brackets::split_top_level(text, " {")?;
        let name = name.strip_suffix('}')?;
        // As rustc prints it (`Result::<(), E>::Err`), or as a path
        // displays ([`Ty::fn_item_of`]: `Result<(), E>::Err`).
        crate::parse::parse_value_path(name)
            .ok()
            .or_else(|| match crate::parse::parse_type(name) {
                Ok(Ty::Adt(path)) => Some(path),
                _ => None,
            })
    }

    /// Whether this is a function item's type (`fn(&u32) -> u32
    /// {load_value}`, `fn(&'a u32, &'b u32) -> bool {<u32 as
    /// PartialOrd>::lt}`): zero-sized and byte-aligned, like `()`.
    pub fn is_fn_item(&self) -> bool {
        let Ty::Opaque(text) = self else { return false };
        // `for<'a> fn(&'a u32) -> bool {odd}`.
        let text = match text.strip_prefix("for<") {
            Some(rest) => rest.split_once("> ").map_or(rest, |(_, after)| after),
            None => text,
        };
        let text = text.strip_prefix("unsafe ").unwrap_or(text);
        // `extern "C" fn(..) {f}`.
        let text = match text.strip_prefix("extern \"") {
            Some(rest) => rest.split_once("\" ").map_or(rest, |(_, after)| after),
            None => text,
        };
        text.starts_with("fn(") && text.ends_with('}')
    }

    /// A function item type's signature (`fn(u32) -> u32 {halve}` gives
    /// `([u32], u32)`), as the printed type says it: its lifetimes dropped,
    /// as types here drop them. `None` for another type, or a function item
    /// whose signature is not printed ([`Ty::fn_item_of`]).
    pub fn fn_item_signature(&self) -> Option<(Vec<Ty>, Ty)> {
        if !self.is_fn_item() {
            return None;
        }
        let Ty::Opaque(text) = self else { return None };
        let (signature, _) = super::brackets::split_top_level(text, " {")?;
        match crate::parse::parse_type(signature) {
            Ok(Ty::FnPtr(inputs, output)) => Some((inputs, *output)),
            _ => None,
        }
    }

    /// Whether this type names a type parameter: a one-segment path without
    /// arguments (the kernel's and std's own types print with their module),
    /// anywhere inside it.
    pub fn mentions_type_parameter(&self) -> bool {
        match self {
            Ty::Adt(p) => {
                matches!(p.segments.as_slice(), [s] if s.args.is_empty())
                    || p.segments.iter().any(|s| {
                        s.args.iter().any(|a| match a {
                            GenericArg::Type(t) => t.mentions_type_parameter(),
                            _ => false,
                        })
                    })
            }
            Ty::Tuple(v) => v.iter().any(Ty::mentions_type_parameter),
            Ty::Array(e, _) | Ty::Slice(e) | Ty::Ref(_, e) | Ty::RawPtr(_, e) => {
                e.mentions_type_parameter()
            }
            Ty::FnPtr(a, r) => {
                a.iter().any(Ty::mentions_type_parameter) || r.mentions_type_parameter()
            }
            _ => false,
        }
    }

    /// The pointee of a reference or raw pointer.
    pub fn pointee(&self) -> Option<&Ty> {
        match self {
            Ty::Ref(_, t) | Ty::RawPtr(_, t) => Some(t),
            _ => None,
        }
    }

    /// Whether a pointer to this type is a fat pointer (slice, `str`, `dyn`).
    pub fn is_unsized(&self) -> bool {
        matches!(self, Ty::Slice(_) | Ty::Str) || self.trait_object().is_some()
    }

    /// This type as the trait object type it is (`dyn kernel::Shape +
    /// std::marker::Sync`), if it is one.
    pub fn trait_object(&self) -> Option<&str> {
        match self {
            Ty::Opaque(s) if s.starts_with("dyn ") => Some(s),
            _ => None,
        }
    }

    /// The length `N` of the array `[T; N]` that an unsizing coercion from
    /// this type to `to` turns into the slice `[T]`: this type is that
    /// array, or a struct whose one differing type argument leads to it
    /// (`Packet<[u32; 3]>` to `Packet<[u32]>`). `None` for any other
    /// unsizing (to `dyn Trait`, whose metadata is a vtable).
    pub fn unsized_array_len(&self, to: &Ty) -> Option<u64> {
        match (self, to) {
            // One element type, however spelled: a dependency's MIR may
            // name it by a re-export's path.
            (Ty::Array(_, ArrayLen::Known(n)), Ty::Slice(_)) => Some(*n),
            (Ty::Adt(a), Ty::Adt(b)) if a.def_path() == b.def_path() => {
                let (xs, ys) = (a.generic_args(), b.generic_args());
                if xs.len() != ys.len() {
                    return None;
                }
                let mut differing = xs.iter().zip(ys).filter(|(x, y)| x != y);
                match (differing.next(), differing.next()) {
                    (Some((GenericArg::Type(x), GenericArg::Type(y))), None) => {
                        x.unsized_array_len(y)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Bool => f.write_str("bool"),
            Ty::Char => f.write_str("char"),
            Ty::Int(i) => f.write_str(i.name()),
            Ty::Float(FloatTy::F16) => f.write_str("f16"),
            Ty::Float(FloatTy::F32) => f.write_str("f32"),
            Ty::Float(FloatTy::F64) => f.write_str("f64"),
            Ty::Float(FloatTy::F128) => f.write_str("f128"),
            Ty::Str => f.write_str("str"),
            Ty::Never => f.write_str("!"),
            Ty::Tuple(elems) => {
                f.write_str("(")?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                if elems.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Ty::Array(t, ArrayLen::Known(n)) => write!(f, "[{t}; {n}]"),
            Ty::Array(t, ArrayLen::Unknown(n)) => write!(f, "[{t}; {n}]"),
            Ty::Slice(t) => write!(f, "[{t}]"),
            Ty::Ref(Mutability::Not, t) => write!(f, "&{t}"),
            Ty::Ref(Mutability::Mut, t) => write!(f, "&mut {t}"),
            Ty::RawPtr(Mutability::Not, t) => write!(f, "*const {t}"),
            Ty::RawPtr(Mutability::Mut, t) => write!(f, "*mut {t}"),
            Ty::Adt(p) => write!(f, "{p}"),
            Ty::FnPtr(args, ret) => {
                f.write_str("fn(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ") -> {ret}")
            }
            Ty::Opaque(s) => f.write_str(s),
        }
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str("::")?;
            }
            f.write_str(&seg.name)?;
            if !seg.args.is_empty() {
                f.write_str("<")?;
                for (j, a) in seg.args.iter().enumerate() {
                    if j > 0 {
                        f.write_str(", ")?;
                    }
                    match a {
                        GenericArg::Lifetime(l) => write!(f, "'{l}")?,
                        GenericArg::Type(t) => write!(f, "{t}")?,
                        GenericArg::Const(c) => f.write_str(c)?,
                    }
                }
                f.write_str(">")?;
            }
        }
        Ok(())
    }
}

impl Ty {
    /// The type as Rust source that names it inside the kernel crate, for
    /// programs generated around a kernel (the layout probe, a host program).
    ///
    /// MIR prints paths as rustc resolved them (`kernel::Pair`,
    /// `gpu::DisjointSlice<'_, u32>`), which does not compile inside the
    /// crate: the kernel's and the prelude's own paths become `crate::`
    /// paths. Everything else prints as [`Ty`]'s `Display` does. A type with
    /// generic parameters or closures prints, but the result does not name a
    /// type outside its body.
    pub fn to_rust_source(&self) -> String {
        match self {
            Ty::Tuple(elems) => {
                let parts: Vec<String> = elems.iter().map(Ty::to_rust_source).collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            Ty::Array(e, len) => match len {
                ArrayLen::Known(n) => format!("[{}; {n}]", e.to_rust_source()),
                ArrayLen::Unknown(n) => format!("[{}; {n}]", e.to_rust_source()),
            },
            Ty::Slice(e) => format!("[{}]", e.to_rust_source()),
            Ty::Ref(m, e) => match m {
                Mutability::Not => format!("&{}", e.to_rust_source()),
                Mutability::Mut => format!("&mut {}", e.to_rust_source()),
            },
            Ty::RawPtr(m, e) => match m {
                Mutability::Not => format!("*const {}", e.to_rust_source()),
                Mutability::Mut => format!("*mut {}", e.to_rust_source()),
            },
            Ty::Adt(p) => p.to_rust_source_with(&GenericArg::to_rust_source),
            other => other.to_string(),
        }
    }
}

impl Path {
    /// The path as Rust source naming the type, as
    /// [`Ty::to_rust_source`] writes it, each generic argument written by
    /// `arg` (a shim's signature names its lifetimes).
    pub fn to_rust_source_with(&self, arg: &dyn Fn(&GenericArg) -> String) -> String {
        let mut out = String::new();
        let local = matches!(self.segments.first(), Some(s)
            if s.name == crate::prelude::KERNEL_MODULE
                || s.name == crate::prelude::PRELUDE_MODULE);
        if local {
            out.push_str("crate::");
        }
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                out.push_str("::");
            }
            out.push_str(&seg.name);
            if !seg.args.is_empty() {
                let args: Vec<String> = seg.args.iter().map(arg).collect();
                out.push_str(&format!("<{}>", args.join(", ")));
            }
        }
        out
    }
}

/// Whether `t` names only std's (`core`, `alloc`) types and the kernel's,
/// whose spelling no dependency's MIR changes.
pub(crate) fn std_or_kernel_only(t: &Ty) -> bool {
    match t {
        Ty::Tuple(elems) => elems.iter().all(std_or_kernel_only),
        Ty::Array(elem, _) | Ty::Slice(elem) | Ty::Ref(_, elem) | Ty::RawPtr(_, elem) => {
            std_or_kernel_only(elem)
        }
        Ty::Adt(p) => {
            matches!(
                p.segments.first().map(|s| s.name.as_str()),
                Some("std" | "core" | "alloc" | crate::prelude::KERNEL_MODULE)
            ) && p.segments.iter().all(|s| {
                s.args.iter().all(|a| match a {
                    GenericArg::Type(t) => std_or_kernel_only(t),
                    _ => true,
                })
            })
        }
        _ => true,
    }
}

/// Whether `t`'s printed name tells which type it is (see
/// [`Path::type_id_bytes`]): no type parameter, function pointer, closure
/// or other opaque type in it.
fn names_itself(t: &Ty) -> bool {
    match t {
        Ty::Bool | Ty::Char | Ty::Int(_) | Ty::Float(_) | Ty::Str | Ty::Never => true,
        Ty::Tuple(elems) => elems.iter().all(names_itself),
        Ty::Array(elem, len) => matches!(len, ArrayLen::Known(_)) && names_itself(elem),
        Ty::Slice(elem) | Ty::Ref(_, elem) | Ty::RawPtr(_, elem) => names_itself(elem),
        Ty::Adt(p) => {
            p.segments.len() > 1
                && p.segments.iter().all(|s| {
                    !s.name.starts_with(['<', '{'])
                        && s.args.iter().all(|a| match a {
                            GenericArg::Type(t) => names_itself(t),
                            GenericArg::Const(_) => true,
                            GenericArg::Lifetime(_) => true,
                        })
                })
        }
        Ty::FnPtr(..) | Ty::Opaque(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `std::any::TypeId::of::<t>::{constant#0}` as rustc prints it.
    fn type_id_of(t: &str) -> Path {
        match crate::parse::parse_type(&format!("std::any::TypeId::of::<{t}>::{{constant#0}}")) {
            Ok(Ty::Adt(p)) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn function_items_are_told_from_pointers_and_closures() {
        let item = |t: &str| Ty::Opaque(t.into()).is_fn_item();
        assert!(item("fn(&u32) -> u32 {load_value}"));
        assert!(item("unsafe fn(*const u8) -> u8 {read}"));
        assert!(item("extern \"C\" fn(u32) {k}"));
        assert!(!item("{closure@/src/kernel.rs:3:9: 3:12}"));
        assert!(!Ty::FnPtr(vec![], Box::new(Ty::unit())).is_fn_item());
    }

    #[test]
    fn a_higher_ranked_function_item_keeps_its_binder_and_gives_its_signature() {
        let printed = "for<'a> fn(&'a u32) -> bool {kernel::odd}";
        let t = crate::parse::parse_type(printed).expect("a type");
        // Its text is its name, as rustc prints it inside closure types.
        assert_eq!(t, Ty::Opaque(printed.into()));
        assert!(t.is_fn_item());
        let (inputs, output) = t.fn_item_signature().expect("a signature");
        assert_eq!(
            inputs,
            vec![Ty::Ref(Mutability::Not, Box::new(Ty::Int(IntTy::U32)))]
        );
        assert_eq!(output, Ty::Bool);
        let plain = crate::parse::parse_type("fn(u32) -> kernel::W {kernel::W}").expect("a type");
        assert_eq!(
            plain.fn_item_signature().map(|(i, o)| (i, o.to_string())),
            Some((vec![Ty::Int(IntTy::U32)], "kernel::W".to_string()))
        );
        // A higher-ranked pointer is a pointer still.
        let pointer = crate::parse::parse_type("for<'a> fn(&'a u32) -> bool").expect("a type");
        assert!(matches!(pointer, Ty::FnPtr(..)));
        assert_eq!(pointer.fn_item_signature(), None);
        // A function item read as a value: no signature is printed.
        let path =
            crate::parse::parse_value_path("std::option::Option::<u32>::Some").expect("a path");
        let unprinted = Ty::fn_item_of(&path);
        assert!(unprinted.is_fn_item());
        assert_eq!(unprinted.fn_item_signature(), None);
        // Either way, the function it names, as a call names it.
        let printed_some = crate::parse::parse_type(
            "fn(u32) -> std::option::Option<u32> {std::option::Option::<u32>::Some}",
        )
        .expect("a type");
        let name = |t: &Ty| t.fn_item_name().map(|p| p.to_string());
        assert_eq!(name(&unprinted), name(&printed_some));
        assert_eq!(name(&unprinted), Some(path.to_string()));
        assert_eq!(name(&t).as_deref(), Some("kernel::odd"));
        assert_eq!(name(&pointer), None);
    }

    #[test]
    fn integer_limits_are_read_in_rustcs_spellings_only() {
        let limit = |text: &str| match crate::parse::parse_type(text) {
            Ok(Ty::Adt(p)) => p.int_limit_type(),
            other => panic!("{other:?}"),
        };
        assert_eq!(limit("i32::MIN"), Some(IntTy::I32));
        assert_eq!(limit("u128::MAX"), Some(IntTy::U128));
        assert_eq!(limit("core::num::<impl usize>::MAX"), Some(IntTy::Usize));
        assert_eq!(limit("core::u8::MAX"), Some(IntTy::U8));
        assert_eq!(limit("kernel::i32::MAX"), None, "a module called i32");
        assert_eq!(limit("u32::BITS"), None);
        assert_eq!(limit("kernel::Fixed::MIN"), None);
    }

    #[test]
    fn type_ids_are_equal_exactly_when_the_types_are() {
        let bytes = |p: &Path| {
            Path::type_id_bytes(p.type_id_of().expect("a TypeId constant")).expect("named")
        };
        assert_eq!(type_id_of("u32").type_id_of(), Some(&Ty::Int(IntTy::U32)));
        assert_eq!(bytes(&type_id_of("u32")), bytes(&type_id_of("u32")));
        assert_ne!(bytes(&type_id_of("u32")), bytes(&type_id_of("i32")));
        assert_ne!(bytes(&type_id_of("[u8; 4]")), bytes(&type_id_of("[u8; 5]")));
        // The same type spelled from core or from std.
        assert_eq!(
            bytes(&type_id_of("core::option::Option<u32>")),
            bytes(&type_id_of("std::option::Option<u32>"))
        );
        assert_eq!(
            bytes(&type_id_of("alloc::vec::Vec<u8>")),
            bytes(&type_id_of("std::vec::Vec<u8>"))
        );
        assert_ne!(
            bytes(&type_id_of("kernel::A")),
            bytes(&type_id_of("kernel::B"))
        );
        // A dependency's type, as the kernel's MIR prints it.
        assert!(
            Path::type_id_bytes(
                type_id_of("bitvec::order::Lsb0")
                    .type_id_of()
                    .expect("parsed")
            )
            .is_some()
        );
        // Printed names that may not tell the type: refused.
        for t in [
            "T",
            "fn(u32) -> u32",
            "std::option::Option<T>",
            "{closure@/src/kernel.rs:3:9: 3:12}",
        ] {
            let p = type_id_of(t);
            assert_eq!(
                Path::type_id_bytes(p.type_id_of().expect("parsed")),
                None,
                "{t}"
            );
        }
        // Another inline constant, or another function's.
        for other in [
            "std::any::TypeId::of::<u32>::{constant#1}",
            "std::any::TypeId::other::<u32>::{constant#0}",
            "kernel::any::TypeId::of::<u32>::{constant#0}",
        ] {
            let Ok(Ty::Adt(p)) = crate::parse::parse_type(other) else {
                panic!("{other}");
            };
            assert_eq!(p.type_id_of(), None, "{other}");
        }
    }

    /// rustc's `TypeId == TypeId`: each transmuted to `u128`, then `Eq`.
    fn compared(op: &str, extra: &str) -> Option<String> {
        let text = format!(
            "fn kernel::f() -> bool {{\n    let mut _0: bool;\n    let mut _1: u128;\n    let mut _2: u128;\n    let mut _3: std::any::TypeId;\n\n    bb0: {{\n        _1 = const std::any::TypeId::of::<u32>::{{constant#0}} as u128 (Transmute);\n        _2 = const std::any::TypeId::of::<i32>::{{constant#0}} as u128 (Transmute);\n{extra}        _0 = {op}(move _1, move _2);\n        return;\n    }}\n}}\n"
        );
        let parsed = crate::parse::parse_mir(&text).unwrap_or_else(|e| panic!("{e}"));
        parsed.bodies[0].type_id_misuse()
    }

    #[test]
    fn type_ids_may_only_be_compared_for_equality() {
        assert_eq!(compared("Eq", ""), None);
        assert_eq!(compared("Ne", ""), None);
        assert!(compared("Lt", "").is_some());
        // A body made from a dependency's MIR, which spells that
        // dependency's types its own way: only std's and the kernel's.
        let dep = |t: &str| {
            let text = format!(
                "fn dep::f() -> bool {{\n    let mut _0: bool;\n    let mut _1: u128;\n\n    bb0: {{\n        _1 = const std::any::TypeId::of::<{t}>::{{constant#0}} as u128 (Transmute);\n        _0 = Eq(copy _1, copy _1);\n        return;\n    }}\n}}\n"
            );
            let parsed = crate::parse::parse_mir(&text).unwrap_or_else(|e| panic!("{e}"));
            parsed.bodies[0].type_id_misuse()
        };
        assert_eq!(dep("std::option::Option<u32>"), None);
        assert!(dep("dep::Order").is_some());
        assert!(compared("Eq", "        _0 = Eq(copy _1, const 5_u128);\n        _3 = const std::any::TypeId::of::<u8>::{constant#0};\n").is_some());
    }
}
