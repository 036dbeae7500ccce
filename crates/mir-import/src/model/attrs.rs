//! The attributes of items that rustc's MIR text drops, as data. The
//! [`crate::attrs`] module recovers them from the source with syn; the model
//! only holds them, so it depends on no reader.

use serde::Serialize;

/// `#[inline]` hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum InlineHint {
    /// `#[inline(never)]`
    Never,
    /// `#[inline(always)]`
    Always,
    /// `#[inline]`
    Hint,
}

/// The attributes of one item.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ItemAttrs {
    /// Its `#[inline]` hint, if any.
    pub inline: Option<InlineHint>,
    /// Whether it is `#[no_mangle]` / `#[unsafe(no_mangle)]`.
    pub no_mangle: bool,
    /// Its ABI string for `extern "X" fn`, if any.
    pub abi: Option<String>,
    /// Whether it is a kernel entry point: a public `#[no_mangle] extern "C" fn`.
    pub kernel: bool,
    /// For an enum: each variant's discriminant value, in declaration order.
    pub discriminants: Option<Vec<(String, i128)>>,
    /// For a struct with named fields: the names in declaration order. MIR
    /// projects fields by index, rustc's layout report lists them by name.
    pub field_names: Option<Vec<String>>,
    /// Whether it is a `union`: the layout report prints one as an enum
    /// with one variant named like the type, which a one-variant enum can
    /// also be, so only the source tells them apart.
    pub is_union: bool,
    /// For a struct: each field's type as written in the source, in
    /// declaration order (see [`crate::attrs::resolve_source_type`]). rustc's
    /// layout report gives field offsets and sizes but not types.
    pub field_types: Option<Vec<String>>,
    /// For a method of a non-generic `impl` block: what the block is for.
    pub impl_of: Option<ImplOf>,
}

/// The self type and trait of an `impl` block, each as the last segment of
/// its path (`Complex32`, `Mul`): enough to match the paths rustc prints at
/// call sites (`kernel::Complex32::norm`, `<kernel::Complex32 as
/// std::ops::Mul>::mul`) to the method's body, which rustc prints as
/// `kernel::<impl at kernel.rs:17:1: 17:35>::mul`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImplOf {
    /// The self type's name.
    pub self_ty: String,
    /// For a block on a reference to the type (`impl Mul for &Foo`):
    /// `Some(true)` for `&mut`, `Some(false)` for `&`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_ref: Option<bool>,
    /// The trait's name, for a trait impl.
    pub trait_name: Option<String>,
    /// The self type's generic arguments, each as written in the source,
    /// for a block on one instance of a generic type (`["u32"]` for `impl
    /// Wrapper<u32>`): blocks on two instances define methods of one name
    /// that only these tell apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_ty_args: Option<Vec<String>>,
    /// Whether the self type is written with a path of several segments
    /// (`impl super::Foo<u32>`), so that its module is not the block's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub self_ty_qualified: bool,
}

impl ImplOf {
    /// The self type as rustc prints it at a call in `module`
    /// (`&kernel::Foo`).
    pub fn qualified_self_ty(&self, module: &str) -> String {
        let by = match self.self_ref {
            Some(true) => "&mut ",
            Some(false) => "&",
            None => "",
        };
        format!("{by}{module}::{}", self.self_ty)
    }

    /// The self type as an identifier part (`ref_Foo` for `&Foo`), for
    /// names that must not move with the source; with `args`, its generic
    /// arguments as written too, which tell the methods of blocks on two
    /// instances of one type apart: `Wrapper_u32` where they are plain
    /// letters and digits, else their characters that are (`Wrapper_u8`
    /// for `&u8`) and `$` with 8 hex digits of their SHA-256, as the
    /// cleaning would make `&u8` and `(u8,)` meet.
    pub fn self_ty_name(&self, args: bool) -> String {
        let by = match self.self_ref {
            Some(true) => "ref_mut_",
            Some(false) => "ref_",
            None => "",
        };
        // Lifetimes tell no two blocks apart: left out.
        let types: Vec<&str> = self
            .self_ty_args
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|a| !a.starts_with('\''))
            .collect();
        let args = match (types.is_empty(), args) {
            (false, true) => {
                let text = types.join(",");
                let mut name = String::from("_");
                for c in text.chars() {
                    if c.is_ascii_alphanumeric() {
                        name.push(c);
                    } else if !name.ends_with('_') {
                        name.push('_');
                    }
                }
                let mut name = name.trim_end_matches('_').to_owned();
                if !text.chars().all(|c| c.is_ascii_alphanumeric()) {
                    use sha2::{Digest, Sha256};
                    let digest = Sha256::digest(text.as_bytes());
                    name.push('$');
                    for b in &digest[..4] {
                        name.push_str(&format!("{b:02x}"));
                    }
                }
                name
            }
            _ => String::new(),
        };
        format!("{by}{}{args}", self.self_ty)
    }
}
