//! Integer division and remainder by a constant as shifts, masks and
//! `mul.hi` sequences (ptxas expands `div`/`rem` by any value, constants and
//! powers of two included, into a reciprocal iteration of 14–20 SASS
//! instructions for 32 bits and a call of a ~75-instruction routine for 64).
//!
//! What [`div_by_const`] builds, for `x op d` at width N (the program's one
//! input is `x`):
//!
//! | divisor | unsigned | signed (quotient toward zero, remainder with `x`'s sign) |
//! |---|---|---|
//! | 1 (and −1) | `x`, remainder 0 | `x` / `−x`, remainder 0 |
//! | ±2^k | `x >> k`, `x & (2^k − 1)` | `t = x + (sign(x) >>u (N − k))`; `t >>s k` (negated for −2^k); `x − (t & −2^k)` |
//! | above 2^(N−1) | `x >= d` as 0/1; `x >= d ? x − d : x` | — |
//! | other | `mul.hi` by a magic number ([`super::magic`]), then a shift | the same with `mul.hi.s`, ± `x` when the multiplier's sign is wrong, a shift, `+ (t >>u (N−1))` |
//!
//! The unsigned multiplier can need N + 1 bits: an even divisor then divides
//! `x >> tz(d)` by `d >> tz(d)` (whose multiplier fits), an odd one uses the
//! "add" form `(((x − t) >> 1) + t) >> (s − 1)` with `t = mul.hi(x, m − 2^N)`.
//! A remainder is `x − q·d`, one `mad.lo` by `−d`.
//!
//! 16-bit division is done in 32 bits: ptxas turns `mul.hi.u16` into a
//! 32-bit multiply, a shift and a mask, while `mul.hi.u32` of the
//! zero-extended value by `ceil(2^32 / d)` is the quotient itself (for
//! dividends below 2^16 the error `x·e / 2^32` stays below `1/d`).
//!
//! Division by zero is left alone (`None`): its result is unspecified and
//! must stay what the hardware computes. `MININT / −1` (unspecified in the
//! evaluator) gives `MININT` here, and `MININT % −1` gives 0 as `rem` does.

use super::builder::{imm, type_mod, Builder};
use super::magic::{magic, Magic};
use super::program::Program;
use ptx_ir::eval::{bits_mask, sext};
use ptx_ir::ir::Operand;
use ptx_ir::isa::{Mod, Opcode, ScalarType, TypeClass};

/// `x / divisor` (or `x % divisor` with `rem`) of type `ty` (`.u16` ...
/// `.s64`) as a program of one input, `x`; `divisor` is the constant's bit
/// pattern at the type's width. `None` for division by zero, for other
/// types, and when the target `sm_NN` lacks an instruction of the program
/// (every form used here exists since PTX ISA 1.0 on every target).
pub fn div_by_const(ty: ScalarType, rem: bool, divisor: u128, sm: u32) -> Option<Program> {
    use ScalarType as T;
    if !matches!(ty, T::U16 | T::U32 | T::U64 | T::S16 | T::S32 | T::S64) {
        return None;
    }
    let n = ty.bits();
    let d = divisor & bits_mask(n);
    if d == 0 {
        return None;
    }
    let mut b = Builder::new(&[ty]);
    let x = b.input(0);
    let mut l = Lowering { b: &mut b, n, ty };
    if ty.class() == TypeClass::Signed {
        l.signed(x, sext(d, n), rem);
    } else {
        l.unsigned(x, d, rem);
    }
    let program = b.finish().ok()?;
    program.available(sm, (u32::MAX, u32::MAX)).then_some(program)
}

/// The arithmetic width of the magic-number sequences for values of `n` bits.
fn work_width(n: u32) -> u32 {
    n.max(32)
}

/// The integer type of a work width (16, 32 or 64 bits).
fn int_type(bits: u32, signed: bool) -> ScalarType {
    ScalarType::integer(bits, signed).expect("work widths are 16, 32 or 64 bits")
}

