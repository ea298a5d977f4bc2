//! Semantics of the float family: floating-point arithmetic (PTX ISA 8.7
//! §9.7.3), half precision (§9.7.4) and mixed precision (§9.7.5).
//!
//! Exactly rounded operations (`add sub mul fma mad div rcp sqrt` with a
//! rounding modifier, or the `.rn` default of `add sub mul`) are computed with
//! `rustc_apfloat` in the requested mode. On top of IEEE 754 the manual's
//! rules are applied:
//!
//! - `.ftz` flushes subnormal inputs and results to sign-preserving zero. It
//!   exists on `.f32`, `.f32x2`, `.f16`, `.f16x2` (and `ex2.approx.ftz.bf16`,
//!   the `.ftz.f64` approximations); `.f64` never flushes. A result is
//!   subnormal when the correctly rounded value is; when the exact value is
//!   below the smallest normal but rounds up to it, the manual does not say
//!   whether it is flushed, and such evaluations are `Unsupported`.
//! - `.sat` clamps to [0.0, 1.0], NaN gives +0.0. A result of -0.0 is
//!   `Unsupported` (the manual does not say whether it becomes +0.0).
//! - `.relu` (half `fma`) clamps negative results to +0.0 and gives the
//!   canonical NaN for NaN results; -0.0 is `Unsupported` like `.sat`.
//! - NaN results: single- and half-precision instructions "return an
//!   unspecified NaN" ([`Quality::AnyNan`], bits of the canonical NaN). For
//!   `.f64` the manual only says that NaN payloads are "supported", not which
//!   payload or sign the result has: also `AnyNan` (bits: the first NaN input,
//!   quieted). Explicit rules win: `abs.f64` passes a NaN unchanged, `min`/
//!   `max` return the other input, `.NaN` and `.relu` give the canonical NaN
//!   (`0x7fffffff`, `0x7fff` for `.f16`/`.bf16`, as in NVIDIA's CUDA headers;
//!   the manual gives `0x7fffffff00000000` for `.f64`).
//! - Packed types (`.f16x2`, `.bf16x2`, `.f32x2`) are evaluated lane by lane;
//!   the result's quality is the weakest of the lanes' (Unspecified < Approx <
//!   AnyNan < Exact). A lane whose bits are a NaN in a result that is not
//!   `Exact` may be any NaN.
//!
//! Approximate instructions (`.approx`, `div.full`, and the PTX 1.x spellings
//! that default to them) give the value computed on the host in `f64` and
//! rounded to nearest, marked [`Quality::Approx`] with a bound derived from
//! the manual's error bound, never `Exact`. `ulps` counts units in the last
//! place of the returned value and includes one extra ulp for the rounding of
//! the returned value itself:
//! - "n ulp" bounds give `n + 1`;
//! - relative bounds `E` give `ceil(E * 2^p) + 1` (`p` = precision in bits);
//! - absolute bounds `A` (`sin`, `cos`, `lg2` near 1, half `tanh`) give
//!   `ceil(A / ulp(value)) + 1`: near zero this is huge and saturates at
//!   `u32::MAX`, which means "no useful bound in ulps";
//! - where the manual gives no bound (`rsqrt.approx.f64`, the `.ftz.f64`
//!   approximations, `sin`/`cos` outside [-100π, 100π]): `u32::MAX`.
//!
//! Special inputs listed in the manual's tables (`sin(±0) = ±0`,
//! `ex2(-Inf) = +0` ...) give that value with `Approx { ulps: 0 }`.

use super::bits::{mask, trunc};
use super::{arity, Eval, EvalError, EvalResult, Quality, Val};
use crate::ir::Instruction;
use crate::isa::{Mod, Opcode, Rounding, ScalarType, TypeClass};
use rustc_apfloat::ieee::{BFloat, Double, Half, IeeeFloat, Quad, Semantics, Single};
use rustc_apfloat::{Float, FloatConvert, Round};
use smallvec::SmallVec;
use std::cmp::Ordering;

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[
    Opcode::COPYSIGN,
    Opcode::ADD,
    Opcode::SUB,
    Opcode::MUL,
    Opcode::FMA,
    Opcode::MAD,
    Opcode::DIV,
    Opcode::ABS,
    Opcode::NEG,
    Opcode::MIN,
    Opcode::MAX,
    Opcode::RCP,
    Opcode::SQRT,
    Opcode::RSQRT,
    Opcode::SIN,
    Opcode::COS,
    Opcode::LG2,
    Opcode::EX2,
    Opcode::TANH,
];

/// Evaluates `ins` if it belongs to this family (floating-point types only;
/// the integer forms of the shared opcodes belong to `int.rs`).
pub fn eval(ins: &Instruction, srcs: &[u128], carry_in: bool) -> Option<EvalResult> {
    let _ = carry_in;
    if !OPCODES.contains(&ins.opcode) {
        return None;
    }
    let ty = ins.ty()?;
    if ty.class() != TypeClass::Float {
        return None;
    }
    Some(eval_float(ins, srcs))
}

// ---------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------

/// A scalar floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    F16,
    Bf16,
    F32,
    F64,
}

impl Fmt {
    fn width(self) -> u32 {
        match self {
            Fmt::F16 | Fmt::Bf16 => 16,
            Fmt::F32 => 32,
            Fmt::F64 => 64,
        }
    }
    fn man_bits(self) -> u32 {
        match self {
            Fmt::F16 => 10,
            Fmt::Bf16 => 7,
            Fmt::F32 => 23,
            Fmt::F64 => 52,
        }
    }
    fn exp_bits(self) -> u32 {
        self.width() - 1 - self.man_bits()
    }
    /// Bits of the significand, with the implicit one.
    fn precision(self) -> u32 {
        self.man_bits() + 1
    }
    fn bias(self) -> i32 {
        (1 << (self.exp_bits() - 1)) - 1
    }
    fn sign(self) -> u128 {
        1 << (self.width() - 1)
    }
    fn exp_mask(self) -> u128 {
        mask(self.exp_bits()) << self.man_bits()
    }
    /// The bits without the sign.
    fn mag(self, b: u128) -> u128 {
        b & (self.sign() - 1)
    }
    fn is_nan(self, b: u128) -> bool {
        self.mag(b) > self.exp_mask()
    }
    fn is_inf(self, b: u128) -> bool {
        self.mag(b) == self.exp_mask()
    }
    fn is_zero(self, b: u128) -> bool {
        self.mag(b) == 0
    }
    fn is_sub(self, b: u128) -> bool {
        let m = self.mag(b);
        m != 0 && m & self.exp_mask() == 0
    }
    fn is_neg(self, b: u128) -> bool {
        b & self.sign() != 0
    }
    fn one(self) -> u128 {
        (self.bias() as u128) << self.man_bits()
    }
    fn inf(self) -> u128 {
        self.exp_mask()
    }
    fn min_normal(self) -> u128 {
        1 << self.man_bits()
    }
    /// The canonical NaN (`.NaN`, `.relu`).
    fn canonical_nan(self) -> u128 {
        match self {
            Fmt::F16 | Fmt::Bf16 => 0x7fff,
            Fmt::F32 => 0x7fff_ffff,
            Fmt::F64 => 0x7fff_ffff_0000_0000,
        }
    }
    fn quiet(self, b: u128) -> u128 {
        b | 1 << (self.man_bits() - 1)
    }
    /// Flushes a subnormal to sign-preserving zero.
    fn flush(self, b: u128) -> u128 {
        if self.is_sub(b) {
            b & self.sign()
        } else {
            b
        }
    }
    /// The spacing of the format at `b` (finite values).
    fn ulp(self, b: u128) -> f64 {
        let e = ((self.mag(b) >> self.man_bits()) as i32).max(1);
        pow2(e - self.bias() - self.man_bits() as i32)
    }
    fn to_f64(self, b: u128) -> f64 {
        match self {
            Fmt::F64 => f64::from_bits(b as u64),
            Fmt::F32 => f32::from_bits(b as u32) as f64,
            Fmt::F16 => f64::from_bits(conv::<Half, Double>(b, Round::NearestTiesToEven) as u64),
            Fmt::Bf16 => f64::from_bits(conv::<BFloat, Double>(b, Round::NearestTiesToEven) as u64),
        }
    }
    /// Rounds a host double to the format, to nearest even.
    fn round_f64(self, v: f64) -> u128 {
        let b = v.to_bits() as u128;
        match self {
            Fmt::F64 => b,
            Fmt::F32 => conv::<Double, Single>(b, Round::NearestTiesToEven),
            Fmt::F16 => conv::<Double, Half>(b, Round::NearestTiesToEven),
            Fmt::Bf16 => conv::<Double, BFloat>(b, Round::NearestTiesToEven),
        }
    }
    /// A key ordering non-NaN values with -0.0 < +0.0.
    fn key(self, b: u128) -> i128 {
        let m = self.mag(b) as i128;
        if self.is_neg(b) {
            -m - 1
        } else {
            m
        }
    }
}

/// 2^k as a double (0 below the subnormals, infinity above the range).
fn pow2(k: i32) -> f64 {
    if k > 1023 {
        f64::INFINITY
    } else if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else if k >= -1074 {
        f64::from_bits(1u64 << (k + 1074))
    } else {
        0.0
    }
}

fn conv<S: Float + FloatConvert<T>, T: Float>(b: u128, r: Round) -> u128 {
    let mut loses = false;
    S::from_bits(b).convert_r(r, &mut loses).value.to_bits()
}

/// The upper word of a double as `rcp.approx.ftz.f64` and
/// `rsqrt.approx.ftz.f64` see it: the 1.11.20 format.
struct Hi32S;
impl Semantics for Hi32S {
    const BITS: usize = 32;
    const EXP_BITS: usize = 11;
}
type Hi32 = IeeeFloat<Hi32S>;

