//! The device prelude: the small API that every fixture kernel uses.
//!
//! One source, two implementations. Built with `--cfg gpu_device` (as mir-import
//! does), the thread-index functions and barriers are bodiless `extern` items that
//! mir-import recognises by path and lowers to special registers and `bar.sync`.
//! Built without it (the host build of the oracle), they are backed by simulated
//! threads, a real barrier per block and per-block shared memory.
//! See `prelude/README.md` for the list of recognised paths.

#![allow(dead_code)]

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

pub use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

#[cfg(gpu_device)]
unsafe extern "C" {
    /// `threadIdx.x`.
    pub safe fn thread_idx_x() -> u32;
    /// `threadIdx.y`.
    pub safe fn thread_idx_y() -> u32;
    /// `blockIdx.x`.
    pub safe fn block_idx_x() -> u32;
    /// `blockIdx.y`.
    pub safe fn block_idx_y() -> u32;
    /// `blockDim.x`.
    pub safe fn block_dim_x() -> u32;
    /// `blockDim.y`.
    pub safe fn block_dim_y() -> u32;
    /// `gridDim.x`.
    pub safe fn grid_dim_x() -> u32;
    /// `gridDim.y`.
    pub safe fn grid_dim_y() -> u32;
    /// `threadIdx.z`.
    pub safe fn thread_idx_z() -> u32;
    /// `blockIdx.z`.
    pub safe fn block_idx_z() -> u32;
    /// `blockDim.z`.
    pub safe fn block_dim_z() -> u32;
    /// `gridDim.z`.
    pub safe fn grid_dim_z() -> u32;
    /// `__syncthreads()`: a CTA-wide barrier.
    pub safe fn sync_threads();
    /// The barrier behind [`Barrier::wait`]; `bar` is the barrier's shared word.
    pub safe fn barrier_wait(bar: *const u64);
}

#[cfg(not(gpu_device))]
pub use host::{
    barrier_wait, block_dim_x, block_dim_y, block_dim_z, block_idx_x, block_idx_y, block_idx_z,
    grid_dim_x, grid_dim_y, grid_dim_z, sync_threads, thread_idx_x, thread_idx_y, thread_idx_z,
};

/// The global index along x: `blockIdx.x * blockDim.x + threadIdx.x`.
#[inline(always)]
pub fn global_idx_x() -> u32 {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

/// An array in CTA-shared memory (`addrspace(3)` on the device). Declare it as a
/// `static`; its contents are uninitialized at block start, as in CUDA.
#[repr(transparent)]
pub struct SharedArray<T, const N: usize> {
    cell: UnsafeCell<MaybeUninit<[T; N]>>,
}

// SAFETY: kernels synchronise accesses with barriers; the host runs one block at a
// time, so the static is per-block memory there too.
unsafe impl<T: Send, const N: usize> Sync for SharedArray<T, N> {}

impl<T: Copy, const N: usize> SharedArray<T, N> {
    /// An uninitialized shared array.
    pub const fn new() -> Self {
        SharedArray { cell: UnsafeCell::new(MaybeUninit::uninit()) }
    }

    /// Its element count.
    pub const fn len(&self) -> usize {
        N
    }

    /// A raw pointer to its first element.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.cell.get() as *mut T
    }

    /// Reads element `i` (bounds-checked).
    ///
    /// # Safety
    /// The element must have been written, and no other thread may write it
    /// concurrently.
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> T {
        assert!(i < N);
        unsafe { *self.as_mut_ptr().add(i) }
    }

    /// Writes element `i` (bounds-checked).
    ///
    /// # Safety
    /// No other thread may access the element concurrently.
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, value: T) {
        assert!(i < N);
        unsafe { *self.as_mut_ptr().add(i) = value }
    }
}

/// A CTA-wide barrier object in shared memory. `wait` blocks until every thread
/// of the block has arrived.
#[repr(transparent)]
pub struct Barrier {
    word: UnsafeCell<u64>,
}

// SAFETY: the word is only touched by the barrier implementation.
unsafe impl Sync for Barrier {}

impl Barrier {
    /// A barrier for the whole block.
    pub const fn new() -> Self {
        Barrier { word: UnsafeCell::new(0) }
    }

    /// Waits for every thread of the block.
    #[inline(always)]
    pub fn wait(&self) {
        barrier_wait(self.word.get() as *const u64)
    }
}

/// An output view in which each thread writes its own elements.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: threads write disjoint elements; that is the view's contract.
unsafe impl<T: Send> Sync for DisjointSlice<'_, T> {}
unsafe impl<T: Send> Send for DisjointSlice<'_, T> {}

impl<'a, T: Copy> DisjointSlice<'a, T> {
    /// A view of a whole slice.
    pub fn new(slice: &'a mut [T]) -> Self {
        DisjointSlice { ptr: slice.as_mut_ptr(), len: slice.len(), _marker: PhantomData }
    }

    /// A view of nothing, usable in constants.
    pub const fn empty() -> Self {
        DisjointSlice { ptr: core::ptr::null_mut(), len: 0, _marker: PhantomData }
    }

