//! Semantics of the logic family (see `mod.rs`): `and or xor not cnot lop3
//! shf shl shr`, `prmt`, `mov` (scalar, vector, pack/unpack) and the video
//! instructions (`vadd vsub vabsdiff vmin vmax vshl vshr vmad vset` and the
//! SIMD `vop2`/`vop4`/`vset2`/`vset4`).
//!
//! Operand conventions beyond `mod.rs` (the interpreter's): a source's value
//! has its prefix applied by the caller — `!p` arrives as the negated
//! predicate, `-a` as the register's two's-complement negation (in its
//! width). The byte/half-word selectors of the video instructions (`a.b1`,
//! `b.h10`, `d.h0`) are applied here, on the whole register value; so is
//! `vmad`'s negation, which negates the product or c rather than the
//! register: the raw register is recovered by negating the source again.

use super::bits::{mask, sext};
use super::{Eval, EvalError, EvalResult, Val};
use crate::ir::{Instruction, Operand, Prefix, Selector};
use crate::isa::{CmpOp, Mod, Opcode, ScalarType, TypeClass};

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[
    Opcode::AND,
    Opcode::OR,
    Opcode::XOR,
    Opcode::NOT,
    Opcode::CNOT,
    Opcode::LOP3,
    Opcode::SHF,
    Opcode::SHL,
    Opcode::SHR,
    Opcode::PRMT,
    Opcode::MOV,
    Opcode::VADD,
    Opcode::VSUB,
    Opcode::VABSDIFF,
    Opcode::VMIN,
    Opcode::VMAX,
    Opcode::VSHL,
    Opcode::VSHR,
    Opcode::VMAD,
    Opcode::VSET,
    Opcode::VADD2,
    Opcode::VSUB2,
    Opcode::VAVRG2,
    Opcode::VABSDIFF2,
    Opcode::VMIN2,
    Opcode::VMAX2,
    Opcode::VSET2,
    Opcode::VADD4,
    Opcode::VSUB4,
    Opcode::VAVRG4,
    Opcode::VABSDIFF4,
    Opcode::VMIN4,
    Opcode::VMAX4,
    Opcode::VSET4,
];

/// Evaluates `ins` if it belongs to this family.
pub fn eval(ins: &Instruction, srcs: &[u128], _carry_in: bool) -> Option<EvalResult> {
    let op = ins.opcode;
    if !OPCODES.contains(&op) {
        return None;
    }
    Some(match op {
        Opcode::AND | Opcode::OR | Opcode::XOR => bitwise(ins, srcs),
        Opcode::NOT => not(ins, srcs),
        Opcode::CNOT => cnot(ins, srcs),
        Opcode::LOP3 => lop3(ins, srcs),
        Opcode::SHF => shf(ins, srcs),
        Opcode::SHL | Opcode::SHR => shift(ins, srcs),
        Opcode::PRMT => prmt(ins, srcs),
        Opcode::MOV => mov(ins, srcs),
        Opcode::VMAD => vmad(ins, srcs),
        Opcode::VADD | Opcode::VSUB | Opcode::VABSDIFF | Opcode::VMIN | Opcode::VMAX | Opcode::VSHL | Opcode::VSHR | Opcode::VSET => {
            video_scalar(ins, srcs)
        }
        _ => video_simd(ins, srcs),
    })
}

// ---------------------------------------------------------------------------
// Shared helpers (local to this file).

pub(super) fn unsupported(ins: &Instruction, why: &str) -> EvalError {
    EvalError::Unsupported(format!("`{}`: {why}", ins.opcode.name()))
}

pub(super) fn bad(ins: &Instruction, why: &str) -> EvalError {
    EvalError::BadOperands(format!("`{}`: {why}", ins.opcode.name()))
}

/// The instruction type (first type slot).
fn ty(ins: &Instruction) -> Result<ScalarType, EvalError> {
    ins.ty().ok_or_else(|| bad(ins, "no type modifier"))
}

fn need(ins: &Instruction, srcs: &[u128], n: usize) -> Result<(), EvalError> {
    super::arity(srcs, n, ins)
}

/// The operand that source `k` comes from, for instructions whose operands
/// are one destination followed by scalar sources.
fn src_operand(ins: &Instruction, k: usize) -> Option<&Operand> {
    ins.operands.get(k + 1)
}

fn src_prefix(ins: &Instruction, k: usize) -> Prefix {
    match src_operand(ins, k) {
        Some(Operand::Reg(r)) => r.prefix,
        _ => Prefix::None,
    }
}

fn src_sel(ins: &Instruction, k: usize) -> Option<Selector> {
    match src_operand(ins, k) {
        Some(Operand::Reg(r)) => r.sel,
        _ => None,
    }
}

fn dst_sel(ins: &Instruction) -> Option<Selector> {
    match ins.operands.first() {
        Some(Operand::Reg(r)) => r.sel,
        _ => None,
    }
}

/// Source `k` as a value of type `t`: truncated to its width (a `!p`
/// source arrives negated already).
fn read(_ins: &Instruction, srcs: &[u128], k: usize, t: ScalarType) -> Result<u128, EvalError> {
    Ok(srcs[k] & mask(width(t)))
}

fn width(t: ScalarType) -> u32 {
    if t == ScalarType::Pred {
        1
    } else {
        t.bits()
    }
}

fn is_signed(t: ScalarType) -> bool {
    t.class() == TypeClass::Signed
}

/// How many results the destination operand gives (`d|p` gives two).
fn pair_dest(ins: &Instruction) -> bool {
    matches!(ins.operands.first(), Some(Operand::Pair(..)))
}

// ---------------------------------------------------------------------------
// and, or, xor, not, cnot

fn bitwise(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 2)?;
    let t = ty(ins)?;
    let (a, b) = (read(ins, srcs, 0, t)?, read(ins, srcs, 1, t)?);
    let d = match ins.opcode {
        Opcode::AND => a & b,
        Opcode::OR => a | b,
        _ => a ^ b,
    };
    Ok(Eval::exact(d))
}

fn not(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 1)?;
    let t = ty(ins)?;
    let a = read(ins, srcs, 0, t)?;
    Ok(Eval::exact(!a & mask(width(t))))
}

fn cnot(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 1)?;
    let t = ty(ins)?;
    let a = read(ins, srcs, 0, t)?;
    Ok(Eval::exact((a == 0) as u128))
}

// ---------------------------------------------------------------------------
// lop3

/// `F(a, b, c)` for the function whose truth table is `lut`: bit `4a+2b+c`
/// of `lut` is F's value (so that `F(0xF0, 0xCC, 0xAA) == lut`).
pub(super) fn lop3_fn(lut: u8, a: u32, b: u32, c: u32) -> u32 {
    let mut d = 0u32;
    for k in 0..8 {
        if lut >> k & 1 == 1 {
            let ta = if k & 4 != 0 { a } else { !a };
            let tb = if k & 2 != 0 { b } else { !b };
            let tc = if k & 1 != 0 { c } else { !c };
            d |= ta & tb & tc;
        }
    }
    d
}

fn lop3(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 4)?;
    let (a, b, c) = (srcs[0] as u32, srcs[1] as u32, srcs[2] as u32);
    let lut = srcs[3] & 0xffff_ffff;
    if lut > 0xff {
        return Err(unsupported(ins, "immLut outside 0..255"));
    }
    let d = lop3_fn(lut as u8, a, b, c);
    match ins.bool_op() {
        None => Ok(Eval::exact(d as u128)),
        Some(op) => {
            need(ins, srcs, 5)?;
            let q = read(ins, srcs, 4, ScalarType::Pred)? == 1;
            let p = op.apply(d != 0, q);
            if !pair_dest(ins) {
                return Err(bad(ins, "the .BoolOp form writes `d|p`"));
            }
            Ok(Eval { dests: smallvec::smallvec![Val::exact(d as u128), Val::exact(p as u128)], carry_out: None })
        }
    }
}

// ---------------------------------------------------------------------------
// shf, shl, shr

fn shf(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 3)?;
    let (a, b, c) = (srcs[0] as u32 as u64, srcs[1] as u32 as u64, srcs[2] as u32);
    let n = if ins.has(Mod::CLAMP) {
        c.min(32)
    } else if ins.has(Mod::WRAP) {
        c & 0x1f
    } else {
        return Err(unsupported(ins, "neither .clamp nor .wrap"));
    };
    // The 64-bit value [b, a]: b holds bits 63:32, a bits 31:0.
    let v = b << 32 | a;
    let d = if ins.has(Mod::L) {
        // The 32 msbs of the value shifted left (n = 32 gives a).
        ((v as u128) << n >> 32) as u32
    } else if ins.has(Mod::R) {
        // The 32 lsbs of the value shifted right (n = 32 gives b).
        (v >> n) as u32
    } else {
        return Err(unsupported(ins, "neither .l nor .r"));
    };
    Ok(Eval::exact(d as u128))
}

