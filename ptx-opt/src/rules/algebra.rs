//! Integer algebra: identities, constants to the right, constant
//! reassociation, signedness canonicalization. Every width (16/32/64 bits),
//! signed and unsigned; never on `.sat`, `.cc` or packed (`x2`) forms, whose
//! results these identities do not describe.

use super::term::{t, Term};
use super::{constant, konst, op, plain_int, same_shape, shape_id, unshape, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::{Node, Shape};
use egg::Id;
use ptx_ir::eval::bits_mask;
use ptx_ir::isa::{Mod, Opcode, TypeClass};

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

fn is_op(s: &Shape, o: Opcode) -> bool {
    s.opcode() == o
}

/// `op x, c` with a constant `c` equal to `want` (at the node's width) and
/// `x` as wide as the node: gives `[x]`.
fn right_const(eg: &EGraph, n: &Node, ops: &[Opcode], want: fn(u8) -> u128, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((_, w)) = plain_int(s) else { return };
    if !ops.contains(&s.opcode()) || kids.len() != 2 {
        return;
    }
    if constant(eg, kids[1]) == Some(want(w) & bits_mask(w as u32)) && width(eg, kids[0]) == w {
        out.push([kids[0]].into_iter().collect());
    }
}

fn first(_: &mut EGraph, m: &Match) -> Option<Id> {
    Some(m[0])
}

// ----- x op identity -> x ------------------------------------------------------------

fn s_zero_identity(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    right_const(eg, n, &[Opcode::ADD, Opcode::SUB, Opcode::OR, Opcode::XOR, Opcode::SHL, Opcode::SHR], |_| 0, out);
}
fn s_one_identity(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    // `mul.lo` only: the high half of x * 1 is the sign or zero fill.
    if matches!(op(eg, n), Some((s, _)) if s.ins.has(Mod::LO)) {
        right_const(eg, n, &[Opcode::MUL], |_| 1, out);
    }
}
fn s_ones_identity(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    right_const(eg, n, &[Opcode::AND], |_| u128::MAX, out);
}

// ----- x op x ------------------------------------------------------------------------

fn s_idempotent(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if plain_int(s).is_none() || kids.len() != 2 || kids[0] != kids[1] {
        return;
    }
    if matches!(s.opcode(), Opcode::AND | Opcode::OR | Opcode::MIN | Opcode::MAX) && width(eg, kids[0]) == s.width {
        out.push([kids[0]].into_iter().collect());
    }
}

fn s_self_zero(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if plain_int(s).is_none() || kids.len() != 2 || kids[0] != kids[1] {
        return;
    }
    if matches!(s.opcode(), Opcode::SUB | Opcode::XOR) {
        out.push([Id::from(s.width as usize)].into_iter().collect());
    }
}
fn a_zero_of_width(eg: &mut EGraph, m: &Match) -> Option<Id> {
    Some(konst(eg, usize::from(m[0]) as u8, 0))
}

// ----- constants to the right of commutative operations ------------------------------

fn commutative(s: &Shape) -> bool {
    match s.opcode() {
        Opcode::ADD | Opcode::AND | Opcode::OR | Opcode::XOR | Opcode::MIN | Opcode::MAX => true,
        Opcode::MUL => true,
        _ => false,
    }
}

fn s_const_right(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Node::Op(sid, kids) = n else { return };
    let s = eg.analysis.shapes.get(*sid);
    if plain_int(s).is_none() && !(s.opcode() == Opcode::MUL && s.ins.has(Mod::WIDE) && s.sources.iter().all(|x| x.prefix == ptx_ir::ir::Prefix::None)) {
        return;
    }
    if !commutative(s) || kids.len() != 2 {
        return;
    }
    if constant(eg, kids[0]).is_some() && constant(eg, kids[1]).is_none() {
        out.push([shape_id(*sid), kids[1], kids[0]].into_iter().collect());
    }
}
fn a_same_shape_swapped(eg: &mut EGraph, m: &Match) -> Option<Id> {
    Some(same_shape(eg, m[0], &m[1..]))
}

// ----- reassociation of constants ------------------------------------------------------

/// `op (op x, c1), c2` -> `op x, (c1 op c2)` for associative operations whose
/// two instructions have the same type width (signedness does not matter for
/// these: add, mul.lo, and, or, xor).
fn s_reassociate(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Node::Op(sid, kids) = n else { return };
    let s = eg.analysis.shapes.get(*sid);
    let Some((_, w)) = plain_int(s) else { return };
    if kids.len() != 2 || !matches!(s.opcode(), Opcode::ADD | Opcode::AND | Opcode::OR | Opcode::XOR | Opcode::MUL) {
        return;
    }
    if s.opcode() == Opcode::MUL && !s.ins.has(Mod::LO) {
        return;
    }
    if constant(eg, kids[1]).is_none() {
        return;
    }
    for inner in &eg[kids[0]].nodes {
        let Some((t, ik)) = op(eg, inner) else { continue };
        if t.opcode() != s.opcode() || plain_int(t).map(|(_, iw)| iw) != Some(w) || ik.len() != 2 || (t.opcode() == Opcode::MUL && !t.ins.has(Mod::LO)) {
            continue;
        }
        if constant(eg, ik[1]).is_none() || constant(eg, ik[0]).is_some() || width(eg, ik[0]) != w {
            continue;
        }
        out.push([shape_id(*sid), ik[0], ik[1], kids[1]].into_iter().collect());
    }
}
fn a_reassociate(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let s = eg.analysis.shapes.get(unshape(m[0]));
    let (w, opc) = (s.width, s.opcode());
    let (c1, c2) = (constant(eg, m[2])?, constant(eg, m[3])?);
    let c = match opc {
        Opcode::ADD => c1.wrapping_add(c2),
        Opcode::MUL => c1.wrapping_mul(c2),
        Opcode::AND => c1 & c2,
        Opcode::OR => c1 | c2,
        _ => c1 ^ c2,
    };
    let k = konst(eg, w, c);
    Some(same_shape(eg, m[0], &[m[1], k]))
}

/// `sub x, c` -> `add x, -c` (same type; wrap-around arithmetic).
fn s_sub_const(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((_, w)) = plain_int(s) else { return };
    if !is_op(s, Opcode::SUB) || kids.len() != 2 {
        return;
    }
    if constant(eg, kids[1]).is_none() || width(eg, kids[0]) != w {
        return;
    }
    out.push([kids[0], kids[1]].into_iter().collect());
}
fn a_sub_const(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let w = width(eg, m[0]);
    let c = constant(eg, m[1])?;
    let k = konst(eg, w, c.wrapping_neg());
    Some(super::mk(eg, add_head(w), &[m[0], k]))
}

fn add_head(w: u8) -> &'static str {
    match w {
        16 => "add.u16",
        32 => "add.u32",
        _ => "add.u64",
    }
}

