//! One instruction: its opcode and modifiers read into an [`Inst`], and the
//! operand counts and types the executor relies on checked, so that nothing
//! it cannot run reaches a launch.

use std::sync::Arc;

use ptx_reader::{Flag, Instruction, Modifier, Rounding, StateSpace, Type};

use super::{DecodeError, Flags, FuncScope, Inst, Op, err, space_of};
use crate::device::ptx::float::Round;
use crate::device::ptx::memory::Space;

fn op_of(i: &Instruction) -> Option<Op> {
    let sel = |w: &str| i.modifiers.contains(&Modifier::Op(leak(w)));
    Some(match i.opcode.as_str() {
        "mov" => Op::Mov,
        "add" | "addc" => Op::Add,
        "sub" | "subc" => Op::Sub,
        "mul" => Op::Mul,
        "mad" | "madc" => Op::Mad,
        "fma" => Op::Fma,
        "div" => Op::Div,
        "rem" => Op::Rem,
        "neg" => Op::Neg,
        "abs" => Op::Abs,
        "min" => Op::Min,
        "max" => Op::Max,
        "and" => Op::And,
        "or" => Op::Or,
        "xor" => Op::Xor,
        "not" => Op::Not,
        "cnot" => Op::Cnot,
        "shl" => Op::Shl,
        "shr" => Op::Shr,
        "shf" => Op::Shf,
        "popc" => Op::Popc,
        "clz" => Op::Clz,
        "brev" => Op::Brev,
        "bfi" => Op::Bfi,
        "bfe" => Op::Bfe,
        "prmt" => Op::Prmt,
        "copysign" => Op::Copysign,
        "sqrt" => Op::Sqrt,
        "rcp" => Op::Rcp,
        "rsqrt" => Op::Rsqrt,
        "ex2" => Op::Ex2,
        "lg2" => Op::Lg2,
        "sin" => Op::Sin,
        "cos" => Op::Cos,
        "setp" => Op::Setp,
        "selp" => Op::Selp,
        "cvt" => Op::Cvt,
        "cvta" => Op::Cvta,
        "ld" | "ldu" => Op::Ld,
        "st" => Op::St,
        "atom" => Op::Atom,
        "red" => Op::Red,
        "bra" => Op::Bra,
        "call" => Op::Call,
        "ret" => Op::Ret,
        "exit" => Op::Exit,
        "trap" => Op::Trap,
        "bar" | "barrier" if sel("sync") && !sel("warp") => Op::BarSync,
        "bar" if sel("warp") && sel("sync") => Op::WarpSync,
        "membar" | "fence" => Op::Fence,
        "shfl" if sel("sync") => Op::Shfl,
        "vote" if sel("sync") => Op::Vote,
        "redux" if sel("sync") => Op::Redux,
        "match" if sel("sync") => Op::Match,
        "activemask" => Op::ActiveMask,
        _ => return None,
    })
}

/// The `&'static str` of an operation selector word (the reader's own list).
fn leak(w: &str) -> &'static str {
    match Modifier::classify("atom", w) {
        Some(Modifier::Op(s)) => s,
        _ => "",
    }
}

