//! Atomics on `&AtomicU32` kernel parameters: load/store with Acquire, Release
//! and Relaxed, `fetch_add`, `fetch_max`, `compare_exchange` (strong and weak
//! loop) and `swap`, each in an `#[inline(never)]` helper.
//@ local kernel::bump _1: &std::sync::atomic::AtomicU32
//@ local kernel::claim _0: bool
//@ local kernel::claim _2: u32
//@ local kernel::add_capped _2: u32
//@ local kernel::atomics_params _3: &std::sync::atomic::AtomicU32
//@ size std::result::Result<u32, u32> = 8
//@ debug kernel::publish flag => _1
use crate::gpu::*;

#[inline(never)]
pub fn bump(c: &AtomicU32) -> u32 {
    c.fetch_add(1, Ordering::Relaxed)
}

#[inline(never)]
pub fn publish(flag: &AtomicU32, v: u32) {
    flag.store(v, Ordering::Release);
}

#[inline(never)]
pub fn observe(flag: &AtomicU32) -> u32 {
    flag.load(Ordering::Acquire)
}

#[inline(never)]
pub fn claim(slot: &AtomicU32, me: u32) -> bool {
    slot.compare_exchange(0, me + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok()
}

#[inline(never)]
pub fn add_capped(c: &AtomicU32, cap: u32) -> u32 {
    let mut cur = c.load(Ordering::Relaxed);
    loop {
        let next = if cur + 2 > cap { cap } else { cur + 2 };
        match c.compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(actual) => cur = actual,
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn atomics_params(counter: &AtomicU32, slot: &AtomicU32, high: &AtomicU32) {
    let t = thread_idx_x();
    bump(counter);
    if claim(slot, t) {
        publish(high, t);
    }
    high.fetch_max(t, Ordering::Relaxed);
    add_capped(counter, 1 << 20);
    let _ = observe(high) + slot.swap(slot.load(Ordering::Relaxed), Ordering::Relaxed);
}