/// Signed and unsigned `add`, `sub`, `mul.lo`, `shl` compute the same bits:
/// the signed form gets its unsigned twin, so that both meet in one node.
fn s_unsigned_twin(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Node::Op(sid, kids) = n else { return };
    let s = eg.analysis.shapes.get(*sid);
    let Some(head) = unsigned_twin_of(s) else { return };
    if kids.len() != 2 || !kids.iter().all(|k| width(eg, *k) == s.width) {
        return;
    }
    // Once the twin is in the node's class, applying the rule again
    // adds nothing: each iteration searches the whole e-graph anew, and
    // on matrix_free 8,900 of 9,300 applications were such repeats (an
    // `add` finding the node and a `union` of a class with itself, about
    // 2,000 host instructions each).
    if let Some(twin) = eg.analysis.shapes.of_text_known_from(*sid, head, 2) {
        if eg.lookup(Node::Op(twin, kids.iter().copied().collect())).is_some_and(|c| eg[c].nodes.contains(n)) {
            return;
        }
    }
    out.push([kids[0], kids[1], shape_id(*sid)].into_iter().collect());
}
/// The twin's shape is kept with the signed shape
/// ([`crate::engine::lang::ShapeTable::of_text_from`]): asked by its text
/// at every application, matrix_free's -O2 run spent about 1 M host
/// instructions hashing the text (4,578 applications, 4,752 searches).
fn a_unsigned_twin(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let signed = unshape(m[2]);
    let head = unsigned_twin_of(eg.analysis.shapes.get(signed))?;
    let twin = eg.analysis.shapes.of_text_from(signed, head, 2);
    Some(eg.add(Node::Op(twin, [m[0], m[1]].into_iter().collect())))
}

