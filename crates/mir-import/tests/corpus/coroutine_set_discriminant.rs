//! The one place rustc 1.95's optimized MIR still prints `SetDiscriminant`
//! (`discriminant(place) = N;`): the state machine of an `async fn`, polled once
//! with a no-op waker. (Plain enum assignments stay `Rvalue::Aggregate`.)
//@ local kernel::add_one _1: u32
//@ local kernel::add_one _0: {async fn body of kernel::add_one()}
//@ local kernel::add_one::{closure#0} _0: std::task::Poll<u32>
//@ local kernel::poll_once _0: u32
//@ size std::task::Poll<u32> = 8
use crate::gpu::*;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

pub async fn add_one(x: u32) -> u32 {
    x + 1
}

#[inline(never)]
pub fn poll_once(x: u32) -> u32 {
    let mut fut = pin!(add_one(x));
    let mut cx = Context::from_waker(Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => 0,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn coroutine_set_discriminant(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        out.set(t as usize, poll_once(t));
    }
}
