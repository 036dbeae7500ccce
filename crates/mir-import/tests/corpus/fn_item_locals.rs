//! Function items bound to locals: rustc prints their debug lines with the
//! item's path and no `const` (`debug less => <u32 as
//! std::cmp::PartialOrd>::lt;`), and the locals are zero-sized.
//@ debug kernel::fn_items less => const <u32 as std::cmp::PartialOrd>::lt
//@ debug kernel::fn_items add => const core::num::<impl u32>::wrapping_add
use crate::gpu::*;

#[inline(never)]
pub fn fn_items(i: u32) -> u32 {
    let less = <u32 as PartialOrd>::lt;
    let add = u32::wrapping_add;
    u32::from(less(&i, &7)) + add(i, 0xffff_fff0)
}

#[unsafe(no_mangle)]
pub extern "C" fn kernel_fn_items(out: DisjointSlice<u32>) {
    let i = global_idx_x();
    if (i as usize) < out.len() {
        out.set(i as usize, fn_items(i));
    }
}
