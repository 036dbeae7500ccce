//! Warp collectives (`shfl.sync`, `vote.sync`, `redux.sync`, `match.sync`,
//! `activemask`, `bar.warp.sync`): each lane hands its part to the shared schedule
//! ([`Step::Warp`]), which gathers every lane of the mask and writes the
//! pending register. A shuffle is sent with its own mode and its `b` and
//! `c` operands, from which the gathering finds each lane's source by the
//! IR device's rule ([`ShuffleMode::source`], PTX's clamp and segment mask).

use device_ir::{MatchMode, ReduceOp, ShuffleMode, VoteMode};
use ptx_reader::Type;

use super::{Exec, unsupported};
use crate::device::ptx::decode::{Inst, Op, Opd};
use crate::device::virt::{Fault, Step, WarpCall, WarpKind};

impl Exec<'_, '_> {
    /// A warp collective: this lane's part of it.
    pub(super) fn warp(&mut self, i: &Inst) -> Result<Step, Fault> {
        let ops = &i.ops;
        match i.op {
            Op::Shfl => {
                let a = self.val(&ops[1])? as u32;
                let b = self.val(&ops[2])? as u32;
                let c = self.val(&ops[3])? as u32;
                let member = self.val(&ops[4])? as u32;
                let lane = self.t.in_block % 32;
                let (mode, in_range) = shuffle_mode(i.sel.unwrap_or("idx"), lane, b, c)?;
                let dst = match ops[0] {
                    // `d|p`: p says whether the source lane was in range,
                    // which this lane knows without the others.
                    Opd::WithPred(d, p) => {
                        self.set(&Opd::Reg(p), u64::from(in_range))?;
                        Opd::Reg(d)
                    }
                    ref d => d.clone(),
                };
                self.pend(&dst)?;
                Ok(Step::Warp(WarpCall {
                    // The instruction's own mode and operands: the warp
                    // finds each lane's source by the IR device's rule, and
                    // a fault names the mode the PTX wrote.
                    kind: WarpKind::Shuffle(mode, b, c),
                    mask: member,
                    value: u64::from(a),
                }))
            }
            Op::Vote => {
                let p = self.val(&ops[1])? & 1;
                let member = self.val(&ops[2])? as u32;
                let mode = match i.sel {
                    Some("ballot") => VoteMode::Ballot,
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    other => return Err(unsupported(format!("vote mode {other:?}"))),
                };
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Vote(mode),
                    mask: member,
                    value: p,
                }))
            }
            Op::Redux => {
                let value = self.val(&ops[1])? as u32;
                let member = self.val(&ops[2])? as u32;
                let signed = i.ty == Type::S32;
                let op = match i.sel {
                    Some("add") => ReduceOp::Add,
                    Some("min") if signed => ReduceOp::Min,
                    Some("max") if signed => ReduceOp::Max,
                    Some("min") => ReduceOp::UMin,
                    Some("max") => ReduceOp::UMax,
                    Some("and") => ReduceOp::And,
                    Some("or") => ReduceOp::Or,
                    Some("xor") => ReduceOp::Xor,
                    other => return Err(unsupported(format!("redux operation {other:?}"))),
                };
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Reduce(op),
                    mask: member,
                    value: u64::from(value),
                }))
            }
            Op::Match => {
                let wide = i.ty == Type::B64;
                let value = self.val(&ops[1])?;
                let member = self.val(&ops[2])? as u32;
                let mode = match i.sel {
                    Some("any") => MatchMode::Any,
                    Some("all") => MatchMode::All,
                    other => return Err(unsupported(format!("match mode {other:?}"))),
                };
                // `match.all`'s optional `d|p` is not emitted by our printer.
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Match(mode, wide),
                    mask: member,
                    value: if wide { value } else { value & 0xffff_ffff },
                }))
            }
            Op::ActiveMask => {
                self.pend(&ops[0])?;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::ActiveMask,
                    mask: 0,
                    value: 0,
                }))
            }
            Op::WarpSync => {
                let member = self.val(&ops[0])? as u32;
                Ok(Step::Warp(WarpCall {
                    kind: WarpKind::Sync,
                    mask: member,
                    value: 0,
                }))
            }
            other => Err(unsupported(format!("{other:?} as a warp collective"))),
        }
    }

    fn pend(&mut self, dst: &Opd) -> Result<(), Fault> {
        match dst {
            Opd::Reg(r) => {
                self.t.pending = Some(*r);
                Ok(())
            }
            other => Err(unsupported(format!("a warp collective writing {other:?}"))),
        }
    }
}

/// The mode of `shfl.sync.<mode> d, a, b, c`, and whether the lane
/// `lane` reads is in range ([`ShuffleMode::source`], the IR device's rule
/// too): what the instruction's predicate output says.
fn shuffle_mode(mode: &str, lane: u32, b: u32, c: u32) -> Result<(ShuffleMode, bool), Fault> {
    let mode = match mode {
        "up" => ShuffleMode::Up,
        "down" => ShuffleMode::Down,
        "bfly" => ShuffleMode::Bfly,
        "idx" => ShuffleMode::Idx,
        other => return Err(unsupported(format!("shfl mode {other}"))),
    };
    Ok((mode, mode.source(lane, b, c).is_some()))
}
