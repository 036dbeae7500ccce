//! Slices and bounds checks: indexing (`Assert` on `Lt`), `get` returning
//! `Option<&T>`, range slicing (`&s[a..b]`), `split_at`, `chunks`, and slice
//! kernel parameters.
//@ local kernel::at _1: &[u32]
//@ local kernel::at _2: usize
//@ local kernel::window_sum _3: usize
//@ local kernel::slices_bounds _1: &[u32]
//@ size std::option::Option<&u32> = 8
//@ size std::option::Option<&[u32]> = 16
//@ size std::slice::Chunks<'_, u32> = 24
use crate::gpu::*;

#[inline(never)]
pub fn at(s: &[u32], i: usize) -> u32 {
    s[i]
}

#[inline(never)]
pub fn maybe(s: &[u32], i: usize) -> u32 {
    match s.get(i) {
        Some(v) => *v,
        None => 0xdead,
    }
}

#[inline(never)]
pub fn window_sum(s: &[u32], a: usize, b: usize) -> u32 {
    let w = &s[a..b];
    let (l, r) = w.split_at(w.len() / 2);
    l.iter().sum::<u32>() * 2 + r.iter().sum::<u32>()
}

#[inline(never)]
pub fn chunk_max(s: &[u32]) -> u32 {
    let mut m = 0;
    for c in s.chunks(3) {
        m = m.max(c[0] + c.len() as u32);
    }
    m
}

#[unsafe(no_mangle)]
pub extern "C" fn slices_bounds(input: &[u32], out: DisjointSlice<u32>) {
    let t = thread_idx_x() as usize;
    if t < out.len() && !input.is_empty() {
        let n = input.len();
        let v = at(input, t % n) + maybe(input, t) + window_sum(input, 0, n.min(t + 1)) + chunk_max(input);
        out.set(t, v);
    }
}
