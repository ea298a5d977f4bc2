//! Exact sums of products for the floating-point matrix instructions, and
//! the quality of their results.
//!
//! The manual (PTX ISA 8.7 §9.7.14.5.14 "Precision and rounding", the same
//! text in §9.7.14.4.5 for wmma) fixes only this much: the products of
//! `.f16` elements are formed in at least single precision, those of
//! `.bf16`/`.tf32`/`.e4m3`/`.e5m2` elements "in the specified precision"
//! (all of them are exact in single precision), and the accumulation is
//! done in at least single precision (at least half precision when both
//! `.ctype` and `.dtype` are `.f16`); the order of the accumulation, its
//! rounding and the handling of subnormal inputs are unspecified. `.f64`
//! multiplies and adds with the precision of a fused multiply-add, rounded
//! as the rounding modifier says, in an unspecified order.
//!
//! So every result is computed here as the exact sum of the exact products
//! and `c`, rounded once to the destination type (a correctly rounded
//! result, one of the results the manual allows), and marked:
//!
//! - `Exact` when every order of accumulation gives this value: the inputs
//!   are finite, none is subnormal, `.tf32` inputs have their low 13
//!   mantissa bits zero (what the hardware does with them is
//!   implementation-defined), and with `q` the finest quantum among the
//!   terms (every term is an integer multiple of `2^q`) and `S` the sum of
//!   their magnitudes, `S < 2^(q + p)` where `p` is the precision of the
//!   accumulation (24 for single, 11 for half, 53 for double) and
//!   `2^q` is at least the smallest normal number of the accumulation
//!   format: then every partial sum, in any order, is a multiple of `2^q`
//!   smaller than `2^(q+p)` in magnitude, hence exactly representable and
//!   normal (or zero); and the final sum is representable, normal or zero,
//!   in the destination type. Small integers (and other values on a coarse
//!   grid) in `.f16` with `.f32` accumulation are exact this way.
//! - `Approx { ulps }` otherwise, with a sound bound: a recursive sum of
//!   `n` terms with precision `p` is within `n * 2^-p * S` of the exact sum
//!   (the bound assumed here is `(n + 1) * 2^-p * S` plus, for subnormal
//!   inputs that may be flushed, the magnitude of every term they touch,
//!   and for inexact or non-tf32-clean inputs their own error), converted
//!   into units in the last place of the destination around the computed
//!   value (`u32::MAX`, "no useful bound", when that does not fit).
//! - `AnyNan` when a NaN input, `Inf - Inf` or `0 * Inf` makes the result
//!   NaN whatever the order.

use crate::eval::Quality;
use smallvec::SmallVec;

/// A binary floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// Precision in bits, the hidden bit included.
    pub p: u32,
    /// Exponent of the smallest normal number.
    pub emin: i32,
    /// Exponent of the largest finite number.
    pub emax: i32,
    /// Total width in bits.
    pub width: u32,
}

pub const F16: Format = Format { p: 11, emin: -14, emax: 15, width: 16 };
pub const BF16: Format = Format { p: 8, emin: -126, emax: 127, width: 16 };
pub const F32: Format = Format { p: 24, emin: -126, emax: 127, width: 32 };
pub const F64: Format = Format { p: 53, emin: -1022, emax: 1023, width: 64 };

impl Format {
    fn exp_bits(self) -> u32 {
        self.width - self.p
    }
    fn bias(self) -> i32 {
        self.emax
    }
    /// The canonical NaN (all exponent bits, the top mantissa bit).
    pub fn nan(self) -> u128 {
        let e = (1u128 << self.exp_bits()) - 1;
        (e << (self.p - 1)) | (1u128 << (self.p - 2))
    }
    fn inf(self, neg: bool) -> u128 {
        let e = (1u128 << self.exp_bits()) - 1;
        ((neg as u128) << (self.width - 1)) | (e << (self.p - 1))
    }
    fn max_finite(self, neg: bool) -> u128 {
        self.inf(neg) - 1
    }
}

/// A decoded input element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// `(-1)^neg * m * 2^e`, exactly.
    Finite { neg: bool, m: u64, e: i32, subnormal: bool },
    Inf { neg: bool },
    Nan,
}

