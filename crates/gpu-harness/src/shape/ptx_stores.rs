//! Which of a PTX function's stores write a constant, for
//! `no-constant-stack-copy`.
//!
//! A copy of a constant table to the stack stores, word by word, either
//! immediates (`mov.u32 %r1, 1116352408; st.u32 [%rd2], %r1`) or values
//! loaded from the table's global (`ld.u32 %r3, [%rd4+8]` where `%rd4` comes
//! from `mov.u64 %rd4, __const_…`). A function that keeps state of its own
//! on the stack (sha3's 200-byte Keccak state, zeroed, then XORed with the
//! input) stores computed values and zeros instead: those are not counted.
//!
//! The analysis is flow-insensitive: a register counts as holding a
//! constant if any of its definitions makes it one. That errs towards
//! counting a store, never towards missing a copy.

use std::collections::BTreeSet;

use ptx_reader::{AddressBase, Function, Instruction, Operand, StateSpace};

use super::checks::CONST_PREFIX;

/// The number of stores in `f` to `.local` or generic addresses (at
/// `-opt=0` a stack slot is written through its generic address) whose
/// value is a constant: a non-zero immediate, or a register that a `mov` of
/// one, or a load through a pointer into a constant table, defines.
pub fn constant_stores_to_stack(f: &Function) -> u64 {
    let insts: Vec<&Instruction> = f.instructions().collect();
    let table_pointers = fixed_point(&insts, |i, known| {
        matches!(i.opcode.as_str(), "mov" | "cvta" | "add" | "sub")
            && i.operands.iter().skip(1).any(|o| match o {
                Operand::Symbol { name, .. } => name.starts_with(CONST_PREFIX),
                Operand::Reg(r) => known.contains(r),
                _ => false,
            })
    });
    let from_table = |o: &Operand| match o {
        Operand::Address { base, .. } => match base {
            AddressBase::Reg(r) => table_pointers.contains(r),
            AddressBase::Symbol(s) => s.starts_with(CONST_PREFIX),
            AddressBase::Absolute(_) => false,
        },
        _ => false,
    };
    let constants = fixed_point(&insts, |i, known| match i.opcode.as_str() {
        "mov" | "cvt" => i.operands.get(1).is_some_and(|o| is_constant(o, known)),
        "ld" | "ldu" => i.operands.get(1).is_some_and(from_table),
        _ => false,
    });
    insts
        .iter()
        .filter(|i| {
            i.opcode == "st"
                && i.modifiers.iter().all(
                    |m| !matches!(m, ptx_reader::Modifier::Space(s) if *s != StateSpace::Local),
                )
        })
        .map(|i| match i.operands.get(1) {
            Some(Operand::Vector(parts)) => {
                parts.iter().filter(|p| is_constant(p, &constants)).count() as u64
            }
            Some(o) => u64::from(is_constant(o, &constants)),
            None => 0,
        })
        .sum()
}

/// Whether operand `o` is a non-zero immediate, a register in `known`, or
/// a vector of those (`mov.b64 %rd1, {%r1, %r2}`).
fn is_constant(o: &Operand, known: &BTreeSet<String>) -> bool {
    match o {
        Operand::Vector(parts) => !parts.is_empty() && parts.iter().all(|p| is_constant(p, known)),
        Operand::Int(v) => *v != 0,
        Operand::F32(bits) => *bits != 0,
        Operand::F64(bits) => *bits != 0,
        Operand::Reg(r) => known.contains(r),
        _ => false,
    }
}

/// The registers that some instruction for which `defines` holds writes
/// (its first operand), repeated until no more are found: `defines` sees
/// the registers found so far.
fn fixed_point(
    insts: &[&Instruction],
    defines: impl Fn(&Instruction, &BTreeSet<String>) -> bool,
) -> BTreeSet<String> {
    let mut known = BTreeSet::new();
    loop {
        let before = known.len();
        for i in insts {
            // A vector destination (`ld.v4.u32 {%r1, %r2, %r3, %r4}, [..]`,
            // `mov.b64 {%r1, %r2}, %rd1`) defines each of its registers.
            let dsts: Vec<&String> = match i.operands.first() {
                Some(Operand::Reg(r)) => vec![r],
                Some(Operand::Vector(parts)) => parts
                    .iter()
                    .filter_map(|p| match p {
                        Operand::Reg(r) => Some(r),
                        _ => None,
                    })
                    .collect(),
                _ => continue,
            };
            if dsts.iter().any(|d| !known.contains(*d)) && defines(i, &known) {
                known.extend(dsts.into_iter().cloned());
            }
        }
        if known.len() == before {
            return known;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(body: &str) -> u64 {
        let text = format!(
            ".version 7.8\n.target sm_90\n.address_size 64\n\
             .global .align 4 .b8 __const_ab[64];\n\
             .visible .func f(.param .b64 f_param_0)\n{{\n\
             .local .align 8 .b8 __local_depot0[64];\n\
             .reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.reg .b64 %SP;\n.reg .b64 %SPL;\n\
             {body}\nret;\n}}\n"
        );
        let m = ptx_reader::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        constant_stores_to_stack(m.definition("f").expect("f"))
    }

    #[test]
    fn only_stores_of_constants_to_the_stack_count() {
        let body = "mov.u64 %SPL, __local_depot0;\n\
                    cvta.local.u64 %SP, %SPL;\n\
                    ld.param.u64 %rd1, [f_param_0];\n\
                    mov.u64 %rd2, __const_ab;\n\
                    cvta.global.u64 %rd3, %rd2;\n\
                    add.s64 %rd4, %rd3, 8;\n\
                    ld.u32 %r1, [%rd4+4];\n\
                    st.u32 [%SP+0], %r1;\n\
                    mov.u32 %r2, 1116352408;\n\
                    st.u32 [%SP+4], %r2;\n\
                    st.local.u32 [%SPL+8], 7;\n\
                    mov.u32 %r3, 0;\n\
                    st.u32 [%SP+12], %r3;\n\
                    ld.u32 %r4, [%rd1];\n\
                    xor.b32 %r5, %r4, %r1;\n\
                    st.u32 [%SP+16], %r5;\n\
                    st.global.u32 [%rd1], %r2;\n\
                    ld.v2.u32 {%r6, %r7}, [%rd3+16];\n\
                    st.v2.u32 [%SP+20], {%r6, %r7};";
        // The table word, the immediate in a register, the immediate itself
        // and the two lanes of a vector copied from the table; not the zero,
        // the computed value or the global store.
        assert_eq!(count(body), 5);
        assert_eq!(
            count("mov.u64 %SPL, __local_depot0;\ncvta.local.u64 %SP, %SPL;"),
            0
        );
    }
}
