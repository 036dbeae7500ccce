//! Compare-exchange, `mem::swap` and `copy_nonoverlapping`: the known calls
//! whose result is not one SSA value (a `Result<T, T>` in memory) and the
//! operations that only move memory.
//!
//! rustc's optimized MIR leaves `Atomic*::compare_exchange(_weak)` as
//! `sync::atomic::atomic_compare_exchange(_weak)::<T>(ptr, old, new, success,
//! failure)` returning `Result<T, T>`, the intrinsics `atomic_cxchg(weak)` as
//! `(T, bool)`, and `mem::swap` as `intrinsics::typed_swap_nonoverlapping::<T>(a, b)`.

use device_ir::{IntCC, Ordering as DOrd, Scope, Value};
use mir_import::calls::{AtomicOp, OrderingArg};
use mir_import::eval::layout::{Encoding, Shape};
use mir_import::model::{Operand, Place, Ty};

use super::FnLower;
use super::call::device_ordering;
use super::values::{PlaceRef, Val};
use crate::diag::Diagnostic;
use crate::repr::{Repr, Scalar};

/// The one device ordering a compare-and-swap gets for Rust's `success` and
/// `failure` orderings: PTX `atom.cas` has a single semantics that holds
/// whether or not it stores, so it must be at least as strong as both
/// (`(Release, Acquire)` is `AcqRel`; a `SeqCst` either way is `SeqCst`),
/// as LLVM does for `cmpxchg`.
pub(crate) fn cas_ordering(success: DOrd, failure: DOrd) -> DOrd {
    match (success, failure) {
        (DOrd::SeqCst, _) | (_, DOrd::SeqCst) => DOrd::SeqCst,
        (DOrd::Release, DOrd::Acquire | DOrd::AcqRel) => DOrd::AcqRel,
        (DOrd::Relaxed, DOrd::Acquire) => DOrd::Acquire,
        (DOrd::Relaxed, f) => f,
        (s, _) => s,
    }
}

