//! Floating point, only where the result is bit-exact under the
//! instruction's modifiers as the evaluator says: negation and absolute
//! value of a negation or an absolute value. Both instructions must carry
//! the same modifiers (`.ftz` flushes a subnormal input to a zero of its
//! sign in each); nothing here reassociates, contracts, or adds or drops a
//! rounding mode, `.ftz` or `.sat`. Where the manual leaves a NaN result
//! open, any NaN the right-hand side gives is one of the allowed results.

use super::term::{t, Term};
use super::{same_shape, shape_id, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::{Node, Shape};
use egg::Id;
use ptx_ir::isa::{Mod, Opcode, ScalarType};

const ANY: Target = Target { sm: 0, ptx: (1, 0) };

fn float_sign_op(s: &Shape) -> bool {
    let ty = matches!(s.ty(), Some(ScalarType::F32 | ScalarType::F64 | ScalarType::F16 | ScalarType::F16x2 | ScalarType::Bf16 | ScalarType::Bf16x2));
    ty && matches!(s.opcode(), Opcode::NEG | Opcode::ABS) && s.sources.len() == 1 && super::plain_operands(s)
}

/// `neg (neg x)` → `x` (not with `.ftz`); `abs (neg x)` → `abs x`;
/// `abs (abs x)` → `abs x`, the two instructions with the same modifiers
/// and type.
fn s_sign_of_sign(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Node::Op(sid, kids) = n else { return };
    let s = eg.analysis.shapes.get(*sid);
    if !float_sign_op(s) || kids.len() != 1 {
        return;
    }
    for inner in &eg[kids[0]].nodes {
        let Node::Op(tid, ik) = inner else { continue };
        let t = eg.analysis.shapes.get(*tid);
        if !float_sign_op(t) || ik.len() != 1 || t.width != s.width || width(eg, ik[0]) != s.width {
            continue;
        }
        let mods = |x: &Shape| x.ins.modifiers().collect::<Vec<_>>();
        if mods(t) != mods(s) {
            continue;
        }
        match (s.opcode(), t.opcode()) {
            // Not with `.ftz`: the inner one flushes a subnormal `x` (checked: the proof fails).
            (Opcode::NEG, Opcode::NEG) if !s.ins.has(Mod::FTZ) => out.push([ik[0]].into_iter().collect()),
            (Opcode::ABS, Opcode::NEG) => out.push([shape_id(*sid), ik[0]].into_iter().collect()),
            (Opcode::ABS, Opcode::ABS) => out.push([kids[0]].into_iter().collect()),
            _ => {}
        }
    }
}
/// `x` for `neg (neg x)` and `abs (abs x)`; the outer `abs` on `x` for `abs (neg x)`.
fn a_sign_of_sign(eg: &mut EGraph, m: &Match) -> Option<Id> {
    match m.len() {
        1 => Some(m[0]),
        _ => Some(same_shape(eg, m[0], &[m[1]])),
    }
}
fn i_sign_of_sign() -> Vec<Term> {
    let mut v = Vec::new();
    for (neg, abs, w) in [("neg.f32", "abs.f32", 32u8), ("neg.ftz.f32", "abs.ftz.f32", 32), ("neg.f64", "abs.f64", 64), ("neg.f16", "abs.f16", 16), ("neg.f16x2", "abs.f16x2", 32), ("neg.bf16", "abs.bf16", 16), ("neg.bf16x2", "abs.bf16x2", 32)] {
        let x = || Term::var(0, w);
        if !neg.contains("ftz") {
            v.push(t(neg, [t(neg, [x()])]));
        }
        v.push(t(abs, [t(neg, [x()])]));
        v.push(t(abs, [t(abs, [x()])]));
    }
    v
}

pub static RULES: &[Rule] = &[Rule { name: "sign-of-sign", roots: &[Opcode::NEG, Opcode::ABS], search: s_sign_of_sign, apply: a_sign_of_sign, instances: i_sign_of_sign, needs: ANY, only_o3: true }];
