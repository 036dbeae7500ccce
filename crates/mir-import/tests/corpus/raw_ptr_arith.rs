//! Raw pointer arithmetic: `add`, `offset` with negative offsets, `sub`,
//! `offset_from`, `read`/`write`, and walking a buffer with a pointer.
//@ local kernel::walk _1: *const u32
//@ local kernel::walk _2: usize
//@ local kernel::back_and_forth _1: *const u32
//@ local kernel::scribble _1: *mut u32
//@ local kernel::scribble _0: ()
//@ size std::ops::Range<usize> = 16
use crate::gpu::*;

#[inline(never)]
pub fn walk(p: *const u32, n: usize) -> u32 {
    let mut s = 0u32;
    let mut q = p;
    let end = unsafe { p.add(n) };
    while q != end {
        unsafe {
            s = s.wrapping_add(*q);
            q = q.add(1);
        }
    }
    s
}

#[inline(never)]
pub fn back_and_forth(p: *const u32) -> u32 {
    unsafe {
        let mid = p.offset(3);
        let before = mid.offset(-2);
        let dist = mid.offset_from(before) as u32;
        *before + *mid.sub(1) + dist + p.wrapping_add(1).read()
    }
}

#[inline(never)]
pub fn scribble(p: *mut u32, n: usize) {
    for i in 0..n {
        unsafe { p.add(i).write(i as u32 * 3) };
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn raw_ptr_arith(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let mut buf = [0u32; 6];
        scribble(buf.as_mut_ptr(), 6);
        buf[0] = t;
        out.set(t as usize, walk(buf.as_ptr(), 6) + back_and_forth(buf.as_ptr()));
    }
}