    /// Its element count.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes element `i` (bounds-checked); each element has one writer.
    #[inline(always)]
    pub fn set(&self, i: usize, value: T) {
        assert!(i < self.len);
        unsafe { *self.ptr.add(i) = value }
    }

    /// Reads element `i` (bounds-checked).
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        assert!(i < self.len);
        unsafe { *self.ptr.add(i) }
    }
}

/// The host implementation: simulated GPU threads on OS threads.
#[cfg(not(gpu_device))]
pub mod host {
    use std::cell::Cell;
    use std::sync::Barrier as StdBarrier;

    #[derive(Clone, Copy, Default)]
    struct Ids {
        thread: (u32, u32, u32),
        block: (u32, u32, u32),
        block_dim: (u32, u32, u32),
        grid_dim: (u32, u32, u32),
    }

    /// A launch dimension: `(x, y)` (z = 1) or `(x, y, z)`, so that launches
    /// written for two dimensions keep working.
    pub trait Dims: Copy {
        /// The extents `(x, y, z)`.
        fn xyz(self) -> (u32, u32, u32);
    }

    impl Dims for (u32, u32) {
        fn xyz(self) -> (u32, u32, u32) {
            (self.0, self.1, 1)
        }
    }

    impl Dims for (u32, u32, u32) {
        fn xyz(self) -> (u32, u32, u32) {
            self
        }
    }

    thread_local! {
        static IDS: Cell<Ids> = Cell::new(Ids::default());
        static BLOCK_BARRIER: Cell<*const StdBarrier> = const { Cell::new(std::ptr::null()) };
    }

    fn ids() -> Ids {
        IDS.with(Cell::get)
    }

    /// `threadIdx.x` of the simulated thread.
    pub fn thread_idx_x() -> u32 {
        ids().thread.0
    }
    /// `threadIdx.y` of the simulated thread.
    pub fn thread_idx_y() -> u32 {
        ids().thread.1
    }
    /// `blockIdx.x` of the simulated thread.
    pub fn block_idx_x() -> u32 {
        ids().block.0
    }
    /// `blockIdx.y` of the simulated thread.
    pub fn block_idx_y() -> u32 {
        ids().block.1
    }
    /// `blockDim.x` of the launch.
    pub fn block_dim_x() -> u32 {
        ids().block_dim.0
    }
    /// `blockDim.y` of the launch.
    pub fn block_dim_y() -> u32 {
        ids().block_dim.1
    }
    /// `gridDim.x` of the launch.
    pub fn grid_dim_x() -> u32 {
        ids().grid_dim.0
    }
    /// `gridDim.y` of the launch.
    pub fn grid_dim_y() -> u32 {
        ids().grid_dim.1
    }
    /// `threadIdx.z` of the simulated thread.
    pub fn thread_idx_z() -> u32 {
        ids().thread.2
    }
    /// `blockIdx.z` of the simulated thread.
    pub fn block_idx_z() -> u32 {
        ids().block.2
    }
    /// `blockDim.z` of the launch.
    pub fn block_dim_z() -> u32 {
        ids().block_dim.2
    }
    /// `gridDim.z` of the launch.
    pub fn grid_dim_z() -> u32 {
        ids().grid_dim.2
    }

    /// A real barrier across the simulated threads of the current block.
    pub fn sync_threads() {
        let barrier = BLOCK_BARRIER.with(Cell::get);
        assert!(!barrier.is_null(), "sync_threads() called outside a launch");
        // SAFETY: `launch` keeps the barrier alive until every thread has joined.
        unsafe { &*barrier }.wait();
    }

    /// The host side of `Barrier::wait`: the block barrier.
    pub fn barrier_wait(_bar: *const u64) {
        sync_threads()
    }

    /// Runs `kernel` on a `grid` of `block`-sized blocks, each `(x, y)` or
    /// `(x, y, z)`. Blocks run one after the other (x fastest, then y, then
    /// z, as the virtual device numbers them), so `SharedArray` statics are
    /// per-block memory; the threads of a block run concurrently, one OS
    /// thread each, with a real barrier.
    pub fn launch<F: Fn() + Sync>(grid: impl Dims, block: impl Dims, kernel: F) {
        let (grid, block) = (grid.xyz(), block.xyz());
        let threads = (block.0 * block.1 * block.2) as usize;
        for bz in 0..grid.2 {
            for by in 0..grid.1 {
                for bx in 0..grid.0 {
                    let barrier = StdBarrier::new(threads);
                    std::thread::scope(|scope| {
                        for tz in 0..block.2 {
                            for ty in 0..block.1 {
                                for tx in 0..block.0 {
                                    let barrier = &barrier;
                                    let kernel = &kernel;
                                    scope.spawn(move || {
                                        IDS.with(|ids| {
                                            ids.set(Ids {
                                                thread: (tx, ty, tz),
                                                block: (bx, by, bz),
                                                block_dim: block,
                                                grid_dim: grid,
                                            })
                                        });
                                        BLOCK_BARRIER.with(|b| b.set(barrier as *const StdBarrier));
                                        kernel();
                                        BLOCK_BARRIER.with(|b| b.set(std::ptr::null()));
                                    });
                                }
                            }
                        }
                    });
                }
            }
        }
    }
}
