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
    /// `%laneid`: the thread's lane in its warp of 32.
    pub safe fn lane_id() -> u32;
    /// `__shfl_sync(mask, value, src)`: `value` of lane `src % 32`.
    pub safe fn shfl_sync(mask: u32, value: u32, src_lane: u32) -> u32;
    /// `__shfl_up_sync`: lane `lane - delta % 32`, or its own below 0.
    pub safe fn shfl_up_sync(mask: u32, value: u32, delta: u32) -> u32;
    /// `__shfl_down_sync`: lane `lane + delta % 32`, or its own past 31.
    pub safe fn shfl_down_sync(mask: u32, value: u32, delta: u32) -> u32;
    /// `__shfl_xor_sync`: `value` of lane `lane ^ lane_mask % 32`.
    pub safe fn shfl_xor_sync(mask: u32, value: u32, lane_mask: u32) -> u32;
    /// `__ballot_sync`: the lanes of `mask` whose `pred` holds.
    pub safe fn ballot_sync(mask: u32, pred: bool) -> u32;
    /// `__all_sync`: whether `pred` holds on every lane of `mask`.
    pub safe fn all_sync(mask: u32, pred: bool) -> bool;
    /// `__any_sync`: whether `pred` holds on some lane of `mask`.
    pub safe fn any_sync(mask: u32, pred: bool) -> bool;
    /// `__activemask()`: the lanes of the warp executing together.
    pub safe fn active_mask() -> u32;
    /// `__syncwarp(mask)`: the lanes of `mask` wait for each other.
    pub safe fn sync_warp(mask: u32);
    /// `%lanemask_lt`: the lanes of the warp below this one.
    pub safe fn lanemask_lt() -> u32;
    /// `%lanemask_le`: the lanes at or below this one.
    pub safe fn lanemask_le() -> u32;
    /// `%lanemask_eq`: this lane's bit.
    pub safe fn lanemask_eq() -> u32;
    /// `%lanemask_ge`: the lanes at or above this one.
    pub safe fn lanemask_ge() -> u32;
    /// `%lanemask_gt`: the lanes above this one.
    pub safe fn lanemask_gt() -> u32;
    /// `__reduce_add_sync`: the wrapping sum of `value` over the lanes of `mask`.
    pub safe fn reduce_add_sync(mask: u32, value: u32) -> u32;
    /// `__reduce_min_sync` on `unsigned`: the least `value` of the lanes of `mask`.
    pub safe fn reduce_min_sync(mask: u32, value: u32) -> u32;
    /// `__reduce_max_sync` on `unsigned`: the greatest `value`.
    pub safe fn reduce_max_sync(mask: u32, value: u32) -> u32;
    /// `__reduce_min_sync` on `int`: the least `value`, signed.
    pub safe fn reduce_min_sync_i32(mask: u32, value: i32) -> i32;
    /// `__reduce_max_sync` on `int`: the greatest `value`, signed.
    pub safe fn reduce_max_sync_i32(mask: u32, value: i32) -> i32;
    /// `__reduce_and_sync`: the bitwise and of `value` over the lanes of `mask`.
    pub safe fn reduce_and_sync(mask: u32, value: u32) -> u32;
    /// `__reduce_or_sync`: the bitwise or.
    pub safe fn reduce_or_sync(mask: u32, value: u32) -> u32;
    /// `__reduce_xor_sync`: the bitwise exclusive or.
    pub safe fn reduce_xor_sync(mask: u32, value: u32) -> u32;
    /// `__match_any_sync` on a 32-bit value: the lanes of `mask` whose `value`
    /// equals this lane's.
    pub safe fn match_any_sync(mask: u32, value: u32) -> u32;
    /// `__match_any_sync` on a 64-bit value.
    pub safe fn match_any_sync_u64(mask: u32, value: u64) -> u32;
    /// `__match_all_sync` on a 32-bit value: `mask` when every lane of it has
    /// the same `value`, else 0 (CUDA's predicate is `result != 0`).
    pub safe fn match_all_sync(mask: u32, value: u32) -> u32;
    /// `__match_all_sync` on a 64-bit value.
    pub safe fn match_all_sync_u64(mask: u32, value: u64) -> u32;
    /// `atomicAdd` on an `f32` (relaxed, device scope); returns the old value.
    pub fn atomic_add_f32(ptr: *mut f32, value: f32) -> f32;
    /// `atomicAdd` on an `f64` (relaxed, device scope); returns the old value.
    pub fn atomic_add_f64(ptr: *mut f64, value: f64) -> f64;
    /// The start of the block's dynamic shared memory (`extern __shared__`),
    /// aligned to `align` (a constant power of two); see
    /// [`DynamicSharedArray`].
    pub safe fn dynamic_shared_memory(align: usize) -> *mut u8;
}

#[cfg(not(gpu_device))]
pub use host::{
    active_mask, all_sync, any_sync, atomic_add_f32, atomic_add_f64, ballot_sync, barrier_wait,
    block_dim_x, block_dim_y, block_dim_z, block_idx_x, block_idx_y, block_idx_z, grid_dim_x,
    grid_dim_y, grid_dim_z, lane_id, lanemask_eq, lanemask_ge, lanemask_gt, lanemask_le,
    lanemask_lt, match_all_sync, match_all_sync_u64, match_any_sync, match_any_sync_u64,
    reduce_add_sync, reduce_and_sync, reduce_max_sync, reduce_max_sync_i32, reduce_min_sync,
    reduce_min_sync_i32, reduce_or_sync, reduce_xor_sync, shfl_down_sync, shfl_sync, shfl_up_sync,
    shfl_xor_sync, sync_threads, sync_warp, thread_idx_x, thread_idx_y, thread_idx_z,
    dynamic_shared_memory,
};

/// Every lane of a full warp, for the `mask` of the `*_sync` functions.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// The warp size.
pub const WARP_SIZE: u32 = 32;

/// Values that warp shuffles move: 32-bit ones in one shuffle, 64-bit ones
/// in two (as CUDA's overloads do).
pub trait WarpValue: Copy {
    /// Shuffles `self` with `shuffle`, a 32-bit shuffle of one kind.
    fn shuffle_with<F: Fn(u32) -> u32>(self, shuffle: F) -> Self;
}

