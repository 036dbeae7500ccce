//! The device prelude's paths, as mir-import recognises them.
//!
//! The prelude (`prelude/gpu.rs` in the workspace) is mounted as module `gpu`
//! beside the kernel module `kernel`. On the device side its thread-index
//! functions and barriers are bodiless `extern` items, so calls to them stay in
//! the MIR as calls by path. This module is the one list of those paths;
//! `prelude/README.md` documents the same list for kernel authors.

/// The module name the prelude is mounted under.
pub const PRELUDE_MODULE: &str = "gpu";
/// The module name the kernel source is mounted under.
pub const KERNEL_MODULE: &str = "kernel";
/// The cfg that selects the device side of the prelude.
pub const DEVICE_CFG: &str = "gpu_device";

/// A prelude function that lowering replaces with a device primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Intrinsic {
    /// `threadIdx.{x,y,z}`: axis 0, 1 or 2.
    ThreadIdx(u8),
    /// `blockIdx.{x,y,z}`.
    BlockIdx(u8),
    /// `blockDim.{x,y,z}`.
    BlockDim(u8),
    /// `gridDim.{x,y,z}`.
    GridDim(u8),
    /// `__syncthreads()`.
    SyncThreads,
    /// `Barrier::wait`'s primitive: a CTA barrier on a shared barrier object.
    BarrierWait,
    /// `%laneid`.
    LaneId,
    /// `__shfl_*_sync` on a `u32`: mask, value, lane operand.
    Shuffle(ShuffleKind),
    /// `__ballot_sync`, `__all_sync`, `__any_sync`: mask, predicate.
    Vote(VoteKind),
    /// `__activemask()`.
    ActiveMask,
    /// `__syncwarp(mask)`.
    SyncWarp,
    /// `%lanemask_{lt,le,eq,ge,gt}`.
    LaneMask(LaneMaskKind),
    /// `__reduce_*_sync` on a 32-bit value: mask, value.
    Reduce(ReduceKind),
    /// `__match_{any,all}_sync` on a 32- or 64-bit value: mask, value.
    Match(MatchKind),
    /// `atomicAdd` on an `f32` or `f64` (relaxed, device scope): pointer, value.
    AtomicFAdd,
    /// The start of the block's dynamic shared memory (`extern __shared__`,
    /// `DynamicSharedArray`): a constant alignment.
    DynamicShared,
}

/// Which lane a warp shuffle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ShuffleKind {
    /// `__shfl_sync`: a lane index.
    Idx,
    /// `__shfl_up_sync`: `lane - delta`.
    Up,
    /// `__shfl_down_sync`: `lane + delta`.
    Down,
    /// `__shfl_xor_sync`: `lane ^ mask`.
    Xor,
}

/// What a warp vote computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum VoteKind {
    /// `__all_sync`.
    All,
    /// `__any_sync`.
    Any,
    /// `__ballot_sync`.
    Ballot,
}

/// Which lane-mask register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum LaneMaskKind {
    /// `%lanemask_lt`: the lanes below this one.
    Lt,
    /// `%lanemask_le`.
    Le,
    /// `%lanemask_eq`: this lane.
    Eq,
    /// `%lanemask_ge`.
    Ge,
    /// `%lanemask_gt`.
    Gt,
}

/// What a warp reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ReduceKind {
    /// `__reduce_add_sync`.
    Add,
    /// `__reduce_min_sync` on `int`.
    Min,
    /// `__reduce_max_sync` on `int`.
    Max,
    /// `__reduce_min_sync` on `unsigned`.
    UMin,
    /// `__reduce_max_sync` on `unsigned`.
    UMax,
    /// `__reduce_and_sync`.
    And,
    /// `__reduce_or_sync`.
    Or,
    /// `__reduce_xor_sync`.
    Xor,
}

/// What a warp match computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum MatchKind {
    /// `__match_any_sync`: the lanes with this lane's value.
    Any,
    /// `__match_all_sync`: the mask when all values agree, else 0.
    All,
}