/// The head of the unsigned twin of a signed plain `add`, `sub` or
/// `mul.lo`; `None` for other shapes.
fn unsigned_twin_of(s: &Shape) -> Option<&'static str> {
    let (ty, w) = plain_int(s)?;
    if ty.class() != TypeClass::Signed {
        return None;
    }
    let code = match s.opcode() {
        Opcode::ADD => 0,
        Opcode::SUB => 1,
        Opcode::MUL if s.ins.has(Mod::LO) => 2,
        _ => return None,
    };
    Some(unsigned_twin_head(code, w))
}

/// The unsigned form of `add` (`code` 0), `sub` (1) or `mul.lo` (2) of
/// width `w`.
fn unsigned_twin_head(code: usize, w: u8) -> &'static str {
    let heads: [[&'static str; 3]; 3] = [["add.u16", "add.u32", "add.u64"], ["sub.u16", "sub.u32", "sub.u64"], ["mul.lo.u16", "mul.lo.u32", "mul.lo.u64"]];
    let wi = match w {
        16 => 0,
        32 => 1,
        _ => 2,
    };
    heads[code][wi]
}

/// `not (not x)` -> `x`; `neg (neg x)` -> `x` (integer negation wraps).
fn s_double_negation(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    let Some((_, w)) = plain_int(s) else { return };
    if !matches!(s.opcode(), Opcode::NOT | Opcode::NEG) || kids.len() != 1 {
        return;
    }
    for inner in &eg[kids[0]].nodes {
        let Some((t, ik)) = op(eg, inner) else { continue };
        if t.opcode() == s.opcode() && plain_int(t).map(|x| x.1) == Some(w) && ik.len() == 1 && width(eg, ik[0]) == w {
            out.push([ik[0]].into_iter().collect());
        }
    }
}

/// `shl (shl x, a), b` -> `shl x, a+b`; the same for `shr.u`/`shr.b`
/// while the sum stays below the width (past it the value is 0, which the
/// known-bits analysis already folds), and for `shr.s` with the sum
/// clamped to the width (the sign fill).
fn s_shift_shift(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Node::Op(sid, kids) = n else { return };
    let s = eg.analysis.shapes.get(*sid);
    let Some((ty, w)) = plain_int(s) else { return };
    if !matches!(s.opcode(), Opcode::SHL | Opcode::SHR) || kids.len() != 2 {
        return;
    }
    let Some(b) = constant(eg, kids[1]) else { return };
    let arithmetic = s.opcode() == Opcode::SHR && ty.class() == TypeClass::Signed;
    for inner in &eg[kids[0]].nodes {
        let Node::Op(tid, ik) = inner else { continue };
        if tid != sid || ik.len() != 2 || width(eg, ik[0]) != w {
            continue;
        }
        let Some(a) = constant(eg, ik[1]) else { continue };
        let sum = (a + b).min(w as u128);
        if sum < w as u128 || arithmetic {
            out.push([shape_id(*sid), ik[0], Id::from(sum as usize)].into_iter().collect());
        }
    }
}
fn a_shift_shift(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let k = konst(eg, 32, usize::from(m[2]) as u128);
    Some(same_shape(eg, m[0], &[m[1], k]))
}

/// `mov x` -> `x` when the copy is as wide as its source (a copy, or a bit
/// cast between types of one size: the bits are the value).
fn s_mov_copy(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    if s.opcode() != Opcode::MOV || kids.len() != 1 || s.sources[0].prefix != ptx_ir::ir::Prefix::None || s.sources[0].sel.is_some() || s.sources[0].in_vector {
        return;
    }
    let ty = match s.types() {
        [t] => *t,
        _ => return,
    };
    let w = width(eg, kids[0]);
    if w == s.width && super::super::engine::lang::type_width(ty) == w {
        out.push([kids[0]].into_iter().collect());
    }
}

// ----- instances -----------------------------------------------------------------------

const INT: [(&str, u8); 6] = [("u16", 16), ("u32", 32), ("u64", 64), ("s16", 16), ("s32", 32), ("s64", 64)];

fn heads(op: &'static [&'static str; 6]) -> impl Iterator<Item = (&'static str, u8)> {
    op.iter().copied().zip(INT.iter().map(|x| x.1))
}