impl Num {
    pub fn zero() -> Num {
        Num::Finite { neg: false, m: 0, e: 0, subnormal: false }
    }

    /// Decodes an IEEE-style encoding with `exp_bits` exponent bits and
    /// `man_bits` stored mantissa bits. `ieee_special`: the all-ones
    /// exponent means Inf/NaN (false for `.e4m3`, whose only NaN is
    /// `S.1111.111` and which has no infinity).
    pub fn decode(bits: u64, exp_bits: u32, man_bits: u32, ieee_special: bool) -> Num {
        let neg = bits >> (exp_bits + man_bits) & 1 == 1;
        let ex = (bits >> man_bits) & ((1 << exp_bits) - 1);
        let man = bits & ((1 << man_bits) - 1);
        let all_ones = (1u64 << exp_bits) - 1;
        let bias = (1i32 << (exp_bits - 1)) - 1;
        if ieee_special && ex == all_ones {
            return if man == 0 { Num::Inf { neg } } else { Num::Nan };
        }
        if !ieee_special && ex == all_ones && man == (1 << man_bits) - 1 {
            return Num::Nan;
        }
        if ex == 0 {
            return Num::Finite { neg, m: man, e: 1 - bias - man_bits as i32, subnormal: man != 0 };
        }
        Num::Finite { neg, m: man | 1 << man_bits, e: ex as i32 - bias - man_bits as i32, subnormal: false }
    }

    /// The value as an `f64` (for error bounds only).
    pub fn approx_abs(self) -> f64 {
        match self {
            Num::Finite { m, e, .. } => m as f64 * pow2(e),
            _ => f64::INFINITY,
        }
    }
}

/// `2^e` as an `f64` (0 or infinity beyond its range).
fn pow2(e: i32) -> f64 {
    if (-1022..=1023).contains(&e) {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        (e as f64).exp2()
    }
}

/// A term of a sum: `(-1)^neg * m * 2^e`.
#[derive(Clone, Copy, Debug)]
struct Term {
    neg: bool,
    m: u128,
    e: i32,
}

/// A signed integer of any width, two's complement in 64-bit limbs (least
/// significant first).
struct Wide {
    limbs: SmallVec<[u64; 8]>,
}

impl Wide {
    fn zero(bits: u32) -> Wide {
        Wide { limbs: smallvec::smallvec![0; (bits as usize).div_ceil(64) + 1] }
    }

    /// Adds `(-1)^neg * m * 2^shift` (two's complement, wrapping at the top).
    fn add(&mut self, m: u128, shift: u32, neg: bool) {
        let (w, b) = ((shift / 64) as usize, shift % 64);
        let low = m << b;
        let top = if b == 0 { 0 } else { (m >> (128 - b)) as u64 };
        let parts = [low as u64, (low >> 64) as u64, top];
        let mut carry = false;
        for k in w..self.limbs.len() {
            let p = parts.get(k - w).copied().unwrap_or(0);
            if p == 0 && !carry && k >= w + 3 {
                break;
            }
            let x = &mut self.limbs[k];
            if neg {
                let (d1, b1) = x.overflowing_sub(p);
                let (d2, b2) = d1.overflowing_sub(carry as u64);
                *x = d2;
                carry = b1 || b2;
            } else {
                let (s1, c1) = x.overflowing_add(p);
                let (s2, c2) = s1.overflowing_add(carry as u64);
                *x = s2;
                carry = c1 || c2;
            }
        }
    }

    fn is_negative(&self) -> bool {
        self.limbs.last().is_some_and(|x| x >> 63 == 1)
    }

    fn negate(&mut self) {
        let mut carry = 1u64;
        for x in self.limbs.iter_mut() {
            let (s, c) = (!*x).overflowing_add(carry);
            *x = s;
            carry = c as u64;
        }
    }

    /// Index of the most significant set bit (of a non-negative value).
    fn msb(&self) -> Option<u32> {
        self.limbs.iter().enumerate().rev().find(|(_, x)| **x != 0).map(|(k, x)| k as u32 * 64 + 63 - x.leading_zeros())
    }

    fn bit(&self, i: u32) -> bool {
        self.limbs.get((i / 64) as usize).is_some_and(|x| x >> (i % 64) & 1 == 1)
    }

