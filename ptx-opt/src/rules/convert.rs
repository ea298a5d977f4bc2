//! Conversions between integer types: an extension truncated back to its
//! source width is the source. (`cvt` of constants folds in the analysis, in every rounding
//! mode and format the evaluator gives exactly; `cvt.u64.u32` +
//! `cvt.u32.u64` round trips are removed by ptxas itself, but here they
//! also stop hiding the 32-bit value from the other rules.)

use super::term::{t, Term};
use super::{op, plain_operands, types_only, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use ptx_ir::isa::{Opcode, ScalarType};

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

/// A plain integer `cvt` (no rounding, `.sat` or `.ftz`, no prefix or
/// selector): its destination and source types.
fn int_cvt(s: &crate::engine::lang::Shape) -> Option<(ScalarType, ScalarType)> {
    use ScalarType::*;
    if s.opcode() != Opcode::CVT || !types_only(s) || !plain_operands(s) {
        return None;
    }
    let int = |t: ScalarType| matches!(t, U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64 | B8 | B16 | B32 | B64);
    match s.types() {
        [d, f] if int(*d) && int(*f) => Some((*d, *f)),
        _ => None,
    }
}

/// `cvt.D.M (cvt.M.S x)` where the inner conversion widens `S` to `M` and
/// the outer narrows back to `D` of `S`'s width, `x` a register of that
/// width → `x` (the low bits of an extension are its source).
fn s_ext_trunc(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((d, m)) = int_cvt(s) else { return };
    if kids.len() != 1 || d.bits() >= m.bits() || s.width as u32 != d.bits() {
        return;
    }
    for inner in &eg[kids[0]].nodes {
        let Some((t, ik)) = op(eg, inner) else { continue };
        let Some((m2, src)) = int_cvt(t) else { continue };
        if m2.bits() != m.bits() || t.width as u32 != m.bits() || src.bits() != d.bits() || width(eg, ik[0]) as u32 != d.bits() {
            continue;
        }
        out.push([ik[0]].into_iter().collect());
    }
}
fn i_ext_trunc() -> Vec<Term> {
    vec![
        t("cvt.u32.u64", [t("cvt.u64.u32", [Term::var(0, 32)])]),
        t("cvt.s32.s64", [t("cvt.s64.s32", [Term::var(0, 32)])]),
        t("cvt.u32.u64", [t("cvt.s64.s32", [Term::var(0, 32)])]),
        t("cvt.u16.u32", [t("cvt.s32.s16", [Term::var(0, 16)])]),
        t("cvt.u16.u64", [t("cvt.u64.u16", [Term::var(0, 16)])]),
    ]
}

/// `cvt.D.S x` between integer types of one size (no `.sat`) → `x`: the
/// bits do not change (found by `ptx-hunt`: `cvt.u32.u32` in real code).
fn s_same_size(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((d, f)) = int_cvt(s) else { return };
    if kids.len() == 1 && d.bits() == f.bits() && s.width as u32 == d.bits() && width(eg, kids[0]) == s.width {
        out.push([kids[0]].into_iter().collect());
    }
}
fn i_same_size() -> Vec<Term> {
    vec![
        t("cvt.u32.u32", [Term::var(0, 32)]),
        t("cvt.s32.u32", [Term::var(0, 32)]),
        t("cvt.u64.s64", [Term::var(0, 64)]),
        t("cvt.s16.u16", [Term::var(0, 16)]),
    ]
}

pub static RULES: &[Rule] = &[
    Rule { name: "same-size", roots: &[Opcode::CVT], search: s_same_size, apply: |_, m| Some(m[0]), instances: i_same_size, needs: ANY, only_o3: false },
    Rule { name: "ext-trunc", roots: &[Opcode::CVT], search: s_ext_trunc, apply: |_, m| Some(m[0]), instances: i_ext_trunc, needs: ANY, only_o3: true },
];
