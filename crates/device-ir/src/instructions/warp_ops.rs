//! The operand enums of warp collectives: how a shuffle picks its source
//! lane (and PTX's segment and clamp rule), and what a reduction, a match
//! and a vote compute over the lanes of a mask.

/// How a warp shuffle picks its source lane (PTX `shfl.sync` modes), from
/// the low five bits of its lane operand `b`, within the segment and clamp
/// of its `c` operand ([`ShuffleMode::source`]); the full warp by default.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    /// Lane `b` of the segment.
    Idx,
    /// Lane `self - b`; below the segment, the thread's own value.
    Up,
    /// Lane `self + b`; past the clamp, the thread's own value.
    Down,
    /// Lane `self ^ b`; past the clamp, the thread's own value.
    Bfly,
}

impl ShuffleMode {
    /// Every mode.
    pub const ALL: [ShuffleMode; 4] = [
        ShuffleMode::Idx,
        ShuffleMode::Up,
        ShuffleMode::Down,
        ShuffleMode::Bfly,
    ];

    /// The name, as PTX and NVVM spell it.
    pub fn name(self) -> &'static str {
        match self {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Bfly => "bfly",
        }
    }

    /// PTX's `c` operand for CUDA's `__shfl_*_sync` over the full warp
    /// (`width` 32): no segments, and the clamp 0 for `up`, 31 otherwise.
    pub fn full_warp_clamp(self) -> u32 {
        self.clamp_for_width(32)
    }

    /// PTX's `c` for CUDA's `width` argument (a power of two up to 32): the
    /// segment mask `32 - width` in bits 8..13, the clamp in bits 0..5.
    pub fn clamp_for_width(self, width: u32) -> u32 {
        let clamp = if self == ShuffleMode::Up { 0 } else { 0x1f };
        (32u32.wrapping_sub(width) << 8) | clamp
    }

    /// The source lane for `lane` with operands `b` and `c`
    /// (`shfl.sync.<mode> d, a, b, c` as the PTX ISA defines it: `b & 0x1f`
    /// is the lane operand, `c & 0x1f` clamps, `(c >> 8) & 0x1f` splits the
    /// warp into segments), or `None` when it is out of range and the
    /// thread keeps its own value.
    pub fn source(self, lane: u32, b: u32, c: u32) -> Option<u32> {
        let b = b & 0x1f;
        let clamp = c & 0x1f;
        let seg = (c >> 8) & 0x1f;
        let max_lane = (lane & seg) | (clamp & !seg);
        let min_lane = lane & seg;
        match self {
            ShuffleMode::Up => lane.checked_sub(b).filter(|&j| j >= max_lane),
            ShuffleMode::Down => Some(lane + b).filter(|&j| j <= max_lane),
            ShuffleMode::Bfly => Some(lane ^ b).filter(|&j| j <= max_lane),
            ShuffleMode::Idx => Some(min_lane | (b & !seg)).filter(|&j| j <= max_lane),
        }
    }
}

/// What a warp reduction computes over the `i32` values of the lanes of its
/// mask (PTX `redux.sync`); every lane gets the result.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The wrapping sum.
    Add,
    /// The minimum as signed integers.
    Min,
    /// The maximum as signed integers.
    Max,
    /// The minimum as unsigned integers.
    UMin,
    /// The maximum as unsigned integers.
    UMax,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
}

impl ReduceOp {
    /// Every operation.
    pub const ALL: [ReduceOp; 8] = [
        ReduceOp::Add,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::UMin,
        ReduceOp::UMax,
        ReduceOp::And,
        ReduceOp::Or,
        ReduceOp::Xor,
    ];