const ADD: [&str; 6] = ["add.u16", "add.u32", "add.u64", "add.s16", "add.s32", "add.s64"];
const SUB: [&str; 6] = ["sub.u16", "sub.u32", "sub.u64", "sub.s16", "sub.s32", "sub.s64"];
const MUL: [&str; 6] = ["mul.lo.u16", "mul.lo.u32", "mul.lo.u64", "mul.lo.s16", "mul.lo.s32", "mul.lo.s64"];
const MULHI: [&str; 6] = ["mul.hi.u16", "mul.hi.u32", "mul.hi.u64", "mul.hi.s16", "mul.hi.s32", "mul.hi.s64"];
const MIN: [&str; 6] = ["min.u16", "min.u32", "min.u64", "min.s16", "min.s32", "min.s64"];
const MAX: [&str; 6] = ["max.u16", "max.u32", "max.u64", "max.s16", "max.s32", "max.s64"];
const AND: [&str; 3] = ["and.b16", "and.b32", "and.b64"];
const OR: [&str; 3] = ["or.b16", "or.b32", "or.b64"];
const XOR: [&str; 3] = ["xor.b16", "xor.b32", "xor.b64"];
const NOT: [&str; 3] = ["not.b16", "not.b32", "not.b64"];
const NEG: [&str; 3] = ["neg.s16", "neg.s32", "neg.s64"];
const SHL: [&str; 3] = ["shl.b16", "shl.b32", "shl.b64"];
const SHR: [&str; 9] = ["shr.b16", "shr.b32", "shr.b64", "shr.u16", "shr.u32", "shr.u64", "shr.s16", "shr.s32", "shr.s64"];
const W3: [u8; 3] = [16, 32, 64];

fn bits3(op: &'static [&'static str; 3]) -> impl Iterator<Item = (&'static str, u8)> {
    op.iter().copied().zip(W3)
}

