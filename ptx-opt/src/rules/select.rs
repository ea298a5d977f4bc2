//! Selection and comparison: `selp` whose arms are equal or whose
//! predicate is known, and `min`/`max`
//! formed from a comparison that selects one of the compared values.
//! Negated predicates are left alone: `not.pred` is free in SASS (ptxas
//! folds it into the predicate's reader), so swapping arms gains nothing;
//! nor are `setp` + `and.pred` fused into `setp.CMP.and` (measured: ptxas
//! already makes one `ISETP` with a combining operation of them).

use super::term::{t, Term};
use super::{constant, mk, op, plain_compare, plain_operands, types_only, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::isa::{Mod, Opcode, ScalarType, SlotRole};

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

/// Type modifiers only and plain operands.
fn plain_sources(s: &crate::engine::lang::Shape) -> bool {
    types_only(s) && plain_operands(s)
}

/// `selp x, x, p` → `x` (selection copies bits: any type, `x` as wide as the result).
fn s_selp_same(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::SELP || kids.len() != 3 || kids[0] != kids[1] || !plain_sources(s) {
        return;
    }
    if s.ty().is_some_and(|ty| ty.bits() == s.width as u32) && width(eg, kids[0]) == s.width {
        out.push([kids[0]].into_iter().collect());
    }
}
fn i_selp_same() -> Vec<Term> {
    let p = || t("setp.lt.s32", [Term::var(1, 32), Term::var(2, 32)]);
    vec![
        t("selp.b32", [Term::var(0, 32), Term::var(0, 32), p()]),
        t("selp.f32", [Term::var(0, 32), Term::var(0, 32), p()]),
        t("selp.u64", [Term::var(0, 64), Term::var(0, 64), Term::var(3, 1)]),
        t("selp.s16", [Term::var(0, 16), Term::var(0, 16), Term::var(3, 1)]),
    ]
}

/// `selp a, b, 1` → `a`; `selp a, b, 0` → `b` (a predicate a comparison
/// was decided to, see `ranges.rs`).
fn s_selp_known(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::SELP || kids.len() != 3 || !plain_sources(s) || s.ty().is_none_or(|ty| ty.bits() != s.width as u32) {
        return;
    }
    let pick = match constant(eg, kids[2]) {
        Some(1) => kids[0],
        Some(0) => kids[1],
        _ => return,
    };
    if width(eg, pick) == s.width {
        out.push([pick].into_iter().collect());
    }
}
fn i_selp_known() -> Vec<Term> {
    vec![
        t("selp.b32", [Term::var(0, 32), Term::var(1, 32), Term::c(1, 1)]),
        t("selp.u64", [Term::var(0, 64), Term::var(1, 64), Term::c(1, 0)]),
        t("selp.f32", [Term::var(0, 32), Term::c(32, 0x3f80_0000), Term::c(1, 0)]),
    ]
}

/// `setp.{eq,ne}.T (selp a, b, p), c` with constants `a`, `b`, `c` → `p`,
/// `not.pred p` or a constant: the comparison's outcome for each arm
/// (measured: a predicate turned into `1`/`0` and compared back costs one
/// SASS instruction where it feeds a `selp`; but a branch on the original
/// predicate came out two instructions longer in one kernel: `-O3` only).
fn s_setp_of_selp(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::SETP || kids.len() != 2 || s.width != 1 {
        return;
    }
    let eq = match plain_compare(s) {
        Some(Mod::EQ) => true,
        Some(Mod::NE) => false,
        _ => return,
    };
    let Some(ty) = s.ty() else { return };
    use ScalarType::*;
    if !matches!(ty, B16 | B32 | B64 | U16 | U32 | U64 | S16 | S32 | S64) || width(eg, kids[0]) as u32 != ty.bits() {
        return;
    }
    let Some(c) = constant(eg, kids[1]) else { return };
    for sn in &eg[kids[0]].nodes {
        let Some((sel, sk)) = op(eg, sn) else { continue };
        if sel.opcode() != Opcode::SELP || sk.len() != 3 || !plain_sources(sel) || sel.width as u32 != ty.bits() {
            continue;
        }
        let (Some(a), Some(b)) = (constant(eg, sk[0]), constant(eg, sk[1])) else { continue };
        let m = ptx_ir::eval::bits_mask(ty.bits());
        let holds = |v: u128| ((v & m) == (c & m)) == eq;
        // 0: false, 1: true, 2: p, 3: not p.
        let code = match (holds(a), holds(b)) {
            (false, false) => 0,
            (true, true) => 1,
            (true, false) => 2,
            (false, true) => 3,
        };
        out.push([sk[2], Id::from(code)].into_iter().collect());
    }
}
fn a_setp_of_selp(eg: &mut EGraph, m: &Match) -> Option<Id> {
    Some(match usize::from(m[1]) {
        0 => super::konst(eg, 1, 0),
        1 => super::konst(eg, 1, 1),
        2 => m[0],
        _ => mk(eg, "not.pred", &[m[0]]),
    })
}
fn i_setp_of_selp() -> Vec<Term> {
    let p = || t("setp.lt.s32", [Term::var(0, 32), Term::var(1, 32)]);
    let sel = |h: &'static str, w: u8, a: u128, b: u128| t(h, [Term::c(w, a), Term::c(w, b), p()]);
    vec![
        t("setp.ne.u32", [sel("selp.u32", 32, 1, 0), Term::c(32, 0)]),
        t("setp.eq.u32", [sel("selp.u32", 32, 1, 0), Term::c(32, 0)]),
        t("setp.eq.s32", [sel("selp.b32", 32, 0, 0xffff_ffff), Term::c(32, 0xffff_ffff)]),
        t("setp.ne.b16", [sel("selp.b16", 16, 5, 6), Term::c(16, 5)]),
        t("setp.eq.u64", [sel("selp.u64", 64, 3, 4), Term::c(64, 7)]),
        t("setp.ne.s64", [sel("selp.s64", 64, 3, 4), Term::c(64, 7)]),
    ]
}

/// `neg.s32 (set.CMP.u32.T a, b)` (or `.s32` destination) → `selp.u32 1, 0,
/// (setp.CMP.T a, b)`: `set` writes all ones or zero, its negation one or
/// zero (measured: one SASS instruction less). The comparison keeps its
/// modifiers (`.ftz`, the source type).
///
/// Which instructions read the negation decides whether it pays
/// ([`NegationReaders`]): `neg-set` takes none that ptxas folds the
/// negation into; `neg-set-compared`, at `-O3`, takes comparisons of it
/// too, which `setp-of-selp` then answers from the predicate.
fn s_neg_set(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    neg_set_read_by(eg, n, out, NegationReaders::Others);
}
fn s_neg_set_compared(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    neg_set_read_by(eg, n, out, NegationReaders::Comparisons);
}
/// The matches of `neg-set`'s pattern at `n`, kept when the negation's
/// readers are `wanted` (looked for only once the pattern matched).
fn neg_set_read_by(eg: &EGraph, n: &Node, out: &mut Vec<Match>, wanted: NegationReaders) {
    let before = out.len();
    neg_set_matches(eg, n, out);
    if out.len() > before && negation_readers(eg, n) != Some(wanted) {
        out.truncate(before);
    }
}
fn neg_set_matches(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::NEG || kids.len() != 1 || s.ty() != Some(ScalarType::S32) || !plain_sources(s) || s.width != 32 {
        return;
    }
    for sn in &eg[kids[0]].nodes {
        let Node::Op(sid, sk) = sn else { continue };
        let set = eg.analysis.shapes.get(*sid);
        if set.opcode() != Opcode::SET || sk.len() != 2 || set.width != 32 || !plain_operands(set) {
            continue;
        }
        // `set.CMP{.ftz}.DTYPE.STYPE`: an integer destination type, no combining operation.
        let types = set.types();
        if types.len() != 2 || !matches!(types[0], ScalarType::U32 | ScalarType::S32) || set.ins.modifiers().any(|(r, _)| r == SlotRole::Bool) {
            continue;
        }
        out.push([super::shape_id(*sid), sk[0], sk[1]].into_iter().collect());
    }
}

/// The instructions of the function that read a `neg` (its class's parents
/// in the e-graph, which spans the function), as `neg-set` sorts them.
/// Measured on sm_80 (`tests/spec/opt/egraph/neg-set-readers.ptx`): ptxas
/// makes `set` a `SEL -1, 0` and folds the negation into an `add` or `sub`
/// reading it (`IADD3 … -R`); of `selp 1, 0` under an addition it makes a
/// predicated move of one of two sums, two registers more. A `set` or
/// `setp` comparing the negation takes one instruction more after the
/// rewrite at `-O2`, and none at `-O3`, where `setp-of-selp` folds the
/// comparison of `selp 1, 0` into its predicate. Any other reader, and
/// those the e-graph does not hold (stores, opaque instructions), save the
/// negation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum NegationReaders {
    /// An `add` or a `sub`.
    Additions,
    /// A `set` or a `setp`, and no addition.
    Comparisons,
    /// Neither.
    Others,
}