impl FnLower<'_, '_> {
    /// The typed device pointer, SSA type and scalar kind of an atomic's
    /// pointer operand, which must point to an integer (the device's atomics
    /// are integer ones).
    pub(super) fn atomic_ptr(
        &mut self,
        ptr_op: &Operand,
    ) -> Result<(Value, device_ir::Ty, Scalar), Diagnostic> {
        let elem = self
            .operand_ty(ptr_op)?
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported("atomic on a non-pointer"))?;
        let Repr::Scalar(s @ Scalar::Int(_)) = self.repr(&elem)? else {
            return Err(self.unsupported(format!("atomic on `{elem}`")));
        };
        let t = s.ssa_ty(self.b.module());
        let p = self.scalar_operand(ptr_op)?;
        Ok((self.b.ptr_bitcast(p, t), t, s))
    }

    /// A strong or weak compare-exchange at system scope, lowered as one
    /// `atom.cas` (a weak one is allowed never to fail spuriously). Its
    /// result is `(old, ok)` for the intrinsics' `(T, bool)`, or, for
    /// `atomic_compare_exchange`'s `Result<T, T>`, written into `dest` with
    /// the layout the import gives (`Ok(old)` on a match, `Err(old)`
    /// otherwise): then `Ok(Some(None))`.
    pub(super) fn compare_exchange(
        &mut self,
        op: &AtomicOp,
        ordering: OrderingArg,
        args: &[Operand],
        dest: &Place,
    ) -> Result<Option<Option<Val>>, Diagnostic> {
        let unknown = || {
            format!(
                "atomic intrinsic `{}` with {} arguments",
                op.name(),
                args.len()
            )
        };
        let [ptr, old, new, rest @ ..] = args else {
            return Err(self.unsupported(unknown()));
        };
        let o = match (ordering, rest) {
            // A generic argument stands for the success ordering; the
            // failure ordering may not be stronger.
            (OrderingArg::Generic(o), []) => device_ordering(o),
            (OrderingArg::Arguments, [s, f]) => cas_ordering(self.ordering(s)?, self.ordering(f)?),
            _ => return Err(self.unsupported(unknown())),
        };
        let (typed, _, s) = self.atomic_ptr(ptr)?;
        let (e, n) = (self.scalar_operand(old)?, self.scalar_operand(new)?);
        let prev = self.b.atomic_cas(typed, e, n, o, Scope::Sys);
        let ok = self.b.icmp(IntCC::Eq, prev, e);
        let dty = self.place_ty(dest)?;
        if let Repr::Pair(..) = self.repr(&dty)? {
            return Ok(Some(Some(Val::Pair(prev, ok))));
        }
        self.write_cas_result(dest, &dty, s, prev, ok)?;
        Ok(Some(None))
    }

    /// Writes `Ok(prev)` if `ok`, else `Err(prev)`, into the `Result<T, T>`
    /// at `dest`, by the tag encoding and field offsets of `ty`'s layout.
    fn write_cas_result(
        &mut self,
        dest: &Place,
        ty: &Ty,
        s: Scalar,
        prev: Value,
        ok: Value,
    ) -> Result<(), Diagnostic> {
        let layout = self.sh.layouts.of(ty).map_err(|e| self.unsupported(e))?;
        let not_result = || format!("a compare-exchange result of type `{ty}`");
        let Shape::Enum {
            encoding: Encoding::Direct { offset, size },
            variants,
        } = &layout.shape
        else {
            return Err(self.unsupported(not_result()));
        };
        // `Result` declares `Ok` then `Err`: their discriminants are 0 and 1
        // where the layout report gives no tag value.
        let variant = |name: &str, index: u128| {
            variants
                .iter()
                .find(|v| v.name == name)
                .map(|v| (v.tag_value.unwrap_or(index), v.fields.get("0").copied()))
        };
        let (Some((ok_tag, Some(ok_off))), Some((err_tag, Some(err_off)))) =
            (variant("Ok", 0), variant("Err", 1))
        else {
            return Err(self.unsupported(not_result()));
        };
        if ok_off != err_off {
            return Err(self.unsupported(not_result()));
        }
        let PlaceRef::Mem { addr, .. } = self.place(dest)? else {
            return Err(self.internal("a `Result` destination that is not in memory"));
        };
        let bits = (*size * 8) as u16;
        let (tok, terr) = (
            self.iconst(bits, ok_tag as i128),
            self.iconst(bits, err_tag as i128),
        );
        let tag = self.b.select(ok, tok, terr);
        self.store_scalar_at(addr, *offset, Scalar::Int(bits), tag);
        self.store_scalar_at(addr, ok_off, s, prev);
        Ok(())
    }

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
        if elem.is_unsized() {
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
        let elem = self
            .operand_ty(dst)?
            .pointee()
            .cloned()
            .ok_or_else(|| self.unsupported("`copy_nonoverlapping` to a non-pointer"))?;
        let size = self
            .sh
            .layouts
            .of(&elem)
            .map_err(|e| self.unsupported(e))?
            .size;
        let (d, s, n) = (
            self.scalar_operand(dst)?,
            self.scalar_operand(src)?,
            self.scalar_operand(count)?,
        );
        let i64t = self.b.types().i64();
        let n = self.zext_or_trunc(n, i64t);
        let size = self.iconst(64, size as i128);
        let bytes = self.b.imul(n, size);
        let backward = overlap.then(|| {
            let di = self.b.cast(device_ir::CastOp::PtrToInt, d, i64t);
            let si = self.b.cast(device_ir::CastOp::PtrToInt, s, i64t);
            self.b.icmp(IntCC::Ugt, di, si)
        });
        // header(i): i < bytes ? body : exit; body: copy byte i (or, going
        // backwards, byte bytes - 1 - i), i + 1.
        let header = self.b.create_block();
        let i = self.b.append_block_param(header, i64t);
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let zero = self.iconst(64, 0);
        self.b.jump(header, &[zero]);
        self.b.switch_to_block(header);
        let more = self.b.icmp(IntCC::Ult, i, bytes);
        self.b.brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        let at = match backward {
            Some(back) => {
                let one = self.iconst(64, 1);
                let last = self.b.binary(device_ir::BinaryOp::Sub, bytes, one);
                let down = self.b.binary(device_ir::BinaryOp::Sub, last, i);
                self.b.select(back, down, i)
            }
            None => i,
        };
        let (from, to) = (self.b.byte_offset(s, at), self.b.byte_offset(d, at));
        let byte = Scalar::Int(8);
        let v = self.load_scalar_at(from, 0, byte);
        self.store_scalar_at(to, 0, byte, v);
        let one = self.iconst(64, 1);
        let next = self.b.iadd(i, one);
        self.b.jump(header, &[next]);
        self.b.switch_to_block(exit);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cas_is_as_strong_as_both_orderings() {
        use DOrd::*;
        assert_eq!(cas_ordering(Acquire, Relaxed), Acquire);
        assert_eq!(cas_ordering(Release, Relaxed), Release);
        assert_eq!(cas_ordering(Release, Acquire), AcqRel);
        assert_eq!(cas_ordering(AcqRel, Relaxed), AcqRel);
        assert_eq!(cas_ordering(AcqRel, Acquire), AcqRel);
        assert_eq!(cas_ordering(Relaxed, Relaxed), Relaxed);
        assert_eq!(cas_ordering(Relaxed, Acquire), Acquire);
        assert_eq!(cas_ordering(Release, SeqCst), SeqCst);
        assert_eq!(cas_ordering(SeqCst, Relaxed), SeqCst);
    }
}