    /// The name in the device IR's text (`umin` for the unsigned minimum).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Add => "add",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::UMin => "umin",
            ReduceOp::UMax => "umax",
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
            ReduceOp::Xor => "xor",
        }
    }

    /// The operation and type suffix of PTX's `redux.sync` (`add.u32`,
    /// `min.s32`, `and.b32`).
    pub fn ptx_suffix(self) -> &'static str {
        match self {
            ReduceOp::Add => "add.u32",
            ReduceOp::Min => "min.s32",
            ReduceOp::Max => "max.s32",
            ReduceOp::UMin => "min.u32",
            ReduceOp::UMax => "max.u32",
            ReduceOp::And => "and.b32",
            ReduceOp::Or => "or.b32",
            ReduceOp::Xor => "xor.b32",
        }
    }

    /// Folds one more lane's value into `acc`.
    pub fn combine(self, acc: u32, value: u32) -> u32 {
        match self {
            ReduceOp::Add => acc.wrapping_add(value),
            ReduceOp::Min => (acc as i32).min(value as i32) as u32,
            ReduceOp::Max => (acc as i32).max(value as i32) as u32,
            ReduceOp::UMin => acc.min(value),
            ReduceOp::UMax => acc.max(value),
            ReduceOp::And => acc & value,
            ReduceOp::Or => acc | value,
            ReduceOp::Xor => acc ^ value,
        }
    }
}

/// What a warp match computes over the values of the lanes of its mask (PTX
/// `match.sync`); the result is an `i32` lane mask.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MatchMode {
    /// The lanes of the mask whose value equals this lane's.
    Any,
    /// The mask when every lane of it has the same value, 0 otherwise.
    All,
}

impl MatchMode {
    /// Every mode.
    pub const ALL: [MatchMode; 2] = [MatchMode::Any, MatchMode::All];

    /// The name, as PTX and NVVM spell it.
    pub fn name(self) -> &'static str {
        match self {
            MatchMode::Any => "any",
            MatchMode::All => "all",
        }
    }
}

/// What a warp vote computes over the lanes of its mask (PTX `vote.sync`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    /// Whether the predicate holds on every lane; yields an `i1`.
    All,
    /// Whether it holds on some lane; yields an `i1`.
    Any,
    /// The lanes where it holds, as a bit mask; yields an `i32`.
    Ballot,
}

impl VoteMode {
    /// Every mode.
    pub const ALL: [VoteMode; 3] = [VoteMode::All, VoteMode::Any, VoteMode::Ballot];

    /// The name, as PTX and NVVM spell it.
    pub fn name(self) -> &'static str {
        match self {
            VoteMode::All => "all",
            VoteMode::Any => "any",
            VoteMode::Ballot => "ballot",
        }
    }
}

#[cfg(test)]
mod shuffle_tests {
    use super::ShuffleMode;

    /// CUDA's `__shfl_*_sync(mask, v, b, width)` as the programming guide
    /// states it, lane by lane: the source lane, or `None` for its own.
    fn cuda(mode: ShuffleMode, lane: u32, b: u32, width: u32) -> Option<u32> {
        let (group, pos) = (lane / width, lane % width);
        match mode {
            ShuffleMode::Idx => Some(group * width + b % width),
            ShuffleMode::Up => (pos >= b).then(|| lane - b),
            ShuffleMode::Down => (pos + b < width).then(|| lane + b),
            ShuffleMode::Bfly => Some(lane ^ b).filter(|j| j / width <= group),
        }
    }

    #[test]
    fn ptx_clamps_for_each_width_give_cudas_source_lanes() {
        for mode in ShuffleMode::ALL {
            for width in [1, 2, 4, 8, 16, 32] {
                let c = mode.clamp_for_width(width);
                for lane in 0..32 {
                    // The hardware reads the operand's low five bits.
                    for b in 0..64 {
                        assert_eq!(
                            mode.source(lane, b, c),
                            cuda(mode, lane, b & 31, width),
                            "{} lane {lane} b {b} width {width} (c = {c:#x})",
                            mode.name()
                        );
                    }
                }
            }
        }
        assert_eq!(ShuffleMode::Up.full_warp_clamp(), 0);
        assert_eq!(ShuffleMode::Down.full_warp_clamp(), 0x1f);
    }
}
