//! Semantics of the convert family (see `mod.rs`): `cvt` (§9.7.9.21) and
//! `cvt.pack` (§9.7.9.22).
//!
//! Every conversion goes through an exact intermediate: integers are
//! `i128`, every floating-point source (`.f16 .bf16 .f32 .f64` and the
//! 4/6/8-bit formats) is exactly representable as an IEEE double. Rounding
//! into `.f16 .bf16 .f32 .f64` and conversions to and from integers use
//! `rustc_apfloat`; rounding into `.tf32`, `.e4m3 .e5m2 .e2m1 .e2m3 .e3m2`
//! and `.ue8m0` is done by hand ([`round_mag`], cross-checked in the tests
//! against `rustc_apfloat` on every format both can express).
//!
//! Readings of the manual this file relies on:
//! - Integer sources are extended by the *source type* (`cvt.u32.s8`
//!   sign-extends), and narrowing chops; `.sat` clamps to the destination
//!   range. Sources are masked to the source type's width.
//! - Float-to-integer conversions saturate to the destination range
//!   (`.sat` is redundant) and turn NaN into 0.
//! - `.ftz` (only when `.atype` or `.dtype` is `.f32`) flushes subnormal
//!   `.f32` inputs and `.f32` results to sign-preserving zero. Whether a
//!   result that rounds *up* to the smallest normal from below is flushed is
//!   not said (tininess before or after rounding): that case is
//!   `Unspecified`. sm_1x and PTX 1.4 flushing rules are not modelled.
//! - A rounding modifier the manual makes mandatory but which is not written
//!   (legacy `cvt.f32.s32`, `cvt.s32.f32`): the result is exact when every
//!   rounding mode agrees, `Unspecified` otherwise.
//! - NaN results are `AnyNan` (the manual promises "a NaN"; `.relu`'s
//!   "canonical NaN" has no encoding in the manual for these formats), except
//!   `.sat` (NaN -> +0.0), float-to-integer (0), the NaN-free 4/6-bit formats
//!   under `.satfinite` (+MAX_NORM) and `.ue8m0` (its only NaN, 0xff).
//! - `.sat` gives +0.0 for negative results and `.relu` gives +0 for negative
//!   results; whether a *negative zero* result stays -0 or becomes +0 is not
//!   said: `Unspecified`.
//! - `.tf32`: "the internal layout of the tf32 format is implementation
//!   defined" (§5.2.3), so every `.tf32` result is `Unspecified`; its bits are
//!   the natural encoding (the `.f32` layout with the low 13 bits zero).
//! - `.rs` (stochastic rounding) is evaluated for `.f16x2` and `.bf16x2`,
//!   whose random-bit layout the text gives: the 13 (`.f16`) or 16 (`.bf16`)
//!   random bits are added to the same number of discarded low mantissa bits
//!   of the `.f32` input and the carry rounds away from zero. For `.f16`
//!   results outside the normal range (or `.f32` subnormal inputs) the
//!   discarded bits are more than 13 and the manual does not say how the
//!   random bits align: `Unspecified`. The `x4` forms' layout is only in the
//!   manual's figures: `Unsupported`.

use super::bits::{mask, sext, signed, trunc};
use super::{arity, Eval, EvalError, EvalResult, Quality, Val};
use crate::ir::Instruction;
use crate::isa::{Mod, Opcode, Rounding, ScalarType, SlotRole};
use rustc_apfloat::ieee::{BFloat, Double, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round, StatusAnd};
use std::cmp::Ordering;

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[Opcode::CVT, Opcode::CVT_PACK];

/// Evaluates `ins` if it belongs to this family.
pub fn eval(ins: &Instruction, srcs: &[u128], _carry_in: bool) -> Option<EvalResult> {
    match ins.opcode {
        Opcode::CVT => Some(cvt(ins, srcs)),
        Opcode::CVT_PACK => Some(cvt_pack(ins, srcs)),
        _ => None,
    }
}

/// Converts a double to a 16-bit float format (`.f16` or `.bf16`), rounding to nearest even.
///
/// Any other type gets the `.f16` encoding (no PTX literal gives the packed
/// 8/6/4-bit formats a meaning).
pub fn f64_to_format_bits(v: f64, ty: ScalarType) -> u16 {
    let t = if ty == ScalarType::Bf16 { ScalarType::Bf16 } else { ScalarType::F16 };
    from_double(Double::from_bits(v.to_bits() as u128), t, Round::NearestTiesToEven) as u16
}

// ---------------------------------------------------------------------------
// Results, modifiers, rounding modes
// ---------------------------------------------------------------------------

use ScalarType as T;

const NTE: Round = Round::NearestTiesToEven;
const NTA: Round = Round::NearestTiesToAway;
const RZ: Round = Round::TowardZero;
const RP: Round = Round::TowardPositive;
const RM: Round = Round::TowardNegative;

fn exact(bits: u128) -> Val {
    Val::exact(bits)
}

fn any_nan(bits: u128) -> Val {
    Val { bits, quality: Quality::AnyNan }
}

fn unspec() -> Val {
    Val::unspecified()
}

fn unsupported<X>(why: impl Into<String>) -> Result<X, EvalError> {
    Err(EvalError::Unsupported(why.into()))
}

fn rank(q: Quality) -> u8 {
    match q {
        Quality::Exact => 0,
        Quality::AnyNan => 1,
        Quality::Approx { .. } => 2,
        Quality::Unspecified => 3,
    }
}

/// Packs lanes `(value, bit offset)` into one value. The quality is the worst
/// lane's: for a packed result, `AnyNan` means the lanes holding a NaN may
/// hold any NaN and the others are exact.
fn pack(lanes: &[(Val, u32)]) -> Val {
    let mut bits = 0;
    let mut quality = Quality::Exact;
    for (v, sh) in lanes {
        bits |= v.bits << sh;
        if rank(v.quality) > rank(quality) {
            quality = v.quality;
        }
    }
    Val { bits, quality }
}

fn with_quality(v: Val, q: Quality) -> Val {
    if rank(q) > rank(v.quality) {
        Val { bits: v.bits, quality: q }
    } else {
        v
    }
}

/// The modifiers of a `cvt` besides its types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mods {
    rnd: Option<Rounding>,
    ftz: bool,
    sat: bool,
    relu: bool,
    satfinite: bool,
}

fn mods(ins: &Instruction) -> Result<Mods, EvalError> {
    let mut m = Mods { rnd: ins.rounding(), ..Mods::default() };
    for (role, md) in ins.modifiers() {
        match role {
            SlotRole::Type | SlotRole::Rounding => {}
            _ if md == Mod::FTZ => m.ftz = true,
            _ if md == Mod::SAT => m.sat = true,
            _ if md == Mod::RELU => m.relu = true,
            _ if md == Mod::SATFINITE => m.satfinite = true,
            _ => return unsupported(format!("`{}` with `{}`", ins.opcode.name(), md.text())),
        }
    }
    Ok(m)
}

/// The `rustc_apfloat` rounding of a PTX rounding modifier (`.rs` has none).
pub(crate) fn round_of(r: Rounding) -> Option<Round> {
    Some(match r {
        Rounding::Rn | Rounding::Rni => NTE,
        Rounding::Rz | Rounding::Rzi => RZ,
        Rounding::Rm | Rounding::Rmi => RM,
        Rounding::Rp | Rounding::Rpi => RP,
        Rounding::Rna => NTA,
        Rounding::Rs => return None,
    })
}

/// Evaluates `f` in the given rounding mode; with none written, in every
/// mode: the value when they all agree, `Unspecified` when they do not.
fn by_mode(r: Option<Round>, f: impl Fn(Round) -> Val) -> Val {
    match r {
        Some(r) => f(r),
        None => {
            let v = f(NTE);
            if [RZ, RM, RP].iter().all(|&r| f(r) == v) {
                v
            } else {
                unspec()
            }
        }
    }
}

// ---------------------------------------------------------------------------
// IEEE binary formats (.f16 .bf16 .f32 .f64) on raw bits
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fmt {
    width: u32,
    man: u32,
    exp: u32,
}

impl Fmt {
    const HALF: Fmt = Fmt { width: 16, man: 10, exp: 5 };
    const BF16: Fmt = Fmt { width: 16, man: 7, exp: 8 };
    const SINGLE: Fmt = Fmt { width: 32, man: 23, exp: 8 };
    const DOUBLE: Fmt = Fmt { width: 64, man: 52, exp: 11 };

    fn of(t: ScalarType) -> Fmt {
        match t {
            T::F16 => Fmt::HALF,
            T::Bf16 => Fmt::BF16,
            T::F32 => Fmt::SINGLE,
            _ => Fmt::DOUBLE,
        }
    }
    fn sign(self) -> u128 {
        1 << (self.width - 1)
    }
    fn abs(self) -> u128 {
        self.sign() - 1
    }
    fn inf(self) -> u128 {
        mask(self.exp) << self.man
    }
    fn max(self) -> u128 {
        self.inf() - 1
    }
    fn min_normal(self) -> u128 {
        1 << self.man
    }
    fn one(self) -> u128 {
        mask(self.exp - 1) << self.man
    }
    /// The NaN given as the bits of an `AnyNan` result (the all-ones quiet NaN).
    fn nan(self) -> u128 {
        self.abs()
    }
    fn is_nan(self, b: u128) -> bool {
        b & self.abs() > self.inf()
    }
    fn is_neg(self, b: u128) -> bool {
        b & self.sign() != 0
    }
    fn is_subnormal(self, b: u128) -> bool {
        let m = b & self.abs();
        m != 0 && m < self.min_normal()
    }
}

/// `.relu`: negative results become +0 (a negative zero: `Unspecified`);
/// NaN results are the canonical NaN (`AnyNan`).
fn relu(b: u128, f: Fmt) -> Val {
    if f.is_nan(b) {
        any_nan(f.nan())
    } else if f.is_neg(b) {
        if b & f.abs() == 0 {
            unspec()
        } else {
            exact(0)
        }
    } else {
        exact(b)
    }
}

/// `.sat` on a float result: clamps to [0.0, 1.0], NaN -> +0.0 (a negative
/// zero: `Unspecified`).
fn sat_float(b: u128, f: Fmt) -> Val {
    if f.is_nan(b) {
        exact(0)
    } else if f.is_neg(b) {
        if b & f.abs() == 0 {
            unspec()
        } else {
            exact(0)
        }
    } else if b > f.one() {
        exact(f.one())
    } else {
        exact(b)
    }
}

/// A value of `.f16 .bf16 .f32 .f64` as an (exact) double: on the bits
/// ([`super::ieee_bits`]), NaNs through `rustc_apfloat`.
fn to_double(b: u128, t: ScalarType) -> Double {
    match super::ieee_bits::to_f64(b, t) {
        Some(x) => Double::from_bits(x.to_bits() as u128),
        None => to_double_apfloat(b, t),
    }
}

/// [`to_double`] through `rustc_apfloat` (what the bit algorithm is checked against).
pub(super) fn to_double_apfloat(b: u128, t: ScalarType) -> Double {
    let mut lost = false;
    match t {
        T::F16 => {
            let r: StatusAnd<Double> = Half::from_bits(b).convert_r(NTE, &mut lost);
            r.value
        }
        T::Bf16 => {
            let r: StatusAnd<Double> = BFloat::from_bits(b).convert_r(NTE, &mut lost);
            r.value
        }
        T::F32 => {
            let r: StatusAnd<Double> = Single::from_bits(b).convert_r(NTE, &mut lost);
            r.value
        }
        _ => Double::from_bits(b),
    }
}

/// Rounds a double into `.f16 .bf16 .f32 .f64`: on the bits
/// ([`super::ieee_bits`]), NaNs through `rustc_apfloat`.
fn from_double(x: Double, t: ScalarType, r: Round) -> u128 {
    match super::ieee_bits::from_f64(f64::from_bits(x.to_bits() as u64), t, r) {
        Some(b) => b,
        None => from_double_apfloat(x, t, r),
    }
}

/// [`from_double`] through `rustc_apfloat`.
pub(super) fn from_double_apfloat(x: Double, t: ScalarType, r: Round) -> u128 {
    let mut lost = false;
    match t {
        T::F16 => {
            let v: StatusAnd<Half> = x.convert_r(r, &mut lost);
            v.value.to_bits()
        }
        T::Bf16 => {
            let v: StatusAnd<BFloat> = x.convert_r(r, &mut lost);
            v.value.to_bits()
        }
        T::F32 => {
            let v: StatusAnd<Single> = x.convert_r(r, &mut lost);
            v.value.to_bits()
        }
        _ => x.to_bits(),
    }
}

/// Rounds an integer into `.f16 .bf16 .f32 .f64`: on the bits up to 2^53
/// ([`super::ieee_bits`]), beyond through `rustc_apfloat`.
fn from_int(v: i128, t: ScalarType, r: Round) -> u128 {
    match super::ieee_bits::from_i128(v, t, r) {
        Some(b) => b,
        None => from_int_apfloat(v, t, r),
    }
}

/// [`from_int`] through `rustc_apfloat`.
pub(super) fn from_int_apfloat(v: i128, t: ScalarType, r: Round) -> u128 {
    match t {
        T::F16 => Half::from_i128_r(v, r).value.to_bits(),
        T::Bf16 => BFloat::from_i128_r(v, r).value.to_bits(),
        T::F32 => Single::from_i128_r(v, r).value.to_bits(),
        _ => Double::from_i128_r(v, r).value.to_bits(),
    }
}

fn gt(a: Double, b: Double) -> bool {
    a.partial_cmp(&b) == Some(Ordering::Greater)
}

fn lt(a: Double, b: Double) -> bool {
    a.partial_cmp(&b) == Some(Ordering::Less)
}

/// Does an IEEE format with infinities overflow to infinity (rather than to
/// its largest finite value) in this rounding mode?
pub(super) fn overflows_to_inf(r: Round, neg: bool) -> bool {
    match r {
        Round::NearestTiesToEven | Round::NearestTiesToAway => true,
        Round::TowardZero => false,
        Round::TowardPositive => !neg,
        Round::TowardNegative => neg,
    }
}

// ---------------------------------------------------------------------------
// Rounding by hand into narrow binary formats
// ---------------------------------------------------------------------------

