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
use rustc_apfloat::{Float, FloatConvert, Round, Status, StatusAnd};
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
    from_double(Double::from_bits(v.to_bits() as u128), t, Round::NearestTiesToEven).0 as u16
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
#[derive(Clone, Copy, Debug, Default)]
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
fn round_of(r: Rounding) -> Option<Round> {
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

/// A value of `.f16 .bf16 .f32 .f64` as an (exact) double.
fn to_double(b: u128, t: ScalarType) -> Double {
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

/// Rounds a double into `.f16 .bf16 .f32 .f64`.
fn from_double(x: Double, t: ScalarType, r: Round) -> (u128, Status) {
    let mut lost = false;
    match t {
        T::F16 => {
            let v: StatusAnd<Half> = x.convert_r(r, &mut lost);
            (v.value.to_bits(), v.status)
        }
        T::Bf16 => {
            let v: StatusAnd<BFloat> = x.convert_r(r, &mut lost);
            (v.value.to_bits(), v.status)
        }
        T::F32 => {
            let v: StatusAnd<Single> = x.convert_r(r, &mut lost);
            (v.value.to_bits(), v.status)
        }
        _ => (x.to_bits(), Status::OK),
    }
}

/// Rounds an integer into `.f16 .bf16 .f32 .f64`.
fn from_int(v: i128, t: ScalarType, r: Round) -> u128 {
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
fn overflows_to_inf(r: Round, neg: bool) -> bool {
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
fn round_mag(x: f64, man: u32, emin: i32, r: Round) -> (u64, bool) {
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
        Some(v) => from_double(Double::from_bits(v.to_bits() as u128), T::F16, NTE).0,
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
    from_double(to_double(b, t), T::F32, NTE).0
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
            "`cvt.rs{}{}`: the manual gives the random-bit layout of the x4 forms only in its figures",
            d.text(),
            a.text()
        ));
    }
    match (d, a) {
        _ if is_float(d) && is_float(a) || is_int(d) && is_float(a) || is_float(d) && is_int(a) || is_int(d) && is_int(a) => {
            arity(srcs, 1, ins)?;
            one(scalar(d, a, srcs[0] & mask(a.bits()), &m)?)
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

/// The scalar forms between `.u8`..`.s64`, `.f16 .bf16 .f32 .f64`.
fn scalar(d: ScalarType, a_ty: ScalarType, a: u128, m: &Mods) -> Result<Val, EvalError> {
    let name = format!("cvt{}{}", d.text(), a_ty.text());
    if (m.relu || m.satfinite) && !(a_ty == T::F32 && matches!(d, T::F16 | T::Bf16)) {
        return unsupported(format!("`{name}` with `.relu`/`.satfinite`"));
    }
    if m.ftz && a_ty != T::F32 && d != T::F32 {
        return unsupported(format!("`{name}` with `.ftz` (only with .f32)"));
    }
    match (is_int(d), is_int(a_ty)) {
        (true, true) => {
            if let Some(r) = m.rnd {
                return unsupported(format!("`{name}` with `{}` (illegal on integer-to-integer)", r.text()));
            }
            if m.ftz {
                return unsupported(format!("`{name}` with `.ftz`"));
            }
            let v = int_value(a, a_ty);
            let v = if m.sat {
                let (lo, hi) = int_range(d);
                v.clamp(lo, hi)
            } else {
                v
            };
            Ok(exact(trunc(v as u128, d.bits())))
        }
        (true, false) => {
            let r = match m.rnd {
                None => None,
                Some(r) if r.is_integer() => round_of(r),
                Some(r) => return unsupported(format!("`{name}` with `{}` (float-to-integer needs an integer rounding)", r.text())),
            };
            let fa = Fmt::of(a_ty);
            let mut a = a;
            if m.ftz && fa.is_subnormal(a) {
                a &= fa.sign();
            }
            if fa.is_nan(a) {
                return Ok(exact(0));
            }
            let x = to_double(a, a_ty);
            let (lo, hi) = int_range(d);
            Ok(by_mode(r, |md| {
                let i = x.round_to_integral(md).value;
                let mut is_exact = false;
                let v = i.to_i128_r(128, RZ, &mut is_exact).value;
                exact(trunc(v.clamp(lo, hi) as u128, d.bits()))
            }))
        }
        (false, true) => {
            let r = float_rounding(m, d)?;
            if m.sat && d == T::Bf16 {
                return unsupported(format!("`{name}` with `.sat` (applies to .f16, .f32, .f64)"));
            }
            let v = int_value(a, a_ty);
            let f = Fmt::of(d);
            Ok(by_mode(r, |md| {
                let b = from_int(v, d, md);
                if m.sat {
                    sat_float(b, f)
                } else {
                    exact(b)
                }
            }))
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
            Ok(by_mode(r, |md| f2f_lane(a, a_ty, d, md, irnd, m)))
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
    let (mut b, _) = if irnd { from_double(x.round_to_integral(r).value, d, NTE) } else { from_double(x, d, r) };
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
    use crate::eval::Eval;

    fn parse_all(body: &str) -> Vec<Instruction> {
        let text = format!(
            ".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k() {{ .reg .b32 %r<20>; .reg .b64 %rd<9>; .reg .b16 %h<9>; .reg .f32 %f<9>; .reg .f64 %fd<9>; {body} ret; }}"
        );
        let m = crate::parse::parse_str(&text).unwrap_or_else(|e| panic!("{body}: {e:?}"));
        let mut out = Vec::new();
        for it in &m.items {
            if let crate::ir::Item::Func(f) = it {
                out.extend(f.instructions().cloned());
            }
        }
        out
    }

    #[test]
    fn zz_parse_debug() {
        for t in [
            "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;",
            "cvt.rna.satfinite.tf32.f32 %r1, %f1;",
            "cvt.f64.bf16.rp %fd1, %h1;",
            "cvt.rs.relu.satfinite.f16x2.f32 %r1, %f1, %f2, %r3;",
            "cvt.rs.satfinite.e2m1x4.f32 %h1, {%f1, %f2, %f3, %f4}, %r1;",
            "cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;",
            "cvt.rn.s32.s16 %r1, %r2;",
            "cvt.rzi.ftz.sat.s32.f32 %r1, %f2;",
            "cvt.rp.satfinite.ue8m0x2.bf16x2 %h1, %r1;",
        ] {
            let i = &parse_all(t)[0];
            println!("{t}\n  {} {:?} types={:?} rnd={:?}", i.opcode.name(), i.modifiers().collect::<Vec<_>>(), i.types(), i.rounding());
            let _: Option<Eval> = None;
        }
    }
}
