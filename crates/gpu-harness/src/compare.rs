//! The last stages of the pipeline: the device's readback against the host
//! run's, value by value, and the manifest's hand-written values against the
//! host run (a check of the oracle itself).

use crate::fixture::{ElemTy, Fixture};
use crate::host::Readback;
use crate::report::ValueReport;
use crate::stage::StageError;
use crate::tolerance::Tolerance;

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

/// The elements of the manifest's buffer `buffer` whose float bits it
/// marks unspecified.
fn unspecified_bits<'f>(f: &'f Fixture, buffer: &str) -> &'f [usize] {
    f.manifest
        .buffer
        .iter()
        .find(|b| b.name == buffer)
        .map_or(&[][..], |b| b.unspecified_float_bits.as_slice())
}

/// Why two bit patterns of a `size`-byte float agree where Rust leaves the
/// bits open: both NaN, or both zero. `None` if they do not.
fn same_unspecified_float(size: usize, a: u64, b: u64) -> Option<String> {
    let (nan, zero) = match size {
        4 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            (x.is_nan() && y.is_nan(), x == 0.0 && y == 0.0)
        }
        _ => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            (x.is_nan() && y.is_nan(), x == 0.0 && y == 0.0)
        }
    };
    if nan {
        Some("both NaN: the manifest marks these bits unspecified (a NaN's payload)".into())
    } else if zero {
        Some("both zero: the manifest marks these bits unspecified (a zero's sign)".into())
    } else {
        None
    }
}