impl WarpValue for u32 {
    #[inline(always)]
    fn shuffle_with<F: Fn(u32) -> u32>(self, shuffle: F) -> Self {
        shuffle(self)
    }
}

impl WarpValue for i32 {
    #[inline(always)]
    fn shuffle_with<F: Fn(u32) -> u32>(self, shuffle: F) -> Self {
        shuffle(self as u32) as i32
    }
}

impl WarpValue for f32 {
    #[inline(always)]
    fn shuffle_with<F: Fn(u32) -> u32>(self, shuffle: F) -> Self {
        f32::from_bits(shuffle(self.to_bits()))
    }
}

impl WarpValue for u64 {
    #[inline(always)]
    fn shuffle_with<F: Fn(u32) -> u32>(self, shuffle: F) -> Self {
        let lo = shuffle(self as u32);
        let hi = shuffle((self >> 32) as u32);
        (u64::from(hi) << 32) | u64::from(lo)
    }
}

impl WarpValue for f64 {
    #[inline(always)]
    fn shuffle_with<F: Fn(u32) -> u32>(self, shuffle: F) -> Self {
        f64::from_bits(self.to_bits().shuffle_with(shuffle))
    }
}

/// `__shfl_sync` for any [`WarpValue`].
#[inline(always)]
pub fn shfl<T: WarpValue>(mask: u32, value: T, src_lane: u32) -> T {
    value.shuffle_with(|v| shfl_sync(mask, v, src_lane))
}

/// `__shfl_up_sync` for any [`WarpValue`].
#[inline(always)]
pub fn shfl_up<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    value.shuffle_with(|v| shfl_up_sync(mask, v, delta))
}

/// `__shfl_down_sync` for any [`WarpValue`].
#[inline(always)]
pub fn shfl_down<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    value.shuffle_with(|v| shfl_down_sync(mask, v, delta))
}

/// `__shfl_xor_sync` for any [`WarpValue`].
#[inline(always)]
pub fn shfl_xor<T: WarpValue>(mask: u32, value: T, lane_mask: u32) -> T {
    value.shuffle_with(|v| shfl_xor_sync(mask, v, lane_mask))
}

/// An `f32` that threads add to atomically: CUDA's `atomicAdd(float*, float)`.
/// In memory it is the float's bits, so an `f32` buffer can be viewed as
/// `&[AtomicF32]`.
#[repr(transparent)]
pub struct AtomicF32 {
    bits: AtomicU32,
}

impl AtomicF32 {
    /// A new atomic float.
    pub const fn new(value: f32) -> Self {
        AtomicF32 {
            bits: AtomicU32::new(value.to_bits()),
        }
    }

    /// Loads the value.
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> f32 {
        f32::from_bits(self.bits.load(order))
    }

    /// Stores a value.
    #[inline(always)]
    pub fn store(&self, value: f32, order: Ordering) {
        self.bits.store(value.to_bits(), order)
    }

    /// Adds `value` atomically (relaxed, as `atomicAdd`); returns the old value.
    #[inline(always)]
    pub fn fetch_add(&self, value: f32) -> f32 {
        // SAFETY: `self` is a valid, aligned f32 location shared by atomics only.
        unsafe { atomic_add_f32(self as *const Self as *mut f32, value) }
    }
}

/// An `f64` that threads add to atomically: CUDA's `atomicAdd(double*, double)`.
#[repr(transparent)]
pub struct AtomicF64 {
    bits: AtomicU64,
}

impl AtomicF64 {
    /// A new atomic float.
    pub const fn new(value: f64) -> Self {
        AtomicF64 {
            bits: AtomicU64::new(value.to_bits()),
        }
    }

    /// Loads the value.
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> f64 {
        f64::from_bits(self.bits.load(order))
    }

    /// Stores a value.
    #[inline(always)]
    pub fn store(&self, value: f64, order: Ordering) {
        self.bits.store(value.to_bits(), order)
    }

    /// Adds `value` atomically (relaxed, as `atomicAdd`); returns the old value.
    #[inline(always)]
    pub fn fetch_add(&self, value: f64) -> f64 {
        // SAFETY: `self` is a valid, aligned f64 location shared by atomics only.
        unsafe { atomic_add_f64(self as *const Self as *mut f64, value) }
    }
}

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
        SharedArray {
            cell: UnsafeCell::new(MaybeUninit::uninit()),
        }
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

/// The block's dynamic shared memory (CUDA's `extern __shared__`), as
/// `T`s: as many bytes as the launch gives (the manifest's `shared_bytes`),
/// after the block's static shared arrays, its start aligned to `ALIGN`
/// bytes (a power of two up to 1024; 16 by default, as nvcc aligns it). Every use in a
/// kernel names the same memory, aligned to the largest `ALIGN` among them.
/// Its contents are undefined until written, as on the GPU.
pub struct DynamicSharedArray<T, const ALIGN: usize = 16>(PhantomData<*mut T>);

impl<T, const ALIGN: usize> DynamicSharedArray<T, ALIGN> {
    /// A pointer to the start of the block's dynamic shared memory.
    #[inline(always)]
    pub fn get() -> *mut T {
        dynamic_shared_memory(ALIGN) as *mut T
    }

    /// A pointer `bytes` bytes into the block's dynamic shared memory (to
    /// partition it into several arrays).
    #[inline(always)]
    pub fn offset(bytes: usize) -> *mut T {
        dynamic_shared_memory(ALIGN).wrapping_add(bytes) as *mut T
    }
}

/// A type the host may fill with any bytes: every bit pattern of its size is
/// a valid value, and it holds no pointer (a host address means nothing on
/// the device).
///
/// # Safety
/// Implement it only for such types (integers, floats, arrays and
/// `repr(C)` structs of them without padding).
pub unsafe trait ConstantMemoryValue: Copy + Sync + 'static {}

