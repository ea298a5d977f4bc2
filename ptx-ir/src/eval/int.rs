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
//!   disagree there, so those inputs give an `Unspecified` result (a
//!   position or length known only at run time makes only the elements that
//!   meet such values unspecified). Below 256 they agree.
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
                // The manual masks them to 8 bits, the hardware uses the whole operand.
                return unspecified();
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
                // The manual masks them to 8 bits, the hardware uses the whole operand.
                return unspecified();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Quality;
    use crate::ir::{Item, Operand, RegId};

    /// Parses one instruction (registers are declared, types are not checked).
    fn ins(text: &str) -> Instruction {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n.reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.reg .b16 %h<9>;\n{text}\nret;\n}}\n"
        );
        let m = crate::parse::parse_str(&src).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        for item in &m.items {
            if let Item::Func(f) = item {
                return f.instructions().next().expect("an instruction").clone();
            }
        }
        panic!("no function")
    }

    /// Evaluates through the top-level dispatcher.
    fn run_on(i: &Instruction, srcs: &[u128], cf: bool) -> EvalResult {
        crate::eval::eval(i, srcs, cf)
    }

    /// An exact single result without carry.
    fn v(text: &str, srcs: &[u128]) -> u128 {
        vi(&ins(text), srcs)
    }

    fn vi(i: &Instruction, srcs: &[u128]) -> u128 {
        let e = run_on(i, srcs, false).unwrap_or_else(|e| panic!("{i:?} {srcs:x?}: {e}"));
        assert_eq!(e.dests.len(), 1);
        assert!(e.dests[0].is_exact(), "{i:?} {srcs:x?}: {:?}", e.dests[0]);
        assert_eq!(e.carry_out, None, "{i:?} writes no carry");
        e.dests[0].bits
    }

    /// An exact result and the carry flag written, with carry in `cf`.
    fn vc(i: &Instruction, srcs: &[u128], cf: bool) -> (u128, Option<bool>) {
        let e = run_on(i, srcs, cf).unwrap_or_else(|e| panic!("{i:?} {srcs:x?}: {e}"));
        assert_eq!(e.dests.len(), 1);
        assert!(e.dests[0].is_exact());
        (e.dests[0].bits, e.carry_out)
    }

    fn is_unspecified(text: &str, srcs: &[u128]) -> bool {
        let e = run_on(&ins(text), srcs, false).unwrap();
        e.dests[0].quality == Quality::Unspecified
    }

    fn is_unsupported(text: &str, srcs: &[u128]) -> bool {
        matches!(run_on(&ins(text), srcs, false), Err(EvalError::Unsupported(_)))
    }

    // Values with a bias toward the edges (the generator is `test_rng`).
    use crate::eval::test_rng::Rng;
    impl Rng {
        /// A value of `bits` bits: uniform, or near 0 / MAX / MIN / MAXINT.
        fn val(&mut self, bits: u32) -> u128 {
            let r = self.next();
            let m = mask(bits);
            let x = match r % 8 {
                0 => (r >> 8) as u128 % 4,
                1 => m - (r >> 8) as u128 % 4,
                2 => (1u128 << (bits - 1)) + (r >> 8) as u128 % 3,
                3 => (1u128 << (bits - 1)) - 1 - (r >> 8) as u128 % 3,
                _ => self.next() as u128,
            };
            x & m
        }
    }

    const INT_TYPES: [(&str, u32, bool); 6] =
        [("u16", 16, false), ("u32", 32, false), ("u64", 64, false), ("s16", 16, true), ("s32", 32, true), ("s64", 64, true)];

    fn reg(bits: u32) -> &'static str {
        match bits {
            16 => "%h",
            32 => "%r",
            _ => "%rd",
        }
    }

    // ---- add / sub --------------------------------------------------------

    #[test]
    fn add_edges() {
        assert_eq!(v("add.u16 %h1, %h2, %h3;", &[0xffff, 1]), 0);
        assert_eq!(v("add.s16 %h1, %h2, %h3;", &[0x7fff, 1]), 0x8000);
        assert_eq!(v("add.u32 %r1, %r2, %r3;", &[0xffff_ffff, 0xffff_ffff]), 0xffff_fffe);
        // Signed overflow wraps.
        assert_eq!(v("add.s32 %r1, %r2, %r3;", &[0x7fff_ffff, 1]), 0x8000_0000);
        assert_eq!(v("add.s64 %rd1, %rd2, %rd3;", &[0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]), 0x7fff_ffff_ffff_ffff);
        assert_eq!(v("add.u64 %rd1, %rd2, %rd3;", &[u64::MAX as u128, 1]), 0);
        // .sat clamps to MININT..MAXINT.
        assert_eq!(v("add.sat.s32 %r1, %r2, %r3;", &[0x7fff_ffff, 1]), 0x7fff_ffff);
        assert_eq!(v("add.sat.s32 %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]), 0x8000_0000);
        assert_eq!(v("add.sat.s32 %r1, %r2, %r3;", &[0x8000_0000, 0x7fff_ffff]), 0xffff_ffff);
        assert_eq!(v("add.sat.s32 %r1, %r2, %r3;", &[5, 0xffff_fffd]), 2);
        // Packed: each half-word wraps on its own, no carry between halves.
        assert_eq!(v("add.u16x2 %r1, %r2, %r3;", &[0xffff_ffff, 0x0001_0001]), 0);
        assert_eq!(v("add.s16x2 %r1, %r2, %r3;", &[0x7fff_0001, 0x0001_ffff]), 0x8000_0000);
        assert_eq!(v("add.u16x2 %r1, %r2, %r3;", &[0x1234_5678, 0x1111_2222]), 0x2345_789a);
        // Sources wider than the type are truncated to it.
        assert_eq!(v("add.u16 %h1, %h2, %h3;", &[0x1_0001, 0x2_0002]), 3);
    }

    #[test]
    fn sub_edges() {
        assert_eq!(v("sub.u16 %h1, %h2, %h3;", &[0, 1]), 0xffff);
        assert_eq!(v("sub.u32 %r1, %r2, %r3;", &[0, 1]), 0xffff_ffff);
        assert_eq!(v("sub.s32 %r1, %r2, %r3;", &[0x8000_0000, 1]), 0x7fff_ffff);
        assert_eq!(v("sub.s64 %rd1, %rd2, %rd3;", &[0, 0x8000_0000_0000_0000]), 0x8000_0000_0000_0000);
        assert_eq!(v("sub.sat.s32 %r1, %r2, %r3;", &[0x8000_0000, 1]), 0x8000_0000);
        assert_eq!(v("sub.sat.s32 %r1, %r2, %r3;", &[0x7fff_ffff, 0xffff_ffff]), 0x7fff_ffff);
        assert_eq!(v("sub.sat.s32 %r1, %r2, %r3;", &[0, 0x8000_0000]), 0x7fff_ffff);
        assert_eq!(v("sub.sat.s32 %r1, %r2, %r3;", &[0xffff_ffff, 0x8000_0000]), 0x7fff_ffff);
        assert_eq!(v("sub.sat.s32 %r1, %r2, %r3;", &[3, 5]), 0xffff_fffe);
    }

    #[test]
    fn add_sub_match_host_arithmetic() {
        let mut rng = Rng(1);
        for (t, bits, _) in INT_TYPES {
            let r = reg(bits);
            let add = ins(&format!("add.{t} {r}1, {r}2, {r}3;"));
            let sub = ins(&format!("sub.{t} {r}1, {r}2, {r}3;"));
            for _ in 0..2000 {
                let (a, b) = (rng.val(bits), rng.val(bits));
                let m = mask(bits);
                assert_eq!(vi(&add, &[a, b]), a.wrapping_add(b) & m);
                assert_eq!(vi(&sub, &[a, b]), a.wrapping_sub(b) & m);
            }
        }
        let adds = ins("add.sat.s32 %r1, %r2, %r3;");
        let subs = ins("sub.sat.s32 %r1, %r2, %r3;");
        let addx = ins("add.s16x2 %r1, %r2, %r3;");
        for _ in 0..5000 {
            let (a, b) = (rng.val(32), rng.val(32));
            assert_eq!(vi(&adds, &[a, b]), (a as u32 as i32).saturating_add(b as u32 as i32) as u32 as u128);
            assert_eq!(vi(&subs, &[a, b]), (a as u32 as i32).saturating_sub(b as u32 as i32) as u32 as u128);
            let lo = (a as u16).wrapping_add(b as u16) as u128;
            let hi = ((a >> 16) as u16).wrapping_add((b >> 16) as u16) as u128;
            assert_eq!(vi(&addx, &[a, b]), lo | hi << 16);
        }
    }

    // ---- carry ----------------------------------------------------------

    #[test]
    fn carry_flags() {
        let addcc = ins("add.cc.u32 %r1, %r2, %r3;");
        assert_eq!(vc(&addcc, &[0xffff_ffff, 1], false), (0, Some(true)));
        assert_eq!(vc(&addcc, &[0xffff_fffe, 1], true), (0xffff_ffff, Some(false)));
        // Signed and unsigned behave the same.
        let addccs = ins("add.cc.s32 %r1, %r2, %r3;");
        assert_eq!(vc(&addccs, &[0xffff_ffff, 1], false), (0, Some(true)));
        assert_eq!(vc(&addccs, &[0x7fff_ffff, 1], false), (0x8000_0000, Some(false)));
        let addcc64 = ins("add.cc.u64 %rd1, %rd2, %rd3;");
        assert_eq!(vc(&addcc64, &[u64::MAX as u128, u64::MAX as u128], false), (u64::MAX as u128 - 1, Some(true)));
        // addc reads the flag; writes it only with .cc.
        let addc = ins("addc.u32 %r1, %r2, %r3;");
        assert_eq!(vc(&addc, &[1, 2], true), (4, None));
        assert_eq!(vc(&addc, &[1, 2], false), (3, None));
        assert_eq!(vc(&addc, &[0xffff_ffff, 0], true), (0, None));
        let addccc = ins("addc.cc.u32 %r1, %r2, %r3;");
        assert_eq!(vc(&addccc, &[0xffff_ffff, 0], true), (0, Some(true)));
        assert_eq!(vc(&addccc, &[0xffff_ffff, 0xffff_ffff], true), (0xffff_ffff, Some(true)));
        assert_eq!(vc(&addccc, &[0xffff_fffe, 0], true), (0xffff_ffff, Some(false)));
        // Plain add does not touch the flag.
        assert_eq!(vc(&ins("add.u32 %r1, %r2, %r3;"), &[0xffff_ffff, 1], true), (0, None));
        // sub.cc: the flag is "no borrow" (see the module comment).
        let subcc = ins("sub.cc.u32 %r1, %r2, %r3;");
        assert_eq!(vc(&subcc, &[0, 1], false), (0xffff_ffff, Some(false)));
        assert_eq!(vc(&subcc, &[1, 1], false), (0, Some(true)));
        assert_eq!(vc(&subcc, &[5, 3], true), (2, Some(true)));
        // subc: d = a - (b + borrow), borrow = !flag.
        let subc = ins("subc.u32 %r1, %r2, %r3;");
        assert_eq!(vc(&subc, &[5, 3], true), (2, None));
        assert_eq!(vc(&subc, &[5, 3], false), (1, None));
        assert_eq!(vc(&subc, &[0, 0], false), (0xffff_ffff, None));
        let subccc = ins("subc.cc.u32 %r1, %r2, %r3;");
        assert_eq!(vc(&subccc, &[0, 0], false), (0xffff_ffff, Some(false)));
        assert_eq!(vc(&subccc, &[0, 0], true), (0, Some(true)));
        assert_eq!(vc(&subccc, &[3, 3], false), (0xffff_ffff, Some(false)));
        assert_eq!(vc(&subccc, &[4, 3], false), (0, Some(true)));
        let subccc64 = ins("subc.cc.s64 %rd1, %rd2, %rd3;");
        assert_eq!(vc(&subccc64, &[0, u64::MAX as u128], true), (1, Some(false)));
    }

    /// ZLUDA's subc_cc / addc_cc / carry_set_all tests (expected values from
    /// NVIDIA GPUs), replayed as chains.
    #[test]
    fn carry_chains_as_on_hardware() {
        let subcc = ins("sub.cc.s32 %r1, %r2, %r3;");
        let subccc = ins("subc.cc.s32 %r1, %r2, %r3;");
        let subc = ins("subc.s32 %r1, %r2, %r3;");
        let (d1, f) = vc(&subcc, &[2_147_483_649, 2_147_483_650], false);
        let (d2, f) = vc(&subccc, &[d1, 4_294_967_294], f.unwrap());
        let (d3, _) = vc(&subc, &[d2, 4_294_967_294], f.unwrap());
        assert_eq!([d1, d2, d3], [4_294_967_295, 0, 2]);
        let addcc = ins("add.cc.s32 %r1, %r2, %r3;");
        let addccc = ins("addc.cc.s32 %r1, %r2, %r3;");
        let addc = ins("addc.s32 %r1, %r2, %r3;");
        let (d1, f) = vc(&addcc, &[2_147_483_650, 2_147_483_649], false);
        let (d2, f) = vc(&addccc, &[d1, 4_294_967_294], f.unwrap());
        let (d3, _) = vc(&addc, &[d2, 4_294_967_294], f.unwrap());
        assert_eq!([d1, d2, d3], [3, 2, 1]);
        // carry_set_all: a flag written by one instruction, read by addc and subc.
        let addc_u = ins("addc.u32 %r1, %r2, %r3;");
        let subc_u = ins("subc.u32 %r1, %r2, %r3;");
        let cases: [(&str, [u128; 3], u128, u128); 6] = [
            ("sub.cc.u32 %r1, %r2, %r3;", [0, 0, 0], 1, 0),
            ("sub.cc.u32 %r1, %r2, %r3;", [0, 1, 0], 0, 0xffff_ffff),
            ("add.cc.u32 %r1, %r2, %r3;", [0, 0, 0], 0, 0xffff_ffff),
            ("add.cc.u32 %r1, %r2, %r3;", [0xffff_ffff, 0xffff_ffff, 0], 1, 0),
            ("mad.lo.cc.u32 %r1, %r2, %r3, %r4;", [0, 0, 0], 0, 0xffff_ffff),
            ("mad.lo.cc.u32 %r1, %r2, %r3, %r4;", [1, 0xffff_ffff, 0xffff_ffff], 1, 0),
        ];
        for (text, srcs, want_add, want_sub) in cases {
            let (_, f) = vc(&ins(text), &srcs, false);
            let f = f.unwrap();
            assert_eq!(vc(&addc_u, &[0, 0], f).0, want_add, "{text}");
            assert_eq!(vc(&subc_u, &[0, 0], f).0, want_sub, "{text}");
        }
    }

    /// Multi-word addition and subtraction against u128 arithmetic.
    #[test]
    fn multiword_add_sub() {
        let mut rng = Rng(2);
        let addcc = ins("add.cc.u32 %r1, %r2, %r3;");
        let addccc = ins("addc.cc.u32 %r1, %r2, %r3;");
        let addc = ins("addc.u32 %r1, %r2, %r3;");
        let subcc = ins("sub.cc.u32 %r1, %r2, %r3;");
        let subccc = ins("subc.cc.u32 %r1, %r2, %r3;");
        let subc = ins("subc.u32 %r1, %r2, %r3;");
        let addcc64 = ins("add.cc.u64 %rd1, %rd2, %rd3;");
        let addc64 = ins("addc.cc.u64 %rd1, %rd2, %rd3;");
        let subcc64 = ins("sub.cc.s64 %rd1, %rd2, %rd3;");
        let subc64 = ins("subc.cc.s64 %rd1, %rd2, %rd3;");
        for _ in 0..2000 {
            let x = rng.val(64) | rng.val(64) << 64;
            let y = rng.val(64) | rng.val(64) << 64;
            let limb = |v: u128, k: u32| (v >> (32 * k)) & 0xffff_ffff;
            for (first, mid, last, want) in
                [(&addcc, &addccc, &addc, x.wrapping_add(y)), (&subcc, &subccc, &subc, x.wrapping_sub(y))]
            {
                let (d0, f) = vc(first, &[limb(x, 0), limb(y, 0)], rng.next() & 1 == 1);
                let (d1, f) = vc(mid, &[limb(x, 1), limb(y, 1)], f.unwrap());
                let (d2, f) = vc(mid, &[limb(x, 2), limb(y, 2)], f.unwrap());
                let (d3, f) = vc(last, &[limb(x, 3), limb(y, 3)], f.unwrap());
                assert_eq!(f, None);
                assert_eq!(d0 | d1 << 32 | d2 << 64 | d3 << 96, want);
            }
            // 64-bit limbs: the final flag is the carry of the 128-bit sum,
            // and "no borrow" of the 128-bit difference.
            let (lo, f) = vc(&addcc64, &[x & mask(64), y & mask(64)], false);
            let (hi, f) = vc(&addc64, &[x >> 64, y >> 64], f.unwrap());
            assert_eq!(lo | hi << 64, x.wrapping_add(y));
            assert_eq!(f, Some(x.checked_add(y).is_none()));
            let (lo, f) = vc(&subcc64, &[x & mask(64), y & mask(64)], false);
            let (hi, f) = vc(&subc64, &[x >> 64, y >> 64], f.unwrap());
            assert_eq!(lo | hi << 64, x.wrapping_sub(y));
            assert_eq!(f, Some(x >= y));
        }
    }

    /// The manual's madc example: [r3,r2,r1,r0] = [r5,r4] * [r7,r6].
    #[test]
    fn extended_multiply_example() {
        let mullo = ins("mul.lo.u32 %r1, %r2, %r3;");
        let mulhi = ins("mul.hi.u32 %r1, %r2, %r3;");
        let madlocc = ins("mad.lo.cc.u32 %r1, %r2, %r3, %r4;");
        let madchi = ins("madc.hi.u32 %r1, %r2, %r3, %r4;");
        let madchicc = ins("madc.hi.cc.u32 %r1, %r2, %r3, %r4;");
        let addc = ins("addc.u32 %r1, %r2, %r3;");
        let mut rng = Rng(3);
        for _ in 0..3000 {
            let (x, y) = (rng.val(64), rng.val(64));
            let (r4, r5, r6, r7) = (x & 0xffff_ffff, x >> 32, y & 0xffff_ffff, y >> 32);
            let r0 = vi(&mullo, &[r4, r6]);
            let r1 = vi(&mulhi, &[r4, r6]);
            let (r1, f) = vc(&madlocc, &[r5, r6, r1], false);
            let (r2, _) = vc(&madchi, &[r5, r6, 0], f.unwrap());
            let (r1, f) = vc(&madlocc, &[r4, r7, r1], false);
            let (r2, f) = vc(&madchicc, &[r4, r7, r2], f.unwrap());
            let (r3, _) = vc(&addc, &[0, 0], f.unwrap());
            let (r2, f) = vc(&madlocc, &[r5, r7, r2], false);
            let (r3, _) = vc(&madchi, &[r5, r7, r3], f.unwrap());
            assert_eq!(r0 | r1 << 32 | r2 << 64 | r3 << 96, x * y, "{x:x} * {y:x}");
        }
    }

    // ---- mul / mad ------------------------------------------------------

    #[test]
    fn mul_edges() {
        assert_eq!(v("mul.lo.u16 %h1, %h2, %h3;", &[0xffff, 0xffff]), 1);
        assert_eq!(v("mul.hi.u16 %h1, %h2, %h3;", &[0xffff, 0xffff]), 0xfffe);
        assert_eq!(v("mul.hi.s16 %h1, %h2, %h3;", &[0xffff, 0xffff]), 0);
        assert_eq!(v("mul.hi.s16 %h1, %h2, %h3;", &[0x8000, 0x8000]), 0x4000);
        assert_eq!(v("mul.wide.s16 %r1, %h2, %h3;", &[0x8000, 0x7fff]), 0xc000_8000);
        assert_eq!(v("mul.wide.u16 %r1, %h2, %h3;", &[0xffff, 0xffff]), 0xfffe_0001);
        assert_eq!(v("mul.hi.u32 %r1, %r2, %r3;", &[0xffff_ffff, 0xffff_ffff]), 0xffff_fffe);
        assert_eq!(v("mul.hi.s32 %r1, %r2, %r3;", &[0xffff_ffff, 0xffff_ffff]), 0);
        assert_eq!(v("mul.hi.s32 %r1, %r2, %r3;", &[0x8000_0000, 0x8000_0000]), 0x4000_0000);
        assert_eq!(v("mul.hi.s32 %r1, %r2, %r3;", &[0xffff_ffff, 1]), 0xffff_ffff);
        assert_eq!(v("mul.lo.s32 %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]), 0x8000_0000);
        // ZLUDA's mul_wide: 16777216 * -268435456.
        assert_eq!(v("mul.wide.s32 %rd1, %r2, %r3;", &[0x0100_0000, 0xf000_0000]), 0xfff0_0000_0000_0000);
        assert_eq!(v("mul.wide.u32 %rd1, %r2, %r3;", &[0xffff_ffff, 0xffff_ffff]), 0xffff_fffe_0000_0001);
        assert_eq!(v("mul.hi.u64 %rd1, %rd2, %rd3;", &[u64::MAX as u128, u64::MAX as u128]), u64::MAX as u128 - 1);
        assert_eq!(v("mul.lo.u64 %rd1, %rd2, %rd3;", &[u64::MAX as u128, u64::MAX as u128]), 1);
        assert_eq!(v("mul.hi.s64 %rd1, %rd2, %rd3;", &[1 << 63, 1 << 63]), 1 << 62);
        assert_eq!(v("mul.hi.s64 %rd1, %rd2, %rd3;", &[u64::MAX as u128, 2]), u64::MAX as u128);
        // .wide exists only for 16- and 32-bit types.
        assert!(is_unsupported("mul.wide.u64 %rd1, %rd2, %rd3;", &[1, 2]));
        assert!(is_unsupported("mad.wide.s64 %rd1, %rd2, %rd3, %rd4;", &[1, 2, 3]));
    }

    #[test]
    fn mul_mad_match_host_arithmetic() {
        let mut rng = Rng(4);
        for (t, bits, s) in INT_TYPES {
            let r = reg(bits);
            let lo = ins(&format!("mul.lo.{t} {r}1, {r}2, {r}3;"));
            let hi = ins(&format!("mul.hi.{t} {r}1, {r}2, {r}3;"));
            let madlo = ins(&format!("mad.lo.{t} {r}1, {r}2, {r}3, {r}4;"));
            let madhi = ins(&format!("mad.hi.{t} {r}1, {r}2, {r}3, {r}4;"));
            let w = reg(2 * bits.min(32));
            let wide = (bits < 64).then(|| ins(&format!("mul.wide.{t} {w}1, {r}2, {r}3;")));
            let madwide = (bits < 64).then(|| ins(&format!("mad.wide.{t} {w}1, {r}2, {r}3, {w}4;")));
            let m = mask(bits);
            for _ in 0..2000 {
                let (a, b, c) = (rng.val(bits), rng.val(bits), rng.val(bits));
                let c2 = rng.val(2 * bits.min(32));
                // Reference: the exact product as i128 / u128 (host arithmetic).
                let full: u128 = if s {
                    let (x, y) = (sext(a, bits), sext(b, bits));
                    x.wrapping_mul(y) as u128
                } else {
                    a.wrapping_mul(b)
                };
                assert_eq!(vi(&lo, &[a, b]), full & m);
                assert_eq!(vi(&hi, &[a, b]), (full >> bits) & m);
                assert_eq!(vi(&madlo, &[a, b, c]), full.wrapping_add(c) & m);
                assert_eq!(vi(&madhi, &[a, b, c]), (full >> bits).wrapping_add(c) & m);
                if let (Some(wide), Some(madwide)) = (&wide, &madwide) {
                    assert_eq!(vi(wide, &[a, b]), full & mask(2 * bits));
                    assert_eq!(vi(madwide, &[a, b, c2]), full.wrapping_add(c2) & mask(2 * bits));
                }
            }
        }
    }

    #[test]
    fn mad_forms() {
        // ZLUDA's mad_s32: 0xffffff * 0xffffff + 1 in .lo, .hi, .wide.
        assert_eq!(v("mad.lo.s32 %r1, %r2, %r3, %r4;", &[0xff_ffff, 0xff_ffff, 1]), 0xfe00_0002);
        assert_eq!(v("mad.hi.s32 %r1, %r2, %r3, %r4;", &[0xff_ffff, 0xff_ffff, 1]), 0x1_0000);
        assert_eq!(v("mad.wide.s32 %rd1, %r2, %r3, %rd4;", &[0xff_ffff, 0xff_ffff, 1]), 0xffff_fe00_0002);
        // mad.wide: c and d are twice as wide; the sum wraps at 2n bits.
        assert_eq!(v("mad.wide.u16 %r1, %h2, %h3, %r4;", &[0xffff, 0xffff, 0x1_fffe]), 0xffff_ffff);
        assert_eq!(v("mad.wide.u16 %r1, %h2, %h3, %r4;", &[0xffff, 0xffff, 0x1_ffff]), 0);
        assert_eq!(v("mad.wide.s16 %r1, %h2, %h3, %r4;", &[0xffff, 1, 1]), 0);
        // mad.hi.sat.s32: the addition saturates.
        let sat = ins("mad.hi.sat.s32 %r1, %r2, %r3, %r4;");
        assert_eq!(vi(&sat, &[0x8000_0000, 0x8000_0000, 0x7fff_ffff]), 0x7fff_ffff); // 2^30 + MAX
        assert_eq!(vi(&sat, &[0x8000_0000, 0x7fff_ffff, 0x8000_0000]), 0x8000_0000); // -(2^30-0.5) + MIN
        assert_eq!(vi(&sat, &[0x8000_0000, 0x8000_0000, 0x1000]), 0x4000_1000);
        assert_eq!(vi(&sat, &[0xffff_ffff, 1, 5]), 4); // hi(-1) = -1
        // ZLUDA's mad_hi_cc and madc_cc.
        let (d, _) = vc(&ins("mad.hi.cc.s32 %r1, %r2, %r3, %r4;"), &[0x2622_3377, 0x7077_7766, 0x6066_6633], false);
        assert_eq!(d, 0x7127_2866);
        let madhicc = ins("mad.hi.cc.u32 %r1, %r2, %r3, %r4;");
        assert_eq!(vc(&madhicc, &[65536, 65536, 4_294_967_294], false), (0xffff_ffff, Some(false)));
        assert_eq!(vc(&madhicc, &[65536, 65536, 4_294_967_295], false), (0, Some(true)));
        let (d1, f) = vc(&ins("mad.lo.cc.s32 %r1, %r2, %r3, %r4;"), &[65521, 2_147_549_199, 0x1000], false);
        let (d2, _) = vc(&ins("madc.hi.s32 %r1, %r2, %r3, %r4;"), &[65521, 2_147_549_199, 3], f.unwrap());
        assert_eq!([d1, d2], [2_147_487_519, 4_294_934_539]);
        // madc: + carry in; .cc: carry out of the whole addition.
        let madclo = ins("madc.lo.cc.u64 %rd1, %rd2, %rd3, %rd4;");
        assert_eq!(vc(&madclo, &[1, u64::MAX as u128, 0], true), (0, Some(true)));
        assert_eq!(vc(&madclo, &[1, u64::MAX as u128, 0], false), (u64::MAX as u128, Some(false)));
        assert_eq!(vc(&madclo, &[2, u64::MAX as u128, u64::MAX as u128], true), (u64::MAX as u128 - 1, Some(true)));
        let madchi = ins("madc.hi.s64 %rd1, %rd2, %rd3, %rd4;");
        assert_eq!(vc(&madchi, &[u64::MAX as u128, 1, 1], true), (1, None)); // hi(-1) + 1 + 1
        // mad.cc/madc without .hi/.lo: no semantics in the manual.
        assert!(is_unsupported("madc.u32 %r1, %r2, %r3, %r4;", &[1, 2, 3]));
        assert!(is_unsupported("mad.cc.u32 %r1, %r2, %r3, %r4;", &[1, 2, 3]));
    }

    #[test]
    fn mul24_mad24() {
        // Low 24 bits, zero- or sign-extended; the high 8 bits are ignored.
        assert_eq!(v("mul24.lo.u32 %r1, %r2, %r3;", &[0xff00_0002, 0xab00_0003]), 6);
        assert_eq!(v("mul24.lo.u32 %r1, %r2, %r3;", &[0x00ff_ffff, 1]), 0x00ff_ffff);
        assert_eq!(v("mul24.lo.s32 %r1, %r2, %r3;", &[0x00ff_ffff, 1]), 0xffff_ffff);
        assert_eq!(v("mul24.lo.s32 %r1, %r2, %r3;", &[0x1280_0000, 2]), 0xff00_0000);
        assert_eq!(v("mul24.hi.u32 %r1, %r2, %r3;", &[0xff_ffff, 0xff_ffff]), 0xffff_fe00);
        assert_eq!(v("mul24.hi.s32 %r1, %r2, %r3;", &[0xff_ffff, 0xff_ffff]), 0);
        assert_eq!(v("mul24.hi.s32 %r1, %r2, %r3;", &[0x80_0000, 0x80_0000]), 0x4000_0000);
        assert_eq!(v("mul24.hi.s32 %r1, %r2, %r3;", &[0x80_0000, 0x7f_ffff]), 0xc000_0080);
        assert_eq!(v("mul24.lo.u32 %r1, %r2, %r3;", &[0xff_ffff, 0xff_ffff]), 0xfe00_0001);
        assert_eq!(v("mad24.lo.u32 %r1, %r2, %r3, %r4;", &[0xff_ffff, 0xff_ffff, 0x0200_0000]), 1);
        assert_eq!(v("mad24.hi.u32 %r1, %r2, %r3, %r4;", &[0xff_ffff, 0xff_ffff, 0x200]), 0); // 0xffff_fe00 + 0x200 wraps
        assert_eq!(v("mad24.lo.s32 %r1, %r2, %r3, %r4;", &[0xff_ffff, 5, 5]), 0);
        let sat = ins("mad24.hi.sat.s32 %r1, %r2, %r3, %r4;");
        assert_eq!(vi(&sat, &[0x80_0000, 0x80_0000, 0x4000_0000]), 0x7fff_ffff);
        assert_eq!(vi(&sat, &[0x80_0000, 0x80_0000, 0x3fff_ffff]), 0x7fff_ffff);
        assert_eq!(vi(&sat, &[0x80_0000, 0x7f_ffff, 0x8000_0000]), 0x8000_0000);
        assert_eq!(vi(&sat, &[0x80_0000, 0x80_0000, 0xffff_ffff]), 0x3fff_ffff);
        // Against host arithmetic on 24-bit values.
        let mut rng = Rng(5);
        let ulo = ins("mul24.lo.u32 %r1, %r2, %r3;");
        let uhi = ins("mul24.hi.u32 %r1, %r2, %r3;");
        let slo = ins("mul24.lo.s32 %r1, %r2, %r3;");
        let shi = ins("mul24.hi.s32 %r1, %r2, %r3;");
        for _ in 0..3000 {
            let (a, b) = (rng.val(32), rng.val(32));
            let (ua, ub) = ((a & 0xff_ffff) as u64, (b & 0xff_ffff) as u64);
            assert_eq!(vi(&ulo, &[a, b]), (ua * ub) as u32 as u128);
            assert_eq!(vi(&uhi, &[a, b]), ((ua * ub) >> 16) as u32 as u128);
            let (sa, sb) = (((a as u32) << 8) as i32 as i64 >> 8, ((b as u32) << 8) as i32 as i64 >> 8);
            assert_eq!(vi(&slo, &[a, b]), (sa * sb) as u32 as u128);
            assert_eq!(vi(&shi, &[a, b]), ((sa * sb) >> 16) as u32 as u128);
        }
    }

    // ---- sad, div, rem, abs, neg, min, max ------------------------------

    #[test]
    fn sad() {
        assert_eq!(v("sad.u32 %r1, %r2, %r3, %r4;", &[1, 3, 10]), 12);
        assert_eq!(v("sad.u32 %r1, %r2, %r3, %r4;", &[3, 1, 10]), 12);
        assert_eq!(v("sad.u32 %r1, %r2, %r3, %r4;", &[0, 0xffff_ffff, 1]), 0);
        // Signed: |MIN - MAX| = 2^32 - 1, then the sum wraps.
        assert_eq!(v("sad.s32 %r1, %r2, %r3, %r4;", &[0x8000_0000, 0x7fff_ffff, 0]), 0xffff_ffff);
        assert_eq!(v("sad.s32 %r1, %r2, %r3, %r4;", &[0x8000_0000, 0x7fff_ffff, 1]), 0);
        assert_eq!(v("sad.s32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 1, 0]), 2);
        assert_eq!(v("sad.u32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 1, 0]), 0xffff_fffe);
        assert_eq!(v("sad.s16 %h1, %h2, %h3, %h4;", &[0x8000, 0x7fff, 2]), 1);
        assert_eq!(v("sad.u16 %h1, %h2, %h3, %h4;", &[5, 0xffff, 0]), 0xfffa);
        assert_eq!(v("sad.s64 %rd1, %rd2, %rd3, %rd4;", &[u64::MAX as u128, 1 << 63, 0]), (1 << 63) - 1);
        assert_eq!(v("sad.u64 %rd1, %rd2, %rd3, %rd4;", &[0, u64::MAX as u128, 5]), 4);
    }

    #[test]
    fn div_rem() {
        assert_eq!(v("div.u32 %r1, %r2, %r3;", &[0xffff_ffff, 2]), 0x7fff_ffff);
        assert_eq!(v("div.s32 %r1, %r2, %r3;", &[0xffff_fff9, 2]), 0xffff_fffd); // -7/2 = -3
        assert_eq!(v("rem.s32 %r1, %r2, %r3;", &[0xffff_fff9, 2]), 0xffff_ffff); // -7%2 = -1
        assert_eq!(v("rem.s32 %r1, %r2, %r3;", &[7, 0xffff_fffe]), 1); // 7%-2 = 1
        assert_eq!(v("div.s32 %r1, %r2, %r3;", &[7, 0xffff_fffe]), 0xffff_fffd);
        assert_eq!(v("rem.u32 %r1, %r2, %r3;", &[0xffff_fff9, 2]), 1);
        assert_eq!(v("rem.s32 %r1, %r2, %r3;", &[21692, 13]), 8); // ZLUDA's rem
        assert_eq!(v("rem.s32 %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]), 0);
        assert_eq!(v("div.s16 %h1, %h2, %h3;", &[0x8000, 2]), 0xc000);
        assert_eq!(v("div.u64 %rd1, %rd2, %rd3;", &[u64::MAX as u128, 1]), u64::MAX as u128);
        assert_eq!(v("div.s64 %rd1, %rd2, %rd3;", &[1 << 63, 1]), 1 << 63);
        // Division by zero and the overflowing quotient: unspecified.
        for t in ["div.u32 %r1, %r2, %r3;", "rem.u32 %r1, %r2, %r3;", "div.s32 %r1, %r2, %r3;", "rem.s32 %r1, %r2, %r3;"] {
            assert!(is_unspecified(t, &[5, 0]), "{t}");
            assert!(is_unspecified(t, &[0, 0]), "{t}");
        }
        assert!(is_unspecified("div.u16 %h1, %h2, %h3;", &[5, 0x1_0000]));
        assert!(is_unspecified("div.s32 %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]));
        assert!(is_unspecified("div.s16 %h1, %h2, %h3;", &[0x8000, 0xffff]));
        assert!(is_unspecified("div.s64 %rd1, %rd2, %rd3;", &[1 << 63, u64::MAX as u128]));
        // Random values against the host's (truncating) division.
        let mut rng = Rng(6);
        for (t, bits, s) in INT_TYPES {
            let r = reg(bits);
            let div = ins(&format!("div.{t} {r}1, {r}2, {r}3;"));
            let rem = ins(&format!("rem.{t} {r}1, {r}2, {r}3;"));
            for _ in 0..2000 {
                let (a, b) = (rng.val(bits), rng.val(bits));
                let (x, y) = (int(a, bits, s), int(b, bits, s));
                if y == 0 || (s && x == -(1i128 << (bits - 1)) && y == -1) {
                    continue;
                }
                let (q, m) = if s {
                    let (x, y) = (x as i64, y as i64);
                    (x.checked_div(y).unwrap() as u64 as u128, x.checked_rem(y).unwrap() as u64 as u128)
                } else {
                    let (x, y) = (x as u64, y as u64);
                    ((x / y) as u128, (x % y) as u128)
                };
                assert_eq!(vi(&div, &[a, b]), q & mask(bits));
                assert_eq!(vi(&rem, &[a, b]), m & mask(bits));
            }
        }
    }

    #[test]
    fn abs_neg() {
        assert_eq!(v("abs.s32 %r1, %r2;", &[0xffff_ff7a]), 134);
        assert_eq!(v("abs.s32 %r1, %r2;", &[0x8000_0000]), 0x8000_0000); // ZLUDA's abs
        assert_eq!(v("abs.s32 %r1, %r2;", &[0]), 0);
        assert_eq!(v("abs.s32 %r1, %r2;", &[0x7fff_ffff]), 0x7fff_ffff);
        assert_eq!(v("abs.s16 %h1, %h2;", &[0x8000]), 0x8000);
        assert_eq!(v("abs.s16 %h1, %h2;", &[0xffff]), 1);
        assert_eq!(v("abs.s64 %rd1, %rd2;", &[u64::MAX as u128]), 1);
        assert_eq!(v("abs.s64 %rd1, %rd2;", &[1 << 63]), 1 << 63);
        assert_eq!(v("neg.s32 %r1, %r2;", &[181]), (-181i32) as u32 as u128);
        assert_eq!(v("neg.s32 %r1, %r2;", &[0x8000_0000]), 0x8000_0000);
        assert_eq!(v("neg.s32 %r1, %r2;", &[0]), 0);
        assert_eq!(v("neg.s16 %h1, %h2;", &[1]), 0xffff);
        assert_eq!(v("neg.s64 %rd1, %rd2;", &[1 << 63]), 1 << 63);
        assert_eq!(v("neg.s64 %rd1, %rd2;", &[u64::MAX as u128]), 1);
        let mut rng = Rng(7);
        let (abs, neg) = (ins("abs.s32 %r1, %r2;"), ins("neg.s32 %r1, %r2;"));
        for _ in 0..2000 {
            let a = rng.val(32);
            assert_eq!(vi(&abs, &[a]), (a as u32 as i32).wrapping_abs() as u32 as u128);
            assert_eq!(vi(&neg, &[a]), (a as u32 as i32).wrapping_neg() as u32 as u128);
        }
    }

    #[test]
    fn min_max() {
        // Signed and unsigned differ.
        assert_eq!(v("min.u32 %r1, %r2, %r3;", &[0xffff_ffff, 1]), 1);
        assert_eq!(v("min.s32 %r1, %r2, %r3;", &[0xffff_ffff, 1]), 0xffff_ffff);
        assert_eq!(v("max.u32 %r1, %r2, %r3;", &[0xffff_ffff, 1]), 0xffff_ffff);
        assert_eq!(v("max.s32 %r1, %r2, %r3;", &[0xffff_ffff, 1]), 1);
        assert_eq!(v("min.s16 %h1, %h2, %h3;", &[0x8000, 0x7fff]), 0x8000);
        assert_eq!(v("max.u16 %h1, %h2, %h3;", &[0x8000, 0x7fff]), 0x8000);
        assert_eq!(v("min.s64 %rd1, %rd2, %rd3;", &[1 << 63, 0]), 1 << 63);
        assert_eq!(v("max.u64 %rd1, %rd2, %rd3;", &[1 << 63, 0]), 1 << 63);
        assert_eq!(v("min.s32 %r1, %r2, %r3;", &[555, 444]), 444);
        assert_eq!(v("max.s32 %r1, %r2, %r3;", &[555, 0xffff_ffff]), 555);
        // .relu: a negative result becomes 0.
        assert_eq!(v("max.relu.s32 %r1, %r2, %r3;", &[0xffff_fffe, 0xffff_ffff]), 0);
        assert_eq!(v("max.relu.s32 %r1, %r2, %r3;", &[0xffff_fffe, 3]), 3);
        assert_eq!(v("min.relu.s32 %r1, %r2, %r3;", &[0x8000_0000, 3]), 0);
        assert_eq!(v("min.relu.s32 %r1, %r2, %r3;", &[7, 3]), 3);
        // Packed: per half-word.
        assert_eq!(v("min.u16x2 %r1, %r2, %r3;", &[0x8000_0001, 0x0001_8000]), 0x0001_0001);
        assert_eq!(v("max.u16x2 %r1, %r2, %r3;", &[0x8000_0001, 0x0001_8000]), 0x8000_8000);
        assert_eq!(v("min.s16x2 %r1, %r2, %r3;", &[0x8000_0001, 0x0001_8000]), 0x8000_8000);
        assert_eq!(v("max.s16x2 %r1, %r2, %r3;", &[0x8000_0001, 0x0001_8000]), 0x0001_0001);
        assert_eq!(v("max.relu.s16x2 %r1, %r2, %r3;", &[0x8000_7fff, 0x0001_8000]), 0x0001_7fff);
        assert_eq!(v("min.relu.s16x2 %r1, %r2, %r3;", &[0x8000_7fff, 0x0001_8000]), 0);
        assert_eq!(v("max.relu.s16x2 %r1, %r2, %r3;", &[0xffff_fffe, 0xfffe_ffff]), 0);
        let mut rng = Rng(8);
        for (t, bits, s) in INT_TYPES {
            let r = reg(bits);
            let min = ins(&format!("min.{t} {r}1, {r}2, {r}3;"));
            let max = ins(&format!("max.{t} {r}1, {r}2, {r}3;"));
            for _ in 0..1000 {
                let (a, b) = (rng.val(bits), rng.val(bits));
                let (x, y) = (int(a, bits, s), int(b, bits, s));
                assert_eq!(vi(&min, &[a, b]), if x < y { a } else { b });
                assert_eq!(vi(&max, &[a, b]), if x > y { a } else { b });
            }
        }
    }

    // ---- bit operations --------------------------------------------------

    #[test]
    fn popc_clz_brev() {
        assert_eq!(v("popc.b32 %r1, %r2;", &[0]), 0);
        assert_eq!(v("popc.b32 %r1, %r2;", &[0xffff_ffff]), 32);
        assert_eq!(v("popc.b64 %r1, %rd2;", &[u64::MAX as u128]), 64);
        assert_eq!(v("popc.b32 %r1, %r2;", &[0b10111100_10010010_01001001_10001010]), 14);
        assert_eq!(v("clz.b32 %r1, %r2;", &[0]), 32);
        assert_eq!(v("clz.b64 %r1, %rd2;", &[0]), 64);
        assert_eq!(v("clz.b32 %r1, %r2;", &[1]), 31);
        assert_eq!(v("clz.b64 %r1, %rd2;", &[1]), 63);
        assert_eq!(v("clz.b32 %r1, %r2;", &[0x8000_0000]), 0);
        assert_eq!(v("clz.b32 %r1, %r2;", &[0b00000101_00101101_00010011_10101011]), 5);
        assert_eq!(v("brev.b32 %r1, %r2;", &[1]), 0x8000_0000);
        assert_eq!(v("brev.b64 %rd1, %rd2;", &[1]), 1 << 63);
        assert_eq!(
            v("brev.b32 %r1, %r2;", &[0b11000111_01011100_10101110_11111011]),
            0b11011111_01110101_00111010_11100011
        );
        let mut rng = Rng(9);
        let (p32, p64) = (ins("popc.b32 %r1, %r2;"), ins("popc.b64 %r1, %rd2;"));
        let (c32, c64) = (ins("clz.b32 %r1, %r2;"), ins("clz.b64 %r1, %rd2;"));
        let (b32, b64) = (ins("brev.b32 %r1, %r2;"), ins("brev.b64 %rd1, %rd2;"));
        for _ in 0..2000 {
            let (a, b) = (rng.val(32), rng.val(64));
            // The manual's loops.
            let popc = |mut x: u128| {
                let mut d = 0;
                while x != 0 {
                    d += x & 1;
                    x >>= 1;
                }
                d
            };
            let clz = |mut x: u128, max: u128| {
                let top = 1u128 << (max - 1);
                let mut d = 0;
                while d < max && x & top == 0 {
                    d += 1;
                    x <<= 1;
                }
                d
            };
            let brev = |x: u128, msb: u32| (0..=msb).fold(0u128, |d, i| d | ((x >> (msb - i)) & 1) << i);
            assert_eq!(vi(&p32, &[a]), popc(a));
            assert_eq!(vi(&p64, &[b]), popc(b));
            assert_eq!(vi(&c32, &[a]), clz(a, 32));
            assert_eq!(vi(&c64, &[b]), clz(b, 64));
            assert_eq!(vi(&b32, &[a]), brev(a, 31));
            assert_eq!(vi(&b64, &[b]), brev(b, 63));
        }
    }

    /// The manual's bfind loop.
    fn bfind_ref(a: u128, bits: u32, s: bool, shiftamt: bool) -> u128 {
        let msb = bits - 1;
        let mut a = a;
        if s && a & (1 << msb) != 0 {
            a = !a & mask(bits);
        }
        let mut d = 0xffff_ffffu128;
        for i in (0..=msb).rev() {
            if a & (1 << i) != 0 {
                d = i as u128;
                break;
            }
        }
        if shiftamt && d != 0xffff_ffff {
            d = msb as u128 - d;
        }
        d
    }

    #[test]
    fn bfind() {
        let u = ins("bfind.u32 %r1, %r2;");
        assert_eq!([vi(&u, &[0]), vi(&u, &[1]), vi(&u, &[0x64eb_0414])], [0xffff_ffff, 0, 30]);
        let sa = ins("bfind.shiftamt.u32 %r1, %r2;");
        assert_eq!([vi(&sa, &[0]), vi(&sa, &[1]), vi(&sa, &[0x19be_a67d])], [0xffff_ffff, 31, 3]);
        assert_eq!(v("bfind.s32 %r1, %r2;", &[0xffff_ffff]), 0xffff_ffff);
        assert_eq!(v("bfind.s32 %r1, %r2;", &[0x8000_0000]), 30);
        assert_eq!(v("bfind.s32 %r1, %r2;", &[0x7fff_ffff]), 30);
        assert_eq!(v("bfind.u32 %r1, %r2;", &[0x8000_0000]), 31);
        assert_eq!(v("bfind.s64 %r1, %rd2;", &[u64::MAX as u128 - 1]), 0);
        assert_eq!(v("bfind.u64 %r1, %rd2;", &[1 << 63]), 63);
        assert_eq!(v("bfind.shiftamt.s64 %r1, %rd2;", &[1]), 63);
        assert_eq!(v("bfind.shiftamt.s64 %r1, %rd2;", &[u64::MAX as u128]), 0xffff_ffff);
        let mut rng = Rng(10);
        for (t, bits, s) in [("u32", 32, false), ("s32", 32, true), ("u64", 64, false), ("s64", 64, true)] {
            let r = reg(bits);
            let plain = ins(&format!("bfind.{t} %r1, {r}2;"));
            let shift = ins(&format!("bfind.shiftamt.{t} %r1, {r}2;"));
            for _ in 0..1000 {
                let a = rng.val(bits) >> (rng.next() % bits as u64);
                assert_eq!(vi(&plain, &[a]), bfind_ref(a, bits, s, false));
                assert_eq!(vi(&shift, &[a]), bfind_ref(a, bits, s, true));
            }
        }
    }

    #[test]
    fn fns() {
        let f = ins("fns.b32 %r1, %r2, %r3, %r4;");
        let m = 0xaaaa_aaaa;
        // The manual's examples.
        assert_eq!(vi(&f, &[m, 3, 1]), 3);
        assert_eq!(vi(&f, &[m, 3, 0xffff_ffff]), 3);
        assert_eq!(vi(&f, &[m, 2, 1]), 3);
        assert_eq!(vi(&f, &[m, 2, 0xffff_ffff]), 1);
        // offset 0: the base bit itself, or not found.
        assert_eq!(vi(&f, &[m, 3, 0]), 3);
        assert_eq!(vi(&f, &[m, 2, 0]), 0xffff_ffff);
        assert_eq!(vi(&f, &[m, 1, 16]), 31);
        assert_eq!(vi(&f, &[m, 1, 17]), 0xffff_ffff);
        assert_eq!(vi(&f, &[m, 31, (-16i32) as u32 as u128]), 1);
        assert_eq!(vi(&f, &[m, 31, (-17i32) as u32 as u128]), 0xffff_ffff);
        assert_eq!(vi(&f, &[0, 0, 1]), 0xffff_ffff);
        assert_eq!(vi(&f, &[0xffff_ffff, 0, 0x8000_0000]), 0xffff_ffff);
        assert_eq!(vi(&f, &[0xffff_ffff, 31, 0x7fff_ffff]), 0xffff_ffff);
        // base > 31: undefined.
        let e = run_on(&f, &[m, 32, 1], false).unwrap();
        assert_eq!(e.dests[0].quality, Quality::Unspecified);
        let e = run_on(&f, &[m, 0xffff_ffff, 1], false).unwrap();
        assert_eq!(e.dests[0].quality, Quality::Unspecified);
        // The manual's loop.
        let reference = |mask: u128, base: i64, offset: i64| -> u128 {
            let bit = |p: i64| (mask >> p) & 1 == 1;
            if offset == 0 {
                return if bit(base) { base as u128 } else { 0xffff_ffff };
            }
            let (mut pos, mut count, inc) = (base, offset.abs() - 1, offset.signum());
            while (0..32).contains(&pos) {
                if bit(pos) {
                    if count == 0 {
                        return pos as u128;
                    }
                    count -= 1;
                }
                pos += inc;
            }
            0xffff_ffff
        };
        let mut rng = Rng(11);
        for _ in 0..5000 {
            let mask = rng.val(32);
            let base = rng.next() % 32;
            let offset = (rng.next() % 70) as i64 - 35;
            assert_eq!(vi(&f, &[mask, base as u128, offset as u32 as u128]), reference(mask, base as i64, offset));
        }
    }

    /// The manual's bfe loop.
    fn bfe_ref(a: u128, b: u128, c: u128, bits: u32, s: bool) -> u128 {
        let msb = bits - 1;
        let pos = (b & 0xff) as u32;
        let len = (c & 0xff) as u32;
        let sbit = if !s || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
        let mut d = 0;
        for i in 0..=msb {
            let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
            d |= bit << i;
        }
        d
    }

    /// The manual's bfi loop.
    fn bfi_ref(a: u128, b: u128, c: u128, d: u128, bits: u32) -> u128 {
        let msb = bits - 1;
        let pos = (c & 0xff) as u32;
        let len = (d & 0xff) as u32;
        let mut f = b;
        let mut i = 0;
        while i < len && pos + i <= msb {
            f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
            i += 1;
        }
        f
    }

    #[test]
    fn bfe() {
        assert_eq!(v("bfe.u32 %r1, %r2, %r3, %r4;", &[0b11111000_11000001_00100010_10100000, 16, 8]), 0b11000001);
        assert_eq!(v("bfe.s32 %r1, %r2, %r3, %r4;", &[0xf8c1_22a0, 16, 8]), 0xffff_ffc1);
        assert_eq!(v("bfe.s32 %r1, %r2, %r3, %r4;", &[0xf8c1_22a0, 16, 0]), 0);
        // Field past the msb: the sign bit is a[msb].
        assert_eq!(v("bfe.s32 %r1, %r2, %r3, %r4;", &[0x8000_0000, 28, 8]), 0xffff_fff8);
        assert_eq!(v("bfe.u32 %r1, %r2, %r3, %r4;", &[0x8000_0000, 28, 8]), 0x8);
        // Start past the msb: all sign bit (s), zero (u).
        assert_eq!(v("bfe.s32 %r1, %r2, %r3, %r4;", &[0x8000_0000, 40, 8]), 0xffff_ffff);
        assert_eq!(v("bfe.u32 %r1, %r2, %r3, %r4;", &[0x8000_0000, 40, 8]), 0);
        // Only the low 8 bits of position and length count (32-bit forms).
        assert_eq!(v("bfe.u32 %r1, %r2, %r3, %r4;", &[0xf8c1_22a0, 0x110, 0x8008]), 0xc1);
        assert_eq!(v("bfe.s64 %rd1, %rd2, %r3, %r4;", &[0x8000_0000_0000_0000, 60, 100]), u64::MAX as u128 - 7);
        assert_eq!(v("bfe.u64 %rd1, %rd2, %r3, %r4;", &[0x1234_5678_9abc_def0, 32, 32]), 0x1234_5678);
        assert_eq!(v("bfe.s64 %rd1, %rd2, %r3, %r4;", &[0x1234_5678_9abc_def0, 0, 32]), 0xffff_ffff_9abc_def0);
        assert_eq!(v("bfe.u64 %rd1, %rd2, %r3, %r4;", &[0x1234_5678_9abc_def0, 255, 255]), 0);
        // 64-bit with position or length >= 256: manual and hardware disagree.
        assert!(is_unspecified("bfe.u64 %rd1, %rd2, %r3, %r4;", &[1, 256, 1]));
        assert!(is_unspecified("bfe.s64 %rd1, %rd2, %r3, %r4;", &[1, 0, 0x100]));
        assert!(is_unspecified("bfe.u64 %rd1, %rd2, %r3, %r4;", &[1, 0xffff_ffff, 0xffff_ffff]));
        // The 32-bit forms mask on all GPUs: exact.
        assert_eq!(v("bfe.u32 %r1, %r2, %r3, %r4;", &[0xf0, 0x104, 4]), 0xf);
        let mut rng = Rng(12);
        for (t, bits, s) in [("u32", 32, false), ("s32", 32, true), ("u64", 64, false), ("s64", 64, true)] {
            let r = reg(bits);
            let i = ins(&format!("bfe.{t} {r}1, {r}2, %r3, %r4;"));
            for _ in 0..5000 {
                let a = rng.val(bits);
                let high = if bits == 32 { rng.next() as u128 & 0xffff_ff00 } else { 0 };
                let b = (rng.next() % 80) as u128 | high;
                let c = if rng.next().is_multiple_of(4) { (rng.next() % 256) as u128 } else { (rng.next() % 70) as u128 } | high;
                assert_eq!(vi(&i, &[a, b, c]), bfe_ref(a, b, c, bits, s), "{t} {a:x} {b} {c}");
            }
        }
    }

    #[test]
    fn bfi() {
        assert_eq!(v("bfi.b32 %r1, %r2, %r3, %r4, %r5;", &[0b10, 0b101, 0, 2]), 0b110);
        assert_eq!(v("bfi.b32 %r1, %r2, %r3, %r4, %r5;", &[0xffff_ffff, 0, 4, 8]), 0xff0);
        assert_eq!(v("bfi.b32 %r1, %r2, %r3, %r4, %r5;", &[0xffff_ffff, 0, 28, 8]), 0xf000_0000);
        // Length 0 or start past the msb: b.
        assert_eq!(v("bfi.b32 %r1, %r2, %r3, %r4, %r5;", &[0xffff_ffff, 0x1234, 4, 0]), 0x1234);
        assert_eq!(v("bfi.b32 %r1, %r2, %r3, %r4, %r5;", &[0xffff_ffff, 0x1234, 32, 8]), 0x1234);
        assert_eq!(v("bfi.b32 %r1, %r2, %r3, %r4, %r5;", &[0xffff_ffff, 0x1234, 0x104, 0x204]), 0x12f4);
        assert_eq!(v("bfi.b64 %rd1, %rd2, %rd3, %r4, %r5;", &[0xff, 0, 60, 8]), 0xf000_0000_0000_0000);
        assert_eq!(v("bfi.b64 %rd1, %rd2, %rd3, %r4, %r5;", &[u64::MAX as u128, 0, 0, 255]), u64::MAX as u128);
        assert!(is_unspecified("bfi.b64 %rd1, %rd2, %rd3, %r4, %r5;", &[1, 0, 0x100, 1]));
        assert!(is_unspecified("bfi.b64 %rd1, %rd2, %rd3, %r4, %r5;", &[1, 0, 0, 0x1_0000]));
        let mut rng = Rng(13);
        for (t, bits) in [("b32", 32), ("b64", 64)] {
            let r = reg(bits);
            let i = ins(&format!("bfi.{t} {r}1, {r}2, {r}3, %r4, %r5;"));
            for _ in 0..5000 {
                let (a, b) = (rng.val(bits), rng.val(bits));
                let high = if bits == 32 { rng.next() as u128 & 0xffff_ff00 } else { 0 };
                let c = (rng.next() % 80) as u128 | high;
                let d = if rng.next().is_multiple_of(4) { (rng.next() % 256) as u128 } else { (rng.next() % 70) as u128 } | high;
                assert_eq!(vi(&i, &[a, b, c, d]), bfi_ref(a, b, c, d, bits), "{t} {a:x} {b:x} {c} {d}");
            }
        }
    }

    #[test]
    fn szext() {
        // The manual's example, and its prose: N = 0 gives 0, N >= 32 with
        // .clamp gives a, .wrap uses N mod 32.
        assert_eq!(v("szext.wrap.u32 %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x1234_5680, 40]), 0x1234_5680);
        assert_eq!(v("szext.clamp.u32 %r1, %r2, %r3;", &[0x1234_5680, 32]), 0x1234_5680);
        assert_eq!(v("szext.wrap.s32 %r1, %r2, %r3;", &[0x1234_5680, 40]), 0xffff_ff80);
        assert_eq!(v("szext.wrap.u32 %r1, %r2, %r3;", &[0x1234_5680, 40]), 0x80);
        assert_eq!(v("szext.wrap.u32 %r1, %r2, %r3;", &[0x1234_5680, 32]), 0);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x1234_5680, 8]), 0xffff_ff80);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x1234_5670, 8]), 0x70);
        assert_eq!(v("szext.clamp.u32 %r1, %r2, %r3;", &[0x1234_5680, 8]), 0x80);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x8000_0001, 1]), 0xffff_ffff);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x8000_0000, 31]), 0);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x4000_0000, 31]), 0xc000_0000);
        assert_eq!(v("szext.clamp.s32 %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]), 0x8000_0000);
        // The manual's pseudo-code, literally.
        let reference = |a: u32, b: u32, clamp: bool, s: bool| -> u128 {
            let b1 = b & 0x1f;
            let too_large = b >= 32 && clamp;
            let mask = if too_large { 0 } else { (!0u32) << b1 };
            let sign_pos = (b1.wrapping_sub(1)) & 0x1f;
            let sign_bit = if b1 == 0 || too_large || !s { false } else { (a >> sign_pos) & 1 == 1 };
            ((a & !mask) | if sign_bit { mask } else { 0 }) as u128
        };
        let mut rng = Rng(14);
        for (text, clamp, s) in [("clamp.s32", true, true), ("clamp.u32", true, false), ("wrap.s32", false, true), ("wrap.u32", false, false)] {
            let i = ins(&format!("szext.{text} %r1, %r2, %r3;"));
            for _ in 0..3000 {
                let a = rng.val(32) as u32;
                let b = if rng.next().is_multiple_of(8) { rng.val(32) as u32 } else { (rng.next() % 70) as u32 };
                assert_eq!(vi(&i, &[a as u128, b as u128]), reference(a, b, clamp, s));
            }
        }
    }

    #[test]
    fn bmsk() {
        let (wrap, clamp) = (ins("bmsk.wrap.b32 %r1, %r2, %r3;"), ins("bmsk.clamp.b32 %r1, %r2, %r3;"));
        assert_eq!(vi(&wrap, &[1, 2]), 6); // the manual's example
        assert_eq!(vi(&clamp, &[1, 2]), 6);
        assert_eq!(vi(&clamp, &[0, 32]), 0xffff_ffff);
        assert_eq!(vi(&clamp, &[0, 100]), 0xffff_ffff);
        assert_eq!(vi(&wrap, &[0, 32]), 0);
        assert_eq!(vi(&wrap, &[0, 33]), 1);
        assert_eq!(vi(&clamp, &[4, 0]), 0);
        assert_eq!(vi(&clamp, &[4, 30]), 0xffff_fff0);
        assert_eq!(vi(&clamp, &[32, 4]), 0);
        assert_eq!(vi(&wrap, &[32, 4]), 0xf);
        assert_eq!(vi(&wrap, &[31, 1]), 0x8000_0000);
        assert_eq!(vi(&clamp, &[31, 31]), 0x8000_0000);
        assert_eq!(vi(&clamp, &[0, 31]), 0x7fff_ffff);
        let mut rng = Rng(15);
        for _ in 0..5000 {
            let a = if rng.next().is_multiple_of(4) { rng.val(32) } else { (rng.next() % 40) as u128 };
            let b = if rng.next().is_multiple_of(4) { rng.val(32) } else { (rng.next() % 40) as u128 };
            // The width is clamped to 0..32 (.clamp) or wrapped to 0..31
            // (.wrap); position >= 32 with .clamp gives 0.
            let (pa, wa) = ((a & 0x1f) as u32, (b & 0x1f) as u32);
            let field = |pos: u32, width: u32| ((1u64 << width) - 1) << pos & 0xffff_ffff;
            assert_eq!(vi(&wrap, &[a, b]), field(pa, wa.min(32 - pa)) as u128);
            let want = if a >= 32 { 0 } else { field(a as u32, (b.min(32) as u32).min(32 - a as u32)) };
            assert_eq!(vi(&clamp, &[a, b]), want as u128, "{a} {b}");
        }
    }

    #[test]
    fn dp4a_dp2a() {
        // ZLUDA's dp4a.
        assert_eq!(v("dp4a.s32.s32 %r1, %r2, %r3, %r4;", &[0xde30_32f5, 0x2474_fe15, 0xf51d_8d6c]), 0xf51d_9d19);
        assert_eq!(v("dp4a.u32.u32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0xffff_ffff, 0]), 4 * 255 * 255);
        assert_eq!(v("dp4a.s32.s32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0xffff_ffff, 0]), 4);
        assert_eq!(v("dp4a.u32.s32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0xffff_ffff, 0]), (-1020i32) as u32 as u128);
        assert_eq!(v("dp4a.s32.u32 %r1, %r2, %r3, %r4;", &[0x0000_0080, 0x0000_00ff, 5]), (5 - 128 * 255i32) as u32 as u128);
        assert_eq!(v("dp4a.u32.u32 %r1, %r2, %r3, %r4;", &[0x0403_0201, 0x0101_0101, 0xffff_fff0]), 0xffff_fffa);
        assert_eq!(v("dp4a.s32.s32 %r1, %r2, %r3, %r4;", &[0x8080_8080, 0x8080_8080, 0x7fff_ffff]), 0x8000_ffff);
        assert_eq!(v("dp2a.lo.u32.u32 %r1, %r2, %r3, %r4;", &[0x0002_0001, 0x0403_0201, 0]), 1 + 2 * 2);
        assert_eq!(v("dp2a.hi.u32.u32 %r1, %r2, %r3, %r4;", &[0x0002_0001, 0x0403_0201, 0]), 3 + 2 * 4);
        assert_eq!(v("dp2a.hi.s32.s32 %r1, %r2, %r3, %r4;", &[0xffff_8000, 0x80ff_0000, 1]), (1 + 32768 + 128) as u128);
        assert_eq!(v("dp2a.lo.u32.s32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0x0000_ffff, 0]), (-2 * 65535i32) as u32 as u128);
        assert_eq!(v("dp2a.lo.s32.u32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0x0000_ffff, 0]), (-2 * 255i32) as u32 as u128);
        let mut rng = Rng(16);
        for (ta, tb, sa, sb) in [("u32", "u32", false, false), ("u32", "s32", false, true), ("s32", "u32", true, false), ("s32", "s32", true, true)] {
            let dp4 = ins(&format!("dp4a.{ta}.{tb} %r1, %r2, %r3, %r4;"));
            let lo = ins(&format!("dp2a.lo.{ta}.{tb} %r1, %r2, %r3, %r4;"));
            let hi = ins(&format!("dp2a.hi.{ta}.{tb} %r1, %r2, %r3, %r4;"));
            for _ in 0..2000 {
                let (a, b, c) = (rng.val(32) as u32, rng.val(32) as u32, rng.val(32) as u32);
                let b8 = |x: u32, i: u32, s: bool| if s { (x >> (8 * i)) as u8 as i8 as i64 } else { (x >> (8 * i)) as u8 as i64 };
                let b16 = |x: u32, i: u32, s: bool| if s { (x >> (16 * i)) as u16 as i16 as i64 } else { (x >> (16 * i)) as u16 as i64 };
                let d4 = (0..4).fold(c as i64, |d, i| d + b8(a, i, sa) * b8(b, i, sb));
                let d2lo = (0..2).fold(c as i64, |d, i| d + b16(a, i, sa) * b8(b, i, sb));
                let d2hi = (0..2).fold(c as i64, |d, i| d + b16(a, i, sa) * b8(b, 2 + i, sb));
                let srcs = [a as u128, b as u128, c as u128];
                assert_eq!(vi(&dp4, &srcs), d4 as u32 as u128);
                assert_eq!(vi(&lo, &srcs), d2lo as u32 as u128);
                assert_eq!(vi(&hi, &srcs), d2hi as u32 as u128);
            }
        }
    }

    // ---- dispatch and coverage --------------------------------------------

    #[test]
    fn float_forms_are_left_to_float() {
        for text in [
            "add.f32 %r1, %r2, %r3;",
            "add.rn.ftz.sat.f32 %r1, %r2, %r3;",
            "add.rz.f64 %rd1, %rd2, %rd3;",
            "add.f16 %h1, %h2, %h3;",
            "add.bf16x2 %r1, %r2, %r3;",
            "add.rn.f32.f16 %r1, %h2, %r3;",
            "sub.f64 %rd1, %rd2, %rd3;",
            "mul.rn.f32 %r1, %r2, %r3;",
            "mad.rn.f32 %r1, %r2, %r3, %r4;",
            "div.rn.f64 %rd1, %rd2, %rd3;",
            "div.approx.f32 %r1, %r2, %r3;",
            "abs.f32 %r1, %r2;",
            "neg.bf16 %h1, %h2;",
            "min.f32 %r1, %r2, %r3;",
            "max.NaN.f16x2 %r1, %r2, %r3;",
            "max.f32 %r1, %r2, %r3, %r4;",
        ] {
            assert_eq!(eval(&ins(text), &[0, 0, 0, 0], false), None, "{text}");
        }
        assert_eq!(eval(&ins("and.b32 %r1, %r2, %r3;"), &[0, 0], false), None);
        assert!(eval(&ins("add.s32 %r1, %r2, %r3;"), &[0, 0], false).is_some());
    }

    #[test]
    fn too_few_sources() {
        let e = eval(&ins("add.s32 %r1, %r2, %r3;"), &[1], false).unwrap();
        assert!(matches!(e, Err(EvalError::BadOperands(_))));
        let e = eval(&ins("bfi.b32 %r1, %r2, %r3, %r4, %r5;"), &[1, 2, 3], false).unwrap();
        assert!(matches!(e, Err(EvalError::BadOperands(_))));
    }

    /// Every form of every opcode here, with every combination of modifiers:
    /// integer forms evaluate (or are Unsupported with a reason) on edge
    /// values without panicking; floating-point forms are left alone.
    #[test]
    fn every_form_evaluates() {
        let mut rng = Rng(17);
        let (mut built, mut evaluated) = (0, 0);
        let mut unsupported_forms = std::collections::BTreeSet::new();
        for &op in OPCODES {
            for form in op.forms() {
                // All modifier combinations of the form's slots.
                let mut combos: Vec<Vec<Mod>> = vec![vec![]];
                for slot in form.slots() {
                    let mut choices: Vec<Mod> = slot.allowed().collect();
                    if slot.optional {
                        choices.push(Mod::NONE);
                    }
                    combos = combos
                        .iter()
                        .flat_map(|c| choices.iter().map(move |m| [c.clone(), vec![*m]].concat()))
                        .collect();
                }
                let nops = form.operand_count().0;
                for mods in combos {
                    let mods: Vec<Mod> = mods.into_iter().filter(|m| *m != Mod::NONE).collect();
                    let operands = (0..nops as u32).map(|k| Operand::reg(RegId(k)));
                    let Ok(i) = Instruction::new(op, &mods, operands) else { continue };
                    built += 1;
                    let float = i.types().iter().any(|t| t.class() == TypeClass::Float);
                    let Some(first) = eval(&i, &[0; 4], false) else {
                        assert!(float, "{op:?} {mods:?} was not taken");
                        continue;
                    };
                    assert!(!float, "{op:?} {mods:?} is a float form");
                    for trial in 0..64 {
                        let srcs: Vec<u128> = (0..4).map(|_| rng.val(64)).collect();
                        match eval(&i, &srcs, trial % 2 == 0).unwrap() {
                            Ok(e) => {
                                evaluated += 1;
                                assert_eq!(e.dests.len(), 1);
                                let d = e.dests[0];
                                assert!(d.quality == Quality::Exact || d.quality == Quality::Unspecified);
                                assert!(d.bits <= mask(128), "{op:?} {mods:?}");
                                // The result fits the destination (2n for .wide, 32 for bit counts ...).
                                let n = i.types()[0].bits();
                                let width = if i.has(Mod::WIDE) { 2 * n } else if matches!(op, Opcode::POPC | Opcode::CLZ | Opcode::BFIND | Opcode::DP4A | Opcode::DP2A) { 32 } else { n };
                                assert_eq!(d.bits & !mask(width), 0, "{op:?} {mods:?} {srcs:x?}");
                                assert_eq!(e.carry_out.is_some(), i.has(Mod::CC), "{op:?} {mods:?}");
                            }
                            Err(EvalError::Unsupported(why)) => {
                                unsupported_forms.insert(format!("{op:?} {mods:?}: {why}").split(": 64-bit").next().unwrap().to_string());
                            }
                            Err(e) => panic!("{op:?} {mods:?}: {e}"),
                        }
                    }
                    let _ = first;
                }
            }
        }
        assert!(built > 150, "{built} instructions built");
        assert!(evaluated > 5000);
        // The forms that never evaluate: .wide on 64 bits, mad.cc/madc
        // without .hi/.lo; 64-bit bfe/bfi only for positions/lengths >= 256.
        for f in &unsupported_forms {
            assert!(
                f.contains(".wide is supported only") || f.contains("only the .hi and .lo") || f.contains("BFE") || f.contains("BFI")
                    || f.starts_with("bfe") || f.starts_with("bfi"),
                "unexpected: {f}"
            );
        }
    }
}
