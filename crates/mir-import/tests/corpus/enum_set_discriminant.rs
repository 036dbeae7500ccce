//! Enum construction and matching: assigning variants to a `let mut` place and
//! through `&mut` (rustc 1.95 keeps these as `Rvalue::Aggregate`, not
//! SetDiscriminant; see coroutine_set_discriminant.rs), reading discriminants
//! (`Rvalue::Discriminant`), and `Result` returned from helpers.
//@ size kernel::State = 16
//@ size std::result::Result<u32, u8> = 8
//@ local kernel::advance _1: &mut kernel::State
//@ local kernel::parse _0: std::result::Result<u32, u8>
//@ local kernel::run _0: u32
//@ debug kernel::run steps => _1
use crate::gpu::*;

#[derive(Clone, Copy)]
pub enum State {
    Idle,
    Running { step: u32, budget: u16 },
    Done(u64),
}

#[inline(never)]
pub fn advance(s: &mut State) {
    *s = match *s {
        State::Idle => State::Running { step: 0, budget: 3 },
        State::Running { step, budget } if budget == 0 => State::Done(step as u64 * 100),
        State::Running { step, budget } => State::Running { step: step + 1, budget: budget - 1 },
        State::Done(v) => State::Done(v + 1),
    };
}

#[inline(never)]
pub fn parse(x: u32) -> Result<u32, u8> {
    if x % 3 == 0 { Err((x % 256) as u8) } else { Ok(x * 2) }
}

#[inline(never)]
pub fn run(steps: u32) -> u32 {
    let mut s = State::Idle;
    let mut i = 0;
    while i < steps {
        advance(&mut s);
        i += 1;
    }
    if let State::Running { .. } = s {
        s = State::Idle;
    }
    match s {
        State::Idle => 1,
        State::Running { step, .. } => step,
        State::Done(v) => v as u32,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn enum_set_discriminant(out: DisjointSlice<u32>) {
    let t = thread_idx_x();
    if (t as usize) < out.len() {
        let r = match parse(t) {
            Ok(v) => v,
            Err(e) => e as u32 + 1000,
        };
        out.set(t as usize, run(t) + r);
    }
}
