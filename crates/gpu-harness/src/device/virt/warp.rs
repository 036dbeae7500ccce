//! Warp collectives: shuffles, votes, reductions, matches, `__syncwarp`
//! and `__activemask`.
//!
//! The virtual device runs threads one at a time, not in lockstep. A warp
//! collective is where lockstep matters: the lanes of its mask exchange values
//! as one instruction. So a lane that reaches one waits (as at a barrier)
//! until every lane of the mask has arrived at a collective of the same kind
//! and mask; then all of them get their results at once. Warps are 32
//! consecutive threads of a block, x fastest, as on the GPU; a block's last
//! warp may be partial.
//!
//! As in PTX, a collective waits for the lanes of its mask that have not
//! exited, and works over those ("all non-exited threads in membermask"):
//! a lane that returned early is no error, and it contributes nothing (a 0
//! bit to a ballot, no value to a reduction or a match).
//!
//! Whatever the GPU leaves undefined is a [`FaultKind::Warp`] here, never a
//! guess: lanes that disagree on the mask or the operation, a mask naming
//! lanes the warp lacks or not naming the lane itself, a shuffle reading a
//! lane outside the mask or one that has exited.
//! `__activemask` gathers every lane that has not exited, so in divergent code
//! (where the GPU would report only the lanes on one path) it waits for lanes
//! that never come, and the launch reports a deadlock instead of a value that
//! the GPU might not give.

use std::collections::HashMap;

use device_ir::{MatchMode, VoteMode};

use super::error::{Fault, FaultKind};
use super::exec::{WarpCall, WarpKind};
use super::value::Val;

/// Lanes of one warp gathering at one collective.
struct Gather {
    kind: WarpKind,
    mask: u32,
    arrived: u32,
    calls: [Option<WarpCall>; 32],
}

/// A completed collective: each participating thread (by index in the
/// launch) with its result, and the threads to synchronize (for `__syncwarp`).
pub(crate) struct Completed {
    pub results: Vec<(usize, Option<Val>)>,
    pub synced: Vec<u32>,
}

/// The pending collectives and exited lanes of every warp of a launch.
pub(crate) struct Warps {
    per_block: u32,
    pending: HashMap<(u32, u32), Vec<Gather>>,
    exited: HashMap<(u32, u32), u32>,
}

fn warp_fault(msg: String) -> Fault {
    Fault::new(FaultKind::Warp, msg)
}

/// A warp fault, and the thread (its index in the launch) it belongs to
/// when that is not the thread that arrived or exited just now: the lane
/// whose shuffle reads what the GPU leaves undefined.
pub(crate) struct WarpFault {
    pub fault: Fault,
    pub thread: Option<usize>,
}

impl From<Fault> for WarpFault {
    fn from(fault: Fault) -> Self {
        WarpFault {
            fault,
            thread: None,
        }
    }
}

impl Warps {
    pub fn new(per_block: u32) -> Self {
        Warps {
            per_block,
            pending: HashMap::new(),
            exited: HashMap::new(),
        }
    }