fn i_zero_identity() -> Vec<Term> {
    let mut v = Vec::new();
    for (h, w) in heads(&ADD).chain(heads(&SUB)).chain(bits3(&OR)).chain(bits3(&XOR)) {
        v.push(t(h, [Term::var(0, w), Term::c(w, 0)]));
    }
    for (h, w) in bits3(&SHL).chain(SHR.iter().copied().zip(W3.iter().cycle().copied())) {
        v.push(t(h, [Term::var(0, w), Term::c(32, 0)]));
    }
    v
}
fn i_one_identity() -> Vec<Term> {
    heads(&MUL).map(|(h, w)| t(h, [Term::var(0, w), Term::c(w, 1)])).collect()
}
fn i_ones_identity() -> Vec<Term> {
    bits3(&AND).map(|(h, w)| t(h, [Term::var(0, w), Term::c(w, u128::MAX)])).collect()
}
fn i_idempotent() -> Vec<Term> {
    let mut v: Vec<Term> = bits3(&AND).chain(bits3(&OR)).map(|(h, w)| t(h, [Term::var(0, w), Term::var(0, w)])).collect();
    v.extend(heads(&MIN).chain(heads(&MAX)).map(|(h, w)| t(h, [Term::var(0, w), Term::var(0, w)])));
    v
}
fn i_self_zero() -> Vec<Term> {
    heads(&SUB).chain(bits3(&XOR)).map(|(h, w)| t(h, [Term::var(0, w), Term::var(0, w)])).collect()
}
fn i_const_right() -> Vec<Term> {
    let mut v = Vec::new();
    for (h, w) in heads(&ADD).chain(heads(&MUL)).chain(heads(&MULHI)).chain(heads(&MIN)).chain(heads(&MAX)).chain(bits3(&AND)).chain(bits3(&OR)).chain(bits3(&XOR)) {
        v.push(t(h, [Term::c(w, 0x1234_5678_9abc_def1), Term::var(0, w)]));
        v.push(t(h, [Term::c(w, u128::MAX - 1), Term::var(0, w)]));
    }
    for (h, w) in [("mul.wide.u16", 16), ("mul.wide.u32", 32), ("mul.wide.s16", 16), ("mul.wide.s32", 32)] {
        v.push(t(h, [Term::c(w, 0xfedc_ba98), Term::var(0, w)]));
    }
    v
}
fn i_reassociate() -> Vec<Term> {
    let mut v = Vec::new();
    for (h, w) in heads(&ADD).chain(heads(&MUL)).chain(bits3(&AND)).chain(bits3(&OR)).chain(bits3(&XOR)) {
        v.push(t(h, [t(h, [Term::var(0, w), Term::c(w, 0x8765_4321_0fed_cba9)]), Term::c(w, 0x7fff_ffff_ffff_fff3)]));
    }
    // Mixed signedness of the same width.
    v.push(t("add.u32", [t("add.s32", [Term::var(0, 32), Term::c(32, 7)]), Term::c(32, 0xffff_fff0)]));
    v
}
fn i_sub_const() -> Vec<Term> {
    heads(&SUB).flat_map(|(h, w)| [t(h, [Term::var(0, w), Term::c(w, 5)]), t(h, [Term::var(0, w), Term::c(w, 1u128 << (w - 1))])]).collect()
}
fn i_unsigned_twin() -> Vec<Term> {
    let signed = |a: &'static [&'static str; 6]| a[3..].iter().copied().zip(W3).collect::<Vec<_>>();
    signed(&ADD).into_iter().chain(signed(&SUB)).chain(signed(&MUL)).map(|(h, w)| t(h, [Term::var(0, w), Term::var(1, w)])).collect()
}
fn i_double_negation() -> Vec<Term> {
    bits3(&NOT).chain(NEG.iter().copied().zip(W3)).map(|(h, w)| t(h, [t(h, [Term::var(0, w)])])).collect()
}
fn i_shift_shift() -> Vec<Term> {
    let mut v = Vec::new();
    for (h, w) in bits3(&SHL).chain(SHR.iter().copied().zip(W3.iter().cycle().copied())) {
        let pairs: &[(u128, u128)] = if h.starts_with("shr.s") { &[(1, 2), (3, w as u128 - 3), (w as u128 - 1, 1), (5, 200), (40_000, 7)] } else { &[(1, 2), (3, w as u128 - 4), (w as u128 - 2, 1)] };
        for &(a, b) in pairs {
            v.push(t(h, [t(h, [Term::var(0, w), Term::c(32, a)]), Term::c(32, b)]));
        }
    }
    v
}

fn i_mov_copy() -> Vec<Term> {
    let mut v: Vec<Term> = ["mov.b16", "mov.u16", "mov.s16"].into_iter().map(|h| t(h, [Term::var(0, 16)])).collect();
    v.extend(["mov.b32", "mov.u32", "mov.s32", "mov.f32"].into_iter().map(|h| t(h, [Term::var(0, 32)])));
    v.extend(["mov.b64", "mov.u64", "mov.s64", "mov.f64"].into_iter().map(|h| t(h, [Term::var(0, 64)])));
    v.push(t("mov.pred", [Term::var(0, 1)]));
    v
}

