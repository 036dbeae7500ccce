//! Loops: `while`, `for` over ranges (inclusive, stepped, reversed), `loop` with
//! `break` value, and nested loops with `continue`.
//@ local kernel::collatz_steps _1: u32
//@ local kernel::first_square_above _0: u32
//@ size std::ops::Range<u32> = 8
//@ size std::ops::RangeInclusive<u32> = 12
//@ field std::ops::RangeInclusive<u32> .end @ 4
//@ debug kernel::first_square_above limit => _1
use crate::gpu::*;

#[inline(never)]
pub fn collatz_steps(mut n: u32) -> u32 {
    let mut steps = 0;
    while n != 1 && steps < 1000 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

#[inline(never)]
pub fn ranges(n: u32) -> u32 {
    let mut s = 0u32;
    for i in 0..n {
        s = s.wrapping_add(i);
    }
    for i in (0..=n).rev() {
        s ^= i;
    }
    for i in (1..n).step_by(3) {
        if i % 2 == 0 {
            continue;
        }
        s = s.wrapping_add(i * i);
    }
    s
}

#[inline(never)]
pub fn first_square_above(limit: u32) -> u32 {
    let mut i = 0u32;
    loop {
        if i * i > limit {
            break i;
        }
        i += 1;
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn loops_while_for(out: DisjointSlice<u32>) {
    let i = global_idx_x();
    if (i as usize) < out.len() {
        out.set(i as usize, collatz_steps(i + 1) + ranges(i) + first_square_above(i * 10));
    }
}