/// Rounds a finite double to a binary format with `man` stored mantissa
/// bits, subnormals, and `emin` the exponent of its smallest normal, with
/// an unbounded exponent range above. Returns the magnitude code (biased
/// exponent `<< man | mantissa`, biased exponent 0 for subnormals; larger
/// than the format's largest code on overflow) and whether it is inexact.
/// The directed modes use the sign of `x`.
pub(super) fn round_mag(x: f64, man: u32, emin: i32, r: Round) -> (u64, bool) {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let b = bits & !(1u64 << 63);
    if b == 0 {
        return (0, false);
    }
    let be = (b >> 52) as i32;
    // |x| = m * 2^e2
    let (m, e2) = if be == 0 { (b, -1074) } else { ((b & ((1u64 << 52) - 1)) | (1u64 << 52), be - 1075) };
    let e = e2 + (63 - m.leading_zeros() as i32);
    let eq = e.max(emin);
    let q = eq - man as i32; // the exponent of the result's last place
    let m = m as u128;
    let (n, half, sticky) = if e2 >= q {
        (m << (e2 - q) as u32, false, false)
    } else {
        let s = (q - e2) as u32;
        if s >= 128 {
            (0, false, true)
        } else {
            (m >> s, (m >> (s - 1)) & 1 == 1, m & mask(s - 1) != 0)
        }
    };
    let inexact = half || sticky;
    let up = match r {
        Round::NearestTiesToEven => half && (sticky || n & 1 == 1),
        Round::NearestTiesToAway => half,
        Round::TowardZero => false,
        Round::TowardPositive => inexact && !neg,
        Round::TowardNegative => inexact && neg,
    };
    let code = (((eq - emin) as u64) << man) + n as u64 + up as u64;
    (code, inexact)
}

/// How a narrow format encodes its special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Special {
    /// Infinities and NaNs at the largest exponent (`.e5m2`).
    Ieee,
    /// No infinity; NaN is all ones (`.e4m3`).
    NanOnly,
    /// No infinity, no NaN (`.e2m1 .e2m3 .e3m2`).
    Finite,
}

/// A narrow signed binary format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Small {
    width: u32,
    man: u32,
    /// The exponent of the smallest normal (1 - bias).
    emin: i32,
    special: Special,
}

impl Small {
    const E4M3: Small = Small { width: 8, man: 3, emin: -6, special: Special::NanOnly };
    const E5M2: Small = Small { width: 8, man: 2, emin: -14, special: Special::Ieee };
    const E2M1: Small = Small { width: 4, man: 1, emin: 0, special: Special::Finite };
    const E2M3: Small = Small { width: 6, man: 3, emin: 0, special: Special::Finite };
    const E3M2: Small = Small { width: 6, man: 2, emin: -2, special: Special::Finite };

    fn sign(self) -> u32 {
        1 << (self.width - 1)
    }
    fn exp_bits(self) -> u32 {
        self.width - 1 - self.man
    }
    /// The largest finite magnitude code (MAX_NORM).
    fn max_code(self) -> u32 {
        match self.special {
            Special::Ieee => (((1 << self.exp_bits()) - 1) << self.man) - 1,
            Special::NanOnly => self.sign() - 2,
            Special::Finite => self.sign() - 1,
        }
    }
    /// The value of a finite magnitude code.
    fn value(self, mag: u32) -> f64 {
        let e = (mag >> self.man) as i32;
        let m = (mag & ((1 << self.man) - 1)) as f64;
        if e == 0 {
            m * 2f64.powi(self.emin - self.man as i32)
        } else {
            (m + (1u32 << self.man) as f64) * 2f64.powi(e - 1 + self.emin - self.man as i32)
        }
    }
    /// Decodes a code: `None` for NaN.
    fn decode(self, code: u32) -> Option<f64> {
        let neg = code & self.sign() != 0;
        let mag = code & (self.sign() - 1);
        let v = match self.special {
            Special::NanOnly if mag == self.sign() - 1 => return None,
            Special::Ieee if mag >> self.man == (1 << self.exp_bits()) - 1 => {
                if mag & ((1 << self.man) - 1) != 0 {
                    return None;
                }
                f64::INFINITY
            }
            _ => self.value(mag),
        };
        Some(if neg { -v } else { v })
    }
}

/// Converts a value (exact as a double) to a narrow format with `.rn` and
/// `.satfinite`, optionally `.relu`.
fn to_small(x: f64, s: Small, relu: bool) -> Val {
    if x.is_nan() {
        return match s.special {
            // "NaN results are converted to positive MAX_NORM."
            Special::Finite => exact(s.max_code() as u128),
            _ => any_nan((s.sign() - 1) as u128),
        };
    }
    let neg = x.is_sign_negative();
    let code = if x.abs() > s.value(s.max_code()) {
        s.max_code()
    } else {
        round_mag(x, s.man, s.emin, NTE).0 as u32
    };
    if relu && neg {
        if code == 0 {
            unspec()
        } else {
            exact(0)
        }
    } else {
        exact((if neg { s.sign() } else { 0 } | code) as u128)
    }
}

/// Converts a narrow-format code to `.f16` (exact), optionally with `.relu`.
fn small_to_f16(code: u32, s: Small, relu_: bool) -> Val {
    let b = match s.decode(code) {
        None => return any_nan(Fmt::HALF.nan()),
        Some(v) => from_double(Double::from_bits(v.to_bits() as u128), T::F16, NTE),
    };
    if relu_ {
        relu(b, Fmt::HALF)
    } else {
        exact(b)
    }
}

/// `.f32` to `.tf32` (rounded in `r`; `.satfinite`, `.relu`). The bits are
/// the `.f32` layout with the low 13 bits zero; the quality is
/// `Unspecified` because the manual leaves the layout implementation-defined.
fn to_tf32(x: u128, r: Round, m: &Mods) -> Val {
    const TF32_LAYOUT_DEFINED: bool = false;
    let f = Fmt::SINGLE;
    let v = if f.is_nan(x) {
        any_nan(f.nan())
    } else {
        let neg = f.is_neg(x);
        let sign = x & f.sign();
        let abs = x & f.abs();
        const MAX: u128 = 0x7f7f_e000;
        let b = if m.satfinite && abs > MAX {
            sign | MAX
        } else if abs == f.inf() {
            x
        } else {
            let (code, _) = round_mag(f32::from_bits(x as u32) as f64, 10, -126, r);
            let code = code as u128;
            if code > MAX >> 13 {
                sign | if overflows_to_inf(r, neg) { f.inf() } else { MAX }
            } else {
                sign | code << 13
            }
        };
        if m.relu {
            relu(b, f)
        } else {
            exact(b)
        }
    };
    if TF32_LAYOUT_DEFINED {
        v
    } else {
        with_quality(v, Quality::Unspecified)
    }
}

/// `.f32` to `.ue8m0` (`.rz` or `.rp`, optional `.satfinite`): 2^(code-127),
/// no zero, no sign, NaN = 0xff.
fn to_ue8m0(x: u128, r: Round, satfinite: bool) -> Val {
    let f = Fmt::SINGLE;
    if f.is_nan(x) {
        return exact(0xff);
    }
    let abs = (x & f.abs()) as u32;
    // |x| > MAX_NORM = 2^127: positive MAX_NORM ("the destination sign is not supported").
    if satfinite && abs > 0x7f00_0000 {
        return exact(0xfe);
    }
    // Zero, negative values and infinity have no conversion in the manual.
    if f.is_neg(x) || abs == 0 || abs == 0x7f80_0000 {
        return unspec();
    }
    let (e, pow2) = if abs < 0x0080_0000 {
        (31 - abs.leading_zeros() as i32 - 149, abs.is_power_of_two())
    } else {
        ((abs >> 23) as i32 - 127, abs & 0x7f_ffff == 0)
    };
    let code = (if r == RP && !pow2 { e + 1 } else { e }) + 127;
    match r {
        // Every value at or below 2^-127 rounds up to it.
        _ if r == RP && code < 0 => exact(0),
        // Below 2^-127 toward zero: no representable result.
        _ if code < 0 => unspec(),
        // Overflow without .satfinite: the manual gives no value.
        _ if code > 0xfe => unspec(),
        _ => exact(code as u128),
    }
}

fn ue8m0_to_bf16(c: u128) -> Val {
    match c & 0xff {
        0xff => any_nan(Fmt::BF16.nan()),
        // 2^-127 is a bf16 subnormal.
        0 => exact(0x0040),
        c => exact(c << 7),
    }
}

/// `.rs` from `.f32` to `.f16`/`.bf16` with the lane's random bits `rb`
/// (13 or 16 bits): the carry of `rb` plus the discarded low mantissa bits
/// rounds away from zero.
fn rs_lane(x: u128, rb: u128, t: ScalarType, m: &Mods) -> Val {
    let s = Fmt::SINGLE;
    let f = Fmt::of(t);
    let post = |b: u128| if m.relu { relu(b, f) } else { exact(b) };
    let x = x & 0xffff_ffff;
    if s.is_nan(x) {
        return any_nan(f.nan());
    }
    let sign = if s.is_neg(x) { f.sign() } else { 0 };
    let abs = x & s.abs();
    // MAX_NORM of the destination as an f32 bit pattern.
    let max32 = to_f32_bits(f.max(), t);
    if m.satfinite && abs > max32 {
        return post(sign | f.max());
    }
    if abs == s.inf() {
        return post(sign | f.inf());
    }
    if abs == 0 {
        return post(sign);
    }
    match t {
        T::Bf16 => {
            let carry = ((abs & 0xffff) + (rb & 0xffff)) >> 16;
            post(sign | ((abs >> 16) + carry))
        }
        _ => {
            // "13 LSBs ... with the 3 MSBs being 0".
            if rb & 0xe000 != 0 {
                return unspec();
            }
            let e = (abs >> 23) as i32 - 127;
            // Subnormal (or zero) .f16 results and f32 subnormal inputs:
            // the random bits' alignment is not given.
            if abs < 0x0080_0000 || e < -14 {
                return unspec();
            }
            // |x| >= 2^16 without .satfinite: MAX_NORM or infinity, not said.
            if e > 15 {
                return unspec();
            }
            let code = ((((e + 15) as u128) << 10) | ((abs >> 13) & 0x3ff)) + (((abs & 0x1fff) + rb) >> 13);
            post(sign | code)
        }
    }
}

fn to_f32_bits(b: u128, t: ScalarType) -> u128 {
    from_double(to_double(b, t), T::F32, NTE)
}

// ---------------------------------------------------------------------------
// cvt
// ---------------------------------------------------------------------------

fn is_int(t: ScalarType) -> bool {
    matches!(t, T::U8 | T::U16 | T::U32 | T::U64 | T::S8 | T::S16 | T::S32 | T::S64)
}

fn is_float(t: ScalarType) -> bool {
    matches!(t, T::F16 | T::Bf16 | T::F32 | T::F64)
}

fn int_range(t: ScalarType) -> (i128, i128) {
    let w = t.bits();
    if signed(t) {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

fn int_value(a: u128, t: ScalarType) -> i128 {
    if signed(t) {
        sext(a, t.bits())
    } else {
        trunc(a, t.bits()) as i128
    }
}

fn one(v: Val) -> EvalResult {
    Ok(Eval::one(v))
}

fn cvt(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let m = mods(ins)?;
    let ts = ins.types();
    if ts.len() != 2 {
        return Err(EvalError::BadOperands(format!("`cvt` with {} types", ts.len())));
    }
    let (d, a) = (ts[0], ts[1]);
    if m.rnd == Some(Rounding::Rs) && !matches!((d, a), (T::F16x2 | T::Bf16x2, T::F32)) {
        return unsupported(format!(
            "`cvt.rs{}{}`: `.rs` is evaluated for .f16x2/.bf16x2 only; the manual gives the random-bit layout of the x4 forms only in figures (which operand uses which bits, and their alignment to the discarded mantissa bits)",
            d.text(),
            a.text()
        ));
    }
    match (d, a) {
        _ if (is_float(d) || is_int(d)) && (is_float(a) || is_int(a)) => {
            arity(srcs, 1, ins)?;
            one(ScalarCvt::new(d, a, &m)?.apply(srcs[0]))
        }
        (T::F16x2 | T::Bf16x2, T::F32) => {
            let lane_ty = if d == T::F16x2 { T::F16 } else { T::Bf16 };
            if m.ftz || m.sat {
                return unsupported(format!("`cvt{}.f32` with `.ftz`/`.sat`", d.text()));
            }
            let (hi, lo) = if m.rnd == Some(Rounding::Rs) {
                arity(srcs, 3, ins)?;
                let rb = srcs[2];
                (rs_lane(srcs[0], (rb >> 16) & 0xffff, lane_ty, &m), rs_lane(srcs[1], rb & 0xffff, lane_ty, &m))
            } else {
                arity(srcs, 2, ins)?;
                let r = float_rounding(&m, d)?;
                let lane = |x: u128| by_mode(r, |md| f2f_lane(x & 0xffff_ffff, T::F32, lane_ty, md, false, &m));
                (lane(srcs[0]), lane(srcs[1]))
            };
            one(pack(&[(hi, 16), (lo, 0)]))
        }
        (T::Tf32, T::F32) => {
            arity(srcs, 1, ins)?;
            if m.ftz || m.sat {
                return unsupported("`cvt.tf32.f32` with `.ftz`/`.sat`");
            }
            let r = float_rounding(&m, d)?;
            let x = srcs[0] & 0xffff_ffff;
            one(by_mode(r, |md| to_tf32(x, md, &m)))
        }
        (T::E4m3x2 | T::E5m2x2 | T::E2m1x2 | T::E2m3x2 | T::E3m2x2, T::F32 | T::F16x2) => {
            let s = small_of(d);
            narrow_checks(&m, d)?;
            let lanes: [f64; 2] = if a == T::F32 {
                arity(srcs, 2, ins)?;
                [f32::from_bits(srcs[0] as u32) as f64, f32::from_bits(srcs[1] as u32) as f64]
            } else {
                if s.special == Special::Finite {
                    return unsupported(format!("`cvt{}.f16x2` is not in the manual", d.text()));
                }
                arity(srcs, 1, ins)?;
                let h = |b: u128| f64::from_bits(to_double(b & 0xffff, T::F16).to_bits() as u64);
                [h(srcs[0] >> 16), h(srcs[0])]
            };
            let (hi, lo) = (to_small(lanes[0], s, m.relu), to_small(lanes[1], s, m.relu));
            // .e2m1x2 packs two 4-bit halves; the others two bytes (6-bit values zero-padded).
            let step = if d == T::E2m1x2 { 4 } else { 8 };
            one(pack(&[(hi, step), (lo, 0)]))
        }
        (T::F16x2, T::E4m3x2 | T::E5m2x2 | T::E2m1x2 | T::E2m3x2 | T::E3m2x2) => {
            arity(srcs, 1, ins)?;
            if m.ftz || m.sat || m.satfinite {
                return unsupported(format!("`cvt.f16x2{}` with `.ftz`/`.sat`/`.satfinite`", a.text()));
            }
            if !matches!(m.rnd, Some(Rounding::Rn)) {
                return unsupported(format!("`cvt.f16x2{}` without `.rn`", a.text()));
            }
            let s = small_of(a);
            let step = if a == T::E2m1x2 { 4 } else { 8 };
            let lane = |c: u128| {
                let c = (c & mask(step)) as u32;
                // 6-bit values must have their 2 MSBs zero.
                if s.width == 6 && c >> 6 != 0 {
                    unspec()
                } else {
                    small_to_f16(c, s, m.relu)
                }
            };
            one(pack(&[(lane(srcs[0] >> step), 16), (lane(srcs[0]), 0)]))
        }
        (T::Ue8m0x2, T::F32 | T::Bf16x2) => {
            if m.ftz || m.sat || m.relu {
                return unsupported(format!("`cvt.ue8m0x2{}` with `.ftz`/`.sat`/`.relu`", a.text()));
            }
            let r = match m.rnd.and_then(round_of) {
                Some(r @ (RZ | RP)) => r,
                _ => return unsupported("`cvt.ue8m0x2` rounds only with `.rz` or `.rp`"),
            };
            let (x, y) = if a == T::F32 {
                arity(srcs, 2, ins)?;
                (srcs[0] & 0xffff_ffff, srcs[1] & 0xffff_ffff)
            } else {
                arity(srcs, 1, ins)?;
                (((srcs[0] >> 16) & 0xffff) << 16, (srcs[0] & 0xffff) << 16)
            };
            one(pack(&[(to_ue8m0(x, r, m.satfinite), 8), (to_ue8m0(y, r, m.satfinite), 0)]))
        }
        (T::Bf16x2, T::Ue8m0x2) => {
            arity(srcs, 1, ins)?;
            if m.ftz || m.sat || m.relu || m.satfinite {
                return unsupported("`cvt.bf16x2.ue8m0x2` with `.ftz`/`.sat`/`.relu`/`.satfinite`");
            }
            one(pack(&[(ue8m0_to_bf16(srcs[0] >> 8), 16), (ue8m0_to_bf16(srcs[0]), 0)]))
        }
        _ => unsupported(format!("`cvt{}{}`", d.text(), a.text())),
    }
}

fn small_of(t: ScalarType) -> Small {
    match t {
        T::E4m3x2 => Small::E4M3,
        T::E5m2x2 => Small::E5M2,
        T::E2m1x2 => Small::E2M1,
        T::E2m3x2 => Small::E2M3,
        _ => Small::E3M2,
    }
}

/// Conversions to the packed 8/6/4-bit formats are `.rn.satfinite` only.
fn narrow_checks(m: &Mods, d: ScalarType) -> Result<(), EvalError> {
    if m.ftz || m.sat {
        return unsupported(format!("`cvt{}` with `.ftz`/`.sat`", d.text()));
    }
    if !m.satfinite {
        return unsupported(format!("`cvt{}` without `.satfinite` (mandatory)", d.text()));
    }
    if !matches!(m.rnd, Some(Rounding::Rn)) {
        return unsupported(format!("`cvt{}` without `.rn`", d.text()));
    }
    Ok(())
}

/// The floating-point rounding of a conversion to a float type (`None` when
/// none is written); integer rounding is illegal there.
fn float_rounding(m: &Mods, d: ScalarType) -> Result<Option<Round>, EvalError> {
    match m.rnd {
        None => Ok(None),
        Some(r) if r.is_integer() || r == Rounding::Rs => unsupported(format!("`cvt{}{}` (illegal rounding)", r.text(), d.text())),
        Some(r) => Ok(round_of(r)),
    }
}

/// `cvt.d.a` as messages name it (written only when one is).
struct CvtName(ScalarType, ScalarType);

impl std::fmt::Display for CvtName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cvt{}{}", self.0.text(), self.1.text())
    }
}