pub static RULES: &[Rule] = &[
    Rule { name: "mov-copy", roots: &[Opcode::MOV], search: s_mov_copy, apply: first, instances: i_mov_copy, needs: ANY, only_o3: false },
    Rule { name: "zero-identity", roots: &[Opcode::ADD, Opcode::SUB, Opcode::OR, Opcode::XOR, Opcode::SHL, Opcode::SHR], search: s_zero_identity, apply: first, instances: i_zero_identity, needs: ANY, only_o3: false },
    Rule { name: "one-identity", roots: &[Opcode::MUL], search: s_one_identity, apply: first, instances: i_one_identity, needs: ANY, only_o3: false },
    Rule { name: "ones-identity", roots: &[Opcode::AND], search: s_ones_identity, apply: first, instances: i_ones_identity, needs: ANY, only_o3: false },
    Rule { name: "idempotent", roots: &[Opcode::AND, Opcode::OR, Opcode::MIN, Opcode::MAX], search: s_idempotent, apply: first, instances: i_idempotent, needs: ANY, only_o3: false },
    Rule { name: "self-zero", roots: &[Opcode::SUB, Opcode::XOR], search: s_self_zero, apply: a_zero_of_width, instances: i_self_zero, needs: ANY, only_o3: false },
    Rule { name: "const-right", roots: &[Opcode::ADD, Opcode::MUL, Opcode::AND, Opcode::OR, Opcode::XOR, Opcode::MIN, Opcode::MAX], search: s_const_right, apply: a_same_shape_swapped, instances: i_const_right, needs: ANY, only_o3: false },
    Rule { name: "reassociate-const", roots: &[Opcode::ADD, Opcode::MUL, Opcode::AND, Opcode::OR, Opcode::XOR], search: s_reassociate, apply: a_reassociate, instances: i_reassociate, needs: ANY, only_o3: false },
    Rule { name: "sub-const", roots: &[Opcode::SUB], search: s_sub_const, apply: a_sub_const, instances: i_sub_const, needs: ANY, only_o3: false },
    Rule { name: "unsigned-twin", roots: &[Opcode::ADD, Opcode::SUB, Opcode::MUL], search: s_unsigned_twin, apply: a_unsigned_twin, instances: i_unsigned_twin, needs: ANY, only_o3: false },
    Rule { name: "double-negation", roots: &[Opcode::NOT, Opcode::NEG], search: s_double_negation, apply: first, instances: i_double_negation, needs: ANY, only_o3: false },
    Rule { name: "shift-shift", roots: &[Opcode::SHL, Opcode::SHR], search: s_shift_shift, apply: a_shift_shift, instances: i_shift_shift, needs: ANY, only_o3: false },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::facts::Facts;
    use ptx_ir::eval::Dialect;

    fn matches_at(eg: &EGraph, class: Id) -> usize {
        let mut out = Vec::new();
        for n in &eg[class].nodes {
            s_unsigned_twin(eg, n, &mut out);
        }
        out.len()
    }

    /// `unsigned-twin` matches while its twin is missing or sits in another
    /// class (applying then merges the two), and no more once the twin is
    /// in the node's class (applying would add nothing).
    #[test]
    fn unsigned_twin_matches_until_its_twin_is_merged() {
        let mut eg = EGraph::new(Facts::new(Dialect::MODERN));
        let mut leaves = Vec::new();
        let signed = t("add.s32", [Term::var(0, 32), Term::var(1, 32)]).add(&mut eg, &mut leaves);
        let twin_elsewhere = t("add.u32", [Term::var(0, 32), Term::var(1, 32)]).add(&mut eg, &mut leaves);
        eg.rebuild();
        assert_ne!(eg.find(signed), eg.find(twin_elsewhere));
        assert_eq!(matches_at(&eg, signed), 1, "the twin is in another class");
        // Applying finds the twin and the runner merges the classes.
        let shape = eg[signed].nodes.iter().find_map(|n| match n {
            Node::Op(s, _) => Some(*s),
            _ => None,
        });
        let made = a_unsigned_twin(&mut eg, &[leaves[0].unwrap(), leaves[1].unwrap(), shape_id(shape.unwrap())].into_iter().collect()).unwrap();
        assert_eq!(made, eg.find(twin_elsewhere));
        eg.union(signed, made);
        eg.rebuild();
        assert_eq!(matches_at(&eg, signed), 0, "the twin is in the class");
    }
}