fn shift(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 2)?;
    let t = ty(ins)?;
    let w = width(t);
    if !(matches!(w, 16 | 32 | 64)) || t.class() == TypeClass::Float {
        return Err(unsupported(ins, "type"));
    }
    let a = srcs[0] & mask(w);
    // "b must be a 32-bit value, regardless of the instruction type"; amounts
    // greater than the width are clamped to the width.
    let n = (srcs[1] as u32).min(w);
    let d = if ins.opcode == Opcode::SHL {
        if n >= w {
            0
        } else {
            (a << n) & mask(w)
        }
    } else if is_signed(t) {
        // Sign fill: shifting by the width gives all sign bits.
        ((sext(a, w) >> n.min(w - 1)) as u128) & mask(w)
    } else if n >= w {
        0
    } else {
        a >> n
    };
    Ok(Eval::exact(d))
}

// ---------------------------------------------------------------------------
// prmt

/// The source byte of each result byte (d.b0 .. d.b3) for the special modes,
/// by `c[1:0]` (the manual's table, read column d.b0 first).
fn prmt_mode_table(ins: &Instruction) -> Option<[[u8; 4]; 4]> {
    Some(if ins.has(Mod::F4E) {
        [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]]
    } else if ins.has(Mod::B4E) {
        [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]]
    } else if ins.has(Mod::RC8) {
        [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]
    } else if ins.has(Mod::ECL) {
        [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]]
    } else if ins.has(Mod::ECR) {
        [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]]
    } else if ins.has(Mod::RC16) {
        [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]
    } else {
        return None;
    })
}

