//! Content keys: SHA-256 over a versioned, length-prefixed encoding.
//!
//! # The encoding (version 1)
//!
//! All integers are little-endian `u64` (the addend is an `i64`). A string or
//! a byte run is its length followed by its bytes.
//!
//! ```text
//! content key = SHA-256(
//!     "const-alloc/content/v1"            domain tag, length-prefixed
//!     align, size, chunk count
//!     for each chunk, in offset order:
//!       0x00  length, bytes               initialized bytes
//!       0x01  length                      uninitialized bytes
//!       0x02  offset, size, addend, target  a pointer (relocation)
//! )
//! target = 0x00, symbol (length-prefixed)   a static, by its symbol
//!        | 0x01, 32-byte key               an immutable anonymous allocation
//!        | 0x02, 32-byte key               a mutable anonymous allocation
//!        | 0x03, symbol (length-prefixed)   a function, by its symbol
//!
//! mutable key = SHA-256(
//!     "const-alloc/mutable/v1", content key,
//!     owner static's symbol, path length, each offset of the path
//! )
//! ```
//!
//! The chunks are exactly the initializer (see [`Chunk`](crate::Chunk)): the
//! bytes between relocations, split where initialization changes. So the key
//! covers the alignment, the initialized bytes, which bytes are initialized,
//! and every relocation as (offset, addend, the target's key), and nothing
//! else: not the ids, not the values of uninitialized bytes, not the bytes
//! under a pointer, not the order of anything outside the allocation.

use std::fmt;

use sha2::{Digest, Sha256};

/// A 32-byte SHA-256 content key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// The key as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        let mut out = String::with_capacity(64);
        self.write_hex(&mut out);
        out
    }

    /// Appends the key's 64 lowercase hex digits to `out`.
    pub fn write_hex(&self, out: &mut String) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut buf = [0u8; 64];
        for (pair, &b) in buf.chunks_exact_mut(2).zip(&self.0) {
            pair[0] = DIGITS[(b >> 4) as usize];
            pair[1] = DIGITS[(b & 15) as usize];
        }
        out.push_str(std::str::from_utf8(&buf).expect("hex digits are ASCII"));
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", self.to_hex())
    }
}

/// The domain tag of content keys.
const CONTENT_TAG: &[u8] = b"const-alloc/content/v1";
/// The domain tag of mutable keys.
const MUTABLE_TAG: &[u8] = b"const-alloc/mutable/v1";

/// How a relocation's target enters its referrer's key.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TargetKey<'a> {
    /// A static, by its symbol.
    Static(&'a str),
    /// An immutable anonymous allocation, by its content key.
    Immutable(Key),
    /// A mutable anonymous allocation, by its mutable key.
    Mutable(Key),
    /// A function, by its symbol.
    Function(&'a str),
}

/// A streaming writer of the encoding above.
pub(crate) struct KeyHasher(Sha256);

impl KeyHasher {
    /// Starts a content key for an allocation of `size` bytes.
    pub(crate) fn content(align: u64, size: u64, chunks: usize) -> Self {
        let mut h = KeyHasher(Sha256::new());
        h.bytes(CONTENT_TAG);
        h.u64(align);
        h.u64(size);
        h.u64(chunks as u64);
        h
    }

    /// A run of initialized bytes.
    pub(crate) fn data(&mut self, bytes: &[u8]) {
        self.0.update([0u8]);
        self.bytes(bytes);
    }

    /// A run of uninitialized bytes.
    pub(crate) fn undef(&mut self, len: u64) {
        self.0.update([1u8]);
        self.u64(len);
    }

    /// A relocation.
    pub(crate) fn pointer(&mut self, offset: u64, size: u64, addend: i64, target: TargetKey<'_>) {
        self.0.update([2u8]);
        self.u64(offset);
        self.u64(size);
        self.0.update(addend.to_le_bytes());
        match target {
            TargetKey::Static(symbol) => {
                self.0.update([0u8]);
                self.bytes(symbol.as_bytes());
            }
            TargetKey::Immutable(key) => {
                self.0.update([1u8]);
                self.0.update(key.0);
            }
            TargetKey::Mutable(key) => {
                self.0.update([2u8]);
                self.0.update(key.0);
            }
            TargetKey::Function(symbol) => {
                self.0.update([3u8]);
                self.bytes(symbol.as_bytes());
            }
        }
    }

    /// The key.
    pub(crate) fn finish(self) -> Key {
        Key(self.0.finalize().into())
    }

    fn u64(&mut self, v: u64) {
        self.0.update(v.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.update(b);
    }
}

/// The key of a mutable anonymous allocation: its content key plus the path
/// to it from its owning static.
pub(crate) fn mutable_key(content: Key, owner: &str, path: &[u64]) -> Key {
    let mut h = KeyHasher(Sha256::new());
    h.bytes(MUTABLE_TAG);
    h.0.update(content.0);
    h.bytes(owner.as_bytes());
    h.u64(path.len() as u64);
    for &offset in path {
        h.u64(offset);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        let mut k = Key([0; 32]);
        k.0[0] = 0xab;
        k.0[31] = 0x0f;
        let hex = k.to_hex();
        assert_eq!(hex.len(), 64);
        assert!(hex.starts_with("ab00"));
        assert!(hex.ends_with("0f"));
        assert_eq!(format!("{k}"), hex);
    }

    #[test]
    fn length_prefix_separates_runs() {
        // "ab" + "c" and "a" + "bc" must not collide.
        let mut a = KeyHasher::content(1, 3, 2);
        a.data(b"ab");
        a.data(b"c");
        let mut b = KeyHasher::content(1, 3, 2);
        b.data(b"a");
        b.data(b"bc");
        assert_ne!(a.finish(), b.finish());
    }

    #[test]
    fn mutable_key_depends_on_path() {
        let k = Key([7; 32]);
        assert_ne!(mutable_key(k, "S", &[0]), mutable_key(k, "S", &[8]));
        assert_ne!(mutable_key(k, "S", &[0]), mutable_key(k, "T", &[0]));
        assert_eq!(mutable_key(k, "S", &[0, 8]), mutable_key(k, "S", &[0, 8]));
    }
}
