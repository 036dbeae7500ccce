//! Atomics and reductions (`atom`, `red`): the read, the operation and the
//! write as one step, which the sequentially consistent schedule makes
//! atomic; `atom.add.f32` flushes subnormals as PTX says.

use ptx_reader::Type;

use super::{Exec, Target, bits, f32_of, f64_of, mask, sext, signed, unsupported};
use crate::device::ptx::decode::{Inst, Op};
use crate::device::ptx::float::{self, Round, bits32, bits64};
use crate::device::virt::{Fault, Step};

impl Exec<'_, '_> {
    pub(super) fn atomic(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        let (dst, addr_op, rest) = if i.op == Op::Atom {
            (Some(&ops[0]), &ops[1], &ops[2..])
        } else {
            (None, &ops[0], &ops[1..])
        };
        let Target::Mem(addr) = self.target(addr_op)? else {
            return Err(unsupported("an atomic on a parameter"));
        };
        let ty = i.ty;
        let w = bits(ty);
        let size = ty.size() as usize;
        let who = self.who("atomic");
        let old = self.ctx.mem.load(addr, size, i.space, who)?;
        let b = self.val(&rest[0])? & mask(w);
        let sel = i.sel.unwrap_or("");
        let new = match (sel, ty) {
            ("add", Type::F32) => {
                // atom.add.f32 rounds to nearest and flushes subnormals.
                let r = float::ftz32(float::add32(
                    float::ftz32(f32_of(old)),
                    float::ftz32(f32_of(b)),
                    Round::Nearest,
                ));
                u64::from(bits32(r))
            }
            ("add", Type::F64) => bits64(f64_of(old) + f64_of(b)),
            ("add", _) => old.wrapping_add(b) & mask(w),
            ("exch", _) => b,
            ("and", _) => old & b,
            ("or", _) => old | b,
            ("xor", _) => old ^ b,
            ("min", _) if signed(ty) => {
                if sext(old, w) <= sext(b, w) {
                    old
                } else {
                    b
                }
            }
            ("max", _) if signed(ty) => {
                if sext(old, w) >= sext(b, w) {
                    old
                } else {
                    b
                }
            }
            ("min", _) => old.min(b),
            ("max", _) => old.max(b),
            ("inc", _) => {
                if old >= b {
                    0
                } else {
                    old + 1
                }
            }
            ("dec", _) => {
                if old == 0 || old > b {
                    b
                } else {
                    old - 1
                }
            }
            ("cas", _) => {
                let c = self.val(&rest[1])? & mask(w);
                if old == b { c } else { old }
            }
            (s, t) => return Err(unsupported(format!("atom.{s}.{t}"))),
        };
        let who = self.who("atomic");
        self.ctx.mem.store(addr, size, new, i.space, who)?;
        if let Some(d) = dst {
            self.set(d, old)?;
        }
        Ok(Step::Continue)
    }
}