    /// Bits `from .. from + n` (n <= 64).
    fn bits(&self, from: u32, n: u32) -> u64 {
        let limb = |i: usize| self.limbs.get(i).copied().unwrap_or(0);
        let (w, b) = ((from / 64) as usize, from % 64);
        let lo = limb(w) >> b;
        let hi = if b == 0 { 0 } else { limb(w + 1) << (64 - b) };
        let v = lo | hi;
        if n >= 64 {
            v
        } else {
            v & ((1u64 << n) - 1)
        }
    }

    /// Is any bit below `pos` set?
    fn any_below(&self, pos: u32) -> bool {
        let full = (pos / 64) as usize;
        if self.limbs[..full.min(self.limbs.len())].iter().any(|x| *x != 0) {
            return true;
        }
        let rem = pos % 64;
        rem != 0 && self.limbs.get(full).is_some_and(|x| x & ((1u64 << rem) - 1) != 0)
    }
}

/// Rounding of the final result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Nearest,
    Zero,
    Down,
    Up,
}

/// How the products are accumulated.
#[derive(Clone, Copy, Debug)]
pub struct Accumulation {
    /// The accumulation format the manual guarantees at least.
    pub acc: Format,
    /// The destination format.
    pub dest: Format,
    pub round: Round,
}

/// One input of a product with what is known of it.
#[derive(Clone, Copy, Debug)]
pub struct Input {
    pub num: Num,
    /// The quality of the register the element came from.
    pub quality: Quality,
    /// Its value may differ from `num` by up to this relative amount for a
    /// reason of the format (`.tf32` inputs with low mantissa bits set).
    pub rel_uncertainty: f64,
}

/// A result element: bits in the destination format and their quality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Out {
    pub bits: u128,
    pub quality: Quality,
}

