//! Conversions between the IEEE binary formats `.f16 .bf16 .f32 .f64`, and
//! from integers into them, computed on raw bits (the `cvt` family's
//! [`super::convert`] hot path). Widening to a double is exact; narrowing
//! rounds once, by [`super::convert::round_mag`], in the mode asked
//! (§4.6 "Rounding modifiers": to nearest even, toward zero, toward -inf,
//! toward +inf, and ties away for `.rna`), with IEEE 754 overflow (to
//! infinity or to the largest finite value, by mode and sign).
//!
//! Each function gives exactly the bits `rustc_apfloat` gives for the same
//! conversion (the tests check every `.f16` and `.bf16` value, and edge and
//! random `.f32`/`.f64` values and integers, in every mode); what it does
//! not cover (NaN operands, whose payload handling is `rustc_apfloat`'s,
//! and integers beyond 2^53) it leaves to the caller (`None`).

use super::convert::{overflows_to_inf, round_mag};
use crate::isa::ScalarType as T;
use rustc_apfloat::Round;

/// Stored mantissa bits and exponent bits of a format narrower than `.f64`.
fn layout(t: T) -> Option<(u32, u32)> {
    match t {
        T::F16 => Some((10, 5)),
        T::Bf16 => Some((7, 8)),
        T::F32 => Some((23, 8)),
        _ => None,
    }
}

/// The exact value of `.f16 .bf16 .f32 .f64` bits as a double; `None` for a
/// NaN, for bits beyond the type's width, and for other types.
pub(super) fn to_f64(b: u128, t: T) -> Option<f64> {
    let x = match t {
        T::F16 if b <= 0xffff => {
            let neg = b >> 15 == 1;
            let (e, m) = ((b >> 10) as u64 & 0x1f, b as u64 & 0x3ff);
            let mag = match e {
                0x1f if m != 0 => return None,
                0x1f => f64::INFINITY,
                // Subnormal: m * 2^-24 (a product by a power of two: exact).
                0 => m as f64 * f64::from_bits((1023 - 24) << 52),
                _ => f64::from_bits((e + 1023 - 15) << 52 | m << 42),
            };
            if neg {
                -mag
            } else {
                mag
            }
        }
        T::Bf16 if b <= 0xffff => f32::from_bits((b as u32) << 16) as f64,
        T::F32 if b <= 0xffff_ffff => f32::from_bits(b as u32) as f64,
        T::F64 if b <= u64::MAX as u128 => f64::from_bits(b as u64),
        _ => return None,
    };
    (!x.is_nan()).then_some(x)
}

/// A double rounded into `.f16 .bf16 .f32` in mode `r` (`.f64`: the double
/// itself); `None` for a NaN.
pub(crate) fn from_f64(x: f64, t: T, r: Round) -> Option<u128> {
    if x.is_nan() {
        return None;
    }
    let Some((man, exp)) = layout(t) else { return (t == T::F64).then_some(x.to_bits() as u128) };
    let neg = x.is_sign_negative();
    let sign = (neg as u128) << (man + exp);
    let inf = ((1u128 << exp) - 1) << man;
    if x.is_infinite() {
        return Some(sign | inf);
    }
    // The exponent of the smallest normal: 1 - bias.
    let emin = 2 - (1i32 << (exp - 1));
    let code = round_mag(x, man, emin, r).0 as u128;
    Some(sign
        | if code < inf {
            code
        } else if overflows_to_inf(r, neg) {
            inf
        } else {
            inf - 1
        })
}

/// An integer rounded into `.f16 .bf16 .f32 .f64` in mode `r`; `None` when
/// its magnitude is beyond 2^53 (not exact as a double).
pub(super) fn from_i128(v: i128, t: T, r: Round) -> Option<u128> {
    if v.unsigned_abs() > 1 << 53 {
        return None;
    }
    from_f64(v as f64, t, r)
}

#[cfg(test)]
mod tests {
    use super::super::convert::{from_double_apfloat, from_int_apfloat, to_double_apfloat};
    use super::*;
    use rustc_apfloat::ieee::Double;
    use rustc_apfloat::Float;

    const MODES: [Round; 5] = [Round::NearestTiesToEven, Round::NearestTiesToAway, Round::TowardZero, Round::TowardPositive, Round::TowardNegative];

