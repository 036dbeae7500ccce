//! The test corpus: message passing, tree reduction and a few classic litmus
//! shapes, written in the kernel language.

use crate::lang::{Access, BarrierKind, Builder, Expr, InitStore, Loc, Program, Space, Ty};

/// `data`, global address 0.
pub const DATA: Loc = Loc {
    space: Space::Global,
    addr: 0,
};
/// `flag`, global address 1.
pub const FLAG: Loc = Loc {
    space: Space::Global,
    addr: 1,
};
/// `x`, global address 2.
pub const X: Loc = Loc {
    space: Space::Global,
    addr: 2,
};
/// `y`, global address 3.
pub const Y: Loc = Loc {
    space: Space::Global,
    addr: 3,
};

const NAMES: [(u32, &str); 4] = [(0, "data"), (1, "flag"), (2, "x"), (3, "y")];

fn zero(loc: Loc) -> InitStore {
    InitStore {
        loc,
        ty: Ty::U32,
        val: 0,
    }
}

/// The flag's synchronization in message passing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpSync {
    /// `flag := 1 (release)` and `r1 := flag (acquire)`.
    AcquireRelease,
    /// Both relaxed.
    Relaxed,
}

/// The reader's shape in message passing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpReader {
    /// `r1 := flag; if r1 = 1 { r2 := data }`, as in the issue.
    Conditional,
    /// `r1 := flag; r2 := data`, the classic litmus form.
    Unconditional,
}

/// Message passing: T0 writes `data := 1 (relaxed); flag := 1`, T1 reads the
/// flag and then the data. `data` and `flag` are zero-initialized, in that order.
pub fn message_passing(sync: MpSync, reader: MpReader) -> Program {
    let (st_flag, ld_flag) = match sync {
        MpSync::AcquireRelease => (Access::RELEASE, Access::ACQUIRE),
        MpSync::Relaxed => (Access::RELAXED, Access::RELAXED),
    };
    let mut b = Builder::new();
    let r1 = b.reg("r1");
    let r2 = b.reg("r2");
    let w_data = b.store(Space::Global, DATA.addr, Ty::U32, 1, Access::RELAXED);
    let w_flag = b.store(Space::Global, FLAG.addr, Ty::U32, 1, st_flag);
    let writer = b.seq([w_data, w_flag]);
    let r_flag = b.load(r1, Space::Global, FLAG.addr, Ty::U32, ld_flag);
    let r_data = b.load(r2, Space::Global, DATA.addr, Ty::U32, Access::Plain);
    let body = match reader {
        MpReader::Conditional => {
            let guarded = b.if_then(Expr::Reg(r1).equals(1), r_data);
            b.seq([r_flag, guarded])
        }
        MpReader::Unconditional => b.seq([r_flag, r_data]),
    };
    let name = match (sync, reader) {
        (MpSync::AcquireRelease, MpReader::Conditional) => "mp.acq_rel",
        (MpSync::Relaxed, MpReader::Conditional) => "mp.relaxed",
        (MpSync::AcquireRelease, MpReader::Unconditional) => "mp.acq_rel.straight",
        (MpSync::Relaxed, MpReader::Unconditional) => "mp.relaxed.straight",
    };
    b.finish(
        name,
        vec![writer, body],
        vec![zero(DATA), zero(FLAG)],
        &NAMES,
    )
}

/// Message passing through a barrier: T0 `data := 1; barrier`, T1
/// `barrier; r := data`, everything plain.
pub fn barrier_message_passing(kind: BarrierKind) -> Program {
    let mut b = Builder::new();
    let r = b.reg("r");
    let w = b.store(Space::Global, DATA.addr, Ty::U32, 1, Access::Plain);
    let bar0 = b.barrier(kind);
    let writer = b.seq([w, bar0]);
    let bar1 = b.barrier(kind);
    let ld = b.load(r, Space::Global, DATA.addr, Ty::U32, Access::Plain);
    let reader = b.seq([bar1, ld]);
    let name = match kind {
        BarrierKind::Shared => "mp.bar_shared",
        BarrierKind::LegacyGlobal => "mp.bar_legacy",
    };
    b.finish(name, vec![writer, reader], vec![zero(DATA)], &NAMES)
}

/// Store buffering, relaxed: T0 `x := 1; r0 := y`, T1 `y := 1; r1 := x`.
pub fn store_buffering() -> Program {
    let mut b = Builder::new();
    let r0 = b.reg("r0");
    let r1 = b.reg("r1");
    let a = b.store(Space::Global, X.addr, Ty::U32, 1, Access::RELAXED);
    let c = b.load(r0, Space::Global, Y.addr, Ty::U32, Access::RELAXED);
    let t0 = b.seq([a, c]);
    let d = b.store(Space::Global, Y.addr, Ty::U32, 1, Access::RELAXED);
    let e = b.load(r1, Space::Global, X.addr, Ty::U32, Access::RELAXED);
    let t1 = b.seq([d, e]);
    b.finish("sb", vec![t0, t1], vec![zero(X), zero(Y)], &NAMES)
}

