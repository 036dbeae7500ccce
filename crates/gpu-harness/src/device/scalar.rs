//! Plain scalars that buffers hold, with their little-endian encodings.

/// A plain scalar a buffer can hold: fixed size, little-endian, any bit pattern
/// valid.
pub trait Scalar: Copy {
    /// The size in bytes.
    const SIZE: usize;
    /// Appends the little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads from exactly `SIZE` little-endian bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                let n = a.len().min(bytes.len());
                a[..n].copy_from_slice(&bytes[..n]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}

scalar!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// The bytes of `values`, in order.
pub(crate) fn to_bytes<T: Scalar>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    for v in values {
        v.put(&mut out);
    }
    out
}

/// `bytes` as values of `T`; a trailing partial value is dropped.
pub(crate) fn from_bytes<T: Scalar>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::get).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let v = [1.5f32, -2.0, f32::MAX];
        assert_eq!(from_bytes::<f32>(&to_bytes(&v)), v);
        assert_eq!(to_bytes(&[0x0102_0304u32]), vec![4, 3, 2, 1]);
        assert_eq!(from_bytes::<u16>(&[1, 0, 2]), vec![1]);
    }
}