/// Every recognised function path and what it is.
pub const INTRINSICS: &[(&str, Intrinsic)] = &[
    ("gpu::thread_idx_x", Intrinsic::ThreadIdx(0)),
    ("gpu::thread_idx_y", Intrinsic::ThreadIdx(1)),
    ("gpu::block_idx_x", Intrinsic::BlockIdx(0)),
    ("gpu::block_idx_y", Intrinsic::BlockIdx(1)),
    ("gpu::block_dim_x", Intrinsic::BlockDim(0)),
    ("gpu::block_dim_y", Intrinsic::BlockDim(1)),
    ("gpu::grid_dim_x", Intrinsic::GridDim(0)),
    ("gpu::grid_dim_y", Intrinsic::GridDim(1)),
    ("gpu::thread_idx_z", Intrinsic::ThreadIdx(2)),
    ("gpu::block_idx_z", Intrinsic::BlockIdx(2)),
    ("gpu::block_dim_z", Intrinsic::BlockDim(2)),
    ("gpu::grid_dim_z", Intrinsic::GridDim(2)),
    ("gpu::sync_threads", Intrinsic::SyncThreads),
    ("gpu::barrier_wait", Intrinsic::BarrierWait),
    ("gpu::lane_id", Intrinsic::LaneId),
    ("gpu::shfl_sync", Intrinsic::Shuffle(ShuffleKind::Idx)),
    ("gpu::shfl_up_sync", Intrinsic::Shuffle(ShuffleKind::Up)),
    ("gpu::shfl_down_sync", Intrinsic::Shuffle(ShuffleKind::Down)),
    ("gpu::shfl_xor_sync", Intrinsic::Shuffle(ShuffleKind::Xor)),
    // The same with CUDA's `width` as a fourth operand.
    ("gpu::shfl_sync_width", Intrinsic::Shuffle(ShuffleKind::Idx)),
    (
        "gpu::shfl_up_sync_width",
        Intrinsic::Shuffle(ShuffleKind::Up),
    ),
    (
        "gpu::shfl_down_sync_width",
        Intrinsic::Shuffle(ShuffleKind::Down),
    ),
    (
        "gpu::shfl_xor_sync_width",
        Intrinsic::Shuffle(ShuffleKind::Xor),
    ),
    ("gpu::ballot_sync", Intrinsic::Vote(VoteKind::Ballot)),
    ("gpu::all_sync", Intrinsic::Vote(VoteKind::All)),
    ("gpu::any_sync", Intrinsic::Vote(VoteKind::Any)),
    ("gpu::active_mask", Intrinsic::ActiveMask),
    ("gpu::sync_warp", Intrinsic::SyncWarp),
    ("gpu::lanemask_lt", Intrinsic::LaneMask(LaneMaskKind::Lt)),
    ("gpu::lanemask_le", Intrinsic::LaneMask(LaneMaskKind::Le)),
    ("gpu::lanemask_eq", Intrinsic::LaneMask(LaneMaskKind::Eq)),
    ("gpu::lanemask_ge", Intrinsic::LaneMask(LaneMaskKind::Ge)),
    ("gpu::lanemask_gt", Intrinsic::LaneMask(LaneMaskKind::Gt)),
    ("gpu::reduce_add_sync", Intrinsic::Reduce(ReduceKind::Add)),
    ("gpu::reduce_min_sync", Intrinsic::Reduce(ReduceKind::UMin)),
    ("gpu::reduce_max_sync", Intrinsic::Reduce(ReduceKind::UMax)),
    (
        "gpu::reduce_min_sync_i32",
        Intrinsic::Reduce(ReduceKind::Min),
    ),
    (
        "gpu::reduce_max_sync_i32",
        Intrinsic::Reduce(ReduceKind::Max),
    ),
    ("gpu::reduce_and_sync", Intrinsic::Reduce(ReduceKind::And)),
    ("gpu::reduce_or_sync", Intrinsic::Reduce(ReduceKind::Or)),
    ("gpu::reduce_xor_sync", Intrinsic::Reduce(ReduceKind::Xor)),
    ("gpu::match_any_sync", Intrinsic::Match(MatchKind::Any)),
    ("gpu::match_any_sync_u64", Intrinsic::Match(MatchKind::Any)),
    ("gpu::match_all_sync", Intrinsic::Match(MatchKind::All)),
    ("gpu::match_all_sync_u64", Intrinsic::Match(MatchKind::All)),
    ("gpu::atomic_add_f32", Intrinsic::AtomicFAdd),
    ("gpu::atomic_add_f64", Intrinsic::AtomicFAdd),
    ("gpu::dynamic_shared_memory", Intrinsic::DynamicShared),
];

/// Types whose statics live in CTA-shared memory (`addrspace(3)`).
pub const SHARED_TYPES: &[&str] = &["gpu::SharedArray", "gpu::Barrier"];

/// The type whose statics live in constant memory (`addrspace(4)`), which
/// the host writes between launches.
pub const CONSTANT_MEMORY: &str = "gpu::ConstantMemory";

/// The output view type, passed to kernels by value.
pub const DISJOINT_SLICE: &str = "gpu::DisjointSlice";

/// The intrinsic at a function's def path, if it is one.
pub fn intrinsic(def_path: &str) -> Option<Intrinsic> {
    INTRINSICS
        .iter()
        .find(|(p, _)| *p == def_path)
        .map(|&(_, i)| i)
}

/// Whether a type's def path is a shared-memory type.
pub fn is_shared_type(def_path: &str) -> bool {
    SHARED_TYPES.contains(&def_path)
}
