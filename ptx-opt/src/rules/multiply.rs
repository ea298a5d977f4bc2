//! Multiplication: widening multiplies formed from an extension and a
//! shift or a double-width multiply. ptxas makes one `IMAD.WIDE` of
//! `mul.wide` (and fuses the add of an address into it) but keeps the
//! extension, the 64-bit shift and the 64-bit multiply it is given
//! (measured, sm_80: `cvt.u64.u32` + `shl.b64 2` + `add.s64` is 3 SASS
//! instructions more than `mul.wide.u32 4` + `add.s64`; with `cvt.s64.s32`
//! 4 more; `mul.lo.s64` of two extensions 2 more than `mul.wide.u32`).

use super::term::{t, Term};
use super::{constant, konst, mk, op, plain_operands, types_only, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::isa::{Opcode, ScalarType};

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

/// How a class is an extension of a narrower value: `(x, signed)` when
/// some node of it is a plain `cvt` from `w/2` to `w` bits of a register
/// `x` that is `w/2` bits wide (zero extension: `cvt.uW.uH`; sign
/// extension: `cvt.sW.sH` or `cvt.uW.sH`).
fn extensions(eg: &EGraph, id: Id, w: u8) -> Vec<(Id, bool)> {
    let mut v = Vec::new();
    for n in &eg[id].nodes {
        let Some((s, kids)) = op(eg, n) else { continue };
        if s.opcode() != Opcode::CVT || kids.len() != 1 || s.width != w || !types_only(s) || !plain_operands(s) || width(eg, kids[0]) != w / 2 {
            continue;
        }
        use ScalarType::*;
        let signed = match (s.types(), w) {
            ([U64 | B64, U32], 64) | ([U32 | B32, U16], 32) => false,
            ([S64 | U64, S32], 64) | ([S32 | U32, S16], 32) => true,
            _ => continue,
        };
        v.push((kids[0], signed));
    }
    v
}

fn wide_head(w: u8, signed: bool) -> &'static str {
    match (w, signed) {
        (64, false) => "mul.wide.u32",
        (64, true) => "mul.wide.s32",
        (32, false) => "mul.wide.u16",
        _ => "mul.wide.s16",
    }
}

/// `shl.bW (ext x), k` → `mul.wide x, 2^k`: the shifted extension is the
/// product, which the wide multiply gives exactly while `2^k` is a
/// positive number of the narrow type (`k < W/2` unsigned, `k < W/2 − 1`
/// signed).
fn s_wide_shift(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::SHL || kids.len() != 2 || !matches!(s.ty(), Some(ScalarType::B64 | ScalarType::B32)) || s.width as u32 != s.ty().unwrap().bits() {
        return;
    }
    if !types_only(s) || !plain_operands(s) {
        return;
    }
    let Some(k) = constant(eg, kids[1]) else { return };
    let w = s.width;
    for (x, signed) in extensions(eg, kids[0], w) {
        let limit = (w / 2) as u128 - signed as u128;
        if k < limit {
            out.push([x, Id::from(k as usize), Id::from(signed as usize), Id::from(w as usize)].into_iter().collect());
        }
    }
}
fn a_wide_shift(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let (k, signed, w) = (usize::from(m[1]), usize::from(m[2]) == 1, usize::from(m[3]) as u8);
    let c = konst(eg, w / 2, 1u128 << k);
    Some(mk(eg, wide_head(w, signed), &[m[0], c]))
}
fn i_wide_shift() -> Vec<Term> {
    let mut v = Vec::new();
    for k in [0u128, 2, 3, 30] {
        v.push(t("shl.b64", [t("cvt.u64.u32", [Term::var(0, 32)]), Term::c(32, k)]));
        v.push(t("shl.b64", [t("cvt.s64.s32", [Term::var(0, 32)]), Term::c(32, k)]));
        v.push(t("shl.b64", [t("cvt.u64.s32", [Term::var(0, 32)]), Term::c(32, k)]));
    }
    v.push(t("shl.b64", [t("cvt.u64.u32", [Term::var(0, 32)]), Term::c(32, 31)]));
    v.push(t("shl.b32", [t("cvt.u32.u16", [Term::var(0, 16)]), Term::c(32, 15)]));
    v.push(t("shl.b32", [t("cvt.s32.s16", [Term::var(0, 16)]), Term::c(32, 14)]));
    v
}

