//! Kernel faults found by the virtual device.

use thiserror::Error;

use super::race::Hit;

/// What went wrong, for tests and reports to match on; the message says the rest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// An access through a pointer into a stack frame that has returned.
    StaleFrame,
    /// An access outside its allocation.
    OutOfBounds,
    /// An access through a pointer whose address space is not its target's.
    WrongSpace,
    /// A write to read-only memory (an immutable global).
    ReadOnly,
    /// A read of bytes that were never written.
    Uninit,
    /// An access through null, or an address that names no allocation.
    NullOrWild,
    /// An access to another thread's stack or another block's shared memory.
    Foreign,
    /// An access at an address that breaks the stated alignment.
    Misaligned,
    /// A thread ran more steps than the per-thread limit
    /// ([`Limits::max_steps`](super::Limits::max_steps)): it probably loops
    /// forever.
    Timeout,
    /// A barrier that can never complete.
    Deadlock,
    /// A warp collective its lanes cannot execute as one instruction: they
    /// disagree on the mask or the operation, the mask names lanes the warp
    /// lacks, or a shuffle reads a lane outside the mask or one that has
    /// exited (undefined on the GPU).
    Warp,
    /// The kernel executed `trap`.
    Trap,
    /// The kernel reached `unreachable`.
    Unreachable,
    /// Undefined arithmetic: division by zero, overflowing signed division, a
    /// shift by the bit width or more, an out-of-range float-to-int conversion.
    Arithmetic,
    /// A use of an undefined value other than copying it.
    UndefUse,
    /// An invalid `addrspacecast`.
    BadCast,
    /// An indirect call through a pointer that is not a device function's
    /// address, or of a function whose signature is not the call's.
    BadCall,
    /// Something the virtual device does not run (arbitrary inline PTX, calls to
    /// declarations).
    Unsupported,
    /// The call stack grew past its limit.
    StackOverflow,
    /// A value of the wrong shape where the verifier should have refused it.
    Internal,
}

/// A fault inside the executor, before it is placed at its instruction.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    pub kind: FaultKind,
    pub message: String,
    /// Set when the fault is a data race: the launch then fails with a
    /// [`RaceReport`](super::RaceReport), not an [`ExecError`].
    pub race: Option<Box<Hit>>,
}

impl Fault {
    pub fn new(kind: FaultKind, message: impl Into<String>) -> Self {
        Fault {
            kind,
            message: message.into(),
            race: None,
        }
    }
}

/// A kernel fault: which kernel, function and instruction, which thread, and
/// what went wrong.
///
/// ```text
/// kernel k, fn k, inst7 (v5 = load i32, v4, align 4): load through a pointer into the dead frame of helper (...) [block (0, 0, 0), thread (0, 0, 0)]
/// ```
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error(
    "kernel {kernel}, fn {function}, {inst}: {message} [block ({}, {}, {}), thread ({}, {}, {}){}]",
    block[0], block[1], block[2], thread[0], thread[1], thread[2],
    called_from.iter().map(|c| format!(", called from {c}")).collect::<String>()
)]
pub struct ExecError {
    /// The launched kernel.
    pub kernel: String,
    /// The function executing when the fault happened.
    pub function: String,
    /// The instruction, in device-IR text form (`inst5 (v3 = load ...)`).
    pub inst: String,
    /// What kind of fault.
    pub kind: FaultKind,
    /// What went wrong, naming the memory involved.
    pub message: String,
    /// The faulting thread's block index.
    pub block: [u32; 3],
    /// The faulting thread's index in its block.
    pub thread: [u32; 3],
    /// The calls that led to `function`, innermost first (`fn k, inst3`).
    pub called_from: Vec<String>,
}