pub(super) fn prmt_default(a: u32, b: u32, c: u32) -> u32 {
    let src = (b as u64) << 32 | a as u64;
    let mut d = 0u32;
    for i in 0..4 {
        let ctl = (c >> (4 * i)) & 0xf;
        let byte = (src >> (8 * (ctl & 7))) as u8;
        let out = if ctl & 8 != 0 {
            // Replicate the sign (msb) of the selected byte.
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        d |= (out as u32) << (8 * i);
    }
    d
}

fn prmt(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    need(ins, srcs, 3)?;
    let (a, b, c) = (srcs[0] as u32, srcs[1] as u32, srcs[2] as u32);
    let d = match prmt_mode_table(ins) {
        None => prmt_default(a, b, c),
        Some(table) => {
            let src = (b as u64) << 32 | a as u64;
            let row = table[(c & 3) as usize];
            let mut d = 0u32;
            for (i, &sel) in row.iter().enumerate() {
                d |= ((src >> (8 * sel as u32)) as u8 as u32) << (8 * i);
            }
            d
        }
    };
    Ok(Eval::exact(d as u128))
}

// ---------------------------------------------------------------------------
// mov

fn mov(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let t = ty(ins)?;
    let w = width(t);
    if let Some(n) = ins.vector() {
        // mov.vN.type: element by element.
        let n = n as usize;
        need(ins, srcs, n)?;
        return Ok(Eval { dests: srcs[..n].iter().map(|&v| Val::exact(v & mask(w))).collect(), carry_out: None });
    }
    let dst_vec = match ins.operands.first() {
        Some(Operand::Vector(v)) => Some(v.len()),
        _ => None,
    };
    let src_vec = match ins.operands.get(1) {
        Some(Operand::Vector(v)) => Some(v.len()),
        _ => None,
    };
    let elem_width = |n: usize| -> Result<u32, EvalError> {
        if t.class() != TypeClass::Bits || !matches!(t, ScalarType::B16 | ScalarType::B32 | ScalarType::B64 | ScalarType::B128) {
            return Err(unsupported(ins, "pack/unpack exists only for .b16, .b32, .b64, .b128"));
        }
        if !(n == 2 || n == 4) || w / (n as u32) < 8 {
            return Err(unsupported(ins, "pack/unpack of this many elements is not a form of the manual"));
        }
        Ok(w / n as u32)
    };
    match (dst_vec, src_vec) {
        (None, None) => {
            need(ins, srcs, 1)?;
            Ok(Eval::exact(read(ins, srcs, 0, t)?))
        }
        (None, Some(n)) => {
            // Pack: d = a.x | a.y << ew | ..., low element first.
            let ew = elem_width(n)?;
            need(ins, srcs, n)?;
            let d = srcs[..n].iter().enumerate().fold(0u128, |d, (i, &v)| d | (v & mask(ew)) << (i as u32 * ew));
            Ok(Eval::exact(d))
        }
        (Some(n), None) => {
            // Unpack: element i = a[i*ew .. (i+1)*ew).
            let ew = elem_width(n)?;
            need(ins, srcs, 1)?;
            let a = srcs[0] & mask(w);
            Ok(Eval { dests: (0..n).map(|i| Val::exact(a >> (i as u32 * ew) & mask(ew))).collect(), carry_out: None })
        }
        (Some(_), Some(_)) => Err(unsupported(ins, "vector to vector without .vN")),
    }
}

// ---------------------------------------------------------------------------
// Scalar video instructions (§9.7.18.1)

/// `partSelectSignExtend`: the byte or half-word picked by `sel` (the whole
/// word when none), sign- or zero-extended.
fn part_select(ins: &Instruction, v: u32, signed: bool, sel: Option<Selector>) -> Result<i128, EvalError> {
    let (bits, shift) = match sel {
        None => (32, 0),
        Some(Selector::Bytes(l)) if l.len == 1 && l.digits[0] < 4 => (8, 8 * l.digits[0] as u32),
        Some(Selector::Halves(l)) if l.len == 1 && l.digits[0] < 2 => (16, 16 * l.digits[0] as u32),
        Some(_) => return Err(unsupported(ins, "operand selector is not one of .b0 .b1 .b2 .b3 .h0 .h1")),
    };
    let x = (v >> shift) as u128 & mask(bits);
    Ok(if signed { sext(x, bits) } else { x as i128 })
}

#[derive(Clone, Copy, PartialEq)]
enum Op2 {
    None,
    Add,
    Min,
    Max,
}

fn op2(ins: &Instruction) -> Op2 {
    if ins.has(Mod::ADD) {
        Op2::Add
    } else if ins.has(Mod::MIN) {
        Op2::Min
    } else if ins.has(Mod::MAX) {
        Op2::Max
    } else {
        Op2::None
    }
}

fn int_compare(cmp: CmpOp, a: i128, b: i128) -> Option<bool> {
    Some(match cmp {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        _ => return None,
    })
}

fn clamp(v: i128, lo: i128, hi: i128) -> i128 {
    v.max(lo).min(hi)
}

fn video_scalar(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let op = ins.opcode;
    let types = ins.types();
    let is_vset = op == Opcode::VSET;
    // vset.atype.btype; the others .dtype.atype.btype.
    let (dtype, atype, btype) = if is_vset {
        if types.len() < 2 {
            return Err(bad(ins, "needs .atype.btype"));
        }
        (ScalarType::U32, types[0], types[1])
    } else {
        if types.len() < 3 {
            return Err(bad(ins, "needs .dtype.atype.btype"));
        }
        (types[0], types[1], types[2])
    };
    for t in [dtype, atype, btype] {
        if !matches!(t, ScalarType::U32 | ScalarType::S32) {
            return Err(unsupported(ins, "video operand types are .u32 or .s32"));
        }
    }
    need(ins, srcs, 2)?;
    for k in 0..srcs.len().min(3) {
        if src_prefix(ins, k) != Prefix::None {
            return Err(unsupported(ins, "a negated source operand is not a form of this instruction"));
        }
    }
    let (a, b) = (srcs[0] as u32, srcs[1] as u32);
    let ta = part_select(ins, a, is_signed(atype), src_sel(ins, 0))?;
    let shift = matches!(op, Opcode::VSHL | Opcode::VSHR);
    let tb = part_select(ins, b, !shift && is_signed(btype), src_sel(ins, 1))?;
    let tmp: i128 = match op {
        Opcode::VADD => ta + tb,
        Opcode::VSUB => ta - tb,
        Opcode::VABSDIFF => (ta - tb).abs(),
        Opcode::VMIN => ta.min(tb),
        Opcode::VMAX => ta.max(tb),
        Opcode::VSHL | Opcode::VSHR => {
            let n = if ins.has(Mod::CLAMP) {
                tb.min(32)
            } else if ins.has(Mod::WRAP) {
                tb & 0x1f
            } else {
                return Err(unsupported(ins, "neither .clamp nor .wrap"));
            };
            // ta is a sign- or zero-extended 33-bit value: the right shift
            // fills with its sign (zero for unsigned a).
            if op == Opcode::VSHL {
                ta << n
            } else {
                ta >> n
            }
        }
        _ => {
            let cmp = ins.cmp().ok_or_else(|| bad(ins, "no comparison"))?;
            int_compare(cmp, ta, tb).ok_or_else(|| unsupported(ins, "comparison is not .eq .ne .lt .le .gt .ge"))? as i128
        }
    };
    let signed_d = is_signed(dtype);
    let dsel = dst_sel(ins);
    let sat = ins.has(Mod::SAT);
    if is_vset && sat {
        return Err(unsupported(ins, "vset has no .sat"));
    }
    // The primary result is a signed 34-bit value; only vshl can leave that
    // range, and the manual does not say what then happens to it.
    let in_s34 = (-(1i128 << 33)..(1i128 << 33)).contains(&tmp);
    let mut tmp = tmp;
    if sat {
        if !in_s34 {
            return Ok(Eval::one(Val::unspecified()));
        }
        let (lo, hi) = match (dsel, signed_d) {
            (Some(Selector::Bytes(_)), true) => (i8::MIN as i128, i8::MAX as i128),
            (Some(Selector::Bytes(_)), false) => (0, u8::MAX as i128),
            (Some(Selector::Halves(_)), true) => (i16::MIN as i128, i16::MAX as i128),
            (Some(Selector::Halves(_)), false) => (0, u16::MAX as i128),
            (_, true) => (i32::MIN as i128, i32::MAX as i128),
            (_, false) => (0, u32::MAX as i128),
        };
        tmp = clamp(tmp, lo, hi);
    }
    let secop = op2(ins);
    let d: u32 = match (secop, dsel) {
        (Op2::None, None) => tmp as u32,
        (_, Some(_)) if secop != Op2::None => return Err(unsupported(ins, "secondary operation together with a destination selector")),
        (_, None) => {
            need(ins, srcs, 3)?;
            // "The sign of the third operand is based on dtype."
            let c = if signed_d { srcs[2] as u32 as i32 as i128 } else { srcs[2] as u32 as i128 };
            match secop {
                Op2::Add => tmp.wrapping_add(c) as u32,
                _ => {
                    // MIN/MAX on the .s33 intermediate: when tmp does not fit
                    // 33 bits, or is negative under an unsigned dtype ("the sign
                    // of the intermediate result depends on dtype"), the manual's
                    // pseudo-code and its prose disagree.
                    let in_s33 = (-(1i128 << 32)..(1i128 << 32)).contains(&tmp);
                    if !in_s33 || (!signed_d && tmp < 0) {
                        return Ok(Eval::one(Val::unspecified()));
                    }
                    if secop == Op2::Min {
                        tmp.min(c) as u32
                    } else {
                        tmp.max(c) as u32
                    }
                }
            }
        }
        (_, Some(sel)) => {
            need(ins, srcs, 3)?;
            let c = srcs[2] as u32;
            let t = tmp as u32;
            match sel {
                Selector::Halves(l) if l.len == 1 && l.digits[0] < 2 => {
                    let s = 16 * l.digits[0] as u32;
                    (t & 0xffff) << s | c & !(0xffff << s)
                }
                Selector::Bytes(l) if l.len == 1 && l.digits[0] < 4 => {
                    let s = 8 * l.digits[0] as u32;
                    (t & 0xff) << s | c & !(0xff << s)
                }
                _ => return Err(unsupported(ins, "destination selector is not one of .b0 .b1 .b2 .b3 .h0 .h1")),
            }
        }
    };
    Ok(Eval::exact(d as u128))
}

fn vmad(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let types = ins.types();
    if types.len() < 3 {
        return Err(bad(ins, "needs .dtype.atype.btype"));
    }
    let (dtype, atype, btype) = (types[0], types[1], types[2]);
    for t in [dtype, atype, btype] {
        if !matches!(t, ScalarType::U32 | ScalarType::S32) {
            return Err(unsupported(ins, "video operand types are .u32 or .s32"));
        }
    }
    need(ins, srcs, 3)?;
    let neg = |k: usize| -> Result<bool, EvalError> {
        match src_prefix(ins, k) {
            Prefix::None => Ok(false),
            Prefix::Neg => Ok(true),
            Prefix::Not => Err(unsupported(ins, "`!` on a vmad operand")),
        }
    };
    let (an, bn, cn) = (neg(0)?, neg(1)?, neg(2)?);
    // The raw register of a `-x` source (the caller passes -x).
    let raw = |k: usize, n: bool| if n { (srcs[k] as u32).wrapping_neg() } else { srcs[k] as u32 };
    if src_sel(ins, 2).is_some() || dst_sel(ins).is_some() {
        return Err(unsupported(ins, "vmad has no selector on c or d"));
    }
    let po = ins.has(Mod::PO);
    let prod_neg = an ^ bn;
    if po && (an || bn || cn) {
        return Err(unsupported(ins, "operands may not be negated in .po mode"));
    }
    if prod_neg && cn {
        // Not among the manual's operand combinations, and its pseudo-code
        // would then ignore c's negation.
        return Err(unsupported(ins, "both the product and c negated"));
    }
    let ta = part_select(ins, raw(0, an), is_signed(atype), src_sel(ins, 0))?;
    let tb = part_select(ins, raw(1, bn), is_signed(btype), src_sel(ins, 1))?;
    let signed_final = is_signed(atype) || is_signed(btype) || prod_neg || cn;
    let sat = ins.has(Mod::SAT);
    if sat && signed_final != is_signed(dtype) {
        // The pseudo-code clamps by the signedness of the final result and
        // never reads dtype; which range a mismatching dtype gives is not said.
        return Err(unsupported(ins, ".sat with a dtype whose signedness differs from the final result's"));
    }
    let scale = if ins.has(Mod::SHR7) {
        7
    } else if ins.has(Mod::SHR15) {
        15
    } else {
        0
    };
    let mut c = raw(2, cn);
    let intermediate_signed = is_signed(atype) || is_signed(btype) || prod_neg;
    if cn && !intermediate_signed && c >> 31 != 0 && (sat || scale != 0) {
        // (u32*u32) - u32: c is unsigned, but the pseudo-code negates it as a
        // 32-bit signed value; the two readings differ beyond the low 32 bits.
        return Ok(Eval::one(Val::unspecified()));
    }
    // tmp[127:0] = ta * tb, then the manual's negation by complement + lsb.
    let mut tmp: i128 = ta * tb;
    let mut lsb = 0i128;
    if po {
        lsb = 1;
    } else if prod_neg {
        tmp = !tmp;
        lsb = 1;
    } else if cn {
        c = !c;
        lsb = 1;
    }
    let c128: i128 = if signed_final { c as i32 as i128 } else { c as i128 };
    let tmp = tmp + c128 + lsb;
    let mut result = if scale != 0 {
        let r = (tmp >> scale) as u128 & mask(64);
        // "sign-extended if the final result is signed, zero-extended otherwise"
        if signed_final {
            sext(r, 64)
        } else {
            r as i128
        }
    } else {
        tmp
    };
    if sat {
        result = if signed_final { clamp(result, i32::MIN as i128, i32::MAX as i128) } else { clamp(result, 0, u32::MAX as i128) };
    }
    Ok(Eval::exact(result as u32 as u128))
}

// ---------------------------------------------------------------------------
// SIMD video instructions (§9.7.18.2)

fn video_simd(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let op = ins.opcode;
    let lanes: usize = match op {
        Opcode::VADD2 | Opcode::VSUB2 | Opcode::VAVRG2 | Opcode::VABSDIFF2 | Opcode::VMIN2 | Opcode::VMAX2 | Opcode::VSET2 => 2,
        _ => 4,
    };
    let lw = 32 / lanes as u32; // lane width in bits
    let is_vset = matches!(op, Opcode::VSET2 | Opcode::VSET4);
    let types = ins.types();
    let (dtype, atype, btype) = if is_vset {
        if types.len() < 2 {
            return Err(bad(ins, "needs .atype.btype"));
        }
        (ScalarType::U32, types[0], types[1])
    } else {
        if types.len() < 3 {
            return Err(bad(ins, "needs .dtype.atype.btype"));
        }
        (types[0], types[1], types[2])
    };
    for t in [dtype, atype, btype] {
        if !matches!(t, ScalarType::U32 | ScalarType::S32) {
            return Err(unsupported(ins, "video operand types are .u32 or .s32"));
        }
    }
    need(ins, srcs, 3)?;
    for k in 0..3 {
        if src_prefix(ins, k) != Prefix::None {
            return Err(unsupported(ins, "a negated source operand is not a form of this instruction"));
        }
    }
    if src_sel(ins, 2).is_some() {
        return Err(unsupported(ins, "selector on c"));
    }
    let add = ins.has(Mod::ADD);
    let sat = ins.has(Mod::SAT);
    if ins.has(Mod::MIN) || ins.has(Mod::MAX) {
        return Err(unsupported(ins, "the SIMD secondary operations are the merge and .add only"));
    }
    if add && sat {
        return Err(unsupported(ins, "saturation cannot be used with the secondary accumulate operation"));
    }
    // Lane selectors: digits written from the highest lane to lane 0
    // (.asel defaults to .h10/.b3210, .bsel to .h32/.b7654).
    let lane_sel = |sel: Option<Selector>, default: [u8; 4]| -> Result<[u8; 4], EvalError> {
        let l = match (sel, lanes) {
            (None, _) => return Ok(default),
            (Some(Selector::Halves(l)), 2) if l.len == 2 => l,
            (Some(Selector::Bytes(l)), 4) if l.len == 4 => l,
            _ => return Err(unsupported(ins, "source selector must be .hxy (2-way) or .bxyzw (4-way)")),
        };
        let mut r = [0u8; 4];
        for i in 0..lanes {
            r[i] = l.digits[lanes - 1 - i];
        }
        Ok(r)
    };
    let (adef, bdef) = if lanes == 2 { ([0, 1, 0, 0], [2, 3, 0, 0]) } else { ([0, 1, 2, 3], [4, 5, 6, 7]) };
    let asel = lane_sel(src_sel(ins, 0), adef)?;
    let bsel = lane_sel(src_sel(ins, 1), bdef)?;
    // The destination mask: which lanes receive a result.
    let mut lane_mask = [false; 4];
    match (dst_sel(ins), lanes) {
        (None, _) => lane_mask[..lanes].iter_mut().for_each(|m| *m = true),
        (Some(Selector::Halves(l)), 2) if matches!(l.digits(), [0] | [1] | [1, 0]) => l.digits().iter().for_each(|&d| lane_mask[d as usize] = true),
        (Some(Selector::Bytes(l)), 4) if valid_byte_mask(l.digits()) => l.digits().iter().for_each(|&d| lane_mask[d as usize] = true),
        _ => return Err(unsupported(ins, "destination mask is not one of the manual's masks")),
    }
    let (a, b, c) = (srcs[0] as u32, srcs[1] as u32, srcs[2] as u32);
    let pool = (b as u64) << 32 | a as u64;
    let extract = |sel: u8, signed: bool| -> i128 {
        let x = (pool >> (lw * sel as u32)) as u128 & mask(lw);
        if signed {
            sext(x, lw)
        } else {
            x as i128
        }
    };
    let cmp = if is_vset {
        let cmp = ins.cmp().ok_or_else(|| bad(ins, "no comparison"))?;
        if int_compare(cmp, 0, 0).is_none() {
            return Err(unsupported(ins, "comparison is not .eq .ne .lt .le .gt .ge"));
        }
        Some(cmp)
    } else {
        None
    };
    let mut t = [0i128; 4];
    for i in 0..lanes {
        let va = extract(asel[i], is_signed(atype));
        let vb = extract(bsel[i], is_signed(btype));
        t[i] = match op {
            Opcode::VADD2 | Opcode::VADD4 => va + vb,
            Opcode::VSUB2 | Opcode::VSUB4 => va - vb,
            Opcode::VAVRG2 | Opcode::VAVRG4 => {
                if va + vb >= 0 {
                    (va + vb + 1) >> 1
                } else {
                    (va + vb) >> 1
                }
            }
            Opcode::VABSDIFF2 | Opcode::VABSDIFF4 => (va - vb).abs(),
            Opcode::VMIN2 | Opcode::VMIN4 => va.min(vb),
            Opcode::VMAX2 | Opcode::VMAX4 => va.max(vb),
            _ => int_compare(cmp.unwrap(), va, vb).unwrap() as i128,
        };
        if sat {
            let (lo, hi) = if is_signed(dtype) { (-(1i128 << (lw - 1)), (1i128 << (lw - 1)) - 1) } else { (0, (1i128 << lw) - 1) };
            t[i] = clamp(t[i], lo, hi);
        }
    }
    let d: u32 = if add {
        // d = c + the results of the masked lanes.
        let mut d = c as i128;
        for i in 0..lanes {
            if lane_mask[i] {
                if t[i] < 0 && !is_signed(dtype) {
                    // A negative lane result under an unsigned dtype: the
                    // pseudo-code adds it as a signed value, the prose says the
                    // intermediate's sign follows dtype.
                    return Ok(Eval::one(Val::unspecified()));
                }
                d += t[i];
            }
        }
        d as u32
    } else {
        if is_vset && lane_mask[..lanes].iter().any(|m| !m) {
            // The description copies the unselected lanes from b, the
            // pseudo-code from c.
            return Err(unsupported(ins, "merge with a partial mask (the manual gives both b and c as the source of the other lanes)"));
        }
        let mut d = 0u32;
        for i in 0..lanes {
            let s = lw * i as u32;
            let v = if lane_mask[i] { t[i] as u32 } else { c >> s };
            d |= (v & mask(lw) as u32) << s;
        }
        d
    };
    Ok(Eval::exact(d as u128))
}

/// The manual's `.mask` set of the 4-way SIMD instructions: lane digits in
/// decreasing order, nonempty.
fn valid_byte_mask(d: &[u8]) -> bool {
    !d.is_empty() && d.iter().all(|&x| x < 4) && d.windows(2).all(|w| w[0] > w[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Quality;

    /// Parses one instruction (with every register class declared).
    pub(crate) fn ins(text: &str) -> Instruction {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{ .reg .b32 %r<20>; .reg .f32 %f<20>; .reg .pred %p<20>; .reg .b16 %h<20>; .reg .b64 %rd<20>; .reg .f64 %fd<20>; .reg .b128 %q<20>; .reg .b8 %c<20>;\n{text}\nret; }}"
        );
        let m = crate::parse::parse_str(&src).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        for it in &m.items {
            if let crate::ir::Item::Func(f) = it {
                return f.instructions().next().unwrap().clone();
            }
        }
        unreachable!()
    }

    fn ev(text: &str, srcs: &[u128]) -> Vec<u128> {
        let i = ins(text);
        let r = crate::eval::eval(&i, srcs, false).unwrap_or_else(|e| panic!("{text}: {e}"));
        for v in &r.dests {
            assert_eq!(v.quality, Quality::Exact, "{text} {srcs:x?}");
        }
        r.dests.iter().map(|v| v.bits).collect()
    }

    fn ev1(text: &str, srcs: &[u128]) -> u128 {
        let d = ev(text, srcs);
        assert_eq!(d.len(), 1, "{text}");
        d[0]
    }

    fn quality(text: &str, srcs: &[u128]) -> Quality {
        let r = crate::eval::eval(&ins(text), srcs, false).unwrap();
        r.dests[0].quality
    }

    fn is_unsupported(text: &str, srcs: &[u128]) -> bool {
        matches!(crate::eval::eval(&ins(text), srcs, false), Err(EvalError::Unsupported(_)))
    }

    // Edge-biased values from the shared generator (`test_rng`).
    use crate::eval::test_rng::Rng;
    impl Rng {
        /// Mostly edge values, sometimes random ones.
        pub(crate) fn edgy(&mut self, w: u32) -> u128 {
            let m = mask(w);
            let r = self.next();
            let v = match r % 8 {
                0 => 0,
                1 => 1,
                2 => m,
                3 => m >> 1,
                4 => (m >> 1) + 1,
                5 => (self.next() % 70) as u128,
                _ => ((self.next() as u128) << 64 | self.next() as u128) & m,
            };
            v & m
        }
    }

    /// Every form of this family's and the compare family's opcodes, with
    /// every value of every modifier slot: evaluating never panics and gives a
    /// value or `Unsupported`, never `BadOperands`, with one result per
    /// written operand element.
    #[test]
    fn every_form_evaluates_or_is_unsupported() {
        use crate::ir::{PairPred, RegId};
        use crate::isa::SlotData;
        let mut rng = Rng::new(17);
        let mut counts = (0usize, 0usize);
        for &op in OPCODES.iter().chain(crate::eval::compare::OPCODES) {
            for form in op.forms() {
                let slots: &[SlotData] = form.slots();
                let choices: Vec<Vec<Mod>> = slots
                    .iter()
                    .map(|s| {
                        let mut v: Vec<Mod> = s.allowed().collect();
                        if s.optional {
                            v.push(Mod::NONE);
                        }
                        v
                    })
                    .collect();
                let total: usize = choices.iter().map(|c| c.len()).product();
                let mut combos: Vec<Vec<Mod>> = Vec::new();
                if total <= 100_000 {
                    let mut idx = vec![0usize; slots.len()];
                    loop {
                        combos.push(idx.iter().zip(&choices).map(|(&k, c)| c[k]).collect());
                        let mut i = 0;
                        while i < idx.len() {
                            idx[i] += 1;
                            if idx[i] < choices[i].len() {
                                break;
                            }
                            idx[i] = 0;
                            i += 1;
                        }
                        if i == idx.len() {
                            break;
                        }
                    }
                } else {
                    for (k, c) in choices.iter().enumerate() {
                        for &m in c {
                            let mut v: Vec<Mod> = choices.iter().map(|c| c[0]).collect();
                            v[k] = m;
                            combos.push(v);
                        }
                    }
                }
                for mods in combos {
                    let mut dests = 0;
                    let operands: crate::ir::Operands = form
                        .operands()
                        .iter()
                        .enumerate()
                        .map(|(k, o)| {
                            let pair = o.name.contains('|');
                            if o.write {
                                dests += if pair { 2 } else { 1 };
                            }
                            if pair {
                                Operand::Pair(Box::new(Operand::reg(RegId(k as u32))), PairPred::Reg(RegId(100)))
                            } else {
                                Operand::reg(RegId(k as u32))
                            }
                        })
                        .collect();
                    let i = Instruction { guard: None, opcode: op, form, mods: mods.iter().copied().collect(), operands };
                    for _ in 0..3 {
                        let srcs: Vec<u128> = (0..8).map(|_| rng.edgy(64)).collect();
                        match crate::eval::eval(&i, &srcs, false) {
                            Ok(e) => {
                                counts.0 += 1;
                                if i.vector().is_none() {
                                    assert_eq!(e.dests.len(), dests, "{:?} {mods:?}", form);
                                }
                            }
                            Err(EvalError::Unsupported(_)) => counts.1 += 1,
                            Err(e) => panic!("{:?} {mods:?}: {e}", form),
                        }
                    }
                }
            }
        }
        assert!(counts.0 > 10_000, "{counts:?}");
    }

    #[test]
    fn handles_only_its_opcodes() {
        assert!(eval(&ins("add.u32 %r1, %r2, %r3;"), &[1, 2], false).is_none());
        for &op in OPCODES {
            assert!(crate::eval::handles(op));
        }
    }

    #[test]
    fn and_or_xor_not() {
        for (t, w) in [("b16", 16u32), ("b32", 32), ("b64", 64)] {
            let r = if w == 16 { "%h" } else if w == 32 { "%r" } else { "%rd" };
            let m = mask(w);
            let a = 0xf0f0_f0f0_f0f0_f0f0u128 & m;
            let b = 0xff00_ff00_ff00_ff00u128 & m;
            assert_eq!(ev1(&format!("and.{t} {r}1, {r}2, {r}3;"), &[a, b]), 0xf000_f000_f000_f000 & m);
            assert_eq!(ev1(&format!("or.{t} {r}1, {r}2, {r}3;"), &[a, b]), 0xfff0_fff0_fff0_fff0 & m);
            assert_eq!(ev1(&format!("xor.{t} {r}1, {r}2, {r}3;"), &[a, b]), 0x0ff0_0ff0_0ff0_0ff0 & m);
            assert_eq!(ev1(&format!("not.{t} {r}1, {r}2;"), &[a]), 0x0f0f_0f0f_0f0f_0f0f & m);
            assert_eq!(ev1(&format!("not.{t} {r}1, {r}2;"), &[0]), m);
            assert_eq!(ev1(&format!("not.{t} {r}1, {r}2;"), &[m]), 0);
            // Sources wider than the type are truncated to it.
            assert_eq!(ev1(&format!("and.{t} {r}1, {r}2, {r}3;"), &[u128::MAX, u128::MAX]), m);
            assert_eq!(ev1(&format!("xor.{t} {r}1, {r}2, {r}3;"), &[m, 1]), m - 1);
        }
    }

    #[test]
    fn bitwise_random_against_host() {
        let mut rng = Rng::new(23);
        for _ in 0..2000 {
            let (a, b) = (rng.edgy(64) as u64, rng.edgy(64) as u64);
            assert_eq!(ev1("and.b64 %rd1, %rd2, %rd3;", &[a as u128, b as u128]), (a & b) as u128);
            assert_eq!(ev1("or.b64 %rd1, %rd2, %rd3;", &[a as u128, b as u128]), (a | b) as u128);
            assert_eq!(ev1("xor.b64 %rd1, %rd2, %rd3;", &[a as u128, b as u128]), (a ^ b) as u128);
            assert_eq!(ev1("not.b64 %rd1, %rd2;", &[a as u128]), !a as u128);
            assert_eq!(ev1("cnot.b64 %rd1, %rd2;", &[a as u128]), (a == 0) as u128);
            assert_eq!(ev1("and.b32 %r1, %r2, %r3;", &[a as u128, b as u128]), (a as u32 & b as u32) as u128);
            assert_eq!(ev1("not.b16 %h1, %h2;", &[a as u128]), !(a as u16) as u128);
            assert_eq!(ev1("cnot.b16 %h1, %h2;", &[a as u128]), (a as u16 == 0) as u128);
        }
    }

    #[test]
    fn predicate_logic() {
        for a in 0..2u128 {
            for b in 0..2u128 {
                assert_eq!(ev1("and.pred %p1, %p2, %p3;", &[a, b]), a & b);
                assert_eq!(ev1("or.pred %p1, %p2, %p3;", &[a, b]), a | b);
                assert_eq!(ev1("xor.pred %p1, %p2, %p3;", &[a, b]), a ^ b);
                // `!p` arrives negated (the caller applies the prefix).
                assert_eq!(ev1("and.pred %p1, !%p2, %p3;", &[a, b]), a & b);
                assert_eq!(ev1("or.pred %p1, %p2, !%p3;", &[a, b]), a | b);
            }
            assert_eq!(ev1("not.pred %p1, %p2;", &[a]), 1 - a);
            assert_eq!(ev1("mov.pred %p1, %p2;", &[a]), a);
        }
    }

    #[test]
    fn cnot_values() {
        for (t, r, w) in [("b16", "%h", 16u32), ("b32", "%r", 32), ("b64", "%rd", 64)] {
            let text = format!("cnot.{t} {r}1, {r}2;");
            assert_eq!(ev1(&text, &[0]), 1);
            assert_eq!(ev1(&text, &[1]), 0);
            assert_eq!(ev1(&text, &[mask(w)]), 0);
            assert_eq!(ev1(&text, &[1u128 << (w - 1)]), 0);
            // Bits above the type's width are not part of a.
            assert_eq!(ev1(&text, &[1u128 << w]), 1);
        }
    }

    #[test]
    fn lop3_table_identity() {
        // The manual: immLut = F(0xF0, 0xCC, 0xAA).
        for lut in 0..256u128 {
            assert_eq!(ev1("lop3.b32 %r1, %r2, %r3, %r4, %r5;", &[0xF0, 0xCC, 0xAA, lut]) & 0xff, lut);
        }
        // Worked examples of the manual.
        let mut rng = Rng::new(3);
        for _ in 0..2000 {
            let (a, b, c) = (rng.next() as u32, rng.next() as u32, rng.next() as u32);
            let s = [a as u128, b as u128, c as u128];
            let l = |lut: u128| ev1("lop3.b32 %r1, %r2, %r3, %r4, %r5;", &[s[0], s[1], s[2], lut]) as u32;
            assert_eq!(l(0x80), a & b & c);
            assert_eq!(l(0xFE), a | b | c);
            assert_eq!(l(0x40), a & b & !c);
            assert_eq!(l(0x1A), (a & b | c) ^ a);
            assert_eq!(l(0x00), 0);
            assert_eq!(l(0xFF), u32::MAX);
            assert_eq!(l(0xF0), a);
            assert_eq!(l(0xCC), b);
            assert_eq!(l(0xAA), c);
            assert_eq!(l(0x96), a ^ b ^ c);
            assert_eq!(l(0xE8), (a & b) | (a & c) | (b & c));
            assert_eq!(l(0xCA), (a & b) | (!a & c));
        }
        assert!(is_unsupported("lop3.b32 %r1, %r2, %r3, %r4, %r5;", &[0, 0, 0, 256]));
    }

    #[test]
    fn lop3_bool_op() {
        // p = (d != 0) BoolOp q
        let or = "lop3.or.b32 %r1|%p1, %r2, %r3, %r4, %r5, %p2;";
        let and = "lop3.and.b32 %r1|%p1, %r2, %r3, %r4, %r5, %p2;";
        assert_eq!(ev(or, &[0, 0, 0, 0x80, 0]), vec![0, 0]);
        assert_eq!(ev(or, &[0, 0, 0, 0x80, 1]), vec![0, 1]);
        assert_eq!(ev(or, &[1, 1, 1, 0x80, 0]), vec![1, 1]);
        assert_eq!(ev(and, &[1, 1, 1, 0x80, 0]), vec![1, 0]);
        assert_eq!(ev(and, &[1, 1, 1, 0x80, 1]), vec![1, 1]);
        assert_eq!(ev(and, &[0x8000_0000, 0x8000_0000, 0x8000_0000, 0x80, 1]), vec![0x8000_0000, 1]);
        assert_eq!(ev(and, &[0, 1, 1, 0x80, 1]), vec![0, 0]);
        // The sink destination still gives two results.
        assert_eq!(ev("lop3.and.b32 _|%p1, %r2, %r3, %r4, %r5, %p2;", &[0, 0, 0, 0x3f, 1]), vec![0xffff_ffff, 1]);
        assert_eq!(ev("lop3.and.b32 _|%p1, %r2, %r3, %r4, %r5, %p2;", &[u32::MAX as u128; 3].iter().copied().chain([0x3f, 1]).collect::<Vec<_>>()), vec![0, 0]);
    }

    #[test]
    fn shf_values() {
        // [b, a] = 0x89abcdef_01234567
        let (a, b) = (0x0123_4567u128, 0x89ab_cdefu128);
        let l = |mode: &str, n: u128| ev1(&format!("shf.l.{mode}.b32 %r1, %r2, %r3, %r4;"), &[a, b, n]);
        let r = |mode: &str, n: u128| ev1(&format!("shf.r.{mode}.b32 %r1, %r2, %r3, %r4;"), &[a, b, n]);
        let v: u64 = 0x89ab_cdef_0123_4567;
        for n in 0..32u32 {
            assert_eq!(l("clamp", n as u128), ((v << n) >> 32) as u128, "n={n}");
            assert_eq!(l("wrap", n as u128), ((v << n) >> 32) as u128);
            assert_eq!(r("clamp", n as u128), ((v >> n) as u32) as u128);
            assert_eq!(r("wrap", n as u128), ((v >> n) as u32) as u128);
        }
        // n = 0: shf.l gives b, shf.r gives a.
        assert_eq!(l("clamp", 0), b);
        assert_eq!(r("clamp", 0), a);
        // clamp: n >= 32 acts as 32: shf.l gives a, shf.r gives b.
        for n in [32u128, 33, 63, 64, 1000, 0xffff_ffff] {
            assert_eq!(l("clamp", n), a);
            assert_eq!(r("clamp", n), b);
        }
        // wrap: n & 31.
        assert_eq!(l("wrap", 32), b);
        assert_eq!(r("wrap", 32), a);
        assert_eq!(l("wrap", 36), l("clamp", 4));
        assert_eq!(r("wrap", 0xffff_ffff), r("clamp", 31));
        // Rotates by giving the same value twice.
        let x = 0x8000_0001u128;
        assert_eq!(ev1("shf.l.wrap.b32 %r1, %r2, %r2, %r3;", &[x, x, 1]), 0x0000_0003);
        assert_eq!(ev1("shf.r.wrap.b32 %r1, %r2, %r2, %r3;", &[x, x, 1]), 0xc000_0000);
    }

    #[test]
    fn shl_shr() {
        for (t, r, w) in [("16", "%h", 16u32), ("32", "%r", 32), ("64", "%rd", 64)] {
            let m = mask(w);
            let top = 1u128 << (w - 1);
            let shl = format!("shl.b{t} {r}1, {r}2, %r3;");
            let shr_b = format!("shr.b{t} {r}1, {r}2, %r3;");
            let shr_u = format!("shr.u{t} {r}1, {r}2, %r3;");
            let shr_s = format!("shr.s{t} {r}1, {r}2, %r3;");
            assert_eq!(ev1(&shl, &[1, 0]), 1);
            assert_eq!(ev1(&shl, &[1, (w - 1) as u128]), top);
            assert_eq!(ev1(&shl, &[m, 1]), m - 1);
            assert_eq!(ev1(&shr_s, &[top, 1]), top | top >> 1);
            assert_eq!(ev1(&shr_s, &[top, (w - 1) as u128]), m);
            assert_eq!(ev1(&shr_s, &[top >> 1, (w - 2) as u128]), 1);
            assert_eq!(ev1(&shr_u, &[top, (w - 1) as u128]), 1);
            assert_eq!(ev1(&shr_b, &[top, 1]), top >> 1);
            for n in [w as u128, w as u128 + 1, 64, 65, 127, 128, 0x8000_0000, 0xffff_ffff] {
                assert_eq!(ev1(&shl, &[m, n]), 0, "{shl} {n}");
                assert_eq!(ev1(&shr_u, &[m, n]), 0);
                assert_eq!(ev1(&shr_b, &[m, n]), 0);
                assert_eq!(ev1(&shr_s, &[top, n]), m, "{shr_s} {n}");
                assert_eq!(ev1(&shr_s, &[top - 1, n]), 0);
                assert_eq!(ev1(&shr_s, &[m, n]), m);
            }
            // The shift amount is the 32-bit value of b (bits above are not part of it).
            assert_eq!(ev1(&shl, &[1, 1u128 << 32 | 1]), 2);
        }
        // Cross-check against the host's shifts for in-range amounts.
        let mut rng = Rng::new(7);
        for _ in 0..3000 {
            let a = rng.next();
            let n = (rng.next() % 80) as u32;
            let e = |x: Option<u64>| x.unwrap_or(0) as u128;
            assert_eq!(ev1("shl.b64 %rd1, %rd2, %r3;", &[a as u128, n as u128]), e(a.checked_shl(n)));
            assert_eq!(ev1("shr.u64 %rd1, %rd2, %r3;", &[a as u128, n as u128]), e(a.checked_shr(n)));
            assert_eq!(ev1("shr.s64 %rd1, %rd2, %r3;", &[a as u128, n as u128]), ((a as i64) >> n.min(63)) as u64 as u128);
            let a32 = a as u32;
            assert_eq!(ev1("shr.s32 %r1, %r2, %r3;", &[a32 as u128, n as u128]), ((a32 as i32) >> n.min(31)) as u32 as u128);
            assert_eq!(ev1("shl.b32 %r1, %r2, %r3;", &[a32 as u128, n as u128]), a32.checked_shl(n).unwrap_or(0) as u128);
            let a16 = a as u16;
            assert_eq!(ev1("shr.s16 %h1, %h2, %r3;", &[a16 as u128, n as u128]), ((a16 as i16) >> n.min(15)) as u16 as u128);
            assert_eq!(ev1("shr.u16 %h1, %h2, %r3;", &[a16 as u128, n as u128]), a16.checked_shr(n).unwrap_or(0) as u128);
        }
    }

    #[test]
    fn prmt_default_mode() {
        // {b, a} = {{b7, b6, b5, b4}, {b3, b2, b1, b0}}
        let (a, b) = (0x8382_8180u128, 0x0706_0504u128);
        let p = |c: u128| ev1("prmt.b32 %r1, %r2, %r3, %r4;", &[a, b, c]);
        assert_eq!(p(0x3210), a);
        assert_eq!(p(0x7654), b);
        assert_eq!(p(0x0123), 0x8081_8283);
        assert_eq!(p(0x4567), 0x0405_0607);
        assert_eq!(p(0x0000), 0x8080_8080);
        assert_eq!(p(0x5140), 0x0581_0480);
        // msb of a selector: replicate the sign of the byte.
        assert_eq!(p(0x8888), 0xffff_ffff);
        assert_eq!(p(0xcccc), 0);
        assert_eq!(p(0x3c1a), 0x8300_81ff);
        assert_eq!(p(0x3b1a), 0x83ff_81ff);
        // Bits above c[15:0] are ignored.
        assert_eq!(p(0xffff_3210), a);
        // Byte extraction from a 64-bit pair.
        let mut rng = Rng::new(11);
        for _ in 0..1000 {
            let (a, b, c) = (rng.next() as u32, rng.next() as u32, rng.next() as u32);
            let bytes: Vec<u8> = a.to_le_bytes().into_iter().chain(b.to_le_bytes()).collect();
            let mut d = [0u8; 4];
            for i in 0..4 {
                let s = (c >> (4 * i)) & 0xf;
                let byte = bytes[(s & 7) as usize];
                d[i] = if s & 8 == 0 { byte } else if byte >= 0x80 { 0xff } else { 0 };
            }
            assert_eq!(ev1("prmt.b32 %r1, %r2, %r3, %r4;", &[a as u128, b as u128, c as u128]), u32::from_le_bytes(d) as u128);
        }
    }

    #[test]
    fn prmt_modes() {
        // Source bytes: byte k holds 0x10 + k, so the result spells the manual's
        // table (d.b3 d.b2 d.b1 d.b0 per row c[1:0] = 0..3).
        let (a, b) = (0x1312_1110u128, 0x1716_1514u128);
        let table: [(&str, [[u8; 4]; 4]); 6] = [
            ("f4e", [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]]),
            ("b4e", [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]]),
            ("rc8", [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]),
            ("ecl", [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]]),
            ("ecr", [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]]),
            ("rc16", [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]]),
        ];
        for (mode, rows) in table {
            for (sel, row) in rows.iter().enumerate() {
                let want = u32::from_be_bytes(row.map(|k| 0x10 + k)) as u128;
                // Only c[1:0] matters (no sign replication in these modes).
                for hi in [0u128, 0xffff_fff8, 0x8888] {
                    let c = hi & !3 | sel as u128;
                    assert_eq!(ev1(&format!("prmt.b32.{mode} %r1, %r2, %r3, %r4;"), &[a, b, c]), want, "{mode} {c:#x}");
                }
            }
        }
        // No sign extension in the special modes.
        assert_eq!(ev1("prmt.b32.rc8 %r1, %r2, %r3, %r4;", &[0x80, 0, 0]), 0x8080_8080);
    }

    #[test]
    fn mov_forms() {
        assert_eq!(ev1("mov.u32 %r1, %r2;", &[0xdead_beef]), 0xdead_beef);
        assert_eq!(ev1("mov.u16 %h1, %h2;", &[0x1_2345]), 0x2345);
        assert_eq!(ev1("mov.f32 %f1, %f2;", &[0x7fc0_0001]), 0x7fc0_0001);
        assert_eq!(ev1("mov.f64 %fd1, %fd2;", &[0xfff8_0000_0000_0001]), 0xfff8_0000_0000_0001);
        assert_eq!(ev1("mov.b64 %rd1, %rd2;", &[u64::MAX as u128]), u64::MAX as u128);
        assert_eq!(ev1("mov.b128 %q1, %q2;", &[u128::MAX]), u128::MAX);
        // Pack: low element first.
        assert_eq!(ev1("mov.b64 %rd1, {%r1, %r2};", &[0x1111_2222, 0x3333_4444]), 0x3333_4444_1111_2222);
        assert_eq!(ev1("mov.b32 %r1, {%h1, %h2};", &[0xaaaa, 0xbbbb]), 0xbbbb_aaaa);
        assert_eq!(ev1("mov.b32 %r1, {%c1, %c2, %c3, %c4};", &[0x01, 0x02, 0x03, 0x04]), 0x0403_0201);
        assert_eq!(ev1("mov.b16 %h1, {%c1, %c2};", &[0x1ff, 0x2ee]), 0xeeff);
        assert_eq!(ev1("mov.b64 %rd1, {%h1, %h2, %h3, %h4};", &[1, 2, 3, 0xffff]), 0xffff_0003_0002_0001);
        assert_eq!(ev1("mov.b128 %q1, {%rd1, %rd2};", &[1, 2]), 2u128 << 64 | 1);
        assert_eq!(ev1("mov.b128 %q1, {%r1, %r2, %r3, %r4};", &[1, 2, 3, 4]), 4u128 << 96 | 3u128 << 64 | 2u128 << 32 | 1);
        // Unpack.
        assert_eq!(ev("mov.b64 {%r1, %r2}, %rd1;", &[0x3333_4444_1111_2222]), vec![0x1111_2222, 0x3333_4444]);
        assert_eq!(ev("mov.b32 {%h1, %h2}, %r1;", &[0xbbbb_aaaa]), vec![0xaaaa, 0xbbbb]);
        assert_eq!(ev("mov.b32 {%c1, %c2, %c3, %c4}, %r1;", &[0x0403_0201]), vec![1, 2, 3, 4]);
        assert_eq!(ev("mov.b64 {%r1, _}, %rd1;", &[0x3333_4444_1111_2222]), vec![0x1111_2222, 0x3333_4444]);
        assert_eq!(ev("mov.b128 {%rd1, %rd2}, %q1;", &[2u128 << 64 | 1]), vec![1, 2]);
        assert_eq!(ev("mov.b64 {%h1, %h2, %h3, %h4}, %rd1;", &[0xffff_0003_0002_0001]), vec![1, 2, 3, 0xffff]);
        // Vector moves.
        assert_eq!(ev("mov.v2.b32 {%r1, %r2}, {%r3, %r4};", &[5, 6]), vec![5, 6]);
        assert_eq!(ev("mov.v4.u16 {%h1, %h2, %h3, %h4}, {%h5, %h6, %h7, %h8};", &[1, 2, 3, 0x1_0004]), vec![1, 2, 3, 4]);
        // Not forms of the manual.
        assert!(is_unsupported("mov.u64 %rd1, {%r1, %r2};", &[1, 2]));
        assert!(is_unsupported("mov.b16 %h1, {%c1, %c2, %c3, %c4};", &[1, 2, 3, 4]));
    }

    fn sel(text: &str, srcs: &[u32]) -> u32 {
        ev1(text, &srcs.iter().map(|&x| x as u128).collect::<Vec<_>>()) as u32
    }

    #[test]
    fn video_scalar_basic() {
        // The manual's examples and hand-derived values.
        assert_eq!(sel("vadd.s32.u32.s32.sat %r1, %r2.b0, %r3.h0;", &[0x0000_00ff, 0x0000_8000]), (255 - 32768) as u32);
        assert_eq!(sel("vadd.u32.u32.u32 %r1, %r2, %r3;", &[u32::MAX, u32::MAX]), u32::MAX - 1);
        assert_eq!(sel("vadd.u32.u32.u32.sat %r1, %r2, %r3;", &[u32::MAX, u32::MAX]), u32::MAX);
        assert_eq!(sel("vadd.s32.s32.s32.sat %r1, %r2, %r3;", &[0x7fff_ffff, 1]), 0x7fff_ffff);
        assert_eq!(sel("vadd.s32.s32.s32.sat %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]), 0x8000_0000);
        assert_eq!(sel("vadd.s32.s32.s32 %r1, %r2, %r3;", &[0x8000_0000, 0xffff_ffff]), 0x7fff_ffff);
        assert_eq!(sel("vsub.u32.u32.u32.sat %r1, %r2, %r3;", &[0, 1]), 0);
        assert_eq!(sel("vsub.u32.u32.u32 %r1, %r2, %r3;", &[0, 1]), u32::MAX);
        assert_eq!(sel("vsub.s32.s32.u32.sat %r1, %r2.h1, %r3.h1;", &[0x8000_0000, 0xffff_0000]), (-32768i32 - 65535) as u32);
        assert_eq!(sel("vabsdiff.u32.s32.s32 %r1, %r2, %r3;", &[0x8000_0000, 0x7fff_ffff]), u32::MAX);
        assert_eq!(sel("vabsdiff.s32.s32.s32.sat %r1, %r2, %r3;", &[0x8000_0000, 0x7fff_ffff]), 0x7fff_ffff);
        assert_eq!(sel("vmin.s32.s32.u32 %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0xffff_ffff);
        assert_eq!(sel("vmin.u32.u32.u32 %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0);
        assert_eq!(sel("vmax.s32.s32.s32 %r1, %r2.b1, %r3.b2;", &[0x0000_8000, 0x007f_0000]), 0x7f);
        assert_eq!(sel("vmax.s32.s32.s32 %r1, %r2.b1, %r3.b2;", &[0x0000_8000, 0x00ff_0000]), 0xffff_ffff);
        // Secondary operations; c's sign follows dtype.
        assert_eq!(sel("vmin.s32.s32.s32.add %r1, %r2, %r3, %r4;", &[5, 7, 0xffff_ffff]), 4);
        assert_eq!(sel("vadd.s32.s32.s32.min %r1, %r2, %r3, %r4;", &[5, 7, 0xffff_ffff]), 0xffff_ffff);
        assert_eq!(sel("vadd.u32.u32.u32.min %r1, %r2, %r3, %r4;", &[5, 7, 0xffff_ffff]), 12);
        assert_eq!(sel("vadd.u32.u32.u32.max %r1, %r2, %r3, %r4;", &[5, 7, 3]), 12);
        assert_eq!(sel("vmin.s32.s32.s32.sat.add %r1, %r2, %r3, %r4;", &[0x8000_0000, 0, 0xffff_ffff]), 0x7fff_ffff);
        // Data merge; .sat clamps to the sub-word range.
        assert_eq!(sel("vabsdiff.s32.s32.s32.sat %r1.h0, %r2.b0, %r3.b2, %r4;", &[0x80, 0x007f_0000, 0x1234_5678]), 0x1234_00ff);
        assert_eq!(sel("vadd.s32.s32.s32.sat %r1.b1, %r2, %r3, %r4;", &[100, 100, 0x1234_5678]), 0x1234_7f78);
        assert_eq!(sel("vadd.u32.u32.u32.sat %r1.b3, %r2, %r3, %r4;", &[100, 200, 0x1234_5678]), 0xff34_5678);
        assert_eq!(sel("vsub.u32.u32.u32.sat %r1.h1, %r2, %r3, %r4;", &[1, 2, 0x1234_5678]), 0x0000_5678);
        assert_eq!(sel("vsub.s32.s32.s32.sat %r1.h1, %r2, %r3, %r4;", &[1, 0x8000_0000, 0x1234_5678]), 0x7fff_5678);
        assert_eq!(sel("vadd.u32.u32.u32 %r1.b2, %r2, %r3, %r4;", &[0x1ff, 0x1, 0x1234_5678]), 0x1200_5678);
        // Ambiguous readings give no value.
        assert_eq!(quality("vsub.u32.u32.u32.min %r1, %r2, %r3, %r4;", &[0, 1, 5]), Quality::Unspecified);
        assert_eq!(quality("vadd.u32.u32.u32.max %r1, %r2, %r3, %r4;", &[u32::MAX as u128, u32::MAX as u128, 5]), Quality::Unspecified);
    }

    #[test]
    fn video_shifts_and_vset() {
        assert_eq!(sel("vshl.u32.u32.u32.clamp %r1, %r2, %r3;", &[1, 31]), 0x8000_0000);
        assert_eq!(sel("vshl.u32.u32.u32.clamp %r1, %r2, %r3;", &[1, 40]), 0);
        assert_eq!(sel("vshl.u32.u32.u32.wrap %r1, %r2, %r3;", &[1, 33]), 2);
        assert_eq!(sel("vshl.u32.u32.u32.clamp.sat %r1, %r2, %r3;", &[1, 32]), u32::MAX);
        assert_eq!(sel("vshl.s32.u32.u32.clamp.sat %r1, %r2, %r3;", &[1, 31]), 0x7fff_ffff);
        assert_eq!(quality("vshl.u32.u32.u32.clamp.sat %r1, %r2, %r3;", &[4, 32]), Quality::Unspecified);
        assert_eq!(sel("vshr.s32.s32.u32.clamp %r1, %r2, %r3;", &[0x8000_0000, 40]), 0xffff_ffff);
        assert_eq!(sel("vshr.u32.u32.u32.clamp %r1, %r2, %r3;", &[0x8000_0000, 40]), 0);
        assert_eq!(sel("vshr.u32.u32.u32.wrap %r1, %r2, %r3.h1;", &[0x8000_0000, 0x0021_0000]), 0x4000_0000);
        assert_eq!(sel("vshr.s32.s32.u32.wrap %r1, %r2.b0, %r3;", &[0x80, 4]), 0xffff_fff8);
        assert_eq!(sel("vset.s32.u32.lt %r1, %r2, %r3;", &[0xffff_ffff, 0]), 1);
        assert_eq!(sel("vset.u32.u32.lt %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0);
        assert_eq!(sel("vset.u32.u32.ne %r1, %r2, %r3.h1;", &[5, 0x0005_0000]), 0);
        assert_eq!(sel("vset.u32.u32.ge.add %r1, %r2, %r3, %r4;", &[5, 5, 41]), 42);
        assert_eq!(sel("vset.u32.u32.ge.max %r1, %r2, %r3, %r4;", &[5, 5, 0]), 1);
        assert_eq!(sel("vset.u32.u32.ge.min %r1, %r2, %r3, %r4;", &[5, 5, 0xffff_ffff]), 1);
        assert_eq!(sel("vset.s32.s32.gt %r1.b3, %r2, %r3, %r4;", &[5, 4, 0x1234_5678]), 0x0134_5678);
    }

    #[test]
    fn video_vmad() {
        // A `-x` source arrives as the register's negation (the caller applies
        // the prefix); vmad negates the product or c, not the register.
        let n = |x: u32| x.wrapping_neg();
        assert_eq!(sel("vmad.s32.s32.s32 %r1, -%r2.h1, %r3, %r4;", &[n(0x0003_0000), 5, 7]), (-8i32) as u32);
        assert_eq!(sel("vmad.s32.u32.u32 %r1, -%r2.b0, %r3, %r4;", &[n(0xff), 2, 0]), (-510i32) as u32);
        assert_eq!(sel("vmad.s32.u32.u32 %r1, %r2, -%r3, %r4;", &[0xffff_ffff, n(0xffff_ffff), 0]), 0xffff_ffffu32.wrapping_mul(0xffff_ffff).wrapping_neg());
        assert_eq!(sel("vmad.u32.u32.u32 %r1, %r2, %r3, %r4;", &[3, 5, 7]), 22);
        assert_eq!(sel("vmad.u32.u32.u32.sat %r1, %r2, %r3, %r4;", &[0x10000, 0x10000, 7]), u32::MAX);
        assert_eq!(sel("vmad.u32.u32.u32.po %r1, %r2, %r3, %r4;", &[3, 5, 7]), 23);
        assert_eq!(sel("vmad.s32.s32.s32 %r1, -%r2, %r3, %r4;", &[n(3), 5, 7]), (-15i32 + 7) as u32);
        assert_eq!(sel("vmad.s32.s32.s32 %r1, %r2, %r3, -%r4;", &[3, 5, n(7)]), 8);
        assert_eq!(sel("vmad.s32.s32.s32 %r1, -%r2, -%r3, %r4;", &[n(3), n(5), 7]), 22);
        assert_eq!(sel("vmad.s32.s32.u32.sat %r1, %r2, %r3, -%r4;", &[0x8000_0000, 0x10, n(0)]), 0x8000_0000);
        assert_eq!(sel("vmad.s32.u32.u32 %r1, %r2, %r3, -%r4;", &[2, 3, n(7)]), (-1i32) as u32);
        assert_eq!(sel("vmad.s32.s32.s32.shr7 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0x100, 0]), 0xffff_fffe);
        assert_eq!(sel("vmad.u32.u32.u32.shr15 %r1, %r2.h0, %r3.h0, %r4;", &[0xffff, 0xffff, 0]), 0x1_fffc);
        assert_eq!(sel("vmad.u32.u32.u32.shr7 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0xffff_ffff, 0]), (((u32::MAX as u64 * u32::MAX as u64) >> 7) as u32));
        assert_eq!(sel("vmad.s32.s32.s32.sat %r1, %r2, %r3, %r4;", &[0x8000_0000, 0x8000_0000, 0]), 0x7fff_ffff);
        assert_eq!(sel("vmad.s32.s32.s32.sat %r1, %r2.b0, %r3.h1, %r4;", &[0xff, 0x7fff_0000, 0]), (-32767i32) as u32);
        assert!(is_unsupported("vmad.s32.s32.s32 %r1, -%r2, %r3, -%r4;", &[1, 2, 3]));
        assert!(is_unsupported("vmad.s32.u32.u32.sat %r1, %r2, %r3, %r4;", &[1, 2, 3]));
        assert_eq!(quality("vmad.s32.u32.u32.sat %r1, %r2, %r3, -%r4;", &[1, 2, n(0x8000_0000) as u128]), Quality::Unspecified);
    }

    #[test]
    fn video_simd() {
        // Defaults: a lanes from a (.h10), b lanes from b (.h32).
        assert_eq!(sel("vadd2.u32.u32.u32 %r1, %r2, %r3, %r4;", &[0x0001_0002, 0x0010_0020, 0]), 0x0011_0022);
        assert_eq!(sel("vadd2.u32.u32.u32 %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0x0001_0001, 0]), 0);
        assert_eq!(sel("vadd2.u32.u32.u32.sat %r1, %r2, %r3, %r4;", &[0xffff_ffff, 0x0001_0001, 0]), 0xffff_ffff);
        assert_eq!(sel("vadd2.s32.s32.s32.sat %r1, %r2, %r3, %r4;", &[0x7fff_8000, 0x0001_ffff, 0]), 0x7fff_8000);
        assert_eq!(sel("vsub2.s32.s32.s32.sat %r1.h0, %r2.h10, %r3.h32, %r4;", &[0x0000_8000, 0x0000_0001, 0x1234_5678]), 0x1234_8000);
        // Selectors pick from the pool {b, a}: .h32 on a reads b.
        assert_eq!(sel("vadd2.u32.u32.u32 %r1, %r2.h32, %r3.h10, %r4;", &[0x0001_0002, 0x0010_0020, 0]), 0x0011_0022);
        assert_eq!(sel("vmax2.u32.u32.u32 %r1, %r2.h01, %r3.h23, %r4;", &[0x0005_0009, 0x0007_0003, 0]), 0x0009_0007);
        assert_eq!(sel("vavrg2.u32.u32.u32 %r1, %r2, %r3, %r4;", &[0x0001_ffff, 0x0002_ffff, 0]), 0x0002_ffff);
        assert_eq!(sel("vavrg2.s32.s32.s32 %r1, %r2, %r3, %r4;", &[0x0001_ffff, 0x0002_fffe, 0]), 0x0002_fffe);
        assert_eq!(sel("vabsdiff2.u32.s32.s32 %r1, %r2, %r3, %r4;", &[0x8000_0001, 0x7fff_ffff, 0]), 0xffff_0002);
        assert_eq!(sel("vmin2.s32.u32.u32.add %r1.h10, %r2.h00, %r3.h22, %r4;", &[0x0000_0004, 0x0000_0006, 100]), 108);
        assert_eq!(sel("vmin2.s32.s32.s32.add %r1.h1, %r2, %r3, %r4;", &[0xffff_0000, 0x0001_0000, 100]), 99);
        assert_eq!(sel("vadd2.u32.u32.u32 %r1.h1, %r2, %r3, %r4;", &[0x0001_0001, 0x0001_0001, 0xaaaa_bbbb]), 0x0002_bbbb);
        // 4-way.
        assert_eq!(sel("vadd4.u32.u32.u32 %r1, %r2, %r3, %r4;", &[0x0102_03ff, 0x1020_3001, 0]), 0x1122_3300);
        assert_eq!(sel("vadd4.u32.u32.u32.sat %r1, %r2, %r3, %r4;", &[0x0102_03ff, 0x1020_3001, 0]), 0x1122_33ff);
        assert_eq!(sel("vsub4.s32.s32.s32.sat %r1.b0, %r2.b3210, %r3.b7654, %r4;", &[0x0000_0080, 0x0000_0001, 0x1234_5678]), 0x1234_5680);
        assert_eq!(sel("vsub4.u32.u32.u32.sat %r1, %r2, %r3, %r4;", &[0x0000_0010, 0x0101_0101, 0]), 0x0000_000f);
        assert_eq!(sel("vmax4.s32.s32.s32 %r1.b31, %r2, %r3, %r4;", &[0x7f80_0000, 0x8000_0001, 0xaabb_ccdd]), 0x7fbb_00dd);
        assert_eq!(sel("vadd4.u32.u32.u32 %r1, %r2.b0123, %r3.b4444, %r4;", &[0x0403_0201, 0x0000_0010, 0]), 0x1112_1314);
        assert_eq!(sel("vmin4.u32.u32.u32.add %r1, %r2, %r3, %r4;", &[0x0102_0304, 0x0403_0201, 1000]), 1006);
        assert_eq!(sel("vavrg4.s32.s32.s32 %r1, %r2, %r3, %r4;", &[0x80ff_0101, 0x80ff_0100, 0]), 0x80ff_0101);
        // vset2/vset4
        assert_eq!(sel("vset2.s32.u32.lt %r1, %r2, %r3, %r4;", &[0xffff_0001, 0x0000_0002, 0]), 0x0001_0001);
        assert_eq!(sel("vset2.u32.u32.ne.add %r1, %r2, %r3, %r4;", &[0x0001_0002, 0x0001_0003, 10]), 11);
        assert_eq!(sel("vset4.u32.u32.eq %r1, %r2, %r3, %r4;", &[0x0102_0304, 0x0102_0000, 0xffff_ffff]), 0x0101_0000);
        assert_eq!(sel("vset4.s32.s32.lt.add %r1.b20, %r2, %r3, %r4;", &[0xff00_ff00, 0, 7]), 7);
        assert_eq!(sel("vset4.s32.s32.lt.add %r1.b20, %r2, %r3, %r4;", &[0x00ff_00ff, 0, 7]), 9);
        // Ambiguous or not forms of the manual.
        assert!(is_unsupported("vset2.u32.u32.eq %r1.h0, %r2, %r3, %r4;", &[0, 0, 0]));
        assert_eq!(quality("vsub2.u32.u32.u32.add %r1, %r2, %r3, %r4;", &[0, 1, 0]), Quality::Unspecified);
    }
}
