//! E-graph nodes as bit-vector expressions: [`encode`] gives what a
//! [`Shape`] computes from its children's values, and when that value is
//! exactly determined, for the integer, bit, logic, shift, compare, select
//! and integer-conversion instructions. It mirrors [`Shape::eval`] (operand
//! prefixes, source types narrower than the register, the register
//! extension of [`crate::engine::lang::extend`]) and the evaluator
//! (`ptx_ir::eval`, the ground truth) step by step; the test
//! `tests/tests/rules_smt.rs` checks the two against each other on every
//! instruction of the generator's catalog.
//!
//! `defined` is the condition under which [`Shape::eval`] gives `Some`
//! (not a division by zero, not `MININT / -1`, not a 64-bit `bfe`/`bfi`
//! position or length >= 256, a `lop3` table <= 0xff). Anything else
//! (floating point, carry flags, video instructions, `dp4a`, `fns` ...) is
//! refused with the reason.

use super::bv::{Bv, Ctx, Op2};
use crate::engine::lang::Shape;
use ptx_ir::eval::{self, Dialect};
use ptx_ir::ir::{Instruction, Operand, Prefix};
use ptx_ir::isa::{BoolOp, CmpOp, Mod, Opcode, ScalarType, TypeClass};

/// A node's value and the condition (one bit) under which it is exactly determined.
#[derive(Clone, Copy, Debug)]
pub struct Enc {
    pub value: Bv,
    pub defined: Bv,
}

fn width_of(t: ScalarType) -> u8 {
    if t == ScalarType::Pred {
        1
    } else {
        t.bits().min(128) as u8
    }
}

fn is_int(t: ScalarType) -> bool {
    matches!(t.class(), TypeClass::Signed | TypeClass::Unsigned | TypeClass::Bits)
}

fn signed(t: ScalarType) -> bool {
    t.class() == TypeClass::Signed
}

/// The value of `shape` on children `kids` (each the full register content,
/// of the width the context gives it), or why it is not encoded.
pub fn encode(cx: &mut Ctx, shape: &Shape, dialect: &Dialect, kids: &[Bv]) -> Result<Enc, String> {
    let name = shape.ins.opcode.name();
    if kids.len() != shape.sources.len() {
        return Err(format!("`{name}`: {} children for {} sources", kids.len(), shape.sources.len()));
    }
    // The sources as `Shape::eval` hands them to the evaluator.
    let mut srcs: Vec<Bv> = Vec::with_capacity(kids.len());
    for (s, &k) in shape.sources.iter().zip(kids) {
        if s.sel.is_some() {
            return Err(format!("`{name}`: an operand selector"));
        }
        let w = cx.width(k);
        let mut v = match s.prefix {
            Prefix::Not => {
                let b = cx.bit(k, 0);
                let nb = cx.not(b);
                cx.fit(nb, w)
            }
            Prefix::Neg => cx.neg(k),
            Prefix::None => k,
        };
        if let Some(t) = s.ty {
            if t != ScalarType::Pred && t.bits() < w as u32 {
                v = cx.fit(v, t.bits() as u8);
            }
        }
        srcs.push(v);
    }
    let ins = eval::effective(&shape.ins, dialect);
    // The evaluator's refusals do not depend on the values (its contract):
    // what it does not evaluate on zeros, it does not evaluate.
    match eval::eval(&ins, &vec![0u128; srcs.len()], false) {
        Ok(r) if r.carry_out.is_none() && r.dests.len() == 1 => {}
        Ok(_) => return Err(format!("`{name}`: writes a carry or more than one result")),
        Err(e) => return Err(format!("`{name}`: the evaluator refuses it ({e})")),
    }
    let (value, defined) = semantics(cx, &ins, &srcs)?;
    // The result written into the destination register (`lang::extend`).
    let value = match shape.dest_ty {
        Some(t) if t != ScalarType::Pred && t.bits() < shape.width as u32 => {
            let low = cx.fit(value, t.bits() as u8);
            cx.ext(low, shape.width, signed(t))
        }
        _ => cx.fit(value, shape.width),
    };
    Ok(Enc { value, defined })
}