/// Compares every expected value with the device's, recording each in
/// `values`: bit for bit, except where `tolerance` (the approximate float
/// functions of a libdevice device) allows a difference, or the manifest
/// marks the bits of a float unspecified and both are NaN or both zero;
/// the value's report then explains.
pub fn compare(
    f: &Fixture,
    exp: &Readback,
    got: &Readback,
    tolerance: &Tolerance,
    values: &mut Vec<ValueReport>,
) -> Result<((), String), StageError> {
    let (mut bad, mut tolerated) = (0, 0);
    for (name, e) in exp {
        let t = elem_ty(f, name);
        let unspecified = unspecified_bits(f, name);
        let g = got
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[]);
        for (i, ev) in e.iter().enumerate() {
            let gv = g.get(i).copied();
            let within = match gv {
                Some(v) if v != *ev => tolerance.allows(t, *ev, v).or_else(|| {
                    unspecified
                        .contains(&i)
                        .then(|| same_unspecified_float(t.size(), *ev, v))
                        .flatten()
                }),
                _ => None,
            };
            let ok = gv == Some(*ev) || within.is_some();
            bad += usize::from(!ok);
            tolerated += usize::from(within.is_some());
            values.push(ValueReport {
                buffer: name.clone(),
                index: i,
                expected: show(t, *ev),
                got: gv.map_or_else(|| "missing".into(), |v| show(t, v)),
                ok,
                within,
                device: None,
            });
        }
    }
    let total = values.len();
    if bad > 0 {
        return Err(StageError::ComparisonMismatch { bad, total });
    }
    Ok((
        (),
        if tolerated == 0 {
            format!("{total} values equal to the host run")
        } else {
            format!(
                "{total} values agree with the host run: {} bit for bit, {tolerated} within the documented error of a float function or as unspecified float bits (each value says which)",
                total - tolerated
            )
        },
    ))
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
        let unspecified = unspecified_bits(f, name);
        for (i, w) in want.iter().enumerate() {
            // Checked by `Manifest::validate`.
            let wb = t.exact_bits(*w).unwrap_or_default();
            // Where the bits are open, the host's are one choice of several.
            let open = |h: u64| {
                unspecified.contains(&i) && same_unspecified_float(t.size(), wb, h).is_some()
            };
            if host.get(i) != Some(&wb) && !host.get(i).is_some_and(|h| open(*h)) {
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

#[cfg(test)]
mod tests {
    use device_ir::MathFn;

    use super::*;
    use crate::fixture::Manifest;
    use crate::tolerance::Bound;

    fn fixture() -> Fixture {
        let manifest: Manifest = toml::from_str(
            "[[buffer]]\nname = \"y\"\nty = \"f32\"\nlen = 2\nreadback = 2\n\
             [[launch]]\nkernel = \"k\"\ngrid = [1, 1]\nblock = [1, 1]\nargs = []\n",
        )
        .expect("a valid manifest");
        Fixture {
            name: "t".into(),
            dir: "t".into(),
            kernel: "t/kernel.rs".into(),
            manifest,
        }
    }

    fn readback(values: [f32; 2]) -> Readback {
        vec![(
            "y".into(),
            values.iter().map(|v| u64::from(v.to_bits())).collect(),
        )]
    }

    #[test]
    fn a_tolerance_accepts_a_few_ulps_and_says_which_function() {
        let f = fixture();
        let near = f32::from_bits(0.5f32.to_bits() + 2);
        let (exp, got) = (readback([0.5, 1.0]), readback([near, 1.0]));
        let mut values = Vec::new();
        let exact = compare(&f, &exp, &got, &Tolerance::default(), &mut values);
        assert!(
            matches!(
                exact,
                Err(StageError::ComparisonMismatch { bad: 1, total: 2 })
            ),
            "{exact:?}"
        );
        let sin = Tolerance {
            f32: Some(Bound {
                ulps: 3,
                func: MathFn::Sin,
                device_ulps: 2,
            }),
            f64: None,
        };
        values.clear();
        let (_, detail) = compare(&f, &exp, &got, &sin, &mut values).expect("2 ulp of 3");
        assert!(detail.contains("1 within"), "{detail}");
        let why = values[0].within.as_deref().unwrap_or_default();
        assert!(why.contains("sin") && why.contains("2 ulp apart"), "{why}");
        assert_eq!(values[1].within, None, "equal bits need no reason");
        // Four ulps is outside the bound.
        let far = readback([f32::from_bits(0.5f32.to_bits() + 4), 1.0]);
        values.clear();
        assert!(compare(&f, &exp, &far, &sin, &mut values).is_err());
    }

    #[test]
    fn unspecified_float_bits_agree_as_two_nans_or_two_zeros_and_nowhere_else() {
        let manifest: Manifest = toml::from_str(
            "[[buffer]]\nname = \"bits\"\nty = \"u32\"\nlen = 4\nreadback = 4\n\
             unspecified_float_bits = [0, 1, 2]\n",
        )
        .expect("a valid manifest");
        let f = Fixture {
            name: "t".into(),
            dir: "t".into(),
            kernel: "t/kernel.rs".into(),
            manifest,
        };
        let bits = |v: [u32; 4]| -> Readback { vec![("bits".into(), v.map(u64::from).to_vec())] };
        // +0 / -0, two NaNs of different payloads, equal bits.
        let exp = bits([0, 0x7fc1_2345, 7, 0]);
        let got = bits([0x8000_0000, 0x7fff_ffff, 7, 0]);
        let mut values = Vec::new();
        compare(&f, &exp, &got, &Tolerance::default(), &mut values).expect("they agree");
        assert!(
            values[0]
                .within
                .as_deref()
                .is_some_and(|w| w.contains("both zero"))
        );
        assert!(
            values[1]
                .within
                .as_deref()
                .is_some_and(|w| w.contains("both NaN"))
        );
        // The hand-written values meet the host's choice there too, and only
        // there.
        let mut handwritten = f.clone();
        handwritten.manifest.expected.insert(
            "bits".into(),
            [0, 0x7fc0_0000, 7, 0]
                .map(crate::fixture::Number::Int)
                .to_vec(),
        );
        assert!(hand_check(&handwritten, &got).is_ok());
        assert!(hand_check(&handwritten, &bits([0, 0x7fc0_0000, 7, 0x8000_0000])).is_err());
        // f64 bits: -0 against +0, and a NaN against a number.
        let manifest64: Manifest = toml::from_str(
            "[[buffer]]\nname = \"bits\"\nty = \"u64\"\nlen = 2\nreadback = 2\n\
             unspecified_float_bits = [0, 1]\n",
        )
        .expect("a valid manifest");
        assert_eq!(manifest64.validate(), Ok(()));
        let f64s = Fixture {
            manifest: manifest64,
            ..f.clone()
        };
        let wide = |v: [u64; 2]| -> Readback { vec![("bits".into(), v.to_vec())] };
        let nan = f64::NAN.to_bits();
        values.clear();
        compare(
            &f64s,
            &wide([0, nan]),
            &wide([1 << 63, nan | 1]),
            &Tolerance::default(),
            &mut values,
        )
        .expect("-0 and +0, two NaNs");
        for (e, g) in [([0, nan], [0, 1.0f64.to_bits()]), ([nan, 0], [0, 0])] {
            values.clear();
            assert!(
                compare(
                    &f64s,
                    &wide(e),
                    &wide(g),
                    &Tolerance::default(),
                    &mut values
                )
                .is_err(),
                "{e:x?} against {g:x?}"
            );
        }
        // Two numbers that differ are no match, and element 3 is not marked.
        for (e, g) in [
            ([0, 0, 0x3f80_0000, 0], [0, 0, 0x4000_0000, 0]),
            ([0; 4], [0, 0, 0, 0x8000_0000]),
        ] {
            values.clear();
            assert!(
                compare(&f, &bits(e), &bits(g), &Tolerance::default(), &mut values).is_err(),
                "{e:x?} against {g:x?}"
            );
        }
        // A mark past the readback, or on a buffer too narrow for a float.
        for bad in [
            "ty = \"u32\"\nlen = 4\nreadback = 2\nunspecified_float_bits = [2]",
            "ty = \"u16\"\nlen = 4\nreadback = 4\nunspecified_float_bits = [0]",
        ] {
            let m: Manifest =
                toml::from_str(&format!("[[buffer]]\nname = \"b\"\n{bad}\n")).expect("a manifest");
            assert!(
                matches!(
                    m.validate(),
                    Err(crate::fixture::ManifestError::UnspecifiedBits { .. })
                ),
                "{bad}"
            );
        }
    }
}