    /// The next value of a xorshift64 sequence (test inputs).
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    fn apfloat_to(x: f64, t: T, r: Round) -> u128 {
        from_double_apfloat(Double::from_bits(x.to_bits() as u128), t, r)
    }

    /// Every `.f16` and `.bf16` value widens exactly as `rustc_apfloat`
    /// widens it, and every value narrows back to itself; the doubles next
    /// to each value and halfway between neighbours round as it rounds them.
    #[test]
    fn every_16_bit_value_converts_as_apfloat_converts_it() {
        for t in [T::F16, T::Bf16] {
            for b in 0..=0xffffu128 {
                let want = f64::from_bits(to_double_apfloat(b, t).to_bits() as u64);
                match to_f64(b, t) {
                    None => assert!(want.is_nan(), "{t:?} {b:#x}"),
                    Some(x) => {
                        assert_eq!(x.to_bits(), want.to_bits(), "{t:?} {b:#x}");
                        let up = f64::from_bits(x.to_bits() + 1);
                        let down = f64::from_bits(x.to_bits().wrapping_sub(1));
                        let next = to_f64(b + 1, t).filter(|_| b < 0xffff);
                        let mid = next.map(|n| (x + n) / 2.0);
                        for y in [x, up, down, x * 3.0 / 2.0].into_iter().chain(mid) {
                            for r in MODES {
                                assert_eq!(from_f64(y, t, r), (!y.is_nan()).then(|| apfloat_to(y, t, r)), "{t:?} {y:e} {r:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Edge and random `.f32` and `.f64` values: widening, and narrowing to
    /// each narrower format in every mode.
    #[test]
    fn edge_and_random_values_convert_as_apfloat_converts_them() {
        let mut values: Vec<f64> = vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::MAX, f64::MIN_POSITIVE, 5e-324, 65504.0, 65519.99, 65520.0, 65536.0, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1.0e-45, 1.4e-45, 7.0e-46, 3.4028235e38, 3.4028236e38, 3.5e38, 1.0e-39, 1.17549435e-38, 9.2e-41];
        values.extend(values.clone().iter().map(|v| -v));
        let mut x = 0x1234_5678_9abc_def0u64;
        for k in 0..40_000 {
            let x = next(&mut x);
            let v = if k % 2 == 0 { f32::from_bits(x as u32) as f64 } else { f64::from_bits(x) };
            // Random doubles near the narrow formats' ranges, too.
            let near = f64::from_bits((x & 0x800f_ffff_ffff_ffff) | (((x >> 52) % 320 + 1023 - 160) << 52));
            values.extend([v, near]);
        }
        for &v in &values {
            if !v.is_nan() && v == (v as f32) as f64 {
                let want = to_double_apfloat((v as f32).to_bits() as u128, T::F32);
                assert_eq!(to_f64((v as f32).to_bits() as u128, T::F32).map(f64::to_bits), Some(want.to_bits() as u64), "{v:e}");
            }
            for t in [T::F16, T::Bf16, T::F32, T::F64] {
                for r in MODES {
                    assert_eq!(from_f64(v, t, r), (!v.is_nan()).then(|| apfloat_to(v, t, r)), "{v:e} to {t:?} {r:?}");
                }
            }
        }
    }

    /// Integers up to 2^53 in magnitude (edges and random), in every mode.
    #[test]
    fn integers_convert_as_apfloat_converts_them() {
        let mut ints: Vec<i128> = vec![0, 1, -1, 2047, 2048, 2049, 2050, 65504, 65519, 65520, 65535, 65536, 16_777_217, 1 << 53, (1 << 53) - 1, 1 << 24, (1 << 24) + 1];
        ints.extend(ints.clone().iter().map(|v| -v));
        let mut x = 99u64;
        for k in 0..20_000 {
            let x = next(&mut x);
            ints.push((x >> (11 + k % 50)) as i128 * if k % 3 == 0 { -1 } else { 1 });
        }
        for &v in &ints {
            for t in [T::F16, T::Bf16, T::F32, T::F64] {
                for r in MODES {
                    assert_eq!(from_i128(v, t, r), Some(from_int_apfloat(v, t, r)), "{v} to {t:?} {r:?}");
                }
            }
        }
        assert_eq!(from_i128((1 << 53) + 1, T::F32, Round::NearestTiesToEven), None);
    }
}
