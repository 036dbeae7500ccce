//! Compare-exchange: the atomic whose result is not one SSA value (a
//! `Result<T, T>` in memory).
//!
//! rustc's optimized MIR leaves `Atomic*::compare_exchange(_weak)` as
//! `sync::atomic::atomic_compare_exchange(_weak)::<T>(ptr, old, new, success,
//! failure)` returning `Result<T, T>`, and the intrinsics `atomic_cxchg(weak)`
//! as `(T, bool)`.

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
        // `(T, bool)` from the intrinsic; `Result<T, T>` where
        // `compare_exchange` is inlined.
        if let (Repr::Pair(..), Ty::Tuple(_)) = (self.repr(&dty)?, &dty) {
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
        let layout = self.layout_of(ty)?;
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
        let bits = (*size * 8) as u16;
        let (tok, terr) = (
            self.iconst(bits, ok_tag as i128),
            self.iconst(bits, err_tag as i128),
        );
        let tag = self.b.select(ok, tok, terr);
        match self.place(dest)? {
            PlaceRef::Mem { addr, .. } => {
                self.store_scalar_at(addr, *offset, Scalar::Int(bits), tag);
                self.store_scalar_at(addr, ok_off, s, prev);
                Ok(())
            }
            // An enum pair: the tag in slot 0, the value in slot 1.
            r @ PlaceRef::Ssa(..) => self.write_place(&r, Val::Pair(tag, prev)),
        }
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
