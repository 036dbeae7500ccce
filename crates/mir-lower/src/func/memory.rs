//! The known calls that only move or compare memory: `mem::swap`
//! (`typed_swap_nonoverlapping`), `copy_nonoverlapping`, `ptr::copy`, and
//! the byte comparisons behind slice and array equality and ordering
//! (`compare_bytes`, `raw_eq`). Each is a loop over bytes or a fixed
//! sequence of loads and stores; none needs a stack slot.

use device_ir::{BinaryOp, CastOp, IntCC, Value};
use mir_import::model::Operand;

use super::FnLower;
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar};

impl FnLower<'_, '_> {
    /// `typed_swap_nonoverlapping(a, b)` (or `mem::swap(a, b)`): both
    /// pointees are loaded, then both stored crosswise. A pointee in memory
    /// is swapped in chunks of its alignment (at most 8 bytes), so any sized
    /// type the lowering can lay out is swapped without a stack slot.
    pub(super) fn swap(&mut self, args: &[Operand]) -> Result<(), Diagnostic> {
        let [a, b] = args else {
            return Err(self.unsupported("`typed_swap_nonoverlapping` without two pointers"));
        };
        let elem = self
            .operand_ty(a)?
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported("`typed_swap_nonoverlapping` on a non-pointer"))?;
        if self.sh.layouts.is_unsized(&elem) {
            return Err(self.unsupported(format!("swap of unsized `{elem}`")));
        }
        let parts: Vec<(u64, Scalar)> = match self.repr(&elem)? {
            Repr::Zst => Vec::new(),
            Repr::Scalar(s) => vec![(0, s)],
            Repr::Pair(s0, o0, s1, o1) => vec![(o0, s0), (o1, s1)],
            Repr::Mem { size, align } => {
                let chunk = align.clamp(1, 8);
                if size % chunk != 0 {
                    return Err(self.unsupported(format!("swap of `{elem}`")));
                }
                (0..size / chunk)
                    .map(|i| (i * chunk, Scalar::Int((chunk * 8) as u16)))
                    .collect()
            }
        };
        let (pa, pb) = (self.scalar_operand(a)?, self.scalar_operand(b)?);
        for (off, s) in parts {
            let x = self.load_scalar_at(pa, off, s);
            let y = self.load_scalar_at(pb, off, s);
            self.store_scalar_at(pa, off, s, y);
            self.store_scalar_at(pb, off, s, x);
        }
        Ok(())
    }

    /// `copy_nonoverlapping(dst, src, count)`: `count` elements of the
    /// pointee type, copied byte by byte in a loop (the count is a run-time
    /// value: siphasher's tail loads copy 0 to 7 bytes).
    pub(super) fn copy_nonoverlapping(
        &mut self,
        dst: &Operand,
        src: &Operand,
        count: &Operand,
    ) -> Result<(), Diagnostic> {
        self.copy_elements(dst, src, count, false)
    }

    /// Copies `count` elements of `*dst`'s type from `src` to `dst`, byte
    /// by byte. When the two may `overlap` (`ptr::copy`, a `memmove`), the
    /// copy runs backwards if `dst` lies above `src`, so that no byte is
    /// overwritten before it is read.
    pub(super) fn copy_elements(
        &mut self,
        dst: &Operand,
        src: &Operand,
        count: &Operand,
        overlap: bool,
    ) -> Result<(), Diagnostic> {
        let size = self.pointee_size(dst, "`copy_nonoverlapping` to a non-pointer")?;
        let (d, s, n) = (
            self.scalar_operand(dst)?,
            self.scalar_operand(src)?,
            self.scalar_operand(count)?,
        );
        let i64t = self.b.types().i64();
        let bytes = self.byte_count(n, size);
        let backward = overlap.then(|| {
            let di = self.b.cast(device_ir::CastOp::PtrToInt, d, i64t);
            let si = self.b.cast(device_ir::CastOp::PtrToInt, s, i64t);
            self.b.icmp(IntCC::Ugt, di, si)
        });
        // Byte i, or, going backwards, byte bytes - 1 - i.
        self.for_each_byte(bytes, |this, i| {
            let at = match backward {
                Some(back) => {
                    let one = this.iconst(64, 1);
                    let last = this.b.binary(device_ir::BinaryOp::Sub, bytes, one);
                    let down = this.b.binary(device_ir::BinaryOp::Sub, last, i);
                    this.b.select(back, down, i)
                }
                None => i,
            };
            let (from, to) = (this.b.byte_offset(s, at), this.b.byte_offset(d, at));
            let byte = Scalar::Int(8);
            let v = this.load_scalar_at(from, 0, byte);
            this.store_scalar_at(to, 0, byte, v);
        });
        Ok(())
    }

    /// `intrinsics::write_bytes(dst, byte, count)` (`ptr::write_bytes`,
    /// `[T]::fill` of a one-byte type): `count` elements of `*dst`'s type
    /// set to `byte`, byte by byte (a `memset`).
    pub(super) fn write_bytes(&mut self, args: &[Operand]) -> Result<(), Diagnostic> {
        let [dst, byte, count] = args else {
            return Err(self.unsupported("`write_bytes` without three operands"));
        };
        let size = self.pointee_size(dst, "`write_bytes` to a non-pointer")?;
        let (d, v, n) = (
            self.scalar_operand(dst)?,
            self.scalar_operand(byte)?,
            self.scalar_operand(count)?,
        );
        let bytes = self.byte_count(n, size);
        self.for_each_byte(bytes, |this, i| {
            let to = this.b.byte_offset(d, i);
            this.store_scalar_at(to, 0, Scalar::Int(8), v);
        });
        Ok(())
    }

    /// `count` units of `unit` bytes, as an `i64` byte count.
    fn byte_count(&mut self, count: Value, unit: u64) -> Value {
        let i64t = self.b.types().i64();
        let count = self.zext_or_trunc(count, i64t);
        let unit = self.iconst(64, unit as i128);
        self.b.imul(count, unit)
    }

    /// Emits a loop running `body` for each byte index `i` (an `i64`) in
    /// `0..bytes`: header(i): i < bytes ? body : exit; body, header(i + 1).
    /// `body` emits straight-line code; the builder is left at the exit.
    fn for_each_byte(&mut self, bytes: Value, mut body: impl FnMut(&mut Self, Value)) {
        let i64t = self.b.types().i64();
        let header = self.b.create_block();
        let i = self.b.append_block_param(header, i64t);
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        let zero = self.iconst(64, 0);
        self.b.jump(header, &[zero]);
        self.b.switch_to_block(header);
        let more = self.b.icmp(IntCC::Ult, i, bytes);
        self.b.brif(more, body_block, &[], exit, &[]);
        self.b.switch_to_block(body_block);
        body(self, i);
        let one = self.iconst(64, 1);
        let next = self.b.iadd(i, one);
        self.b.jump(header, &[next]);
        self.b.switch_to_block(exit);
    }

    /// `compare_bytes(a, b, n)` (`<[u8]>::cmp` and `==` on byte slices):
    /// `memcmp`'s sign as an `i32`. The value is the difference of the
    /// first two bytes that differ, as unsigned bytes, or 0; Rust promises
    /// only its sign, and libcore reads nothing else.
    pub(super) fn compare_bytes(&mut self, args: &[Operand]) -> Result<Value, Diagnostic> {
        let [a, b, n] = args else {
            return Err(self.unsupported("`intrinsics::compare_bytes` without three operands"));
        };
        let (pa, pb, n) = (
            self.scalar_operand(a)?,
            self.scalar_operand(b)?,
            self.scalar_operand(n)?,
        );
        let i64t = self.b.types().i64();
        let n = self.zext_or_trunc(n, i64t);
        Ok(self.first_byte_difference(pa, pb, n))
    }

    /// `raw_eq::<T>(a, b)` (`==` on arrays of bytes): whether the `size_of::<T>()`
    /// bytes at `a` and `b` are equal. rustc calls it only for types
    /// without padding.
    pub(super) fn raw_eq(&mut self, args: &[Operand]) -> Result<Value, Diagnostic> {
        let [a, b] = args else {
            return Err(self.unsupported("`intrinsics::raw_eq` without two operands"));
        };
        let ty = self
            .operand_ty(a)?
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported("`intrinsics::raw_eq` of a non-reference"))?;
        if self.sh.layouts.is_unsized(&ty) {
            return Err(self.unsupported(format!("`intrinsics::raw_eq` of unsized `{ty}`")));
        }
        let size = self.layout_of(&ty)?.size;
        let (pa, pb) = (self.scalar_operand(a)?, self.scalar_operand(b)?);
        let n = self.iconst(64, size as i128);
        let diff = self.first_byte_difference(pa, pb, n);
        let zero = self.iconst(32, 0);
        Ok(self.b.icmp(IntCC::Eq, diff, zero))
    }

    /// `swap_nonoverlapping_bytes(x, y, n)` with `n` units of `chunk`
    /// bytes, or `swap_chunk(x, y)` with one: the two ranges exchanged byte
    /// by byte (the ranges may have any alignment; Rust promises they do
    /// not overlap).
    pub(super) fn swap_bytes(&mut self, args: &[Operand], chunk: u64) -> Result<(), Diagnostic> {
        let (x, y, n) = match args {
            [x, y, n] => (x, y, Some(n)),
            [x, y] => (x, y, None),
            _ => {
                return Err(
                    self.unsupported("libcore's byte swap without two pointers (and a count)")
                );
            }
        };
        let (px, py) = (self.scalar_operand(x)?, self.scalar_operand(y)?);
        let n = match n {
            Some(n) => self.scalar_operand(n)?,
            None => self.iconst(64, 1),
        };
        let bytes = self.byte_count(n, chunk);
        self.for_each_byte(bytes, |this, i| {
            let (at_x, at_y) = (this.b.byte_offset(px, i), this.b.byte_offset(py, i));
            let a = this.load_scalar_at(at_x, 0, Scalar::Int(8));
            let b = this.load_scalar_at(at_y, 0, Scalar::Int(8));
            this.store_scalar_at(at_x, 0, Scalar::Int(8), b);
            this.store_scalar_at(at_y, 0, Scalar::Int(8), a);
        });
        Ok(())
    }

    /// The loop both comparisons share: `a[i] - b[i]` (zero-extended to
    /// `i32`) at the first `i < n` where the bytes differ, else 0.
    fn first_byte_difference(&mut self, a: Value, b: Value, n: Value) -> Value {
        let (i32t, i64t) = (self.b.types().i32(), self.b.types().i64());
        // header(i): i < n ? body : exit(0); body: d = a[i] - b[i];
        // d != 0 ? exit(d) : header(i + 1).
        let header = self.b.create_block();
        let i = self.b.append_block_param(header, i64t);
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let result = self.b.append_block_param(exit, i32t);
        let zero64 = self.iconst(64, 0);
        self.b.jump(header, &[zero64]);
        self.b.switch_to_block(header);
        let more = self.b.icmp(IntCC::Ult, i, n);
        let zero32 = self.iconst(32, 0);
        self.b.brif(more, body, &[], exit, &[zero32]);
        self.b.switch_to_block(body);
        let (at_a, at_b) = (self.b.byte_offset(a, i), self.b.byte_offset(b, i));
        let x = self.load_scalar_at(at_a, 0, Scalar::Int(8));
        let y = self.load_scalar_at(at_b, 0, Scalar::Int(8));
        let (x, y) = (
            self.b.cast(CastOp::ZExt, x, i32t),
            self.b.cast(CastOp::ZExt, y, i32t),
        );
        let diff = self.b.binary(BinaryOp::Sub, x, y);
        let zero32 = self.iconst(32, 0);
        let differs = self.b.icmp(IntCC::Ne, diff, zero32);
        let one = self.iconst(64, 1);
        let next = self.b.iadd(i, one);
        self.b.brif(differs, exit, &[diff], header, &[next]);
        self.b.switch_to_block(exit);
        result
    }
}