/// `None` when `n` is not in the e-graph.
fn negation_readers(eg: &EGraph, n: &Node) -> Option<NegationReaders> {
    let me = eg.lookup(n.clone())?;
    let mut readers = NegationReaders::Others;
    for p in eg[me].parents() {
        for pn in &eg[p].nodes {
            let Some((s, kids)) = op(eg, pn) else { continue };
            if !kids.iter().any(|&k| eg.find(k) == me) {
                continue;
            }
            match s.opcode() {
                Opcode::ADD | Opcode::SUB => return Some(NegationReaders::Additions),
                Opcode::SET | Opcode::SETP => readers = NegationReaders::Comparisons,
                _ => {}
            }
        }
    }
    Some(readers)
}
fn a_neg_set(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let set = eg.analysis.shapes.get(super::unshape(m[0])).ins.clone();
    // The `setp` modifiers: those of `set` without its destination type.
    let mut mods: Vec<Mod> = Vec::new();
    let mut dropped = false;
    for (r, md) in set.modifiers() {
        if r == SlotRole::Type && !dropped {
            dropped = true;
            continue;
        }
        mods.push(md);
    }
    let p = super::mk_with(eg, Opcode::SETP, &mods, &[m[1], m[2]])?;
    let (one, zero) = (super::konst(eg, 32, 1), super::konst(eg, 32, 0));
    Some(mk(eg, "selp.u32", &[one, zero, p]))
}
fn i_neg_set() -> Vec<Term> {
    let (a, b) = (|| Term::var(0, 32), || Term::var(1, 32));
    vec![
        t("neg.s32", [t("set.le.u32.s32", [a(), b()])]),
        t("neg.s32", [t("set.gt.s32.u32", [a(), b()])]),
        t("neg.s32", [t("set.ne.u32.b32", [a(), b()])]),
        t("neg.s32", [t("set.ltu.ftz.u32.f32", [a(), b()])]),
        t("neg.s32", [t("set.lt.u32.s64", [Term::var(0, 64), Term::var(1, 64)])]),
    ]
}

