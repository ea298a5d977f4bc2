//! Rules whose side conditions are facts of the known-bits and range
//! analysis ([`crate::engine::known`]): signed operations on values proven
//! non-negative become their cheaper unsigned twins, masks and bounds that
//! the facts already imply disappear, and comparisons the ranges decide
//! become constants.

use super::term::{t, Term};
use super::{konst, mk, op, plain_compare, plain_int, plain_operands, types_only, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::known::Known;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::eval::bits_mask;
use ptx_ir::isa::{Mod, Opcode, ScalarType, TypeClass};

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

fn known(eg: &EGraph, id: Id) -> Known {
    eg.analysis.known(crate::engine::facts::class_data(eg, id))
}

fn code(w: u8) -> usize {
    match w {
        16 => 0,
        32 => 1,
        _ => 2,
    }
}

// ----- signed division of non-negative values ------------------------------------------

/// `div.sN x, y` / `rem.sN x, y` with `x ≥ 0` and `y ≥ 1` (as signed
/// numbers): the unsigned form computes the same quotient and remainder
/// (truncation and flooring agree on non-negative operands), and is cheaper,
/// with a constant divisor too (no sign fix-up in the `mul.hi` program).
fn s_nonneg_div(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((ty, w)) = plain_int(s) else { return };
    if ty.class() != TypeClass::Signed || kids.len() != 2 || !types_only(s) {
        return;
    }
    let (x, y) = (known(eg, kids[0]), known(eg, kids[1]));
    if x.width == w && y.width == w && x.non_negative(w as u32) && y.non_negative(w as u32) && y.lo >= 1 {
        out.push([kids[0], kids[1], Id::from(code(w)), Id::from((s.opcode() == Opcode::REM) as usize)].into_iter().collect());
    }
}
fn a_nonneg_div(eg: &mut EGraph, m: &Match) -> Option<Id> {
    const HEADS: [[&str; 3]; 2] = [["div.u16", "div.u32", "div.u64"], ["rem.u16", "rem.u32", "rem.u64"]];
    Some(mk(eg, HEADS[usize::from(m[3])][usize::from(m[2])], &[m[0], m[1]]))
}
fn i_nonneg_div() -> Vec<Term> {
    let mut v = Vec::new();
    for (w, heads, or) in [(16u8, ["div.s16", "rem.s16"], "or.b16"), (32, ["div.s32", "rem.s32"], "or.b32"), (64, ["div.s64", "rem.s64"], "or.b64")] {
        let x = Term::bounded(0, w, bits_mask(w as u32 - 1));
        // A divisor in 1..=1023.
        let small = t(or, [Term::bounded(1, w, 1022), Term::c(w, 1)]);
        for h in heads {
            v.push(t(h, [x.clone(), Term::c(w, 7)]));
            v.push(t(h, [x.clone(), Term::c(w, 1u128 << (w - 2))]));
            v.push(t(h, [x.clone(), small.clone()]));
        }
    }
    v
}

// ----- sign extension of non-negative values --------------------------------------------

/// `cvt.sD.sS x` / `cvt.uD.sS x` widening a value proven non-negative as an
/// `S`-bit signed number: the zero extension `cvt.uD.uS` gives the same
/// bits; ptxas keeps a zero high half in `RZ` where a sign extension costs a
/// shift (measured: one SASS instruction less per extension in index
/// arithmetic).
fn s_nonneg_sext(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::CVT || kids.len() != 1 || !types_only(s) || !plain_operands(s) {
        return;
    }
    use ScalarType::*;
    let types = s.types();
    let (d, f) = match types {
        [d, f] => (*d, *f),
        _ => return,
    };
    let to = match (d, f) {
        (S64 | U64, S32) => "cvt.u64.u32",
        (S64 | U64, S16) => "cvt.u64.u16",
        (S32 | U32, S16) => "cvt.u32.u16",
        _ => return,
    };
    if s.width as u32 != d.bits() {
        return;
    }
    // The source is read as its low `f` bits: their sign bit must be known zero.
    let x = known(eg, kids[0]);
    if x.width as u32 >= f.bits() && (x.zero >> (f.bits() - 1)) & 1 == 1 {
        out.push([kids[0], Id::from(["cvt.u64.u32", "cvt.u64.u16", "cvt.u32.u16"].iter().position(|h| *h == to).unwrap())].into_iter().collect());
    }
}
fn a_nonneg_sext(eg: &mut EGraph, m: &Match) -> Option<Id> {
    Some(mk(eg, ["cvt.u64.u32", "cvt.u64.u16", "cvt.u32.u16"][usize::from(m[1])], &[m[0]]))
}
fn i_nonneg_sext() -> Vec<Term> {
    vec![
        t("cvt.s64.s32", [Term::bounded(0, 32, 1023)]),
        t("cvt.u64.s32", [Term::bounded(0, 32, 0x7fff_ffff)]),
        t("cvt.s64.s16", [Term::bounded(0, 16, 0x7fff)]),
        t("cvt.s32.s16", [Term::bounded(0, 16, 300)]),
        // A 64-bit register read as its low 32 bits: the bound of the whole holds of the part.
        t("cvt.s64.s32", [Term::bounded(0, 64, 5000)]),
        t("cvt.s64.s32", [t("and.b32", [Term::var(0, 32), Term::c(32, 0x7fff_fff0)])]),
    ]
}

// ----- masks the facts already imply --------------------------------------------------

/// `and x, c` where every bit `c` clears is known zero in `x` → `x`;
/// `or x, c` where every bit `c` sets is known one in `x` → `x`.
fn s_redundant_mask(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((_, w)) = plain_int(s) else { return };
    if kids.len() != 2 || !matches!(s.opcode(), Opcode::AND | Opcode::OR) {
        return;
    }
    let Some(c) = super::constant(eg, kids[1]) else { return };
    let x = known(eg, kids[0]);
    if x.width != w || super::constant(eg, kids[0]).is_some() {
        return;
    }
    let m = bits_mask(w as u32);
    let redundant = match s.opcode() {
        Opcode::AND => !c & m & !x.zero == 0,
        _ => c & !x.one == 0,
    };
    if redundant {
        out.push([kids[0]].into_iter().collect());
    }
}
fn i_redundant_mask() -> Vec<Term> {
    vec![
        t("and.b32", [Term::bounded(0, 32, 1023), Term::c(32, 0x3ff)]),
        t("and.b32", [Term::bounded(0, 32, 255), Term::c(32, 0xffff)]),
        t("and.b64", [Term::bounded(0, 64, 0xffff_ffff), Term::c(64, 0xffff_ffff)]),
        t("and.b16", [t("shr.u16", [Term::var(0, 16), Term::c(32, 8)]), Term::c(16, 0xff)]),
        t("and.b32", [t("shl.b32", [Term::var(0, 32), Term::c(32, 4)]), Term::c(32, 0xffff_fff0)]),
        t("or.b32", [t("or.b32", [Term::var(0, 32), Term::c(32, 0xf0)]), Term::c(32, 0x30)]),
    ]
}

// ----- min, max and comparisons the ranges decide -------------------------------------------

/// `min x, y` → `x` when `x ≤ y` for every value (and `y` when `y ≤ x`);
/// `max` likewise. Unsigned forms; signed forms where both are non-negative.
fn s_decided_minmax(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((ty, w)) = plain_int(s) else { return };
    if kids.len() != 2 || !matches!(s.opcode(), Opcode::MIN | Opcode::MAX) || !types_only(s) {
        return;
    }
    let (x, y) = (known(eg, kids[0]), known(eg, kids[1]));
    if x.width != w || y.width != w || (ty.class() == TypeClass::Signed && !(x.non_negative(w as u32) && y.non_negative(w as u32))) {
        return;
    }
    let min = s.opcode() == Opcode::MIN;
    if x.hi <= y.lo {
        out.push([if min { kids[0] } else { kids[1] }].into_iter().collect());
    } else if y.hi <= x.lo {
        out.push([if min { kids[1] } else { kids[0] }].into_iter().collect());
    }
}
fn i_decided_minmax() -> Vec<Term> {
    // With a constant side the range analysis alone gives the value; the
    // rule matters between two variables whose ranges do not overlap.
    let tid = || Term::bounded(0, 32, 1023);
    let above = |w: u8, k: u8| t(if w == 32 { "or.b32" } else { "or.b64" }, [Term::var(k, w), Term::c(w, 1024)]);
    vec![
        t("min.u32", [tid(), above(32, 1)]),
        t("min.s32", [tid(), t("and.b32", [above(32, 1), Term::c(32, 0x7fff_ffff)])]),
        t("max.u32", [above(32, 1), tid()]),
        t("max.s64", [Term::bounded(0, 64, 100), t("and.b64", [above(64, 1), Term::c(64, 0xffff)])]),
        t("min.u16", [t("or.b16", [t("shr.u16", [Term::var(1, 16), Term::c(32, 12)]), Term::c(16, 16)]), Term::bounded(0, 16, 15)]),
    ]
}

/// `setp.CMP.{u,s}N x, y` (no combining operation, no `.ftz`) → a constant
/// predicate when the ranges of `x` and `y` decide it (signed: both
/// non-negative).
fn s_decided_setp(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::SETP || kids.len() != 2 || s.width != 1 {
        return;
    }
    let (Some(cmp), Some(ty)) = (plain_compare(s), s.ty()) else { return };
    use ScalarType::*;
    if !matches!(ty, B16 | B32 | B64 | U16 | U32 | U64 | S16 | S32 | S64) {
        return;
    }
    let w = ty.bits() as u8;
    let (x, y) = (known(eg, kids[0]), known(eg, kids[1]));
    if x.width != w || y.width != w {
        return;
    }
    let signed = ty.class() == TypeClass::Signed && matches!(cmp, Mod::LT | Mod::LE | Mod::GT | Mod::GE);
    if signed && !(x.non_negative(w as u32) && y.non_negative(w as u32)) {
        return;
    }
    let lt = x.hi < y.lo; // x < y always
    let gt = x.lo > y.hi; // x > y always
    let le = x.hi <= y.lo;
    let ge = x.lo >= y.hi;
    let decided = match cmp {
        Mod::EQ => (lt || gt).then_some(false),
        Mod::NE => (lt || gt).then_some(true),
        Mod::LT | Mod::LO => if lt { Some(true) } else if ge { Some(false) } else { None },
        Mod::LE | Mod::LS => if le { Some(true) } else if gt { Some(false) } else { None },
        Mod::GT | Mod::HI => if gt { Some(true) } else if le { Some(false) } else { None },
        Mod::GE | Mod::HS => if ge { Some(true) } else if lt { Some(false) } else { None },
        _ => None,
    };
    if let Some(v) = decided {
        out.push([Id::from(v as usize)].into_iter().collect());
    }
}
fn a_pred_const(eg: &mut EGraph, m: &Match) -> Option<Id> {
    Some(konst(eg, 1, usize::from(m[0]) as u128))
}
fn i_decided_setp() -> Vec<Term> {
    let tid = || Term::bounded(0, 32, 1023);
    vec![
        t("setp.lt.u32", [tid(), Term::c(32, 1024)]),
        t("setp.ge.s32", [tid(), Term::c(32, 1024)]),
        t("setp.eq.s32", [tid(), Term::c(32, 5000)]),
        t("setp.ne.u32", [tid(), Term::c(32, 0xffff_ffff)]),
        t("setp.gt.u32", [Term::c(32, 2048), tid()]),
        t("setp.le.s64", [Term::bounded(0, 64, 7), Term::c(64, 7)]),
        t("setp.hs.u16", [Term::bounded(0, 16, 9), Term::c(16, 10)]),
    ]
}

fn first(_: &mut EGraph, m: &Match) -> Option<Id> {
    Some(m[0])
}

pub static RULES: &[Rule] = &[
    Rule { name: "nonneg-div", roots: &[Opcode::DIV, Opcode::REM], search: s_nonneg_div, apply: a_nonneg_div, instances: i_nonneg_div, needs: ANY, only_o3: false },
    Rule { name: "nonneg-sext", roots: &[Opcode::CVT], search: s_nonneg_sext, apply: a_nonneg_sext, instances: i_nonneg_sext, needs: ANY, only_o3: true },
    Rule { name: "redundant-mask", roots: &[Opcode::AND, Opcode::OR], search: s_redundant_mask, apply: first, instances: i_redundant_mask, needs: ANY, only_o3: true },
    Rule { name: "decided-minmax", roots: &[Opcode::MIN, Opcode::MAX], search: s_decided_minmax, apply: first, instances: i_decided_minmax, needs: ANY, only_o3: false },
    Rule { name: "decided-setp", roots: &[Opcode::SETP], search: s_decided_setp, apply: a_pred_const, instances: i_decided_setp, needs: ANY, only_o3: false },
];