fn lanes_of(ty: ScalarType) -> Option<(Fmt, usize)> {
    Some(match ty {
        ScalarType::F16 => (Fmt::F16, 1),
        ScalarType::F16x2 => (Fmt::F16, 2),
        ScalarType::Bf16 => (Fmt::Bf16, 1),
        ScalarType::Bf16x2 => (Fmt::Bf16, 2),
        ScalarType::F32 => (Fmt::F32, 1),
        ScalarType::F32x2 => (Fmt::F32, 2),
        ScalarType::F64 => (Fmt::F64, 1),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

fn unsupported(s: impl Into<String>) -> EvalError {
    EvalError::Unsupported(s.into())
}

fn val(bits: u128, quality: Quality) -> Val {
    Val { bits, quality }
}

/// A value from a special-case table of an approximate instruction.
fn table(bits: u128) -> Val {
    val(bits, Quality::Approx { ulps: 0 })
}

/// Some NaN: the canonical NaN's bits, or for `.f64` the first NaN input quieted.
fn any_nan(fmt: Fmt, inputs: &[u128]) -> Val {
    let bits = match fmt {
        Fmt::F64 => inputs.iter().find(|&&x| fmt.is_nan(x)).map(|&x| fmt.quiet(x)).unwrap_or(fmt.canonical_nan()),
        _ => fmt.canonical_nan(),
    };
    val(bits, Quality::AnyNan)
}

fn weaker(a: Quality, b: Quality) -> Quality {
    use Quality::*;
    match (a, b) {
        (Unspecified, _) | (_, Unspecified) => Unspecified,
        (Approx { ulps: x }, Approx { ulps: y }) => Approx { ulps: x.max(y) },
        (Approx { ulps }, _) | (_, Approx { ulps }) => Approx { ulps },
        (AnyNan, _) | (_, AnyNan) => AnyNan,
        (Exact, Exact) => Exact,
    }
}

/// Applies `f` to each lane of the sources (lane `i` of every source) and
/// packs the results.
fn lanes(fmt: Fmt, n: usize, srcs: &[u128], f: impl Fn(&[u128]) -> Result<Val, EvalError>) -> EvalResult {
    let w = fmt.width();
    let mut bits = 0u128;
    let mut q = Quality::Exact;
    for i in 0..n {
        let sh = i as u32 * w;
        let xs: SmallVec<[u128; 3]> = srcs.iter().map(|&s| trunc(s >> sh, w)).collect();
        let v = f(&xs)?;
        bits |= trunc(v.bits, w) << sh;
        q = weaker(q, v.quality);
    }
    Ok(Eval::one(val(bits, q)))
}

// ---------------------------------------------------------------------------
// Exactly rounded arithmetic
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AOp {
    Add,
    Sub,
    Mul,
    Div,
    Fma,
}

fn ieee<F: Float>(op: AOp, x: &[u128], r: Round) -> u128 {
    let v = |i: usize| F::from_bits(x[i]);
    let res = match op {
        AOp::Add => v(0).add_r(v(1), r),
        AOp::Sub => v(0).sub_r(v(1), r),
        AOp::Mul => v(0).mul_r(v(1), r),
        AOp::Div => v(0).div_r(v(1), r),
        AOp::Fma => v(0).mul_add_r(v(1), v(2), r),
    };
    res.value.to_bits()
}

fn ieee_op(fmt: Fmt, op: AOp, x: &[u128], r: Round) -> u128 {
    let b = match fmt {
        Fmt::F16 => ieee::<Half>(op, x, r),
        Fmt::Bf16 => ieee::<BFloat>(op, x, r),
        Fmt::F32 => ieee::<Single>(op, x, r),
        Fmt::F64 => ieee::<Double>(op, x, r),
    };
    trunc(b, fmt.width())
}

fn round_mode(r: Rounding) -> Result<Round, EvalError> {
    Ok(match r {
        Rounding::Rn => Round::NearestTiesToEven,
        Rounding::Rz => Round::TowardZero,
        Rounding::Rm => Round::TowardNegative,
        Rounding::Rp => Round::TowardPositive,
        other => return Err(unsupported(format!("floating-point rounding `{}`", other.text()))),
    })
}

/// Result modifiers of the arithmetic instructions.
#[derive(Clone, Copy, Default, Debug)]
struct Opts {
    ftz: bool,
    sat: bool,
    relu: bool,
    oob: bool,
}

/// One exactly rounded operation on one lane, with `.ftz`, `.sat`, `.relu`,
/// `.oob` and the NaN rules.
fn arith(fmt: Fmt, op: AOp, x: &[u128], r: Round, o: Opts) -> Result<Val, EvalError> {
    let x: SmallVec<[u128; 3]> = x.iter().map(|&v| if o.ftz { fmt.flush(v) } else { v }).collect();
    if o.oob && x.iter().any(|&v| fmt.is_nan(v)) {
        // The manual does not give the OOB-NaN encoding.
        return Ok(Val::unspecified());
    }
    let mut d = ieee_op(fmt, op, &x, r);
    if fmt.is_nan(d) {
        if o.sat {
            return Ok(Val::exact(0));
        }
        if o.relu {
            return Ok(Val::exact(fmt.canonical_nan()));
        }
        return Ok(any_nan(fmt, &x));
    }
    if o.ftz {
        if fmt.is_sub(d) {
            d &= fmt.sign();
        } else if fmt.mag(d) == fmt.min_normal() {
            let t = ieee_op(fmt, op, &x, Round::TowardZero);
            if fmt.mag(t) < fmt.min_normal() {
                // Below the smallest normal but rounding up to it: the
                // manual does not say whether it is flushed.
                return Ok(Val::unspecified());
            }
        }
    }
    finish(fmt, d, o)
}

/// `.sat` and `.relu` on a non-NaN result.
fn finish(fmt: Fmt, d: u128, o: Opts) -> Result<Val, EvalError> {
    let mut d = d;
    if o.sat || o.relu {
        if fmt.is_neg(d) {
            if fmt.is_zero(d) {
                // `.sat`/`.relu` on -0.0: the manual does not say whether it
                // becomes +0.0.
                return Ok(Val::unspecified());
            }
            d = 0;
        } else if o.sat && fmt.mag(d) > fmt.one() {
            d = fmt.one();
        }
    }
    Ok(Val::exact(d))
}

/// Correctly rounded square root (`.f32`, `.f64`).
fn sqrt_exact(fmt: Fmt, a: u128, r: Round, ftz: bool) -> Result<Val, EvalError> {
    let a = if ftz { fmt.flush(a) } else { a };
    if fmt.is_nan(a) {
        return Ok(any_nan(fmt, &[a]));
    }
    if fmt.is_zero(a) {
        return Ok(Val::exact(a));
    }
    if fmt.is_neg(a) {
        return Ok(any_nan(fmt, &[]));
    }
    if fmt.is_inf(a) {
        return Ok(Val::exact(a));
    }
    // Nearest first (the host's square root is correctly rounded), then
    // the directed modes from the sign of y*y - a, exact in binary128.
    let (y, yq, aq) = match fmt {
        Fmt::F32 => {
            let y = f32::from_bits(a as u32).sqrt().to_bits() as u128;
            (y, Quad::from_bits(conv::<Single, Quad>(y, Round::NearestTiesToEven)), Quad::from_bits(conv::<Single, Quad>(a, Round::NearestTiesToEven)))
        }
        Fmt::F64 => {
            let y = f64::from_bits(a as u64).sqrt().to_bits() as u128;
            (y, Quad::from_bits(conv::<Double, Quad>(y, Round::NearestTiesToEven)), Quad::from_bits(conv::<Double, Quad>(a, Round::NearestTiesToEven)))
        }
        _ => return Err(unsupported("sqrt on a half-precision type")),
    };
    let sq = yq.mul_r(yq, Round::NearestTiesToEven).value;
    let d = match (r, sq.partial_cmp(&aq)) {
        (Round::TowardZero | Round::TowardNegative, Some(Ordering::Greater)) => y - 1,
        (Round::TowardPositive, Some(Ordering::Less)) => y + 1,
        _ => y,
    };
    Ok(Val::exact(d))
}

// ---------------------------------------------------------------------------
// Approximations
// ---------------------------------------------------------------------------

/// An error bound from the manual.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// Within n ulp.
    Ulp(u32),
    /// Relative error.
    Rel(f64),
    /// Absolute error.
    Abs(f64),
    /// No bound given.
    None,
}

/// What happens to subnormal results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    /// Flushed to sign-preserving zero.
    Flush,
    /// Kept.
    Keep,
    /// Not said: the bound is widened to cover a flush.
    Unknown,
}

fn ulps_of(x: f64) -> u32 {
    if x.is_nan() || x >= u32::MAX as f64 {
        u32::MAX
    } else {
        x.ceil().max(0.0) as u32
    }
}

/// The best value `v` rounded to the format, marked with the bound.
fn approx(fmt: Fmt, v: f64, bound: Bound, sub: Sub) -> Val {
    if v.is_nan() {
        return any_nan(fmt, &[]);
    }
    let mut bits = fmt.round_f64(v);
    let mut ulps = match bound {
        Bound::Ulp(n) => n.saturating_add(1),
        Bound::Rel(e) => ulps_of(e * pow2(fmt.precision() as i32)).saturating_add(1),
        Bound::Abs(a) => ulps_of(a / fmt.ulp(bits)).saturating_add(1),
        Bound::None => u32::MAX,
    };
    if fmt.is_sub(bits) {
        match sub {
            Sub::Flush => bits &= fmt.sign(),
            Sub::Keep => {}
            // Within (value / ulp) ulps of zero: the mantissa as an integer.
            Sub::Unknown => ulps = ulps.max(ulps_of(fmt.mag(bits) as f64).saturating_add(1)),
        }
    }
    val(bits, Quality::Approx { ulps })
}

fn sub_mode(ftz: bool) -> Sub {
    if ftz {
        Sub::Flush
    } else {
        Sub::Keep
    }
}

/// `sin.approx.f32`, `cos.approx.f32`.
fn trig(x: u128, ftz: bool, cos: bool) -> Val {
    let f = Fmt::F32;
    let x = if ftz { f.flush(x) } else { x };
    if f.is_nan(x) || f.is_inf(x) {
        return any_nan(f, &[]);
    }
    if f.is_zero(x) {
        return table(if cos { f.one() } else { x });
    }
    let xv = f.to_f64(x);
    let v = if cos { xv.cos() } else { xv.sin() };
    let pi = std::f64::consts::PI;
    let bound = if xv.abs() <= 2.0 * pi {
        Bound::Abs(2f64.powf(-20.5))
    } else if xv.abs() <= 100.0 * pi {
        Bound::Abs(2f64.powf(-14.7))
    } else {
        Bound::None
    };
    approx(f, v, bound, sub_mode(ftz))
}

/// `lg2.approx.f32`.
fn lg2(x: u128, ftz: bool) -> Val {
    let f = Fmt::F32;
    let x = if ftz { f.flush(x) } else { x };
    if f.is_nan(x) {
        return any_nan(f, &[]);
    }
    if f.is_zero(x) {
        return table(f.sign() | f.inf());
    }
    if f.is_neg(x) {
        return any_nan(f, &[]);
    }
    if f.is_inf(x) {
        return table(f.inf());
    }
    let xv = f.to_f64(x);
    let bound = if xv > 0.5 && xv < 2.0 { Bound::Abs(2f64.powi(-22)) } else { Bound::Rel(2f64.powi(-22)) };
    approx(f, xv.log2(), bound, sub_mode(ftz))
}

/// `ex2.approx` on one lane: `.f32` (2 ulp), `.f16` (relative 2^-9.9,
/// subnormal inputs supported), `.ftz.bf16` (relative 2^-7).
fn ex2(fmt: Fmt, x: u128, ftz: bool) -> Val {
    let x = if ftz { fmt.flush(x) } else { x };
    if fmt.is_nan(x) {
        return any_nan(fmt, &[]);
    }
    if fmt.is_zero(x) {
        return table(fmt.one());
    }
    if fmt.is_inf(x) {
        return table(if fmt.is_neg(x) { 0 } else { fmt.inf() });
    }
    let v = fmt.to_f64(x).exp2();
    match fmt {
        Fmt::F32 => approx(fmt, v, Bound::Ulp(2), sub_mode(ftz)),
        Fmt::F16 => approx(fmt, v, Bound::Rel(2f64.powf(-9.9)), Sub::Unknown),
        _ => approx(fmt, v, Bound::Rel(2f64.powi(-7)), sub_mode(ftz)),
    }
}

/// `tanh.approx` on one lane: `.f32` relative 2^-11, `.f16` absolute
/// 2^-10.987, `.bf16` absolute 2^-8; subnormals supported.
fn tanh(fmt: Fmt, x: u128) -> Val {
    if fmt.is_nan(x) {
        return any_nan(fmt, &[]);
    }
    if fmt.is_zero(x) {
        return table(x);
    }
    if fmt.is_inf(x) {
        return table((x & fmt.sign()) | fmt.one());
    }
    let v = fmt.to_f64(x).tanh();
    let bound = match fmt {
        Fmt::F32 => Bound::Rel(2f64.powi(-11)),
        Fmt::F16 => Bound::Abs(2f64.powf(-10.987)),
        _ => Bound::Abs(2f64.powi(-8)),
    };
    approx(fmt, v, bound, Sub::Keep)
}

/// `rcp.approx.f32`: 1 ulp over the whole range.
fn rcp_approx(x: u128, ftz: bool) -> Val {
    let f = Fmt::F32;
    let x = if ftz { f.flush(x) } else { x };
    if f.is_nan(x) {
        return any_nan(f, &[]);
    }
    if f.is_inf(x) {
        return table(x & f.sign());
    }
    if f.is_zero(x) {
        return table((x & f.sign()) | f.inf());
    }
    approx(f, 1.0 / f.to_f64(x), Bound::Ulp(1), sub_mode(ftz))
}

/// `sqrt.approx.f32` (relative 2^-23) and `rsqrt.approx` (`.f32`: relative
/// 2^-22.9; `.f64`: no bound given).
fn sqrt_approx(fmt: Fmt, x: u128, ftz: bool, recip: bool) -> Val {
    let x = if ftz { fmt.flush(x) } else { x };
    if fmt.is_nan(x) {
        return any_nan(fmt, &[x]);
    }
    if fmt.is_zero(x) {
        return table(if recip { (x & fmt.sign()) | fmt.inf() } else { x });
    }
    if fmt.is_neg(x) {
        return any_nan(fmt, &[]);
    }
    if fmt.is_inf(x) {
        return table(if recip { 0 } else { x });
    }
    let s = fmt.to_f64(x).sqrt();
    let (v, bound) = match (recip, fmt) {
        (false, _) => (s, Bound::Rel(2f64.powi(-23))),
        (true, Fmt::F32) => (1.0 / s, Bound::Rel(2f64.powf(-22.9))),
        (true, _) => (1.0 / s, Bound::None),
    };
    approx(fmt, v, bound, sub_mode(ftz))
}

/// `rcp.approx.ftz.f64` and `rsqrt.approx.ftz.f64`: computed on the upper
/// word of `a` (1.11.20 format); the lower word of the result is zero.
fn approx_ftz_f64(a: u128, recip_sqrt: bool) -> Val {
    let f = Fmt::F64;
    let t = trunc(a, 64) & 0xffff_ffff_0000_0000;
    if f.is_nan(t) {
        // "Input NaN maps to the canonical NaN, 0x7fffffff00000000."
        return table(f.canonical_nan());
    }
    let t = f.flush(t);
    let neg = f.is_neg(t);
    if f.is_zero(t) {
        return table((t & f.sign()) | f.inf());
    }
    if recip_sqrt && neg {
        return val(f.canonical_nan(), Quality::AnyNan);
    }
    if f.is_inf(t) {
        return table(t & f.sign());
    }
    let tv = f.to_f64(t);
    let v = if recip_sqrt { 1.0 / tv.sqrt() } else { 1.0 / tv };
    let mut hi = conv::<Double, Hi32>(v.to_bits() as u128, Round::NearestTiesToEven);
    if hi & 0x7ff0_0000 == 0 {
        hi &= 0x8000_0000;
    }
    val(hi << 32, Quality::Approx { ulps: u32::MAX })
}

/// `div.approx.f32` (2 ulp for |b| in [2^-126, 2^126], 0 for larger |b|) and
/// `div.full.f32` (2 ulp everywhere), computed as a * (1/b).
fn div_approx(a: u128, b: u128, ftz: bool, full: bool) -> Result<Val, EvalError> {
    let f = Fmt::F32;
    if !ftz && (f.is_sub(a) || f.is_sub(b)) {
        // The manual says both that subnormal inputs are flushed and that
        // they are supported.
        return Ok(Val::unspecified());
    }
    let (a, b) = (f.flush(a), f.flush(b));
    if f.is_nan(a) || f.is_nan(b) {
        return Ok(any_nan(f, &[]));
    }
    let xsign = (a ^ b) & f.sign();
    if !full && !f.is_inf(b) && f.mag(b) > 0x7e80_0000 {
        // 2^126 < |b| < 2^128: "returns NaN if a is infinity, 0 otherwise".
        if f.is_inf(a) {
            return Ok(any_nan(f, &[]));
        }
        return Ok(val(xsign, Quality::Approx { ulps: 1 }));
    }
    if f.is_zero(b) {
        if f.is_zero(a) {
            // The manual says division by zero gives infinity, a*(1/b) gives NaN.
            return Ok(Val::unspecified());
        }
        if f.is_neg(b) {
            // The manual gives the sign of a, IEEE 754 and a*(1/b) the opposite sign.
            return Ok(Val::unspecified());
        }
        return Ok(table((a & f.sign()) | f.inf()));
    }
    if f.is_inf(a) && f.is_inf(b) {
        return Ok(any_nan(f, &[]));
    }
    if f.is_inf(a) {
        return Ok(table(xsign | f.inf()));
    }
    if f.is_inf(b) || f.is_zero(a) {
        return Ok(table(xsign));
    }
    let v = f.to_f64(a) / f.to_f64(b);
    Ok(approx(f, v, Bound::Ulp(2), if ftz { Sub::Flush } else { Sub::Unknown }))
}

// ---------------------------------------------------------------------------
// Sign and comparison instructions
// ---------------------------------------------------------------------------

fn abs_neg(fmt: Fmt, x: u128, ftz: bool, neg: bool) -> Val {
    let x = if ftz { fmt.flush(x) } else { x };
    let d = if neg { x ^ fmt.sign() } else { x & !fmt.sign() };
    if fmt.is_nan(x) {
        // abs.f64: "NaN inputs are passed through unchanged"; every other
        // form: "NaN inputs yield an unspecified NaN".
        if fmt == Fmt::F64 && !neg {
            return Val::exact(x);
        }
        return val(d, Quality::AnyNan);
    }
    Val::exact(d)
}

#[derive(Clone, Copy, Default, Debug)]
struct MinMax {
    max: bool,
    ftz: bool,
    nan: bool,
    xorsign: bool,
    abs: bool,
}

/// `min`/`max` on one lane, two or three inputs.
fn min_max(fmt: Fmt, xs: &[u128], o: MinMax) -> Val {
    let mut xs: SmallVec<[u128; 3]> = xs.iter().map(|&v| if o.ftz { fmt.flush(v) } else { v }).collect();
    let xsign = if o.xorsign { (xs[0] ^ xs[1]) & fmt.sign() } else { 0 };
    if o.abs {
        for x in xs.iter_mut() {
            *x &= !fmt.sign();
        }
    }
    let nums: SmallVec<[u128; 3]> = xs.iter().copied().filter(|&x| !fmt.is_nan(x)).collect();
    if o.nan && nums.len() < xs.len() {
        return Val::exact(fmt.canonical_nan());
    }
    let pick = if o.max { nums.iter().copied().max_by_key(|&x| fmt.key(x)) } else { nums.iter().copied().min_by_key(|&x| fmt.key(x)) };
    match pick {
        None => any_nan(fmt, &xs),
        Some(d) if o.xorsign => Val::exact((d & !fmt.sign()) | xsign),
        Some(d) => Val::exact(d),
    }
}

/// The operation of a floating-point `atom`/`red` on one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicFloatOp {
    Add,
    Min,
    Max,
}

