//! Checks of conversions and inline asm: which casts NVVM accepts between
//! which types and address spaces, and which asm constraints match which
//! operand types.

use super::Rule;
use super::insts::Check;
use crate::entities::{Ty, Value};
use crate::instructions::{CastOp, InstData};
use crate::types::{AddressSpace, TyKind};

pub(super) fn check_cast(c: &mut Check<'_>, op: CastOp, value: Value, to: Ty) {
    let t = c.t;
    let from = c.ty(value);
    let (fk, tk) = (t.kind(from), t.kind(to));
    let bad = |c: &mut Check<'_>, why: &str| {
        let msg = format!(
            "{} from {} to {}: {why}",
            op.name(),
            c.show(from),
            c.show(to)
        );
        c.err(Rule::Type, msg);
    };
    let int_bits = |k: &TyKind| match k {
        TyKind::Int(b) => Some(*b),
        _ => None,
    };
    let is_float = |k: &TyKind| matches!(k, TyKind::F32 | TyKind::F64);
    let float_bits = |k: &TyKind| match k {
        TyKind::F32 => 32,
        _ => 64,
    };
    match op {
        CastOp::Trunc | CastOp::ZExt | CastOp::SExt => match (int_bits(fk), int_bits(tk)) {
            (Some(a), Some(b)) => {
                let ok = if op == CastOp::Trunc { b < a } else { b > a };
                if !ok {
                    bad(
                        c,
                        if op == CastOp::Trunc {
                            "the result must be narrower"
                        } else {
                            "the result must be wider"
                        },
                    );
                }
            }
            _ => bad(c, "both sides must be integers"),
        },
        CastOp::FpTrunc | CastOp::FpExt => {
            if !(is_float(fk) && is_float(tk)) {
                bad(c, "both sides must be floats");
            } else {
                let (a, b) = (float_bits(fk), float_bits(tk));
                let ok = if op == CastOp::FpTrunc { b < a } else { b > a };
                if !ok {
                    bad(
                        c,
                        if op == CastOp::FpTrunc {
                            "the result must be narrower"
                        } else {
                            "the result must be wider"
                        },
                    );
                }
            }
        }
        CastOp::FpToUi | CastOp::FpToSi => match int_bits(tk) {
            Some(bits) if is_float(fk) => {
                if bits == 128 {
                    c.err(
                        Rule::Unsupported,
                        format!(
                            "{} to i128: NVPTX has no 128-bit float conversion",
                            op.name()
                        ),
                    );
                }
            }
            _ => bad(c, "converts a float to an integer"),
        },
        CastOp::UiToFp | CastOp::SiToFp => match int_bits(fk) {
            Some(bits) if is_float(tk) => {
                if bits == 128 {
                    c.err(
                        Rule::Unsupported,
                        format!(
                            "{} from i128: NVPTX has no 128-bit float conversion",
                            op.name()
                        ),
                    );
                }
            }
            _ => bad(c, "converts an integer to a float"),
        },
        CastOp::PtrToInt => {
            if !(matches!(fk, TyKind::Ptr { .. }) && int_bits(tk).is_some()) {
                bad(c, "converts a pointer to an integer");
            }
        }
        CastOp::IntToPtr => {
            if !(int_bits(fk).is_some() && matches!(tk, TyKind::Ptr { .. })) {
                bad(c, "converts an integer to a pointer");
            }
        }
        CastOp::Bitcast => match (fk, tk) {
            (TyKind::Ptr { space: a, .. }, TyKind::Ptr { space: b, .. }) => {
                if a != b {
                    let msg = format!(
                        "bitcast from {} to {} changes the address space from {a} to {b}; use addrspacecast",
                        c.show(from),
                        c.show(to)
                    );
                    c.err(Rule::BitcastSpace, msg);
                }
            }
            (TyKind::Ptr { .. }, _) | (_, TyKind::Ptr { .. }) => bad(
                c,
                "a pointer converts to or from an integer with ptrtoint or inttoptr",
            ),
            _ => {
                let (a, b) = (t.scalar_bits(from), t.scalar_bits(to));
                if a.is_none() || b.is_none() {
                    bad(c, "aggregates cannot be bitcast");
                } else if a != b {
                    bad(c, "the sizes differ");
                }
            }
        },
        CastOp::AddrSpaceCast => match (fk, tk) {
            (
                TyKind::Ptr {
                    pointee: pa,
                    space: a,
                },
                TyKind::Ptr {
                    pointee: pb,
                    space: b,
                },
            ) => {
                if *a == *b {
                    let msg =
                        format!("addrspacecast within address space {a}; it must change the space");
                    c.err(Rule::AddrSpaceCast, msg);
                } else if *a != AddressSpace::Generic && *b != AddressSpace::Generic {
                    let msg = format!(
                        "addrspacecast from {} to {} is between two non-generic spaces ({a} and {b}); cast through generic",
                        c.show(from),
                        c.show(to)
                    );
                    c.err(Rule::AddrSpaceCast, msg);
                }
                if pa != pb {
                    bad(
                        c,
                        "addrspacecast keeps the pointee type; bitcast separately",
                    );
                }
            }
            _ => bad(c, "both sides must be pointers"),
        },
    }
}