/// The instances of `neg-set` under the comparison that lets it fire.
fn i_neg_set_compared() -> Vec<Term> {
    i_neg_set().into_iter().map(|neg| t("setp.ne.s32", [neg, Term::c(32, 0)])).collect()
}

const MINMAX: [[&str; 6]; 2] = [["min.u16", "min.u32", "min.u64", "min.s16", "min.s32", "min.s64"], ["max.u16", "max.u32", "max.u64", "max.s16", "max.s32", "max.s64"]];

/// `selp a, b, (setp.CMP.T a, b)` → `min.T a, b` or `max.T a, b` for
/// integer `T`: `lt`/`le` select the smaller (`lo`/`ls` unsigned), `gt`/`ge`
/// the larger; with the arms swapped, the other one. The `selp` copies
/// bits, so its own type only has to be as wide as `T`.
fn s_selp_minmax(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::SELP || kids.len() != 3 || !plain_sources(s) || s.ty().is_none_or(|ty| ty.bits() != s.width as u32) {
        return;
    }
    for pn in &eg[kids[2]].nodes {
        let Some((p, pk)) = op(eg, pn) else { continue };
        if p.opcode() != Opcode::SETP || pk.len() != 2 {
            continue;
        }
        let Some(cmp) = plain_compare(p).filter(|m| matches!(*m, Mod::LT | Mod::LE | Mod::GT | Mod::GE | Mod::LO | Mod::LS | Mod::HI | Mod::HS)) else { continue };
        let Some(ty) = p.ty() else { continue };
        use ScalarType::*;
        let Some(tk) = [U16, U32, U64, S16, S32, S64].iter().position(|t| *t == ty) else { continue };
        if ty.bits() != s.width as u32 || width(eg, pk[0]) != s.width || width(eg, pk[1]) != s.width {
            continue;
        }
        // Unsigned comparisons `lo/ls/hi/hs` need an unsigned type; signed types take `lt/le/gt/ge`.
        if matches!(cmp, Mod::LO | Mod::LS | Mod::HI | Mod::HS) && tk >= 3 {
            continue;
        }
        let smaller_first = matches!(cmp, Mod::LT | Mod::LE | Mod::LO | Mod::LS);
        let max = if kids[0] == pk[0] && kids[1] == pk[1] {
            !smaller_first
        } else if kids[0] == pk[1] && kids[1] == pk[0] {
            smaller_first
        } else {
            continue;
        };
        out.push([pk[0], pk[1], Id::from(max as usize), Id::from(tk)].into_iter().collect());
    }
}
fn a_selp_minmax(eg: &mut EGraph, m: &Match) -> Option<Id> {
    Some(mk(eg, MINMAX[usize::from(m[2])][usize::from(m[3])], &[m[0], m[1]]))
}
fn i_selp_minmax() -> Vec<Term> {
    let mut v = Vec::new();
    for (sel, setp, w) in [("selp.b32", ["setp.lt.s32", "setp.ge.s32", "setp.lo.u32", "setp.hs.u32"], 32u8), ("selp.u64", ["setp.le.s64", "setp.gt.s64", "setp.ls.u64", "setp.hi.u64"], 64), ("selp.s16", ["setp.lt.s16", "setp.ge.u16", "setp.le.u16", "setp.gt.s16"], 16)] {
        let (a, b) = (Term::var(0, w), Term::var(1, w));
        for c in setp {
            v.push(t(sel, [a.clone(), b.clone(), t(c, [a.clone(), b.clone()])]));
            v.push(t(sel, [b.clone(), a.clone(), t(c, [a.clone(), b.clone()])]));
        }
    }
    v
}

