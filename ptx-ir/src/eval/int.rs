//! Semantics of the int family (see `mod.rs`): integer arithmetic (PTX ISA
//! 8.7 §9.7.1) and extended-precision arithmetic (§9.7.2).
//!
//! `add`, `sub`, `mul`, `mad`, `div`, `abs`, `neg`, `min` and `max` also have
//! floating-point forms: an instruction with a floating-point type gives
//! `None` here and goes to `float.rs`.
//!
//! Readings of the manual worth knowing:
//!
//! - Integer arithmetic wraps at the type's width (`add.s32` too); `.sat`
//!   (`add`/`sub` `.s32`, `mad.hi.sat.s32`, `mad24.hi.sat.s32`) clamps the
//!   exact sum to `MININT..MAXINT`.
//! - `abs`/`neg` of `MININT` give `MININT` (two's complement wrap).
//! - `div`/`rem` by zero, and `div` of `MININT` by `-1` (the quotient does not
//!   fit), are [`Quality::Unspecified`](super::Quality::Unspecified). Signed
//!   `div` rounds toward zero and `rem` takes the sign of the dividend (C's
//!   rules: nvcc compiles C `/` and `%` to these instructions; the manual
//!   calls `rem` of negative numbers "machine-dependent").
//! - `mul24`/`mad24` multiply the low 24 bits of `a` and `b`, sign-extended
//!   for `.s32`, zero-extended for `.u32` ("24-bit integer values held in
//!   32-bit source registers"; CUDA's `__mul24`: "the high order 8 bits are
//!   ignored").
//! - `mul.wide`/`mad.wide` exist "only for 16- and 32-bit integer types": the
//!   64-bit forms the tables keep are `Unsupported`.
//! - `bfe`/`bfi` on 64 bits with a position or length operand >= 256:
//!   the manual masks both to 8 bits, the hardware (ZLUDA's tests on NVIDIA
//!   GPUs: "NVIDIA docs are incorrect. In 64 bit `bfe` both `pos` and `len`
//!   parameters use whole 32 bit number") uses the whole operand; the two
//!   disagree there, so those inputs are `Unsupported`. Below 256 they agree.
//! - `fns` with `base > 31` (undefined behavior) is `Unspecified`.
//!
//! The carry flag. `carry_in`/`carry_out` is the hardware's single carry
//! bit: `add.cc`, `addc.cc`, `mad.cc`, `madc.cc` write the carry out of the
//! addition; `sub.cc` and `subc.cc` compute `a + ~b + CF` and write its carry
//! out, which is 1 when there is **no** borrow. The manual describes
//! subtraction with a borrow flag (`subc`: `d = a - (b + CC.CF)`, borrow-out
//! written to CC.CF); for chains of `sub.cc`/`subc` alone both readings give
//! the same register values (the flag is just stored inverted). They differ
//! only when an `addc`/`madc` reads a flag written by `sub.cc`/`subc` or the
//! reverse; there this follows the hardware (SASS `IADD3`/`IADD3.X` share one
//! carry predicate; ZLUDA's `carry_set_all` test: `sub.cc 0,0; addc 0,0` gives
//! 1 on NVIDIA GPUs).

use super::bits::{mask, sext, signed, trunc};
use super::{arity, Eval, EvalError, EvalResult, Val};
use crate::ir::Instruction;
use crate::isa::{Mod, Opcode, ScalarType, TypeClass};
use smallvec::smallvec;

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[
    Opcode::ADD,
    Opcode::SUB,
    Opcode::MUL,
    Opcode::MAD,
    Opcode::MUL24,
    Opcode::MAD24,
    Opcode::SAD,
    Opcode::DIV,
    Opcode::REM,
    Opcode::ABS,
    Opcode::NEG,
    Opcode::MIN,
    Opcode::MAX,
    Opcode::POPC,
    Opcode::CLZ,
    Opcode::BFIND,
    Opcode::FNS,
    Opcode::BREV,
    Opcode::BFE,
    Opcode::BFI,
    Opcode::SZEXT,
    Opcode::BMSK,
    Opcode::DP4A,
    Opcode::DP2A,
    Opcode::ADDC,
    Opcode::SUBC,
    Opcode::MADC,
];

