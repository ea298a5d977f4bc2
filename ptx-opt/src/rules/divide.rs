//! Division and remainder by constants: `div`/`rem` of a plain integer type
//! (`.u16` … `.s64`) by a non-zero constant becomes the straight-line
//! program of [`crate::lower::div_const`] (shifts and masks for powers of
//! two with the sign fix-ups, `mul.hi` magic-number sequences otherwise).
//! ptxas does not strength-reduce division: measured on sm_80, `div.u32 x, 7`
//! is 14 SASS instructions against 4, `div.u64 x, 10` 63 against 12 (the
//! table in `ptx-opt/src/lower/README.md`). Division by zero is never
//! rewritten (its result is unspecified and must stay what the hardware
//! gives).

use super::term::{t, Term};
use super::{constant, op, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::{type_width, Node, DEST};
use crate::lower::program::Program;
use egg::Id;
use ptx_ir::eval::imm_bits;
use ptx_ir::ir::{Operand, RegId};
use ptx_ir::isa::{Opcode, ScalarType, SlotRole};
use smallvec::SmallVec;

/// `div`/`rem` of a plain integer type on a variable and a non-zero constant.
fn s_div_const(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    let Some((s, kids)) = op(eg, n) else { return };
    use ScalarType::*;
    let Some(ty) = s.ty() else { return };
    if !matches!(ty, U16 | U32 | U64 | S16 | S32 | S64) || kids.len() != 2 || s.width as u32 != ty.bits() {
        return;
    }
    // Only the type may be written (no other modifier changes these forms today;
    // refuse any that would).
    if !s.ins.modifiers().all(|(role, _)| role == SlotRole::Type) || s.sources.iter().any(|x| x.prefix != ptx_ir::ir::Prefix::None || x.sel.is_some()) {
        return;
    }
    if width(eg, kids[0]) != s.width || constant(eg, kids[0]).is_some() {
        return;
    }
    if constant(eg, kids[1]).is_some_and(|c| c != 0) {
        let code = (s.opcode() == Opcode::REM) as usize;
        let tyk = [U16, U32, U64, S16, S32, S64].iter().position(|t| *t == ty).unwrap();
        out.push([kids[0], kids[1], Id::from(code), Id::from(tyk)].into_iter().collect());
    }
}

fn a_div_const(eg: &mut EGraph, m: &Match) -> Option<Id> {
    use ScalarType::*;
    let ty = [U16, U32, U64, S16, S32, S64][usize::from(m[3])];
    let rem = usize::from(m[2]) == 1;
    let c = constant(eg, m[1])?;
    // An unknown target (0: tests of the rules alone) takes every form.
    let sm = if eg.analysis.sm == 0 { u32::MAX } else { eg.analysis.sm };
    let program = crate::lower::div_const::div_by_const(ty, rem, c, sm)?;
    add_program(eg, &program, &[m[0]])
}

/// Adds a straight-line program's instructions as nodes over `inputs`;
/// gives the class of its result. `None` for programs with guards (not pure
/// values) or operands other than registers and immediates.
pub fn add_program(eg: &mut EGraph, program: &Program, inputs: &[Id]) -> Option<Id> {
    let mut regs: Vec<Id> = inputs.to_vec();
    for (k, ins) in program.body.iter().enumerate() {
        if ins.guard.is_some() || program.dest(k) != Some(RegId((program.inputs + k) as u32)) {
            return None;
        }
        let mut tmpl = ins.clone();
        let mut kids: SmallVec<[Id; 3]> = SmallVec::new();
        let specs = ins.form.operands();
        for (j, (o, spec)) in ins.operands.iter().zip(specs).enumerate() {
            if spec.write {
                tmpl.operands[j] = Operand::reg(DEST);
                continue;
            }
            let child = match o {
                Operand::Reg(r) if r.sel.is_none() => *regs.get(r.reg.0 as usize)?,
                Operand::Imm(i) => {
                    let t = ins.operand_type(j)?;
                    eg.add(Node::Const { width: type_width(t), bits: imm_bits(i, t) })
                }
                _ => return None,
            };
            let prefix = match o {
                Operand::Reg(r) => r.prefix,
                _ => ptx_ir::ir::Prefix::None,
            };
            tmpl.operands[j] = Operand::Reg(ptx_ir::ir::RegOperand { reg: RegId(kids.len() as u32), prefix, sel: None });
            kids.push(child);
        }
        let w = type_width(program.types[program.inputs + k]);
        let shape = eg.analysis.shapes.intern_for_rule(tmpl, w);
        regs.push(eg.add(Node::Op(shape, kids)));
    }
    regs.last().copied().filter(|_| !program.body.is_empty())
}

fn instances() -> Vec<Term> {
    let mut v = Vec::new();
    let types: [(&'static str, &'static str, u8); 6] = [("div.u16", "rem.u16", 16), ("div.u32", "rem.u32", 32), ("div.u64", "rem.u64", 64), ("div.s16", "rem.s16", 16), ("div.s32", "rem.s32", 32), ("div.s64", "rem.s64", 64)];
    for (div, rem, w) in types {
        let m = ptx_ir::eval::bits_mask(w as u32);
        for d in [1u128, 2, 3, 7, 8, 10, 14, 641, m, m - 1, m >> 1, (m >> 1) + 1, m - 6, m - 7] {
            for h in [div, rem] {
                // `rem.u x, 1` is 0 by the range analysis alone.
                if d == 1 && h.starts_with("rem.u") {
                    continue;
                }
                v.push(t(h, [Term::var(0, w), Term::c(w, d)]));
            }
        }
    }
    v
}

pub static RULES: &[Rule] = &[Rule { name: "div-by-constant", roots: &[Opcode::DIV, Opcode::REM], search: s_div_const, apply: a_div_const, instances, needs: Target { sm: 0, ptx: (1, 0) }, only_o3: false }];

