//! Allocation dumps: the evaluated bytes rustc prints after the bodies.

use serde::Serialize;

/// A rustc allocation id, `allocN`, as printed. Only meaningful within one dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct AllocId(pub u32);

impl std::fmt::Display for AllocId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "alloc{}", self.0)
    }
}

/// A pointer stored in an allocation: `╾allocN+0xK<imm>╼`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Relocation {
    /// Byte offset of the pointer in the allocation.
    pub offset: u64,
    /// Its size in bytes (the run of the `╾...╼` box).
    pub size: u64,
    /// The allocation it points into.
    pub target: AllocId,
    /// The offset into the target.
    pub addend: u64,
    /// Whether the printer marked it `<imm>` (points to immutable memory).
    pub immutable: bool,
}

/// An allocation dump.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AllocDump {
    /// Its id.
    pub id: AllocId,
    /// For a static's own allocation (`static: S`) or a nested one
    /// (`static: M::{nested#0}`), the path as printed.
    pub static_path: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// The bytes; `None` for an uninitialized byte (`__`). The bytes under a
    /// relocation hold its addend, little-endian, as rustc itself stores them.
    pub bytes: Vec<Option<u8>>,
    /// The pointers it stores, by offset.
    pub relocations: Vec<Relocation>,
}