/// The instruction's result (its low bits; the upper ones are zero, as in
/// the evaluator's `u128`) and its definedness.
fn semantics(cx: &mut Ctx, ins: &Instruction, s: &[Bv]) -> Result<(Bv, Bv), String> {
    let name = ins.opcode.name();
    let types = ins.types();
    let defined = cx.t();
    if types.iter().any(|t| t.class() == TypeClass::Float) && !matches!(ins.opcode, Opcode::MOV | Opcode::SELP | Opcode::SET | Opcode::SLCT) {
        return Err(format!("`{name}`: floating point"));
    }
    let ty = types.first().copied().ok_or_else(|| format!("`{name}`: no type"))?;
    let need = |k: usize| if s.len() > k { Ok(()) } else { Err(format!("`{name}`: {} sources", s.len())) };
    need(0)?;
    let v = match ins.opcode {
        Opcode::ADD | Opcode::SUB | Opcode::MUL | Opcode::MAD | Opcode::MUL24 | Opcode::MAD24 | Opcode::SAD | Opcode::DIV | Opcode::REM | Opcode::ABS | Opcode::NEG | Opcode::MIN | Opcode::MAX => {
            return arith(cx, ins, ty, s);
        }
        Opcode::POPC | Opcode::CLZ | Opcode::BREV | Opcode::BFIND | Opcode::BFE | Opcode::BFI | Opcode::SZEXT | Opcode::BMSK => return bits(cx, ins, ty, s),
        Opcode::AND | Opcode::OR | Opcode::XOR => {
            need(1)?;
            let w = width_of(ty);
            let (a, b) = (cx.fit(s[0], w), cx.fit(s[1], w));
            let op = match ins.opcode {
                Opcode::AND => Op2::And,
                Opcode::OR => Op2::Or,
                _ => Op2::Xor,
            };
            cx.bin(op, a, b)
        }
        Opcode::NOT => {
            let a = cx.fit(s[0], width_of(ty));
            cx.not(a)
        }
        Opcode::CNOT => {
            let a = cx.fit(s[0], width_of(ty));
            let z = cx.c(width_of(ty), 0);
            cx.eq(a, z)
        }
        Opcode::LOP3 => {
            need(3)?;
            let (a, b, c, lut) = (cx.fit(s[0], 32), cx.fit(s[1], 32), cx.fit(s[2], 32), cx.fit(s[3], 32));
            // A table above 0xff is refused by the evaluator (no value).
            let ff = cx.c(32, 0xff);
            let ok = cx.le(lut, ff, false);
            let (na, nb, nc) = (cx.not(a), cx.not(b), cx.not(c));
            let mut d = cx.c(32, 0);
            for k in 0..8u8 {
                let ta = if k & 4 != 0 { a } else { na };
                let tb = if k & 2 != 0 { b } else { nb };
                let tc = if k & 1 != 0 { c } else { nc };
                let ab = cx.and(ta, tb);
                let term = cx.and(ab, tc);
                let lb = cx.bit(lut, k);
                let sel = cx.ext(lb, 32, true);
                let on = cx.and(sel, term);
                d = cx.or(d, on);
            }
            return Ok((d, ok));
        }
        Opcode::SHF => {
            need(2)?;
            let (a, b, c) = (cx.fit(s[0], 32), cx.fit(s[1], 32), cx.fit(s[2], 32));
            let n = if ins.has(Mod::CLAMP) {
                let k32 = cx.c(32, 32);
                cx.min(c, k32, false)
            } else {
                let m = cx.c(32, 0x1f);
                cx.and(c, m)
            };
            let v = cx.bin(Op2::Concat, b, a);
            let n = cx.fit(n, 64);
            if ins.has(Mod::L) {
                let sh = cx.bin(Op2::Shl, v, n);
                cx.extract(63, 32, sh)
            } else {
                let sh = cx.bin(Op2::Lshr, v, n);
                cx.extract(31, 0, sh)
            }
        }
        Opcode::SHL | Opcode::SHR => {
            need(1)?;
            let w = width_of(ty);
            let a = cx.fit(s[0], w);
            // The amount is 32 bits whatever the type; past the width it clamps.
            let n32 = cx.fit(s[1], 32);
            let wc = cx.c(32, w as u128);
            let n = cx.min(n32, wc, false);
            let n = cx.fit(n, w);
            let op = match (ins.opcode, signed(ty)) {
                (Opcode::SHL, _) => Op2::Shl,
                (_, true) => Op2::Ashr,
                _ => Op2::Lshr,
            };
            cx.bin(op, a, n)
        }
        Opcode::PRMT => {
            need(2)?;
            let abc = [cx.fit(s[0], 32), cx.fit(s[1], 32), cx.fit(s[2], 32)];
            prmt(cx, ins, abc)
        }
        Opcode::MOV => {
            if ins.vector().is_some() || matches!(ins.operands.first(), Some(Operand::Vector(_))) {
                return Err(format!("`{name}`: vector destination"));
            }
            let w = width_of(ty);
            match ins.operands.get(1) {
                Some(Operand::Vector(el)) => {
                    // Pack: the first element in the low bits.
                    let n = el.len();
                    let ew = w / n as u8;
                    need(n - 1)?;
                    let mut d = cx.fit(s[0], ew);
                    for x in &s[1..n] {
                        let e = cx.fit(*x, ew);
                        d = cx.bin(Op2::Concat, e, d);
                    }
                    d
                }
                _ => cx.fit(s[0], w),
            }
        }
        Opcode::SETP | Opcode::SET => {
            need(1)?;
            let st = if ins.opcode == Opcode::SET { *types.get(1).ok_or("`set` without a source type")? } else { ty };
            if !is_int(st) {
                return Err(format!("`{name}`: floating-point comparison"));
            }
            let cmp = ins.cmp().ok_or_else(|| format!("`{name}`: no comparison"))?;
            let w = width_of(st);
            let (a, b) = (cx.fit(s[0], w), cx.fit(s[1], w));
            let sg = signed(st);
            let r = match cmp {
                CmpOp::Eq => cx.eq(a, b),
                CmpOp::Ne => cx.ne(a, b),
                CmpOp::Lt | CmpOp::Lo => cx.lt(a, b, sg),
                CmpOp::Le | CmpOp::Ls => cx.le(a, b, sg),
                CmpOp::Gt | CmpOp::Hi => cx.lt(b, a, sg),
                CmpOp::Ge | CmpOp::Hs => cx.le(b, a, sg),
                _ => return Err(format!("`{name}`: comparison {}", cmp.text())),
            };
            let r = match ins.bool_op() {
                None => r,
                Some(op) => {
                    need(2)?;
                    let c = cx.bit(s[2], 0);
                    let op = match op {
                        BoolOp::And => Op2::And,
                        BoolOp::Or => Op2::Or,
                        BoolOp::Xor => Op2::Xor,
                    };
                    cx.bin(op, r, c)
                }
            };
            if ins.opcode == Opcode::SETP {
                r
            } else {
                use ScalarType as T;
                let (tw, tv) = match ty {
                    T::F32 => (32, 0x3f80_0000),
                    T::F16 => (16, 0x3c00),
                    T::Bf16 => (16, 0x3f80),
                    T::U16 | T::S16 => (16, 0xffff),
                    T::U32 | T::S32 => (32, 0xffff_ffff),
                    _ => return Err(format!("`{name}`: destination type {}", ty.text())),
                };
                let (t, f) = (cx.c(tw, tv), cx.c(tw, 0));
                cx.ite(r, t, f)
            }
        }
        Opcode::SELP | Opcode::SLCT => {
            need(2)?;
            let w = width_of(ty);
            let c = if ins.opcode == Opcode::SELP {
                cx.bit(s[2], 0)
            } else {
                if types.get(1) != Some(&ScalarType::S32) {
                    return Err(format!("`{name}`: a floating-point selector"));
                }
                let c = cx.fit(s[2], 32);
                let z = cx.c(32, 0);
                cx.le(z, c, true)
            };
            let (a, b) = (cx.fit(s[0], w), cx.fit(s[1], w));
            cx.ite(c, a, b)
        }
        Opcode::CVT => {
            let (d, a) = match types.as_slice() {
                [d, a] => (*d, *a),
                _ => return Err(format!("`{name}`: {} types", types.len())),
            };
            let int = |t: ScalarType| matches!(t.class(), TypeClass::Signed | TypeClass::Unsigned) && matches!(t.bits(), 8 | 16 | 32 | 64);
            if !int(d) || !int(a) {
                return Err(format!("`cvt{}{}`: not between integers", d.text(), a.text()));
            }
            let x = cx.fit(s[0], a.bits() as u8);
            if ins.has(Mod::SAT) {
                // Exact in 66 bits, clamped to the destination's range.
                let xe = cx.ext(x, 66, signed(a));
                let (lo, hi): (i128, i128) = if signed(d) { (-(1i128 << (d.bits() - 1)), (1i128 << (d.bits() - 1)) - 1) } else { (0, (1i128 << d.bits()) - 1) };
                let (lo, hi) = (cx.c(66, lo as u128), cx.c(66, hi as u128));
                let below = cx.lt(xe, lo, true);
                let above = cx.lt(hi, xe, true);
                let r = cx.ite(above, hi, xe);
                let r = cx.ite(below, lo, r);
                cx.fit(r, d.bits() as u8)
            } else {
                cx.ext(x, d.bits() as u8, signed(a))
            }
        }
        _ => return Err(format!("`{name}`: not encoded")),
    };
    Ok((v, defined))
}