pub(super) fn decode_inst(i: &Instruction, scope: &FuncScope<'_>) -> Result<Inst, DecodeError> {
    let Some(op) = op_of(i) else {
        return err(format!(
            "the PTX device does not implement `{}`",
            i.full_opcode()
        ));
    };
    let mut types = i.modifiers.iter().filter_map(|m| match m {
        Modifier::Type(t) => Some(*t),
        _ => None,
    });
    let ty = types.next();
    let ty2 = types.next();
    let mut inst = Inst {
        op,
        ty: ty.unwrap_or(Type::B32),
        ty2,
        space: None,
        round: None,
        round_int: false,
        cmp: None,
        sel: None,
        sem: None,
        vector: 1,
        flags: Flags {
            carry_in: matches!(i.opcode.as_str(), "addc" | "subc" | "madc"),
            ..Flags::default()
        },
        guard: match &i.guard {
            Some(g) => Some((scope.reg(&g.reg)?, g.negated)),
            None => None,
        },
        ops: i
            .operands
            .iter()
            .map(|o| scope.operand(o))
            .collect::<Result<_, _>>()?,
        src: Arc::new(i.clone()),
    };
    for m in &i.modifiers {
        match m {
            Modifier::Type(_) | Modifier::Scope(_) => {}
            Modifier::Space(s) => match s {
                // A named `.param` is a frame's slot whatever the space; one
                // reached through a register is a kernel parameter's copy.
                StateSpace::Param => inst.space = Some(Space::Param),
                s => inst.space = space_of(*s),
            },
            Modifier::Sem(s) => inst.sem = Some(*s),
            Modifier::Rounding(r) => {
                let (round, int) = match r {
                    Rounding::Rn => (Round::Nearest, false),
                    Rounding::Rz => (Round::Zero, false),
                    Rounding::Rm => (Round::Down, false),
                    Rounding::Rp => (Round::Up, false),
                    Rounding::Rni => (Round::Nearest, true),
                    Rounding::Rzi => (Round::Zero, true),
                    Rounding::Rmi => (Round::Down, true),
                    Rounding::Rpi => (Round::Up, true),
                    Rounding::Rna => return err("rounding .rna"),
                };
                inst.round = Some(round);
                inst.round_int = int;
            }
            Modifier::Cmp(c) => inst.cmp = Some(*c),
            Modifier::Vector(n) => inst.vector = *n,
            Modifier::Flag(f) => match f {
                Flag::Ftz => inst.flags.ftz = true,
                Flag::Sat => inst.flags.sat = true,
                Flag::Approx => inst.flags.approx = true,
                Flag::Full => inst.flags.approx = true,
                Flag::Hi => inst.flags.hi = true,
                Flag::Wide => inst.flags.wide = true,
                Flag::Cc => inst.flags.cc = true,
                Flag::To => inst.flags.to = true,
                Flag::Lo | Flag::Uni | Flag::Aligned => {}
            },
            Modifier::Op(o) => match (op, *o) {
                (Op::Shf, "l") => inst.flags.left = true,
                (Op::Shf, "r") | (Op::Shf, "wrap") => {}
                (Op::Shf, "clamp") => inst.flags.clamp = true,
                (Op::Ld | Op::St, "nc" | "ca" | "cg" | "cs" | "lu" | "cv" | "wb" | "wt") => {}
                (
                    Op::BarSync | Op::WarpSync | Op::Shfl | Op::Vote | Op::Redux | Op::Match,
                    "sync" | "warp",
                ) => {}
                (Op::Atom | Op::Red | Op::Shfl | Op::Vote | Op::Redux | Op::Match, s) => {
                    inst.sel = Some(s)
                }
                (_, s) => return err(format!("the modifier .{s} of {}", i.opcode)),
            },
        }
    }
    check_shape(&inst, i)?;
    Ok(inst)
}

/// The operand counts and types the executor relies on.
fn check_shape(inst: &Inst, i: &Instruction) -> Result<(), DecodeError> {
    let n = inst.ops.len();
    let want = match inst.op {
        Op::Ret | Op::Exit | Op::Trap | Op::Fence => 0..=0,
        Op::Bra => 1..=1,
        Op::BarSync => 1..=2,
        Op::WarpSync | Op::ActiveMask => 1..=1,
        Op::Mov | Op::Neg | Op::Abs | Op::Not | Op::Cnot | Op::Popc | Op::Clz | Op::Brev => 2..=2,
        Op::Sqrt
        | Op::Rcp
        | Op::Rsqrt
        | Op::Ex2
        | Op::Lg2
        | Op::Sin
        | Op::Cos
        | Op::Cvt
        | Op::Cvta => 2..=2,
        Op::Ld | Op::St | Op::Red => 2..=3,
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Min | Op::Max | Op::And | Op::Or => {
            3..=3
        }
        Op::Xor | Op::Shl | Op::Shr | Op::Copysign | Op::Setp => 3..=3,
        Op::Atom => 3..=4,
        Op::Mad | Op::Fma | Op::Selp | Op::Shf | Op::Prmt | Op::Bfe => 4..=4,
        Op::Vote | Op::Redux | Op::Match => 3..=3,
        Op::Bfi | Op::Shfl => 5..=5,
        Op::Call => 1..=4,
    };
    if !want.contains(&n) {
        return err(format!("{n} operands"));
    }
    let is_float = matches!(inst.ty, Type::F32 | Type::F64);
    match inst.op {
        Op::Setp if inst.cmp.is_none() => err("setp without a comparison"),
        Op::Atom | Op::Red if inst.sel.is_none() => err("an atomic without an operation"),
        Op::Shfl | Op::Vote | Op::Redux | Op::Match if inst.sel.is_none() => {
            err("a warp collective without a mode")
        }
        Op::Redux | Op::Match if is_float => err("a float warp reduction or match"),
        Op::Rem | Op::Popc | Op::Clz | Op::Brev | Op::Bfi | Op::Bfe | Op::Prmt if is_float => {
            err("a float type")
        }
        Op::Sin | Op::Cos | Op::Ex2 | Op::Lg2 | Op::Rsqrt if !inst.flags.approx => {
            err("a non-approximate transcendental")
        }
        Op::Ld | Op::St if inst.vector > 4 => err("a vector wider than 4"),
        _ if matches!(
            inst.ty,
            Type::F16 | Type::F16x2 | Type::Bf16 | Type::Bf16x2 | Type::B128
        ) =>
        {
            err(format!("type .{}", inst.ty))
        }
        _ if i.opcode == "mul24" || i.opcode == "mad24" => err("24-bit multiplication"),
        _ => Ok(()),
    }
}
