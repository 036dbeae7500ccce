//! The last stages of the pipeline: the device's readback against the host
//! run's, value by value, and the manifest's hand-written values against the
//! host run (a check of the oracle itself).

use crate::fixture::{ElemTy, Fixture};
use crate::host::Readback;
use crate::report::ValueReport;
use crate::stage::StageError;

/// The element type of the manifest's buffer `buffer` (`u64` if unknown).
fn elem_ty(f: &Fixture, buffer: &str) -> ElemTy {
    f.manifest
        .buffer
        .iter()
        .find(|b| b.name == buffer)
        .map_or(ElemTy::U64, |b| b.ty)
}

/// Shows a bit pattern as a value of the buffer's type.
pub fn show(t: ElemTy, bits: u64) -> String {
    match t {
        ElemTy::F32 => format!("{}", f32::from_bits(bits as u32)),
        ElemTy::F64 => format!("{}", f64::from_bits(bits)),
        ElemTy::I8 => format!("{}", bits as u8 as i8),
        ElemTy::I16 => format!("{}", bits as u16 as i16),
        ElemTy::I32 => format!("{}", bits as u32 as i32),
        ElemTy::I64 | ElemTy::Isize => format!("{}", bits as i64),
        ElemTy::Bool => format!("{}", bits != 0),
        _ => format!("{bits}"),
    }
}

/// Compares every expected value with the device's, bit for bit, recording
/// each in `values`.
pub fn compare(
    f: &Fixture,
    exp: &Readback,
    got: &Readback,
    values: &mut Vec<ValueReport>,
) -> Result<((), String), StageError> {
    let mut bad = 0;
    for (name, e) in exp {
        let t = elem_ty(f, name);
        let g = got
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[]);
        for (i, ev) in e.iter().enumerate() {
            let gv = g.get(i).copied();
            let ok = gv == Some(*ev);
            bad += usize::from(!ok);
            values.push(ValueReport {
                buffer: name.clone(),
                index: i,
                expected: show(t, *ev),
                got: gv.map_or_else(|| "missing".into(), |v| show(t, v)),
                ok,
            });
        }
    }
    let total = values.len();
    if bad == 0 {
        Ok(((), format!("{total} values equal to the host run")))
    } else {
        Err(StageError::ComparisonMismatch { bad, total })
    }
}

/// The manifest's hand-written values, checked against the host run: a second
/// check of the oracle itself, never the only one.
pub fn hand_check(f: &Fixture, exp: &Readback) -> Result<((), String), StageError> {
    for (name, want) in &f.manifest.expected {
        let t = elem_ty(f, name);
        let host = exp
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| StageError::HandCheckMismatch(format!("no readback of `{name}`")))?;
        for (i, w) in want.iter().enumerate() {
            let wb = t.bits_of(*w);
            if host.get(i) != Some(&wb) {
                return Err(StageError::HandCheckMismatch(format!(
                    "host `{name}[{i}]` = {:?}, the manifest says {}",
                    host.get(i).map(|v| show(t, *v)),
                    show(t, wb)
                )));
            }
        }
    }
    Ok(((), "hand-written values agree with the host run".into()))
}
