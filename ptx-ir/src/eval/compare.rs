//! Semantics of the compare family (see `mod.rs`): `setp`, `set` (including
//! the half-precision forms of §9.7.7), `selp`, `slct` and `testp`.
//!
//! Predicates are 0/1 in bit 0. A source predicate written `!c` arrives
//! negated: the caller applies operand prefixes (as the interpreter does).

use super::bits::{mask, sext};
use super::logic::{bad, unsupported};
use super::{Eval, EvalError, EvalResult, Val};
use crate::ir::{Instruction, Operand, Prefix};
use crate::isa::{BoolOp, CmpOp, Mod, Opcode, ScalarType, TypeClass};

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[Opcode::SETP, Opcode::SET, Opcode::SELP, Opcode::SLCT, Opcode::TESTP];

/// Evaluates `ins` if it belongs to this family.
pub fn eval(ins: &Instruction, srcs: &[u128], _carry_in: bool) -> Option<EvalResult> {
    Some(match ins.opcode {
        Opcode::SETP => setp(ins, srcs),
        Opcode::SET => set(ins, srcs),
        Opcode::SELP => selp(ins, srcs),
        Opcode::SLCT => slct(ins, srcs),
        Opcode::TESTP => testp(ins, srcs),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Helpers

fn need(ins: &Instruction, srcs: &[u128], n: usize) -> Result<(), EvalError> {
    super::arity(srcs, n, ins)
}

/// Source `k` as a predicate (bit 0; a `!c` source arrives negated already).
fn pred_src(_ins: &Instruction, srcs: &[u128], k: usize) -> bool {
    srcs[k] & 1 == 1
}

/// Rejects a `!`/`-` on a non-predicate source (operand `k + 1`: every
/// instruction here has one destination operand first): not a PTX form.
fn plain_srcs(ins: &Instruction, ks: &[usize]) -> Result<(), EvalError> {
    for &k in ks {
        if let Some(Operand::Reg(r)) = ins.operands.get(k + 1) {
            if r.prefix != Prefix::None {
                return Err(unsupported(ins, "a negated non-predicate source is not a form of this instruction"));
            }
        }
    }
    Ok(())
}

fn pair_dest(ins: &Instruction) -> bool {
    matches!(ins.operands.first(), Some(Operand::Pair(..)))
}

/// The comparison `t`, combined with the predicate `c` by `op` when there is one.
pub(crate) fn combine(op: Option<BoolOp>, t: bool, c: bool) -> bool {
    op.map_or(t, |op| op.apply(t, c))
}

/// The value of a floating-point operand, exactly, as an f64 (`None` for a
/// NaN). `ftz` flushes a subnormal to zero (its sign does not matter to a
/// comparison).
pub(super) fn float_value(t: ScalarType, bits: u128, ftz: bool) -> Option<f64> {
    let v = match t {
        ScalarType::F64 => f64::from_bits(bits as u64),
        ScalarType::F32 => {
            let b = bits as u32;
            if ftz && b & 0x7f80_0000 == 0 {
                0.0
            } else {
                f32::from_bits(b) as f64
            }
        }
        ScalarType::F16 | ScalarType::F16x2 => {
            let b = bits as u16;
            let (s, e, m) = (b >> 15, (b >> 10) & 0x1f, b & 0x3ff);
            let mag = if e == 0x1f {
                if m != 0 {
                    return None;
                }
                f64::INFINITY
            } else if e == 0 {
                if ftz {
                    0.0
                } else {
                    m as f64 * 2f64.powi(-24)
                }
            } else {
                (1024 + m) as f64 * 2f64.powi(e as i32 - 25)
            };
            if s == 1 {
                -mag
            } else {
                mag
            }
        }
        ScalarType::Bf16 | ScalarType::Bf16x2 => {
            let b = bits as u16;
            if ftz && b & 0x7f80 == 0 {
                0.0
            } else {
                f32::from_bits((b as u32) << 16) as f64
            }
        }
        _ => unreachable!("float_value on {t:?}"),
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// `x CmpOp y` for floating-point values (a NaN is unordered); `None` for
/// the comparisons of unsigned integers.
pub fn float_compare(cmp: CmpOp, x: f64, y: f64) -> Option<bool> {
    use CmpOp::*;
    let ordered = !x.is_nan() && !y.is_nan();
    Some(match cmp {
        Num => ordered,
        CmpOp::Nan => !ordered,
        // Ordered comparisons are false with a NaN operand, unordered ones true.
        Eq | Ne | Lt | Le | Gt | Ge if !ordered => false,
        Equ | Neu | Ltu | Leu | Gtu | Geu if !ordered => true,
        Eq | Equ => x == y,
        Ne | Neu => x != y,
        Lt | Ltu => x < y,
        Le | Leu => x <= y,
        Gt | Gtu => x > y,
        Ge | Geu => x >= y,
        Lo | Ls | Hi | Hs => return None,
    })
}

/// `a CmpOp b` for values of type `t`; `Err` when the manual does not define
/// the comparison for that type.
fn compare(ins: &Instruction, cmp: CmpOp, t: ScalarType, a: u128, b: u128, ftz: bool) -> Result<bool, EvalError> {
    use CmpOp::*;
    let w = t.bits();
    match t.class() {
        TypeClass::Float => {
            if !matches!(t, ScalarType::F16 | ScalarType::Bf16 | ScalarType::F32 | ScalarType::F64 | ScalarType::F16x2 | ScalarType::Bf16x2) {
                return Err(unsupported(ins, "comparison type"));
            }
            let (x, y) = (float_value(t, a, ftz), float_value(t, b, ftz));
            float_compare(cmp, x.unwrap_or(f64::NAN), y.unwrap_or(f64::NAN)).ok_or_else(|| unsupported(ins, ".lo .ls .hi .hs compare unsigned integers"))
        }
        TypeClass::Signed | TypeClass::Unsigned | TypeClass::Bits if matches!(w, 16 | 32 | 64) => {
            let (ua, ub) = (a & mask(w), b & mask(w));
            let (sa, sb) = (sext(a, w), sext(b, w));
            let class = t.class();
            Ok(match (cmp, class) {
                (Eq, _) => ua == ub,
                (Ne, _) => ua != ub,
                (Lt, TypeClass::Signed) => sa < sb,
                (Le, TypeClass::Signed) => sa <= sb,
                (Gt, TypeClass::Signed) => sa > sb,
                (Ge, TypeClass::Signed) => sa >= sb,
                (Lt | Lo, TypeClass::Unsigned) => ua < ub,
                (Le | Ls, TypeClass::Unsigned) => ua <= ub,
                (Gt | Hi, TypeClass::Unsigned) => ua > ub,
                (Ge | Hs, TypeClass::Unsigned) => ua >= ub,
                (Lt | Le | Gt | Ge | Lo | Ls | Hi | Hs, TypeClass::Bits) => {
                    return Err(unsupported(ins, "bit-size types compare only with .eq and .ne"));
                }
                (Lo | Ls | Hi | Hs, _) => return Err(unsupported(ins, ".lo .ls .hi .hs are defined for unsigned types only")),
                _ => return Err(unsupported(ins, "unordered and .num/.nan comparisons are for floating-point types")),
            })
        }
        _ => Err(unsupported(ins, "comparison type")),
    }
}

/// `.ftz` is defined for .f32 comparisons, and for the half-precision forms
/// on .f16/.f16x2. On an integer comparison it can have no effect (there
/// are no subnormal integers); what it would do to a .f64 or .bf16
/// comparison the manual does not say.
fn check_ftz(ins: &Instruction, stype: ScalarType) -> Result<bool, EvalError> {
    let ftz = ins.has(Mod::FTZ);
    if ftz && stype.class() == TypeClass::Float && !matches!(stype, ScalarType::F32 | ScalarType::F16 | ScalarType::F16x2) {
        return Err(unsupported(ins, ".ftz applies only to .f32 (and .f16/.f16x2) comparisons"));
    }
    Ok(ftz)
}

// ---------------------------------------------------------------------------
// setp

fn setp(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let t = ins.ty().ok_or_else(|| bad(ins, "no type"))?;
    let cmp = ins.cmp().ok_or_else(|| bad(ins, "no comparison"))?;
    let bop = ins.bool_op();
    need(ins, srcs, if bop.is_some() { 3 } else { 2 })?;
    plain_srcs(ins, &[0, 1])?;
    let ftz = check_ftz(ins, t)?;
    let c = bop.is_some() && pred_src(ins, srcs, 2);
    let pair = pair_dest(ins);
    let (p, q) = match t {
        ScalarType::F16x2 | ScalarType::Bf16x2 => {
            // p from the low halves, q from the high halves.
            let t0 = compare(ins, cmp, t, srcs[0] & 0xffff, srcs[1] & 0xffff, ftz)?;
            let t1 = compare(ins, cmp, t, srcs[0] >> 16 & 0xffff, srcs[1] >> 16 & 0xffff, ftz)?;
            if !pair {
                return Err(bad(ins, "the .f16x2/.bf16x2 forms write `p|q`"));
            }
            (combine(bop, t0, c), combine(bop, t1, c))
        }
        _ => {
            let r = compare(ins, cmp, t, srcs[0], srcs[1], ftz)?;
            if pair && matches!(t, ScalarType::F16 | ScalarType::Bf16) {
                return Err(unsupported(ins, "the .f16/.bf16 forms write only p"));
            }
            (combine(bop, r, c), combine(bop, !r, c))
        }
    };
    let mut e = Eval::exact(p as u128);
    if pair {
        e.dests.push(Val::exact(q as u128));
    }
    Ok(e)
}

// ---------------------------------------------------------------------------
// set

const STYPES: &[ScalarType] = &[
    ScalarType::B16,
    ScalarType::B32,
    ScalarType::B64,
    ScalarType::U16,
    ScalarType::U32,
    ScalarType::U64,
    ScalarType::S16,
    ScalarType::S32,
    ScalarType::S64,
    ScalarType::F32,
    ScalarType::F64,
];

/// Is `set.dtype.stype` a form of the manual (§9.7.6.1 or §9.7.7.1)?
fn set_form_exists(d: ScalarType, s: ScalarType) -> bool {
    use ScalarType::*;
    match (d, s) {
        (U32 | S32 | F32, s) if STYPES.contains(&s) => true,
        (F16 | Bf16, s) if STYPES.contains(&s) || s == F16 => true,
        (U16 | S16 | U32 | S32, F16 | Bf16) => true,
        (F16x2 | U32 | S32, F16x2) => true,
        (Bf16x2 | U32 | S32, Bf16x2) => true,
        _ => false,
    }
}

/// The value a true comparison writes into a destination of type `d`.
pub(crate) fn set_true(d: ScalarType) -> u128 {
    match d {
        ScalarType::F32 => 0x3f80_0000,
        ScalarType::F16 | ScalarType::F16x2 => 0x3c00,
        ScalarType::Bf16 | ScalarType::Bf16x2 => 0x3f80,
        ScalarType::U16 | ScalarType::S16 => 0xffff,
        // u32/s32: all ones; per half-word for the x2 sources.
        _ => 0xffff_ffff,
    }
}

fn set(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let types = ins.types();
    if types.len() < 2 {
        return Err(bad(ins, "needs .dtype.stype"));
    }
    let (d, s) = (types[0], types[1]);
    if !set_form_exists(d, s) {
        return Err(unsupported(ins, &format!("set{}{} is not a form of the manual", d.text(), s.text())));
    }
    if ins.has(Mod::FTZ) && matches!(d, ScalarType::Bf16) {
        return Err(unsupported(ins, "the .bf16 forms have no .ftz"));
    }
    let cmp = ins.cmp().ok_or_else(|| bad(ins, "no comparison"))?;
    let bop = ins.bool_op();
    need(ins, srcs, if bop.is_some() { 3 } else { 2 })?;
    plain_srcs(ins, &[0, 1])?;
    let ftz = check_ftz(ins, s)?;
    let c = bop.is_some() && pred_src(ins, srcs, 2);
    let v = if matches!(s, ScalarType::F16x2 | ScalarType::Bf16x2) {
        // Per half-word: 1.0 in the destination's format for .f16x2/.bf16x2,
        // 0xffff for the integer destinations.
        let lane_true = if matches!(d, ScalarType::F16x2 | ScalarType::Bf16x2) { set_true(d) } else { 0xffff };
        let mut v = 0;
        for i in 0..2 {
            let sh = 16 * i;
            let t = compare(ins, cmp, s, srcs[0] >> sh & 0xffff, srcs[1] >> sh & 0xffff, ftz)?;
            if combine(bop, t, c) {
                v |= lane_true << sh;
            }
        }
        v
    } else {
        let t = compare(ins, cmp, s, srcs[0], srcs[1], ftz)?;
        if combine(bop, t, c) {
            set_true(d)
        } else {
            0
        }
    };
    Ok(Eval::exact(v))
}

// ---------------------------------------------------------------------------
// selp, slct

const SEL_TYPES: &[ScalarType] = STYPES;

fn selp(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let t = ins.ty().ok_or_else(|| bad(ins, "no type"))?;
    if !SEL_TYPES.contains(&t) {
        return Err(unsupported(ins, "type"));
    }
    need(ins, srcs, 3)?;
    plain_srcs(ins, &[0, 1])?;
    let c = pred_src(ins, srcs, 2);
    Ok(Eval::exact(srcs[if c { 0 } else { 1 }] & mask(t.bits())))
}

fn slct(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let types = ins.types();
    if types.len() < 2 {
        return Err(bad(ins, "needs .dtype and the type of c"));
    }
    let (d, ct) = (types[0], types[1]);
    if !SEL_TYPES.contains(&d) {
        return Err(unsupported(ins, "type"));
    }
    need(ins, srcs, 3)?;
    plain_srcs(ins, &[0, 1, 2])?;
    if !matches!(ct, ScalarType::S32 | ScalarType::F32) {
        return Err(unsupported(ins, "c is .s32 or .f32"));
    }
    let ge0 = slct_selects_a(ct == ScalarType::F32, srcs[2], ins.has(Mod::FTZ));
    Ok(Eval::exact(srcs[if ge0 { 0 } else { 1 }] & mask(d.bits())))
}

/// Does `slct` select `a`, with `c` (`.f32` when `float`, else `.s32`) at
/// least zero? (`.ftz`, for `.f32` comparisons only, cannot change an
/// integer's sign.) Negative zero equals zero; a NaN `c` selects `b`; with
/// `.ftz` a subnormal `c` is flushed to a sign-preserving zero and selects `a`.
pub(crate) fn slct_selects_a(float: bool, c: u128, ftz: bool) -> bool {
    if float {
        float_value(ScalarType::F32, c, ftz).is_some_and(|x| x >= 0.0)
    } else {
        sext(c, 32) >= 0
    }
}

// ---------------------------------------------------------------------------
// testp

fn testp(ins: &Instruction, srcs: &[u128]) -> EvalResult {
    let t = ins.ty().ok_or_else(|| bad(ins, "no type"))?;
    need(ins, srcs, 1)?;
    plain_srcs(ins, &[0])?;
    let (exp, man) = match t {
        ScalarType::F32 => {
            let b = srcs[0] as u32;
            ((b >> 23 & 0xff) as u64, (b & 0x7f_ffff) as u64)
        }
        ScalarType::F64 => {
            let b = srcs[0] as u64;
            (b >> 52 & 0x7ff, b & 0xf_ffff_ffff_ffff)
        }
        _ => return Err(unsupported(ins, "testp types are .f32 and .f64")),
    };
    let max_exp = if t == ScalarType::F32 { 0xff } else { 0x7ff };
    let nan = exp == max_exp && man != 0;
    let inf = exp == max_exp && man == 0;
    let zero = exp == 0 && man == 0;
    let subnormal = exp == 0 && man != 0;
    let r = if ins.has(Mod::FINITE) {
        !nan && !inf
    } else if ins.has(Mod::INFINITE) {
        inf
    } else if ins.has(Mod::NUMBER) {
        !nan
    } else if ins.has(Mod::NOTANUMBER) {
        nan
    } else if ins.has(Mod::NORMAL) {
        // "As a special case, positive and negative zero are considered normal numbers."
        zero || (exp != 0 && exp != max_exp)
    } else if ins.has(Mod::SUBNORMAL) {
        subnormal
    } else {
        return Err(bad(ins, "no test"));
    };
    Ok(Eval::exact(r as u128))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Quality;

    fn ins(text: &str) -> Instruction {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{ .reg .b32 %r<20>; .reg .f32 %f<20>; .reg .pred %p<20>; .reg .b16 %h<20>; .reg .b64 %rd<20>; .reg .f64 %fd<20>;\n{text}\nret; }}"
        );
        let m = crate::parse::parse_str(&src).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        for it in &m.items {
            if let crate::ir::Item::Func(f) = it {
                return f.instructions().next().unwrap().clone();
            }
        }
        unreachable!()
    }

    fn ev_ins(i: &Instruction, srcs: &[u128]) -> Vec<u128> {
        let r = crate::eval::eval(i, srcs, false).unwrap_or_else(|e| panic!("{i:?}: {e}"));
        for v in &r.dests {
            assert_eq!(v.quality, Quality::Exact);
        }
        r.dests.iter().map(|v| v.bits).collect()
    }

    fn ev(text: &str, srcs: &[u128]) -> Vec<u128> {
        ev_ins(&ins(text), srcs)
    }

    fn ev1(text: &str, srcs: &[u128]) -> u128 {
        let d = ev(text, srcs);
        assert_eq!(d.len(), 1, "{text}");
        d[0]
    }

    fn is_unsupported(text: &str, srcs: &[u128]) -> bool {
        matches!(crate::eval::eval(&ins(text), srcs, false), Err(EvalError::Unsupported(_)))
    }

    use crate::eval::test_rng::Rng;
    impl Rng {
    }

    const F32_EDGES: &[u32] = &[
        0x0000_0000, 0x8000_0000, // ±0
        0x0000_0001, 0x8000_0001, 0x007f_ffff, 0x807f_ffff, // subnormals
        0x0080_0000, 0x8080_0000, // smallest normals
        0x3f80_0000, 0xbf80_0000, 0x3f80_0001, // ±1
        0x7f7f_ffff, 0xff7f_ffff, // ±max
        0x7f80_0000, 0xff80_0000, // ±inf
        0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0xffff_ffff, // NaNs
    ];

    /// The manual's float comparisons, written against the host's IEEE ones.
    fn host_cmp(cmp: CmpOp, x: f64, y: f64) -> bool {
        let un = x.is_nan() || y.is_nan();
        match cmp {
            CmpOp::Eq => x == y,
            CmpOp::Ne => !un && x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
            CmpOp::Equ => un || x == y,
            CmpOp::Neu => x != y,
            CmpOp::Ltu => !(x >= y),
            CmpOp::Leu => !(x > y),
            CmpOp::Gtu => !(x <= y),
            CmpOp::Geu => !(x < y),
            CmpOp::Num => !un,
            CmpOp::Nan => un,
            _ => unreachable!(),
        }
    }

    const FLOAT_CMPS: &[CmpOp] = &[
        CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Equ, CmpOp::Neu, CmpOp::Ltu, CmpOp::Leu, CmpOp::Gtu, CmpOp::Geu, CmpOp::Num, CmpOp::Nan,
    ];

    fn flush32(b: u32) -> f64 {
        if b & 0x7f80_0000 == 0 {
            0.0
        } else {
            f32::from_bits(b) as f64
        }
    }

    #[test]
    fn setp_f32_edges_and_random() {
        let mut rng = Rng(5);
        for &cmp in FLOAT_CMPS {
            let plain = ins(&format!("setp{}.f32 %p1|%p2, %f1, %f2;", cmp.text()));
            let ftz = ins(&format!("setp{}.ftz.f32 %p1|%p2, %f1, %f2;", cmp.text()));
            let check = |a: u32, b: u32| {
                let (x, y) = (f32::from_bits(a) as f64, f32::from_bits(b) as f64);
                let want = host_cmp(cmp, x, y);
                assert_eq!(ev_ins(&plain, &[a as u128, b as u128]), vec![want as u128, !want as u128], "{} {a:#x} {b:#x}", cmp.text());
                let want = host_cmp(cmp, if x.is_nan() { x } else { flush32(a) }, if y.is_nan() { y } else { flush32(b) });
                assert_eq!(ev_ins(&ftz, &[a as u128, b as u128])[0], want as u128, "ftz {} {a:#x} {b:#x}", cmp.text());
            };
            for &a in F32_EDGES {
                for &b in F32_EDGES {
                    check(a, b);
                }
            }
            for _ in 0..300 {
                let (a, b) = (rng.next() as u32, rng.next() as u32);
                check(a, b);
                check(a, a ^ 1);
            }
        }
    }

    #[test]
    fn setp_float_hand_values() {
        let s = |t: &str, a: u32, b: u32| ev1(&format!("setp{t}.f32 %p1, %f1, %f2;"), &[a as u128, b as u128]);
        let (zero, nzero, one, nan, sub, nsub) = (0u32, 0x8000_0000u32, 0x3f80_0000u32, 0x7fc0_0000u32, 1u32, 0x8000_0001u32);
        // -0 == +0.
        assert_eq!(s(".eq", zero, nzero), 1);
        assert_eq!(s(".lt", nzero, zero), 0);
        // Ordered compares with NaN are false (even .ne); unordered true.
        assert_eq!(s(".ne", nan, one), 0);
        assert_eq!(s(".eq", nan, nan), 0);
        assert_eq!(s(".neu", nan, one), 1);
        assert_eq!(s(".equ", nan, one), 1);
        assert_eq!(s(".equ", one, one), 1);
        assert_eq!(s(".ltu", one, zero), 0);
        assert_eq!(s(".num", one, zero), 1);
        assert_eq!(s(".num", one, nan), 0);
        assert_eq!(s(".nan", nan, one), 1);
        assert_eq!(s(".nan", one, one), 0);
        // Subnormals: distinct without .ftz, zero with it.
        assert_eq!(s(".gt", sub, zero), 1);
        assert_eq!(s(".lt", nsub, zero), 1);
        assert_eq!(ev1("setp.gt.ftz.f32 %p1, %f1, %f2;", &[sub as u128, 0]), 0);
        assert_eq!(ev1("setp.eq.ftz.f32 %p1, %f1, %f2;", &[nsub as u128, 0]), 1);
        assert_eq!(ev1("setp.eq.ftz.f32 %p1, %f1, %f2;", &[0x007f_ffff, 0x8000_0001]), 1);
        // f64: subnormals are never flushed (no .ftz on .f64).
        let d = |t: &str, a: u64, b: u64| ev1(&format!("setp{t}.f64 %p1, %fd1, %fd2;"), &[a as u128, b as u128]);
        assert_eq!(d(".gt", 1, 0), 1);
        assert_eq!(d(".eq", 0x8000_0000_0000_0000, 0), 1);
        assert_eq!(d(".lt", 0xfff0_0000_0000_0000, 0x7ff0_0000_0000_0000), 1);
        assert_eq!(d(".le", 0x7ff8_0000_0000_0000, 0x7ff8_0000_0000_0000), 0);
        assert_eq!(d(".leu", 0x7ff8_0000_0000_0000, 0), 1);
        assert!(is_unsupported("setp.eq.ftz.f64 %p1, %fd1, %fd2;", &[0, 0]));
        assert!(is_unsupported("setp.lo.f32 %p1, %f1, %f2;", &[0, 0]));
    }

    #[test]
    fn setp_f64_random() {
        let mut rng = Rng(9);
        let edges: &[u64] = &[0, 1 << 63, 1, (1 << 63) | 1, 0x000f_ffff_ffff_ffff, 0x3ff0_0000_0000_0000, 0xbff0_0000_0000_0000, 0x7fef_ffff_ffff_ffff, 0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000, 0x7ff8_0000_0000_0000, 0x7ff0_0000_0000_0001, u64::MAX];
        for &cmp in FLOAT_CMPS {
            let i = ins(&format!("setp{}.f64 %p1|%p2, %fd1, %fd2;", cmp.text()));
            let mut vals: Vec<u64> = edges.to_vec();
            vals.extend((0..20).map(|_| rng.next()));
            for &a in &vals {
                for &b in &vals {
                    let want = host_cmp(cmp, f64::from_bits(a), f64::from_bits(b));
                    assert_eq!(ev_ins(&i, &[a as u128, b as u128]), vec![want as u128, !want as u128]);
                }
            }
        }
    }

    #[test]
    fn setp_integers() {
        let edges32: [u32; 8] = [0, 1, 2, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, 0xffff_fffe, 0xffff_ffff];
        for &a in &edges32 {
            for &b in &edges32 {
                let s = |t: &str| ev1(&format!("setp{t} %p1, %r1, %r2;"), &[a as u128, b as u128]) == 1;
                let (sa, sb) = (a as i32, b as i32);
                assert_eq!(s(".eq.s32"), sa == sb);
                assert_eq!(s(".ne.s32"), sa != sb);
                assert_eq!(s(".lt.s32"), sa < sb);
                assert_eq!(s(".le.s32"), sa <= sb);
                assert_eq!(s(".gt.s32"), sa > sb);
                assert_eq!(s(".ge.s32"), sa >= sb);
                assert_eq!(s(".lt.u32"), a < b);
                assert_eq!(s(".le.u32"), a <= b);
                assert_eq!(s(".gt.u32"), a > b);
                assert_eq!(s(".ge.u32"), a >= b);
                assert_eq!(s(".lo.u32"), a < b);
                assert_eq!(s(".ls.u32"), a <= b);
                assert_eq!(s(".hi.u32"), a > b);
                assert_eq!(s(".hs.u32"), a >= b);
                assert_eq!(s(".eq.b32"), a == b);
                assert_eq!(s(".ne.b32"), a != b);
            }
        }
        // 16 and 64 bits; only the type's width counts.
        assert_eq!(ev1("setp.lt.s16 %p1, %h1, %h2;", &[0x8000, 0x7fff]), 1);
        assert_eq!(ev1("setp.lt.u16 %p1, %h1, %h2;", &[0x8000, 0x7fff]), 0);
        assert_eq!(ev1("setp.eq.u16 %p1, %h1, %h2;", &[0x1_0005, 0x5]), 1);
        assert_eq!(ev1("setp.lt.s64 %p1, %rd1, %rd2;", &[1u128 << 63, 0]), 1);
        assert_eq!(ev1("setp.hi.u64 %p1, %rd1, %rd2;", &[1u128 << 63, 0]), 1);
        assert_eq!(ev1("setp.ge.s64 %p1, %rd1, %rd2;", &[u64::MAX as u128, u64::MAX as u128]), 1);
        // Not defined by the manual.
        assert!(is_unsupported("setp.lt.b32 %p1, %r1, %r2;", &[0, 0]));
        assert!(is_unsupported("setp.lo.s32 %p1, %r1, %r2;", &[0, 0]));
        assert!(is_unsupported("setp.equ.s32 %p1, %r1, %r2;", &[0, 0]));
        assert!(is_unsupported("setp.nan.u32 %p1, %r1, %r2;", &[0, 0]));
        // .ftz cannot affect an integer comparison.
        assert_eq!(ev1("setp.lt.ftz.s32 %p1, %r1, %r2;", &[0xffff_ffff, 0]), 1);
    }

    #[test]
    fn setp_bool_ops() {
        // p = BoolOp(t, c), q = BoolOp(!t, c)
        for t in 0..2u128 {
            for c in 0..2u128 {
                let (a, b) = if t == 1 { (1, 2) } else { (2, 1) };
                let tt = t == 1;
                let cc = c == 1;
                let run = |op: &str, neg: bool| ev(&format!("setp.lt{op}.s32 %p1|%p2, %r1, %r2, {}%p3;", if neg { "!" } else { "" }), &[a, b, c]);
                assert_eq!(run(".and", false), vec![(tt & cc) as u128, (!tt & cc) as u128]);
                assert_eq!(run(".or", false), vec![(tt | cc) as u128, (!tt | cc) as u128]);
                assert_eq!(run(".xor", false), vec![(tt ^ cc) as u128, (!tt ^ cc) as u128]);
                // `!%p3`: the value passed is already the negated predicate.
                assert_eq!(run(".and", true), vec![(tt & cc) as u128, (!tt & cc) as u128]);
                assert_eq!(run(".or", true), vec![(tt | cc) as u128, (!tt | cc) as u128]);
                assert_eq!(run(".xor", true), vec![(tt ^ cc) as u128, (!tt ^ cc) as u128]);
                // Without q.
                assert_eq!(ev("setp.lt.and.s32 %p1, %r1, %r2, %p3;", &[a, b, c]), vec![(tt & cc) as u128]);
            }
        }
        // The predicate source's value is its bit 0.
        assert_eq!(ev("setp.eq.or.u32 %p1|%p2, %r1, %r2, %p3;", &[1, 2, 1]), vec![1, 1]);
        // A NaN comparison combined.
        assert_eq!(ev("setp.eq.or.f32 %p1|%p2, %f1, %f2, %p3;", &[0x7fc0_0000, 0x7fc0_0000, 0]), vec![0, 1]);
        assert_eq!(ev("setp.lt.and.ftz.f32 %p1|%p2, %f1, %f2, !%p3;", &[0x8000_0001, 0x0000_0001, 1]), vec![0, 1]);
    }

    /// f16 bits to f64 (independent reference decode via f32 arithmetic).
    fn f16_ref(b: u16) -> f64 {
        let sign = if b >> 15 == 1 { -1.0 } else { 1.0 };
        let e = (b >> 10 & 0x1f) as i32;
        let m = (b & 0x3ff) as f64;
        sign * match e {
            0 => m / 1024.0 * 2f64.powi(-14),
            31 => {
                if m == 0.0 {
                    f64::INFINITY
                } else {
                    f64::NAN
                }
            }
            _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
        }
    }

    #[test]
    fn setp_half_precision() {
        let edges: &[u16] = &[0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01];
        for &cmp in FLOAT_CMPS {
            let i = ins(&format!("setp{}.f16 %p1, %h1, %h2;", cmp.text()));
            let ftz = ins(&format!("setp{}.ftz.f16 %p1, %h1, %h2;", cmp.text()));
            let x2 = ins(&format!("setp{}.f16x2 %p1|%p2, %r1, %r2;", cmp.text()));
            let bf = ins(&format!("setp{}.bf16 %p1, %h1, %h2;", cmp.text()));
            for &a in edges {
                for &b in edges {
                    let want = host_cmp(cmp, f16_ref(a), f16_ref(b));
                    assert_eq!(ev_ins(&i, &[a as u128, b as u128]), vec![want as u128], "{} {a:#x} {b:#x}", cmp.text());
                    let fl = |v: u16| if v & 0x7c00 == 0 { 0.0 } else { f16_ref(v) };
                    let want_ftz = host_cmp(cmp, fl(a), fl(b));
                    assert_eq!(ev_ins(&ftz, &[a as u128, b as u128]), vec![want_ftz as u128]);
                    // x2: p from the low halves, q from the high halves.
                    let other = host_cmp(cmp, 1.0, f16_ref(b));
                    assert_eq!(ev_ins(&x2, &[(0x3c00u32 << 16 | a as u32) as u128, ((b as u32) << 16 | b as u32) as u128]), vec![want as u128, other as u128]);
                    // bf16: the upper half of an f32.
                    let fb = |v: u16| f32::from_bits((v as u32) << 16) as f64;
                    assert_eq!(ev_ins(&bf, &[a as u128, b as u128]), vec![host_cmp(cmp, fb(a), fb(b)) as u128]);
                }
            }
        }
        // Random pairs (some near each other), all comparisons, both halves.
        let mut rng = Rng(21);
        for &cmp in FLOAT_CMPS {
            let x2 = ins(&format!("setp{}.ftz.f16x2 %p1|%p2, %r1, %r2;", cmp.text()));
            let bf2 = ins(&format!("setp{}.bf16x2 %p1|%p2, %r1, %r2;", cmp.text()));
            let fl = |v: u16| if v & 0x7c00 == 0 { 0.0 } else { f16_ref(v) };
            let fb = |v: u16| f32::from_bits((v as u32) << 16) as f64;
            for _ in 0..500 {
                let a = rng.next() as u32;
                let b = if rng.next() % 4 == 0 { a ^ 0x0001_0001 } else { rng.next() as u32 };
                let (a0, a1, b0, b1) = (a as u16, (a >> 16) as u16, b as u16, (b >> 16) as u16);
                assert_eq!(ev_ins(&x2, &[a as u128, b as u128]), vec![host_cmp(cmp, fl(a0), fl(b0)) as u128, host_cmp(cmp, fl(a1), fl(b1)) as u128]);
                assert_eq!(ev_ins(&bf2, &[a as u128, b as u128]), vec![host_cmp(cmp, fb(a0), fb(b0)) as u128, host_cmp(cmp, fb(a1), fb(b1)) as u128]);
            }
        }
        assert_eq!(ev("setp.lt.and.bf16x2 %p1|%p2, %r1, %r2, %p3;", &[0x3f80_bf80, 0x0000_0000, 1]), vec![1, 0]);
        assert_eq!(ev("setp.lt.xor.f16x2 %p1|%p2, %r1, %r2, !%p3;", &[0x3c00_bc00, 0x0000_0000, 0]), vec![1, 0]);
    }

    #[test]
    fn set_values() {
        // Integer destination: all ones; .f32 destination: 1.0f.
        assert_eq!(ev1("set.lt.u32.s32 %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0xffff_ffff);
        assert_eq!(ev1("set.lt.s32.u32 %r1, %r2, %r3;", &[0xffff_ffff, 0]), 0);
        assert_eq!(ev1("set.lt.f32.s32 %f1, %r2, %r3;", &[0xffff_ffff, 0]), 0x3f80_0000);
        assert_eq!(ev1("set.ge.f32.s32 %f1, %r2, %r3;", &[0xffff_ffff, 0]), 0);
        assert_eq!(ev1("set.eq.u32.u32 %r1, %r2, %r3;", &[7, 7]), 0xffff_ffff);
        assert_eq!(ev1("set.eq.u32.b16 %r1, %h2, %h3;", &[7, 0x1_0007]), 0xffff_ffff);
        assert_eq!(ev1("set.nan.u32.f64 %r1, %fd2, %fd3;", &[0x7ff8_0000_0000_0000, 0]), 0xffff_ffff);
        assert_eq!(ev1("set.gt.ftz.u32.f32 %r1, %f2, %f3;", &[1, 0]), 0);
        assert_eq!(ev1("set.gt.u32.f32 %r1, %f2, %f3;", &[1, 0]), 0xffff_ffff);
        // Combined with c: d = BoolOp(t, c) ? true : 0.
        assert_eq!(ev1("set.lt.and.f32.s32 %f1, %r2, %r3, %p1;", &[1, 2, 1]), 0x3f80_0000);
        assert_eq!(ev1("set.lt.and.f32.s32 %f1, %r2, %r3, !%p1;", &[1, 2, 0]), 0);
        assert_eq!(ev1("set.lt.or.u32.s32 %r1, %r2, %r3, %p1;", &[2, 1, 1]), 0xffff_ffff);
        assert_eq!(ev1("set.lt.xor.s32.s32 %r1, %r2, %r3, %p1;", &[1, 2, 1]), 0);
        // Half-precision destinations and sources.
        assert_eq!(ev1("set.lt.f16.u32 %h1, %r2, %r3;", &[1, 2]), 0x3c00);
        assert_eq!(ev1("set.lt.bf16.f32 %h1, %f2, %f3;", &[0xbf80_0000, 0]), 0x3f80);
        assert_eq!(ev1("set.lt.f16.f16 %h1, %h2, %h3;", &[0x3c00, 0x3c01]), 0x3c00);
        assert_eq!(ev1("set.lt.u16.f16 %h1, %h2, %h3;", &[0x3c00, 0x3c01]), 0xffff);
        assert_eq!(ev1("set.lt.s32.f16 %r1, %h2, %h3;", &[0x3c00, 0x3c01]), 0xffff_ffff);
        assert_eq!(ev1("set.num.xor.s32.bf16 %r1, %h2, %h3, %p1;", &[0x7fc1, 0, 1]), 0xffff_ffff);
        assert_eq!(ev1("set.gt.ftz.u32.f16 %r1, %h2, %h3;", &[0x0001, 0]), 0);
        assert_eq!(ev1("set.gt.u32.f16 %r1, %h2, %h3;", &[0x0001, 0]), 0xffff_ffff);
        assert_eq!(ev1("set.gt.ftz.f16.u32 %h1, %r2, %r3;", &[1, 0]), 0x3c00);
        assert_eq!(ev1("set.gt.ftz.f16.f32 %h1, %f2, %f3;", &[1, 0]), 0);
        assert_eq!(ev1("set.gt.f16.f32 %h1, %f2, %f3;", &[1, 0]), 0x3c00);
        // x2: per half-word.
        assert_eq!(ev1("set.eq.f16x2.f16x2 %r1, %r2, %r3;", &[0x3c00_0000, 0x3c00_8000]), 0x3c00_3c00);
        assert_eq!(ev1("set.lt.f16x2.f16x2 %r1, %r2, %r3;", &[0x3c00_0000, 0x3c00_8000]), 0);
        assert_eq!(ev1("set.lt.u32.f16x2 %r1, %r2, %r3;", &[0x0000_3c00, 0x3c00_0000]), 0xffff_0000);
        assert_eq!(ev1("set.equ.bf16x2.bf16x2 %r1, %r2, %r3;", &[0x7fc1_0000, 0x0000_3f80]), 0x3f80_0000);
        assert_eq!(ev1("set.geu.s32.bf16x2 %r1, %r2, %r3;", &[0x3f80_0000, 0x0000_3f80]), 0xffff_0000);
        assert_eq!(ev1("set.lt.and.f16x2.f16x2 %r1, %r2, %r3, %p1;", &[0xbc00_bc00, 0, 1]), 0x3c00_3c00);
        assert_eq!(ev1("set.lt.and.f16x2.f16x2 %r1, %r2, %r3, %p1;", &[0xbc00_bc00, 0, 0]), 0);
        assert_eq!(ev1("set.ltu.or.bf16.f16 %h1, %h2, %h3, %p1;", &[0x7e00, 0, 0]), 0x3f80);
        // Not forms of the manual.
        assert!(is_unsupported("set.lt.f32.f16 %f1, %h2, %h3;", &[0, 0]));
        assert!(is_unsupported("set.lt.u16.u32 %h1, %r2, %r3;", &[0, 0]));
        assert!(is_unsupported("set.lt.f16.f16x2 %h1, %r2, %r3;", &[0, 0]));
        assert!(is_unsupported("set.lt.ftz.u32.f64 %r1, %fd2, %fd3;", &[0, 0]));
        assert!(is_unsupported("set.lt.u32.b32 %r1, %r2, %r3;", &[0, 0]));
    }

    #[test]
    fn selp_values() {
        assert_eq!(ev1("selp.u32 %r1, %r2, %r3, %p1;", &[5, 6, 1]), 5);
        assert_eq!(ev1("selp.u32 %r1, %r2, %r3, %p1;", &[5, 6, 0]), 6);
        assert_eq!(ev1("selp.u32 %r1, %r2, %r3, %p1;", &[5, 6, 2]), 6);
        assert_eq!(ev1("selp.f32 %f1, %f2, %f3, %p1;", &[0x7fc0_0001, 0, 1]), 0x7fc0_0001);
        assert_eq!(ev1("selp.b64 %rd1, %rd2, %rd3, %p1;", &[u64::MAX as u128, 0, 1]), u64::MAX as u128);
        assert_eq!(ev1("selp.s16 %h1, %h2, %h3, %p1;", &[0x1_8000, 0, 1]), 0x8000);
        assert_eq!(ev1("selp.f64 %fd1, %fd2, %fd3, %p1;", &[1, 0x8000_0000_0000_0000, 0]), 0x8000_0000_0000_0000);
    }

    #[test]
    fn slct_values() {
        let s32 = |c: u32| ev1("slct.u32.s32 %r1, %r2, %r3, %r4;", &[0xa, 0xb, c as u128]);
        assert_eq!(s32(0), 0xa);
        assert_eq!(s32(1), 0xa);
        assert_eq!(s32(0x7fff_ffff), 0xa);
        assert_eq!(s32(0x8000_0000), 0xb);
        assert_eq!(s32(0xffff_ffff), 0xb);
        let f = |c: u32| ev1("slct.u32.f32 %r1, %r2, %r3, %f1;", &[0xa, 0xb, c as u128]);
        let fz = |c: u32| ev1("slct.ftz.u32.f32 %r1, %r2, %r3, %f1;", &[0xa, 0xb, c as u128]);
        for (c, plain, ftz) in [
            (0x0000_0000u32, 0xa, 0xa), // +0
            (0x8000_0000, 0xa, 0xa),    // -0 equals zero
            (0x3f80_0000, 0xa, 0xa),
            (0xbf80_0000, 0xb, 0xb),
            (0x0000_0001, 0xa, 0xa),
            (0x8000_0001, 0xb, 0xa), // negative subnormal: flushed to -0 with .ftz, selects a
            (0x807f_ffff, 0xb, 0xa),
            (0x7f80_0000, 0xa, 0xa),
            (0xff80_0000, 0xb, 0xb),
            (0x7fc0_0000, 0xb, 0xb), // NaN: unordered, selects b
            (0xffc0_0000, 0xb, 0xb),
            (0x7f80_0001, 0xb, 0xb),
        ] {
            assert_eq!(f(c), plain, "{c:#x}");
            assert_eq!(fz(c), ftz, "ftz {c:#x}");
        }
        // d, a, b take the first type's width.
        assert_eq!(ev1("slct.b64.s32 %rd1, %rd2, %rd3, %r4;", &[u64::MAX as u128, 0, 0]), u64::MAX as u128);
        assert_eq!(ev1("slct.f64.f32 %fd1, %fd2, %fd3, %f4;", &[1, 2, 0xbf80_0000]), 2);
        assert_eq!(ev1("slct.s16.s32 %h1, %h2, %h3, %r4;", &[0x1_ffff, 2, 0]), 0xffff);
        assert_eq!(ev1("slct.ftz.u32.s32 %r1, %r2, %r3, %r4;", &[0xa, 0xb, 0x8000_0000]), 0xb);
        assert_eq!(ev1("slct.ftz.u32.s32 %r1, %r2, %r3, %r4;", &[0xa, 0xb, 1]), 0xa);
    }

    #[test]
    fn testp_values() {
        // (bits, finite, infinite, number, notanumber, normal, subnormal)
        let f32s: &[(u64, [bool; 6])] = &[
            (0x0000_0000, [true, false, true, false, true, false]),
            (0x8000_0000, [true, false, true, false, true, false]),
            (0x0000_0001, [true, false, true, false, false, true]),
            (0x807f_ffff, [true, false, true, false, false, true]),
            (0x0080_0000, [true, false, true, false, true, false]),
            (0x3f80_0000, [true, false, true, false, true, false]),
            (0xff7f_ffff, [true, false, true, false, true, false]),
            (0x7f80_0000, [false, true, true, false, false, false]),
            (0xff80_0000, [false, true, true, false, false, false]),
            (0x7fc0_0000, [false, false, false, true, false, false]),
            (0xff80_0001, [false, false, false, true, false, false]),
        ];
        let f64s: &[(u64, [bool; 6])] = &[
            (0, [true, false, true, false, true, false]),
            (1 << 63, [true, false, true, false, true, false]),
            (1, [true, false, true, false, false, true]),
            (0x800f_ffff_ffff_ffff, [true, false, true, false, false, true]),
            (0x0010_0000_0000_0000, [true, false, true, false, true, false]),
            (0x7fef_ffff_ffff_ffff, [true, false, true, false, true, false]),
            (0x7ff0_0000_0000_0000, [false, true, true, false, false, false]),
            (0xfff0_0000_0000_0000, [false, true, true, false, false, false]),
            (0x7ff8_0000_0000_0000, [false, false, false, true, false, false]),
            (0x7ff0_0000_0000_0001, [false, false, false, true, false, false]),
            // An f32 NaN's bits as an f64: a subnormal.
            (0x7fc0_0000, [true, false, true, false, false, true]),
        ];
        let ops = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"];
        for (table, ty, reg) in [(f32s, "f32", "%f"), (f64s, "f64", "%fd")] {
            for &(bits, want) in table {
                for (k, op) in ops.iter().enumerate() {
                    assert_eq!(ev1(&format!("testp.{op}.{ty} %p1, {reg}1;"), &[bits as u128]), want[k] as u128, "testp.{op}.{ty} {bits:#x}");
                }
            }
        }
    }
}