macro_rules! constant_memory_values {
    ($($t:ty),*) => { $(unsafe impl ConstantMemoryValue for $t {})* };
}
constant_memory_values!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
unsafe impl<T: ConstantMemoryValue, const N: usize> ConstantMemoryValue for [T; N] {}

/// A value in constant memory (CUDA's `__constant__`, `addrspace(4)`) that
/// the host sets between launches (`cudaMemcpyToSymbol`; a manifest
/// launch's `constants`). Declare it as a `pub static`, by which path the
/// host names it; kernels only read it. It keeps what the host wrote last,
/// across launches; before any write it holds its initializer
/// (`ConstantMemory::UNINIT` is all zeros, as an uninitialized `__constant__`
/// is).
#[repr(transparent)]
pub struct ConstantMemory<T: ConstantMemoryValue>(UnsafeCell<T>);

// SAFETY: kernels only read it; the host writes it while no kernel runs.
unsafe impl<T: ConstantMemoryValue> Sync for ConstantMemory<T> {}

impl<T: ConstantMemoryValue> ConstantMemory<T> {
    /// All zeros until the host writes it (any bit pattern is a valid `T`).
    pub const UNINIT: Self = ConstantMemory(UnsafeCell::new(unsafe {
        MaybeUninit::<T>::zeroed().assume_init()
    }));

    /// `value` until the host writes it (`__constant__ T x = value;`).
    pub const fn new(value: T) -> Self {
        ConstantMemory(UnsafeCell::new(value))
    }

    /// Its value (for an array, a copy: index `get_ref()` to read one
    /// element in place).
    #[inline(always)]
    pub fn get(&self) -> T {
        // SAFETY: nothing writes it while a kernel runs.
        unsafe { *self.0.get() }
    }

    /// A reference to it in constant memory, for the launch only: the host
    /// may write it before the next.
    #[inline(always)]
    pub fn get_ref(&self) -> &T {
        // SAFETY: as for `get`.
        unsafe { &*self.0.get() }
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
        Barrier {
            word: UnsafeCell::new(0),
        }
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
        DisjointSlice {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _marker: PhantomData,
        }
    }

    /// A view of nothing, usable in constants.
    pub const fn empty() -> Self {
        DisjointSlice {
            ptr: core::ptr::null_mut(),
            len: 0,
            _marker: PhantomData,
        }
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

    /// A raw pointer to its first element, for code that writes through
    /// pointers (`ptr::copy_nonoverlapping`); keeping each element to one
    /// writer stays the caller's promise.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }
}

/// The host implementation: simulated GPU threads on OS threads.
#[cfg(not(gpu_device))]
pub mod host {
    use std::cell::Cell;

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
        /// The block's dynamic shared memory: its start and size.
        static DYNAMIC_SHARED: Cell<(*mut u8, usize)> = const { Cell::new((std::ptr::null_mut(), 0)) };
        static IDS: Cell<Ids> = Cell::new(Ids::default());
        static BLOCK: Cell<*const Block> = const { Cell::new(std::ptr::null()) };
        static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
    }

    /// The start of the message of a check of this simulation whose failure
    /// a GPU leaves undefined (a warp mask, a deadlocked collective): such
    /// a panic is no kernel panic, which a GPU would turn into a trap.
    pub const UNDEFINED_ON_GPU: &str = "undefined on a GPU: ";

    /// An aggregate kernel argument passed by value, read from the
    /// manifest's bytes by the launching thread, which checks their count
    /// before the launch (so a wrong count is no kernel panic).
    /// Never dropped: each simulated thread takes a bitwise copy, as each
    /// GPU thread reads the launch's `.param` copy.
    ///
    /// # Safety
    /// The bytes must be a valid `T`, as the device's launch assumes too.
    pub unsafe fn by_value<T>(bytes: &[u8]) -> core::mem::ManuallyDrop<T> {
        let size = core::mem::size_of::<T>();
        if bytes.len() != size {
            panic!(
                "`by_value` gives {} bytes for a parameter of type `{}`, which has {size}",
                bytes.len(),
                core::any::type_name::<T>()
            );
        }
        // SAFETY: `bytes` holds exactly a `T`, valid by the caller's word;
        // the read does not need alignment.
        core::mem::ManuallyDrop::new(unsafe {
            core::ptr::read_unaligned(bytes.as_ptr().cast::<T>())
        })
    }