/// Coherence of read-read, relaxed: T0 `x := 1; x := 2`, T1 `r0 := x; r1 := x`.
pub fn corr() -> Program {
    let mut b = Builder::new();
    let r0 = b.reg("r0");
    let r1 = b.reg("r1");
    let a = b.store(Space::Global, X.addr, Ty::U32, 1, Access::RELAXED);
    let c = b.store(Space::Global, X.addr, Ty::U32, 2, Access::RELAXED);
    let t0 = b.seq([a, c]);
    let d = b.load(r0, Space::Global, X.addr, Ty::U32, Access::RELAXED);
    let e = b.load(r1, Space::Global, X.addr, Ty::U32, Access::RELAXED);
    let t1 = b.seq([d, e]);
    b.finish("corr", vec![t0, t1], vec![zero(X)], &NAMES)
}

/// A load whose type differs from the only store: it has nothing to read.
pub fn type_mismatch() -> Program {
    let mut b = Builder::new();
    let r = b.reg("r");
    let st = b.store(Space::Global, X.addr, Ty::U32, 7, Access::Plain);
    let ld = b.load(r, Space::Global, X.addr, Ty::F32, Access::Plain);
    let body = b.seq([st, ld]);
    b.finish("type_mismatch", vec![body], vec![], &NAMES)
}

/// A barrier under divergent control: `if tid == 0 { bar.sync }; sh[tid] := 1`
/// with two threads. Thread 0 waits forever: no run completes.
pub fn divergent_barrier() -> Program {
    let mut b = Builder::new();
    let bar = b.barrier(BarrierKind::Shared);
    let guarded = b.if_then(Expr::Tid.equals(0), bar);
    let st = b.store(Space::Shared, Expr::Tid, Ty::U32, 1, Access::Plain);
    let body = b.seq([guarded, st]);
    b.finish("divergent_barrier", vec![body; 2], vec![], &[])
}

/// The tree reduction for `n` threads (a power of two):
///
/// ```text
/// sh[tid] := tid + 1
/// bar.sync
/// for round in 0..log2(n) {
///     stride := (n / 2) >> round
///     if tid < stride {
///         a := sh[tid]; b := sh[tid + stride]; sh[tid] := a + b
///     }
///     bar.sync
/// }
/// ```
///
/// Shared memory is not initialized: every load reads a store of the trace.
///
/// # Panics
/// If `n` is not a power of two.
pub fn tree_reduction(n: u32) -> Program {
    assert!(
        n.is_power_of_two(),
        "the tree reduction needs a power of two, not {n}"
    );
    let mut b = Builder::new();
    let round = b.reg("round");
    let stride = b.reg("stride");
    let ra = b.reg("a");
    let rb = b.reg("b");
    let payload = b.store(
        Space::Shared,
        Expr::Tid,
        Ty::U32,
        Expr::Tid + 1,
        Access::Plain,
    );
    let bar0 = b.barrier(BarrierKind::Shared);
    let set_stride = b.assign(stride, Expr::Const(n / 2) >> round);
    let la = b.load(ra, Space::Shared, Expr::Tid, Ty::U32, Access::Plain);
    let lb = b.load(
        rb,
        Space::Shared,
        Expr::Tid + stride,
        Ty::U32,
        Access::Plain,
    );
    let st = b.store(
        Space::Shared,
        Expr::Tid,
        Ty::U32,
        Expr::Reg(ra) + rb,
        Access::Plain,
    );
    let work = b.seq([la, lb, st]);
    let guarded = b.if_then(Expr::Tid.less_than(stride), work);
    let bar = b.barrier(BarrierKind::Shared);
    let body = b.seq([set_stride, guarded, bar]);
    let rounds = b.for_loop(round, n.trailing_zeros(), body);
    let main = b.seq([payload, bar0, rounds]);
    b.finish(
        &format!("reduction.n{n}"),
        vec![main; n as usize],
        vec![],
        &[],
    )
}

/// Every program of the corpus, for the whole-semantics checks.
pub fn corpus() -> Vec<Program> {
    let mut programs = Vec::new();
    for sync in [MpSync::AcquireRelease, MpSync::Relaxed] {
        for reader in [MpReader::Conditional, MpReader::Unconditional] {
            programs.push(message_passing(sync, reader));
        }
    }
    programs.push(barrier_message_passing(BarrierKind::Shared));
    programs.push(barrier_message_passing(BarrierKind::LegacyGlobal));
    programs.push(store_buffering());
    programs.push(corr());
    programs.push(type_mismatch());
    programs.push(divergent_barrier());
    for n in [1, 2, 4, 8] {
        programs.push(tree_reduction(n));
    }
    programs
}