/// `sum(a[k] * b[k]) + c`, accumulated as `acc` says.
pub fn dot(products: &[(Input, Input)], c: Input, acc: Accumulation) -> Out {
    let dest = acc.dest;
    // Inputs the program does not know make the result unknown.
    let all_inputs = products.iter().flat_map(|(a, b)| [a, b]).chain(std::iter::once(&c));
    let mut worst_input = Quality::Exact;
    for x in all_inputs {
        match x.quality {
            Quality::Exact => {}
            Quality::Unspecified => return Out { bits: 0, quality: Quality::Unspecified },
            Quality::AnyNan => worst_input = Quality::AnyNan,
            Quality::Approx { ulps } => {
                if worst_input == Quality::Exact {
                    worst_input = Quality::Approx { ulps };
                }
            }
        }
    }
    if worst_input == Quality::AnyNan {
        // A NaN of unknown payload in: NaN out, if it reaches the result;
        // whether it does is not worth tracking.
        return Out { bits: dest.nan(), quality: Quality::Unspecified };
    }
    // NaN and infinities: decided without order.
    let mut nan = false;
    let mut inf_sign: Option<bool> = None;
    let mut note_inf = |neg: bool, nan: &mut bool| match inf_sign {
        Some(s) if s != neg => *nan = true,
        _ => inf_sign = Some(neg),
    };
    for (a, b) in products {
        match (a.num, b.num) {
            (Num::Nan, _) | (_, Num::Nan) => nan = true,
            (Num::Inf { neg: x }, Num::Inf { neg: y }) => note_inf(x != y, &mut nan),
            (Num::Inf { neg: x }, Num::Finite { neg: y, m, .. }) | (Num::Finite { neg: y, m, .. }, Num::Inf { neg: x }) => {
                if m == 0 {
                    nan = true
                } else {
                    note_inf(x != y, &mut nan)
                }
            }
            _ => {}
        }
    }
    match c.num {
        Num::Nan => nan = true,
        Num::Inf { neg } => note_inf(neg, &mut nan),
        _ => {}
    }
    if nan {
        return Out { bits: dest.nan(), quality: Quality::AnyNan };
    }
    if let Some(neg) = inf_sign {
        let finite = |n: Num| if let Num::Finite { .. } = n { n.approx_abs() } else { 0.0 };
        let finite_sum_bound: f64 = products.iter().map(|(a, b)| finite(a.num) * finite(b.num)).sum::<f64>() + finite(c.num);
        // The finite terms cannot cancel an infinity unless their partial
        // sums overflow the accumulation format.
        let max_acc = (2.0 - (1.0 - acc.acc.p as f64).exp2()) * (acc.acc.emax as f64).exp2();
        let quality = if finite_sum_bound < max_acc / 2.0 && worst_input == Quality::Exact { Quality::Exact } else { Quality::Unspecified };
        return Out { bits: dest.inf(neg), quality };
    }
    // Finite: the exact sum.
    let mut terms: SmallVec<[Term; 24]> = SmallVec::new();
    let mut subnormal_error = 0.0f64;
    let mut inexact_inputs = false;
    let mut input_error = 0.0f64;
    for (a, b) in products {
        let (Num::Finite { neg: na, m: ma, e: ea, subnormal: sa }, Num::Finite { neg: nb, m: mb, e: eb, subnormal: sb }) = (a.num, b.num) else { unreachable!() };
        let m = ma as u128 * mb as u128;
        let mag = || a.num.approx_abs() * b.num.approx_abs();
        if sa || sb {
            subnormal_error += mag();
        }
        let ua = a.rel_uncertainty + quality_rel(a.quality, a.num);
        let ub = b.rel_uncertainty + quality_rel(b.quality, b.num);
        if ua > 0.0 || ub > 0.0 {
            inexact_inputs = true;
            input_error += mag() * ((1.0 + ua) * (1.0 + ub) - 1.0);
        }
        if m != 0 {
            terms.push(Term { neg: na != nb, m, e: ea + eb });
        }
    }
    if let Num::Finite { neg, m, e, subnormal } = c.num {
        if subnormal {
            subnormal_error += c.num.approx_abs();
        }
        let uc = c.rel_uncertainty + quality_rel(c.quality, c.num);
        if uc > 0.0 {
            inexact_inputs = true;
            input_error += c.num.approx_abs() * uc;
        }
        if m != 0 {
            terms.push(Term { neg, m: m as u128, e });
        }
    }
    let (mut bits, inexact, normal_or_zero) = round_sum(&terms, dest, acc.round);
    if terms.is_empty() {
        // Only zeros: -0 when every one is -0 (any -0 when rounding down),
        // whatever the order.
        let mut signs = products.iter().map(|(a, b)| zero_sign(a.num) != zero_sign(b.num)).chain(std::iter::once(zero_sign(c.num)));
        let neg = if acc.round == Round::Down { signs.any(|s| s) } else { signs.all(|s| s) };
        bits = (neg as u128) << (dest.width - 1);
    }
    // Exact whatever the order?
    let mut exact = !inexact && normal_or_zero && subnormal_error == 0.0 && !inexact_inputs;
    let mut sum_abs = 0.0f64;
    if !terms.is_empty() {
        sum_abs = terms.iter().map(|t| ((t.m >> t.m.trailing_zeros()) as f64) * pow2(t.e + t.m.trailing_zeros() as i32)).sum::<f64>();
        let q = terms.iter().map(|t| t.e + t.m.trailing_zeros() as i32).min().unwrap();
        exact &= q >= acc.acc.emin && q + acc.acc.p as i32 - 1 <= acc.acc.emax;
        if exact {
            // S < 2^(q + p), decided in f64 unless too close to call.
            let limit = ((q + acc.acc.p as i32) as f64).exp2();
            exact = if sum_abs * (1.0 + 1e-12) < limit {
                true
            } else if sum_abs * (1.0 - 1e-12) >= limit {
                false
            } else {
                let abs_terms: SmallVec<[Term; 24]> = terms.iter().map(|t| Term { neg: false, ..*t }).collect();
                exponent_of_sum(&abs_terms) < q + acc.acc.p as i32
            };
        }
    }
    if exact && worst_input == Quality::Exact {
        return Out { bits, quality: Quality::Exact };
    }
    // The bound: accumulation error, flushed subnormals, inexact inputs;
    // 1% slack for the f64 arithmetic of the bound itself.
    let n = terms.len().max(1) as f64;
    let err = ((n + 1.0) * (-(acc.acc.p as f64)).exp2() * sum_abs + subnormal_error + input_error) * 1.01 + n * (acc.acc.emin as f64 - acc.acc.p as f64 + 1.0).exp2();
    Out { bits, quality: Quality::Approx { ulps: ulps_around(dest, bits, err) } }
}