fn bit_type(bits: u32) -> ScalarType {
    match bits {
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

struct Lowering<'b> {
    b: &'b mut Builder,
    /// The width of the values.
    n: u32,
    /// The instruction's type.
    ty: ScalarType,
}

impl Lowering<'_> {
    fn op(&mut self, opcode: Opcode, mods: &[Mod], srcs: &[Operand]) -> Operand {
        self.b.push(opcode, mods, srcs)
    }

    fn typed(&mut self, opcode: Opcode, extra: &[Mod], ty: ScalarType, srcs: &[Operand]) -> Operand {
        let mut mods = extra.to_vec();
        mods.push(type_mod(ty));
        self.b.push(opcode, &mods, srcs)
    }

    fn constant(&mut self, v: u128) -> Operand {
        self.typed(Opcode::MOV, &[], self.ty, &[imm(v, self.ty)])
    }

    fn unsigned(&mut self, x: Operand, d: u128, rem: bool) {
        let (n, ty) = (self.n, self.ty);
        let bt = bit_type(n);
        if d == 1 {
            if rem {
                self.constant(0);
            } else {
                self.typed(Opcode::MOV, &[], ty, &[x]);
            }
            return;
        }
        if d.is_power_of_two() {
            let k = d.trailing_zeros() as u128;
            if rem {
                self.typed(Opcode::AND, &[], bt, &[x, imm(d - 1, bt)]);
            } else {
                self.typed(Opcode::SHR, &[], ty, &[x, imm(k, ScalarType::U32)]);
            }
            return;
        }
        if d > 1 << (n - 1) {
            // The quotient is 0 or 1.
            let p = self.typed(Opcode::SETP, &[Mod::GE], ty, &[x.clone(), imm(d, ty)]);
            if rem {
                let less = self.typed(Opcode::SUB, &[], ty, &[x.clone(), imm(d, ty)]);
                self.typed(Opcode::SELP, &[], ty, &[less, x, p]);
            } else {
                self.typed(Opcode::SELP, &[], ty, &[imm(1, ty), imm(0, ty), p]);
            }
            return;
        }
        let w = work_width(n);
        let wt = int_type(w, false);
        let xw = self.widen(x, wt);
        let top = bits_mask(n);
        let Some(mg) = magic(d, top, 0, w) else { return self.b.fail("no magic number".into()) };
        let q = if mg.m >> w == 0 {
            self.mul_hi_shift(xw.clone(), mg, w, wt)
        } else {
            let z = d.trailing_zeros();
            match magic(d >> z, top >> z, 0, w).filter(|m| m.m >> w == 0) {
                Some(shifted) if z > 0 => {
                    // An even divisor: x / d = (x >> z) / (d >> z), with a multiplier that fits.
                    let dividend = self.typed(Opcode::SHR, &[], wt, &[xw.clone(), imm(z as u128, ScalarType::U32)]);
                    self.mul_hi_shift(dividend, shifted, w, wt)
                }
                _ => {
                    // The "add" form: floor(x·m / 2^p) = floor((x + t) / 2^s), t = mul.hi(x, m − 2^w),
                    // computed without overflow as (((x − t) >> 1) + t) >> (s − 1); here s >= 2.
                    let t = self.typed(Opcode::MUL, &[Mod::HI], wt, &[xw.clone(), imm(mg.m - (1 << w), wt)]);
                    let u = self.typed(Opcode::SUB, &[], wt, &[xw.clone(), t.clone()]);
                    let u = self.typed(Opcode::SHR, &[], wt, &[u, imm(1, ScalarType::U32)]);
                    let u = self.typed(Opcode::ADD, &[], wt, &[u, t]);
                    match mg.p - w - 1 {
                        0 => u,
                        s => self.typed(Opcode::SHR, &[], wt, &[u, imm(s as u128, ScalarType::U32)]),
                    }
                }
            }
        };
        self.finish_quotient(q, xw, d, rem, wt);
    }

    fn signed(&mut self, x: Operand, d: i128, rem: bool) {
        let (n, ty) = (self.n, self.ty);
        if d == 1 || d == -1 {
            if rem {
                self.constant(0);
            } else if d == 1 {
                self.typed(Opcode::MOV, &[], ty, &[x]);
            } else {
                self.typed(Opcode::NEG, &[], ty, &[x]);
            }
            return;
        }
        let ad = d.unsigned_abs();
        let w = work_width(n);
        let (wt, wu) = (int_type(w, true), int_type(w, false));
        let xw = self.widen(x, wt);
        if ad.is_power_of_two() {
            // Round toward zero: add 2^k − 1 to negative dividends before the arithmetic shift.
            let k = ad.trailing_zeros();
            let sign_bits = if k == 1 { xw.clone() } else { self.typed(Opcode::SHR, &[], wt, &[xw.clone(), imm((w - 1) as u128, ScalarType::U32)]) };
            let bias = self.typed(Opcode::SHR, &[], wu, &[sign_bits, imm((w - k) as u128, ScalarType::U32)]);
            let t = self.typed(Opcode::ADD, &[], wt, &[xw.clone(), bias]);
            let value = if rem {
                let bt = bit_type(w);
                let multiple = self.typed(Opcode::AND, &[], bt, &[t, imm(ad.wrapping_neg(), bt)]);
                self.typed(Opcode::SUB, &[], wt, &[xw, multiple])
            } else {
                let q = self.typed(Opcode::SHR, &[], wt, &[t, imm(k as u128, ScalarType::U32)]);
                if d < 0 { self.typed(Opcode::NEG, &[], wt, &[q]) } else { q }
            };
            self.narrow(value, wt);
            return;
        }
        // A negative divisor: q = trunc(x / d) = trunc(−x / |d|), computed with the multiplier −m,
        // so the magnitudes to divide reach 2^(n−1) on the positive side.
        let half = 1u128 << (n - 1);
        let (pos, neg) = if d > 0 { (half - 1, half) } else { (half, half - 1) };
        let Some(mg) = magic(ad, pos, neg, w).filter(|m| m.m >> w == 0) else { return self.b.fail("no magic number".into()) };
        let whalf = 1u128 << (w - 1);
        let wmod = |v: u128| v & bits_mask(w);
        let t = if d > 0 {
            // mul.hi.s by m read as signed: m − 2^w when m >= 2^(w−1), then add x back.
            let t = self.typed(Opcode::MUL, &[Mod::HI], wt, &[xw.clone(), imm(mg.m, wt)]);
            if mg.m >= whalf { self.typed(Opcode::ADD, &[], wt, &[t, xw.clone()]) } else { t }
        } else {
            // mul.hi.s by −m; when −m is below −2^(w−1), by 2^w − m, then subtract x.
            let t = self.typed(Opcode::MUL, &[Mod::HI], wt, &[xw.clone(), imm(wmod(mg.m.wrapping_neg()), wt)]);
            if mg.m > whalf { self.typed(Opcode::SUB, &[], wt, &[t, xw.clone()]) } else { t }
        };
        let s = mg.p - w;
        let t = if s > 0 { self.typed(Opcode::SHR, &[], wt, &[t, imm(s as u128, ScalarType::U32)]) } else { t };
        // floor → toward zero: add 1 to a negative quotient.
        let sign = self.typed(Opcode::SHR, &[], wu, &[t.clone(), imm((w - 1) as u128, ScalarType::U32)]);
        let q = self.typed(Opcode::ADD, &[], wt, &[t, sign]);
        self.finish_quotient(q, xw, d as u128, rem, wt);
    }

    /// `mul.hi(x, m) >> (p − w)`.
    fn mul_hi_shift(&mut self, x: Operand, mg: Magic, w: u32, wt: ScalarType) -> Operand {
        let q = self.typed(Opcode::MUL, &[Mod::HI], wt, &[x, imm(mg.m, wt)]);
        let s = mg.p - w;
        if s == 0 {
            return q;
        }
        self.typed(Opcode::SHR, &[], wt, &[q, imm(s as u128, ScalarType::U32)])
    }

    /// The quotient `q` (at the work width `wt`), or the remainder `x − q·d`,
    /// narrowed to the instruction's type.
    fn finish_quotient(&mut self, q: Operand, xw: Operand, d: u128, rem: bool, wt: ScalarType) {
        let value = if rem { self.typed(Opcode::MAD, &[Mod::LO], wt, &[q, imm(d.wrapping_neg(), wt), xw]) } else { q };
        self.narrow(value, wt);
    }

    /// `x` at the work width `wt` (sign- or zero-extended by `cvt`).
    fn widen(&mut self, x: Operand, wt: ScalarType) -> Operand {
        if wt.bits() == self.n {
            return x;
        }
        self.op(Opcode::CVT, &[type_mod(wt), type_mod(self.ty)], &[x])
    }

    /// A value at the work width `wt` truncated to the instruction's type.
    fn narrow(&mut self, value: Operand, wt: ScalarType) {
        if wt.bits() != self.n {
            self.op(Opcode::CVT, &[type_mod(self.ty), type_mod(wt)], &[value]);
        }
    }
}