/// `op(old, b)` for a floating-point `atom`/`red` element of type `ty`
/// (`f16`, `bf16`, `f16x2`, `bf16x2`, `f32`, `f64`), PTX ISA 8.7 §9.7.13.5:
/// `.add` rounds to nearest even and keeps subnormals (`.noftz`; the flushing
/// of `atom.add.f32` on global memory is the caller's, as it depends on the
/// address); `.min`/`.max` follow the `min`/`max` instructions. `None` for
/// other types.
pub fn atomic_op(op: AtomicFloatOp, ty: ScalarType, old: u128, b: u128) -> Option<Val> {
    let (fmt, n) = lanes_of(ty)?;
    let r = lanes(fmt, n, &[old, b], |x| match op {
        AtomicFloatOp::Add => arith(fmt, AOp::Add, x, Round::NearestTiesToEven, Opts::default()),
        AtomicFloatOp::Min | AtomicFloatOp::Max => Ok(min_max(fmt, x, MinMax { max: op == AtomicFloatOp::Max, ..MinMax::default() })),
    })
    .ok()?;
    r.dests.first().copied()
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

fn eval_float(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let op = ins.opcode;
    let types = ins.types();
    let ty = types[0];
    let name = op.name();
    let (fmt, n) = lanes_of(ty).ok_or_else(|| unsupported(format!("`{name}` on {}", ty.text())))?;
    let ftz = ins.has(Mod::FTZ);
    let approx_mod = ins.has(Mod::APPROX);
    let opts = Opts { ftz, sat: ins.has(Mod::SAT), relu: ins.has(Mod::RELU), oob: ins.has(Mod::OOB) };
    let unary = |f: &dyn Fn(u128) -> Val| -> EvalResult {
        arity(srcs, 1, ins)?;
        lanes(fmt, n, &srcs[..1], |x| Ok(f(x[0])))
    };
    match op {
        Opcode::COPYSIGN => {
            arity(srcs, 2, ins)?;
            if n != 1 || fmt == Fmt::F16 || fmt == Fmt::Bf16 {
                return Err(unsupported(format!("`copysign` on {}", ty.text())));
            }
            lanes(fmt, 1, &srcs[..2], |x| {
                let d = (x[1] & !fmt.sign()) | (x[0] & fmt.sign());
                // Single precision: "an unspecified NaN"; .f64 keeps the payload.
                Ok(val(d, if fmt.is_nan(x[1]) && fmt != Fmt::F64 { Quality::AnyNan } else { Quality::Exact }))
            })
        }
        Opcode::ADD | Opcode::SUB | Opcode::MUL => {
            let aop = match op {
                Opcode::ADD => AOp::Add,
                Opcode::SUB => AOp::Sub,
                _ => AOp::Mul,
            };
            // No rounding modifier: round to nearest even.
            let r = round_mode(ins.rounding().unwrap_or(Rounding::Rn))?;
            if types.len() == 2 {
                return mixed(ins, aop, types[1], srcs, r, opts);
            }
            arity(srcs, 2, ins)?;
            lanes(fmt, n, &srcs[..2], |x| arith(fmt, aop, x, r, opts))
        }
        Opcode::FMA | Opcode::MAD => {
            let r = match ins.rounding() {
                Some(r) => round_mode(r)?,
                // Legacy mad.f64 (PTX 1.0-1.3) is mad.rn.f64.
                None if op == Opcode::MAD && fmt == Fmt::F64 => Round::NearestTiesToEven,
                None if op == Opcode::MAD => {
                    return Err(unsupported(
                        "`mad.f32` without a rounding modifier is target-dependent (sm_1x truncates the product, sm_20+ reads mad.rn.f32)",
                    ))
                }
                None => return Err(unsupported("`fma` without a rounding modifier")),
            };
            if types.len() == 2 {
                return mixed(ins, AOp::Fma, types[1], srcs, r, opts);
            }
            arity(srcs, 3, ins)?;
            lanes(fmt, n, &srcs[..3], |x| arith(fmt, AOp::Fma, x, r, opts))
        }
        Opcode::DIV => {
            arity(srcs, 2, ins)?;
            let full = ins.has(Mod::FULL);
            match (fmt, ins.rounding()) {
                (_, Some(r)) => {
                    let r = round_mode(r)?;
                    lanes(fmt, n, &srcs[..2], |x| arith(fmt, AOp::Div, x, r, Opts { ftz, ..Opts::default() }))
                }
                (Fmt::F32, None) => {
                    // div.approx, div.full, and legacy div.f32 = div.approx.ftz.f32.
                    let legacy = !approx_mod && !full;
                    if legacy && opts.sat {
                        return Err(unsupported("legacy `div.sat.f32` (PTX 1.x)"));
                    }
                    lanes(fmt, n, &srcs[..2], |x| div_approx(x[0], x[1], ftz || legacy, full))
                }
                // Legacy div.f64 is div.rn.f64.
                (Fmt::F64, None) => lanes(fmt, n, &srcs[..2], |x| arith(fmt, AOp::Div, x, Round::NearestTiesToEven, Opts::default())),
                _ => Err(unsupported(format!("`div` on {}", ty.text()))),
            }
        }
        Opcode::RCP => match (fmt, ins.rounding()) {
            (Fmt::F32 | Fmt::F64, Some(r)) => {
                let r = round_mode(r)?;
                arity(srcs, 1, ins)?;
                lanes(fmt, n, &srcs[..1], |x| arith(fmt, AOp::Div, &[fmt.one(), x[0]], r, Opts { ftz, ..Opts::default() }))
            }
            // rcp.approx.f32, legacy rcp.f32 = rcp.approx.ftz.f32.
            (Fmt::F32, None) => unary(&|x| rcp_approx(x, ftz || !approx_mod)),
            // rcp.approx.ftz.f64 (and its `rcp.ftz.f64` spelling).
            (Fmt::F64, None) if ftz => unary(&|x| approx_ftz_f64(x, false)),
            // Legacy rcp.f64 is rcp.rn.f64.
            (Fmt::F64, None) => {
                arity(srcs, 1, ins)?;
                lanes(fmt, n, &srcs[..1], |x| arith(fmt, AOp::Div, &[fmt.one(), x[0]], Round::NearestTiesToEven, Opts::default()))
            }
            _ => Err(unsupported(format!("`rcp` on {}", ty.text()))),
        },
        Opcode::SQRT => match (fmt, ins.rounding()) {
            (Fmt::F32 | Fmt::F64, Some(r)) => {
                let r = round_mode(r)?;
                arity(srcs, 1, ins)?;
                lanes(fmt, n, &srcs[..1], |x| sqrt_exact(fmt, x[0], r, ftz))
            }
            // sqrt.approx.f32, legacy sqrt.f32 = sqrt.approx.ftz.f32.
            (Fmt::F32, None) => unary(&|x| sqrt_approx(fmt, x, ftz || !approx_mod, false)),
            // Legacy sqrt.f64 is sqrt.rn.f64.
            (Fmt::F64, None) => {
                arity(srcs, 1, ins)?;
                lanes(fmt, n, &srcs[..1], |x| sqrt_exact(fmt, x[0], Round::NearestTiesToEven, false))
            }
            _ => Err(unsupported(format!("`sqrt` on {}", ty.text()))),
        },
        Opcode::RSQRT => match fmt {
            // rsqrt.approx.f32, legacy rsqrt.f32 = rsqrt.approx.ftz.f32.
            Fmt::F32 => unary(&|x| sqrt_approx(fmt, x, ftz || !approx_mod, true)),
            Fmt::F64 if ftz => unary(&|x| approx_ftz_f64(x, true)),
            // rsqrt.approx.f64, legacy rsqrt.f64 = rsqrt.approx.f64.
            Fmt::F64 => unary(&|x| sqrt_approx(fmt, x, false, true)),
            _ => Err(unsupported(format!("`rsqrt` on {}", ty.text()))),
        },
        // Legacy sin/cos/lg2/ex2.f32 are the .approx.ftz forms.
        Opcode::SIN | Opcode::COS if fmt == Fmt::F32 => unary(&|x| trig(x, ftz || !approx_mod, op == Opcode::COS)),
        Opcode::LG2 if fmt == Fmt::F32 => unary(&|x| lg2(x, ftz || !approx_mod)),
        Opcode::EX2 => match fmt {
            Fmt::F32 => unary(&|x| ex2(fmt, x, ftz || !approx_mod)),
            Fmt::F16 => unary(&|x| ex2(fmt, x, false)),
            // Only ex2.approx.ftz.bf16 exists.
            Fmt::Bf16 => unary(&|x| ex2(fmt, x, true)),
            _ => Err(unsupported(format!("`ex2` on {}", ty.text()))),
        },
        Opcode::TANH if fmt != Fmt::F64 => unary(&|x| tanh(fmt, x)),
        Opcode::ABS | Opcode::NEG => unary(&|x| abs_neg(fmt, x, ftz, op == Opcode::NEG)),
        Opcode::MIN | Opcode::MAX => {
            let k = if ins.operands.len() >= 4 { 3 } else { 2 };
            arity(srcs, k, ins)?;
            let o = MinMax { max: op == Opcode::MAX, ftz, nan: ins.has(Mod::NAN_PROPAGATE), xorsign: ins.has(Mod::XORSIGN), abs: ins.has(Mod::ABS) };
            if o.xorsign != o.abs && k == 2 {
                return Err(unsupported("`.xorsign` and `.abs` must be given together"));
            }
            if o.xorsign && k == 3 {
                return Err(unsupported("three-input `min`/`max` has no `.xorsign`"));
            }
            lanes(fmt, n, &srcs[..k], |x| Ok(min_max(fmt, x, o)))
        }
        _ => Err(unsupported(format!("`{name}` on {}", ty.text()))),
    }
}

/// Mixed precision (§9.7.5): `add/sub{.rnd}{.sat}.f32.atype d, a, c` and
/// `fma.rnd{.ftz}{.sat}.f32.abtype d, a, b, c`: the `.f16`/`.bf16` sources
/// are converted to `.f32` (exactly), then one `.f32` operation.
fn mixed(ins: &Instruction, op: AOp, src_ty: ScalarType, srcs: &[u128], r: Round, o: Opts) -> EvalResult {
    let sf = match src_ty {
        ScalarType::F16 => Fmt::F16,
        ScalarType::Bf16 => Fmt::Bf16,
        t => return Err(unsupported(format!("mixed-precision `{}` with {} sources", ins.opcode.name(), t.text()))),
    };
    let to32 = |x: u128| {
        let x = trunc(x, 16);
        match sf {
            Fmt::F16 => conv::<Half, Single>(x, Round::NearestTiesToEven),
            _ => conv::<BFloat, Single>(x, Round::NearestTiesToEven),
        }
    };
    let f = Fmt::F32;
    let x: SmallVec<[u128; 3]> = match op {
        AOp::Fma => {
            arity(srcs, 3, ins)?;
            if o.ftz && sf == Fmt::F16 && (sf.is_sub(trunc(srcs[0], 16)) || sf.is_sub(trunc(srcs[1], 16))) {
                // The manual does not say whether a subnormal .f16 source is
                // flushed before the (exact) conversion to .f32.
                return Ok(Eval::one(Val::unspecified()));
            }
            smallvec::smallvec![to32(srcs[0]), to32(srcs[1]), trunc(srcs[2], 32)]
        }
        _ => {
            arity(srcs, 2, ins)?;
            smallvec::smallvec![to32(srcs[0]), trunc(srcs[1], 32)]
        }
    };
    Ok(Eval::one(arith(f, op, &x, r, Opts { relu: false, oob: false, ..o })?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Operand, RegId};
    use crate::isa::{Flags, SlotMods};

    // ---- helpers -----------------------------------------------------------

    fn ins(text: &str) -> Instruction {
        let src = format!(
            ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k() {{ .reg .f32 %f<9>; .reg .f64 %fd<9>; .reg .b16 %h<9>; .reg .b32 %r<9>; .reg .b64 %rd<9>; .reg .pred %p<9>; {text} ret; }}"
        );
        let m = crate::parse::parse_str(&src).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        for it in &m.items {
            if let crate::ir::Item::Func(f) = it {
                return f.instructions().next().expect("an instruction").clone();
            }
        }
        panic!("no function")
    }

    fn run_i(i: &Instruction, srcs: &[u128]) -> EvalResult {
        eval(i, srcs, false).expect("a float-family instruction")
    }

    fn run(text: &str, srcs: &[u128]) -> EvalResult {
        run_i(&ins(text), srcs)
    }

    fn v(text: &str, srcs: &[u128]) -> Val {
        let r = run(text, srcs).unwrap_or_else(|e| panic!("{text} {srcs:x?}: {e}"));
        assert_eq!(r.dests.len(), 1);
        assert_eq!(r.carry_out, None);
        r.dests[0]
    }

    /// The exact result bits.
    fn ex(text: &str, srcs: &[u128]) -> u128 {
        let r = v(text, srcs);
        assert_eq!(r.quality, Quality::Exact, "{text} {srcs:x?} gave {:x}", r.bits);
        r.bits
    }

    fn is_anynan(text: &str, srcs: &[u128]) -> bool {
        v(text, srcs).quality == Quality::AnyNan
    }

    fn unsup(text: &str, srcs: &[u128]) -> bool {
        matches!(run(text, srcs), Err(EvalError::Unsupported(_)))
    }

    /// The manual leaves the value open: every result is `Unspecified`.
    fn unspecified(text: &str, srcs: &[u128]) -> bool {
        matches!(run(text, srcs), Ok(e) if !e.dests.is_empty() && e.dests.iter().all(|d| d.quality == Quality::Unspecified))
    }

    /// (bits, ulps) of an approximate result.
    fn ap(text: &str, srcs: &[u128]) -> (u128, u32) {
        let r = v(text, srcs);
        match r.quality {
            Quality::Approx { ulps } => (r.bits, ulps),
            q => panic!("{text} {srcs:x?}: expected Approx, got {q:?} {:x}", r.bits),
        }
    }

    fn f(x: f32) -> u128 {
        x.to_bits() as u128
    }
    fn d(x: f64) -> u128 {
        x.to_bits() as u128
    }

    // f32 constants.
    const ONE: u128 = 0x3f80_0000;
    const TWO: u128 = 0x4000_0000;
    const HALF: u128 = 0x3f00_0000;
    const NEG_ONE: u128 = 0xbf80_0000;
    const PZ: u128 = 0;
    const NZ: u128 = 0x8000_0000;
    const INF: u128 = 0x7f80_0000;
    const NINF: u128 = 0xff80_0000;
    const MAX: u128 = 0x7f7f_ffff;
    const MINN: u128 = 0x0080_0000;
    const SUB1: u128 = 0x0000_0001;
    const NSUB1: u128 = 0x8000_0001;
    const QNAN: u128 = 0x7fc0_0000;
    const SNAN: u128 = 0x7f80_0001;
    const CNAN: u128 = 0x7fff_ffff;
    // f64 constants.
    const D_ONE: u128 = 0x3ff0_0000_0000_0000;
    const D_QNAN: u128 = 0x7ff8_0000_0000_0001;
    // f16 / bf16 constants.
    const H_ONE: u128 = 0x3c00;
    const H_TWO: u128 = 0x4000;
    const H_NAN: u128 = 0x7e00;
    const B_ONE: u128 = 0x3f80;

    // ---- add / sub / mul ----------------------------------------------------

    #[test]
    fn add_f32_basics_and_rounding() {
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[ONE, ONE]), TWO);
        assert_eq!(ex("add.rn.f32 %f1, %f2, %f3;", &[ONE, NEG_ONE]), PZ);
        // Exact zero sum of opposite signs: +0, except -0 when rounding down.
        assert_eq!(ex("add.rz.f32 %f1, %f2, %f3;", &[ONE, NEG_ONE]), PZ);
        assert_eq!(ex("add.rp.f32 %f1, %f2, %f3;", &[ONE, NEG_ONE]), PZ);
        assert_eq!(ex("add.rm.f32 %f1, %f2, %f3;", &[ONE, NEG_ONE]), NZ);
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[NZ, NZ]), NZ);
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[NZ, PZ]), PZ);
        // 1 + 2^-24 is a tie: nearest even is 1; 1+2^-23 + 2^-24 ties to 1+2^-22.
        let e24 = f(2f32.powi(-24));
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[ONE, e24]), ONE);
        assert_eq!(ex("add.rn.f32 %f1, %f2, %f3;", &[0x3f80_0001, e24]), 0x3f80_0002);
        assert_eq!(ex("add.rz.f32 %f1, %f2, %f3;", &[ONE, e24]), ONE);
        assert_eq!(ex("add.rm.f32 %f1, %f2, %f3;", &[ONE, e24]), ONE);
        assert_eq!(ex("add.rp.f32 %f1, %f2, %f3;", &[ONE, e24]), 0x3f80_0001);
        // Negative values: rm rounds away from zero, rz toward it.
        assert_eq!(ex("add.rm.f32 %f1, %f2, %f3;", &[NEG_ONE, e24 | NZ]), 0xbf80_0001);
        assert_eq!(ex("add.rz.f32 %f1, %f2, %f3;", &[NEG_ONE, e24 | NZ]), NEG_ONE);
        // Overflow: nearest and up give infinity, toward zero and down give MAX.
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[MAX, MAX]), INF);
        assert_eq!(ex("add.rz.f32 %f1, %f2, %f3;", &[MAX, MAX]), MAX);
        assert_eq!(ex("add.rm.f32 %f1, %f2, %f3;", &[MAX, MAX]), MAX);
        assert_eq!(ex("add.rp.f32 %f1, %f2, %f3;", &[MAX, MAX]), INF);
        assert_eq!(ex("add.rm.f32 %f1, %f2, %f3;", &[MAX | NZ, MAX | NZ]), NINF);
        assert_eq!(ex("add.rp.f32 %f1, %f2, %f3;", &[MAX | NZ, MAX | NZ]), MAX | NZ);
        // Infinities.
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[INF, MAX | NZ]), INF);
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[NINF, NINF]), NINF);
    }

    #[test]
    fn add_f32_nan_is_unspecified() {
        for (a, b) in [(INF, NINF), (QNAN, ONE), (ONE, SNAN), (QNAN, SNAN), (0xffc0_0000, PZ)] {
            let r = v("add.f32 %f1, %f2, %f3;", &[a, b]);
            assert_eq!(r.quality, Quality::AnyNan);
            assert!(Fmt::F32.is_nan(r.bits));
        }
    }

    #[test]
    fn subnormals_with_and_without_ftz() {
        // Without .ftz subnormals are supported.
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[SUB1, SUB1]), 2);
        assert_eq!(ex("add.f32 %f1, %f2, %f3;", &[MINN, NSUB1]), 0x007f_ffff);
        // .ftz flushes subnormal inputs ...
        assert_eq!(ex("add.ftz.f32 %f1, %f2, %f3;", &[SUB1, SUB1]), PZ);
        assert_eq!(ex("add.ftz.f32 %f1, %f2, %f3;", &[NSUB1, NSUB1]), NZ);
        assert_eq!(ex("add.ftz.f32 %f1, %f2, %f3;", &[MINN, NSUB1]), MINN);
        assert_eq!(ex("mul.ftz.f32 %f1, %f2, %f3;", &[0x007f_ffff, 0x4b00_0000]), PZ);
        // (2^-126 - 2^-149) * 2^23 = 2^-103 * (1 - 2^-23).
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[0x007f_ffff, 0x4b00_0000]), 0x0bff_fffe);
        // ... and subnormal results, keeping the sign.
        assert_eq!(ex("sub.f32 %f1, %f2, %f3;", &[0x0080_0001, MINN]), SUB1);
        assert_eq!(ex("sub.ftz.f32 %f1, %f2, %f3;", &[0x0080_0001, MINN]), PZ);
        assert_eq!(ex("sub.ftz.f32 %f1, %f2, %f3;", &[MINN, 0x0080_0001]), NZ);
        assert_eq!(ex("mul.rn.ftz.f32 %f1, %f2, %f3;", &[HALF, MINN]), PZ);
        assert_eq!(ex("mul.rn.f32 %f1, %f2, %f3;", &[HALF, MINN]), 0x0040_0000);
        // Exact product 2^-126 * (1 - 2^-24): below the smallest normal, ties
        // (in subnormal precision) up to it. Whether .ftz flushes it is not
        // said: Unsupported. Rounded toward zero it is subnormal: flushed.
        let below = [0x3f7f_ffff, MINN];
        assert_eq!(ex("mul.rn.f32 %f1, %f2, %f3;", &below), MINN);
        assert!(unspecified("mul.rn.ftz.f32 %f1, %f2, %f3;", &below));
        assert_eq!(ex("mul.rz.f32 %f1, %f2, %f3;", &below), 0x007f_ffff);
        assert_eq!(ex("mul.rz.ftz.f32 %f1, %f2, %f3;", &below), PZ);
        // Negative: .rm rounds the magnitude up (ambiguous), .rp down (flushed to -0).
        assert!(unspecified("mul.rm.ftz.f32 %f1, %f2, %f3;", &[0xbf7f_ffff, MINN]));
        assert_eq!(ex("mul.rp.ftz.f32 %f1, %f2, %f3;", &[0xbf7f_ffff, MINN]), NZ);
        assert_eq!(ex("mul.rm.f32 %f1, %f2, %f3;", &[0xbf7f_ffff, MINN]), NZ | MINN);
        // An exact smallest normal is not ambiguous.
        assert_eq!(ex("mul.rn.ftz.f32 %f1, %f2, %f3;", &[ONE, MINN]), MINN);
        // .f64 has no .ftz and keeps subnormals.
        assert_eq!(ex("add.f64 %fd1, %fd2, %fd3;", &[1, 1]), 2);
        assert_eq!(ex("mul.rn.f64 %fd1, %fd2, %fd3;", &[d(0.5), 0x0010_0000_0000_0000]), 0x0008_0000_0000_0000);
    }

    #[test]
    fn sat_clamps_to_unit_interval() {
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[HALF, f(0.75)]), ONE);
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[HALF, f(0.25)]), f(0.75));
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[NEG_ONE, HALF]), PZ);
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[INF, ONE]), ONE);
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[NINF, ONE]), PZ);
        assert_eq!(ex("mul.sat.f32 %f1, %f2, %f3;", &[ONE, ONE]), ONE);
        assert_eq!(ex("sub.sat.f32 %f1, %f2, %f3;", &[ONE, TWO]), PZ);
        // NaN results become +0.0.
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[INF, NINF]), PZ);
        assert_eq!(ex("mul.sat.f32 %f1, %f2, %f3;", &[QNAN, ONE]), PZ);
        assert_eq!(ex("mul.rz.sat.f32 %f1, %f2, %f3;", &[0xffc0_0000, ONE]), PZ);
        // Subnormal positive results stay (no .ftz), are flushed with .ftz.
        assert_eq!(ex("add.sat.f32 %f1, %f2, %f3;", &[SUB1, PZ]), SUB1);
        assert_eq!(ex("add.ftz.sat.f32 %f1, %f2, %f3;", &[SUB1, SUB1]), PZ);
        // -0.0: not said whether it becomes +0.0.
        assert!(unspecified("add.sat.f32 %f1, %f2, %f3;", &[NZ, NZ]));
        assert!(unspecified("mul.sat.f32 %f1, %f2, %f3;", &[NEG_ONE, PZ]));
    }

    #[test]
    fn sub_and_mul_f32() {
        assert_eq!(ex("sub.f32 %f1, %f2, %f3;", &[ONE, ONE]), PZ);
        assert_eq!(ex("sub.rm.f32 %f1, %f2, %f3;", &[ONE, ONE]), NZ);
        assert_eq!(ex("sub.f32 %f1, %f2, %f3;", &[PZ, PZ]), PZ);
        assert_eq!(ex("sub.f32 %f1, %f2, %f3;", &[NZ, PZ]), NZ);
        assert_eq!(ex("sub.f32 %f1, %f2, %f3;", &[ONE, TWO]), NEG_ONE);
        assert_eq!(ex("sub.f32 %f1, %f2, %f3;", &[INF, NINF]), INF);
        assert!(is_anynan("sub.f32 %f1, %f2, %f3;", &[INF, INF]));
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[NZ, f(5.0)]), NZ);
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[NZ, NZ]), PZ);
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[NINF, NEG_ONE]), INF);
        assert!(is_anynan("mul.f32 %f1, %f2, %f3;", &[INF, PZ]));
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[f(3.0), f(1.0 / 3.0)]), ONE);
        // (1+2^-23)^2 = 1 + 2^-22 + 2^-46: up only with .rp.
        let a = 0x3f80_0001;
        assert_eq!(ex("mul.rn.f32 %f1, %f2, %f3;", &[a, a]), 0x3f80_0002);
        assert_eq!(ex("mul.rz.f32 %f1, %f2, %f3;", &[a, a]), 0x3f80_0002);
        assert_eq!(ex("mul.rp.f32 %f1, %f2, %f3;", &[a, a]), 0x3f80_0003);
        assert_eq!(ex("mul.rm.f32 %f1, %f2, %f3;", &[a | NZ, a]), 0xbf80_0003);
        // Underflow to zero keeps the sign.
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[SUB1, NSUB1]), NZ);
        assert_eq!(ex("mul.rp.f32 %f1, %f2, %f3;", &[SUB1, SUB1]), SUB1);
        // Overflow.
        assert_eq!(ex("mul.f32 %f1, %f2, %f3;", &[MAX, TWO]), INF);
        assert_eq!(ex("mul.rz.f32 %f1, %f2, %f3;", &[MAX, TWO]), MAX);
    }

    #[test]
    fn f64_arithmetic_and_nan_payloads() {
        assert_eq!(ex("add.f64 %fd1, %fd2, %fd3;", &[D_ONE, D_ONE]), d(2.0));
        let e53 = d(2f64.powi(-53));
        assert_eq!(ex("add.f64 %fd1, %fd2, %fd3;", &[D_ONE, e53]), D_ONE);
        assert_eq!(ex("add.rp.f64 %fd1, %fd2, %fd3;", &[D_ONE, e53]), D_ONE + 1);
        assert_eq!(ex("add.rm.f64 %fd1, %fd2, %fd3;", &[D_ONE, d(-1.0)]), d(-0.0));
        assert_eq!(ex("sub.rz.f64 %fd1, %fd2, %fd3;", &[d(f64::MAX), d(-f64::MAX)]), d(f64::MAX));
        assert_eq!(ex("mul.f64 %fd1, %fd2, %fd3;", &[d(f64::MAX), d(2.0)]), d(f64::INFINITY));
        // NaN payloads are "supported" but which one and the sign are not
        // said: some NaN (the bits carry the quieted input).
        let r = v("add.f64 %fd1, %fd2, %fd3;", &[D_QNAN, D_ONE]);
        assert_eq!(r.quality, Quality::AnyNan);
        assert_eq!(r.bits, D_QNAN);
        let r = v("mul.f64 %fd1, %fd2, %fd3;", &[D_ONE, 0x7ff0_0000_0000_0001]);
        assert_eq!((r.bits, r.quality), (0x7ff8_0000_0000_0001, Quality::AnyNan));
        assert!(is_anynan("mul.f64 %fd1, %fd2, %fd3;", &[d(f64::INFINITY), 0]));
    }

    #[test]
    fn f32x2_lanes() {
        let pack = |lo: u128, hi: u128| lo | hi << 32;
        assert_eq!(ex("add.rn.f32x2 %rd1, %rd2, %rd3;", &[pack(ONE, TWO), pack(ONE, NEG_ONE)]), pack(TWO, ONE));
        assert_eq!(ex("sub.f32x2 %rd1, %rd2, %rd3;", &[pack(ONE, NZ), pack(ONE, PZ)]), pack(PZ, NZ));
        assert_eq!(ex("mul.rz.f32x2 %rd1, %rd2, %rd3;", &[pack(MAX, HALF), pack(TWO, HALF)]), pack(MAX, f(0.25)));
        assert_eq!(ex("add.ftz.f32x2 %rd1, %rd2, %rd3;", &[pack(SUB1, SUB1), pack(SUB1, PZ)]), pack(PZ, PZ));
        assert_eq!(ex("add.f32x2 %rd1, %rd2, %rd3;", &[pack(SUB1, SUB1), pack(SUB1, PZ)]), pack(2, SUB1));
        // One NaN lane: the other lane is kept.
        let r = v("add.f32x2 %rd1, %rd2, %rd3;", &[pack(QNAN, ONE), pack(ONE, ONE)]);
        assert_eq!(r.quality, Quality::AnyNan);
        assert_eq!(r.bits >> 32, TWO);
        assert!(Fmt::F32.is_nan(r.bits & 0xffff_ffff));
        let fma = "fma.rn.f32x2 %rd1, %rd2, %rd3, %rd4;";
        assert_eq!(ex(fma, &[pack(TWO, f(3.0)), pack(f(3.0), TWO), pack(ONE, NEG_ONE)]), pack(f(7.0), f(5.0)));
    }

    // ---- fma / mad ----------------------------------------------------------

    #[test]
    fn fma_is_fused() {
        // a = 1 + 2^-12: a*a = 1 + 2^-11 + 2^-24; minus 1 fused keeps the 2^-24.
        let a = 0x3f80_0800;
        assert_eq!(ex("fma.rn.f32 %f1, %f2, %f3, %f4;", &[a, a, NEG_ONE]), 0x3a00_0400);
        assert_eq!(ex("mad.rn.f32 %f1, %f2, %f3, %f4;", &[a, a, NEG_ONE]), 0x3a00_0400);
        // Unfused (mul then add) would give 2^-11.
        let p = ex("mul.rn.f32 %f1, %f2, %f3;", &[a, a]);
        assert_eq!(ex("add.rn.f32 %f1, %f2, %f3;", &[p, NEG_ONE]), 0x3a00_0000);
        // Rounding of the single rounding step.
        assert_eq!(ex("fma.rz.f32 %f1, %f2, %f3, %f4;", &[a, a, PZ]), 0x3f80_1000);
        assert_eq!(ex("fma.rp.f32 %f1, %f2, %f3, %f4;", &[a, a, PZ]), 0x3f80_1001);
        // Signed zeros: (-0) + (+0) is +0, -0 rounding down.
        assert_eq!(ex("fma.rn.f32 %f1, %f2, %f3, %f4;", &[ONE, NZ, PZ]), PZ);
        assert_eq!(ex("fma.rm.f32 %f1, %f2, %f3, %f4;", &[ONE, NZ, PZ]), NZ);
        assert_eq!(ex("fma.rn.f32 %f1, %f2, %f3, %f4;", &[ONE, NZ, NZ]), NZ);
        // Invalid: 0 * inf, inf - inf, NaN inputs.
        assert!(is_anynan("fma.rn.f32 %f1, %f2, %f3, %f4;", &[PZ, INF, ONE]));
        assert!(is_anynan("fma.rn.f32 %f1, %f2, %f3, %f4;", &[ONE, INF, NINF]));
        assert!(is_anynan("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", &[0, d(f64::INFINITY), D_QNAN]));
        // .sat and .ftz.
        assert_eq!(ex("fma.rn.sat.f32 %f1, %f2, %f3, %f4;", &[TWO, TWO, ONE]), ONE);
        assert_eq!(ex("fma.rn.sat.f32 %f1, %f2, %f3, %f4;", &[QNAN, TWO, ONE]), PZ);
        assert_eq!(ex("fma.rn.ftz.f32 %f1, %f2, %f3, %f4;", &[SUB1, f(2f32.powi(100)), PZ]), PZ);
        assert_eq!(ex("fma.rn.f32 %f1, %f2, %f3, %f4;", &[SUB1, f(2f32.powi(100)), PZ]), f(2f32.powi(-49)));
        assert_eq!(ex("mad.rn.ftz.sat.f32 %f1, %f2, %f3, %f4;", &[HALF, HALF, SUB1]), f(0.25));
        // f64, and the legacy mad.f64 = mad.rn.f64.
        let da = d(1.0 + 2f64.powi(-27));
        assert_eq!(ex("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", &[da, da, d(-1.0)]), d(2f64.powi(-26) + 2f64.powi(-54)));
        assert_eq!(ex("mad.f64 %fd1, %fd2, %fd3, %fd4;", &[da, da, d(-1.0)]), d(2f64.powi(-26) + 2f64.powi(-54)));
        assert_eq!(ex("mad.rz.f64 %fd1, %fd2, %fd3, %fd4;", &[d(3.0), d(1.0 / 3.0), d(-1.0)]), d(-2f64.powi(-54)));
    }

    #[test]
    fn mad_f32_without_rounding_is_unsupported() {
        assert!(unsup("mad.f32 %f1, %f2, %f3, %f4;", &[ONE, ONE, ONE]));
        assert!(unsup("mad.ftz.sat.f32 %f1, %f2, %f3, %f4;", &[ONE, ONE, ONE]));
    }

    // ---- div / rcp / sqrt ---------------------------------------------------

    #[test]
    fn ieee_division() {
        let third = 0x3eaa_aaab;
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[ONE, f(3.0)]), third);
        assert_eq!(ex("div.rz.f32 %f1, %f2, %f3;", &[ONE, f(3.0)]), third - 1);
        assert_eq!(ex("div.rm.f32 %f1, %f2, %f3;", &[ONE, f(3.0)]), third - 1);
        assert_eq!(ex("div.rp.f32 %f1, %f2, %f3;", &[ONE, f(3.0)]), third);
        assert_eq!(ex("div.rm.f32 %f1, %f2, %f3;", &[NEG_ONE, f(3.0)]), third | NZ);
        assert_eq!(ex("div.rz.f32 %f1, %f2, %f3;", &[NEG_ONE, f(3.0)]), (third - 1) | NZ);
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[ONE, PZ]), INF);
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[ONE, NZ]), NINF);
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[NZ, ONE]), NZ);
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[ONE, INF]), PZ);
        assert!(is_anynan("div.rn.f32 %f1, %f2, %f3;", &[PZ, PZ]));
        assert!(is_anynan("div.rn.f32 %f1, %f2, %f3;", &[INF, NINF]));
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[SUB1, TWO]), PZ); // tie to even 0
        assert_eq!(ex("div.rp.f32 %f1, %f2, %f3;", &[SUB1, TWO]), SUB1);
        assert_eq!(ex("div.rn.ftz.f32 %f1, %f2, %f3;", &[ONE, SUB1]), INF);
        assert_eq!(ex("div.rn.f32 %f1, %f2, %f3;", &[ONE, 0x0000_0002]), INF);
        assert_eq!(ex("div.rz.f32 %f1, %f2, %f3;", &[ONE, 0x0000_0002]), MAX);
        assert_eq!(ex("div.rn.f64 %fd1, %fd2, %fd3;", &[D_ONE, d(3.0)]), 0x3fd5_5555_5555_5555);
        assert_eq!(ex("div.rp.f64 %fd1, %fd2, %fd3;", &[D_ONE, d(3.0)]), 0x3fd5_5555_5555_5556);
        // Legacy div.f64 = div.rn.f64.
        assert_eq!(ex("div.f64 %fd1, %fd2, %fd3;", &[D_ONE, d(3.0)]), 0x3fd5_5555_5555_5555);
    }

    #[test]
    fn approximate_division() {
        let (b, u) = ap("div.approx.f32 %f1, %f2, %f3;", &[ONE, f(3.0)]);
        assert_eq!(b, 0x3eaa_aaab);
        assert_eq!(u, 3);
        let (b, _) = ap("div.full.ftz.f32 %f1, %f2, %f3;", &[f(10.0), f(4.0)]);
        assert_eq!(b, f(2.5));
        // Legacy div.f32 = div.approx.ftz.f32.
        assert_eq!(ap("div.f32 %f1, %f2, %f3;", &[f(6.0), f(3.0)]).0, TWO);
        // 2^126 < |b| < 2^128: 0, or NaN for an infinite a (div.approx only).
        let big = f(2f32.powi(127));
        assert_eq!(ap("div.approx.f32 %f1, %f2, %f3;", &[ONE, big]).0, PZ);
        assert_eq!(ap("div.approx.f32 %f1, %f2, %f3;", &[MAX, big | NZ]).0, NZ);
        assert!(is_anynan("div.approx.f32 %f1, %f2, %f3;", &[INF, big]));
        // div.full is full range: 2^-127 is subnormal, flushed with .ftz.
        assert_eq!(ap("div.full.ftz.f32 %f1, %f2, %f3;", &[ONE, big]).0, PZ);
        assert_eq!(ap("div.full.ftz.f32 %f1, %f2, %f3;", &[MAX, big]).0, f(2.0 - 2f32.powi(-23)));
        // Without .ftz the flush of a subnormal result is not said: the bound covers zero.
        let (b, u) = ap("div.full.f32 %f1, %f2, %f3;", &[ONE, big]);
        assert_eq!(b, 0x0040_0000);
        assert!(u as u128 > 0x0040_0000);
        // Division by +0: infinity with the sign of a.
        assert_eq!(ap("div.approx.f32 %f1, %f2, %f3;", &[NEG_ONE, PZ]), (NINF, 0));
        assert_eq!(ap("div.full.ftz.f32 %f1, %f2, %f3;", &[ONE, SUB1]), (INF, 0));
        assert!(unspecified("div.approx.f32 %f1, %f2, %f3;", &[ONE, NZ]));
        assert!(unspecified("div.approx.f32 %f1, %f2, %f3;", &[PZ, PZ]));
        assert!(unspecified("div.approx.f32 %f1, %f2, %f3;", &[SUB1, ONE]));
        assert!(is_anynan("div.approx.f32 %f1, %f2, %f3;", &[QNAN, ONE]));
        assert!(is_anynan("div.full.f32 %f1, %f2, %f3;", &[INF, NINF]));
        assert_eq!(ap("div.full.f32 %f1, %f2, %f3;", &[INF, NEG_ONE]), (NINF, 0));
        assert_eq!(ap("div.full.f32 %f1, %f2, %f3;", &[NEG_ONE, INF]), (NZ, 0));
        assert!(unsup("div.sat.f32 %f1, %f2, %f3;", &[ONE, ONE]));
    }

    #[test]
    fn reciprocal() {
        let third = 0x3eaa_aaab;
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[f(3.0)]), third);
        assert_eq!(ex("rcp.rz.f32 %f1, %f2;", &[f(3.0)]), third - 1);
        assert_eq!(ex("rcp.rm.f32 %f1, %f2;", &[f(-3.0)]), third | NZ);
        assert_eq!(ex("rcp.rp.f32 %f1, %f2;", &[f(-3.0)]), (third - 1) | NZ);
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[PZ]), INF);
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[NZ]), NINF);
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[NINF]), NZ);
        assert!(is_anynan("rcp.rn.f32 %f1, %f2;", &[QNAN]));
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[f(2f32.powi(127))]), 0x0040_0000);
        assert_eq!(ex("rcp.rn.ftz.f32 %f1, %f2;", &[f(2f32.powi(127))]), PZ);
        assert_eq!(ex("rcp.rn.ftz.f32 %f1, %f2;", &[NSUB1]), NINF);
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[0x0040_0000]), f(2f32.powi(127)));
        assert_eq!(ex("rcp.rn.f32 %f1, %f2;", &[0x0020_0000]), INF);
        assert_eq!(ex("rcp.rz.f32 %f1, %f2;", &[0x0020_0000]), MAX);
        assert_eq!(ex("rcp.rn.f64 %fd1, %fd2;", &[d(3.0)]), 0x3fd5_5555_5555_5555);
        assert_eq!(ex("rcp.rp.f64 %fd1, %fd2;", &[d(3.0)]), 0x3fd5_5555_5555_5556);
        assert_eq!(ex("rcp.f64 %fd1, %fd2;", &[d(4.0)]), d(0.25));
        // Approximate: 1 ulp (+1 for our rounding), the table exactly.
        assert_eq!(ap("rcp.approx.f32 %f1, %f2;", &[f(3.0)]), (third, 2));
        assert_eq!(ap("rcp.approx.ftz.f32 %f1, %f2;", &[NINF]), (NZ, 0));
        assert_eq!(ap("rcp.approx.f32 %f1, %f2;", &[NZ]), (NINF, 0));
        assert_eq!(ap("rcp.approx.f32 %f1, %f2;", &[PZ]), (INF, 0));
        assert_eq!(ap("rcp.approx.f32 %f1, %f2;", &[INF]), (PZ, 0));
        assert!(is_anynan("rcp.approx.f32 %f1, %f2;", &[QNAN]));
        // Subnormal: supported without .ftz; the legacy rcp.f32 is .approx.ftz.
        assert_eq!(ap("rcp.approx.f32 %f1, %f2;", &[0x0040_0000]).0, f(2f32.powi(127)));
        assert_eq!(ap("rcp.approx.ftz.f32 %f1, %f2;", &[0x0040_0000]), (INF, 0));
        assert_eq!(ap("rcp.f32 %f1, %f2;", &[0x8040_0000]), (NINF, 0));
    }

    #[test]
    fn reciprocal_f64_upper_word() {
        let r = "rcp.approx.ftz.f64 %fd1, %fd2;";
        assert_eq!(ap(r, &[d(2.0)]).0, d(0.5));
        // 1/3 to 20 mantissa bits; the low word is zero.
        assert_eq!(ap(r, &[d(3.0)]).0, 0x3fd5_5555_0000_0000);
        // Only the upper word is read.
        assert_eq!(ap(r, &[d(2.0) | 0xdead_beef]).0, d(0.5));
        assert_eq!(ap(r, &[0x7ff0_0000_0000_0001]), (d(0.0), 0));
        // Table: NaN -> 0x7fffffff00000000, subnormals and zeros -> infinities.
        assert_eq!(ap(r, &[0x7ff8_0000_0000_0000]), (0x7fff_ffff_0000_0000, 0));
        assert_eq!(ap(r, &[0xfff0_0001_0000_0000]), (0x7fff_ffff_0000_0000, 0));
        assert_eq!(ap(r, &[0x0000_0001_0000_0000]), (d(f64::INFINITY), 0));
        assert_eq!(ap(r, &[0x8000_0001_0000_0000]), (d(f64::NEG_INFINITY), 0));
        assert_eq!(ap(r, &[d(-0.0)]), (d(f64::NEG_INFINITY), 0));
        assert_eq!(ap(r, &[d(f64::NEG_INFINITY)]), (d(-0.0), 0));
        // Subnormal results are flushed.
        assert_eq!(ap(r, &[d(2f64.powi(1023))]).0, d(0.0));
        // The old `rcp.ftz.f64` spelling.
        assert_eq!(ap("rcp.ftz.f64 %fd1, %fd2;", &[d(4.0)]).0, d(0.25));
        let s = "rsqrt.approx.ftz.f64 %fd1, %fd2;";
        assert_eq!(ap(s, &[d(4.0)]).0, d(0.5));
        assert_eq!(ap(s, &[d(2.0)]).0, 0x3fe6_a09e_0000_0000);
        assert_eq!(ap(s, &[d(f64::INFINITY)]), (0, 0));
        assert_eq!(ap(s, &[0x8000_0001_0000_0000]), (d(f64::NEG_INFINITY), 0));
        assert_eq!(ap(s, &[0x7ff0_0000_8000_0000]), (0, 0));
        assert_eq!(ap(s, &[0x7ff8_0000_0000_0000]), (0x7fff_ffff_0000_0000, 0));
        assert!(is_anynan(s, &[d(-4.0)]));
        assert!(is_anynan(s, &[d(f64::NEG_INFINITY)]));
    }

    #[test]
    fn square_root() {
        // sqrt(2) = 1.41421356237...; 0x3fb504f3 is below it, nearest.
        assert_eq!(ex("sqrt.rn.f32 %f1, %f2;", &[TWO]), 0x3fb5_04f3);
        assert_eq!(ex("sqrt.rz.f32 %f1, %f2;", &[TWO]), 0x3fb5_04f3);
        assert_eq!(ex("sqrt.rm.f32 %f1, %f2;", &[TWO]), 0x3fb5_04f3);
        assert_eq!(ex("sqrt.rp.f32 %f1, %f2;", &[TWO]), 0x3fb5_04f4);
        // 0x3ff6a09e667f3bcd is above sqrt(2): nearest and up.
        assert_eq!(ex("sqrt.rn.f64 %fd1, %fd2;", &[d(2.0)]), 0x3ff6_a09e_667f_3bcd);
        assert_eq!(ex("sqrt.rz.f64 %fd1, %fd2;", &[d(2.0)]), 0x3ff6_a09e_667f_3bcc);
        assert_eq!(ex("sqrt.rm.f64 %fd1, %fd2;", &[d(2.0)]), 0x3ff6_a09e_667f_3bcc);
        assert_eq!(ex("sqrt.rp.f64 %fd1, %fd2;", &[d(2.0)]), 0x3ff6_a09e_667f_3bcd);
        for m in ["rn", "rz", "rm", "rp"] {
            assert_eq!(ex(&format!("sqrt.{m}.f32 %f1, %f2;"), &[f(4.0)]), TWO);
            assert_eq!(ex(&format!("sqrt.{m}.f64 %fd1, %fd2;"), &[d(0.25)]), d(0.5));
            assert_eq!(ex(&format!("sqrt.{m}.f32 %f1, %f2;"), &[NZ]), NZ);
            assert_eq!(ex(&format!("sqrt.{m}.f32 %f1, %f2;"), &[INF]), INF);
            assert!(is_anynan(&format!("sqrt.{m}.f32 %f1, %f2;"), &[NEG_ONE]));
            assert!(is_anynan(&format!("sqrt.{m}.f64 %fd1, %fd2;"), &[d(f64::NEG_INFINITY)]));
        }
        // Subnormal inputs: 2^-148 has the exact root 2^-74.
        assert_eq!(ex("sqrt.rn.f32 %f1, %f2;", &[2]), f(2f32.powi(-74)));
        assert_eq!(ex("sqrt.rn.ftz.f32 %f1, %f2;", &[2]), PZ);
        assert_eq!(ex("sqrt.rn.ftz.f32 %f1, %f2;", &[NSUB1]), NZ);
        assert!(is_anynan("sqrt.rn.f32 %f1, %f2;", &[NSUB1]));
        assert_eq!(ex("sqrt.rn.f64 %fd1, %fd2;", &[4]), d(2f64.powi(-536)));
        // Legacy sqrt.f64 = sqrt.rn.f64.
        assert_eq!(ex("sqrt.f64 %fd1, %fd2;", &[d(2.0)]), 0x3ff6_a09e_667f_3bcd);
    }

    #[test]
    fn approximate_square_roots() {
        assert_eq!(ap("sqrt.approx.f32 %f1, %f2;", &[f(4.0)]), (TWO, 3));
        assert_eq!(ap("sqrt.approx.f32 %f1, %f2;", &[NZ]), (NZ, 0));
        assert_eq!(ap("sqrt.approx.f32 %f1, %f2;", &[INF]), (INF, 0));
        assert!(is_anynan("sqrt.approx.f32 %f1, %f2;", &[NINF]));
        assert!(is_anynan("sqrt.approx.f32 %f1, %f2;", &[NEG_ONE]));
        assert_eq!(ap("sqrt.f32 %f1, %f2;", &[NSUB1]), (NZ, 0)); // legacy: .approx.ftz
        assert_eq!(ap("rsqrt.approx.f32 %f1, %f2;", &[f(4.0)]), (HALF, 4));
        assert_eq!(ap("rsqrt.approx.f32 %f1, %f2;", &[NZ]), (NINF, 0));
        assert_eq!(ap("rsqrt.approx.f32 %f1, %f2;", &[PZ]), (INF, 0));
        assert_eq!(ap("rsqrt.approx.f32 %f1, %f2;", &[INF]), (PZ, 0));
        assert!(is_anynan("rsqrt.approx.f32 %f1, %f2;", &[NEG_ONE]));
        assert_eq!(ap("rsqrt.approx.ftz.f32 %f1, %f2;", &[SUB1]), (INF, 0));
        assert_eq!(ap("rsqrt.approx.f32 %f1, %f2;", &[8]).0, f(2f32.powi(73)));
        assert_eq!(ap("rsqrt.approx.f64 %fd1, %fd2;", &[d(0.25)]), (d(2.0), u32::MAX));
        assert_eq!(ap("rsqrt.f64 %fd1, %fd2;", &[d(-0.0)]), (d(f64::NEG_INFINITY), 0));
        assert_eq!(ap("rsqrt.f32 %f1, %f2;", &[f(16.0)]).0, f(0.25));
    }

    // ---- transcendental approximations -------------------------------------

    #[test]
    fn sin_cos() {
        assert_eq!(ap("sin.approx.f32 %f1, %f2;", &[PZ]), (PZ, 0));
        assert_eq!(ap("sin.approx.f32 %f1, %f2;", &[NZ]), (NZ, 0));
        assert_eq!(ap("cos.approx.f32 %f1, %f2;", &[NZ]), (ONE, 0));
        assert_eq!(ap("cos.approx.ftz.f32 %f1, %f2;", &[SUB1]), (ONE, 0));
        assert!(is_anynan("sin.approx.f32 %f1, %f2;", &[INF]));
        assert!(is_anynan("cos.approx.f32 %f1, %f2;", &[NINF]));
        assert!(is_anynan("cos.approx.f32 %f1, %f2;", &[QNAN]));
        // Absolute error 2^-20.5 near 1 (ulp 2^-24 below 1, 2^-23 at 1).
        let (b, u) = ap("sin.approx.f32 %f1, %f2;", &[f(std::f32::consts::FRAC_PI_2)]);
        assert_eq!(b, ONE);
        assert_eq!(u, (2f64.powf(-20.5) / 2f64.powi(-23)).ceil() as u32 + 1);
        // 2^-14.7 up to 100 pi, nothing beyond.
        assert!(ap("cos.approx.f32 %f1, %f2;", &[f(100.0)]).1 > 100);
        assert_eq!(ap("sin.approx.f32 %f1, %f2;", &[f(1000.0)]).1, u32::MAX);
        // A subnormal input: sin(x) = x, flushed by .ftz (and the legacy form).
        assert_eq!(ap("sin.approx.f32 %f1, %f2;", &[SUB1]).0, SUB1);
        assert_eq!(ap("sin.approx.ftz.f32 %f1, %f2;", &[NSUB1]), (NZ, 0));
        assert_eq!(ap("sin.f32 %f1, %f2;", &[NSUB1]), (NZ, 0));
    }

    #[test]
    fn lg2_ex2() {
        assert_eq!(ap("lg2.approx.f32 %f1, %f2;", &[f(8.0)]), (f(3.0), 5));
        assert_eq!(ap("lg2.approx.f32 %f1, %f2;", &[ONE]), (PZ, u32::MAX));
        assert_eq!(ap("lg2.approx.f32 %f1, %f2;", &[PZ]), (NINF, 0));
        assert_eq!(ap("lg2.approx.f32 %f1, %f2;", &[NZ]), (NINF, 0));
        assert_eq!(ap("lg2.approx.f32 %f1, %f2;", &[INF]), (INF, 0));
        assert!(is_anynan("lg2.approx.f32 %f1, %f2;", &[NINF]));
        assert!(is_anynan("lg2.approx.f32 %f1, %f2;", &[NEG_ONE]));
        assert!(is_anynan("lg2.approx.f32 %f1, %f2;", &[NSUB1]));
        assert_eq!(ap("lg2.approx.ftz.f32 %f1, %f2;", &[NSUB1]), (NINF, 0));
        assert_eq!(ap("lg2.approx.f32 %f1, %f2;", &[SUB1]).0, f(-149.0));
        assert_eq!(ap("ex2.approx.f32 %f1, %f2;", &[f(3.0)]), (f(8.0), 3));
        assert_eq!(ap("ex2.approx.f32 %f1, %f2;", &[NINF]), (PZ, 0));
        assert_eq!(ap("ex2.approx.f32 %f1, %f2;", &[NZ]), (ONE, 0));
        assert_eq!(ap("ex2.approx.f32 %f1, %f2;", &[INF]), (INF, 0));
        assert!(is_anynan("ex2.approx.f32 %f1, %f2;", &[QNAN]));
        assert_eq!(ap("ex2.approx.f32 %f1, %f2;", &[f(-149.0)]).0, SUB1);
        assert_eq!(ap("ex2.approx.ftz.f32 %f1, %f2;", &[f(-149.0)]).0, PZ);
        assert_eq!(ap("ex2.approx.f32 %f1, %f2;", &[f(128.0)]).0, INF);
        assert_eq!(ap("ex2.f32 %f1, %f2;", &[SUB1]), (ONE, 0));
    }

    #[test]
    fn tanh_all_types() {
        assert_eq!(ap("tanh.approx.f32 %f1, %f2;", &[INF]), (ONE, 0));
        assert_eq!(ap("tanh.approx.f32 %f1, %f2;", &[NINF]), (NEG_ONE, 0));
        assert_eq!(ap("tanh.approx.f32 %f1, %f2;", &[NZ]), (NZ, 0));
        assert!(is_anynan("tanh.approx.f32 %f1, %f2;", &[QNAN]));
        assert_eq!(ap("tanh.approx.f32 %f1, %f2;", &[ONE]), (f(1f64.tanh() as f32), (1 << 13) + 1));
        assert_eq!(ap("tanh.approx.f32 %f1, %f2;", &[SUB1]).0, SUB1);
        // f16: tanh(1) = 0.76159... = 0x3a18 in f16; absolute 2^-10.987 at ulp 2^-11: 3 ulps.
        assert_eq!(ap("tanh.approx.f16 %h1, %h2;", &[H_ONE]), (0x3a18, 3));
        assert_eq!(ap("tanh.approx.f16x2 %r1, %r2;", &[H_ONE | 0xfc00 << 16]), (0x3a18 | 0xbc00 << 16, 3));
        assert_eq!(ap("tanh.approx.bf16 %h1, %h2;", &[B_ONE]).0, 0x3f43);
        assert_eq!(ap("tanh.approx.bf16x2 %r1, %r2;", &[0x8000 | 0x7f80 << 16]), (0x8000 | B_ONE << 16, 0));
        let r = v("tanh.approx.f16x2 %r1, %r2;", &[H_NAN | H_ONE << 16]);
        assert_eq!(r.bits >> 16, 0x3a18);
        assert!(Fmt::F16.is_nan(r.bits & 0xffff));
    }

    #[test]
    fn ex2_half() {
        // f16: relative 2^-9.9 -> ceil(2^1.1) + 1 = 4 ulps.
        assert_eq!(ap("ex2.approx.f16 %h1, %h2;", &[0x4200]), (0x4800, 4));
        assert_eq!(ap("ex2.approx.f16 %h1, %h2;", &[0xfc00]), (0, 0));
        assert_eq!(ap("ex2.approx.f16 %h1, %h2;", &[0x8000]), (H_ONE, 0));
        assert_eq!(ap("ex2.approx.f16 %h1, %h2;", &[0x7c00]), (0x7c00, 0));
        // A subnormal f16 result (2^-20 = 0x0010): whether it is flushed is not said.
        assert_eq!(ap("ex2.approx.f16 %h1, %h2;", &[0xcd00]), (0x0010, 17));
        // Subnormal f16 input supported: 2^(tiny) rounds to 1.
        assert_eq!(ap("ex2.approx.f16 %h1, %h2;", &[0x0001]).0, H_ONE);
        assert_eq!(ap("ex2.approx.f16x2 %r1, %r2;", &[0x4200 | 0x3c00 << 16]).0, 0x4800 | 0x4000 << 16);
        // bf16 (.ftz only): relative 2^-7 -> 3 ulps; subnormal inputs are zeros.
        assert_eq!(ap("ex2.approx.ftz.bf16 %h1, %h2;", &[B_ONE]), (0x4000, 3));
        assert_eq!(ap("ex2.approx.ftz.bf16 %h1, %h2;", &[0x8001]), (B_ONE, 0));
        assert_eq!(ap("ex2.approx.ftz.bf16 %h1, %h2;", &[0xc300]).0, 0); // 2^-128: flushed
        assert_eq!(ap("ex2.approx.ftz.bf16x2 %r1, %r2;", &[0x0001 | 0xff80 << 16]), (B_ONE, 0));
    }

    // ---- abs / neg / copysign ---------------------------------------------------

    #[test]
    fn abs_neg() {
        assert_eq!(ex("abs.f32 %f1, %f2;", &[NEG_ONE]), ONE);
        assert_eq!(ex("abs.f32 %f1, %f2;", &[NZ]), PZ);
        assert_eq!(ex("abs.f32 %f1, %f2;", &[NINF]), INF);
        assert_eq!(ex("abs.f32 %f1, %f2;", &[NSUB1]), SUB1);
        assert_eq!(ex("abs.ftz.f32 %f1, %f2;", &[NSUB1]), PZ);
        assert!(is_anynan("abs.f32 %f1, %f2;", &[0xffc0_0000]));
        // abs.f64 passes NaNs through unchanged.
        assert_eq!(ex("abs.f64 %fd1, %fd2;", &[0xfff8_0000_0000_0001]), 0xfff8_0000_0000_0001);
        assert_eq!(ex("abs.f64 %fd1, %fd2;", &[d(-2.5)]), d(2.5));
        assert_eq!(ex("abs.f64 %fd1, %fd2;", &[0x8000_0000_0000_0001]), 1);
        assert_eq!(ex("neg.f32 %f1, %f2;", &[PZ]), NZ);
        assert_eq!(ex("neg.f32 %f1, %f2;", &[NEG_ONE]), ONE);
        assert_eq!(ex("neg.f32 %f1, %f2;", &[SUB1]), NSUB1);
        assert_eq!(ex("neg.ftz.f32 %f1, %f2;", &[SUB1]), NZ);
        assert_eq!(ex("neg.f64 %fd1, %fd2;", &[D_ONE]), d(-1.0));
        assert!(is_anynan("neg.f32 %f1, %f2;", &[QNAN]));
        assert!(is_anynan("neg.f64 %fd1, %fd2;", &[D_QNAN]));
        // Half precision.
        assert_eq!(ex("neg.f16 %h1, %h2;", &[H_ONE]), 0xbc00);
        assert_eq!(ex("neg.ftz.f16 %h1, %h2;", &[0x0001]), 0x8000);
        assert_eq!(ex("neg.f16 %h1, %h2;", &[0x0001]), 0x8001);
        assert_eq!(ex("neg.bf16x2 %r1, %r2;", &[B_ONE | 0x8000 << 16]), 0xbf80);
        assert_eq!(ex("abs.f16x2 %r1, %r2;", &[0xbc00 | 0x8001 << 16]), H_ONE | 0x0001 << 16);
        assert_eq!(ex("abs.ftz.f16x2 %r1, %r2;", &[0xbc00 | 0x8001 << 16]), H_ONE);
        assert_eq!(ex("abs.bf16 %h1, %h2;", &[0xc000]), 0x4000);
        assert!(is_anynan("abs.bf16 %h1, %h2;", &[0xffc0]));
        assert!(is_anynan("neg.f16x2 %r1, %r2;", &[H_NAN]));
    }

    #[test]
    fn copysign() {
        assert_eq!(ex("copysign.f32 %f1, %f2, %f3;", &[NEG_ONE, TWO]), 0xc000_0000);
        assert_eq!(ex("copysign.f32 %f1, %f2, %f3;", &[PZ, NINF]), INF);
        assert_eq!(ex("copysign.f32 %f1, %f2, %f3;", &[0xffc0_0000, ONE]), NEG_ONE);
        assert!(is_anynan("copysign.f32 %f1, %f2, %f3;", &[NEG_ONE, QNAN]));
        assert_eq!(ex("copysign.f64 %fd1, %fd2, %fd3;", &[d(-0.0), D_QNAN]), D_QNAN | 1 << 63);
        assert_eq!(ex("copysign.f64 %fd1, %fd2, %fd3;", &[D_ONE, d(-3.0)]), d(3.0));
    }

    // ---- min / max -----------------------------------------------------------

    #[test]
    fn min_max_f32() {
        assert_eq!(ex("min.f32 %f1, %f2, %f3;", &[ONE, TWO]), ONE);
        assert_eq!(ex("max.f32 %f1, %f2, %f3;", &[ONE, TWO]), TWO);
        assert_eq!(ex("min.f32 %f1, %f2, %f3;", &[NINF, MAX]), NINF);
        assert_eq!(ex("max.f32 %f1, %f2, %f3;", &[NINF, MAX | NZ]), MAX | NZ);
        // -0.0 < +0.0.
        assert_eq!(ex("min.f32 %f1, %f2, %f3;", &[PZ, NZ]), NZ);
        assert_eq!(ex("min.f32 %f1, %f2, %f3;", &[NZ, PZ]), NZ);
        assert_eq!(ex("max.f32 %f1, %f2, %f3;", &[NZ, PZ]), PZ);
        assert_eq!(ex("max.f32 %f1, %f2, %f3;", &[PZ, NZ]), PZ);
        // One NaN: the other input.
        assert_eq!(ex("min.f32 %f1, %f2, %f3;", &[QNAN, NEG_ONE]), NEG_ONE);
        assert_eq!(ex("max.f32 %f1, %f2, %f3;", &[ONE, SNAN]), ONE);
        assert!(is_anynan("min.f32 %f1, %f2, %f3;", &[QNAN, SNAN]));
        // .NaN: the canonical NaN.
        assert_eq!(ex("min.NaN.f32 %f1, %f2, %f3;", &[QNAN, ONE]), CNAN);
        assert_eq!(ex("max.NaN.f32 %f1, %f2, %f3;", &[ONE, 0xffc0_0000]), CNAN);
        assert_eq!(ex("max.NaN.f32 %f1, %f2, %f3;", &[SNAN, SNAN]), CNAN);
        assert_eq!(ex("max.NaN.f32 %f1, %f2, %f3;", &[ONE, TWO]), TWO);
        // Subnormals: kept without .ftz, zeros with.
        assert_eq!(ex("max.f32 %f1, %f2, %f3;", &[SUB1, PZ]), SUB1);
        assert_eq!(ex("max.ftz.f32 %f1, %f2, %f3;", &[SUB1, PZ]), PZ);
        assert_eq!(ex("min.ftz.f32 %f1, %f2, %f3;", &[NSUB1, PZ]), NZ);
        assert_eq!(ex("min.f32 %f1, %f2, %f3;", &[NSUB1, PZ]), NSUB1);
        // .xorsign.abs: |min| or |max| of the magnitudes, sign = xor of the signs.
        let m = |s: &str, a: f32, b: f32| ex(&format!("{s}.xorsign.abs.f32 %f1, %f2, %f3;"), &[f(a), f(b)]);
        assert_eq!(m("min", -2.0, 3.0), f(-2.0));
        assert_eq!(m("max", -2.0, 3.0), f(-3.0));
        assert_eq!(m("max", -2.0, -3.0), f(3.0));
        assert_eq!(m("min", 2.0, 3.0), f(2.0));
        assert_eq!(m("min", -0.0, 0.0), f(-0.0));
        // The NaN's sign counts for the xor; the result is the other input's magnitude.
        assert_eq!(ex("min.xorsign.abs.f32 %f1, %f2, %f3;", &[QNAN, f(-3.0)]), f(-3.0));
        assert_eq!(ex("min.xorsign.abs.f32 %f1, %f2, %f3;", &[0xffc0_0000, f(-3.0)]), f(3.0));
        assert!(is_anynan("max.xorsign.abs.f32 %f1, %f2, %f3;", &[QNAN, QNAN]));
        assert_eq!(ex("max.NaN.xorsign.abs.f32 %f1, %f2, %f3;", &[QNAN, NEG_ONE]), CNAN);
    }

    #[test]
    fn min_max_three_inputs_and_f64() {
        assert_eq!(ex("min.f32 %f1, %f2, %f3, %f4;", &[f(3.0), ONE, TWO]), ONE);
        assert_eq!(ex("max.f32 %f1, %f2, %f3, %f4;", &[f(3.0), ONE, TWO]), f(3.0));
        assert_eq!(ex("max.f32 %f1, %f2, %f3, %f4;", &[ONE, QNAN, TWO]), TWO);
        assert_eq!(ex("min.f32 %f1, %f2, %f3, %f4;", &[QNAN, QNAN, TWO]), TWO);
        assert!(is_anynan("min.f32 %f1, %f2, %f3, %f4;", &[QNAN, QNAN, QNAN]));
        assert_eq!(ex("min.NaN.f32 %f1, %f2, %f3, %f4;", &[ONE, TWO, QNAN]), CNAN);
        assert_eq!(ex("min.f32 %f1, %f2, %f3, %f4;", &[PZ, NZ, PZ]), NZ);
        assert_eq!(ex("min.abs.f32 %f1, %f2, %f3, %f4;", &[f(-5.0), TWO, NEG_ONE]), ONE);
        assert_eq!(ex("max.abs.f32 %f1, %f2, %f3, %f4;", &[f(-5.0), TWO, NEG_ONE]), f(5.0));
        assert_eq!(ex("max.ftz.f32 %f1, %f2, %f3, %f4;", &[NSUB1, SUB1, NZ]), PZ);
        let dn = d(-1.0);
        assert_eq!(ex("min.f64 %fd1, %fd2, %fd3;", &[D_ONE, dn]), dn);
        assert_eq!(ex("max.f64 %fd1, %fd2, %fd3;", &[D_QNAN, dn]), dn);
        assert_eq!(ex("min.f64 %fd1, %fd2, %fd3;", &[d(0.0), d(-0.0)]), d(-0.0));
        assert_eq!(ex("max.f64 %fd1, %fd2, %fd3;", &[d(-0.0), d(0.0)]), d(0.0));
        assert_eq!(ex("max.f64 %fd1, %fd2, %fd3;", &[1, 0]), 1);
        assert!(is_anynan("max.f64 %fd1, %fd2, %fd3;", &[D_QNAN, D_QNAN]));
    }

    #[test]
    fn min_max_half() {
        assert_eq!(ex("min.f16 %h1, %h2, %h3;", &[H_ONE, 0xbc00]), 0xbc00);
        assert_eq!(ex("max.f16 %h1, %h2, %h3;", &[0x8000, 0x0000]), 0);
        assert_eq!(ex("max.f16 %h1, %h2, %h3;", &[H_NAN, H_TWO]), H_TWO);
        assert_eq!(ex("max.NaN.f16 %h1, %h2, %h3;", &[H_NAN, H_TWO]), 0x7fff);
        assert_eq!(ex("max.ftz.f16 %h1, %h2, %h3;", &[0x0001, 0x8000]), 0);
        assert_eq!(ex("max.f16 %h1, %h2, %h3;", &[0x0001, 0x8000]), 1);
        assert_eq!(ex("min.f16x2 %r1, %r2, %r3;", &[H_ONE | H_TWO << 16, H_TWO | H_ONE << 16]), H_ONE | H_ONE << 16);
        assert_eq!(ex("min.NaN.f16x2 %r1, %r2, %r3;", &[H_NAN | H_TWO << 16, H_TWO | H_ONE << 16]), 0x7fff | H_ONE << 16);
        assert_eq!(ex("max.bf16 %h1, %h2, %h3;", &[B_ONE, 0x4000]), 0x4000);
        assert_eq!(ex("min.NaN.bf16x2 %r1, %r2, %r3;", &[0x7fc0 | B_ONE << 16, B_ONE | 0x4000 << 16]), 0x7fff | B_ONE << 16);
        assert_eq!(ex("min.xorsign.abs.bf16 %h1, %h2, %h3;", &[0xc000, B_ONE]), 0xbf80);
        assert_eq!(ex("max.xorsign.abs.f16x2 %r1, %r2, %r3;", &[0xc000 | H_ONE << 16, H_ONE | 0xbc00 << 16]), 0xc000 | 0xbc00 << 16);
        let r = v("max.f16x2 %r1, %r2, %r3;", &[H_NAN | H_ONE << 16, H_NAN | H_TWO << 16]);
        assert_eq!((r.bits >> 16, r.quality), (H_TWO, Quality::AnyNan));
    }

    // ---- half precision arithmetic ---------------------------------------------

    #[test]
    fn half_arithmetic() {
        assert_eq!(ex("add.f16 %h1, %h2, %h3;", &[H_ONE, H_ONE]), H_TWO);
        // 1 + 2^-11 is a tie (to 1); 1+2^-10 + 2^-11 ties up to 1+2^-9.
        assert_eq!(ex("add.rn.f16 %h1, %h2, %h3;", &[H_ONE, 0x1000]), H_ONE);
        assert_eq!(ex("add.f16 %h1, %h2, %h3;", &[0x3c01, 0x1000]), 0x3c02);
        assert_eq!(ex("mul.f16 %h1, %h2, %h3;", &[0x7bff, H_TWO]), 0x7c00);
        assert_eq!(ex("sub.f16 %h1, %h2, %h3;", &[H_ONE, H_ONE]), 0);
        assert_eq!(ex("add.f16 %h1, %h2, %h3;", &[0x0001, 0x0001]), 0x0002);
        assert_eq!(ex("add.ftz.f16 %h1, %h2, %h3;", &[0x0001, 0x0001]), 0);
        assert_eq!(ex("sub.ftz.f16 %h1, %h2, %h3;", &[0x0400, 0x0401]), 0x8000);
        assert_eq!(ex("add.sat.f16 %h1, %h2, %h3;", &[H_ONE, H_ONE]), H_ONE);
        assert_eq!(ex("mul.sat.f16 %h1, %h2, %h3;", &[H_NAN, H_ONE]), 0);
        assert_eq!(ex("sub.sat.f16 %h1, %h2, %h3;", &[H_ONE, H_TWO]), 0);
        assert!(is_anynan("add.f16 %h1, %h2, %h3;", &[0x7c00, 0xfc00]));
        assert_eq!(v("add.f16 %h1, %h2, %h3;", &[H_NAN, H_ONE]).bits, 0x7fff);
        assert_eq!(ex("add.f16x2 %r1, %r2, %r3;", &[H_ONE | H_TWO << 16, H_ONE | 0xbc00 << 16]), H_TWO | H_ONE << 16);
        assert_eq!(ex("mul.ftz.sat.f16x2 %r1, %r2, %r3;", &[H_TWO | 0x0001 << 16, H_TWO | H_ONE << 16]), H_ONE);
        // bf16: 1 + 2^-8 ties to 1; no .ftz, subnormals kept.
        assert_eq!(ex("add.bf16 %h1, %h2, %h3;", &[B_ONE, 0x3b80]), B_ONE);
        assert_eq!(ex("add.rn.bf16 %h1, %h2, %h3;", &[0x3f81, 0x3b80]), 0x3f82);
        assert_eq!(ex("mul.bf16 %h1, %h2, %h3;", &[0x0001, 0x4000]), 0x0002);
        assert_eq!(ex("sub.bf16x2 %r1, %r2, %r3;", &[B_ONE | 0x4000 << 16, B_ONE | B_ONE << 16]), B_ONE << 16);
        assert!(is_anynan("mul.bf16 %h1, %h2, %h3;", &[0x7f80, 0]));
    }

    #[test]
    fn half_fma_relu_oob() {
        // (1+2^-6)^2 - 1 = 2^-5 + 2^-12 = 2^-5 * (1 + 2^-7): fused. Unfused, a*a
        // rounds to 1 + 2^-5 (2^-12 is below half an ulp) and the result is 2^-5.
        let a = 0x3c10;
        assert_eq!(ex("fma.rn.f16 %h1, %h2, %h3, %h4;", &[a, a, 0xbc00]), 0x2808);
        let p = ex("mul.rn.f16 %h1, %h2, %h3;", &[a, a]);
        assert_eq!(ex("add.rn.f16 %h1, %h2, %h3;", &[p, 0xbc00]), 0x2800);
        assert_eq!(ex("fma.rn.sat.f16 %h1, %h2, %h3, %h4;", &[H_TWO, H_TWO, 0xbc00]), H_ONE);
        assert_eq!(ex("fma.rn.ftz.f16 %h1, %h2, %h3, %h4;", &[0x0001, H_TWO, 0]), 0);
        assert_eq!(ex("fma.rn.f16 %h1, %h2, %h3, %h4;", &[0x0001, H_TWO, 0]), 0x0002);
        // .relu: negative -> +0, NaN -> canonical NaN, -0 not said.
        assert_eq!(ex("fma.rn.relu.f16 %h1, %h2, %h3, %h4;", &[H_ONE, H_ONE, 0xc000]), 0);
        assert_eq!(ex("fma.rn.relu.f16 %h1, %h2, %h3, %h4;", &[H_ONE, H_ONE, H_ONE]), H_TWO);
        assert_eq!(ex("fma.rn.relu.f16 %h1, %h2, %h3, %h4;", &[0x7c00, 0, H_ONE]), 0x7fff);
        assert!(unspecified("fma.rn.relu.f16 %h1, %h2, %h3, %h4;", &[H_ONE, 0x8000, 0x8000]));
        assert_eq!(ex("fma.rn.relu.bf16 %h1, %h2, %h3, %h4;", &[B_ONE, B_ONE, 0xc000]), 0);
        assert_eq!(ex("fma.rn.relu.bf16x2 %r1, %r2, %r3, %r4;", &[B_ONE | B_ONE << 16, 0x7fc0 | B_ONE << 16, 0]), 0x7fff | B_ONE << 16);
        assert_eq!(ex("fma.rn.ftz.relu.f16x2 %r1, %r2, %r3, %r4;", &[0x0001 | H_ONE << 16, H_ONE | H_ONE << 16, 0x8001 | H_ONE << 16]), H_TWO << 16);
        assert_eq!(ex("fma.rn.bf16 %h1, %h2, %h3, %h4;", &[B_ONE, 0x4000, B_ONE]), 0x4040);
        // .oob: no effect without NaNs; the OOB-NaN encoding is not given.
        assert_eq!(ex("fma.rn.oob.f16 %h1, %h2, %h3, %h4;", &[H_ONE, H_ONE, H_ONE]), H_TWO);
        assert_eq!(ex("fma.rn.oob.relu.bf16 %h1, %h2, %h3, %h4;", &[B_ONE, B_ONE, 0xc000]), 0);
        assert!(unspecified("fma.rn.oob.f16x2 %r1, %r2, %r3, %r4;", &[H_ONE, H_ONE, H_NAN << 16]));
    }

    // ---- mixed precision ---------------------------------------------------------

    #[test]
    fn mixed_precision() {
        assert_eq!(ex("add.f32.f16 %f1, %h2, %f3;", &[H_ONE, TWO]), f(3.0));
        assert_eq!(ex("add.rn.f32.bf16 %f1, %h2, %f3;", &[0xc040, ONE]), f(-2.0));
        let tiny = f(2f32.powi(-30));
        assert_eq!(ex("add.rz.f32.bf16 %f1, %h2, %f3;", &[B_ONE, tiny]), ONE);
        assert_eq!(ex("add.rp.f32.bf16 %f1, %h2, %f3;", &[B_ONE, tiny]), 0x3f80_0001);
        assert_eq!(ex("add.rm.f32.f16 %f1, %h2, %f3;", &[H_ONE, NEG_ONE]), NZ);
        assert_eq!(ex("sub.f32.f16 %f1, %h2, %f3;", &[H_ONE, f(3.0)]), f(-2.0));
        assert_eq!(ex("sub.sat.f32.f16 %f1, %h2, %f3;", &[H_ONE, f(3.0)]), PZ);
        assert_eq!(ex("add.sat.f32.f16 %f1, %h2, %f3;", &[H_ONE, f(3.0)]), ONE);
        assert_eq!(ex("add.sat.f32.f16 %f1, %h2, %f3;", &[H_NAN, ONE]), PZ);
        assert!(unspecified("add.sat.f32.f16 %f1, %h2, %f3;", &[0x8000, NZ]));
        assert!(is_anynan("add.f32.f16 %f1, %h2, %f3;", &[0x7c00, NINF]));
        // Subnormal f16 (2^-24) converts to a normal f32; no .ftz: exact.
        assert_eq!(ex("add.f32.f16 %f1, %h2, %f3;", &[0x0001, PZ]), f(2f32.powi(-24)));
        assert_eq!(ex("fma.rn.f32.f16 %f1, %h2, %h3, %f4;", &[H_TWO, 0x4200, ONE]), f(7.0));
        assert_eq!(ex("fma.rz.sat.f32.bf16 %f1, %h2, %h3, %f4;", &[0x4000, 0x4040, ONE]), ONE);
        assert_eq!(ex("fma.rz.sat.f32.f16.sat %f1, %h2, %h3, %f4;", &[H_TWO, 0x4200, ONE]), ONE);
        // Fused: (1+2^-7)^2 - 1 in bf16 inputs keeps 2^-14.
        assert_eq!(ex("fma.rn.f32.bf16 %f1, %h2, %h3, %f4;", &[0x3f81, 0x3f81, NEG_ONE]), f(2f32.powi(-6) + 2f32.powi(-14)));
        // .ftz: f32 addend and result flushed; a bf16 subnormal is an f32 subnormal.
        assert_eq!(ex("fma.rn.ftz.f32.f16 %f1, %h2, %h3, %f4;", &[H_ONE, H_ONE, SUB1]), ONE);
        assert_eq!(ex("fma.rn.ftz.f32.bf16 %f1, %h2, %h3, %f4;", &[0x0001, B_ONE, PZ]), PZ);
        assert_eq!(ex("fma.rn.f32.bf16 %f1, %h2, %h3, %f4;", &[0x0001, B_ONE, PZ]), 0x0001_0000);
        // A subnormal f16 source with .ftz: flushed before conversion or not? Not said.
        assert!(unspecified("fma.rn.ftz.f32.f16 %f1, %h2, %h3, %f4;", &[0x0001, H_ONE, PZ]));
        assert_eq!(ex("fma.rn.f32.f16 %f1, %h2, %h3, %f4;", &[0x0001, H_ONE, PZ]), f(2f32.powi(-24)));
    }

    #[test]
    fn integer_types_are_not_ours() {
        for t in ["add.s32 %r1, %r2, %r3;", "min.u32 %r1, %r2, %r3;", "mad.lo.s32 %r1, %r2, %r3, %r4;", "abs.s32 %r1, %r2;", "div.u32 %r1, %r2, %r3;"] {
            assert!(eval(&ins(t), &[1, 2, 3], false).is_none(), "{t}");
        }
        assert!(eval(&ins("and.b32 %r1, %r2, %r3;"), &[1, 2], false).is_none());
        assert!(matches!(run("add.f32 %f1, %f2, %f3;", &[ONE]), Err(EvalError::BadOperands(_))));
    }

    // ---- cross-checks on pseudo-random inputs -------------------------------------

    use crate::eval::test_rng::Rng;
    impl Rng {
        /// Random bits biased toward the edges of a `w`-bit float format.
        fn float(&mut self, fmt: Fmt) -> u128 {
            let r = self.next();
            let w = fmt.width();
            let sign = ((r >> 63) as u128) << (w - 1);
            let man = mask(fmt.man_bits());
            let body = match r % 16 {
                0 => 0,
                1 => (self.next() as u128) & man,                  // subnormal
                2 => fmt.exp_mask(),                               // inf
                3 => fmt.exp_mask() | ((self.next() as u128) & man).max(1), // NaN
                4 => fmt.one(),
                5 => fmt.exp_mask() - 1,                           // MAX
                6 => fmt.min_normal() + (self.next() as u128 & 3),
                7 => fmt.one() + (self.next() as u128 & 7),
                _ => (self.next() as u128) & mask(w - 1),
            };
            sign | body
        }
        /// A normal value with a biased exponent within `e` of the bias.
        fn moderate(&mut self, fmt: Fmt, e: u32) -> u128 {
            let r = self.next() as u128;
            let exp = (fmt.bias() as u128 - e as u128) + (r % (2 * e as u128 + 1));
            let sign = ((r >> 40) & 1) << (fmt.width() - 1);
            sign | exp << fmt.man_bits() | (self.next() as u128 & mask(fmt.man_bits()))
        }
    }

    fn check_rn(fmt: Fmt, text: &str, n: usize, host: impl Fn(&[u128]) -> u128) {
        let i = ins(text);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ text.len() as u64);
        for _ in 0..20000 {
            let xs: Vec<u128> = (0..n).map(|_| rng.float(fmt)).collect();
            let r = run_i(&i, &xs).unwrap().dests[0];
            let h = host(&xs);
            if fmt.is_nan(h) {
                assert_eq!(r.quality, Quality::AnyNan, "{text} {xs:x?}");
                assert!(fmt.is_nan(r.bits));
            } else {
                assert_eq!((r.bits, r.quality), (h, Quality::Exact), "{text} {xs:x?}");
            }
        }
    }

    #[test]
    fn random_rn_against_host_f32() {
        let g = |x: u128| f32::from_bits(x as u32);
        check_rn(Fmt::F32, "add.f32 %f1, %f2, %f3;", 2, |x| f(g(x[0]) + g(x[1])));
        check_rn(Fmt::F32, "sub.rn.f32 %f1, %f2, %f3;", 2, |x| f(g(x[0]) - g(x[1])));
        check_rn(Fmt::F32, "mul.f32 %f1, %f2, %f3;", 2, |x| f(g(x[0]) * g(x[1])));
        check_rn(Fmt::F32, "div.rn.f32 %f1, %f2, %f3;", 2, |x| f(g(x[0]) / g(x[1])));
        check_rn(Fmt::F32, "fma.rn.f32 %f1, %f2, %f3, %f4;", 3, |x| f(g(x[0]).mul_add(g(x[1]), g(x[2]))));
        check_rn(Fmt::F32, "rcp.rn.f32 %f1, %f2;", 1, |x| f(1.0 / g(x[0])));
        check_rn(Fmt::F32, "sqrt.rn.f32 %f1, %f2;", 1, |x| f(g(x[0]).sqrt()));
        let min = |a: f32, b: f32| if a.is_nan() { b } else if b.is_nan() || a < b || (a == b && a.is_sign_negative()) { a } else { b };
        check_rn(Fmt::F32, "min.f32 %f1, %f2, %f3;", 2, |x| f(min(g(x[0]), g(x[1]))));
        let max = |a: f32, b: f32| if a.is_nan() { b } else if b.is_nan() || a > b || (a == b && a.is_sign_positive()) { a } else { b };
        check_rn(Fmt::F32, "max.f32 %f1, %f2, %f3;", 2, |x| f(max(g(x[0]), g(x[1]))));
    }

    #[test]
    fn random_rn_against_host_f64() {
        let g = |x: u128| f64::from_bits(x as u64);
        check_rn(Fmt::F64, "add.f64 %fd1, %fd2, %fd3;", 2, |x| d(g(x[0]) + g(x[1])));
        check_rn(Fmt::F64, "sub.f64 %fd1, %fd2, %fd3;", 2, |x| d(g(x[0]) - g(x[1])));
        check_rn(Fmt::F64, "mul.rn.f64 %fd1, %fd2, %fd3;", 2, |x| d(g(x[0]) * g(x[1])));
        check_rn(Fmt::F64, "div.rn.f64 %fd1, %fd2, %fd3;", 2, |x| d(g(x[0]) / g(x[1])));
        check_rn(Fmt::F64, "fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", 3, |x| d(g(x[0]).mul_add(g(x[1]), g(x[2]))));
        check_rn(Fmt::F64, "mad.rn.f64 %fd1, %fd2, %fd3, %fd4;", 3, |x| d(g(x[0]).mul_add(g(x[1]), g(x[2]))));
        check_rn(Fmt::F64, "rcp.rn.f64 %fd1, %fd2;", 1, |x| d(1.0 / g(x[0])));
        check_rn(Fmt::F64, "sqrt.rn.f64 %fd1, %fd2;", 1, |x| d(g(x[0]).sqrt()));
    }

    /// `v` = the f64 nearest to an exact value on the side `err` of it. When
    /// `v` falls exactly on an f32 value, moves it (by far less than an f32
    /// ulp) to that side, so that directed rounding to f32 sees the right side.
    fn exact_side(v: f64, err: f64) -> f64 {
        if err == 0.0 || (v as f32) as f64 != v {
            v
        } else {
            v + err.signum() * v.abs() * 2f64.powi(-40)
        }
    }

    /// Rounds an exact (or exactly known) f64 to f32 in a directed mode.
    fn f64_to_f32_dir(x: f64, mode: &str) -> u128 {
        let y = x as f32;
        let yd = y as f64;
        if yd == x || y.is_nan() {
            return f(y);
        }
        let up = |v: f32| if v == 0.0 { f32::from_bits(1) } else if v > 0.0 { f32::from_bits(v.to_bits() + 1) } else { f32::from_bits(v.to_bits() - 1) };
        let down = |v: f32| -up(-v);
        let r = match mode {
            "rz" => if yd.abs() > x.abs() { if y > 0.0 { down(y) } else { up(y) } } else { y },
            "rm" => if yd > x { down(y) } else { y },
            "rp" => if yd < x { up(y) } else { y },
            _ => y,
        };
        f(r)
    }

    #[test]
    fn random_directed_f32() {
        let g = |x: u128| f32::from_bits(x as u32) as f64;
        let mut rng = Rng(12345);
        for mode in ["rz", "rm", "rp"] {
            let add = ins(&format!("add.{mode}.f32 %f1, %f2, %f3;"));
            let mul = ins(&format!("mul.{mode}.f32 %f1, %f2, %f3;"));
            let div = ins(&format!("div.{mode}.f32 %f1, %f2, %f3;"));
            let sqrt = ins(&format!("sqrt.{mode}.f32 %f1, %f2;"));
            let fma = ins(&format!("fma.{mode}.f32 %f1, %f2, %f3, %f4;"));
            for _ in 0..20000 {
                // Exponents within 14 of each other: sums and products are exact in f64.
                let (a, b) = (rng.moderate(Fmt::F32, 14), rng.moderate(Fmt::F32, 14));
                assert_eq!(run_i(&add, &[a, b]).unwrap().dests[0], Val::exact(f64_to_f32_dir(g(a) + g(b), mode)), "add.{mode} {a:x} {b:x}");
                assert_eq!(run_i(&mul, &[a, b]).unwrap().dests[0], Val::exact(f64_to_f32_dir(g(a) * g(b), mode)), "mul.{mode} {a:x} {b:x}");
                // Quotient: q = a/b rounded in f64; the remainder's sign is exact (fma).
                let q = g(a) / g(b);
                let rem = (-q).mul_add(g(b), g(a)); // a - q*b: its sign is the side of the exact quotient
                let qe = exact_side(q, rem);
                assert_eq!(run_i(&div, &[a, b]).unwrap().dests[0], Val::exact(f64_to_f32_dir(qe, mode)), "div.{mode} {a:x} {b:x}");
                // Square root: y*y - a exactly in f64 (48-bit products).
                let pa = a & 0x7fff_ffff;
                let s = g(pa).sqrt();
                let ys = s as f32 as f64;
                let diff = ys * ys - g(pa);
                let se = if diff == 0.0 { ys } else { ys - diff.signum() * ys * 2f64.powi(-40) };
                assert_eq!(run_i(&sqrt, &[pa]).unwrap().dests[0], Val::exact(f64_to_f32_dir(se, mode)), "sqrt.{mode} {pa:x}");
                // fma: a*b is exact in f64; the sum's rounding error from TwoSum.
                let c = rng.moderate(Fmt::F32, 14);
                let p = g(a) * g(b);
                let sum = p + g(c);
                let bb = sum - p;
                let err = (p - (sum - bb)) + (g(c) - bb);
                let fe = exact_side(sum, err);
                assert_eq!(run_i(&fma, &[a, b, c]).unwrap().dests[0], Val::exact(f64_to_f32_dir(fe, mode)), "fma.{mode} {a:x} {b:x} {c:x}");
            }
        }
    }

    #[test]
    fn random_directed_f64() {
        let g = |x: u128| f64::from_bits(x as u64);
        let next = |x: f64, up: bool| -> f64 {
            let b = x.to_bits();
            f64::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
        };
        let dir = |r: f64, err: f64, mode: &str| -> u128 {
            // r = rn(exact), err = exact - r (sign exact).
            let v = match mode {
                "rz" if err != 0.0 && (err > 0.0) != (r > 0.0) => next(r, r < 0.0),
                "rm" if err < 0.0 => next(r, false),
                "rp" if err > 0.0 => next(r, true),
                _ => r,
            };
            d(v)
        };
        let mut rng = Rng(777);
        for mode in ["rz", "rm", "rp"] {
            let add = ins(&format!("add.{mode}.f64 %fd1, %fd2, %fd3;"));
            let mul = ins(&format!("mul.{mode}.f64 %fd1, %fd2, %fd3;"));
            let sqrt = ins(&format!("sqrt.{mode}.f64 %fd1, %fd2;"));
            for _ in 0..20000 {
                let (a, b) = (g(rng.moderate(Fmt::F64, 200)), g(rng.moderate(Fmt::F64, 200)));
                // TwoSum.
                let s = a + b;
                let bb = s - a;
                let e = (a - (s - bb)) + (b - bb);
                assert_eq!(run_i(&add, &[d(a), d(b)]).unwrap().dests[0], Val::exact(dir(s, e, mode)), "add.{mode} {a:e} {b:e}");
                // TwoProduct.
                let p = a * b;
                let e = a.mul_add(b, -p);
                assert_eq!(run_i(&mul, &[d(a), d(b)]).unwrap().dests[0], Val::exact(dir(p, e, mode)), "mul.{mode} {a:e} {b:e}");
                // sqrt: compare y*y with a exactly with integers.
                let a = a.abs();
                let y = a.sqrt();
                let (ma, ea) = ((a.to_bits() & ((1 << 52) - 1)) | 1 << 52, ((a.to_bits() >> 52) as i64) - 1075);
                let (my, ey) = ((y.to_bits() & ((1 << 52) - 1)) | 1 << 52, ((y.to_bits() >> 52) as i64) - 1075);
                // y^2 = my^2 * 2^(2ey), a = ma * 2^ea; 2ey - ea is about -52.
                let sh = ea - 2 * ey;
                assert!((0..70).contains(&sh));
                let lhs = (my as u128) * (my as u128);
                let rhs = (ma as u128) << sh;
                let err = match lhs.cmp(&rhs) {
                    Ordering::Less => 1.0,
                    Ordering::Greater => -1.0,
                    Ordering::Equal => 0.0,
                };
                assert_eq!(run_i(&sqrt, &[d(a)]).unwrap().dests[0], Val::exact(dir(y, err, mode)), "sqrt.{mode} {a:e}");
            }
        }
    }

    #[test]
    fn random_half_against_exact_f64() {
        // f16/bf16 sums and products are exact in f64; one rounding to the format.
        for (fmt, ty) in [(Fmt::F16, "f16"), (Fmt::Bf16, "bf16")] {
            let mut rng = Rng(4242);
            let add = ins(&format!("add.{ty} %h1, %h2, %h3;"));
            let mul = ins(&format!("mul.rn.{ty} %h1, %h2, %h3;"));
            let fma = ins(&format!("fma.rn.{ty} %h1, %h2, %h3, %h4;"));
            let x2 = ins(&format!("add.{ty}x2 %r1, %r2, %r3;"));
            for _ in 0..20000 {
                let (a, b, c) = (rng.float(fmt), rng.float(fmt), rng.float(fmt));
                let (fa, fb, fc) = (fmt.to_f64(a), fmt.to_f64(b), fmt.to_f64(c));
                for (i, h) in [(&add, fa + fb), (&mul, fa * fb)] {
                    let r = run_i(i, &[a, b]).unwrap().dests[0];
                    if h.is_nan() {
                        assert_eq!((r.bits, r.quality), (0x7fff, Quality::AnyNan));
                    } else {
                        assert_eq!(r, Val::exact(fmt.round_f64(h)), "{ty} {a:x} {b:x}");
                    }
                }
                // a*b is exact in f64 (22 or 16 bits); a*b + c is exact if the exponents are close.
                let p = fa * fb;
                let s = p + fc;
                if !s.is_nan() && (s - p == fc) && (s - fc == p) {
                    assert_eq!(run_i(&fma, &[a, b, c]).unwrap().dests[0], Val::exact(fmt.round_f64(s)), "fma.{ty} {a:x} {b:x} {c:x}");
                }
                let r = run_i(&x2, &[a | b << 16, c | a << 16]).unwrap().dests[0];
                let (l, h) = (fa + fc, fb + fa);
                if !l.is_nan() && !h.is_nan() {
                    assert_eq!(r, Val::exact(fmt.round_f64(l) | fmt.round_f64(h) << 16));
                }
            }
        }
    }

    #[test]
    fn random_approximations_within_bounds() {
        // The returned value is within its stated ulps of the f64 reference,
        // and never Exact.
        let mut rng = Rng(99);
        type Case = (&'static str, fn(f64) -> f64);
        let cases: &[Case] = &[
            ("sin.approx.f32 %f1, %f2;", f64::sin),
            ("cos.approx.f32 %f1, %f2;", f64::cos),
            ("lg2.approx.f32 %f1, %f2;", f64::log2),
            ("ex2.approx.f32 %f1, %f2;", f64::exp2),
            ("tanh.approx.f32 %f1, %f2;", f64::tanh),
            ("rcp.approx.f32 %f1, %f2;", |x| 1.0 / x),
            ("sqrt.approx.f32 %f1, %f2;", f64::sqrt),
            ("rsqrt.approx.f32 %f1, %f2;", |x| 1.0 / x.sqrt()),
        ];
        for (text, h) in cases {
            let i = ins(text);
            for _ in 0..5000 {
                let x = rng.float(Fmt::F32);
                let r = run_i(&i, &[x]).unwrap().dests[0];
                assert!(!r.is_exact(), "{text} {x:x}");
                let xv = Fmt::F32.to_f64(x);
                let hv = h(xv);
                if hv.is_nan() {
                    assert_eq!(r.quality, Quality::AnyNan, "{text} {x:x}");
                    continue;
                }
                let Quality::Approx { ulps } = r.quality else { panic!("{text} {x:x}: {:?}", r.quality) };
                let got = Fmt::F32.to_f64(r.bits);
                if got.is_infinite() || hv.is_infinite() || hv.abs() > f32::MAX as f64 {
                    continue;
                }
                let err = (got - hv).abs() / Fmt::F32.ulp(r.bits);
                assert!(err <= ulps as f64, "{text} {x:x}: {got} vs {hv}, {err} > {ulps}");
            }
        }
    }

    // ---- every form of every opcode: evaluates or says why not --------------------

    #[test]
    fn every_form_evaluates_or_is_unsupported() {
        let mut rng = Rng(2024);
        let mut forms = 0;
        let mut evaluated = 0;
        for &op in OPCODES {
            for form in op.forms() {
                // Every combination of the form's slots.
                let slots = form.slots();
                let mut choices: Vec<Vec<Mod>> = Vec::new();
                for s in slots {
                    let mut c: Vec<Mod> = s.allowed().collect();
                    if s.optional {
                        c.push(Mod::NONE);
                    }
                    choices.push(c);
                }
                let total: usize = choices.iter().map(|c| c.len()).product();
                for mut k in 0..total {
                    let mut mods = SlotMods::new();
                    for c in &choices {
                        mods.push(c[k % c.len()]);
                        k /= c.len();
                    }
                    let operands: crate::ir::Operands = (0..form.operands().len()).map(|j| Operand::reg(RegId(j as u32))).collect();
                    let i = Instruction { guard: None, opcode: op, form, mods, operands };
                    let Some(ty) = i.ty() else { continue };
                    if ty.class() != TypeClass::Float {
                        assert!(eval(&i, &[0, 0, 0], false).is_none());
                        continue;
                    }
                    forms += 1;
                    let approx_form = form.flags().contains(Flags::APPROX);
                    let nsrc = form.operands().iter().filter(|o| o.read).count();
                    let fmt = match lanes_of(ty) {
                        Some((fm, _)) => fm,
                        None => Fmt::F32,
                    };
                    for _ in 0..300 {
                        let srcs: Vec<u128> = (0..nsrc)
                            .map(|_| {
                                let w = 128 / fmt.width();
                                (0..w).fold(0u128, |acc, l| acc | rng.float(fmt) << (l * fmt.width()))
                            })
                            .collect();
                        match eval(&i, &srcs, false).expect("ours") {
                            Ok(r) => {
                                evaluated += 1;
                                assert_eq!(r.dests.len(), 1, "{:?}", i);
                                let q = r.dests[0].quality;
                                if approx_form {
                                    assert!(q != Quality::Exact, "{:?} {srcs:x?}: an approximation claimed Exact", form);
                                } else {
                                    assert!(!matches!(q, Quality::Approx { .. }), "{:?} {srcs:x?}: Approx from an exact form", form);
                                }
                                let width = if ins_types_mixed(&i) { 32 } else { ty.bits() };
                                assert_eq!(r.dests[0].bits & !mask(width), 0, "{:?} {srcs:x?}", form);
                            }
                            Err(EvalError::Unsupported(_)) => {}
                            Err(e) => panic!("{:?} {srcs:x?}: {e}", form),
                        }
                    }
                }
            }
        }
        eprintln!("{forms} float form/modifier combinations, {evaluated} evaluations");
        assert!(forms > 300, "{forms} float forms");
        assert!(evaluated > 50_000, "{evaluated}");
    }

    fn ins_types_mixed(i: &Instruction) -> bool {
        i.types().len() == 2
    }
}