fn zero_sign(n: Num) -> bool {
    matches!(n, Num::Finite { neg: true, .. })
}

/// The relative error an input's quality allows (0 for exact inputs).
fn quality_rel(q: Quality, n: Num) -> f64 {
    match (q, n) {
        (Quality::Approx { ulps }, Num::Finite { m, .. }) if m != 0 => {
            // ulps of the input's own format: at most 2^(1 - bits(m)) relative.
            let bits = 64 - m.leading_zeros();
            ulps as f64 * (1.0 - bits as f64).exp2() * 2.0
        }
        (Quality::Approx { ulps }, _) if ulps > 0 => f64::INFINITY,
        _ => 0.0,
    }
}

/// The exponent of the most significant bit of the exact sum of `terms`
/// (of their absolute values when all are positive).
fn exponent_of_sum(terms: &[Term]) -> i32 {
    let (w, lsb) = accumulate(terms);
    w.msb().map_or(i32::MIN, |m| lsb + m as i32)
}

fn accumulate(terms: &[Term]) -> (Wide, i32) {
    let lsb = terms.iter().map(|t| t.e).min().unwrap_or(0);
    let top = terms.iter().map(|t| t.e + 128).max().unwrap_or(0);
    let width = (top - lsb) as u32 + 8 + 64 - (terms.len() as u64).leading_zeros();
    let mut w = Wide::zero(width);
    for t in terms {
        w.add(t.m, (t.e - lsb) as u32, t.neg);
    }
    (w, lsb)
}

/// The exact sum of `terms` rounded to `fmt`: its bits, whether rounding
/// changed it (or it overflowed), and whether it is zero or normal.
fn round_sum(terms: &[Term], fmt: Format, mode: Round) -> (u128, bool, bool) {
    if terms.is_empty() {
        return (0, false, true);
    }
    let (mut w, lsb) = accumulate(terms);
    let neg = w.is_negative();
    if neg {
        w.negate();
    }
    let sign = (neg as u128) << (fmt.width - 1);
    let Some(msb) = w.msb() else {
        // An exact zero sum of nonzero terms: +0 in round-to-nearest.
        let z = if mode == Round::Down { 1u128 << (fmt.width - 1) } else { 0 };
        return (z, false, true);
    };
    let top_exp = lsb + msb as i32;
    let ex = top_exp.max(fmt.emin);
    let mut q = ex - (fmt.p as i32 - 1);
    let (mut m, inexact) = if q <= lsb {
        (w.bits(0, msb + 1) << (lsb - q), false)
    } else {
        let shift = (q - lsb) as u32;
        let m = w.bits(shift, fmt.p + 1);
        let half = w.bit(shift - 1);
        let sticky = w.any_below(shift - 1);
        let inexact = half || sticky;
        let up = match mode {
            Round::Nearest => half && (sticky || m & 1 == 1),
            Round::Zero => false,
            Round::Down => neg && inexact,
            Round::Up => !neg && inexact,
        };
        (m + up as u64, inexact)
    };
    if m >> fmt.p != 0 {
        m >>= 1;
        q += 1;
    }
    let normal = m >> (fmt.p - 1) == 1;
    if q + fmt.p as i32 - 1 > fmt.emax {
        let to_inf = match mode {
            Round::Nearest => true,
            Round::Zero => false,
            Round::Down => neg,
            Round::Up => !neg,
        };
        let bits = if to_inf { fmt.inf(neg) } else { fmt.max_finite(neg) };
        return (bits, true, false);
    }
    let biased = if normal { (q + fmt.p as i32 - 1 + fmt.bias()) as u128 } else { 0 };
    let bits = sign | biased << (fmt.p - 1) | (m as u128 & ((1u128 << (fmt.p - 1)) - 1));
    (bits, inexact, normal || m == 0)
}