    /// Writes the manifest's bytes into constant memory between launches
    /// (`cudaMemcpyToSymbol`), checking their count first, as the devices
    /// check it against the symbol's size.
    ///
    /// # Safety
    /// No kernel may be running, and no reference from `get_ref` may have
    /// outlived its launch (the bytes change under it).
    pub unsafe fn write_constant<T: super::ConstantMemoryValue>(
        constant: &super::ConstantMemory<T>,
        bytes: &[u8],
    ) {
        let size = core::mem::size_of::<T>();
        if bytes.len() != size {
            panic!(
                "the manifest gives {} bytes for a constant of type `{}`, which has {size}",
                bytes.len(),
                core::any::type_name::<T>()
            );
        }
        // SAFETY: any bytes are a valid `T` (`ConstantMemoryValue`), and
        // no kernel thread reads it now (the caller's word).
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), constant.0.get().cast::<u8>(), size)
        }
    }

    /// Whether this thread is a simulated GPU thread running the kernel
    /// (not the launching thread, not the prelude's setup around the call).
    pub fn in_kernel() -> bool {
        IN_KERNEL.with(Cell::get)
    }

    /// One block's meeting points: its barrier and its warps' `*_sync`
    /// collectives, each under its own lock, and a census of the threads
    /// that have not exited and of those waiting for something not yet
    /// complete. A thread registers as waiting under the lock of what it
    /// waits for, and whoever completes a wait releases its waiters at once
    /// under that lock, in the same update of the census as its own
    /// arrival (or exit): so when the census says that every live thread
    /// waits, none ever goes on (a deadlock), and it is seen when it
    /// arises, not at the host's deadline.
    pub struct Block {
        threads: u32,
        /// Live threads (high half) and waiting threads (low half), one
        /// word, so that each read is one consistent count.
        census: std::sync::atomic::AtomicU64,
        barrier: std::sync::Mutex<BarrierState>,
        barrier_turn: std::sync::Condvar,
        warps: Box<[Warp]>,
        /// What a GPU leaves undefined here (a deadlock, lanes at different
        /// collectives), with whether a waiting thread has taken it to
        /// report: one thread reports it, so the message is one.
        fault: std::sync::Mutex<Option<(String, bool)>>,
        faulted: std::sync::atomic::AtomicBool,
    }

    struct BarrierState {
        arrived: u32,
        generation: u64,
    }

    struct Warp {
        state: std::sync::Mutex<WarpState>,
        turn: std::sync::Condvar,
    }

    struct WarpState {
        /// The lanes this warp has (a block's last warp may be partial).
        present: u32,
        /// Lanes that have returned from the kernel.
        exited: u32,
        /// Lanes waiting in a collective being gathered, with their masks,
        /// values and collectives (`"shfl_sync"`, ...).
        arrived: u32,
        masks: [u32; 32],
        values: [u64; 32],
        kinds: [&'static str; 32],
        /// Per lane: a completed collective's values and lanes, not yet taken.
        done: [Option<Gathered>; 32],
    }

    /// What the lanes of one collective offered: every lane's value, and
    /// which lanes took part (the mask's lanes that had not exited).
    #[derive(Clone)]
    struct Gathered {
        values: Box<[u64; 32]>,
        lanes: u32,
    }

    fn relock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One live thread in the census's high half.
    const LIVE: u64 = 1 << 32;

    impl Block {
        fn new(threads: u32) -> Self {
            let warps = (0..threads.div_ceil(32))
                .map(|w| {
                    let lanes = (threads - w * 32).min(32);
                    Warp {
                        state: std::sync::Mutex::new(WarpState {
                            present: if lanes == 32 {
                                u32::MAX
                            } else {
                                (1u32 << lanes) - 1
                            },
                            exited: 0,
                            arrived: 0,
                            masks: [0; 32],
                            values: [0; 32],
                            kinds: [""; 32],
                            done: std::array::from_fn(|_| None),
                        }),
                        turn: std::sync::Condvar::new(),
                    }
                })
                .collect();
            Block {
                threads,
                census: std::sync::atomic::AtomicU64::new(u64::from(threads) * LIVE),
                barrier: std::sync::Mutex::new(BarrierState {
                    arrived: 0,
                    generation: 0,
                }),
                barrier_turn: std::sync::Condvar::new(),
                warps,
                fault: std::sync::Mutex::new(None),
                faulted: std::sync::atomic::AtomicBool::new(false),
            }
        }

        /// (Live threads, waiting threads.)
        fn census(&self) -> (u32, u32) {
            let c = self.census.load(std::sync::atomic::Ordering::SeqCst);
            ((c >> 32) as u32, c as u32)
        }

        /// One update of the census: `delta` added (wrapping), so that an
        /// arrival and the releases it causes count at once.
        fn count(&self, delta: u64) {
            self.census
                .fetch_add(delta, std::sync::atomic::Ordering::SeqCst);
        }

        /// Records what a GPU leaves undefined (the first such thing only)
        /// and wakes every waiter, one of which reports it. Called holding
        /// no other lock of the block.
        #[inline(never)]
        fn raise(&self, message: String) {
            relock(&self.fault).get_or_insert((message, false));
            self.faulted
                .store(true, std::sync::atomic::Ordering::SeqCst);
            // Under each lock, so that no waiter misses the wake-up between
            // its look at `faulted` and its wait.
            let _barrier = relock(&self.barrier);
            self.barrier_turn.notify_all();
            drop(_barrier);
            for w in &self.warps {
                let _state = relock(&w.state);
                w.turn.notify_all();
            }
        }

        /// Panics with the fault if one is raised and no thread reports it
        /// yet. A thread that finds it reported waits on: the report's
        /// panic stops the process.
        fn report_fault(&self) {
            if !self.faulted.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let mut fault = relock(&self.fault);
            if let Some((message, taken @ false)) = fault.as_mut() {
                *taken = true;
                let message = std::mem::take(message);
                drop(fault);
                panic!("{UNDEFINED_ON_GPU}{message}");
            }
        }

        /// When every thread that has not exited waits, none ever goes on.
        /// Called holding no lock of the block.
        #[inline(never)]
        fn check_deadlock(&self) {
            let (live, waiting) = self.census();
            if live == 0 || waiting != live {
                return;
            }
            // Every thread waits: nothing changes while this reads.
            let at_barrier = relock(&self.barrier).arrived;
            // In warp and lane order (no sort: its code would double the
            // time rustc takes over every host program).
            let mut kinds: Vec<&str> = Vec::new();
            for w in &self.warps {
                let s = relock(&w.state);
                for l in (0..32).filter(|l| s.arrived & (1 << l) != 0) {
                    if !kinds.contains(&s.kinds[l]) {
                        kinds.push(s.kinds[l]);
                    }
                }
            }
            // `activemask` does not wait on a GPU; here (and on the CPU
            // devices) it gathers its warp's live lanes, so a lane reading
            // it while the others wait elsewhere is a deadlock of the
            // simulation, which the message owns up to.
            let active_mask = if kinds.contains(&"active_mask") {
                "; `active_mask` waits for its warp's live lanes in this simulation, \
                 as the CPU devices gather it, not on a GPU"
            } else {
                ""
            };
            self.raise(format!(
                "deadlock: every thread of the block that has not exited waits, {at_barrier} at \
                 the block barrier and {} at warp collectives ({}), and none of these can \
                 complete{active_mask}",
                live - at_barrier,
                if kinds.is_empty() {
                    "none".to_owned()
                } else {
                    kinds.join(", ")
                }
            ));
        }

        /// `bar.sync 0`: waits for every thread of the block. A thread that
        /// has exited never arrives, so the barrier never completes: the
        /// devices report such a barrier as a deadlock, and so does this.
        #[inline(never)]
        fn barrier(&self) {
            let mut s = relock(&self.barrier);
            self.report_fault();
            if self.census().0 < self.threads {
                drop(s);
                self.raise(
                    "deadlock: a thread waits at the block barrier after another thread of \
                     the block has exited, so the barrier can never complete"
                        .to_owned(),
                );
                self.report_fault();
                s = relock(&self.barrier);
            }
            s.arrived += 1;
            if s.arrived == self.threads {
                s.arrived = 0;
                s.generation += 1;
                self.count(0u64.wrapping_sub(u64::from(self.threads - 1)));
                self.barrier_turn.notify_all();
                return;
            }
            self.count(1);
            let generation = s.generation;
            drop(s);
            self.check_deadlock();
            let mut s = relock(&self.barrier);
            while s.generation == generation {
                self.report_fault();
                s = self.barrier_turn.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        }

        /// Lane `lane` of warp `warp` offers `value` to the collective
        /// `what` over `mask`, waits for every lane of `mask` that has not
        /// exited (PTX: "all non-exited threads in membermask"), and gets
        /// what they offered.
        #[inline(never)]
        fn exchange(
            &self,
            warp: usize,
            lane: u32,
            mask: u32,
            value: u64,
            what: &'static str,
        ) -> Gathered {
            let w = &self.warps[warp];
            let mut s = relock(&w.state);
            self.report_fault();
            assert!(
                mask & (1 << lane) != 0,
                "{UNDEFINED_ON_GPU}lane {lane} is not in its own mask {mask:#x}"
            );
            assert!(
                mask & !s.present == 0,
                "{UNDEFINED_ON_GPU}mask {mask:#x} names lanes this warp does not have ({:#x})",
                s.present
            );
            s.masks[lane as usize] = mask;
            s.values[lane as usize] = value;
            s.kinds[lane as usize] = what;
            s.arrived |= 1 << lane;
            let (released, mismatch) = self.settle(w, &mut s);
            self.count(1u64.wrapping_sub(u64::from(released)));
            if let Some(v) = s.done[lane as usize].take() {
                return v;
            }
            drop(s);
            if let Some(message) = mismatch {
                self.raise(message);
            }
            self.check_deadlock();
            let mut s = relock(&w.state);
            loop {
                if let Some(v) = s.done[lane as usize].take() {
                    return v;
                }
                self.report_fault();
                s = w.turn.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        }

        /// Completes every collective of warp `w` (whose state `s` is)
        /// whose live lanes have all arrived, releasing its lanes: how many,
        /// for the caller's update of the census. Lanes of one mask at
        /// different collectives execute different instructions, which the
        /// GPU leaves undefined: that message.
        #[inline(never)]
        fn settle(&self, w: &Warp, s: &mut WarpState) -> (u32, Option<String>) {
            let mut released = 0;
            loop {
                let complete = (0..32)
                    .filter(|l| s.arrived & (1 << l) != 0)
                    .map(|l| (l, s.masks[l] & !s.exited))
                    .find(|&(_, lanes)| s.arrived & lanes == lanes);
                let Some((first, lanes)) = complete else {
                    return (released, None);
                };
                let what = s.kinds[first];
                if let Some(l) = (0..32).find(|&l| lanes & (1 << l) != 0 && s.kinds[l] != what) {
                    let message = format!(
                        "lane {first} executes {what} with mask {:#x} while lane {l} executes {}",
                        s.masks[first], s.kinds[l]
                    );
                    return (released, Some(message));
                }
                let done = Gathered {
                    values: Box::new(s.values),
                    lanes,
                };
                for l in 0..32 {
                    if lanes & (1 << l) != 0 {
                        s.done[l] = Some(done.clone());
                    }
                }
                s.arrived &= !lanes;
                released += lanes.count_ones();
                w.turn.notify_all();
            }
        }

        /// Lane `lane` of warp `warp` has returned from the kernel (or
        /// panicked out of it): the collectives waiting only for it complete
        /// without it, and a barrier waiting for it never completes.
        #[inline(never)]
        fn exit(&self, warp: usize, lane: u32) {
            let w = &self.warps[warp];
            let mut s = relock(&w.state);
            s.exited |= 1 << lane;
            // The waiters it releases and its leaving, in one count.
            let (released, mismatch) = self.settle(w, &mut s);
            self.count(0u64.wrapping_sub(LIVE + u64::from(released)));
            drop(s);
            if let Some(message) = mismatch {
                self.raise(message);
            }
            let at_barrier = relock(&self.barrier).arrived;
            if at_barrier > 0 {
                self.raise(format!(
                    "deadlock: {at_barrier} thread(s) wait at the block barrier, which can never \
                     complete, because a thread of the block has exited"
                ));
            }
            self.check_deadlock();
        }

        fn live(&self, warp: usize) -> u32 {
            let s = relock(&self.warps[warp].state);
            s.present & !s.exited
        }
    }

    /// Marks the thread exited when the kernel returns or panics, so that
    /// lanes waiting for it at a collective go on without it, as PTX's
    /// collectives wait only for the lanes of their mask that have not
    /// exited.
    struct ExitGuard<'a> {
        block: &'a Block,
        warp: usize,
        lane: u32,
    }

    impl Drop for ExitGuard<'_> {
        fn drop(&mut self) {
            self.block.exit(self.warp, self.lane);
        }
    }

    /// Stops the process when a simulated thread panics: other threads may
    /// wait for it forever. (A kernel's own panic ends the process in the
    /// host program's hook first; an `extern "C"` kernel aborts on the way
    /// out; this covers the rest.)
    struct AbortOnPanic;

    impl Drop for AbortOnPanic {
        fn drop(&mut self) {
            if std::thread::panicking() {
                std::process::abort();
            }
        }
    }

    fn block() -> &'static Block {
        let b = BLOCK.with(Cell::get);
        assert!(
            !b.is_null(),
            "a block or warp function called outside a launch"
        );
        // SAFETY: `launch` keeps the block alive until every thread has joined.
        unsafe { &*b }
    }

    /// The thread's warp in its block and lane in its warp.
    fn warp_lane() -> (usize, u32) {
        let i = ids();
        let linear = i.thread.0 + i.block_dim.0 * (i.thread.1 + i.block_dim.1 * i.thread.2);
        ((linear / 32) as usize, linear % 32)
    }

    /// Lane `lane` of this thread's warp offers `value` to `what`.
    fn exchange(mask: u32, value: u64, what: &'static str) -> Gathered {
        let (warp, lane) = warp_lane();
        block().exchange(warp, lane, mask, value, what)
    }

    /// The thread's lane in its warp of 32 (threads numbered x fastest).
    pub fn lane_id() -> u32 {
        warp_lane().1
    }

    fn shuffle(
        what: &'static str,
        mask: u32,
        value: u32,
        source: impl Fn(u32) -> Option<u32>,
    ) -> u32 {
        let lane = lane_id();
        let all = exchange(mask, u64::from(value), what);
        match source(lane) {
            None => value,
            Some(j) => {
                assert!(
                    mask & (1 << j) != 0,
                    "{UNDEFINED_ON_GPU}lane {lane} shuffles from lane {j}, which is not in the mask {mask:#x}"
                );
                assert!(
                    all.lanes & (1 << j) != 0,
                    "{UNDEFINED_ON_GPU}lane {lane} shuffles from lane {j}, which has exited"
                );
                all.values[j as usize] as u32
            }
        }
    }

    /// `__shfl_sync` over the simulated warp.
    pub fn shfl_sync(mask: u32, value: u32, src_lane: u32) -> u32 {
        shfl_sync_width(mask, value, src_lane, 32)
    }
    /// `__shfl_up_sync` over the simulated warp.
    pub fn shfl_up_sync(mask: u32, value: u32, delta: u32) -> u32 {
        shfl_up_sync_width(mask, value, delta, 32)
    }
    /// `__shfl_down_sync` over the simulated warp.
    pub fn shfl_down_sync(mask: u32, value: u32, delta: u32) -> u32 {
        shfl_down_sync_width(mask, value, delta, 32)
    }
    /// `__shfl_xor_sync` over the simulated warp.
    pub fn shfl_xor_sync(mask: u32, value: u32, lane_mask: u32) -> u32 {
        shfl_xor_sync_width(mask, value, lane_mask, 32)
    }
    /// The first lane of this lane's group of `width`, which must be a power
    /// of two up to 32 (CUDA leaves any other undefined). The shuffles keep
    /// their lane operands' low five bits, as the hardware does.
    fn group_of(what: &str, lane: u32, width: u32) -> u32 {
        assert!(
            width.is_power_of_two() && width <= 32,
            "{UNDEFINED_ON_GPU}{what} with width {width}, which is not a power of two up to 32"
        );
        lane & !(width - 1)
    }
    /// `__shfl_sync(mask, value, src_lane, width)`: lane `src_lane % width`
    /// of this lane's group.
    pub fn shfl_sync_width(mask: u32, value: u32, src_lane: u32, width: u32) -> u32 {
        shuffle("shfl_sync", mask, value, |l| {
            Some(group_of("shfl_sync", l, width) + (src_lane & 31) % width)
        })
    }
    /// `__shfl_up_sync(.., width)`: `delta` lanes lower in this lane's group,
    /// or its own value below the group's first lane.
    pub fn shfl_up_sync_width(mask: u32, value: u32, delta: u32, width: u32) -> u32 {
        shuffle("shfl_up_sync", mask, value, |l| {
            let first = group_of("shfl_up_sync", l, width);
            l.checked_sub(delta & 31).filter(|&j| j >= first)
        })
    }
    /// `__shfl_down_sync(.., width)`: `delta` lanes higher in this lane's
    /// group, or its own value past the group's last lane.
    pub fn shfl_down_sync_width(mask: u32, value: u32, delta: u32, width: u32) -> u32 {
        shuffle("shfl_down_sync", mask, value, |l| {
            let last = group_of("shfl_down_sync", l, width) + width - 1;
            Some(l + (delta & 31)).filter(|&j| j <= last)
        })
    }
    /// `__shfl_xor_sync(.., width)`: lane `lane ^ lane_mask`, or its own
    /// value when that lane is in a later group (an earlier one is read).
    pub fn shfl_xor_sync_width(mask: u32, value: u32, lane_mask: u32, width: u32) -> u32 {
        shuffle("shfl_xor_sync", mask, value, |l| {
            let last = group_of("shfl_xor_sync", l, width) + width - 1;
            Some(l ^ (lane_mask & 31)).filter(|&j| j <= last)
        })
    }
    /// The lanes of `mask` whose `pred` holds, from the vote `what`.
    /// (The lanes that took part, those of them whose `pred` holds.)
    fn vote(what: &'static str, mask: u32, pred: bool) -> (u32, u32) {
        let all = exchange(mask, u64::from(pred), what);
        let ballot = (0..32)
            .filter(|&l| all.lanes & (1 << l) != 0 && all.values[l] != 0)
            .fold(0, |b, l| b | (1 << l));
        (all.lanes, ballot)
    }
    /// `__ballot_sync` over the simulated warp (exited lanes give 0 bits).
    pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
        vote("ballot_sync", mask, pred).1
    }
    /// `__all_sync` over the simulated warp's live lanes of `mask`.
    pub fn all_sync(mask: u32, pred: bool) -> bool {
        let (lanes, ballot) = vote("all_sync", mask, pred);
        ballot == lanes
    }
    /// `__any_sync` over the simulated warp.
    pub fn any_sync(mask: u32, pred: bool) -> bool {
        vote("any_sync", mask, pred).1 != 0
    }
    /// `__activemask()`: the warp's live lanes, gathered as the virtual device
    /// does (a collective of every lane that has not exited).
    pub fn active_mask() -> u32 {
        let live = block().live(warp_lane().0);
        exchange(live, 0, "active_mask").lanes
    }
    /// `__syncwarp(mask)` over the simulated warp.
    pub fn sync_warp(mask: u32) {
        exchange(mask, 0, "sync_warp");
    }

    /// `%lanemask_lt`.
    pub fn lanemask_lt() -> u32 {
        lanemask_eq() - 1
    }
    /// `%lanemask_le`.
    pub fn lanemask_le() -> u32 {
        lanemask_eq() | lanemask_lt()
    }
    /// `%lanemask_eq`.
    pub fn lanemask_eq() -> u32 {
        1 << lane_id()
    }
    /// `%lanemask_ge`.
    pub fn lanemask_ge() -> u32 {
        !lanemask_lt()
    }
    /// `%lanemask_gt`.
    pub fn lanemask_gt() -> u32 {
        !lanemask_le()
    }

    /// The values the lanes of `mask` offer to one collective, lane order.
    fn gather(what: &'static str, mask: u32, value: u64) -> impl Iterator<Item = (u32, u64)> {
        let all = exchange(mask, value, what);
        (0..32)
            .filter(move |l| all.lanes & (1 << l) != 0)
            .map(move |l| (l, all.values[l as usize]))
    }
    /// `redux.sync`: `op` folded over the 32-bit values of the lanes of `mask`
    /// (which names this lane, so there is at least one).
    fn reduce(what: &'static str, mask: u32, value: u32, op: impl Fn(u32, u32) -> u32) -> u32 {
        gather(what, mask, u64::from(value))
            .map(|(_, v)| v as u32)
            .reduce(op)
            .unwrap_or(value)
    }
    /// `__reduce_add_sync` over the simulated warp.
    pub fn reduce_add_sync(mask: u32, value: u32) -> u32 {
        reduce("reduce_add_sync", mask, value, u32::wrapping_add)
    }
    /// `__reduce_min_sync` (unsigned) over the simulated warp.
    pub fn reduce_min_sync(mask: u32, value: u32) -> u32 {
        reduce("reduce_min_sync", mask, value, u32::min)
    }
    /// `__reduce_max_sync` (unsigned) over the simulated warp.
    pub fn reduce_max_sync(mask: u32, value: u32) -> u32 {
        reduce("reduce_max_sync", mask, value, u32::max)
    }
    /// `__reduce_min_sync` (signed) over the simulated warp.
    pub fn reduce_min_sync_i32(mask: u32, value: i32) -> i32 {
        reduce("reduce_min_sync_i32", mask, value as u32, |a, b| {
            (a as i32).min(b as i32) as u32
        }) as i32
    }
    /// `__reduce_max_sync` (signed) over the simulated warp.
    pub fn reduce_max_sync_i32(mask: u32, value: i32) -> i32 {
        reduce("reduce_max_sync_i32", mask, value as u32, |a, b| {
            (a as i32).max(b as i32) as u32
        }) as i32
    }
    /// `__reduce_and_sync` over the simulated warp.
    pub fn reduce_and_sync(mask: u32, value: u32) -> u32 {
        reduce("reduce_and_sync", mask, value, |a, b| a & b)
    }
    /// `__reduce_or_sync` over the simulated warp.
    pub fn reduce_or_sync(mask: u32, value: u32) -> u32 {
        reduce("reduce_or_sync", mask, value, |a, b| a | b)
    }
    /// `__reduce_xor_sync` over the simulated warp.
    pub fn reduce_xor_sync(mask: u32, value: u32) -> u32 {
        reduce("reduce_xor_sync", mask, value, |a, b| a ^ b)
    }

    /// (The lanes of `mask` that took part, those of them whose value
    /// equals this lane's.)
    fn matching(what: &'static str, mask: u32, value: u64) -> (u32, u32) {
        gather(what, mask, value).fold((0, 0), |(lanes, same), (l, v)| {
            (
                lanes | (1 << l),
                if v == value { same | (1 << l) } else { same },
            )
        })
    }
    /// `__match_any_sync` (32-bit) over the simulated warp.
    pub fn match_any_sync(mask: u32, value: u32) -> u32 {
        matching("match_any_sync", mask, u64::from(value)).1
    }
    /// `__match_any_sync` (64-bit) over the simulated warp.
    pub fn match_any_sync_u64(mask: u32, value: u64) -> u32 {
        matching("match_any_sync_u64", mask, value).1
    }
    /// `__match_all_sync` (32-bit) over the simulated warp.
    pub fn match_all_sync(mask: u32, value: u32) -> u32 {
        match_all("match_all_sync", mask, u64::from(value))
    }
    /// `__match_all_sync` (64-bit) over the simulated warp.
    pub fn match_all_sync_u64(mask: u32, value: u64) -> u32 {
        match_all("match_all_sync_u64", mask, value)
    }
    /// The live lanes of `mask` when they all hold this lane's value, else 0.
    fn match_all(what: &'static str, mask: u32, value: u64) -> u32 {
        let (lanes, same) = matching(what, mask, value);
        if same == lanes { lanes } else { 0 }
    }

    /// `atomicAdd` on an `f32`, as a compare-exchange loop on its bits.
    ///
    /// # Safety
    /// `ptr` must be valid and aligned, and accessed only atomically.
    pub unsafe fn atomic_add_f32(ptr: *mut f32, value: f32) -> f32 {
        use std::sync::atomic::{AtomicU32, Ordering};
        // SAFETY: the caller's contract; f32 and AtomicU32 share size and alignment.
        let a = unsafe { &*(ptr as *const AtomicU32) };
        let old = a
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some((f32::from_bits(b) + value).to_bits())
            })
            .unwrap_or_else(|b| b);
        f32::from_bits(old)
    }

    /// `atomicAdd` on an `f64`, as a compare-exchange loop on its bits.
    ///
    /// # Safety
    /// `ptr` must be valid and aligned, and accessed only atomically.
    pub unsafe fn atomic_add_f64(ptr: *mut f64, value: f64) -> f64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        // SAFETY: the caller's contract; f64 and AtomicU64 share size and alignment.
        let a = unsafe { &*(ptr as *const AtomicU64) };
        let old = a
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some((f64::from_bits(b) + value).to_bits())
            })
            .unwrap_or_else(|b| b);
        f64::from_bits(old)
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
        block().barrier();
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
        run_blocks(grid.xyz(), block.xyz(), 0, &kernel);
    }

    /// [`launch`] with `shared_bytes` of dynamic shared memory per block.
    pub fn launch_with_shared<F: Fn() + Sync>(
        grid: impl Dims,
        block: impl Dims,
        shared_bytes: usize,
        kernel: F,
    ) {
        run_blocks(grid.xyz(), block.xyz(), shared_bytes, &kernel);
    }

    /// The most alignment [`dynamic_shared_memory`] gives on the host.
    const DYNAMIC_SHARED_ALIGN: usize = 1024;

    /// One aligned piece of a block's dynamic shared memory.
    #[derive(Clone, Copy)]
    #[repr(C, align(1024))]
    struct SharedChunk([u8; DYNAMIC_SHARED_ALIGN]);

    /// `extern __shared__`: the block's dynamic shared memory, fresh for
    /// each block (zeroed here; undefined on the GPU).
    pub fn dynamic_shared_memory(align: usize) -> *mut u8 {
        assert!(
            align.is_power_of_two() && align <= DYNAMIC_SHARED_ALIGN,
            "dynamic shared memory aligned to {align}: the host simulation aligns it to powers of two up to {DYNAMIC_SHARED_ALIGN}"
        );
        DYNAMIC_SHARED.with(|d| d.get().0)
    }

    /// [`launch`]'s body, not generic: a host program with many launches
    /// compiles it once, not once per kernel closure.
    fn run_blocks(
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: usize,
        kernel: &(dyn Fn() + Sync),
    ) {
        let threads = (block.0 * block.1 * block.2) as usize;
        for bz in 0..grid.2 {
            for by in 0..grid.1 {
                for bx in 0..grid.0 {
                    // At least 48 KiB (the most a launch may ask for), so
                    // that a kernel reading past what its launch gave reads
                    // this block's zeros, not the host's heap; the devices
                    // report such a read as out of bounds.
                    let chunks = shared_bytes.max(48 << 10).div_ceil(DYNAMIC_SHARED_ALIGN);
                    let mut storage = vec![SharedChunk([0; DYNAMIC_SHARED_ALIGN]); chunks];
                    // Shared by the block's threads, which write it through
                    // raw pointers as the kernel does on the GPU.
                    let dynamic = (storage.as_mut_ptr() as usize, shared_bytes);
                    let meeting = Block::new(threads as u32);
                    let meeting = &meeting;
                    std::thread::scope(|scope| {
                        for tz in 0..block.2 {
                            for ty in 0..block.1 {
                                for tx in 0..block.0 {
                                    scope.spawn(move || {
                                        let _abort = AbortOnPanic;
                                        IDS.with(|ids| {
                                            ids.set(Ids {
                                                thread: (tx, ty, tz),
                                                block: (bx, by, bz),
                                                block_dim: block,
                                                grid_dim: grid,
                                            })
                                        });
                                        DYNAMIC_SHARED
                                            .with(|d| d.set((dynamic.0 as *mut u8, dynamic.1)));
                                        let linear = tx + block.0 * (ty + block.1 * tz);
                                        BLOCK.with(|b| b.set(meeting as *const Block));
                                        let exit = ExitGuard {
                                            block: meeting,
                                            warp: (linear / 32) as usize,
                                            lane: linear % 32,
                                        };
                                        IN_KERNEL.with(|k| k.set(true));
                                        kernel();
                                        IN_KERNEL.with(|k| k.set(false));
                                        drop(exit);
                                        BLOCK.with(|b| b.set(std::ptr::null()));
                                        DYNAMIC_SHARED.with(|d| d.set((std::ptr::null_mut(), 0)));
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

// Shuffles within groups of lanes (CUDA's `width` argument). Kept below
// everything else, so that adding them moved no line of the items above
// (rustc's spans into this file are part of the lowering's snapshots).

#[cfg(gpu_device)]
unsafe extern "C" {
    /// `__shfl_sync(mask, value, src, width)`: `value` of lane `src % width`
    /// of this lane's group of `width` (a power of two up to 32).
    pub safe fn shfl_sync_width(mask: u32, value: u32, src_lane: u32, width: u32) -> u32;
    /// `__shfl_up_sync(.., width)`: from `delta` lanes lower in the group, or
    /// its own value below the group's first lane.
    pub safe fn shfl_up_sync_width(mask: u32, value: u32, delta: u32, width: u32) -> u32;
    /// `__shfl_down_sync(.., width)`: from `delta` lanes higher in the
    /// group, or its own value past the group's last lane.
    pub safe fn shfl_down_sync_width(mask: u32, value: u32, delta: u32, width: u32) -> u32;
    /// `__shfl_xor_sync(.., width)`: from lane `lane ^ lane_mask`, or its
    /// own value when that lane is in a later group.
    pub safe fn shfl_xor_sync_width(mask: u32, value: u32, lane_mask: u32, width: u32) -> u32;
}

#[cfg(not(gpu_device))]
pub use host::{shfl_down_sync_width, shfl_sync_width, shfl_up_sync_width, shfl_xor_sync_width};

/// [`shfl`] within groups of `width` lanes, for any [`WarpValue`].
#[inline(always)]
pub fn shfl_width<T: WarpValue>(mask: u32, value: T, src_lane: u32, width: u32) -> T {
    value.shuffle_with(|v| shfl_sync_width(mask, v, src_lane, width))
}

/// [`shfl_up`] within groups of `width` lanes.
#[inline(always)]
pub fn shfl_up_width<T: WarpValue>(mask: u32, value: T, delta: u32, width: u32) -> T {
    value.shuffle_with(|v| shfl_up_sync_width(mask, v, delta, width))
}

/// [`shfl_down`] within groups of `width` lanes.
#[inline(always)]
pub fn shfl_down_width<T: WarpValue>(mask: u32, value: T, delta: u32, width: u32) -> T {
    value.shuffle_with(|v| shfl_down_sync_width(mask, v, delta, width))
}

/// [`shfl_xor`] within groups of `width` lanes.
#[inline(always)]
pub fn shfl_xor_width<T: WarpValue>(mask: u32, value: T, lane_mask: u32, width: u32) -> T {
    value.shuffle_with(|v| shfl_xor_sync_width(mask, v, lane_mask, width))
}
