//! Bit fields and bytes: `brev` of `brev`, and `prmt` selectors that pick
//! one whole input. Measured and left alone (no rule): `bfe`/`bfi` with
//! constant position and length against shift-and-mask chains (ptxas
//! makes the same SASS of both, sm_80: `bfe.u32 x, 20, 11` and `shr` +
//! `and` 1 instruction each; an explicit bit-insert chain is 2 more than
//! `bfi`), and rotations as `shl|shr` against `shf.l.wrap` (the same SASS).

use super::term::{t, Term};
use super::{constant, op, plain_operands, types_only, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::isa::Opcode;

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

/// `brev (brev x)` → `x` (`.b32`, `.b64`).
fn s_brev_brev(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::BREV || kids.len() != 1 || !types_only(s) || !plain_operands(s) {
        return;
    }
    for inner in &eg[kids[0]].nodes {
        let Node::Op(tid, ik) = inner else { continue };
        if Some(tid) == match n { Node::Op(sid, _) => Some(sid), _ => None } && ik.len() == 1 && width(eg, ik[0]) == s.width {
            out.push([ik[0]].into_iter().collect());
        }
    }
}
fn i_brev_brev() -> Vec<Term> {
    vec![t("brev.b32", [t("brev.b32", [Term::var(0, 32)])]), t("brev.b64", [t("brev.b64", [Term::var(0, 64)])])]
}

/// `prmt.b32 a, b, 0x3210` → `a`; `prmt.b32 a, b, 0x7654` → `b` (the
/// default mode: each selector nibble picks a byte of `{b, a}`, values
/// 0–3 from `a`, 4–7 from `b`, the high bit of a nibble asks for sign
/// replication; only these two selectors name whole inputs).
fn s_prmt_whole(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::PRMT || kids.len() != 3 || !types_only(s) || !plain_operands(s) || s.width != 32 {
        return;
    }
    let Some(c) = constant(eg, kids[2]) else { return };
    // Only the low 16 bits of the selector matter.
    let pick = match c & 0xffff {
        0x3210 => kids[0],
        0x7654 => kids[1],
        _ => return,
    };
    if width(eg, pick) == 32 {
        out.push([pick].into_iter().collect());
    }
}
fn i_prmt_whole() -> Vec<Term> {
    let (a, b) = (|| Term::var(0, 32), || Term::var(1, 32));
    vec![t("prmt.b32", [a(), b(), Term::c(32, 0x3210)]), t("prmt.b32", [a(), b(), Term::c(32, 0x7654)]), t("prmt.b32", [a(), b(), Term::c(32, 0xabcd_3210)])]
}

/// `and.bN (shr.sN x, k), 2^(N−k) − 1` → `shr.uN x, k` for a constant
/// `0 < k < N − 1`: the mask clears exactly the sign fill (measured: one
/// SASS instruction less for `k = 24`; found by `ptx-hunt`).
fn s_sign_fill_mask(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((_, w)) = super::plain_int(s) else { return };
    if s.opcode() != Opcode::AND || kids.len() != 2 {
        return;
    }
    let Some(m) = constant(eg, kids[1]) else { return };
    for inner in &eg[kids[0]].nodes {
        let Some((sh, sk)) = op(eg, inner) else { continue };
        let Some((ty, sw)) = super::plain_int(sh) else { continue };
        if sh.opcode() != Opcode::SHR || ty.class() != ptx_ir::isa::TypeClass::Signed || sw != w || sk.len() != 2 || width(eg, sk[0]) != w {
            continue;
        }
        let Some(k) = constant(eg, sk[1]) else { continue };
        // Not `k = N − 1` (the sign as 0 or 1): measured, ptxas made two
        // SASS instructions and two registers more of `shr.u x, 31` than of
        // `shr.s` + `and 1` in two kernels.
        if k > 0 && k < w as u128 - 1 && m == ptx_ir::eval::bits_mask(w as u32 - k as u32) {
            out.push([sk[0], sk[1], Id::from(w as usize)].into_iter().collect());
        }
    }
}
fn a_sign_fill_mask(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let head = match usize::from(m[2]) {
        16 => "shr.u16",
        32 => "shr.u32",
        _ => "shr.u64",
    };
    Some(super::mk(eg, head, &[m[0], m[1]]))
}
fn i_sign_fill_mask() -> Vec<Term> {
    vec![
        t("and.b32", [t("shr.s32", [Term::var(0, 32), Term::c(32, 24)]), Term::c(32, 0xff)]),
        t("and.b32", [t("shr.s32", [Term::var(0, 32), Term::c(32, 1)]), Term::c(32, 0x7fff_ffff)]),
        t("and.b32", [t("shr.s32", [Term::var(0, 32), Term::c(32, 30)]), Term::c(32, 3)]),
        t("and.b16", [t("shr.s16", [Term::var(0, 16), Term::c(32, 4)]), Term::c(16, 0xfff)]),
        t("and.b64", [t("shr.s64", [Term::var(0, 64), Term::c(32, 40)]), Term::c(64, 0xff_ffff)]),
    ]
}

pub static RULES: &[Rule] = &[
    Rule { name: "brev-brev", roots: &[Opcode::BREV], search: s_brev_brev, apply: |_, m| Some(m[0]), instances: i_brev_brev, needs: ANY, only_o3: false },
    Rule { name: "sign-fill-mask", roots: &[Opcode::AND], search: s_sign_fill_mask, apply: a_sign_fill_mask, instances: i_sign_fill_mask, needs: ANY, only_o3: false },
    Rule { name: "prmt-whole", roots: &[Opcode::PRMT], search: s_prmt_whole, apply: |_, m| Some(m[0]), instances: i_prmt_whole, needs: ANY, only_o3: false },
];