/// `prmt.b32`: the default mode by the selector nibbles, or a special mode's table.
fn prmt(cx: &mut Ctx, ins: &Instruction, [a, b, c]: [Bv; 3]) -> Bv {
    let v = cx.bin(Op2::Concat, b, a);
    let table: Option<[[u8; 4]; 4]> = if ins.has(Mod::F4E) {
        Some([[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]])
    } else if ins.has(Mod::B4E) {
        Some([[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]])
    } else if ins.has(Mod::RC8) {
        Some([[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]])
    } else if ins.has(Mod::ECL) {
        Some([[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]])
    } else if ins.has(Mod::ECR) {
        Some([[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]])
    } else if ins.has(Mod::RC16) {
        Some([[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]])
    } else {
        None
    };
    let mut out: Vec<Bv> = Vec::with_capacity(4);
    for i in 0..4u8 {
        let byte = match table {
            None => {
                let ctl = cx.extract(4 * i + 3, 4 * i, c);
                let sel = cx.extract(2, 0, ctl);
                let z3 = cx.c(3, 0);
                let amount = cx.bin(Op2::Concat, sel, z3);
                let amount = cx.fit(amount, 64);
                let sh = cx.bin(Op2::Lshr, v, amount);
                let byte = cx.extract(7, 0, sh);
                let msb = cx.bit(byte, 7);
                let fill = cx.ext(msb, 8, true);
                let rep = cx.bit(ctl, 3);
                cx.ite(rep, fill, byte)
            }
            Some(t) => {
                let row = cx.extract(1, 0, c);
                let mut r = cx.extract(8 * t[3][i as usize] + 7, 8 * t[3][i as usize], v);
                for k in (0..3u8).rev() {
                    let sel = t[k as usize][i as usize];
                    let bk = cx.extract(8 * sel + 7, 8 * sel, v);
                    let kc = cx.c(2, k as u128);
                    let is = cx.eq(row, kc);
                    r = cx.ite(is, bk, r);
                }
                r
            }
        };
        out.push(byte);
    }
    let hi = cx.bin(Op2::Concat, out[3], out[2]);
    let lo = cx.bin(Op2::Concat, out[1], out[0]);
    cx.bin(Op2::Concat, hi, lo)
}