/// `mul.lo.{u,s}W (ext x), (ext y)` with both extensions of one kind →
/// `mul.wide x, y`; `mul.lo (ext x), c` → `mul.wide x, c` when `c` is a
/// value of the narrow type of that signedness (the product of two
/// extended values never wraps at the double width).
fn s_wide_mul(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((_, w)) = super::plain_int(s) else { return };
    if s.opcode() != Opcode::MUL || kids.len() != 2 || !s.ins.has(ptx_ir::isa::Mod::LO) || !matches!(w, 32 | 64) {
        return;
    }
    let half = (w / 2) as u32;
    let xs = extensions(eg, kids[0], w);
    if let Some(c) = constant(eg, kids[1]) {
        for (x, signed) in xs {
            let fits = if signed {
                let v = ptx_ir::eval::sext(c, w as u32);
                v >= -(1i128 << (half - 1)) && v < (1i128 << (half - 1))
            } else {
                c < 1u128 << half
            };
            if fits {
                out.push([x, Id::from((c & ptx_ir::eval::bits_mask(half)) as usize), Id::from(signed as usize), Id::from(w as usize), Id::from(1)].into_iter().collect());
            }
        }
        return;
    }
    let ys = extensions(eg, kids[1], w);
    for (x, sx) in &xs {
        for (y, sy) in &ys {
            if sx == sy {
                out.push([*x, *y, Id::from(*sx as usize), Id::from(w as usize), Id::from(0)].into_iter().collect());
            }
        }
    }
}
fn a_wide_mul(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let (signed, w) = (usize::from(m[2]) == 1, usize::from(m[3]) as u8);
    let y = if usize::from(m[4]) == 1 { konst(eg, w / 2, usize::from(m[1]) as u128) } else { m[1] };
    Some(mk(eg, wide_head(w, signed), &[m[0], y]))
}
fn i_wide_mul() -> Vec<Term> {
    let (x, y) = (|| Term::var(0, 32), || Term::var(1, 32));
    vec![
        t("mul.lo.u64", [t("cvt.u64.u32", [x()]), t("cvt.u64.u32", [y()])]),
        t("mul.lo.s64", [t("cvt.s64.s32", [x()]), t("cvt.s64.s32", [y()])]),
        t("mul.lo.s64", [t("cvt.u64.u32", [x()]), Term::c(64, 0xffff_fffe)]),
        t("mul.lo.u64", [t("cvt.s64.s32", [x()]), Term::c(64, (-7i64) as u64 as u128)]),
        t("mul.lo.s64", [t("cvt.s64.s32", [x()]), Term::c(64, 0x7fff_ffff)]),
        t("mul.lo.u32", [t("cvt.u32.u16", [Term::var(0, 16)]), t("cvt.u32.u16", [Term::var(1, 16)])]),
        t("mul.lo.s32", [t("cvt.s32.s16", [Term::var(0, 16)]), Term::c(32, (-300i32) as u32 as u128)]),
    ]
}

pub static RULES: &[Rule] = &[
    Rule { name: "wide-shift", roots: &[Opcode::SHL], search: s_wide_shift, apply: a_wide_shift, instances: i_wide_shift, needs: ANY, only_o3: true },
    Rule { name: "wide-mul", roots: &[Opcode::MUL], search: s_wide_mul, apply: a_wide_mul, instances: i_wide_mul, needs: ANY, only_o3: true },
];