pub static RULES: &[Rule] = &[
    Rule { name: "selp-same", roots: &[Opcode::SELP], search: s_selp_same, apply: |_, m| Some(m[0]), instances: i_selp_same, needs: ANY, only_o3: false },
    Rule { name: "selp-known", roots: &[Opcode::SELP], search: s_selp_known, apply: |_, m| Some(m[0]), instances: i_selp_known, needs: ANY, only_o3: false },
    Rule { name: "setp-of-selp", roots: &[Opcode::SETP], search: s_setp_of_selp, apply: a_setp_of_selp, instances: i_setp_of_selp, needs: ANY, only_o3: true },
    Rule { name: "neg-set", roots: &[Opcode::NEG], search: s_neg_set, apply: a_neg_set, instances: i_neg_set, needs: ANY, only_o3: false },
    Rule { name: "neg-set-compared", roots: &[Opcode::NEG], search: s_neg_set_compared, apply: a_neg_set, instances: i_neg_set_compared, needs: ANY, only_o3: true },
    Rule { name: "selp-minmax", roots: &[Opcode::SELP], search: s_selp_minmax, apply: a_selp_minmax, instances: i_selp_minmax, needs: ANY, only_o3: false },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::facts::Facts;
    use ptx_ir::eval::Dialect;

    /// How many matches `search` finds in an e-graph of `term`.
    fn matches(search: fn(&EGraph, &Node, &mut Vec<Match>), term: &Term) -> usize {
        let mut eg = EGraph::new(Facts::new(Dialect::MODERN));
        term.add(&mut eg, &mut Vec::new());
        eg.rebuild();
        let mut out = Vec::new();
        for class in eg.classes() {
            for n in &class.nodes {
                search(&eg, n, &mut out);
            }
        }
        out.len()
    }

    /// `neg-set` leaves a negation that an addition or (at `-O2`) a
    /// comparison reads, and `neg-set-compared` takes the compared one.
    #[test]
    fn neg_set_fires_by_the_readers_of_the_negation() {
        let neg = || t("neg.s32", [t("set.lt.u32.s32", [Term::var(0, 32), Term::var(1, 32)])]);
        let read = |head: &'static str| t(head, [neg(), Term::var(2, 32)]);
        for (reader, plain, compared) in [
            (read("add.s32"), 0, 0),
            (t("add.s32", [Term::var(2, 32), neg()]), 0, 0),
            (read("sub.s32"), 0, 0),
            (t("sub.s32", [Term::var(2, 32), neg()]), 0, 0),
            (t("setp.ne.s32", [neg(), Term::c(32, 0)]), 0, 1),
            (t("set.eq.u32.s32", [neg(), Term::c(32, 0)]), 0, 1),
            (read("xor.b32"), 1, 0),
            (read("mul.lo.s32"), 1, 0),
            (neg(), 1, 0),
        ] {
            assert_eq!((matches(s_neg_set, &reader), matches(s_neg_set_compared, &reader)), (plain, compared), "{reader:?}");
        }
    }
}