    /// The lanes warp `warp` of a block has.
    fn present(&self, warp: u32) -> u32 {
        let lanes = self.per_block.saturating_sub(warp * 32).min(32);
        if lanes == 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        }
    }

    /// The index in the launch of lane `lane` of warp `warp` of block `block`.
    fn thread_index(&self, block: u32, warp: u32, lane: u32) -> usize {
        (block * self.per_block + warp * 32 + lane) as usize
    }

    /// Thread `in_block` of block `block` arrives with `call`. `None` while
    /// lanes of the mask are missing.
    pub fn arrive(
        &mut self,
        block: u32,
        in_block: u32,
        mut call: WarpCall,
    ) -> Result<Option<Completed>, WarpFault> {
        let (warp, lane) = (in_block / 32, in_block % 32);
        let present = self.present(warp);
        let exited = self.exited.get(&(block, warp)).copied().unwrap_or(0);
        if call.kind == WarpKind::ActiveMask {
            call.mask = present & !exited;
        }
        let mask = call.mask;
        let what = call.kind.describe();
        if mask & (1 << lane) == 0 {
            return Err(warp_fault(format!(
                "lane {lane} executes {what} with mask {mask:#010x}, which does not name it"
            ))
            .into());
        }
        if mask & !present != 0 {
            return Err(warp_fault(format!(
                "{what} with mask {mask:#010x} names lanes {:#010x} that this warp does not have (the block has {} threads)",
                mask & !present,
                self.per_block
            ))
            .into());
        }
        // `__activemask`'s mask is ours: the live lanes when each arrives,
        // which shrinks as lanes exit; it names one gathering all the same.
        let same_mask = |g: &Gather| {
            if call.kind == WarpKind::ActiveMask && g.kind == WarpKind::ActiveMask {
                g.mask & !exited == mask
            } else {
                g.mask == mask
            }
        };
        let gathers = self.pending.entry((block, warp)).or_default();
        if let Some(g) = gathers
            .iter()
            .find(|g| g.mask & mask != 0 && (!same_mask(g) || !g.kind.same_as(call.kind)))
        {
            return Err(warp_fault(format!(
                "lane {lane} executes {what} with mask {mask:#010x} while lanes {:#010x} wait at {} with mask {:#010x}: the lanes of a warp collective must execute the same one",
                g.arrived,
                g.kind.describe(),
                g.mask
            ))
            .into());
        }
        let at = match gathers.iter().position(same_mask) {
            Some(i) => i,
            None => {
                gathers.push(Gather {
                    kind: call.kind,
                    mask,
                    arrived: 0,
                    calls: [None; 32],
                });
                gathers.len() - 1
            }
        };
        let g = &mut gathers[at];
        g.arrived |= 1 << lane;
        g.calls[lane as usize] = Some(call);
        if g.arrived != g.mask & !exited {
            return Ok(None);
        }
        let g = gathers.swap_remove(at);
        self.complete(block, warp, &g, exited).map(Some)
    }

    /// Completes `g` over the lanes of its mask that have not exited (the
    /// ones that arrived).
    fn complete(
        &self,
        block: u32,
        warp: u32,
        g: &Gather,
        exited: u32,
    ) -> Result<Completed, WarpFault> {
        let live = g.mask & !exited;
        let lanes: Vec<u32> = (0..32).filter(|l| live & (1 << l) != 0).collect();
        let call = |l: u32| g.calls[l as usize].ok_or_else(|| warp_fault("missing lane".into()));
        let ballot = lanes
            .iter()
            .filter(|&&l| g.calls[l as usize].is_some_and(|c| c.value != 0))
            .fold(0u32, |b, l| b | (1 << l));
        let values = lanes
            .iter()
            .map(|&l| call(l).map(|c| c.value))
            .collect::<Result<Vec<u64>, Fault>>()?;
        let mut results = Vec::with_capacity(lanes.len());
        for &l in &lanes {
            let c = call(l)?;
            let val = match c.kind {
                WarpKind::Shuffle(mode, operand, clamp) => {
                    let v = match mode.source(l, operand, clamp) {
                        None => c.value as u32,
                        Some(j) if j < 32 && live & (1 << j) != 0 => call(j)?.value as u32,
                        Some(j) => {
                            let why = if j < 32 && g.mask & (1 << j) != 0 {
                                "which has exited".to_owned()
                            } else {
                                format!("which is not in the mask {:#010x}", g.mask)
                            };
                            return Err(WarpFault {
                                fault: warp_fault(format!(
                                    "lane {l} shuffles ({}) from lane {j}, {why}: the GPU leaves that value undefined",
                                    mode.name()
                                )),
                                thread: Some(self.thread_index(block, warp, l)),
                            });
                        }
                    };
                    Some(Val::int(32, u128::from(v)))
                }
                WarpKind::Reduce(op) => {
                    let folded = values[1..]
                        .iter()
                        .fold(values[0] as u32, |acc, &v| op.combine(acc, v as u32));
                    Some(Val::int(32, u128::from(folded)))
                }
                WarpKind::Match(mode, _) => {
                    let same = lanes
                        .iter()
                        .zip(&values)
                        .filter(|&(_, &v)| v == c.value)
                        .fold(0u32, |m, (&j, _)| m | (1 << j));
                    let mask = match mode {
                        MatchMode::Any => same,
                        MatchMode::All if same == live => live,
                        MatchMode::All => 0,
                    };
                    Some(Val::int(32, u128::from(mask)))
                }
                WarpKind::Vote(VoteMode::Ballot) => Some(Val::int(32, u128::from(ballot))),
                WarpKind::Vote(VoteMode::All) => Some(Val::int(1, u128::from(ballot == live))),
                WarpKind::Vote(VoteMode::Any) => Some(Val::int(1, u128::from(ballot != 0))),
                WarpKind::ActiveMask => Some(Val::int(32, u128::from(live))),
                WarpKind::Sync => None,
            };
            results.push((self.thread_index(block, warp, l), val));
        }
        let synced = if g.kind == WarpKind::Sync {
            results.iter().map(|&(i, _)| i as u32).collect()
        } else {
            Vec::new()
        };
        Ok(Completed { results, synced })
    }

    /// Thread `in_block` of block `block` exited: the collectives of its
    /// warp whose mask names it and that now have every other live lane
    /// complete.
    pub fn exit(&mut self, block: u32, in_block: u32) -> Result<Vec<Completed>, WarpFault> {
        let (warp, lane) = (in_block / 32, in_block % 32);
        let exited = {
            let e = self.exited.entry((block, warp)).or_default();
            *e |= 1 << lane;
            *e
        };
        let Some(gathers) = self.pending.get_mut(&(block, warp)) else {
            return Ok(Vec::new());
        };
        let (ready, waiting): (Vec<Gather>, Vec<Gather>) = std::mem::take(gathers)
            .into_iter()
            .partition(|g| g.mask & (1 << lane) != 0 && g.arrived == g.mask & !exited);
        *gathers = waiting;
        ready
            .iter()
            .map(|g| self.complete(block, warp, g, exited))
            .collect()
    }

    /// What thread `in_block` of block `block` waits for, if it waits at a
    /// warp collective.
    pub fn waiting(&self, block: u32, in_block: u32) -> Option<String> {
        let (warp, lane) = (in_block / 32, in_block % 32);
        let g = self
            .pending
            .get(&(block, warp))?
            .iter()
            .find(|g| g.arrived & (1 << lane) != 0)?;
        let exited = self.exited.get(&(block, warp)).copied().unwrap_or(0);
        Some(format!(
            "lane {lane} waits at {} with mask {:#010x} for lanes {:#010x}, which never arrive",
            g.kind.describe(),
            g.mask,
            g.mask & !g.arrived & !exited
        ))
    }
}