/// A scalar `cvt` between `.u8`..`.s64` and `.f16 .bf16 .f32 .f64`, its
/// modifiers checked once ([`ScalarCvt::new`]) and its rounding chosen:
/// the evaluator converts each source with [`ScalarCvt::apply`], and so
/// does the interpreter's pre-decoded form of the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarCvt {
    d: ScalarType,
    a: ScalarType,
    m: Mods,
    kind: ScalarKind,
}

/// The kind of a [`ScalarCvt`], with the rounding it applies (`None`: not
/// written, every mode tried).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScalarKind {
    IntToInt,
    FloatToInt(Option<Round>),
    IntToFloat(Option<Round>),
    /// `irnd`: rounding to an integral value of the same type.
    FloatToFloat { r: Option<Round>, irnd: bool },
}

impl ScalarCvt {
    /// The scalar conversion `ins` is, if it is one the evaluator computes
    /// (`None` for every other `cvt`, and for one it rejects).
    pub fn of(ins: &Instruction) -> Option<ScalarCvt> {
        let &[d, a] = ins.types().as_slice() else { return None };
        if !(is_float(d) || is_int(d)) || !(is_float(a) || is_int(a)) {
            return None;
        }
        ScalarCvt::new(d, a, &mods(ins).ok()?).ok()
    }

    /// `cvt.d.a` with modifiers `m`; `Err` for a form the manual does not
    /// define or the evaluator does not take.
    fn new(d: ScalarType, a_ty: ScalarType, m: &Mods) -> Result<ScalarCvt, EvalError> {
        let name = CvtName(d, a_ty);
        if (m.relu || m.satfinite) && !(a_ty == T::F32 && matches!(d, T::F16 | T::Bf16)) {
            return unsupported(format!("`{name}` with `.relu`/`.satfinite`"));
        }
        if m.ftz && a_ty != T::F32 && d != T::F32 {
            return unsupported(format!("`{name}` with `.ftz` (only with .f32)"));
        }
        let kind = match (is_int(d), is_int(a_ty)) {
            (true, true) => {
                if let Some(r) = m.rnd {
                    return unsupported(format!("`{name}` with `{}` (illegal on integer-to-integer)", r.text()));
                }
                if m.ftz {
                    return unsupported(format!("`{name}` with `.ftz`"));
                }
                ScalarKind::IntToInt
            }
            (true, false) => ScalarKind::FloatToInt(match m.rnd {
                None => None,
                Some(r) if r.is_integer() => round_of(r),
                Some(r) => return unsupported(format!("`{name}` with `{}` (float-to-integer needs an integer rounding)", r.text())),
            }),
            (false, true) => {
                let r = float_rounding(m, d)?;
                if m.sat && d == T::Bf16 {
                    return unsupported(format!("`{name}` with `.sat` (applies to .f16, .f32, .f64)"));
                }
                ScalarKind::IntToFloat(r)
            }
            (false, false) => {
                let irnd = matches!(m.rnd, Some(r) if r.is_integer());
                if irnd && a_ty != d {
                    return unsupported(format!("`{name}` with integer rounding between different types"));
                }
                if m.sat && d == T::Bf16 {
                    return unsupported(format!("`{name}` with `.sat` (applies to .f16, .f32, .f64)"));
                }
                if m.sat && (m.relu || m.satfinite) {
                    return unsupported(format!("`{name}` with `.sat` and `.relu`/`.satfinite`"));
                }
                let r = if irnd { m.rnd.and_then(round_of) } else { float_rounding(m, d)? };
                ScalarKind::FloatToFloat { r, irnd }
            }
        };
        Ok(ScalarCvt { d, a: a_ty, m: *m, kind })
    }

    /// The conversion of the source bits `a` (masked to the source type).
    pub fn apply(&self, a: u128) -> Val {
        let (d, a_ty, m) = (self.d, self.a, &self.m);
        let a = a & mask(a_ty.bits());
        match self.kind {
            ScalarKind::IntToInt => {
                let v = int_value(a, a_ty);
                let v = if m.sat {
                    let (lo, hi) = int_range(d);
                    v.clamp(lo, hi)
                } else {
                    v
                };
                exact(trunc(v as u128, d.bits()))
            }
            ScalarKind::FloatToInt(r) => {
                let fa = Fmt::of(a_ty);
                let mut a = a;
                if m.ftz && fa.is_subnormal(a) {
                    a &= fa.sign();
                }
                if fa.is_nan(a) {
                    return exact(0);
                }
                let x = to_double(a, a_ty);
                let (lo, hi) = int_range(d);
                by_mode(r, |md| {
                    let i = x.round_to_integral(md).value;
                    let mut is_exact = false;
                    let v = i.to_i128_r(128, RZ, &mut is_exact).value;
                    exact(trunc(v.clamp(lo, hi) as u128, d.bits()))
                })
            }
            ScalarKind::IntToFloat(r) => {
                let v = int_value(a, a_ty);
                let f = Fmt::of(d);
                by_mode(r, |md| {
                    let b = from_int(v, d, md);
                    if m.sat {
                        sat_float(b, f)
                    } else {
                        exact(b)
                    }
                })
            }
            ScalarKind::FloatToFloat { r, irnd } => by_mode(r, |md| f2f_lane(a, a_ty, d, md, irnd, m)),
        }
    }
}

/// A float-to-float conversion in rounding mode `r` (`irnd`: round to an
/// integral value of the same type).
fn f2f_lane(a: u128, a_ty: ScalarType, d: ScalarType, r: Round, irnd: bool, m: &Mods) -> Val {
    let (fa, fd) = (Fmt::of(a_ty), Fmt::of(d));
    let mut a = a & mask(fa.width);
    if fa.is_nan(a) {
        return if m.sat { exact(0) } else { any_nan(fd.nan()) };
    }
    if m.ftz && a_ty == T::F32 && fa.is_subnormal(a) {
        a &= fa.sign();
    }
    let x = to_double(a, a_ty);
    let sign = if fa.is_neg(a) { fd.sign() } else { 0 };
    let post = |b: u128| {
        if m.relu {
            relu(b, fd)
        } else if m.sat {
            sat_float(b, fd)
        } else {
            exact(b)
        }
    };
    // .satfinite: |x| > MAX_NORM (infinities included) gives sign-preserved MAX_NORM.
    if m.satfinite && gt(x.abs(), to_double(fd.max(), d)) {
        return post(sign | fd.max());
    }
    let mut b = if irnd { from_double(x.round_to_integral(r).value, d, NTE) } else { from_double(x, d, r) };
    let mut q = Quality::Exact;
    if m.ftz && d == T::F32 {
        if fd.is_subnormal(b) {
            b &= fd.sign();
        } else if b & fd.abs() == fd.min_normal() && lt(x.abs(), to_double(fd.min_normal(), T::F32)) {
            // Rounded up to the smallest normal from a subnormal value:
            // flushed or not depends on when tininess is detected.
            q = Quality::Unspecified;
        }
    }
    with_quality(post(b), q)
}

// ---------------------------------------------------------------------------
// cvt.pack
// ---------------------------------------------------------------------------

