//! `match` on integers (ranges, or-patterns, guards), on tuples and on chars,
//! and long `if / else if` chains: SwitchInt terminators with many targets.
//@ local kernel::classify _1: u32
//@ local kernel::pair_match _1: bool
//@ local kernel::pair_match _2: u8
//@ local kernel::grade _0: char
//@ local kernel::grade _1: i32
//@ debug kernel::classify x => _1
use crate::gpu::*;

#[inline(never)]
pub fn classify(x: u32) -> u32 {
    match x {
        0 => 100,
        1 | 2 | 3 => 200,
        4..=9 => 300,
        n if n % 2 == 0 => 400 + n,
        _ => 500,
    }
}

#[inline(never)]
pub fn pair_match(a: bool, b: u8) -> u32 {
    match (a, b) {
        (true, 0) => 1,
        (true, _) => 2,
        (false, 0..=127) => 3,
        (false, _) => 4,
    }
}

#[inline(never)]
pub fn grade(score: i32) -> char {
    if score >= 90 {
        'A'
    } else if score >= 80 {
        'B'
    } else if score >= 70 {
        'C'
    } else if score < 0 {
        '?'
    } else {
        'F'
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn match_if_chains(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let v = classify(t) + pair_match(t & 1 == 0, (t * 37) as u8) + grade(t as i32 * 7 - 5) as u32;
        out.set(t as usize, v);
    }
}
