//! Atomics on device statics: `static FLAG: AtomicU32` and `static DATA`,
//! message passing (Relaxed data store, Release flag store, Acquire spin) and a
//! global counter with `fetch_add`.
//@ local kernel::FLAG _0: std::sync::atomic::AtomicU32
//@ local kernel::COUNT _0: std::sync::atomic::AtomicU32
//@ bytes kernel::FLAG 0 = 00 00 00 00
//@ bytes kernel::DATA 0 = 00 00 00 00
//@ bytes kernel::COUNT 0 = 00 00 00 00
//@ size std::sync::atomic::AtomicU32 = 4
//@ local kernel::send _1: u32
//@ local kernel::ticket _0: u32
use crate::gpu::*;

pub static FLAG: AtomicU32 = AtomicU32::new(0);
pub static DATA: AtomicU32 = AtomicU32::new(0);
pub static COUNT: AtomicU32 = AtomicU32::new(0);

#[inline(never)]
pub fn send(v: u32) {
    DATA.store(v, Ordering::Relaxed);
    FLAG.store(1, Ordering::Release);
}

#[inline(never)]
pub fn receive() -> u32 {
    while FLAG.load(Ordering::Acquire) == 0 {}
    DATA.load(Ordering::Relaxed)
}

#[inline(never)]
pub fn ticket() -> u32 {
    COUNT.fetch_add(1, Ordering::Relaxed)
}

#[unsafe(no_mangle)]
pub extern "C" fn atomic_static_flag(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    ticket();
    if t == 0 {
        send(77);
    } else if t == 32 {
        out.set(0, receive());
    }
}