/// How many values of `fmt` lie between `bits` and the ends of
/// `[v - err, v + err]` (the larger side), as a ulps bound.
fn ulps_around(fmt: Format, bits: u128, err: f64) -> u32 {
    if !err.is_finite() {
        return u32::MAX;
    }
    let v = to_f64(fmt, bits);
    let ord = |x: f64| -> Option<i128> {
        let b = from_f64_outward(fmt, x)?;
        let mag = (b & ((1u128 << (fmt.width - 1)) - 1)) as i128;
        Some(if b >> (fmt.width - 1) == 1 { -mag } else { mag })
    };
    let (Some(lo), Some(hi), Some(mid)) = (ord(v - err), ord(v + err), ord(v)) else { return u32::MAX };
    let d = (hi - mid).max(mid - lo) + 1;
    u32::try_from(d).ok().filter(|d| *d < u32::MAX).unwrap_or(u32::MAX)
}

/// The value of `bits` in `fmt` as an `f64` (finite values of every format here fit).
pub fn to_f64(fmt: Format, bits: u128) -> f64 {
    let man_bits = fmt.p - 1;
    let n = Num::decode(bits as u64, fmt.exp_bits(), man_bits, true);
    match n {
        Num::Finite { neg, .. } => {
            let v = n.approx_abs();
            if neg {
                -v
            } else {
                v
            }
        }
        Num::Inf { neg } => {
            if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        Num::Nan => f64::NAN,
    }
}

/// `x` in `fmt`, rounded away from zero; None if beyond the finite range.
fn from_f64_outward(fmt: Format, x: f64) -> Option<u128> {
    if !x.is_finite() {
        return None;
    }
    let b = x.to_bits();
    let n = Num::decode(b, 11, 52, true);
    let Num::Finite { neg, m, e, .. } = n else { return None };
    let t = [Term { neg, m: m as u128, e }];
    let mode = if neg { Round::Down } else { Round::Up };
    let (bits, _, _) = round_sum(&t, fmt, mode);
    let inf = fmt.inf(neg);
    if bits == inf {
        return None;
    }
    Some(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16(x: f32) -> Input {
        // Small values only: exact in f16.
        let b = rustc_apfloat_f16(x);
        Input { num: Num::decode(b, 5, 10, true), quality: Quality::Exact, rel_uncertainty: 0.0 }
    }

    fn rustc_apfloat_f16(x: f32) -> u64 {
        let Num::Finite { neg, m, e, .. } = Num::decode((x as f64).to_bits(), 11, 52, true) else { panic!() };
        round_sum(&[Term { neg, m: m as u128, e }], F16, Round::Nearest).0 as u64
    }

    fn f32in(x: f32) -> Input {
        Input { num: Num::decode(x.to_bits() as u64, 8, 23, true), quality: Quality::Exact, rel_uncertainty: 0.0 }
    }

    const ACC32: Accumulation = Accumulation { acc: F32, dest: F32, round: Round::Nearest };

    #[test]
    fn small_integers_are_exact() {
        let p: Vec<(Input, Input)> = (0..16).map(|k| (f16(k as f32 - 7.0), f16(3.0 - k as f32))).collect();
        let want: f32 = (0..16).map(|k| (k as f32 - 7.0) * (3.0 - k as f32)).sum::<f32>() + 5.0;
        let r = dot(&p, f32in(5.0), ACC32);
        assert_eq!(r, Out { bits: want.to_bits() as u128, quality: Quality::Exact });
    }

    #[test]
    fn cancellation_beyond_the_precision_is_approximate() {
        // 2^30 + 1 - 2^30: the exact sum 1 is representable, but a partial
        // sum 2^30 + 1 is not, so the order matters: not exact.
        let p = vec![(f16(1024.0), f16(1024.0)), (f16(1.0), f16(1.0))];
        let c = f32in(-((1u32 << 20) as f32));
        let r = dot(&p, c, ACC32);
        assert_eq!(r.bits, 1.0f32.to_bits() as u128);
        assert!(matches!(r.quality, Quality::Exact), "2^20 + 1 - 2^20 fits 24 bits: exact");
        let p = vec![(f32in(1073741824.0), f32in(1.0)), (f32in(1.0), f32in(1.0))];
        let r = dot(&p, f32in(-1073741824.0), ACC32);
        assert_eq!(r.bits, 1.0f32.to_bits() as u128);
        assert!(matches!(r.quality, Quality::Approx { ulps } if ulps > 1 && ulps < u32::MAX), "{r:?}");
    }

    #[test]
    fn rounding_is_correct_and_marked() {
        // 1 + 2^-30 rounds to 1 in f32.
        let p = vec![(f32in(1.0), f32in(1.0)), (f32in((2.0f32).powi(-15)), f32in((2.0f32).powi(-15)))];
        let r = dot(&p, f32in(0.0), ACC32);
        assert_eq!(r.bits, 1.0f32.to_bits() as u128);
        assert!(matches!(r.quality, Quality::Approx { .. }));
    }

    #[test]
    fn nan_and_infinities() {
        let inf = f32in(f32::INFINITY);
        let r = dot(&[(inf, f32in(0.0))], f32in(1.0), ACC32);
        assert_eq!(r.quality, Quality::AnyNan);
        let r = dot(&[(inf, f32in(2.0))], f32in(1.0), ACC32);
        assert_eq!(r, Out { bits: f32::INFINITY.to_bits() as u128, quality: Quality::Exact });
        let r = dot(&[(inf, f32in(2.0))], f32in(f32::NEG_INFINITY), ACC32);
        assert_eq!(r.quality, Quality::AnyNan);
    }

    /// One product and `c`: a single rounding, as IEEE `fma` does.
    #[test]
    fn single_roundings_match_fma() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let d = |x: f64| Input { num: Num::decode(x.to_bits(), 11, 52, true), quality: Quality::Exact, rel_uncertainty: 0.0 };
        let acc64 = Accumulation { acc: F64, dest: F64, round: Round::Nearest };
        for _ in 0..20_000 {
            let f = |r: u64| f64::from_bits((r & 0x800f_ffff_ffff_ffff) | ((r >> 52 & 0x3f) + 1000) << 52);
            let (a, b, c) = (f(next()), f(next()), f(next()));
            let want = a.mul_add(b, c);
            assert_eq!(dot(&[(d(a), d(b))], d(c), acc64).bits as u64, want.to_bits(), "{a:e} * {b:e} + {c:e}");
            let (x, y, z) = (a as f32, b as f32, c as f32);
            let want = x.mul_add(y, z);
            assert_eq!(dot(&[(f32in(x), f32in(y))], f32in(z), ACC32).bits as u32, want.to_bits(), "{x:e} * {y:e} + {z:e}");
        }
    }

    #[test]
    fn signed_zeros() {
        let (z, nz) = (f32in(0.0), f32in(-0.0));
        assert_eq!(dot(&[(nz, z)], nz, ACC32).bits, 0x8000_0000, "-0 * 0 + -0 = -0");
        assert_eq!(dot(&[(nz, nz)], nz, ACC32).bits, 0, "-0 * -0 + -0 = +0");
        assert_eq!(dot(&[(f32in(2.0), f32in(3.0))], f32in(-6.0), ACC32), Out { bits: 0, quality: Quality::Exact });
    }

    #[test]
    fn f16_destination_and_overflow() {
        let acc = Accumulation { acc: F16, dest: F16, round: Round::Nearest };
        let r = dot(&[(f16(3.0), f16(5.0))], f16(-1.0), acc);
        assert_eq!(r, Out { bits: rustc_apfloat_f16(14.0) as u128, quality: Quality::Exact });
        let r = dot(&[(f16(300.0), f16(300.0))], f16(0.0), acc);
        assert_eq!(r.bits, 0x7c00, "90000 overflows f16 to +inf");
        assert_ne!(r.quality, Quality::Exact);
    }

    #[test]
    fn directed_rounding_of_f64() {
        let d = |x: f64| Input { num: Num::decode(x.to_bits(), 11, 52, true), quality: Quality::Exact, rel_uncertainty: 0.0 };
        let third = 1.0 / 3.0;
        for (round, want) in [(Round::Nearest, 1.0 / 3.0 * 3.0), (Round::Zero, 0.9999999999999999), (Round::Up, 1.0)] {
            let acc = Accumulation { acc: F64, dest: F64, round };
            let r = dot(&[(d(third), d(3.0))], d(0.0), acc);
            assert_eq!(f64::from_bits(r.bits as u64), want, "{round:?}");
        }
    }
}