/// Evaluates `ins` if it belongs to this family.
pub fn eval(ins: &Instruction, srcs: &[u128], carry_in: bool) -> Option<EvalResult> {
    if !OPCODES.contains(&ins.opcode) {
        return None;
    }
    let types = ins.types();
    if types.iter().any(|t| t.class() == TypeClass::Float) {
        return None;
    }
    Some(eval_int(ins, &types, srcs, carry_in))
}

fn unsupported(ins: &Instruction, why: &str) -> EvalError {
    EvalError::Unsupported(format!("`{}`: {why}", ins.opcode.name()))
}

fn exact(v: u128) -> EvalResult {
    Ok(Eval::exact(v))
}

fn with_carry(v: u128, carry: Option<bool>) -> EvalResult {
    Ok(Eval { dests: smallvec![Val::exact(v)], carry_out: carry })
}

fn unspecified() -> EvalResult {
    Ok(Eval::one(Val::unspecified()))
}

/// The low `n` bits (n <= 64) as a signed or unsigned integer.
fn int(v: u128, n: u32, s: bool) -> i128 {
    if s {
        sext(v, n)
    } else {
        trunc(v, n) as i128
    }
}

/// `v` clamped to the signed `n`-bit range, as bits.
fn sat_signed(v: i128, n: u32) -> u128 {
    let lo = -(1i128 << (n - 1));
    let hi = (1i128 << (n - 1)) - 1;
    trunc(v.clamp(lo, hi) as u128, n)
}

/// The exact 2n-bit product of the low `n` bits (n <= 64) of `a` and `b`,
/// as two's complement bits.
fn product(a: u128, b: u128, n: u32, s: bool) -> u128 {
    if s {
        // |a*b| <= 2^126: no overflow.
        (sext(a, n) * sext(b, n)) as u128
    } else {
        // (2^64-1)^2 < 2^128: no overflow.
        trunc(a, n) * trunc(b, n)
    }
}

/// Applies `f` to the two 16-bit lanes of `a` and `b`.
fn lanes16(a: u128, b: u128, f: impl Fn(u128, u128) -> u128) -> u128 {
    let lo = f(a & 0xffff, b & 0xffff) & 0xffff;
    let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff) & 0xffff;
    lo | (hi << 16)
}

/// Byte `i` of `v`, sign- or zero-extended.
fn byte(v: u128, i: u32, s: bool) -> i128 {
    int(v >> (8 * i), 8, s)
}

/// Half-word `i` of `v`, sign- or zero-extended.
fn half(v: u128, i: u32, s: bool) -> i128 {
    int(v >> (16 * i), 16, s)
}