/// Checks an LLVM inline-asm constraint string: outputs (`=...`) first, at most one
/// and only with a result; then one input per argument; then clobbers (`~{...}`).
///
/// Only the NVPTX register classes whose type is unambiguous are accepted: `h`
/// (i16), `r` (i32), `l` (i64 or a pointer), `f` (f32), `d` (f64), and `n` (an
/// integer constant). libNVVM accepts other pairings and mistranslates them, and
/// crashes on an `i128` output (measured), so the verifier refuses them.
pub(super) fn check_asm(c: &mut Check<'_>, constraints: &str, args: &[Value], ret: Option<Ty>) {
    let parts: Vec<&str> = if constraints.is_empty() {
        Vec::new()
    } else {
        constraints.split(',').collect()
    };
    let outputs: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| p.starts_with('='))
        .collect();
    let inputs: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.starts_with('=') && !p.starts_with('~'))
        .collect();
    if outputs.len() != usize::from(ret.is_some()) {
        let msg = format!(
            "the constraints declare {} output(s), but the asm has {}",
            outputs.len(),
            if ret.is_some() {
                "a result"
            } else {
                "no result"
            }
        );
        c.err(Rule::InlineAsm, msg);
    }
    if inputs.len() != args.len() {
        c.err(
            Rule::InlineAsm,
            format!(
                "the constraints declare {} input(s), but the asm has {} argument(s)",
                inputs.len(),
                args.len()
            ),
        );
    }
    let mut phase = 0; // 0 outputs, 1 inputs, 2 clobbers
    for p in &parts {
        let this = if p.starts_with('=') {
            0
        } else if p.starts_with('~') {
            2
        } else {
            1
        };
        if this < phase {
            c.err(
                Rule::InlineAsm,
                format!("constraint `{p}` is out of order: outputs, then inputs, then clobbers"),
            );
        }
        phase = phase.max(this);
        if this == 2 && !(p.starts_with("~{") && p.ends_with('}') && !p.contains('"')) {
            c.err(
                Rule::InlineAsm,
                format!("clobber `{p}` is malformed; write `~{{name}}`"),
            );
        }
    }
    if let (Some(out), Some(ty)) = (outputs.first(), ret) {
        check_operand(c, &out[1..], ty, None, "the result");
    }
    for (k, (code, &arg)) in inputs.iter().zip(args).enumerate() {
        let ty = c.ty(arg);
        check_operand(c, code, ty, Some(arg), &format!("input {k} ({arg})"));
    }
}

/// Checks one operand against its constraint code.
fn check_operand(c: &mut Check<'_>, code: &str, ty: Ty, arg: Option<Value>, what: &str) {
    let t = c.t;
    let ok = match code {
        "h" => t.int_bits(ty) == Some(16),
        "r" => t.int_bits(ty) == Some(32),
        "l" => t.int_bits(ty) == Some(64) || t.is_ptr(ty),
        "f" => matches!(t.kind(ty), TyKind::F32),
        "d" => matches!(t.kind(ty), TyKind::F64),
        "n" => {
            let is_const =
                arg.is_some_and(|a| matches!(c.body.def_data(a), Some(InstData::Iconst { .. })));
            is_const && matches!(t.int_bits(ty), Some(8 | 16 | 32 | 64))
        }
        _ => {
            c.err(
                Rule::InlineAsm,
                format!("constraint `{code}` is not supported; use h, r, l, f, d or n"),
            );
            return;
        }
    };
    if !ok {
        let want = match code {
            "h" => "i16",
            "r" => "i32",
            "l" => "i64 or a pointer",
            "f" => "f32",
            "d" => "f64",
            _ => "an integer constant of 8 to 64 bits",
        };
        let msg = format!(
            "{what} has type {} but constraint `{code}` needs {want}",
            c.show(ty)
        );
        c.err(Rule::InlineAsm, msg);
    }
}