/// `v` (exact, in more than `n` bits) clamped to the signed `n`-bit range, as `n` bits.
fn sat_signed(cx: &mut Ctx, v: Bv, n: u8) -> Bv {
    let w = cx.width(v);
    let lo = cx.c(w, (-(1i128 << (n - 1))) as u128);
    let hi = cx.c(w, (1u128 << (n - 1)) - 1);
    let below = cx.lt(v, lo, true);
    let above = cx.lt(hi, v, true);
    let r = cx.ite(above, hi, v);
    let r = cx.ite(below, lo, r);
    cx.fit(r, n)
}

/// `a + b` of signed `n`-bit values, exact in `n + 1` bits.
fn wide_sum(cx: &mut Ctx, a: Bv, b: Bv, n: u8) -> Bv {
    let (a, b) = (cx.ext(a, n + 1, true), cx.ext(b, n + 1, true));
    cx.add(a, b)
}

/// Integer arithmetic (`int.rs`: add ... max).
fn arith(cx: &mut Ctx, ins: &Instruction, ty: ScalarType, s: &[Bv]) -> Result<(Bv, Bv), String> {
    use ScalarType as T;
    let name = ins.opcode.name();
    let n = ty.bits() as u8;
    let sg = signed(ty);
    let packed = matches!(ty, T::U16x2 | T::S16x2);
    let (sat, hi, lo, wide) = (ins.has(Mod::SAT), ins.has(Mod::HI), ins.has(Mod::LO), ins.has(Mod::WIDE));
    let need = |k: usize| if s.len() > k { Ok(()) } else { Err(format!("`{name}`: {} sources", s.len())) };
    let mut defined = cx.t();
    let src = |cx: &mut Ctx, k: usize, w: u8| cx.fit(s[k], w);
    let lanes = |cx: &mut Ctx, a: Bv, b: Bv, f: &dyn Fn(&mut Ctx, Bv, Bv) -> Bv| {
        let (a0, b0, a1, b1) = (cx.extract(15, 0, a), cx.extract(15, 0, b), cx.extract(31, 16, a), cx.extract(31, 16, b));
        let l = f(cx, a0, b0);
        let h = f(cx, a1, b1);
        cx.bin(Op2::Concat, h, l)
    };
    let v = match ins.opcode {
        Opcode::ADD | Opcode::SUB => {
            need(1)?;
            let (a, b) = (src(cx, 0, n), src(cx, 1, n));
            let add = ins.opcode == Opcode::ADD;
            if packed {
                lanes(cx, a, b, &|cx, x, y| if add { cx.add(x, y) } else { cx.sub(x, y) })
            } else if sat {
                // Exact in n + 1 bits, then clamped.
                let (ea, eb) = (cx.ext(a, n + 1, true), cx.ext(b, n + 1, true));
                let r = if add { cx.add(ea, eb) } else { cx.sub(ea, eb) };
                sat_signed(cx, r, n)
            } else if add {
                cx.add(a, b)
            } else {
                cx.sub(a, b)
            }
        }
        Opcode::MUL | Opcode::MAD => {
            need(if ins.opcode == Opcode::MAD { 2 } else { 1 })?;
            let (a, b) = (src(cx, 0, n), src(cx, 1, n));
            let (ea, eb) = (cx.ext(a, 2 * n, sg), cx.ext(b, 2 * n, sg));
            let p = cx.mul(ea, eb);
            let part = if wide {
                p
            } else if hi {
                cx.extract(2 * n - 1, n, p)
            } else if lo {
                cx.extract(n - 1, 0, p)
            } else {
                return Err(format!("`{name}`: no .hi/.lo/.wide"));
            };
            if ins.opcode == Opcode::MUL {
                part
            } else if wide {
                let c = src(cx, 2, 2 * n);
                cx.add(part, c)
            } else if sat {
                let c = src(cx, 2, n);
                let r = wide_sum(cx, part, c, n);
                sat_signed(cx, r, n)
            } else {
                let c = src(cx, 2, n);
                cx.add(part, c)
            }
        }
        Opcode::MUL24 | Opcode::MAD24 => {
            need(if ins.opcode == Opcode::MAD24 { 2 } else { 1 })?;
            let (a, b) = (src(cx, 0, 24), src(cx, 1, 24));
            let (ea, eb) = (cx.ext(a, 64, sg), cx.ext(b, 64, sg));
            let p = cx.mul(ea, eb);
            let part = if hi {
                cx.extract(47, 16, p)
            } else if lo {
                cx.extract(31, 0, p)
            } else {
                return Err(format!("`{name}`: no .hi/.lo"));
            };
            if ins.opcode == Opcode::MUL24 {
                part
            } else {
                let c = src(cx, 2, 32);
                if sat {
                    let r = wide_sum(cx, part, c, 32);
                    sat_signed(cx, r, 32)
                } else {
                    cx.add(part, c)
                }
            }
        }
        Opcode::SAD => {
            need(2)?;
            let (x, y) = (src(cx, 0, n), src(cx, 1, n));
            let l = cx.lt(x, y, sg);
            let (d1, d2) = (cx.sub(y, x), cx.sub(x, y));
            let d = cx.ite(l, d1, d2);
            let c = src(cx, 2, n);
            cx.add(d, c)
        }
        Opcode::DIV | Opcode::REM => {
            need(1)?;
            let (x, y) = (src(cx, 0, n), src(cx, 1, n));
            let zero = cx.c(n, 0);
            defined = cx.ne(y, zero);
            let div = ins.opcode == Opcode::DIV;
            if div && sg {
                // MININT / -1 does not fit.
                let (min, m1) = (cx.c(n, 1u128 << (n - 1)), cx.c(n, u128::MAX));
                let (xm, ym) = (cx.eq(x, min), cx.eq(y, m1));
                let ov = cx.and(xm, ym);
                let nov = cx.not(ov);
                defined = cx.and(defined, nov);
            }
            let op = match (div, sg) {
                (true, false) => Op2::Udiv,
                (true, true) => Op2::Sdiv,
                (false, false) => Op2::Urem,
                (false, true) => Op2::Srem,
            };
            cx.bin(op, x, y)
        }
        Opcode::ABS | Opcode::NEG => {
            let x = src(cx, 0, n);
            let nx = cx.neg(x);
            if ins.opcode == Opcode::NEG {
                nx
            } else {
                let z = cx.c(n, 0);
                let l = cx.lt(x, z, true);
                cx.ite(l, nx, x)
            }
        }
        Opcode::MIN | Opcode::MAX => {
            need(1)?;
            let relu = ins.has(Mod::RELU);
            let min = ins.opcode == Opcode::MIN;
            let pick = move |cx: &mut Ctx, x: Bv, y: Bv| {
                let r = if min { cx.min(x, y, sg) } else { cx.max(x, y, sg) };
                if relu {
                    let z = cx.c(cx.width(r), 0);
                    cx.max(r, z, true)
                } else {
                    r
                }
            };
            let (a, b) = (src(cx, 0, n), src(cx, 1, n));
            if packed {
                lanes(cx, a, b, &pick)
            } else {
                pick(cx, a, b)
            }
        }
        _ => return Err(format!("`{name}`: not encoded")),
    };
    Ok((v, defined))
}