fn eval_int(ins: &Instruction, types: &[ScalarType], srcs: &[u128], cf: bool) -> EvalResult {
    use ScalarType as T;
    let op = ins.opcode;
    let Some(&ty) = types.first() else {
        return Err(unsupported(ins, "no data type"));
    };
    let n = ty.bits();
    if !matches!(n, 16 | 32 | 64) {
        return Err(unsupported(ins, &format!("type `{}`", ty.text())));
    }
    let s = signed(ty);
    let packed = matches!(ty, T::U16x2 | T::S16x2);
    let cc = ins.has(Mod::CC);
    let sat = ins.has(Mod::SAT);
    let (hi, lo, wide) = (ins.has(Mod::HI), ins.has(Mod::LO), ins.has(Mod::WIDE));
    let src = |k: usize, w: u32| trunc(srcs[k], w);

    match op {
        Opcode::ADD | Opcode::ADDC => {
            arity(srcs, 2, ins)?;
            let (a, b) = (src(0, n), src(1, n));
            if packed {
                if sat || cc || op == Opcode::ADDC {
                    return Err(unsupported(ins, "no .sat/.cc/carry-in form for packed types"));
                }
                return exact(lanes16(a, b, |x, y| x + y));
            }
            if sat {
                if ty != T::S32 || cc || op == Opcode::ADDC {
                    return Err(unsupported(ins, ".sat applies only to add.s32"));
                }
                return exact(sat_signed(sext(a, n) + sext(b, n), n));
            }
            let sum = a + b + (op == Opcode::ADDC && cf) as u128;
            with_carry(trunc(sum, n), cc.then_some(sum >> n != 0))
        }
        Opcode::SUB | Opcode::SUBC => {
            arity(srcs, 2, ins)?;
            let (a, b) = (src(0, n), src(1, n));
            if packed {
                return Err(unsupported(ins, "no packed form"));
            }
            if sat {
                if ty != T::S32 || cc || op == Opcode::SUBC {
                    return Err(unsupported(ins, ".sat applies only to sub.s32"));
                }
                return exact(sat_signed(sext(a, n) - sext(b, n), n));
            }
            // a - b - borrow = a + ~b + (1 - borrow); the flag holds 1 - borrow
            // (see the module comment); sub.cc has no borrow in.
            let carry_in = if op == Opcode::SUBC { cf } else { true };
            let sum = a + (!b & mask(n)) + carry_in as u128;
            with_carry(trunc(sum, n), cc.then_some(sum >> n != 0))
        }
        Opcode::MUL => {
            arity(srcs, 2, ins)?;
            if packed {
                return Err(unsupported(ins, "no packed form"));
            }
            let p = product(src(0, n), src(1, n), n, s);
            if wide {
                if n == 64 {
                    return Err(unsupported(ins, ".wide is supported only for 16- and 32-bit integer types"));
                }
                exact(trunc(p, 2 * n))
            } else if hi {
                exact(trunc(p >> n, n))
            } else if lo {
                exact(trunc(p, n))
            } else {
                Err(unsupported(ins, "needs .hi, .lo or .wide"))
            }
        }
        Opcode::MAD | Opcode::MADC => {
            arity(srcs, 3, ins)?;
            if packed {
                return Err(unsupported(ins, "no packed form"));
            }
            let p = product(src(0, n), src(1, n), n, s);
            let cin = (op == Opcode::MADC && cf) as u128;
            if wide {
                if n == 64 {
                    return Err(unsupported(ins, ".wide is supported only for 16- and 32-bit integer types"));
                }
                if sat || op == Opcode::MADC {
                    return Err(unsupported(ins, "no such .wide form"));
                }
                let w = 2 * n;
                let sum = trunc(p, w) + src(2, w) + cin;
                return with_carry(trunc(sum, w), cc.then_some(sum >> w != 0));
            }
            let part = if hi {
                trunc(p >> n, n)
            } else if lo {
                trunc(p, n)
            } else {
                return Err(unsupported(ins, "the manual defines only the .hi and .lo variants"));
            };
            let c = src(2, n);
            if sat {
                if !(hi && ty == T::S32 && !cc && op == Opcode::MAD) {
                    return Err(unsupported(ins, ".sat applies only to mad.hi.s32"));
                }
                return exact(sat_signed(sext(part, n) + sext(c, n), n));
            }
            let sum = part + c + cin;
            with_carry(trunc(sum, n), cc.then_some(sum >> n != 0))
        }
        Opcode::MUL24 | Opcode::MAD24 => {
            if !matches!(ty, T::U32 | T::S32) {
                return Err(unsupported(ins, "only .u32 and .s32"));
            }
            arity(srcs, if op == Opcode::MUL24 { 2 } else { 3 }, ins)?;
            // The 48-bit product of the two 24-bit values (fits in 48 signed bits).
            let p = (int(srcs[0], 24, s) * int(srcs[1], 24, s)) as u128;
            let part = if hi {
                trunc(p >> 16, 32)
            } else if lo {
                trunc(p, 32)
            } else {
                return Err(unsupported(ins, "needs .hi or .lo"));
            };
            if op == Opcode::MUL24 {
                return exact(part);
            }
            let c = src(2, 32);
            if sat {
                if !(hi && ty == T::S32) {
                    return Err(unsupported(ins, ".sat applies only to mad24.hi.s32"));
                }
                return exact(sat_signed(sext(part, 32) + sext(c, 32), 32));
            }
            exact(trunc(part + c, 32))
        }
        Opcode::SAD => {
            arity(srcs, 3, ins)?;
            if packed {
                return Err(unsupported(ins, "no packed form"));
            }
            let (x, y) = (int(srcs[0], n, s), int(srcs[1], n, s));
            let diff = if x < y { y - x } else { x - y };
            exact(trunc((diff as u128).wrapping_add(src(2, n)), n))
        }
        Opcode::DIV | Opcode::REM => {
            arity(srcs, 2, ins)?;
            if packed {
                return Err(unsupported(ins, "no packed form"));
            }
            let (x, y) = (int(srcs[0], n, s), int(srcs[1], n, s));
            if y == 0 {
                // "Division by zero yields an unspecified, machine-specific value."
                return unspecified();
            }
            if op == Opcode::DIV {
                let q = x / y;
                if s && q > (1i128 << (n - 1)) - 1 {
                    // MININT / -1: the quotient does not fit.
                    return unspecified();
                }
                exact(trunc(q as u128, n))
            } else {
                exact(trunc((x % y) as u128, n))
            }
        }
        Opcode::ABS | Opcode::NEG => {
            arity(srcs, 1, ins)?;
            if !s || packed {
                return Err(unsupported(ins, "only for signed integers"));
            }
            let x = sext(srcs[0], n);
            let r = if op == Opcode::ABS { x.abs() } else { -x };
            exact(trunc(r as u128, n))
        }
        Opcode::MIN | Opcode::MAX => {
            arity(srcs, 2, ins)?;
            let relu = ins.has(Mod::RELU);
            if relu && !matches!(ty, T::S32 | T::S16x2) {
                return Err(unsupported(ins, ".relu applies only to .s32 and .s16x2"));
            }
            let pick = |x: u128, y: u128, w: u32| -> u128 {
                let (xi, yi) = (int(x, w, s), int(y, w, s));
                let r = if op == Opcode::MIN { xi.min(yi) } else { xi.max(yi) };
                let r = if relu && r < 0 { 0 } else { r };
                trunc(r as u128, w)
            };
            let (a, b) = (src(0, n), src(1, n));
            if packed {
                exact(lanes16(a, b, |x, y| pick(x, y, 16)))
            } else {
                exact(pick(a, b, n))
            }
        }
        Opcode::POPC => {
            arity(srcs, 1, ins)?;
            exact(src(0, n).count_ones() as u128)
        }
        Opcode::CLZ => {
            arity(srcs, 1, ins)?;
            exact((src(0, n).leading_zeros() - (128 - n)) as u128)
        }
        Opcode::BREV => {
            arity(srcs, 1, ins)?;
            exact(src(0, n).reverse_bits() >> (128 - n))
        }
        Opcode::BFIND => {
            arity(srcs, 1, ins)?;
            let msb = n - 1;
            let mut x = src(0, n);
            if s && (x >> msb) & 1 == 1 {
                x = !x & mask(n);
            }
            let d = if x == 0 { u32::MAX } else { 127 - x.leading_zeros() };
            let d = if ins.has(Mod::SHIFTAMT) && d != u32::MAX { msb - d } else { d };
            exact(d as u128)
        }
        Opcode::FNS => {
            arity(srcs, 3, ins)?;
            let m = src(0, 32);
            let base = src(1, 32);
            let offset = sext(srcs[2], 32);
            if base > 31 {
                // "Operand base must be <= 31, otherwise behavior is undefined."
                return unspecified();
            }
            let bit = |p: i128| (m >> p) & 1 == 1;
            let mut d = 0xffff_ffffu128;
            if offset == 0 {
                if bit(base as i128) {
                    d = base;
                }
            } else {
                let mut pos = base as i128;
                let mut count = offset.abs() - 1;
                let inc = offset.signum();
                while (0..32).contains(&pos) {
                    if bit(pos) {
                        if count == 0 {
                            d = pos as u128;
                            break;
                        }
                        count -= 1;
                    }
                    pos += inc;
                }
            }
            exact(d)
        }
        Opcode::BFE => {
            arity(srcs, 3, ins)?;
            let (a, b, c) = (src(0, n), src(1, 32), src(2, 32));
            if n == 64 && (b > 0xff || c > 0xff) {
                return Err(unsupported(ins, "64-bit bfe with a position or length >= 256: the manual masks them to 8 bits, the hardware uses the whole operand"));
            }
            let (pos, len) = ((b & 0xff) as u32, (c & 0xff) as u32);
            let msb = n - 1;
            let sbit = s && len != 0 && (a >> (pos + len - 1).min(msb)) & 1 == 1;
            // Bits taken from `a`; the rest is the sign bit.
            let taken = if pos > msb { 0 } else { len.min(n - pos) };
            let field = if taken == 0 { 0 } else { (a >> pos) & mask(taken) };
            let fill = if sbit { mask(n) & !mask(taken) } else { 0 };
            exact(field | fill)
        }
        Opcode::BFI => {
            arity(srcs, 4, ins)?;
            let (a, b, c, d) = (src(0, n), src(1, n), src(2, 32), src(3, 32));
            if n == 64 && (c > 0xff || d > 0xff) {
                return Err(unsupported(ins, "64-bit bfi with a position or length >= 256: the manual masks them to 8 bits, the hardware uses the whole operand"));
            }
            let (pos, len) = ((c & 0xff) as u32, (d & 0xff) as u32);
            let taken = if pos > n - 1 { 0 } else { len.min(n - pos) };
            if taken == 0 {
                return exact(b);
            }
            let m = mask(taken) << pos;
            exact(trunc((b & !m) | ((a << pos) & m), n))
        }
        Opcode::SZEXT => {
            arity(srcs, 2, ins)?;
            let clamp = match (ins.has(Mod::CLAMP), ins.has(Mod::WRAP)) {
                (true, false) => true,
                (false, true) => false,
                _ => return Err(unsupported(ins, "needs .clamp or .wrap")),
            };
            let (a, b) = (src(0, 32) as u32, src(1, 32) as u32);
            let b1 = b & 0x1f;
            let too_large = b >= 32 && clamp;
            let m = if too_large { 0 } else { u32::MAX << b1 };
            let sign_pos = b1.wrapping_sub(1) & 0x1f;
            let sign_bit = !(b1 == 0 || too_large || ty != T::S32) && (a >> sign_pos) & 1 == 1;
            exact(((a & !m) | if sign_bit { m } else { 0 }) as u128)
        }
        Opcode::BMSK => {
            arity(srcs, 2, ins)?;
            let clamp = match (ins.has(Mod::CLAMP), ins.has(Mod::WRAP)) {
                (true, false) => true,
                (false, true) => false,
                _ => return Err(unsupported(ins, "needs .clamp or .wrap")),
            };
            let (a, b) = (src(0, 32) as u32, src(1, 32) as u32);
            let a1 = a & 0x1f;
            let mut mask0 = u32::MAX << a1;
            let b1 = b & 0x1f;
            let sum = a1 + b1;
            // (~0) << sum for sum >= 32 is always replaced below.
            let mut mask1 = if sum >= 32 { 0 } else { u32::MAX << sum };
            let sum_overflow = sum >= 32;
            let mut pos_overflow = false;
            let mut width_overflow = false;
            if clamp {
                if a >= 32 {
                    pos_overflow = true;
                    mask0 = 0;
                }
                if b >= 32 {
                    width_overflow = true;
                }
            }
            if sum_overflow || pos_overflow || width_overflow {
                mask1 = 0;
            } else if b1 == 0 {
                mask1 = u32::MAX;
            }
            exact((mask0 & !mask1) as u128)
        }
        Opcode::DP4A | Opcode::DP2A => {
            arity(srcs, 3, ins)?;
            let (Some(&at), Some(&bt)) = (types.first(), types.get(1)) else {
                return Err(unsupported(ins, "needs .atype and .btype"));
            };
            let (sa, sb) = (signed(at), signed(bt));
            let (a, b) = (src(0, 32), src(1, 32));
            let mut d = src(2, 32) as i128;
            if op == Opcode::DP4A {
                for i in 0..4 {
                    d += byte(a, i, sa) * byte(b, i, sb);
                }
            } else {
                let sel = match (hi, lo) {
                    (false, true) => 0,
                    (true, false) => 2,
                    _ => return Err(unsupported(ins, "needs .lo or .hi")),
                };
                for i in 0..2 {
                    d += half(a, i, sa) * byte(b, sel + i, sb);
                }
            }
            exact(trunc(d as u128, 32))
        }
        _ => Err(unsupported(ins, "not an integer instruction")),
    }
}