fn cvt_pack(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let ts = ins.types();
    let Some(&ct) = ts.first() else {
        return Err(EvalError::BadOperands("`cvt.pack` without types".into()));
    };
    if ts.get(1).is_some_and(|&t| t != T::S32) {
        return unsupported(format!("`cvt.pack` from `{}`", ts[1].text()));
    }
    for (role, md) in ins.modifiers() {
        if role != SlotRole::Type && md != Mod::SAT {
            return unsupported(format!("`cvt.pack` with `{}`", md.text()));
        }
    }
    if !ins.has(Mod::SAT) {
        return unsupported("`cvt.pack` without `.sat`");
    }
    let size = ct.bits();
    if !matches!(ct, T::U2 | T::S2 | T::U4 | T::S4 | T::U8 | T::S8 | T::U16 | T::S16) {
        return unsupported(format!("`cvt.pack{}`", ct.text()));
    }
    arity(srcs, if size == 16 { 2 } else { 3 }, ins)?;
    let (lo, hi) = int_range(ct);
    let ta = sext(srcs[0], 32).clamp(lo, hi) as u128 & mask(size);
    let tb = sext(srcs[1], 32).clamp(lo, hi) as u128 & mask(size);
    let td = (ta << size) | tb;
    let d = if size == 16 { td } else { td | (srcs[2] << (2 * size)) };
    Ok(Eval::exact(d & 0xffff_ffff))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_apfloat::ieee::{Float8E4M3FN, Float8E5M2};
    use rustc_apfloat::Status;

    // ------------------------------------------------------------------
    // Helpers
    // ------------------------------------------------------------------

    fn ins(body: &str) -> Instruction {
        let text = format!(
            ".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k() {{ .reg .b32 %r<20>; .reg .b64 %rd<9>; .reg .b16 %h<9>; .reg .f32 %f<9>; .reg .f64 %fd<9>; {body} ret; }}"
        );
        let m = crate::parse::parse_str(&text).unwrap_or_else(|e| panic!("{body}: {e:?}"));
        for it in &m.items {
            if let crate::ir::Item::Func(f) = it {
                if let Some(i) = f.instructions().next() {
                    return i.clone();
                }
            }
        }
        panic!("no instruction in {body}")
    }

    fn run(t: &str, srcs: &[u128]) -> Val {
        let i = ins(t);
        let e = eval(&i, srcs, false).expect("convert family").unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(e.dests.len(), 1);
        e.dests[0]
    }

    /// The exact result.
    fn ex(t: &str, srcs: &[u128]) -> u128 {
        let v = run(t, srcs);
        assert_eq!(v.quality, Quality::Exact, "{t} {srcs:#x?}: {v:x?}");
        v.bits
    }

    #[track_caller]
    fn chk(t: &str, srcs: &[u128], want: u128) {
        let got = ex(t, srcs);
        assert_eq!(got, want, "{t} {srcs:#x?}: got {got:#x}, want {want:#x}");
    }

    #[track_caller]
    fn quality(t: &str, srcs: &[u128]) -> Quality {
        run(t, srcs).quality
    }

    #[track_caller]
    fn unspecified(t: &str, srcs: &[u128]) {
        assert_eq!(quality(t, srcs), Quality::Unspecified, "{t} {srcs:#x?}");
    }

    /// Some NaN of the format `f` in the lane at `shift`.
    #[track_caller]
    fn nan_lane(t: &str, srcs: &[u128], f: Fmt, shift: u32) {
        let v = run(t, srcs);
        assert_eq!(v.quality, Quality::AnyNan, "{t} {srcs:#x?}: {v:x?}");
        assert!(f.is_nan((v.bits >> shift) & mask(f.width)), "{t}: {:#x} is not a NaN", v.bits);
    }

    #[track_caller]
    fn unsupported_(t: &str) {
        let r = eval(&ins(t), &[0; 6], false).expect("convert family");
        assert!(matches!(r, Err(EvalError::Unsupported(_))), "{t}: {r:?}");
    }

    fn f(x: f32) -> u128 {
        x.to_bits() as u128
    }
    fn d(x: f64) -> u128 {
        x.to_bits() as u128
    }
    fn i32_(x: i32) -> u128 {
        x as u32 as u128
    }
    fn i64_(x: i64) -> u128 {
        x as u64 as u128
    }
    fn p2(e: i32) -> f64 {
        2f64.powi(e)
    }

    use crate::eval::test_rng::Rng;
    impl Rng {
        /// A double with exponent in [lo, hi], often with few mantissa bits (ties, exact values).
        fn double(&mut self, lo: i32, hi: i32) -> f64 {
            let r = self.next();
            let e = lo + (r % ((hi - lo + 1) as u64)) as i32;
            let mut m = self.next() >> 12;
            if r & 0x300 != 0 {
                let keep = (self.next() % 30) as u32;
                m &= !((1u64 << (52 - keep)) - 1);
            }
            let v = f64::from_bits((1023u64 << 52) | m) * p2(e);
            if r & 0x400 != 0 {
                -v
            } else {
                v
            }
        }
        /// Any f32 bit pattern, biased toward interesting ones.
        fn f32_bits(&mut self) -> u32 {
            let r = self.next();
            match r % 8 {
                0 => (r >> 32) as u32,
                1 => ((r >> 32) as u32) & 0x807f_ffff, // subnormals
                2 => ((r >> 32) as u32) | 0x7f80_0000, // NaN / inf
                _ => (self.double(-30, 66) as f32).to_bits(),
            }
        }
    }

    // ------------------------------------------------------------------
    // Integer to integer
    // ------------------------------------------------------------------

    #[test]
    fn int_to_int_extension_by_source_type() {
        chk("cvt.u16.u8 %r1, %r2;", &[0x1ff], 0xff);
        chk("cvt.s32.s8 %r1, %r2;", &[0x80], 0xffff_ff80);
        // Only the source type's low bits count, whatever the register holds.
        chk("cvt.s32.s8 %r1, %r2;", &[0x1234_5680], 0xffff_ff80);
        chk("cvt.s32.s8 %r1, %r2;", &[0x7f], 0x7f);
        chk("cvt.u32.s8 %r1, %r2;", &[0xff], 0xffff_ffff);
        chk("cvt.s32.u8 %r1, %r2;", &[0xff], 0xff);
        chk("cvt.s64.s32 %rd1, %r2;", &[0x8000_0000], 0xffff_ffff_8000_0000);
        chk("cvt.u64.s32 %rd1, %r2;", &[i32_(-1)], u64::MAX as u128);
        chk("cvt.s64.u32 %rd1, %r2;", &[0xffff_ffff], 0xffff_ffff);
        chk("cvt.u64.u32 %rd1, %r2;", &[0xffff_ffff], 0xffff_ffff);
        chk("cvt.s64.s16 %rd1, %r2;", &[0x8000], 0xffff_ffff_ffff_8000);
        chk("cvt.u64.s16 %rd1, %r2;", &[0x7fff], 0x7fff);
    }

    #[test]
    fn int_to_int_truncation() {
        chk("cvt.s8.s32 %r1, %r2;", &[0x1ff], 0xff);
        chk("cvt.u8.u32 %r1, %r2;", &[0x1_0000_0100], 0x00);
        chk("cvt.u16.s64 %r1, %rd2;", &[0x1_2345_6789], 0x6789);
        chk("cvt.u32.u64 %r1, %rd2;", &[0xffff_ffff_0000_0001], 1);
        chk("cvt.s32.s64 %r1, %rd2;", &[i64_(i64::MIN)], 0);
        chk("cvt.s16.s16 %r1, %r2;", &[0x8000], 0x8000);
        chk("cvt.u64.u64 %rd1, %rd2;", &[u64::MAX as u128], u64::MAX as u128);
    }

    #[test]
    fn int_to_int_saturation() {
        let s8 = "cvt.sat.s8.s32 %r1, %r2;";
        chk(s8, &[200], 0x7f);
        chk(s8, &[i32_(-200)], 0x80);
        chk(s8, &[5], 5);
        chk(s8, &[i32_(-5)], 0xfb);
        chk(s8, &[i32_(i32::MIN)], 0x80);
        let u8_ = "cvt.sat.u8.s32 %r1, %r2;";
        chk(u8_, &[i32_(-1)], 0);
        chk(u8_, &[300], 0xff);
        chk(u8_, &[0x7fff_ffff], 0xff);
        chk(u8_, &[255], 0xff);
        chk("cvt.sat.u32.s32 %r1, %r2;", &[0x8000_0000], 0);
        chk("cvt.sat.u32.s32 %r1, %r2;", &[0x7fff_ffff], 0x7fff_ffff);
        chk("cvt.sat.s32.u32 %r1, %r2;", &[0xffff_ffff], 0x7fff_ffff);
        chk("cvt.sat.s32.u32 %r1, %r2;", &[0x8000_0000], 0x7fff_ffff);
        chk("cvt.sat.s32.u32 %r1, %r2;", &[0x7fff_ffff], 0x7fff_ffff);
        chk("cvt.sat.u64.s64 %rd1, %rd2;", &[i64_(i64::MIN)], 0);
        chk("cvt.sat.s64.u64 %rd1, %rd2;", &[u64::MAX as u128], i64::MAX as u128);
        chk("cvt.sat.s32.s64 %r1, %rd2;", &[i64_(i64::MIN)], 0x8000_0000);
        chk("cvt.sat.s32.s64 %r1, %rd2;", &[i64_(i64::MAX)], 0x7fff_ffff);
        chk("cvt.sat.u16.s8 %r1, %r2;", &[0x80], 0);
        chk("cvt.sat.s8.u8 %r1, %r2;", &[0xff], 0x7f);
        chk("cvt.sat.u32.s8 %r1, %r2;", &[0xff], 0);
        chk("cvt.sat.u8.u64 %r1, %rd2;", &[0x100], 0xff);
    }

    #[test]
    fn int_to_int_illegal_modifiers() {
        unsupported_("cvt.rn.s32.s16 %r1, %r2;");
        unsupported_("cvt.rzi.s32.s16 %r1, %r2;");
        unsupported_("cvt.ftz.s32.s16 %r1, %r2;");
    }

    #[test]
    fn int_to_int_cross_check() {
        let types = [T::U8, T::U16, T::U32, T::U64, T::S8, T::S16, T::S32, T::S64];
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for &dt in &types {
            for &at in &types {
                let t = format!("cvt{}{} %rd1, %rd2;", dt.text(), at.text());
                let ts = format!("cvt.sat{}{} %rd1, %rd2;", dt.text(), at.text());
                let (i, is) = (ins(&t), ins(&ts));
                for k in 0..200 {
                    let raw = match k {
                        0 => 0,
                        1 => u64::MAX,
                        2 => 1 << (at.bits() - 1),
                        3 => (1 << (at.bits() - 1)) - 1,
                        _ => rng.next(),
                    } as u128;
                    // Reference: the source as i128 by its type, wrapped or clamped to the destination.
                    let v: i128 = match at {
                        T::U8 => raw as u8 as i128,
                        T::U16 => raw as u16 as i128,
                        T::U32 => raw as u32 as i128,
                        T::U64 => raw as u64 as i128,
                        T::S8 => raw as u8 as i8 as i128,
                        T::S16 => raw as u16 as i16 as i128,
                        T::S32 => raw as u32 as i32 as i128,
                        _ => raw as u64 as i64 as i128,
                    };
                    let w = dt.bits();
                    let (lo, hi) = if signed(dt) { (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1) } else { (0, (1i128 << w) - 1) };
                    let want = (v as u128) & mask(w);
                    let want_sat = (v.clamp(lo, hi) as u128) & mask(w);
                    assert_eq!(eval(&i, &[raw], false).unwrap().unwrap().dests[0], Val::exact(want), "{t} {raw:#x}");
                    assert_eq!(eval(&is, &[raw], false).unwrap().unwrap().dests[0], Val::exact(want_sat), "{ts} {raw:#x}");
                }
            }
        }
    }

    // ------------------------------------------------------------------
    // Float to integer
    // ------------------------------------------------------------------

    #[test]
    fn float_to_int_rounding_and_saturation() {
        let rzi = "cvt.rzi.s32.f32 %r1, %f2;";
        chk(rzi, &[f(2.7)], 2);
        chk(rzi, &[f(-2.7)], i32_(-2));
        chk(rzi, &[f(-0.0)], 0);
        chk(rzi, &[0x7fc0_0000], 0); // NaN -> 0
        chk(rzi, &[0xffc0_0001], 0);
        chk(rzi, &[0x7f80_0001], 0); // signaling NaN
        chk(rzi, &[f(f32::INFINITY)], 0x7fff_ffff);
        chk(rzi, &[f(f32::NEG_INFINITY)], 0x8000_0000);
        chk(rzi, &[f(3e9)], 0x7fff_ffff);
        chk(rzi, &[f(-3e9)], 0x8000_0000);
        chk(rzi, &[f(2147483520.0)], 0x7fff_ff80);
        chk(rzi, &[f(2147483648.0)], 0x7fff_ffff);
        chk(rzi, &[f(-2147483648.0)], 0x8000_0000);
        let rni = "cvt.rni.s32.f32 %r1, %f2;";
        chk(rni, &[f(2.5)], 2);
        chk(rni, &[f(3.5)], 4);
        chk(rni, &[f(-2.5)], i32_(-2));
        chk(rni, &[f(0.5)], 0);
        chk(rni, &[f(1.5)], 2);
        chk(rni, &[f(-1.5)], i32_(-2));
        chk("cvt.rmi.s32.f32 %r1, %f2;", &[f(-0.5)], i32_(-1));
        chk("cvt.rmi.s32.f32 %r1, %f2;", &[f(2.7)], 2);
        chk("cvt.rpi.s32.f32 %r1, %f2;", &[f(0.5)], 1);
        chk("cvt.rpi.s32.f32 %r1, %f2;", &[f(-2.7)], i32_(-2));
        let u32_ = "cvt.rzi.u32.f32 %r1, %f2;";
        chk(u32_, &[f(-1.5)], 0);
        chk(u32_, &[f(-0.5)], 0);
        chk(u32_, &[f(5e9)], 0xffff_ffff);
        chk(u32_, &[f(4294967040.0)], 0xffff_ff00);
        chk(u32_, &[f(f32::NEG_INFINITY)], 0);
        chk(u32_, &[0x7fc0_0000], 0);
        chk("cvt.rni.u32.f32 %r1, %f2;", &[f(-0.5)], 0);
        chk("cvt.rni.u32.f32 %r1, %f2;", &[f(-3.0)], 0);
        // Narrow destinations clamp to their own range.
        let s8 = "cvt.rni.s8.f32 %r1, %f2;";
        chk(s8, &[f(200.0)], 0x7f);
        chk(s8, &[f(-200.0)], 0x80);
        chk(s8, &[f(127.4)], 0x7f);
        chk(s8, &[f(-128.6)], 0x80);
        chk(s8, &[f(-3.0)], 0xfd);
        let u8_ = "cvt.rni.u8.f32 %r1, %f2;";
        chk(u8_, &[f(300.0)], 0xff);
        chk(u8_, &[f(-3.0)], 0);
        chk(u8_, &[f(254.5)], 0xfe);
        chk(u8_, &[f(255.5)], 0xff);
        chk("cvt.rni.s16.f32 %r1, %f2;", &[f(-40000.0)], 0x8000);
        chk("cvt.rzi.u16.f32 %r1, %f2;", &[f(65535.9)], 0xffff);
        // .sat is redundant.
        chk("cvt.rzi.sat.s32.f32 %r1, %f2;", &[f(3e9)], 0x7fff_ffff);
    }

    #[test]
    fn float_to_int_64_bit_and_other_sources() {
        let s64 = "cvt.rzi.s64.f64 %rd1, %fd2;";
        chk(s64, &[d(9.3e18)], i64::MAX as u128);
        chk(s64, &[d(-9.3e18)], i64_(i64::MIN));
        chk(s64, &[d(p2(62))], 1 << 62);
        chk(s64, &[d(-p2(63))], i64_(i64::MIN));
        chk(s64, &[d(f64::NAN)], 0);
        let u64_ = "cvt.rzi.u64.f64 %rd1, %fd2;";
        chk(u64_, &[d(1.8e19)], 18_000_000_000_000_000_000);
        chk(u64_, &[d(p2(64))], u64::MAX as u128);
        chk(u64_, &[d(-1.0)], 0);
        chk(u64_, &[d(f64::INFINITY)], u64::MAX as u128);
        chk("cvt.rni.s64.f32 %rd1, %f2;", &[f(-1e19)], i64_(i64::MIN));
        // .f16 sources.
        let h = "cvt.rni.s32.f16 %r1, %h2;";
        chk(h, &[0x7bff], 65504);
        chk(h, &[0xfc00], 0x8000_0000);
        chk(h, &[0x4100], 2); // 2.5
        chk(h, &[0x7e00], 0); // NaN
        chk(h, &[0x0001], 0);
        chk("cvt.rpi.s32.f16 %r1, %h2;", &[0x0001], 1);
        chk("cvt.rzi.u8.f16 %r1, %h2;", &[0x7bff], 0xff);
        // .bf16 sources (the manual's `cvt.s8.bf16.rpi`).
        chk("cvt.s8.bf16.rpi %r1, %h2;", &[0x3fc0], 2);
        chk("cvt.s8.bf16.rpi %r1, %h2;", &[0xbfc0], 0xff);
        chk("cvt.rzi.s32.bf16 %r1, %h2;", &[0x7f80], 0x7fff_ffff);
    }

    #[test]
    fn float_to_int_ftz() {
        // -smallest subnormal: rounds down to -1 unless flushed to -0.
        chk("cvt.rmi.s32.f32 %r1, %f2;", &[0x8000_0001], 0xffff_ffff);
        chk("cvt.rmi.ftz.s32.f32 %r1, %f2;", &[0x8000_0001], 0);
        chk("cvt.rpi.s32.f32 %r1, %f2;", &[0x0000_0001], 1);
        chk("cvt.rpi.ftz.s32.f32 %r1, %f2;", &[0x0000_0001], 0);
        chk("cvt.rpi.ftz.s32.f32 %r1, %f2;", &[0x0080_0000], 1);
        chk("cvt.rpi.ftz.u64.f32 %rd1, %f2;", &[0x007f_ffff], 0);
        unsupported_("cvt.rzi.ftz.s32.f64 %r1, %fd2;");
        unsupported_("cvt.rzi.ftz.s32.f16 %r1, %h2;");
        unsupported_("cvt.rn.s32.f32 %r1, %f2;");
        unsupported_("cvt.rz.u64.f64 %rd1, %fd2;");
    }

    #[test]
    fn float_to_int_without_rounding_modifier() {
        let t = "cvt.s32.f32 %r1, %f2;";
        chk(t, &[f(2.0)], 2);
        chk(t, &[f(-7.0)], i32_(-7));
        unspecified(t, &[f(2.5)]);
        unspecified(t, &[f(-0.1)]);
        chk(t, &[0x7fc0_0000], 0);
        chk(t, &[f(f32::INFINITY)], 0x7fff_ffff);
        chk(t, &[f(1e10)], 0x7fff_ffff);
        chk("cvt.s32.f64 %r1, %fd2;", &[d(-7.0)], i32_(-7));
    }

    #[test]
    fn float_to_int_cross_check_with_host() {
        // Rust's float-to-int `as` truncates, saturates and maps NaN to 0:
        // exactly .rzi; with floor/ceil/round_ties_even it gives .rmi/.rpi/.rni.
        let mut rng = Rng(0xfeed_f00d_1234_5678);
        macro_rules! check {
            ($dty:literal, $ity:ty, $wide:ty) => {
                for (rnd, op) in [("rzi", 0), ("rni", 1), ("rmi", 2), ("rpi", 3)] {
                    let i32f = ins(&format!("cvt.{}.{}.f32 %r1, %f2;", rnd, $dty));
                    let i64f = ins(&format!("cvt.{}.{}.f64 %r1, %fd2;", rnd, $dty));
                    for _ in 0..400 {
                        let xb = rng.f32_bits();
                        let x = f32::from_bits(xb);
                        let y = rng.double(-3, 70);
                        let r32 = match op { 0 => x.trunc(), 1 => x.round_ties_even(), 2 => x.floor(), _ => x.ceil() };
                        let r64 = match op { 0 => y.trunc(), 1 => y.round_ties_even(), 2 => y.floor(), _ => y.ceil() };
                        let w32 = (r32 as $ity) as $wide as u128 & mask(<$ity>::BITS);
                        let w64 = (r64 as $ity) as $wide as u128 & mask(<$ity>::BITS);
                        assert_eq!(eval(&i32f, &[xb as u128], false).unwrap().unwrap().dests[0], Val::exact(w32), "{} {rnd} f32 {x:e}", $dty);
                        assert_eq!(eval(&i64f, &[d(y)], false).unwrap().unwrap().dests[0], Val::exact(w64), "{} {rnd} f64 {y:e}", $dty);
                    }
                }
            };
        }
        check!("s8", i8, i128);
        check!("s16", i16, i128);
        check!("s32", i32, i128);
        check!("s64", i64, i128);
        check!("u8", u8, u128);
        check!("u16", u16, u128);
        check!("u32", u32, u128);
        check!("u64", u64, u128);
    }

    // ------------------------------------------------------------------
    // Integer to float
    // ------------------------------------------------------------------

    #[test]
    fn int_to_float_rounding() {
        chk("cvt.rn.f32.s32 %f1, %r2;", &[16777217], 0x4b80_0000);
        chk("cvt.rz.f32.s32 %f1, %r2;", &[16777217], 0x4b80_0000);
        chk("cvt.rm.f32.s32 %f1, %r2;", &[16777217], 0x4b80_0000);
        chk("cvt.rp.f32.s32 %f1, %r2;", &[16777217], 0x4b80_0001);
        chk("cvt.rm.f32.s32 %f1, %r2;", &[i32_(-16777217)], 0xcb80_0001);
        chk("cvt.rp.f32.s32 %f1, %r2;", &[i32_(-16777217)], 0xcb80_0000);
        chk("cvt.rn.f32.s32 %f1, %r2;", &[16777219], 0x4b80_0002); // tie to even
        chk("cvt.rn.f32.s32 %f1, %r2;", &[0], 0);
        chk("cvt.rn.f32.s32 %f1, %r2;", &[i32_(-1)], 0xbf80_0000);
        chk("cvt.rn.f32.s32 %f1, %r2;", &[i32_(i32::MIN)], 0xcf00_0000);
        chk("cvt.rn.f32.u32 %f1, %r2;", &[0xffff_ffff], 0x4f80_0000);
        chk("cvt.rz.f32.u32 %f1, %r2;", &[0xffff_ffff], 0x4f7f_ffff);
        chk("cvt.rn.f32.s64 %f1, %rd2;", &[i64_(i64::MIN)], 0xdf00_0000);
        chk("cvt.rn.f64.u64 %fd1, %rd2;", &[u64::MAX as u128], 0x43f0_0000_0000_0000);
        chk("cvt.rz.f64.u64 %fd1, %rd2;", &[u64::MAX as u128], 0x43ef_ffff_ffff_ffff);
        chk("cvt.rn.f64.s64 %fd1, %rd2;", &[i64::MAX as u128], 0x43e0_0000_0000_0000);
        chk("cvt.rn.f64.s8 %fd1, %r2;", &[0x80], d(-128.0));
        // .f16: overflow and ties.
        chk("cvt.rn.f16.s32 %h1, %r2;", &[65520], 0x7c00);
        chk("cvt.rn.f16.s32 %h1, %r2;", &[65519], 0x7bff);
        chk("cvt.rz.f16.s32 %h1, %r2;", &[100000], 0x7bff);
        chk("cvt.rp.f16.s32 %h1, %r2;", &[65505], 0x7c00);
        chk("cvt.rm.f16.s32 %h1, %r2;", &[65505], 0x7bff);
        chk("cvt.rm.f16.s32 %h1, %r2;", &[i32_(-65505)], 0xfc00);
        chk("cvt.rp.f16.s32 %h1, %r2;", &[i32_(-65505)], 0xfbff);
        chk("cvt.rn.f16.s32 %h1, %r2;", &[2049], 0x6800);
        chk("cvt.rn.f16.s32 %h1, %r2;", &[2051], 0x6802);
        chk("cvt.rn.f16.u8 %h1, %r2;", &[255], 0x5bf8);
        chk("cvt.rn.f16.s8 %h1, %r2;", &[0x80], 0xd800);
        // .bf16.
        chk("cvt.rn.bf16.s32 %h1, %r2;", &[257], 0x4380);
        chk("cvt.rn.bf16.s32 %h1, %r2;", &[259], 0x4382);
        chk("cvt.bf16.u64.rz %h1, %rd2;", &[u64::MAX as u128], 0x5f7f);
        chk("cvt.bf16.u64.rp %h1, %rd2;", &[u64::MAX as u128], 0x5f80);
        // .ftz has nothing to flush here.
        chk("cvt.rn.ftz.f32.s32 %f1, %r2;", &[7], 0x40e0_0000);
    }

    #[test]
    fn int_to_float_sat_and_legality() {
        let t = "cvt.rn.sat.f32.s32 %f1, %r2;";
        chk(t, &[i32_(-5)], 0);
        chk(t, &[5], 0x3f80_0000);
        chk(t, &[0], 0);
        chk(t, &[1], 0x3f80_0000);
        chk("cvt.rn.sat.f16.u32 %h1, %r2;", &[7], 0x3c00);
        unsupported_("cvt.rn.sat.bf16.s32 %h1, %r2;");
        unsupported_("cvt.rni.f32.s32 %f1, %r2;");
        unsupported_("cvt.rn.ftz.f64.s32 %fd1, %r2;");
    }

    #[test]
    fn int_to_float_without_rounding_modifier() {
        chk("cvt.f32.s32 %f1, %r2;", &[5], 0x40a0_0000);
        unspecified("cvt.f32.s32 %f1, %r2;", &[16777217]);
        chk("cvt.f64.s32 %fd1, %r2;", &[i32_(i32::MIN)], d(-2147483648.0));
        unspecified("cvt.f64.u64 %fd1, %rd2;", &[u64::MAX as u128]);
        chk("cvt.f16.u8 %h1, %r2;", &[255], 0x5bf8);
    }

    #[test]
    fn int_to_float_cross_check_with_host() {
        // Rust's int-to-float `as` rounds to nearest even.
        let mut rng = Rng(0xabad_cafe_0000_0001);
        let (a, b, c, e) = (ins("cvt.rn.f32.s32 %f1, %r2;"), ins("cvt.rn.f32.u64 %f1, %rd2;"), ins("cvt.rn.f64.s64 %fd1, %rd2;"), ins("cvt.rn.f32.s64 %f1, %rd2;"));
        for _ in 0..5000 {
            let r = rng.next() >> (rng.next() % 64);
            let r = if rng.next() & 1 == 1 { r.wrapping_neg() } else { r };
            assert_eq!(eval(&a, &[r as u32 as u128], false).unwrap().unwrap().dests[0], Val::exact(f(r as u32 as i32 as f32)));
            assert_eq!(eval(&b, &[r as u128], false).unwrap().unwrap().dests[0], Val::exact(f(r as f32)));
            assert_eq!(eval(&c, &[r as u128], false).unwrap().unwrap().dests[0], Val::exact(d(r as i64 as f64)));
            assert_eq!(eval(&e, &[r as u128], false).unwrap().unwrap().dests[0], Val::exact(f(r as i64 as f32)));
        }
    }

    // ------------------------------------------------------------------
    // Float to float
    // ------------------------------------------------------------------

    #[test]
    fn f32_to_f16_all_modes() {
        let rn = "cvt.rn.f16.f32 %h1, %f2;";
        chk(rn, &[f(1.0)], 0x3c00);
        chk(rn, &[f(65504.0)], 0x7bff);
        chk(rn, &[f(65520.0)], 0x7c00); // the tie above MAX rounds to even: infinity
        chk(rn, &[f(65519.99)], 0x7bff);
        chk(rn, &[f(f32::INFINITY)], 0x7c00);
        chk(rn, &[f(f32::NEG_INFINITY)], 0xfc00);
        chk(rn, &[f(-0.0)], 0x8000);
        nan_lane(rn, &[0x7fc0_0000], Fmt::HALF, 0);
        nan_lane(rn, &[0xff80_0001], Fmt::HALF, 0);
        chk(rn, &[0x3f80_1000], 0x3c00); // 1 + 2^-11: tie to even
        chk(rn, &[0x3f80_3000], 0x3c02); // 1 + 3*2^-11: tie to even
        chk(rn, &[0x3f80_1008], 0x3c01); // just above the tie
        chk(rn, &[f(p2(-24) as f32)], 0x0001);
        chk(rn, &[f(p2(-25) as f32)], 0x0000);
        chk(rn, &[f(3.0 * p2(-26) as f32)], 0x0001);
        chk(rn, &[f(-p2(-25) as f32)], 0x8000);
        chk(rn, &[f(p2(-14) as f32)], 0x0400);
        chk(rn, &[0x0000_0001], 0x0000);
        chk("cvt.rp.f16.f32 %h1, %f2;", &[f(p2(-25) as f32)], 0x0001);
        chk("cvt.rm.f16.f32 %h1, %f2;", &[f(p2(-25) as f32)], 0x0000);
        chk("cvt.rm.f16.f32 %h1, %f2;", &[f(-p2(-25) as f32)], 0x8001);
        chk("cvt.rp.f16.f32 %h1, %f2;", &[0x0000_0001], 0x0001);
        chk("cvt.rp.ftz.f16.f32 %h1, %f2;", &[0x0000_0001], 0x0000);
        chk("cvt.rm.ftz.f16.f32 %h1, %f2;", &[0x8000_0001], 0x8000);
        chk("cvt.rz.f16.f32 %h1, %f2;", &[f(65520.0)], 0x7bff);
        chk("cvt.rz.f16.f32 %h1, %f2;", &[f(1e6)], 0x7bff);
        chk("cvt.rz.f16.f32 %h1, %f2;", &[f(-1e6)], 0xfbff);
        chk("cvt.rp.f16.f32 %h1, %f2;", &[f(65505.0)], 0x7c00);
        chk("cvt.rm.f16.f32 %h1, %f2;", &[f(-65505.0)], 0xfc00);
        chk("cvt.rp.f16.f32 %h1, %f2;", &[f(-1e6)], 0xfbff);
        chk("cvt.rm.f16.f32 %h1, %f2;", &[f(1e6)], 0x7bff);
        chk("cvt.rz.f16.f32 %h1, %f2;", &[f(f32::INFINITY)], 0x7c00);
    }

    #[test]
    fn f64_to_f32_and_ftz() {
        let rn = "cvt.rn.f32.f64 %f1, %fd2;";
        chk(rn, &[d(1.0 + p2(-24))], 0x3f80_0000);
        chk(rn, &[d(1.0 + p2(-24) + p2(-52))], 0x3f80_0001);
        chk(rn, &[d(1.0 + 3.0 * p2(-24))], 0x3f80_0002);
        chk(rn, &[d(3.5e38)], 0x7f80_0000);
        chk("cvt.rz.f32.f64 %f1, %fd2;", &[d(3.5e38)], 0x7f7f_ffff);
        chk("cvt.rz.f32.f64 %f1, %fd2;", &[d(f64::MAX)], 0x7f7f_ffff);
        chk("cvt.rp.f32.f64 %f1, %fd2;", &[d(f32::MAX as f64 * (1.0 + p2(-40)))], 0x7f80_0000);
        chk("cvt.rm.f32.f64 %f1, %fd2;", &[d(-f64::MAX)], 0xff80_0000);
        chk(rn, &[d(1e-46)], 0);
        chk("cvt.rp.f32.f64 %f1, %fd2;", &[d(1e-46)], 1);
        chk("cvt.rm.f32.f64 %f1, %fd2;", &[d(-1e-46)], 0x8000_0001);
        chk(rn, &[d(p2(-149))], 1);
        chk(rn, &[d(p2(-150))], 0);
        chk(rn, &[d(1.5 * p2(-149))], 2);
        chk(rn, &[d(f64::INFINITY)], 0x7f80_0000);
        nan_lane(rn, &[d(f64::NAN)], Fmt::SINGLE, 0);
        nan_lane(rn, &[0x7ff0_0000_0000_0001], Fmt::SINGLE, 0);
        // .ftz: subnormal f32 results are flushed to sign-preserving zero.
        let ftz = "cvt.rn.ftz.f32.f64 %f1, %fd2;";
        chk(ftz, &[d(p2(-130))], 0);
        chk(ftz, &[d(-p2(-130))], 0x8000_0000);
        chk(ftz, &[d(p2(-126))], 0x0080_0000);
        chk(ftz, &[d(1.0)], 0x3f80_0000);
        // Rounds up to the smallest normal from below: flushed or not is not said.
        unspecified(ftz, &[d(p2(-126) - p2(-160))]);
        chk("cvt.rz.ftz.f32.f64 %f1, %fd2;", &[d(p2(-126) - p2(-160))], 0);
        chk("cvt.rz.f32.f64 %f1, %fd2;", &[d(p2(-126) - p2(-160))], 0x007f_ffff);
    }

    #[test]
    fn widening_conversions() {
        let t = "cvt.f64.f32 %fd1, %f2;";
        chk(t, &[f(1.0)], 0x3ff0_0000_0000_0000);
        chk(t, &[0x0000_0001], 0x36a0_0000_0000_0000);
        chk(t, &[f(f32::NEG_INFINITY)], 0xfff0_0000_0000_0000);
        chk(t, &[f(-0.0)], 0x8000_0000_0000_0000);
        nan_lane(t, &[0x7fc0_0000], Fmt::DOUBLE, 0);
        chk("cvt.ftz.f64.f32 %fd1, %f2;", &[0x0000_0001], 0);
        chk("cvt.ftz.f64.f32 %fd1, %f2;", &[0x8000_0001], 0x8000_0000_0000_0000);
        let h = "cvt.f32.f16 %f1, %h2;";
        chk(h, &[0x3c00], 0x3f80_0000);
        chk(h, &[0x0001], 0x3380_0000);
        chk(h, &[0x7c00], 0x7f80_0000);
        chk(h, &[0xfc00], 0xff80_0000);
        nan_lane(h, &[0x7e00], Fmt::SINGLE, 0);
        // .ftz applies only to .f32 values: an .f16 subnormal is not flushed.
        chk("cvt.ftz.f32.f16 %f1, %h2;", &[0x0001], 0x3380_0000);
        chk("cvt.f64.f16 %fd1, %h2;", &[0x8001], d(-p2(-24)));
        chk("cvt.f64.bf16.rp %fd1, %h2;", &[0x3f80], 0x3ff0_0000_0000_0000);
        // A rounding modifier on an exact conversion changes nothing.
        chk("cvt.rn.f64.f32 %fd1, %f2;", &[f(0.1)], d(0.1f32 as f64));
        // .bf16 -> .f32 is the bits shifted up, for every non-NaN value.
        let i = ins("cvt.f32.bf16 %f1, %h2;");
        for b in 0..=0xffffu128 {
            let v = eval(&i, &[b], false).unwrap().unwrap().dests[0];
            if Fmt::BF16.is_nan(b) {
                assert_eq!(v.quality, Quality::AnyNan);
                assert!(Fmt::SINGLE.is_nan(v.bits));
            } else {
                assert_eq!(v, Val::exact(b << 16), "{b:#x}");
            }
        }
        // Every .f16 widens exactly (checked against the host through f32 bits).
        let i = ins("cvt.f32.f16 %f1, %h2;");
        for b in 0..=0xffffu128 {
            let v = eval(&i, &[b], false).unwrap().unwrap().dests[0];
            if !Fmt::HALF.is_nan(b) {
                let want = Half::from_bits(b);
                let mut l = false;
                let w: StatusAnd<Single> = want.convert_r(NTE, &mut l);
                assert_eq!(v, Val::exact(w.value.to_bits()));
                // ... and narrows back exactly.
                assert_eq!(ex("cvt.rn.f16.f32 %h1, %f2;", &[v.bits]), b);
            }
        }
    }

    #[test]
    fn bf16_conversions() {
        let rn = "cvt.rn.bf16.f32 %h1, %f2;";
        chk(rn, &[0x3f80_8000], 0x3f80);
        chk(rn, &[0x3f81_8000], 0x3f82);
        chk(rn, &[0x3f80_8001], 0x3f81);
        chk("cvt.rz.bf16.f32 %h1, %f2;", &[0x3f80_ffff], 0x3f80);
        chk(rn, &[0x7f7f_ffff], 0x7f80);
        chk("cvt.rz.bf16.f32 %h1, %f2;", &[0x7f7f_ffff], 0x7f7f);
        chk(rn, &[0x0000_8000], 0x0000);
        chk(rn, &[0x0001_8000], 0x0002);
        chk(rn, &[0x0001_0000], 0x0001);
        chk("cvt.bf16.f16.rz %h1, %h2;", &[0x3c01], 0x3f80);
        chk("cvt.bf16.f16.rp %h1, %h2;", &[0x3c01], 0x3f81);
        chk("cvt.rn.f16.bf16 %h1, %h2;", &[0x3f81], 0x3c08);
        chk("cvt.rn.f16.bf16 %h1, %h2;", &[0x7e96], 0x7c00);
        chk("cvt.rz.f16.bf16 %h1, %h2;", &[0x7e96], 0x7bff);
        chk("cvt.rn.bf16.f64 %h1, %fd2;", &[d(1.0 + p2(-8) + p2(-40))], 0x3f81);
    }

    #[test]
    fn f64_to_16_bit_rounds_once() {
        // 1 + 2^-11 + 2^-40: through f32 it would become the tie 1 + 2^-11
        // and round to 1.0; rounded once it is above the tie.
        chk("cvt.rn.f16.f64 %h1, %fd2;", &[d(1.0 + p2(-11) + p2(-40))], 0x3c01);
        chk("cvt.rn.f16.f64 %h1, %fd2;", &[d(1.0 + p2(-11))], 0x3c00);
        chk("cvt.rz.f16.f64 %h1, %fd2;", &[d(1e300)], 0x7bff);
        chk("cvt.rn.f16.f64 %h1, %fd2;", &[d(1e-300)], 0);
        chk("cvt.rp.f16.f64 %h1, %fd2;", &[d(1e-300)], 1);
    }

    #[test]
    fn round_to_integral() {
        let rni = "cvt.rni.f32.f32 %f1, %f2;";
        chk(rni, &[f(2.5)], f(2.0));
        chk(rni, &[f(3.5)], f(4.0));
        chk(rni, &[f(-2.5)], f(-2.0));
        chk(rni, &[f(-0.4)], 0x8000_0000);
        chk(rni, &[f(0.5)], 0);
        chk(rni, &[f(8388607.5)], 0x4b00_0000);
        chk(rni, &[f(f32::INFINITY)], 0x7f80_0000);
        chk(rni, &[f(1e30)], f(1e30));
        nan_lane(rni, &[0x7fc0_0000], Fmt::SINGLE, 0);
        chk("cvt.rmi.f32.f32 %f1, %f2;", &[f(-0.5)], f(-1.0));
        chk("cvt.rmi.f32.f32 %f1, %f2;", &[f(0.5)], 0);
        chk("cvt.rpi.f32.f32 %f1, %f2;", &[f(0.2)], f(1.0));
        chk("cvt.rpi.f32.f32 %f1, %f2;", &[f(-0.2)], 0x8000_0000);
        chk("cvt.rzi.f32.f32 %f1, %f2;", &[f(-1.7)], f(-1.0));
        // .ftz flushes the input first.
        chk("cvt.rmi.f32.f32 %f1, %f2;", &[0x8000_0001], f(-1.0));
        chk("cvt.rmi.ftz.f32.f32 %f1, %f2;", &[0x8000_0001], 0x8000_0000);
        chk("cvt.rpi.ftz.f32.f32 %f1, %f2;", &[0x0000_0001], 0);
        // Other types.
        chk("cvt.rpi.f16.f16 %h1, %h2;", &[0x3c01], 0x4000);
        chk("cvt.rni.f16.f16 %h1, %h2;", &[0x4100], 0x4000);
        chk("cvt.rni.f16.f16 %h1, %h2;", &[0x7bff], 0x7bff);
        chk("cvt.bf16.bf16.rpi %h1, %h2;", &[0x3fc0], 0x4000);
        chk("cvt.rni.f64.f64 %fd1, %fd2;", &[d(4503599627370495.5)], 0x4330_0000_0000_0000);
        chk("cvt.rzi.f64.f64 %fd1, %fd2;", &[d(-0.999)], d(-0.0));
        chk("cvt.rni.sat.f32.f32 %f1, %f2;", &[f(2.5)], f(1.0));
        unsupported_("cvt.rni.f16.f32 %h1, %f2;");
        unsupported_("cvt.rni.f32.f64 %f1, %fd2;");
    }

    #[test]
    fn round_to_integral_cross_check_with_host() {
        let mut rng = Rng(0x5555_aaaa_1234_4321);
        let insts = [ins("cvt.rni.f32.f32 %f1, %f2;"), ins("cvt.rzi.f32.f32 %f1, %f2;"), ins("cvt.rmi.f32.f32 %f1, %f2;"), ins("cvt.rpi.f32.f32 %f1, %f2;")];
        let insts64 = [ins("cvt.rni.f64.f64 %fd1, %fd2;"), ins("cvt.rzi.f64.f64 %fd1, %fd2;"), ins("cvt.rmi.f64.f64 %fd1, %fd2;"), ins("cvt.rpi.f64.f64 %fd1, %fd2;")];
        for _ in 0..5000 {
            let xb = rng.f32_bits();
            let x = f32::from_bits(xb);
            let y = rng.double(-5, 60);
            let want = [x.round_ties_even(), x.trunc(), x.floor(), x.ceil()];
            let want64 = [y.round_ties_even(), y.trunc(), y.floor(), y.ceil()];
            for k in 0..4 {
                let v = eval(&insts[k], &[xb as u128], false).unwrap().unwrap().dests[0];
                if x.is_nan() {
                    assert_eq!(v.quality, Quality::AnyNan);
                } else {
                    assert_eq!(v, Val::exact(f(want[k])), "{k} {x:e}");
                }
                assert_eq!(eval(&insts64[k], &[d(y)], false).unwrap().unwrap().dests[0], Val::exact(d(want64[k])), "{k} {y:e}");
            }
        }
    }

    #[test]
    fn same_type_and_sat() {
        let t = "cvt.f32.f32 %f1, %f2;";
        chk(t, &[f(1.5)], f(1.5));
        chk(t, &[0x0000_0001], 1);
        nan_lane(t, &[0x7fc0_0001], Fmt::SINGLE, 0);
        chk("cvt.ftz.f32.f32 %f1, %f2;", &[0x8000_0001], 0x8000_0000);
        let s = "cvt.sat.f32.f32 %f1, %f2;";
        chk(s, &[f(1.5)], f(1.0));
        chk(s, &[f(-2.0)], 0);
        chk(s, &[0x7fc0_0000], 0);
        chk(s, &[0xffc0_0000], 0);
        chk(s, &[f(0.5)], f(0.5));
        chk(s, &[f(1.0)], f(1.0));
        chk(s, &[f(f32::INFINITY)], f(1.0));
        chk(s, &[f(f32::NEG_INFINITY)], 0);
        chk(s, &[0x8000_0001], 0);
        // Whether -0.0 stays -0.0 under .sat is not said.
        unspecified(s, &[f(-0.0)]);
        unspecified("cvt.ftz.sat.f32.f32 %f1, %f2;", &[0x8000_0001]);
        chk("cvt.rn.sat.f16.f32 %h1, %f2;", &[f(2.0)], 0x3c00);
        chk("cvt.rn.sat.f16.f32 %h1, %f2;", &[f(0.25)], 0x3400);
        chk("cvt.rn.sat.f32.f64 %f1, %fd2;", &[d(f64::NAN)], 0);
        chk("cvt.sat.f64.f32 %fd1, %f2;", &[f(0.5)], d(0.5));
        chk("cvt.sat.f64.f64 %fd1, %fd2;", &[d(-1e-300)], 0);
        chk("cvt.sat.f16.f16 %h1, %h2;", &[0x4000], 0x3c00);
        unsupported_("cvt.rn.sat.bf16.f32 %h1, %f2;");
        unsupported_("cvt.ftz.rn.f16.f64 %h1, %fd2;");
        unsupported_("cvt.ftz.f64.f16 %fd1, %h2;");
    }

    #[test]
    fn float_to_float_without_rounding_modifier() {
        chk("cvt.f16.f32 %h1, %f2;", &[f(1.0)], 0x3c00);
        unspecified("cvt.f16.f32 %h1, %f2;", &[0x3f80_1008]);
        chk("cvt.f32.f64 %f1, %fd2;", &[d(0.5)], f(0.5));
        unspecified("cvt.f32.f64 %f1, %fd2;", &[d(0.1)]);
        // Overflow: infinity in .rn/.rp but MAX in .rz/.rm.
        unspecified("cvt.f32.f64 %f1, %fd2;", &[d(1e300)]);
        chk("cvt.f32.f64 %f1, %fd2;", &[d(f64::INFINITY)], 0x7f80_0000);
    }

    #[test]
    fn relu_and_satfinite_16_bit() {
        let r = "cvt.rn.relu.f16.f32 %h1, %f2;";
        chk(r, &[f(-1.0)], 0);
        chk(r, &[f(1.0)], 0x3c00);
        chk(r, &[f(f32::NEG_INFINITY)], 0);
        chk(r, &[f(f32::INFINITY)], 0x7c00);
        unspecified(r, &[f(-0.0)]);
        unspecified(r, &[f(-1e-10)]); // rounds to -0
        nan_lane(r, &[0xffc0_0000], Fmt::HALF, 0);
        let s = "cvt.rn.satfinite.f16.f32 %h1, %f2;";
        chk(s, &[f(1e6)], 0x7bff);
        chk(s, &[f(f32::NEG_INFINITY)], 0xfbff);
        chk(s, &[f(f32::INFINITY)], 0x7bff);
        chk(s, &[f(65519.0)], 0x7bff);
        chk(s, &[f(65520.0)], 0x7bff);
        chk(s, &[f(65504.0)], 0x7bff);
        chk(s, &[f(-2.0)], 0xc000);
        nan_lane(s, &[0x7fc0_0000], Fmt::HALF, 0);
        chk("cvt.rz.relu.satfinite.f16.f32 %h1, %f2;", &[f(1e6)], 0x7bff);
        chk("cvt.rz.relu.satfinite.f16.f32 %h1, %f2;", &[f(-1e6)], 0);
        chk("cvt.rz.relu.satfinite.bf16.f32 %h1, %f2;", &[f(-5.0)], 0);
        chk("cvt.rz.relu.satfinite.bf16.f32 %h1, %f2;", &[f(f32::INFINITY)], 0x7f7f);
        chk("cvt.rn.satfinite.bf16.f32 %h1, %f2;", &[0x7f7f_ffff], 0x7f7f);
        chk("cvt.rn.satfinite.bf16.f32 %h1, %f2;", &[0xff7f_ffff], 0xff7f);
        chk("cvt.rn.relu.bf16.f32 %h1, %f2;", &[f(3.0)], 0x4040);
    }

    #[test]
    fn packed_16_bit_pairs() {
        // a goes to the upper half, b to the lower.
        chk("cvt.rn.f16x2.f32 %r1, %f2, %f3;", &[f(1.0), f(2.0)], 0x3c00_4000);
        chk("cvt.rz.f16x2.f32 %r1, %f2, %f3;", &[f(1e6), f(-1e6)], 0x7bff_fbff);
        chk("cvt.rn.f16x2.f32 %r1, %f2, %f3;", &[f(1e6), f(-1e6)], 0x7c00_fc00);
        chk("cvt.rn.relu.satfinite.f16x2.f32 %r1, %f2, %f3;", &[f(1e6), f(-1e6)], 0x7bff_0000);
        chk("cvt.rn.bf16x2.f32 %r1, %f2, %f3;", &[0x3f80_8000, 0x3f81_8000], 0x3f80_3f82);
        chk("cvt.rz.satfinite.bf16x2.f32 %r1, %f2, %f3;", &[f(f32::INFINITY), f(-1.0)], 0x7f7f_bf80);
        chk("cvt.rn.relu.bf16x2.f32 %r1, %f2, %f3;", &[f(-1.0), f(1.0)], 0x0000_3f80);
        let v = run("cvt.rn.f16x2.f32 %r1, %f2, %f3;", &[0x7fc0_0000, f(1.0)]);
        assert_eq!(v.quality, Quality::AnyNan);
        assert!(Fmt::HALF.is_nan(v.bits >> 16) && v.bits & 0xffff == 0x3c00);
    }

    // ------------------------------------------------------------------
    // .rs (stochastic rounding)
    // ------------------------------------------------------------------

    #[test]
    fn stochastic_rounding_f16x2() {
        let t = "cvt.rs.f16x2.f32 %r1, %f2, %f3, %r4;";
        // 1 + 2^-11: discarded bits 0x1000; carry iff rbits >= 0x1000.
        chk(t, &[0x3f80_1000, 0xbf80_1000, 0x0fff_1000], 0x3c00_bc01);
        chk(t, &[0x3f80_1000, 0xbf80_1000, 0x1000_0fff], 0x3c01_bc00);
        // Exact inputs never carry.
        chk(t, &[f(1.0), f(-2.0), 0x1fff_1fff], 0x3c00_c000);
        chk(t, &[f(0.0), f(-0.0), 0x1fff_1fff], 0x0000_8000);
        // Carry out of MAX is infinity; .satfinite clamps the input instead.
        chk(t, &[0x477f_ffff, f(1.0), 0x0001_0000], 0x7c00_3c00);
        chk("cvt.rs.satfinite.f16x2.f32 %r1, %f2, %f3, %r4;", &[0x477f_ffff, f(-1e6), 0x0001_0000], 0x7bff_fbff);
        chk(t, &[f(f32::INFINITY), f(f32::NEG_INFINITY), 0], 0x7c00_fc00);
        chk("cvt.rs.relu.f16x2.f32 %r1, %f2, %f3, %r4;", &[f(-1.5), f(1.5), 0x1fff_1fff], 0x0000_3e00);
        // The 3 MSBs of each half must be zero.
        unspecified(t, &[f(1.0), f(1.0), 0x2000_0000]);
        // Subnormal or out-of-range .f16 results: the alignment is not given.
        unspecified(t, &[f(1.0), f(p2(-20) as f32), 0]);
        unspecified(t, &[f(70000.0), f(1.0), 0]);
        unspecified(t, &[0x0000_0001, f(1.0), 0]);
        let v = run(t, &[0x7fc0_0000, f(1.0), 0]);
        assert_eq!(v.quality, Quality::AnyNan);
    }

    #[test]
    fn stochastic_rounding_bf16x2() {
        let t = "cvt.rs.bf16x2.f32 %r1, %f2, %f3, %r4;";
        chk(t, &[0x3f80_8000, 0x3f80_8000, 0x8000_7fff], 0x3f81_3f80);
        chk(t, &[0x7f7f_ffff, 0x00_008000, 0x0001_8000], 0x7f80_0001);
        chk("cvt.rs.satfinite.bf16x2.f32 %r1, %f2, %f3, %r4;", &[0x7f7f_ffff, 0xff7f_ffff, 0x0001_0001], 0x7f7f_ff7f);
        chk("cvt.rs.relu.satfinite.bf16x2.f32 %r1, %f2, %f3, %r4;", &[0xbf80_0001, 0x4000_0001, 0xffff_ffff], 0x0000_4001);
    }

    #[test]
    fn stochastic_rounding_cross_check_with_directed_modes() {
        // Random bits 0 truncate (.rz); all ones round every inexact value
        // away from zero (.rp for positive, .rm for negative values).
        let mut rng = Rng(0x0bad_5eed_0bad_5eed);
        let rs = ins("cvt.rs.f16x2.f32 %r1, %f2, %f3, %r4;");
        let rsb = ins("cvt.rs.bf16x2.f32 %r1, %f2, %f3, %r4;");
        for _ in 0..5000 {
            let x = rng.double(-14, 15) as f32;
            let xb = f(x);
            let away = if x < 0.0 { "rm" } else { "rp" };
            let z = ex("cvt.rz.f16.f32 %h1, %f2;", &[xb]);
            let a = ex(&format!("cvt.{away}.f16.f32 %h1, %f2;"), &[xb]);
            let v = eval(&rs, &[xb, xb, 0x0000_1fff], false).unwrap().unwrap().dests[0];
            assert_eq!(v, Val::exact((z << 16) | a), "{x:e}");
            let y = rng.double(-130, 127) as f32;
            let yb = f(y);
            let z = ex("cvt.rz.bf16.f32 %h1, %f2;", &[yb]);
            let a = ex(&format!("cvt.{}.bf16.f32 %h1, %f2;", if y < 0.0 { "rm" } else { "rp" }), &[yb]);
            let v = eval(&rsb, &[yb, yb, 0x0000_ffff], false).unwrap().unwrap().dests[0];
            assert_eq!(v, Val::exact((z << 16) | a), "{y:e}");
        }
    }

    #[test]
    fn stochastic_rounding_x4_forms_are_unsupported() {
        unsupported_("cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;");
        unsupported_("cvt.rs.relu.satfinite.e5m2x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;");
        unsupported_("cvt.rs.satfinite.e2m1x4.f32 %h1, {%f1, %f2, %f3, %f4}, %r2;");
        unsupported_("cvt.rs.satfinite.e2m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;");
        unsupported_("cvt.rs.satfinite.e3m2x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;");
    }

    // ------------------------------------------------------------------
    // .tf32
    // ------------------------------------------------------------------

    fn tf32(t: &str, x: u128) -> u128 {
        let v = run(t, &[x]);
        // "The internal layout of the tf32 format is implementation defined."
        assert_eq!(v.quality, Quality::Unspecified, "{t}");
        v.bits
    }

    #[test]
    fn tf32_conversions() {
        let rna = "cvt.rna.tf32.f32 %r1, %f2;";
        assert_eq!(tf32(rna, 0x3f80_1000), 0x3f80_2000); // tie: away from zero
        assert_eq!(tf32(rna, 0xbf80_1000), 0xbf80_2000);
        assert_eq!(tf32(rna, 0x3f80_0fff), 0x3f80_0000);
        assert_eq!(tf32("cvt.rn.tf32.f32 %r1, %f2;", 0x3f80_1000), 0x3f80_0000); // tie: even
        assert_eq!(tf32("cvt.rn.tf32.f32 %r1, %f2;", 0x3f80_3000), 0x3f80_4000);
        assert_eq!(tf32("cvt.rz.tf32.f32 %r1, %f2;", 0x3f80_3fff), 0x3f80_2000);
        assert_eq!(tf32(rna, 0x7f7f_ffff), 0x7f80_0000);
        assert_eq!(tf32("cvt.rna.satfinite.tf32.f32 %r1, %f2;", 0x7f7f_ffff), 0x7f7f_e000);
        assert_eq!(tf32("cvt.rna.satfinite.tf32.f32 %r1, %f2;", 0xff80_0000), 0xff7f_e000);
        assert_eq!(tf32("cvt.rz.tf32.f32 %r1, %f2;", 0x7f7f_ffff), 0x7f7f_e000);
        assert_eq!(tf32("cvt.rn.relu.tf32.f32 %r1, %f2;", f(-1.0)), 0);
        assert_eq!(tf32(rna, 0x0000_1000), 0x0000_2000); // subnormal tie
        assert!(Fmt::SINGLE.is_nan(tf32(rna, 0x7fc0_0000)));
    }

    // ------------------------------------------------------------------
    // 8/6/4-bit formats
    // ------------------------------------------------------------------

    #[test]
    fn to_e4m3x2_and_e5m2x2() {
        let e4 = "cvt.rn.satfinite.e4m3x2.f32 %h1, %f2, %f3;";
        chk(e4, &[f(1.0), f(-2.0)], 0x38c0); // a in the upper byte
        chk(e4, &[f(448.0), f(464.0)], 0x7e7e);
        chk(e4, &[f(1000.0), f(-1000.0)], 0x7efe);
        chk(e4, &[f(f32::INFINITY), f(f32::NEG_INFINITY)], 0x7efe);
        chk(e4, &[f(p2(-9) as f32), f(p2(-6) as f32)], 0x0108);
        chk(e4, &[f(p2(-10) as f32), f(3.0 * p2(-11) as f32)], 0x0001);
        chk(e4, &[f(1.0625), f(1.1875)], 0x383a); // ties to even
        chk(e4, &[f(-0.0), f(0.0)], 0x8000);
        nan_lane(e4, &[0x7fc0_0000, f(1.0)], Fmt { width: 8, man: 3, exp: 4 }, 8);
        let r = "cvt.rn.satfinite.relu.e4m3x2.f32 %h1, %f2, %f3;";
        chk(r, &[f(-1.0), f(1.0)], 0x0038);
        unspecified(r, &[f(-0.0), f(1.0)]);
        let e5 = "cvt.rn.satfinite.e5m2x2.f32 %h1, %f2, %f3;";
        chk(e5, &[f(1.0), f(57344.0)], 0x3c7b);
        chk(e5, &[f(1e6), f(f32::INFINITY)], 0x7b7b);
        chk(e5, &[f(f32::NEG_INFINITY), f(61440.0)], 0xfb7b);
        chk(e5, &[f(p2(-16) as f32), f(-p2(-17) as f32)], 0x0180);
        let v = run(e5, &[f(1.0), 0x7f80_0001]);
        assert_eq!(v.quality, Quality::AnyNan);
        assert_eq!(v.bits >> 8, 0x3c);
        assert!(Small::E5M2.decode((v.bits & 0xff) as u32).is_none());
        // From .f16x2: the upper half goes to the upper byte.
        chk("cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r2;", &[0x3c00_c000], 0x38c0);
        chk("cvt.rn.satfinite.e5m2x2.f16x2 %h1, %r2;", &[0x3c00_c000], 0x3cc0);
        chk("cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r2;", &[0x7bff_fc00], 0x7efe);
        chk("cvt.rn.satfinite.e5m2x2.f16x2 %h1, %r2;", &[0x7bff_0001], 0x7b00);
        chk("cvt.rn.satfinite.relu.e5m2x2.f16x2 %h1, %r2;", &[0xc000_3c00], 0x003c);
        let v = run("cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r2;", &[0x3c00_7e00]);
        assert_eq!((v.quality, v.bits >> 8), (Quality::AnyNan, 0x38));
    }

    #[test]
    fn from_e4m3x2_and_e5m2x2() {
        chk("cvt.rn.f16x2.e4m3x2 %r1, %h2;", &[0x38c0], 0x3c00_c000);
        chk("cvt.rn.relu.f16x2.e4m3x2 %r1, %h2;", &[0x38c0], 0x3c00_0000);
        chk("cvt.rn.f16x2.e4m3x2 %r1, %h2;", &[0x7e01], 0x5f00_1800); // 448, 2^-9
        chk("cvt.rn.f16x2.e5m2x2 %r1, %h2;", &[0x7bfc], 0x7b00_fc00);
        unspecified("cvt.rn.relu.f16x2.e4m3x2 %r1, %h2;", &[0x8038]);
        let e4 = ins("cvt.rn.f16x2.e4m3x2 %r1, %h2;");
        let e5 = ins("cvt.rn.f16x2.e5m2x2 %r1, %h2;");
        for c in 0..256u128 {
            // .e5m2 is the upper byte of .f16: the conversion is a shift.
            let v = eval(&e5, &[c], false).unwrap().unwrap().dests[0];
            if Small::E5M2.decode(c as u32).is_none() {
                assert_eq!(v.quality, Quality::AnyNan);
                assert!(Fmt::HALF.is_nan(v.bits & 0xffff));
            } else {
                assert_eq!(v, Val::exact(c << 8), "{c:#x}");
            }
            // .e4m3 against rustc_apfloat's Float8E4M3FN.
            let v = eval(&e4, &[c << 8 | c], false).unwrap().unwrap().dests[0];
            let x = Float8E4M3FN::from_bits(c);
            if x.is_nan() {
                assert!(c & 0x7f == 0x7f);
                assert_eq!(v.quality, Quality::AnyNan);
            } else {
                let mut l = false;
                let h: StatusAnd<Half> = x.convert_r(NTE, &mut l);
                assert_eq!(h.status, Status::OK);
                let hb = h.value.to_bits();
                assert_eq!(v, Val::exact(hb << 16 | hb), "{c:#x}");
            }
        }
    }

    #[test]
    fn fp4_and_fp6() {
        let e2m1 = "cvt.rn.satfinite.e2m1x2.f32 %h1, %f2, %f3;";
        chk(e2m1, &[f(1.0), f(-6.0)], 0x2f);
        chk(e2m1, &[f(5.0), f(0.25)], 0x60); // ties to even: 4, 0
        chk(e2m1, &[f(0.75), f(2.5)], 0x24); // ties to even: 1.0, 2.0
        chk(e2m1, &[f(7.0), f(1e9)], 0x77);
        chk(e2m1, &[f(-1e9), f(f32::NEG_INFINITY)], 0xff);
        // No NaN: NaN becomes +MAX_NORM.
        chk(e2m1, &[0x7fc0_0000, 0xffc0_0000], 0x77);
        chk(e2m1, &[0x7fc0_0000, f(-0.0)], 0x78);
        chk(e2m1, &[f(3.5), f(-0.2)], 0x68); // 3.5 ties to 4; -0.2 to -0
        let r = "cvt.rn.satfinite.relu.e2m1x2.f32 %h1, %f2, %f3;";
        chk(r, &[f(-1.0), 0xffc0_0000], 0x07);
        unspecified(r, &[f(-0.1), f(1.0)]);
        let e2m3 = "cvt.rn.satfinite.e2m3x2.f32 %h1, %f2, %f3;";
        chk(e2m3, &[f(1.0), f(-7.5)], 0x083f);
        chk(e2m3, &[f(100.0), 0x7fc0_0000], 0x1f1f);
        chk(e2m3, &[f(0.125), f(0.0625)], 0x0100); // min subnormal; tie to 0
        let e3m2 = "cvt.rn.satfinite.e3m2x2.f32 %h1, %f2, %f3;";
        chk(e3m2, &[f(1.0), f(-28.0)], 0x0c3f);
        chk(e3m2, &[f(1e9), f(0.03125)], 0x1f00);
        chk(e3m2, &[f(0.0625), f(-30.0)], 0x013f);
        chk("cvt.rn.satfinite.relu.e3m2x2.f32 %h1, %f2, %f3;", &[f(-28.0), f(28.0)], 0x001f);
        // Back to .f16x2.
        chk("cvt.rn.f16x2.e2m1x2 %r1, %h2;", &[0x2f], 0x3c00_c600);
        chk("cvt.rn.relu.f16x2.e2m1x2 %r1, %h2;", &[0x2f], 0x3c00_0000);
        chk("cvt.rn.f16x2.e2m3x2 %r1, %h2;", &[0x083f], 0x3c00_c780);
        chk("cvt.rn.f16x2.e3m2x2 %r1, %h2;", &[0x0c3f], 0x3c00_cf00);
        chk("cvt.rn.relu.f16x2.e3m2x2 %r1, %h2;", &[0x0c3f], 0x3c00_0000);
        // 6-bit values must have their 2 MSBs zero.
        unspecified("cvt.rn.f16x2.e2m3x2 %r1, %h2;", &[0x4800]);
        unspecified("cvt.rn.f16x2.e3m2x2 %r1, %h2;", &[0x0080]);
        let e2m1_values = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        let i = ins("cvt.rn.f16x2.e2m1x2 %r1, %h2;");
        for c in 0..16u128 {
            let v = e2m1_values[(c & 7) as usize] * if c & 8 != 0 { -1.0 } else { 1.0 };
            let h = f64_to_format_bits(v, T::F16) as u128;
            assert_eq!(eval(&i, &[c << 4 | c], false).unwrap().unwrap().dests[0], Val::exact(h << 16 | h), "{c:#x}");
        }
    }

    #[test]
    fn narrow_formats_round_trip_every_code() {
        // Every finite code converts to .f16x2 and back to itself.
        for (name, s) in [("e4m3x2", Small::E4M3), ("e5m2x2", Small::E5M2), ("e2m1x2", Small::E2M1), ("e2m3x2", Small::E2M3), ("e3m2x2", Small::E3M2)] {
            let to16 = ins(&format!("cvt.rn.f16x2.{name} %r1, %h2;"));
            let from32 = ins(&format!("cvt.rn.satfinite.{name}.f32 %h1, %f2, %f3;"));
            let step = if s.width == 4 { 4 } else { 8 };
            for c in 0..(1u128 << s.width) {
                if s.decode(c as u32).is_none_or(|v| v.is_infinite()) {
                    continue;
                }
                let h = eval(&to16, &[c << step | c], false).unwrap().unwrap().dests[0];
                assert!(h.is_exact(), "{name} {c:#x}");
                let x = to_double(h.bits & 0xffff, T::F16);
                let xf = f32::from_bits(from_double(x, T::F32, NTE) as u32);
                let back = eval(&from32, &[f(xf), f(xf)], false).unwrap().unwrap().dests[0];
                assert_eq!(back, Val::exact(c << step | c), "{name} {c:#x}");
            }
        }
    }

    // ------------------------------------------------------------------
    // .ue8m0
    // ------------------------------------------------------------------

    #[test]
    fn ue8m0_conversions() {
        let rz = "cvt.rz.satfinite.ue8m0x2.f32 %h1, %f2, %f3;";
        let rp = "cvt.rp.satfinite.ue8m0x2.f32 %h1, %f2, %f3;";
        chk(rz, &[f(1.0), f(3.0)], 0x7f80);
        chk(rp, &[f(1.0), f(3.0)], 0x7f81);
        chk(rz, &[0x7f00_0000, 0x7f7f_ffff], 0xfefe);
        chk(rp, &[0x7f00_0000, 0x7f7f_ffff], 0xfefe);
        chk(rp, &[f(f32::INFINITY), f(f32::NEG_INFINITY)], 0xfefe);
        chk(rz, &[0x7fc0_0000, 0xffc0_0000], 0xffff);
        chk(rz, &[0x0040_0000, 0x0060_0000], 0x0000); // 2^-127, 1.5*2^-127
        chk(rp, &[0x0040_0000, 0x0060_0000], 0x0001);
        chk(rp, &[0x0020_0000, 0x0000_0001], 0x0000);
        chk("cvt.rz.ue8m0x2.f32 %h1, %f2, %f3;", &[f(0.5), f(1.9)], 0x7e7f);
        unspecified("cvt.rp.ue8m0x2.f32 %h1, %f2, %f3;", &[0x7f7f_ffff, f(1.0)]);
        unspecified("cvt.rz.ue8m0x2.f32 %h1, %f2, %f3;", &[f(f32::INFINITY), f(1.0)]);
        unspecified(rz, &[0x0020_0000, f(1.0)]); // below 2^-127 toward zero
        unspecified(rz, &[f(0.0), f(1.0)]);
        unspecified(rp, &[f(1.0), f(-1.0)]);
        chk("cvt.rp.satfinite.ue8m0x2.bf16x2 %h1, %r2;", &[0x3f80_4040], 0x7f81);
        chk("cvt.rz.satfinite.ue8m0x2.bf16x2 %h1, %r2;", &[0x3f80_4040], 0x7f80);
        chk("cvt.rz.ue8m0x2.bf16x2 %h1, %r2;", &[0x7fc0_0040], 0xff00);
        let back = "cvt.rn.bf16x2.ue8m0x2 %r1, %h2;";
        chk(back, &[0x7f81], 0x3f80_4080);
        chk(back, &[0x00fe], 0x0040_7f00);
        let v = run(back, &[0xff80]);
        assert_eq!((v.quality, v.bits & 0xffff), (Quality::AnyNan, 0x4000));
        assert!(Fmt::BF16.is_nan(v.bits >> 16));
        // Round trip: every finite code is a power of two that converts back to itself.
        for c in 0..0xffu128 {
            let b = ex(back, &[c]);
            assert_eq!(ex("cvt.rz.ue8m0x2.bf16x2 %h1, %r2;", &[b << 16 | b]), c << 8 | c, "{c:#x}");
            assert_eq!(ex(rp, &[b << 16, b << 16]), c << 8 | c, "{c:#x}");
        }
    }

    // ------------------------------------------------------------------
    // The hand rounder against rustc_apfloat
    // ------------------------------------------------------------------

    fn hand_ieee(x: f64, fm: Fmt, r: Round) -> u128 {
        let emin = 2 - (1i32 << (fm.exp - 1));
        let (code, _) = round_mag(x, fm.man, emin, r);
        let neg = x.is_sign_negative();
        let sign = if neg { fm.sign() } else { 0 };
        let c = code as u128;
        sign | if c > fm.max() {
            if overflows_to_inf(r, neg) {
                fm.inf()
            } else {
                fm.max()
            }
        } else {
            c
        }
    }

    #[test]
    fn hand_rounder_matches_apfloat() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let modes = [NTE, NTA, RZ, RP, RM];
        for (t, fm, lo, hi) in [(T::F16, Fmt::HALF, -28, 17), (T::Bf16, Fmt::BF16, -136, 129), (T::F32, Fmt::SINGLE, -152, 129)] {
            for _ in 0..20000 {
                let x = rng.double(lo, hi);
                for r in modes {
                    let want = from_double(Double::from_bits(d(x)), t, r);
                    assert_eq!(hand_ieee(x, fm, r), want, "{t:?} {r:?} {x:e}");
                }
            }
        }
        for _ in 0..20000 {
            let x = rng.double(-12, 9);
            for r in modes {
                let mut l = false;
                let s = Small::E4M3;
                if x.abs() <= 448.0 {
                    let w: StatusAnd<Float8E4M3FN> = Double::from_bits(d(x)).convert_r(r, &mut l);
                    let sign = if x < 0.0 { 0x80 } else { 0 };
                    assert_eq!(sign | round_mag(x, s.man, s.emin, r).0 as u128, w.value.to_bits(), "e4m3 {r:?} {x:e}");
                }
                let y = rng.double(-19, 17);
                let w: StatusAnd<Float8E5M2> = Double::from_bits(d(y)).convert_r(r, &mut l);
                assert_eq!(hand_ieee(y, Fmt { width: 8, man: 2, exp: 5 }, r), w.value.to_bits(), "e5m2 {r:?} {y:e}");
            }
        }
    }

    #[test]
    fn fp8_cross_check_with_apfloat() {
        let mut rng = Rng(0x7777_1111_2222_3333);
        let e4 = ins("cvt.rn.satfinite.e4m3x2.f32 %h1, %f2, %f3;");
        let e5 = ins("cvt.rn.satfinite.e5m2x2.f32 %h1, %f2, %f3;");
        for _ in 0..20000 {
            let x = rng.double(-13, 10) as f32;
            let y = rng.double(-20, 17) as f32;
            let mut l = false;
            let xd = Double::from_bits(d(x as f64));
            let yd = Double::from_bits(d(y as f64));
            let w4: StatusAnd<Float8E4M3FN> = xd.convert_r(NTE, &mut l);
            let w5: StatusAnd<Float8E5M2> = yd.convert_r(NTE, &mut l);
            // Saturation instead of NaN/infinity.
            let w4 = if x.abs() > 448.0 { if x < 0.0 { 0xfe } else { 0x7e } } else { w4.value.to_bits() };
            let w5 = if y.abs() > 57344.0 { if y < 0.0 { 0xfb } else { 0x7b } } else { w5.value.to_bits() };
            assert_eq!(eval(&e4, &[f(x), f(x)], false).unwrap().unwrap().dests[0], Val::exact(w4 << 8 | w4), "{x:e}");
            assert_eq!(eval(&e5, &[f(y), f(y)], false).unwrap().unwrap().dests[0], Val::exact(w5 << 8 | w5), "{y:e}");
        }
    }

    #[test]
    fn f64_to_f32_and_f16_cross_check() {
        let mut rng = Rng(0x3141_5926_5358_9793);
        let a = ins("cvt.rn.f32.f64 %f1, %fd2;");
        let b = ins("cvt.f64.f32 %fd1, %f2;");
        let modes = [("rn", NTE), ("rz", RZ), ("rm", RM), ("rp", RP)];
        let hs: Vec<_> = modes.iter().map(|(n, r)| (ins(&format!("cvt.{n}.f16.f32 %h1, %f2;")), *r)).collect();
        for _ in 0..20000 {
            let x = rng.double(-160, 130);
            assert_eq!(eval(&a, &[d(x)], false).unwrap().unwrap().dests[0], Val::exact(f(x as f32)), "{x:e}");
            let y = rng.double(-30, 17) as f32;
            assert_eq!(eval(&b, &[f(y)], false).unwrap().unwrap().dests[0], Val::exact(d(y as f64)), "{y:e}");
            for (i, r) in &hs {
                assert_eq!(eval(i, &[f(y)], false).unwrap().unwrap().dests[0], Val::exact(hand_ieee(y as f64, Fmt::HALF, *r)), "{r:?} {y:e}");
            }
        }
    }

    // ------------------------------------------------------------------
    // cvt.pack
    // ------------------------------------------------------------------

    #[test]
    fn cvt_pack() {
        chk("cvt.pack.sat.s16.s32 %r1, %r2, %r3;", &[40000, i32_(-40000)], 0x7fff_8000);
        chk("cvt.pack.sat.s16.s32 %r1, %r2, %r3;", &[i32_(-1), 1], 0xffff_0001);
        chk("cvt.pack.sat.u16.s32 %r1, %r2, %r3;", &[i32_(-1), 70000], 0x0000_ffff);
        chk("cvt.pack.sat.u16.s32 %r1, %r2, %r3;", &[0x1234, 0x5678], 0x1234_5678);
        chk("cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;", &[300, i32_(-5), 0x1234], 0x1234_ff00);
        chk("cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, 0;", &[0x12, 0x34, 0], 0x1234);
        chk("cvt.pack.sat.s8.s32.b32 %r1, %r2, %r3, %r4;", &[i32_(-300), 300, 0xffff_ffff], 0xffff_807f);
        chk("cvt.pack.sat.s4.s32.b32 %r1, %r2, %r3, %r4;", &[7, i32_(-9), 0xabcd_ef12], 0xcdef_1278);
        chk("cvt.pack.sat.u4.s32.b32 %r1, %r2, %r3, %r4;", &[16, i32_(-1), 0], 0xf0);
        chk("cvt.pack.sat.s2.s32.b32 %r1, %r2, %r3, %r4;", &[1, i32_(-3), 0xffff_ffff], 0xffff_fff6);
        chk("cvt.pack.sat.u2.s32.b32 %r1, %r2, %r3, %r4;", &[5, 2, 0], 0xe);
        chk("cvt.pack.sat.u2.s32.b32 %r1, %r2, %r3, %r4;", &[i32_(i32::MIN), i32_(i32::MAX), 0x8000_0001], 0x13);
    }

    // ------------------------------------------------------------------
    // Immediates, dispatch, arity
    // ------------------------------------------------------------------

    #[test]
    fn f64_to_16_bit_formats() {
        assert_eq!(f64_to_format_bits(1.0, T::F16), 0x3c00);
        assert_eq!(f64_to_format_bits(1.0, T::Bf16), 0x3f80);
        assert_eq!(f64_to_format_bits(-0.0, T::F16), 0x8000);
        assert_eq!(f64_to_format_bits(65504.0, T::F16), 0x7bff);
        assert_eq!(f64_to_format_bits(65519.0, T::F16), 0x7bff);
        assert_eq!(f64_to_format_bits(65520.0, T::F16), 0x7c00);
        assert_eq!(f64_to_format_bits(1.0 / 3.0, T::F16), 0x3555);
        assert_eq!(f64_to_format_bits(1.0 / 3.0, T::Bf16), 0x3eab);
        assert_eq!(f64_to_format_bits(1.0 + p2(-11), T::F16), 0x3c00);
        assert_eq!(f64_to_format_bits(1.0 + p2(-11) + p2(-50), T::F16), 0x3c01);
        assert_eq!(f64_to_format_bits(1.0 + p2(-8), T::Bf16), 0x3f80);
        assert_eq!(f64_to_format_bits(p2(-24), T::F16), 0x0001);
        assert_eq!(f64_to_format_bits(1e-8, T::F16), 0);
        assert_eq!(f64_to_format_bits(f64::NEG_INFINITY, T::Bf16), 0xff80);
        assert!(Fmt::HALF.is_nan(f64_to_format_bits(f64::NAN, T::F16) as u128));
        assert!(Fmt::BF16.is_nan(f64_to_format_bits(f64::NAN, T::Bf16) as u128));
        use crate::ir::{FloatLit, Imm};
        let lit = Imm::Float(FloatLit::decimal("0.5".into(), 0.5f64.to_bits()));
        assert_eq!(crate::eval::imm_bits(&lit, T::F16), 0x3800);
        assert_eq!(crate::eval::imm_bits(&lit, T::Bf16), 0x3f00);
    }

    #[test]
    fn dispatch_and_arity() {
        assert!(eval(&ins("add.s32 %r1, %r2, %r3;"), &[0, 0], false).is_none());
        let r = crate::eval::eval(&ins("cvt.rn.f32.s32 %f1, %r2;"), &[3], false).unwrap();
        assert_eq!(r.dests[0], Val::exact(f(3.0)));
        assert_eq!(r.carry_out, None);
        assert!(crate::eval::handles(Opcode::CVT) && crate::eval::handles(Opcode::CVT_PACK));
        let e = eval(&ins("cvt.rn.f16x2.f32 %r1, %f2, %f3;"), &[0], false).unwrap();
        assert!(matches!(e, Err(EvalError::BadOperands(_))));
        let e = eval(&ins("cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;"), &[0, 0], false).unwrap();
        assert!(matches!(e, Err(EvalError::BadOperands(_))));
    }
}