/// Bit manipulation (`int.rs`: popc ... bmsk).
fn bits(cx: &mut Ctx, ins: &Instruction, ty: ScalarType, s: &[Bv]) -> Result<(Bv, Bv), String> {
    let name = ins.opcode.name();
    let n = ty.bits() as u8;
    let need = |k: usize| if s.len() > k { Ok(()) } else { Err(format!("`{name}`: {} sources", s.len())) };
    let mut defined = cx.t();
    let v = match ins.opcode {
        Opcode::POPC => {
            let a = cx.fit(s[0], n);
            let mut r = cx.c(32, 0);
            for i in 0..n {
                let b = cx.bit(a, i);
                let b = cx.fit(b, 32);
                r = cx.add(r, b);
            }
            r
        }
        Opcode::CLZ => {
            let a = cx.fit(s[0], n);
            let mut r = cx.c(32, n as u128);
            for i in 0..n {
                let b = cx.bit(a, i);
                let k = cx.c(32, (n - 1 - i) as u128);
                r = cx.ite(b, k, r);
            }
            r
        }
        Opcode::BREV => {
            let a = cx.fit(s[0], n);
            let mut r = cx.bit(a, 0);
            for i in 1..n {
                let b = cx.bit(a, i);
                r = cx.bin(Op2::Concat, r, b);
            }
            r
        }
        Opcode::BFIND => {
            let msb = n - 1;
            let mut x = cx.fit(s[0], n);
            if signed(ty) {
                let top = cx.bit(x, msb);
                let nx = cx.not(x);
                x = cx.ite(top, nx, x);
            }
            let none = cx.c(32, 0xffff_ffff);
            let mut r = none;
            for i in 0..n {
                let b = cx.bit(x, i);
                let k = cx.c(32, i as u128);
                r = cx.ite(b, k, r);
            }
            if ins.has(Mod::SHIFTAMT) {
                let is_none = cx.eq(r, none);
                let m = cx.c(32, msb as u128);
                let d = cx.sub(m, r);
                r = cx.ite(is_none, r, d);
            }
            r
        }
        Opcode::BFE | Opcode::BFI => {
            let bfi = ins.opcode == Opcode::BFI;
            need(if bfi { 3 } else { 2 })?;
            let k = bfi as usize;
            let a = cx.fit(s[0], n);
            let (b, c) = (cx.fit(s[1 + k], 32), cx.fit(s[2 + k], 32));
            let ff = cx.c(32, 0xff);
            if n == 64 {
                // The manual and the hardware disagree at 256 and above.
                let (okb, okc) = (cx.le(b, ff, false), cx.le(c, ff, false));
                defined = cx.and(okb, okc);
            }
            let (pos, len) = (cx.and(b, ff), cx.and(c, ff));
            let msb = cx.c(32, n as u128 - 1);
            let nc = cx.c(32, n as u128);
            let z32 = cx.c(32, 0);
            // The bits taken from the source: 0 past the msb, else min(len, n - pos).
            let past = cx.lt(msb, pos, false);
            let room = cx.sub(nc, pos);
            let fits = cx.min(len, room, false);
            let taken = cx.ite(past, z32, fits);
            let one = cx.c(n, 1);
            let tn = cx.fit(taken, n);
            let sh = cx.bin(Op2::Shl, one, tn);
            let mask = cx.sub(sh, one);
            let pn = cx.fit(pos, n);
            if bfi {
                let base = cx.fit(s[1], n);
                let m = cx.bin(Op2::Shl, mask, pn);
                let nm = cx.not(m);
                let keep = cx.and(base, nm);
                let ins_ = cx.bin(Op2::Shl, a, pn);
                let put = cx.and(ins_, m);
                cx.or(keep, put)
            } else {
                let shifted = cx.bin(Op2::Lshr, a, pn);
                let field = cx.and(shifted, mask);
                if signed(ty) {
                    // The sign: bit min(pos + len - 1, msb) of a, when len != 0.
                    let one32 = cx.c(32, 1);
                    let pl = cx.add(pos, len);
                    let top = cx.sub(pl, one32);
                    let idx = cx.min(top, msb, false);
                    let idx = cx.fit(idx, n);
                    let at = cx.bin(Op2::Lshr, a, idx);
                    let sb = cx.bit(at, 0);
                    let nz = cx.ne(len, z32);
                    let sbit = cx.and(sb, nz);
                    let nmask = cx.not(mask);
                    let zero = cx.c(n, 0);
                    let fill = cx.ite(sbit, nmask, zero);
                    cx.or(field, fill)
                } else {
                    field
                }
            }
        }
        Opcode::SZEXT => {
            need(1)?;
            let clamp = ins.has(Mod::CLAMP);
            let (a, b) = (cx.fit(s[0], 32), cx.fit(s[1], 32));
            let (x1f, c32, z, ones, one) = (cx.c(32, 0x1f), cx.c(32, 32), cx.c(32, 0), cx.c(32, 0xffff_ffff), cx.c(32, 1));
            let b1 = cx.and(b, x1f);
            let too_large = if clamp { cx.le(c32, b, false) } else { cx.f() };
            let sh = cx.bin(Op2::Shl, ones, b1);
            let m = cx.ite(too_large, z, sh);
            let p = cx.sub(b1, one);
            let sign_pos = cx.and(p, x1f);
            let at = cx.bin(Op2::Lshr, a, sign_pos);
            let bit = cx.bit(at, 0);
            let b1z = cx.eq(b1, z);
            let off = cx.or(b1z, too_large);
            let on = cx.not(off);
            let sign_bit = if ty == ScalarType::S32 { cx.and(on, bit) } else { cx.f() };
            let nm = cx.not(m);
            let low = cx.and(a, nm);
            let fill = cx.ite(sign_bit, m, z);
            cx.or(low, fill)
        }
        Opcode::BMSK => {
            need(1)?;
            let clamp = ins.has(Mod::CLAMP);
            let (a, b) = (cx.fit(s[0], 32), cx.fit(s[1], 32));
            let (x1f, c32, z, ones) = (cx.c(32, 0x1f), cx.c(32, 32), cx.c(32, 0), cx.c(32, 0xffff_ffff));
            let a1 = cx.and(a, x1f);
            let b1 = cx.and(b, x1f);
            let sum = cx.add(a1, b1);
            let sum_ov = cx.le(c32, sum, false);
            let (pos_ov, width_ov) = if clamp { (cx.le(c32, a, false), cx.le(c32, b, false)) } else { (cx.f(), cx.f()) };
            let m0 = cx.bin(Op2::Shl, ones, a1);
            let mask0 = cx.ite(pos_ov, z, m0);
            let m1 = cx.bin(Op2::Shl, ones, sum);
            let b1z = cx.eq(b1, z);
            let m1 = cx.ite(b1z, ones, m1);
            let o1 = cx.or(sum_ov, pos_ov);
            let ov = cx.or(o1, width_ov);
            let mask1 = cx.ite(ov, z, m1);
            let nm1 = cx.not(mask1);
            cx.and(mask0, nm1)
        }
        _ => return Err(format!("`{name}`: not encoded")),
    };
    Ok((v, defined))
}
